"""Featurised word pairs of the transliteration task: :class:`TranslitCorpus`.

Pools of encoded source and target words plus (source, target) index pairs, so that the
n x n cross pairs of a ranking evaluation cost two index arrays; :func:`concat_translit`
joins corpora (the learners' batches).  A corpus may carry the user's character-pair
scores, one finite (m x n x k) float64 array per pair (``pair_scores``), which follow the
pairs through indexing, :meth:`TranslitCorpus.subset` and :func:`concat_translit`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from ...exceptions import InputError

__all__ = ["TranslitCorpus", "concat_translit"]


def _gather(chars: np.ndarray, offsets: np.ndarray, idx: np.ndarray):
    """Concatenate the segments ``chars[offsets[k]:offsets[k+1]]`` for k in idx."""
    starts = offsets[idx]
    lengths = offsets[idx + 1] - starts
    new_off = np.zeros(idx.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=new_off[1:])
    total = int(new_off[-1])
    pos = np.repeat(starts - new_off[:-1], lengths) + np.arange(total, dtype=np.int64)
    return chars[pos], new_off


class TranslitCorpus(Sequence):
    """Featurised word pairs: pools of encoded words plus (source, target) index pairs.

    ``src_chars[src_offsets[p]:src_offsets[p+1]]`` are the character ids of source word p
    (likewise ``tgt_*`` for target words); pair k is (source word ``pair_src[k]``, target
    word ``pair_tgt[k]``).  Sharing the pools makes the n x n cross pairs of a ranking
    evaluation cost only two index arrays.  ``sources``/``targets`` keep the pool words as
    strings (for explanations and pictures).  Indexing returns a one-pair view, slicing and
    :meth:`subset` return views that share the pools.  ``pair_scores`` is None or one
    (m x n x k) array per pair (the user's character-pair scores, same k for all).
    """

    def __init__(self, src_chars, src_offsets, tgt_chars, tgt_offsets, pair_src, pair_tgt,
                 sources=None, targets=None, pair_scores=None):
        self.src_chars = np.ascontiguousarray(src_chars, dtype=np.int64)
        self.src_offsets = np.ascontiguousarray(src_offsets, dtype=np.int64)
        self.tgt_chars = np.ascontiguousarray(tgt_chars, dtype=np.int64)
        self.tgt_offsets = np.ascontiguousarray(tgt_offsets, dtype=np.int64)
        self.pair_src = np.ascontiguousarray(pair_src, dtype=np.int64)
        self.pair_tgt = np.ascontiguousarray(pair_tgt, dtype=np.int64)
        if self.pair_src.shape != self.pair_tgt.shape or self.pair_src.ndim != 1:
            raise InputError(
                f"pair_src and pair_tgt must be 1-d arrays of equal length, got shapes "
                f"{self.pair_src.shape} and {self.pair_tgt.shape}"
            )
        self.sources = None if sources is None else tuple(sources)
        self.targets = None if targets is None else tuple(targets)
        self.pair_scores = None if pair_scores is None else tuple(pair_scores)
        if self.pair_scores is not None and len(self.pair_scores) != self.pair_src.shape[0]:
            raise InputError(f"pair_scores must hold one array per pair: {self.pair_src.shape[0]} "
                             f"pairs but {len(self.pair_scores)} arrays")

    @property
    def n_scores(self) -> int:
        """k, the user's scores per character pair (0 without scores)."""
        if not self.pair_scores:
            return 0
        return int(self.pair_scores[0].shape[2])

    def scores(self, k: int) -> np.ndarray | None:
        """The (m x n x k) scores of pair k, or None."""
        return None if self.pair_scores is None else self.pair_scores[k]

    @classmethod
    def from_ids(cls, pairs, sources=None, targets=None) -> "TranslitCorpus":
        """A corpus of ``[(source_ids, target_ids), ...]`` (one pool entry per pair)."""
        pairs = list(pairs)
        s = [np.asarray(a, dtype=np.int64).ravel() for a, _ in pairs]
        t = [np.asarray(b, dtype=np.int64).ravel() for _, b in pairs]

        def pool(words):
            off = np.zeros(len(words) + 1, np.int64)
            np.cumsum([w.shape[0] for w in words], out=off[1:])
            chars = np.concatenate(words) if words else np.zeros(0, np.int64)
            return chars, off

        sc, so = pool(s)
        tc, to = pool(t)
        k = np.arange(len(pairs), dtype=np.int64)
        return cls(sc, so, tc, to, k, k, sources, targets)

    def __len__(self) -> int:
        return int(self.pair_src.shape[0])

    @property
    def n_source_words(self) -> int:
        return int(self.src_offsets.shape[0] - 1)

    @property
    def n_target_words(self) -> int:
        return int(self.tgt_offsets.shape[0] - 1)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.subset(np.arange(len(self))[i])
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (numbers.Integral, np.integer)):
            raise TypeError(f"pair index must be an integer or a slice, got {type(i).__name__}")
        n = len(self)
        k = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= k < n:
            raise IndexError(f"pair index {i} out of range for {n} pairs")
        return self.subset(np.array([k], dtype=np.int64))

    def subset(self, indices) -> "TranslitCorpus":
        """The pairs ``indices`` (a view sharing the word pools)."""
        idx = np.asarray(indices, dtype=np.int64).ravel()
        scores = None if self.pair_scores is None else [self.pair_scores[k] for k in idx.tolist()]
        return TranslitCorpus(self.src_chars, self.src_offsets, self.tgt_chars, self.tgt_offsets,
                              self.pair_src[idx], self.pair_tgt[idx], self.sources, self.targets,
                              scores)

    def source_ids(self, k: int) -> np.ndarray:
        p = self.pair_src[k]
        return self.src_chars[self.src_offsets[p]:self.src_offsets[p + 1]]

    def target_ids(self, k: int) -> np.ndarray:
        p = self.pair_tgt[k]
        return self.tgt_chars[self.tgt_offsets[p]:self.tgt_offsets[p + 1]]

    def source(self, k: int) -> str | None:
        return None if self.sources is None else self.sources[self.pair_src[k]]

    def target(self, k: int) -> str | None:
        return None if self.targets is None else self.targets[self.pair_tgt[k]]

    def compact(self) -> "TranslitCorpus":
        """A copy whose pools hold only the words its pairs use."""
        us, inv_s = np.unique(self.pair_src, return_inverse=True)
        ut, inv_t = np.unique(self.pair_tgt, return_inverse=True)
        sc, so = _gather(self.src_chars, self.src_offsets, us)
        tc, to = _gather(self.tgt_chars, self.tgt_offsets, ut)
        sources = None if self.sources is None else [self.sources[p] for p in us]
        targets = None if self.targets is None else [self.targets[p] for p in ut]
        return TranslitCorpus(sc, so, tc, to, inv_s.ravel(), inv_t.ravel(), sources, targets,
                              self.pair_scores)


