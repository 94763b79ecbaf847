"""``ConstraintPool.add_rows`` / ``DCDWorkspace.add_rows`` (a mini-batch of cutting planes at
once) build, bit for bit, the pool that a loop of ``add`` builds: the same ids, storage,
squared norms and de-duplication (against the pool and within the batch), with uncoalesced
rows coalesced; and the same checks, before anything is stored."""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.data.sparse import SparseRows, SparseVector
from latentstruct.solvers.dcd import ConstraintPool, DCDWorkspace

N_FEATURES, N_GROUPS = 40, 6


def _vector(rng, coalesced=True):
    k = int(rng.integers(0, 8))
    if coalesced:
        idx = np.sort(rng.choice(N_FEATURES, k, replace=False))
        return SparseVector(idx, rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0], k))
    return SparseVector(rng.integers(0, N_FEATURES, k), rng.choice([-1.0, 0.0, 1.0, 2.5], k))


def _batch(rng, earlier):
    """Rows with repeats of earlier constraints and of rows of the same batch."""
    vectors, groups, b = [], [], []
    for _ in range(int(rng.integers(1, 12))):
        r = rng.random()
        if r < 0.2 and earlier:
            v, g, bb = earlier[int(rng.integers(len(earlier)))]
        elif r < 0.35 and vectors:
            j = int(rng.integers(len(vectors)))
            v, g, bb = vectors[j], groups[j], b[j]
        else:
            v, g = _vector(rng, coalesced=rng.random() < 0.8), int(rng.integers(N_GROUPS))
            bb = float(rng.choice([1.0, 2.0]))
        vectors.append(v)
        groups.append(g)
        b.append(bb)
    return vectors, groups, b


@pytest.mark.parametrize("seed", range(30))
def test_add_rows_builds_the_pool_a_loop_of_add_builds(seed):
    rng = np.random.default_rng(seed)
    loop, batch = ConstraintPool(N_FEATURES, N_GROUPS), ConstraintPool(N_FEATURES, N_GROUPS)
    ws_loop, ws_batch = DCDWorkspace(loop, 1.0), DCDWorkspace(batch, 1.0)
    earlier = []
    for _ in range(4):
        vectors, groups, b = _batch(rng, earlier)
        want = [ws_loop.add(g, v, bb) for v, g, bb in zip(vectors, groups, b)]
        got = ws_batch.add_rows(np.array(groups), SparseRows.from_vectors(vectors), b)
        assert got.tolist() == want
        earlier += list(zip(vectors, groups, b))
        if rng.random() < 0.5 and loop.n_constraints:  # a dropped constraint is not a duplicate
            k = int(rng.integers(loop.n_constraints))
            loop.deactivate(k)
            batch.deactivate(k)
    for a, b_ in zip(loop._view(), batch._view()):
        np.testing.assert_array_equal(a, b_)
    assert loop.n_active == batch.n_active and loop._lookup == batch._lookup
    n = loop.n_constraints
    np.testing.assert_array_equal(loop._key[:n], batch._key[:n])
    np.testing.assert_array_equal(loop._keyed[:n], batch._keyed[:n])
    for g in range(N_GROUPS):
        assert ws_loop.group_constraint_ids([g]).tolist() == \
            ws_batch.group_constraint_ids([g]).tolist()


def test_an_empty_batch_adds_nothing():
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    assert pool.add_rows(np.zeros(0, np.int64), SparseRows.from_vectors([]), []).size == 0
    assert pool.n_constraints == 0


@pytest.mark.parametrize("groups, rows, b, error, pattern", [
    ([0], [SparseVector([1], [np.nan])], [1.0], ValueError, "non-finite"),
    ([0], [SparseVector([N_FEATURES], [1.0])], [1.0], ValueError, "outside"),
    ([N_GROUPS], [SparseVector([1], [1.0])], [1.0], ValueError, r"groups must lie in \[0, 6\)"),
    ([0.5], [SparseVector([1], [1.0])], [1.0], TypeError, "groups must be integers"),
    ([0], [SparseVector([1], [1.0])], [np.inf], ValueError, "b must be finite"),
    ([0, 1], [SparseVector([1], [1.0])], [1.0], ValueError, "one entry per row"),
])
def test_bad_rows_are_refused_before_anything_is_stored(groups, rows, b, error, pattern):
    pool = ConstraintPool(N_FEATURES, N_GROUPS)
    pool.add(2, SparseVector([3], [1.0]), 1.0)
    good = SparseVector([5], [1.0])
    with pytest.raises(error, match=pattern):
        pool.add_rows(np.array(groups + [1]) if len(groups) == len(rows) else np.array(groups),
                      SparseRows.from_vectors(rows + [good] if len(groups) == len(rows)
                                              else rows),
                      b + [1.0] if len(groups) == len(rows) else b)
    assert pool.n_constraints == 1 and len(pool._lookup) == 1


def test_rows_must_be_sparse_rows():
    with pytest.raises(TypeError, match="rows must be a SparseRows"):
        ConstraintPool(N_FEATURES, N_GROUPS).add_rows([0], [SparseVector([1], [1.0])], [1.0])
