"""The structured passive-aggressive learner ``pa`` (CRFsuite's ``pa`` algorithm).

Its steps are checked against the closed forms computed here from dense Phi vectors (the
task's ``joint_feature``, not the learner's sparse difference): the first step from w = 0
(no violation, cost sqrt(errors)) for PA, PA-I capped and uncapped and PA-II, a second step
with a margin violation, the error-insensitive cost and the averaging.  Then: zero training
error on separable data, the skipped epochs after a mistake-free one give the model of
running them, ``epsilon``, seeds, clone, model files, ``partial_fit`` over batches, and the
command line.  AROW has its own file; what the two share is tested once here and there
with both learners.  Last, CRFsuite's averaged perceptron ``ap``: it is
``StructuredPerceptron(average=True, max_iter=100, epsilon=0.0)``, whose ``epsilon`` stop
compares the mean ratio of wrong labels per sequence; ``epsilon=None`` keeps the
perceptron's own stop after a mistake-free epoch.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.cli import main
from latentstruct.exceptions import ConfigError
from latentstruct.learners import AROW, StructuredPA, StructuredPerceptron, get_learner_class
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks import ChunkTask
from conftest import random_chunk_file

LABELS = ["B-A", "I-A", "B-B", "O"]


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def fitted(path, **task_params):
    task = ChunkTask(**task_params)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), list(task.encode_targets(ds.targets))


@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    """Random labels over a tiny vocabulary: not separable, so every epoch steps."""
    path = random_chunk_file(tmp_path_factory.mktemp("pa") / "train.txt", 3, n_sent=24, vocab=7)
    return fitted(path, window=1, affix_length=1)


@pytest.fixture(scope="module")
def separable(tmp_path_factory):
    """Each word has one label: a window-0 chain separates them."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(30):
        for _ in range(int(rng.integers(1, 6))):
            k = int(rng.integers(6))
            lines.append(f"w{k} P{k % 3} {LABELS[k % 4]}")
        lines.append("")
    path = tmp_path_factory.mktemp("sep") / "train.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return fitted(path, window=0, affix_length=1)


def phi(task, x, y):
    return task.structure_.joint_feature(x, y).to_dense(task.n_features)


def hand_step(task, x, y, w, pa_type, c, error_sensitive=True):
    """One PA step from ``w`` on (x, y), from the closed forms; (new w, tau, violation)."""
    y_hat = task.structure_.argmax(x, w).structure
    errors = float(np.count_nonzero(np.asarray(y) != np.asarray(y_hat)))
    assert errors > 0  # the cases below all make a mistake
    delta = phi(task, x, y) - phi(task, x, y_hat)
    violation = -float(w @ delta)
    cost = violation + (math.sqrt(errors) if error_sensitive else 1.0)
    sq = float(delta @ delta)
    tau = {0: cost / sq, 1: min(c, cost / sq), 2: cost / (sq + 0.5 / c)}[pa_type]
    return w + tau * delta, tau, violation


@pytest.mark.parametrize("pa_type,c", [(0, 1.0), (1, 1.0), (1, 0.01), (2, 1.0), (2, 0.05)])
def test_two_steps_match_the_closed_form(chunk, pa_type, c):
    task, X, Y = chunk
    first = task.structure_.subset(X, np.arange(2))
    learner = StructuredPA(task, pa_type=pa_type, c=c, averaging=False, shuffle=False)
    quiet(lambda: learner.partial_fit(task.structure_object().subset(X, [0]), Y[:1]))
    w1, tau1, v1 = hand_step(task, X[0], Y[0], np.zeros(task.n_features), pa_type, c)
    assert v1 == 0  # w = 0 scores every structure 0
    cost1 = learner.objective_curve_[0]
    errors1 = learner.errors_curve_[0]
    assert cost1 == pytest.approx(math.sqrt(errors1))
    np.testing.assert_allclose(learner.coef_, w1, rtol=0, atol=1e-12)
    if (pa_type, c) == (1, 0.01):
        assert tau1 == c  # capped
    elif pa_type == 1:
        assert tau1 < c  # not capped: PA-I is PA here
    # the second step starts from w1, which scores the second sentence
    w2, _, v2 = hand_step(task, X[1], Y[1], w1, pa_type, c)
    assert v2 > 0  # w1 already prefers a wrong structure: a margin violation
    two = StructuredPA(task, pa_type=pa_type, c=c, averaging=False, shuffle=False,
                       max_iter=1)
    quiet(lambda: two.fit(first, Y[:2]))
    np.testing.assert_allclose(two.coef_, w2, rtol=0, atol=1e-12)
    errors2 = two.errors_curve_[0] - errors1
    assert two.objective_curve_ == [pytest.approx(cost1 + v2 + math.sqrt(errors2))]
    # averaging: the mean of the weights after each of the two steps
    avg = StructuredPA(task, pa_type=pa_type, c=c, shuffle=False, max_iter=1)
    quiet(lambda: avg.fit(first, Y[:2]))
    np.testing.assert_allclose(avg.coef_, (w1 + w2) / 2, rtol=0, atol=1e-12)
    assert avg.t_ == 2 and avg.n_updates_ == 2


