"""LCLR (Chang et al. 2010) and its two-stage "Alignment + Learning" baseline.

Both learn a binary decision over a hidden structure, f(x) = max_{h in C(x)} w . Phi(x, h),
through the grouped squared-hinge DCD engine; they differ in whether h is learned jointly
(LCLR) or fixed beforehand by a heuristic (TwoStage).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from ..exceptions import ConfigError, warn_convergence
from ..parallel import parallel_chunks
from ..solvers.dcd import ConstraintPool, solve_grouped_dcd
from ..tasks.base import LatentBinaryTask
from .base import (
    LinearStructuredLearner,
    check_coef_init,
    check_positive,
    check_positive_int,
    register_learner,
)

__all__ = [
    "LCLR",
    "TwoStage",
    "LatentBinaryLearner",
    "squared_hinge_objective",
    "alternating_latent_fit",
    "StructuredPart",
    "store_alternating_result",
]


def squared_hinge_objective(w: np.ndarray, decisions: np.ndarray, y: np.ndarray, C: float) -> float:
    """1/2 ||w||^2 + C sum_i max(0, 1 - y_i f(x_i))^2  (LCLR Eq. 3 with lambda = 1/C)."""
    xi = np.maximum(0.0, 1.0 - y * decisions)
    return 0.5 * float(w @ w) + C * float(xi @ xi)


def _structure_key(h) -> bytes:
    """A hashable key of a structure (an int array, or anything numpy can hold)."""
    a = np.ascontiguousarray(h)
    return a.dtype.str.encode() + bytes(str(a.shape), "ascii") + a.tobytes()


class LatentBinaryLearner(LinearStructuredLearner):
    """Shared prediction API of learners over a ``LatentBinaryTask``."""

    def _check_task(self) -> LatentBinaryTask:
        task = super()._check_task()
        if not isinstance(task, LatentBinaryTask):
            raise ConfigError(
                f"{type(self).__name__} needs a LatentBinaryTask (a binary decision over a "
                f"hidden structure), got task {task.name!r}"
            )
        return task

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

    def _latent(self, X, w) -> list:
        task = self.task
        return parallel_chunks(lambda a, b: task.latent_argmax_batch(X[a:b], w), len(X), self.n_jobs)

    def _decisions(self, X, w) -> np.ndarray:
        task = self.task
        parts = parallel_chunks(lambda a, b: [task.decision_batch(X[a:b], w)], len(X), self.n_jobs)
        return np.concatenate(parts) if parts else np.zeros(0)

    def decision_function(self, X) -> np.ndarray:
        """f(x) = max_h coef_ . Phi(x, h) for every example."""
        self._check_is_fitted()
        return self._decisions(X, self.coef_)

    def predict(self, X) -> np.ndarray:
        """+1 where f(x) >= 0, else -1."""
        return np.where(self.decision_function(X) >= 0.0, 1, -1)

    def latent_argmax(self, X) -> list:
        """The structure h chosen for each example under ``coef_``."""
        self._check_is_fitted()
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
    tol : float, default 1e-3   (DCD projected-gradient tolerance)
    max_iter : int, default 1000 (DCD epochs)
    n_jobs : int, default 1
    random_state : None, int or Generator

    Attributes
    ----------
    coef_, heuristic_coef_, n_iter_, objective_curve_ (one value: the final objective)
    """

    def __init__(self, task=None, C=1.0, tol=1e-3, max_iter=1000, n_jobs=1, random_state=None,
                 progress=False):
        self.task = task
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    def fit(self, X, y):
        task = self._check_task()
        C = check_positive("C", self.C)
        check_positive("tol", self.tol)
        check_positive_int("max_iter", self.max_iter)
        y = self._check_labels(X, y)
        self.heuristic_coef_ = np.asarray(task.heuristic_weights(), dtype=np.float64)
        structures = [r.structure for r in self._latent(X, self.heuristic_coef_)]
        pool = ConstraintPool(task.n_features, len(X))
        for i, h in enumerate(structures):
            pool.add(i, task.latent_feature(X[i], h).scale(y[i]), 1.0)
        res = solve_grouped_dcd(pool, C, tol=self.tol, max_iter=self.max_iter,
                                random_state=self.random_state)
        if not res.converged:
            warn_convergence(f"TwoStage's DCD stopped at max_iter={self.max_iter} epochs")
        self.coef_ = res.w
        self.n_iter_ = res.n_iter
        self.objective_curve_ = [res.primal]
        return self

    def _fixed_scores(self, X, w) -> np.ndarray:
        task = self.task
        latent = self._latent(X, self.heuristic_coef_)
        return np.array([task.latent_feature(X[i], r.structure).dot(w) for i, r in enumerate(latent)])

    def decision_function(self, X) -> np.ndarray:
        """coef_ . Phi(x, h_heuristic(x))."""
        self._check_is_fitted()
        return self._fixed_scores(X, self.coef_)

    def latent_argmax(self, X) -> list:
        self._check_is_fitted()
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
    tol : float, default 1e-5
        Stop when the relative objective improvement of an outer iteration is below this.
    max_iter : int, default 50
        Maximum outer iterations (Algorithm 1).
    max_cutting_plane_rounds : int, default 50
        Maximum rounds of Algorithm 2 per outer iteration.
    dcd_tol, dcd_max_iter : float, int
        Tolerance and epoch limit of each Eq. (5) solve.
    init : {"two-stage", "zeros"}, default "two-stage"
        Initial weights when ``coef_init`` is not given: the two-stage model (as in the
        paper) or zeros.
    coef_init : array of shape (n_features,), optional
        Warm start from this weight vector.
    n_jobs : int, default 1
        Parallel inference over examples (joblib).
    random_state : None, int or Generator
    progress : bool, default False

    Attributes
    ----------
    coef_ : learned weights
    n_iter_ : outer iterations run
    objective_curve_ : Eq. (3) objective at the initial weights and after each outer iteration
    cache_size_curve_ : total cached negative structures after each Algorithm 2 round
    n_cache_hits_ : negative argmaxes that were already cached (reuse of the cache)
    """

    def __init__(
        self,
        task=None,
        C=1.0,
        tol=1e-5,
        max_iter=50,
        max_cutting_plane_rounds=50,
        dcd_tol=1e-3,
        dcd_max_iter=2000,
        init="two-stage",
        coef_init=None,
        n_jobs=1,
        random_state=None,
        progress=False,
    ):
        self.task = task
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.max_cutting_plane_rounds = max_cutting_plane_rounds
        self.dcd_tol = dcd_tol
        self.dcd_max_iter = dcd_max_iter
        self.init = init
        self.coef_init = coef_init
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress

    def _initial_weights(self, task, X, y) -> np.ndarray:
        if self.coef_init is not None:
            return check_coef_init(self.coef_init, task.n_features)
        if self.init == "zeros":
            return np.zeros(task.n_features)
        if self.init == "two-stage":
            base = TwoStage(task, C=self.C, tol=self.dcd_tol, n_jobs=self.n_jobs,
                            random_state=self.random_state)
            return base.fit(X, y).coef_.copy()
        raise ConfigError(f"init must be 'two-stage' or 'zeros', got {self.init!r}")

    def fit(self, X, y):
        task = self._check_task()
        C = check_positive("C", self.C)
        check_positive("tol", self.tol)
        check_positive("dcd_tol", self.dcd_tol)
        check_positive_int("max_iter", self.max_iter)
        check_positive_int("max_cutting_plane_rounds", self.max_cutting_plane_rounds)
        check_positive_int("dcd_max_iter", self.dcd_max_iter)
        y = self._check_labels(X, y)
        t_start = time.perf_counter()
        w0 = self._initial_weights(task, X, y)
        run = alternating_latent_fit(self, task, X, y, C, w0, desc="lclr")
        return store_alternating_result(self, run, t_start)


@dataclass(frozen=True)
class StructuredPart:
    """Fully labelled structures S added to the latent problem (J-LIS): examples, gold
    structures, their task (its weights are the first ``task.n_features`` entries of w)
    and the cost C_1 of their squared slacks."""

    task: object
    X: object
    Y: list
    C: float


@dataclass(frozen=True)
class AlternatingResult:
    w: np.ndarray
    n_iter: int
    converged: bool
    objective_curve: list
    cache_size_curve: list
    n_cache_hits: int


def store_alternating_result(learner, run: AlternatingResult, t_start: float, *,
                             warn: bool = True):
    """Set the learned attributes of ``learner`` from ``run``; warn if it did not converge
    (unless ``warn`` is False: a learner that always runs ``max_iter`` iterations)."""
    learner.coef_ = run.w
    learner.n_iter_ = run.n_iter
    learner.objective_curve_ = run.objective_curve
    learner.cache_size_curve_ = run.cache_size_curve
    learner.n_cache_hits_ = run.n_cache_hits
    learner.fit_time_ = time.perf_counter() - t_start
    if warn and not run.converged:
        warn_convergence(
            f"{type(learner).__name__} stopped at max_iter={learner.max_iter} outer iterations "
            f"with a relative objective decrease above tol={learner.tol}; increase max_iter or tol."
        )
    return learner


def alternating_latent_fit(learner, task, X, y, C, w0, *, structured: StructuredPart | None = None,
                           random_state=None, desc="latent") -> AlternatingResult:
    """LCLR Algorithm 1 with Algorithm 2 inside (J-LIS Algorithms 1-2 when ``structured``).

    Minimises, over w (squared hinge, grouped DCD for each inner problem)::

        1/2 ||w||^2 + C_1 sum_{i in S} max(0, max_h Delta(h_i, h) - w . (Phi(x_i, h_i) - Phi(x_i, h)))^2
                    + C   sum_{j in B} max(0, 1 - y_j max_h w . Phi_B(x_j, h))^2

    (the S term is absent for LCLR).  Outer iterations fix each positive's structure at its
    argmax (latent completion); the inner cutting plane grows a global cache per negative
    (and a working set per structured example) until nothing violated is left, solving the
    restricted problem with the grouped DCD.  Caches and duals persist across iterations.
    The learner supplies the hyperparameters tol, max_iter, max_cutting_plane_rounds,
    dcd_tol, dcd_max_iter, n_jobs and progress.
    """
    rng = np.random.default_rng(learner.random_state if random_state is None else random_state)
    n = len(X)
    m = 0 if structured is None else len(structured.X)
    w = np.array(w0, dtype=np.float64)
    pos = np.flatnonzero(y > 0)
    neg = np.flatnonzero(y < 0)
    X_pos = task.subset(X, pos) if n else []
    X_neg = task.subset(X, neg) if n else []
    C_groups = np.full(n + m, float(C))
    if structured is not None:
        C_groups[n:] = structured.C
        s_task, s_dim = structured.task, structured.task.n_features
    pool = ConstraintPool(task.n_features, n + m)
    pos_constraint = np.full(n, -1, dtype=np.int64)
    pos_structure: dict[int, np.ndarray] = {}
    cache: dict[int, set] = {int(j): set() for j in neg}  # H_j (and W_i for S), as keys
    cache.update({n + i: set() for i in range(m)})
    tie_rng = rng if getattr(learner, "random_tie_break", False) else None

    def latent(Xs, w_):
        return parallel_chunks(
            lambda a, b: task.latent_argmax_batch(Xs[a:b], w_, random_state=tie_rng),
            len(Xs), learner.n_jobs)

    def structured_violations(w_):
        """Loss-augmented argmax of every S example, its loss and Delta - w.d (>= 0)."""
        Y_hat = parallel_chunks(
            lambda a, b: s_task.argmax_batch(structured.X[a:b], w_[:s_dim], structured.Y[a:b]),
            m, learner.n_jobs)
        out = []
        for i, yh in enumerate(Y_hat):
            loss = s_task.loss(structured.Y[i], yh)
            d = s_task.joint_feature_difference(structured.X[i], structured.Y[i], yh) if loss else None
            out.append((yh, loss, d, loss - (d.dot(w_[:s_dim]) if d is not None else 0.0)))
        return out

    def objective(w_):
        decisions = np.concatenate(parallel_chunks(
            lambda a, b: [task.decision_batch(X[a:b], w_)], n, learner.n_jobs)) if n else np.zeros(0)
        value = squared_hinge_objective(w_, decisions, y, C)
        if structured is not None:
            xi = np.array([max(v[3], 0.0) for v in structured_violations(w_)])
            value += structured.C * float(xi @ xi)
        return value

    current = objective(w)
    curve, cache_sizes, hits = [current], [], 0
    converged = False
    bar = tqdm(total=learner.max_iter, desc=desc, unit="iter", disable=not learner.progress,
               leave=False)
    it = 0
    for it in range(1, learner.max_iter + 1):
        # Algorithm 1: latent completion of the positives at the current w.
        for i, res in zip(pos, latent(X_pos, w)):
            h = np.asarray(res.structure)
            old = pos_structure.get(i)
            if old is not None and old.shape == h.shape and np.array_equal(old, h):
                continue
            if pos_constraint[i] >= 0:
                pool.deactivate(int(pos_constraint[i]))
            pos_constraint[i] = pool.add(int(i), task.latent_feature(X[i], h), 1.0)
            pos_structure[i] = h
        # Algorithm 2: cutting plane over the negatives' caches (and S's working sets).
        for rnd in range(learner.max_cutting_plane_rounds):
            added = 0
            for j, res in zip(neg, latent(X_neg, w)):
                if res.score <= -1.0:
                    continue  # zero loss even at the argmax: nothing to add to Eq. (5)
                key = _structure_key(res.structure)
                if key in cache[j]:
                    hits += 1
                    continue
                cache[j].add(key)
                pool.add(int(j), -task.latent_feature(X[j], res.structure), 1.0)
                added += 1
            if structured is not None:
                for i, (yh, loss, d, violation) in enumerate(structured_violations(w)):
                    if violation <= 0.0:
                        continue
                    key = _structure_key(yh)
                    if key in cache[n + i]:
                        hits += 1
                        continue
                    cache[n + i].add(key)
                    pool.add(n + i, d, float(loss))
                    added += 1
            cache_sizes.append(sum(len(c) for c in cache.values()))
            if added == 0 and rnd > 0:
                break
            sol = solve_grouped_dcd(pool, C_groups, tol=learner.dcd_tol,
                                    max_iter=learner.dcd_max_iter, random_state=rng)
            w = sol.w
        new = objective(w)
        curve.append(new)
        bar.set_postfix(objective=f"{new:.5g}", cache=pool.n_active)
        bar.update(1)
        improvement = (current - new) / max(abs(current), 1e-12)
        current = new
        if improvement < learner.tol:
            converged = True
            break
    bar.close()
    return AlternatingResult(w, it, converged, curve, cache_sizes, hits)
