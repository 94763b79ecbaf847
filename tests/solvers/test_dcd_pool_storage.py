"""How ``ConstraintPool`` stores its constraints, and that the storage never changes a
result: the values in the narrowest of int8 / float32 / float64 that holds them exactly
(widened, keeping what is stored, when a value needs it), and the de-duplication index
(one hash per constraint; colliding keys resolved on the stored constraint)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from latentstruct.data.sparse import SparseRows, SparseVector
from latentstruct.solvers.dcd import ConstraintPool, DCDWorkspace, solve_grouped_dcd
from latentstruct.solvers.dcd import pool as pool_module

N_FEATURES, N_GROUPS = 30, 8


def _integer_constraints(seed, n=40):
    """Coalesced constraints with small integer values (a structural SVM's Phi
    differences of count features), their groups and right-hand sides."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 9))
        idx = np.sort(rng.choice(N_FEATURES - 1, k, replace=False))
        val = rng.choice([-3.0, -2.0, -1.0, 1.0, 2.0, 4.0], k)
        out.append((int(rng.integers(N_GROUPS - 1)), SparseVector(idx, val),
                    float(rng.integers(1, 5))))
    return out


@pytest.mark.parametrize("value, dtype", [
    (3.0, np.int8), (-128.0, np.int8), (127.0, np.int8),
    (128.0, np.float32), (-129.0, np.float32), (0.5, np.float32), (2.0 ** 24, np.float32),
    (2.0 ** 24 + 1.0, np.float64), (0.1, np.float64), (1e39, np.float64),
    (1e-46, np.float64),
])
def test_values_are_stored_in_the_narrowest_dtype_that_holds_them(value, dtype):
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning from the float32 check
        k = pool.add(0, SparseVector([2, 5], [1.0, value]), 1.0)
    assert pool._data.dtype == dtype
    got = pool.constraint(k).d
    assert got.values.dtype == np.float64 and got.values.tolist() == [1.0, value]
    assert pool.get_state()[1]["data"].tolist() == [1.0, value]


def test_widening_keeps_the_stored_values_and_each_insertion_path_widens():
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    k0 = pool.add(0, SparseVector([1, 3], [-2.0, 5.0]), 1.0)
    assert pool._data.dtype == np.int8
    k1 = pool.add_rows([1], SparseRows.from_vectors([SparseVector([4], [300.0])]), [2.0])[0]
    assert pool._data.dtype == np.float32
    k2 = pool.add_csr(sp.csr_matrix(np.array([[0.0, 0.1, 0.0]])), [3.0], [2])[0]
    assert pool._data.dtype == np.float64
    k3 = pool.add(3, SparseVector([7], [1.0]), 1.0)  # never narrowed again
    assert pool._data.dtype == np.float64
    values = [pool.constraint(k).d.values.tolist() for k in (k0, k1, k2, k3)]
    assert values == [[-2.0, 5.0], [300.0], [0.1], [1.0]]
    assert pool._sqnorm[:4].tolist() == [29.0, 90000.0, 0.1 * 0.1, 1.0]


@pytest.mark.parametrize("seed", range(4))
def test_the_solve_is_the_same_bits_whatever_the_stored_dtype(seed):
    """Integer constraints, once in an int8 pool and once in a pool widened to float64 by
    one more constraint (in a group of its own, deactivated before the solve, so the
    swept constraints and their order are the same): alpha, w and the objectives agree to
    the last bit."""
    constraints = _integer_constraints(seed)
    narrow, wide = ConstraintPool(N_FEATURES, N_GROUPS), ConstraintPool(N_FEATURES, N_GROUPS)
    for g, d, b in constraints:
        narrow.add(g, d, b)
        wide.add(g, d, b)
    extra = wide.add(N_GROUPS - 1, SparseVector([N_FEATURES - 1], [0.1]), 1.0)
    wide.deactivate(extra)
    assert narrow._data.dtype == np.int8 and wide._data.dtype == np.float64
    C = np.linspace(0.2, 2.0, N_GROUPS)
    a = solve_grouped_dcd(narrow, C, tol=1e-6, max_iter=500, random_state=seed)
    b = solve_grouped_dcd(wide, C, tol=1e-6, max_iter=500, random_state=seed)
    n = len(constraints)
    np.testing.assert_array_equal(a.alpha, b.alpha[:n])
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.primal, a.dual, a.n_iter) == (b.primal, b.dual, b.n_iter)
    assert a.alpha.max() > 0.0 and a.gap <= 1e-3 * abs(a.primal)
    # and through the workspace's sweeps, which update w in place
    wn, ww = DCDWorkspace(narrow, C, random_state=1), DCDWorkspace(wide, C, random_state=1)
    wn.sweep(range(N_GROUPS - 1), n_epochs=3)
    ww.sweep(range(N_GROUPS - 1), n_epochs=3)
    np.testing.assert_array_equal(wn.w, ww.w)
    assert wn.objectives() == ww.objectives()