def test_error_insensitive_cost_requires_a_margin_of_one(chunk):
    task, X, Y = chunk
    for sensitive in (True, False):
        m = StructuredPA(task, pa_type=0, error_sensitive=sensitive, averaging=False,
                         shuffle=False)
        quiet(lambda m=m: m.partial_fit(task.structure_object().subset(X, [0]), Y[:1]))
        w, _, _ = hand_step(task, X[0], Y[0], np.zeros(task.n_features), 0, 1.0,
                            error_sensitive=sensitive)
        np.testing.assert_allclose(m.coef_, w, rtol=0, atol=1e-12)
    y_hat = task.structure_.argmax(X[0], np.zeros(task.n_features)).structure
    assert np.count_nonzero(np.asarray(Y[0]) != y_hat) > 1  # so the two costs differ


@pytest.mark.parametrize("make", [lambda t: StructuredPA(t, max_iter=30),
                                  lambda t: StructuredPA(t, pa_type=0, max_iter=30),
                                  lambda t: StructuredPA(t, pa_type=2, c=0.1, max_iter=30),
                                  lambda t: AROW(t, max_iter=30)])
def test_zero_training_error_on_separable_data(separable, make):
    task, X, Y = separable
    m = quiet(lambda: make(task).fit(X, Y))
    assert m.score(X, Y) == 1.0 and m.converged_
    assert m.errors_curve_[0] > 0 and m.errors_curve_[-1] == 0
    if isinstance(m, AROW):  # epsilon=0 stops at a mean cost of 0, as CRFsuite's arow
        assert m.n_iter_ == len(m.errors_curve_) < 30 and m.errors_curve_[-2] > 0
    else:  # epsilon=0 never stops early (CRFsuite's pa): the later epochs are counted
        assert m.n_iter_ == 30 and m.t_ == 30 * len(X)


@pytest.mark.parametrize("cls", [StructuredPA, AROW])
def test_counted_epochs_give_the_model_of_running_them(separable, chunk, cls):
    """fit skips decoding after a mistake-free epoch; partial_fit never skips: as many
    calls as fit's epochs give the same model (the generator draws the same permutations).
    AROW (epsilon=0, test <=) stops at the first mistake-free epoch instead."""
    for k, (task, X, Y) in enumerate((separable, chunk)):
        a = quiet(lambda: cls(task, max_iter=8, random_state=3).fit(X, Y))
        if k == 0 and cls is StructuredPA:  # separable: epochs were counted, not decoded
            assert a.errors_curve_[0] > 0 and a.errors_curve_[-3:] == [0.0] * 3
        b = cls(task, random_state=3)
        for _ in range(a.n_iter_):
            quiet(lambda: b.partial_fit(X, Y))
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-12)
        assert a.errors_curve_ == b.errors_curve_ and a.t_ == b.t_
        assert a.n_iter_ == 8 or (cls is AROW and a.errors_curve_[-1] == 0)


