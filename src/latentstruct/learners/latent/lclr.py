"""LCLR (Chang et al. 2010) and its two-stage "Alignment + Learning" baseline.

Both learn a binary decision over a hidden structure, f(x) = max_{h in C(x)} w . Phi(x, h),
through the grouped squared-hinge DCD engine; they differ in whether h is learned jointly
(LCLR) or fixed beforehand by a heuristic (TwoStage).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ...exceptions import ConfigError, ConvergenceWarning, check_is_fitted, warn_convergence
from ...parallel import parallel_chunks, rows, shared
from ...solvers.dcd import ConstraintPool, DCDKernelState, solve_grouped_dcd
from ...tasks.contracts import HEURISTIC, LATENT_BINARY, RANDOM_TIES, checked_heuristic_weights
from .alternating import (
    AlternatingResult,
    StructuredPart,
    alternating_latent_fit,
    decision_chunk,
    latent_chunk,
    squared_hinge_objective,
    store_alternating_result,
)
from ..base import (
    LinearStructuredLearner,
    check_coef_init,
    register_learner,
)
from ..checkpoint import CheckpointSession
from ..inference_check import InferenceMonitor
from ..params import (BOOL, COEF_INIT, NJOBS, NONNEGATIVE, PASSES, POSITIVE, RANDOM_STATE,
                     SOLVER_EPOCHS, Options, store_init_args)

__all__ = [
    "LCLR",
    "TwoStage",
    "LatentBinaryLearner",
    "squared_hinge_objective",
    "alternating_latent_fit",
    "StructuredPart",
    "AlternatingResult",
    "store_alternating_result",
]



#: LCLR's hyperparameters (the LCLR-variant uses a subset of them)
LCLR_CONSTRAINTS = {
    "C": [POSITIVE], "tol": [POSITIVE], "max_iter": [PASSES],
    "max_cutting_plane_rounds": [PASSES], "epsilon": [NONNEGATIVE],
    "dcd_tol": [POSITIVE], "dcd_max_iter": [SOLVER_EPOCHS],
    "init": [Options("two-stage", "zeros")], "coef_init": [COEF_INIT, None],
    "random_tie_break": [BOOL], "check_inference": [BOOL], "n_jobs": [NJOBS, None],
    "random_state": RANDOM_STATE, "progress": [BOOL],
}


class LatentBinaryLearner(LinearStructuredLearner):
    """Shared prediction API of learners over a latent-binary task."""

    requires = frozenset({LATENT_BINARY})
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    @staticmethod
    def _check_labels(X, y) -> np.ndarray:
        y = np.asarray(y)
        if y.ndim != 1 or len(X) != y.shape[0]:
            raise ConfigError(f"X has {len(X)} examples but y has shape {y.shape}")
        if y.size == 0:
            raise ConfigError("cannot fit on zero examples")
        if not np.isin(y, (-1, 1)).all():
            bad = y[~np.isin(y, (-1, 1))][0]
            raise ConfigError(f"labels must be -1 or +1, got {bad!r}")
        return y.astype(np.float64)

    # One pass each: the task reaches each worker once, each chunk carries its own rows.
    def _latent(self, X, w) -> list:
        X = self._structure().as_batch(X)
        with shared(structure=self._structure()) as data:
            return parallel_chunks(latent_chunk, len(X), self.n_jobs,
                                   args=(data["structure"], rows(X), w))

    def _decisions(self, X, w) -> np.ndarray:
        X = self._structure().as_batch(X)
        with shared(structure=self._structure()) as data:
            parts = parallel_chunks(decision_chunk, len(X), self.n_jobs,
                                    args=(data["structure"], rows(X), w))
        return np.concatenate(parts) if parts else np.zeros(0)

    def decision_function(self, X) -> np.ndarray:
        """``f(x) = max_h coef_ . Phi(x, h)`` for every example."""
        check_is_fitted(self)
        return self._decisions(X, self.coef_)

    def predict(self, X) -> np.ndarray:
        """+1 where f(x) >= 0, else -1."""
        return np.where(self.decision_function(X) >= 0.0, 1, -1)

    def latent_argmax(self, X) -> list:
        """The structure h chosen for each example under ``coef_``."""
        check_is_fitted(self)
        return [r.structure for r in self._latent(X, self.coef_)]

    def score(self, X, y) -> float:
        """Binary accuracy."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