def test_a_checkpointed_pool_keeps_its_values_dtype_and_duplicates():
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    for g, d, b in _integer_constraints(7, n=12):
        pool.add(g, d, b)
    pool.deactivate(3)
    restored = ConstraintPool.from_state(*pool.get_state())
    assert restored._data.dtype == np.int8
    for a, b in zip(pool._view(), restored._view()):
        np.testing.assert_array_equal(a, b)
    g, d, b = _integer_constraints(7, n=12)[5]
    assert restored.add(g, d, b) == 5  # still found by the dedupe index
    g, d, b = _integer_constraints(7, n=12)[3]
    assert restored.add(g, d, b) == 12  # deactivated: a new id
    # a state stored as float64 (before the narrow storage) reads back as well
    meta, arrays = pool.get_state()
    arrays["data"] = arrays["data"].astype(np.float64)
    again = ConstraintPool.from_state(meta, arrays)
    assert again._data.dtype == np.int8
    np.testing.assert_array_equal(again.compute_w(), pool.compute_w())


def test_colliding_keys_are_told_apart_by_the_stored_constraint(monkeypatch):
    """Every key the same: a constraint is a duplicate only of an equal one (same group,
    b, indices and values), and deactivating one of several under a key keeps the rest."""
    monkeypatch.setattr(pool_module, "_dedupe_key", lambda g, b, idx, val: 12345)
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    d1, d2 = SparseVector([1, 2], [1.0, -1.0]), SparseVector([1, 2], [1.0, 1.0])
    ids = [pool.add(0, d1, 1.0), pool.add(0, d2, 1.0), pool.add(1, d1, 1.0),
           pool.add(0, d1, 2.0)]
    assert ids == [0, 1, 2, 3] and pool._lookup == {12345: [0, 1, 2, 3]}
    assert [pool.add(0, d1, 1.0), pool.add(0, d2, 1.0), pool.add(1, d1, 1.0)] == [0, 1, 2]
    got = pool.add_rows([0, 2, 2], SparseRows.from_vectors([d2, d1, d1]), [1.0, 1.0, 1.0])
    assert got.tolist() == [1, 4, 4]  # a match in the pool, then within the batch
    pool.deactivate(1)
    assert pool._lookup == {12345: [0, 2, 3, 4]}
    assert pool.add(0, d2, 1.0) == 5
    for k in (0, 2, 3, 4):
        pool.deactivate(k)
    assert pool._lookup == {12345: 5}
    pool.deactivate(5)
    assert pool._lookup == {} and pool.n_active == 0


def test_growth_keeps_every_constraint():
    """Many insertions (the storage grows several times, its spare capacity not
    initialised): every constraint reads back, and the solve's w is sum alpha_k d_k."""
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    constraints = _integer_constraints(11, n=300)
    for g, d, b in constraints:
        pool.add(g, d, b)
    assert pool._data.shape[0] > 256 and pool._b.shape[0] > 16  # it grew
    for k, (g, d, b) in enumerate(constraints):
        c = pool.constraint(k)
        assert (c.group, c.b) == (g, b)
        assert c.d.indices.tolist() == d.indices.tolist()
        assert c.d.values.tolist() == d.values.tolist()
    res = solve_grouped_dcd(pool, 1.0, tol=1e-3, max_iter=200, random_state=0)
    dense = np.zeros((len(constraints), N_FEATURES))
    for k, (_, d, _) in enumerate(constraints):
        dense[k, d.indices] = d.values
    np.testing.assert_allclose(res.w, res.alpha @ dense, rtol=1e-12, atol=1e-12)


def test_a_workspace_solve_that_fails_keeps_a_live_w():
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    for g, d, b in _integer_constraints(3, n=20):
        pool.add(g, d, b)
    ws = DCDWorkspace(pool, 1.0, random_state=0)
    ws.sweep(range(N_GROUPS), n_epochs=2)
    with pytest.raises(ValueError):
        ws.solve(tol=-1.0)
    np.testing.assert_allclose(ws.w, pool.compute_w(), rtol=0, atol=1e-12)
    res = ws.solve(tol=1e-4, max_iter=300)
    np.testing.assert_array_equal(ws.w, res.w)
    assert ws.objectives() == (res.primal, res.dual)


@pytest.fixture(params=["in place", "copied"])
def growth(request, monkeypatch):
    """Storage arrays from 1 byte up in maps that grow in place (where the platform has
    them), or every array numpy's and copied when it grows."""
    if request.param == "in place":
        monkeypatch.setattr(pool_module, "_IN_PLACE_MIN_BYTES", 1)
    else:
        monkeypatch.setattr(pool_module, "_IN_PLACE", False)
    return request.param


def _in_a_map(arr) -> bool:
    import mmap
    return isinstance(arr.base, memoryview) and isinstance(arr.base.obj, mmap.mmap)