def test_epsilon_stops_on_the_mean_cost(chunk):
    task, X, Y = chunk
    m = quiet(lambda: StructuredPA(task, max_iter=20, epsilon=1e6).fit(X, Y))
    assert m.n_iter_ == 1  # any mean cost is below 1e6
    full = quiet(lambda: StructuredPA(task, max_iter=4).fit(X, Y))
    eps = full.objective_curve_[2] / len(X) + 1e-9  # the third epoch's mean cost passes
    assert min(full.objective_curve_[:2]) / len(X) >= eps
    m = quiet(lambda: StructuredPA(task, max_iter=20, epsilon=eps).fit(X, Y))
    assert m.n_iter_ == 3 and not m.converged_


@pytest.mark.parametrize("cls", [StructuredPA, AROW])
def test_a_seed_repeats_and_another_seed_differs(chunk, cls):
    task, X, Y = chunk
    a, b, c = (quiet(lambda s=s: cls(task, max_iter=3, random_state=s).fit(X, Y))
               for s in (1, 1, 2))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert np.abs(a.coef_ - c.coef_).max() > 1e-6


@pytest.mark.parametrize("cls,params", [
    (StructuredPA, {"pa_type": 2, "c": 0.5, "error_sensitive": False, "averaging": False,
                    "max_iter": 7, "epsilon": 0.1}),
    (AROW, {"variance": 0.5, "gamma": 3.0, "max_iter": 7, "epsilon": 0.1})])
def test_clone_and_get_params(chunk, cls, params):
    task, X, Y = chunk
    m = cls(task, **params)
    got = m.get_params(deep=False)
    assert {k: got[k] for k in params} == params
    copy = clone(m)
    assert copy.get_params(deep=False).keys() == got.keys()
    assert {k: copy.get_params(deep=False)[k] for k in params} == params
    quiet(lambda: m.fit(X, Y))
    assert not hasattr(clone(m), "coef_")
    assert get_learner_class({StructuredPA: "pa", AROW: "arow"}[cls]) is cls


@pytest.mark.parametrize("cls,bad,match", [
    (StructuredPA, {"pa_type": 3}, "'pa_type' parameter of StructuredPA must be an int in "
                                   "the range \\[0, 2\\]"),
    (StructuredPA, {"c": 0}, "'c' parameter of StructuredPA must be a float in the range "
                             "\\(0, inf\\)"),
    (StructuredPA, {"averaging": "yes"}, "'averaging' parameter of StructuredPA must be a "
                                         "bool"),
    (StructuredPA, {"epsilon": -1}, "'epsilon' parameter"),
    (AROW, {"gamma": 0.0}, "'gamma' parameter of AROW"),
    (AROW, {"variance": -1}, "'variance' parameter of AROW"),
    (AROW, {"max_iter": 0}, "'max_iter' parameter of AROW")])
def test_bad_parameters_are_refused_on_entering_fit(chunk, cls, bad, match):
    task, X, Y = chunk
    with pytest.raises(ConfigError, match=match):
        cls(task, **bad).fit(X, Y)


@pytest.mark.parametrize("cls", [StructuredPA, AROW])
def test_a_model_file_predicts_and_continues_exactly(chunk, tmp_path, cls):
    task, X, Y = chunk
    first, rest = task.structure_.subset(X, np.arange(10)), task.structure_.subset(X, np.arange(10, len(X)))
    live = quiet(lambda: cls(task, max_iter=2).fit(first, Y[:10]))
    save_trained(tmp_path / "m.npz", task, live)
    task2, loaded, _ = load_trained(tmp_path / "m.npz")
    assert isinstance(loaded, cls)
    np.testing.assert_array_equal(loaded.coef_, live.coef_)
    assert all(np.array_equal(a, b) for a, b in zip(loaded.predict(X), live.predict(X)))
    assert loaded.t_ == live.t_ and loaded.errors_curve_ == live.errors_curve_
    if cls is AROW:
        np.testing.assert_array_equal(loaded.covariance_, live.covariance_)
        assert live.covariance_.min() < 1.0  # the steps shrank some variances
    quiet(lambda: live.partial_fit(rest, Y[10:]))
    quiet(lambda: loaded.partial_fit(task2.subset(rest, np.arange(len(Y) - 10)), Y[10:]))
    np.testing.assert_array_equal(loaded.coef_, live.coef_)
    assert loaded.n_iter_ == live.n_iter_ == 3


