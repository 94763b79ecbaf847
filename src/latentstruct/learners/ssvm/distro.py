"""DISTRO: distributed structured output (Srikumar & Manning 2014), Algorithm 1.

Each label l has a unit vector a_l (column l of the label matrix A, d × L); a part's features
are the tensor product of its labels' vectors with its input features (Eq. 3), so related
labels share weights.  The learner minimises (Eqs. 5–6)

    f(w, A) = λ1/2 ||w||² + λ2 ||A||_* + (1/N) Σ_i max_y [Δ(y, y_i) + s(x_i, y) − s(x_i, y_i)]

over w = (W_E, W_T, s_v, e_v) and A with unit columns, Δ the Hamming loss, by alternating
minimisation (Algorithm 1):

    A0 random;  w0 ≈ argmin_w f(w, A0)
    for t = 1..T:  A_t ≈ argmin_A f(w_{t−1}, A);  w_t ≈ argmin_w f(w, A_t)

The w-step is a structural SVM for fixed A, run as mini-batch Pegasos SGD (``weight_epochs``
epochs, :mod:`latentstruct.solvers.structured_sgd`); the A-step is proximal stochastic
subgradient (``label_epochs`` epochs): after each mini-batch a subgradient step on A, the
nuclear-norm prox (singular-value soft-thresholding), and column renormalisation
(:mod:`latentstruct.solvers.label_matrix`).  All inference goes through the task's own exact
decoder with part scores unary = R W_E A, transition = Aᵀ W_T A, start/end = vᵀ A.
"""

from __future__ import annotations

import time
import warnings
import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...exceptions import ConfigError, InexactInferenceWarning, InferenceError, InputError, user_stacklevel, check_is_fitted
from ...parallel import fit_session, parallel_chunks, shared
from ...parallel import rows as chunk_rows
from ...solvers.label_matrix import (LABEL_INITS, effective_rank, init_label_matrix,
                                     prox_label_matrix, single_threaded_blas)
from ...solvers.structured_sgd import check_eta0, minibatches, search_eta0, step_size
from ...tasks.contracts import LABEL_FACTORED, gold_labels
from ..base import (LinearStructuredLearner, register_learner)
from .distro_data import DistroData, PartScores, SubBatch, argmax_chunk, part_indices
from .distro_model import DistroParams
from .distro_tuning import LAMBDA1_GRID, choose_lambda1
from ..checkpoint import CheckpointSession
from ..checkpoint_state import prefixed, rng_from_state, rng_state, unprefixed
from ...limits import MAX_WEIGHTS, N_COMPONENTS, passes
from ..params import BOOL, NJOBS, NONNEGATIVE, PASSES, POSITIVE, SEED, Interval, Options, store_init_args

__all__ = ["DISTRO"]

THRESHOLDS = ("step", "constant")
# a loss-augmented structure must score at least the gold one; allow for float rounding
_INFERENCE_SLACK = 1e-7
# objective passes decode this many examples at a time (bounds the memory of U and unary)
_CHUNK = 4096


