"""The loop CRFsuite's online learners share: decode, and after a mistake take one step.

CRFsuite trains a chain with passive-aggressive updates (``pa``) and with AROW (``arow``)
through one loop (Okazaki 2007, ``train_passive_aggressive.c`` and ``train_arow.c``); the
learners of this package that follow it (:class:`~latentstruct.learners.online.structured_pa.
StructuredPA`, :class:`~latentstruct.learners.online.arow.AROW`) differ only in the step, so the
loop is here once.  Each epoch visits the examples in the order ``rng.permutation(n)``
(``rng = np.random.default_rng(random_state)``, one permutation per epoch; with
``shuffle=False`` in the order given) and, for each example i:

1. decodes y_hat = ``task.argmax(x_i, w)`` with the current weights (a plain argmax, not
   loss-augmented: a *prediction-based* update);
2. counts its errors d = ``task.loss(y_i, y_hat)`` (for sequence tasks the Hamming loss:
   CRFsuite's number of wrong labels);
3. when d > 0, forms Delta = Phi(x_i, y_i) - Phi(x_i, y_hat) and the margin violation
   v = w . Phi(x_i, y_hat) - w . Phi(x_i, y_i) = -w . Delta (>= 0 for an exact argmax), and
   lets the learner take its step (``_step``), which returns the example's cost.

The costs of an epoch add up to its entry of ``objective_curve_`` (CRFsuite's "Loss"), and
training stops after ``max_iter`` epochs or after the first epoch whose mean cost over the
n examples is below ``epsilon`` (CRFsuite's test ``sum_loss / N < epsilon`` of ``pa``, so its
default 0 never stops early), or, for a learner with ``stops_at_epsilon = True``, at most
``epsilon`` (the test ``<=`` of CRFsuite's ``arow``: its default 0 stops after the first
epoch without a mistake).  An epoch without a mistake leaves the weights as they are, so every
later epoch would make none either: those epochs are not decoded, only counted (their
permutations drawn and the step counter advanced, as running them would), which gives the
model of running them.  ``partial_fit`` runs one epoch over a batch per call, continuing
from the state (:mod:`~latentstruct.learners.online.online`).
"""

from __future__ import annotations

import time

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...tasks.contracts import MAX_DECODABLE
from ..base import LinearStructuredLearner, check_examples
from ..checkpoint import CheckpointSession
from ..checkpoint_state import monitor_state, restore_monitor, rng_from_state, rng_state
from ..inference_check import InferenceMonitor
from ...solvers.online_rules import apply_rule
from ..feature_support import FEATURE_SET_CONSTRAINTS
from .online import EMPTY, OnlineLearnerMixin, OnlineState, visiting_order
from ..params import BOOL, NJOBS, NONNEGATIVE, PASSES, RANDOM_STATE

__all__ = ["OnlineStepLearner", "STEP_LOOP_CONSTRAINTS"]

#: the hyperparameters of the shared loop (a learner adds those of its step)
STEP_LOOP_CONSTRAINTS = {
    **FEATURE_SET_CONSTRAINTS, "max_iter": [PASSES], "epsilon": [NONNEGATIVE],
    "random_state": RANDOM_STATE, "shuffle": [BOOL], "n_jobs": [NJOBS, None],
    "check_inference": [BOOL], "progress": [BOOL],
}


