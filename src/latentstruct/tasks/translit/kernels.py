"""Compiled kernels of the transliteration task: cell scores, decisions and argmaxes.

A cell (i, j) aligns source character i with target character j; its score is the sum of
its unigram and (with ``bigrams``) two bigram mapping weights in the layout of
:mod:`latentstruct.tasks.translit`.  The batch kernels run the monotone alignment DP of
every pair of a :class:`~latentstruct.tasks.translit.TranslitCorpus` in one call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cell_scores_kernel", "decision_kernel", "argmax_kernel"]


@njit(cache=True, nogil=True)
def _cell_score(s, t, i, j, w, A, B, bigrams):  # pragma: no cover - numba
    m = s.shape[0]
    n = t.shape[0]
    si = s[i]
    tj = t[j]
    v = w[1] + w[2 + si * B + tj]
    if bigrams:
        sp = s[i - 1] if i > 0 else 0
        sn = s[i + 1] if i + 1 < m else 0
        tp = t[j - 1] if j > 0 else 0
        tn = t[j + 1] if j + 1 < n else 0
        base = 2 + A * B
        v += w[base + ((sp * A + si) * B + tp) * B + tj]
        v += w[base + A * A * B * B + ((si * A + sn) * B + tj) * B + tn]
    return v


@njit(cache=True, nogil=True)
def cell_scores_kernel(s, t, w, A, B, bigrams):  # pragma: no cover - numba
    m = s.shape[0]
    n = t.shape[0]
    out = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            out[i, j] = _cell_score(s, t, i, j, w, A, B, bigrams)
    return out


@njit(cache=True, nogil=True)
def _max_len(offsets, which):  # pragma: no cover - numba
    best = 0
    for k in range(which.shape[0]):
        p = which[k]
        d = offsets[p + 1] - offsets[p]
        if d > best:
            best = d
    return best


@njit(cache=True, nogil=True)
def decision_kernel(src_chars, src_off, tgt_chars, tgt_off, pair_src, pair_tgt,
                     w, A, B, bigrams):  # pragma: no cover - numba
    """f(x) = w[0] + best monotone alignment score, for every pair.

    D[i, j] (best alignment of the first i sources and j targets) =
    max(D[i-1, j], D[i, j-1], D[i-1, j-1] + cell(i-1, j-1)); two rolling rows.
    """
    P = pair_src.shape[0]
    out = np.empty(P)
    nmax = _max_len(tgt_off, pair_tgt)
    prev = np.zeros(nmax + 1)
    cur = np.zeros(nmax + 1)
    for k in range(P):
        ps = pair_src[k]
        pt = pair_tgt[k]
        s = src_chars[src_off[ps]:src_off[ps + 1]]
        t = tgt_chars[tgt_off[pt]:tgt_off[pt + 1]]
        m = s.shape[0]
        n = t.shape[0]
        for j in range(n + 1):
            prev[j] = 0.0
        for i in range(m):
            cur[0] = 0.0
            for j in range(n):
                best = prev[j] + _cell_score(s, t, i, j, w, A, B, bigrams)
                if prev[j + 1] > best:
                    best = prev[j + 1]
                if cur[j] > best:
                    best = cur[j]
                cur[j + 1] = best
            prev, cur = cur, prev
        out[k] = w[0] + prev[n]
    return out


@njit(cache=True, nogil=True)
def argmax_kernel(src_chars, src_off, tgt_chars, tgt_off, pair_src, pair_tgt,
                   w, A, B, bigrams, out_offsets, out_align, out_score):  # pragma: no cover
    """Best alignment of every pair (deterministic ties: leave a source unaligned first).

    ``out_align[out_offsets[k]:out_offsets[k+1]]`` receives pair k's alignment and
    ``out_score[k]`` w[0] plus its aligned cells' scores, summed in source order.
    """
    P = pair_src.shape[0]
    mmax = _max_len(src_off, pair_src)
    nmax = _max_len(tgt_off, pair_tgt)
    D = np.zeros((mmax + 1, nmax + 1))
    C = np.zeros((mmax, nmax))
    for k in range(P):
        ps = pair_src[k]
        pt = pair_tgt[k]
        s = src_chars[src_off[ps]:src_off[ps + 1]]
        t = tgt_chars[tgt_off[pt]:tgt_off[pt + 1]]
        m = s.shape[0]
        n = t.shape[0]
        for j in range(n + 1):
            D[0, j] = 0.0
        for i in range(1, m + 1):
            D[i, 0] = 0.0
            for j in range(1, n + 1):
                c = _cell_score(s, t, i - 1, j - 1, w, A, B, bigrams)
                C[i - 1, j - 1] = c
                best = D[i - 1, j - 1] + c
                if D[i - 1, j] > best:
                    best = D[i - 1, j]
                if D[i, j - 1] > best:
                    best = D[i, j - 1]
                D[i, j] = best
        base = out_offsets[k]
        i = m
        j = n
        while i > 0:
            if j == 0 or D[i, j] == D[i - 1, j]:
                out_align[base + i - 1] = -1
                i -= 1
            elif D[i, j] == D[i, j - 1]:
                j -= 1
            else:
                out_align[base + i - 1] = j - 1
                i -= 1
                j -= 1
        total = w[0]
        for i in range(m):
            if out_align[base + i] >= 0:
                total += C[i, out_align[base + i]]
        out_score[k] = total
