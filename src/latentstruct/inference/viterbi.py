"""Exact decoding of first-order chains: Viterbi, batched Viterbi and k-best Viterbi.

A chain of length ``T`` over ``L`` labels is scored by

    score(y) = start[y_0] + sum_t unary[t, y_t] + sum_{t>=1} transition[y_{t-1}, y_t] + end[y_{T-1}]

and every function here returns the labelling that *maximises* it.  Scores may contain
``-inf`` to forbid a label or a transition (for example ``I-NP`` after ``O`` in IOB1); ``+inf``
and ``NaN`` are rejected.  When no labelling has a finite score the result has status
``"infeasible"`` and score ``-inf``.  Inputs are checked by
:func:`latentstruct.inference.checks.check_chain`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import as_generator, as_int_array, check_chain, decode_status
from latentstruct.inference.result import EXACT, DecodeResult

__all__ = ["viterbi", "viterbi_batch", "kbest_viterbi", "BatchViterbiResult"]


# ----------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _viterbi_batch_kernel(unary, offsets, transition, start, end, labels, scores):  # pragma: no cover - numba
    N, L = unary.shape
    n_seq = offsets.shape[0] - 1
    trans_t = np.ascontiguousarray(transition.T)  # trans_t[next, prev]: contiguous inner loop
    bp = np.empty((N, L), dtype=np.int32)
    prev = np.empty(L, dtype=np.float64)
    cur = np.empty(L, dtype=np.float64)
    for s in range(n_seq):
        a = offsets[s]
        b = offsets[s + 1]
        if a == b:
            scores[s] = 0.0
            continue
        for l in range(L):
            prev[l] = start[l] + unary[a, l]
        for t in range(a + 1, b):
            for l in range(L):
                best = -np.inf
                arg = 0
                row = trans_t[l]
                for p in range(L):
                    v = prev[p] + row[p]
                    if v > best:
                        best = v
                        arg = p
                cur[l] = best + unary[t, l]
                bp[t, l] = arg
            for l in range(L):
                prev[l] = cur[l]
        best = -np.inf
        arg = 0
        for l in range(L):
            v = prev[l] + end[l]
            if v > best:
                best = v
                arg = l
        scores[s] = best
        labels[b - 1] = arg
        for t in range(b - 1, a, -1):
            arg = bp[t, arg]
            labels[t - 1] = arg


#: the batch kernel, for other compiled code to call (a sentence: ``offsets = [0, T]``)
viterbi_batch_kernel = _viterbi_batch_kernel


@njit(cache=True, nogil=True)
def _pick(weights, mask, u):  # pragma: no cover - numba
    """Index i with mask[i], chosen with probability proportional to weights[i]."""
    total = 0.0
    last = -1
    for i in range(weights.shape[0]):
        if mask[i]:
            total += weights[i]
            last = i
    r = u * total
    acc = 0.0
    for i in range(weights.shape[0]):
        if mask[i]:
            acc += weights[i]
            if acc > r:
                return i
    return last


@njit(cache=True, nogil=True)
def _viterbi_random_kernel(unary, transition, start, end, uniforms, labels):  # pragma: no cover - numba
    """Viterbi that samples uniformly among all optimal labellings.

    Alongside the max scores it counts, per (t, label), how many optimal prefixes end there
    (rescaled per position to avoid overflow; only ratios within a position are used), then
    samples the back-pointers in proportion to those counts.
    """
    T, L = unary.shape
    delta = np.empty((T, L), dtype=np.float64)
    count = np.empty((T, L), dtype=np.float64)
    for l in range(L):
        delta[0, l] = start[l] + unary[0, l]
        count[0, l] = 1.0
    for t in range(1, T):
        for l in range(L):
            best = -np.inf
            for p in range(L):
                v = delta[t - 1, p] + transition[p, l]
                if v > best:
                    best = v
            c = 0.0
            for p in range(L):
                if delta[t - 1, p] + transition[p, l] == best:
                    c += count[t - 1, p]
            delta[t, l] = best + unary[t, l]
            count[t, l] = c
        m = 0.0
        for l in range(L):
            if count[t, l] > m:
                m = count[t, l]
        if m > 0.0:
            for l in range(L):
                count[t, l] /= m
    mask = np.zeros(L, dtype=np.bool_)
    best = -np.inf
    for l in range(L):
        v = delta[T - 1, l] + end[l]
        if v > best:
            best = v
    for l in range(L):
        mask[l] = delta[T - 1, l] + end[l] == best
    y = _pick(count[T - 1], mask, uniforms[T - 1])
    labels[T - 1] = y
    for t in range(T - 1, 0, -1):
        b = -np.inf
        for p in range(L):
            v = delta[t - 1, p] + transition[p, y]
            if v > b:
                b = v
        for p in range(L):
            mask[p] = delta[t - 1, p] + transition[p, y] == b
        y = _pick(count[t - 1], mask, uniforms[t - 1])
        labels[t - 1] = y
    return best


@njit(cache=True, nogil=True)
def _merge_top(sc_prev, nv_prev, add, k, ptr, out_s, out_p, out_r):  # pragma: no cover - numba
    """The k best of ``sc_prev[p, r] + add[p]`` over every previous label p and rank r < nv[p]
    (each row sorted descending), best first, by a k-way merge of the L sorted rows: O(k L).
    Ties go to the lower p, then the lower rank (a stable sort's order).  Returns how many
    finite candidates were written."""
    L = add.shape[0]
    for p in range(L):
        ptr[p] = 0
    n = 0
    while n < k:
        best = -np.inf
        bp = -1
        for p in range(L):
            r = ptr[p]
            if r < nv_prev[p]:
                v = sc_prev[p, r] + add[p]
                if v > best:
                    best = v
                    bp = p
        if bp < 0:
            break
        out_s[n] = best
        out_p[n] = bp
        out_r[n] = ptr[bp]
        ptr[bp] += 1
        n += 1
    return n


@njit(cache=True, nogil=True)
def _kbest_kernel(unary, transition, start, end, k, out_labels, out_scores):  # pragma: no cover - numba
    """k-best Viterbi: keeps the k best distinct prefixes per (t, label), sorted descending.

    Returns the number of complete labellings written to out_labels/out_scores.
    Only finite-score labellings are kept.  Ties are broken by (previous label, rank).
    """
    T, L = unary.shape
    sc = np.full((T, L, k), -np.inf)
    bp_state = np.zeros((T, L, k), dtype=np.int64)
    bp_rank = np.zeros((T, L, k), dtype=np.int64)
    nv = np.zeros((T, L), dtype=np.int64)
    for l in range(L):
        v = start[l] + unary[0, l]
        if v > -np.inf:
            sc[0, l, 0] = v
            nv[0, l] = 1
    ptr = np.zeros(L, dtype=np.int64)
    add = np.empty(L)
    buf_s = np.empty(k)
    buf_p = np.empty(k, dtype=np.int64)
    buf_r = np.empty(k, dtype=np.int64)
    for t in range(1, T):
        for l in range(L):
            u = unary[t, l]
            if u == -np.inf:
                continue  # nothing ends in a forbidden label
            for p in range(L):
                add[p] = transition[p, l]
            n = _merge_top(sc[t - 1], nv[t - 1], add, k, ptr, buf_s, buf_p, buf_r)
            kk = 0
            for q in range(n):
                v = buf_s[q] + u
                if v > -np.inf:
                    sc[t, l, kk] = v
                    bp_state[t, l, kk] = buf_p[q]
                    bp_rank[t, l, kk] = buf_r[q]
                    kk += 1
            nv[t, l] = kk
    n = _merge_top(sc[T - 1], nv[T - 1], end, k, ptr, buf_s, buf_p, buf_r)
    for q in range(n):
        out_scores[q] = buf_s[q]
        y = buf_p[q]
        r = buf_r[q]
        for t in range(T - 1, -1, -1):
            out_labels[q, t] = y
            if t > 0:
                y2 = bp_state[t, y, r]
                r = bp_rank[t, y, r]
                y = y2
    return n


# ----------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------
def viterbi(unary, transition, start=None, end=None, *, random_state=None) -> DecodeResult:
    """Best labelling of a first-order chain (Viterbi).

    Maximises ``start[y_0] + sum_t unary[t, y_t] + sum_{t>=1} transition[y_{t-1}, y_t]
    + end[y_{T-1}]`` over all ``y`` in ``{0..L-1}^T``.

    Parameters
    ----------
    unary : array (T, L)
        Label scores per position.  ``T = 0`` is allowed (empty structure, score 0).
    transition : array (L, L)
        ``transition[prev, next]``.
    start, end : array (L,) or None
        Scores of the first / last label; ``None`` means zeros.
    random_state : None, int or numpy.random.Generator
        ``None``: ties are broken deterministically (lowest label at each back-pointer and
        at the last position).  Otherwise one of the equally scoring maximisers is drawn
        uniformly at random (J-LIS section 5, footnote 7): the DP counts the optimal prefixes
        ending in every (t, label) and samples the back-pointers in proportion to them.
        Candidates tie only when their float scores are exactly equal.

    Returns
    -------
    DecodeResult
        ``structure``: int64 labels of shape (T,); ``score``: its score; status ``"exact"``,
        or ``"infeasible"`` (score ``-inf``) when every labelling has score ``-inf``.

    Complexity: O(T L^2) time, O(T L) memory.
    """
    unary, transition, start, end = check_chain(unary, transition, start, end)
    T, L = unary.shape
    if T == 0:
        return DecodeResult(np.zeros(0, dtype=np.int64), 0.0, EXACT)
    labels = np.empty(T, dtype=np.int64)
    if random_state is None:
        scores = np.empty(1, dtype=np.float64)
        offsets = np.array([0, T], dtype=np.int64)
        _viterbi_batch_kernel(unary, offsets, transition, start, end, labels, scores)
        score = float(scores[0])
    else:
        uniforms = as_generator(random_state).random(T)
        score = float(_viterbi_random_kernel(unary, transition, start, end, uniforms, labels))
    return DecodeResult(labels, score, decode_status(score))


class BatchViterbiResult(NamedTuple):
    """Result of :func:`viterbi_batch`: ``labels`` int64 (N,), ``scores`` float64 (n_seq,)."""

    labels: np.ndarray
    scores: np.ndarray


def viterbi_batch(unary, offsets, transition, start=None, end=None) -> BatchViterbiResult:
    """Viterbi on many chains at once, sharing ``transition``, ``start`` and ``end``.

    Sequence ``s`` occupies rows ``offsets[s]:offsets[s+1]`` of ``unary``; each sequence is
    decoded exactly as :func:`viterbi` does without ``random_state`` (lowest label on ties).

    Parameters
    ----------
    unary : array (N, L)
        Concatenated unary scores of all sequences.
    offsets : int array (n_seq + 1,)
        Non-decreasing, ``offsets[0] == 0`` and ``offsets[-1] == N``.  Empty sequences are
        allowed (score 0).
    transition : array (L, L); start, end : array (L,) or None (zeros).

    Returns
    -------
    BatchViterbiResult(labels, scores)
        ``labels`` int64 (N,) aligned with the rows of ``unary``; ``scores`` float64 (n_seq,),
        ``-inf`` for a sequence without any finite-score labelling.

    Complexity: O(N L^2) time in one compiled call; memory O(N L) for back-pointers
    (int32), allocated once.
    """
    unary, transition, start, end = check_chain(unary, transition, start, end)
    N = unary.shape[0]
    offsets = as_int_array(offsets, "offsets", "(n_seq + 1,)")
    if offsets.shape[0] < 1:
        raise InputError("offsets must have at least one entry (offsets[0] == 0); got shape (0,)")
    if offsets[0] != 0 or offsets[-1] != N:
        raise InputError(
            f"offsets must start at 0 and end at N = unary.shape[0] = {N}; "
            f"got offsets[0] = {offsets[0]}, offsets[-1] = {offsets[-1]}"
        )
    if offsets.shape[0] > 1 and np.any(np.diff(offsets) < 0):
        bad = int(np.flatnonzero(np.diff(offsets) < 0)[0])
        raise InputError(
            f"offsets must be non-decreasing; got offsets[{bad}] = {offsets[bad]} > "
            f"offsets[{bad + 1}] = {offsets[bad + 1]}"
        )
    labels = np.zeros(N, dtype=np.int64)
    scores = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    _viterbi_batch_kernel(unary, offsets, transition, start, end, labels, scores)
    return BatchViterbiResult(labels, scores)


def kbest_viterbi(unary, transition, start=None, end=None, k=1) -> list[DecodeResult]:
    """The ``k`` best distinct labellings of a chain, by descending score.

    Maximises the same score as :func:`viterbi`.  Exact: a list of the ``k`` best prefixes
    is kept for every (position, label).  Fewer than ``k`` results are returned when fewer
    labellings have a finite score (labellings of score ``-inf`` are never returned, so the
    list is empty when the chain is infeasible).  Equal scores are ordered deterministically.

    Parameters
    ----------
    unary (T, L), transition (L, L), start (L,) or None, end (L,) or None; k : int >= 1.

    Returns
    -------
    list of DecodeResult, each with int64 labels (T,) and status ``"exact"``.

    Complexity: O(T L^2 k) time (a k-way merge of the previous labels' sorted lists per
    position and label), O(T L k) memory.
    """
    unary, transition, start, end = check_chain(unary, transition, start, end)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1; got {k!r}")
    k = int(k)
    T, L = unary.shape
    if T == 0:
        return [DecodeResult(np.zeros(0, dtype=np.int64), 0.0, EXACT)]
    if T * np.log(L) < np.log(k):  # there are only L**T labellings
        k = L**T
    out_labels = np.zeros((k, T), dtype=np.int64)
    out_scores = np.zeros(k, dtype=np.float64)
    n = _kbest_kernel(unary, transition, start, end, k, out_labels, out_scores)
    return [DecodeResult(out_labels[q].copy(), float(out_scores[q]), EXACT) for q in range(n)]