@register_learner("two-stage")
class TwoStage(LatentBinaryLearner):
    """"Alignment + Learning": a fixed heuristic picks h, then a squared-hinge SVM learns w.

    Optimisation problem, with h_i = argmax_h w_heur . Phi(x_i, h) frozen beforehand
    (``w_heur = task.heuristic_weights()``)::

        min_w  1/2 ||w||^2 + C sum_i max(0, 1 - y_i w . Phi(x_i, h_i))^2

    solved by the grouped squared-hinge DCD with one constraint per example (Hsieh et al.
    2008; LCLR §5.1's baseline).  Predictions use the same frozen heuristic structures.

    Parameters
    ----------
    task : LatentBinaryTask
    C : float, default 1.0
        Cost of the squared slacks.
    tol : float, default 1e-3
        Projected-gradient tolerance of the DCD solve.
    max_iter : int, default 1000
        Epoch limit of the DCD solve.
    n_jobs : int, default 1
        Parallel heuristic decodes over examples (joblib); the model does not depend on it.
    random_state : int, None or Generator, default 0
        Seeds the DCD's visiting order.
    check_inference : bool, default True
        Raise ``InferenceError`` when a heuristic decode is not exact (else count and warn).
    progress : bool, default False
        Show progress over the heuristic decodes and the DCD solve.

    Attributes
    ----------
    coef_, heuristic_coef_, n_iter_, objective_curve_ (one value: the final objective),
    converged_, n_inexact_decodes_
    """

    requires = frozenset({LATENT_BINARY, HEURISTIC})
    _parameter_constraints = {
        # max_iter: epochs of the DCD solve (no decoding)
        "C": [POSITIVE], "tol": [POSITIVE], "max_iter": [SOLVER_EPOCHS], "n_jobs": [NJOBS, None],
        "random_state": RANDOM_STATE, "check_inference": [BOOL], "progress": [BOOL],
    }

    def __init__(self, structure=None, C=1.0, tol=1e-3, max_iter=1000, n_jobs=1, random_state=0,
                 check_inference=True, progress=False):
        store_init_args(self, locals())

    def fit(self, X, y, *, checkpoint=None, resume=None):
        """Fix every example's structure with the heuristic, then solve the SVM on them.

        Its iterations are the DCD epochs: ``checkpoint`` (a path or
        :class:`~latentstruct.learners.checkpoint.Checkpoint`) saves the solver's state
        (duals, sweep order, random state) after each, and ``resume`` continues from such a
        file to the model an uninterrupted run gives."""
        structure = self._check_structure()
        C = float(self.C)
        X = structure.as_batch(X)
        y = self._check_labels(X, y)
        self.heuristic_coef_ = checked_heuristic_weights(structure)  # its length, named if wrong
        monitor = InferenceMonitor("TwoStage", self.check_inference)
        # X as a shared part, not per-chunk rows: inside LCLR's fit this is the loop's own
        # block, so process workers keep the examples (and the decoders they build) for
        # every later pass
        with shared(structure=structure, X=X) as data:
            results = parallel_chunks(latent_chunk, len(X), self.n_jobs,
                                      args=(data["structure"], data["X"], self.heuristic_coef_))
        monitor.observe(results, "heuristic argmax")
        structures = [r.structure for r in results]
        pool = ConstraintPool(structure.n_features, len(X))
        for i, h in enumerate(structures):
            pool.add(i, structure.latent_feature(X[i], h).scale(y[i]), 1.0)
        session = CheckpointSession(self, {"X": X, "y": y}, checkpoint, resume)
        start = None
        if session.resuming:
            fields = ("alpha", "w", "A", "sweep", "state_i", "state_f", "rng_state", "converged")
            start = DCDKernelState(**{k: session.restored(k) for k in fields},
                                   n_iter=session.iteration)

        def save(state: DCDKernelState):
            session.save(state.n_iter, {"converged": state.converged}, state.arrays(),
                         done=state.converged or state.n_iter >= self.max_iter)

        res = solve_grouped_dcd(pool, C, tol=self.tol, max_iter=self.max_iter,
                                random_state=self.random_state,
                                on_epoch=save if session.active else None, start=start)
        if not res.converged:
            warn_convergence(f"TwoStage's DCD stopped at max_iter={self.max_iter} epochs")
        self.coef_ = res.w
        self.n_iter_ = res.n_iter
        self.converged_ = bool(res.converged)
        self.objective_curve_ = [res.primal]
        self.n_inexact_decodes_ = [monitor.n_inexact]
        monitor.warn()
        return self

    def _fixed_scores(self, X, w) -> np.ndarray:
        structure = self._structure()
        X = structure.as_batch(X)
        latent = self._latent(X, self.heuristic_coef_)
        return np.array([structure.latent_feature(X[i], r.structure).dot(w) for i, r in enumerate(latent)])

    def decision_function(self, X) -> np.ndarray:
        """``coef_ . Phi(x, h_heuristic(x))``."""
        check_is_fitted(self)
        return self._fixed_scores(X, self.coef_)

    def latent_argmax(self, X) -> list:
        check_is_fitted(self)
        return [r.structure for r in self._latent(X, self.heuristic_coef_)]

    def _learned_state(self):
        meta, arrays = super()._learned_state()
        arrays["heuristic_coef_"] = self.heuristic_coef_
        return meta, arrays

    def _restore(self, meta, arrays):
        super()._restore(meta, arrays)
        self.heuristic_coef_ = np.asarray(arrays["heuristic_coef_"], dtype=np.float64)


