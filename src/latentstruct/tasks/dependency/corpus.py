"""The featurised form of dependency sentences: per-position integer codes.

A sentence of n words is stored as n + 1 *positions*: position 0 is the artificial ROOT,
position k the k-th word.  Each position carries three codes, MurmurHash3 values
(``HashingIndex(32)``) of the lowercased word, its 5-character prefix and its POS tag;
ROOT has codes of its own.  The arc and label features are conjunctions of these codes,
hashed by the kernels of :mod:`latentstruct.tasks.dependency.features`.  Sentences given
with per-token vectors also carry them, as CSR rows over the positions (ROOT's row empty;
:mod:`latentstruct.tasks.dependency.vectors`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...data.features import HashingIndex
from ..base import join_corpora

__all__ = ["DepCorpus", "concat_dep_corpora", "as_dep_corpus", "token_codes"]

_HASH32 = HashingIndex(32)


def token_codes(words: Sequence[str], pos: Sequence[str]) -> tuple[np.ndarray, ...]:
    """(word, prefix, pos) code arrays over the n + 1 positions of a sentence (ROOT first)."""
    lower = [w.lower() for w in words]
    names_w = ["r\x1fword"] + ["w\x1f" + w for w in lower]
    names_x = ["r\x1fprefix"] + ["x\x1f" + w[:5] for w in lower]
    names_p = ["r\x1fpos"] + ["p\x1f" + p for p in pos]
    return (_HASH32.lookup_many(names_w), _HASH32.lookup_many(names_x),
            _HASH32.lookup_many(names_p))


class DepCorpus(Sequence):
    """Featurised sentences: concatenated per-position codes with sentence offsets.

    ``offsets[i]:offsets[i+1]`` are sentence i's positions (ROOT first), so sentence i has
    ``offsets[i+1] - offsets[i] - 1`` words.  ``scored`` marks the words counted by
    UAS/LAS (0 at ROOT).  Indexing returns a one-sentence ``DepCorpus`` view; slices and
    lists of indices return subsets, so single-instance and batch code share one type.

    ``vectors``, when the sentences came with per-token vectors, is ``(ptr, idx, val, d)``:
    position p's vector is ``val[ptr[p]:ptr[p+1]]`` at columns ``idx[ptr[p]:ptr[p+1]]``
    (sorted), of d columns in all (``n_columns``; 0 and ``vec_ptr`` None without vectors).
    """

    def __init__(self, word, prefix, pos, scored, offsets, vectors=None):
        self.word = np.ascontiguousarray(word, dtype=np.int64)
        self.prefix = np.ascontiguousarray(prefix, dtype=np.int64)
        self.pos = np.ascontiguousarray(pos, dtype=np.int64)
        self.scored = np.ascontiguousarray(scored, dtype=np.int64)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.vec_ptr = self.vec_idx = self.vec_val = None
        self.n_columns = 0
        if vectors is not None:
            ptr, idx, val, d = vectors
            self.vec_ptr = np.ascontiguousarray(ptr, dtype=np.int64)
            self.vec_idx = np.ascontiguousarray(idx, dtype=np.int64)
            self.vec_val = np.ascontiguousarray(val, dtype=np.float64)
            self.n_columns = int(d)
            if self.vec_ptr.shape[0] != self.word.shape[0] + 1:
                raise ValueError(f"vectors need {self.word.shape[0] + 1} row pointers (one "
                                 f"row per position), got {self.vec_ptr.shape[0]}")

    @property
    def has_vectors(self) -> bool:
        """Whether the sentences carry per-token vectors."""
        return self.vec_ptr is not None

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def lengths(self) -> np.ndarray:
        """Words per sentence (ROOT not counted)."""
        return np.diff(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.lengths().sum())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.subset(range(*i.indices(len(self))))
        if isinstance(i, (list, np.ndarray)):
            arr = np.asarray(i)
            return self.subset(np.flatnonzero(arr) if arr.dtype == bool else arr)
        n = len(self)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sentence index {i} out of range for {n} sentences")
        a, b = self.offsets[i], self.offsets[i + 1]
        view = object.__new__(DepCorpus)  # slices of contiguous int64 arrays: no checks needed
        view.word, view.prefix, view.pos = self.word[a:b], self.prefix[a:b], self.pos[a:b]
        view.scored = self.scored[a:b]
        view.offsets = np.array([0, b - a], dtype=np.int64)
        view.vec_ptr = view.vec_idx = view.vec_val = None
        view.n_columns = self.n_columns
        if self.vec_ptr is not None:
            p0, p1 = self.vec_ptr[a], self.vec_ptr[b]
            view.vec_ptr = self.vec_ptr[a:b + 1] - p0
            view.vec_idx, view.vec_val = self.vec_idx[p0:p1], self.vec_val[p0:p1]
        return view

    def subset(self, indices) -> "DepCorpus":
        return concat_dep_corpora([self[int(i)] for i in indices])


def concat_dep_corpora(parts: Sequence[DepCorpus]) -> DepCorpus:
    if not parts:
        z = np.zeros(0, np.int64)
        return DepCorpus(z, z, z, z, np.zeros(1, np.int64))
    offsets = [np.zeros(1, np.int64)]
    base = 0
    for p in parts:
        offsets.append(p.offsets[1:] - p.offsets[0] + base)
        base += int(p.offsets[-1] - p.offsets[0])

    def cat(name):
        return np.concatenate([getattr(p, name)[p.offsets[0]:p.offsets[-1]] for p in parts])

    return DepCorpus(cat("word"), cat("prefix"), cat("pos"), cat("scored"),
                     np.concatenate(offsets), _concat_vectors(parts))


def _concat_vectors(parts: Sequence[DepCorpus]):
    """The joined CSR rows of ``parts`` (None when none has vectors); parts with and
    without vectors, or with different column counts, cannot be joined."""
    kinds = {(p.has_vectors, p.n_columns) for p in parts}
    if len(kinds) > 1:
        raise ValueError(f"cannot join featurised sentences with and without vectors, or with "
                         f"different column counts: {sorted(kinds)}")
    if not parts[0].has_vectors:
        return None
    ptrs, idx, val, base = [np.zeros(1, np.int64)], [], [], 0
    for p in parts:
        a, b = p.offsets[0], p.offsets[-1]
        lo, hi = p.vec_ptr[a], p.vec_ptr[b]
        ptrs.append(p.vec_ptr[a + 1:b + 1] - lo + base)
        idx.append(p.vec_idx[lo:hi])
        val.append(p.vec_val[lo:hi])
        base += int(hi - lo)
    return (np.concatenate(ptrs), np.concatenate(idx), np.concatenate(val),
            parts[0].n_columns)


def as_dep_corpus(X) -> DepCorpus:
    """``X`` as one ``DepCorpus``: a corpus as it is, a list of corpora joined."""
    return join_corpora(X, DepCorpus, concat_dep_corpora)
