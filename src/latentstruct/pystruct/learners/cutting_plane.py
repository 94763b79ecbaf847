"""The cutting-plane learners' shared part, and ``NSlackSSVM``.

Both cutting-plane learners keep a working set of constraints (``qp.WorkingSet``), add the
most violated constraint the model's loss-augmented inference finds, and re-solve the QP
over the working set exactly (``qp.solve_dual``, HiGHS' QP solver).
"""

from __future__ import annotations

import warnings

import numpy as np

from latentstruct.exceptions import InexactInferenceWarning
from latentstruct.params import BOOL, Interval, Options, Satisfies
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS, constraint_of
from latentstruct.pystruct.learners.qp import WorkingSet
from latentstruct.pystruct.utils.objective import find_constraint

__all__ = ["CuttingPlaneSSVM", "NSlackSSVM", "CUTTING_PLANE_CONSTRAINTS"]


def _indices(value) -> bool:
    return all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and i >= 0
               for i in value)


def _switch_target(value) -> bool:
    if isinstance(value, str):
        return True
    return (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], dict))


CUTTING_PLANE_CONSTRAINTS = {
    **COMMON_CONSTRAINTS,
    "check_constraints": [BOOL],
    "negativity_constraint": [Satisfies(_indices, "a list of non-negative ints"), None],
    "break_on_bad": [BOOL],
    "tol": [Interval(float, 0, None)],
    "inactive_threshold": [Interval(float, 0, None)],
    "inactive_window": [Interval(int, 0, None)],
    "switch_to": [Satisfies(_switch_target, "an inference method: a str or a (str, dict) "
                                            "pair"), None],
}

WARM_STARTS = [BOOL, Options("soft")]

#: how far (relative) a found constraint may fall short of the working set before it counts
#: as inexact inference: the LP and ILP back-ends solve to about 1e-7
INEXACT_TOL = 1e-6


class CuttingPlaneSSVM(BaseSSVM):
    """What the cutting-plane learners share: the negativity constraints, the check of
    inference results against the working set, removal of inactive constraints and the
    switch of inference method at convergence."""

    def _negativity(self):
        neg = list(self.negativity_constraint or ())
        size = self.model.size_joint_feature
        bad = [j for j in neg if j >= size]
        if bad:
            from latentstruct.exceptions import ConfigError
            raise ConfigError(f"negativity_constraint={list(neg)!r}: index {bad[0]} is out of "
                              f"range for the model's {size} weights; list indices below {size}")
        return neg

    def _prune(self):
        """Age the constraints at the latest solve and drop those inactive too long
        (``inactive_window = 0`` keeps every constraint)."""
        self._ws.age(self.inactive_threshold * self.C)
        if self.inactive_window:
            self._ws.drop_inactive(self.inactive_window)

    def _switch(self) -> bool:
        """At convergence: switch to ``switch_to`` once (True) or stop (False)."""
        if self.switch_to is None or self._switched:
            return False
        self.model.inference_method = self.switch_to
        self._switched = True
        self._say("converged; switching inference to %r", self.switch_to)
        return True

    def _bad_inference(self, where):
        """A found constraint was less violated than one already in the working set: the
        inference was not exact there."""
        message = (f"{type(self).__name__}: the loss-augmented inference's result for {where} is "
                   f"less violated than a constraint already in the working set, so the "
                   f"inference was not exact")
        warnings.warn(message + ("; stopping (break_on_bad=True)" if self.break_on_bad else ""),
                      InexactInferenceWarning, stacklevel=3)
        return self.break_on_bad

    def _given(self, x, y, y_hat, w):
        """The constraint of a given labelling ``y_hat`` of ``(x, y)``."""
        _, d, _, loss = find_constraint(self.model, x, y, w, y_hat=y_hat)
        d = np.asarray(d, dtype=np.float64)
        return y_hat, d, float(loss), float(loss - w @ d)

    @property
    def constraints_(self):
        """The working set: ``(difference, loss)`` pairs (``(group, difference, loss)``
        triples for the n-slack SVM would repeat the example; see ``constraint_groups_``)."""
        ws = getattr(self, "_ws", None)
        if ws is None:
            return []
        return [(ws.D[k], float(ws.b[k])) for k in range(len(ws))]

    @property
    def constraint_groups_(self):
        ws = getattr(self, "_ws", None)
        return [] if ws is None else [int(g) for g in ws.group]