def concat_translit(parts) -> TranslitCorpus:
    """One corpus holding the pairs of ``parts`` in order (pools are merged when they differ)."""
    parts = list(parts)
    for p in parts:
        if not isinstance(p, TranslitCorpus):
            raise InputError(
                f"expected featurised pairs (TranslitCorpus, from featurize or encode_pair), "
                f"got {type(p).__name__}"
            )
    if not parts:
        z = np.zeros(0, np.int64)
        return TranslitCorpus(z, np.zeros(1, np.int64), z, np.zeros(1, np.int64), z, z, (), ())
    scored = [p.pair_scores is not None for p in parts if len(p)]
    if any(scored) and not all(scored):
        raise InputError("cannot join word pairs with character-pair scores and pairs without "
                         "them; give every pair as (source, target, scores) or none of them")
    ks = {p.n_scores for p in parts if len(p)}
    if len(ks) > 1:
        raise InputError(f"cannot join word pairs with different numbers of character-pair "
                         f"scores per cell ({sorted(ks)}); every pair needs the same k")
    scores = [a for p in parts for a in (p.pair_scores or ())] if any(scored) else None
    first = parts[0]
    if all(p.src_chars is first.src_chars and p.tgt_chars is first.tgt_chars
           and p.src_offsets is first.src_offsets and p.tgt_offsets is first.tgt_offsets
           for p in parts):
        if len(parts) == 1:
            return first
        return TranslitCorpus(first.src_chars, first.src_offsets, first.tgt_chars,
                              first.tgt_offsets, np.concatenate([p.pair_src for p in parts]),
                              np.concatenate([p.pair_tgt for p in parts]), first.sources,
                              first.targets, scores)
    parts = [p.compact() for p in parts]
    keep_strings = all(p.sources is not None and p.targets is not None for p in parts)
    s_base = t_base = 0
    sc, so, tc, to, ps, pt = [], [np.zeros(1, np.int64)], [], [np.zeros(1, np.int64)], [], []
    sources, targets = [], []
    for p in parts:
        sc.append(p.src_chars)
        tc.append(p.tgt_chars)
        so.append(p.src_offsets[1:] + so[-1][-1])
        to.append(p.tgt_offsets[1:] + to[-1][-1])
        ps.append(p.pair_src + s_base)
        pt.append(p.pair_tgt + t_base)
        s_base += p.n_source_words
        t_base += p.n_target_words
        if keep_strings:
            sources.extend(p.sources)
            targets.extend(p.targets)
    return TranslitCorpus(np.concatenate(sc), np.concatenate(so), np.concatenate(tc),
                          np.concatenate(to), np.concatenate(ps), np.concatenate(pt),
                          sources if keep_strings else None, targets if keep_strings else None,
                          scores)
