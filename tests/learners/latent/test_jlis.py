import warnings

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, ConvergenceWarning
from latentstruct.learners import JLIS, LCLR, StructuredSVM
from latentstruct.tasks import ChunkTask
from latentstruct.learners.latent.jlis import NormalizedBinaryView
from latentstruct.tasks.base import Dataset
from latentstruct.testing import all_sequences

TINY = "a X B-A\nb Y B-B\n\nb Y B-B\nc Z O\na X I-A\n\nc Z O\na Y B-A\n"
BINARY_POS = "c Z O\nb Y O\n\na X O\nb Y O\nc Z O\n"
BINARY_NEG = "b Y O\nb Y O\na X O\n\nc Z O\nc Z O\n"  # "shuffled" word salads


@pytest.fixture
def tiny(tmp_path):
    paths = {}
    for name, text in (("s", TINY), ("pos", BINARY_POS), ("neg", BINARY_NEG)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text(text, encoding="utf-8")
    task = ChunkTask(window=0, affix_length=1)
    s = task.read(paths["s"])
    pos, neg = task.read(paths["pos"]), task.read(paths["neg"])
    task.fit(Dataset(list(s.records) + list(pos.records), list(s.targets) + list(pos.targets)))
    X, Y = task.featurize(s), task.encode_targets(s.targets)
    both = Dataset(list(pos.records) + list(neg.records), [None] * (len(pos) + len(neg)))
    XB = task.featurize(both)
    yB = np.array([1] * len(pos) + [-1] * len(neg))
    return task, X, Y, XB, yB


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn()


# inner_gap=None: every restricted problem solved to dcd_tol (the exact cutting plane)
TIGHT = dict(tol=1e-12, dcd_tol=1e-9, dcd_max_iter=200000, max_cutting_plane_rounds=500,
             random_tie_break=False, inner_gap=None)


def test_empty_B_reduces_to_structural_svm(tiny):
    task, X, Y, _, _ = tiny
    C = 0.5
    j = quiet(lambda: JLIS(task, C1=C, coef_init=np.zeros(task.n_features + 1), **TIGHT).fit(X, Y, [], []))
    s = StructuredSVM(task, C=C, tol=1e-10, epsilon=0.0, max_iter=300, inner_tol=1e-9,
                      inner_max_iter=100000, random_state=0).fit(X, Y)
    assert j.objective_curve_[-1] == pytest.approx(s.objective_curve_[-1], rel=1e-6)
    np.testing.assert_allclose(j.coef_[:-1], s.coef_, atol=1e-4)
    assert j.coef_[-1] == 0.0  # no binary example ever touches the bias of Phi_B


def test_empty_S_reduces_to_lclr_over_phi_b(tiny):
    task, _, _, XB, yB = tiny
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=task.n_features + 1)
    empty = task.featurize(Dataset([], []))
    j = quiet(lambda: JLIS(task, C2=0.7, coef_init=w0, random_state=0, **TIGHT).fit(empty, [], XB, yB))
    adapter = NormalizedBinaryView(task, "length")
    lclr_kw = {k: v for k, v in TIGHT.items() if k not in ("random_tie_break", "inner_gap")}
    l = quiet(lambda: LCLR(adapter, C=0.7, coef_init=w0, random_state=0, **lclr_kw).fit(XB, yB))
    np.testing.assert_allclose(j.coef_, l.coef_, atol=1e-8)
    assert j.objective_curve_ == pytest.approx(l.objective_curve_, rel=1e-9)


