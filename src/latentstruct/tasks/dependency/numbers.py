"""Numbers given beside raw examples: one row of real values per token (the parser's
per-token vectors) or per candidate (the reranker's per-candidate features).

:func:`number_rows` checks one example's array, dense (a numpy array or nested lists) or
``scipy.sparse``, and returns it in one canonical form, a float64 CSR matrix with sorted
column indices and no explicit zeros, so that dense and sparse input give the same
features bit for bit.  :func:`same_columns` holds every example of a data set (and a fitted
model) to one column count.
"""

from __future__ import annotations

import numbers as _numbers

import numpy as np
import scipy.sparse as sp

from ...exceptions import InputError
from ...limits import MAX_ATTRIBUTE_VALUE, MAX_WEIGHTS

__all__ = ["number_rows", "is_number_array", "same_columns", "check_count", "INPUT_KINDS"]

#: what a fitted model was trained on: words only, or words with numbers beside them
INPUT_KINDS = ("tokens", "numbers")


def is_number_array(value) -> bool:
    """Whether ``value`` is given as an array (numpy or scipy.sparse), not as raw tokens."""
    return isinstance(value, np.ndarray) or sp.issparse(value)


def number_rows(value, n_rows: int, where: str, *, row: str, example: str,
                weights_per_column: int = 1) -> sp.csr_matrix:
    """``value`` (n_rows x d, dense or scipy.sparse) as a float64 CSR matrix.

    ``where`` locates the array (``"X[3][1]"``), ``row`` names a row (``"token"``,
    ``"candidate"``) and ``example`` the example (``"sentence 3"``) in messages.  Refused with
    an ``InputError``: anything not a 2-d array of real numbers, a row count other than
    ``n_rows``, no columns, more columns than ``limits.MAX_WEIGHTS`` allows at
    ``weights_per_column`` weights each, and NaN, infinite or values beyond
    ``limits.MAX_ATTRIBUTE_VALUE`` (1e6) in magnitude, the first one named by its row and
    column (as the sequence tasks' real-valued attributes: one huge value swamps every
    other feature; scale such numbers).
    """
    if sp.issparse(value):
        mat = value
        if mat.ndim != 2:
            raise InputError(f"{where}: a sparse array of {mat.ndim} dimensions; expected "
                             f"{n_rows} rows, one per {row}")
        kind = mat.dtype.kind
    else:
        if isinstance(value, (str, bytes, dict)):
            raise InputError(f"{where}: a {type(value).__name__}; expected a 2-d array of "
                             f"numbers ({n_rows} rows, one per {row}), dense or scipy.sparse")
        try:
            mat = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{where}: not an array of numbers ({exc}); expected {n_rows} "
                             f"rows of equal length, one per {row}") from None
        kind = mat.dtype.kind
        if mat.ndim != 2:
            raise InputError(f"{where}: an array of shape {mat.shape}; expected a 2-d array "
                             f"of {n_rows} rows, one per {row} of {example}")
    if kind not in "biuf":
        raise InputError(f"{where}: an array of dtype {mat.dtype}; expected real numbers "
                         f"(bool, int or float), one row per {row}")
    if mat.shape[0] != n_rows:
        raise InputError(f"{where}: {mat.shape[0]} rows but {example} has {n_rows} {row}s; "
                         f"give one row per {row}")
    d = int(mat.shape[1])
    if d == 0:
        raise InputError(f"{where}: an array of no columns; give at least one column, or give "
                         f"the example without numbers")
    if d * weights_per_column > MAX_WEIGHTS.high:
        raise InputError(f"{where}: {d:,} columns, {weights_per_column} weights each, is more "
                         f"than the {MAX_WEIGHTS.high:,} weights a model may hold; reduce "
                         f"the columns")
    csr = sp.csr_matrix(mat, dtype=np.float64)
    csr.sum_duplicates()
    bad = np.flatnonzero(~(np.abs(csr.data) <= MAX_ATTRIBUTE_VALUE))  # NaN too
    if bad.size:
        k = int(bad[0])
        r = int(np.searchsorted(csr.indptr, k, side="right") - 1)
        raise InputError(f"{where}: {example}, {row} {r}, column {int(csr.indices[k])} is "
                         f"{float(csr.data[k])!r}; expected finite numbers at most "
                         f"{MAX_ATTRIBUTE_VALUE:g} in magnitude "
                         f"(latentstruct.limits.MAX_ATTRIBUTE_VALUE): replace NaN and "
                         f"infinities (e.g. by 0) and scale larger values")
    csr.eliminate_zeros()
    csr.sort_indices()
    return csr


def same_columns(n_columns: int, expected: int | None, where: str, first: str, *,
                 fitted: bool) -> None:
    """Refuse ``n_columns`` unless it equals ``expected`` (None: nothing to compare yet):
    the columns of ``first`` (an earlier example) or, when ``fitted``, the model's."""
    if expected is None or n_columns == expected:
        return
    if fitted:
        raise InputError(f"{where}: {n_columns} columns, but this model was trained with "
                         f"{expected}; give the columns the model was trained with, in the "
                         f"same order")
    raise InputError(f"{where}: {n_columns} columns but {first} has {expected}; every "
                     f"example needs the same columns")


def check_count(value, name: str) -> int:
    """A non-negative int read from a model file (older files have none: the caller's
    default)."""
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral) or value < 0:
        raise InputError(f"the model file's {name} is {value!r}; expected a count (an "
                         f"integer >= 0). The file is damaged; save the model again")
    return int(value)
