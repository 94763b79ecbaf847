"""``latentstruct.crfsuite``: sklearn-crfsuite's CRF and metrics (the peer's own suite runs
in tests/compat); here the refusals, the algorithm mapping and the attributes."""

import pickle

import numpy as np
import pytest

from latentstruct.crfsuite import CRF, metrics
from latentstruct.exceptions import ConfigError, NotFittedError

XSEQ = [{"walk": 1, "shop": 0.5}, {"walk": 1}, {"walk": 1, "clean": 0.5},
        {"shop": 0.5, "clean": 0.5}, {"walk": 0.5, "clean": 1}, {"clean": 1, "shop": 0.1},
        {"walk": 1, "shop": 0.5}, {}, {"clean": 1}, {"clean": 1}]
YSEQ = ["sunny", "sunny", "sunny", "rainy", "rainy", "rainy", "sunny", "sunny", "rainy",
        "rainy"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(algorithm="sgd"), r"algorithm='sgd' is not a CRFsuite training algorithm"),
    (dict(algorithm="ap", c2=0.1), r"c2=0.1 is a parameter of algorithm 'lbfgs' / 'l2sgd', "
                                   r"not of algorithm='ap'"),
    (dict(algorithm="lbfgs", pa_type=2), r"pa_type=2 is a parameter of algorithm 'pa'"),
    (dict(algorithm="pa", variance=2.0), r"variance=2.0 is a parameter of algorithm 'arow'"),
    (dict(min_freq=2), r"min_freq=2: CRFsuite drops \(attribute, label\) features"),
    (dict(linesearch="Backtracking"), r"linesearch='Backtracking'.*More and Thuente"),
    (dict(linesearch="Bisection"), r"not a CRFsuite line search"),
    (dict(max_linesearch=5), r"max_linesearch=5"),
    (dict(algorithm="l2sgd", calibration_rate=1.0), r"'calibration_rate' parameter of CRF "
                                                    r"must be a float in the range \(1, inf\)"),
    (dict(trainer_cls=object), r"trainer_cls names a python-crfsuite Trainer class"),
])
def test_parameters_that_cannot_be_honoured_are_refused(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        CRF(**kwargs).fit([XSEQ], [YSEQ])


def test_not_fitted_attributes_are_none_and_predict_refuses():
    crf = CRF()
    assert crf.tagger_ is None and crf.classes_ is None and crf.size_ is None
    with pytest.raises(NotFittedError, match="not fitted yet"):
        crf.predict([XSEQ])


def test_dev_data_is_scored_and_must_come_in_pairs():
    crf = CRF().fit([XSEQ] * 3, [YSEQ] * 3, X_dev=[XSEQ], y_dev=[YSEQ])
    assert crf.training_log_.holdout == 1.0
    assert crf.training_log_.iterations[0]["num"] == 1
    assert crf.training_log_.last_iteration["loss"] < crf.training_log_.iterations[0]["loss"]
    with pytest.raises(ValueError, match="Pass both X_dev and y_dev"):
        CRF().fit([XSEQ], [YSEQ], X_dev=[XSEQ])


def test_predict_returns_lists_and_the_tagger_agrees():
    crf = CRF().fit([XSEQ] * 5, [YSEQ] * 5)
    pred = crf.predict([XSEQ, XSEQ[:3]])
    assert type(pred) is list and all(type(p) is list for p in pred)
    assert pred == [YSEQ, YSEQ[:3]]
    tagger = crf.tagger_
    assert tagger.tag(XSEQ) == YSEQ
    tagger.set(XSEQ)
    m = crf.predict_marginals_single(XSEQ)
    for t in range(len(XSEQ)):
        for label in crf.classes_:
            assert tagger.marginal(label, t) == pytest.approx(m[t][label], abs=1e-12)
    # p(y | x) of every sequence of a 3-item prefix sums to one
    tagger.set(XSEQ[:3])
    import itertools

    total = sum(tagger.probability(list(y)) for y in itertools.product(crf.classes_, repeat=3))
    assert total == pytest.approx(1.0, abs=1e-9)
    info = tagger.info()
    assert info.header["num_labels"] == 2 and set(info.labels) == {"rainy", "sunny"}
    assert info.state_features == crf.state_features_


@pytest.mark.parametrize("algorithm", ["ap", "pa", "arow"])
def test_online_algorithms_give_crf_marginals_of_their_weights(algorithm):
    crf = CRF(algorithm).fit([XSEQ] * 3, [YSEQ] * 3)
    m = crf.predict_marginals([XSEQ])[0]
    assert all(abs(sum(d.values()) - 1) < 1e-12 for d in m)
    # the argmax of the marginals is the Viterbi path here (a well-separated model)
    assert [max(d, key=d.get) for d in m] == crf.predict([XSEQ])[0]


def test_model_filename_round_trip_and_pickle(tmp_path):
    path = tmp_path / "m.crfsuite"
    crf = CRF(model_filename=str(path)).fit([XSEQ] * 3, [YSEQ] * 3)
    assert path.exists()
    again = CRF(model_filename=str(path))
    assert again.predict([XSEQ]) == crf.predict([XSEQ])
    clone = pickle.loads(pickle.dumps(crf))
    np.testing.assert_array_equal(clone._model.learner_.coef_, crf._model.learner_.coef_)


def test_metrics_match_their_definitions():
    y1 = [["x", "z", "y"], ["x", "x"]]
    y2 = [["y", "z", "y"], ["x", "y"]]
    assert metrics.flat_accuracy_score(y1, y2) == 3 / 5
    assert metrics.sequence_accuracy_score([[1, 2], [3]], [[1, 2], [4]]) == 0.5
    with pytest.raises(ValueError, match="2 sequences but y_pred has 1"):
        metrics.sequence_accuracy_score(y1, y2[:1])
    report = metrics.flat_classification_report(y1, y2)
    assert "precision" in report


def _pycrfsuite_model(tmp_path):
    import pycrfsuite

    path = str(tmp_path / "peer.crfsuite")
    trainer = pycrfsuite.Trainer(verbose=False)
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = int(rng.integers(2, 7))
        xseq = [{"w": f"v{int(rng.integers(5))}", "len": float(rng.random()),
                 "ctx": {"prev": f"p{int(rng.integers(3))}"}} for _ in range(n)]
        trainer.append(xseq, [f"L{int(rng.integers(3))}" for _ in range(n)])
    trainer.set_params({"c1": 0.05, "c2": 0.01, "max_iterations": 60})
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return path, tagger


def test_a_model_python_crfsuite_wrote_predicts_as_its_tagger(tmp_path):
    from latentstruct import load

    path, tagger = _pycrfsuite_model(tmp_path)
    rng = np.random.default_rng(1)
    crf = CRF(model_filename=path)
    generic = load(path)
    assert crf.classes_ == tagger.labels()
    for _ in range(40):
        n = int(rng.integers(1, 8))
        xseq = [{"w": f"v{int(rng.integers(7))}", "len": float(rng.random()),
                 "ctx": {"prev": f"p{int(rng.integers(4))}"}} for _ in range(n)]
        assert crf.predict_single(xseq) == tagger.tag(xseq) == generic.predict([xseq])[0]
        tagger.set(xseq)
        m = crf.predict_marginals_single(xseq)
        worst = max(abs(m[t][y] - tagger.marginal(y, t)) for t in range(n)
                    for y in tagger.labels())
        assert worst <= 1e-9


def test_a_damaged_crfsuite_file_is_one_clear_error(tmp_path):
    from latentstruct.exceptions import ModelFormatError

    path, _ = _pycrfsuite_model(tmp_path)
    cut = tmp_path / "cut.crfsuite"
    cut.write_bytes(open(path, "rb").read()[:300])
    with pytest.raises(ModelFormatError, match="cut.crfsuite"):
        CRF(model_filename=str(cut)).predict([XSEQ])


@pytest.mark.parametrize("transitions", [None, True])
def test_trained_to_convergence_the_weights_are_crfsuites(tmp_path, transitions):
    """Same data, CRFsuite's defaults (observed bigrams only) or all_possible_transitions:
    the same feature set, and weights equal to 1e-5 once both have converged."""
    import pycrfsuite

    rng = np.random.default_rng(0)
    X, Y = [], []
    for _ in range(40):
        n = int(rng.integers(2, 7))
        X.append([{"w": f"v{int(rng.integers(6))}", "len": float(rng.random())}
                  for _ in range(n)])
        Y.append([["A", "B", "C"][int(rng.integers(3))] for _ in range(n)])
    Y[0][0] = "D"  # a label that follows nothing: some bigrams are never observed
    path = str(tmp_path / "peer.crfsuite")
    trainer = pycrfsuite.Trainer(verbose=False)
    for x, y in zip(X, Y):
        trainer.append(x, y)
    trainer.set_params({"feature.possible_transitions": bool(transitions), "delta": 1e-10,
                        "epsilon": 1e-10})
    trainer.train(path)
    peer = CRF(model_filename=path)
    ours = CRF(delta=1e-10, epsilon=1e-10, all_possible_transitions=transitions).fit(X, Y)
    assert sorted(ours.transition_features_) == sorted(peer.transition_features_)
    assert len(ours.transition_features_) == (16 if transitions else 10)
    for theirs, mine in ((peer.transition_features_, ours.transition_features_),
                         (peer.state_features_, ours.state_features_)):
        assert sorted(mine) == sorted(theirs)
        assert max(abs(theirs[k] - mine[k]) for k in theirs) < 1e-5


def test_scorers_are_sklearn_crfsuites():
    from sklearn.model_selection import cross_val_score

    from latentstruct.crfsuite import scorers

    rng = np.random.default_rng(3)
    words = list("abcdef")
    X = [[{"w": words[i]} for i in rng.integers(0, 6, 4)] for _ in range(12)]
    y = [["x" if t["w"] < "c" else "y" for t in s] for s in X]
    crf = CRF(max_iterations=20).fit(X[:8], y[:8])
    pred = crf.predict(X[8:])
    assert scorers.flat_accuracy(crf, X[8:], y[8:]) == metrics.flat_accuracy_score(y[8:], pred)
    assert scorers.sequence_accuracy(crf, X[8:], y[8:]) == \
        metrics.sequence_accuracy_score(y[8:], pred)
    scores = cross_val_score(CRF(max_iterations=20), X, y, cv=3, scoring=scorers.flat_accuracy)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))


