"""``LatentSSVM``: Yu and Joachims' latent structured SVM, by CCCP over a base learner."""

from __future__ import annotations

import time

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.params import BOOL, CALLABLE, NJOBS, Interval
from latentstruct.pystruct.learners.base import BaseSSVM
from latentstruct.pystruct.learners.cutting_plane import NSlackSSVM
from latentstruct.pystruct.learners.one_slack import OneSlackSSVM
from latentstruct.pystruct.learners.subgradient import SubgradientSSVM, label_accuracy

__all__ = ["LatentSSVM"]

#: the base learners that can restart from a w with new targets (warm_start="soft")
WARM_BASES = (OneSlackSSVM, NSlackSSVM, SubgradientSSVM)


def _latent_job(model, x, y, w):
    return model.latent(x, y, w)


class LatentSSVM(BaseSSVM):
    """Latent structured SVM (Yu and Joachims 2009) trained by the concave-convex procedure
    (CCCP), each convex step solved by a base learner.

    Problem::

        min_w  1/2 ||w||^2 + C sum_i ( max_h [loss(y_i, h) + w . phi(x_i, h)]
                                        - max_{h consistent with y_i} w . phi(x_i, h) )

    Algorithm: start from hidden states ``H_init`` (or ``model.init_latent(X, Y)``) and train
    the base learner on them; then repeat, at most ``latent_iter`` times in all: impute each
    example's best completion ``h_i = model.latent(x_i, y_i, w)``; stop if none changed;
    otherwise retrain the base learner on the new completions, starting from ``w`` (its
    ``warm_start="soft"``).  Each step cannot raise the objective above (CCCP, up to the base
    learner's tolerance); training also stops when no weight moved by more than ``tol``
    (not the objective's change: it can stall for a step while the hidden states still
    move towards a much better one).

    ``base_ssvm`` must be a ``OneSlackSSVM``, ``NSlackSSVM`` or ``SubgradientSSVM`` (those
    that restart from ``w`` with new targets); its model must offer ``init_latent``,
    ``latent`` and ``label_from_latent``.

    Attributes: ``w`` and ``model`` (the base learner's), ``H_`` (the last completions),
    ``objective_curve_`` (the base learner's final primal after each step), ``n_iter_``.
    """

    _parameter_constraints = {
        "latent_iter": [Interval(int, 1, None)],
        "verbose": [Interval(int, 0, None), BOOL],
        "tol": [Interval(float, 0, None)],
        "n_jobs": [NJOBS],
        "logger": [CALLABLE, None],
    }

    _takes_labels = True  # Y are labels; the base learner trains on the imputed states

    def __init__(self, base_ssvm, latent_iter=5, verbose=0, tol=.01, n_jobs=1, logger=None):
        self.base_ssvm = base_ssvm
        self.latent_iter = latent_iter
        self.verbose = verbose
        self.tol = tol
        self.n_jobs = n_jobs
        self.logger = logger

    @property
    def model(self):
        return self.base_ssvm.model

    @property
    def w(self):
        return getattr(self.base_ssvm, "w", None)

    def fit(self, X, Y, H_init=None, initialize=True):
        """Train on inputs ``X`` and labels ``Y``, from hidden states ``H_init``."""
        self._validate()
        if not isinstance(self.base_ssvm, WARM_BASES):
            raise ConfigError(f"LatentSSVM: base_ssvm is a {type(self.base_ssvm).__name__}; "
                              f"expected a OneSlackSSVM, NSlackSSVM or SubgradientSSVM (a learner "
                              f"that restarts from w with new hidden states)")
        self._check_data(X, Y)
        model = self.model
        if initialize:
            model.initialize(X, Y)
        Y = self._labels(X, Y)
        H = list(model.init_latent(X, Y) if H_init is None else H_init)
        if len(H) != len(X):
            raise ConfigError(f"LatentSSVM.fit: H_init has {len(H)} entries for {len(X)} "
                              f"inputs; pass one hidden labelling per input")
        if H_init is not None:
            H = list(self._labels(X, H, name="H_init", latent=False))
        self.objective_curve_, self.loss_curve_ = [], []
        self.timestamps_ = [time.time()]
        self.base_ssvm.fit(X, H, initialize=False)
        self.objective_curve_.append(self.base_ssvm.primal_objective_curve_[-1])
        self.n_iter_ = 1
        self._tick()
        if self.logger is not None:
            self.logger(self, 0)
        for iteration in range(1, self.latent_iter):
            H_new = self._map(_latent_job, [model] * len(X), X, Y, [self.w] * len(X))
            changed = sum(not np.array_equal(h, h_new) for h, h_new in zip(H, H_new))
            self._say("iteration %d: %d examples changed their hidden states", iteration, changed)
            if changed == 0:
                break
            H = H_new
            w_old = np.array(self.w, dtype=np.float64)
            self.base_ssvm.fit(X, H, warm_start="soft", initialize=False)
            self.objective_curve_.append(self.base_ssvm.primal_objective_curve_[-1])
            self.n_iter_ += 1
            self._tick()
            if self.logger is not None:
                self.logger(self, iteration)
            if np.max(np.abs(np.asarray(self.w) - w_old), initial=0.0) < self.tol:
                break
        self.H_ = H
        self._finish()
        return self

    def predict(self, X):
        """The labels of the inference's hidden states (``model.label_from_latent``)."""
        return [self.model.label_from_latent(h) for h in self.base_ssvm.predict(X)]

    def predict_latent(self, X):
        """The inference's hidden states."""
        return self.base_ssvm.predict(X)

    def score(self, X, Y):
        """The fraction of labels predicted right, over all nodes."""
        return label_accuracy(self._check_score_data(X, Y), self.predict(X))
