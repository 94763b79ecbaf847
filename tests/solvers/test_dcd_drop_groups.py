"""``DCDWorkspace.drop_groups``: the constraints of the groups dropped leave the problem (a
latent SSVM's examples whose completion changed), and the rest solve to the optimum of the
problem without them."""

import numpy as np

from latentstruct.data.sparse import SparseVector
from latentstruct.solvers.dcd import ConstraintPool, DCDWorkspace


def _workspace(groups_rows, C=1.0, seed=0):
    pool = ConstraintPool(3, len(groups_rows))
    ws = DCDWorkspace(pool, C, random_state=seed)
    for g, rows in enumerate(groups_rows):
        for d, b in rows:
            ws.add(g, SparseVector(np.arange(3), np.asarray(d, dtype=float)), b)
    return ws


def test_dropping_groups_leaves_the_optimum_of_the_rest():
    rng = np.random.default_rng(1)
    rows = [[(rng.normal(size=3), 1.0) for _ in range(2)] for _ in range(4)]
    ws = _workspace(rows)
    ws.solve(tol=1e-10, max_iter=100000)
    assert ws.drop_groups([1, 3]) == 4
    assert ws.pool.n_active == 4
    np.testing.assert_allclose(ws.w, ws.pool.compute_w())  # w = sum of the kept alpha d
    ws.solve(tol=1e-10, max_iter=100000)
    fresh = _workspace([rows[0], [], rows[2], []])
    fresh.solve(tol=1e-10, max_iter=100000)
    np.testing.assert_allclose(ws.w, fresh.w, atol=1e-7)
    assert ws.drop_groups([1]) == 0  # already empty
    assert ws.slacks([1]).tolist() == [0.0]
