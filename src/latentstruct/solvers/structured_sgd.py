"""What the two mini-batch structured-hinge SGD learners share (DISTRO and its one-hot
baseline, Srikumar & Manning 2014 §4–5, the authors' ``SGDLearner``): the step-size schedule,
the mini-batch order and the search for the initial step size.

Both minimise  λ/2 ||w||² + (1/N) Σ_i max_y [Δ(y, y_i) + w·(Φ(x_i, y) − Φ(x_i, y_i))]  by
Pegasos-style steps on mini-batches B of ``batch_size`` examples:

    η_t = η0 / (1 + η0 λ t)                      (t counts mini-batches since the call began)
    w  <- (1 − η_t λ) w − (η_t / |B|) Σ_{i∈B} (Φ(x_i, ŷ_i) − Φ(x_i, y_i)),

ŷ_i the loss-augmented argmax.  The schedule restarts at every call, as in the release
(``SGDStructuredSVM.partial_fit`` passes the step count on, so its calls continue it).

The CRF's SGD (``learners.probabilistic.crf``, ``solver="sgd"``) uses the same schedule
and, with ``eta0="calibrate"``, CRFsuite's choice of η0 (:func:`calibrate_eta0`, below).
"""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from ..exceptions import ConfigError

__all__ = ["step_size", "minibatches", "search_eta0", "check_eta0", "ETA0_RANGE",
           "calibrate_eta0", "CALIBRATION_DEFAULTS"]

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


#: CRFsuite's calibration settings for ``l2sgd`` (``crfsuite -H -a l2sgd``), by their names
#: in sklearn-crfsuite
CALIBRATION_DEFAULTS = {"calibration_eta": 0.1, "calibration_rate": 2.0,
                        "calibration_samples": 1000, "calibration_candidates": 10,
                        "calibration_max_trials": 20}


def calibrate_eta0(trial: Callable[[float], float], initial_loss: float, lam: float, *,
                   calibration_eta: float = 0.1, calibration_rate: float = 2.0,
                   calibration_candidates: int = 10,
                   calibration_max_trials: int = 20) -> tuple[float, list[tuple[float, float]]]:
    """CRFsuite's calibration of SGD's first step η0 (``l2sgd_calibration`` in its
    ``train_l2sgd.c``, after the ``sgd`` of Léon Bottou).

    Problem: per-example SGD on ``F(w) = Σ_i ℓ_i(w) + c2 ||w||²`` (N examples), i.e. on
    ``F/N = (1/N) Σ_i ℓ_i(w) + (λ/2) ||w||²`` with ``λ = 2 c2 / N``, runs Pegasos's schedule
    (Shalev-Shwartz, Singer & Srebro 2007) shifted by ``t0`` as in Bottou's SGD:
    ``η_t = 1 / (λ (t0 + t)) = η0 / (1 + η0 λ t)`` with ``t0 = 1 / (λ η0)``.  The 1/t
    decrease is the rate that makes SGD converge on a λ-strongly convex objective; the shift
    sets the first step, which the theory leaves to a constant that the data decide:
    too large and the first epochs overshoot (the NLL's curvature is far above λ), too small
    and 1/t never catches up.  So η0 is measured, not guessed: each candidate runs one epoch
    from w = 0 on a fixed sample (the first ``calibration_samples`` examples of a shuffled
    order) and is scored by that epoch's objective.

    ``trial(eta)`` runs that epoch and returns its objective (CRFsuite's: the sum of the
    sample's losses, each at the weights its step saw, plus ``(λ/2) S ||w||²`` at the end,
    S the sample's size); ``initial_loss`` is the sample's objective at w = 0.  The search:
    start at ``calibration_eta`` and multiply by ``calibration_rate`` while the candidate
    lowers the objective below ``initial_loss`` ("ok") and fewer than
    ``calibration_candidates`` ok ones were seen; then go down from
    ``calibration_eta / calibration_rate``, dividing by the rate, until another
    ``calibration_candidates`` ok candidates were seen.  A trial counter starting at 1 stops
    the search once it reaches ``calibration_max_trials`` (so at most
    ``max(1, calibration_max_trials − 1)`` trials, CRFsuite's count).  The η0 returned is the
    candidate of lowest finite objective (``calibration_eta`` if none is finite).  A
    candidate with ``η λ ≥ 1`` is not run (its first decay factor ``1 − η λ`` would zero or
    flip the weights) and counts as a failed trial.

    Returns ``(η0, [(η, objective), ...] in the order tried)``.
    """
    rate = float(calibration_rate)
    init_eta = float(calibration_eta)
    candidates, max_trials = int(calibration_candidates), int(calibration_max_trials)
    eta, best_eta, best_loss = init_eta, init_eta, np.inf
    left, going_down, trials = candidates, False, 1
    tried: list[tuple[float, float]] = []
    while left > 0 or not going_down:
        loss = float(trial(eta)) if eta * lam < 1.0 else np.inf
        tried.append((eta, loss))
        ok = bool(np.isfinite(loss) and loss < initial_loss)
        if ok:
            left -= 1
        if np.isfinite(loss) and loss < best_loss:
            best_loss, best_eta = loss, eta
        if not going_down:
            if ok and left > 0:
                eta *= rate
            else:
                going_down, left, eta = True, candidates, init_eta / rate
        else:
            eta /= rate
        trials += 1
        if max_trials <= trials:
            break
    return best_eta, tried
