"""ConstraintPool and solve_grouped_dcd: pool behaviour, warm start, options, validation."""

import numpy as np
import pytest
import scipy.sparse as sp

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import ConfigError
from latentstruct.solvers import (
    ConstraintPool,
    DCDResult,
    fit_binary_squared_hinge,
    solve_grouped_dcd,
)


def random_constraints(seed, n_features=8, n_groups=10, max_per_group=4):
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n_groups):
        for _ in range(rng.integers(1, max_per_group + 1)):
            d = rng.normal(size=n_features) * (rng.random(n_features) < 0.5)
            out.append((g, SparseVector.from_dense(d), float(rng.uniform(0.2, 2.0))))
    return out


def make_pool(constraints, n_features=8, n_groups=10):
    pool = ConstraintPool(n_features, n_groups)
    ids = [pool.add(g, d, b) for g, d, b in constraints]
    return pool, ids


C_TWO_KINDS = np.where(np.arange(10) % 3 == 0, 0.5, 3.0)
TIGHT = dict(tol=1e-10, max_iter=200_000)


def solve(pool, C=C_TWO_KINDS, **kw):
    opts = dict(TIGHT, random_state=0)
    opts.update(kw)
    return solve_grouped_dcd(pool, C, **opts)


# ------------------------------------------------------------------------------ the pool

def test_add_stores_coalesced_constraint_and_zero_alpha():
    pool = ConstraintPool(5, 2)
    d = SparseVector(np.array([3, 1, 3, 4]), np.array([1.0, 2.0, 0.5, 0.0]))
    k = pool.add(1, d, 0.7)
    assert k == 0
    got = pool.constraint(k)
    np.testing.assert_array_equal(got.d.indices, [1, 3])
    np.testing.assert_array_equal(got.d.values, [2.0, 1.5])
    assert got.b == 0.7 and got.group == 1
    assert pool.alpha.tolist() == [0.0]
    assert pool.n_constraints == 1 and pool.n_active == 1
    assert pool.group_of.tolist() == [1] and pool.b.tolist() == [0.7]


def test_pool_grows_beyond_initial_capacity():
    rng = np.random.default_rng(0)
    pool = ConstraintPool(50, 7)
    dense = []
    for i in range(500):
        d = rng.normal(size=50) * (rng.random(50) < 0.3)
        dense.append(d)
        assert pool.add(i % 7, SparseVector.from_dense(d), 1.0 + i) == i
    assert pool.n_constraints == 500
    w = rng.normal(size=50)
    np.testing.assert_allclose(pool.margins(w), np.array(dense) @ w, rtol=1e-12, atol=1e-12)
    for i in (0, 17, 499):
        np.testing.assert_allclose(pool.constraint(i).d.to_dense(50), dense[i])
        assert pool.constraint(i).b == 1.0 + i
    np.testing.assert_array_equal(pool.group_ids(3), np.arange(3, 500, 7))


def test_dedupe_returns_existing_id():
    pool = ConstraintPool(6, 3)
    d = SparseVector(np.array([2, 0, 5]), np.array([1.0, -2.0, 0.5]))
    k = pool.add(1, d, 1.0)
    assert pool.add(1, d, 1.0) == k
    # same vector written differently (unsorted, split repeated index) is the same constraint
    same = SparseVector(np.array([5, 2, 0, 2]), np.array([0.5, 0.25, -2.0, 0.75]))
    assert pool.add(1, same, 1.0) == k
    assert pool.n_constraints == 1
    # a different b, group or vector is a new constraint
    assert pool.add(1, d, 2.0) == 1
    assert pool.add(2, d, 1.0) == 2
    assert pool.add(1, d.scale(2.0), 1.0) == 3
    assert pool.n_constraints == 4
    # once deactivated, the same constraint is added anew
    pool.deactivate(k)
    k2 = pool.add(1, d, 1.0)
    assert k2 == 4 and pool.is_active(k2) and not pool.is_active(k)
    assert pool.add(1, d, 1.0) == k2


