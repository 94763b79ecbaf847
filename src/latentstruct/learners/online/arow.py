"""AROW, adaptive regularization of weight vectors (Crammer et al. 2009), as CRFsuite
runs it on structures."""

from __future__ import annotations

import numpy as np

from ..base import register_learner
from ...solvers.online_rules import RULES
from .online import OnlineState
from .online_steps import STEP_LOOP_CONSTRAINTS, OnlineStepLearner
from ..params import POSITIVE

__all__ = ["AROW"]


@register_learner("arow")
class AROW(OnlineStepLearner):
    """Adaptive regularization of weight vectors (Crammer, Kulesza & Dredze 2009, "Adaptive
    Regularization of Weight Vectors") for structures, with a diagonal covariance, in the
    form CRFsuite's ``arow`` algorithm trains a chain (sklearn-crfsuite's
    ``CRF(algorithm="arow")``); the parameters keep CRFsuite's names and defaults.

    Problem: a Gaussian N(mu, Sigma) over weight vectors, updated after each example to
    trade closeness to the current one (a KL divergence) against a large, confident margin
    of the gold structure over the prediction::

        (mu, Sigma)_{t+1} = argmin KL(N(mu, Sigma) || N(mu_t, Sigma_t))
                            + 1/(2 gamma) ell(mu)^2 + 1/(2 gamma) Delta' Sigma Delta

    Algorithm (the loop of :mod:`~latentstruct.learners.online.online_steps`, predicting with
    the mean mu): decode y_hat = argmax_y mu . Phi(x, y); when it has d > 0 errors (the
    task's loss), with Delta = Phi(x, y) - Phi(x, y_hat) and the violation
    v = -mu . Delta (>= 0), Sigma diagonal with entries s_k:

    * cost ell = v + d (CRFsuite's structured hinge: the margin required is the number of
      errors);
    * alpha = ell / (gamma + sum_k s_k Delta_k^2)   (the paper's alpha = ell beta with
      beta = 1 / (Delta' Sigma Delta + r), r = gamma);
    * mu_k <- mu_k + alpha s_k Delta_k               (with the covariance before the step);
    * 1 / s_k <- 1 / s_k + Delta_k^2 / gamma         (the paper's Sigma^-1 update
      Sigma^-1 + x x' / r, kept diagonal as CRFsuite does).

    s starts at ``variance`` for every feature.  An epoch's summed cost is its entry of
    ``objective_curve_`` (CRFsuite's "Loss"); the run stops when its mean over the examples
    is at most ``epsilon`` (CRFsuite's ``arow`` tests ``<=``, where its ``pa`` tests ``<``: so
    the default 0 stops after the first epoch without a mistake, which changes nothing
    since AROW does not average).  There is no averaging: ``coef_`` is mu.  The covariance
    is part of the online state (``covariance_``, saved in model files), so ``partial_fit``
    and a loaded model continue exactly.

    The task and the loop's parameters (``random_state``, ``shuffle``, ``n_jobs``,
    ``check_inference``, ``progress``, ``feature_set``, ``possible_states``,
    ``possible_transitions``) are documented on :class:`~latentstruct.learners.
    online_steps.OnlineStepLearner`.

    Parameters
    ----------
    variance : float > 0, default 1
        The initial variance of every weight.
    gamma : float > 0, default 1
        The trade-off r: larger values change mu and Sigma less per step.
    max_iter : int, default 100
        CRFsuite's ``max_iterations``: epochs at most.
    epsilon : float >= 0, default 0
        Stop after an epoch whose mean cost is at most it (0: after an epoch without a
        mistake).

    Attributes
    ----------
    covariance_ : ndarray of shape (n_features,), the diagonal of Sigma
    and those of :class:`~latentstruct.learners.online.online_steps.OnlineStepLearner`.
    """

    stops_at_epsilon = True
    _parameter_constraints = {
        **STEP_LOOP_CONSTRAINTS, "variance": [POSITIVE],
        "gamma": [POSITIVE],
    }

    def __init__(self, structure=None, variance=1.0, gamma=1.0, max_iter=100, epsilon=0.0,
                 random_state=0, shuffle=True, n_jobs=1, check_inference=True,
                 progress=False, feature_set="all", possible_states=False,
                 possible_transitions=True):
        self.structure = structure
        self.variance = variance
        self.gamma = gamma
        self._set_loop_params(max_iter, epsilon, random_state, shuffle, n_jobs,
                              check_inference, progress, feature_set, possible_states,
                              possible_transitions)

    def _new_state(self, n_features, rng):
        return OnlineState(w=np.zeros(n_features), rng=rng, counters={"n_updates": 0},
                           arrays={"covariance": np.full(n_features, float(self.variance))})

    _rule = RULES["arow"]

    def _rule_params(self):
        return np.array([float(self.gamma)])

    def _coef(self, state):
        self.covariance_ = state.arrays["covariance"].copy()
        return state.w.copy()

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        if self._online is not None and "covariance" in self._online.arrays:
            self.covariance_ = self._online.arrays["covariance"].copy()
