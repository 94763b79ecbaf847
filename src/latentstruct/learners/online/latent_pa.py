"""Online latent passive-aggressive learning (Clifton, Whitney & Sarkar 2013, Algorithm 1).

It learns a binary decision over a hidden structure, f(x) = max_{h in C(x)} w . Phi(x, h),
like LCLR, but online, one example at a time.  The paper's batch baseline, the
"LCLR-variant" of its footnote 1, is :mod:`latentstruct.learners.latent.lclr_variant`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...exceptions import ConfigError, InputError, warn_convergence
from ...tasks.contracts import HEURISTIC, LATENT_BINARY
from ..base import check_coef_init, register_learner
from ..checkpoint import CheckpointSession
from ..checkpoint_state import (monitor_state, pack_sparse, prefixed, restore_monitor,
                               rng_from_state, rng_state, unpack_sparse, unprefixed)
from ..inference_check import SCORE_RTOL, InferenceMonitor
from ..latent.lclr import POSITIVE, LatentBinaryLearner
from ...solvers.online_rules import PA_TYPES, pa_tau
from .online import EMPTY, OnlineLearnerMixin, OnlineState, visiting_order
from ...limits import MAX_NEGATIVE_UPDATES
from ..params import BOOL, CALLABLE, COEF_INIT, NJOBS, PASSES, RANDOM_STATE, Interval, Options, store_init_args

__all__ = ["LatentPA", "PAEvent", "pa_step_size", "scale_to_range", "PA_VARIANTS"]

#: the step-size rules of Crammer et al. (2006); "pa" is Algorithm 1 line 8 of the paper
PA_VARIANTS = ("pa", "pa-i", "pa-ii")


def pa_step_size(loss: float, sq_norm: float, variant: str = "pa", C: float = 1.0) -> float:
    """The PA multiplier tau of one update w <- w + tau y phi.

    It solves the one-constraint problem (Crammer et al. 2006, Eq. 2-3; Clifton et al. 2013
    Eq. 3 and Algorithm 1 line 8), with ``loss = max(0, 1 - y w_t . phi)`` and
    ``sq_norm = ||phi||^2``:

    * ``"pa"``:    min_w 1/2 ||w - w_t||^2              s.t. y w . phi >= 1
                   -> tau = loss / ||phi||^2                     (the paper's line 8)
    * ``"pa-i"``:  min_w 1/2 ||w - w_t||^2 + C xi       s.t. y w . phi >= 1 - xi, xi >= 0
                   -> tau = min(C, loss / ||phi||^2)
    * ``"pa-ii"``: min_w 1/2 ||w - w_t||^2 + C xi^2     s.t. y w . phi >= 1 - xi
                   -> tau = loss / (||phi||^2 + 1 / (2 C))

    A zero loss gives tau = 0.  With ``phi = 0`` the constraint cannot be met by moving w;
    PA and PA-I then return 0 (no update), PA-II its formula (which moves nothing either).
    """
    return float(pa_tau(float(loss), float(sq_norm), PA_TYPES[variant], float(C)))


def scale_to_range(w_source: np.ndarray, w_reference: np.ndarray) -> np.ndarray:
    """``w_source`` rescaled by one positive factor so that its largest absolute value equals
    that of ``w_reference``.

    This is how Clifton et al. (2013, §4) transfer a supervised chunker's weights to the
    latent classifier: "we scaled them to the range of values observed after training the
    zero-initialized chunker-classifier".  One positive factor keeps the chunker's argmax
    (its chunkings) unchanged; the range is matched by the largest magnitude, because a
    single factor cannot match a minimum and a maximum at once.
    """
    w_source = np.asarray(w_source, dtype=np.float64)
    top = float(np.max(np.abs(w_source))) if w_source.size else 0.0
    ref = float(np.max(np.abs(w_reference))) if np.size(w_reference) else 0.0
    if top == 0.0:
        return w_source.copy()
    return w_source * (ref / top)


@dataclass(frozen=True)
class PAEvent:
    """What ``LatentPA``'s ``callback`` receives.

    kind : ``"step"`` after every execution of Algorithm 1 lines 5-9 (one decode and one
        (possibly zero) update), or ``"epoch"`` at the end of each pass over the data.
    epoch : 1-based pass number; step : steps so far (1-based); example : index into X of
        the example just visited (-1 for ``"epoch"``); label, score, loss, tau : of the step
        (score is w_t . Phi(x, h*) before the update).
    coef : for ``"step"`` the live weight vector after the update (read-only; copy it to
        keep it); for ``"epoch"`` the model's current weights (averaged when
        ``average=True``), a fresh array.
    """

    kind: str
    epoch: int
    step: int
    example: int
    label: int
    score: float
    loss: float
    tau: float
    coef: np.ndarray


@register_learner("latent-pa")
class LatentPA(OnlineLearnerMixin, LatentBinaryLearner):
    """Online passive-aggressive learning over constrained latent structures.

    Optimisation: online minimisation of the latent hinge loss (Clifton et al. 2013, Eq. 2)

        1/2 ||w||^2 + sum_i max(0, 1 - y_i max_{h in C(x_i)} w . Phi(x_i, h))

    by Algorithm 1 of the paper: each epoch visits the examples in a random order (seeded
    by ``random_state``); for example i it decodes h* = argmax_h w_t . Phi(x_i, h) (line 5),
    computes the hinge loss l = max(0, 1 - y_i w_t . Phi(x_i, h*)) (lines 6-7) and makes
    the passive-aggressive update w_{t+1} = w_t + tau y_i Phi(x_i, h*) (line 9), where tau
    solves the one-constraint problem Eq. (3) (``pa_step_size``; line 8 is ``variant="pa"``,
    tau = l / ||Phi||^2).  As in LCLR, a positive's structure is fixed for the step: a
    positive is decoded and updated once per epoch.  A negative is re-decoded and updated
    (lines 4-10 repeat) until its decoded structure is classified correctly, i.e. until the
    score w_t . Phi(x, h*) found at line 6 is below 0 (the update of that last round is
    still made, so its margin is enforced too), or until ``max_negative_updates`` rounds
    have run; each visit that stops at the cap is counted in ``n_negative_cap_hits_``
    (and reported by a ``ConvergenceWarning`` at the end of ``fit``).

    Training stops after ``max_iter`` epochs, or earlier after an epoch in which no step had
    a positive loss (every example then meets its margin).  ``partial_fit`` runs one such
    epoch over a batch per call, continuing from the current weights (incremental learning).

    A structure with a compiled pass (``latent_pa_batch``/``latent_pa_pass``, the
    :class:`~latentstruct.tasks.contracts.CompiledLatentPA` batch form; the grammaticality
    task's ``combine="concat"`` views have it) runs each epoch in one call: the same
    decodes, checks, steps (``solvers.online_rules.pa_tau``) and counters, in the same order,
    so the model is the Python loop's (to rounding).  Without one, with a per-step
    ``callback``, or for a structure subclass with its own decoder, the Python loop runs.

    Parameters
    ----------
    task : LatentBinaryTask
    variant : {"pa", "pa-i", "pa-ii"}, default "pa"
        Step size: the paper's PA (line 8), or PA-I / PA-II with aggressiveness ``C``.
    C : float, default 1.0
        Aggressiveness of PA-I and PA-II (unused by PA).
    max_iter : int, default 10
        Maximum number of epochs (passes over the data; the paper's T).
    max_negative_updates : int, default 20
        Cap on the decode-and-update rounds of one negative within one visit.
    average : bool, default False
        Return the average of the weight vectors after every step (lines 5-9 count as one
        step, whether or not they updated) instead of the last one.  Training itself always
        uses the current (not averaged) weights.
    init : {"zeros", "heuristic"}, default "zeros"
        Initial weights when ``coef_init`` is not given: zeros, or the task's
        ``heuristic_weights()`` (for the grammaticality task a supervised chunker's weights)
        multiplied by ``heuristic_scale``.
    heuristic_scale : "auto" or float, default "auto"
        Factor applied to the heuristic weights.  "auto" follows §4 of the paper: a
        zero-initialised LatentPA with the same settings is trained first and the heuristic
        weights are scaled to the range of its weights (``scale_to_range``).
    coef_init : array of shape (n_features,), optional
        Start from these weights (copied; takes precedence over ``init``).
    n_jobs : int, default 1
        Parallel inference in ``predict``/``decision_function`` (training is sequential).
    random_state : None, int or Generator
        Seeds the visiting order of every epoch.
    shuffle : bool, default True
        Visit each epoch's examples in a random order, ``rng.permutation(n)`` (else in the
        order given).
    callback : callable, optional
        Called with a ``PAEvent`` after every step and at the end of every epoch.
    check_inference : bool, default True
        Raise ``InferenceError`` when a decode's status is not exact, when the score the
        task's ``latent_argmax`` reports differs from w . Phi(x, h*) computed from
        ``latent_feature`` (an inconsistent decoder), or when the argmax scores below the
        structure the same example was last decoded to (not a maximum).  With False these
        are counted and warned about.
    progress : bool, default False
        Progress bar over epochs.

    Attributes
    ----------
    coef_ : learned weights (averaged when ``average=True``)
    n_iter_, n_passes_ : epochs run (``partial_fit``: passes made, one per call, after ``fit``'s)
    n_steps_, t_ : executions of lines 5-9 (decodes) over all epochs and calls; the averaging's
        counter
    n_updates_ : steps with a non-zero update
    n_negative_cap_hits_ : negative visits stopped by ``max_negative_updates``
    accuracy_curve_ : per epoch, the fraction of examples classified correctly at their
        first decode of the epoch, before their update (progressive, "online" accuracy)
    loss_curve_ : per epoch, the mean hinge loss at those first decodes
    objective_curve_ : the same list as ``loss_curve_`` (the learners' common attribute)
    init_scale_ : the factor applied to the heuristic weights (None for other inits)
    fit_time_ : seconds
    """

    # a callback only watches the run
    resume_may_change = LatentBinaryLearner.resume_may_change | {"callback"}
    _parameter_constraints = {
        "variant": [Options(*PA_VARIANTS)], "C": [POSITIVE], "max_iter": [PASSES],
        "max_negative_updates": [Interval(int, 1, bound=MAX_NEGATIVE_UPDATES)], "average": [BOOL],
        "init": [Options("zeros", "heuristic")], "heuristic_scale": [Options("auto"), POSITIVE],
        "coef_init": [COEF_INIT, None], "n_jobs": [NJOBS, None], "random_state": RANDOM_STATE,
        "shuffle": [BOOL], "callback": [CALLABLE, None], "check_inference": [BOOL], "progress": [BOOL],
    }

    def __init__(
        self,
        structure=None,
        variant="pa",
        C=1.0,
        max_iter=10,
        max_negative_updates=20,
        average=False,
        init="zeros",
        heuristic_scale="auto",
        coef_init=None,
        n_jobs=1,
        random_state=0,
        shuffle=True,
        callback=None,
        check_inference=True,
        progress=False,
    ):
        store_init_args(self, locals())

    @classmethod
    def required_capabilities(cls, params=None) -> dict[str, str]:
        params = params or {}
        out = {LATENT_BINARY: ""}
        if params.get("init", "zeros") == "heuristic" and params.get("coef_init") is None:
            out[HEURISTIC] = "init='heuristic' starts from the task's heuristic weights"
        return out

    # --- validation --------------------------------------------------------------------
    def _validate(self):
        """The structure, once it offers what this learner needs (every hyperparameter,
        ``variant`` to ``callback``, was checked against ``_parameter_constraints`` on
        entering ``fit`` or ``partial_fit``)."""
        return self._check_structure()

    def _initial_weights(self, structure, X, y) -> np.ndarray:
        self.init_scale_ = None
        if self.coef_init is not None:
            return check_coef_init(self.coef_init, structure.n_features)
        if self.init == "zeros":
            return np.zeros(structure.n_features)
        heur = np.asarray(structure.heuristic_weights(), dtype=np.float64)
        if heur.shape != (structure.n_features,):
            raise ConfigError(
                f"the task's heuristic weights have shape {heur.shape}, expected "
                f"({structure.n_features},)"
            )
        if self.heuristic_scale == "auto":
            zero = type(self)(**{**self.get_params(deep=False), "init": "zeros",
                                 "coef_init": None, "callback": None, "progress": False})
            ref = zero.fit(X, y).coef_
            top = float(np.max(np.abs(heur))) if heur.size else 0.0
            self.init_scale_ = float(np.max(np.abs(ref))) / top if top > 0 else 1.0
        else:
            self.init_scale_ = float(self.heuristic_scale)
        return heur * self.init_scale_

    # --- training ------------------------------------------------------------------------
    def fit(self, X, y, *, checkpoint=None, resume=None):
        """Run Algorithm 1 on examples ``X`` with labels ``y`` in {-1, +1}; returns self.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the weights, the random state and the counters after every epoch; ``resume``
        continues from such a file to the model an uninterrupted run gives.  The state the
        last epoch leaves is kept, so ``partial_fit`` continues from it."""
        structure = self._validate()
        X = structure.as_batch(X)
        y = self._check_labels(X, y)
        t_start = time.perf_counter()
        session = CheckpointSession(self, {"X": X, "y": y}, checkpoint, resume)
        if session.resuming:
            self.init_scale_ = session.restored("init_scale")
        else:
            w = self._initial_weights(structure, X, y)
        average = bool(self.average)
        monitor = InferenceMonitor("LatentPA", bool(self.check_inference))
        last_phi: dict = {}
        n = len(X)
        epoch = 0
        if session.resuming:
            meta, arrays = session.state
            state = OnlineState(
                w=arrays["w"].copy(), u=arrays["u"].copy() if average else None,
                rng=rng_from_state(meta["rng"]), step=meta["step"],
                counters={"n_updates": meta["n_updates"], "cap_hits": meta["cap_hits"]})
            epoch_loss_steps = meta["epoch_loss_steps"]
            self.accuracy_curve_, self.loss_curve_ = meta["accuracy_curve"], meta["loss_curve"]
            last_phi = dict(zip(meta["last_phi_ids"], unpack_sparse(unprefixed("last_phi", arrays)),
                                strict=True))
            restore_monitor(monitor, meta["monitor"])
            epoch = session.iteration
        else:
            state = self._fresh_state(w)
            self.accuracy_curve_, self.loss_curve_ = [], []
        batch = self._latent_batch(structure, X, y, last_phi)

        def save(done):
            if not session.active:
                return
            known = last_phi if batch is None else structure.latent_pa_known(batch)
            meta = {"rng": rng_state(state.rng), "step": state.step,
                    "n_updates": state.counters["n_updates"],
                    "cap_hits": state.counters["cap_hits"], "epoch_loss_steps": epoch_loss_steps,
                    "accuracy_curve": self.accuracy_curve_, "loss_curve": self.loss_curve_,
                    "last_phi_ids": list(known), "monitor": monitor_state(monitor),
                    "init_scale": self.init_scale_}
            arrays = {"w": state.w, **({"u": state.u} if average else {}),
                      **prefixed("last_phi", pack_sparse(list(known.values())))}
            session.save(epoch, meta, arrays, done=done)

        bar = tqdm(total=self.max_iter, initial=min(epoch, self.max_iter), desc="latent-pa",
                   unit="epoch", disable=bar_disable(self.progress), leave=False)
        first, last = epoch + 1, (epoch if session.done else int(self.max_iter))
        for epoch in range(first, last + 1):
            order = visiting_order(state.rng, n, self.shuffle)
            epoch_loss_steps = self._pass(structure, X, y, order, state, epoch, monitor, last_phi,
                                          batch)
            bar.set_postfix(acc=f"{self.accuracy_curve_[-1]:.4f}",
                            updates=state.counters["n_updates"])
            bar.update(1)
            save(epoch_loss_steps == 0 or epoch == self.max_iter)
            if epoch_loss_steps == 0:
                break
        bar.close()
        self.n_inexact_decodes_ = 0
        self._finish(state, epoch, epoch_loss_steps, monitor, time.perf_counter() - t_start)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass of Algorithm 1 over the batch ``X``, ``y``, continuing from the current model.

        The first call (on a learner neither fitted nor partially fitted) starts from the
        initial weights of ``fit`` (``coef_init``, zeros, or the scaled heuristic weights --
        with ``heuristic_scale="auto"`` the scale is found by a zero-initialised run on this
        first batch) and ``rng = np.random.default_rng(random_state)``.  Every call visits
        the batch once, in the order ``rng.permutation(len(X))`` (or in the given order with
        ``shuffle=False``), with the steps of ``fit`` (a negative is re-decoded and updated
        until it scores below 0, at most ``max_negative_updates`` rounds).  Carried over from
        call to call, and from a ``fit`` before: the weights, the averaging accumulator, the
        step counter ``t_`` (= ``n_steps_``, decode-and-update steps), the generator and the
        counters ``n_updates_``, ``n_negative_cap_hits_`` and ``n_inexact_decodes_``.
        ``n_iter_`` (= ``n_passes_``) counts passes (a ``fit``'s epochs and one per call);
        ``accuracy_curve_`` and ``loss_curve_`` get this pass's values; ``coef_`` is valid
        after every call (averaged with ``average=True``).  Unlike ``fit`` a call never stops
        early.  So calls on batches B1, ..., Bk with ``shuffle=False`` give the model of
        ``fit(B1 + ... + Bk)`` with ``max_iter=1, shuffle=False``.

        Parameters
        ----------
        X : batch of examples, featurised by the task (fitted before the first call; its
            feature index stays fixed, so attributes unseen then have no weight -- a task
            with ``feature_index="hashing"`` sees every attribute)
        y : labels in {-1, +1}, one per example (a batch may hold one class only)
        classes : array-like, optional
            scikit-learn's argument: every label of the whole stream.  The learner's
            classes are always {-1, +1} (``classes_``); when given it must be exactly those,
            and a later call may not give others.

        Returns self.
        """
        name = type(self).__name__
        structure = self._partial_fit_task()
        self._validate()
        if classes is not None:
            got = np.unique(np.asarray(classes))
            if got.shape != (2,) or not np.isin(got, (-1, 1)).all():
                raise ConfigError(
                    f"{name}.partial_fit: classes must be [-1, 1] (the learner decides between "
                    f"-1 and +1, and the classes name every label of the stream); got "
                    f"{got.tolist()!r}. Map the labels to -1/+1 and pass classes=[-1, 1]")
        X = structure.as_batch(X)
        y_raw = np.asarray(y)
        if y_raw.ndim == 1 and y_raw.size and len(X) == y_raw.shape[0]:
            bad = np.flatnonzero(~np.isin(y_raw, (-1, 1)))
            if bad.size:
                raise InputError(
                    f"{name}.partial_fit: y[{int(bad[0])}] = {y_raw[bad[0]].item()!r} is not among the "
                    f"classes [-1, 1]; give each example the label -1 or +1")
        y = self._check_labels(X, y)
        state = self._continued_state()
        t_start = time.perf_counter()
        if state is None:
            state = self._fresh_state(self._initial_weights(structure, X, y))
            self.accuracy_curve_, self.loss_curve_ = [], []
            self.n_iter_, self.n_inexact_decodes_, self.fit_time_ = 0, 0, 0.0
        elapsed = getattr(self, "fit_time_", 0.0)  # a loaded model has none
        monitor = InferenceMonitor("LatentPA", bool(self.check_inference))
        order = visiting_order(state.rng, len(X), self.shuffle)
        loss_steps = self._pass(structure, X, y, order, state, self.n_iter_ + 1, monitor, {},
                                self._latent_batch(structure, X, y, None))
        self._finish(state, self.n_iter_ + 1, loss_steps, monitor,
                     elapsed + time.perf_counter() - t_start)
        return self

    def _fresh_state(self, w) -> OnlineState:
        # Averaging: w_bar_T = (1/T) sum_{t=1..T} w_t = w_T - (1/T) sum_s (s - 1) delta_s,
        # where delta_s is the update made at step s (1-based); u accumulates the sum.
        return OnlineState(w=w, u=np.zeros_like(w) if self.average else None,
                           rng=np.random.default_rng(self.random_state),
                           counters={"n_updates": 0, "cap_hits": 0})

    def _latent_batch(self, structure, X, y, known):
        """The structure's prepared batch for a compiled pass over ``X``, ``y`` (remembering
        the ``known`` structures), or None where it offers none for them (no compiled form,
        decode-then-vote, a subclass with its own decoder) or a per-step ``callback`` is
        given: the Python loop runs then."""
        prepare = getattr(structure, "latent_pa_batch", None)
        if prepare is None or self.callback is not None:
            return None
        return prepare(X, y, known)

    def _pass(self, structure, X, y, order, state, epoch, monitor, last_phi, batch=None) -> int:
        """Visit the examples ``order`` of ``X`` once (Algorithm 1 lines 4-10 for each),
        updating ``state``; appends the pass's accuracy and loss to the curves and returns
        the number of steps with a positive loss.  ``last_phi`` maps an example to the
        features of the structure it was last decoded to (a candidate its argmax must beat).
        ``batch``: the structure's prepared batch (which remembers those structures itself),
        to run the pass compiled."""
        if batch is not None:
            n_correct, loss_sum, loss_steps = self._compiled_pass(structure, batch, order, state,
                                                                  monitor)
            n = len(order)
            self.accuracy_curve_.append(n_correct / n)
            self.loss_curve_.append(loss_sum / n)
            return loss_steps
        variant, C = self.variant, float(self.C)
        cap = int(self.max_negative_updates)
        callback = self.callback
        maximiser = structure.argmax_is_maximum()  # False for decode-then-vote
        w, u = state.w, state.u
        n_correct = 0
        loss_sum = 0.0
        loss_steps = 0
        for i in order:
            i = int(i)
            x = X[i]
            yi = y[i]
            rounds = 0
            while True:
                res = structure.latent_argmax(x, w)  # line 5
                monitor.observe([res], "latent argmax", [i])
                phi = structure.latent_feature(x, res.structure).coalesce()
                score = phi.dot(w)  # line 6
                monitor.consistent(float(res.score), score, "latent argmax", i)
                # The structure this example was last decoded to is a candidate too.
                if maximiser and i in last_phi:
                    monitor.not_worse(score, last_phi[i].dot(w), "latent argmax", i)
                last_phi[i] = phi
                loss = max(0.0, 1.0 - yi * score)  # line 7
                tau = pa_step_size(loss, float(phi.values @ phi.values), variant, C)  # line 8
                state.step += 1
                if rounds == 0:
                    n_correct += (score >= 0.0) == (yi > 0)
                    loss_sum += loss
                if loss > 0.0:
                    loss_steps += 1
                if tau != 0.0:  # line 9
                    delta = (tau * yi) * phi.values
                    w[phi.indices] += delta
                    if u is not None:
                        u[phi.indices] += (state.step - 1) * delta
                    state.counters["n_updates"] += 1
                rounds += 1
                if callback is not None:
                    view = w.view()
                    view.flags.writeable = False
                    callback(PAEvent("step", epoch, state.step, i, int(yi), float(score),
                                     float(loss), float(tau), view))
                if yi > 0 or score < 0.0:  # line 10
                    break
                if rounds >= cap:
                    state.counters["cap_hits"] += 1
                    break
        n = len(order)
        self.accuracy_curve_.append(n_correct / n)
        self.loss_curve_.append(loss_sum / n)
        if callback is not None:
            callback(PAEvent("epoch", epoch, state.step, -1, 0, float("nan"), loss_sum / n,
                             float("nan"), self._current(w, u, state.step)))
        return loss_steps

    def _compiled_pass(self, structure, batch, order, state, monitor) -> tuple[int, float, int]:
        """One pass through the structure's compiled form (the steps of the Python loop,
        in one call): the state and counters advanced, the decodes counted and their checks
        reported to ``monitor`` as the loop reports them; (examples right at their first
        decode, summed loss of those decodes, steps with a positive loss)."""
        u = EMPTY if state.u is None else state.u
        stats = structure.latent_pa_pass(batch, state.w, u, np.asarray(order, np.int64),
                                         PA_TYPES[self.variant], float(self.C),
                                         int(self.max_negative_updates), state.step,
                                         bool(self.check_inference), SCORE_RTOL)
        state.step = stats["steps"]
        state.counters["n_updates"] += stats["n_updates"]
        state.counters["cap_hits"] += stats["cap_hits"]
        # a compiled pass decodes exactly (CompiledLatentPA): its decodes are counted, and
        # its checks' failures too (the first raises with check_inference=True, where the
        # pass stopped, as the loop raises there)
        monitor.n_decodes += stats["decodes"]
        kind, example = stats["first_kind"], stats["first_example"]
        if kind:
            report = monitor.consistent if kind == 1 else monitor.not_worse
            report(stats["first_score"], stats["first_other"], "latent argmax", example)
            monitor.n_inconsistent += stats["n_inconsistent"] - 1
        return stats["n_correct"], stats["loss_sum"], stats["loss_steps"]

    def _finish(self, state, n_passes, loss_steps, monitor, seconds) -> None:
        """The learned attributes after ``n_passes`` passes in all."""
        self._online = state
        self.coef_ = self._current(state.w, state.u, state.step)
        self.n_iter_ = self.n_passes_ = n_passes
        self.n_steps_ = self.t_ = state.step
        self.n_updates_ = state.counters["n_updates"]
        self.n_negative_cap_hits_ = cap_hits = state.counters["cap_hits"]
        self.objective_curve_ = self.loss_curve_
        self.converged_ = loss_steps == 0
        self.n_inexact_decodes_ = getattr(self, "n_inexact_decodes_", 0) + monitor.n_inexact
        self.fit_time_ = seconds
        monitor.warn()
        if cap_hits:
            warn_convergence(
                f"LatentPA: {cap_hits} visits of negative examples stopped at "
                f"max_negative_updates={self.max_negative_updates} rounds while their decoded "
                f"structure still scored >= 0; raise max_negative_updates to let them converge."
            )

    @staticmethod
    def _current(w, u, step) -> np.ndarray:
        if u is None or step == 0:
            return w.copy()
        return w - u / step

    # --- persistence ---------------------------------------------------------------------
    def _learned_state(self):
        meta, arrays = super()._learned_state()
        meta.update({
            "n_passes_": int(self.n_passes_),
            "n_steps_": int(self.n_steps_),
            "n_updates_": int(self.n_updates_),
            "n_negative_cap_hits_": int(self.n_negative_cap_hits_),
            "accuracy_curve_": [float(v) for v in self.accuracy_curve_],
            "loss_curve_": [float(v) for v in self.loss_curve_],
            "init_scale_": self.init_scale_,
        })
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        self.n_passes_ = int(meta.get("n_passes_", self.n_iter_))
        self.n_steps_ = int(meta.get("n_steps_", 0))
        self.n_updates_ = int(meta.get("n_updates_", 0))
        self.n_negative_cap_hits_ = int(meta.get("n_negative_cap_hits_", 0))
        self.accuracy_curve_ = list(meta.get("accuracy_curve_", []))
        self.loss_curve_ = list(meta.get("loss_curve_", []))
        self.init_scale_ = meta.get("init_scale_")
