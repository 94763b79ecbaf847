"""The label-matrix prox of DISTRO against closed forms and optimality."""

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.solvers.label_matrix import (effective_rank, init_label_matrix, normalize_columns,
                                               prox_label_matrix, singular_value_threshold)
from latentstruct.solvers.structured_sgd import search_eta0, step_size


def _svt_by_eigh(A, tau):
    """The soft threshold through the eigendecomposition of AᵀA (an independent route):
    A = U S Vᵀ, AᵀA = V S² Vᵀ, so B = A V diag(max(s−τ,0)/s) Vᵀ."""
    evals, V = np.linalg.eigh(A.T @ A)
    s = np.sqrt(np.clip(evals, 0, None))
    keep = s > tau
    factor = np.zeros_like(s)
    factor[keep] = (s[keep] - tau) / s[keep]
    return A @ (V * factor) @ V.T


@pytest.mark.parametrize("seed", range(20))
def test_soft_threshold_equals_the_closed_form(seed):
    rng = np.random.default_rng(seed)
    d, L = rng.integers(2, 7, size=2)
    A = rng.normal(size=(d, L))
    tau = float(rng.uniform(0, 2))
    B, s = singular_value_threshold(A, tau)
    np.testing.assert_allclose(B, _svt_by_eigh(A, tau), atol=1e-10)
    np.testing.assert_allclose(np.sort(s)[::-1], np.maximum(np.linalg.svd(A, compute_uv=False) - tau, 0),
                               atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_soft_threshold_minimises_the_prox_objective(seed):
    rng = np.random.default_rng(100 + seed)
    A = rng.normal(size=(4, 6))
    tau = 0.7

    def f(B):
        return 0.5 * np.sum((B - A) ** 2) + tau * np.linalg.svd(B, compute_uv=False).sum()

    B, _ = singular_value_threshold(A, tau)
    for _ in range(200):
        assert f(B) <= f(B + 1e-3 * rng.normal(size=B.shape)) + 1e-12


def test_threshold_large_enough_gives_zero_and_columns_fall_back():
    A = np.array([[1.0, 0.0], [0.0, 0.5]])
    B, s = singular_value_threshold(A, 0.6)
    np.testing.assert_allclose(s, [0.4, 0.0])
    prev = np.array([[0.6, 0.0], [0.8, 1.0]])
    out, _ = prox_label_matrix(A, 0.6, prev)
    np.testing.assert_allclose(out[:, 0], [1.0, 0.0])
    np.testing.assert_allclose(out[:, 1], [0.0, 1.0])  # the zeroed column takes prev's direction
    # a threshold above every singular value leaves rank one, not the previous matrix
    C = np.array([[1.0, 0.9, 0.2], [0.1, 0.3, 1.0]])
    out, kept = prox_label_matrix(C, 10.0, np.eye(2, 3))
    assert effective_rank(kept, out.shape) == 1
    np.testing.assert_allclose(np.abs(out.T @ out), 1.0, atol=1e-9)
    with pytest.raises(ConfigError):
        singular_value_threshold(A, -1.0)


@pytest.mark.parametrize("seed", range(10))
def test_columns_are_unit_after_prox(seed):
    rng = np.random.default_rng(seed)
    A = normalize_columns(rng.normal(size=(5, 8)), np.ones((5, 8)))
    for _ in range(20):
        A, _ = prox_label_matrix(A - 0.3 * rng.normal(size=A.shape), 0.05, A)
        np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0, atol=1e-12)


def test_low_rank_survives_renormalisation():
    """Column scaling keeps the rank the threshold produced."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 3)) @ rng.normal(size=(3, 10)) + 0.01 * rng.normal(size=(6, 10))
    s_before = np.linalg.svd(A, compute_uv=False)
    tau = (s_before[2] + s_before[3]) / 2
    out, s = prox_label_matrix(A, tau, A)
    assert effective_rank(s, out.shape) == 3
    assert effective_rank(np.linalg.svd(out, compute_uv=False), out.shape) == 3


def test_init_label_matrix():
    rng = np.random.default_rng(0)
    U = init_label_matrix(3, 5, "auto", rng)
    assert U.shape == (3, 5) and (U >= 0).all()
    np.testing.assert_allclose(np.linalg.norm(U, axis=0), 1.0)
    O = init_label_matrix(7, 5, "auto", rng)  # d > L: one-hot
    np.testing.assert_array_equal(O[:5], np.eye(5))
    assert not O[5:].any()
    np.testing.assert_array_equal(init_label_matrix(5, 5, "onehot", rng), np.eye(5))
    np.testing.assert_array_equal(init_label_matrix(5, 5, "auto", rng), np.eye(5))  # d = L
    assert (init_label_matrix(5, 5, "uniform", rng) > 0).all()
    with pytest.raises(ConfigError, match="n_components >= the number of labels"):
        init_label_matrix(3, 5, "onehot", rng)
    with pytest.raises(ConfigError, match="label_init"):
        init_label_matrix(3, 5, "gaussian", rng)


def test_step_size_and_eta0_search():
    assert step_size(0.5, 0.1, 0) == 0.5
    assert step_size(0.5, 0.1, 10) == pytest.approx(0.5 / 1.5)
    # a convex trial with its minimum at 2**-3
    best, seen = search_eta0(lambda e: (np.log2(e) + 3) ** 2, 0.0)
    assert best == 2 ** -3
    assert set(seen) >= {1.0, 0.5, 0.25, 0.125, 0.0625}
    best, _ = search_eta0(lambda e: (np.log2(e) - 2) ** 2, 0.0)
    assert best == 4.0
    best, _ = search_eta0(lambda e: -e, 1.0)  # capped by eta0 * lambda < 1
    assert best == 0.5
