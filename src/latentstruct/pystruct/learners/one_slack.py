"""``OneSlackSSVM``: the structured SVM trained by the one-slack cutting-plane method, an
adaptor onto ``latentstruct.learners.OneSlackSSVM``."""

from __future__ import annotations

import numpy as np

from latentstruct.learners.ssvm import one_slack
from latentstruct.params import Interval, Options, validate_params
from latentstruct.pystruct.learners.cutting_plane import (CUTTING_PLANE_CONSTRAINTS,
                                                          WARM_STARTS, CuttingPlaneSSVM)
from latentstruct.solvers.qp import WorkingSet

__all__ = ["OneSlackSSVM"]


class OneSlackSSVM(CuttingPlaneSSVM):
    """Structured SVM with one slack shared by all examples, trained by the one-slack
    cutting-plane method (Joachims, Finley and Yu 2009, Algorithm 4, margin rescaling), the
    QP over the working set solved exactly: ``latentstruct.learners.OneSlackSSVM`` (whose
    docstring states the problem and the algorithm, the inference cache included) on this
    model, under PyStruct's parameters.  Both tolerances are on the examples' mean
    violation, as PyStruct's (the constraint here sums over the examples where PyStruct's
    averages).

    Besides ``BaseSSVM``'s parameters (``model``, ``max_iter``, ``C``, ``verbose``,
    ``n_jobs``, ``show_loss_every``, ``logger``): ``check_constraints`` (warn when the
    inference's constraint is less violated than the working set's: inexact inference),
    ``negativity_constraint`` (weights held ``<= 0``), ``break_on_bad`` (stop then),
    ``tol``, ``inference_cache`` (labellings cached per example), ``cache_tol`` (float or
    ``'auto'``), ``inactive_threshold``, ``inactive_window``, ``switch_to``.

    Attributes: ``w``, ``constraints_`` (the working set's ``(difference, loss)`` pairs),
    ``inference_cache_`` (per example, the cached labellings), ``cached_constraint_`` (per
    iteration, whether its constraint came from the cache), the curves of BaseSSVM
    (``objective_curve_``: the QP's dual objective after each iteration's solve;
    ``primal_objective_curve_``: ``1/2 ||w||^2 + C max(0, sum of slacks)`` at each
    inference, then at the final ``w``).
    """

    _parameter_constraints = {
        **CUTTING_PLANE_CONSTRAINTS,
        "inference_cache": [Interval(int, 0, None)],
        "cache_tol": [Interval(float, 0, None), Options("auto")],
    }

    def __init__(self, model, max_iter=10000, C=1.0, check_constraints=False, verbose=0,
                 negativity_constraint=None, n_jobs=1, break_on_bad=False, show_loss_every=0,
                 tol=1e-3, inference_cache=0, inactive_threshold=1e-5, inactive_window=50,
                 logger=None, cache_tol="auto", switch_to=None):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.check_constraints = check_constraints
        self.negativity_constraint = negativity_constraint
        self.break_on_bad = break_on_bad
        self.tol = tol
        self.inference_cache = inference_cache
        self.inactive_threshold = inactive_threshold
        self.inactive_window = inactive_window
        self.cache_tol = cache_tol
        self.switch_to = switch_to

    def _general_params(self):
        return {"inference_cache": self.inference_cache, "cache_tol": self.cache_tol}

    @property
    def inference_cache_(self):
        return [[entry[0] for entry in entries] for entries in getattr(self, "_cache", [])]

    def fit(self, X, Y, constraints=None, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labellings ``Y``.

        ``constraints``: a starting working set, a list of ``(difference, loss)`` pairs.
        ``warm_start``: True continues from the last fit's ``w``, working set and cache
        (same ``Y``); ``"soft"`` keeps ``w`` and the cached labellings, recomputed against
        the new ``Y`` (the latent SSVM's new hidden states), and starts a new working set.
        """
        validate_params(type(self).__name__, {"warm_start": WARM_STARTS},
                        {"warm_start": warm_start})
        Y = self._start(X, Y, initialize)
        hooks = {"coef_init": self.w if warm_start else None, "working_set": None}
        old_cache = self.inference_cache_ if warm_start else []
        if len(old_cache) == len(X):
            hooks["cache"] = old_cache
        if warm_start is True and getattr(self, "_ws", None) is not None:
            hooks["working_set"] = self._ws
        if constraints is not None:
            ws = hooks["working_set"] or WorkingSet(self.model.size_joint_feature)
            for d, loss in constraints:
                ws.add(np.asarray(d, dtype=np.float64), float(loss), 0)
            hooks["working_set"] = ws
        learner = self._run(one_slack.OneSlackSSVM, X, Y, **hooks)
        self._cache = learner.cache_
        self.cached_constraint_ = learner.cached_constraint_
        self._finish()
        return self
