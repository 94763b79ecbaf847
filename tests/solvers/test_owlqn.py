"""OWL-QN (``latentstruct.solvers.owlqn``) against references that no dependency upgrade can
move: the closed form of a separable L1 problem, a long FISTA run (``conftest.fista``) on
L1-regularised logistic regression, and the optimality conditions of the L1 problem; its
pseudo-gradient against the definition; its orthant rule and libLBFGS's stopping rules."""

import numpy as np
import pytest

from conftest import fista, soft_threshold
from latentstruct.solvers.owlqn import owlqn, pseudo_gradient


def assert_l1_optimal(w, g, c1, tol):
    """Subgradient optimality of f + c1||w||_1: |∇f_j| ≤ c1 where w_j = 0, else
    ∇f_j = −c1 sign(w_j)."""
    zero = w == 0
    assert np.all(np.abs(g[zero]) <= c1 + tol), np.abs(g[zero]).max() - c1
    np.testing.assert_allclose(g[~zero], -c1 * np.sign(w[~zero]), atol=tol, rtol=0)


@pytest.fixture
def logistic():
    rng = np.random.default_rng(0)
    n, p = 120, 40
    A = rng.normal(size=(n, p))
    truth = np.zeros(p)
    truth[:6] = rng.normal(scale=2.0, size=6)
    y = np.where(A @ truth + rng.normal(scale=0.5, size=n) > 0, 1.0, -1.0)

    def fun(w):
        z = y * (A @ w)
        return float(np.logaddexp(0.0, -z).sum()), A.T @ (-y * np.exp(-np.logaddexp(0.0, z)))

    return fun, p


def test_separable_problem_has_the_soft_threshold_closed_form():
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 3.0, size=25)
    b = rng.normal(scale=2.0, size=25)
    c1 = 1.3

    def fun(w):
        r = w - b
        return 0.5 * float(a @ (r * r)), a * r

    res = owlqn(fun, np.zeros(25), c1, max_iter=500, epsilon=1e-12, delta=0.0)
    exact = soft_threshold(b, c1 / a)
    assert (exact == 0).sum() >= 5  # the penalty zeroes some coordinates
    np.testing.assert_allclose(res.w, exact, atol=1e-9, rtol=0)
    np.testing.assert_array_equal(res.w == 0, exact == 0)  # exactly zero, not merely small
    assert res.fun == pytest.approx(fun(exact)[0] + c1 * np.abs(exact).sum(), rel=1e-12)


@pytest.mark.parametrize("c1", [0.5, 3.0, 12.0])
def test_l1_logistic_regression_matches_a_long_fista_run(logistic, c1):
    fun, p = logistic
    # ||◇F|| reaches ~1e-8 where F stops changing in double precision: epsilon 1e-7
    res = owlqn(fun, np.zeros(p), c1, max_iter=2000, epsilon=1e-7, delta=0.0)
    assert res.converged and res.status == "epsilon"
    ref = fista(fun, np.zeros(p), c1)
    F_ref = fun(ref)[0] + c1 * np.abs(ref).sum()
    assert res.fun == pytest.approx(F_ref, rel=1e-10)
    np.testing.assert_allclose(res.w, ref, atol=1e-6)
    np.testing.assert_array_equal(res.w == 0, np.abs(ref) < 1e-9)
    assert_l1_optimal(res.w, fun(res.w)[1], c1, tol=1e-6)
    assert 0 < np.count_nonzero(res.w) < p


def test_large_c1_gives_exactly_zero():
    """Past c1 = ||∇f(0)||_inf, w = 0 is optimal: the start is already a minimiser."""
    g0 = np.array([0.3, -1.2, 0.7])

    def fun(w):
        return float(g0 @ w + 0.5 * w @ w), g0 + w

    res = owlqn(fun, np.zeros(3), 1.5)
    assert res.status == "minimized" and res.n_iter == 0 and np.all(res.w == 0)


def test_pseudo_gradient_is_the_minimum_norm_subgradient():
    rng = np.random.default_rng(2)
    c1 = 0.8
    w = np.array([0.0, 0.0, 0.0, 1.5, -2.0, 0.0])
    g = np.array([1.0, -1.0, 0.3, 0.2, 0.2, -0.8])
    pg = pseudo_gradient(w, g, c1)
    # by hand from the definition: the subdifferential at w_j = 0 is [g_j − c1, g_j + c1]
    np.testing.assert_allclose(pg, [0.2, -0.2, 0.0, 1.0, -0.6, 0.0])
    # and against the minimum-norm element of each coordinate's subdifferential
    for _ in range(50):
        w = rng.choice([-1.0, 0.0, 1.0], size=8) * rng.uniform(0.1, 2, size=8)
        g = rng.normal(size=8)
        lo = np.where(w > 0, g + c1, np.where(w < 0, g - c1, g - c1))
        hi = np.where(w > 0, g + c1, np.where(w < 0, g - c1, g + c1))
        np.testing.assert_allclose(pseudo_gradient(w, g, c1), np.clip(0.0, lo, hi))


def test_steps_stay_in_the_orthant_and_go_downhill(logistic):
    """The orthant projections: a step may take a coordinate to zero, never across it, and
    moves no coordinate along its pseudo-gradient."""
    fun, p = logistic
    iterates = [np.zeros(p)]
    owlqn(fun, np.zeros(p), 2.0, max_iter=200, epsilon=1e-10, delta=0.0,
          callback=lambda k, f, w: iterates.append(w.copy()) and False)
    assert len(iterates) > 20
    crossed = [np.sum(a * b < 0) for a, b in zip(iterates, iterates[1:])]
    assert max(crossed) == 0
    went_to_zero = [np.sum((a != 0) & (b == 0)) for a, b in zip(iterates, iterates[1:])]
    assert sum(went_to_zero) > 0  # the test would notice a projection that did nothing
    # the direction's constraint: no coordinate moves along its pseudo-gradient (uphill)
    uphill = [np.sum((b - a) * pseudo_gradient(a, fun(a)[1], 2.0) > 0)
              for a, b in zip(iterates, iterates[1:])]
    assert max(uphill) == 0


def test_stopping_rules_are_libLBFGSs(logistic):
    fun, p = logistic
    seen = []

    def record(k, f, w):
        seen.append((k, f))
        return False

    res = owlqn(fun, np.zeros(p), 2.0, max_iter=1000, epsilon=0.0, period=5, delta=1e-6,
                callback=record)
    F0 = fun(np.zeros(p))[0]
    F = [F0] + [f for _, f in seen]
    assert res.status == "delta" and res.converged and [k for k, _ in seen] == list(
        range(1, res.n_iter + 1))
    rate = [abs((F[k - 5] - F[k]) / F[k]) for k in range(5, len(F))]
    assert rate[-1] < 1e-6 and all(r >= 1e-6 for r in rate[:-1])  # the first k that meets it
    capped = owlqn(fun, np.zeros(p), 2.0, max_iter=7, epsilon=0.0, delta=0.0)
    assert capped.status == "max_iter" and not capped.converged and capped.n_iter == 7
    eps = owlqn(fun, np.zeros(p), 2.0, max_iter=1000, epsilon=1e-3, delta=0.0)
    g = pseudo_gradient(eps.w, fun(eps.w)[1], 2.0)
    assert eps.status == "epsilon"
    assert np.linalg.norm(g) / max(1.0, np.linalg.norm(eps.w)) <= 1e-3


def test_refuses_c1_zero():
    with pytest.raises(ValueError, match="c1 > 0"):
        owlqn(lambda w: (0.0, w), np.zeros(2), 0.0)
