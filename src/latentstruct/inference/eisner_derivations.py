"""Reading trees out of Eisner's chart (compiled with numba): back-tracking the derivation of
any rank, the 1-best kernel and Huang & Chiang's lazy k-best kernel.

The chart itself (item kinds, recurrences, split points) is
:mod:`latentstruct.inference.eisner_chart`; :mod:`latentstruct.inference.eisner` validates the
inputs and calls :func:`eisner_kernel` and :func:`eisner_kbest_kernel`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from latentstruct.inference.eisner_chart import CL, CR, fill_chart, item_children, split_arc_scores, split_range


@njit(cache=True)
def _backtrack(argf, info, ent, N, rank, heads, stack):  # pragma: no cover - numba
    """Write into ``heads`` (N,) the tree of the ``rank``-th derivation of CR[0, N - 1].

    Chart arrays are flat, item (kind, s, t) at index ``(kind * N + s) * N + t``.  Rank 0 of
    an item is its chart back-pointer ``argf``; rank q >= 1 is row ``info[item, _EBLK] + q``
    of ``ent`` = (split, rank of left part, rank of right part); ``info`` and ``ent`` are
    only read for ranks >= 1.
    """
    stack[0, 0] = CR
    stack[0, 1] = 0
    stack[0, 2] = N - 1
    stack[0, 3] = rank
    sp = 1
    while sp > 0:
        sp -= 1
        kind = stack[sp, 0]
        s = stack[sp, 1]
        t = stack[sp, 2]
        q = stack[sp, 3]
        if s == t:
            continue
        x = (kind * N + s) * N + t
        if q == 0:
            r = argf[x]
            i = 0
            j = 0
        else:
            row = info[x, _EBLK] + q
            r = ent[row, 0]
            i = ent[row, 1]
            j = ent[row, 2]
        if kind == CR:
            heads[r] = s
        elif kind == CL:
            heads[r] = t
        lk, ls, lt, rk, rs, rt = item_children(kind, s, t, r)
        stack[sp, 0] = lk
        stack[sp, 1] = ls
        stack[sp, 2] = lt
        stack[sp, 3] = i
        stack[sp + 1, 0] = rk
        stack[sp + 1, 1] = rs
        stack[sp + 1, 2] = rt
        stack[sp + 1, 3] = j
        sp += 2


@njit(cache=True)
def eisner_kernel(scores, single_root, heads_out):  # pragma: no cover - numba
    """1-best projective tree; writes heads (n,) and returns its score.  O(n^3)."""
    N = scores.shape[0]
    best = np.empty((3, N, N), dtype=np.float64)
    arg = np.empty((3, N, N), dtype=np.int64)
    fill_chart(scores, single_root, best, arg)
    heads = np.empty(N, dtype=np.int64)
    heads[0] = -1
    stack = np.empty((4 * N + 8, 4), dtype=np.int64)
    no_info = np.empty((0, 8), dtype=np.int64)
    _backtrack(arg.reshape(3 * N * N), no_info, no_info, N, 0, heads, stack)
    heads_out[:] = heads[1:]
    return best[CR, 0, N - 1]


@njit(cache=True)
def _grow_f(a, need):  # pragma: no cover - numba
    """A copy of ``a`` with room for ``need`` elements (at least double the size)."""
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grow_rows(a, need):  # pragma: no cover - numba
    """A copy of the 2-d array ``a`` with room for ``need`` rows (at least double)."""
    b = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


# Candidate heaps hold (score, key) with key = (r * K1 + i) * K1 + j packing the split r and
# the ranks i, j of the two parts (K1 > any rank).  Max-heaps on score; equal scores pop in
# increasing key, i.e. smallest split, then left rank, then right rank.
@njit(cache=True)
def _above(hv, hk, a, b):  # pragma: no cover - numba
    return hv[a] > hv[b] or (hv[a] == hv[b] and hk[a] < hk[b])


@njit(cache=True)
def _heap_push(hv, hk, base, size, v, key):  # pragma: no cover - numba
    """Push (v, key) onto the heap in slots base..base+size (room checked by the caller)."""
    pos = base + size
    while pos > base:
        parent = base + (pos - base - 1) // 2
        if hv[parent] > v or (hv[parent] == v and hk[parent] < key):
            break
        hv[pos] = hv[parent]
        hk[pos] = hk[parent]
        pos = parent
    hv[pos] = v
    hk[pos] = key


@njit(cache=True)
def _heap_pop(hv, hk, base, size):  # pragma: no cover - numba
    """Remove the top of a heap of ``size`` >= 1 elements; return it as (v, key)."""
    v = hv[base]
    key = hk[base]
    last = base + size - 1
    if last > base:
        lv = hv[last]
        lk = hk[last]
        pos = base
        while True:
            child = base + 2 * (pos - base) + 1
            if child >= last:
                break
            if child + 1 < last and _above(hv, hk, child + 1, child):
                child += 1
            if hv[child] > lv or (hv[child] == lv and hk[child] < lk):
                hv[pos] = hv[child]
                hk[pos] = hk[child]
                pos = child
            else:
                break
        hv[pos] = lv
        hk[pos] = lk
    return v, key


# per-item bookkeeping of the k-best search: the columns of ``info`` (one row per chart item)
_CNT = 0  # derivations known so far (rank 0 is the chart's)
_DONE = 1  # 1: the item has no further derivation
_EBLK = 2  # start of the item's block in the entry pool (-1: only rank 0, read from the chart)
_ECAP = 3  # its capacity
_HBLK = 4  # start of the item's candidate heap in the heap pool
_HCAP = 5  # its capacity
_HSZ = 6  # its size


@njit(cache=True)
def _lazy_kbest(scores, single_root, bestf, argf, info, ev, ek, hv, hk, K1, stack, state):  # pragma: no cover
    """Run the request loop of :func:`eisner_kbest_kernel` until its stack is empty.

    ``state`` = [stack size, entry pool top, heap pool top, pool size needed].  Returns 0
    when done, or 1 (entry pool ``ev``/``ek``) / 2 (heap pool ``hv``/``hk``) when a pool needs
    ``state[3]`` slots: the caller grows it and calls again, and the loop resumes with the
    step it had not started.  (Growing the pools out here keeps arrays from being re-bound
    inside the hot loop, which would cost reference counting on every iteration.)
    """
    N = scores.shape[0]
    K2 = K1 * K1
    sp = state[0]
    etop = state[1]
    htop = state[2]
    code = 0
    while sp > 0:
        kind = stack[sp - 1, 0]
        s = stack[sp - 1, 1]
        t = stack[sp - 1, 2]
        x = (kind * N + s) * N + t
        if info[x, _CNT] >= stack[sp - 1, 3] or info[x, _DONE]:
            sp -= 1
            continue
        if info[x, _EBLK] < 0:
            # first request beyond the 1-best: open the entry list (rank 0 copied from the
            # chart) and the candidate heap (the best derivation of every other split)
            r_lo, r_hi = split_range(kind, s, t, single_root)
            hc = (r_hi - r_lo + 1) + 4
            if etop + 4 > ev.shape[0]:
                state[3] = etop + 4
                code = 1
                break
            if htop + hc > hv.shape[0]:
                state[3] = htop + hc
                code = 2
                break
            a = argf[x]
            ev[etop] = bestf[x]
            ek[etop, 0] = a
            ek[etop, 1] = 0
            ek[etop, 2] = 0
            info[x, _EBLK] = etop
            info[x, _ECAP] = 4
            etop += 4
            size = 0
            for r in range(r_lo, r_hi + 1):
                if r == a:
                    continue
                lk, ls, lt, rk, rs, rt = item_children(kind, s, t, r)
                lx = (lk * N + ls) * N + lt
                rx = (rk * N + rs) * N + rt
                la, ra = split_arc_scores(scores, kind, s, t, r)
                if info[lx, _CNT] == 0 or info[rx, _CNT] == 0 or la == -np.inf or ra == -np.inf:
                    continue
                _heap_push(hv, hk, htop, size, (bestf[lx] + la) + (bestf[rx] + ra), r * K2)
                size += 1
            info[x, _HBLK] = htop
            info[x, _HCAP] = hc
            info[x, _HSZ] = size
            htop += hc

        # the last derivation found, (r, i, j): its successors (r, i, j+1) and, when j == 0,
        # (r, i+1, 0) enter the heap, once the sub-items have those ranks (or have run out)
        row = info[x, _EBLK] + info[x, _CNT] - 1
        r = ek[row, 0]
        i = ek[row, 1]
        j = ek[row, 2]
        lk, ls, lt, rk, rs, rt = item_children(kind, s, t, r)
        lx = (lk * N + ls) * N + lt
        rx = (rk * N + rs) * N + rt
        waiting = False
        if j == 0 and info[lx, _CNT] < i + 2 and not info[lx, _DONE]:
            stack[sp, 0] = lk
            stack[sp, 1] = ls
            stack[sp, 2] = lt
            stack[sp, 3] = i + 2
            sp += 1
            waiting = True
        if info[rx, _CNT] < j + 2 and not info[rx, _DONE]:
            stack[sp, 0] = rk
            stack[sp, 1] = rs
            stack[sp, 2] = rt
            stack[sp, 3] = j + 2
            sp += 1
            waiting = True
        if waiting:
            continue
        # room for two pushes and one more entry (blocks are relocated, doubled, when full)
        grow_heap = info[x, _HSZ] + 2 > info[x, _HCAP]
        grow_ent = info[x, _CNT] == info[x, _ECAP]
        if grow_heap and htop + 2 * info[x, _HCAP] > hv.shape[0]:
            state[3] = htop + 2 * info[x, _HCAP]
            code = 2
            break
        if grow_ent and etop + 2 * info[x, _ECAP] > ev.shape[0]:
            state[3] = etop + 2 * info[x, _ECAP]
            code = 1
            break
        if grow_heap:
            old = info[x, _HBLK]
            for c in range(info[x, _HSZ]):
                hv[htop + c] = hv[old + c]
                hk[htop + c] = hk[old + c]
            info[x, _HBLK] = htop
            info[x, _HCAP] *= 2
            htop += info[x, _HCAP]
        if grow_ent:
            old = info[x, _EBLK]
            for c in range(info[x, _CNT]):
                ev[etop + c] = ev[old + c]
                for f in range(3):
                    ek[etop + c, f] = ek[old + c, f]
            info[x, _EBLK] = etop
            info[x, _ECAP] *= 2
            etop += info[x, _ECAP]
        la, ra = split_arc_scores(scores, kind, s, t, r)
        base = info[x, _HBLK]
        if j == 0 and info[lx, _CNT] >= i + 2:
            v = (ev[info[lx, _EBLK] + i + 1] + la) + (bestf[rx] + ra)
            _heap_push(hv, hk, base, info[x, _HSZ], v, (r * K1 + i + 1) * K1)
            info[x, _HSZ] += 1
        if info[rx, _CNT] >= j + 2:
            vl = bestf[lx] if i == 0 else ev[info[lx, _EBLK] + i]
            v = (vl + la) + (ev[info[rx, _EBLK] + j + 1] + ra)
            _heap_push(hv, hk, base, info[x, _HSZ], v, (r * K1 + i) * K1 + j + 1)
            info[x, _HSZ] += 1
        if info[x, _HSZ] == 0:
            info[x, _DONE] = 1
            continue
        v, key = _heap_pop(hv, hk, base, info[x, _HSZ])
        info[x, _HSZ] -= 1
        row = info[x, _EBLK] + info[x, _CNT]
        ev[row] = v
        r = key // K2
        key -= r * K2
        ek[row, 0] = r
        ek[row, 1] = key // K1
        ek[row, 2] = key - (key // K1) * K1
        info[x, _CNT] += 1
    state[0] = sp
    state[1] = etop
    state[2] = htop
    return code


@njit(cache=True)
def eisner_kbest_kernel(scores, single_root, k, out_heads, out_scores):  # pragma: no cover - numba
    """The k best projective trees (Huang & Chiang 2005, Algorithm 3, "lazy k-best").

    First the 1-best chart gives every item its best derivation.  Item derivations of rank
    >= 1 are then produced only on demand, from the root down: an item keeps a heap of
    candidate derivations (split r, rank i of the left part, rank j of the right part), seeded
    with the best derivation (r, 0, 0) of every split; after (r, i, j) is popped its
    successors (r, i, j + 1) and, when j == 0, (r, i + 1, 0) are pushed (each candidate has
    exactly one predecessor, so none is pushed twice) - which first requires the sub-items to
    have those ranks, computed recursively with an explicit stack of requests.  Only finite
    derivations are kept.  Returns the number of trees written (<= k).

    Entry lists and heaps of the items live in two growable pools (a block per item,
    relocated with doubling when full).  Needs (N * (k + 1)**2 < 2**63) for the heap keys.
    """
    N = scores.shape[0]
    NN = N * N
    best = np.empty((3, N, N), dtype=np.float64)
    arg = np.empty((3, N, N), dtype=np.int64)
    fill_chart(scores, single_root, best, arg)
    bestf = best.reshape(3 * NN)
    argf = arg.reshape(3 * NN)

    info = np.empty((3 * NN, 8), dtype=np.int64)
    for x in range(3 * NN):
        finite = bestf[x] > -np.inf
        info[x, _CNT] = 1 if finite else 0
        info[x, _DONE] = 0 if finite else 1
        info[x, _EBLK] = -1
        info[x, _ECAP] = 0
        info[x, _HBLK] = -1
        info[x, _HCAP] = 0
        info[x, _HSZ] = 0
    for s in range(N):  # CR[s, s] and CL[s, s] have a single, empty derivation
        info[(CR * N + s) * N + s, _DONE] = 1
        info[(CL * N + s) * N + s, _DONE] = 1
    ev = np.empty(64 * N, dtype=np.float64)  # entry pool: score, (split, left rank, right rank)
    ek = np.empty((64 * N, 3), dtype=np.int64)
    hv = np.empty(64 * N, dtype=np.float64)  # heap pool: score, packed key
    hk = np.empty(64 * N, dtype=np.int64)

    # requests (kind, s, t, m): "item (kind, s, t) needs m derivations"; a request stays until
    # met, those of its sub-items go on top.  Depth <= 2 * (longest chain = 2N + 2).
    stack = np.empty((8 * N + 16, 4), dtype=np.int64)
    stack[0, 0] = CR
    stack[0, 1] = 0
    stack[0, 2] = N - 1
    stack[0, 3] = k
    state = np.zeros(4, dtype=np.int64)
    state[0] = 1
    while True:
        code = _lazy_kbest(scores, single_root, bestf, argf, info, ev, ek, hv, hk, k + 1, stack, state)
        if code == 0:
            break
        if code == 1:
            ev = _grow_f(ev, state[3])
            ek = _grow_rows(ek, state[3])
        else:
            hv = _grow_f(hv, state[3])
            hk = _grow_f(hk, state[3])

    root = CR * NN + N - 1
    K = info[root, _CNT]
    heads = np.empty(N, dtype=np.int64)
    heads[0] = -1
    bstack = np.empty((4 * N + 8, 4), dtype=np.int64)
    for q in range(K):
        _backtrack(argf, info, ek, N, q, heads, bstack)
        out_heads[q, :] = heads[1:]
        out_scores[q] = bestf[root] if q == 0 else ev[info[root, _EBLK] + q]
    return K
