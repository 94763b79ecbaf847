"""A newcomer's first hour (issue 52): the crf learner's L2 coefficient on ``doccls`` is the
task's default (c2=0.01; the learner's 1.0 underfits a document), listed by ``latentstruct
options`` and beaten by a value the user gives; ``DocumentClassifier(learner="crf")
.predict_marginals`` gives one probability dict per document."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer

from latentstruct import DocumentClassifier, Tagger
from latentstruct.cli import main
from latentstruct.cli.help import describe_options
from latentstruct.learners import CRF
from latentstruct.tasks import DocumentClassificationTask
from latentstruct.tasks.base import learner_defaults_for

TEXTS = ["goal match team won", "rates bank rose", "team lost match", "bank loan rates fell",
         "the election vote", "vote party won", "match goal late", "loan bank money",
         "party election poll", "won the match", "late vote count", "money rates bank"]
LABELS = ["sport", "finance", "sport", "finance", "politics", "politics", "sport", "finance",
          "politics", "sport", "politics", "finance"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


# --- the crf learner's c2 on doccls ---------------------------------------------------------
def test_doccls_sets_the_crf_c2_and_only_for_doccls():
    assert learner_defaults_for(DocumentClassificationTask, CRF) == {"c2": 0.01}
    assert DocumentClassifier(learner="crf").get_params()["c2"] == 0.01
    # the learner's own default where no task sets one
    assert CRF().c2 == 1.0
    assert Tagger(learner="crf").get_params()["c2"] == 1.0


def test_the_default_reaches_the_fitted_learner_and_a_given_value_wins():
    X = TfidfVectorizer().fit_transform(TEXTS)
    default = DocumentClassifier(learner="crf").fit(X, LABELS)
    assert default.learner_.c2 == 0.01
    same = DocumentClassifier(learner="crf", c2=0.01).fit(X, LABELS)
    np.testing.assert_array_equal(default.learner_.coef_, same.learner_.coef_)
    given = DocumentClassifier(learner="crf", c2=1.0).fit(X, LABELS)
    assert given.learner_.c2 == 1.0
    assert not np.allclose(given.learner_.coef_, default.learner_.coef_)
    # c2 = 1 shrinks the weights of a norm-1 tf-idf row: the probabilities stay flat
    p_default, p_given = default.predict_proba(X), given.predict_proba(X)
    assert p_given.max(axis=1).mean() < 0.5 < p_default.max(axis=1).mean()
    reset = DocumentClassifier(learner="crf", c2=1.0).set_params(c2=0.3)
    assert reset.fit(X, LABELS).learner_.c2 == 0.3
    assert "c2=0.3" in repr(reset) and "c2" not in repr(DocumentClassifier(learner="crf"))


def test_options_lists_the_task_default():
    text = describe_options("doccls", "crf")
    assert "task 'doccls' sets c2=0.01 by default" in text
    assert "\n  c2=0.01 " in text and "c2=1.0" not in text
    assert "\n  c2=1.0 " in describe_options("sequence", "crf")


def _write(path):
    rows = [{"id": str(k), "label": y, "text": x} for k, (x, y) in enumerate(zip(TEXTS, LABELS))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _info(capsys, model) -> dict:
    assert main(["info", "--model", str(model)]) == 0
    return json.loads(capsys.readouterr().out)


def test_command_line_training_records_the_default_and_an_option_wins(tmp_path, capsys):
    data = _write(tmp_path / "docs.jsonl")
    for model, options, c2 in ((tmp_path / "a.npz", [], 0.01),
                               (tmp_path / "b.npz", ["--option", "c2=0.5"], 0.5)):
        assert main(["train", "doccls", "--learner", "crf", "--train", str(data), "--model",
                     str(model), "--quiet", *options]) == 0
        assert _info(capsys, model)["learner_params"]["c2"] == c2


# --- predict_marginals of a document classifier --------------------------------------------
@pytest.mark.parametrize("y", [LABELS, [{"sport": 3, "finance": 10, "politics": 7}[v]
                                        for v in LABELS]])
def test_document_marginals_are_probabilities_that_agree_with_predict(y):
    clf = DocumentClassifier(learner="crf").fit(TEXTS, y)
    test = ["bank rates", "match goal", "party vote", "nothing known here"]
    marginals = clf.predict_marginals(test)
    assert len(marginals) == len(test)
    assert all(len(doc) == 1 for doc in marginals)  # a document is one part
    classes = clf.classes_.tolist()
    for doc, proba_row, pred in zip(marginals, clf.predict_proba(test), clf.predict(test)):
        dist = doc[0]
        assert list(dist) == classes  # keyed by the classes, in their own type
        assert all(type(k) is type(classes[0]) for k in dist)
        values = np.array(list(dist.values()))
        assert np.all((values >= 0) & (values <= 1))
        assert values.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(values, proba_row, rtol=0, atol=0)
        if np.ptp(values) > 0:  # a tie (no known word) is decided by the task's label order
            assert max(dist, key=dist.get) == pred
    # no known word: no evidence for any class
    np.testing.assert_allclose(list(marginals[-1][0].values()), 1 / 3, atol=1e-12)
    assert [max(d[0], key=d[0].get) for d in marginals[:3]] == (
        ["finance", "sport", "politics"] if y is LABELS else [10, 3, 7])


def test_document_marginals_need_probabilities():
    clf = DocumentClassifier(max_iter=3).fit(TEXTS, LABELS)
    with pytest.raises(AttributeError, match="learner='crf'"):
        clf.predict_marginals(TEXTS[:1])


# --- progress: the run's display, not a setting of the model --------------------------------
def _chunk_file(path):
    from conftest import random_chunk_file

    return random_chunk_file(path, 1, vocab=7)


def _train_chunk(capsys, tmp_path, name, *extra, train=None):
    model = tmp_path / name
    argv = ["train", "chunk", "--train", str(train or _chunk_file(tmp_path / "a.txt")),
            "--model", str(model), "--learner", "perceptron", "--option", "max_iter=3", *extra]
    assert main(argv) == 0
    return model, capsys.readouterr().err


def test_bars_a_run_draws_are_not_recorded_as_the_models_progress(tmp_path, capsys):
    # --progress forces the bars (pytest's stderr is not a terminal): the learner drew its
    # own bar, and the file still records the progress that was asked for, the default
    model, err = _train_chunk(capsys, tmp_path, "bars.npz", "--progress")
    assert "perceptron" in err and "\r" in err
    info = _info(capsys, model)
    assert info["learner_params"]["progress"] is False
    listed = describe_options("chunk", "perceptron")
    assert "\n  progress=False " in listed
    # the same options give the same recorded parameters, with or without bars
    quiet, _ = _train_chunk(capsys, tmp_path, "quiet.npz", "--quiet")
    assert _info(capsys, quiet)["learner_params"] == info["learner_params"]
    # without --progress and without --quiet (bars only on a terminal) too
    plain, _ = _train_chunk(capsys, tmp_path, "plain.npz")
    assert _info(capsys, plain)["learner_params"] == info["learner_params"]


def test_a_progress_option_is_recorded_and_such_a_file_loads(tmp_path, capsys):
    from latentstruct import load

    # what an asked-for progress=true writes, and what every command-line model held before
    model, _ = _train_chunk(capsys, tmp_path, "asked.npz", "--quiet", "--option",
                            "progress=true")
    assert _info(capsys, model)["learner_params"]["progress"] is True
    est = load(model)
    assert est.learner_.progress is True and est.get_params()["progress"] is True
    assert main(["evaluate", "--model", str(model), "--test", str(tmp_path / "a.txt"),
                 "--quiet"]) == 0
    assert "accuracy" in capsys.readouterr().out


def test_a_resumed_model_records_the_progress_asked_for(tmp_path, capsys):
    from conftest import random_chunk_file

    first = tmp_path / "first.npz"
    assert main(["train", "chunk", "--train", str(_chunk_file(tmp_path / "a.txt")), "--model",
                 str(first), "--learner", "crf", "--option", "solver=sgd", "--option",
                 "max_iter=2", "--quiet"]) == 0
    more = random_chunk_file(tmp_path / "b.txt", 2, vocab=7)
    out = tmp_path / "more.npz"
    assert main(["train", "chunk", "--train", str(more), "--model", str(out), "--resume",
                 str(first), "--progress"]) == 0
    assert "crf (sgd)" in capsys.readouterr().err  # the pass drew its bar, as a fit does
    assert _info(capsys, out)["learner_params"]["progress"] is False
