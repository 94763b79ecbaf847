"""``SubgradientSSVM`` and ``SubgradientLatentSSVM``: (stochastic) subgradient descent on
the structured SVM's primal, without and with hidden variables."""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.params import BOOL, RANDOM_STATE, Interval, Options, Satisfies, validate_params
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS, constraint_of
from latentstruct.pystruct.learners.frank_wolfe import make_rng


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
    """The descent both learners share; ``_target(i, x, y, w)`` is what example ``i``'s
    constraint is taken against (``y`` itself, or its best hidden completion)."""

    _epoch = 0

    def _target(self, i, x, y, w):
        return y

    def _rate(self, t, batch):
        """The step size of update ``t`` (counted from 1) over a batch of ``batch``."""
        # 'auto' is PyStruct's: a base rate of C * n_samples, decayed like a given rate;
        # over a batch the direction sums |B| examples where PyStruct's averages them
        base = (self.C * self._n / batch if self.learning_rate == "auto"
                else self.learning_rate)
        return base / (self.decay_t0 + t - 1) ** self.decay_exponent

    def _descend(self, X, Y, w):
        n = len(X)
        self._n = n
        rng = make_rng(self.random_state)
        batch = n if self.batch_size == -1 else (self.batch_size or 1)
        velocity = np.zeros_like(w)
        average, weight_sum = w.copy(), 0.0
        t = 0
        for epoch in range(self.max_iter):
            self._epoch = epoch
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            slack_sum, violated = 0.0, 0
            for begin in range(0, n, batch):
                chunk = order[begin:begin + batch]
                targets = [self._target(i, X[i], Y[i], w) for i in chunk]
                found = self._map(_subgradient_job, [self.model] * len(chunk),
                                  [X[i] for i in chunk], targets, [w] * len(chunk))
                direction = -(len(chunk) / (self.C * n)) * w
                for _, d, _, slack in found:
                    if slack > 0:
                        direction += d
                        slack_sum += slack
                        violated += 1
                t += 1
                velocity = self.momentum * velocity + (1 - self.momentum) * direction
                w = w + self._rate(t, len(chunk)) * velocity
                if self.averaging is not None:
                    weight = float(t) if self.averaging == "linear" else float(t) ** 2
                    weight_sum += weight
                    average += (weight / weight_sum) * (w - average)
            self.w = average.copy() if self.averaging is not None else w.copy()
            self.objective_curve_.append(float(self.C * slack_sum + 0.5 * w @ w))
            self._tick()
            self._say("epoch %d: %d violated constraints", epoch, violated)
            self._after_iteration(X, Y, epoch)
            if violated == 0 and self.break_on_no_constraints:
                break
        return average if self.averaging is not None else w

    def _final_objective(self, X, Y):
        """The primal at the final ``w``, appended to both curves (the epochs' entries sum
        slacks found while ``w`` moved)."""
        self._epoch = None  # past the first pass: completions at the final w
        targets = [self._target(i, x, y, self.w) for i, (x, y) in enumerate(zip(X, Y))]
        value = self._primal(X, targets, self.w)
        self.objective_curve_.append(value)
        self.primal_objective_curve_.append(value)


def _subgradient_job(model, x, y, w):
    return constraint_of(model, x, y, w, relaxed=False)


class SubgradientSSVM(_Subgradient):
    """Structured SVM trained by stochastic subgradient descent on the primal (Ratliff,
    Bagnell and Zinkevich 2007; with ``learning_rate='auto'``, the Pegasos schedule of
    Shalev-Shwartz et al. 2007).

    Problem::

        min_w  1/2 ||w||^2 + C sum_i max_y [loss(y_i, y) - w . (phi(x_i, y_i) - phi(x_i, y))]

    Algorithm: for each batch B of examples (``batch_size``: None one at a time, -1 all of
    them), the loss-augmented inference gives each example's labelling ``y*``; the descent
    direction is ``g = sum_{i in B, slack > 0} (phi(x_i, y_i) - phi(x_i, y*)) - |B| w / (C n)``
    (minus the subgradient of the objective over ``C``, scaled to the batch); with momentum
    ``v <- momentum v + (1 - momentum) g`` and ``w <- w + eta_t v``, where ``eta_t =
    learning_rate / (decay_t0 + t - 1) ** decay_exponent`` after t updates; ``'auto'``
    is PyStruct's Pegasos-like schedule, a base ``learning_rate`` of ``C n / |B|``
    decayed so (PyStruct's ``C n`` on the batch's mean direction).  ``averaging`` returns the average of the iterates
    weighted by ``t`` (``'linear'``) or ``t^2`` (``'squared'``).  An epoch without a violated
    constraint ends training when ``break_on_no_constraints``.

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
        size = self.model.size_joint_feature
        w = np.asarray(self.w, dtype=np.float64).copy() if warm_start else np.zeros(size)
        self.w = self._descend(X, Y, w)
        self._final_objective(X, Y)
        self._finish()
        return self


class SubgradientLatentSSVM(_Subgradient):
    """Latent structured SVM trained by stochastic subgradient descent on its (non-convex)
    primal, the hidden states of each example re-imputed at the current ``w`` before each
    of its steps.

    Problem (Yu and Joachims 2009)::

        min_w  1/2 ||w||^2 + C sum_i ( max_h [loss(y_i, h) + w . phi(x_i, h)]
                                        - max_{h consistent with y_i} w . phi(x_i, h) )

    Algorithm: as ``SubgradientSSVM``, each example's constraint taken against its best
    completion ``h_i = model.latent(x_i, y_i, w)``.  A ``w`` set before ``fit`` (of the
    model's size) is the starting point.  Otherwise training starts at ``w = 0``, where
    the hidden states are symmetric, and the first pass takes its completions from
    ``H_init`` or ``model.init_latent`` (k-means for the latent CRFs); PyStruct started
    at a random normal ``w`` instead, which made its results depend on numpy's global
    random state.  ``predict`` returns ``model.label_from_latent`` of the inference.
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

    def _target(self, i, x, y, w):
        if self._epoch == 0 and self._first_targets is not None:
            return self._first_targets[i]
        return self.model.latent(x, y, w)

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
        self._first_targets = None
        if start is None or np.shape(start) != (size,):
            # at w = 0 every hidden state scores alike: each completion would put all
            # hidden nodes in one state and the descent could never tell the states
            # apart, so the first pass takes its completions from an initialisation
            start = np.zeros(size)
            H = self.model.init_latent(X, Y) if H_init is None else H_init
            if len(H) != len(X):
                raise ConfigError(f"SubgradientLatentSSVM.fit: H_init has {len(H)} entries "
                                  f"for {len(X)} inputs; pass one hidden labelling per input")
            self._first_targets = list(self._labels(X, H, name="H_init", latent=False))
        self.w = self._descend(X, Y, np.asarray(start, dtype=np.float64).copy())
        self._first_targets = None
        self._final_objective(X, Y)
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

