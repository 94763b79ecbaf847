"""ConstraintPool.add keeps an already coalesced vector as it is and coalesces any other."""

import numpy as np
import pytest

from latentstruct.data.sparse import SparseVector, coalesce_arrays
from latentstruct.solvers.dcd import ConstraintPool
from latentstruct.solvers.dcd.kernels import is_coalesced


@pytest.mark.parametrize("idx, val, expected", [
    ([1, 3, 4], [1.0, -2.0, 0.5], True),
    ([], [], True),
    ([1, 3, 3], [1.0, -2.0, 0.5], False),   # repeated index
    ([3, 1], [1.0, 1.0], False),            # not sorted
    ([1, 3], [1.0, 0.0], False),            # an explicit zero
])
def test_is_coalesced(idx, val, expected):
    assert is_coalesced(np.array(idx, np.int64), np.array(val, np.float64)) is expected


@pytest.mark.parametrize("seed", range(4))
def test_add_stores_what_coalesce_arrays_gives(seed):
    rng = np.random.default_rng(seed)
    pool = ConstraintPool(30, 2)
    for k in range(20):
        idx = rng.integers(0, 30, size=8)
        val = rng.choice([-1.0, 0.0, 1.0, 2.5], size=8)
        if k % 2:  # half of them handed over coalesced already
            idx, val = coalesce_arrays(idx, val)
        ref_i, ref_v = coalesce_arrays(idx, val)
        got = pool.constraint(pool.add(k % 2, SparseVector(idx, val), 1.0 + k)).d
        assert np.array_equal(got.indices, ref_i) and np.array_equal(got.values, ref_v)


def test_coalesced_vector_with_bad_entries_is_still_refused():
    pool = ConstraintPool(4, 1)
    with pytest.raises(ValueError, match=r"outside \[0, 4\)"):
        pool.add(0, SparseVector(np.array([-1, 2]), np.array([1.0, 1.0])), 1.0)
    with pytest.raises(ValueError, match="non-finite"):
        pool.add(0, SparseVector(np.array([0, 2]), np.array([1.0, np.nan])), 1.0)
