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

from ...data.progress import bar_disable
from ...exceptions import InexactInferenceWarning, InferenceError, InputError, user_stacklevel
from ...solvers.structured_sgd import check_eta0, minibatches, search_eta0, step_size
from ...tasks.contracts import MAX_DECODABLE
from ..base import LinearStructuredLearner, register_learner

from ..checkpoint import CheckpointSession
from ..checkpoint_state import rng_from_state, rng_state
from ..online.online import OnlineLearnerMixin, OnlineState
from ..params import BOOL, NONNEGATIVE, PASSES, POSITIVE, SEED, Interval, Options, store_init_args

__all__ = ["SGDStructuredSVM"]

_INFERENCE_SLACK = 1e-7
_RESCALE_BELOW = 1e-9


@register_learner("sgd-ssvm")
class SGDStructuredSVM(OnlineLearnerMixin, LinearStructuredLearner):
    """Margin-rescaled structural SVM with L1 slacks, trained by mini-batch Pegasos SGD.

    Optimisation problem::

        min_w  lambda1/2 ||w||^2 + (1/N) sum_i max_y [Delta(y, y_i) + w.(Phi(x_i, y) - Phi(x_i, y_i))]

    (DISTRO's Eq. 5 with one-hot labels), by ``n_epochs`` epochs of the update
    ``w <- (1 - eta_t lambda1) w - (eta_t/|B|) sum_B (Phi(x, y_hat) - Phi(x, y))`` with
    ``eta_t = eta0 / (1 + eta0 lambda1 t)`` over shuffled mini-batches B (the authors'
    ``SGDLearner``; see :mod:`latentstruct.solvers.structured_sgd`).  ``partial_fit`` runs
    one epoch over a batch per call, continuing from the current weights and step counter
    (incremental learning).

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
    shuffle : bool, default True
        Cut each epoch's ``rng.permutation(n)`` into mini-batches (else the examples in the
        order given).
    check_inference : bool, default True
        Raise when a loss-augmented decode scores below the gold structure.
    progress : bool, default False
        Show a progress bar over epochs with the objective.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    eta0_ : float, the initial step size used
    n_iter_ : int, epochs run (``partial_fit``: passes made, one per call, after ``fit``'s)
    t_ : int, mini-batch steps made over all epochs and calls (the schedule's t)
    objective_curve_ : list of float, the objective after training (``partial_fit``: on
        each call's batch after its pass)
    n_inexact_decodes_ : int, loss-augmented decodes that scored below the gold structure
    fit_seconds_ : float
    """

    requires = frozenset({MAX_DECODABLE})
    evaluation_params = frozenset({"progress"})

    _parameter_constraints = {
        "lambda1": [NONNEGATIVE],
        "n_epochs": [PASSES],
        "batch_size": [Interval(int, 1, None, closed="left")],
        "eta0": [Options("auto"), POSITIVE],
        # an int: it also seeds the eta0 sample, as default_rng([random_state, 1])
        "random_state": [SEED], "shuffle": [BOOL], "check_inference": [BOOL],
        "progress": [BOOL],
    }

    def __init__(self, structure=None, lambda1=0.25, n_epochs=25, batch_size=20, eta0="auto",
                 random_state=0, shuffle=True, check_inference=True, progress=False):
        store_init_args(self, locals())

    def _epochs(self, w_state, X, Y, idx_all, n_epochs, rng, eta0, bar=None, t=0) -> int:
        """Run SGD epochs over examples ``idx_all`` from step ``t``; ``w_state = [v, scale]``
        is updated.  Returns the step count after them."""
        structure, lam = self._structure(), self._lambda1
        for _ in range(n_epochs):
            for b in minibatches(idx_all.size, self.batch_size, rng, shuffle=self.shuffle):
                idx = idx_all[b]
                v, scale = w_state
                Xb = structure.subset(X, idx)
                Yb = [Y[i] for i in idx]
                preds = structure.argmax_batch(Xb, scale * v, Yb)
                eta = step_size(eta0, lam, t)
                scale *= 1.0 - eta * lam
                if scale < _RESCALE_BELOW:
                    v *= scale
                    scale = 1.0
                c = eta / idx.size / scale
                for k, i in enumerate(idx):
                    diff = structure.joint_feature_difference(Xb[k], preds[k], Yb[k])
                    np.add.at(v, diff.indices, -c * diff.values)
                w_state[1] = scale
                t += 1
            if bar is not None:
                bar.update(1)
        return t

    def _objective(self, w, X, Y, idx_all) -> float:
        structure = self._structure()
        total = 0.0
        for a in range(0, idx_all.size, 4096):
            idx = idx_all[a : a + 4096]
            Xb = structure.subset(X, idx)
            Yb = [Y[i] for i in idx]
            preds = structure.argmax_batch(Xb, w, Yb)
            for k in range(idx.size):
                diff = structure.joint_feature_difference(Xb[k], preds[k], Yb[k])
                h = structure.loss(Yb[k], preds[k]) + float(diff.values @ w[diff.indices])
                if h < -_INFERENCE_SLACK * (1.0 + abs(h)):
                    self.n_inexact_decodes_ += 1
                    if self.check_inference:
                        raise InferenceError(
                            f"loss-augmented argmax of example {int(idx[k])} scores {-h:.3g} "
                            "below the gold structure: the task's decoder is not exact; pass "
                            "check_inference=False to continue anyway")
                total += max(h, 0.0)
        return 0.5 * self._lambda1 * float(w @ w) + total / max(idx_all.size, 1)

    def _check_params(self):
        """The task and eta0 ("auto" or a float); the hyperparameters were checked on
        entering fit (``params.fit_context``), what relates eta0 to lambda1 is here."""
        self._lambda1 = float(self.lambda1)
        eta0 = check_eta0(self.eta0, self._lambda1)
        return self._check_structure(), eta0

    @staticmethod
    def _check_data(structure, X, Y):
        X = structure.as_batch(X)
        n = len(X)
        if n == 0:
            raise InputError("no training examples")
        if len(Y) != n:
            raise InputError(f"X has {n} examples but Y has {len(Y)} structures")
        return X, list(Y)

    def _initial_eta0(self, structure, X, Y, eta0) -> float:
        """eta0 itself, or with "auto" the result of the search on a sample of ``X`` (its
        trials kept in ``eta0_trials_``)."""
        if eta0 != "auto":
            return eta0
        n = len(X)
        srng = np.random.default_rng([self.random_state, 1])
        m = min(n, max(self.batch_size * 5, n // 10))
        sample = np.sort(srng.choice(n, size=m, replace=False))

        def trial(e):
            state = [np.zeros(structure.n_features), 1.0]
            self._epochs(state, X, Y, sample, 1, np.random.default_rng(0), e)
            return self._objective(state[0] * state[1], X, Y, sample)

        eta0, self.eta0_trials_ = search_eta0(trial, self._lambda1)
        return eta0

    def fit(self, X, Y, *, checkpoint=None, resume=None) -> "SGDStructuredSVM":
        """Learn ``coef_`` from examples ``X`` and encoded structures ``Y``; returns self.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the weights, the step count and the random state after every epoch;
        ``resume`` continues from such a file to the model an uninterrupted run gives.
        The state the last epoch leaves is kept, so ``partial_fit`` continues from it."""
        structure, eta0 = self._check_params()
        X, Y = self._check_data(structure, X, Y)
        self.n_inexact_decodes_ = 0
        t0 = time.perf_counter()
        everyone = np.arange(len(X))
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        if session.resuming:
            self._resume(session, X, Y, everyone, t0)
            return self
        self.eta0_ = float(self._initial_eta0(structure, X, Y, eta0))
        trials = self.eta0_trials_ if eta0 == "auto" else None
        rng = np.random.default_rng(self.random_state)
        state = [np.zeros(structure.n_features), 1.0]
        self._train(session, state, X, Y, everyone, rng, 0, 0, t0, trials)
        return self

    def partial_fit(self, X, Y) -> "SGDStructuredSVM":
        """One epoch of mini-batch SGD over the batch ``X``, ``Y``, continuing from the
        current model.

        The first call (on a learner neither fitted nor partially fitted) starts from w = 0
        with ``rng = np.random.default_rng(random_state)`` and fixes the initial step size
        ``eta0_`` (with ``eta0="auto"`` searched on a sample of this first batch).  Every call
        cuts the batch into mini-batches of ``batch_size`` -- ``rng.permutation(len(X))``
        cut in order, or the given order with ``shuffle=False`` -- and makes one step of
        ``fit`` on each.  Mini-batches never straddle two calls: the last one of a call
        holds the remainder.  Carried over from call to call, and from a ``fit`` before: the
        weights (as v and the scale of ``w = scale * v``), the step counter ``t_``
        (mini-batches so far, the schedule's t: eta_t = eta0 / (1 + eta0 lambda1 t)
        continues), ``eta0_`` and the generator.  ``n_iter_`` counts passes (a ``fit``'s
        epochs and one per call); ``objective_curve_`` gets the objective on this batch after
        the pass (which is also when decodes are checked, as in ``fit``); ``coef_`` is valid
        after every call.

        So calls on batches B1, ..., Bk with ``shuffle=False`` give the model of
        ``fit(B1 + ... + Bk)`` with ``n_epochs=1, shuffle=False`` and the same float
        ``eta0`` when ``batch_size`` divides the length of every batch but the last (then
        the mini-batches are the same); one call on the whole data from scratch gives
        ``fit`` with ``n_epochs=1`` (the same permutation; with ``eta0="auto"`` too).

        The task must be fitted before the first call and stay so: its feature index was
        fixed by ``task.fit``, and attributes unseen then have no weight; a task with
        ``feature_index="hashing"`` sees every attribute.  ``lambda1`` and ``batch_size``
        changed between calls (``set_params``) apply from the next call; ``eta0`` and
        ``n_epochs`` are not used after the first.  Returns self.
        """
        structure = self._partial_fit_task()
        _, eta0 = self._check_params()
        X, Y = self._check_data(structure, X, Y)
        state = self._continued_state()
        t0 = time.perf_counter()
        if state is None:
            self.n_inexact_decodes_ = 0
            self.eta0_ = float(self._initial_eta0(structure, X, Y, eta0))
            state = OnlineState(w=np.zeros(structure.n_features),
                                rng=np.random.default_rng(self.random_state))
            self.objective_curve_, self.n_iter_, self.fit_seconds_ = [], 0, 0.0
        before = getattr(self, "n_inexact_decodes_", 0)  # a loaded model has none
        self.n_inexact_decodes_ = before
        everyone = np.arange(len(X))
        w_state = [state.w, state.scale]
        state.step = self._epochs(w_state, X, Y, everyone, 1, state.rng, self.eta0_, t=state.step)
        state.w, state.scale = w_state
        self._online = state
        self.coef_ = state.w * state.scale
        self.t_ = state.step
        self.objective_curve_.append(self._objective(self.coef_, X, Y, everyone))
        self.n_iter_ += 1
        self.fit_seconds_ = getattr(self, "fit_seconds_", 0.0) + time.perf_counter() - t0
        self._warn_inexact(self.n_inexact_decodes_ - before)
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
        self._online = OnlineState(w=state[0], scale=state[1], rng=rng, step=t)
        self.t_ = t
        self.coef_ = state[0] * state[1]
        self.objective_curve_ = [self._objective(self.coef_, X, Y, everyone)]
        self.n_iter_ = int(self.n_epochs)
        self.fit_seconds_ = time.perf_counter() - t0
        self._warn_inexact(self.n_inexact_decodes_)

    @staticmethod
    def _warn_inexact(count) -> None:
        if count:
            warnings.warn(f"{count} loss-augmented decodes scored below the gold structure",
                          InexactInferenceWarning, stacklevel=user_stacklevel())

    # --- persistence ---------------------------------------------------------------------
    def _learned_state(self):
        meta, arrays = super()._learned_state()
        if getattr(self, "eta0_", None) is not None:
            meta["eta0_"] = float(self.eta0_)
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        if "eta0_" in meta:
            self.eta0_ = float(meta["eta0_"])
