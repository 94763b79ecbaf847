"""OWL-QN: L-BFGS for an L1-regularised smooth objective (Andrew & Gao 2007).

Problem::

    min_w  F(w) = f(w) + c1 ||w||_1,        c1 > 0,

with ``f`` convex and differentiable (given as ``fun(w) -> (f(w), ∇f(w))``).  F is not
differentiable where a coordinate is zero, so plain L-BFGS does not apply.

Algorithm: Orthant-Wise Limited-memory Quasi-Newton, Algorithm 1 of G. Andrew and J. Gao,
"Scalable training of L1-regularized log-linear models", ICML 2007.  At every iterate
``w_k``:

1. the **pseudo-gradient** ◇F(w_k) (the minimum-norm subgradient): coordinate j is
   ``∂_j f + c1 sign(w_j)`` where ``w_j ≠ 0``; where ``w_j = 0`` it is ``∂_j f + c1`` if that
   is negative, ``∂_j f − c1`` if that is positive, and 0 otherwise (then no descent
   exists along j);
2. the L-BFGS two-loop recursion applied to ``−◇F(w_k)`` with the last ``memory`` pairs
   ``s = w_{k+1} − w_k``, ``y = ∇f(w_{k+1}) − ∇f(w_k)`` (the smooth part's gradient only,
   as the paper prescribes), ``H_0 = (s·y / y·y) I``;
3. the direction is **constrained** to the pseudo-gradient's orthant: a coordinate whose
   sign agrees with ``◇F`` (``d_j ◇F_j ≥ 0``) is set to 0;
4. a backtracking **line search** on ``w(α) = π(w_k + α d; ξ)``, where the orthant is
   ``ξ_j = sign(w_j)``, or ``sign(−◇F_j)`` where ``w_j = 0``, and π zeroes every coordinate
   that left it; α starts at 1 (at ``1/||d||`` on the first iteration) and halves until
   ``F(w(α)) ≤ F(w_k) + ftol · ◇F(w_k)·(w(α) − w_k)``.

This is libLBFGS's OWL-QN (``lbfgs()`` with ``orthantwise_c = c1``), which CRFsuite's
``train_lbfgs.c`` runs for ``c1 > 0``, matched where it decides where the run ends:

* CRFsuite forces the backtracking line search for ``c1 > 0`` (libLBFGS's
  ``line_search_backtracking_owlqn``: the test above, step × 0.5, at most
  ``max_linesearch`` trials, CRFsuite's default 20; ``ftol = 1e-4``, steps kept within
  ``[1e-20, 1e20]``); a line search that fails returns the previous iterate, as libLBFGS
  does;
* the stopping rules, tested after every iteration k in this order: ``||◇F(w_k)|| /
  max(1, ||w_k||) ≤ epsilon``; then, once ``k ≥ period``, ``|F_{k−period} − F_k| / F_k <
  delta`` (F_0 is F at the start; libLBFGS's ``past`` and ``delta``, CRFsuite's
  ``period`` and ``delta``); then ``k = max_iter``.

The iteration's vector work (norms, dot products, the two-loop recursion) is level-1 BLAS
on vectors of the problem's size, so the solve runs under single-threaded BLAS
(``threadpoolctl``, set once per call): multithreaded OpenBLAS made each dot product of
47,000 floats 200× slower here (thread wake-ups on a loaded machine), the whole solve 7×.

One safeguard libLBFGS lacks: a pair with ``s·y ≤ 0`` (which a convex f gives only when the
projection left the point where it was) is not stored, instead of dividing by it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["OWLQNResult", "owlqn", "pseudo_gradient"]


@dataclass
class OWLQNResult:
    """The end of an OWL-QN run.

    ``w`` the last accepted iterate; ``fun`` F(w) (the L1 term included); ``n_iter`` the
    iterations done; ``n_evals`` the calls of ``fun``; ``converged`` whether the epsilon or
    delta rule ended the run; ``status`` one of "epsilon", "delta", "max_iter",
    "linesearch" (no step decreased F within ``max_linesearch`` halvings, or the step left
    ``[min_step, max_step]``), "callback" (the callback asked to stop) or "minimized"
    (the start already met the epsilon rule).
    """

    w: np.ndarray
    fun: float
    n_iter: int
    n_evals: int
    converged: bool
    status: str


def pseudo_gradient(w: np.ndarray, g: np.ndarray, c1: float) -> np.ndarray:
    """◇F(w) of ``f(w) + c1 ||w||_1`` from ``g = ∇f(w)`` (Andrew & Gao 2007, eq. 4)."""
    pg = np.where(w > 0, g + c1, np.where(w < 0, g - c1, 0.0))
    zero = w == 0
    right, left = g + c1, g - c1
    pg[zero] = np.where(right[zero] < 0, right[zero], np.where(left[zero] > 0, left[zero], 0.0))
    return pg


def owlqn(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], w0: np.ndarray, c1: float, *,
          memory: int = 6, max_iter: int = 100, epsilon: float = 1e-5, period: int = 10,
          delta: float = 1e-5, max_linesearch: int = 20, ftol: float = 1e-4,
          min_step: float = 1e-20, max_step: float = 1e20,
          callback: Callable[[int, float, np.ndarray], bool] | None = None) -> OWLQNResult:
    """Minimise ``f(w) + c1 ||w||_1`` from ``w0`` (see the module's docstring).

    ``fun(w)`` returns ``(f(w), ∇f(w))`` for the smooth part only.  ``callback(k, F_k, w_k)``
    is called after every iteration k ≥ 1 (before the stopping tests, as libLBFGS's
    ``progress``); a true return value stops the run.  ``period = 0`` turns the delta rule
    off, ``epsilon = 0`` the gradient rule.
    """
    if not c1 > 0:
        raise ValueError(f"owlqn needs c1 > 0 (c1 = 0 is plain L-BFGS), got {c1!r}")
    if memory < 1 or max_iter < 1 or max_linesearch < 1 or period < 0:
        raise ValueError("memory, max_iter and max_linesearch must be ≥ 1 and period ≥ 0")
    with threadpool_limits(limits=1, user_api="blas"):
        return _owlqn(fun, w0, float(c1), int(memory), int(max_iter), float(epsilon),
                      int(period), float(delta), int(max_linesearch), float(ftol),
                      float(min_step), float(max_step), callback)


def _owlqn(fun, w0, c1, memory, max_iter, epsilon, period, delta, max_linesearch, ftol,
           min_step, max_step, callback) -> OWLQNResult:
    x = np.array(w0, dtype=np.float64, copy=True)
    evals = 0

    def evaluate(v):
        nonlocal evals
        evals += 1
        fv, gv = fun(v)
        return float(fv) + c1 * float(np.abs(v).sum()), np.array(gv, dtype=np.float64)

    fx, g = evaluate(x)
    pg = pseudo_gradient(x, g, c1)
    past = [fx] * period  # past[k % period] holds F_{k−period} at iteration k (F_0 at first)
    d = -pg
    gnorm = float(np.linalg.norm(pg))
    if gnorm / max(1.0, float(np.linalg.norm(x))) <= epsilon:
        return OWLQNResult(x, fx, 0, evals, True, "minimized")
    step = 1.0 / np.linalg.norm(d)
    pairs: deque = deque(maxlen=int(memory))  # (s, y, s·y)
    k, status = 1, "max_iter"
    while True:
        xp, gp, fp = x, g, fx
        # --- backtracking line search, projected onto the orthant of the current point
        orthant = np.where(xp == 0, -pg, xp)
        count, ok = 0, False
        while True:
            x = xp + step * d
            x[x * orthant <= 0] = 0.0
            fx, g = evaluate(x)
            count += 1
            if fx <= fp + ftol * float((x - xp) @ pg):
                ok = True
                break
            if step < min_step or step > max_step or count >= max_linesearch:
                break
            step *= 0.5
        if not ok:  # libLBFGS: revert to the previous point and end
            x, g, fx, status = xp, gp, fp, "linesearch"
            k -= 1
            break
        pg = pseudo_gradient(x, g, c1)
        if callback is not None and callback(k, fx, x):
            status = "callback"
            break
        if float(np.linalg.norm(pg)) / max(1.0, float(np.linalg.norm(x))) <= epsilon:
            status = "epsilon"
            break
        if period:
            if period <= k and abs((past[k % period] - fx) / fx) < delta:
                status = "delta"
                break
            past[k % period] = fx
        if max_iter < k + 1:
            break
        s, y = x - xp, g - gp
        ys = float(y @ s)
        if ys > 0:
            pairs.append((s, y, ys))
        k += 1
        # --- the two-loop recursion on −◇F, then the orthant constraint on the direction
        d = -pg
        alphas = []
        for s_i, y_i, ys_i in reversed(pairs):
            a = float(s_i @ d) / ys_i
            alphas.append(a)
            d -= a * y_i
        if pairs:
            s_i, y_i, ys_i = pairs[-1]
            d *= ys_i / float(y_i @ y_i)
        for (s_i, y_i, ys_i), a in zip(pairs, reversed(alphas)):
            b = float(y_i @ d) / ys_i
            d += (a - b) * s_i
        d[d * pg >= 0] = 0.0
        step = 1.0
    return OWLQNResult(x, fx, k, evals, status in ("epsilon", "delta"), status)
