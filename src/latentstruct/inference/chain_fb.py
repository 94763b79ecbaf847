"""Compiled forward–backward on first-order chains, for training and querying CRFs.

:func:`~latentstruct.inference.chain.chain_sum_product` answers one chain at a time through the
tree kernel, which is what the reranker and the tests need.  A conditional log-linear learner
(CRF) needs the marginals of every sentence of a corpus at every gradient evaluation, so this
module holds the per-sentence kernel as a numba function that a compiled caller can loop over
(:func:`chain_marginals_into`), and a batch entry point (:func:`chain_marginals_batch`).

The chain score is the usual one (``start[y_0] + Σ_t unary[t, y_t] + Σ_t transition[y_{t-1},
y_t] + end[y_{T-1}]``); here ``start`` and ``end`` are folded into the first and last rows of
``unary`` by the caller.

**Scaled, with an exact log-space fallback.**  The kernel first runs the scaled recursion of
Rabiner (1989), the one CRFsuite uses: every row of ``unary`` is shifted by its maximum and
exponentiated once, the transition matrix once per call (``M = exp(transition − max)``), and
α and β are renormalised at every position, so that the recursions are multiply–adds
instead of L² ``exp``/``log`` per position.  ``log Z`` is recovered from the shifts and the
scale factors.  A scale factor that underflows (a position where every reachable label has
a score more than ~700 below the row's best through ``M``) or a node row that does not sum
to one makes the kernel redo that sentence in log space (log-sum-exp recursions, ``-inf``
safe), so the result is exact either way.  Measured on CoNLL-2000 chunking (T ≈ 24, L = 23),
the scaled pass is ~8× faster than log space.

Entries of ``unary`` may be ``-inf`` (a label ruled out at a position: a clamped gold label
makes every other label ``-inf``); ``transition`` must be finite.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .checks import check_chain
from .tree_bp import logsumexp_vector

__all__ = ["chain_marginals_into", "chain_marginals_batch", "chain_work", "transition_exp",
           "CHAIN_FB_TOL"]

#: LLVM may reorder the sums of the scaled pass (vectorised reductions); no flag assumes
#: finite values, since ruled-out labels are -inf and their exp is 0
_REASSOC = {"reassoc", "contract"}

#: how far a node row of the scaled pass may stray from summing to one before the sentence is
#: redone in log space
CHAIN_FB_TOL = 1e-9


@njit(cache=True, nogil=True)
def transition_exp(transition):  # pragma: no cover - numba
    """(M, m): M = exp(transition − m) with m = max(transition), the scaled kernel's matrix."""
    L = transition.shape[0]
    m = -np.inf
    for i in range(L):
        for j in range(L):
            if transition[i, j] > m:
                m = transition[i, j]
    M = np.empty((L, L))
    for i in range(L):
        for j in range(L):
            M[i, j] = np.exp(transition[i, j] - m)
    return M, m


@njit(cache=True, nogil=True, fastmath=_REASSOC)
def _scaled(s, M, m_trans, node, edge_scaled, factor, e, alpha, beta, c):  # pragma: no cover
    """Scaled forward–backward; returns log Z, or NaN when it cannot certify its result
    (then ``node`` and ``edge_scaled`` are untouched)."""
    T, L = s.shape
    log_z = 0.0
    for t in range(T):
        mx = -np.inf
        for j in range(L):
            if s[t, j] > mx:
                mx = s[t, j]
        if mx == -np.inf:
            return np.nan
        log_z += mx
        for j in range(L):
            e[t, j] = np.exp(s[t, j] - mx)
    tot = 0.0
    for j in range(L):
        alpha[0, j] = e[0, j]
        tot += e[0, j]
    c[0] = tot
    for j in range(L):
        alpha[0, j] /= tot
    log_z += np.log(tot)
    for t in range(1, T):
        tot = 0.0
        for j in range(L):
            alpha[t, j] = 0.0
        for i in range(L):
            a = alpha[t - 1, i]
            if a != 0.0:
                for j in range(L):
                    alpha[t, j] += a * M[i, j]
        for j in range(L):
            alpha[t, j] *= e[t, j]
            tot += alpha[t, j]
        if not (tot > 1e-300 and tot < np.inf):
            return np.nan
        c[t] = tot
        for j in range(L):
            alpha[t, j] /= tot
        log_z += m_trans + np.log(tot)
    for j in range(L):
        beta[T - 1, j] = 1.0
    b = np.empty(L)
    for t in range(T - 2, -1, -1):
        inv = 1.0 / c[t + 1]
        for j in range(L):
            b[j] = e[t + 1, j] * beta[t + 1, j] * inv
        for i in range(L):
            acc = 0.0
            for j in range(L):
                acc += M[i, j] * b[j]
            beta[t, i] = acc
    # certify: every node row of a correct pass sums to one
    for t in range(T):
        tot = 0.0
        for j in range(L):
            tot += alpha[t, j] * beta[t, j]
        if not abs(tot - 1.0) <= 1e-9:
            return np.nan
    for t in range(T):
        for j in range(L):
            node[t, j] = alpha[t, j] * beta[t, j]
    # p(y_{t-1} = i, y_t = j) = alpha[t-1, i] M[i, j] e[t, j] beta[t, j] / c[t]: M is the same
    # at every position (and in every chain of a call), so only the rank-one products
    # alpha[t-1] (x) (e[t] beta[t] / c[t]) are summed here; the caller multiplies by M once
    for t in range(1, T):
        inv = factor / c[t]
        for j in range(L):
            b[j] = e[t, j] * beta[t, j] * inv
        for i in range(L):
            a = alpha[t - 1, i]
            if a != 0.0:
                for j in range(L):
                    edge_scaled[i, j] += a * b[j]
    return log_z