def exact_inner_problem(task, X, Y, XB, yB, w0, C1, C2, exact_qp):
    """Eq. (9) with every structure enumerated and the positives fixed at argmax under w0,
    solved exactly by the certified reference solver of tests/conftest.py (``exact_qp``)."""
    adapter = NormalizedBinaryView(task, "length")
    n = adapter.n_features
    rows, rhs, grp, costs = [], [], [], []
    g = 0
    for i in range(len(X)):
        for h in all_sequences(len(Y[i]), task.n_labels):
            loss = task.structure_.loss(Y[i], h)
            if loss:
                rows.append(np.append(task.structure_.joint_feature_difference(X[i], Y[i], h).to_dense(n - 1), 0))
                rhs.append(loss)
                grp.append(g)
        costs.append(C1)
        g += 1
    for i in range(len(XB)):
        x = XB[i]
        if yB[i] > 0:
            h = adapter.latent_argmax(x, w0).structure
            rows.append(adapter.latent_feature(x, h).to_dense(n))
            rhs.append(1.0)
            grp.append(g)
        else:
            for h in all_sequences(x.n_tokens, task.n_labels):
                rows.append(-adapter.latent_feature(x, h).to_dense(n))
                rhs.append(1.0)
                grp.append(g)
        costs.append(C2)
        g += 1
    D, b, G, costs = np.array(rows), np.array(rhs), np.array(grp), np.array(costs)
    # min 1/2 w.w + sum_g costs_g xi_g^2  s.t.  D w + xi_G >= b, xi >= 0, in z = (w, xi)
    A = np.block([[D, np.eye(g)[G]], [np.zeros((g, n)), np.eye(g)]])
    z, opt, _ = exact_qp(np.concatenate([np.ones(n), 2 * costs]), A, np.concatenate([b, np.zeros(g)]))

    def value(w):
        """The inner problem's objective at w (every slack at its largest violation)."""
        xi = np.zeros(g)
        np.maximum.at(xi, G, b - D @ w)
        return 0.5 * float(w @ w) + float(costs @ xi ** 2)

    return opt, z[:n], value


def test_one_outer_iteration_solves_the_convex_inner_problem_exactly(tiny, exact_qp):
    task, X, Y, XB, yB = tiny
    w0 = np.random.default_rng(3).normal(size=task.n_features + 1)
    C1, C2 = 0.5, 0.3
    opt, w_opt, _ = exact_inner_problem(task, X, Y, XB, yB, w0, C1, C2, exact_qp)
    j = quiet(lambda: JLIS(task, C1=C1, C2=C2, coef_init=w0, max_iter=1, **TIGHT).fit(X, Y, XB, yB))
    np.testing.assert_allclose(j.coef_, w_opt, atol=1e-4)


@pytest.mark.parametrize("inner_gap", [3e-2, 1e-3, 1e-6])
def test_inexact_cutting_plane_is_within_its_certified_gap(tiny, exact_qp, inner_gap):
    """The first outer iteration of the inexact cutting plane stops on a duality-gap
    certificate: its w is within relative gap inner_gap of the exact inner optimum."""
    task, X, Y, XB, yB = tiny
    w0 = np.random.default_rng(3).normal(size=task.n_features + 1)
    C1, C2 = 0.5, 0.3
    opt, _, value = exact_inner_problem(task, X, Y, XB, yB, w0, C1, C2, exact_qp)
    kw = {**TIGHT, "inner_gap": inner_gap}
    j = quiet(lambda: JLIS(task, C1=C1, C2=C2, coef_init=w0, max_iter=1, **kw).fit(X, Y, XB, yB))
    reached = value(j.coef_)
    assert opt * (1 - 1e-9) <= reached <= opt * (1 + inner_gap)
    assert j.objective_curve_[1] <= reached * (1 + 1e-12)  # Q <= the inner problem's bound


def test_default_inexact_cutting_plane_reaches_the_exact_path_objective(tiny):
    """inner_gap (default) against inner_gap=None (every restricted problem to dcd_tol): the
    same final objective, and Q never increases along the way."""
    task, X, Y, XB, yB = tiny
    kw = {"C1": 1.0, "C2": 1.0, "max_iter": 50, "tol": 1e-9, "dcd_tol": 1e-6,
          "dcd_max_iter": 100000, "random_state": 0}
    exact = quiet(lambda: JLIS(task, inner_gap=None, **kw).fit(X, Y, XB, yB))
    fast = quiet(lambda: JLIS(task, **kw).fit(X, Y, XB, yB))
    assert fast.inner_gap == 1e-3
    assert fast.objective_curve_[-1] == pytest.approx(exact.objective_curve_[-1], rel=1e-6)
    curve = np.array(fast.objective_curve_)
    assert np.all(np.diff(curve) <= 1e-9 * curve[:-1])