def test_add_validates_input():
    pool = ConstraintPool(4, 2)
    with pytest.raises(ValueError, match="group 2 is out of range"):
        pool.add(2, SparseVector.empty(), 1.0)
    with pytest.raises(ValueError, match=r"outside \[0, 4\)"):
        pool.add(0, SparseVector(np.array([4]), np.array([1.0])), 1.0)
    with pytest.raises(ValueError, match="finite"):
        pool.add(0, SparseVector.empty(), float("nan"))
    with pytest.raises(TypeError, match="SparseVector"):
        pool.add(0, np.ones(4), 1.0)
    with pytest.raises(IndexError, match="out of range"):
        pool.deactivate(0)


def test_add_csr_matches_add():
    rng = np.random.default_rng(4)
    X = sp.random(40, 30, density=0.2, format="csr", random_state=5)
    b = rng.uniform(0.5, 1.5, size=40)
    groups = rng.integers(0, 12, size=40)
    bulk = ConstraintPool(30, 12)
    ids = bulk.add_csr(X, b, groups)
    np.testing.assert_array_equal(ids, np.arange(40))
    single = ConstraintPool(30, 12)
    for i in range(40):
        row = X.getrow(i)
        single.add(int(groups[i]), SparseVector(row.indices, row.data), b[i])
    C = rng.uniform(0.2, 3.0, size=12)
    r1 = solve_grouped_dcd(bulk, C, tol=1e-10, max_iter=100_000, random_state=1)
    r2 = solve_grouped_dcd(single, C, tol=1e-10, max_iter=100_000, random_state=1)
    assert r1.primal == pytest.approx(r2.primal, rel=1e-12)
    np.testing.assert_allclose(r1.alpha, r2.alpha, atol=1e-12)


def test_add_csr_sums_repeated_columns_without_touching_input():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])),
                      shape=(1, 4))
    data_before = X.data.copy()
    pool = ConstraintPool(4, 1)
    pool.add_csr(X, [1.0], [0])
    np.testing.assert_allclose(pool.constraint(0).d.to_dense(4), [2.0, 0.0, 4.0, 0.0])
    np.testing.assert_array_equal(X.data, data_before)
    assert X.nnz == 3


def test_add_csr_scales_rows_after_summing_repeats_and_refuses_non_finite_values():
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 0.5]), np.array([2, 0, 2, 1]),
                       np.array([0, 3, 4])), shape=(2, 4))
    pool = ConstraintPool(4, 2)
    pool.add_csr(X, [1.0, 1.0], [0, 1], row_scale=[-1.0, 4.0])
    np.testing.assert_array_equal(pool.constraint(0).d.to_dense(4), [-2.0, 0.0, -4.0, 0.0])
    np.testing.assert_array_equal(pool.constraint(1).d.to_dense(4), [0.0, 2.0, 0.0, 0.0])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    # the squared norms the kernel's steps use are those of the scaled, summed rows
    np.testing.assert_array_equal(pool._view()[5], [20.0, 4.0])
    np.testing.assert_array_equal(pool.margins(w), [-14.0, 4.0])
    for bad in (np.inf, np.nan):
        Y = X.copy()
        Y.data[3] = bad
        with pytest.raises(ValueError, match="finite"):
            ConstraintPool(4, 2).add_csr(Y, [1.0, 1.0], [0, 1])
    with pytest.raises(ValueError, match="row_scale"):
        pool.add_csr(X, [1.0, 1.0], [0, 1], row_scale=[1.0])
    with pytest.raises(ValueError, match="row_scale must be finite"):
        ConstraintPool(4, 2).add_csr(X, [1.0, 1.0], [0, 1], row_scale=[np.inf, 1.0])


def test_compute_w_and_margins():
    cons = random_constraints(2)
    pool, _ = make_pool(cons)
    res = solve(pool)
    D = np.array([d.to_dense(8) for _, d, _ in cons])
    np.testing.assert_allclose(pool.compute_w(), pool.alpha @ D, atol=1e-12)
    np.testing.assert_allclose(res.w, pool.alpha @ D, atol=1e-10)
    np.testing.assert_allclose(pool.margins(res.w), D @ res.w, atol=1e-12)
    assert isinstance(res, DCDResult)


