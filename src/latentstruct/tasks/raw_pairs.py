"""In-memory data of the pair tasks (``translit``, ``paraphrase``, ``rte``): the body of their
``make_dataset`` and ``decode_predictions``.

``X`` is a list of pairs, each a 2-tuple (or 2-list) of strings; ``y`` a list of binary
labels (+1/-1, 1/0 or True/False; see :func:`~latentstruct.tasks.validation.raw_binary_labels`)
or None.  Every pair goes through the same per-word / per-sentence check as the file readers
(:func:`latentstruct.data.translit.clean_word`, :func:`latentstruct.data.pairs.pair_sentence`),
located as ``X[i][k]`` instead of ``file:line``; the records are those the readers build, so
``fit``, ``featurize`` and ``evaluate`` are unchanged.  Unlike the readers, nothing is
sampled, split or deduplicated: the dataset holds exactly the given pairs, in order.
"""

from __future__ import annotations

import numpy as np

from ..data.pairs import SentencePair, pair_sentence
from ..data.translit import clean_word, strip_direction_marks
from ..exceptions import InputError
from .base import Dataset
from .validation import (check_binary_labels, raw_binary_labels, raw_error, raw_examples,
                         raw_string)

__all__ = ["raw_pair", "translit_dataset", "sentence_pair_dataset", "binary_predictions"]


def raw_pair(value, i: int, example: str) -> tuple:
    """``X[i]`` as a 2-tuple after checking it is a tuple or list of two elements (a string,
    a dict or a set is refused); ``example`` names the pair in the message."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        got = (f"a {type(value).__name__} of {len(value)} element{'s' * (len(value) != 1)}"
               if isinstance(value, (tuple, list)) else f"a {type(value).__name__}")
        raise raw_error(f"expected a {example} (a tuple of two strings), got {got}; give one "
                        f"pair per example, e.g. X = [(a, b), ...]", i)
    return tuple(value)


def _labels(y, n: int):
    """+-1 int64 labels of ``y``, or ``[None] * n`` without ``y``."""
    return [None] * n if y is None else raw_binary_labels(y)


# --------------------------------------------------------------------------------------
# transliteration
# --------------------------------------------------------------------------------------
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
        source, target = raw_pair(x, i, "(source, target) word pair")
        records.append((_translit_word(source, i, 0), _translit_word(target, i, 1)))
    return Dataset(records, _labels(y, len(records)))


# --------------------------------------------------------------------------------------
# paraphrase and entailment
# --------------------------------------------------------------------------------------
def sentence_pair_dataset(X, y=None, *, names=("text_a", "text_b")) -> Dataset:
    """``GraphPairTask.make_dataset``: one :class:`~latentstruct.data.pairs.SentencePair` per
    pair (id ``str(i)``, the sentences stripped, label 1/0 or None, line 0) and labels +-1
    (or None each without ``y``).  ``names`` name the two sentences in messages."""
    X, y = raw_examples(X, y, example=f"({names[0]}, {names[1]}) pair")
    labels = _labels(y, len(X))
    records = []
    for i, x in enumerate(X):
        pair = raw_pair(x, i, f"({names[0]}, {names[1]}) pair")
        first, second = (
            pair_sentence(raw_string(s, i, f"the {name}", at=f"[{k}]"), f"the {name}",
                          f"X[{i}][{k}]")
            for k, (s, name) in enumerate(zip(pair, names)))
        label = None if y is None else int(labels[i] > 0)
        records.append(SentencePair(str(i), first, second, label, 0))
    return Dataset(records, labels)


# --------------------------------------------------------------------------------------
# predictions
# --------------------------------------------------------------------------------------
def binary_predictions(predictions) -> list[int]:
    """A latent-binary learner's ``predict`` output as a list of Python ints +1 / -1 (the raw
    form of ``y`` that ``make_dataset`` takes); ``InputError`` for anything else."""
    if isinstance(predictions, (str, bytes)):
        raise InputError(f"predictions must be a sequence of labels -1 or +1, got a "
                         f"{type(predictions).__name__}")
    values = np.asarray(list(predictions))
    return check_binary_labels(values, what="predictions").tolist()
