"""``SubgradientSSVM`` and ``SubgradientLatentSSVM``: (stochastic) subgradient descent on
the structured SVM's primal, without and with hidden variables; adaptors onto
``latentstruct.learners.SubgradientSSVM``."""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.learners.ssvm import subgradient
from latentstruct.params import BOOL, RANDOM_STATE, Interval, Options, Satisfies, validate_params
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS
from latentstruct.pystruct.learners.structure import ModelStructure


def label_accuracy(Y, Y_pred) -> float:
    """The fraction of labels predicted right, over all nodes of all examples."""
    right = sum(int(np.sum(np.asarray(y) == np.asarray(p))) for y, p in zip(Y, Y_pred))
    total = sum(int(np.size(y)) for y in Y)
    return right / total


__all__ = ["SubgradientSSVM", "SubgradientLatentSSVM"]

_SUBGRADIENT_CONSTRAINTS = {
    **COMMON_CONSTRAINTS,
    "momentum": [Interval(float, 0, 1, closed="left")],
    "learning_rate": [Interval(float, 0, None, closed="neither"), Options("auto")],
    "decay_exponent": [Interval(float, 0, None)],
    "decay_t0": [Interval(float, 0, None)],
    "break_on_no_constraints": [BOOL],
    "averaging": [Options("linear", "squared"), None],
    "shuffle": [BOOL],
    "random_state": RANDOM_STATE,
}


class _Subgradient(BaseSSVM):
    """What both learners share: ``latentstruct.learners.SubgradientSSVM`` on this model,
    each example's constraint taken against ``targets`` (None: ``Y`` itself)."""

    def _descend(self, X, Y, w, targets=None):
        learner = subgradient.SubgradientSSVM(
            ModelStructure(self.model, relaxed=False), C=self.C, max_iter=self.max_iter,
            learning_rate=self.learning_rate, momentum=self.momentum,
            decay_exponent=self.decay_exponent, decay_t0=self.decay_t0,
            batch_size=self.batch_size, averaging=self.averaging, shuffle=self.shuffle,
            break_on_no_constraints=self.break_on_no_constraints,
            random_state=self.random_state, n_jobs=self.n_jobs, check_inference=False)
        learner.fit(X, Y, coef_init=w, targets=targets, callback=self._callback(X, Y))
        self._take(learner)


