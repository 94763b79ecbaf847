"""The online learners' compiled pass and CRFsuite's feature set (issue 55, items 1 and 2).

A chain structure runs a whole epoch in one compiled call (``ChainStructure.online_pass``)
with the learner's update rule (``solvers.online_rules``).  Here every learner and variant
is trained twice on the same data, once compiled and once through its Python loop (the
structure's ``online_batch`` withheld), and must give the same weights (to 1e-9: a dot
product may sum in another order), curves and update counts; with ``feature_set=
"observed"`` no weight outside ``support_`` (the task's ``observed_feature_support``) ever
moves, and the set survives a model file and ``partial_fit``.
"""

import warnings

import numpy as np
import pytest

from latentstruct.learners import AROW, StructuredPA, StructuredPerceptron
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.solvers.online_rules import RULES, apply_rule, pa_tau
from latentstruct.tasks import ChunkTask
from conftest import random_chunk_file

LEARNERS = {
    "ap": lambda task, **k: StructuredPerceptron(task, max_iter=4, epsilon=0.0, **k),
    "perceptron-last": lambda task, **k: StructuredPerceptron(task, max_iter=4, average=False,
                                                              **k),
    "pa": lambda task, **k: StructuredPA(task, max_iter=4, pa_type=0, **k),
    "pa-i": lambda task, **k: StructuredPA(task, max_iter=4, pa_type=1, c=0.3, **k),
    "pa-ii": lambda task, **k: StructuredPA(task, max_iter=4, pa_type=2, **k),
    "pa-insensitive": lambda task, **k: StructuredPA(task, max_iter=4, error_sensitive=False,
                                                     averaging=False, **k),
    "arow": lambda task, **k: AROW(task, max_iter=4, gamma=0.5, variance=2.0, **k),
}


