"""What the alternating loop of LCLR, J-LIS and the LCLR-variant takes and gives back.

:class:`StructuredPart` is J-LIS's fully labelled part S; :class:`AlternatingResult` is one
run of the loop and :func:`store_alternating_result` turns it into a learner's fitted
attributes (and warnings); :func:`squared_hinge_objective` is LCLR's objective (Eq. 3).
The loop itself is :func:`latentstruct.learners.alternating.alternating_latent_fit`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import ConvergenceWarning, user_stacklevel, warn_convergence

__all__ = [
    "StructuredPart",
    "AlternatingResult",
    "store_alternating_result",
    "squared_hinge_objective",
]


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
