"""The log-loss learner: a regularised conditional random field (Lafferty et al. 2001).

Over any task offering *marginalizable* (log-partition, marginals, expected features), it
minimises the negative conditional log-likelihood with CRFsuite's L2 penalty and, with
``c1 > 0``, CRFsuite's L1 penalty (by OWL-QN, :mod:`latentstruct.solvers.owlqn`).  A
sequence task makes it a linear-chain CRF with the features of the task, so it can stand in
for sklearn-crfsuite (``predict_marginals`` in the same shape through the raw-data
estimators).
"""

from __future__ import annotations

import contextlib
import inspect
import time
import warnings

import numpy as np
from joblib import effective_n_jobs
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...exceptions import (check_is_fitted, ConfigError, ConvergenceWarning, InexactInferenceWarning,
                          InferenceError, InputError, user_stacklevel)
from ...inference.constraints import check_entries
from ...inference.result import EXACT
from ...parallel import parallel_chunks, shared
from ...parallel.schedule import balanced_bounds
from ...solvers.owlqn import owlqn
from ...solvers.sgd import lbfgs
from ...solvers.structured_sgd import CALIBRATION_DEFAULTS, calibrate_eta0, search_eta0, step_size
from ...tasks.contracts import (ALLOWED_LABELS, CLASS_POSTERIOR, MARGINALIZABLE, MAX_DECODABLE, SIZED,
                               any_of)
from ..base import LinearStructuredLearner, register_learner
from ..checkpoint import CheckpointSession
from ..checkpoint_state import rng_from_state, rng_state
from ..feature_support import FEATURE_SET_CONSTRAINTS, feature_support, restore_support, save_support
from ...limits import passes
from ..params import BOOL, NJOBS, NONNEGATIVE, PASSES, POSITIVE, SEED, Interval, Options, store_init_args

__all__ = ["CRF"]

SOLVERS = ("lbfgs", "sgd")
#: how SGD ends: after max_iter epochs, or also by CRFsuite's delta/period test
SGD_STOPPING = ("max_iter", "delta")
#: what a calibration candidate costs
_TRIAL = passes("a calibration trial, an epoch over the calibration sample")


