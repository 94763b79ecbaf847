"""The grouped DCD engine against references: LIBLINEAR (LinearSVC) and an exact QP (HiGHS)."""

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.svm import LinearSVC

from latentstruct.data.sparse import SparseVector
from latentstruct.solvers import ConstraintPool, fit_binary_squared_hinge, solve_grouped_dcd


def binary_primal(X, y, w, C):
    m = np.maximum(0.0, 1.0 - y * (X @ w))
    return float(0.5 * w @ w + C * m @ m)


def liblinear(X, y, C):
    clf = LinearSVC(dual=True, loss="squared_hinge", fit_intercept=False, C=C, tol=1e-10,
                    max_iter=1_000_000, random_state=0)
    return clf.fit(X, y).coef_.ravel()


def dense_problem():
    X, y = make_classification(n_samples=200, n_features=15, n_informative=8, random_state=3)
    return X, 2.0 * y - 1.0


def sparse_problem():
    rng = np.random.default_rng(7)
    X = sp.random(300, 400, density=0.03, format="csr", random_state=11)
    w_true = rng.normal(size=400)
    y = np.where(X @ w_true + 0.3 * rng.normal(size=300) >= 0, 1.0, -1.0)
    return X, y


@pytest.mark.slow
@pytest.mark.parametrize("make", [dense_problem, sparse_problem], ids=["dense", "sparse"])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_binary_matches_liblinear(make, C):
    X, y = make()
    w_ref = liblinear(X, y, C)
    res = fit_binary_squared_hinge(X, y, C, tol=1e-10, max_iter=1_000_000, random_state=0)
    assert res.converged
    p_ref = binary_primal(X, y, w_ref, C)
    p_ours = binary_primal(X, y, res.w, C)
    assert p_ours == pytest.approx(p_ref, rel=1e-6)
    # the engine's own primal is the same objective
    assert res.primal == pytest.approx(p_ours, rel=1e-10)
    np.testing.assert_allclose(res.w, w_ref, rtol=0, atol=1e-5 * max(1.0, np.abs(w_ref).max()))
    assert -1e-12 * res.primal <= res.gap <= 1e-7 * res.primal


# ------------------------------------------------------------------------------ exact QP

