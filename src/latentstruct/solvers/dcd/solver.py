"""Solving the grouped squared-hinge QP over a constraint pool: :func:`solve_grouped_dcd`
(with its result and resumable kernel state), the live :class:`DCDWorkspace` of online
cutting-plane loops, and :func:`fit_binary_squared_hinge`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from latentstruct.data.sparse import SparseVector
from latentstruct.solvers.dcd.kernels import dcd_epochs, group_slacks, primal_dual_objectives
from latentstruct.solvers.dcd.pool import ConstraintPool
from latentstruct.solvers.dcd.validation import (
    check_C,
    check_arguments,
)


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


def _pair_groups(sweep: np.ndarray, group: np.ndarray):
    """The swept constraints of every group that has two or more, in order of group and id:
    ``(ptr, members)`` with group q's constraints ``members[ptr[q]:ptr[q + 1]]``.  Built from
    the set of swept ids, not their order, so a resumed run pairs exactly as the first did."""
    ids = np.asarray(sweep, dtype=np.int64)
    if ids.size < 2 or np.bincount(group[ids]).max() < 2:
        # one constraint per group (a binary SVM): no pairs, without the sorts below
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ids = np.sort(ids)
    members = ids[np.argsort(group[ids], kind="stable")]
    g = group[members]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if g.size else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], g.size].astype(np.int64)
    sizes = ends - starts
    multi = sizes >= 2
    keep = members[np.repeat(multi, sizes)]
    ptr = np.r_[0, np.cumsum(sizes[multi])].astype(np.int64)
    return ptr, np.ascontiguousarray(keep, dtype=np.int64)


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
    Cg = check_C(C, pool.n_groups)
    check_arguments("solve_grouped_dcd", tol=tol, max_iter=max_iter, gap_tol=gap_tol)
    tol, max_iter = float(tol), int(max_iter)
    gap_tol = None if gap_tol is None else float(gap_tol)
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
            done, converged = dcd_epochs(*args, chunk, bool(shrinking), *work)
            n_iter += int(done)
            if not converged:
                p, d = primal_dual_objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
                converged = bool(p - d <= gap_tol * abs(p))
    elif callback is None and on_epoch is None and start is None:
        n_iter, converged = dcd_epochs(*args, max_iter, bool(shrinking), *work)
        n_iter = int(n_iter)
    else:
        # one epoch per kernel call: the kernel's state persists between calls, so cutting
        # the run into epochs does not change its course
        while n_iter < max_iter and not converged:
            done, converged = dcd_epochs(*args, 1, bool(shrinking), *work)
            n_iter += int(done)
            if callback is not None or gap_tol is not None:
                p, d = primal_dual_objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
                if callback is not None:
                    callback(n_iter, float(p), float(d))
                if gap_tol is not None and p - d <= gap_tol * abs(p):
                    converged = True
            if on_epoch is not None:
                on_epoch(DCDKernelState(alpha.copy(), w.copy(), A.copy(), sweep.copy(),
                                        state_i.copy(), state_f.copy(), rng_state.copy(),
                                        n_iter, bool(converged)))

    primal, dual = primal_dual_objectives(indptr, indices, data, b, group, active, alpha, w, Cg)
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


class DCDWorkspace:
    """Grouped DCD with ``w`` and the group sums kept live between calls.

    :func:`solve_grouped_dcd` recomputes ``w`` from alpha on every call, which is right for
    a few large solves.  Online cutting-plane loops (decode a few examples, add their most
    violated constraints, update those examples' duals at once, as Illinois-SL's structured
    DCD does) instead make many small solves; this workspace runs the same kernel
    (``dcd_epochs``) on just the constraints of the given groups and updates ``w`` in place.

    ``w`` always equals ``sum_k alpha_k d_k`` over the pool (an added constraint has alpha 0).
    """

    def __init__(self, pool: ConstraintPool, C, random_state=None):
        if not isinstance(pool, ConstraintPool):
            raise TypeError(f"pool must be a ConstraintPool, got {type(pool).__name__}")
        self.pool = pool
        self.C = check_C(C, pool.n_groups)
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

    def add_rows(self, groups, rows, b) -> np.ndarray:
        """:meth:`add` of each row of a :class:`~latentstruct.data.sparse.SparseRows`, at
        once (``ConstraintPool.add_rows``); returns the ids."""
        before = self.pool.n_constraints
        ids = self.pool.add_rows(groups, rows, b)
        for g, k in zip(np.asarray(groups).tolist(), ids.tolist()):
            if k >= before:
                self._ids_of_group[g].append(k)
                before = k + 1
        return ids

    def drop_groups(self, groups) -> int:
        """Deactivate every constraint of ``groups`` (their duals to 0, ``w`` and the group
        sums recomputed): groups whose constraints no longer hold, such as the examples
        whose latent completion changed (a latent SSVM's next round starts from the rest).
        Returns how many constraints were dropped."""
        dropped = 0
        for g in np.asarray(groups, dtype=np.int64).tolist():
            for k in self._ids_of_group[g]:
                if self.pool.is_active(k):
                    self.pool.deactivate(k)
                    dropped += 1
            self._ids_of_group[g] = []
        if dropped:
            self._refresh()
        return dropped

    def group_constraint_ids(self, groups) -> np.ndarray:
        ids = [k for g in groups for k in self._ids_of_group[int(g)]]
        return np.asarray(ids, dtype=np.int64)

    def slacks(self, groups) -> np.ndarray:
        """``max(0, max_{k in g} b_k - w . d_k)`` for each group in ``groups`` under the live w."""
        groups = np.asarray(groups, dtype=np.int64)
        out = np.zeros(self.pool.n_groups)
        indptr, indices, data, b, group, _, _, _ = self.pool._view()
        group_slacks(indptr, indices, data, b, group, self.w,
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
        done, _ = dcd_epochs(indptr, indices, data, b, group, sqnorm, alpha, self.w, self._A,
                              self._half_inv_c, ids, state_i, state_f, rng_state, 0.0,
                              int(n_epochs), False, pair_ptr, pair_members, live, grad,
                              self._scratch)
        return int(done)

    def solve(self, *, tol: float = 0.1, max_iter: int = 1000, shrinking: bool = True) -> DCDResult:
        """A full :func:`solve_grouped_dcd` over the pool, then the live w is refreshed."""
        # The solve recomputes w from alpha and makes its own work row: the live w and the
        # sweeps' work row go first, so that no more than two weight-length vectors are held
        # at once (the sweeps make their row again when they next need it).
        self.w, self._scratch = None, np.zeros(0)
        try:
            res = solve_grouped_dcd(self.pool, self.C, tol=tol, max_iter=max_iter,
                                    shrinking=shrinking, random_state=self._rng)
        except BaseException:
            self._refresh()
            raise
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
    # d_i = y_i x_i: add_csr scales each row in the pass that checks it
    pool = ConstraintPool(max(X.shape[1], 1), X.shape[0])
    pool.add_csr(X, np.ones(X.shape[0]), np.arange(X.shape[0]), row_scale=y)
    return solve_grouped_dcd(
        pool, C, tol=tol, max_iter=max_iter, shrinking=shrinking, random_state=random_state
    )