@register_learner("crf")
class CRF(LinearStructuredLearner):
    """Conditional log-likelihood with L1 and L2 penalties (a CRF over the task's structures).

    Optimisation problem (CRFsuite's and sklearn-crfsuite's objective, the same scaling:
    CRFsuite's ``train_lbfgs.c`` adds ``c2 ||w||²`` to the summed loss and hands ``c1`` to
    libLBFGS as ``orthantwise_c``, which adds ``c1 ||w||_1``)::

        min_w  F(w) = c1 ||w||_1 + c2 ||w||² + Σ_i [ log Z(x_i; w) − w·Φ(x_i, y_i) ],
        Z(x; w) = Σ_y exp(w·Φ(x, y)),

    whose smooth part has gradient ``2 c2 w + Σ_i (E_{p(y|x_i; w)}[Φ(x_i, y)] − Φ(x_i, y_i))``.
    Z and the expectation come from the task's exact sum-product (a chain task:
    forward–backward in :mod:`latentstruct.inference.chain_fb`).  A gold label −1 (a token left free on purpose;
    ``encode_targets`` refuses a tag the task never saw) leaves its position free: the example's term is then
    ``log Z(x_i) − log Σ_{y agreeing with y_i} exp(w·Φ(x_i, y))``.

    Solvers:

    * ``"lbfgs"`` (default): with ``c1 = 0``, SciPy's L-BFGS-B on the whole objective, at
      most ``max_iter`` iterations; it stops earlier, as CRFsuite does, once F fell by less
      than a relative ``delta`` over the last ``period`` iterations.  With ``c1 > 0``,
      OWL-QN (Andrew & Gao 2007, Algorithm 1; :func:`latentstruct.solvers.owlqn.owlqn`):
      libLBFGS's OWL-QN as CRFsuite runs it (its backtracking line search, at most 20
      trials, and its stopping rules: ``delta`` over ``period`` iterations, ``epsilon`` on
      ``||◇F|| / max(1, ||w||)``, at most ``max_iter`` iterations).
    * ``"sgd"``: ``max_iter`` epochs of mini-batch SGD on
      ``(1/n) Σ_i f_i(w) + (λ/2) ||w||²`` (F/n when ``λ = 2 c2 / n``), by
      ``w <- (1 − η_t λ) w − (η_t/|B|) Σ_{i∈B} ∇f_i(w)`` with λ = ``alpha`` (default 2 c2 / n) and
      ``η_t = η0 / (1 + η0 λ t)`` (t counts mini-batches), over ``rng.permutation(n)`` each
      epoch.  It also learns incrementally: :meth:`partial_fit`.

      With ``batch_size=1`` it is CRFsuite's ``l2sgd`` (``train_l2sgd.c``): one example per
      step, the decay first and the gradient at the decayed weights,
      ``w <- (1 − η_t λ) w``, then ``w <- w − η_t ∇f_i(w)`` (t counts examples).  A task with
      the compiled form ``log_loss_sgd`` (every sequence task) runs each epoch in one
      compiled call that keeps the decay as a scale factor (``w = decay · v``), so a step
      touches only the example's features, as CRFsuite's does; other tasks loop in Python.
      ``eta0="calibrate"`` picks η0 by CRFsuite's calibration
      (:func:`latentstruct.solvers.structured_sgd.calibrate_eta0`: one epoch from w = 0 on
      ``calibration_samples`` shuffled examples per candidate, candidates
      ``calibration_eta · calibration_rate^k``, the lowest objective wins), and
      ``sgd_stopping="delta"`` stops as CRFsuite does (the epoch objective fell by less than
      a relative ``delta`` over the last ``period`` epochs) and keeps the weights of the
      epoch of lowest objective.  ``latentstruct.crfsuite``'s ``l2sgd`` sets all three.

    Parameters
    ----------
    task : a fitted task offering *marginalizable* and either *max-decodable* (every sequence
        task: a linear-chain CRF) or *class-posterior* (a class decided over a hidden chain,
        the hidden-state CRF of Quattoni et al. 2007 / pyhcrf: ``predict`` takes the class of
        highest ``p(y | x) = Σ_h p(y, h | x)``, ``predict_proba`` gives those posteriors)
    c1 : float, default 0.0
        L1 coefficient, as CRFsuite's ``c1`` (the penalty is ``c1 ||w||_1`` on the summed
        loss, over the trained weights, transitions included).  ``c1 > 0`` trains by OWL-QN
        and drives many weights to exactly zero (``n_nonzero_``); it needs
        ``solver="lbfgs"`` (CRFsuite's SGD, l2sgd, has no L1 term either).  ``c1 = 0``
        gives exactly the L2 model of SciPy's L-BFGS-B.
    c2 : float, default 1.0
        L2 coefficient, as CRFsuite's ``c2`` (the penalty is ``c2 ||w||²`` on the summed loss).
    feature_set : {"observed", "all"}, default "observed"
        Which weights are trained; the others stay zero.  "observed": CRFsuite's feature set,
        the features of the training data's gold structures (for a sequence task, the
        (attribute, label) pairs seen in training and every transition weight, without start
        and end weights: the task's ``observed_feature_support``); "all": every feature of
        the task (every
        attribute with every label, which lets the model learn that an attribute argues
        *against* a label, at the cost of a larger problem: 6.8 M weights instead of 0.3 M on
        CoNLL-2000).  The set is fixed by ``fit`` or by the first ``partial_fit`` call
        (``support_``).
    possible_states : bool, default False
        With ``feature_set="observed"``: also train the (attribute, label) pairs the gold
        structures never show (CRFsuite's ``feature.possible_states``).
    possible_transitions : bool, default True
        With ``feature_set="observed"``: train every transition weight (CRFsuite's
        ``feature.possible_transitions=1``); False trains only the label bigrams of the gold
        structures, CRFsuite's default (a task without that choice refuses False).
    solver : {"lbfgs", "sgd"}, default "lbfgs"
        SciPy's L-BFGS-B on the whole objective (OWL-QN when ``c1 > 0``), or mini-batch
        SGD (which offers partial_fit).
    max_iter : int, default 100
        L-BFGS iterations, or SGD epochs.
    delta : float, default 1e-5
        L-BFGS stops when ``(F_{k−period} − F_k) / F_k < delta`` (CRFsuite's rule); so does
        SGD, per epoch, with ``sgd_stopping="delta"`` (F: the epoch's objective).
    period : int, default 10
        The number of iterations (SGD: epochs) ``delta``'s decrease is measured over.
    epsilon : float, default 1e-5
        L-BFGS also stops when ``||∇F(w)|| / max(1, ||w||) ≤ epsilon`` (OWL-QN, ``c1 > 0``:
        ◇F, the pseudo-gradient), CRFsuite's and libLBFGS's ``epsilon``; 0 turns it off.
    memory : int, default 6
        L-BFGS correction pairs (CRFsuite's ``num_memories``); each iteration costs
        O(memory · n_features) on top of the gradient.
    alpha : float or None, default None
        SGD's per-example L2 strength λ; None gives ``2 c2 / n`` for the n examples of
        ``fit``.  A stream has no n: :meth:`partial_fit` needs ``alpha`` unless ``fit`` ran.
    eta0 : "auto", "calibrate" or float, default "auto"
        SGD's first step; "auto" picks it from {2^k} by one epoch on a 10 % sample (Bottou's
        search); "calibrate" by CRFsuite's calibration (the ``calibration_*`` parameters).
    batch_size : int, default 32
        SGD mini-batch size; 1 is CRFsuite's per-example ``l2sgd`` step (see Solvers).
    random_state : int, default 0
        Seeds SGD's visiting order and eta0 sample (L-BFGS draws nothing).
    n_jobs : int, default 1
        Threads for the gradient (-1: every core, as joblib counts them): the corpus is cut
        once into ``n_jobs`` contiguous blocks of about equal size (tokens, where the task
        counts them), each block's gradient goes to its own buffer, reused at every
        iteration, with the GIL released in the compiled kernel, and the blocks are summed
        in order: a given ``n_jobs`` always gives the same model, and another ``n_jobs``
        the same to rounding.  With a feature set (``support_``) on a sequence task, the
        blocks read and write the trained weights only (the task's ``log_loss_trained``),
        in buffers of the support's size, and the corpus is cut into ``TRAINED_BLOCKS``
        (8) blocks whatever ``n_jobs`` (each thread takes a contiguous run of them), so
        every ``n_jobs`` up to 8 gives the same model, bit for bit.  Under
        ``joblib.parallel_config`` with a process or cluster backend the blocks go to its
        workers instead.
    progress : bool, default False
        Show a progress bar over iterations with the objective.
    check_inference : bool, default True
        Raise ``InferenceError`` if a training example's marginals are not exact (the graph
        task's LP relaxation); False counts them in ``n_inexact_marginals_`` and warns.
    calibration_eta : float, default 0.1
        ``eta0="calibrate"``: the first candidate η0 (CRFsuite's ``calibration.eta``).
    calibration_rate : float > 1, default 2.0
        The factor between candidates (``calibration.rate``).
    calibration_samples : int, default 1000
        The examples each candidate's epoch runs on, the first of a shuffled order
        (``calibration.samples``; all of them when there are fewer).
    calibration_candidates : int, default 10
        How many candidates that lower the sample's objective are tried upwards from
        ``calibration_eta``, and then downwards (``calibration.candidates``).
    calibration_max_trials : int, default 20
        The search ends once its trial counter, starting at 1, reaches this
        (``calibration.max_trials``).
    sgd_stopping : {"max_iter", "delta"}, default "max_iter"
        SGD runs ``max_iter`` epochs and keeps the last weights; "delta": CRFsuite's
        ``l2sgd`` rule, it also stops once ``(F_{k−period} − F_k) / F_k < delta`` over the
        epochs' objectives and keeps the weights of the epoch of lowest objective.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    support_ : ndarray of int or None, the indices of the trained weights (None: all)
    n_iter_ : int, L-BFGS iterations or SGD epochs (over all ``partial_fit`` calls)
    t_ : int, SGD mini-batch steps taken (0 for L-BFGS)
    eta0_ : float, SGD's first step as used (given, searched or calibrated)
    eta0_trials_ : SGD's search for eta0: ``{eta0: objective}`` ("auto") or
        ``[(eta0, objective), ...]`` in the order tried ("calibrate")
    objective_curve_ : list of float, F after every iteration (SGD: F/n, estimated from the
        epoch's mini-batches)
    converged_ : bool, whether L-BFGS (or SGD with ``sgd_stopping="delta"``) met its stopping
        rule before ``max_iter``
    n_nonzero_ : int, the number of non-zero weights in ``coef_`` (with ``c1 > 0``, the
        sparse model's size; CRFsuite's "Active features")
    stop_reason_ : str, how OWL-QN ended (``c1 > 0`` only): "delta", "epsilon", "max_iter",
        "linesearch" (no step within 20 halvings lowered F, usually rounding at the
        optimum; libLBFGS's and CRFsuite's run ends there too, on the last accepted point)
        or "minimized" (w = 0 met the epsilon rule)
    n_inexact_marginals_ : int, training examples with inexact marginals (see check_inference)
    """

    # predictions come from an argmax over structures (a chain: Viterbi), or, for a class
    # decided over a hidden structure (a hidden-state CRF), from the class posteriors
    requires = frozenset({MARGINALIZABLE, any_of(MAX_DECODABLE, CLASS_POSTERIOR)})
    uses_if_offered = frozenset({SIZED})  # n_jobs: blocks of equal tokens, not sentences
    partial_labels = "marginalised"  # unknown tags: see LinearStructuredLearner.partial_labels
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    _parameter_constraints = {
        "c1": [NONNEGATIVE],
        "c2": [NONNEGATIVE],
        **FEATURE_SET_CONSTRAINTS,
        "solver": [Options(*SOLVERS)],
        "max_iter": [PASSES],
        "delta": [NONNEGATIVE],
        # the curve kept is as long as the run, and each correction pair holds two vectors of
        # n_features floats: neither needs to grow without bound
        "period": [Interval(int, 1, 1000, closed="both")],
        "memory": [Interval(int, 1, 100, closed="both")],
        "epsilon": [NONNEGATIVE],
        "alpha": [NONNEGATIVE, None],
        "eta0": [Options("auto", "calibrate"), POSITIVE],
        "batch_size": [Interval(int, 1, None, closed="left")],
        "calibration_eta": [POSITIVE],
        # a rate of 1 would try one candidate over and over, one below 1 go the wrong way
        "calibration_rate": [Interval(float, 1, None, closed="neither")],
        # a sample size, capped by the data (as batch_size); each candidate or trial is an
        # epoch over that sample
        "calibration_samples": [Interval(int, 1, None, closed="left")],
        "calibration_candidates": [Interval(int, 1, closed="both", bound=_TRIAL)],
        "calibration_max_trials": [Interval(int, 1, closed="both", bound=_TRIAL)],
        "sgd_stopping": [Options(*SGD_STOPPING)],
        "random_state": [SEED], "n_jobs": [NJOBS, None], "progress": [BOOL],
        "check_inference": [BOOL],
    }

    def __init__(self, structure=None, c1=0.0, c2=1.0, feature_set="observed", possible_states=False,
                 possible_transitions=True, solver="lbfgs",
                 max_iter=100, delta=1e-5, period=10, epsilon=1e-5, memory=6, alpha=None,
                 eta0="auto", batch_size=32, random_state=0, n_jobs=1, progress=False,
                 check_inference=True, calibration_eta=0.1, calibration_rate=2.0,
                 calibration_samples=1000, calibration_candidates=10, calibration_max_trials=20,
                 sgd_stopping="max_iter"):
        store_init_args(self, locals())

    # --- the loss ------------------------------------------------------------------------
    def _loss_grad(self, X, Y, w, data=None, out=None) -> tuple[float, np.ndarray]:
        """Σ_i of the examples' negative log-likelihoods and its gradient at ``w`` (written
        to ``out`` when the task's batch kernel takes it and the pass is serial or threaded).
        ``data``: the fit's shared block, or its :class:`ThreadBlocks`."""
        if isinstance(data, ThreadBlocks):
            return data.loss_grad(w, out)
        n = len(X)
        blocks = min(effective_n_jobs(self.n_jobs), n)  # -1: every core, as in joblib
        if blocks <= 1 or data is None:
            return _block_loss(self._structure(), X, Y, w, out=out)
        cuts = np.linspace(0, n, blocks + 1).astype(np.int64)
        parts = parallel_chunks(_blocks_kernel, blocks, blocks, prefer="threads",
                                args=(data["structure"], data["X"], data["Y"], cuts, w), desc="crf")
        total, grad = parts[0]
        grad = grad.copy()
        for f, g in parts[1:]:  # in block order: the sum does not depend on the schedule
            total += f
            grad += g
        return total, grad

    def objective(self, X, Y, w=None) -> float:
        """F(w) on examples ``X`` with gold structures ``Y`` (default w: ``coef_``)."""
        if w is None:
            check_is_fitted(self)
            w = self.coef_
        X = self._structure().as_batch(X)
        w = np.asarray(w, dtype=np.float64)
        loss, _ = _block_loss(self._structure(), X, list(Y), w)
        value = float(loss + self.c2 * float(w @ w))
        if self.c1 > 0:
            value += self.c1 * float(np.abs(w).sum())
        return value

    # --- fit -------------------------------------------------------------------------------
    def _validated(self, X, Y):
        if self.c1 > 0 and self.solver != "lbfgs":
            raise ConfigError(
                f"c1={self.c1} (an L1 penalty) needs solver='lbfgs', which trains it by OWL-QN; "
                f"solver={self.solver!r} has no L1 term (neither has CRFsuite's SGD, l2sgd). "
                "Use solver='lbfgs', or c1=0")
        structure = self._check_structure()
        X = structure.as_batch(X)
        if len(X) == 0:
            raise InputError("no training examples: X is empty")
        if len(Y) != len(X):
            raise InputError(f"X has {len(X)} examples but Y has {len(Y)} structures")
        Y = list(Y)
        if self._unknown_parts(structure, Y):
            # a partial labelling that no allowed labelling completes has probability 0 and
            # an infinite loss: named here (complete_batch's error), not met as inf later
            structure.complete_batch(X, np.zeros(structure.n_features), Y)
        return structure, X, Y

    def fit(self, X, Y, *, checkpoint=None, resume=None) -> "CRF":
        """Learn ``coef_`` from examples ``X`` and encoded structures ``Y``; returns self.

        ``checkpoint`` saves the state after every epoch and ``resume`` continues from such a
        file to the model an uninterrupted run gives (``solver="sgd"``; L-BFGS refuses both:
        SciPy keeps its curvature pairs inside the solver, so a resumed run would not be the
        same run, the hidden-variable reranker's rule)."""
        if self.solver == "lbfgs" and (checkpoint is not None or resume is not None):
            raise ConfigError(
                "CRF with solver='lbfgs' cannot checkpoint or resume: SciPy's L-BFGS-B keeps "
                "its state (the curvature pairs) inside the solver and offers no way to restore "
                "it (OWL-QN, for c1 > 0, likewise), so a resumed run would not be the same "
                "run. Use solver='sgd', or train "
                "without --checkpoint/--resume")
        structure, X, Y = self._validated(X, Y)
        t0 = time.perf_counter()
        self.n_inexact_marginals_ = self._count_inexact_marginals(structure, X)
        self.support_ = self._support(structure, X, Y)
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        with shared(structure=structure, X=X, Y=Y) as data:
            if self.solver == "lbfgs":
                with ThreadBlocks.for_fit(structure, X, Y, self.n_jobs,
                                          support=self.support_) as blocks:
                    if blocks is not None:  # threads: the corpus cut once, buffers reused
                        data = blocks
                    if self.c1 > 0:
                        self._fit_owlqn(structure, X, Y, data)
                    else:
                        self._fit_lbfgs(structure, X, Y, data)
            else:
                self.t_, self.n_iter_, self.objective_curve_ = 0, 0, []
                self._sgd(structure, X, Y, session, fresh=True)
        self.n_nonzero_ = int(np.count_nonzero(self.coef_))
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _count_inexact_marginals(self, structure, X) -> int:
        """The examples whose marginals are not exact (warned about; raised under
        ``check_inference``).  That depends on an example's structure (the graph task relaxes
        loopy graphs too large to enumerate), not on w: one pass at w = 0 finds them.  Tasks
        with a compiled batch loss (exact forward-backward) are not probed."""
        if getattr(structure, "log_loss_batch", None) is not None:
            return 0
        w = np.zeros(structure.n_features)
        inexact = [i for i in range(len(X))
                   if getattr(structure.marginals(X[i], w), "status", EXACT) != EXACT]
        if inexact and self.check_inference:
            raise InferenceError(
                f"CRF: the marginals of training example {inexact[0]} (and {len(inexact) - 1} "
                "more) are not exact, so the log-likelihood would be approximate; make the "
                "examples small enough for exact marginals, or pass check_inference=False")
        if inexact:
            warnings.warn(f"CRF: {len(inexact)} of {len(X)} training examples have inexact "
                          "marginals; the objective and gradient are approximate there",
                          InexactInferenceWarning, stacklevel=user_stacklevel())
        return len(inexact)

    def _trained_problem(self, structure, X, Y, data):
        """(loss_grad, expand, w0): the summed loss and its gradient over the trained
        weights (all, or ``support_``), the map back to every feature, and the start 0.

        With a support, L-BFGS works on ``z = w[support]``.  A task with the compiled form
        ``log_loss_trained`` (every sequence task) evaluates the loss from ``z`` directly,
        in the fit's :class:`ThreadBlocks` (one thread or more); otherwise (or when the
        blocks go to processes) ``z`` is expanded into a whole ``w`` per call and the
        gradient gathered on the support.  Both give the same numbers up to the summation
        order."""
        w0 = np.zeros(structure.n_features)
        support = self.support_
        if support is None:
            def loss_grad(v):
                return self._loss_grad(X, Y, v, data)

            def expand(v):
                return v

            return loss_grad, expand, w0

        def expand(z):
            out = np.zeros(structure.n_features)
            out[support] = z
            return out

        w0 = w0[support]
        if isinstance(data, ThreadBlocks) and data.trained:
            return data.loss_grad, expand, w0  # the blocks on the trained weights
        # L-BFGS works on the trained weights only; the others stay zero
        full = np.zeros(structure.n_features)
        buffer = np.zeros(structure.n_features)  # the gradient's, reused: only g[support] leaves

        def loss_grad(z):
            full[support] = z
            if isinstance(data, ThreadBlocks):  # the blocks summed on the support only
                return data.loss_grad(full, support=support)
            f, g = self._loss_grad(X, Y, full, data, out=buffer)
            return f, g[support]

        return loss_grad, expand, w0

    def _fit_lbfgs(self, structure, X, Y, data) -> None:
        curve = []
        period, delta = int(self.period), float(self.delta)
        epsilon, c2 = float(self.epsilon), float(self.c2)
        trained_loss_grad, expand, w0 = self._trained_problem(structure, X, Y, data)
        last = {}

        def loss_grad(z):  # remembers the last point and gradient, for the epsilon test
            f, g = trained_loss_grad(z)
            last["z"], last["g"] = z.copy(), g
            return f, g

        def small_gradient(w) -> bool:
            """libLBFGS's test, ||∇F|| / max(1, ||w||) ≤ epsilon, where the last gradient
            evaluated is the iterate's (L-BFGS-B's line search ends at its accepted step)."""
            if epsilon <= 0 or "z" not in last or not np.array_equal(last["z"], w):
                return False
            grad = last["g"] + (2.0 * c2) * w
            return float(np.linalg.norm(grad)) <= epsilon * max(1.0, float(np.linalg.norm(w)))
        bar = tqdm(total=int(self.max_iter), desc="crf", unit="it",
                   disable=bar_disable(self.progress), leave=False)

        def stop(iteration, value, w) -> bool:
            curve.append(value)
            bar.update(1)
            bar.set_postfix(objective=f"{value:.6g}")
            if small_gradient(w):
                return True
            return len(curve) > period and (curve[-1 - period] - curve[-1]) < delta * abs(curve[-1])

        try:
            res = lbfgs(loss_grad, w0, alpha=2.0 * self.c2, max_iter=int(self.max_iter),
                        tol=1e-10, stop=stop, memory=self.memory)
            w, converged, n_it = expand(res.w), res.converged, res.n_iter
        finally:
            bar.close()
        self.coef_ = np.asarray(w, dtype=np.float64)
        self.n_iter_ = n_it
        self.t_ = 0
        self.objective_curve_ = curve
        self.converged_ = bool(converged)
        if not converged and self.n_iter_ >= int(self.max_iter):
            warnings.warn(f"CRF: L-BFGS stopped at max_iter={self.max_iter} before the objective "
                          f"settled (relative decrease over {period} iterations ≥ delta={delta}); "
                          "raise max_iter for a tighter optimum", ConvergenceWarning,
                          stacklevel=user_stacklevel())

    def _fit_owlqn(self, structure, X, Y, data) -> None:
        """c1 > 0: OWL-QN on the trained weights, CRFsuite's settings (see the class doc)."""
        curve, c2 = [], float(self.c2)
        loss_grad, expand, w0 = self._trained_problem(structure, X, Y, data)

        def smooth(z):  # the NLL and c2 ||w||², as CRFsuite's lbfgs_evaluate; OWL-QN adds c1
            f, g = loss_grad(z)
            return f + c2 * float(z @ z), g + (2.0 * c2) * z

        bar = tqdm(total=int(self.max_iter), desc="crf (owl-qn)", unit="it",
                   disable=bar_disable(self.progress), leave=False)

        def progress(k, value, z) -> bool:
            curve.append(value)
            bar.update(1)
            bar.set_postfix(objective=f"{value:.6g}")
            return False

        try:
            res = owlqn(smooth, w0, float(self.c1), memory=int(self.memory),
                        max_iter=int(self.max_iter), epsilon=float(self.epsilon),
                        period=int(self.period), delta=float(self.delta), callback=progress)
        finally:
            bar.close()
        self.coef_ = np.asarray(expand(res.w), dtype=np.float64)
        self.n_iter_ = res.n_iter
        self.t_ = 0
        self.objective_curve_ = curve
        self.converged_ = bool(res.converged)
        self.stop_reason_ = res.status
        if res.status == "max_iter":
            warnings.warn(f"CRF: OWL-QN stopped at max_iter={self.max_iter} before meeting its "
                          f"stopping rules (delta={self.delta} over {self.period} iterations, "
                          f"epsilon={self.epsilon}); raise max_iter for a tighter optimum",
                          ConvergenceWarning, stacklevel=user_stacklevel())

    # --- SGD and partial_fit ---------------------------------------------------------------
    def partial_fit(self, X, Y) -> "CRF":
        """One SGD pass over the batch ``(X, Y)`` in the given order, continuing from the
        current weights and step count (``solver="sgd"`` only).

        The first call starts from w = 0 (or from a ``fit`` model) with the task as fitted:
        its feature index is fixed, so attributes unseen when the task was fitted are
        ignored (a hashing task, ``feature_index="hashing"``, gives every attribute a
        weight).  Mini-batches of ``batch_size`` are cut from each call's batch; ``eta0``
        must be a number, and so must ``alpha`` (λ) unless ``fit`` ran first.
        Calls on batches whose lengths are multiples of ``batch_size`` give exactly the model
        of one epoch over their concatenation in that order.  ``n_iter_`` counts calls,
        ``t_`` mini-batch steps."""
        if self.solver != "sgd":
            raise ConfigError("partial_fit needs solver='sgd'; L-BFGS optimises the whole "
                              "training set at once (use fit)")
        if self.eta0 in ("auto", "calibrate") and getattr(self, "eta0_", None) is None:
            raise ConfigError(f"partial_fit needs a numeric eta0 (e.g. eta0=0.1): "
                              f"{self.eta0!r} tunes it on the training set, which a stream "
                              "does not have")
        structure, X, Y = self._validated(X, Y)
        if getattr(self, "lambda_", None) is None and self.alpha is None:
            raise ConfigError("partial_fit needs alpha, the per-example L2 strength (fit uses "
                              "2*c2/n, and a stream has no n); e.g. alpha=1e-4")
        if getattr(self, "coef_", None) is None:
            self.coef_ = np.zeros(structure.n_features)
            self.t_, self.n_iter_, self.objective_curve_ = 0, 0, []
            self.support_ = self._support(structure, X, Y)
        elif self.coef_.shape != (structure.n_features,):
            raise InputError(f"the model has {self.coef_.shape[0]} weights but the task now has "
                             f"{structure.n_features} features; partial_fit needs the task it "
                             "started with")
        self.n_inexact_marginals_ = (getattr(self, "n_inexact_marginals_", 0)
                                     + self._count_inexact_marginals(structure, X))
        self._sgd(structure, X, Y, None, fresh=False)
        return self

    def _sgd(self, structure, X, Y, session, fresh: bool) -> None:
        n = len(X)
        compiled = self._compiled_epoch(structure, X, Y)
        stopping = self.sgd_stopping == "delta" and fresh
        best_w, best, stopped = None, np.inf, False
        if fresh:
            lam = 2.0 * self.c2 / n if self.alpha is None else float(self.alpha)
            self.lambda_ = lam
            eta0 = self.eta0
            if eta0 == "auto":
                eta0, self.eta0_trials_ = self._search_eta0(structure, X, Y, lam, compiled)
            elif eta0 == "calibrate":
                eta0, self.eta0_trials_ = self._calibrate(structure, X, Y, lam, compiled)
            self.eta0_ = float(eta0)
            rng = np.random.default_rng(self.random_state)
            w, epochs = np.zeros(structure.n_features), int(self.max_iter)
            if session is not None and session.resuming:
                meta, arrays = session.state
                w, rng = arrays["w"].copy(), rng_from_state(meta["rng"])
                self.t_, self.objective_curve_ = int(meta["t"]), list(meta["curve"])
                self.n_iter_ = session.iteration
                if stopping and "best_w" in arrays:
                    best_w, best = arrays["best_w"].copy(), float(meta["best"])
                if meta.get("stopped", False):  # the run had ended by the delta rule
                    stopped, epochs = True, self.n_iter_
        else:
            lam = getattr(self, "lambda_", None)
            lam = float(self.alpha) if lam is None else lam
            self.lambda_ = lam
            self.eta0_ = float(getattr(self, "eta0_", None) or self.eta0)
            w, rng, epochs = self.coef_.copy(), None, 1
        first = self.n_iter_
        bar = tqdm(total=epochs, initial=first if fresh else 0, desc="crf (sgd)", unit="epoch",
                   disable=bar_disable(self.progress), leave=False)
        try:
            for _ in range(first if fresh else 0, epochs):
                order = rng.permutation(n) if rng is not None else np.arange(n)
                total, self.t_ = self._sgd_pass(structure, X, Y, w, order, self.eta0_, lam,
                                                self.t_, compiled)
                self.n_iter_ += 1
                curve = self.objective_curve_
                curve.append(total / n + 0.5 * lam * float(w @ w))
                bar.update(1)
                if stopping:
                    if curve[-1] < best:  # CRFsuite keeps the epoch of lowest objective
                        best, best_w = curve[-1], w.copy()
                    period = int(self.period)
                    stopped = (len(curve) > period and
                               (curve[-1 - period] - curve[-1]) / curve[-1] < float(self.delta))
                if session is not None and session.active:
                    meta = {"t": self.t_, "rng": rng_state(rng), "curve": self.objective_curve_,
                            "stopped": stopped}
                    arrays = {"w": w}
                    if best_w is not None:
                        meta["best"], arrays["best_w"] = best, best_w
                    session.save(self.n_iter_, meta, arrays,
                                 done=self.n_iter_ == epochs or stopped)
                if stopped:
                    break
        finally:
            bar.close()
        self.coef_ = w if best_w is None else best_w
        self.n_nonzero_ = int(np.count_nonzero(self.coef_))
        self.converged_ = stopped

    def _compiled_epoch(self, structure, X, Y):
        """The task's compiled per-example epoch (``log_loss_sgd``) for ``batch_size=1``,
        prepared once for the run; None for mini-batches or a task without one."""
        if int(self.batch_size) != 1:
            return None
        prepare = getattr(structure, "log_loss_sgd", None)
        return None if prepare is None else prepare(X, Y, self.support_)

    def _search_eta0(self, structure, X, Y, lam, compiled=None):
        n = len(X)
        srng = np.random.default_rng([self.random_state, 1])
        m = min(n, max(int(self.batch_size) * 5, n // 10))
        sample = np.sort(srng.choice(n, size=m, replace=False))
        Xs, Ys = structure.subset(X, sample), [Y[i] for i in sample]

        def trial(eta0):
            w = np.zeros(structure.n_features)
            self._sgd_pass(structure, X, Y, w, sample, eta0, lam, 0, compiled)
            f, _ = _block_loss(structure, Xs, Ys, w)
            return f / m + 0.5 * lam * float(w @ w)

        return search_eta0(trial, lam)

    def _calibrate(self, structure, X, Y, lam, compiled=None):
        """CRFsuite's calibration of eta0 (:func:`~latentstruct.solvers.structured_sgd.
        calibrate_eta0`): every candidate runs one epoch from w = 0 over the first
        ``calibration_samples`` examples of a shuffled order, in that order, and is scored by
        CRFsuite's epoch objective, the sum of the losses its steps saw plus
        ``(λ/2) S ||w||²``; returns (eta0, [(candidate, objective), ...])."""
        n = len(X)
        srng = np.random.default_rng([self.random_state, 2])
        sample = srng.permutation(n)[:min(n, int(self.calibration_samples))]
        initial, _ = _block_loss(structure, structure.subset(X, sample), [Y[i] for i in sample],
                                 np.zeros(structure.n_features))

        def trial(eta0):
            w = np.zeros(structure.n_features)
            with np.errstate(all="ignore"):  # a diverging candidate is scored inf or nan
                total, _ = self._sgd_pass(structure, X, Y, w, sample, eta0, lam, 0, compiled)
                return total + 0.5 * lam * sample.size * float(w @ w)

        return calibrate_eta0(trial, float(initial), lam,
                              **{k: getattr(self, k) for k in CALIBRATION_DEFAULTS
                                 if k != "calibration_samples"})

    def _sgd_pass(self, structure, X, Y, w, order, eta0, lam, t, compiled=None) -> tuple[float, int]:
        """One pass of SGD steps over the examples in ``order``, updating ``w`` in place
        from step ``t``; returns (the sum of the steps' losses, the step count).

        ``batch_size=1``: CRFsuite's per-example step, through the task's compiled epoch
        (``compiled``, from :meth:`_compiled_epoch`) where there is one; mini-batches:
        ``w <- (1 − η λ) w − (η / |B|) Σ_B ∇f_i(w)``."""
        if compiled is not None:
            return compiled(w, order, eta0, lam, t)
        total = 0.0
        if int(self.batch_size) == 1:  # the decay first, the gradient at the decayed w
            support = self.support_
            for i in order:
                eta = step_size(eta0, lam, t)
                if support is None:
                    w *= 1.0 - eta * lam
                else:
                    w[support] *= 1.0 - eta * lam
                f, g = _block_loss(structure, structure.subset(X, [i]), [Y[i]], w)
                _sgd_step(w, g, eta, 0.0, 1, support)
                total += f
                t += 1
            return total, t
        for a in range(0, order.size, int(self.batch_size)):
            idx = order[a : a + int(self.batch_size)]
            f, g = _block_loss(structure, structure.subset(X, idx), [Y[i] for i in idx], w)
            _sgd_step(w, g, step_size(eta0, lam, t), lam, idx.size, self.support_)
            total += f
            t += 1
        return total, t

    def _support(self, structure, X, Y):
        """The indices of the weights to train (None: all), from the training data."""
        return feature_support(structure, X, Y, self.feature_set, bool(self.possible_states),
                               bool(self.possible_transitions))

    # --- probabilities -------------------------------------------------------------------
    def _class_posterior(self) -> bool:
        return CLASS_POSTERIOR in self._structure().capabilities

    def predict(self, X, *, allowed=None):
        """Best structure of every example (a class-posterior task: the most probable class;
        ``allowed`` as in ``LinearStructuredLearner.predict``)."""
        if self._class_posterior():
            check_is_fitted(self)
            if allowed is not None:
                raise ConfigError("allowed labels restrict a structure's parts; a "
                                  "class-posterior task predicts a class")
            return list(np.argmax(self._class_log_partitions(X), axis=1))
        return super().predict(X, allowed=allowed)

    def _nbest_probabilities(self, structure, x, scores, allowed) -> list:
        """p(y | x) = exp(w·Φ(x, y) − log Z(x)) of each structure, Z summing over the
        structures the model (and ``allowed``) keep, so over all of them they sum to 1."""
        log_z = structure.log_partition(x, self.structure_weights(),
                                        **({} if allowed is None else {"allowed": allowed}))
        return [float(np.exp(s - log_z)) for s in scores]

    def _class_log_partitions(self, X) -> np.ndarray:
        return np.asarray(self._structure().class_log_partitions(self._structure().as_batch(X), self.coef_))

    def predict_marginals(self, X, *, allowed=None) -> list[np.ndarray]:
        """Per-position label probabilities of every example: a list of (T_i, L) arrays,
        ``[t, k] = p(y_t = k | x_i)`` under ``coef_``; each row sums to one.  ``allowed``
        (as in ``predict``): the probabilities given the restriction, p(y_t = k | x_i, y
        keeps it)."""
        check_is_fitted(self)
        structure = self._structure()
        X = structure.as_batch(X)
        if allowed is not None:
            self._offering(ALLOWED_LABELS, "give marginals under allowed labels")
            allowed = check_entries(allowed, len(X), "example", "None, or the example's "
                                                               "allowed labels")
            out = []
            for i in range(len(X)):
                try:
                    kw = {} if allowed[i] is None else {"allowed": allowed[i]}
                    out.append(np.asarray(structure.marginals(X[i], self.coef_, **kw).node))
                except InputError as exc:
                    raise InputError(f"example {i}: {exc.message}") from None
            return out
        batch = getattr(structure, "marginals_batch", None)
        if batch is not None:
            return batch(X, self.coef_)
        return [np.asarray(structure.marginals(X[i], self.coef_).node) for i in range(len(X))]

    def predict_proba(self, X) -> np.ndarray:
        """(n, K) class probabilities: a class-posterior task's ``p(y | x)`` (the hidden
        structure summed out), or the marginals of tasks whose examples have one labelled
        part each."""
        if self._class_posterior():
            check_is_fitted(self)
            log_z = self._class_log_partitions(X)
            log_z = log_z - log_z.max(axis=1, keepdims=True)
            p = np.exp(log_z)
            return p / p.sum(axis=1, keepdims=True)
        marg = self.predict_marginals(X)
        if any(m.shape[0] != 1 for m in marg):
            raise ConfigError(f"predict_proba needs one labelled part per example; task "
                              f"{self._structure().identity.name!r} labels several per example. Use "
                              "predict_marginals for per-position probabilities")
        return np.vstack(marg) if marg else np.zeros((0, self._structure().n_labels))

    # --- persistence ---------------------------------------------------------------------
    def _learned_state(self):
        meta, arrays = super()._learned_state()
        meta.update(t_=int(getattr(self, "t_", 0)), converged_=bool(getattr(self, "converged_", False)),
                    eta0_=getattr(self, "eta0_", None), lambda_=getattr(self, "lambda_", None))
        save_support(meta, arrays, getattr(self, "support_", None))
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        self.n_nonzero_ = int(np.count_nonzero(self.coef_))
        self.t_ = int(meta.get("t_", 0))
        self.converged_ = bool(meta.get("converged_", False))
        for key in ("eta0_", "lambda_"):
            value = meta.get(key)
            setattr(self, key, None if value is None else float(value))
        self.support_ = restore_support(meta, arrays, self.coef_.shape[0])


#: the blocks the trained-weights loss is cut into, whatever ``n_jobs`` (more only for more
#: threads): the gradient sums the same blocks in the same order, so every ``n_jobs`` up to
#: this gives the same model, bit for bit
TRAINED_BLOCKS = 8


class ThreadBlocks:
    """The corpus of one L-BFGS fit cut into contiguous blocks, evaluated by threads.

    Each gradient evaluation runs the task's compiled batch loss of every block into the
    block's own gradient buffer (allocated once), and sums the blocks in block order.  The
    kernels release the GIL, so the threads run at once; nothing is copied or pickled per
    evaluation (the joblib path cut the corpus and allocated whole-length gradients every
    time, which made two threads slower than one).

    With ``support`` (the trained weights' indices) and a task offering
    ``log_loss_trained`` (``trained`` is then True), the loss is that prepared one:
    :meth:`loss_grad` takes ``z = w[support]``, places it once, and the corpus is cut into
    ``TRAINED_BLOCKS`` blocks of about equal tokens whatever the number of threads (each
    thread takes a contiguous run of them; one thread, the caller's, evaluates them in
    turn), each block's gradient in a buffer of the support's size: any ``n_threads`` up
    to ``TRAINED_BLOCKS`` gives the same numbers, bit for bit.  Otherwise the corpus is
    cut into ``n_threads`` subsets evaluated by ``log_loss_batch`` on whole weight
    vectors."""

    def __init__(self, structure, X, Y, n_threads: int, support=None):
        from concurrent.futures import ThreadPoolExecutor

        self.structure = structure
        prepare = None if support is None else getattr(structure, "log_loss_trained", None)
        self.trained = prepare is not None
        if self.trained:
            self.loss = prepare(X, Y, support)
            self.bounds = balanced_bounds(self.loss.sizes(), max(TRAINED_BLOCKS, n_threads))
            self.buffers = [np.empty(self.loss.n_trained) for _ in self.bounds]
            n_threads = max(1, min(n_threads, len(self.bounds)))
            cuts = np.linspace(0, len(self.bounds), n_threads + 1).round().astype(int)
            self.groups = [range(cuts[k], cuts[k + 1]) for k in range(n_threads)]
            self.works = [self.loss.work() for _ in self.groups]
        else:
            self.parts = [(structure.subset(X, np.arange(a, b)), Y[a:b])
                          for a, b in balanced_bounds(_example_costs(structure, X), n_threads)]
            self.buffers = [np.zeros(structure.n_features) for _ in self.parts]
            n_threads = len(self.parts)
        self.pool = (ThreadPoolExecutor(n_threads, thread_name_prefix="latentstruct-crf")
                     if n_threads > 1 else None)

    @classmethod
    @contextlib.contextmanager
    def for_fit(cls, structure, X, Y, n_jobs, support=None):
        """Blocks for a fit with ``n_jobs`` and ``support`` (None: every weight trained).
        None where the gradient runs serially on whole weight vectors, or where joblib's
        active backend is not threads (``parallel_chunks`` serves those); on the trained
        weights (see the class doc) one thread evaluates the blocks too."""
        from joblib.parallel import get_active_backend

        n = min(effective_n_jobs(n_jobs), len(X))
        backend, _ = get_active_backend(prefer="threads")
        threads = getattr(backend, "supports_sharedmem", False)
        trained = (support is not None
                   and getattr(structure, "log_loss_trained", None) is not None)
        if not (threads and n > 1) and not (trained and (threads or n <= 1)):
            yield None
            return
        blocks = cls(structure, X, list(Y), max(n, 1), support=support)
        try:
            yield blocks
        finally:
            if blocks.pool is not None:
                blocks.pool.shutdown()

    def _trained_run(self, group, work) -> list[float]:
        return [self.loss.evaluate(*self.bounds[k], self.buffers[k], work) for k in group]

    def loss_grad(self, w, out=None, *, support=None) -> tuple[float, np.ndarray]:
        """The summed loss and gradient at ``w`` (``trained`` blocks: at the trained weights
        ``z``, the gradient on them, a fresh array); with ``support``, the gradient's
        entries there only (the blocks' buffers are gathered there, not summed whole: the
        trained weights are a small part of the layout)."""
        if self.trained:
            if support is not None:
                raise ValueError("these blocks evaluate the trained weights already; pass z, "
                                 "without support")
            self.loss.load(w)
            if self.pool is None:
                losses = self._trained_run(self.groups[0], self.works[0])
            else:
                futures = [self.pool.submit(self._trained_run, group, work)
                           for group, work in zip(self.groups, self.works)]
                losses = [f for future in futures for f in future.result()]
            total = 0.0
            for f in losses:  # in block order: a fixed summation order
                total += f
            grad = self.buffers[0].copy()
            for g in self.buffers[1:]:
                grad += g
            return total, grad
        futures = [self.pool.submit(_block_loss, self.structure, Xb, Yb, w, buf)
                   for (Xb, Yb), buf in zip(self.parts, self.buffers)]
        results = [f.result() for f in futures]
        total = 0.0
        grad = None
        for f, g in results:  # in block order: a fixed summation order
            total += f
            part = g if support is None else g[support]  # a gather is a copy already
            if grad is not None:
                grad += part
            elif support is not None:
                grad = part
            elif out is not None:
                np.copyto(out, part)
                grad = out
            else:
                grad = part.copy()
        return total, grad


def _example_costs(structure, X) -> np.ndarray:
    """Each example's cost for cutting blocks: its tokens where the task counts an
    example's size (``sized``), else 1."""
    n = len(X)
    if SIZED in structure.capabilities:
        return np.fromiter((structure.example_size(X[i]) for i in range(n)), np.float64, n)
    return np.ones(n)


def _sgd_step(w, g, eta, lam, batch, support) -> None:
    """w <- (1 − η λ) w − (η / |B|) g, on the trained weights only (``support``)."""
    if support is None:
        w *= 1.0 - eta * lam
        w -= (eta / batch) * g
    else:
        w[support] = (1.0 - eta * lam) * w[support] - (eta / batch) * g[support]


def _block_loss(structure, X, Y, w, out=None) -> tuple[float, np.ndarray]:
    """Σ over examples of log Z − log Z(gold) and its gradient: the task's compiled batch
    (``log_loss_batch``) when it has one, else per example from the capability's methods.
    ``out`` is passed to a batch method that takes it (the sequence tasks')."""
    batch = getattr(structure, "log_loss_batch", None)
    if batch is not None:
        if out is not None and "out" in inspect.signature(batch).parameters:
            return batch(X, Y, w, out=out)
        return batch(X, Y, w)
    total, grad = 0.0, np.zeros_like(w)
    for i in range(len(X)):
        x = X[i]
        phi = structure.joint_feature(x, Y[i])
        total += structure.log_partition(x, w) - float(phi.values @ w[phi.indices])
        grad += structure.expected_feature(x, w)
        np.add.at(grad, phi.indices, -phi.values)
    return total, grad


def _blocks_kernel(a, b, structure, X, Y, cuts, w) -> list:
    """Blocks a..b-1 of the corpus (block k: examples cuts[k]..cuts[k+1]-1)."""
    blocks = [np.arange(cuts[k], cuts[k + 1]) for k in range(a, b)]
    return [_block_loss(structure, structure.subset(X, idx), [Y[i] for i in idx], w) for idx in blocks]
