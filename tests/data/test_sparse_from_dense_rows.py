"""``SparseRows.from_dense_rows`` builds the same arrays as ``from_vectors`` of each row's
``SparseVector.from_dense`` (it skips only the per-row objects and the checks)."""

import numpy as np
import pytest

from latentstruct.data.sparse import SparseRows, SparseVector


@pytest.mark.parametrize("n_rows", [0, 1, 3])
def test_same_arrays_as_from_vectors(n_rows):
    rng = np.random.default_rng(n_rows)
    rows = [rng.normal(size=12) * (rng.random(12) < 0.4) for _ in range(n_rows)]
    if n_rows == 3:
        rows[1][:] = 0.0  # an empty row in the middle
        rows[2][3] = -0.0  # a negative zero is no entry
    fast = SparseRows.from_dense_rows(rows)
    ref = SparseRows.from_vectors(SparseVector.from_dense(r) for r in rows)
    for name in ("indptr", "indices", "values"):
        a, b = getattr(fast, name), getattr(ref, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert len(fast) == n_rows
    w = rng.normal(size=12)
    assert np.array_equal(fast.dots(w), ref.dots(w))
