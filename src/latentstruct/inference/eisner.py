"""First-order projective dependency parsing: Eisner's algorithm, exact k-best, loss augmentation.

A dependency tree over the words ``1..n`` of a sentence is given by ``heads`` (int64, shape
(n,)): ``heads[m - 1]`` is the head of word ``m``, and ``0`` is the artificial ROOT.  It is
scored arc by arc,

    score(heads) = sum_{m=1..n} scores[heads[m - 1], m],

from a matrix ``scores`` of shape (n + 1, n + 1) where ``scores[h, m]`` scores the arc
``h -> m``.  Column 0 (arcs into ROOT) and the diagonal (self-loops) are never read, so they
may hold anything.  Other entries may be ``-inf`` to forbid an arc; ``+inf`` and NaN are
rejected.

Every function here maximises that score over *projective* trees: trees rooted at position 0
whose arcs (those from ROOT included, drawn from position 0) do not cross.  With
``single_root=True`` exactly one word hangs from ROOT (the Universal Dependencies
convention); with ``single_root=False`` any number >= 1 of words may.

The chart (Eisner 1996; Eisner & Satta 1999) has, for every span ``s < t`` of positions
``0..n``, three kinds of items:

* ``CR[s, t]``, complete right-facing: head ``s`` together with all its descendants in
  ``s+1..t``, where ``t`` is the end of the rightmost subtree;
* ``CL[s, t]``, complete left-facing: head ``t`` with all its descendants in ``s..t-1``;
* ``SP[s, t]``, the split item ``CR[s, r] + CL[r+1, t]`` for the best ``r``: two adjacent
  complete spans, still unconnected.  Adding the arc ``s -> t`` gives the *incomplete*
  right-facing item ``IR[s, t] = SP[s, t] + scores[s, t]``; adding ``t -> s`` gives the
  incomplete left-facing item ``IL[s, t] = SP[s, t] + scores[t, s]``.  Keeping ``SP`` once for
  both directions halves the work on incomplete items.

Recurrences (``CR[s, s] = CL[s, s] = 0``)::

    SP[s, t] = max_{s <= r < t}  CR[s, r] + CL[r+1, t]
    CR[s, t] = max_{s < r <= t}  IR[s, r] + CR[r, t]        (r: the rightmost dependent of s)
    CL[s, t] = max_{s <= r < t}  CL[s, r] + IL[r, t]        (r: the leftmost dependent of t)

and the best tree scores ``CR[0, n]``.  ROOT never gets a head: ``CL[0, t]`` and ``IL[0, t]``
do not exist.  For ``single_root=True`` the split item ``SP[0, t]`` is restricted to
``r = 0`` (``CR[0, 0] + CL[1, t]``), so ``IR[0, t]`` is an arc from ROOT whose subtree fills
``1..t`` and ``CR[0, n] = IR[0, r] + CR[r, n]`` attaches exactly one word ``r`` to ROOT.

Every projective tree has exactly one derivation in this chart (the split points are forced
by the tree), so the k best derivations are the k best distinct trees.

**Ties** are broken deterministically, item by item: among the equally scoring splits of an
item the smallest split point ``r`` is kept (candidates tie only when their float scores are
exactly equal); with all scores equal this gives the right-branching chain
``0 -> 1 -> 2 -> ... -> n``.  :func:`eisner_kbest` orders the derivations of every item by
(score descending, split point, rank of the left part, rank of the right part), which makes
its first tree the tree :func:`eisner` returns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import as_int_array, as_scores, decode_status, shape_str
from latentstruct.inference.result import DecodeResult

__all__ = ["eisner", "eisner_kbest", "eisner_batch", "head_hamming_augmented", "KBestTrees"]

# chart item kinds (first index of the chart arrays)
_CR = 0  # complete, right-facing: head s, span s..t
_CL = 1  # complete, left-facing: head t, span s..t
_SP = 2  # split item CR[s, r] + CL[r+1, t]; IR / IL add the arc s->t / t->s


@dataclass(frozen=True)
class KBestTrees:
    """The k best projective trees of a sentence, best first.

    ``k' = min(k, number of projective trees of finite score)``; ``k' = 0`` when no tree has a
    finite score.

    Attributes
    ----------
    heads : int64 (k', n)
        ``heads[q, m - 1]`` is the head of word ``m`` in the q-th best tree (0 = ROOT).  The
        k' trees are distinct.
    scores : float64 (k',)
        Non-increasing; ``scores[q]`` is the score of ``heads[q]``.
    """

    heads: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.scores.shape[0])


# ----------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------
def _check_k(k) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1; got {k!r}")
    return int(k)


def _check_single_root(single_root) -> bool:
    if not isinstance(single_root, (bool, np.bool_)):
        raise InputError(f"single_root must be True or False; got {single_root!r}")
    return bool(single_root)


def _n_projective_trees(n: int, single_root: bool) -> int:
    """Number of projective trees over n >= 1 words (ROOT at position 0)."""
    if single_root:
        return math.comb(3 * n - 2, n - 1) // n  # 1, 2, 7, 30, 143, 728, ...
    return math.comb(3 * n, n) // (2 * n + 1)  # 1, 3, 12, 55, 273, 1428, ...


# ----------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------
@njit(cache=True)
def _fill_chart(scores, single_root, best, arg):  # pragma: no cover - numba
    """Eisner's 1-best chart: ``best[kind, s, t]`` and its split point ``arg[kind, s, t]``.

    Strict ``>`` over increasing split points keeps the smallest split among ties; an item
    with no finite derivation keeps score -inf and its first split (so back-tracking an
    infeasible chart still yields a well-formed tree).
    """
    N = scores.shape[0]
    for s in range(N):
        for t in range(N):
            for kind in range(3):
                best[kind, s, t] = -np.inf
                arg[kind, s, t] = s
        best[_CR, s, s] = 0.0
        best[_CL, s, s] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            # SP[s, t] = max_{s <= r < t} CR[s, r] + CL[r+1, t]   (single root: r = 0 when s = 0)
            r_hi = s if (single_root and s == 0) else t - 1
            b = -np.inf
            a = s
            for r in range(s, r_hi + 1):
                v = best[_CR, s, r] + best[_CL, r + 1, t]
                if v > b:
                    b = v
                    a = r
            best[_SP, s, t] = b
            arg[_SP, s, t] = a
            # CL[s, t] = max_{s <= r < t} CL[s, r] + IL[r, t],  IL[r, t] = SP[r, t] + arc t -> r
            # (s = 0 would make ROOT a dependent: the item does not exist)
            if s > 0:
                b = -np.inf
                a = s
                for r in range(s, t):
                    v = best[_CL, s, r] + (best[_SP, r, t] + scores[t, r])
                    if v > b:
                        b = v
                        a = r
                best[_CL, s, t] = b
                arg[_CL, s, t] = a
            # CR[s, t] = max_{s < r <= t} IR[s, r] + CR[r, t],  IR[s, r] = SP[s, r] + arc s -> r
            b = -np.inf
            a = s + 1
            for r in range(s + 1, t + 1):
                v = (best[_SP, s, r] + scores[s, r]) + best[_CR, r, t]
                if v > b:
                    b = v
                    a = r
            best[_CR, s, t] = b
            arg[_CR, s, t] = a


@njit(cache=True)
def _children(kind, s, t, r):  # pragma: no cover - numba
    """The two sub-items (kind, s, t) of item (kind, s, t) split at r: left then right."""
    if kind == _CR:  # IR[s, r] (= SP[s, r] + arc s->r) and CR[r, t]
        return _SP, s, r, _CR, r, t
    if kind == _CL:  # CL[s, r] and IL[r, t] (= SP[r, t] + arc t->r)
        return _CL, s, r, _SP, r, t
    return _CR, s, r, _CL, r + 1, t  # SP: CR[s, r] and CL[r+1, t]


@njit(cache=True)
def _arc_scores(scores, kind, s, t, r):  # pragma: no cover - numba
    """Arc scores added to the (left, right) sub-item values of item (kind, s, t) split at r."""
    if kind == _CR:
        return scores[s, r], 0.0
    if kind == _CL:
        return 0.0, scores[t, r]
    return 0.0, 0.0


@njit(cache=True)
def _backtrack(argf, info, ent, N, rank, heads, stack):  # pragma: no cover - numba
    """Write into ``heads`` (N,) the tree of the ``rank``-th derivation of CR[0, N - 1].

    Chart arrays are flat, item (kind, s, t) at index ``(kind * N + s) * N + t``.  Rank 0 of
    an item is its chart back-pointer ``argf``; rank q >= 1 is row ``info[item, _EBLK] + q``
    of ``ent`` = (split, rank of left part, rank of right part); ``info`` and ``ent`` are
    only read for ranks >= 1.
    """
    stack[0, 0] = _CR
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
        if kind == _CR:
            heads[r] = s
        elif kind == _CL:
            heads[r] = t
        lk, ls, lt, rk, rs, rt = _children(kind, s, t, r)
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
def _eisner_kernel(scores, single_root, heads_out):  # pragma: no cover - numba
    """1-best projective tree; writes heads (n,) and returns its score.  O(n^3)."""
    N = scores.shape[0]
    best = np.empty((3, N, N), dtype=np.float64)
    arg = np.empty((3, N, N), dtype=np.int64)
    _fill_chart(scores, single_root, best, arg)
    heads = np.empty(N, dtype=np.int64)
    heads[0] = -1
    stack = np.empty((4 * N + 8, 4), dtype=np.int64)
    no_info = np.empty((0, 8), dtype=np.int64)
    _backtrack(arg.reshape(3 * N * N), no_info, no_info, N, 0, heads, stack)
    heads_out[:] = heads[1:]
    return best[_CR, 0, N - 1]


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


@njit(cache=True)
def _split_range(kind, s, t, single_root):  # pragma: no cover - numba
    """First and last split point of item (kind, s, t)."""
    if kind == _CR:
        return s + 1, t
    if kind == _SP and single_root and s == 0:
        return 0, 0
    return s, t - 1


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
    """Run the request loop of :func:`_eisner_kbest_kernel` until its stack is empty.

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
            r_lo, r_hi = _split_range(kind, s, t, single_root)
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
                lk, ls, lt, rk, rs, rt = _children(kind, s, t, r)
                lx = (lk * N + ls) * N + lt
                rx = (rk * N + rs) * N + rt
                la, ra = _arc_scores(scores, kind, s, t, r)
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
        lk, ls, lt, rk, rs, rt = _children(kind, s, t, r)
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
        la, ra = _arc_scores(scores, kind, s, t, r)
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
def _eisner_kbest_kernel(scores, single_root, k, out_heads, out_scores):  # pragma: no cover - numba
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
    _fill_chart(scores, single_root, best, arg)
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
        info[(_CR * N + s) * N + s, _DONE] = 1
        info[(_CL * N + s) * N + s, _DONE] = 1
    ev = np.empty(64 * N, dtype=np.float64)  # entry pool: score, (split, left rank, right rank)
    ek = np.empty((64 * N, 3), dtype=np.int64)
    hv = np.empty(64 * N, dtype=np.float64)  # heap pool: score, packed key
    hk = np.empty(64 * N, dtype=np.int64)

    # requests (kind, s, t, m): "item (kind, s, t) needs m derivations"; a request stays until
    # met, those of its sub-items go on top.  Depth <= 2 * (longest chain = 2N + 2).
    stack = np.empty((8 * N + 16, 4), dtype=np.int64)
    stack[0, 0] = _CR
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

    root = _CR * NN + N - 1
    K = info[root, _CNT]
    heads = np.empty(N, dtype=np.int64)
    heads[0] = -1
    bstack = np.empty((4 * N + 8, 4), dtype=np.int64)
    for q in range(K):
        _backtrack(argf, info, ek, N, q, heads, bstack)
        out_heads[q, :] = heads[1:]
        out_scores[q] = bestf[root] if q == 0 else ev[info[root, _EBLK] + q]
    return K


# ----------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------
def _decode(S: np.ndarray, single_root: bool) -> DecodeResult:
    heads = np.empty(S.shape[0] - 1, dtype=np.int64)
    score = float(_eisner_kernel(S, single_root, heads))
    return DecodeResult(heads, score, decode_status(score))


def _kbest_size(n: int, single_root: bool, k: int) -> int:
    """Rows to allocate for the k best trees of n words: min(k, number of projective trees)."""
    kk = min(k, _n_projective_trees(n, single_root))
    if (n + 1) * (kk + 1) ** 2 >= 2**62:  # the packed heap keys (split, rank, rank) must fit int64
        limit = math.isqrt(2**62 // (n + 1)) - 1
        raise InputError(f"k = {k} is too large for a sentence of {n} words; expected k < {limit}")
    return kk


def _decode_kbest(S: np.ndarray, single_root: bool, kk: int) -> KBestTrees:
    n = S.shape[0] - 1
    out_heads = np.zeros((kk, n), dtype=np.int64)
    out_scores = np.zeros(kk, dtype=np.float64)
    got = int(_eisner_kbest_kernel(S, single_root, kk, out_heads, out_scores))
    if got < kk:
        out_heads = out_heads[:got].copy()
        out_scores = out_scores[:got].copy()
    return KBestTrees(out_heads, out_scores)


def eisner(scores, *, single_root: bool = True) -> DecodeResult:
    """Best projective dependency tree (Eisner's algorithm, first order).

    Maximises ``sum_m scores[heads[m - 1], m]`` over projective trees rooted at position 0.

    Parameters
    ----------
    scores : array (n + 1, n + 1)
        ``scores[h, m]`` scores the arc ``h -> m``; index 0 is ROOT, words are ``1..n``,
        ``n >= 1``.  Column 0 and the diagonal are ignored; ``-inf`` forbids an arc.
    single_root : bool
        ``True``: exactly one word attaches to ROOT.  ``False``: any number >= 1 may.

    Returns
    -------
    DecodeResult
        ``structure``: int64 heads (n,), ``heads[m - 1]`` = head of word ``m`` (0 = ROOT);
        ``score``: its score; status ``"exact"``, or ``"infeasible"`` with score ``-inf``
        when every projective tree contains a forbidden arc (the structure is then some
        well-formed projective tree, of score ``-inf``).

    Ties are broken deterministically: at every chart item the smallest split point among
    equally scoring ones (see the module docstring).

    Complexity: O(n^3) time, O(n^2) memory.
    """
    S = check_dependency_scores(scores)
    return _decode(S, _check_single_root(single_root))


def eisner_kbest(scores, k: int, *, single_root: bool = True) -> KBestTrees:
    """The ``k`` best projective dependency trees, best first (exact).

    Huang & Chiang's (2005) lazy k-best algorithm on Eisner's chart: after the 1-best chart,
    the sorted list of derivations of an item is extended only when a parent item needs
    it, each item merging its splits with a heap of candidates.  First-order Eisner
    derivations are unambiguous, so the trees are distinct.  Trees of score ``-inf`` are
    never returned.  ``eisner_kbest(S, 1)`` returns the tree and score of ``eisner(S)``.

    Parameters
    ----------
    scores : array (n + 1, n + 1)
        As in :func:`eisner`.
    k : int >= 1
        Number of trees wanted; fewer are returned when fewer projective trees have a
        finite score.
    single_root : bool
        As in :func:`eisner`.

    Returns
    -------
    KBestTrees
        ``heads`` int64 (k', n) and ``scores`` float64 (k',) non-increasing.  Equal scores are
        ordered deterministically (by split point, then the ranks of the parts, item by item).

    Complexity: O(n^3 + k n log(n + k)) time (the chart, then O(n) heap operations per tree),
    within the O(n^3 k log k) of the eager algorithm that merges k-best lists at every item;
    memory O(n^3 + k n) at worst (a heap over the splits of every item visited).
    """
    S = check_dependency_scores(scores)
    single_root = _check_single_root(single_root)
    kk = _kbest_size(S.shape[0] - 1, single_root, _check_k(k))
    return _decode_kbest(S, single_root, kk)


def eisner_batch(score_list, *, single_root: bool = True, k: int = 1) -> list:
    """Decode many sentences: :func:`eisner` (``k == 1``) or :func:`eisner_kbest` (``k > 1``).

    All inputs are validated once, up front; the compiled kernels are then called for each
    sentence without further checks.

    Parameters
    ----------
    score_list : sequence of arrays (n_i + 1, n_i + 1)
        One score matrix per sentence, as in :func:`eisner`; lengths may differ.
    single_root : bool
    k : int >= 1

    Returns
    -------
    list[DecodeResult] when ``k == 1`` (exactly what :func:`eisner` returns per sentence),
    list[KBestTrees] when ``k > 1`` (what :func:`eisner_kbest` returns).

    Complexity: the sum of the per-sentence costs.
    """
    if isinstance(score_list, np.ndarray) and score_list.ndim == 2:
        raise InputError("score_list must be a sequence of score matrices; got a single 2-d array")
    try:
        items = list(score_list)
    except TypeError:
        raise InputError(
            f"score_list must be a sequence of (n + 1, n + 1) score matrices; got {type(score_list).__name__}"
        ) from None
    single_root = _check_single_root(single_root)
    k = _check_k(k)
    mats = [check_dependency_scores(S, f"score_list[{i}]") for i, S in enumerate(items)]
    if k == 1:
        return [_decode(S, single_root) for S in mats]
    sizes = [_kbest_size(S.shape[0] - 1, single_root, k) for S in mats]
    return [_decode_kbest(S, single_root, kk) for S, kk in zip(mats, sizes)]


def head_hamming_augmented(scores, gold_heads) -> np.ndarray:
    """Scores augmented with the Hamming loss on heads (for loss-augmented decoding).

    Returns a float64 copy of ``scores`` with +1.0 added to every arc ``h -> m`` (``m >= 1``,
    ``h != m``) such that ``h != gold_heads[m - 1]``; so the score of any tree under the
    result is its score under ``scores`` plus the number of words whose head differs from
    the gold one, and ``eisner(head_hamming_augmented(S, g))`` is the loss-augmented argmax.
    A gold head of ``-1`` means unknown: every arc into that word gets +1.  Column 0 and the
    diagonal are copied unchanged.

    Parameters
    ----------
    scores : array (n + 1, n + 1), as in :func:`eisner`.
    gold_heads : int array (n,)
        ``gold_heads[m - 1]`` in ``0..n`` (0 = ROOT, not ``m`` itself), or ``-1``.  The gold
        tree need not be projective.

    Complexity: O(n^2).
    """
    check_dependency_scores(scores)
    out = np.array(scores, dtype=np.float64, copy=True)
    N = out.shape[0]
    n = N - 1
    g = as_int_array(gold_heads, "gold_heads", "(n,)")
    if g.shape[0] != n:
        raise InputError(
            f"gold_heads must have shape (n,) = ({n},) to match scores of shape {shape_str(out.shape)}; "
            f"got shape {shape_str(g.shape)}"
        )
    words = np.arange(1, N)
    bad = (g < -1) | (g > n) | (g == words)
    if bad.any():
        m = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(
            f"gold_heads[{m - 1}] = {g[m - 1]} is not a valid head of word {m}; expected -1 (unknown), "
            f"0 (ROOT) or a word index in 1..{n} other than {m}"
        )
    add = np.ones((N, N), dtype=np.float64)
    add[:, 0] = 0.0
    np.fill_diagonal(add, 0.0)
    known = g >= 0
    add[g[known], words[known]] = 0.0
    out += add
    return out

