"""The one-hot structural SVM trained by mini-batch SGD: DISTRO's baseline (Srikumar &
Manning 2014, §5: "we compare to structural SVMs, i.e. the case of one-hot label vectors").

Same objective, schedule and mini-batches as DISTRO's w-step, on the task's ordinary
one-hot features; DISTRO with A fixed to the identity reproduces it (a test checks this).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from tqdm.auto import tqdm

from ..data.progress import bar_disable
from ..exceptions import InexactInferenceWarning, InferenceError, InputError, user_stacklevel
from ..solvers.structured_sgd import check_eta0, minibatches, search_eta0, step_size
from ..tasks.contracts import MAX_DECODABLE
from .base import (LinearStructuredLearner, check_nonnegative, check_positive_int,
                   register_learner)

from .checkpoint import CheckpointSession
from .checkpoint_state import rng_from_state, rng_state
from .params import BOOL, PASSES, SEED, Interval, Options

__all__ = ["SGDStructuredSVM"]

_INFERENCE_SLACK = 1e-7
_RESCALE_BELOW = 1e-9


@register_learner("sgd-ssvm")
class SGDStructuredSVM(LinearStructuredLearner):
    """Margin-rescaled structural SVM with L1 slacks, trained by mini-batch Pegasos SGD.

    Optimisation problem::

        min_w  lambda1/2 ||w||^2 + (1/N) sum_i max_y [Delta(y, y_i) + w.(Phi(x_i, y) - Phi(x_i, y_i))]

    (DISTRO's Eq. 5 with one-hot labels), by ``n_epochs`` epochs of the update
    ``w <- (1 - eta_t lambda1) w - (eta_t/|B|) sum_B (Phi(x, y_hat) - Phi(x, y))`` with
    ``eta_t = eta0 / (1 + eta0 lambda1 t)`` over shuffled mini-batches B (the authors'
    ``SGDLearner``; see :mod:`latentstruct.solvers.structured_sgd`).

    Parameters
    ----------
    task : StructuredTask
        A fitted task with loss-augmented argmax (max-decodable).
    lambda1 : float, default 0.25
        Weight of the L2 penalty (DISTRO's lambda1).
    n_epochs : int, default 25
        Passes over the data (the paper gives the baseline 25).
    batch_size : int, default 20
        Examples per mini-batch.
    eta0 : "auto" or float, default "auto"
        Initial step size; "auto" runs Bottou's doubling/halving search on a 10% sample.
    random_state : int, default 0
        Seeds the mini-batch order and the eta0 sample.
    check_inference : bool, default True
        Raise when a loss-augmented decode scores below the gold structure.
    progress : bool, default False
        Show a progress bar over epochs with the objective.
    """

    requires = frozenset({MAX_DECODABLE})
    evaluation_params = frozenset({"progress"})

    _parameter_constraints = {
        "lambda1": [Interval(float, 0, None, closed="left")],
        "n_epochs": [PASSES],
        "batch_size": [Interval(int, 1, None, closed="left")],
        "eta0": [Options("auto"), Interval(float, 0, None, closed="neither")],
        # an int: it also seeds the eta0 sample, as default_rng([random_state, 1])
        "random_state": [SEED], "check_inference": [BOOL], "progress": [BOOL],
    }

    def __init__(self, task=None, lambda1=0.25, n_epochs=25, batch_size=20, eta0="auto",
                 random_state=0, check_inference=True, progress=False):
        self.task = task
        self.lambda1 = lambda1
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.eta0 = eta0
        self.random_state = random_state
        self.check_inference = check_inference
        self.progress = progress

    def _epochs(self, w_state, X, Y, idx_all, n_epochs, rng, eta0, bar=None, t=0) -> int:
        """Run SGD epochs over examples ``idx_all`` from step ``t``; ``w_state = [v, scale]``
        is updated.  Returns the step count after them."""
        task, lam = self.task, self._lambda1
        for _ in range(n_epochs):
            for b in minibatches(idx_all.size, self.batch_size, rng):
                idx = idx_all[b]
                v, scale = w_state
                Xb = task.subset(X, idx)
                Yb = [Y[i] for i in idx]
                preds = task.argmax_batch(Xb, scale * v, Yb)
                eta = step_size(eta0, lam, t)
                scale *= 1.0 - eta * lam
                if scale < _RESCALE_BELOW:
                    v *= scale
                    scale = 1.0
                c = eta / idx.size / scale
                for k, i in enumerate(idx):
                    diff = task.joint_feature_difference(Xb[k], preds[k], Yb[k])
                    np.add.at(v, diff.indices, -c * diff.values)
                w_state[1] = scale
                t += 1
            if bar is not None:
                bar.update(1)
        return t

    def _objective(self, w, X, Y, idx_all) -> float:
        task = self.task
        total = 0.0
        for a in range(0, idx_all.size, 4096):
            idx = idx_all[a : a + 4096]
            Xb = task.subset(X, idx)
            Yb = [Y[i] for i in idx]
            preds = task.argmax_batch(Xb, w, Yb)
            for k in range(idx.size):
                diff = task.joint_feature_difference(Xb[k], preds[k], Yb[k])
                h = task.loss(Yb[k], preds[k]) + float(diff.values @ w[diff.indices])
                if h < -_INFERENCE_SLACK * (1.0 + abs(h)):
                    self.n_inexact_decodes_ += 1
                    if self.check_inference:
                        raise InferenceError(
                            f"loss-augmented argmax of example {int(idx[k])} scores {-h:.3g} "
                            "below the gold structure: the task's decoder is not exact; pass "
                            "check_inference=False to continue anyway")
                total += max(h, 0.0)
        return 0.5 * self._lambda1 * float(w @ w) + total / max(idx_all.size, 1)

    def fit(self, X, Y, *, checkpoint=None, resume=None) -> "SGDStructuredSVM":
        """Learn ``coef_`` from examples ``X`` and encoded structures ``Y``; returns self.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the weights, the step count and the random state after every epoch;
        ``resume`` continues from such a file to the model an uninterrupted run gives."""
        self._validate_params()
        self._lambda1 = check_nonnegative("lambda1", self.lambda1)
        check_positive_int("n_epochs", self.n_epochs)
        check_positive_int("batch_size", self.batch_size)
        eta0 = check_eta0(self.eta0, self._lambda1)
        task = self._check_task()
        X = task.as_batch(X)
        n = len(X)
        if n == 0:
            raise InputError("no training examples")
        if len(Y) != n:
            raise InputError(f"X has {n} examples but Y has {len(Y)} structures")
        Y = list(Y)
        self.n_inexact_decodes_ = 0
        t0 = time.perf_counter()
        everyone = np.arange(n)
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        if session.resuming:
            self._resume(session, X, Y, everyone, t0)
            return self
        if eta0 == "auto":
            srng = np.random.default_rng([self.random_state, 1])
            m = min(n, max(self.batch_size * 5, n // 10))
            sample = np.sort(srng.choice(n, size=m, replace=False))

            def trial(e):
                state = [np.zeros(task.n_features), 1.0]
                self._epochs(state, X, Y, sample, 1, np.random.default_rng(0), e)
                return self._objective(state[0] * state[1], X, Y, sample)

            eta0, self.eta0_trials_ = search_eta0(trial, self._lambda1)
            trials = self.eta0_trials_
        else:
            trials = None
        self.eta0_ = float(eta0)
        rng = np.random.default_rng(self.random_state)
        state = [np.zeros(task.n_features), 1.0]
        self._train(session, state, X, Y, everyone, rng, 0, 0, t0, trials)
        return self

    def _resume(self, session, X, Y, everyone, t0) -> None:
        meta, arrays = session.state
        self.eta0_ = float(meta["eta0"])
        trials = None
        if meta["eta0_trials"] is not None:
            trials = self.eta0_trials_ = {float(k): float(v) for k, v in meta["eta0_trials"]}
        self.n_inexact_decodes_ = int(meta["n_inexact_decodes"])
        state = [arrays["v"].copy(), float(meta["scale"])]
        self._train(session, state, X, Y, everyone, rng_from_state(meta["rng"]), int(meta["t"]),
                    session.iteration, t0, trials)

    def _train(self, session, state, X, Y, everyone, rng, t, epochs_done, t0, trials) -> None:
        """Epochs ``epochs_done + 1 .. n_epochs`` (a checkpoint after each), then the results;
        ``trials`` is the eta0 search's record (kept in the checkpoints)."""
        bar = tqdm(total=self.n_epochs, initial=min(epochs_done, self.n_epochs), desc="sgd-ssvm",
                   unit="epoch", disable=bar_disable(self.progress), leave=False)
        try:
            for epoch in range(epochs_done + 1, int(self.n_epochs) + 1):
                t = self._epochs(state, X, Y, everyone, 1, rng, self.eta0_, bar, t=t)
                if session.active:
                    meta = {"eta0": self.eta0_, "t": t, "scale": state[1], "rng": rng_state(rng),
                            "n_inexact_decodes": self.n_inexact_decodes_,
                            "eta0_trials": None if trials is None else
                            [[k, v] for k, v in trials.items()]}
                    session.save(epoch, meta, {"v": state[0]}, done=epoch == self.n_epochs)
        finally:
            bar.close()
        self.coef_ = state[0] * state[1]
        self.objective_curve_ = [self._objective(self.coef_, X, Y, everyone)]
        self.n_iter_ = int(self.n_epochs)
        self.fit_seconds_ = time.perf_counter() - t0
        if self.n_inexact_decodes_:
            warnings.warn(f"{self.n_inexact_decodes_} loss-augmented decodes scored below the "
                          "gold structure", InexactInferenceWarning, stacklevel=user_stacklevel())
