"""The (averaged) structured perceptron of Collins (2002)."""

from __future__ import annotations

import time

import numpy as np
from tqdm.auto import tqdm

from ..data.progress import bar_disable
from ..exceptions import ConfigError
from ..tasks.contracts import MAX_DECODABLE
from .base import LinearStructuredLearner, check_positive_int, register_learner
from .checkpoint import CheckpointSession
from .checkpoint_state import monitor_state, restore_monitor, rng_from_state, rng_state
from .inference_check import InferenceMonitor
from .params import BOOL, NJOBS, PASSES, RANDOM_STATE

__all__ = ["StructuredPerceptron"]


@register_learner("perceptron")
class StructuredPerceptron(LinearStructuredLearner):
    """Structured perceptron with optional weight averaging (Collins 2002).

    Problem: find w such that, on every training example, the task's argmax recovers the
    gold structure::

        y_i = argmax_y w . Phi(x_i, y)        for all i

    (a separability condition; there is no regularised objective).  Algorithm: start from
    w = 0; each epoch visits the examples in the order ``rng.permutation(n)`` with
    ``rng = np.random.default_rng(random_state)`` (one permutation drawn per epoch, nothing
    else is drawn), decodes y_hat = ``task.argmax(x_i, w)`` (plain, not loss-augmented)
    and, when ``task.loss(y_i, y_hat) > 0``, updates
    w <- w + Phi(x_i, y_i) - Phi(x_i, y_hat) (``task.joint_feature_difference``).
    Training stops after ``max_iter`` epochs, or earlier after an epoch without a mistake
    (the weights would not change any more).

    With ``average=True`` (Collins 2002's averaged parameters) ``coef_`` is the mean of the
    weight vectors after every step (one step per visited example, updated or not), computed
    with the usual trick: u accumulates (c - 1) * Delta for an update Delta at step c, and
    after S steps the average is w - u / S.

    Parameters
    ----------
    task : StructuredTask
        A fitted max-decodable task (it defines Phi, the loss and the argmax).
    max_iter : int, default 10
        Maximum number of epochs (passes over the training examples).
    average : bool, default True
        Return the averaged weights (else the last ones).
    random_state : None, int or Generator, default 0
        Seeds the per-epoch visiting order.
    n_jobs : int, default 1
        Parallel inference over examples in ``predict`` (training is sequential).
    check_inference : bool, default True
        Raise ``InferenceError`` when a decode's status is not exact, or when the score the
        decoder reports differs from ``task.joint_feature(x, y_hat) . w`` by more than 1e-6
        (relative): the perceptron's guarantees need an exact argmax.  With False the
        scores are not recomputed, and non-exact decodes are counted
        (``n_inexact_decodes_``) and warned about once (``InexactInferenceWarning``).
    progress : bool, default False
        Show a progress bar over epochs.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, epochs run
    objective_curve_ : list of float, training mistakes (total task loss -- Hamming loss for
        sequence tasks -- of the decoded structures) in each epoch
    n_updates_ : int, examples on which the weights were updated
    converged_ : bool, whether the last epoch made no mistake
    n_inexact_decodes_ : int, decodes whose status was not exact
    fit_time_ : float, seconds spent in ``fit``
    """

    requires = frozenset({MAX_DECODABLE})
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    _parameter_constraints = {
        "max_iter": [PASSES], "average": [BOOL],
        "random_state": RANDOM_STATE, "n_jobs": [NJOBS, None], "check_inference": [BOOL],
        "progress": [BOOL],
    }

    def __init__(self, task=None, max_iter=10, average=True, random_state=0, n_jobs=1,
                 check_inference=True, progress=False):
        self.task = task
        self.max_iter = max_iter
        self.average = average
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.check_inference = check_inference
        self.progress = progress

    def _validate(self, X, Y):
        self._validate_params()
        task = self._check_task()
        max_iter = check_positive_int("max_iter", self.max_iter)
        for name in ("average", "check_inference", "progress"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ConfigError(
                    f"The '{name}' parameter must be a bool. Got {value!r} instead."
                )
        if len(X) != len(Y):
            raise ConfigError(f"X has {len(X)} examples but Y has {len(Y)}")
        if len(X) == 0:
            raise ConfigError("cannot fit on zero examples")
        return task, max_iter

    def fit(self, X, Y, *, checkpoint=None, resume=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the weights, their running sum and the random state after every epoch;
        ``resume`` continues from such a file to the model an uninterrupted run gives."""
        task, max_iter = self._validate(X, Y)
        X, Y = task.as_batch(X), list(Y)
        check = bool(self.check_inference)
        monitor = InferenceMonitor("StructuredPerceptron", check)
        n, n_features = len(X), task.n_features
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        epoch = 0
        if session.resuming:
            meta, arrays = session.state
            rng = rng_from_state(session.restored("rng"))
            w, u = arrays["w"].copy(), arrays["u"].copy()
            step, n_updates = meta["step"], meta["n_updates"]
            self.objective_curve_ = list(meta["objective_curve"])
            restore_monitor(monitor, meta["monitor"])
            epoch = session.iteration
        else:
            rng = np.random.default_rng(self.random_state)
            w = np.zeros(n_features)
            u = np.zeros(n_features)  # sum over updates of (step - 1) * Delta
            step = 0
            n_updates = 0
            self.objective_curve_ = []

        def save(done):
            if session.active:
                meta = {"rng": rng_state(rng), "step": step, "n_updates": n_updates,
                        "objective_curve": self.objective_curve_, "monitor": monitor_state(monitor)}
                session.save(epoch, meta, {"w": w, "u": u}, done=done)

        t_start = time.perf_counter()
        bar = tqdm(total=max_iter, initial=min(epoch, max_iter), desc="perceptron", unit="epoch",
                   disable=bar_disable(self.progress), leave=False)
        first, last = epoch + 1, (epoch if session.done else max_iter)
        for epoch in range(first, last + 1):
            mistakes = 0.0
            for i in rng.permutation(n):
                i = int(i)
                step += 1
                x, y = X[i], Y[i]
                res = task.argmax(x, w)
                monitor.observe([res], "argmax", [i])
                if check:
                    monitor.consistent(float(res.score),
                                       task.joint_feature(x, res.structure).dot(w), "argmax", i)
                loss = float(task.loss(y, res.structure))
                if loss > 0:
                    d = task.joint_feature_difference(x, y, res.structure)
                    np.add.at(w, d.indices, d.values)
                    np.add.at(u, d.indices, (step - 1) * d.values)
                    mistakes += loss
                    n_updates += 1
            self.objective_curve_.append(mistakes)
            bar.set_postfix(mistakes=f"{mistakes:.6g}")
            bar.update(1)
            save(mistakes == 0 or epoch == max_iter)
            if mistakes == 0:
                break
        bar.close()
        self.coef_ = w - u / step if self.average else w
        self.n_iter_ = epoch
        self.n_updates_ = n_updates
        self.converged_ = bool(self.objective_curve_[-1] == 0)
        self.n_inexact_decodes_ = monitor.n_inexact
        self.fit_time_ = time.perf_counter() - t_start
        monitor.warn()
        return self
