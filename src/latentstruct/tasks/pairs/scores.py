"""A user's own word-pair scores as features of the graph alignment (issue 43).

An in-memory example may carry a third element: ``(a, b, scores)`` with ``scores`` an
``(n_a, n_b)`` array (one score) or ``(n_a, n_b, k)`` array (k scores) over the task's own
tokens of the two sentences, the graph nodes of :meth:`GraphPairTask.pair_tokens`
(spaCy's tokens with punctuation dropped; the Extended data set's doubled sentence is
doubled there too).  What the scores do:

* **features** — every word-mapping variable ``a_i <-> b_j`` gets ``map:score:K`` with value
  ``scores[i, j, K]`` (divided by kappa like every part feature).  One real feature per
  score and nothing binned: the scale of a user's number is unknown (a cosine in [-1, 1],
  a log-probability, a count), so any fixed bins would be wrong for most of them, while
  ``w_K * score + w(map:const)`` already learns a threshold of its own scale;
* **candidates** — the ``top_k`` pairs of every word by each score are added to the
  affinity's candidates (the same sides choose: both for paraphrase, the hypothesis for
  RTE), so a pair only the user's score finds similar can be mapped at all.  Ranking is
  scale-free, and ``min_affinity`` applies to the affinity's own candidates only.

The two-stage heuristic alignment uses them too: its weight on every ``map:score:K`` is
``1/k``, so a word pair is mapped when WNSim plus the *mean* of its scores exceeds
``heuristic_threshold`` (plus the deletion costs).  Without this the heuristic (WNSim only)
never maps a pair that only the user's score finds similar, and its second stage never
sees the score there (a toy where only the score separates the classes stays at chance).
The price is a scale: scores are read as similarities of about WNSim's range, [0, 1]
(cosines qualify); rescale others before giving them.

A model fitted with scores records ``n_pair_scores_`` (k; 0 without) and refuses examples
without scores, or with another k, and a model fitted without them refuses scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...data.pairs import SentencePair
from ...exceptions import InputError
from .graphs import candidate_pairs

__all__ = ["ScoredSentencePair", "check_pair_scores", "check_score_shape", "n_scores",
           "record_scores", "score_candidates", "score_feature_names", "scores_refusal"]


@dataclass(frozen=True, slots=True)
class ScoredSentencePair(SentencePair):
    """A :class:`~latentstruct.data.pairs.SentencePair` with the user's word-pair scores,
    a finite float64 array ``(n_a, n_b, k)``."""

    scores: np.ndarray | None = None


def score_feature_names(k: int) -> list[str]:
    """``map:score:0`` ... ``map:score:{k-1}``."""
    return [f"map:score:{q}" for q in range(int(k))]


def check_pair_scores(value, i: int, unit: str = "word", dims: str = "n_a x n_b") -> np.ndarray:
    """``X[i][2]`` as a finite float64 array (rows, columns, k); InputError naming the cell.
    ``unit`` ("word", or "character" for transliteration) and ``dims`` name the matrix in
    messages; the shape against the example's tokens is checked by the caller, which knows
    what the tokens are."""
    try:
        S = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"X[{i}][2]: the {unit}-pair scores must be an ({dims}) or "
                         f"({dims} x k) array of numbers ({exc})") from None
    if S.ndim == 2:
        S = S[:, :, None]
    if S.ndim != 3 or S.shape[2] < 1:
        raise InputError(f"X[{i}][2]: the {unit}-pair scores must be an ({dims}) or "
                         f"({dims} x k) array, got shape {np.shape(value)}")
    bad = np.argwhere(~np.isfinite(S))
    if bad.size:
        r, c, q = bad[0].tolist()
        cell = f"[{r}, {c}]" if np.ndim(value) == 2 else f"[{r}, {c}, {q}]"
        raise InputError(f"X[{i}][2]{cell} is {float(S[r, c, q])!r}; {unit}-pair scores must be "
                         f"finite numbers (replace NaN/inf, e.g. np.nan_to_num, or drop the pair)")
    return S


def record_scores(rec):
    """The scores array of a record (a scored pair of either family), or None."""
    return getattr(rec, "scores", None)


def n_scores(records, where=None, unit: str = "word", form: str = "(a, b, scores)") -> int:
    """k of the records' scores (0 when none has scores); InputError when some records
    have scores and others not, or when k differs."""
    ks = [None if record_scores(r) is None else record_scores(r).shape[2] for r in records]
    have = [k for k in ks if k is not None]
    if not have:
        return 0
    if len(have) != len(ks):
        i = ks.index(None)
        raise InputError(f"X[{i}] has no {unit}-pair scores but other examples do; give every "
                         f"example as {form} or none of them", where)
    first = have[0]
    for i, k in enumerate(ks):
        if k != first:
            raise InputError(f"X[{i}] has {k} {unit}-pair scores per cell but X[0] has {first}; "
                             f"every example needs the same k", where)
    return first


#: per unit of the score matrix: what one input is called, its form without scores and
#: what the scores' rows and columns are taken over
_REFUSAL_TERMS = {
    "word": ("example", "(a, b)", " over task.pair_tokens(X)"),
    "character": ("pair", "(source, target)", ""),
}


def scores_refusal(fitted_k: int, got_k: int, where=None, unit: str = "word") -> InputError:
    """The error for prediction input whose k (scores per cell) differs from the model's,
    ``unit`` the cells' ("word" for the pair tasks, "character" for transliteration)."""
    item, plain, over = _REFUSAL_TERMS[unit]
    scored = plain[:-1] + ", scores)"
    if fitted_k and not got_k:
        msg = (f"this model was fitted with {fitted_k} {unit}-pair score(s) per cell, but the "
               f"{item}s have none; give each {item} as {scored}{over}, e.g. "
               f"task.with_pair_scores(X, f) with the function the model was trained with")
    elif got_k and not fitted_k:
        msg = (f"the {item}s carry {got_k} {unit}-pair score(s) per cell but this model was "
               f"fitted without scores; give {plain} pairs, or refit on scored {item}s")
    else:
        msg = (f"the {item}s carry {got_k} {unit}-pair score(s) per cell but this model was "
               f"fitted with {fitted_k}; compute the same scores the model was trained with")
    return InputError(msg, where)


def check_score_shape(S: np.ndarray, k: int, g1, g2, where=None) -> None:
    """InputError when ``S`` is not (len(g1), len(g2), ...) for example ``k``."""
    want = (len(g1), len(g2))
    if S.shape[:2] != want:
        raise InputError(
            f"X[{k}][2]: the word-pair scores have shape {S.shape[:2]} but the example has "
            f"{want[0]} x {want[1]} tokens ({list(g1.tokens)} x {list(g2.tokens)}); build the "
            f"matrix over task.pair_tokens(X)[{k}] (spaCy tokens, punctuation dropped) or use "
            f"task.with_pair_scores(X, f)", where)


def score_candidates(pairs: np.ndarray, S: np.ndarray, top_k: int, both_sides: bool) -> np.ndarray:
    """``pairs`` united with the ``top_k`` pairs of every word by each score (sorted)."""
    extra = [candidate_pairs(S[:, :, q], top_k, both_sides=both_sides, min_affinity=-np.inf)
             for q in range(S.shape[2])]
    allp = np.concatenate([pairs.reshape(-1, 2)] + extra)
    return np.unique(allp, axis=0).astype(np.int64).reshape(-1, 2)
