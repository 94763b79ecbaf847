"""The corpus of the sequence tasks: featurised sentences as one CSR of token attributes.

A :class:`SequenceCorpus` holds every sentence's tokens and each token's attribute ids in
three flat int64 arrays, and, when some attribute carries a real value (CRFsuite's
``{"shop": 0.5}``), the values in a float64 array parallel to the ids (``attr_values``;
None when every value is 1, the binary fast path: no array, and the kernels compile a
specialisation without it).  Indexing and ``subset`` give sentences as corpora of their
own, so single-sentence and batch code share one representation.  :func:`as_corpus` and
:func:`concat_corpora` join corpora (the learners' batches and the tasks' ``as_batch``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from ..base import join_corpora

__all__ = ["SequenceCorpus", "as_corpus", "concat_corpora"]


class SequenceCorpus(Sequence):
    """Featurised sentences as one concatenated CSR of token attributes.

    ``attr_indptr[t]:attr_indptr[t+1]`` are token t's attribute ids in ``attr_ids``;
    ``offsets[i]:offsets[i+1]`` are sentence i's tokens.  ``attr_values`` is None (every
    attribute has the value 1: binary attributes) or a float64 array parallel to
    ``attr_ids``: the value that scales occurrence p's feature (CRFsuite's semantics: the
    emission feature (a, y) of a token contributes ``value * w[a, y]``).  Indexing returns
    a one-sentence ``SequenceCorpus`` view, so single-instance and batch code share one
    representation.
    """

    def __init__(self, attr_indptr: np.ndarray, attr_ids: np.ndarray, offsets: np.ndarray,
                 attr_values: np.ndarray | None = None):
        self.attr_indptr = np.ascontiguousarray(attr_indptr, dtype=np.int64)
        self.attr_ids = np.ascontiguousarray(attr_ids, dtype=np.int64)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        if attr_values is not None:
            attr_values = np.ascontiguousarray(attr_values, dtype=np.float64)
            if attr_values.shape != self.attr_ids.shape:
                raise ValueError(f"attr_values has shape {attr_values.shape} but attr_ids "
                                 f"{self.attr_ids.shape}; give one value per attribute id")
        self.attr_values = attr_values

    @property
    def has_values(self) -> bool:
        """Whether some attribute carries a value (``attr_values`` is not None)."""
        return self.attr_values is not None

    def values_or_ones(self) -> np.ndarray:
        """``attr_values``, or ones (float64, parallel to ``attr_ids``) for binary data."""
        if self.attr_values is None:
            return np.ones(self.attr_ids.shape[0])
        return self.attr_values

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def n_tokens(self) -> int:
        return int(self.offsets[-1] - self.offsets[0])

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            n = len(self)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"sentence index {i} out of range for {n} sentences")
            t0, t1 = self.offsets[i], self.offsets[i + 1]
            a0, a1 = self.attr_indptr[t0], self.attr_indptr[t1]
            # Learners index single sentences per example per iteration: skip __init__'s
            # conversions, the arrays are int64 and contiguous already.
            out = SequenceCorpus.__new__(SequenceCorpus)
            out.attr_indptr = self.attr_indptr[t0 : t1 + 1] - a0
            out.attr_ids = self.attr_ids[a0:a1]
            vals = self.attr_values
            out.attr_values = None if vals is None else vals[a0:a1]
            out.offsets = np.array([0, t1 - t0], dtype=np.int64)
            return out
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self._contiguous(start, max(start, stop))
            return self.subset(np.arange(start, stop, step))
        if isinstance(i, (list, np.ndarray)):
            return self.subset(np.arange(len(self))[np.asarray(i)] if np.asarray(i).dtype == bool
                               else i)
        raise TypeError(f"sentence index must be an int, a slice, a list or an array, "
                        f"got {type(i).__name__}")

    def _contiguous(self, a: int, b: int) -> "SequenceCorpus":
        """Sentences a..b-1 (0 <= a <= b <= len): views of the arrays, rebased to start at 0."""
        if a == 0 and b == len(self) and self.offsets[0] == 0 and self.attr_indptr[0] == 0:
            return self
        t0, t1 = self.offsets[a], self.offsets[b]
        a0, a1 = self.attr_indptr[t0], self.attr_indptr[t1]
        vals = self.attr_values
        return SequenceCorpus(self.attr_indptr[t0 : t1 + 1] - a0, self.attr_ids[a0:a1],
                              self.offsets[a : b + 1] - t0,
                              None if vals is None else vals[a0:a1])

    def subset(self, indices) -> "SequenceCorpus":
        """The sentences ``indices`` (ints, negatives count from the end), in that order."""
        n = len(self)
        sel = np.asarray(indices if isinstance(indices, (np.ndarray, list, tuple, range))
                         else list(indices))
        if sel.size == 0:
            sel = sel.astype(np.int64)
        if sel.ndim != 1 or sel.dtype.kind not in "iu":
            raise TypeError(f"sentence indices must be a 1-d sequence of ints, got "
                            f"{sel.dtype} values of shape {sel.shape}")
        sel = np.where(sel < 0, sel + n, sel).astype(np.int64, copy=False)
        bad = np.flatnonzero((sel < 0) | (sel >= n))
        if bad.size:
            raise IndexError(f"sentence index {np.asarray(indices)[bad[0]]} out of range for "
                             f"{n} sentences")
        indptr, ids, offsets = _gather_sentences(self.attr_indptr, self.attr_ids,
                                                 self.offsets, sel)
        vals = None
        if self.attr_values is not None:
            vals = _gather_values(self.attr_indptr, self.attr_values, self.offsets, sel,
                                  ids.shape[0])
        return SequenceCorpus(indptr, ids, offsets, vals)


@njit(cache=True)
def _gather_sentences(attr_indptr, attr_ids, offsets, sel):
    """CSR arrays (attr_indptr, attr_ids, offsets) of sentences ``sel`` (in range), copied
    into one corpus that starts at 0."""
    n_tok = 0
    n_attr = 0
    for s in sel:
        n_tok += offsets[s + 1] - offsets[s]
        n_attr += attr_indptr[offsets[s + 1]] - attr_indptr[offsets[s]]
    new_off = np.empty(sel.shape[0] + 1, np.int64)
    new_ptr = np.empty(n_tok + 1, np.int64)
    new_ids = np.empty(n_attr, np.int64)
    new_off[0] = 0
    new_ptr[0] = 0
    t = 0
    a = 0
    for k in range(sel.shape[0]):
        s = sel[k]
        for u in range(offsets[s], offsets[s + 1]):
            for p in range(attr_indptr[u], attr_indptr[u + 1]):
                new_ids[a] = attr_ids[p]
                a += 1
            t += 1
            new_ptr[t] = a
        new_off[k + 1] = t
    return new_ptr, new_ids, new_off


@njit(cache=True)
def _gather_values(attr_indptr, attr_values, offsets, sel, n_attr):
    """The attribute values of sentences ``sel``, in ``_gather_sentences``' order."""
    out = np.empty(n_attr, np.float64)
    a = 0
    for k in range(sel.shape[0]):
        s = sel[k]
        for p in range(attr_indptr[offsets[s]], attr_indptr[offsets[s + 1]]):
            out[a] = attr_values[p]
            a += 1
    return out


def as_corpus(X) -> SequenceCorpus:
    """``X`` as one ``SequenceCorpus``: a corpus as it is, a list of corpora joined."""
    return join_corpora(X, SequenceCorpus, concat_corpora)


def concat_corpora(parts: Sequence[SequenceCorpus]) -> SequenceCorpus:
    if not parts:
        return SequenceCorpus(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64))
    indptrs, offsets = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)]
    a_base = t_base = 0
    for p in parts:
        indptrs.append(p.attr_indptr[1:] - p.attr_indptr[0] + a_base)
        offsets.append(p.offsets[1:] - p.offsets[0] + t_base)
        a_base += int(p.attr_indptr[-1] - p.attr_indptr[0])
        t_base += p.n_tokens
    values = None
    if any(p.attr_values is not None for p in parts):  # a binary part's values are ones
        values = np.concatenate([p.values_or_ones()[p.attr_indptr[0] : p.attr_indptr[-1]]
                                 for p in parts])
    return SequenceCorpus(
        np.concatenate(indptrs),
        np.concatenate([p.attr_ids[p.attr_indptr[0] : p.attr_indptr[-1]] for p in parts]),
        np.concatenate(offsets),
        values,
    )
