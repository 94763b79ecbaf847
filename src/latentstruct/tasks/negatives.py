"""Shuffled negatives for the binary examples of J-LIS (POS tagging §4.2, citations §4.3).

J-LIS's companion binary problem asks whether a text has a good structure ("is this a
well-formed sentence / citation?").  Its negative examples (y = -1) are made by randomly
shuffling the tokens of positive ones, so a negative keeps the positive's words (the same
multiset) but loses their order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["shuffled_negatives"]


def shuffled_negatives(
    records_tokens: Sequence[Sequence[str]], n_per_positive: int, random_state
) -> list[list[str]]:
    """Random word orders of each positive sentence.

    Parameters
    ----------
    records_tokens : sequence of token sequences
        The positive examples, e.g. ``[c.tokens for c in citations]``.  Not modified.
    n_per_positive : int >= 0
        Shuffles drawn for each positive.
    random_state : int, numpy Generator or None
        Seed of a private ``numpy.random.default_rng`` (an int gives the same negatives at
        every call; a Generator is used, and advanced, as given; None draws fresh OS
        entropy).  The global numpy and ``random`` generators are never used.

    Returns
    -------
    list of lists of str
        ``len(records_tokens) * n_per_positive`` new lists, in order: the
        ``n_per_positive`` shuffles of positive 0, then those of positive 1, and so on.
        Each holds exactly the tokens of its positive (the same multiset).

    Notes
    -----
    When a sentence has at least two distinct tokens, each shuffle is drawn uniformly from
    the orders that differ from the positive's (a permutation that reproduces it is
    rejected and redrawn), so a negative never equals its positive.  Shuffles of the same
    positive are independent and may repeat one another.

    A sentence of length 1, or more generally one whose tokens are all identical
    (``["a", "a"]``), has no other order: its "shuffles" are copies of the positive itself.
    They are returned anyway (so that the output keeps its regular layout); filter them out
    with ``neg != pos`` when identical negatives would mislabel data.

    Raises
    ------
    ValueError
        for a sentence of length 0, a sentence given as a single string, or an invalid
        ``n_per_positive``.
    """
    if isinstance(n_per_positive, bool) or not isinstance(n_per_positive, (int, np.integer)):
        raise ValueError(
            f"n_per_positive must be a non-negative integer, got {n_per_positive!r}"
        )
    if n_per_positive < 0:
        raise ValueError(f"n_per_positive must be a non-negative integer, got {n_per_positive}")
    sentences = []
    for i, tokens in enumerate(records_tokens):
        if isinstance(tokens, str):
            raise ValueError(
                f"sentence {i} is a single string {tokens!r}; expected a list of tokens "
                f"(split the text into words first)"
            )
        tokens = list(tokens)
        if not tokens:
            raise ValueError(
                f"sentence {i} has no tokens; a shuffled negative needs at least one token. "
                f"Remove empty sentences before drawing negatives"
            )
        sentences.append(tokens)
    rng = np.random.default_rng(random_state)
    out: list[list[str]] = []
    for tokens in sentences:
        n = len(tokens)
        shufflable = any(tok != tokens[0] for tok in tokens[1:])
        for _ in range(n_per_positive):
            if not shufflable:
                out.append(list(tokens))
                continue
            while True:
                perm = rng.permutation(n)
                negative = [tokens[j] for j in perm]
                if negative != tokens:
                    break
            out.append(negative)
    return out