def test_objective_never_increases(tiny):
    task, X, Y, XB, yB = tiny
    j = quiet(lambda: JLIS(task, C1=1.0, C2=1.0, max_iter=15, tol=1e-12, dcd_tol=1e-9,
                           dcd_max_iter=100000, random_state=0).fit(X, Y, XB, yB))
    curve = np.array(j.objective_curve_)
    assert len(curve) >= 2
    assert np.all(np.diff(curve) <= 1e-8 * curve[:-1])


def test_bad_inputs(tiny):
    task, X, Y, XB, yB = tiny
    empty = task.featurize(Dataset([], []))
    with pytest.raises(ConfigError, match=r"\|S\| = 0"):
        JLIS(task).fit(empty, [], XB, yB)
    only_pos = task.structure_.subset(XB, np.flatnonzero(yB > 0))
    with pytest.raises(ConfigError, match="all positive"):
        JLIS(task).fit(X, Y, only_pos, np.ones(len(only_pos)))
    with pytest.raises(ConfigError, match="'C2' parameter"):
        JLIS(task, C2=-1).fit(X, Y, XB, yB)


@pytest.mark.slow
def test_objective_never_increases_on_real_pos_data(require_data):
    """J-LIS Theorem 1 on a small real subset: 100 labelled tokens of EWT plus 20 + 20 binary."""
    from latentstruct.tasks import PosTask

    path = require_data("ud_english_ewt", "en_ewt-ud-dev.conllu")
    task = PosTask(n_structured_tokens=100, n_binary=20, negatives_per_positive=1, sample_seed=3,
                   min_count=2)
    sample = task.training_sample(task.read(path))
    task.fit(sample)
    X, Y = task.featurize(sample), task.encode_targets(sample.targets)
    XB, yB = task.featurize(sample.binary), np.asarray(sample.binary.targets)
    j = quiet(lambda: JLIS(task, C1=0.1, C2=1.0, max_iter=4, tol=1e-12, dcd_tol=1e-3,
                           dcd_max_iter=1000, random_state=0).fit(X, Y, XB, yB))
    curve = np.array(j.objective_curve_)
    assert len(curve) >= 3
    assert np.all(np.diff(curve) <= 1e-6 * curve[:-1]), curve
    assert curve[-1] < curve[0]


def test_binary_example_of_length_zero_is_rejected(tiny):
    task, X, Y, _, _ = tiny
    empty_sentence = task.featurize(Dataset([type("R", (), {"words": (), "pos": ()})()], [()]))
    with pytest.raises(ConfigError, match="length 0"):
        JLIS(task, max_iter=1).fit(X, Y, empty_sentence, np.array([-1]))


@pytest.mark.slow
@pytest.mark.parametrize("gap_tol", [1e-2, 1e-5])
def test_dcd_gap_tol_stops_within_the_relative_gap(gap_tol):
    """The DCD's duality-gap rule (J-LIS's inexact cutting plane relies on it): the run stops
    with primal - dual <= gap_tol * primal, before the projected-gradient rule would."""
    from latentstruct.data.sparse import SparseVector
    from latentstruct.solvers.dcd import ConstraintPool, solve_grouped_dcd

    rng = np.random.default_rng(0)
    n_features, n_groups = 30, 40
    pool = ConstraintPool(n_features, n_groups)
    for g in range(n_groups):
        for _ in range(3):  # several constraints share each slack, one shared "bias" feature
            idx = np.append(rng.choice(n_features - 1, size=6, replace=False), n_features - 1)
            pool.add(g, SparseVector(idx, rng.normal(size=7)), 1.0)
    loose = solve_grouped_dcd(pool, 1.0, tol=1e-12, max_iter=100000, random_state=0,
                              gap_tol=gap_tol)
    assert loose.converged
    assert 0.0 <= loose.gap <= gap_tol * loose.primal
    ref = ConstraintPool(n_features, n_groups)
    for k in range(pool.n_constraints):
        c = pool.constraint(k)
        ref.add(c.group, c.d, c.b)
    exact = solve_grouped_dcd(ref, 1.0, tol=1e-12, max_iter=100000, random_state=0)
    assert loose.n_iter < exact.n_iter
    assert exact.primal <= loose.primal <= exact.primal * (1 + gap_tol)
