"""What the two mini-batch structured-hinge SGD learners share (DISTRO and its one-hot
baseline, Srikumar & Manning 2014 §4–5, the authors' ``SGDLearner``): the step-size schedule,
the mini-batch order and the search for the initial step size.

Both minimise  λ/2 ||w||² + (1/N) Σ_i max_y [Δ(y, y_i) + w·(Φ(x_i, y) − Φ(x_i, y_i))]  by
Pegasos-style steps on mini-batches B of ``batch_size`` examples:

    η_t = η0 / (1 + η0 λ t)                      (t counts mini-batches since the call began)
    w  <- (1 − η_t λ) w − (η_t / |B|) Σ_{i∈B} (Φ(x_i, ŷ_i) − Φ(x_i, y_i)),

ŷ_i the loss-augmented argmax.  The schedule restarts at every call, as in the release
(``SGDStructuredSVM.partial_fit`` passes the step count on, so its calls continue it).
"""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from ..exceptions import ConfigError

__all__ = ["step_size", "minibatches", "search_eta0", "check_eta0", "ETA0_RANGE"]

#: the release searches eta0 over [2^-5, 2^5] by doubling and halving
ETA0_RANGE = (2.0 ** -5, 2.0 ** 5)


def step_size(eta0: float, lam: float, t: int) -> float:
    """η_t = η0 / (1 + η0 λ t)."""
    return eta0 / (1.0 + eta0 * lam * t)


def minibatches(n: int, batch_size: int, rng: np.random.Generator, *,
                shuffle: bool = True) -> list[np.ndarray]:
    """One epoch's mini-batches: ``rng.permutation(n)`` cut into pieces of ``batch_size``
    (with ``shuffle=False``: ``0..n-1`` cut so, nothing drawn from ``rng``)."""
    order = rng.permutation(n) if shuffle else np.arange(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def check_eta0(eta0, lam: float) -> str | float:
    """``"auto"`` or a float in (0, 1/λ): a first step with η0 λ >= 1 would flip w's sign."""
    if isinstance(eta0, str):
        if eta0 != "auto":
            raise ConfigError(f"eta0 must be 'auto' or a positive number; got {eta0!r}")
        return eta0
    if isinstance(eta0, bool) or not isinstance(eta0, numbers.Real) or not 0 < eta0 < np.inf:
        raise ConfigError(f"eta0 must be 'auto' or a positive number; got {eta0!r}")
    if lam > 0 and eta0 * lam >= 1:
        raise ConfigError(f"eta0 * lambda1 must be below 1 (the first step shrinks w by "
                          f"1 - eta0*lambda1); got eta0={eta0}, lambda1={lam}")
    return float(eta0)


def search_eta0(trial: Callable[[float], float], lam: float,
                eta_range: tuple[float, float] = ETA0_RANGE) -> tuple[float, dict[float, float]]:
    """Bottou's search: the η0 in {2^k} ∩ ``eta_range`` (and η0 λ < 1) that ``trial`` rates
    lowest, found by trying 1, then doubling or halving while the objective improves.

    ``trial(eta0)`` runs one epoch on a sample from the same start and returns the sample's
    objective.  Returns (best η0, {η0: objective} of every trial).
    """
    lo, hi = eta_range
    if lam > 0:
        hi = min(hi, 0.5 / lam)
    seen: dict[float, float] = {}

    def value(e: float) -> float:
        if e not in seen:
            v = trial(e)
            seen[e] = v if np.isfinite(v) else np.inf
        return seen[e]

    start = 1.0
    while start > hi:
        start /= 2.0
    best = start
    for factor in (2.0, 0.5):
        e = best * factor
        while lo <= e <= hi and value(e) < value(best):
            best = e
            e *= factor
        if best != start:
            break
    value(best)
    return best, seen