@pytest.mark.parametrize("cls,params", [(StructuredPA, {}), (StructuredPA, {"pa_type": 2}),
                                        (StructuredPA, {"averaging": False}), (AROW, {})])
def test_partial_fit_over_batches_is_one_pass_over_their_concatenation(chunk, cls, params):
    task, X, Y = chunk
    stream, a = cls(task, shuffle=False, **params), 0
    for k, n in enumerate((5, 8, 3, 8), start=1):
        idx = np.arange(a, a + n)
        quiet(lambda idx=idx: stream.partial_fit(task.structure_object().subset(X, idx), Y[a:a + n]))
        a += n
        assert stream.n_iter_ == k
    one = quiet(lambda: cls(task, shuffle=False, max_iter=1, **params).fit(X, Y))
    assert np.abs(one.coef_).max() > 1e-3  # the pass learned something
    np.testing.assert_allclose(stream.coef_, one.coef_, rtol=0, atol=1e-12)
    assert stream.t_ == one.t_ == len(X) and stream.n_updates_ == one.n_updates_
    assert sum(stream.objective_curve_) == pytest.approx(one.objective_curve_[0])


@pytest.mark.parametrize("learner,options", [
    ("pa", ["pa_type=2", "c=0.5", "max_iter=5"]), ("arow", ["gamma=2", "max_iter=5"])])
def test_the_command_line_trains_and_evaluates(tmp_path, capsys, learner, options):
    data = random_chunk_file(tmp_path / "train.txt", 4, n_sent=10)
    model = tmp_path / "m.npz"
    args = ["train", "chunk", "--train", str(data), "--model", str(model), "--learner",
            learner, "--quiet"]
    for opt in options:
        args += ["--option", opt]
    assert main(args) == 0, capsys.readouterr().err
    _, trained, _ = load_trained(model)
    assert trained.registry_name == learner and trained.n_iter_ == 5
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(data)]) == 0
    assert "f1" in capsys.readouterr().out.lower()


# ------------------------------------------------------------ CRFsuite's ap: the perceptron
def test_epsilon_zero_never_stops_early_and_none_keeps_todays_stop(separable):
    task, X, Y = separable
    today = quiet(lambda: StructuredPerceptron(task, max_iter=12).fit(X, Y))
    assert today.get_params()["epsilon"] is None
    assert today.n_iter_ < 12 and today.objective_curve_[-1] == 0
    ap = quiet(lambda: StructuredPerceptron(task, max_iter=12, epsilon=0.0).fit(X, Y))
    assert ap.n_iter_ == 12 and ap.converged_ and ap.t_ == 12 * len(X)
    np.testing.assert_array_equal(ap.objective_curve_[:today.n_iter_], today.objective_curve_)
    # the later epochs change no weight, but move the average towards them
    assert np.abs(ap.coef_ - today.coef_).max() > 1e-6
    assert ap.score(X, Y) == 1.0


def test_epsilon_is_compared_with_the_mean_ratio_of_wrong_labels(chunk):
    task, X, Y = chunk
    # the first epoch's mistakes, example by example (one call each, in the given order)
    one = StructuredPerceptron(task, shuffle=False)
    for i in range(len(X)):
        quiet(lambda i=i: one.partial_fit(task.structure_object().subset(X, [i]), Y[i:i + 1]))
    losses = np.array(one.objective_curve_)
    sizes = np.array([len(y) for y in Y])
    rate = float(np.mean(losses / sizes))
    assert 0 < rate < float(np.mean(losses))  # per token, not per sentence
    stops = quiet(lambda: StructuredPerceptron(task, shuffle=False, max_iter=5,
                                               epsilon=rate + 1e-9).fit(X, Y))
    assert stops.n_iter_ == 1
    goes_on = quiet(lambda: StructuredPerceptron(task, shuffle=False, max_iter=5,
                                                 epsilon=rate - 1e-9).fit(X, Y))
    assert goes_on.n_iter_ > 1


def test_a_negative_epsilon_is_refused(chunk):
    task, X, Y = chunk
    with pytest.raises(ConfigError, match="'epsilon' parameter of StructuredPerceptron"):
        StructuredPerceptron(task, epsilon=-0.1).fit(X, Y)