def test_pool_arrays_are_read_only_copies():
    pool, _ = make_pool(random_constraints(0))
    a = pool.alpha
    with pytest.raises(ValueError):
        a[0] = 1.0
    solve(pool)
    assert np.all(a == 0.0)  # the earlier copy did not change under the solver


# ------------------------------------------------------------------------------ the solver

def test_solution_writes_alpha_back_and_objectives_agree():
    pool, _ = make_pool(random_constraints(1))
    res = solve(pool)
    assert res.converged
    np.testing.assert_array_equal(pool.alpha, res.alpha)
    p, d = pool.objectives(C_TWO_KINDS)
    assert p == pytest.approx(res.primal, rel=1e-12)
    assert d == pytest.approx(res.dual, rel=1e-12)
    assert res.gap == pytest.approx(res.primal - res.dual, abs=1e-15)
    assert -1e-12 <= res.gap <= 1e-9


def test_warm_start_reaches_cold_optimum():
    cons = random_constraints(3, max_per_group=5)
    first, rest = cons[: len(cons) // 2], cons[len(cons) // 2:]
    pool, _ = make_pool(first)
    res1 = solve(pool)
    alpha1 = pool.alpha
    assert alpha1.sum() > 0
    for g, d, b in rest:
        pool.add(g, d, b)
    # the stored alpha survives the additions; new constraints start at 0
    np.testing.assert_array_equal(pool.alpha[: len(first)], alpha1)
    assert np.all(pool.alpha[len(first):] == 0.0)
    warm = solve(pool)
    cold_pool, _ = make_pool(cons)
    cold = solve(cold_pool)
    assert warm.primal == pytest.approx(cold.primal, rel=1e-8)
    np.testing.assert_allclose(warm.w, cold.w, atol=1e-6)
    assert warm.primal >= res1.primal - 1e-12  # more constraints never lower the optimum
    # re-solving an already solved pool is (almost) free
    again = solve(pool)
    assert again.n_iter <= 2
    assert again.primal == pytest.approx(warm.primal, rel=1e-9)


def test_deactivate_equals_solve_without_constraint():
    cons = random_constraints(4, max_per_group=4)
    pool, ids = make_pool(cons)
    res = solve(pool)
    k = int(np.argmax(res.alpha))  # a support constraint: removing it changes the optimum
    pool.deactivate(k)
    assert pool.alpha[k] == 0.0 and not pool.is_active(k)
    assert pool.n_active == len(cons) - 1 and pool.n_constraints == len(cons)
    assert k not in pool.active_ids()
    assert k not in pool.group_ids(cons[k][0])
    after = solve(pool)
    ref_pool, _ = make_pool([c for i, c in enumerate(cons) if i != k])
    ref = solve(ref_pool)
    assert after.primal == pytest.approx(ref.primal, rel=1e-8)
    assert after.primal < res.primal - 1e-6
    np.testing.assert_allclose(after.w, ref.w, atol=1e-6)
    assert after.alpha[k] == 0.0


def test_shrinking_on_and_off_agree():
    cons = random_constraints(5, n_features=8, n_groups=10, max_per_group=6)
    on = solve(make_pool(cons)[0], shrinking=True)
    off = solve(make_pool(cons)[0], shrinking=False)
    assert on.converged and off.converged
    assert on.primal == pytest.approx(off.primal, rel=1e-6)
    assert on.dual == pytest.approx(off.dual, rel=1e-6)


def test_binary_shrinking_on_and_off_agree():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 10))
    y = np.where(X @ rng.normal(size=10) + rng.normal(size=150) > 0, 1.0, -1.0)
    on = fit_binary_squared_hinge(X, y, 1.0, tol=1e-8, max_iter=100_000, random_state=0)
    off = fit_binary_squared_hinge(X, y, 1.0, tol=1e-8, max_iter=100_000, random_state=0,
                                   shrinking=False)
    assert on.primal == pytest.approx(off.primal, rel=1e-6)