@register_learner("lclr")
class LCLR(LatentBinaryLearner):
    """Learning over Constrained Latent Representations (Chang et al. 2010).

    Optimisation problem (LCLR Eq. 3 with the squared hinge, C = 1/lambda)::

        min_w  1/2 ||w||^2 + C sum_i max(0, 1 - y_i max_{h in C(x_i)} w . Phi(x_i, h))^2

    It is non-convex; Algorithm 1 alternates (a) fixing the structure of every positive at
    its current argmax h*_i (latent completion) and (b) solving the convex problem Eq. (4),
    in which negatives keep their max over h.  Eq. (4) is solved by Algorithm 2, a cutting
    plane: each round decodes every negative and adds its argmax to that negative's cache
    H_j, then solves Eq. (5) (the problem restricted to the caches) with the grouped
    squared-hinge DCD, until no cache grows.  An argmax scoring <= -1 has zero loss and is
    not added (it cannot change Eq. (5), and at termination Eq. (5) then equals Eq. (4)).  In DCD terms a positive i is one constraint
    w . Phi(x_i, h*_i) >= 1 - xi_i, and a negative j is one constraint
    -w . Phi(x_j, h) >= 1 - xi_j per cached h, all sharing the slack xi_j.  The caches are
    global and persist across outer iterations (footnote 2), and so do their dual
    variables; a positive's constraint is replaced when its h* changes.

    By Theorem 1 the objective never increases between outer iterations (up to the inner
    solver's tolerance); training stops when its relative decrease falls below ``tol``.

    Parameters
    ----------
    task : LatentBinaryTask
    C : float, default 1.0
        Cost of the squared slacks (Eq. (5)).
    tol : float, default 1e-5
        Stop when the relative objective improvement of an outer iteration is below this.
    max_iter : int, default 50
        Maximum outer iterations (Algorithm 1).
    max_cutting_plane_rounds : int, default 50
        Maximum rounds of Algorithm 2 per outer iteration.
    epsilon : float, default 1e-3
        A negative's argmax joins its cache only when its hinge 1 + w.Phi(x, h) exceeds the
        cache's by more than this (SVM-struct's epsilon; 0 adds every new violated structure).
    dcd_tol : float
        Projected-gradient tolerance of each Eq. (5) solve.
    dcd_max_iter : int
        Epoch limit of each Eq. (5) solve.
    init : {"two-stage", "zeros"}, default "two-stage"
        Initial weights when ``coef_init`` is not given: the two-stage model (as in the
        paper) or zeros.
    coef_init : array of shape (n_features,), optional
        Warm start from this weight vector.
    random_tie_break : bool, default False
        Break ties in the latent argmax uniformly at random among all optima (as J-LIS does;
        needs a task with the random-ties capability).  From ``init="zeros"`` every
        structure ties, and deterministic tie-breaking can leave w at 0 for good.
    check_inference : bool, default True
        Raise ``InferenceError`` on a decode whose status is not exact (an ILP time limit), a
        reported score that is not the score of its structure, an argmax beaten by a
        structure already known, or an objective increase that Theorem 1 rules out.  With
        False these are counted (``n_inexact_decodes_``, ``n_inconsistent_decodes_``) and
        warned about.
    n_jobs : int, default 1
        Parallel inference over examples (joblib); the model does not depend on it.
    random_state : int, None or Generator, default 0
        Seeds the DCD's visiting order and the random tie-breaking.
    progress : bool, default False
        Show a progress bar over outer iterations.

    Attributes
    ----------
    coef_ : learned weights
    n_iter_ : outer iterations run
    converged_ : whether the relative objective decrease fell below ``tol``
    stop_reason_ : "tol", "max_iter" or "objective_increase"
    objective_curve_ : Eq. (3) objective at the initial weights and after each outer iteration
    cache_size_curve_ : total cached negative structures after each Algorithm 2 round
    n_cache_hits_ : negative argmaxes that were already cached (reuse of the cache)
    n_inexact_decodes_ : per outer iteration, decodes whose status was not exact
    n_inconsistent_decodes_ : decodes that failed a consistency check (check_inference=False)
    n_cutting_plane_cap_hits_ : outer iterations whose cutting plane hit its round limit
    n_inner_not_converged_ : DCD solves that hit ``dcd_max_iter``
    inner_gap_curve_ : duality gap of the last DCD solve of each outer iteration
    """

    _parameter_constraints = LCLR_CONSTRAINTS

    def __init__(
        self,
        structure=None,
        C=1.0,
        tol=1e-5,
        max_iter=50,
        max_cutting_plane_rounds=50,
        epsilon=1e-3,
        dcd_tol=1e-3,
        dcd_max_iter=2000,
        init="two-stage",
        coef_init=None,
        random_tie_break=False,
        check_inference=True,
        n_jobs=1,
        random_state=0,
        progress=False,
    ):
        store_init_args(self, locals())

    @classmethod
    def required_capabilities(cls, params=None) -> dict[str, str]:
        params = params or {}
        out = {LATENT_BINARY: ""}
        if params.get("init", "two-stage") == "two-stage" and params.get("coef_init") is None:
            out[HEURISTIC] = "init='two-stage' starts from the two-stage model; set init=zeros"
        if params.get("random_tie_break", False):
            out[RANDOM_TIES] = "random_tie_break=True; set it to False"
        return out

    def _initial_weights(self, structure, X, y) -> np.ndarray:
        if self.coef_init is not None:
            return check_coef_init(self.coef_init, structure.n_features)
        if self.init == "zeros":
            return np.zeros(structure.n_features)
        if self.init == "two-stage":
            # the two-stage model's DCD runs under LCLR's own dcd_tol and dcd_max_iter, so the
            # parameter a warning names is one this learner has
            base = TwoStage(structure, C=self.C, tol=self.dcd_tol, max_iter=self.dcd_max_iter,
                            n_jobs=self.n_jobs, random_state=self.random_state,
                            check_inference=self.check_inference)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                coef = base.fit(X, y).coef_.copy()
            for w in caught:
                if issubclass(w.category, ConvergenceWarning):
                    warn_convergence(f"{type(self).__name__}'s two-stage initialisation: its DCD "
                                     f"stopped at dcd_max_iter={self.dcd_max_iter} epochs before "
                                     f"dcd_tol={self.dcd_tol}; increase dcd_max_iter or dcd_tol, "
                                     f"or start from init='zeros'")
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            return coef
        raise ConfigError(f"init must be 'two-stage' or 'zeros', got {self.init!r}")

    def _fit_start(self, X, y, checkpoint, resume):
        """The structure, C, ``X`` in its batch form, the checked labels, the clock's start
        and the fit's checkpoint session (LCLR's and its variant's)."""
        structure = self._check_structure()
        C = float(self.C)
        X = structure.as_batch(X)
        y = self._check_labels(X, y)
        t_start = time.perf_counter()
        session = CheckpointSession(self, {"X": X, "y": y}, checkpoint, resume)
        return structure, C, X, y, t_start, session

    def fit(self, X, y, *, checkpoint=None, resume=None):
        """Algorithm 1 on examples ``X`` with labels ``y`` in {-1, +1}; returns self.

        ``checkpoint`` (a path or :class:`~latentstruct.learners.checkpoint.Checkpoint`)
        saves the loop after every outer iteration; ``resume`` continues from such a file
        (same data and hyperparameters) to the model an uninterrupted run would give."""
        structure, C, X, y, t_start, session = self._fit_start(X, y, checkpoint, resume)
        # the start is computed inside the loop's shared block (see alternating_latent_fit)
        w0 = None if session.resuming else (lambda: self._initial_weights(structure, X, y))
        run, monitor = alternating_latent_fit(self, structure, X, y, C, w0, desc="lclr",
                                              session=session)
        return store_alternating_result(self, run, t_start, monitor)
