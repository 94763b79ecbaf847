"""The cutting-plane learners' shared part, and ``NSlackSSVM``: adaptors onto
``latentstruct.learners.NSlackSSVM`` and ``OneSlackSSVM``, which keep the working set
(``latentstruct.solvers.qp.WorkingSet``) and solve its QP exactly on HiGHS."""

from __future__ import annotations

import warnings

import numpy as np

from latentstruct.exceptions import ConfigError, InexactInferenceWarning
from latentstruct.learners.ssvm import n_slack
from latentstruct.params import BOOL, Interval, Options, Satisfies, validate_params
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS
from latentstruct.pystruct.learners.structure import ModelStructure

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


class CuttingPlaneSSVM(BaseSSVM):
    """What the cutting-plane learners share: the negativity constraints, the check of
    inference results against the working set, removal of inactive constraints and the
    switch of inference method at convergence."""

    def _negativity(self):
        neg = list(self.negativity_constraint or ())
        size = self.model.size_joint_feature
        bad = [j for j in neg if j >= size]
        if bad:
            raise ConfigError(f"negativity_constraint={list(neg)!r}: index {bad[0]} is out of "
                              f"range for the model's {size} weights; list indices below {size}")
        return neg

    def _run(self, general, X, Y, **hooks):
        """Train ``general`` (a learner of ``latentstruct.learners``) on this model with
        this learner's parameters and PyStruct's hooks, then take its state."""
        self._switched = False
        learner = general(ModelStructure(self.model, relaxed=True), C=self.C, tol=self.tol,
                          max_iter=self.max_iter, inactive_threshold=self.inactive_threshold,
                          inactive_window=self.inactive_window, n_jobs=self.n_jobs,
                          check_inference=False, **self._general_params())
        learner.fit(X, Y, nonpositive=self._negativity(), callback=self._callback(X, Y),
                    on_converge=self._switch, on_inexact=self._bad_inference, **hooks)
        self._take(learner)
        self._ws = learner.working_set_
        return learner

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
        inference was not exact there (a warning with ``check_constraints``)."""
        if not self.check_constraints:
            return False
        message = (f"{type(self).__name__}: the loss-augmented inference's result for {where} is "
                   f"less violated than a constraint already in the working set, so the "
                   f"inference was not exact")
        warnings.warn(message + ("; stopping (break_on_bad=True)" if self.break_on_bad else ""),
                      InexactInferenceWarning, stacklevel=5)
        return self.break_on_bad

    @property
    def constraints_(self):
        """The working set: ``(difference, loss)`` pairs (``(group, difference, loss)``
        triples for the n-slack SVM would repeat the example; see ``constraint_groups_``)."""
        ws = getattr(self, "_ws", None)
        if ws is None:
            return []
        return [(ws.row(k).to_dense(ws.n_features), float(ws.b[k])) for k in range(len(ws))]

    @property
    def constraint_groups_(self):
        ws = getattr(self, "_ws", None)
        return [] if ws is None else [int(g) for g in ws.group]


class NSlackSSVM(CuttingPlaneSSVM):
    """Structured SVM with one slack per example, trained by the n-slack cutting-plane
    method (Tsochantaridis et al. 2005, Algorithm 1, margin rescaling), the QP over the
    working set solved exactly: ``latentstruct.learners.NSlackSSVM`` (whose docstring
    states the problem and the algorithm) on this model, under PyStruct's parameters.

    Besides ``BaseSSVM``'s parameters (``model``, ``max_iter``, ``C``, ``verbose``,
    ``n_jobs``, ``show_loss_every``, ``logger``): ``check_constraints`` (warn when an
    inference result is less violated than the working set's: inexact inference),
    ``negativity_constraint`` (weights held ``<= 0``), ``break_on_bad`` (stop on such a
    result), ``batch_size`` (examples between QP solves, -1 a pass; PyStruct counted new
    constraints), ``tol``, ``inactive_threshold``, ``inactive_window``, ``switch_to``
    (inference method the model switches to at convergence, then training goes on).

    Attributes: ``w``, ``constraints_`` (the working set's ``(difference, loss)`` pairs),
    ``constraint_groups_`` (their examples), the curves of BaseSSVM (``objective_curve_``:
    the QP's dual objective after each pass).
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

    def _general_params(self):
        return {"batch_size": self.batch_size}

    def fit(self, X, Y, constraints=None, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labellings ``Y``.

        ``constraints``: a starting working set, one list of labellings per example.
        ``warm_start``: True continues from the last fit's ``w`` and working set (same
        ``Y``); ``"soft"`` keeps ``w`` and rebuilds the working set from the same labellings
        against the new ``Y`` (the latent SSVM's new hidden states).
        """
        validate_params(type(self).__name__, {"warm_start": WARM_STARTS},
                        {"warm_start": warm_start})
        Y = self._start(X, Y, initialize)
        old = getattr(self, "_ws", None) if warm_start else None
        hooks = {"coef_init": self.w if warm_start else None}
        if warm_start is True and old is not None:
            hooks["working_set"] = old
        else:
            seeds = [[] for _ in range(len(X))]
            if old is not None:
                for g, tag in zip(old.group, old.tags):
                    seeds[g].append(tag)
            for i, labellings in enumerate(constraints or ()):
                seeds[i].extend(labellings)
            hooks["constraints"] = seeds
        self._run(n_slack.NSlackSSVM, X, Y, **hooks)
        self._finish()
        return self