def test_max_iter_one_is_not_converged():
    pool, _ = make_pool(random_constraints(6))
    res = solve_grouped_dcd(pool, 1.0, tol=1e-6, max_iter=1, random_state=0)
    assert res.converged is False
    assert res.n_iter == 1
    assert res.dual <= res.primal


def test_callback_sees_monotone_dual_below_primal():
    pool, _ = make_pool(random_constraints(7))
    log = []
    res = solve_grouped_dcd(pool, C_TWO_KINDS, tol=1e-8, max_iter=10_000, random_state=0,
                            callback=lambda e, p, d: log.append((e, p, d)))
    epochs = [e for e, _, _ in log]
    assert epochs == list(range(1, res.n_iter + 1))
    duals = np.array([d for _, _, d in log])
    primals = np.array([p for _, p, _ in log])
    assert np.all(primals >= duals - 1e-12)
    assert np.all(np.diff(duals) >= -1e-12)  # exact coordinate maximisation never lowers it
    assert log[-1][1] == pytest.approx(res.primal, rel=1e-12)
    # the callback does not change the course of the run
    pool2, _ = make_pool(random_constraints(7))
    silent = solve_grouped_dcd(pool2, C_TWO_KINDS, tol=1e-8, max_iter=10_000, random_state=0)
    assert silent.n_iter == res.n_iter
    np.testing.assert_array_equal(silent.alpha, res.alpha)


def test_active_groups_only_moves_those_groups():
    cons = random_constraints(8)
    pool, _ = make_pool(cons)
    groups = np.array([g for g, _, _ in cons])
    res = solve(pool, active_groups=[2, 5])
    moved = res.alpha != 0.0
    assert moved.any()
    assert set(groups[moved]) <= {2, 5}
    # cycling per-group solves converges to the joint optimum
    for _ in range(200):
        for g in range(10):
            solve(pool, active_groups=[g])
    joint = solve(make_pool(cons)[0])
    final = solve(pool, max_iter=1)
    assert final.primal == pytest.approx(joint.primal, rel=1e-6)


def test_random_state_reproducible_and_global_rng_untouched():
    cons = random_constraints(9)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    r1 = solve(make_pool(cons)[0], tol=1e-3, random_state=42)
    r2 = solve(make_pool(cons)[0], tol=1e-3, random_state=np.random.default_rng(42))
    after = np.random.get_state()[1]
    np.testing.assert_array_equal(before, after)
    np.testing.assert_array_equal(r1.alpha, r2.alpha)
    assert r1.n_iter == r2.n_iter


def test_empty_pool_and_groups_without_constraints():
    pool = ConstraintPool(3, 4)
    res = solve_grouped_dcd(pool, 1.0)
    assert res.converged and res.primal == 0.0 and res.dual == 0.0
    np.testing.assert_array_equal(res.w, np.zeros(3))
    # group 3 has no constraint: no slack, no error
    pool.add(0, SparseVector.from_dense([1.0, 0.0, 0.0]), 1.0)
    res = solve_grouped_dcd(pool, 1.0, tol=1e-12, max_iter=1000)
    # closed form: min 1/2 w^2 + (1-w)^2 -> w = 2/3, objective 1/3
    assert res.w[0] == pytest.approx(2.0 / 3.0, rel=1e-9)
    assert res.primal == pytest.approx(1.0 / 3.0, rel=1e-9)


def test_one_coordinate_step_is_exact():
    """alpha_k <- max(0, alpha_k - G_k / Q_kk), Q_kk = ||d_k||^2 + 1/(2 C_g), from alpha = 0."""
    pool = ConstraintPool(3, 2)
    pool.add(0, SparseVector.from_dense([1.0, 2.0, 0.0]), 1.5)
    pool.add(1, SparseVector.from_dense([0.0, 0.0, 3.0]), -1.0)  # satisfied at w = 0
    C = np.array([0.25, 4.0])
    res = solve_grouped_dcd(pool, C, tol=1e-12, max_iter=1, random_state=0)
    q = 5.0 + 1.0 / (2 * 0.25)
    np.testing.assert_allclose(res.alpha, [1.5 / q, 0.0], rtol=1e-15)
    np.testing.assert_allclose(res.w, [1.5 / q, 3.0 / q, 0.0], rtol=1e-15)
    # the exact step solves a one-constraint group at once; the second epoch confirms it
    res = solve_grouped_dcd(pool, C, tol=1e-12, max_iter=10, random_state=0)
    assert res.converged and res.n_iter == 1


