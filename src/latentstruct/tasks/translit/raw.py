"""In-memory data of the transliteration task: the body of ``make_dataset``.

``X`` is a list of ``(source, target)`` word pairs of strings; ``y`` a list of binary
labels (+1/-1, 1/0 or True/False; see
:func:`~latentstruct.tasks.validation.raw_binary_labels`) or None.  Every word goes through
the TSV reader's check (:func:`latentstruct.data.translit.clean_word`), located as
``X[i][k]`` instead of ``file:line``, so the records equal those ``read`` gives for a file
of the same pairs.  Nothing is sampled: the dataset holds exactly the given pairs, in order.

An example may carry the user's character-pair scores as a third element,
``(source, target, scores)``: an (m x n) or (m x n x k) array of numbers, m the characters of
the (cleaned) source word and n those of the target word; its record is a
:class:`ScoredWordPair`.  Every example has scores, with one k, or none has.
"""

from __future__ import annotations

import numpy as np

from ...data.translit import clean_word, strip_direction_marks
from ...exceptions import InputError
from ..base import Dataset
from ..pairs.scores import check_pair_scores, n_scores, record_scores
from ..validation import raw_binary_targets, raw_error, raw_examples, raw_pair, raw_string

__all__ = ["ScoredWordPair", "check_char_scores", "n_char_scores", "record_scores",
           "translit_dataset"]


class ScoredWordPair(tuple):
    """A ``(source, target)`` record (a 2-tuple, so it reads like a plain one) with the
    user's character-pair scores ``scores``, a finite float64 array (m, n, k)."""

    def __new__(cls, source: str, target: str, scores: np.ndarray):
        self = super().__new__(cls, (source, target))
        self.scores = scores
        return self

    def __reduce__(self):
        return (ScoredWordPair, (self[0], self[1], self.scores))


def check_char_scores(value, i: int, source: str, target: str) -> np.ndarray:
    """``X[i][2]`` as a finite float64 array (len(source), len(target), k)
    (:func:`~latentstruct.tasks.pairs.scores.check_pair_scores`); InputError naming the
    cell, or both shapes and the characters."""
    S = check_pair_scores(value, i, "character", "m x n")
    want = (len(source), len(target))
    if S.shape[:2] != want:
        raise InputError(
            f"X[{i}][2]: the character-pair scores have shape {S.shape[:2]} but the pair has "
            f"{want[0]} x {want[1]} characters ({list(source)} x {list(target)}); give one row "
            f"per source character (after cleaning: lowercased, direction marks removed) and "
            f"one column per target character, or use task.with_pair_scores(X, f)")
    return S


def n_char_scores(records, where=None) -> int:
    """k of the records' character-pair scores (:func:`~latentstruct.tasks.pairs.scores.n_scores`)."""
    return n_scores(records, where, "character", "(source, target, scores)")


_TRANSLIT_SIDES = (("source", "source word", "an English word, e.g. 'paris'"),
                   ("target", "target word", "a word in the target script, e.g. 'פריז'"))


def _translit_word(value, i: int, k: int) -> str:
    side, what, expected = _TRANSLIT_SIDES[k]
    at = f"[{k}]"
    raw_string(value, i, f"the {what}", at=at)
    inner = strip_direction_marks(value).strip()
    if any(ch.isspace() for ch in inner):
        raise raw_error(
            f"the {what} {value!r} holds white space; a pair is one name per side (the "
            f"alignment is character by character). Split a multi-word name into one pair "
            f"per word, as cldr_pairs does ('buenos aires' -> ('buenos', ...), ('aires', ...))",
            i, at=at)
    return clean_word(value, side, f"X[{i}]{at}", None, what=what, expected=expected)


def translit_dataset(X, y=None) -> Dataset:
    """``TransliterationTask.make_dataset``: ``(source, target)`` records as the TSV reader
    keeps them (direction marks removed, the source stripped and lowercased, the target
    stripped), labels +-1 (or None each without ``y``)."""
    X, y = raw_examples(X, y, example="(source, target) word pair")
    records = []
    for i, x in enumerate(X):
        scores = None
        if isinstance(x, (tuple, list)) and len(x) == 3:
            scores, x = x[2], tuple(x[:2])
        source, target = raw_pair(x, i, "(source, target) word pair")
        source, target = _translit_word(source, i, 0), _translit_word(target, i, 1)
        if scores is None:
            records.append((source, target))
        else:
            records.append(ScoredWordPair(source, target,
                                          check_char_scores(scores, i, source, target)))
    n_char_scores(records)  # all or none, one k
    return Dataset(records, raw_binary_targets(y, len(records)))


# --------------------------------------------------------------------------------------
