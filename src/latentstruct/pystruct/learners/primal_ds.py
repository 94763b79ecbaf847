"""``PrimalDSStructuredSVM``: the structured SVM's primal minimised by downhill simplex."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from latentstruct.params import Interval
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS
from latentstruct.pystruct.utils.objective import objective_primal

__all__ = ["PrimalDSStructuredSVM"]


class PrimalDSStructuredSVM(BaseSSVM):
    """Structured SVM whose unconstrained primal is minimised by Nelder and Mead's downhill
    simplex (SciPy's ``minimize(method="Nelder-Mead")``).

    Problem::

        min_w  1/2 ||w||^2 + C sum_i max_y [loss(y_i, y) - w . (phi(x_i, y_i) - phi(x_i, y))]

    Algorithm: Nelder-Mead from ``w = 0`` with an initial simplex of steps ``simplex_step``
    along each coordinate, at most ``max_iter`` simplex iterations; every evaluation runs the
    loss-augmented inference on every example.  It uses no gradient, so it suits only models
    with a handful of weights (a reference, not a practical learner).

    Attributes: ``w``; ``objective_curve_`` and ``primal_objective_curve_`` (the best
    objective after each simplex iteration, then the primal at the final ``w``).
    """

    _parameter_constraints = {**COMMON_CONSTRAINTS,
                              "simplex_step": [Interval(float, 0, None, closed="neither")]}

    def __init__(self, model, max_iter=100, C=1.0, verbose=0, n_jobs=1, show_loss_every=0,
                 logger=None, simplex_step=1.0):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.simplex_step = simplex_step

    def fit(self, X, Y, initialize=True):
        """Train on inputs ``X`` and labellings ``Y``."""
        Y = self._start(X, Y, initialize)
        size = self.model.size_joint_feature
        simplex = np.vstack([np.zeros(size), self.simplex_step * np.eye(size)])
        iteration = [0]

        def objective(w):
            return float(objective_primal(self.model, w, X, Y, self.C, n_jobs=self.n_jobs))

        def record(w):
            self.w = np.asarray(w, dtype=np.float64).copy()
            value = objective(self.w)
            self.objective_curve_.append(value)
            self.primal_objective_curve_.append(value)
            self._tick()
            self._after_iteration(X, Y, iteration[0])
            iteration[0] += 1

        result = minimize(objective, np.zeros(size), method="Nelder-Mead", callback=record,
                          options={"maxiter": self.max_iter, "initial_simplex": simplex,
                                   "xatol": 1e-8, "fatol": 1e-10})
        self.w = np.asarray(result.x, dtype=np.float64)
        final = objective(self.w)
        self.objective_curve_.append(final)
        self.primal_objective_curve_.append(final)
        self.n_iter_ = int(result.nit)
        self._finish()
        return self