@pytest.mark.parametrize("seed", range(6))
def test_two_constraints_one_group_closed_form(seed):
    """Two constraints share one slack: only the more violated one binds.

    Visiting the implied constraint first gives an epoch whose projected gradients are all
    -0.5; a spread test without the zeros would stop there at alpha = (0.4, 0.4)."""
    pool = ConstraintPool(2, 1)
    pool.add(0, SparseVector.from_dense([1.0, 0.0]), 1.0)
    pool.add(0, SparseVector.from_dense([1.0, 0.0]), 0.5)  # implied by the first
    res = solve_grouped_dcd(pool, 2.0, tol=1e-12, max_iter=1000, random_state=seed)
    # min 1/2 w^2 + 2 (1 - w)^2 -> w = 4/5, objective 1/2*0.64 + 2*0.04 = 0.4
    assert res.converged
    assert res.w[0] == pytest.approx(0.8, rel=1e-9)
    assert res.primal == pytest.approx(0.4, rel=1e-9)
    np.testing.assert_allclose(res.alpha, [0.8, 0.0], atol=1e-12)
    assert res.dual == pytest.approx(0.4, rel=1e-9)


# ------------------------------------------------------------------------------ validation

@pytest.mark.parametrize(
    "C, match",
    [
        (0.0, r"C must be a positive finite float \(or one per slack group\), got 0.0"),
        (-1.0, r"got -1.0"),
        (np.inf, "positive finite float"),
        (np.nan, "positive finite float"),
        (np.array([1.0, 1.0, 1.0]), r"shape \(10,\).*got shape \(3,\)"),
        (np.ones((10, 1)), r"shape \(10,\)"),
        (np.r_[np.ones(9), 0.0], r"every slack group, got C\[9\] = 0.0"),
        (np.r_[np.ones(9), -np.inf], r"C\[9\] = -inf"),
        ("abc", "C must be a positive float"),
    ],
)
def test_invalid_C_raises(C, match):
    pool, _ = make_pool(random_constraints(0))
    with pytest.raises(ValueError, match=match) as info:
        solve_grouped_dcd(pool, C)
    assert isinstance(info.value, ConfigError)


@pytest.mark.parametrize("kw, match", [
    (dict(tol=0.0), r"'tol' parameter of solve_grouped_dcd must be a float in the range "
                    r"\(0, inf\). Got 0.0"),
    (dict(tol=-1.0), r"'tol' parameter of solve_grouped_dcd must be a float"),
    (dict(tol=np.inf), r"'tol' parameter of solve_grouped_dcd must be a float"),
    (dict(gap_tol=0.0), r"'gap_tol' parameter of solve_grouped_dcd must be a float"),
    (dict(max_iter=0), r"'max_iter' parameter of solve_grouped_dcd must be an int in the "
                       r"range \[1, inf\). Got 0"),
    (dict(max_iter=2.5), r"'max_iter' parameter of solve_grouped_dcd must be an int"),
    (dict(max_iter=True), r"'max_iter' parameter of solve_grouped_dcd must be an int"),
    (dict(active_groups=[10]), r"active_groups must lie in \[0, 10\)"),
])
def test_invalid_options_raise(kw, match):
    pool, _ = make_pool(random_constraints(0))
    with pytest.raises(ValueError, match=match):
        solve_grouped_dcd(pool, 1.0, **kw)


def test_fit_binary_rejects_bad_labels():
    X = np.eye(3)
    with pytest.raises(ValueError, match="only -1 and \\+1"):
        fit_binary_squared_hinge(X, [0, 1, 1], 1.0)
    with pytest.raises(ValueError, match="3 rows but y has 2"):
        fit_binary_squared_hinge(X, [1, -1], 1.0)
    with pytest.raises(ValueError, match="C must be a positive"):
        fit_binary_squared_hinge(X, [1, -1, 1], 0.0)