@register_learner("distro")
class DISTRO(LinearStructuredLearner):
    """DISTRO (Srikumar & Manning 2014): label vectors, tensor-product features and a
    nuclear-norm penalty on the label matrix, learned by alternating minimisation
    (Algorithm 1; the objective is Eqs. 5–6).

    Parameters
    ----------
    task : label-factored task
        A fitted task offering the label-factored capability (``pos``, ``chunk``, ``doccls``).
    n_components : int or None, default None
        Dimension d of the label vectors (rows of A); None takes d = L, the number of
        labels, whose label matrix starts one-hot (``label_init="auto"``).  On the
        corpora held here d = L was never worse than any d < L tried (20 Newsgroups, EWT
        XPOS: ``results/distro.md``), so it is the default; a smaller d shares more
        between labels and is worth trying where labels have few examples
        (``results/distro_learning_curve.md``).
    lambda1 : "auto" or float, default "auto"
        Weight of the L2 penalty λ1/2 ||w||².  "auto" chooses it from
        (1e-5, 1e-4, 1e-3, 1e-2, 1e-1) on a seeded 10 % of the training examples held out
        (:mod:`latentstruct.learners.ssvm.distro_tuning`), then fits on all of them; the
        release's 0.25, tuned for 20 Newsgroups, left DISTRO 3.3 points below the one-hot
        structural SVM there.
    lambda2 : float, default 0.004
        Weight of the nuclear-norm penalty λ2 ||A||_* (the release's 20NG value, 0.004096).
    n_iter : int, default 5
        Alternations T of Algorithm 1 (the paper's 5).
    weight_epochs, label_epochs : int, default 5
        SGD epochs of each w-step and each A-step (the paper's 5 and 5).
    batch_size : int, default 20
        Examples per mini-batch (the release's 20).
    eta0 : "auto" or float, default "auto"
        Initial step size; "auto" runs Bottou's doubling/halving search on a 10% sample.
    label_eta0 : "auto", None or float, default "auto"
        Initial step size of the A-steps: "auto" searches it like eta0 (one A-epoch on the
        10% sample from the weights after the first w-step, over 2^-12..2^3), None reuses the
        w-steps' eta0.  A-gradients of sequences sum over tokens and transitions, so the
        w-steps' step size can be far too large for A (measured on EWT XPOS: A-steps with
        it raised the objective from 0.72 to 2.25).
    threshold : {"step", "constant"}, default "step"
        Singular-value threshold of each prox: "step" is η_t·λ2, the exact proximal step
        of λ2||A||_*; "constant" is 0.01·λ2 whatever the step, as the authors' release does.
    label_init : {"auto", "uniform", "onehot"}, default "auto"
        A0: one-hot when d >= L (the §5.2 control), uniform [0, 1) then normalised when
        d < L; or either on request.
    update_labels : bool, default True
        Learn the label matrix A; False keeps A0 fixed (with label_init="onehot" this is the one-hot SSVM).
    restart_schedule : bool, default False
        Restart η_t at η0 in every w-step and A-step, as the authors' release does; by
        default t runs on across the alternations, so the last w-step ends with small steps
        as the one-hot baseline's 25 epochs do (restarting left the objective higher after
        each w-step than before it on 20 Newsgroups).
    descent_guard : bool, default True
        Undo a w-step or A-step that raised the training objective (counted in
        ``n_reverted_phases_``), so the objective never rises between phases.
    n_restarts : int, default 3
        Random A0s tried; each runs the initial w-step and one alternation and the one with
        the lowest training objective continues (§5: bad initialisations are discarded by
        their objective).
    max_weights : int, default 134217728
        Refuse n_components × n_attributes above this (2**27 floats = 1 GiB).
    random_state : int, default 0
        Seeds A0, the mini-batch order and the eta0 sample.
    check_inference : bool, default True
        Raise when a loss-augmented decode scores below the gold structure (an inexact
        decoder); otherwise count and warn.
    progress : bool, default False
        Show a progress bar with the phase, objective and rank of A.
    n_jobs : int or None, default 1
        Parallel jobs (joblib's convention; None takes ``joblib.parallel_config``'s) for the
        exact (loss-augmented) decodes of every mini-batch, objective pass and prediction,
        through :func:`latentstruct.parallel.parallel_chunks` on threads or on the backend
        a surrounding ``joblib.parallel_config`` names; the task reaches each worker once
        per fit.  The part scores are computed here and each chunk of examples receives
        only its own; the decoder is per example, so every n_jobs gives the same model.
        The SGD updates of w, the A-steps' SVD and prox stay serial.  A mini-batch is a
        small task (``batch_size`` examples): on process or cluster backends the per-call
        overhead can outweigh the decode unless batches are large.

    Attributes
    ----------
    coef_, label_matrix_ (A, d × L), singular_values_, effective_rank_, objective_curve_,
    n_components_ (d used), lambda1_ (λ1 used), lambda1_scores_ ({λ1: validation part
    accuracy} when ``lambda1="auto"`` tuned it), eta0_, restart_objectives_,
    n_reverted_phases_, n_inexact_decodes_
    """

    requires = frozenset({LABEL_FACTORED})
    evaluation_params = frozenset({"n_jobs", "progress"})

    _parameter_constraints = {
        "n_components": [Interval(int, 1, bound=N_COMPONENTS), None],
        "lambda1": [Options("auto"), NONNEGATIVE],
        "lambda2": [NONNEGATIVE],
        "n_iter": [Interval(int, 0, bound=passes("an alternation of a w-step and an A-step"))],
        **{name: [PASSES] for name in ("weight_epochs", "label_epochs", "n_restarts")},
        # batch_size is capped by the data (a batch is at most every example)
        "batch_size": [Interval(int, 1, None, closed="left")],
        "max_weights": [Interval(int, 1, bound=MAX_WEIGHTS)],
        "eta0": [Options("auto"), POSITIVE],
        "label_eta0": [Options("auto"), POSITIVE, None],
        "threshold": [Options(*THRESHOLDS)], "label_init": [Options(*LABEL_INITS)],
        **{name: [BOOL] for name in ("update_labels", "restart_schedule", "descent_guard",
                                     "check_inference", "progress")},
        # an int: it also seeds the eta0 samples, as default_rng([random_state, k])
        "random_state": [SEED],
        "n_jobs": [NJOBS, None],
    }

    def __init__(self, structure=None, n_components=None, lambda1="auto", lambda2=0.004, n_iter=5,
                 weight_epochs=5, label_epochs=5, batch_size=20, eta0="auto", label_eta0="auto",
                 threshold="step",
                 label_init="auto", update_labels=True, restart_schedule=False,
                 descent_guard=True, n_restarts=3, max_weights=2 ** 27,
                 random_state=0, check_inference=True, progress=False, n_jobs=1):
        store_init_args(self, locals())

    # --- validation -------------------------------------------------------------------------
    def _validate(self) -> None:
        # ranges and choices were checked on entering fit; what relates two values is here
        # "auto" is chosen in fit; until then eta0 is checked against the largest λ1 tried
        self._lambda1 = max(LAMBDA1_GRID) if self.lambda1 == "auto" else float(self.lambda1)
        self._lambda2 = float(self.lambda2)
        self._eta0 = check_eta0(self.eta0, self._lambda1)
        if self.label_eta0 is not None:
            check_eta0(self.label_eta0, 0.0)

    # --- the pieces of Algorithm 1 ----------------------------------------------------------
    def _decode(self, params: DistroParams, rows, offsets, y=None, U=None):
        """(labels, unary, chain scores) of the examples; loss-augmented when y is given.
        The scores are computed here; the exact decodes run in parallel chunks of examples
        (``n_jobs``), each chunk receiving only its own parts."""
        if U is None:
            U = params.token_embeddings(rows)
        unary = U @ params.A
        chain = params.label_scores()
        offsets = np.asarray(offsets, dtype=np.int64)
        scores = PartScores(offsets, unary, None if y is None else np.asarray(y))
        # inside a fit (or predict's session) this block is the same one every call: the
        # task reaches each worker once
        with shared(structure=self._structure()) as data:
            parts = parallel_chunks(argmax_chunk, len(scores), self.n_jobs,
                                    args=(data["structure"], chunk_rows(scores), *chain),
                                    desc="decoding")
        z = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return z, unary, chain

    def _hinge(self, params, rows, offsets, y, U=None) -> np.ndarray:
        """max_y [Δ + s(y) − s(y_i)] of every example, checking that the decoder is exact."""
        z, unary, chain = self._decode(params, rows, offsets, y, U)
        lengths = np.diff(offsets)
        ex = np.repeat(np.arange(lengths.shape[0]), lengths)
        delta = np.bincount(ex, weights=(z != y).astype(np.float64), minlength=lengths.shape[0])
        h = delta + params.structure_scores(unary, offsets, z, chain)\
            - params.structure_scores(unary, offsets, y, chain)
        bad = h < -_INFERENCE_SLACK * (1.0 + np.abs(delta))
        if bad.any():
            self.n_inexact_decodes_ += int(bad.sum())
            if self.check_inference:
                raise InferenceError(
                    f"the task's decoder is not exact: {int(bad.sum())} loss-augmented "
                    f"structures score below the gold one (by up to {-h.min():.3g}); check its "
                    "argmax_from_part_scores_batch, or pass check_inference=False")
        return np.maximum(h, 0.0)

    def _objective(self, params, data) -> float:
        n = data.n
        total = 0.0
        for a in range(0, n, _CHUNK):
            r, o, yy = self._slice(data, np.arange(a, min(n, a + _CHUNK)))
            total += float(self._hinge(params, r, o, yy).sum())
        with np.errstate(all="ignore"):
            nuclear = float(np.linalg.svd(params.A, compute_uv=False).sum())
        return 0.5 * self._lambda1 * params.weight_sq_norm() + self._lambda2 * nuclear + total / max(n, 1)

    @staticmethod
    def _slice(data, idx):
        """(rows, offsets, gold labels) of examples ``idx``."""
        batch, y = data.batch, data.y
        rows, offsets = batch.example_rows(idx)
        return rows, offsets, y[part_indices(batch.offsets, idx, offsets)]

    def _weight_epochs(self, params, data, n_epochs, rng, eta0, bar=None) -> None:
        """Mini-batch Pegasos on w with A fixed; t continues from the last w-step unless
        ``restart_schedule`` (the release restarts it at every call)."""
        lam, t = self._lambda1, (0 if self.restart_schedule else params.t_w)
        n = data.n
        for _ in range(n_epochs):
            for idx in minibatches(n, self.batch_size, rng):
                rows, offsets, y = self._slice(data, idx)
                z, _, _ = self._decode(params, rows, offsets, y)
                eta = step_size(eta0, lam, t)
                params.shrink(1.0 - eta * lam)
                params.weight_step(rows, offsets, z, y, eta / idx.size)
                t += 1
            if bar is not None:
                bar.update(1)
        params.t_w = t

    def _label_epochs(self, params, data, n_epochs, rng, eta0, bar=None) -> None:
        """Proximal stochastic subgradient on A with w fixed (t as for the w-steps)."""
        lam, t = self._lambda1, (0 if self.restart_schedule else params.t_a)
        batch, n = data.batch, data.n
        U_all = params.token_embeddings(batch.rows)  # W is fixed for the whole A-step
        for _ in range(n_epochs):
            for idx in minibatches(n, self.batch_size, rng):
                rows, offsets, y = self._slice(data, idx)
                U = U_all[part_indices(batch.offsets, idx, offsets)]
                z, _, _ = self._decode(params, rows, offsets, y, U)
                eta = step_size(eta0, lam, t)
                G = params.label_gradient(U, offsets, z, y)
                tau = eta * self._lambda2 if self.threshold == "step" else 0.01 * self._lambda2
                previous = params.A
                params.A, _ = prox_label_matrix(previous - (eta / idx.size) * G, tau, previous)
                t += 1
            if bar is not None:
                bar.update(1)
        params.t_a = t

    def _search_eta0(self, params, data, rng) -> float:
        if self._eta0 != "auto":
            return self._eta0
        sub = self._sample(data, rng)

        def trial(e):
            p = params.copy()
            self._weight_epochs(p, sub, 1, np.random.default_rng(0), e)
            return self._objective(p, sub)

        best, self.eta0_trials_ = search_eta0(trial, self._lambda1)
        return best

    def _search_label_eta0(self, params, data, rng) -> float:
        """The A-steps' η0: Bottou's search with one A-epoch on a 10% sample (W fixed)."""
        sub = self._sample(data, rng)

        def trial(e):
            p = params.copy()
            p.t_a = 0
            self._label_epochs(p, sub, 1, np.random.default_rng(0), e)
            return self._objective(p, sub)

        best, self.label_eta0_trials_ = search_eta0(trial, 0.0, (2.0 ** -12, 2.0 ** 3))
        return best

    def _sample(self, data, rng):
        n = data.n
        m = min(n, max(self.batch_size * 5, n // 10))
        sample = np.sort(rng.choice(n, size=m, replace=False))
        rows, offsets = data.batch.example_rows(sample)
        return DistroData(SubBatch(rows, offsets), self._slice(data, sample)[2], m)

    # --- fit / predict ----------------------------------------------------------------------
    def fit(self, X, Y, *, checkpoint=None, resume=None) -> "DISTRO":
        """Learn W and A from examples ``X`` and encoded structures ``Y``; returns self.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the loop after every restart and every later alternation (parameters, step
        counts, random state); ``resume`` continues from such a file to the model an
        uninterrupted run gives."""
        self._validate()
        structure = self._check_structure()
        batch = structure.label_factored_batch(X)
        n = batch.n_examples
        if n == 0:
            raise InputError("no training examples")
        if len(Y) != n:
            raise InputError(f"X has {n} examples but Y has {len(Y)} structures")
        y = gold_labels(Y, int(batch.offsets[-1]), batch.n_labels, allow_unseen=False)
        F, L = batch.rows.shape[1], batch.n_labels
        d = L if self.n_components is None else int(self.n_components)
        self.n_components_ = d
        if d * F > self.max_weights:
            raise ConfigError(
                f"n_components={d} with {F} input features needs {d * F:,} emission weights, "
                f"above max_weights={self.max_weights:,}; lower n_components or raise max_weights")
        transitions = batch.has_transitions
        data = DistroData(batch, y, n)
        session = CheckpointSession(self, {"X": batch, "Y": y}, checkpoint, resume)
        if self.lambda1 != "auto":
            self.lambda1_, self.lambda1_scores_ = float(self.lambda1), {}
        elif session.resuming:  # chosen before the checkpointed loop began
            self.lambda1_ = float(session.state[0]["lambda1"])
            self.lambda1_scores_ = {float(k): v for k, v in session.state[0]["lambda1_scores"]}
        else:
            self.lambda1_, self.lambda1_scores_ = choose_lambda1(self, X, Y, n)
        self._lambda1 = self.lambda1_
        self.n_inexact_decodes_ = 0
        self.n_reverted_phases_ = 0
        self._label_eta0 = None
        rng = np.random.default_rng(self.random_state)
        t0 = time.perf_counter()
        random_start = self.label_init == "uniform" or (self.label_init == "auto" and d < L)
        starts = self.n_restarts if (self.update_labels and random_start) else 1
        one = self.weight_epochs + self.label_epochs  # epochs of one alternation
        phases = starts * (self.weight_epochs + one * (self.n_iter > 0)) + max(self.n_iter - 1, 0) * one
        bar = tqdm(total=phases, desc="distro", unit="epoch", disable=bar_disable(self.progress),
                   leave=False)
        try:
            blas = single_threaded_blas()
            candidates, selected, done_alternations = [], None, 0
            if session.resuming:
                rng, A0s, eta0, candidates, selected, done_alternations = self._resume_state(session)
            else:
                A0s = [init_label_matrix(d, L, self.label_init, rng) for _ in range(starts)]
                eta0 = self._search_eta0(DistroParams.zeros(F, A0s[0], transitions), data,
                                         np.random.default_rng([self.random_state, 1]))
            self.eta0_ = eta0

            def save(done):
                if session.active:
                    meta, arrays = self._loop_state(rng, A0s, candidates, selected, done_alternations)
                    restarts_done = len(candidates) if selected is None else starts
                    session.save(restarts_done + done_alternations, meta, arrays, done=done)

            for r in range(len(candidates), starts if selected is None else 0):
                params = DistroParams.zeros(F, A0s[r], transitions)
                curve = []
                self._weight_epochs(params, data, self.weight_epochs, rng, eta0, bar)
                curve.append(self._objective(params, data))
                if self.n_iter > 0:
                    self._alternate(params, data, rng, eta0, curve, bar)
                candidates.append((curve[-1], r, params, curve))
                self._show(bar, "restart", r, curve[-1], params)
                save(r + 1 == starts and self.n_iter <= 1)
            if selected is None:
                self.restart_objectives_ = [c[0] for c in candidates]
                _, self.restart_, params, curve = min(candidates, key=lambda c: (c[0], c[1]))
                selected = (params, curve)
            params, curve = selected
            for it in range(1 + done_alternations, self.n_iter):
                self._alternate(params, data, rng, eta0, curve, bar)
                self._show(bar, "alternation", it + 1, curve[-1], params)
                done_alternations = it
                save(it == self.n_iter - 1)
        finally:
            bar.close()
            blas.unregister()
        self._set_learned(params, F, L, transitions)
        self.objective_curve_ = curve
        self.label_eta0_ = self._label_eta0
        self.n_iter_ = int(self.n_iter)
        self.fit_seconds_ = time.perf_counter() - t0
        if self.n_inexact_decodes_:
            warnings.warn(f"{self.n_inexact_decodes_} loss-augmented decodes scored below the "
                          "gold structure (an inexact decoder)", InexactInferenceWarning, stacklevel=user_stacklevel())
        return self

    # --- checkpoints -------------------------------------------------------------------------
    def _loop_state(self, rng, A0s, candidates, selected, done_alternations) -> tuple[dict, dict]:
        """The loop's state: before the best restart is chosen, every finished restart;
        after, the chosen parameters and how many later alternations are done."""
        meta = {"rng": rng_state(rng), "eta0": float(self.eta0_), "lambda1": self.lambda1_,
                "lambda1_scores": _pairs(self.lambda1_scores_) or [],
                "eta0_trials": _pairs(getattr(self, "eta0_trials_", None)),
                "label_eta0": self._label_eta0,
                "label_eta0_trials": _pairs(getattr(self, "label_eta0_trials_", None)),
                "n_inexact_decodes": self.n_inexact_decodes_,
                "n_reverted_phases": self.n_reverted_phases_,
                "done_alternations": done_alternations, "candidates": [], "selected": None}
        arrays = {f"A0.{r}": A for r, A in enumerate(A0s)}
        for objective, r, params, curve in (candidates if selected is None else []):
            p_meta, p_arrays = params.get_state()
            meta["candidates"].append({"objective": objective, "restart": r, "params": p_meta,
                                       "curve": curve})
            arrays.update(prefixed(f"cand{r}", p_arrays))
        if selected is not None:
            p_meta, p_arrays = selected[0].get_state()
            meta["selected"] = {"params": p_meta, "curve": selected[1], "restart": self.restart_,
                                "restart_objectives": self.restart_objectives_}
            arrays.update(prefixed("selected", p_arrays))
        return meta, arrays

    def _resume_state(self, session):
        """(rng, A0s, eta0, candidates, selected, done alternations) from a checkpoint."""
        meta, arrays = session.state
        self.n_inexact_decodes_ = int(meta["n_inexact_decodes"])
        self.n_reverted_phases_ = int(meta["n_reverted_phases"])
        self._label_eta0 = meta["label_eta0"]
        for name in ("eta0_trials", "label_eta0_trials"):
            if meta[name] is not None:
                setattr(self, name + "_", {float(k): float(v) for k, v in meta[name]})
        A0s = [arrays[f"A0.{r}"] for r in range(sum(k.startswith("A0.") for k in arrays))]
        candidates = [(c["objective"], c["restart"], DistroParams.from_state(
                           c["params"], unprefixed(f"cand{c['restart']}", arrays)),
                       list(c["curve"])) for c in meta["candidates"]]
        selected = None
        if meta["selected"] is not None:
            s = meta["selected"]
            self.restart_, self.restart_objectives_ = s["restart"], list(s["restart_objectives"])
            selected = (DistroParams.from_state(s["params"], unprefixed("selected", arrays)),
                        list(s["curve"]))
        return (rng_from_state(meta["rng"]), A0s, float(meta["eta0"]), candidates, selected,
                int(meta["done_alternations"]))

    def _alternate(self, params, data, rng, eta0, curve, bar) -> None:
        """One alternation of Algorithm 1: an A-step (if labels are learned), then a w-step."""
        if self.update_labels:
            if self.label_eta0 is None:
                eta_a = eta0
            elif self.label_eta0 == "auto":
                if self._label_eta0 is None:  # searched once per fit, at the first A-step
                    self._label_eta0 = self._search_label_eta0(
                        params, data, np.random.default_rng([self.random_state, 2]))
                eta_a = self._label_eta0
            else:
                eta_a = float(self.label_eta0)
            self._guarded(params, data, curve,
                          lambda: self._label_epochs(params, data, self.label_epochs, rng, eta_a, bar))
        elif bar is not None:
            bar.update(self.label_epochs)
        self._guarded(params, data, curve,
                      lambda: self._weight_epochs(params, data, self.weight_epochs, rng, eta0, bar))

    def _guarded(self, params, data, curve, step) -> None:
        """Run one phase (a w-step or an A-step); if it raised the training objective, undo
        it (the step-size schedule keeps its progress) so that ``objective_curve_`` never
        rises: each phase approximately minimises f over its block (Algorithm 1), and a
        stochastic phase that made f worse is one Algorithm 1 would not take."""
        before = params.copy() if self.descent_guard else None
        step()
        f = self._objective(params, data)
        if before is not None and f > curve[-1] * (1.0 + 1e-9):
            t_w, t_a = params.t_w, params.t_a
            params.assign(before)
            params.t_w, params.t_a = t_w, t_a
            self.n_reverted_phases_ += 1
            f = curve[-1]
        curve.append(f)

    def _show(self, bar, what, k, objective, params) -> None:
        if bar is not None and not bar.disable:
            s = np.linalg.svd(params.A, compute_uv=False)
            bar.set_postfix_str(f"{what} {k}: objective {objective:.4g}, "
                                f"rank {effective_rank(s, params.A.shape)}")

    def _set_learned(self, params: DistroParams, F: int, L: int, transitions: bool) -> None:
        self.n_attributes_, self.n_labels_, self.has_transitions_ = F, L, bool(transitions)
        self.coef_ = params.pack()
        self._params = DistroParams.unpack(self.coef_, F, self.n_components_, L, transitions)
        s = np.linalg.svd(self._params.A, compute_uv=False)
        self.label_matrix_ = self._params.A
        self.singular_values_ = s
        self.effective_rank_ = effective_rank(s, self._params.A.shape)

    def coef_size(self, structure) -> int:
        return DistroParams.packed_size(self.n_attributes_, self.n_components_,
                                        structure.n_labels, self.has_transitions_)

    def structure_weights(self) -> np.ndarray:
        """DISTRO scores parts through its label matrix, not by one weight per part, so it
        has no such vector: a ``ConfigError`` (allowed labels, n-best and explanations need
        a learner that has: ``ssvm``, ``crf``, ``perceptron``, ...)."""
        raise ConfigError("learner 'distro' scores parts through its label matrix and has no "
                          "weight per part of the structure: allowed labels, n-best lists and "
                          "explanations need another learner (ssvm, crf, perceptron, ...)")

    def predict(self, X, *, allowed=None) -> list:
        """Best structure of every example (exact decoding with the learned W and A);
        ``allowed`` is refused (see :meth:`structure_weights`)."""
        check_is_fitted(self)
        if allowed is not None:
            self.structure_weights()
        batch = self._structure().label_factored_batch(X)
        out = []
        with fit_session():  # one worker pool and one copy of the task for every chunk
            for a in range(0, batch.n_examples, _CHUNK):
                idx = np.arange(a, min(batch.n_examples, a + _CHUNK))
                rows, offsets = batch.example_rows(idx)
                z, _, _ = self._decode(self._params, rows, offsets)
                out += np.split(z, offsets[1:-1])
        return out

    def label_similarity(self) -> np.ndarray:
        """AᵀA (L × L): cosine similarities of the learned label vectors."""
        check_is_fitted(self)
        return self.label_matrix_.T @ self.label_matrix_

    # --- model files ------------------------------------------------------------------------
    def _learned_state(self) -> tuple[dict, dict]:
        meta, arrays = super()._learned_state()
        meta.update({"n_attributes_": int(self.n_attributes_), "n_labels_": int(self.n_labels_),
                     "n_components_": int(self.n_components_), "lambda1_": float(self.lambda1_),
                     "lambda1_scores_": _pairs(self.lambda1_scores_) or [],
                     "has_transitions_": bool(self.has_transitions_), "eta0_": float(self.eta0_),
                     "effective_rank_": int(self.effective_rank_),
                     "restart_objectives_": [float(v) for v in self.restart_objectives_]})
        return meta, arrays

    def _restore(self, meta: dict, arrays: dict) -> None:
        super()._restore(meta, arrays)
        F, L = int(meta["n_attributes_"]), int(meta["n_labels_"])
        transitions = bool(meta["has_transitions_"])
        # files written before n_components could be None record d only as the parameter
        d = int(meta.get("n_components_", self.n_components))
        self.n_components_ = d
        self.lambda1_ = float(meta.get("lambda1_", self.lambda1))
        self.lambda1_scores_ = {float(k): float(v) for k, v in meta.get("lambda1_scores_", [])}
        if self.coef_.shape != (DistroParams.packed_size(F, d, L, transitions),):
            raise ValueError(f"DISTRO weights have {self.coef_.shape[0]} entries; expected "
                             f"{DistroParams.packed_size(F, d, L, transitions)}")
        self.eta0_ = float(meta.get("eta0_", 0.0))
        self.restart_objectives_ = list(meta.get("restart_objectives_", []))
        self._set_learned(DistroParams.unpack(self.coef_, F, d, L, transitions), F, L, transitions)


def _pairs(trials):
    """A {eta0: objective} record as JSON pairs (JSON keys cannot be floats)."""
    return None if trials is None else [[float(k), float(v)] for k, v in trials.items()]
