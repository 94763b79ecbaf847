"""The alternating loop shared by LCLR, J-LIS and the LCLR-variant, whole: what it takes and
gives back, its chunk kernels, its state as checkpoint data, and the loop.

LCLR Algorithm 1 (latent completion of the positives, then a convex problem) with
Algorithm 2 inside (a cutting plane over per-negative caches, each restricted problem solved
by the grouped squared-hinge DCD); with a structured part S it is J-LIS Algorithms 1-2.

* **Input and result.** :class:`StructuredPart` is J-LIS's fully labelled part S;
  :class:`AlternatingResult` is one run of the loop and :func:`store_alternating_result`
  turns it into a learner's fitted attributes (and warnings); :func:`squared_hinge_objective`
  is LCLR's objective (Eq. 3).
* **Chunk kernels** of the parallel passes over examples (latent argmax, decision values,
  loss-augmented argmax): module level, so that process and cluster workers unpickle them
  by name.  Each takes the chunk's bounds ``a``, ``b`` first, as
  :func:`latentstruct.parallel.parallel_chunks` calls it.
* **Checkpoint state.** After an outer iteration the loop is fully described by: the
  weights (current and initial), the constraint pool with its dual variables, each
  positive's constraint id, structure and feature vector, each negative's (and each
  structured example's) cache in insertion order, the random generator, the inference
  monitor's counters and the curves.  :func:`pack_loop` turns them into ``(meta, arrays)``
  for :class:`~latentstruct.learners.checkpoint.CheckpointSession`; :func:`unpack_loop`
  rebuilds them bit for bit.
* **The loop** (:func:`alternating_latent_fit`) does not trust its decoders
  (:class:`~latentstruct.learners.inference_check.InferenceMonitor`): non-exact statuses are
  counted per outer iteration, a reported score must be the score of its structure, and an
  argmax must not score below a structure the loop already holds (the positive's previous
  completion, a cached structure, the gold structure).  Theorem 1 is checked at run time:
  the objective may not increase between outer iterations by more than the last inner
  solve's duality gap.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...exceptions import (ConvergenceWarning, InferenceError, ModelFormatError,
                          ObjectiveIncreaseWarning, user_stacklevel, warn_convergence)
from ...parallel import parallel_chunks, rows, shared, subset
from ...solvers.dcd import ConstraintPool, solve_grouped_dcd
from ...tasks.contracts import latent_argmax_decisions
from ..checkpoint_state import (
    monitor_state,
    pack_arrays,
    pack_bytes,
    pack_sparse,
    prefixed,
    restore_monitor,
    rng_from_state,
    rng_state,
    unpack_arrays,
    unpack_bytes,
    unpack_sparse,
    unprefixed,
)
from ..inference_check import InferenceMonitor, score_tolerance

__all__ = [
    "alternating_latent_fit",
    "StructuredPart",
    "AlternatingResult",
    "store_alternating_result",
    "squared_hinge_objective",
    "latent_chunk",
    "seeded_latent_chunk",
    "decision_chunk",
    "structured_chunk",
    "pack_loop",
    "unpack_loop",
]


# --------------------------------------------------------------------------------------
# what the loop takes and gives back
# --------------------------------------------------------------------------------------
def squared_hinge_objective(w: np.ndarray, decisions: np.ndarray, y: np.ndarray, C: float) -> float:
    """1/2 ||w||^2 + C sum_i max(0, 1 - y_i f(x_i))^2  (LCLR Eq. 3 with lambda = 1/C)."""
    xi = np.maximum(0.0, 1.0 - y * decisions)
    return 0.5 * float(w @ w) + C * float(xi @ xi)


@dataclass(frozen=True)
class StructuredPart:
    """Fully labelled structures S added to the latent problem (J-LIS): examples, gold
    structures, their task (its weights are the first ``task.n_features`` entries of w)
    and the cost C_1 of their squared slacks."""

    structure: object
    X: object
    Y: list
    C: float


@dataclass(frozen=True)
class AlternatingResult:
    """What one run of the loop did (stored on the learner by ``store_alternating_result``)."""

    w: np.ndarray
    w_init: np.ndarray
    n_iter: int
    converged: bool
    stop_reason: str  # "tol", "fixed_point", "max_iter" or "objective_increase"
    objective_curve: list
    cache_size_curve: list
    n_cache_hits: int
    n_inexact_per_iter: list = field(default_factory=list)
    n_inconsistent: int = 0
    n_cutting_plane_cap_hits: int = 0
    n_inner_not_converged: int = 0
    inner_gap_curve: list = field(default_factory=list)


def store_alternating_result(learner, run: AlternatingResult, t_start: float, monitor=None, *,
                             fixed_schedule: bool = False):
    """Set the learned attributes of ``learner`` from ``run`` and warn about what went wrong:
    no convergence, cutting-plane cap hits, inner solves that hit their epoch limit,
    non-exact decodes, weights that never moved.  ``fixed_schedule``: the learner runs
    ``max_iter`` outer iterations of one cutting-plane round by design (the LCLR-variant),
    so neither is worth a warning."""
    learner.coef_ = run.w
    learner.n_iter_ = run.n_iter
    learner.converged_ = bool(run.converged)
    learner.stop_reason_ = run.stop_reason
    learner.objective_curve_ = run.objective_curve
    learner.cache_size_curve_ = run.cache_size_curve
    learner.n_cache_hits_ = run.n_cache_hits
    learner.n_inexact_decodes_ = list(run.n_inexact_per_iter)
    learner.n_inconsistent_decodes_ = run.n_inconsistent
    learner.n_cutting_plane_cap_hits_ = run.n_cutting_plane_cap_hits
    learner.n_inner_not_converged_ = run.n_inner_not_converged
    learner.inner_gap_curve_ = run.inner_gap_curve
    learner.fit_time_ = time.perf_counter() - t_start
    name = type(learner).__name__
    if run.stop_reason == "max_iter" and not fixed_schedule:
        warn_convergence(
            f"{name} stopped at max_iter={learner.max_iter} outer iterations before it "
            f"converged; increase max_iter (or tol).")
    if run.n_cutting_plane_cap_hits and not fixed_schedule:
        warn_convergence(
            f"{name}: the cutting plane (Algorithm 2) stopped at max_cutting_plane_rounds="
            f"{learner.max_cutting_plane_rounds} in {run.n_cutting_plane_cap_hits} outer "
            "iterations with violated structures left; increase max_cutting_plane_rounds.")
    if run.n_inner_not_converged:
        warn_convergence(
            f"{name}: {run.n_inner_not_converged} inner DCD solves stopped at dcd_max_iter="
            f"{learner.dcd_max_iter} epochs before reaching dcd_tol={learner.dcd_tol}; "
            "increase dcd_max_iter or dcd_tol.")
    if np.array_equal(run.w, run.w_init) and run.n_iter > 0:
        warnings.warn(
            f"{name}: the weights never moved from their initial value. From w = 0 every "
            "structure ties; with deterministic tie-breaking the latent completion can be a "
            "fixed point. Set random_tie_break=True, or start from init='two-stage' or coef_init.",
            ConvergenceWarning, stacklevel=user_stacklevel())
    if monitor is not None:
        monitor.warn()
    return learner

# --------------------------------------------------------------------------------------
# chunk kernels of the parallel passes
# --------------------------------------------------------------------------------------
def latent_chunk(a, b, structure, Xs, w):
    """Latent argmax of examples a..b-1 (deterministic ties)."""
    return structure.latent_argmax_batch(Xs[a:b], w)


def seeded_latent_chunk(a, b, structure, Xs, w, seeds):
    """Latent argmax of examples a..b-1, each with its own seed (ties broken at random).

    Per-example seeds make the result independent of how examples are split into chunks, so
    ``n_jobs`` never changes the model."""
    return [structure.latent_argmax(Xs[k], w, random_state=int(seeds[k])) for k in range(a, b)]


def decision_chunk(a, b, structure, X, w):
    """[f(x) for examples a..b-1], as one array in a list."""
    return [structure.decision_batch(X[a:b], w)]


def structured_chunk(a, b, structure, X, Y, w):
    """Loss-augmented argmax results of structured examples a..b-1."""
    return structure.argmax_results(X[a:b], w, Y[a:b])

# --------------------------------------------------------------------------------------
# the loop's state as checkpoint data
# --------------------------------------------------------------------------------------
def pack_loop(*, w, w_init, pool, pos_constraint, pos_structure, pos_phi, cache, rng, monitor,
              counters: dict) -> tuple[dict, dict]:
    """(meta, arrays) of the loop after an outer iteration (``counters``: JSON scalars and
    lists, such as the curves and the iteration number)."""
    pool_meta, pool_arrays = pool.get_state()
    pos_ids = list(pos_structure)
    s_meta, s_arrays = pack_arrays([pos_structure[i] for i in pos_ids])
    owners, keys, vectors, losses = [], [], [], []
    for j, entries in cache.items():
        for key, value in entries.items():
            owners.append(j)
            keys.append(key)
            if isinstance(value, tuple):  # a structured example's (d, loss)
                vectors.append(value[0])
                losses.append(value[1])
            else:
                vectors.append(value)
                losses.append(np.nan)
    meta = {**counters, "pool": pool_meta, "structures": s_meta, "rng": rng_state(rng),
            "monitor": monitor_state(monitor), "cache_owners": list(cache)}
    arrays = {"w": w, "w_init": w_init, "pos_constraint": pos_constraint,
              "pos_ids": np.asarray(pos_ids, dtype=np.int64),
              "cache_owner": np.asarray(owners, dtype=np.int64),
              "cache_loss": np.asarray(losses, dtype=np.float64),
              **prefixed("pool", pool_arrays), **prefixed("structure", s_arrays),
              **prefixed("pos_phi", pack_sparse([pos_phi[i] for i in pos_ids])),
              **prefixed("cache_key", pack_bytes(keys)),
              **prefixed("cache_phi", pack_sparse(vectors))}
    return meta, arrays


def unpack_loop(meta: dict, arrays: dict, *, n_structured_from: int, monitor) -> dict:
    """The loop's containers from ``pack_loop``'s output: w, w_init, pool, pos_constraint,
    pos_structure, pos_phi, cache, rng (the monitor is restored in place).  Cache owners
    ``>= n_structured_from`` are structured examples, whose entries are (d, loss)."""
    try:
        pool = ConstraintPool.from_state(meta["pool"], unprefixed("pool", arrays))
        pos_ids = [int(i) for i in arrays["pos_ids"]]
        structures = unpack_arrays(meta["structures"], unprefixed("structure", arrays))
        phis = unpack_sparse(unprefixed("pos_phi", arrays))
        cache = {int(j): {} for j in meta["cache_owners"]}
        keys = unpack_bytes(unprefixed("cache_key", arrays))
        vectors = unpack_sparse(unprefixed("cache_phi", arrays))
        for j, key, vec, loss in zip(arrays["cache_owner"], keys, vectors, arrays["cache_loss"],
                                      strict=True):
            j = int(j)
            cache[j][key] = (vec, float(loss)) if j >= n_structured_from else vec
        restore_monitor(monitor, meta["monitor"])
        return {
            "w": np.array(arrays["w"], dtype=np.float64),
            "w_init": np.array(arrays["w_init"], dtype=np.float64),
            "pool": pool,
            "pos_constraint": np.array(arrays["pos_constraint"], dtype=np.int64),
            "pos_structure": dict(zip(pos_ids, structures, strict=True)),
            "pos_phi": dict(zip(pos_ids, phis, strict=True)),
            "cache": cache,
            "rng": rng_from_state(meta["rng"]),
        }
    except (KeyError, ValueError, IndexError) as exc:
        raise ModelFormatError(f"the checkpoint's loop state is damaged or from another "
                               f"version ({type(exc).__name__}: {exc}); train afresh") from exc

# --------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------
#: consecutive outer iterations that must each move the LCLR-variant's objective by less
#: than its tol before it stops
STALL_PATIENCE = 3


def _structure_key(h) -> bytes:
    """A hashable key of a structure (an int array, or anything numpy can hold)."""
    a = np.ascontiguousarray(h)
    return a.dtype.str.encode() + bytes(str(a.shape), "ascii") + a.tobytes()


def _best_cached_scores(pool: ConstraintPool, w: np.ndarray) -> np.ndarray:
    """Per slack group g, max over its active constraints of -w . d_k (-inf for none).

    A negative j's cached structures h are stored as constraints d = -Phi(x_j, h), so for
    its group this is max_{h in H_j} w . Phi(x_j, h), the score no argmax may fall below.
    One compiled pass over the pool instead of a sparse dot per cached structure in Python
    (the caches reach tens of thousands of structures)."""
    margins = pool.margins(w)
    active = pool.active_mask
    best = np.full(pool.n_groups, -np.inf)
    np.maximum.at(best, pool.group_of[active], -margins[active])
    return best


def _final_gap(inner_gap: float, tol: float, curve: list, last: bool) -> float:
    """Relative duality gap to which an outer iteration solves its convex problem.

    A tenth of the previous outer iteration's relative decrease of Q (a hundredth in the
    ``last`` iteration, which no later one corrects), between ``tol`` (the outer stopping
    tolerance: below it the decrease that the stopping rule measures would be noise of the
    inner solve) and ``inner_gap``.  Early iterations, which move Q by percents, are solved
    loosely; the late ones as exactly as the stopping rule needs.
    """
    if len(curve) < 2 or curve[-2] <= 0.0:
        return float(inner_gap)
    progress = max(curve[-2] - curve[-1], 0.0) / curve[-2]
    return float(min(inner_gap, max(tol, (0.01 if last else 0.1) * progress)))


def alternating_latent_fit(learner, structure, X, y, C, w0, *, structured: StructuredPart | None = None,
                           random_state=None, desc="latent", monotone=True,
                           session=None, max_iter=None,
                           after_iteration=None, after_iteration_state=None) -> AlternatingResult:
    """LCLR Algorithm 1 with Algorithm 2 inside (J-LIS Algorithms 1-2 when ``structured``).

    Minimises, over w (squared hinge, grouped DCD for each inner problem)::

        1/2 ||w||^2 + C_1 sum_{i in S} max(0, max_h Delta(h_i, h) - w . (Phi(x_i, h_i) - Phi(x_i, h)))^2
                    + C   sum_{j in B} max(0, 1 - y_j max_h w . Phi_B(x_j, h))^2

    (the S term is absent for LCLR).  Outer iterations fix each positive's structure at its
    argmax (latent completion); the inner cutting plane grows a global cache per negative
    (and a working set per structured example) until nothing violated is left, solving the
    restricted problem with the grouped DCD.  Caches and duals persist across iterations.

    The learner supplies the hyperparameters tol, max_iter, max_cutting_plane_rounds,
    epsilon, dcd_tol, dcd_max_iter, n_jobs, progress, random_state, random_tie_break and
    check_inference, and optionally inner_gap (J-LIS's inexact cutting plane: loose
    intermediate restricted problems, and rounds that stop on a duality-gap certificate for
    the outer iteration's convex problem).  A decoded structure joins its example's cache
    only when its hinge exceeds the cache's by more than ``epsilon`` (SVM-struct's rule), so
    the cutting plane ends in few rounds; the Theorem 1 check allows for the resulting gap between Eq. (5)
    and Eq. (4), C sum_j (2 eps xi_j + eps^2).  With ``monotone`` (LCLR, J-LIS) training stops when the relative
    decrease falls below ``tol``, and an increase larger than the inner solve's duality gap
    raises ``InferenceError`` under ``check_inference`` (or, when the cutting plane was capped
    or decodes were inexact, warns, restores the previous weights and stops).  Without it
    (the LCLR-variant, which skips inner re-decoding) the loop runs ``max_iter`` iterations
    or until one changes nothing (a fixed point: ``converged``).

    ``w0`` may be a callable returning the start; it is called inside the loop's
    :func:`~latentstruct.parallel.shared` block (over ``task``, ``X``, ``pos``, ``neg``).

    ``session`` (a :class:`~latentstruct.learners.checkpoint.CheckpointSession`) receives the
    loop's whole state after every outer iteration; when it resumes one, ``w0`` is ignored
    and the loop continues from the saved state.

    ``max_iter`` (default ``learner.max_iter``) bounds the outer iterations of this run.
    ``after_iteration(iteration, w, snapshot)``, allowed only without ``monotone``, is called
    after every outer iteration; a true return value ends the run there, with
    ``stop_reason`` "validation" unless another rule ended it (the LCLR-variant's early
    stopping).  ``snapshot()`` returns, as copies, the :class:`AlternatingResult` that a run
    with ``max_iter=iteration`` would return (so a caller can keep the model of an
    iteration without training again).  ``after_iteration_state``, an object with
    ``state() -> (meta, arrays)`` and ``restore(meta, arrays)``, is what ``after_iteration``
    keeps: it goes into every checkpoint with the loop's state and is restored on resuming.
    """
    if after_iteration is not None and monotone:
        raise ValueError("after_iteration is only for the non-monotone loop")
    n = len(X)
    parts = {"structure": structure, "X": X}
    # the subsets declared as such: process and cluster workers then decode each example
    # in the same worker in every pass (home workers), which keeps what it built for it
    for name, at in (("pos", np.flatnonzero(y > 0)), ("neg", np.flatnonzero(y < 0))):
        parts[name] = subset(structure.subset(X, at) if n else [], of="X", at=at)
    if structured is not None:
        parts.update(s_task=structured.structure, s_X=structured.X, s_Y=structured.Y)
    # The task and the examples reach parallel workers once per fit; passes send only w.
    with shared(**parts) as data:
        if callable(w0):
            # a start that decodes X (LCLR's two-stage model) runs inside the block, so its
            # pass reuses the workers' copies of the examples instead of shipping its own
            w0 = w0()
        return _alternating_loop(learner, structure, X, y, C, w0, data, structured=structured,
                                 random_state=random_state, desc=desc, monotone=monotone,
                                 session=session,
                                 max_iter=learner.max_iter if max_iter is None else max_iter,
                                 after_iteration=after_iteration,
                                 after_iteration_state=after_iteration_state)


def _alternating_loop(learner, structure, X, y, C, w0, data, *, structured, random_state, desc,
                      monotone, session, max_iter, after_iteration, after_iteration_state=None):
    """``alternating_latent_fit``'s loop; ``data`` is its ``shared`` block."""
    rng = np.random.default_rng(learner.random_state if random_state is None else random_state)
    check = bool(getattr(learner, "check_inference", True))
    monitor = InferenceMonitor(type(learner).__name__, check)
    n = len(X)
    m = 0 if structured is None else len(structured.X)
    resumed = session is not None and session.resuming
    w = None if resumed else np.array(w0, dtype=np.float64)
    w_init = None if resumed else w.copy()
    pos = np.flatnonzero(y > 0)
    neg = np.flatnonzero(y < 0)
    X_pos, X_neg = data.value("pos"), data.value("neg")
    C_groups = np.full(n + m, float(C))
    if structured is not None:
        C_groups[n:] = structured.C
        s_task, s_dim = structured.structure, structured.structure.n_features
    pool = ConstraintPool(structure.n_features, n + m)
    pos_constraint = np.full(n, -1, dtype=np.int64)
    pos_structure: dict[int, np.ndarray] = {}
    pos_phi: dict[int, object] = {}
    # H_j (and W_i for S): cached structure key -> its feature vector (scores of known
    # structures are what an argmax must not fall below).
    cache: dict[int, dict] = {int(j): {} for j in neg}
    cache.update({n + i: {} for i in range(m)})
    if resumed:
        meta, arrays = session.state
        restored = unpack_loop(meta, arrays, n_structured_from=n, monitor=monitor)
        w, w_init, pool = restored["w"], restored["w_init"], restored["pool"]
        pos_constraint, pos_structure = restored["pos_constraint"], restored["pos_structure"]
        pos_phi, cache, rng = restored["pos_phi"], restored["cache"], restored["rng"]
        if after_iteration_state is not None:
            if "after_iteration" not in meta:
                raise ModelFormatError("the checkpoint's loop state lacks what its validation "
                                       "hook kept (written by another version?); train afresh")
            after_iteration_state.restore(meta["after_iteration"],
                                          unprefixed("after_iteration", arrays))
    tie_break = bool(getattr(learner, "random_tie_break", False))
    n_jobs = learner.n_jobs
    # A structure joins a cache only when its hinge exceeds the cache's by more than eps
    # (SVM-struct's epsilon); at termination every example's true hinge is then within eps
    # of its cached one, which bounds how far Eq. (5) can sit below Eq. (4).
    eps = float(getattr(learner, "epsilon", 0.0))
    # A decode-then-vote decoder is no maximiser: "not below a known structure" cannot hold.
    maximiser = structure.argmax_is_maximum()
    # Inexact cutting plane (J-LIS's inner_gap): a restricted problem whose working sets will
    # still grow is solved only to a relative duality gap that starts at inner_gap and halves
    # every round (loose solves move w enough for new violations to keep trickling in); the
    # round that ends an outer iteration is solved to a gap tied to the outer progress
    # (_final_gap).
    inner_gap = getattr(learner, "inner_gap", None)
    # The LCLR-variant's relative duality gap for its one restricted solve per iteration
    # (the projected-gradient rule alone asks for 1,000+ epochs once many structures share
    # a slack); whichever rule is met first ends the solve.
    dcd_gap = getattr(learner, "dcd_gap_tol", None)
    # The LCLR-variant's stopping rule (its objective need not decrease monotonically).
    stall_tol = getattr(learner, "tol", None) if not monotone else None
    # Where f(x) is the latent argmax's score (the task keeps LatentBinaryTask's
    # decision_batch rather than a score-only kernel) and ties are not drawn at random, the
    # objective's pass over X decodes every example at the new w; the next iteration's latent
    # completion of the positives and first decode of the negatives, at that same w, take
    # those results instead of decoding again; and the objective takes the negatives'
    # results of the cutting plane's last round, decoded at the w it is evaluated at (the
    # round that finds nothing to add ends the iteration without a solve).  That is one pass
    # over X less per outer iteration; the results, and so the path, are the same.
    # (a structure that kept the contract's decision_batch: the latent completions are reused)
    reuse = (not tie_break and getattr(structure.decision_batch, "__func__", None)
             is latent_argmax_decisions)
    decoded_at = None  # (w, results over X) of the objective's last pass
    neg_at = None  # (w, results over the negatives) of the last negatives' pass

    def latent(part, idx, w_, what):
        nonlocal neg_at
        size = len(idx)
        if decoded_at is not None and np.array_equal(decoded_at[0], w_):
            results = [decoded_at[1][i] for i in idx]
        elif tie_break:
            seeds = rng.integers(0, np.iinfo(np.int64).max, size=size)
            results = parallel_chunks(seeded_latent_chunk, size, n_jobs,
                                      args=(data["structure"], data[part], w_, rows(seeds)))
        else:
            results = parallel_chunks(latent_chunk, size, n_jobs,
                                      args=(data["structure"], data[part], w_))
        if reuse and part == "neg":
            neg_at = (np.array(w_, dtype=np.float64), results)
        monitor.observe(results, what, idx)
        return results

    def checked_phi(x, res, w_, what, example):
        phi = structure.latent_feature(x, res.structure)
        monitor.consistent(float(res.score), phi.dot(w_), what, example)
        return phi

    def cached_slack(j, w_):
        """Hinge of example j's cache at w_ (0 for an empty cache)."""
        if j >= n:  # a structured example: entries are (d, loss)
            return max([0.0] + [loss - d.dot(w_[:s_dim]) for d, loss in cache[j].values()])
        return max([0.0] + [1.0 + phi.dot(w_) for phi in cache[j].values()])

    def structured_violations(w_):
        """Loss-augmented argmax of every S example, its loss and Delta - w.d (>= 0)."""
        results = parallel_chunks(structured_chunk, m, n_jobs,
                                  args=(data["s_task"], data["s_X"], data["s_Y"], w_[:s_dim]))
        monitor.observe(results, "loss-augmented argmax", None)
        out = []
        for i, res in enumerate(results):
            yh = res.structure
            loss = s_task.loss(structured.Y[i], yh)
            d = s_task.joint_feature_difference(structured.X[i], structured.Y[i], yh) if loss else None
            violation = loss - (d.dot(w_[:s_dim]) if d is not None else 0.0)
            # The gold structure has violation 0: a true loss-augmented argmax is never below.
            monitor.not_worse(violation, 0.0, "loss-augmented argmax (structured example)", i)
            out.append((yh, loss, d, violation))
        return out

    def objective(w_):
        nonlocal decoded_at
        if reuse and n:
            if neg_at is not None and np.array_equal(neg_at[0], w_):
                # the negatives were decoded at this w by the cutting plane's last round
                results = [None] * n
                for k, j in enumerate(neg):
                    results[j] = neg_at[1][k]
                done = parallel_chunks(latent_chunk, len(pos), n_jobs,
                                       args=(data["structure"], data["pos"], w_))
                for k, i in enumerate(pos):
                    results[i] = done[k]
            else:
                results = parallel_chunks(latent_chunk, n, n_jobs,
                                          args=(data["structure"], data["X"], w_))
            decisions = np.array([float(r.score) for r in results], dtype=np.float64)
            decoded_at = (np.array(w_, dtype=np.float64), results)
        else:
            decisions = np.concatenate(parallel_chunks(
                decision_chunk, n, n_jobs, args=(data["structure"], data["X"], w_))) if n else np.zeros(0)
        value = squared_hinge_objective(w_, decisions, y, C)
        if structured is not None:
            xi = np.array([max(v[3], 0.0) for v in structured_violations(w_)])
            value += structured.C * float(xi @ xi)
        return value

    it = 0
    done = False
    if resumed:
        c = session.state[0]
        current, curve, cache_sizes, gaps = c["current"], c["curve"], c["cache_sizes"], c["gaps"]
        hits, cap_hits, inner_not_converged = c["hits"], c["cap_hits"], c["inner_not_converged"]
        converged, stop_reason, last_gap = c["converged"], c["stop_reason"], c["last_gap"]
        exact_next = bool(c.get("exact_next", False))
        calm = int(c.get("calm", 0))
        it, done = session.iteration, session.done
    else:
        current = objective(w)
        curve, cache_sizes, gaps, hits = [current], [], [], 0
        cap_hits = inner_not_converged = 0
        converged, stop_reason = False, "max_iter"
        last_gap = 0.0
        exact_next = False  # inexact cutting plane: solve the next iteration to tol
        calm = 0  # consecutive non-monotone iterations that moved Q by less than tol

    def checkpoint(iteration, finished):
        if session is None or not session.active:
            return
        counters = {"current": current, "curve": curve, "cache_sizes": cache_sizes,
                    "gaps": gaps, "hits": hits, "cap_hits": cap_hits,
                    "inner_not_converged": inner_not_converged, "converged": converged,
                    "stop_reason": stop_reason, "last_gap": last_gap, "exact_next": exact_next,
                    "calm": calm}
        meta, arrays = pack_loop(w=w, w_init=w_init, pool=pool, pos_constraint=pos_constraint,
                                 pos_structure=pos_structure, pos_phi=pos_phi, cache=cache,
                                 rng=rng, monitor=monitor, counters=counters)
        if after_iteration_state is not None:
            hook_meta, hook_arrays = after_iteration_state.state()
            meta["after_iteration"] = hook_meta
            arrays.update(prefixed("after_iteration", hook_arrays))
        session.save(iteration, meta, arrays, done=finished)

    def snapshot(iteration):
        """The result a run with ``max_iter=iteration`` returns, after that iteration (the
        non-monotone loop's ``after_iteration``): copies, which later iterations leave
        alone; ``w_init`` is the run's own."""
        return AlternatingResult(w.copy(), w_init, iteration, converged, stop_reason,
                                 list(curve), list(cache_sizes), hits,
                                 list(monitor.per_iteration), monitor.n_inconsistent, cap_hits,
                                 inner_not_converged, list(gaps))

    bar = tqdm(total=max_iter, initial=min(it, max_iter), desc=desc, unit="iter",
               disable=bar_disable(learner.progress), leave=False)
    # the iterations still to run: none when the resumed run had finished
    first, last = it + 1, (it if done else max_iter)
    for it in range(first, last + 1):
        w_prev = w.copy()
        changes = 0
        slack_excess = 0.0  # bound on Eq. (4) - Eq. (5) at the end of the cutting plane
        # Algorithm 1: latent completion of the positives at the current w.
        for k, (i, res) in enumerate(zip(pos, latent("pos", pos, w, "latent completion"))):
            h = np.asarray(res.structure)
            old = pos_structure.get(i)
            if old is not None and maximiser:
                monitor.not_worse(float(res.score), pos_phi[i].dot(w), "latent completion", int(i))
            if old is not None and old.shape == h.shape and np.array_equal(old, h):
                continue
            phi = checked_phi(X_pos[k], res, w, "latent completion", int(i))
            if pos_constraint[i] >= 0:
                pool.deactivate(int(pos_constraint[i]))
            pos_constraint[i] = pool.add(int(i), phi, 1.0)
            pos_structure[i] = h
            pos_phi[i] = phi
            changes += 1
        # Algorithm 2: cutting plane over the negatives' caches (and S's working sets).
        capped = True
        final_gap = None if inner_gap is None else _final_gap(
            inner_gap, learner.tol, [] if exact_next else curve, it == max_iter)
        if exact_next:
            final_gap = min(float(inner_gap), float(learner.tol))
        at_floor = True  # the last restricted solve was as exact as this iteration asks
        last_dual = -np.inf
        for rnd in range(learner.max_cutting_plane_rounds):
            added = 0
            slack_excess = 0.0
            hinge_sq = 0.0  # squared hinges of B- at their true argmax, and of S (times C1/C)
            decoded = latent("neg", neg, w, "negative's argmax")
            best_cached = _best_cached_scores(pool, w)
            for k, (j, res) in enumerate(zip(neg, decoded)):
                j = int(j)
                hinge_sq += max(0.0, 1.0 + float(res.score)) ** 2
                xi = 0.0
                if cache[j]:
                    known = float(best_cached[j])
                    if maximiser:
                        monitor.not_worse(float(res.score), known, "negative's argmax", j)
                    xi = max(0.0, 1.0 + known)
                slack_excess += 2.0 * eps * xi + eps * eps
                if res.score <= -1.0:
                    continue  # zero loss even at the argmax: nothing to add to Eq. (5)
                key = _structure_key(res.structure)
                if key in cache[j]:
                    hits += 1
                    continue
                if 1.0 + res.score <= xi + eps:
                    continue  # within eps of the cache's hinge
                phi = checked_phi(X_neg[k], res, w, "negative's argmax", j)
                cache[j][key] = phi
                pool.add(j, -phi, 1.0)
                added += 1
            if structured is not None:
                for i, (yh, loss, d, violation) in enumerate(structured_violations(w)):
                    xi = cached_slack(n + i, w)
                    slack_excess += (2.0 * eps * xi + eps * eps) * structured.C / C
                    hinge_sq += max(violation, 0.0) ** 2 * structured.C / C
                    if violation <= 0.0:
                        continue
                    key = _structure_key(yh)
                    if key in cache[n + i]:
                        hits += 1
                        continue
                    if violation <= xi + eps:
                        continue
                    cache[n + i][key] = (d, float(loss))
                    pool.add(n + i, d, float(loss))
                    added += 1
            cache_sizes.append(sum(len(c) for c in cache.values()))
            changes += added
            if inner_gap is not None and rnd > 0:
                # The convex problem of this iteration (positives fixed, every structure of B-
                # and S) at w, against the restricted dual, a lower bound on its optimum: a
                # certificate that w is within final_gap of it, violated structures or not.
                pos_sq = sum(max(0.0, 1.0 - pos_phi[i].dot(w)) ** 2 for i in pos)
                full = 0.5 * float(w @ w) + C * (pos_sq + hinge_sq)
                if full - last_dual <= final_gap * abs(full):
                    capped = False
                    last_gap = max(full - last_dual, 0.0)
                    break
            if added == 0 and rnd > 0 and at_floor:
                capped = False
                break
            gap_tol = dcd_gap
            if inner_gap is not None:
                # loose while the working sets grow, halving towards half the final gap
                gap_tol = max(0.5 * final_gap, inner_gap * 0.5 ** rnd)
                at_floor = gap_tol <= 0.5 * final_gap
            sol = solve_grouped_dcd(pool, C_groups, tol=learner.dcd_tol,
                                    max_iter=learner.dcd_max_iter, random_state=rng,
                                    gap_tol=gap_tol)
            w = sol.w
            last_gap = max(float(sol.gap), 0.0)
            last_dual = float(sol.dual)
            inner_not_converged += not sol.converged
            # an outer iteration can take minutes: show each inner round as it ends
            bar.set_postfix(round=f"{rnd + 1}/{learner.max_cutting_plane_rounds}",
                            dcd_epochs=sol.n_iter, cache=pool.n_active)
        cap_hits += capped
        gaps.append(last_gap)
        monitor.end_iteration()
        new = objective(w)
        curve.append(new)
        bar.set_postfix(objective=f"{new:.5g}", cache=pool.n_active)
        bar.update(1)
        if not monotone:
            change = abs(new - current) / max(abs(current), 1e-12)
            current = new
            if changes == 0:
                # No completion changed and no cache grew: every later iteration would solve
                # the same restricted problem again, so this is where the loop ends.
                converged, stop_reason = True, "fixed_point"
            elif stall_tol is not None:
                # Q may rise as well as fall here, so one small step proves nothing: stop
                # after STALL_PATIENCE consecutive iterations that each moved Q by less
                # than tol (relative), in either direction.
                calm = calm + 1 if change < stall_tol else 0
                if calm >= STALL_PATIENCE:
                    converged, stop_reason = True, "tol"
            # scored after every iteration, also the one another rule ends the run at
            stop_early = after_iteration is not None and bool(
                after_iteration(it, w, lambda: snapshot(it)))
            if converged:
                checkpoint(it, True)
                break
            if stop_early:
                stop_reason = "validation"
                checkpoint(it, True)
                break
            checkpoint(it, it == max_iter)
            continue
        # Theorem 1 with an inexact inner solve: Q(w_t+1) <= Eq. (5)(w_t+1) + C * slack_excess
        # <= Eq. (5)'s optimum + gap + C * slack_excess <= Q(w_t) + gap + C * slack_excess.
        allowed = last_gap + C * slack_excess + score_tolerance(current)
        if new > current + allowed:
            message = (
                f"{type(learner).__name__}: the objective increased from {current:.10g} to "
                f"{new:.10g} at outer iteration {it}, more than the inner solve's duality gap "
                f"and the cutting plane's epsilon allow ({allowed:.3g}); with exact inference "
                "Theorem 1 rules this out")
            trusted = not capped and not monitor.per_iteration[-1] and maximiser
            if check and trusted:
                raise InferenceError(
                    message + ". The latent argmax is not a maximum: check the task with "
                    "latentstruct.testing.check_task(task, examples, enumerate=...), or pass "
                    "check_inference=False.")
            warnings.warn(
                message + ("" if trusted else " (this iteration hit the cutting-plane cap, had "
                           "inexact decodes, or the task's decoder is not a maximiser)")
                + "; training stops and keeps the weights "
                "before the increase.", ObjectiveIncreaseWarning, stacklevel=user_stacklevel())
            w = w_prev
            curve.pop()  # the curve ends at the objective of the weights kept
            stop_reason = "objective_increase"
            checkpoint(it, True)
            break
        improvement = (current - new) / max(abs(current), 1e-12)
        if new > current and inner_gap is not None:
            # an increase within the inexact inner solve's certified gap: the weights before
            # it are kept, so the curve and the model end at the lowest Q seen
            w = w_prev
            curve.pop()
            new = current
        current = new
        exact_next = False
        if improvement < learner.tol and inner_gap is not None and final_gap > learner.tol:
            # a decrease below tol measured with a looser inner solve is no convergence:
            # the next iteration (from the same weights if Q rose) is solved to tol
            exact_next = True
        elif improvement < learner.tol:
            converged, stop_reason = True, "tol"
            checkpoint(it, True)
            break
        checkpoint(it, it == max_iter)
    bar.close()
    run = AlternatingResult(w, w_init, it, converged, stop_reason, curve, cache_sizes, hits,
                            monitor.per_iteration, monitor.n_inconsistent, cap_hits,
                            inner_not_converged, gaps)
    return run, monitor
