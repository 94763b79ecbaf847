"""Stochastic gradient descent and L-BFGS over a loss given as a callable.

Both minimise an L2-regularised empirical loss::

    F(w) = L(w) + (alpha / 2) ||w||^2,        L(w) = (1 / n) sum_i f_i(w)

:func:`sgd` visits one example at a time (Koo & Collins 2005 train their hidden-variable
reranker, Eq. 3, this way, §3.2 and footnote 3, after LeCun et al. 1998); :func:`lbfgs` hands
the full F to SciPy's L-BFGS-B (the paper found conjugate gradient no different from SGD).
Neither knows what the examples are: the learner supplies f_i and its gradient.

**SGD schedule.** Step t = 0, 1, 2, ... (counted over all epochs) updates

    w <- w - eta_t (grad f_i(w) + alpha w)

with ``schedule``:

* ``"bottou"`` (default): eta_t = eta0 / (1 + eta0 * alpha * t), Bottou's rate for
  L2-regularised objectives (constant eta0 when alpha = 0);
* ``"inverse_time"``: eta_t = eta0 / (1 + t / n), one halving of the rate per epoch-scale;
* ``"constant"``: eta_t = eta0.

Each epoch visits the examples in ``rng.permutation(n)`` with
``rng = np.random.default_rng(random_state)`` (one permutation per epoch, nothing else is
drawn).  The L2 term is applied lazily: w is held as ``scale * v``, the shrinkage multiplies
``scale`` by (1 - eta_t alpha) and a sparse gradient touches only its own entries of v, so an
update costs O(nnz(grad)) however long w is.  This is why ``loss_grad_example(i, v, scale)``
receives w in that factored form.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit
from scipy.optimize import minimize

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import ConfigError
from latentstruct.solvers.label_matrix import single_threaded_blas

__all__ = ["SCHEDULES", "SGDResult", "SGDState", "LBFGSResult", "sgd", "lbfgs", "learning_rate",
           "scatter_add"]

SCHEDULES = ("bottou", "inverse_time", "constant")
_RESCALE_BELOW = 1e-9


@dataclass(frozen=True)
class SGDResult:
    """w; epochs run; per epoch the mean of the example losses f_i met during it plus
    (alpha/2)||w||^2 at its end (a cheap running estimate of F); whether the tol test
    stopped the run; the number of steps taken."""

    w: np.ndarray
    n_iter: int
    objective_curve: tuple[float, ...]
    converged: bool
    n_steps: int


@dataclass(frozen=True)
class LBFGSResult:
    """w; L-BFGS iterations; F(w) at the end and after every iteration; SciPy's success
    flag and message."""

    w: np.ndarray
    n_iter: int
    objective: float
    objective_curve: tuple[float, ...]
    converged: bool
    message: str


@dataclass(frozen=True)
class SGDState:
    """Where an :func:`sgd` run stands after an epoch: w = scale * v, t steps taken, the
    epochs done, the objective curve, whether the tol test stopped it, and its generator
    (the next epoch's permutation comes from it)."""

    v: np.ndarray
    scale: float
    t: int
    epoch: int
    curve: tuple
    converged: bool
    rng: np.random.Generator


@njit(cache=True, nogil=True)
def _scatter(v, idx, vals, factor):  # pragma: no cover - numba
    for k in range(idx.shape[0]):
        v[idx[k]] += factor * vals[k]


def scatter_add(v: np.ndarray, indices: np.ndarray, values: np.ndarray, factor: float = 1.0) -> None:
    """``v[indices] += factor * values`` in place, repeated indices accumulating."""
    _scatter(v, np.ascontiguousarray(indices, dtype=np.int64),
             np.ascontiguousarray(values, dtype=np.float64), float(factor))


def learning_rate(schedule: str, eta0: float, alpha: float, t: int, n_examples: int) -> float:
    """eta_t of ``schedule`` at step t (see the module docstring)."""
    if schedule == "bottou":
        return eta0 / (1.0 + eta0 * alpha * t)
    if schedule == "inverse_time":
        return eta0 / (1.0 + t / n_examples)
    if schedule == "constant":
        return eta0
    raise ConfigError(f"schedule must be one of {', '.join(SCHEDULES)}; got {schedule!r}")


def _check(name, value, *, positive=False, integer=False):
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not (
            value > 0 if positive else value >= 0) or not np.isfinite(value):
        rng = "(0, inf)" if positive else "[0, inf)"
        raise ConfigError(f"The '{name}' parameter must be {'an int' if integer else 'a float'} "
                          f"in the range {rng}. Got {value!r} instead.")
    return int(value) if integer else float(value)


def sgd(loss_grad_example: Callable, n_examples: int, w0, *, schedule: str = "bottou",
        eta0: float = 0.1, alpha: float = 0.0, n_epochs: int = 5, random_state=0,
        tol: float | None = None, callback: Callable | None = None,
        on_epoch: Callable | None = None, start: SGDState | None = None) -> SGDResult:
    """Minimise F(w) = (1/n) sum_i f_i(w) + (alpha/2)||w||^2 by stochastic gradient descent.

    Parameters
    ----------
    loss_grad_example : callable ``(i, v, scale) -> (f_i, grad)``
        Loss of example i and its gradient at w = scale * v; grad is a dense array or a
        :class:`SparseVector` (repeated indices are summed).  It must not modify v.
    n_examples : int
    w0 : array (d,), the start (copied)
    schedule, eta0 : the learning rate (module docstring)
    alpha : float >= 0, L2 strength (eta_t * alpha must stay below 1)
    n_epochs : int, passes over the examples
    random_state : seeds the visiting order
    tol : float or None
        Stop after an epoch whose running objective fell by less than ``tol`` times its
        previous value (None: run every epoch).
    callback : callable ``(epoch, objective) -> None`` or None, after every epoch
    on_epoch : callable ``(SGDState) -> None`` or None
        Called after every epoch (after ``callback``) with the run's whole state, e.g. to
        write a checkpoint; the arrays are the live ones (copy them to keep them).
    start : SGDState or None
        Continue the run that produced this state (as ``on_epoch`` gave it) instead of
        starting from ``w0``: the result is the one the uninterrupted run gives.

    Returns
    -------
    SGDResult
    """
    n = _check("n_examples", n_examples, positive=True, integer=True)
    eta0 = _check("eta0", eta0, positive=True)
    alpha = _check("alpha", alpha)
    n_epochs = _check("n_epochs", n_epochs, positive=True, integer=True)
    if tol is not None:
        tol = _check("tol", tol)
    learning_rate(schedule, eta0, alpha, 0, n)  # validates the schedule
    if eta0 * alpha >= 1.0:
        raise ConfigError(f"eta0 * alpha must be below 1 (the L2 shrinkage factor 1 - eta*alpha "
                          f"must stay positive); got eta0={eta0!r}, alpha={alpha!r}")
    v = np.array(w0 if start is None else start.v, dtype=np.float64)
    if v.ndim != 1:
        raise ConfigError(f"w0 must be a 1-d array; got shape {v.shape}")
    if start is None:
        scale, rng, curve, converged, t, epoch = 1.0, np.random.default_rng(random_state), [], \
            False, 0, 0
    else:
        scale, rng, curve = float(start.scale), start.rng, list(start.curve)
        converged, t, epoch = bool(start.converged), int(start.t), int(start.epoch)
    first, last = epoch + 1, (epoch if converged else n_epochs)
    for epoch in range(first, last + 1):
        total = 0.0
        for i in rng.permutation(n):
            eta = learning_rate(schedule, eta0, alpha, t, n)
            loss, grad = loss_grad_example(int(i), v, scale)
            total += float(loss)
            scale *= 1.0 - eta * alpha
            if isinstance(grad, SparseVector):
                _scatter(v, grad.indices, grad.values, -eta / scale)
            else:
                v -= (eta / scale) * np.asarray(grad, dtype=np.float64)
            if scale < _RESCALE_BELOW:
                v *= scale
                scale = 1.0
            t += 1
        objective = total / n + 0.5 * alpha * scale * scale * float(v @ v)
        curve.append(objective)
        if callback is not None:
            callback(epoch, objective)
        if tol is not None and len(curve) > 1 and curve[-2] - curve[-1] < tol * abs(curve[-2]):
            converged = True
        if on_epoch is not None:
            on_epoch(SGDState(v, scale, t, epoch, tuple(curve), converged, rng))
        if converged:
            break
    return SGDResult(v * scale, epoch, tuple(curve), converged, t)


def lbfgs(loss_grad_full: Callable, w0, *, alpha: float = 0.0, max_iter: int = 100,
          tol: float = 1e-6, callback: Callable | None = None,
          stop: Callable | None = None, memory: int = 10) -> LBFGSResult:
    """Minimise F(w) = L(w) + (alpha/2)||w||^2 with SciPy's L-BFGS-B (no bounds).

    Parameters
    ----------
    loss_grad_full : callable ``w -> (L(w), grad L(w))`` (dense gradient)
    w0 : array (d,), the start
    alpha : float >= 0, L2 strength
    max_iter : int, L-BFGS iterations
    tol : float > 0
        ``gtol`` of L-BFGS-B (stop when every component of the projected gradient is below
        it); ``ftol`` is ``tol * 1e-3`` (relative reduction of F per iteration).
    callback : callable ``(iteration, objective) -> None`` or None
    stop : callable ``(iteration, objective, w) -> bool`` or None
        Called after every iteration (after ``callback``) with that iteration's weights;
        a true value ends the run there as converged (a learner's own stopping rule, such
        as CRFsuite's relative decrease over a period).
    memory : int, default 10
        Correction pairs kept (L-BFGS-B's ``maxcor``; CRFsuite keeps 6).  Each iteration
        costs O(memory · d) besides F.

    Returns
    -------
    LBFGSResult
    """
    alpha = _check("alpha", alpha)
    max_iter = _check("max_iter", max_iter, positive=True, integer=True)
    tol = _check("tol", tol, positive=True)
    w0 = np.array(w0, dtype=np.float64)
    curve: list[float] = []

    def fun(w):
        loss, grad = loss_grad_full(w)
        grad = np.array(grad, dtype=np.float64, copy=None)  # the learner's own array: add in place
        if alpha:
            grad += alpha * w
        return float(loss) + 0.5 * alpha * float(w @ w), grad

    stopped = []

    def record(intermediate_result):
        curve.append(float(intermediate_result.fun))
        if callback is not None:
            callback(len(curve), curve[-1])
        if stop is not None and stop(len(curve), curve[-1], intermediate_result.x):
            stopped.append(len(curve))
            raise StopIteration  # SciPy ends the run and returns this iterate

    # L-BFGS-B's vector operations are memory-bound: threaded BLAS only adds start-up and
    # contention (a CoNLL-2000 CRF fit took 33-48 s with it against 28-29 s without)
    with single_threaded_blas():
        res = minimize(fun, w0, jac=True, method="L-BFGS-B", callback=record,
                       options={"maxiter": max_iter, "gtol": tol, "ftol": tol * 1e-3,
                                "maxcor": int(memory)})
    return LBFGSResult(np.asarray(res.x, dtype=np.float64), len(curve) if stopped else int(res.nit),
                       float(res.fun), tuple(curve), bool(res.success or stopped),
                       "stopping rule met" if stopped else str(res.message))
