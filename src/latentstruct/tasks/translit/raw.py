"""In-memory data of the transliteration task: the body of ``make_dataset``.

``X`` is a list of ``(source, target)`` word pairs of strings; ``y`` a list of binary
labels (+1/-1, 1/0 or True/False; see
:func:`~latentstruct.tasks.validation.raw_binary_labels`) or None.  Every word goes through
the TSV reader's check (:func:`latentstruct.data.translit.clean_word`), located as
``X[i][k]`` instead of ``file:line``, so the records equal those ``read`` gives for a file
of the same pairs.  Nothing is sampled: the dataset holds exactly the given pairs, in order.
"""

from __future__ import annotations

from ...data.translit import clean_word, strip_direction_marks
from ..base import Dataset
from ..validation import raw_binary_targets, raw_error, raw_examples, raw_pair, raw_string

__all__ = ["translit_dataset"]


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
    return Dataset(records, raw_binary_targets(y, len(records)))


# --------------------------------------------------------------------------------------
