"""learner="crf" behind the raw-data estimators, and predict_marginals in sklearn-crfsuite's
shape (a list per sentence of {label: probability} per token), and the CLI's --learner crf."""

import numpy as np
import pytest

from latentstruct import Chunker, Tagger, load
from latentstruct.cli import main

SENTS = [["The", "cat", "sat"], ["A", "dog", "ran", "fast"], ["The", "dog", "sat"]] * 4
TAGS = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB", "ADV"], ["DET", "NOUN", "VERB"]] * 4


def test_tagger_with_crf_gives_marginals_in_sklearn_crfsuite_shape():
    sklearn_crfsuite = pytest.importorskip("sklearn_crfsuite")
    feats = [[{"w": w.lower(), "bias": 1.0} for w in s] for s in SENTS]
    ours = Tagger(learner="crf").fit(feats, TAGS)
    theirs = sklearn_crfsuite.CRF(c2=1.0, max_iterations=100).fit(feats, TAGS)
    test = [[{"w": "the", "bias": 1.0}, {"w": "cat", "bias": 1.0}, {"w": "ran", "bias": 1.0}]]
    m_ours, m_theirs = ours.predict_marginals(test), theirs.predict_marginals(test)
    assert len(m_ours) == len(m_theirs) == 1 and len(m_ours[0]) == len(m_theirs[0]) == 3
    for a, b in zip(m_ours[0], m_theirs[0]):
        assert set(a) == set(b) == {"DET", "NOUN", "VERB", "ADV"}
        assert sum(a.values()) == pytest.approx(1.0, abs=1e-12)
        assert max(a, key=a.get) == max(b, key=b.get)
    assert [max(d, key=d.get) for d in m_ours[0]] == ours.predict(test)[0]


def test_crf_chunker_round_trips_through_a_model_file(tmp_path):
    X = [[("The", "DT"), ("cat", "NN"), ("sat", "VBD")], [("A", "DT"), ("dog", "NN")]] * 3
    y = [["B-NP", "I-NP", "B-VP"], ["B-NP", "I-NP"]] * 3
    model = Chunker(learner="crf", c2=0.1).fit(X, y)
    path = tmp_path / "crf_chunker.npz"
    model.save(path)
    again = load(path)
    a, b = model.predict_marginals(X[:2]), again.predict_marginals(X[:2])
    assert a == b
    assert again.predict(X[:2]) == y[:2]


def test_a_learner_without_probabilities_says_which_one_has_them():
    model = Tagger(max_iter=3).fit(SENTS, TAGS)
    with pytest.raises(AttributeError, match="learner='crf'"):
        model.predict_marginals(SENTS[:1])


def test_cli_trains_and_evaluates_a_crf(tmp_path, tiny_chunk_file, capsys):
    path = tmp_path / "crf.npz"
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(path),
                 "--learner", "crf", "--option", "c2=0.1", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(path), "--test", str(tiny_chunk_file)]) == 0
    out = capsys.readouterr().out
    assert "f1" in out.lower()
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(path),
                 "--learner", "crf", "--option", "solver=newton", "--quiet"]) == 2
    assert "solver" in capsys.readouterr().err


def test_cli_continues_an_sgd_crf_on_new_data(tmp_path, tiny_chunk_file, capsys):
    from latentstruct.learners.persistence import load_trained

    first, second = tmp_path / "crf0.npz", tmp_path / "crf1.npz"
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(first),
                 "--learner", "crf", "--option", "solver=sgd", "--option", "eta0=0.1",
                 "--option", "max_iter=2", "--quiet"]) == 0
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(second),
                 "--resume", str(first), "--quiet"]) == 0
    capsys.readouterr()
    task, before = load_trained(first)[:2]
    _, after = load_trained(second)[:2]
    # one more epoch: the step counter and the epoch count go on, and the weights move
    assert after.n_iter_ == before.n_iter_ + 1 and after.t_ > before.t_
    X = task.featurize(task.read(tiny_chunk_file))
    Y = task.encode_targets(task.read(tiny_chunk_file).targets)
    before.partial_fit(X, Y)
    np.testing.assert_array_equal(before.coef_, after.coef_)
    lbfgs = tmp_path / "lbfgs.npz"
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model", str(lbfgs),
                 "--learner", "crf", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", "chunk", "--train", str(tiny_chunk_file), "--model",
                 str(tmp_path / "x.npz"), "--resume", str(lbfgs), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "solver='lbfgs', which cannot continue training" in err
    assert "crf with --option solver=sgd" in err
