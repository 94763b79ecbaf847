"""Compiled kernels of first-order sequence labelling, on the ``SequenceCorpus`` CSR arrays.

The weight layout they read and write is the one of
:class:`~latentstruct.tasks.sequence.SequenceLabellingTask`::

    [ emissions (n_attr x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

Emission scores of a token range, joint-feature differences Phi(y_a) - Phi(y_b) (raw and
coalesced), the range check of label ids, and the Hamming-loss-augmented unary scores.
``attr_values`` is the corpus's (None: binary attributes, every value 1; numba compiles a
specialisation for None in which the value is the constant 1, so binary data pays nothing):
an attribute occurrence with value v contributes ``v * w[a, y]`` to a score and ``v`` to
its emission feature (CRFsuite's semantics).
The grammaticality task reuses them for each of its chunking views.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..validation import check_label_ids

__all__ = [
    "emission_scores",
    "phi_difference",
    "coalesced",
    "coalesced_phi_difference",
    "first_outside",
    "hamming_augmented",
]


@njit(cache=True, nogil=True)
def emission_scores(attr_indptr, attr_ids, attr_values, emission, t0, t1):
    """Unary scores of tokens t0..t1-1: sum of their attributes' label-weight rows, each
    scaled by its value (``attr_values``, None: all 1)."""
    n_labels = emission.shape[1]
    out = np.zeros((t1 - t0, n_labels))
    for t in range(t0, t1):
        for p in range(attr_indptr[t], attr_indptr[t + 1]):
            row = attr_ids[p]
            if attr_values is None:
                for y in range(n_labels):
                    out[t - t0, y] += emission[row, y]
            else:
                v = attr_values[p]
                for y in range(n_labels):
                    out[t - t0, y] += v * emission[row, y]
    return out


@njit(cache=True, nogil=True)
def phi_difference(attr_indptr, attr_ids, attr_values, t0, t1, y_a, y_b, n_attr, n_labels):
    """Phi(y_a) - Phi(y_b) of one sentence (tokens t0..t1-1), uncoalesced; an emission
    entry is its attribute's value (``attr_values``, None: all 1).

    Emissions of tokens where the labels agree cancel and are skipped.
    """
    T = t1 - t0
    n_em = 0
    for t in range(T):
        if y_a[t] != y_b[t]:
            n_em += attr_indptr[t0 + t + 1] - attr_indptr[t0 + t]
    size = 2 * n_em + 2 * (T - 1 if T > 0 else 0) + 4
    idx = np.empty(size, np.int64)
    val = np.empty(size, np.float64)
    k = 0
    trans_base = n_attr * n_labels
    start_base = trans_base + n_labels * n_labels
    end_base = start_base + n_labels
    for t in range(T):
        if y_a[t] != y_b[t]:
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                a = attr_ids[p] * n_labels
                v = 1.0 if attr_values is None else attr_values[p]
                if y_a[t] >= 0:
                    idx[k] = a + y_a[t]
                    val[k] = v
                    k += 1
                if y_b[t] >= 0:
                    idx[k] = a + y_b[t]
                    val[k] = -v
                    k += 1
    if T > 0:
        for t in range(1, T):
            if y_a[t - 1] >= 0 and y_a[t] >= 0:
                idx[k] = trans_base + y_a[t - 1] * n_labels + y_a[t]
                val[k] = 1.0
                k += 1
            if y_b[t - 1] >= 0 and y_b[t] >= 0:
                idx[k] = trans_base + y_b[t - 1] * n_labels + y_b[t]
                val[k] = -1.0
                k += 1
        for lab, sign in ((y_a[0], 1.0), (y_b[0], -1.0)):
            if lab >= 0:
                idx[k] = start_base + lab
                val[k] = sign
                k += 1
        for lab, sign in ((y_a[T - 1], 1.0), (y_b[T - 1], -1.0)):
            if lab >= 0:
                idx[k] = end_base + lab
                val[k] = sign
                k += 1
    return idx[:k], val[:k]


@njit(cache=True, nogil=True)
def coalesced(idx, val):
    """``coalesce_arrays`` in one compiled call: sorted unique indices, the sums of their
    values, zero sums dropped (the per-example numpy version dominated training time)."""
    order = np.argsort(idx, kind="mergesort")
    out_i = np.empty(idx.shape[0], np.int64)
    out_v = np.empty(idx.shape[0], np.float64)
    m = 0
    q = 0
    while q < order.shape[0]:
        j = idx[order[q]]
        v = 0.0
        while q < order.shape[0] and idx[order[q]] == j:
            v += val[order[q]]
            q += 1
        if v != 0.0:
            out_i[m] = j
            out_v[m] = v
            m += 1
    return out_i[:m], out_v[:m]


@njit(cache=True, nogil=True)
def coalesced_phi_difference(attr_indptr, attr_ids, attr_values, t0, t1, y_a, y_b, n_attr,
                             n_labels):
    """Coalesced Phi(y_a) - Phi(y_b) of one sentence, in one compiled call."""
    idx, val = phi_difference(attr_indptr, attr_ids, attr_values, t0, t1, y_a, y_b, n_attr,
                              n_labels)
    return coalesced(idx, val)


@njit(cache=True, nogil=True)
def coalesced_phi_differences(attr_indptr, attr_ids, attr_values, offsets, y_a, y_b, n_attr,
                              n_labels):
    """Coalesced Phi(y_a) - Phi(y_b) of every sentence s (tokens offsets[s]..offsets[s+1]-1;
    ``y_a``, ``y_b`` the label ids of tokens offsets[0].. back to back), as CSR rows
    ``(indptr, idx, val)``: a batch in one compiled call, not one call per sentence."""
    n = offsets.shape[0] - 1
    base = offsets[0]
    cap = 0  # phi_difference's own bound, summed: coalescing only shrinks a row
    for s in range(n):
        T = offsets[s + 1] - offsets[s]
        for t in range(offsets[s], offsets[s + 1]):
            if y_a[t - base] != y_b[t - base]:
                cap += 2 * (attr_indptr[t + 1] - attr_indptr[t])
        cap += 2 * (T - 1 if T > 0 else 0) + 4
    indptr = np.zeros(n + 1, np.int64)
    idx = np.empty(cap, np.int64)
    val = np.empty(cap, np.float64)
    m = 0
    for s in range(n):
        t0, t1 = offsets[s], offsets[s + 1]
        i, v = coalesced_phi_difference(attr_indptr, attr_ids, attr_values, t0, t1,
                                        y_a[t0 - base:t1 - base], y_b[t0 - base:t1 - base],
                                        n_attr, n_labels)
        k = i.shape[0]
        idx[m:m + k] = i
        val[m:m + k] = v
        m += k
        indptr[s + 1] = m
    return indptr, idx[:m], val[:m]


@njit(cache=True, nogil=True)
def first_outside(y, lo, hi):
    """Position of the first entry of ``y`` outside ``lo..hi-1``, or -1."""
    for k in range(y.shape[0]):
        if y[k] < lo or y[k] >= hi:
            return k
    return -1


@njit(cache=True, nogil=True)
def _hamming_augmented_kernel(unary, y_true):
    out = unary + 1.0
    for t in range(unary.shape[0]):
        if y_true[t] >= 0:
            out[t, y_true[t]] -= 1.0
    return out


def hamming_augmented(unary, y_true):
    """Hamming-loss-augmented unary scores: ``unary`` (T, L) plus 1 on every label but the
    gold one of each token (``y_true``, label ids in -1..L-1, checked first)."""
    y_true = check_label_ids(y_true, unary.shape[1], what="gold structure")
    if y_true.shape != (unary.shape[0],):
        raise ValueError(
            f"gold structure has {y_true.shape[0]} tokens but the sentence has {unary.shape[0]}"
        )
    return _hamming_augmented_kernel(unary, y_true)

