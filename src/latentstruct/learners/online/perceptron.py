"""The (averaged) structured perceptron of Collins (2002)."""

from __future__ import annotations

import time

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...tasks.contracts import MAX_DECODABLE, SIZED
from ..base import LinearStructuredLearner, check_examples, register_learner
from ..checkpoint import CheckpointSession
from ..checkpoint_state import monitor_state, restore_monitor, rng_from_state, rng_state
from ..inference_check import InferenceMonitor
from ..feature_support import FEATURE_SET_CONSTRAINTS
from ...solvers.online_rules import RULES, perceptron_step
from .online import EMPTY, OnlineLearnerMixin, OnlineState, visiting_order
from ..params import BOOL, NJOBS, NONNEGATIVE, PASSES, RANDOM_STATE, store_init_args

__all__ = ["StructuredPerceptron"]


@register_learner("perceptron")
class StructuredPerceptron(OnlineLearnerMixin, LinearStructuredLearner):
    """Structured perceptron with optional weight averaging (Collins 2002).

    Problem: find w such that, on every training example, the task's argmax recovers the
    gold structure::

        y_i = argmax_y w . Phi(x_i, y)        for all i

    (a separability condition; there is no regularised objective).  Algorithm: start from
    w = 0; each epoch visits the examples in the order ``rng.permutation(n)`` with
    ``rng = np.random.default_rng(random_state)`` (one permutation drawn per epoch, nothing
    else is drawn; with ``shuffle=False`` in the order given, 0..n-1), decodes y_hat = ``task.argmax(x_i, w)`` (plain, not loss-augmented)
    and, when ``task.loss(y_i, y_hat) > 0``, updates
    w <- w + Phi(x_i, y_i) - Phi(x_i, y_hat) (``task.joint_feature_difference``).
    Training stops after ``max_iter`` epochs, or earlier after an epoch without a mistake
    (the weights would not change any more); with ``epsilon`` set, instead after the first
    epoch whose mean error rate is below it: each mistaken example adds its task loss
    divided by its size (``task.example_size(x)``, tokens, where the task offers the
    ``sized`` capability; else 1), and the sum is divided by the number of examples.
    ``partial_fit`` runs one such epoch over a batch per call, continuing from the current
    weights (incremental learning).

    With ``average=True`` (Collins 2002's averaged parameters) ``coef_`` is the mean of the
    weight vectors after every step (one step per visited example, updated or not), computed
    with the usual trick: u accumulates (c - 1) * Delta for an update Delta at step c, and
    after S steps the average is w - u / S.

    **CRFsuite's averaged perceptron** (``ap``, sklearn-crfsuite's ``CRF(algorithm="ap")``,
    ``train_averaged_perceptron.c``) is ``StructuredPerceptron(average=True,
    max_iter=100, epsilon=0.0)``: the same mistake-driven update of a plain Viterbi
    decode, an order shuffled every epoch, and its stop ``loss / N < epsilon`` with loss
    the summed ratio of wrong labels per sequence (so its default 0 never stops early).
    Two differences change no prediction: its average divides by S + 1 (it counts the
    initial zero vector), which scales these weights by S / (S + 1); and its shuffles come
    from its own generator, so runs agree in distribution, not bit for bit.  The default
    ``epsilon=None`` keeps this learner's own stop after a mistake-free epoch.

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
    shuffle : bool, default True
        Visit each epoch's examples in a random order (else in the order given).
    epsilon : None or float >= 0, default None
        None: stop after an epoch without a mistake.  A float: CRFsuite's stop, after an
        epoch whose mean error rate (see above) is below it (0: never early).
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
    feature_set : {"all", "observed"}, default "all"
        Which weights train; the others stay zero.  "all": every feature of the task;
        "observed": CRFsuite's feature set, the features of the training data's gold
        structures (for a chain, the (attribute, label) pairs seen in training and the
        label bigrams as the two choices below say; no start and end weights), fixed by
        ``fit`` or the first ``partial_fit`` (``support_``).  CRFsuite's ``ap`` trains this
        set (``latentstruct.crfsuite``).
    possible_states : bool, default False
        With "observed": also every (attribute, label) pair (CRFsuite's
        ``feature.possible_states``).
    possible_transitions : bool, default True
        With "observed": every transition weight; False keeps only the gold label
        bigrams, CRFsuite's default ``feature.possible_transitions=0``.

    A task whose structure has a compiled pass (``online_pass``: a chain's) runs each epoch
    in one compiled call with the same update (:func:`~latentstruct.solvers.online_rules.
    perceptron_step`) and the same order.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, epochs run (``partial_fit``: passes made, one per call, after ``fit``'s)
    t_ : int, steps made (examples visited) over all epochs and calls; the averaging's counter
    objective_curve_ : list of float, training mistakes (total task loss -- Hamming loss for
        sequence tasks -- of the decoded structures) in each epoch
    n_updates_ : int, examples on which the weights were updated
    converged_ : bool, whether the last epoch made no mistake
    n_inexact_decodes_ : int, decodes whose status was not exact
    fit_time_ : float, seconds spent in ``fit``
    support_ : None or ndarray of int, the indices of the trained weights (None: all)
    """

    requires = frozenset({MAX_DECODABLE})
    partial_labels = "completed"  # unknown tags: see LinearStructuredLearner.partial_labels
    uses_if_offered = frozenset({SIZED})  # the error rate per token, for the progress line
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    _parameter_constraints = {
        "max_iter": [PASSES], "average": [BOOL],
        "random_state": RANDOM_STATE, "shuffle": [BOOL], "n_jobs": [NJOBS, None],
        "epsilon": [NONNEGATIVE, None],
        "check_inference": [BOOL], "progress": [BOOL], **FEATURE_SET_CONSTRAINTS,
    }

    def __init__(self, structure=None, max_iter=10, average=True, random_state=0, shuffle=True,
                 n_jobs=1, check_inference=True, progress=False, epsilon=None,
                 feature_set="all", possible_states=False, possible_transitions=True):
        store_init_args(self, locals())

    def _validate(self, X, Y):
        structure = self._check_structure()  # the hyperparameters: checked on entering fit
        max_iter = int(self.max_iter)
        check_examples(X, Y)
        return structure, max_iter

    def fit(self, X, Y, *, checkpoint=None, resume=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the weights, their running sum and the random state after every epoch;
        ``resume`` continues from such a file to the model an uninterrupted run gives.
        The state the last epoch leaves is kept, so ``partial_fit`` continues from it."""
        structure, max_iter = self._validate(X, Y)
        X, Y = structure.as_batch(X), list(Y)
        check = bool(self.check_inference)
        monitor = InferenceMonitor("StructuredPerceptron", check)
        n, n_features = len(X), structure.n_features
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        epoch = 0
        if session.resuming:
            meta, arrays = session.state
            state = OnlineState(w=arrays["w"].copy(), u=arrays["u"].copy(),
                                rng=rng_from_state(session.restored("rng")), step=meta["step"],
                                counters={"n_updates": meta["n_updates"]})
            self.objective_curve_ = list(meta["objective_curve"])
            restore_monitor(monitor, meta["monitor"])
            epoch = session.iteration
        else:
            # u: sum over updates of (step - 1) * Delta
            state = OnlineState(w=np.zeros(n_features), u=np.zeros(n_features),
                                rng=np.random.default_rng(self.random_state),
                                counters={"n_updates": 0})
            self.objective_curve_ = []
        if session.resuming:
            support = session.state[1].get("support_")
            self.support_ = None if support is None else support.astype(np.int64)
            self._mask = None
        else:
            self._fix_support(structure, X, Y)
        batch = self._compiled_batch(structure, X, Y)

        def save(done):
            if session.active:
                meta = {"rng": rng_state(state.rng), "step": state.step,
                        "n_updates": state.counters["n_updates"],
                        "objective_curve": self.objective_curve_, "monitor": monitor_state(monitor)}
                arrays = {"w": state.w, "u": state.u}
                if self.support_ is not None:
                    arrays["support_"] = self.support_
                session.save(epoch, meta, arrays, done=done)

        t_start = time.perf_counter()
        bar = tqdm(total=max_iter, initial=min(epoch, max_iter), desc="perceptron", unit="epoch",
                   disable=bar_disable(self.progress), leave=False)
        first, last = epoch + 1, (epoch if session.done else max_iter)
        for epoch in range(first, last + 1):
            order = visiting_order(state.rng, n, self.shuffle)
            mistakes, rate = self._pass(structure, X, Y, order, state, monitor, check, batch)
            self.objective_curve_.append(mistakes)
            bar.set_postfix(mistakes=f"{mistakes:.6g}")
            bar.update(1)
            stop = mistakes == 0 if self.epsilon is None else rate / n < self.epsilon
            save(stop or epoch == max_iter)
            if stop:
                break
        bar.close()
        self.n_inexact_decodes_ = 0
        self._finish(state, epoch, monitor, time.perf_counter() - t_start)
        return self

    def partial_fit(self, X, Y):
        """One online pass over the batch ``X``, ``Y``, continuing from the current model.

        The first call (on a learner neither fitted nor partially fitted) starts from
        w = 0 with ``rng = np.random.default_rng(random_state)``; every call then visits the
        batch once, in the order ``rng.permutation(len(X))`` (or in the given order with
        ``shuffle=False``), making the perceptron update of ``fit`` on each mistake.  Carried
        over from call to call, and from a ``fit`` before: the weights, the averaging
        accumulator, the step counter ``t_`` (examples visited), the generator, and the
        counters ``n_updates_`` and ``n_inexact_decodes_``.  ``n_iter_`` counts passes (a
        ``fit``'s epochs and one per call), ``objective_curve_`` gets this pass's mistakes, and
        ``coef_`` is valid after every call (with ``average=True`` the average of the
        weights after every step so far).  Unlike ``fit`` a call never stops early.

        So calls on batches B1, ..., Bk with ``shuffle=False`` give the model of
        ``fit(B1 + ... + Bk)`` with ``max_iter=1, shuffle=False`` (the same updates in the
        same order), and one call on the whole data from scratch gives ``fit`` with
        ``max_iter=1`` (the same permutation).

        The task must be fitted before the first call and stay so: its feature index was
        fixed by ``task.fit``, and attributes unseen then have no weight; a task with
        ``feature_index="hashing"`` sees every attribute.  Hyperparameters changed between
        calls (``set_params``) apply from the next call; ``max_iter`` is not used (one pass
        per call).  Returns self.
        """
        structure = self._partial_fit_task()
        self._validate(X, Y)
        X, Y = structure.as_batch(X), list(Y)
        check = bool(self.check_inference)
        monitor = InferenceMonitor("StructuredPerceptron", check)
        state = self._continued_state()
        if state is None:
            state = OnlineState(w=np.zeros(structure.n_features), u=np.zeros(structure.n_features),
                                rng=np.random.default_rng(self.random_state),
                                counters={"n_updates": 0})
            self.objective_curve_, self.n_iter_, self.n_inexact_decodes_ = [], 0, 0
            self.fit_time_ = 0.0
            self._fix_support(structure, X, Y)  # the first call's data fixes the feature set
        t_start = time.perf_counter()
        order = visiting_order(state.rng, len(X), self.shuffle)
        self.objective_curve_.append(self._pass(structure, X, Y, order, state, monitor, check,
                                                self._compiled_batch(structure, X, Y))[0])
        elapsed = getattr(self, "fit_time_", 0.0)  # a loaded model has none
        self._finish(state, self.n_iter_ + 1, monitor, elapsed + time.perf_counter() - t_start)
        return self

    def _pass(self, structure, X, Y, order, state, monitor, check,
              batch=None) -> tuple[float, float]:
        """Visit the examples ``order`` of ``X`` once, updating ``state``; the mistakes (total
        task loss of the decoded structures) and the summed error rates (loss / size).
        ``batch``: the structure's prepared batch, to run the pass compiled."""
        w, u = state.w, state.u
        if batch is not None:
            stats = self._run_compiled(structure, batch, order, state, monitor,
                                       RULES["perceptron"], EMPTY, u, EMPTY)
            state.counters["n_updates"] += int(stats["n_updates"])
            return stats["errors"], stats["rate"]
        mistakes = rate = 0.0
        n = w.shape[0]
        sized = SIZED in structure.capabilities
        partial = self._unknown_parts(structure, Y)
        for i in order:
            i = int(i)
            state.step += 1
            x, y = X[i], Y[i]
            if partial:  # the latent perceptron: unknown tags completed under the current w
                y = structure.complete_batch(x, w, [y])[0]
            res = structure.argmax(x, w)
            monitor.observe([res], "argmax", [i])
            if check:
                monitor.consistent(float(res.score),
                                   structure.joint_feature(x, res.structure).dot(w), "argmax", i)
            loss = float(structure.loss(y, res.structure))
            if loss > 0:
                d = self._restricted(structure.joint_feature_difference(x, y, res.structure), n)
                perceptron_step(w, u, EMPTY, d.indices, d.values, 0.0, loss, state.step, EMPTY)
                mistakes += loss
                rate += loss / (structure.example_size(x) if sized else 1)
                state.counters["n_updates"] += 1
        return mistakes, rate

    def _finish(self, state, n_iter, monitor, seconds) -> None:
        """The learned attributes after ``n_iter`` passes in all."""
        self._online = state
        w, u, step = state.w, state.u, state.step
        self.coef_ = w - u / step if self.average else w.copy()
        self.n_iter_ = n_iter
        self.t_ = step
        self.n_updates_ = state.counters["n_updates"]
        self.converged_ = bool(self.objective_curve_[-1] == 0)
        self.n_inexact_decodes_ = getattr(self, "n_inexact_decodes_", 0) + monitor.n_inexact
        self.fit_time_ = seconds
        monitor.warn()