class NSlackSSVM(CuttingPlaneSSVM):
    """Structured SVM with one slack per example, trained by the n-slack cutting-plane
    method (Tsochantaridis et al. 2005, Algorithm 1 with slack rescaling replaced by margin
    rescaling) with the QP over the working set solved exactly.

    Problem::

        min_{w, xi >= 0}  1/2 ||w||^2 + C sum_i xi_i
        s.t.  w . (joint_feature(x_i, y_i) - joint_feature(x_i, y)) >= loss(y_i, y) - xi_i
              for every example i and labelling y.

    Algorithm: each pass visits the examples in order; for each, the model's
    loss-augmented inference gives the most violated labelling, whose constraint joins the
    working set if its slack exceeds the example's slack over the working set by more than
    ``tol``.  After every ``batch_size`` examples (-1: once per pass) with a new constraint,
    the dual QP over the working set is solved exactly (HiGHS).  A pass that adds nothing
    ends training (or switches to ``switch_to`` once).  Constraints whose dual variable
    stays below ``inactive_threshold * C`` for more than ``inactive_window`` solves are
    removed (0 keeps them all).

    Besides ``BaseSSVM``'s parameters (``model``, ``max_iter``, ``C``, ``verbose``,
    ``n_jobs``, ``show_loss_every``, ``logger``), it takes those below.

    Parameters
    ----------
    check_constraints : bool
        Never add a constraint already in the working set, and check that each found one is
        at least as violated as those there (a warning when not: inexact inference).
    negativity_constraint : list of int or None
        Weights held ``<= 0`` (a submodular pairwise potential).
    break_on_bad : bool
        Stop training when the check above finds inexact inference.
    batch_size : int
        Examples between QP solves (-1: a whole pass).  PyStruct counted new constraints;
        here it counts examples, so a pass's inference can run at one ``w`` in parallel.
    tol : float
        Slack by which a constraint must beat the working set to be added.
    inactive_threshold, inactive_window : as above.
    switch_to : inference method or None
        Method the model switches to at convergence, then training goes on.

    Attributes: ``w``, ``constraints_`` (the working set's ``(difference, loss)`` pairs),
    ``constraint_groups_`` (their examples), the curves of BaseSSVM (``objective_curve_``:
    the QP's dual objective after each pass's solves).
    """

    _parameter_constraints = {
        **CUTTING_PLANE_CONSTRAINTS,
        "batch_size": [Interval(int, 1, None), Satisfies(lambda v: v == -1, "-1")],
    }

    def __init__(self, model, max_iter=100, C=1.0, check_constraints=True, verbose=0,
                 negativity_constraint=None, n_jobs=1, break_on_bad=False, show_loss_every=0,
                 batch_size=100, tol=1e-3, inactive_threshold=1e-5, inactive_window=50,
                 logger=None, switch_to=None):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.check_constraints = check_constraints
        self.negativity_constraint = negativity_constraint
        self.break_on_bad = break_on_bad
        self.batch_size = batch_size
        self.tol = tol
        self.inactive_threshold = inactive_threshold
        self.inactive_window = inactive_window
        self.switch_to = switch_to

    def fit(self, X, Y, constraints=None, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labellings ``Y``.

        ``constraints``: a starting working set, one list of labellings per example.
        ``warm_start``: True continues from the last fit's ``w`` and working set (same
        ``Y``); ``"soft"`` keeps ``w`` and rebuilds the working set from the same labellings
        against the new ``Y`` (the latent SSVM's new hidden states).
        """
        from latentstruct.params import validate_params
        validate_params(type(self).__name__, {"warm_start": WARM_STARTS},
                        {"warm_start": warm_start})
        Y = self._start(X, Y, initialize)
        n = len(X)
        size = self.model.size_joint_feature
        neg = self._negativity()
        old = getattr(self, "_ws", None) if warm_start else None
        w = np.asarray(self.w, dtype=np.float64).copy() if warm_start else np.zeros(size)
        self._switched = False
        if warm_start is True and old is not None:
            self._ws = old
        else:
            self._ws = WorkingSet(size)
            seeds = [[] for _ in range(n)]
            if old is not None:
                for g, tag in zip(old.group, old.tags):
                    seeds[g].append(tag)
            if constraints is not None:
                for i, labellings in enumerate(constraints):
                    seeds[i].extend(labellings)
            for i, labellings in enumerate(seeds):
                for y_hat in labellings:
                    _, d, loss, _ = self._given(X[i], Y[i], y_hat, w)
                    if not self._ws.contains(d, loss, i):
                        self._ws.add(d, loss, i, tag=y_hat)
        limits = np.full(n, float(self.C))
        dual = 0.0
        if len(self._ws) or neg:
            solution = self._ws.solve(limits, neg)
            w, dual = solution.w, solution.dual
        self.w = w
        step = n if self.batch_size == -1 else self.batch_size
        for iteration in range(self.max_iter):
            w_at_start = w.copy()
            slacks = np.zeros(n)
            added = 0
            stop = False
            for begin in range(0, n, step):
                chunk = list(range(begin, min(n, begin + step)))
                found = self._map(_nslack_job, [self.model] * len(chunk), [X[i] for i in chunk],
                                  [Y[i] for i in chunk], [w] * len(chunk))
                new_here = 0
                for i, (y_hat, d, loss, slack) in zip(chunk, found):
                    slacks[i] = slack
                    current = self._ws.violation(w, i)
                    if self.check_constraints and slack < current - INEXACT_TOL * max(1.0, current):
                        stop = self._bad_inference(f"example {i}") or stop
                        continue
                    if slack <= current + self.tol:
                        continue
                    if self.check_constraints and self._ws.contains(d, loss, i):
                        continue
                    self._ws.add(d, loss, i, tag=y_hat)
                    new_here += 1
                if new_here:
                    added += new_here
                    solution = self._ws.solve(limits, neg)
                    w, dual = solution.w, solution.dual
                    self._prune()
                self.w = w
                if stop:
                    break
            self.objective_curve_.append(dual)
            self.primal_objective_curve_.append(
                float(self.C * np.maximum(slacks, 0).sum() + 0.5 * w_at_start @ w_at_start))
            self._tick()
            self._say("iteration %d: %d new constraints, dual %.6g", iteration, added, dual)
            self._after_iteration(X, Y, iteration)
            if stop:
                break
            if added == 0 and not self._switch():
                break
        if not np.array_equal(w, w_at_start) or stop:
            # the last pass moved w: its primal entry was not at the final w
            self.primal_objective_curve_.append(self._primal(X, Y, w))
        self._finish()
        return self


def _nslack_job(model, x, y, w):
    return constraint_of(model, x, y, w, relaxed=True)
