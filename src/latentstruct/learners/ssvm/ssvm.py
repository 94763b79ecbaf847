"""Structural SVM with squared slacks, trained by cutting planes over the grouped DCD engine."""

from __future__ import annotations

import time
import warnings

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...data.sparse import SparseRows
from ...exceptions import (ConfigError, InexactInferenceWarning, InferenceError, PerformanceWarning,
                           user_stacklevel, warn_convergence)
from ...tasks.contracts import MAX_DECODABLE
from ...parallel import parallel_chunks, rows, sends_to_other_processes, shared
from ...solvers.dcd import ConstraintPool, DCDWorkspace
from ..checkpoint import CheckpointSession
from ..checkpoint_state import prefixed, rng_from_state, rng_state, unprefixed
from ...limits import solver_epochs
from ..params import (BOOL, NJOBS, NONNEGATIVE, PASSES, POSITIVE, RANDOM_STATE, SOLVER_EPOCHS,
                     Interval, Options, store_init_args)
from ..base import (LinearStructuredLearner, check_examples, raise_inexact_decoder,
                    register_learner)

__all__ = ["StructuredSVM"]

# A loss-augmented structure must beat the gold one; allow for float rounding only.
_INFERENCE_SLACK = 1e-7
#: evaluate="near" runs the exact evaluation once the online pass's estimated gap is below
#: this multiple of tol.  The estimate runs above the true gap (examples decoded early in a
#: pass saw older weights): by a factor of 1.2-1.4 on UD EWT (iterations 2-11 at the dep
#: task's defaults), so 2 rarely costs an extra iteration.
NEAR_FACTOR = 2.0
#: the most completion rounds of a fit on partial labels (``_fit_partial``)
MAX_COMPLETIONS = 10
#: examples decoded per call of the task's batch methods in a violation pass: bounds the
#: decoder's score tables and the Phi differences held at once (a block of sentences, not
#: the training set); the results do not depend on it
VIOLATION_BLOCK = 256
#: a violation pass is split between workers only when it has at least this many examples.
#: Measured on CoNLL-2000 (2 cores, Tagger()): the online mode's mini-batches of 64 split
#: between two threads made the whole fit about 1.1x slower than one thread (the examples'
#: Python work contends for the GIL and each thread's decoder batch halves), while the
#: evaluation passes over all 7,936 sentences run 1.7-1.9x faster on two.  The result
#: never depends on the split.
MIN_PARALLEL_EXAMPLES = 2 * VIOLATION_BLOCK