@njit(cache=True, nogil=True)
def _log_space(s, transition, node, edge_acc, factor, la, lb):  # pragma: no cover - numba
    """Log-space forward–backward (exact for any finite or -inf scores); returns log Z
    (-inf when every labelling is ruled out; then nothing is written)."""
    T, L = s.shape
    tmp = np.empty(L)
    for j in range(L):
        la[0, j] = s[0, j]
    for t in range(1, T):
        for j in range(L):
            for i in range(L):
                tmp[i] = la[t - 1, i] + transition[i, j]
            la[t, j] = s[t, j] + logsumexp_vector(tmp)
    log_z = logsumexp_vector(la[T - 1])
    if log_z == -np.inf:
        return log_z
    for j in range(L):
        lb[T - 1, j] = 0.0
    for t in range(T - 2, -1, -1):
        for i in range(L):
            for j in range(L):
                tmp[j] = transition[i, j] + s[t + 1, j] + lb[t + 1, j]
            lb[t, i] = logsumexp_vector(tmp)
    for t in range(T):
        for j in range(L):
            node[t, j] = np.exp(la[t, j] + lb[t, j] - log_z)
    for t in range(1, T):
        for i in range(L):
            for j in range(L):
                edge_acc[i, j] += factor * np.exp(la[t - 1, i] + transition[i, j] + s[t, j]
                                                  + lb[t, j] - log_z)
    return log_z


@njit(cache=True, nogil=True)
def chain_work(T, L):  # pragma: no cover - numba
    """Work space of :func:`chain_marginals_into` for chains of up to T positions."""
    return np.empty((3, max(T, 1), L)), np.empty(max(T, 1))


@njit(cache=True, nogil=True)
def chain_marginals_into(s, transition, M, m_trans, node, edge_acc, edge_scaled, factor,
                         work, c):  # pragma: no cover - numba
    """Log Z of one chain, its node marginals written to ``node`` (T, L), and ``factor`` times
    its edge marginals summed over positions added to the edge accumulators (L, L).

    ``s`` (T ≥ 1, L): unary scores with start and end folded in; ``M, m_trans`` from
    :func:`transition_exp` of ``transition``; ``work, c`` from :func:`chain_work` (T or more).
    The edge marginals arrive in two parts: ``edge_acc`` takes them as they are, and
    ``edge_scaled`` takes sums that the caller must multiply elementwise by ``M`` once, after
    its last chain (``edge_acc + M * edge_scaled`` is the total; M is shared by every chain of
    a call, so the scaled pass leaves that product out of its inner loop).  Returns ``-inf``
    (writing nothing) when every labelling scores ``-inf``.
    """
    T = s.shape[0]
    e, alpha, beta = work[0, :T], work[1, :T], work[2, :T]
    log_z = _scaled(s, M, m_trans, node, edge_scaled, factor, e, alpha, beta, c)
    if np.isnan(log_z):
        log_z = _log_space(s, transition, node, edge_acc, factor, alpha, beta)
    return log_z


@njit(cache=True, nogil=True)
def _batch(unary, offsets, transition, start, end, log_z, node):  # pragma: no cover - numba
    L = transition.shape[0]
    M, m_trans = transition_exp(transition)
    edge_sink = np.zeros((L, L))
    longest = 0
    for k in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[k + 1] - offsets[k])
    work, c = chain_work(longest, L)
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        if t1 == t0:
            log_z[k] = 0.0
            continue
        s = unary[t0:t1].copy()
        for j in range(L):
            s[0, j] += start[j]
            s[t1 - t0 - 1, j] += end[j]
        log_z[k] = chain_marginals_into(s, transition, M, m_trans, node[t0:t1], edge_sink,
                                        edge_sink, 0.0, work, c)


def chain_marginals_batch(unary, offsets, transition, start=None, end=None):
    """Log-partition and node marginals of many chains sharing one transition matrix.

    Parameters
    ----------
    unary : array (N, L), the unary scores of all chains' positions, concatenated
    offsets : int array (n + 1,), chain k is ``unary[offsets[k]:offsets[k + 1]]``
    transition : array (L, L), finite; start, end : array (L,) or None (zeros)

    Returns
    -------
    (log_z (n,), node (N, L)) with ``node[t, j] = p(y_t = j)`` within each chain.

    Raises
    ------
    InputError on malformed inputs or a chain whose every labelling scores ``-inf``.
    """
    from ..exceptions import InputError

    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    unary = np.asarray(unary, dtype=np.float64)
    N = int(offsets[-1]) if offsets.size else 0
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or np.any(np.diff(offsets) < 0) \
            or unary.ndim != 2 or unary.shape[0] != N:
        raise InputError(f"offsets must rise from 0 to the number of rows of unary ({unary.shape[0] if unary.ndim == 2 else '?'}); "
                         f"got {offsets.size} offsets ending at {N}")
    L = unary.shape[1]
    probe = unary[:0] if N == 0 else unary[:1]
    _, transition, start, end = check_chain(probe, transition, start, end)
    if not np.isfinite(transition).all():
        raise InputError("transition scores must be finite for the batch forward-backward")
    if np.isnan(unary).any() or np.isposinf(unary).any():
        raise InputError("unary scores must be finite or -inf; got NaN or +inf")
    log_z = np.empty(offsets.size - 1)
    node = np.zeros((N, L))
    _batch(np.ascontiguousarray(unary), offsets, np.ascontiguousarray(transition),
           np.ascontiguousarray(start), np.ascontiguousarray(end), log_z, node)
    bad = np.flatnonzero(log_z == -np.inf)
    if bad.size:
        raise InputError(f"every labelling of chain {int(bad[0])} scores -inf, so its "
                         "marginals are undefined; expected at least one finite labelling")
    return log_z, node