class OnlineStepLearner(OnlineLearnerMixin, LinearStructuredLearner):
    """Base of the learners that run CRFsuite's online loop (see the module docstring).

    A subclass defines ``_new_state(n_features, rng)`` (its :class:`OnlineState`),
    ``_rule`` (its update after a mistake: the code of a rule of
    :mod:`~latentstruct.solvers.online_rules`, which returns the example's cost),
    ``_rule_params()`` (the rule's hyperparameters as floats), ``_rule_arrays(state)`` (the
    rule's ``u`` and ``extra`` arrays) and ``_coef(state)`` (the weights the model predicts
    with).  A structure with a compiled pass (``online_pass``) runs the epoch with the same
    rule; any other is looped over in Python.

    The loop's parameters are below; each learner documents ``max_iter``, ``epsilon`` and
    its own.

    Parameters
    ----------
    task : StructuredTask
        A fitted max-decodable task (its argmax, Phi, loss and Phi differences).
    random_state : None, int or Generator, default 0
        Seeds the generator of the epochs' visiting orders.
    shuffle : bool, default True
        Visit each epoch's examples in a random order (CRFsuite shuffles), else as given.
    n_jobs : int, default 1
        Parallel decoding in ``predict`` (training is sequential).
    check_inference : bool, default True
        Refuse an argmax that is not exact or whose reported score differs from the one
        recomputed from ``task.joint_feature`` (by more than 1e-6, relative).
    progress : bool, default False
        Show a progress bar over epochs.
    feature_set : {"all", "observed"}, default "all"
        Which weights train; the others stay zero.  "all": every feature of the task (an
        update may give any attribute a weight for a wrongly predicted label); "observed":
        CRFsuite's feature set, the features of the training data's gold structures (for
        a chain, the (attribute, label) pairs seen in training and the label bigrams, as
        the two choices below say; no start and end weights), fixed by ``fit`` or the
        first ``partial_fit`` (``support_``): a smaller model and cheaper updates.
    possible_states : bool, default False
        With "observed": also every (attribute, label) pair (CRFsuite's
        ``feature.possible_states``).
    possible_transitions : bool, default True
        With "observed": every transition weight (CRFsuite's
        ``feature.possible_transitions=1``); False keeps only the gold label bigrams,
        CRFsuite's default.

    Attributes set by ``fit`` and ``partial_fit``: ``coef_``; ``n_iter_`` (epochs, counted
    ones included; ``partial_fit``: one per call); ``t_`` (examples visited in all);
    ``objective_curve_`` (each epoch's summed cost); ``errors_curve_`` (each epoch's summed
    task loss of the decoded structures); ``n_updates_`` (steps taken); ``converged_``
    (whether the last epoch made no mistake); ``n_inexact_decodes_``; ``fit_time_``;
    ``support_`` (the trained weights' indices, None for all).
    """

    requires = frozenset({MAX_DECODABLE})
    partial_labels = "completed"  # unknown tags: see LinearStructuredLearner.partial_labels
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})
    #: whether a mean cost equal to ``epsilon`` stops the run too (``<=`` rather than ``<``)
    stops_at_epsilon = False

    def _set_loop_params(self, max_iter, epsilon, random_state, shuffle, n_jobs,
                         check_inference, progress, feature_set, possible_states,
                         possible_transitions) -> None:
        """Store the loop's hyperparameters as given (from a learner's ``__init__``)."""
        self.max_iter, self.epsilon, self.random_state = max_iter, epsilon, random_state
        self.shuffle, self.n_jobs = shuffle, n_jobs
        self.check_inference, self.progress = check_inference, progress
        self.feature_set, self.possible_states = feature_set, possible_states
        self.possible_transitions = possible_transitions

    #: the update rule's code (``solvers.online_rules.RULES``); a subclass sets it
    _rule: int = -1

    def _rule_params(self) -> np.ndarray:
        return EMPTY

    def _rule_arrays(self, state) -> tuple[np.ndarray, np.ndarray]:
        """The rule's ``u`` (averaging) and ``extra`` arrays of ``state`` (EMPTY if none)."""
        return (EMPTY if state.u is None else state.u,
                state.arrays.get("covariance", EMPTY))

    # --- the loop -------------------------------------------------------------------------
    def _checked(self, X, Y):
        structure = self._check_structure()
        check_examples(X, Y)
        return structure, structure.as_batch(X), list(Y)

    def fit(self, X, Y, *, checkpoint=None, resume=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the whole state after every epoch; ``resume`` continues from such a file to
        the model an uninterrupted run gives.  The state the last epoch leaves is kept, so
        ``partial_fit`` continues from it.  Returns self."""
        structure, X, Y = self._checked(X, Y)
        monitor = InferenceMonitor(type(self).__name__, bool(self.check_inference))
        n = len(X)
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        epoch = 0
        if session.resuming:
            meta, arrays = session.state
            state = OnlineState(
                w=arrays["w"].copy(), u=arrays["u"].copy() if meta["average"] else None,
                rng=rng_from_state(session.restored("rng")), step=meta["step"],
                counters=dict(meta["counters"]),
                arrays={k: arrays[f"state.{k}"].copy() for k in meta["arrays"]})
            self.objective_curve_ = list(meta["objective_curve"])
            self.errors_curve_ = list(meta["errors_curve"])
            restore_monitor(monitor, meta["monitor"])
            epoch = session.iteration
        else:
            state = self._new_state(structure.n_features, np.random.default_rng(self.random_state))
            self.objective_curve_, self.errors_curve_ = [], []
        if session.resuming and "support_" in session.state[1]:
            self.support_ = session.state[1]["support_"].astype(np.int64)
            self._mask = None
        elif session.resuming:
            self.support_, self._mask = None, None
        else:
            self._fix_support(structure, X, Y)
        batch = self._compiled_batch(structure, X, Y)

        def save(done):
            if not session.active:
                return
            meta = {"rng": rng_state(state.rng), "step": state.step,
                    "counters": state.counters, "average": state.u is not None,
                    "arrays": sorted(state.arrays), "objective_curve": self.objective_curve_,
                    "errors_curve": self.errors_curve_, "monitor": monitor_state(monitor)}
            arrays = {"w": state.w, **({} if state.u is None else {"u": state.u}),
                      **{f"state.{k}": v for k, v in state.arrays.items()},
                      **({} if self.support_ is None else {"support_": self.support_})}
            session.save(epoch, meta, arrays, done=done)

        t_start = time.perf_counter()
        self.n_inexact_decodes_ = 0
        max_iter = int(self.max_iter)
        first, last = epoch + 1, (epoch if session.done else max_iter)
        with tqdm(total=max_iter, initial=min(epoch, max_iter), desc=self.registry_name,
                  unit="epoch", disable=bar_disable(self.progress), leave=False) as bar:
            for epoch in range(first, last + 1):
                order = visiting_order(state.rng, n, self.shuffle)
                if self.errors_curve_ and self.errors_curve_[-1] == 0:
                    state.step += n  # nothing left to learn: counted, not decoded
                    self.objective_curve_.append(0.0)
                    self.errors_curve_.append(0.0)
                else:
                    self._pass(structure, X, Y, order, state, monitor, batch)
                bar.set_postfix(loss=f"{self.objective_curve_[-1]:.6g}")
                bar.update(1)
                done = self._below_epsilon(self.objective_curve_[-1] / n)
                save(done or epoch == max_iter)
                if done:
                    break
        return self._finish(state, epoch, monitor, time.perf_counter() - t_start)

    def _below_epsilon(self, mean_cost: float) -> bool:
        """CRFsuite's stopping test of an epoch's mean cost."""
        epsilon = float(self.epsilon)
        return mean_cost < epsilon or (self.stops_at_epsilon and mean_cost <= epsilon)

    def partial_fit(self, X, Y):
        """One online epoch over the batch ``X``, ``Y``, continuing from the current model.

        The first call (on a learner neither fitted nor partially fitted) starts afresh
        with ``rng = np.random.default_rng(random_state)``; every call visits the batch once
        in the order ``rng.permutation(len(X))`` (or as given with ``shuffle=False``),
        stepping after each mistake as ``fit`` does.  The weights, the learner's other state
        (averaging sums, covariance), the step counter ``t_``, the generator and the
        counters carry over from call to call and from a ``fit`` before, and ``coef_`` is
        valid after every call.  So calls on batches B1, ..., Bk with ``shuffle=False`` give
        the model of ``fit(B1 + ... + Bk)`` with ``max_iter=1, shuffle=False``.  A call never
        stops early and never skips decoding; ``max_iter`` and ``epsilon`` are not used.
        The task must be fitted before the first call and stay so (its feature space is
        the model's).  Returns self."""
        structure = self._partial_fit_task()
        structure, X, Y = self._checked(X, Y)
        monitor = InferenceMonitor(type(self).__name__, bool(self.check_inference))
        state = self._continued_state()
        if state is None:
            state = self._new_state(structure.n_features, np.random.default_rng(self.random_state))
            self.objective_curve_, self.errors_curve_ = [], []
            self.n_iter_, self.n_inexact_decodes_, self.fit_time_ = 0, 0, 0.0
            self._fix_support(structure, X, Y)  # the first call's data fixes the feature set
        elif not hasattr(self, "errors_curve_"):  # loaded from a model file
            self.errors_curve_ = []
        t_start = time.perf_counter()
        self._pass(structure, X, Y, visiting_order(state.rng, len(X), self.shuffle), state, monitor,
                   self._compiled_batch(structure, X, Y))
        elapsed = getattr(self, "fit_time_", 0.0)
        return self._finish(state, self.n_iter_ + 1, monitor,
                            elapsed + time.perf_counter() - t_start)

    def _pass(self, structure, X, Y, order, state, monitor, batch=None) -> None:
        """Visit the examples ``order`` once, stepping after each mistake; appends the
        epoch's summed cost and summed errors to the curves.  ``batch``: the structure's
        prepared batch, to run the pass compiled (None: the Python loop)."""
        u, extra = self._rule_arrays(state)
        params = self._rule_params()
        if batch is not None:
            stats = self._run_compiled(structure, batch, order, state, monitor, self._rule,
                                       params, u, extra)
            state.counters["n_updates"] = (state.counters.get("n_updates", 0)
                                           + int(stats["n_updates"]))
            self.objective_curve_.append(stats["cost"])
            self.errors_curve_.append(stats["errors"])
            return
        check = bool(self.check_inference)
        w = state.w
        n = w.shape[0]
        total_cost = total_errors = 0.0
        partial = self._unknown_parts(structure, Y)
        for i in order:
            i = int(i)
            state.step += 1
            y = Y[i]
            if partial:  # unknown tags completed under the current w (latent variables)
                y = structure.complete_batch(X[i], w, [y])[0]
            res = structure.argmax(X[i], w)
            monitor.observe([res], "argmax", [i])
            if check:
                monitor.consistent(float(res.score),
                                   structure.joint_feature(X[i], res.structure).dot(w), "argmax", i)
            errors = float(structure.loss(y, res.structure))
            if errors <= 0:
                continue
            delta = self._restricted(
                structure.joint_feature_difference(X[i], y, res.structure).coalesce(), n)
            violation = -delta.dot(w)
            total_cost += apply_rule(self._rule, w, u, extra, delta.indices, delta.values,
                                     violation, errors, state.step, params)
            total_errors += errors
            state.counters["n_updates"] = state.counters.get("n_updates", 0) + 1
        self.objective_curve_.append(total_cost)
        self.errors_curve_.append(total_errors)

    def _finish(self, state, n_iter, monitor, seconds):
        self._online = state
        self.coef_ = self._coef(state)
        self.n_iter_ = n_iter
        self.t_ = state.step
        self.n_updates_ = state.counters.get("n_updates", 0)
        self.converged_ = bool(self.errors_curve_[-1] == 0) if self.errors_curve_ else False
        self.n_inexact_decodes_ = getattr(self, "n_inexact_decodes_", 0) + monitor.n_inexact
        self.fit_time_ = seconds
        monitor.warn()
        return self

    # --- model files: the errors curve beside the objective curve ---------------------------
    def _learned_state(self):
        meta, arrays = super()._learned_state()
        meta["errors_curve_"] = [float(v) for v in getattr(self, "errors_curve_", [])]
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        self.errors_curve_ = list(meta.get("errors_curve_", []))
