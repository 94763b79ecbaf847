"""Numbers in the hidden-state CRF (``hcrf``): the records of ``make_dataset``.

Besides sentences (a string or a list of tokens), ``make_dataset`` takes the sequence
tasks' two numeric forms of a sentence ``X[i]`` (``tasks.sequence.numeric``):

* **arrays** -- a 2-D array of shape (n_tokens, d), numpy (bool, int or float) or any
  ``scipy.sparse`` matrix: row t holds token t's features, its only attributes;
* **tokens+arrays** -- a pair ``(tokens, array)``: the tokens as the task takes them alone
  (a string or a list of tokens, checked as a sentence is), whose built-in attributes the
  task computes, plus an (n_tokens, d) array whose columns are added to them.

Column j of token t is an attribute with the value ``X[i][t, j]``, crossed with the token's
hidden label (the emission feature (j, (k, s)) scores ``value * w[j, (k, s)]``).  The
columns take the attribute ids after the attribute index, ``n_attributes =
len(attr_index_) + n_columns_``, so the weight layout of ``kernels`` is unchanged.  The
records are the sequence tasks' :class:`~latentstruct.tasks.sequence.numeric.NumericSentence`
(``base``: the :class:`~latentstruct.tasks.grammaticality.sentences.Sentence` of a pair's
tokens, None for an array alone), checked by the same public checkers, so a value, shape
or width error reads as it does for ``pos`` or ``chunk``.
"""

from __future__ import annotations

from ...exceptions import InputError
from ..base import Dataset
from ..grammaticality.raw import sentence_dataset
from ..grammaticality.sentences import Sentence
from ..sequence.kinds import ARRAYS, TEMPLATES, TOKENS_ARRAYS
from ..sequence.numeric import (
    NumericSentence,
    is_numeric_array,
    numeric_rows,
    numeric_sentence,
    split_pair,
)
from ..validation import raw_error, raw_examples

__all__ = ["chain_dataset", "record_words"]

_GIVEN = {TEMPLATES: "a sentence (a string or a list of tokens)", ARRAYS: "a numeric array",
          TOKENS_ARRAYS: "a (tokens, array) pair"}


def _kind(value) -> str:
    if is_numeric_array(value):
        return ARRAYS
    return TOKENS_ARRAYS if split_pair(value) is not None else TEMPLATES


def record_words(record):
    """The tokens of a record (a ``Sentence``, or a ``NumericSentence`` of a pair); None for
    an array alone, which has no words."""
    if isinstance(record, NumericSentence):
        return None if record.base is None else record.base.words
    return record.words


def _pair_sentence(value, i: int) -> Sentence:
    """The ``Sentence`` of a pair's tokens ``X[i][0]``, checked as a sentence alone is, an
    error named inside the pair (``X[i][0]...``)."""
    try:
        return sentence_dataset([value], None, Sentence).records[0]
    except InputError as exc:
        if exc.path is None and exc.message.startswith("X[0]"):
            raise InputError(f"X[{i}][0]{exc.message[len('X[0]'):]}") from None
        raise


def chain_dataset(X) -> Dataset:
    """The unlabelled :class:`Dataset` of ``X``: sentences become ``Sentence`` records
    (``grammaticality.raw.sentence_dataset``, unchanged), arrays and ``(tokens, array)``
    pairs ``NumericSentence`` records, every one with the columns of ``X[0]``.  Sentences of
    mixed forms, bad values, a row count other than the pair's tokens or another width are
    an ``InputError`` naming ``X[i]`` (and the row and column of a bad value)."""
    X, _ = raw_examples(X, None, example="sentence (a string or a list of tokens)")
    kinds = [_kind(v) for v in X]
    if not kinds or all(k == TEMPLATES for k in kinds):
        return sentence_dataset(X, None, Sentence)
    first = kinds[0]
    mixed = next((i for i, kind in enumerate(kinds) if kind != first), None)
    if mixed is not None:
        raise raw_error(f"is given as {_GIVEN[kinds[mixed]]} but X[0] as {_GIVEN[first]}; all "
                        f"sentences of X must be of one kind", mixed)
    records, width = [], None
    for i, (value, kind) in enumerate(zip(X, kinds)):
        if kind == ARRAYS:
            base, m = None, numeric_rows(value, f"X[{i}]")
            if m.shape[1] == 0:
                raise raw_error("is an array with 0 columns; give at least one feature "
                                "column per token", i)
        else:
            tokens, array = split_pair(value)
            base = _pair_sentence(tokens, i)
            m = numeric_rows(array, f"X[{i}][1]")
            if m.shape[0] != len(base.words):
                raise raw_error(f"the array X[{i}][1] has {m.shape[0]} rows but the tokens "
                                f"X[{i}][0] are {len(base.words)}; give one row per token", i)
        if width is None:
            width = m.shape[1]
        elif m.shape[1] != width:
            raise raw_error(f"has {m.shape[1]} feature columns but X[0] has {width}; every "
                            f"sentence's array must have the same columns (expected {width})", i)
        records.append(numeric_sentence(base, m))
    return Dataset(records, [None] * len(records))
