"""Arc features from per-token vectors (``make_dataset`` with ``(tokens, vectors)``).

A sentence may come with a real-valued vector v_t (d columns) for each token t = 1..n,
such as embeddings or another model's per-token outputs.  ROOT (position 0) has no vector:
its row is all zeros, and arcs from ROOT get a block of their own instead (below), so the
model learns what makes a word the root's dependent rather than reading it from a vector
nobody gave.  For the arc h -> m, with dir = right when h < m (the dependent is right of
its head) and left otherwise, the arc's vector features are six blocks of d real values::

    block  columns                      value for arc h -> m
    0      head, dependent right        v_h   if h > 0 and h < m
    1      head, dependent left         v_h   if h > 0 and h > m
    2      dependent, head left         v_m   if h < m (ROOT included)
    3      dependent, head right        v_m   if h > m
    4      product                      v_h * v_m (elementwise) if h > 0
    5      root                         v_m   if h = 0

Why these let an arc-factored model use vectors.  Every word takes exactly one head, so a
feature of the dependent alone adds the same amount to all of its candidate arcs and cannot
change which one wins; crossed with the direction (blocks 2-3) it can: it says whether m
prefers a head on its left or on its right.  A feature of the head alone (blocks 0-1) says
how good a head h is for dependents on each side: it moves weight between competing heads.
Neither sees the pair: the product block does, w_4 . (v_h * v_m) = sum_j w_4[j] v_h[j]
v_m[j] is a diagonal bilinear score of the pair, so matching coordinates (the same
one-hot cluster, aligned embedding dimensions) can attract or repel.  The root block plays
the part of v_0 without a made-up vector.  All six are linear in w and depend on one arc
only, so decoding stays exact (Eisner) and Phi(x, y) = sum over y's arcs.

The blocks sit after the hashed arc and label blocks (``DependencyStructure.vector_offset``),
6 d weights in all.  Scores are added to the folded arc scores S[h, m] (they do not depend
on the label, so the label's max is unchanged), and Phi adds them per changed head.
Vectors are stored as CSR over the positions of a :class:`~.corpus.DepCorpus`
(sorted columns, no explicit zeros), so dense and sparse input give the same sums in the
same order: the same model bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["N_VECTOR_BLOCKS", "add_vector_scores", "vector_phi"]

#: weight blocks of d columns each (see the module docstring)
N_VECTOR_BLOCKS = 6


@njit(cache=True, nogil=True)
def _dot(ptr, idx, val, t, wv, off):
    """v_t . wv[off:off + d] over position t's CSR row."""
    s = 0.0
    for k in range(ptr[t], ptr[t + 1]):
        s += val[k] * wv[off + idx[k]]
    return s


@njit(cache=True, nogil=True)
def _product(ptr, idx, val, a, b, wv, off):
    """sum_j v_a[j] v_b[j] wv[off + j]: a merge of two sorted CSR rows."""
    i, j = ptr[a], ptr[b]
    ie, je = ptr[a + 1], ptr[b + 1]
    s = 0.0
    while i < ie and j < je:
        ci, cj = idx[i], idx[j]
        if ci == cj:
            s += val[i] * val[j] * wv[off + ci]
            i += 1
            j += 1
        elif ci < cj:
            i += 1
        else:
            j += 1
    return s


@njit(cache=True, nogil=True)
def add_vector_scores(S, sq, offsets, ptr, idx, val, wv, d):
    """Add the vector part of every arc score to the flat folded scores ``S`` in place.

    Sentence i's (n+1, n+1) matrix is ``S[sq[i]:sq[i+1]]`` row-major (``score_batch``'s
    layout); ``ptr/idx/val`` are the CSR rows of every position, ``wv`` the 6 d vector
    weights.  The diagonal and column 0 stay -inf.
    """
    for i in range(offsets.shape[0] - 1):
        t0 = offsets[i]
        n1 = offsets[i + 1] - t0
        base = sq[i]
        head = np.zeros((n1, 2))
        dep = np.zeros((n1, 2))
        root = np.zeros(n1)
        for t in range(1, n1):
            p = t0 + t
            head[t, 0] = _dot(ptr, idx, val, p, wv, 0)
            head[t, 1] = _dot(ptr, idx, val, p, wv, d)
            dep[t, 0] = _dot(ptr, idx, val, p, wv, 2 * d)
            dep[t, 1] = _dot(ptr, idx, val, p, wv, 3 * d)
            root[t] = _dot(ptr, idx, val, p, wv, 5 * d)
        for m in range(1, n1):
            S[base + m] += dep[m, 0] + root[m]
        for h in range(1, n1):
            for m in range(1, n1):
                if m == h:
                    continue
                di = 0 if h < m else 1
                S[base + h * n1 + m] += head[h, di] + dep[m, di] + _product(
                    ptr, idx, val, t0 + h, t0 + m, wv, 4 * d)


@njit(cache=True, nogil=True)
def _emit_arc(ptr, idx, val, t0, h, m, d, offset, sign, out_i, out_v, k):
    """Write the vector features of arc h -> m (times ``sign``) from position k on."""
    pm = t0 + m
    if h == 0:
        for q in range(ptr[pm], ptr[pm + 1]):  # dependent, head left (ROOT) and root block
            out_i[k] = offset + 2 * d + idx[q]
            out_v[k] = sign * val[q]
            out_i[k + 1] = offset + 5 * d + idx[q]
            out_v[k + 1] = sign * val[q]
            k += 2
        return k
    ph = t0 + h
    di = 0 if h < m else 1
    for q in range(ptr[ph], ptr[ph + 1]):
        out_i[k] = offset + di * d + idx[q]
        out_v[k] = sign * val[q]
        k += 1
    for q in range(ptr[pm], ptr[pm + 1]):
        out_i[k] = offset + (2 + di) * d + idx[q]
        out_v[k] = sign * val[q]
        k += 1
    i, j = ptr[ph], ptr[pm]
    while i < ptr[ph + 1] and j < ptr[pm + 1]:
        if idx[i] == idx[j]:
            out_i[k] = offset + 4 * d + idx[i]
            out_v[k] = sign * val[i] * val[j]
            k += 1
            i += 1
            j += 1
        elif idx[i] < idx[j]:
            i += 1
        else:
            j += 1
    return k


@njit(cache=True, nogil=True)
def vector_phi(ptr, idx, val, t0, n1, ha, hb, d, offset):
    """The vector features of the arcs of tree ``ha`` minus those of ``hb`` (heads of -1:
    no tree), uncoalesced ``(indices, values)``; words whose heads agree cancel and are
    skipped."""
    size = 0
    for m in range(1, n1):
        if ha[m - 1] != hb[m - 1]:
            for h in (ha[m - 1], hb[m - 1]):
                if h >= 0:
                    size += 3 * (ptr[t0 + h + 1] - ptr[t0 + h]) + 3 * (
                        ptr[t0 + m + 1] - ptr[t0 + m])
    out_i = np.empty(size, np.int64)
    out_v = np.empty(size, np.float64)
    k = 0
    for m in range(1, n1):
        a, b = ha[m - 1], hb[m - 1]
        if a == b:
            continue
        if a >= 0:
            k = _emit_arc(ptr, idx, val, t0, a, m, d, offset, 1.0, out_i, out_v, k)
        if b >= 0:
            k = _emit_arc(ptr, idx, val, t0, b, m, d, offset, -1.0, out_i, out_v, k)
    return out_i[:k], out_v[:k]
