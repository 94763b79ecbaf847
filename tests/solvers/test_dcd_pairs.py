"""The DCD kernel's pair steps inside a slack group (SMO steps that keep A_g fixed)."""

import numpy as np
import pytest

import latentstruct.solvers.dcd.kernels as dcd_kernels
import latentstruct.solvers.dcd.solver as dcd_solver
from latentstruct.data.sparse import SparseVector
from latentstruct.solvers import ConstraintPool, solve_grouped_dcd


def near_duplicate_groups(seed, n_features=30, n_groups=40, per_group=6, spread=0.05):
    """Negatives' caches as LCLR builds them: every group holds a few constraints that
    differ from one base vector in a small part, and one feature is much larger than the
    others (the MSRP features' column norms run from 0.04 to 30)."""
    rng = np.random.default_rng(seed)
    scale = np.ones(n_features)
    scale[0] = 8.0
    pool = ConstraintPool(n_features, n_groups)
    for g in range(n_groups):
        base = rng.normal(size=n_features) * (rng.random(n_features) < 0.5) * scale
        sign = 1.0 if g % 3 else -1.0
        for _ in range(rng.integers(1, per_group + 1)):
            d = base + spread * rng.normal(size=n_features) * (rng.random(n_features) < 0.2)
            pool.add(g, SparseVector.from_dense(sign * d), 1.0)
    return pool


def exact_pair_step(D, b, alpha, i, j):
    """The dual min 1/2 ||D' alpha||^2 - b.alpha + (group term, constant along e_i - e_j)
    along alpha + t (e_i - e_j), t in [0, alpha_j], in closed form."""
    w = alpha @ D
    G = D @ w - b
    q = float((D[i] - D[j]) @ (D[i] - D[j]))
    return min(alpha[j], (G[j] - G[i]) / q)


@pytest.mark.parametrize("seed", range(5))
def test_one_pair_step_is_the_exact_line_minimum_and_keeps_the_group_sum(seed):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(4, 5))
    D[1] = D[0] + 0.01 * rng.normal(size=5)  # a near-duplicate
    b = rng.uniform(0.5, 1.5, size=4)
    alpha = np.array([0.0, 0.7, 0.2, 0.4])
    pool = ConstraintPool(5, 1)
    for d, bk in zip(D, b):
        pool.add(0, SparseVector.from_dense(d), float(bk))
    indptr, indices, data, bb, group, _, a, _ = pool._view()
    a[:] = alpha
    w = alpha @ D
    G = D @ w - b
    i = int(np.argmin(G))
    j = int(np.argmax(np.where(alpha > 0, G, -np.inf)))
    t = exact_pair_step(D, b, alpha, i, j)
    members = np.arange(4, dtype=np.int64)
    live = np.ones(4, dtype=np.bool_)
    scratch = np.zeros(5)
    w_kernel = w.copy()
    grad = G.copy()  # what the epoch's sweep measured
    assert dcd_kernels._pair_step(indptr, indices, data, bb, a, w_kernel, members, 0, 4, live, grad,
                          scratch)
    expected = alpha.copy()
    expected[i] += t
    expected[j] -= t
    np.testing.assert_allclose(a, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w_kernel, expected @ D, rtol=0, atol=1e-12)
    assert a.sum() == pytest.approx(alpha.sum(), abs=1e-15)  # A_g does not move
    np.testing.assert_array_equal(scratch, 0.0)  # the work row is left clean
    # the dual (without its group term, which is unchanged) did not get worse
    def f(al):
        v = al @ D
        return 0.5 * v @ v - b @ al
    assert f(a) <= f(alpha) + 1e-15


