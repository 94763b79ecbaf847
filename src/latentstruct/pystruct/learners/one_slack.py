"""``OneSlackSSVM``: the structured SVM trained by the one-slack cutting-plane method."""

from __future__ import annotations

import numpy as np

from latentstruct.params import Interval, Options, validate_params
from latentstruct.pystruct.learners.base import constraint_of
from latentstruct.pystruct.learners.cutting_plane import (CUTTING_PLANE_CONSTRAINTS,
                                                          INEXACT_TOL, WARM_STARTS,
                                                          CuttingPlaneSSVM)
from latentstruct.pystruct.learners.qp import WorkingSet

__all__ = ["OneSlackSSVM"]


def _same_labelling(a, b) -> bool:
    """Whether two inference results are the same labelling (or the same marginals)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(np.array_equal(p, q) for p, q in zip(a, b)))
    return np.array_equal(a, b)


class OneSlackSSVM(CuttingPlaneSSVM):
    """Structured SVM with one slack shared by all examples, trained by the one-slack
    cutting-plane method (Joachims, Finley and Yu 2009, Algorithm 4, margin rescaling), the
    QP over the working set solved exactly.

    Problem (the same optimum as the n-slack SVM's)::

        min_{w, xi >= 0}  1/2 ||w||^2 + C xi
        s.t.  w . sum_i (joint_feature(x_i, y_i) - joint_feature(x_i, ybar_i))
                  >= sum_i loss(y_i, ybar_i) - xi     for every choice of labellings ybar.

    Algorithm: each iteration forms one constraint, the sum over the examples of each one's
    most violated labelling.  With ``inference_cache > 0`` the labellings the inference
    returned are cached per example (the last ``inference_cache`` distinct labellings) and
    the constraint is first built from the best cached labelling of each example; it is used
    when it beats the working set's slack by more than ``cache_tol`` (``'auto'``: ``tol``)
    and is not in the working set already, else the inference runs.  With ``'auto'`` the
    cache is also skipped while the last iteration's gap (its constraint's primal at the
    old ``w`` minus the new dual) is under a quarter of the gap of the last iteration that
    ran the inference (PyStruct's rule).  A constraint from the inference that beats the
    working set's slack by less than ``tol`` ends training (or switches to ``switch_to``
    once).  Otherwise the constraint joins the working set and the dual QP is solved exactly
    (HiGHS).  Both tolerances are on the examples' mean violation, as PyStruct's (the
    constraint here sums over the examples where PyStruct's averages).  Constraints whose
    dual variable stays below ``inactive_threshold * C`` for more than ``inactive_window``
    solves are removed (0 keeps them all).

    Besides ``BaseSSVM``'s parameters (``model``, ``max_iter``, ``C``, ``verbose``,
    ``n_jobs``, ``show_loss_every``, ``logger``), it takes those below.

    Parameters
    ----------
    check_constraints : bool
        Never add a constraint already in the working set (training stops instead), and
        warn when the inference's constraint is less violated than the working set's
        (inexact inference).
    negativity_constraint : list of int or None
        Weights held ``<= 0``.
    break_on_bad : bool
        Stop when the check above finds inexact inference.
    tol : float
        Convergence: the inference's constraint beats the working set's slack by less than
        this (per example).
    inference_cache : int
        Labellings cached per example (0: no cache).
    cache_tol : float or 'auto'
        How much (per example) a cached constraint must beat the working set's slack to be
        used without inference; ``'auto'``: ``tol``, and the gap rule above.
    inactive_threshold, inactive_window, switch_to : as above.

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

    # -- the inference cache ---------------------------------------------------------------
    def _cache_add(self, i, y_hat, d, loss):
        """Cache example ``i``'s labelling ``y_hat`` unless that labelling is there."""
        entries = self._cache[i]
        for _, _, y_old in entries:
            if _same_labelling(y_old, y_hat):
                return
        entries.append((d, loss, y_hat))
        if len(entries) > self.inference_cache:
            entries.pop(0)

    def _from_cache(self, w):
        """The constraint built from each example's best cached labelling, or None."""
        if not self.inference_cache or any(not c for c in self._cache):
            return None
        d_sum = np.zeros_like(w)
        b_sum = 0.0
        for entries in self._cache:
            slacks = [loss - w @ d for d, loss, _ in entries]
            d, loss, _ = entries[int(np.argmax(slacks))]
            d_sum += d
            b_sum += loss
        return d_sum, b_sum

    @property
    def inference_cache_(self):
        return [[y_hat for _, _, y_hat in entries] for entries in getattr(self, "_cache", [])]

    # -- training --------------------------------------------------------------------------
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
        n = len(X)
        size = self.model.size_joint_feature
        neg = self._negativity()
        w = np.asarray(self.w, dtype=np.float64).copy() if warm_start else np.zeros(size)
        self._switched = False
        old_cache = getattr(self, "_cache", None) if warm_start else None
        if warm_start is True and getattr(self, "_ws", None) is not None:
            pass  # keep the working set and the cache as they are
        else:
            self._ws = WorkingSet(size)
            self._cache = [[] for _ in range(n)]
            if old_cache is not None and self.inference_cache and len(old_cache) == n:
                for i, entries in enumerate(old_cache):
                    for _, _, y_hat in entries:
                        _, d, loss, _ = self._given(X[i], Y[i], y_hat, w)
                        self._cache_add(i, y_hat, d, loss)
        if constraints is not None:
            for d, loss in constraints:
                self._ws.add(np.asarray(d, dtype=np.float64), float(loss), 0)
        limits = np.array([float(self.C)])
        dual = 0.0
        if len(self._ws) or neg:
            solution = self._ws.solve(limits, neg)
            w, dual = solution.w, solution.dual
        self.w = w
        self.cached_constraint_ = []
        primal_at_w = None
        # the tolerances are on the examples' mean violation, as PyStruct's (its one
        # constraint is the mean over the examples, ours the sum)
        auto_cache = self.cache_tol == "auto"
        cache_tol_, last_gap = self.tol, np.inf
        for iteration in range(self.max_iter):
            current = self._ws.violation(w, 0)
            from_cache = False
            if not auto_cache or last_gap >= cache_tol_:
                cached = self._from_cache(w)
                if cached is not None:
                    d, b = cached
                    violation = b - w @ d
                    need = self.tol if auto_cache else self.cache_tol
                    from_cache = ((violation - current) / n >= need
                                  and not self._ws.contains(d, b, 0))
            if not from_cache:
                found = self._map(_one_slack_job, [self.model] * n, X, Y, [w] * n)
                d = np.sum([f[1] for f in found], axis=0)
                b = float(sum(f[2] for f in found))
                if self.inference_cache:
                    for i, (y_hat, d_i, loss_i, _) in enumerate(found):
                        self._cache_add(i, y_hat, d_i, loss_i)
                primal_at_w = float(self.C * max(b - w @ d, 0.0) + 0.5 * w @ w)
                self.primal_objective_curve_.append(primal_at_w)
                violation = b - w @ d
                if self.check_constraints and violation < current - INEXACT_TOL * max(1.0, current):
                    if self._bad_inference("the summed constraint"):
                        break
                if (violation - current) / n < self.tol:
                    if self._switch():
                        continue
                    break
                if self.check_constraints and self._ws.contains(d, b, 0):
                    self._say("iteration %d: the constraint is already in the working set",
                              iteration)
                    break
            w_before = w
            self._ws.add(d, b, 0)
            solution = self._ws.solve(limits, neg)
            w, dual = solution.w, solution.dual
            self.w = w
            primal_at_w = None
            # the gap between this constraint's primal at the old w and the new dual:
            # with cache_tol='auto' the cache is left for the inference once the gap falls
            # under a quarter of the last gap the inference saw (PyStruct's rule)
            last_gap = (float(self.C * max(violation, 0.0) + 0.5 * w_before @ w_before)
                        - dual)
            if not from_cache:
                cache_tol_ = last_gap / 4
            self._prune()
            self.objective_curve_.append(dual)
            self.cached_constraint_.append(bool(from_cache))
            self._tick()
            self._say("iteration %d: dual %.6g (%s)", iteration, dual,
                      "cached" if from_cache else "inference")
            self._after_iteration(X, Y, iteration)
        if primal_at_w is None:
            # the last entry must be the primal at the final w
            self.primal_objective_curve_.append(self._primal(X, Y, w, one_slack=True))
        self._finish()
        return self


def _one_slack_job(model, x, y, w):
    return constraint_of(model, x, y, w, relaxed=True)