def exact_grouped_qp(D, b, groups, C_g):
    """min 1/2||w||^2 + sum_g C_g xi_g^2  s.t.  D[k].w + xi_{g(k)} >= b[k], xi >= 0 (HiGHS QP)."""
    m, n = D.shape
    G = C_g.shape[0]
    inf = highspy.kHighsInf
    A = sp.hstack([sp.csr_matrix(D), sp.csr_matrix((np.ones(m), (np.arange(m), groups)),
                                                   shape=(m, G))]).tocsc()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n + G, m
    lp.col_cost_ = np.zeros(n + G)
    lp.col_lower_ = np.concatenate([np.full(n, -inf), np.zeros(G)])
    lp.col_upper_ = np.full(n + G, inf)
    lp.row_lower_ = np.asarray(b, dtype=float)
    lp.row_upper_ = np.full(m, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    hess = highspy.HighsHessian()
    hess.dim_ = n + G
    hess.format_ = highspy.HessianFormat.kTriangular
    hess.start_ = np.arange(n + G + 1, dtype=np.int32)
    hess.index_ = np.arange(n + G, dtype=np.int32)
    hess.value_ = np.concatenate([np.ones(n), 2.0 * C_g])  # HiGHS minimises 1/2 x'Qx
    model = highspy.HighsModel()
    model.lp_ = lp
    model.hessian_ = hess
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    # one thread, as latentstruct's own HiGHS runs (solvers/qp.py): HiGHS sizes its thread
    # pool by a process's first run, and a later run asking for another size fails, so a
    # default-threads reference here broke the L1 learners' QPs run after it in one worker
    h.setOptionValue("threads", 1)
    h.setOptionValue("primal_feasibility_tolerance", 1e-10)
    h.setOptionValue("dual_feasibility_tolerance", 1e-10)
    assert h.passModel(model) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    x = np.array(h.getSolution().col_value)
    return h.getInfo().objective_function_value, x[:n]


def random_grouped_problem(seed, n_features=6, n_groups=7, max_per_group=4):
    rng = np.random.default_rng(seed)
    rows, b, groups = [], [], []
    for g in range(n_groups):
        for _ in range(rng.integers(1, max_per_group + 1)):
            d = rng.normal(size=n_features) * (rng.random(n_features) < 0.6)
            rows.append(d)
            b.append(rng.uniform(0.2, 2.0))
            groups.append(g)
    D = np.array(rows)
    # two kinds of groups with different costs, as in J-LIS (C1 for S, C2 for B)
    C_g = np.where(np.arange(n_groups) % 2 == 0, 0.3, 4.0)
    return D, np.array(b), np.array(groups), C_g


def pool_from(D, b, groups, n_groups):
    pool = ConstraintPool(D.shape[1], n_groups)
    for d, bk, g in zip(D, b, groups):
        pool.add(int(g), SparseVector.from_dense(d), bk)
    return pool


def grouped_primal(D, b, groups, C_g, w):
    xi = np.zeros(C_g.shape[0])
    np.maximum.at(xi, groups, b - D @ w)
    return float(0.5 * w @ w + C_g @ xi**2)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_grouped_matches_exact_qp(seed):
    D, b, groups, C_g = random_grouped_problem(seed)
    p_exact, w_exact = exact_grouped_qp(D, b, groups, C_g)
    pool = pool_from(D, b, groups, C_g.shape[0])
    res = solve_grouped_dcd(pool, C_g, tol=1e-10, max_iter=100_000, random_state=seed)
    assert res.converged
    assert res.primal == pytest.approx(p_exact, rel=1e-6)
    assert res.primal == pytest.approx(grouped_primal(D, b, groups, C_g, res.w), rel=1e-12)
    np.testing.assert_allclose(res.w, w_exact, atol=1e-5)
    assert res.dual <= res.primal + 1e-12
    assert res.gap <= 1e-8 * max(1.0, res.primal)
    # w = sum_k alpha_k d_k
    np.testing.assert_allclose(res.w, res.alpha @ D, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 5])
def test_grouped_kkt_conditions(seed):
    """At the solution G_k >= 0 for every k, and G_k = 0 wherever alpha_k > 0."""
    D, b, groups, C_g = random_grouped_problem(seed, max_per_group=5)
    pool = pool_from(D, b, groups, C_g.shape[0])
    res = solve_grouped_dcd(pool, C_g, tol=1e-9, max_iter=100_000, random_state=0)
    A = np.bincount(groups, weights=res.alpha, minlength=C_g.shape[0])
    G = D @ res.w - b + A[groups] / (2 * C_g[groups])
    assert G.min() >= -1e-8
    assert np.abs(G[res.alpha > 0]).max() <= 1e-8
    # xi_g = A_g / (2 C_g) at the optimum
    xi = np.zeros(C_g.shape[0])
    np.maximum.at(xi, groups, b - D @ res.w)
    np.testing.assert_allclose(xi, A / (2 * C_g), atol=1e-8)


def test_loose_tolerance_gap_is_small_but_positive():
    D, b, groups, C_g = random_grouped_problem(9, n_features=10, n_groups=30)
    p_exact, _ = exact_grouped_qp(D, b, groups, C_g)
    pool = pool_from(D, b, groups, C_g.shape[0])
    res = solve_grouped_dcd(pool, C_g, tol=0.1, random_state=0)
    assert res.converged
    assert res.dual <= p_exact + 1e-9 <= res.primal + 2e-9
    assert res.gap >= -1e-12
    assert res.gap <= 0.05 * res.primal