def fitted(path, **task_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = ChunkTask(**task_params)
        ds = task.read(path)
        task.fit(ds)
    return task, task.featurize(ds), list(task.encode_targets(ds.targets))


@pytest.fixture(scope="module", params=[False, True], ids=["free", "well-formed"])
def chunk(request, tmp_path_factory):
    path = random_chunk_file(tmp_path_factory.mktemp("cp") / "train.txt", 5, n_sent=30,
                             vocab=8)
    if request.param:  # well-formed IOB2 tags: the chunker decodes under its constraints
        lines = path.read_text().splitlines()
        fixed, prev = [], "O"
        for line in lines:
            if line:
                w, p, tag = line.split()
                if tag.startswith("I-") and prev[2:] != tag[2:]:
                    tag = "B-" + tag[2:]
                fixed.append(f"{w} {p} {tag}")
                prev = tag
            else:
                fixed.append(line)
                prev = "O"
        path.write_text("\n".join(fixed) + "\n")
    task, X, Y = fitted(path, window=1, affix_length=1)
    assert (task.structure_.constraints is not None) == request.param
    return task, X, Y


def python_loop(learner):
    """``learner`` with its structure's compiled pass withheld (the Python loop runs)."""
    learner._compiled_batch = lambda structure, X, Y: None
    return learner


def same_model(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.objective_curve_, b.objective_curve_, rtol=1e-9, atol=1e-9)
    assert a.n_updates_ == b.n_updates_ > 0
    assert a.t_ == b.t_


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("feature_set", ["all", "observed"])
def test_compiled_pass_equals_the_python_loop(chunk, name, feature_set):
    task, X, Y = chunk
    opts = {"feature_set": feature_set}
    if feature_set == "observed":
        opts["possible_transitions"] = False
    assert task.structure().online_batch(X, Y) is not None
    compiled = LEARNERS[name](task, **opts).fit(X, Y)
    looped = python_loop(LEARNERS[name](task, **opts)).fit(X, Y)
    same_model(compiled, looped)
    if hasattr(compiled, "covariance_"):
        np.testing.assert_allclose(compiled.covariance_, looped.covariance_, rtol=1e-12)


@pytest.mark.parametrize("name", ["ap", "pa-i", "arow"])
def test_observed_feature_set_keeps_other_weights_at_zero(chunk, name):
    task, X, Y = chunk
    structure = task.structure()
    model = LEARNERS[name](task, feature_set="observed", possible_transitions=False).fit(X, Y)
    expected = structure.observed_feature_support(X, Y, possible_transitions=False)
    np.testing.assert_array_equal(model.support_, expected)
    outside = np.ones(structure.n_features, bool)
    outside[model.support_] = False
    assert outside.any() and not np.any(model.coef_[outside])
    assert np.count_nonzero(model.coef_) > 0
    # "all" trains weights outside that set on the same data
    free = LEARNERS[name](task).fit(X, Y)
    assert free.support_ is None and np.any(free.coef_[outside])


def test_support_survives_a_model_file_and_partial_fit(chunk, tmp_path):
    task, X, Y = chunk
    model = StructuredPA(task, max_iter=2, feature_set="observed").fit(X, Y)
    save_trained(tmp_path / "m.npz", task, model)
    _, loaded, _ = load_trained(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.support_, model.support_)
    outside = np.ones(task.structure().n_features, bool)
    outside[model.support_] = False
    loaded.partial_fit(X, Y)
    model.partial_fit(X, Y)
    np.testing.assert_allclose(loaded.coef_, model.coef_, rtol=1e-12)
    assert not np.any(loaded.coef_[outside])


def test_partial_fit_compiled_equals_python(chunk):
    task, X, Y = chunk
    a = StructuredPerceptron(task, shuffle=False)
    b = python_loop(StructuredPerceptron(task, shuffle=False))
    for lo in range(0, len(Y), 7):
        a.partial_fit(X[lo:lo + 7], Y[lo:lo + 7])
        b.partial_fit(X[lo:lo + 7], Y[lo:lo + 7])
    same_model(a, b)


def test_no_compiled_pass_for_partial_labels_or_global_rules(chunk, tmp_path):
    task, X, Y = chunk
    structure = task.structure()
    partial = [y.copy() for y in Y]
    partial[0][0] = -1
    assert structure.online_batch(X, partial) is None
    path = random_chunk_file(tmp_path / "r.txt", 1, n_sent=10)
    ruled, Xr, Yr = fitted(path, rules="count B-A <= 3")
    assert ruled.structure().online_batch(Xr, Yr) is None
    # the learners still train there, through the Python loop
    StructuredPA(ruled, max_iter=1).fit(Xr, Yr)


def test_rules_against_closed_forms():
    """``apply_rule`` on one mistake, each rule against its formula written out here."""
    rng = np.random.default_rng(3)
    idx = np.array([0, 2, 5])
    val = rng.normal(size=3)
    sq = float(val @ val)
    for code, name in ((0, "perceptron"), (1, "pa"), (2, "arow")):
        assert RULES[name] == code
    # perceptron, at step t = 4: w += d, u += 3 d
    w, u = np.zeros(6), np.zeros(6)
    assert apply_rule(0, w, u, np.zeros(0), idx, val, 0.0, 2.0, 4, np.zeros(0)) == 2.0
    np.testing.assert_array_equal(w[idx], val)
    np.testing.assert_array_equal(u[idx], 3 * val)
    # PA-I: cost = v + sqrt(d), tau = min(c, cost / |d|^2)
    w, u = np.zeros(6), np.zeros(6)
    cost = apply_rule(1, w, u, np.zeros(0), idx, val, 0.5, 4.0, 1, np.array([1.0, 0.2, 1.0]))
    assert cost == pytest.approx(2.5)
    tau = min(0.2, 2.5 / sq)
    np.testing.assert_allclose(w[idx], tau * val)
    assert pa_tau(2.5, sq, 2, 0.2) == pytest.approx(2.5 / (sq + 1 / 0.4))
    assert pa_tau(2.5, 0.0, 0, 1.0) == 0.0 and pa_tau(0.0, sq, 2, 1.0) == 0.0
    # AROW: alpha = cost / (gamma + sum s d^2); w += alpha s d; 1/s += d^2 / gamma
    w, s = np.zeros(6), np.full(6, 2.0)
    cost = apply_rule(2, w, np.zeros(0), s, idx, val, 0.25, 3.0, 1, np.array([0.5]))
    alpha = 3.25 / (0.5 + 2.0 * sq)
    assert cost == pytest.approx(3.25)
    np.testing.assert_allclose(w[idx], alpha * 2.0 * val)
    np.testing.assert_allclose(s[idx], 1.0 / (0.5 + val * val / 0.5))
    assert np.all(s[[1, 3, 4]] == 2.0)


def test_crfsuite_online_algorithms_train_crfsuites_feature_set():
    """``latentstruct.crfsuite.CRF`` maps ap/pa/arow onto these learners with CRFsuite's
    feature set: only attribute-label pairs seen in training move, unless
    ``all_possible_states=True``, which is honoured (it was refused before)."""
    from latentstruct.crfsuite import CRF

    rng = np.random.default_rng(0)
    X, y = [], []
    for _ in range(40):
        n = int(rng.integers(1, 6))
        words = rng.integers(0, 6, size=n)
        X.append([{"w": f"w{k}", "odd": bool(k % 2)} for k in words])
        y.append([("A", "B", "C")[(k + int(rng.integers(2))) % 3] for k in words])
    seen = {(f"w:{t['w']}", lab) for xs, ys in zip(X, y) for t, lab in zip(xs, ys)}
    for algorithm in ("ap", "pa", "arow"):
        crf = CRF(algorithm=algorithm, max_iterations=5).fit(X, y)
        states = {k for k, v in crf.state_features_.items() if v != 0}
        word_states = {k for k in states if k[0].startswith("w:")}
        assert word_states and word_states <= seen, algorithm
        every = CRF(algorithm=algorithm, max_iterations=5, all_possible_states=True).fit(X, y)
        more = {k for k, v in every.state_features_.items() if v != 0 and k[0].startswith("w:")}
        assert more - seen, algorithm  # pairs never seen in training moved too