@register_learner("ssvm")
class StructuredSVM(LinearStructuredLearner):
    """Margin-rescaled structural SVM with squared (L2) slacks.

    Optimisation problem::

        min_w  1/2 ||w||^2 + C sum_i xi_i^2
        s.t.   w . (Phi(x_i, y_i) - Phi(x_i, y)) >= Delta(y_i, y) - xi_i   for all i, y

    solved by an n-slack cutting-plane method over the grouped squared-hinge dual
    coordinate descent (J-LIS Algorithm 3; the problem is J-LIS Eq. (9) with B empty).

    ``mode="online"`` (the default) is the online form of Illinois-SL's structured DCD:
    each outer iteration visits the
    examples in random mini-batches; a mini-batch is decoded (loss-augmented) with the
    current w, each example's most violated structure joins a persistent working set (one
    slack group per example) when it is violated beyond that example's working-set slack,
    and the duals of those examples are updated at once (``inner_sweeps`` epochs).  The
    iteration ends with a full DCD solve of the working set.  The working set and its dual
    variables persist across iterations, so every solve is warm.

    ``mode="batch"`` is the classic batch cutting plane (Tsochantaridis et al. 2005) in the
    form of Illinois-SL's parallel DCD (``L2LossSSVMParalleDCDSolver``): every example is
    decoded (loss-augmented) with one fixed w, in parallel over ``n_jobs`` workers; the
    violated structures join the working set, and one warm DCD solve over the working set
    gives the next w.  The decode of an iteration is also its exact evaluation, so an
    iteration costs one inference pass (online: two), and the examples (X, Y and the task)
    reach each worker once per fit: the mode for many workers or a cluster.  Online mode
    needs fewer iterations (its duals move after every mini-batch); batch mode makes one
    large parallel pass per iteration.

    Each outer iteration starts with an exact evaluation pass (loss-augmented inference on
    every example), so ``objective_curve_[t]`` is the true primal objective of the weights
    at iteration t; the dual of the working set at the same duals lower-bounds the optimum,
    so training stops at a certified relative duality gap ``tol``.  With
    ``evaluate="near"`` (online mode) that pass is run only where it may end training: on
    the first iteration, after an iteration that added no structure, and when the previous
    online pass's own estimate of the gap (each example's violation at the weights it was
    decoded with) is below ``NEAR_FACTOR * tol``.  Training still stops only at an exact,
    certified gap; the other iterations cost one inference pass instead of two.

    Parameters
    ----------
    task : StructuredTask
        A fitted task (it defines Phi, Delta and the argmax).
    C : float, default 0.1
        Cost of the squared slacks.
    tol : float, default 0.01
        Relative duality gap ``(primal - dual) / primal`` at which training stops.
    epsilon : float, default 0.01
        A structure joins the working set only when its violation exceeds the example's
        working-set slack by more than ``epsilon`` (SVM-struct's epsilon, in loss units).
        Training also stops when an iteration adds nothing and the working-set solve has
        converged: every constraint then holds to within ``epsilon`` of its slack.
    max_iter : int, default 50
        Maximum number of outer (cutting-plane) iterations.
    mode : {"online", "batch"}, default "online"
        Online mini-batch passes between full evaluations, or batch cutting planes (all
        examples decoded in parallel with a fixed w, then one working-set solve).
    evaluate : {"every", "near"}, default "every"
        Run the exact evaluation pass at every outer iteration, or (online mode) only
        where training may stop: the first iteration, after one that added nothing, and
        once the previous online pass estimated the duality gap below 2 tol.  Training
        stops only at a certified gap either way; ``objective_curve_`` holds the evaluated
        iterations (``evaluated_iterations_`` says which).
    inner_tol : float, default 1e-3
        Projected-gradient tolerance of each full working-set solve.
    inner_max_iter : int, default 20
        Epoch limit of each full working-set solve.
    batch_size : int, default 64
        Examples decoded together between dual updates in the online pass (online mode).
    inner_sweeps : int, default 3
        DCD epochs over a mini-batch's constraints right after they are added.
    shrinking : bool, default True
        LIBLINEAR shrinking inside DCD.
    n_jobs : int, default 1
        Parallel inference over examples (joblib): the evaluation passes, batch mode's
        passes, and online mini-batches of at least ``MIN_PARALLEL_EXAMPLES`` (512)
        examples; a smaller pass is decoded in the calling thread, where it is faster.
        Every ``n_jobs`` gives the same model.
    random_state : int, None or Generator, default 0
        Seeds DCD's permutations and the mini-batch order (runs are reproducible by default).
    check_inference : bool, default True
        Raise ``InferenceError`` when a loss-augmented argmax scores below the gold
        structure (an inexact or inconsistent decoder).
    progress : bool, default False
        Show a progress bar over outer iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, outer iterations run
    objective_curve_ : list of float, primal objective at each evaluated outer iteration
    dual_curve_ : list of float, working-set dual at the weights of ``objective_curve_``
    evaluated_iterations_ : list of int, the outer iterations (from 1) of those entries
    n_constraints_ : int, size of the final working set
    latent_objective_curve_ : list of float, after a fit on partial labels (targets with
        unknown tags, -1): the objective after each completion round (``_fit_partial``);
        ``n_completions_`` the rounds (both empty / 0 after a fully labelled fit, and absent
        on a loaded model)
    """

    requires = frozenset({MAX_DECODABLE})
    partial_labels = "completed"  # unknown tags: see LinearStructuredLearner.partial_labels
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    _parameter_constraints = {
        "C": [POSITIVE],
        "tol": [POSITIVE],
        "max_iter": [PASSES],
        "mode": [Options("online", "batch")],
        "evaluate": [Options("every", "near")],
        "epsilon": [NONNEGATIVE],
        "inner_tol": [POSITIVE],
        "inner_max_iter": [SOLVER_EPOCHS],
        "batch_size": [Interval(int, 1, None, closed="left")],
        "inner_sweeps": [Interval(int, 0, bound=solver_epochs())],
        "shrinking": [BOOL], "n_jobs": [NJOBS, None], "random_state": RANDOM_STATE,
        "check_inference": [BOOL], "progress": [BOOL],
    }

    def __init__(
        self,
        structure=None,
        C=0.1,
        tol=1e-2,
        max_iter=50,
        mode="online",
        evaluate="every",
        epsilon=0.01,
        inner_tol=1e-3,
        inner_max_iter=20,
        batch_size=64,
        inner_sweeps=3,
        shrinking=True,
        n_jobs=1,
        random_state=0,
        check_inference=True,
        progress=False,
    ):
        store_init_args(self, locals())

    def _validate(self, X, Y):
        structure = self._check_structure()  # the hyperparameters: checked on entering fit
        C = float(self.C)
        check_examples(X, Y)
        return structure, C

    def _violations(self, X, Y, w, data=None, *, keep_diffs=True):
        """Loss, Phi difference and violation (Delta - w.d) of each example's loss-augmented
        argmax under ``w``, computed in parallel chunks (workers send back sparse Phi
        differences); ``data``: the fit's ``shared(task=, X=, Y=)`` block over these X, Y.
        With ``keep_diffs=False`` (an evaluation pass, which needs only the violations) the
        differences are dropped block by block and None stands for each."""
        if data is None:
            with shared(structure=self._structure()) as block:
                return self._violations(X, Y, w, {"structure": block["structure"], "X": rows(X),
                                                  "Y": rows(Y)}, keep_diffs=keep_diffs)
        n_jobs = self.n_jobs if len(X) >= MIN_PARALLEL_EXAMPLES else 1
        parts = parallel_chunks(_violation_chunk, len(X), n_jobs,
                                args=(data["structure"], data["X"], data["Y"], w,
                                      bool(keep_diffs)))
        losses = np.array([p[0] for p in parts], dtype=float)
        diffs = [p[1] for p in parts]
        margins = np.array([p[2] for p in parts], dtype=float)
        violation = losses - margins
        if self.check_inference:
            bad = np.flatnonzero(violation < -_INFERENCE_SLACK * np.maximum(1.0, np.abs(margins)))
            if bad.size:
                raise_inexact_decoder("loss-augmented", int(bad[0]), float(-violation[bad[0]]))
        return losses, diffs, np.maximum(violation, 0.0)

    def _add_violated(self, ws, idx, losses, diffs, xi) -> int:
        """Add to the working set the structures of examples ``idx`` violated beyond their
        working-set slack by more than ``epsilon``; how many were added."""
        new = np.flatnonzero(xi > ws.slacks(idx) + self.epsilon)
        if new.size:
            ws.add_rows(np.asarray(idx)[new], SparseRows.from_vectors(diffs[j] for j in new),
                        np.asarray(losses, dtype=float)[new])
        return int(new.size)

    def fit(self, X, Y, *, checkpoint=None, resume=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the working set, its duals and the random state after every outer iteration;
        ``resume`` continues from such a file to the model an uninterrupted run gives."""
        structure, C = self._validate(X, Y)
        X, Y = structure.as_batch(X), list(Y)
        if self._unknown_parts(structure, Y):
            if checkpoint is not None or resume is not None:
                raise ConfigError("checkpoint= and resume= save and resume a fit on fully "
                                  "labelled targets; a fit on partial labels restarts its "
                                  "inner solves after every completion: drop them")
            return self._fit_partial(structure, X, Y, C)
        return self._fit_labelled(structure, X, Y, C, checkpoint, resume)

    def _fit_partial(self, structure, X, Y, C):
        """Learn from partial labels (unknown tags -1) as a latent structural SVM, by the
        concave-convex procedure of Yu & Joachims (2009, Algorithm 1; LCLR's and J-LIS's
        alternation): complete every unknown tag with the best labelling under the current
        w that keeps the known ones (``structure.complete_batch``), solve the structural SVM
        on the completed targets (the loss counts the known tags only), and repeat.

        The objective ``1/2 ||w||^2 + C sum_i xi_i^2``, each slack taken against the best
        completion under w, cannot increase between rounds by more than the inner solve's
        tolerance (Theorem 1 of CCCP): checked after every round (a warning, an error under
        ``check_inference``).  It stops when a round lowers it by less than ``tol`` (relative)
        or after ``MAX_COMPLETIONS`` rounds (a ``ConvergenceWarning`` then says so).
        ``latent_objective_curve_`` holds it."""
        w = np.zeros(structure.n_features)
        curve, inner_iterations, t_start = [], 0, time.perf_counter()
        converged = False
        # one working set for every round: an example keeps its constraints while its
        # completion stays the same (they still hold), so each round starts warm
        rng = np.random.default_rng(self.random_state)
        ws = DCDWorkspace(ConstraintPool(structure.n_features, len(X)), C, random_state=rng)
        previous = None
        for _ in range(MAX_COMPLETIONS):
            completed = structure.complete_batch(X, w, Y)
            if previous is not None:
                ws.drop_groups([i for i, (a, b) in enumerate(zip(completed, previous))
                                if not np.array_equal(a, b)])
            previous = completed
            self._fit_labelled(structure, X, completed, C, None, None, ws=ws, rng=rng)
            inner_iterations += self.n_iter_
            w = self.coef_
            _, _, xi = self._violations(X, structure.complete_batch(X, w, Y), w,
                                        keep_diffs=False)
            objective = 0.5 * float(w @ w) + C * float(xi @ xi)
            if curve and objective > curve[-1] * (1.0 + self.tol) + 1e-9:
                message = (f"StructuredSVM on partial labels: the objective rose from "
                           f"{curve[-1]:.6g} to {objective:.6g} between completions, more than "
                           f"the inner tolerance tol={self.tol} allows (Theorem 1 of CCCP); "
                           f"the decoder or the inner solve is not exact")
                if self.check_inference:
                    raise InferenceError(message)
                warnings.warn(message, InexactInferenceWarning, stacklevel=user_stacklevel())
            curve.append(objective)
            if len(curve) > 1 and curve[-2] - objective <= self.tol * curve[-2]:
                converged = True
                break
        self.latent_objective_curve_ = curve
        self.n_completions_ = len(curve)
        self.n_iter_ = inner_iterations
        self.fit_time_ = time.perf_counter() - t_start
        self.converged_ = converged and self.converged_
        if not converged:
            warn_convergence(
                f"StructuredSVM on partial labels stopped after {MAX_COMPLETIONS} completion "
                f"rounds with its objective still falling by more than tol={self.tol} per "
                f"round; the completions may not have settled (with most tags unknown, "
                f"learner='crf', which sums over them, needs no rounds)")
        return self

    def _fit_labelled(self, structure, X, Y, C, checkpoint, resume, *, ws=None, rng=None):
        """The structural SVM on fully labelled (or completed) targets ``Y``; ``ws`` and
        ``rng``: a working set (and its generator) to continue, valid for these targets."""
        self.latent_objective_curve_, self.n_completions_ = [], 0
        batch_size = int(self.batch_size)
        n, n_features = len(X), structure.n_features
        session = CheckpointSession(self, {"X": X, "Y": Y}, checkpoint, resume)
        it, converged, working_set_solved = 0, False, False
        self.objective_curve_, self.dual_curve_, self.evaluated_iterations_ = [], [], []
        if (self.mode == "online" and n > batch_size >= MIN_PARALLEL_EXAMPLES
                and sends_to_other_processes(self.n_jobs)):
            # measured: CoNLL-2000 chunking on a loopback Dask cluster, ~90 s per iteration
            # online against ~4 s in batch mode
            warnings.warn(
                f"StructuredSVM(mode='online') decodes mini-batches of {batch_size} examples, "
                f"and on this joblib backend every one of the {-(-n // batch_size)} passes per "
                f"iteration ships the weights ({8 * (n_features + 1) / 1e6:.1f} MB) to other "
                "processes; use mode='batch' (one pass per iteration, the design for process "
                "and cluster backends) or the default thread backend.", PerformanceWarning,
                stacklevel=user_stacklevel())
        if session.resuming:
            meta, arrays = session.state
            rng = rng_from_state(session.restored("rng"))
            pool = ConstraintPool.from_state(meta["pool"], unprefixed("pool", arrays))
            ws = DCDWorkspace(pool, C, random_state=rng)
            ws.set_live_state(unprefixed("live", arrays))
            self.objective_curve_, self.dual_curve_ = meta["objective_curve"], meta["dual_curve"]
            self.evaluated_iterations_ = meta.get("evaluated_iterations",
                                                  list(range(1, len(self.objective_curve_) + 1)))
            converged, working_set_solved = meta["converged"], meta["working_set_solved"]
            it = session.iteration
        elif ws is None:
            rng = np.random.default_rng(self.random_state)
            ws = DCDWorkspace(ConstraintPool(n_features, n), C, random_state=rng)

        with shared(structure=structure, X=X, Y=Y) as data:  # each worker receives them once per fit
            return self._iterate(structure, X, Y, C, batch_size, session, ws, rng, it, converged,
                                 working_set_solved, data)

    def _iterate(self, structure, X, Y, C, batch_size, session, ws, rng, it, converged,
                 working_set_solved, data):
        """The outer cutting-plane iterations of ``fit`` (see the class docstring)."""
        n = len(X)

        def save(iteration, done):
            if not session.active:
                return
            pool_meta, pool_arrays = ws.pool.get_state()
            meta = {"pool": pool_meta, "rng": rng_state(rng), "converged": converged,
                    "working_set_solved": working_set_solved,
                    "objective_curve": self.objective_curve_, "dual_curve": self.dual_curve_,
                    "evaluated_iterations": self.evaluated_iterations_}
            session.save(iteration, meta, {**prefixed("pool", pool_arrays),
                                           **prefixed("live", ws.live_state())}, done=done)

        bar = tqdm(total=self.max_iter, initial=min(it, self.max_iter), desc="ssvm", unit="iter",
                   disable=bar_disable(self.progress), leave=False)
        t_start = time.perf_counter()
        first, last = it + 1, (it if session.done else self.max_iter)
        near = self.evaluate == "near" and self.mode == "online"
        estimated_gap = None  # the previous online pass's estimate (None: evaluate)
        for it in range(first, last + 1):
            if (not near or it == first or working_set_solved or estimated_gap is None
                    or estimated_gap <= NEAR_FACTOR * self.tol):
                # Exact evaluation: the primal at the current w, certified against the dual.
                # (ws.w itself: nothing changes it before the pass ends; batch mode adds this
                # pass's structures, online mode needs only the violations)
                losses, diffs, xi = self._violations(X, Y, ws.w, data,
                                                     keep_diffs=self.mode == "batch")
                primal = 0.5 * float(ws.w @ ws.w) + C * float(xi @ xi)
                dual = ws.objectives()[1]
                self.objective_curve_.append(primal)
                self.dual_curve_.append(dual)
                self.evaluated_iterations_.append(it)
                gap = (primal - dual) / max(primal, 1e-12)
                bar.set_postfix(objective=f"{primal:.4g}", gap=f"{gap:.2e}", ws=ws.pool.n_active)
                if gap <= self.tol or working_set_solved:
                    bar.update(1)
                    converged = True
                    save(it, True)
                    break
            else:
                bar.set_postfix(estimated_gap=f"{estimated_gap:.2e}", ws=ws.pool.n_active)
            bar.update(1)
            if self.mode == "batch":
                # The evaluation's structures are the cutting planes: all decoded with this w.
                everyone = np.arange(n)
                added = self._add_violated(ws, everyone, losses, diffs, xi)
            else:
                # Online pass: each mini-batch is decoded with the live w, its most violated
                # structures join the working set, and its duals are updated at once.
                added = 0
                order = rng.permutation(n)
                xi_seen = np.zeros(n)
                for a in range(0, n, batch_size):
                    idx = order[a : a + batch_size]
                    Xb = structure.subset(X, idx)
                    Yb = [Y[i] for i in idx]
                    batch = {"structure": data["structure"], "X": rows(Xb), "Y": rows(Yb)}
                    losses, diffs, xi_b = self._violations(Xb, Yb, ws.w, batch)
                    xi_seen[idx] = xi_b
                    added += self._add_violated(ws, idx, losses, diffs, xi_b)
                    ws.sweep(idx, n_epochs=self.inner_sweeps)
            # (the pass's differences are in the working set now; nothing here keeps the
            # result or an old w, so the solve holds only its own new w)
            losses = diffs = None
            solved = ws.solve(tol=self.inner_tol, max_iter=self.inner_max_iter,
                              shrinking=self.shrinking).converged
            if near:
                # The pass's own primal: each example's violation at the w it was decoded
                # with (not a bound: only the exact evaluation certifies the gap).
                estimate = 0.5 * float(ws.w @ ws.w) + C * float(xi_seen @ xi_seen)
                estimated_gap = (estimate - ws.objectives()[1]) / max(estimate, 1e-12)
            # Nothing violated beyond the working set, and the working set is solved: the next
            # evaluation is the last (its gap is then only the inner tolerance's).
            working_set_solved = added == 0 and solved
            save(it, it == self.max_iter)
        bar.close()
        self.coef_ = ws.w.copy()
        self.n_iter_ = it
        self.n_constraints_ = ws.pool.n_active
        self.fit_time_ = time.perf_counter() - t_start
        self.converged_ = converged
        if not converged:
            warn_convergence(
                f"StructuredSVM stopped at max_iter={self.max_iter} outer iterations with a "
                f"relative duality gap above tol={self.tol}; increase max_iter or tol."
            )
        return self


    def _learned_state(self) -> tuple[dict, dict]:
        """Adds the dual curve and whether training converged, so that a model file (and
        ``latentstruct info``) tells the final duality gap."""
        meta, arrays = super()._learned_state()
        meta["dual_curve_"] = [float(v) for v in getattr(self, "dual_curve_", [])]
        meta["converged_"] = bool(getattr(self, "converged_", False))
        meta["evaluated_iterations_"] = [int(v) for v in getattr(self, "evaluated_iterations_", [])]
        return meta, arrays

    def _restore(self, meta: dict, arrays: dict) -> None:
        super()._restore(meta, arrays)
        self.dual_curve_ = [float(v) for v in meta.get("dual_curve_", [])]
        if "converged_" in meta:  # model files written before it was saved lack it
            self.converged_ = bool(meta["converged_"])
        # older files evaluated every iteration
        self.evaluated_iterations_ = [int(v) for v in meta.get(
            "evaluated_iterations_", range(1, len(self.objective_curve_) + 1))]


def _violation_chunk(a, b, structure, X, Y, w, keep_diffs=True) -> list:
    """(loss, Phi(x, y) - Phi(x, y_hat) or None, margin w.d) of the loss-augmented argmax of
    examples a..b-1 (module level, so that process and cluster workers unpickle it by
    name; only these sparse differences travel back).  The losses, differences and margins
    come from the task's batch methods, called on blocks of at most ``VIOLATION_BLOCK``
    examples: the decoder's score tables and the differences of a whole chunk (the whole
    training set on one job) are never held at once.  ``keep_diffs=False`` returns None
    for every difference (its margin is still taken)."""
    out = []
    for lo in range(a, b, VIOLATION_BLOCK):
        out.extend(_violation_block(lo, min(lo + VIOLATION_BLOCK, b), structure, X, Y, w,
                                    keep_diffs))
    return out


def _violation_block(a, b, structure, X, Y, w, keep_diffs) -> list:
    """:func:`_violation_chunk` of examples a..b-1 in one call of each batch method."""
    Xb, Yb = X[a:b], Y[a:b]
    Y_hat = structure.argmax_batch(Xb, w, Yb)
    losses = structure.loss_batch(Yb, Y_hat)
    wrong = np.flatnonzero(losses)
    out = [(0.0, None, 0.0)] * (b - a)
    if wrong.size:
        every = wrong.size == b - a
        diffs = structure.joint_feature_differences(
            Xb if every else structure.subset(Xb, wrong), Yb if every else [Yb[i] for i in wrong],
            Y_hat if every else [Y_hat[i] for i in wrong])
        margins = diffs.dots(w)
        for j, i in enumerate(wrong):
            out[i] = (float(losses[i]), diffs[j] if keep_diffs else None, float(margins[j]))
    return out
