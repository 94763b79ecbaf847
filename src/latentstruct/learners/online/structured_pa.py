"""Structured passive-aggressive learning (Crammer et al. 2006) as CRFsuite runs it."""

from __future__ import annotations

import numpy as np

from ..base import register_learner
from ...solvers.online_rules import RULES
from .online import OnlineState
from .online_steps import STEP_LOOP_CONSTRAINTS, OnlineStepLearner
from ..params import BOOL, POSITIVE, Interval

__all__ = ["StructuredPA"]

_VARIANTS = {0: "pa", 1: "pa-i", 2: "pa-ii"}


@register_learner("pa")
class StructuredPA(OnlineStepLearner):
    """Online passive-aggressive learning of structures (Crammer, Dekel, Keshet,
    Shalev-Shwartz & Singer 2006, "Online Passive-Aggressive Algorithms": its cost-sensitive
    multiclass updates, with structures as the classes), in the form CRFsuite's ``pa`` algorithm trains a chain (sklearn-crfsuite's
    ``CRF(algorithm="pa")``); the parameters keep CRFsuite's names and defaults.

    Problem: after each example, the weights closest to the current ones under which the
    gold structure beats the predicted one by a margin that grows with the errors::

        w_{t+1} = argmin_w 1/2 ||w - w_t||^2 (+ c xi or c xi^2)
                  s.t.  w . (Phi(x, y) - Phi(x, y_hat)) >= sqrt(d) - xi

    where y_hat is the current prediction and d its number of errors (the task's loss:
    wrong labels for a sequence); with ``error_sensitive=False`` the required margin is 1.
    Algorithm (the loop of :mod:`~latentstruct.learners.online.online_steps`): decode
    y_hat = argmax_y w . Phi(x, y); when d > 0, with Delta = Phi(x, y) - Phi(x, y_hat) and
    the violation v = -w . Delta (>= 0),

    * cost ell = v + sqrt(d)  (``error_sensitive=True``), else ell = v + 1;
    * tau = ell / ||Delta||^2                 (``pa_type=0``, PA, no slack)
      tau = min(c, ell / ||Delta||^2)         (``pa_type=1``, PA-I)
      tau = ell / (||Delta||^2 + 1 / (2 c))   (``pa_type=2``, PA-II)
      (:func:`~latentstruct.solvers.online_rules.pa_tau`; a Delta of zero norm moves
      nothing);
    * w <- w + tau Delta.

    An epoch's summed cost ell is ``objective_curve_``'s entry and CRFsuite's "Loss"; the
    run stops when its mean over the examples is below ``epsilon``.  With ``averaging``
    ``coef_`` is the mean of the weight vectors after every step (one step per visited
    example, over all epochs), computed as the averaged perceptron does: u accumulates
    (s - 1) tau Delta for a step s, and after S steps the mean is w - u / S.  (CRFsuite
    divides by S + 1, counting the initial zero vector too: its weights are these times
    S / (S + 1), which predict the same structures.)

    ``task``, ``random_state``, ``shuffle``, ``n_jobs``, ``check_inference``, ``progress``,
    ``feature_set``, ``possible_states`` and ``possible_transitions`` are those of the loop
    (:class:`~latentstruct.learners.online.online_steps.OnlineStepLearner`).

    Parameters
    ----------
    pa_type : {0, 1, 2}, default 1
        CRFsuite's ``type``: 0 PA, 1 PA-I, 2 PA-II.
    c : float > 0, default 1
        The aggressiveness (slack cost) of PA-I and PA-II; not used by PA.
    error_sensitive : bool, default True
        Require a margin of sqrt(errors) rather than 1.
    averaging : bool, default True
        Predict with the averaged weights (else the last ones).
    max_iter : int, default 100
        CRFsuite's ``max_iterations``: epochs at most.
    epsilon : float >= 0, default 0
        Stop after an epoch whose mean cost is below it (0: never early).

    Attributes
    ----------
    See :class:`~latentstruct.learners.online.online_steps.OnlineStepLearner`.
    """

    _parameter_constraints = {
        **STEP_LOOP_CONSTRAINTS, "pa_type": [Interval(int, 0, 2)],
        "c": [POSITIVE], "error_sensitive": [BOOL],
        "averaging": [BOOL],
    }

    def __init__(self, structure=None, pa_type=1, c=1.0, error_sensitive=True, averaging=True,
                 max_iter=100, epsilon=0.0, random_state=0, shuffle=True, n_jobs=1,
                 check_inference=True, progress=False, feature_set="all", possible_states=False,
                 possible_transitions=True):
        self.structure = structure
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self._set_loop_params(max_iter, epsilon, random_state, shuffle, n_jobs,
                              check_inference, progress, feature_set, possible_states,
                              possible_transitions)

    def _new_state(self, n_features, rng):
        return OnlineState(w=np.zeros(n_features), rng=rng,
                           u=np.zeros(n_features) if self.averaging else None,
                           counters={"n_updates": 0})

    _rule = RULES["pa"]

    def _rule_params(self):
        return np.array([int(self.pa_type), float(self.c), float(bool(self.error_sensitive))])

    def _coef(self, state):
        if state.u is None or not self.averaging:
            return state.w.copy()
        return state.w - state.u / state.step
