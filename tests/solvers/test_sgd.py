"""SGD (lazy L2) and L-BFGS against exact optima of L2-regularised logistic regression."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import ConfigError
from latentstruct.solvers.sgd import lbfgs, learning_rate, scatter_add, sgd


def _problem(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.array([1.5, -2.0, 0.5]) + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _example(X, y):
    """f_i(w) = log(1 + exp(-y_i x_i.w)) at w = scale * v, gradient dense."""
    def f(i, v, scale):
        m = y[i] * (X[i] @ v) * scale
        return np.logaddexp(0.0, -m), -y[i] * X[i] / (1.0 + np.exp(m))
    return f


def _full(X, y):
    def f(w):
        m = y * (X @ w)
        return np.mean(np.logaddexp(0.0, -m)), X.T @ (-y / (1.0 + np.exp(m))) / len(y)
    return f


def _reference(X, y, alpha):
    """The exact optimum of (1/n) sum log(1+exp(-y x.w)) + alpha/2 ||w||^2 (sklearn, C = 1/(n alpha))."""
    lr = LogisticRegression(C=1.0 / (len(y) * alpha), fit_intercept=False, tol=1e-12,
                            max_iter=10000).fit(X, y)
    return lr.coef_.ravel()


def test_lbfgs_matches_sklearn_logistic_regression():
    X, y = _problem()
    alpha = 0.1
    ref = _reference(X, y, alpha)
    res = lbfgs(_full(X, y), np.zeros(3), alpha=alpha, max_iter=500, tol=1e-10)
    assert res.converged
    np.testing.assert_allclose(res.w, ref, atol=1e-6)
    obj = _full(X, y)(ref)[0] + 0.5 * alpha * ref @ ref
    assert res.objective == pytest.approx(obj, abs=1e-12)
    assert len(res.objective_curve) == res.n_iter
    assert np.all(np.diff(res.objective_curve) <= 1e-12)  # L-BFGS-B never goes up


def test_sgd_converges_to_the_regularised_optimum():
    X, y = _problem()
    alpha = 0.1
    ref = _reference(X, y, alpha)
    res = sgd(_example(X, y), len(y), np.zeros(3), eta0=1.0, alpha=alpha, n_epochs=400,
              random_state=0)
    assert res.n_iter == 400 and res.n_steps == 400 * len(y) and not res.converged
    np.testing.assert_allclose(res.w, ref, atol=2e-2)
    f = _full(X, y)
    gap = (f(res.w)[0] + 0.5 * alpha * res.w @ res.w) - (f(ref)[0] + 0.5 * alpha * ref @ ref)
    assert 0 <= gap < 1e-4


def _naive_sgd(X, y, w0, eta0, alpha, n_epochs, seed, schedule):
    """The same algorithm without the lazy scaling (w <- w - eta (g + alpha w))."""
    w = np.array(w0, float)
    rng = np.random.default_rng(seed)
    t = 0
    f = _example(X, y)
    for _ in range(n_epochs):
        for i in rng.permutation(len(y)):
            eta = learning_rate(schedule, eta0, alpha, t, len(y))
            _, g = f(int(i), w, 1.0)
            w = w - eta * (g + alpha * w)
            t += 1
    return w


@pytest.mark.parametrize("schedule", ["bottou", "inverse_time", "constant"])
def test_lazy_scaling_equals_the_plain_update(schedule):
    X, y = _problem(n=25)
    w0 = np.array([0.3, -0.2, 0.1])
    res = sgd(_example(X, y), len(y), w0, schedule=schedule, eta0=0.3, alpha=0.5, n_epochs=7,
              random_state=3)
    np.testing.assert_allclose(res.w, _naive_sgd(X, y, w0, 0.3, 0.5, 7, 3, schedule), rtol=1e-11,
                               atol=1e-13)


def test_sparse_gradients_give_the_dense_result_and_rescaling_is_exact():
    X, y = _problem(n=30)
    dense = _example(X, y)

    def sparse(i, v, scale):
        loss, g = dense(i, v, scale)
        idx = np.array([0, 1, 2, 0])  # repeated index: the halves of g[0] add up
        return loss, SparseVector(idx, np.array([g[0] / 2, g[1], g[2], g[0] / 2]))

    # a constant rate with eta * alpha = 0.5 halves the scale every step: it falls below 1e-9
    # (and is folded back into v) every 30 steps
    kw = dict(schedule="constant", eta0=0.5, alpha=1.0, n_epochs=20, random_state=1)
    a = sgd(dense, len(y), np.zeros(3), **kw)
    b = sgd(sparse, len(y), np.zeros(3), **kw)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(a.w, _naive_sgd(X, y, np.zeros(3), 0.5, 1.0, 20, 1, "constant"),
                               rtol=1e-9, atol=1e-12)


def test_learning_rates():
    assert learning_rate("bottou", 0.5, 0.1, 10, 7) == pytest.approx(0.5 / 1.5)
    assert learning_rate("bottou", 0.5, 0.0, 10, 7) == 0.5
    assert learning_rate("inverse_time", 0.5, 0.1, 14, 7) == pytest.approx(0.5 / 3)
    assert learning_rate("constant", 0.5, 0.1, 10**6, 7) == 0.5
    with pytest.raises(ConfigError, match="schedule must be one of"):
        learning_rate("adam", 0.5, 0.1, 0, 7)


def test_tol_stops_early_and_callback_sees_every_epoch():
    X, y = _problem()
    seen = []
    res = sgd(_example(X, y), len(y), np.zeros(3), eta0=0.5, alpha=0.1, n_epochs=500, tol=1e-3,
              callback=lambda epoch, obj: seen.append((epoch, obj)))
    assert res.converged and res.n_iter < 500
    assert [e for e, _ in seen] == list(range(1, res.n_iter + 1))
    assert [o for _, o in seen] == list(res.objective_curve)
    # deterministic under a seed, different under another
    again = sgd(_example(X, y), len(y), np.zeros(3), eta0=0.5, alpha=0.1, n_epochs=3)
    np.testing.assert_array_equal(again.w, sgd(_example(X, y), len(y), np.zeros(3), eta0=0.5,
                                               alpha=0.1, n_epochs=3).w)
    other = sgd(_example(X, y), len(y), np.zeros(3), eta0=0.5, alpha=0.1, n_epochs=3,
                random_state=1)
    assert not np.array_equal(again.w, other.w)


def test_w0_is_not_modified_and_scatter_add_accumulates():
    X, y = _problem(n=10)
    w0 = np.ones(3)
    sgd(_example(X, y), len(y), w0, n_epochs=2)
    np.testing.assert_array_equal(w0, np.ones(3))
    v = np.zeros(4)
    scatter_add(v, np.array([1, 3, 1]), np.array([1.0, 2.0, 3.0]), 0.5)
    np.testing.assert_array_equal(v, [0.0, 2.0, 0.0, 1.0])


@pytest.mark.parametrize("kw, match", [
    (dict(eta0=0.0), "eta0"), (dict(alpha=-1.0), "alpha"), (dict(n_epochs=0), "n_epochs"),
    (dict(eta0=2.0, alpha=0.5), "eta0 \\* alpha must be below 1"), (dict(schedule="x"), "schedule"),
    (dict(tol=-1.0), "tol"),
])
def test_sgd_parameter_validation(kw, match):
    X, y = _problem(n=5)
    with pytest.raises(ConfigError, match=match):
        sgd(_example(X, y), len(y), np.zeros(3), **kw)


def test_lbfgs_validation_and_iteration_limit():
    X, y = _problem()
    with pytest.raises(ConfigError, match="max_iter"):
        lbfgs(_full(X, y), np.zeros(3), max_iter=0)
    res = lbfgs(_full(X, y), np.zeros(3), alpha=0.01, max_iter=1, tol=1e-12)
    assert res.n_iter == 1 and not res.converged
    # the objective it minimises is the stated one: compare with a plain scipy run
    ref = minimize(lambda w: _full(X, y)(w)[0] + 0.005 * w @ w, np.zeros(3), method="BFGS",
                   options={"gtol": 1e-10}).x
    np.testing.assert_allclose(lbfgs(_full(X, y), np.zeros(3), alpha=0.01, tol=1e-10).w, ref,
                               atol=1e-6)