def test_storage_grows_in_place_or_by_copy_and_keeps_every_constraint(growth):
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    constraints = _integer_constraints(5, n=400)
    added = [(pool.add(g, d, b), g, d, b) for g, d, b in constraints[:200]]
    held = pool._view()  # views alive across a growth: that array is copied, not remapped
    kept = [a.copy() for a in held]
    added += [(pool.add(g, d, b), g, d, b) for g, d, b in constraints[200:]]
    for a, b in zip(held, kept):  # the views still read what they read
        np.testing.assert_array_equal(a, b)
    del held
    quarter = SparseVector([0], [0.25])
    added.append((pool.add_rows([1], SparseRows.from_vectors([quarter]), [1.0])[0], 1,
                  quarter, 1.0))
    # more growth, now with no view alive
    added += [(pool.add(g, d, b), g, d, b) for g, d, b in _integer_constraints(6, n=400)]
    in_maps = [_in_a_map(pool._indices), _in_a_map(pool._data), _in_a_map(pool._alpha)]
    if growth == "copied" or not pool_module._IN_PLACE:
        assert not any(in_maps)
    else:
        assert all(in_maps)
    assert pool._data.dtype == np.float32 and pool.n_constraints > 700
    for k, g, d, b in added:
        c = pool.constraint(k)
        assert (c.group, c.b) == (g, b)
        assert c.d.indices.tolist() == d.indices.tolist()
        assert c.d.values.tolist() == d.values.tolist()
    res = solve_grouped_dcd(pool, 0.5, tol=1e-3, max_iter=100, random_state=0)
    dense = np.zeros((pool.n_constraints, N_FEATURES))
    for k, _, d, _ in added:
        dense[k, d.indices] = d.values
    np.testing.assert_allclose(res.w, res.alpha @ dense, rtol=1e-12, atol=1e-12)
    # a checkpoint of it reads back the same
    again = ConstraintPool.from_state(*pool.get_state())
    for a, b in zip(pool._view(), again._view()):
        np.testing.assert_array_equal(a, b)


def test_the_same_solve_whether_the_storage_grew_in_place_or_by_copy(monkeypatch):
    results = []
    for in_place in (True, False):
        monkeypatch.setattr(pool_module, "_IN_PLACE_MIN_BYTES", 1 if in_place else 1 << 60)
        pool = ConstraintPool(N_FEATURES, N_GROUPS)
        for g, d, b in _integer_constraints(9, n=300):
            pool.add(g, d, b)
        results.append(solve_grouped_dcd(pool, 1.0, tol=1e-4, max_iter=200, random_state=2))
    a, b = results
    np.testing.assert_array_equal(a.alpha, b.alpha)
    np.testing.assert_array_equal(a.w, b.w)
    assert (a.primal, a.dual) == (b.primal, b.dual)


@pytest.mark.parametrize("last, dtype", [(-7.0, np.int8), (0.5, np.float32), (0.1, np.float64),
                                         (200.0, np.float32)])
def test_the_value_check_reads_every_value_of_a_batch(last, dtype):
    """The one value that needs a wider dtype is the last of a long row."""
    pool = ConstraintPool(2000, 2)
    idx = np.arange(1001)
    pool.add_rows([0], SparseRows.from_vectors([SparseVector(idx, np.r_[np.ones(1000), last])]),
                  [1.0])
    assert pool._data.dtype == dtype
    assert pool.constraint(0).d.values[-1] == last


def test_a_bulk_insertion_into_an_empty_pool_takes_exact_heap_arrays(monkeypatch):
    """add_csr into an empty pool (a binary SVM's whole problem) allocates exactly what it
    needs on numpy's heap, already of the value dtype it needs (no full-size narrow array
    widened afterwards); a later insertion grows it (into a map, above the size limit)
    and keeps every value."""
    monkeypatch.setattr(pool_module, "_IN_PLACE_MIN_BYTES", 1)
    rng = np.random.default_rng(4)
    X = sp.random(300, N_FEATURES, density=0.3, format="csr", random_state=rng)
    pool = ConstraintPool(N_FEATURES, 300)
    pool.add_csr(X, np.ones(300), np.arange(300))
    assert pool._data.dtype == np.float64
    assert pool._data.shape == (X.nnz,) and pool._b.shape == (300,)
    assert not _in_a_map(pool._data) and not _in_a_map(pool._indices)
    extra = SparseVector([1, 3], [2.0, -1.0])
    k = pool.add(7, extra, 1.0)
    assert pool._b.shape[0] >= 301 and _in_a_map(pool._data) == pool_module._IN_PLACE
    for i in (0, 150, 299):
        row = X.getrow(i)
        c = pool.constraint(i)
        assert c.d.indices.tolist() == sorted(row.indices.tolist())
        np.testing.assert_array_equal(c.d.values, row.toarray().ravel()[c.d.indices])
    assert pool.constraint(k).d.values.tolist() == [2.0, -1.0]
