"""Featurised documents of the ``doccls`` task: :class:`DocumentMatrix`, a CSR of rows.

One row per document (binary token indicators or L2-normalised tf-idf over the fitted
vocabulary); indexing gives one-row matrices, so single-document and batch code share one
representation; :func:`concat_document_matrices` joins matrices (the learners' batches).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ...exceptions import InputError

__all__ = ["DocumentMatrix", "concat_document_matrices"]


class DocumentMatrix(Sequence):
    """Featurised documents: a CSR matrix (n_docs × n_attributes, float64) as raw arrays.

    Row i's attribute ids are ``indices[indptr[i]:indptr[i+1]]`` with values ``data[...]``.
    Indexing with an int returns a one-document ``DocumentMatrix`` (a view: the example ``x``
    the task's per-example methods take); slices, index lists and boolean masks return a
    ``DocumentMatrix`` of those documents.  ``rows`` is the ``scipy.sparse.csr_matrix``.
    """

    def __init__(self, indptr, indices, data, n_attributes: int):
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.n_attributes = int(n_attributes)
        self._rows = None

    @classmethod
    def from_csr(cls, matrix) -> "DocumentMatrix":
        """A ``DocumentMatrix`` holding the rows of a scipy sparse matrix (converted to CSR)."""
        m = sp.csr_matrix(matrix, dtype=np.float64)
        m.sum_duplicates()
        return cls(m.indptr, m.indices, m.data, m.shape[1])

    def __len__(self) -> int:
        return self.indptr.shape[0] - 1

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self), self.n_attributes)

    @property
    def rows(self) -> sp.csr_matrix:
        """The documents as a ``csr_matrix`` (n_docs, n_attributes), sharing the arrays."""
        if self._rows is None:
            base = int(self.indptr[0])
            self._rows = sp.csr_matrix(
                (self.data[base : int(self.indptr[-1])], self.indices[base : int(self.indptr[-1])],
                 self.indptr - base), shape=self.shape)
        return self._rows

    def __getitem__(self, i):
        if isinstance(i, slice):
            a, b, step = i.indices(len(self))
            if step == 1:
                b = max(a, b)
                p0, p1 = int(self.indptr[a]), int(self.indptr[b])
                return DocumentMatrix(self.indptr[a : b + 1] - p0, self.indices[p0:p1],
                                      self.data[p0:p1], self.n_attributes)
            return self.subset(range(a, b, step))
        if isinstance(i, (list, tuple, np.ndarray)):
            arr = np.asarray(i)
            if arr.dtype == bool:
                if arr.shape != (len(self),):
                    raise IndexError(f"boolean mask of shape {arr.shape} for {len(self)} documents")
                arr = np.flatnonzero(arr)
            return self.subset(arr)
        n = len(self)
        k = int(i)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"document index {i} out of range for {n} documents")
        p0, p1 = int(self.indptr[k]), int(self.indptr[k + 1])
        return DocumentMatrix(np.array([0, p1 - p0], dtype=np.int64), self.indices[p0:p1],
                              self.data[p0:p1], self.n_attributes)

    def subset(self, indices) -> "DocumentMatrix":
        """Documents ``indices`` (in that order, repeats allowed), gathered in one pass."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"document index out of range for {n} documents")
        idx = np.where(idx < 0, idx + n, idx)
        starts = self.indptr[idx]
        lengths = self.indptr[idx + 1] - starts
        indptr = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        take = np.arange(int(indptr[-1]), dtype=np.int64) - np.repeat(indptr[:-1] - starts, lengths)
        return DocumentMatrix(indptr, self.indices[take], self.data[take], self.n_attributes)

    def __repr__(self) -> str:
        return (f"DocumentMatrix({len(self)} documents x {self.n_attributes} attributes, "
                f"{int(self.indptr[-1] - self.indptr[0])} stored values)")


def concat_document_matrices(parts: Sequence[DocumentMatrix]) -> DocumentMatrix:
    """The documents of ``parts`` one after the other (they must share ``n_attributes``)."""
    parts = list(parts)
    if not parts:
        return DocumentMatrix(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), 0)
    widths = {p.n_attributes for p in parts}
    if len(widths) != 1:
        raise InputError(f"cannot join featurised documents of different widths {sorted(widths)}; "
                         "featurise every document with the same fitted task")
    indptrs, base = [np.zeros(1, np.int64)], 0
    for p in parts:
        indptrs.append(p.indptr[1:] - p.indptr[0] + base)
        base += int(p.indptr[-1] - p.indptr[0])
    return DocumentMatrix(
        np.concatenate(indptrs),
        np.concatenate([p.indices[int(p.indptr[0]) : int(p.indptr[-1])] for p in parts]),
        np.concatenate([p.data[int(p.indptr[0]) : int(p.indptr[-1])] for p in parts]),
        widths.pop())