class SubgradientSSVM(_Subgradient):
    """Structured SVM trained by stochastic subgradient descent on the primal (Ratliff,
    Bagnell and Zinkevich 2007; with ``learning_rate='auto'``, the Pegasos schedule of
    Shalev-Shwartz et al. 2007): ``latentstruct.learners.SubgradientSSVM`` (whose
    docstring states the problem and the algorithm) on this model, under PyStruct's
    parameters (``shuffle=False`` and ``random_state=None`` by default, as PyStruct's).

    Attributes: ``w``; ``objective_curve_`` (per epoch, ``C * sum of the slacks found`` plus
    ``1/2 ||w||^2``; the last entry is the primal at the final ``w``);
    ``primal_objective_curve_`` (the final primal).
    """

    _parameter_constraints = {
        **_SUBGRADIENT_CONSTRAINTS,
        "batch_size": [Interval(int, 1, None), Satisfies(lambda v: v == -1, "-1"), None],
    }

    def __init__(self, model, max_iter=100, C=1.0, verbose=0, momentum=0.0,
                 learning_rate="auto", n_jobs=1, show_loss_every=0, decay_exponent=1,
                 break_on_no_constraints=True, logger=None, batch_size=None, decay_t0=10,
                 averaging=None, shuffle=False, random_state=None):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.momentum = momentum
        self.learning_rate = learning_rate
        self.decay_exponent = decay_exponent
        self.break_on_no_constraints = break_on_no_constraints
        self.batch_size = batch_size
        self.decay_t0 = decay_t0
        self.averaging = averaging
        self.shuffle = shuffle
        self.random_state = random_state

    def fit(self, X, Y, constraints=None, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labellings ``Y``; ``warm_start`` (True or ``"soft"``)
        starts from the current ``w``.  ``constraints`` must be None (no working set)."""
        if constraints is not None:
            raise ConfigError(f"{type(self).__name__}.fit: constraints=... is not supported "
                              f"(subgradient descent keeps no working set); pass None")
        validate_params(type(self).__name__, {"warm_start": [BOOL, Options("soft")]},
                        {"warm_start": warm_start})
        Y = self._start(X, Y, initialize)
        self._descend(X, Y, self.w if warm_start else None)
        self._finish()
        return self


class SubgradientLatentSSVM(_Subgradient):
    """Latent structured SVM trained by stochastic subgradient descent on its (non-convex)
    primal, the hidden states of each example re-imputed at the current ``w`` before each
    of its steps: ``latentstruct.learners.SubgradientSSVM`` with those imputed states as
    each step's targets.

    Problem (Yu and Joachims 2009)::

        min_w  1/2 ||w||^2 + C sum_i ( max_h [loss(y_i, h) + w . phi(x_i, h)]
                                        - max_{h consistent with y_i} w . phi(x_i, h) )

    Each example's constraint is taken against its best completion ``h_i =
    model.latent(x_i, y_i, w)``.  A ``w`` set before ``fit`` (of the model's size) is the
    starting point.  Otherwise training starts at ``w = 0``, where the hidden states are
    symmetric, and the first pass takes its completions from ``H_init`` or
    ``model.init_latent`` (k-means for the latent CRFs); PyStruct started at a random
    normal ``w`` instead, which made its results depend on numpy's global random state.
    ``predict`` returns ``model.label_from_latent`` of the inference.
    """

    _parameter_constraints = {**_SUBGRADIENT_CONSTRAINTS}

    def __init__(self, model, max_iter=100, C=1.0, verbose=0, momentum=0.0, learning_rate="auto",
                 n_jobs=1, show_loss_every=0, decay_exponent=1, decay_t0=10,
                 break_on_no_constraints=True, logger=None, averaging=None, shuffle=False,
                 random_state=None):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.momentum = momentum
        self.learning_rate = learning_rate
        self.decay_exponent = decay_exponent
        self.decay_t0 = decay_t0
        self.break_on_no_constraints = break_on_no_constraints
        self.averaging = averaging
        self.shuffle = shuffle
        self.random_state = random_state

    batch_size = None  # one example at a time: its hidden states move with w
    _takes_labels = True  # Y are labels; the states are imputed from them

    def fit(self, X, Y, H_init=None, warm_start=False, initialize=True):
        """Train on inputs ``X`` and labels ``Y``.  Without a ``w`` set before (or with
        ``warm_start=False`` and a ``w`` of another size) training starts at ``w = 0`` and
        takes the first pass's completions from ``H_init`` (default
        ``model.init_latent(X, Y)``)."""
        validate_params(type(self).__name__, {"warm_start": [BOOL, Options("soft")]},
                        {"warm_start": warm_start})
        Y = self._start(X, Y, initialize)
        size = self.model.size_joint_feature
        start = getattr(self, "w", None)
        first = None
        if start is None or np.shape(start) != (size,):
            # at w = 0 every hidden state scores alike: each completion would put all
            # hidden nodes in one state and the descent could never tell the states
            # apart, so the first pass takes its completions from an initialisation
            start = np.zeros(size)
            H = self.model.init_latent(X, Y) if H_init is None else H_init
            if len(H) != len(X):
                raise ConfigError(f"SubgradientLatentSSVM.fit: H_init has {len(H)} entries "
                                  f"for {len(X)} inputs; pass one hidden labelling per input")
            first = list(self._labels(X, H, name="H_init", latent=False))

        def targets(indices, w, epoch):
            if epoch == 0 and first is not None:
                return [first[i] for i in indices]
            return [self.model.latent(X[i], Y[i], w) for i in indices]

        # every constraint is taken against the imputed hidden states (targets)
        self._descend(X, Y, np.asarray(start, dtype=np.float64), targets)
        self._finish()
        return self

    def predict(self, X):
        """The labels of the inference's hidden states (``model.label_from_latent``)."""
        return [self.model.label_from_latent(h) for h in super().predict(X)]

    def predict_latent(self, X):
        """The inference's states, hidden ones included."""
        return super().predict(X)

    def score(self, X, Y):
        """The fraction of labels predicted right, over all nodes."""
        return label_accuracy(self._check_score_data(X, Y), self.predict(X))
