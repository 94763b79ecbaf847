"""The numba kernels of grouped squared-hinge dual coordinate descent.

:func:`dcd_epochs` runs the coordinate-descent epochs (with shrinking and the SMO pair steps
inside slack groups); the others compute w, margins, objectives, group slacks and row norms
over a :class:`~latentstruct.solvers.dcd.pool.ConstraintPool`'s CSR arrays.  The problem
they solve is stated in :mod:`latentstruct.solvers.dcd`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Reassociation lets LLVM split the sparse dot products into several accumulators; no flag that
# assumes away inf/nan (the shrinking thresholds use +-inf).
_FASTMATH = {"reassoc", "contract"}
# The pair steps are skipped for a while after a round of them gained less than this share
# of the epoch's coordinate steps (doubling the wait each time, up to PAIR_MAX_WAIT epochs).
PAIR_GAIN_RATIO = 0.1
PAIR_MAX_WAIT = 32


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FASTMATH)
def dcd_epochs(
    indptr,
    indices,
    data,
    b,
    group,
    sqnorm,
    alpha,
    w,
    A,
    half_inv_c,
    index,
    state_i,
    state_f,
    rng_state,
    tol,
    n_epochs,
    shrinking,
    pair_ptr,
    pair_members,
    live,
    grad,
    scratch,
):
    """Run at most ``n_epochs`` epochs of grouped L2-loss dual CD, in place.

    ``index`` holds the ids of the constraints to sweep; its first ``state_i[0]`` entries are
    the unshrunk ones (LIBLINEAR's ``active_size``); ``state_i[1:3]`` are the epochs the
    pair steps still wait and their current back-off.  ``state_f`` holds ``(PGmax_old,
    PGmin_old)``, ``rng_state`` the xorshift64 state; all three persist between calls so that
    the run can be cut into chunks (for callbacks) without changing its course.

    An epoch that does not end the run is followed (unless the pairs wait) by one pair step
    in every group of ``pair_ptr``/``pair_members`` (the swept groups with two or more
    constraints, from :func:`_pair_groups`), over its unshrunk constraints
    (:func:`_pair_step`).  ``live`` and
    ``grad`` (one flag and one value per constraint id) and ``scratch`` (zeros, one per
    feature) are work space.
    Returns ``(epochs_done, converged)``.
    """
    n_sweep = index.shape[0]
    active_size = state_i[0]
    pair_wait = state_i[1]
    pair_backoff = state_i[2]
    pg_max_old = state_f[0]
    pg_min_old = state_f[1]
    s = rng_state[0]
    sh13 = np.uint64(13)
    sh7 = np.uint64(7)
    sh17 = np.uint64(17)
    sh32 = np.uint64(32)
    epochs = 0
    converged = False
    while epochs < n_epochs:
        # random permutation of the unshrunk part (Fisher-Yates, multiply-shift bounded draw)
        for i in range(active_size):
            s ^= s << sh13
            s ^= s >> sh7
            s ^= s << sh17
            span = np.uint64(active_size - i)
            j = i + np.int64(((s >> sh32) * span) >> sh32)
            tmp = index[i]
            index[i] = index[j]
            index[j] = tmp

        # Spread measured against 0 (LIBLINEAR starts these at -inf/+inf): otherwise an epoch
        # whose projected gradients all share one nonzero value -- easy with several
        # constraints per group -- would pass the test while far from optimal.
        pg_max_new = 0.0
        pg_min_new = 0.0
        sweep_gain = 0.0  # how much the epoch's coordinate steps lowered the dual's negative
        pos = 0
        while pos < active_size:
            k = index[pos]
            g = group[k]
            start = np.uint64(indptr[k])  # unsigned offsets: no negative-index wraparound code
            end = np.uint64(indptr[k + 1])
            G = 0.0
            for p in range(start, end):
                G += w[indices[p]] * data[p]
            grad[k] = G - b[k]  # without the group term: what the pair steps compare
            hic = half_inv_c[g]
            G += A[g] * hic - b[k]
            a = alpha[k]
            PG = 0.0
            if a == 0.0:
                if G > pg_max_old and shrinking:
                    active_size -= 1
                    tmp = index[pos]
                    index[pos] = index[active_size]
                    index[active_size] = tmp
                    continue
                elif G < 0.0:
                    PG = G
            else:
                PG = G
            if PG > pg_max_new:
                pg_max_new = PG
            if PG < pg_min_new:
                pg_min_new = PG
            if PG > 1e-12 or PG < -1e-12:
                a_new = a - G / (sqnorm[k] + hic)
                if a_new < 0.0:
                    a_new = 0.0
                delta = a_new - a
                sweep_gain -= delta * (G + 0.5 * (sqnorm[k] + hic) * delta)
                alpha[k] = a_new
                A[g] += delta
                for p in range(start, end):
                    w[indices[p]] += delta * data[p]
            pos += 1

        epochs += 1
        if pg_max_new - pg_min_new <= tol:
            if active_size == n_sweep:
                converged = True
                break
            # converged on the shrunk set: unshrink and re-check (as LIBLINEAR does)
            active_size = n_sweep
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max_new
        pg_min_old = pg_min_new
        if pg_max_old <= 0.0:
            pg_max_old = np.inf
        if pg_min_old >= 0.0:
            pg_min_old = -np.inf
        if pair_ptr.shape[0] > 1 and pair_wait > 0:
            pair_wait -= 1
        elif pair_ptr.shape[0] > 1:
            for pos in range(n_sweep):
                live[index[pos]] = pos < active_size
            pair_gain = 0.0
            for q in range(pair_ptr.shape[0] - 1):
                pair_gain += _pair_step(indptr, indices, data, b, alpha, w, pair_members,
                                        pair_ptr[q], pair_ptr[q + 1], live, grad, scratch)
            # Where the groups' constraints are not near-duplicates the pairs gain little
            # and cost up to half an epoch: then skip them for 1, 2, 4, ... 32 epochs.
            if pair_gain < PAIR_GAIN_RATIO * sweep_gain:
                pair_backoff = min(max(2 * pair_backoff, 1), PAIR_MAX_WAIT)
                pair_wait = pair_backoff
            else:
                pair_backoff = 0

    state_i[0] = active_size
    state_i[1] = pair_wait
    state_i[2] = pair_backoff
    state_f[0] = pg_max_old
    state_f[1] = pg_min_old
    rng_state[0] = s
    return epochs, converged


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FASTMATH)
def _pair_step(indptr, indices, data, b, alpha, w, members, start, end, live, grad, scratch):
    """One SMO step inside a slack group: move dual mass between two of its constraints.

    Constraints of one group that are near-duplicates (a negative's cached alignments that
    differ in a word or two, a sentence's cutting planes) make single-coordinate steps
    zigzag: each step's curvature ``||d_k||^2 + 1/(2 C_g)`` is large, while along
    ``e_i - e_j`` it is only ``||d_i - d_j||^2``, and the group's sum ``A_g`` does not move.
    Among the live constraints of ``members[start:end]`` the pair is chosen by the gradients
    the epoch just measured (``grad``, without the group term ``A_g / (2 C_g)``, common to
    the group): ``i`` with the smallest, ``j`` with the largest among those with
    ``alpha_j > 0`` (the maximal violating pair of Keerthi et al. 2001; measured during the
    sweep, so a pair costs two dot products, not one per member).  The step itself uses the
    two gradients recomputed at the current w and minimises the dual exactly along
    ``e_i - e_j``: ``t = min(alpha_j, (G_j - G_i) / ||d_i - d_j||^2)``, and none is taken
    unless ``G_j > G_i``.  So the dual objective never gets worse and alpha stays feasible.
    Returns the decrease of the dual's negative (0.0 where no step is taken).
    """
    g_min = np.inf
    g_max = -np.inf
    i = -1
    j = -1
    for q in range(start, end):
        k = members[q]
        if not live[k]:
            continue
        G = grad[k]
        if G < g_min:
            g_min = G
            i = k
        if alpha[k] > 0.0 and G > g_max:
            g_max = G
            j = k
    if j < 0 or i == j:
        return 0.0
    i0, i1 = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
    j0, j1 = np.uint64(indptr[j]), np.uint64(indptr[j + 1])
    gi = 0.0
    for p in range(i0, i1):
        gi += w[indices[p]] * data[p]
    gj = 0.0
    for p in range(j0, j1):
        gj += w[indices[p]] * data[p]
    diff = (gj - b[j]) - (gi - b[i])
    if not diff > 1e-12:
        return 0.0
    # ||d_i - d_j||^2 through a dense scratch row: exact for near-duplicates (no
    # cancellation of ||d_i||^2 + ||d_j||^2 - 2 d_i.d_j), whatever the order of indices
    for p in range(i0, i1):
        scratch[indices[p]] += data[p]
    for p in range(j0, j1):
        scratch[indices[p]] -= data[p]
    q2 = 0.0
    for p in range(i0, i1):
        v = scratch[indices[p]]
        q2 += v * v
        scratch[indices[p]] = 0.0
    for p in range(j0, j1):
        v = scratch[indices[p]]
        q2 += v * v
        scratch[indices[p]] = 0.0
    t = alpha[j]
    if q2 > 0.0 and diff / q2 < t:
        t = diff / q2
    alpha[i] += t
    alpha[j] = alpha[j] - t if t < alpha[j] else 0.0
    for p in range(i0, i1):
        w[indices[p]] += t * data[p]
    for p in range(j0, j1):
        w[indices[p]] -= t * data[p]
    return t * (diff - 0.5 * t * q2)


@njit(cache=True, nogil=True)
def accumulate_w(indptr, indices, data, alpha, active, w):
    """w += sum_k alpha_k d_k over the active constraints."""
    for k in range(alpha.shape[0]):
        a = alpha[k]
        if a != 0.0 and active[k]:
            for p in range(np.uint64(indptr[k]), np.uint64(indptr[k + 1])):
                w[indices[p]] += a * data[p]


@njit(cache=True, nogil=True)
def csr_rows_scaled(indptr, indices, data, scale, n_cols, check_repeats):
    """One pass over a CSR matrix for a bulk insertion: ``(values, sqnorm, finite,
    repeats)``, the values with row k multiplied by ``scale[k]`` (a new array), each row's
    squared norm of those values, whether every value is finite, and (``check_repeats``)
    whether some row lists a column twice, in one read of the matrix."""
    n = indptr.shape[0] - 1
    out = np.empty(data.shape[0])
    sqnorm = np.empty(n)
    finite = True
    repeats = False
    last_row = np.full(n_cols if check_repeats else 0, -1, dtype=np.int64)
    for r in range(n):
        s = scale[r]
        acc = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            v = s * data[p]
            out[p] = v
            acc += v * v
            if not np.isfinite(v):
                finite = False
            if check_repeats:
                c = indices[p]
                if last_row[c] == r:
                    repeats = True
                last_row[c] = r
        sqnorm[r] = acc
    return out, sqnorm, finite, repeats


@njit(cache=True, nogil=True)
def is_coalesced(indices, values):
    """Whether indices strictly increase and no value is 0 (``coalesce_arrays`` would keep
    them as they are)."""
    for p in range(indices.shape[0]):
        if values[p] == 0.0 or (p > 0 and indices[p] <= indices[p - 1]):
            return False
    return True


@njit(cache=True, nogil=True)
def all_int8(values):
    """Whether every (finite) value is an integer in [-128, 127]: one pass, which stops
    at the first that is not (a pool's check of the values it stores)."""
    for p in range(values.shape[0]):
        v = values[p]
        if v < -128.0 or v > 127.0 or v != np.floor(v):
            return False
    return True


@njit(cache=True, nogil=True)
def all_float32(values):
    """Whether every (finite) value is a float32 exactly (stops at the first that is not)."""
    for p in range(values.shape[0]):
        if np.float64(np.float32(values[p])) != values[p]:
            return False
    return True


@njit(cache=True, nogil=True)
def csr_margins(indptr, indices, data, w, out):
    """out[k] = w . d_k for the first ``out.shape[0]`` rows."""
    for k in range(out.shape[0]):
        m = 0.0
        for p in range(np.uint64(indptr[k]), np.uint64(indptr[k + 1])):
            m += w[indices[p]] * data[p]
        out[k] = m


@njit(cache=True, nogil=True)
def primal_dual_objectives(indptr, indices, data, b, group, active, alpha, w, C):
    """(primal, dual) of the grouped problem over the active constraints, for this w and alpha."""
    n_groups = C.shape[0]
    xi = np.zeros(n_groups)
    A = np.zeros(n_groups)
    alpha_b = 0.0
    for k in range(b.shape[0]):
        if not active[k]:
            continue
        m = 0.0
        for p in range(np.uint64(indptr[k]), np.uint64(indptr[k + 1])):
            m += w[indices[p]] * data[p]
        g = group[k]
        viol = b[k] - m
        if viol > xi[g]:
            xi[g] = viol
        A[g] += alpha[k]
        alpha_b += alpha[k] * b[k]
    ww = 0.0
    for j in range(w.shape[0]):
        ww += w[j] * w[j]
    loss = 0.0
    reg = 0.0
    for g in range(n_groups):
        loss += C[g] * xi[g] * xi[g]
        reg += A[g] * A[g] / (4.0 * C[g])
    return 0.5 * ww + loss, alpha_b - 0.5 * ww - reg


@njit(cache=True, nogil=True)
def group_slacks(indptr, indices, data, b, group, w, ids, slack):
    """slack[g] = max(slack[g], b_k - w . d_k) over constraints ``ids`` (in place)."""
    for k in ids:
        m = 0.0
        for p in range(indptr[k], indptr[k + 1]):
            m += w[indices[p]] * data[p]
        v = b[k] - m
        g = group[k]
        if v > slack[g]:
            slack[g] = v
