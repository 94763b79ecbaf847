"""Structural SVM with squared slacks, trained by cutting planes over the grouped DCD engine."""

from __future__ import annotations

import time

import numpy as np
from tqdm.auto import tqdm

from ..exceptions import ConfigError, warn_convergence
from ..solvers.dcd import ConstraintPool, solve_grouped_dcd
from .base import (
    LinearStructuredLearner,
    check_positive,
    check_positive_int,
    raise_inexact_decoder,
    register_learner,
)

__all__ = ["StructuredSVM"]

# A loss-augmented structure must beat the gold one; allow for float rounding only.
_INFERENCE_SLACK = 1e-7


@register_learner("ssvm")
class StructuredSVM(LinearStructuredLearner):
    """Margin-rescaled structural SVM with squared (L2) slacks.

    Optimisation problem::

        min_w  1/2 ||w||^2 + C sum_i xi_i^2
        s.t.   w . (Phi(x_i, y_i) - Phi(x_i, y)) >= Delta(y_i, y) - xi_i   for all i, y

    solved by the n-slack cutting-plane method (Tsochantaridis et al. 2005): each outer
    iteration runs loss-augmented inference on every example, adds the most violated
    structure of each example to a persistent working set (one slack group per example),
    and re-solves the working-set QP with the grouped squared-hinge dual coordinate
    descent (J-LIS Algorithm 3; it is J-LIS Eq. (9) with B empty).  The working set and its
    dual variables persist across outer iterations, so every QP solve is warm.

    Because inference is exact, ``objective_curve_[t]`` is the true primal objective of the
    weights at iteration t, and the working-set dual lower-bounds the optimum, so training
    stops at a certified relative duality gap ``tol``.

    Parameters
    ----------
    task : StructuredTask
        A fitted task (it defines Phi, Delta and the argmax).
    C : float, default 0.1
        Cost of the squared slacks.
    tol : float, default 1e-3
        Relative duality gap ``(primal - dual) / primal`` at which training stops.
    max_iter : int, default 50
        Maximum number of outer (cutting-plane) iterations.
    inner_tol, inner_max_iter : float, int
        Projected-gradient tolerance and epoch limit of each DCD solve.
    shrinking : bool, default True
        LIBLINEAR shrinking inside DCD.
    n_jobs : int, default 1
        Parallel inference over examples (joblib).
    random_state : None, int or Generator
        Seeds DCD's permutations.
    check_inference : bool, default True
        Raise ``InferenceError`` when a loss-augmented argmax scores below the gold
        structure (an inexact or inconsistent decoder).
    progress : bool, default False
        Show a progress bar over outer iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, outer iterations run
    objective_curve_ : list of float, primal objective at each outer iteration
    dual_curve_ : list of float, working-set dual after each outer iteration's solve
    n_constraints_ : int, size of the final working set
    """

    def __init__(
        self,
        task=None,
        C=0.1,
        tol=1e-3,
        max_iter=50,
        inner_tol=0.1,
        inner_max_iter=100,
        shrinking=True,
        n_jobs=1,
        random_state=None,
        check_inference=True,
        progress=False,
    ):
        self.task = task
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.inner_max_iter = inner_max_iter
        self.shrinking = shrinking
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.check_inference = check_inference
        self.progress = progress

    def _validate(self, X, Y):
        task = self._check_task()
        C = check_positive("C", self.C)
        check_positive("tol", self.tol)
        check_positive("inner_tol", self.inner_tol)
        check_positive_int("max_iter", self.max_iter)
        check_positive_int("inner_max_iter", self.inner_max_iter)
        if len(X) != len(Y):
            raise ConfigError(f"X has {len(X)} examples but Y has {len(Y)}")
        if len(X) == 0:
            raise ConfigError("cannot fit on zero examples")
        return task, C

    def fit(self, X, Y):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``."""
        task, C = self._validate(X, Y)
        n, n_features = len(X), task.n_features
        rng = np.random.default_rng(self.random_state)
        pool = ConstraintPool(n_features, n)
        w = np.zeros(n_features)
        dual = 0.0
        self.objective_curve_, self.dual_curve_ = [], []
        converged = False
        bar = tqdm(total=self.max_iter, desc="ssvm", unit="iter", disable=not self.progress,
                   leave=False)
        t_start = time.perf_counter()
        it = 0
        for it in range(1, self.max_iter + 1):
            Y_hat = self._decode(X, w, Y)
            diffs, losses = [], np.zeros(n)
            for i in range(n):
                losses[i] = task.loss(Y[i], Y_hat[i])
                diffs.append(task.joint_feature_difference(X[i], Y[i], Y_hat[i]) if losses[i] else None)
            margins = np.array([0.0 if d is None else d.dot(w) for d in diffs])
            violation = losses - margins
            if self.check_inference:
                bad = np.flatnonzero(violation < -_INFERENCE_SLACK * np.maximum(1.0, np.abs(margins)))
                if bad.size:
                    raise_inexact_decoder("loss-augmented", int(bad[0]), float(-violation[bad[0]]))
            xi = np.maximum(violation, 0.0)
            primal = 0.5 * float(w @ w) + C * float(xi @ xi)
            self.objective_curve_.append(primal)
            gap = (primal - dual) / max(primal, 1e-12)
            bar.set_postfix(objective=f"{primal:.4g}", gap=f"{gap:.2e}", ws=pool.n_active)
            bar.update(1)
            if gap <= self.tol:
                converged = True
                break
            # Slack each example already has in the working set: add only what exceeds it.
            ws_slack = np.zeros(n)
            if pool.n_active:
                ids = pool.active_ids()
                np.maximum.at(ws_slack, pool.group_of[ids], pool.b[ids] - pool.margins(w)[ids])
            added = 0
            for i in np.flatnonzero(xi > ws_slack + 1e-9):
                pool.add(int(i), diffs[i], float(losses[i]))
                added += 1
            if added == 0:
                converged = True
                break
            res = solve_grouped_dcd(
                pool, C, tol=self.inner_tol, max_iter=self.inner_max_iter,
                shrinking=self.shrinking, random_state=rng,
            )
            w, dual = res.w, res.dual
            self.dual_curve_.append(dual)
        bar.close()
        self.coef_ = w
        self.n_iter_ = it
        self.n_constraints_ = pool.n_active
        self.fit_time_ = time.perf_counter() - t_start
        if not converged:
            warn_convergence(
                f"StructuredSVM stopped at max_iter={self.max_iter} outer iterations with a "
                f"relative duality gap above tol={self.tol}; increase max_iter or tol."
            )
        return self
