import warnings

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, ConvergenceWarning
from latentstruct.learners import JLIS, LCLR, StructuredSVM
from latentstruct.tasks import ChunkTask
from latentstruct.learners.jlis import NormalizedBinaryView
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


TIGHT = dict(tol=1e-12, dcd_tol=1e-9, dcd_max_iter=200000, max_cutting_plane_rounds=500,
             random_tie_break=False)


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
    lclr_kw = {k: v for k, v in TIGHT.items() if k != "random_tie_break"}
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
            loss = task.loss(Y[i], h)
            if loss:
                rows.append(np.append(task.joint_feature_difference(X[i], Y[i], h).to_dense(n - 1), 0))
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
    return opt, z[:n]


def test_one_outer_iteration_solves_the_convex_inner_problem_exactly(tiny, exact_qp):
    task, X, Y, XB, yB = tiny
    w0 = np.random.default_rng(3).normal(size=task.n_features + 1)
    C1, C2 = 0.5, 0.3
    opt, w_opt = exact_inner_problem(task, X, Y, XB, yB, w0, C1, C2, exact_qp)
    j = quiet(lambda: JLIS(task, C1=C1, C2=C2, coef_init=w0, max_iter=1, **TIGHT).fit(X, Y, XB, yB))
    np.testing.assert_allclose(j.coef_, w_opt, atol=1e-4)


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
    only_pos = task.subset(XB, np.flatnonzero(yB > 0))
    with pytest.raises(ConfigError, match="all positive"):
        JLIS(task).fit(X, Y, only_pos, np.ones(len(only_pos)))
    with pytest.raises(ConfigError, match="'C2' parameter"):
        JLIS(task, C2=-1).fit(X, Y, XB, yB)


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