def test_pair_step_skips_shrunk_constraints_and_groups_without_dual_mass():
    pool = ConstraintPool(2, 1)
    pool.add(0, SparseVector.from_dense([1.0, 0.0]), 1.0)
    pool.add(0, SparseVector.from_dense([0.0, 1.0]), 2.0)
    indptr, indices, data, b, _, _, alpha, _ = pool._view()
    members = np.arange(2, dtype=np.int64)
    scratch = np.zeros(2)
    w = np.zeros(2)
    grad = np.array([-1.0, -2.0])
    # no alpha > 0: nothing to move
    assert not dcd_kernels._pair_step(indptr, indices, data, b, alpha, w, members, 0, 2,
                              np.ones(2, dtype=np.bool_), grad, scratch)
    alpha[0] = 0.5
    w = np.array([0.5, 0.0])
    grad = np.array([-0.5, -2.0])
    # constraint 1 is shrunk: only one live constraint, no pair
    assert not dcd_kernels._pair_step(indptr, indices, data, b, alpha, w, members, 0, 2,
                              np.array([True, False]), grad, scratch)
    assert alpha[0] == 0.5 and alpha[1] == 0.0
    # a pair chosen on stale gradients that the current w does not confirm: no step
    assert not dcd_kernels._pair_step(indptr, indices, data, b, alpha, w, members, 0, 2,
                              np.ones(2, dtype=np.bool_), np.array([-5.0, 0.0]), scratch)
    assert alpha[0] == 0.5 and alpha[1] == 0.0
    assert dcd_kernels._pair_step(indptr, indices, data, b, alpha, w, members, 0, 2,
                          np.ones(2, dtype=np.bool_), grad, scratch)
    assert alpha[1] > 0.0 and alpha.sum() == pytest.approx(0.5, abs=1e-15)


def test_pair_groups_lists_each_multi_constraint_group_by_id_whatever_the_sweep_order():
    group = np.array([0, 1, 0, 2, 1, 1, 3, 3])
    ptr, members = dcd_solver._pair_groups(np.array([5, 1, 2, 3, 0, 4, 7]), group)
    # group 0: {0, 2}; group 1: {1, 4, 5}; group 2 has one swept constraint; 3 only {7}
    np.testing.assert_array_equal(ptr, [0, 2, 5])
    np.testing.assert_array_equal(members, [0, 2, 1, 4, 5])
    ptr2, members2 = dcd_solver._pair_groups(np.array([4, 0, 7, 2, 1, 5, 3]), group)
    np.testing.assert_array_equal(ptr2, ptr)
    np.testing.assert_array_equal(members2, members)
    ptr, members = dcd_solver._pair_groups(np.zeros(0, dtype=np.int64), group)
    assert ptr.tolist() == [0] and members.size == 0


@pytest.mark.parametrize("seed", range(3))
def test_near_duplicate_groups_converge_in_far_fewer_epochs_with_pair_steps(seed, monkeypatch):
    """The kernel without pair steps (no group handed to it) zigzags between near-duplicate
    constraints of a group; with them the same solve meets the tolerance in a fraction of the
    epochs, at the same optimum."""
    kw = dict(tol=1e-4, max_iter=50_000, random_state=seed)
    with_pairs = solve_grouped_dcd(near_duplicate_groups(seed), 1.0, **kw)
    exact = solve_grouped_dcd(near_duplicate_groups(seed), 1.0, tol=1e-10, max_iter=200_000,
                              random_state=seed)
    no_groups = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    monkeypatch.setattr(dcd_solver, "_pair_groups", lambda sweep, group: no_groups)
    plain = solve_grouped_dcd(near_duplicate_groups(seed), 1.0, **kw)
    assert with_pairs.converged and plain.converged and exact.converged
    assert with_pairs.n_iter * 5 < plain.n_iter, (with_pairs.n_iter, plain.n_iter)
    for res in (with_pairs, plain):
        assert res.primal == pytest.approx(exact.primal, rel=1e-4)
        assert res.dual <= exact.primal + 1e-9


def test_pair_steps_keep_the_dual_monotone_and_below_the_primal():
    log = []
    res = solve_grouped_dcd(near_duplicate_groups(7), 1.0, tol=1e-8, max_iter=20_000,
                            random_state=0, callback=lambda e, p, d: log.append((p, d)))
    primals, duals = np.array(log).T
    assert res.converged
    assert np.all(np.diff(duals) >= -1e-9 * np.abs(duals[1:]))
    assert np.all(primals >= duals - 1e-9)