@pytest.mark.parametrize("algorithm", ["lbfgs", "l2sgd", "ap", "pa", "arow"])
def test_reaching_max_iterations_is_no_warning(algorithm, recwarn):
    # CRFsuite stops at max_iterations silently; latentstruct's estimators note it, this
    # layer does not (the log says how many iterations ran)
    import warnings

    rng = np.random.default_rng(4)
    words = list("abcdef")
    X = [[{"w": words[i], "n": words[(i + 1) % 6]} for i in rng.integers(0, 6, 5)]
         for _ in range(30)]
    y = [["x" if t["w"] < "c" else "y" for t in s] for s in X]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        crf = CRF(algorithm=algorithm, max_iterations=3,
                  c1=0.1 if algorithm == "lbfgs" else None).fit(X, y)
    assert 1 <= len(crf.training_log_.iterations) <= 3


def test_labels_and_attributes_follow_crfsuite():
    # CRFsuite numbers labels as they first occur in the training data, and counts the
    # attributes that survive into the model (an L1 penalty drops the others); checked
    # against sklearn-crfsuite itself where it is installed
    import warnings

    rng = np.random.default_rng(0)
    words = list("abcdefgh")
    X = [[{"w": words[i], "p": words[(i + 1) % 8], "r": str(rng.integers(0, 50))}
          for i in rng.integers(0, 8, 6)] for _ in range(60)]
    y = [["z" if t["w"] < "c" else "y" if t["w"] < "f" else "x" for t in s] for s in X]
    y[0][0] = "z"
    first_seen = list(dict.fromkeys(t for tags in y for t in tags))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = CRF(c1=1.0, c2=0.1, max_iterations=200).fit(X, y)
    assert ours.classes_ == first_seen == ours.tagger_.labels()
    assert list(ours.predict_marginals_single(X[0])[0]) == first_seen
    assert list(ours.tagger_.info().labels) == first_seen
    used = {a for a, _ in ours.state_features_}
    assert set(ours.attributes_) == used and ours.num_attributes_ == len(used)
    # in the order the training data first shows them, as CRFsuite numbers attributes
    names = [f"{k}:{v}" for s in X for t in s for k, v in t.items()]
    assert ours.attributes_ == [a for a in dict.fromkeys(names) if a in used]
    assert ours.num_attributes_ < len(ours._fitted().task_.attr_index_.names)  # L1 pruned
    sklearn_crfsuite = pytest.importorskip("sklearn_crfsuite")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = sklearn_crfsuite.CRF(c1=1.0, c2=0.1, max_iterations=200).fit(X, y)
    assert theirs.classes_ == ours.classes_
    assert theirs.attributes_ == ours.attributes_


def test_a_fitted_crf_pickles_as_its_model_file():
    # the model travels as the bytes of its latentstruct model file (sparse, compressed),
    # not as its objects: smaller, and read back through the file's checks
    rng = np.random.default_rng(5)
    words = [f"w{k}" for k in range(300)]
    X = [[{"w": words[i], "p": words[(i + 7) % 300], "bias": 1.0}
          for i in rng.integers(0, 300, 8)] for _ in range(120)]
    y = [["B-X" if int(t["w"][1:]) % 3 == 0 else "O" for t in s] for s in X]
    crf = CRF(max_iterations=30).fit(X[:100], y[:100])
    data = pickle.dumps(crf)
    back = pickle.loads(data)
    assert back.predict(X[100:]) == crf.predict(X[100:]) and back.classes_ == crf.classes_
    assert back.training_log_.iterations == crf.training_log_.iterations
    assert len(data) < len(pickle.dumps(crf._fitted())) / 2
    assert pickle.loads(pickle.dumps(CRF(c1=0.3))).get_params()["c1"] == 0.3  # unfitted
