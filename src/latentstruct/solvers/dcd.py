"""Grouped squared-hinge (L2-loss) dual coordinate descent: the shared QP engine.

Structured SVM, LCLR (Chang et al. 2010, Eq. 5) and J-LIS (Chang et al. 2010, Eq. 9) all reduce
to one quadratic program over a *pool* of linear constraints, each belonging to a slack group
(normally one group per example)::

    min_w,xi   1/2 ||w||^2 + sum_g C_g xi_g^2
    s.t.       w . d_k >= b_k - xi_{g(k)}        for every active constraint k

so that ``xi_g = max(0, max_{k in g} (b_k - w . d_k))``.  Its dual has only box constraints::

    max_{alpha >= 0}  sum_k alpha_k b_k - 1/2 ||sum_k alpha_k d_k||^2 - sum_g A_g^2 / (4 C_g),
    A_g = sum_{k in g} alpha_k,      w = sum_k alpha_k d_k,

which :func:`solve_grouped_dcd` maximises by coordinate descent (Hsieh et al. 2008, the L2-loss
dual CD of LIBLINEAR; J-LIS Algorithm 3) with LIBLINEAR's shrinking heuristic.

:class:`ConstraintPool` is the persistent working set: it stores the constraints in growable CSR
arrays together with their dual variables, so a solve after adding constraints starts from the
previous alpha ("working sets persist across outer iterations", LCLR footnote 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from latentstruct.data.sparse import SparseVector, coalesce_arrays
from latentstruct.exceptions import ConfigError

__all__ = [
    "Constraint",
    "ConstraintPool",
    "DCDResult",
    "solve_grouped_dcd",
    "fit_binary_squared_hinge",
    "DCDWorkspace",
    "DCDKernelState",
]

_UINT32_MAX = np.iinfo(np.uint32).max
# Reassociation lets LLVM split the sparse dot products into several accumulators; no flag that
# assumes away inf/nan (the shrinking thresholds use +-inf).
_FASTMATH = {"reassoc", "contract"}
# The pair steps are skipped for a while after a round of them gained less than this share
# of the epoch's coordinate steps (doubling the wait each time, up to PAIR_MAX_WAIT epochs).
PAIR_GAIN_RATIO = 0.1
PAIR_MAX_WAIT = 32


# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_FASTMATH)
def _dcd_epochs(
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


def _pair_groups(sweep: np.ndarray, group: np.ndarray):
    """The swept constraints of every group that has two or more, in order of group and id:
    ``(ptr, members)`` with group q's constraints ``members[ptr[q]:ptr[q + 1]]``.  Built from
    the set of swept ids, not their order, so a resumed run pairs exactly as the first did."""
    ids = np.sort(np.asarray(sweep, dtype=np.int64))
    members = ids[np.argsort(group[ids], kind="stable")]
    g = group[members]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if g.size else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], g.size].astype(np.int64)
    sizes = ends - starts
    multi = sizes >= 2
    keep = members[np.repeat(multi, sizes)]
    ptr = np.r_[0, np.cumsum(sizes[multi])].astype(np.int64)
    return ptr, np.ascontiguousarray(keep, dtype=np.int64)


@njit(cache=True, nogil=True)
def _accumulate_w(indptr, indices, data, alpha, active, w):
    """w += sum_k alpha_k d_k over the active constraints."""
    for k in range(alpha.shape[0]):
        a = alpha[k]
        if a != 0.0 and active[k]:
            for p in range(np.uint64(indptr[k]), np.uint64(indptr[k + 1])):
                w[indices[p]] += a * data[p]


@njit(cache=True, nogil=True)
def _csr_has_repeats(indptr, indices, n_cols):
    """Whether some row of a CSR matrix lists a column twice (no sorting needed)."""
    last_row = np.full(n_cols, -1, dtype=np.int64)
    for r in range(indptr.shape[0] - 1):
        for p in range(indptr[r], indptr[r + 1]):
            c = indices[p]
            if last_row[c] == r:
                return True
            last_row[c] = r
    return False


@njit(cache=True, nogil=True)
def _is_coalesced(indices, values):
    """Whether indices strictly increase and no value is 0 (``coalesce_arrays`` would keep
    them as they are)."""
    for p in range(indices.shape[0]):
        if values[p] == 0.0 or (p > 0 and indices[p] <= indices[p - 1]):
            return False
    return True


@njit(cache=True, nogil=True)
def _row_sqnorms(indptr, data, out):
    for k in range(out.shape[0]):
        acc = 0.0
        for p in range(np.uint64(indptr[k]), np.uint64(indptr[k + 1])):
            acc += data[p] * data[p]
        out[k] = acc


@njit(cache=True, nogil=True)
def _margins(indptr, indices, data, w, out):
    for k in range(out.shape[0]):
        m = 0.0
        for p in range(np.uint64(indptr[k]), np.uint64(indptr[k + 1])):
            m += w[indices[p]] * data[p]
        out[k] = m


@njit(cache=True, nogil=True)
def _objectives(indptr, indices, data, b, group, active, alpha, w, C):
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


# --------------------------------------------------------------------------------------------
# the pool
# --------------------------------------------------------------------------------------------


class Constraint(NamedTuple):
    """One stored constraint ``w . d >= b - xi_group``."""

    d: SparseVector
    b: float
    group: int


class ConstraintPool:
    """Persistent working set of grouped constraints ``w . d_k >= b_k - xi_{g(k)}``.

    The constraints live in growable CSR arrays (capacity doubles when full) next to their dual
    variables ``alpha``; the pool therefore carries alpha from one :func:`solve_grouped_dcd` call
    to the next, and a re-solve after :meth:`add` is warm-started.  Constraint ids are stable
    (0, 1, 2, ... in order of addition) and are never reused; :meth:`deactivate` switches one off
    (its alpha becomes 0 and it is ignored by later solves and objectives).

    Parameters
    ----------
    n_features : int
        Dimension of w (feature indices must lie in ``[0, n_features)``).
    n_groups : int
        Number of slack groups (normally the number of examples); groups are ``0..n_groups-1``.
    """

    def __init__(self, n_features: int, n_groups: int):
        n_features = _check_positive_int(n_features, "n_features")
        n_groups = _check_positive_int(n_groups, "n_groups")
        self._n_features = n_features
        self._n_groups = n_groups
        # unsigned feature ids: the kernels then skip numba's negative-index wraparound code
        self._index_dtype = np.uint32 if n_features <= _UINT32_MAX else np.uint64
        self._n = 0
        self._nnz = 0
        cap, nnz_cap = 16, 256
        self._indptr = np.zeros(cap + 1, dtype=np.int64)
        self._indices = np.zeros(nnz_cap, dtype=self._index_dtype)
        self._data = np.zeros(nnz_cap, dtype=np.float64)
        self._b = np.zeros(cap, dtype=np.float64)
        self._group = np.zeros(cap, dtype=np.int64)
        self._alpha = np.zeros(cap, dtype=np.float64)
        self._active = np.zeros(cap, dtype=np.bool_)
        self._sqnorm = np.zeros(cap, dtype=np.float64)
        self._n_active = 0
        # dedupe: (group, b, hash of coalesced index/value bytes) -> ids of active constraints
        self._lookup: dict[tuple, list[int]] = {}
        # key of each constraint that was registered in _lookup (None for add_csr rows)
        self._keys: list[tuple | None] = []

    # ---------------------------------------------------------------- storage helpers
    def _reserve(self, n_more: int, nnz_more: int) -> None:
        need = self._n + n_more
        cap = self._b.shape[0]
        if need > cap:
            new_cap = max(need, 2 * cap)
            self._indptr = _grow(self._indptr, new_cap + 1)
            self._b = _grow(self._b, new_cap)
            self._group = _grow(self._group, new_cap)
            self._alpha = _grow(self._alpha, new_cap)
            self._active = _grow(self._active, new_cap)
            self._sqnorm = _grow(self._sqnorm, new_cap)
        need_nnz = self._nnz + nnz_more
        nnz_cap = self._data.shape[0]
        if need_nnz > nnz_cap:
            new_cap = max(need_nnz, 2 * nnz_cap)
            self._indices = _grow(self._indices, new_cap)
            self._data = _grow(self._data, new_cap)

    def _view(self):
        """Views (length n_constraints / nnz) of the storage, in kernel argument order."""
        n, nnz = self._n, self._nnz
        return (
            self._indptr[: n + 1],
            self._indices[:nnz],
            self._data[:nnz],
            self._b[:n],
            self._group[:n],
            self._sqnorm[:n],
            self._alpha[:n],
            self._active[:n],
        )

    def _check_group(self, group) -> int:
        if isinstance(group, (bool, np.bool_)) or not isinstance(group, (int, np.integer)):
            raise TypeError(f"group must be an int in [0, {self._n_groups}), got {group!r}")
        g = int(group)
        if not 0 <= g < self._n_groups:
            raise ValueError(
                f"group {g} is out of range: this pool has n_groups={self._n_groups}, so groups "
                f"are 0..{self._n_groups - 1}; create the pool with more groups"
            )
        return g

    def _check_id(self, k) -> int:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"constraint id must be an int, got {k!r}")
        k = int(k)
        if not 0 <= k < self._n:
            raise IndexError(
                f"constraint id {k} out of range: the pool holds {self._n} constraints"
            )
        return k

    def _check_indices(self, idx: np.ndarray, what: str) -> None:
        if idx.size and (idx.min() < 0 or idx.max() >= self._n_features):
            raise ValueError(
                f"{what} has feature indices outside [0, {self._n_features}) "
                f"(min {idx.min()}, max {idx.max()}); create the pool with a larger n_features"
            )

    # ---------------------------------------------------------------- adding / removing
    def add(self, group: int, d: SparseVector, b: float) -> int:
        """Add the constraint ``w . d >= b - xi_group`` with alpha = 0 and return its id.

        ``d`` is coalesced (repeated indices summed, zeros dropped) before it is stored.  If an
        identical active constraint (same group, same coalesced d, same b) is already in the
        pool, nothing is added and the existing id is returned.
        """
        g = self._check_group(group)
        if not isinstance(d, SparseVector):
            raise TypeError(f"d must be a SparseVector, got {type(d).__name__}")
        b = float(b)
        if not np.isfinite(b):
            raise ValueError(f"b must be a finite float, got {b}")
        idx, val = d.indices, d.values
        if not _is_coalesced(idx, val):  # tasks often hand over coalesced vectors already
            idx, val = coalesce_arrays(idx, val)
        if not np.all(np.isfinite(val)):
            raise ValueError("d has non-finite values (nan or inf); features must be finite")
        self._check_indices(idx, "d")
        idx = idx.astype(self._index_dtype, copy=False)
        key = (g, b, hash((idx.tobytes(), val.tobytes())))
        ids = self._lookup.get(key)
        if ids is not None:
            for k in ids:
                lo, hi = self._indptr[k], self._indptr[k + 1]
                if np.array_equal(self._indices[lo:hi], idx) and np.array_equal(
                    self._data[lo:hi], val
                ):
                    return k
        m = idx.shape[0]
        self._reserve(1, m)
        k, lo = self._n, self._nnz
        self._indices[lo : lo + m] = idx
        self._data[lo : lo + m] = val
        self._indptr[k + 1] = lo + m
        self._b[k] = b
        self._group[k] = g
        self._alpha[k] = 0.0
        self._active[k] = True
        self._sqnorm[k] = float(np.dot(val, val))
        self._n += 1
        self._nnz += m
        self._n_active += 1
        self._keys.append(key)
        self._lookup.setdefault(key, []).append(k)
        return k

    def add_csr(self, X, b, groups) -> np.ndarray:
        """Add one constraint per row of ``X`` (row i: ``w . X[i] >= b[i] - xi_{groups[i]}``).

        Vectorised bulk insertion for the binary / one-constraint-per-example case.  Rows are
        *not* checked against existing constraints (no dedupe) and are not registered for
        dedupe by later :meth:`add` calls.  Duplicate column entries within a row are summed;
        ``X`` itself is not modified.  Returns the new ids (int64 array).
        """
        if not sp.issparse(X):
            raise TypeError(f"X must be a scipy.sparse matrix (CSR), got {type(X).__name__}")
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        m = X.shape[0]
        if X.shape[1] > self._n_features:
            raise ValueError(
                f"X has {X.shape[1]} columns but the pool has n_features={self._n_features}"
            )
        X = _without_repeated_columns(X)
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        groups = np.asarray(groups)
        if b.shape != (m,) or groups.shape != (m,):
            raise ValueError(
                f"b and groups must have one entry per row of X ({m}), got shapes "
                f"{b.shape} and {groups.shape}"
            )
        if not np.all(np.isfinite(b)) or not np.all(np.isfinite(X.data)):
            raise ValueError("b and X must be finite (no nan or inf)")
        if groups.size and not np.issubdtype(groups.dtype, np.integer):
            raise TypeError(f"groups must be integers, got dtype {groups.dtype}")
        groups = groups.astype(np.int64, copy=False)
        if groups.size and (groups.min() < 0 or groups.max() >= self._n_groups):
            raise ValueError(
                f"groups must lie in [0, {self._n_groups}), got min {groups.min()}, "
                f"max {groups.max()}"
            )
        nnz = X.nnz
        self._reserve(m, nnz)
        k0, lo = self._n, self._nnz
        self._indices[lo : lo + nnz] = X.indices
        self._data[lo : lo + nnz] = X.data
        self._indptr[k0 + 1 : k0 + m + 1] = lo + X.indptr[1:]
        self._b[k0 : k0 + m] = b
        self._group[k0 : k0 + m] = groups
        self._alpha[k0 : k0 + m] = 0.0
        self._active[k0 : k0 + m] = True
        _row_sqnorms(X.indptr, X.data, self._sqnorm[k0 : k0 + m])
        self._n += m
        self._nnz += nnz
        self._n_active += m
        self._keys.extend([None] * m)
        return np.arange(k0, k0 + m, dtype=np.int64)

    def deactivate(self, k: int) -> None:
        """Set alpha_k = 0 and exclude constraint k from later solves and objectives.

        Deactivating an inactive constraint does nothing.  A later :meth:`add` of the same
        constraint creates a new id.
        """
        k = self._check_id(k)
        if not self._active[k]:
            return
        self._active[k] = False
        self._alpha[k] = 0.0
        self._n_active -= 1
        key = self._keys[k]
        if key is not None:
            ids = self._lookup[key]
            ids.remove(k)
            if not ids:
                del self._lookup[key]

    # ---------------------------------------------------------------- read access
    @property
    def n_features(self) -> int:
        return self._n_features

    @property
    def n_groups(self) -> int:
        return self._n_groups

    @property
    def n_constraints(self) -> int:
        """Number of constraints ever added (active or not); ids are ``0..n_constraints-1``."""
        return self._n

    @property
    def n_active(self) -> int:
        return self._n_active

    @property
    def nnz(self) -> int:
        return self._nnz

    @property
    def alpha(self) -> np.ndarray:
        """Read-only copy of the dual variables of all constraints (0 for inactive ones)."""
        return _readonly(self._alpha[: self._n].copy())

    @property
    def group_of(self) -> np.ndarray:
        """Read-only array: slack group of every constraint (index it with an id)."""
        return _readonly(self._group[: self._n].copy())

    @property
    def b(self) -> np.ndarray:
        """Read-only array: right-hand side b_k of every constraint."""
        return _readonly(self._b[: self._n].copy())

    @property
    def active_mask(self) -> np.ndarray:
        """Read-only boolean array: which constraints are active."""
        return _readonly(self._active[: self._n].copy())

    def is_active(self, k: int) -> bool:
        return bool(self._active[self._check_id(k)])

    def active_ids(self) -> np.ndarray:
        """Ids of the active constraints, ascending."""
        return np.flatnonzero(self._active[: self._n])

    def group_ids(self, g: int) -> np.ndarray:
        """Ids of the active constraints of group g, ascending."""
        g = self._check_group(g)
        n = self._n
        return np.flatnonzero(self._active[:n] & (self._group[:n] == g))

    def constraint(self, k: int) -> Constraint:
        """``(d, b, group)`` of constraint k (d as stored, i.e. coalesced)."""
        k = self._check_id(k)
        lo, hi = self._indptr[k], self._indptr[k + 1]
        d = SparseVector(self._indices[lo:hi].astype(np.int64), self._data[lo:hi].copy())
        return Constraint(d, float(self._b[k]), int(self._group[k]))

    def compute_w(self) -> np.ndarray:
        """w = sum_k alpha_k d_k over the active constraints (fresh float64 array)."""
        w = np.zeros(self._n_features, dtype=np.float64)
        indptr, indices, data, _, _, _, alpha, active = self._view()
        _accumulate_w(indptr, indices, data, alpha, active, w)
        return w

    def margins(self, w: np.ndarray) -> np.ndarray:
        """w . d_k for every constraint (active or not), as a float64 array."""
        w = _as_w(w, self._n_features)
        out = np.empty(self._n, dtype=np.float64)
        indptr, indices, data = self._view()[:3]
        _margins(indptr, indices, data, w, out)
        return out

    def objectives(self, C, w: np.ndarray | None = None) -> tuple[float, float]:
        """``(primal, dual)`` for the stored alpha (and ``w``, default ``compute_w()``)."""
        Cg = _check_C(C, self._n_groups)
        w = self.compute_w() if w is None else _as_w(w, self._n_features)
        indptr, indices, data, b, group, _, alpha, active = self._view()
        p, d = _objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
        return float(p), float(d)

    # ---------------------------------------------------------------- checkpoints
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """``(meta, arrays)`` from which :meth:`from_state` rebuilds this pool exactly
        (constraints, dual variables, active flags and the dedupe index)."""
        indptr, indices, data, b, group, sqnorm, alpha, active = self._view()
        keyed = np.array([k is not None for k in self._keys], dtype=np.bool_)
        meta = {"n_features": self._n_features, "n_groups": self._n_groups}
        arrays = {"indptr": indptr, "indices": indices, "data": data, "b": b, "group": group,
                  "sqnorm": sqnorm, "alpha": alpha, "active": active, "keyed": keyed}
        return meta, {k: v.copy() for k, v in arrays.items()}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "ConstraintPool":
        """The pool :meth:`get_state` described."""
        pool = cls(int(meta["n_features"]), int(meta["n_groups"]))
        n = int(arrays["b"].shape[0])
        nnz = int(arrays["data"].shape[0])
        pool._reserve(n, nnz)
        pool._indptr[: n + 1] = arrays["indptr"]
        pool._indices[:nnz] = arrays["indices"]
        pool._data[:nnz] = arrays["data"]
        for name in ("b", "group", "sqnorm", "alpha", "active"):
            getattr(pool, f"_{name}")[:n] = arrays[name]
        pool._n, pool._nnz = n, nnz
        pool._n_active = int(np.count_nonzero(arrays["active"]))
        # the dedupe keys hash bytes, and Python's hash of bytes differs between processes:
        # recompute them here rather than store them
        for k in range(n):
            if not arrays["keyed"][k]:
                pool._keys.append(None)
                continue
            lo, hi = pool._indptr[k], pool._indptr[k + 1]
            idx, val = pool._indices[lo:hi], pool._data[lo:hi]
            key = (int(pool._group[k]), float(pool._b[k]), hash((idx.tobytes(), val.tobytes())))
            pool._keys.append(key)
            if pool._active[k]:
                pool._lookup.setdefault(key, []).append(k)
        return pool

    def __repr__(self) -> str:
        return (
            f"ConstraintPool(n_features={self._n_features}, n_groups={self._n_groups}, "
            f"n_constraints={self._n}, n_active={self._n_active}, nnz={self._nnz})"
        )


# --------------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DCDResult:
    """Result of :func:`solve_grouped_dcd`.

    Attributes
    ----------
    w : weight vector ``sum_k alpha_k d_k`` (float64, length n_features)
    alpha : dual variables of all constraints of the pool (0 for inactive ones)
    primal, dual : objective values over the pool's active constraints
    gap : ``primal - dual`` (>= 0 up to rounding)
    n_iter : epochs run
    converged : whether the projected-gradient stopping rule was met within ``max_iter``
    """

    w: np.ndarray
    alpha: np.ndarray
    primal: float
    dual: float
    gap: float
    n_iter: int
    converged: bool


@dataclass(frozen=True)
class DCDKernelState:
    """Where a :func:`solve_grouped_dcd` run stands after an epoch: the dual variables of
    the whole pool, w, the group sums, the sweep order (its first ``state_i[0]`` entries
    unshrunk), the shrinking thresholds, the xorshift state, epochs done, convergence.
    Passing it back as ``start`` continues the run exactly (for checkpoints)."""

    alpha: np.ndarray
    w: np.ndarray
    A: np.ndarray
    sweep: np.ndarray
    state_i: np.ndarray
    state_f: np.ndarray
    rng_state: np.ndarray
    n_iter: int
    converged: bool

    def arrays(self) -> dict[str, np.ndarray]:
        """The array fields (``n_iter`` and ``converged`` are scalars)."""
        return {k: getattr(self, k) for k in ("alpha", "w", "A", "sweep", "state_i", "state_f",
                                              "rng_state")}


def solve_grouped_dcd(
    pool: ConstraintPool,
    C,
    *,
    tol: float = 0.1,
    max_iter: int = 1000,
    shrinking: bool = True,
    random_state=None,
    callback: Callable[[int, float, float], object] | None = None,
    active_groups=None,
    on_epoch: Callable[[DCDKernelState], object] | None = None,
    start: DCDKernelState | None = None,
    gap_tol: float | None = None,
) -> DCDResult:
    """Grouped squared-hinge dual coordinate descent: the engine of StructuredSVM, LCLR, J-LIS.

    Solves, over the active constraints k of ``pool`` (slack group g(k))::

        min_w  1/2 ||w||^2 + sum_g C_g xi_g^2,   xi_g = max(0, max_{k in g} (b_k - w . d_k))

    i.e. ``w . d_k >= b_k - xi_g(k)``, through its dual, which has only the bounds alpha >= 0::

        max_alpha  sum_k alpha_k b_k - 1/2 ||sum_k alpha_k d_k||^2 - sum_g A_g^2 / (4 C_g),
        A_g = sum_{k in g} alpha_k,   w = sum_k alpha_k d_k.

    This is LCLR Eq. (5) and J-LIS Eq. (9); the coordinate step is J-LIS Algorithm 3, i.e. the
    L2-loss dual coordinate descent of Hsieh et al. (2008) / LIBLINEAR with every slack shared by
    the constraints of a group: ``G_k = w . d_k - b_k + A_g / (2 C_g)``,
    ``Q_kk = ||d_k||^2 + 1 / (2 C_g)``, ``alpha_k <- max(0, alpha_k - G_k / Q_kk)``, then w and
    A_g are updated.  With one constraint per group it is exactly LIBLINEAR's L2-loss SVM dual
    (``LinearSVC(dual=True, loss="squared_hinge")``).

    Each epoch visits the (unshrunk) constraints in a fresh random order, then takes one pair
    step in every group with two or more of them: dual mass moves between the group's
    constraints of smallest and largest gradient along ``e_i - e_j``, which leaves ``A_g``
    unchanged, with the exact step ``min(alpha_j, (G_j - G_i) / ||d_i - d_j||^2)`` (the SMO
    step of Platt 1998 / Keerthi et al. 2001 within one slack).  Coordinate steps alone
    zigzag between near-duplicate constraints of a group (a negative's cached alignments that
    differ in a word, a sentence's cutting planes): their curvature ``Q_kk`` is large while
    the direction that separates them is nearly flat.  On LCLR's MSRP problems this took a
    restricted solve from 2,000-5,000 epochs to 50-400 at the same tolerance
    (docs/performance.md).  Where a round of pair steps gains less than a tenth of what the
    epoch's coordinate steps gained (groups whose constraints are not alike, as in the
    grammaticality task's caches), the pairs wait 1, 2, 4, ... up to 32 epochs before the
    next round, so they cost little where they do not help.  With one constraint per group
    there is no pair to step on, and the kernel is LIBLINEAR's.  With ``shrinking``,
    LIBLINEAR's heuristic removes constraints with alpha_k = 0 whose gradient exceeds the
    previous epoch's largest projected gradient.  The run stops when
    ``max(0, max PG) - min(0, min PG) <= tol`` over the swept set (projected gradients taken
    at visit time); if that happens on the shrunk set, all constraints are restored and the test
    is repeated, as LIBLINEAR does.  (LIBLINEAR omits the two zeros; with them the test cannot
    pass while every projected gradient shares one nonzero value, which happens easily when
    constraints share a slack.  It is never looser than LIBLINEAR's.)

    Parameters
    ----------
    pool : ConstraintPool
        Constraints and their dual variables.  The solve starts from ``pool``'s alpha (warm
        start) and writes the new alpha back into it.
    C : float or array of shape (n_groups,)
        Slack cost per group (each > 0 and finite); a scalar applies to every group.
    tol : float, default 0.1
        Projected-gradient tolerance (LIBLINEAR's ``eps``; its default is 0.1).
    max_iter : int, default 1000
        Maximum number of epochs.
    shrinking : bool, default True
    random_state : None, int or numpy.random.Generator
        Seeds the permutation order (passed to ``numpy.random.default_rng``; the global RNG is
        never used).
    callback : callable(epoch, primal, dual), optional
        Called after every epoch (epoch counted from 1) with the current primal and dual
        objective; its return value is ignored.  Each call costs one pass over the pool to
        evaluate the objectives, so pass a callback only for logging or tests.  The callback
        must not modify the pool.
    active_groups : array of int, optional
        Restrict the coordinate sweep to the active constraints of these groups (all other
        alpha stay fixed), e.g. for per-example updates in an online cutting-plane loop.  The
        returned objectives, and the convergence test's scope, are: objectives over the whole
        pool, stopping rule over the swept constraints.
    on_epoch : callable(DCDKernelState), optional
        Called after every epoch with a copy of the run's whole state (for checkpoints).
    start : DCDKernelState, optional
        Continue the run ``on_epoch`` described (same pool, C, tol, shrinking): its alpha
        replaces the pool's, ``max_iter`` counts the epochs it had done, and the result is
        the one the uninterrupted run gives.  ``random_state`` is then not used.
    gap_tol : float, optional
        Also stop once the duality gap is small: ``primal - dual <= gap_tol * |primal|``
        (a bound on the relative suboptimality of the returned w), checked after epochs
        1, 2, 4, 8, 16 and then every 16th (each check is one pass over the pool).  Either
        rule ends the run and sets ``converged``.  Callers that solve a sequence of problems
        (cutting planes) use it to solve the early ones loosely; the projected-gradient rule
        alone can ask for thousands of epochs when many constraints share slacks.

    Returns
    -------
    DCDResult
        ``w``, ``alpha`` (copy), ``primal``, ``dual``, ``gap``, ``n_iter``, ``converged``.
        A solver kernel never warns: callers decide whether ``converged=False`` deserves a
        ``ConvergenceWarning``.

    Notes
    -----
    Every call recomputes w from alpha and evaluates the objectives once at the end: two passes
    over the pool's nonzeros, in addition to the epochs.
    """
    if not isinstance(pool, ConstraintPool):
        raise TypeError(f"pool must be a ConstraintPool, got {type(pool).__name__}")
    Cg = _check_C(C, pool.n_groups)
    tol = _check_tol(tol)
    max_iter = _check_positive_int(max_iter, "max_iter")
    if gap_tol is not None:
        gap_tol = _check_tol(gap_tol)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")
    rng = np.random.default_rng(random_state)

    indptr, indices, data, b, group, sqnorm, alpha, active = pool._view()
    if active_groups is None:
        sweep = np.flatnonzero(active)
    else:
        sel = np.zeros(pool.n_groups, dtype=np.bool_)
        ag = np.asarray(active_groups)
        if ag.size:
            if not np.issubdtype(ag.dtype, np.integer):
                raise TypeError(f"active_groups must be integers, got dtype {ag.dtype}")
            if ag.min() < 0 or ag.max() >= pool.n_groups:
                raise ValueError(
                    f"active_groups must lie in [0, {pool.n_groups}), got min {ag.min()}, "
                    f"max {ag.max()}"
                )
            sel[ag] = True
        sweep = np.flatnonzero(active & sel[group])
    sweep = sweep.astype(np.int64, copy=False)

    half_inv_c = 0.5 / Cg
    if start is None:
        w = pool.compute_w()
        A = np.bincount(group[active], weights=alpha[active], minlength=pool.n_groups).astype(
            np.float64
        )
        state_i = np.array([sweep.shape[0], 0, 0], dtype=np.int64)
        state_f = np.array([np.inf, -np.inf], dtype=np.float64)
        seed = int(rng.integers(1, np.iinfo(np.int64).max, dtype=np.int64))
        rng_state = np.array([seed], dtype=np.uint64)
        n_iter, converged = 0, False
    else:
        if start.alpha.shape != alpha.shape or start.sweep.shape != sweep.shape:
            raise ValueError(f"start describes a pool of {start.alpha.shape[0]} constraints "
                             f"({start.sweep.shape[0]} swept); this one has {alpha.shape[0]} "
                             f"({sweep.shape[0]} swept)")
        alpha[:] = start.alpha
        w, A, sweep = (np.array(a, dtype=np.float64) for a in (start.w, start.A, start.sweep))
        sweep = sweep.astype(np.int64)
        # (active_size, pair_wait, pair_backoff); a state saved before the pair steps
        # existed holds active_size alone
        state_i = np.zeros(3, dtype=np.int64)
        state_i[: len(start.state_i)] = start.state_i
        state_f = np.array(start.state_f, dtype=np.float64)
        rng_state = np.array(start.rng_state, dtype=np.uint64)
        n_iter, converged = int(start.n_iter), bool(start.converged)

    pair_ptr, pair_members = _pair_groups(sweep, group)
    work = (pair_ptr, pair_members, np.zeros(alpha.shape[0], dtype=np.bool_),
            np.zeros(alpha.shape[0]), np.zeros(pool.n_features if pair_ptr.shape[0] > 1 else 0))
    args = (indptr, indices, data, b, group, sqnorm, alpha, w, A, half_inv_c, sweep,
            state_i, state_f, rng_state, tol)
    if gap_tol is not None and callback is None and on_epoch is None:
        # chunks of epochs between gap checks; the kernel state persists between calls, so the
        # chunking does not change the run's course, only where it may stop
        while n_iter < max_iter and not converged:
            chunk = min(max(n_iter, 1), 16, max_iter - n_iter)
            done, converged = _dcd_epochs(*args, chunk, bool(shrinking), *work)
            n_iter += int(done)
            if not converged:
                p, d = _objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
                converged = bool(p - d <= gap_tol * abs(p))
    elif callback is None and on_epoch is None and start is None:
        n_iter, converged = _dcd_epochs(*args, max_iter, bool(shrinking), *work)
        n_iter = int(n_iter)
    else:
        # one epoch per kernel call: the kernel's state persists between calls, so cutting
        # the run into epochs does not change its course
        while n_iter < max_iter and not converged:
            done, converged = _dcd_epochs(*args, 1, bool(shrinking), *work)
            n_iter += int(done)
            if callback is not None or gap_tol is not None:
                p, d = _objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
                if callback is not None:
                    callback(n_iter, float(p), float(d))
                if gap_tol is not None and p - d <= gap_tol * abs(p):
                    converged = True
            if on_epoch is not None:
                on_epoch(DCDKernelState(alpha.copy(), w.copy(), A.copy(), sweep.copy(),
                                        state_i.copy(), state_f.copy(), rng_state.copy(),
                                        n_iter, bool(converged)))

    primal, dual = _objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
    primal, dual = float(primal), float(dual)
    return DCDResult(
        w=w,
        alpha=alpha.copy(),
        primal=primal,
        dual=dual,
        gap=primal - dual,
        n_iter=n_iter,
        converged=bool(converged),
    )


@njit(cache=True, nogil=True)
def _group_slacks(indptr, indices, data, b, group, w, ids, slack):
    """slack[g] = max(slack[g], b_k - w . d_k) over constraints ``ids`` (in place)."""
    for k in ids:
        m = 0.0
        for p in range(indptr[k], indptr[k + 1]):
            m += w[indices[p]] * data[p]
        v = b[k] - m
        g = group[k]
        if v > slack[g]:
            slack[g] = v


class DCDWorkspace:
    """Grouped DCD with ``w`` and the group sums kept live between calls.

    :func:`solve_grouped_dcd` recomputes ``w`` from alpha on every call, which is right for
    a few large solves.  Online cutting-plane loops (decode a few examples, add their most
    violated constraints, update those examples' duals at once, as Illinois-SL's structured
    DCD does) instead make many small solves; this workspace runs the same kernel
    (``_dcd_epochs``) on just the constraints of the given groups and updates ``w`` in place.

    ``w`` always equals ``sum_k alpha_k d_k`` over the pool (an added constraint has alpha 0).
    """

    def __init__(self, pool: ConstraintPool, C, random_state=None):
        if not isinstance(pool, ConstraintPool):
            raise TypeError(f"pool must be a ConstraintPool, got {type(pool).__name__}")
        self.pool = pool
        self.C = _check_C(C, pool.n_groups)
        self._half_inv_c = 0.5 / self.C
        self._rng = np.random.default_rng(random_state)
        self._scratch = np.zeros(0)  # the pair steps' work row, made on first need
        self._ids_of_group: list[list[int]] = [[] for _ in range(pool.n_groups)]
        for k in pool.active_ids():
            self._ids_of_group[int(pool.group_of[k])].append(int(k))
        self._refresh()

    def _refresh(self) -> None:
        self.w = self.pool.compute_w()
        self._refresh_A()

    def add(self, group: int, d: SparseVector, b: float) -> int:
        """Add a constraint (alpha 0, so ``w`` is unchanged); returns its id."""
        before = self.pool.n_constraints
        k = self.pool.add(group, d, b)
        if k >= before:  # new, not a duplicate of an active constraint
            self._ids_of_group[group].append(k)
        return k

    def group_constraint_ids(self, groups) -> np.ndarray:
        ids = [k for g in groups for k in self._ids_of_group[int(g)]]
        return np.asarray(ids, dtype=np.int64)

    def slacks(self, groups) -> np.ndarray:
        """``max(0, max_{k in g} b_k - w . d_k)`` for each group in ``groups`` under the live w."""
        groups = np.asarray(groups, dtype=np.int64)
        out = np.zeros(self.pool.n_groups)
        indptr, indices, data, b, group, _, _, _ = self.pool._view()
        _group_slacks(indptr, indices, data, b, group, self.w,
                      self.group_constraint_ids(groups), out)
        return out[groups]

    def sweep(self, groups, n_epochs: int = 1) -> int:
        """Coordinate-descent epochs over the constraints of ``groups``; w updated in place."""
        ids = self.group_constraint_ids(groups)
        if ids.size == 0:
            return 0
        indptr, indices, data, b, group, sqnorm, alpha, _ = self.pool._view()
        state_i = np.array([ids.shape[0], 0, 0], dtype=np.int64)
        state_f = np.array([np.inf, -np.inf], dtype=np.float64)
        seed = int(self._rng.integers(1, np.iinfo(np.int64).max, dtype=np.int64))
        rng_state = np.array([seed], dtype=np.uint64)
        pair_ptr, pair_members = _pair_groups(ids, group)
        if pair_ptr.shape[0] > 1 and self._scratch.shape[0] != self.pool.n_features:
            self._scratch = np.zeros(self.pool.n_features)
        live = np.zeros(alpha.shape[0], dtype=np.bool_)
        grad = np.zeros(alpha.shape[0])
        done, _ = _dcd_epochs(indptr, indices, data, b, group, sqnorm, alpha, self.w, self._A,
                              self._half_inv_c, ids, state_i, state_f, rng_state, 0.0,
                              int(n_epochs), False, pair_ptr, pair_members, live, grad,
                              self._scratch)
        return int(done)

    def solve(self, *, tol: float = 0.1, max_iter: int = 1000, shrinking: bool = True) -> DCDResult:
        """A full :func:`solve_grouped_dcd` over the pool, then the live w is refreshed."""
        res = solve_grouped_dcd(self.pool, self.C, tol=tol, max_iter=max_iter,
                                shrinking=shrinking, random_state=self._rng)
        self.w = res.w
        self._refresh_A()
        return res

    def _refresh_A(self) -> None:
        _, _, _, _, group, _, alpha, active = self.pool._view()
        self._A = np.bincount(group[active], weights=alpha[active],
                              minlength=self.pool.n_groups).astype(np.float64)

    def objectives(self) -> tuple[float, float]:
        """(primal, dual) over the pool's active constraints at the live w."""
        return self.pool.objectives(self.C, self.w)

    def live_state(self) -> dict[str, np.ndarray]:
        """The live ``w`` and group sums: updated in place by :meth:`sweep`, they can differ
        in the last bits from a recomputation out of alpha, so a checkpoint stores them."""
        return {"w": self.w.copy(), "A": self._A.copy()}

    def set_live_state(self, arrays: dict) -> None:
        """Take ``w`` and the group sums from :meth:`live_state` (after a checkpoint)."""
        self.w = np.array(arrays["w"], dtype=np.float64)
        self._A = np.array(arrays["A"], dtype=np.float64)


def fit_binary_squared_hinge(
    X, y, C, *, tol: float = 0.1, max_iter: int = 1000, random_state=None, shrinking=True
) -> DCDResult:
    """L2-regularised squared-hinge linear SVM without intercept, via :func:`solve_grouped_dcd`.

    Minimises ``1/2 ||w||^2 + C sum_i max(0, 1 - y_i w . x_i)^2`` with one constraint per
    example (``d_i = y_i x_i``, ``b_i = 1``, group i): the same problem and algorithm as
    ``LinearSVC(dual=True, loss="squared_hinge", fit_intercept=False)`` (LIBLINEAR solver 1).
    ``y`` must contain only -1 and +1; ``X`` may be dense or scipy-sparse.  ``tol`` defaults to
    LIBLINEAR's 0.1, not scikit-learn's 1e-4.
    """
    X = sp.csr_matrix(X, dtype=np.float64) if not sp.issparse(X) else X.tocsr()
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if X.shape[0] == 0:
        raise ValueError("X has no rows; need at least one example")
    if not np.all((y == 1.0) | (y == -1.0)):
        bad = np.unique(y[(y != 1.0) & (y != -1.0)])[:5]
        raise ValueError(f"y must contain only -1 and +1, got other values such as {bad}")
    X = _without_repeated_columns(X.astype(np.float64, copy=False))
    # d_i = y_i x_i: scale each row's values, keep its (sorted) column indices
    D = sp.csr_matrix((X.data * np.repeat(y, np.diff(X.indptr)), X.indices, X.indptr),
                      shape=X.shape)
    pool = ConstraintPool(max(X.shape[1], 1), X.shape[0])
    pool.add_csr(D, np.ones(X.shape[0]), np.arange(X.shape[0]))
    return solve_grouped_dcd(
        pool, C, tol=tol, max_iter=max_iter, shrinking=shrinking, random_state=random_state
    )


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _without_repeated_columns(X):
    """X itself if no row repeats a column (order within a row does not matter), else a
    copy with the repeats summed."""
    if X.has_canonical_format or not _csr_has_repeats(X.indptr, X.indices, X.shape[1]):
        return X
    X = X.copy()
    X.sum_duplicates()
    return X


def _grow(arr: np.ndarray, new_len: int) -> np.ndarray:
    out = np.zeros(new_len, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


def _as_w(w, n_features: int) -> np.ndarray:
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (n_features,):
        raise ValueError(f"w must have shape ({n_features},), got {w.shape}")
    return w


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
    if value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value}")
    return int(value)


def _check_tol(tol) -> float:
    try:
        t = float(tol)
    except (TypeError, ValueError):
        raise ConfigError(f"tol must be a positive float, got {tol!r}") from None
    if not (np.isfinite(t) and t > 0.0):
        raise ConfigError(f"tol must be a positive finite float, got {tol!r}")
    return t


def _check_C(C, n_groups: int) -> np.ndarray:
    """C as a float64 array of shape (n_groups,), every entry finite and > 0."""
    try:
        arr = np.asarray(C, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(
            f"C must be a positive float or an array of {n_groups} positive floats (one per "
            f"slack group), got {C!r}"
        ) from None
    if arr.ndim == 0:
        value = float(arr)
        if not (np.isfinite(value) and value > 0.0):
            raise ConfigError(
                f"C must be a positive finite float (or one per slack group), got {value!r}; "
                "use a small positive C instead of 0"
            )
        return np.full(n_groups, value)
    if arr.shape != (n_groups,):
        raise ConfigError(
            f"C must be a scalar or have shape ({n_groups},) (one value per slack group), "
            f"got shape {arr.shape}"
        )
    bad = ~(np.isfinite(arr) & (arr > 0.0))
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        raise ConfigError(
            f"C must be positive and finite for every slack group, got C[{g}] = "
            f"{float(arr[g])!r} ({int(bad.sum())} bad value(s) of {n_groups}); "
            "use a small positive C instead of 0"
        )
    return np.ascontiguousarray(arr)
