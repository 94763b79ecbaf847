"""The estimators on raw Python data: fit, predict, score, save, load and GridSearchCV for
each, the scikit-learn contract (clone, get_params/set_params with flat and prefixed
names), and model files shared with the command line in both directions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

import latentstruct
from latentstruct import (Chunker, DependencyParser, DocumentClassifier, Estimator,
                          PairClassifier, Tagger, load)
from latentstruct.cli import main
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError, NotFittedError


# --------------------------------------------------------------------------------------
# raw data, read from the real corpora into plain Python lists
# --------------------------------------------------------------------------------------
def ewt_sentences(require_data, n, start=0):
    from latentstruct.data.readers import read_conllu

    path = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    sents = read_conllu(path)[start:start + n]
    return sents


def conll2000(require_data, n, start=0):
    from latentstruct.data.readers import read_conll2000

    sents = read_conll2000(require_data("conll2000", "train.txt"))[start:start + n]
    return [list(zip(s.words, s.pos)) for s in sents], [list(s.tags) for s in sents]


def translit_pairs(n_pos=40, n_neg_per_pos=3, seed=0, offset=0):
    """Positive CLDR English-Hebrew name pairs (Babel ships them) and random mismatches."""
    from latentstruct.data.translit import cldr_pairs

    pairs = cldr_pairs("he")[offset:offset + n_pos]
    rng = np.random.default_rng(seed)
    X, y = list(pairs), [1] * len(pairs)
    for i, (src, _) in enumerate(pairs):
        for j in rng.choice([k for k in range(len(pairs)) if k != i], n_neg_per_pos, replace=False):
            X.append((src, pairs[j][1]))
            y.append(0)
    return X, y


def quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def save_load(est, tmp_path):
    path = tmp_path / "model.npz"
    est.save(path)
    loaded = load(path)
    assert type(loaded) is type(est)
    return loaded, path


# --------------------------------------------------------------------------------------
# one test per estimator: fit, predict, score, save, load, GridSearchCV
# --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_tagger_fit_predict_score_save_load_grid(require_data, tmp_path):
    train = ewt_sentences(require_data, 300)
    test = ewt_sentences(require_data, 100, start=300)
    X, y = [list(s.words) for s in train], [list(s.upos) for s in train]
    Xt, yt = [list(s.words) for s in test], [list(s.upos) for s in test]
    tagger = quiet_fit(Tagger(max_iter=10), X, y)
    assert tagger is not None and tagger.learner_.coef_.shape == (tagger.task_.n_features,)
    pred = tagger.predict(Xt)
    assert [len(p) for p in pred] == [len(s) for s in Xt]
    assert all(isinstance(t, str) for p in pred for t in p)
    assert tagger.classes_ == sorted({t for tags in y for t in tags})  # as CRF.classes_
    acc = np.mean([a == b for p, g in zip(pred, yt) for a, b in zip(p, g)])
    assert tagger.score(Xt, yt) == pytest.approx(acc)
    assert acc > 0.75  # 300 training sentences of EWT: ~0.83

    loaded, _ = save_load(tagger, tmp_path)
    assert loaded.predict(Xt) == pred
    assert loaded.get_params()["max_iter"] == 10

    search = GridSearchCV(Tagger(max_iter=5), {"C": [0.01, 1.0]}, cv=2)
    quiet_fit(search, X[:120], y[:120])
    assert set(search.cv_results_["param_C"]) == {0.01, 1.0}
    assert 0.5 < search.best_score_ <= 1.0
    assert isinstance(search.best_estimator_, Tagger)
    # the featurisation is refitted per fold: each fold's task saw only its training half
    assert search.best_estimator_.task_.n_attributes > 0


@pytest.mark.slow
def test_chunker_fit_predict_score_save_load_grid(require_data, tmp_path):
    X, y = conll2000(require_data, 300)
    Xt, yt = conll2000(require_data, 100, start=300)
    chunker = quiet_fit(Chunker(max_iter=10), X, y)
    pred = chunker.predict(Xt)
    assert [len(p) for p in pred] == [len(s) for s in Xt]
    f1 = chunker.score(Xt, yt)
    assert 0.75 < f1 <= 1.0  # conlleval F1; 300 sentences give ~0.85
    from latentstruct.tasks.sequence.chunk_metrics import chunk_f1

    assert f1 == pytest.approx(chunk_f1(yt, pred)["f1"])
    loaded, _ = save_load(chunker, tmp_path)
    assert loaded.predict(Xt) == pred
    search = GridSearchCV(Chunker(max_iter=5), {"learner__C": [0.01, 1.0]}, cv=2)
    quiet_fit(search, X[:100], y[:100])
    assert set(search.cv_results_["param_learner__C"]) == {0.01, 1.0}
    assert search.best_estimator_.get_params()["C"] in (0.01, 1.0)


@pytest.mark.slow
def test_dependency_parser_fit_predict_score_save_load_grid(require_data, tmp_path):
    train = ewt_sentences(require_data, 150)
    test = ewt_sentences(require_data, 50, start=150)

    def raw(sents):
        return ([list(zip(s.words, s.upos)) for s in sents],
                [list(s.heads) for s in sents])

    X, y = raw(train)
    Xt, yt = raw(test)
    parser = quiet_fit(DependencyParser(max_iter=3), X, y)
    pred = parser.predict(Xt)
    assert [len(p) for p in pred] == [len(s) for s in Xt]
    for heads in pred:  # a tree: heads in 0..n, exactly one root word
        heads = [h if isinstance(h, int) else h[0] for h in heads]
        assert all(0 <= h <= len(heads) for h in heads)
    uas = parser.score(Xt, yt)
    assert 0.4 < uas <= 1.0
    loaded, _ = save_load(parser, tmp_path)
    assert loaded.predict(Xt) == pred
    search = GridSearchCV(DependencyParser(max_iter=2), {"C": [0.01, 1.0]}, cv=2)
    quiet_fit(search, X[:60], y[:60])
    assert len(search.cv_results_["mean_test_score"]) == 2


@pytest.mark.slow
def test_document_classifier_fit_predict_score_save_load_grid(require_data, tmp_path):
    from latentstruct.data.documents import read_documents

    docs = read_documents(require_data("20newsgroups", "train.jsonl"))
    wanted = ("comp.graphics", "sci.space", "rec.autos")
    docs = [d for d in docs if d.label in wanted]
    rng = np.random.default_rng(0)
    docs = [docs[i] for i in rng.permutation(len(docs))[:360]]
    X, y = [d.text for d in docs], [d.label for d in docs]
    clf = quiet_fit(DocumentClassifier(max_iter=10), X[:240], y[:240])
    pred = clf.predict(X[240:])
    assert set(pred) <= set(wanted)
    acc = clf.score(X[240:], y[240:])
    assert acc == pytest.approx(np.mean(np.asarray(pred) == np.asarray(y[240:])))
    assert acc > 0.7
    loaded, _ = save_load(clf, tmp_path)
    assert list(loaded.predict(X[240:])) == list(pred)
    search = GridSearchCV(DocumentClassifier(max_iter=5), {"C": [0.01, 1.0]}, cv=2)
    quiet_fit(search, X[:120], y[:120])
    assert search.best_score_ > 0.5

    # labels of any JSON scalar type, as scikit-learn classifiers take them
    codes = {label: k for k, label in enumerate(wanted)}
    yi = [codes[label] for label in y]
    clf_int = quiet_fit(DocumentClassifier(max_iter=10), X[:240], yi[:240])
    assert list(clf_int.classes_) == [0, 1, 2]
    pred_int = clf_int.predict(X[240:])
    assert [wanted[k] for k in pred_int] == list(pred)  # same model, labels renamed
    assert clf_int.score(X[240:], yi[240:]) == pytest.approx(acc)
    loaded_int, _ = save_load(clf_int, tmp_path)
    assert list(loaded_int.predict(X[240:])) == list(pred_int)


@pytest.mark.slow
def test_pair_classifier_translit_fit_predict_score_save_load_grid(tmp_path):
    X, y = translit_pairs(40)
    Xt, yt = translit_pairs(40, offset=40, seed=1)
    clf = quiet_fit(PairClassifier(task="translit", C=0.1), X, y)
    assert list(clf.classes_) == [0, 1]
    pred = clf.predict(Xt)
    assert set(np.unique(pred)) <= {0, 1}
    acc = clf.score(Xt, yt)
    assert acc == pytest.approx(np.mean(np.asarray(pred) == np.asarray(yt)))
    assert acc > 0.8  # 75% of the pairs are negatives: must beat "always 0"
    scores = clf.decision_function(Xt)
    assert np.array_equal(np.where(scores >= 0, 1, 0), np.asarray(pred))
    loaded, _ = save_load(clf, tmp_path)
    assert list(loaded.predict(Xt)) == list(pred)
    search = GridSearchCV(PairClassifier(task="translit", max_iter=5), {"C": [0.01, 1.0]}, cv=2)
    quiet_fit(search, X, y)
    assert search.best_score_ > 0.7


@pytest.mark.slow
def test_pair_classifier_paraphrase_with_string_classes(require_wordnet, require_spacy, require_data,
                                                       tmp_path):
    from latentstruct.data.pairs import read_msrp

    pairs = read_msrp(require_data("msrp", "train.tsv"))[:48]
    X = [(p.first, p.second) for p in pairs]
    y = ["paraphrase" if p.label == 1 else "different" for p in pairs]
    assert len(set(y)) == 2
    with pytest.raises(ConfigError, match="say which is positive with pos_label"):
        PairClassifier(max_iter=3).fit(X[:32], y[:32])
    clf = quiet_fit(PairClassifier(max_iter=3, pos_label="paraphrase"), X[:32], y[:32])
    assert list(clf.classes_) == ["different", "paraphrase"]
    pred = clf.predict(X[32:])
    assert set(pred) <= {"different", "paraphrase"}
    assert 0.0 <= clf.score(X[32:], y[32:]) <= 1.0
    loaded, _ = save_load(clf, tmp_path)
    assert list(loaded.classes_) == ["different", "paraphrase"]
    assert list(loaded.predict(X[32:])) == list(pred)
    assert loaded.pos_label == "paraphrase"
    search = GridSearchCV(PairClassifier(max_iter=2, pos_label="paraphrase"), {"C": [0.1, 1.0]},
                          cv=2)
    quiet_fit(search, X[:24], y[:24])
    assert len(search.cv_results_["mean_test_score"]) == 2


# --------------------------------------------------------------------------------------
# the scikit-learn contract
# --------------------------------------------------------------------------------------
def test_clone_get_params_set_params():
    est = Tagger(C=0.5, window=1)
    params = est.get_params()
    assert params["C"] == 0.5 and params["window"] == 1 and params["max_iter"] == 50
    assert params["task"] is None and params["learner"] is None and params["pos_label"] is None
    twin = clone(est)
    assert twin.get_params() == params and twin is not est
    est.set_params(learner__C=2.0, task__window=3)
    assert est.get_params()["C"] == 2.0 and est.get_params()["window"] == 3
    assert twin.get_params()["C"] == 0.5  # a clone does not share its parameters
    assert repr(est) == "Tagger(C=2.0, window=3)"
    with pytest.raises(ConfigError, match="unknown parameter 'Cee'.*learner options: C"):
        est.set_params(Cee=1.0)
    with pytest.raises(ConfigError, match="unknown parameter 'task__C'"):
        est.set_params(task__C=1.0)  # C is the learner's, not the task's
    # switching learner changes which options exist
    est.set_params(learner="perceptron")
    assert "C" not in est.get_params() or est.get_params()["learner"] == "perceptron"


def test_a_tasks_learner_defaults_show_in_get_params_and_reach_the_learner():
    """DependencyParser's C is the dep task's default (0.001), not StructuredSVM's 0.1; a
    given C wins, clone keeps it, and the fitted learner trains with it."""
    assert DependencyParser().get_params()["C"] == 0.001
    assert Tagger().get_params()["C"] == 0.1
    assert repr(DependencyParser()) == "DependencyParser()"
    given = DependencyParser(C=0.05)
    assert clone(given).get_params()["C"] == 0.05 and repr(given) == "DependencyParser(C=0.05)"
    X = [[("Dogs", "NOUN"), ("bark", "VERB"), (".", "PUNCT")], [("Cats", "NOUN"), ("sleep", "VERB")]]
    y = [[2, 0, 2], [2, 0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        parser = DependencyParser(hash_bits=12, label_hash_bits=8, max_iter=3).fit(X, y)
        assert parser.learner_.C == 0.001
        assert DependencyParser(hash_bits=12, label_hash_bits=8, max_iter=3,
                                C=0.5).fit(X, y).learner_.C == 0.5


def test_unknown_option_and_task_refused_in_fit():
    with pytest.raises(ConfigError, match="unknown parameter 'bogus'"):
        Tagger(bogus=1).fit([["a"]], [["NOUN"]])
    with pytest.raises(ConfigError, match="Tagger takes task 'pos' or 'citations'"):
        Tagger(task="doccls").fit(["text"], ["a"])
    with pytest.raises(ConfigError, match="unknown task 'nope'"):
        Estimator(task="nope").fit([], [])
    with pytest.raises(ConfigError, match="cannot train task 'pos'"):
        Tagger(learner="lclr").fit([["a"]], [["NOUN"]])


def test_not_fitted_and_bad_raw_input():
    with pytest.raises(NotFittedError):
        Tagger().predict([["a"]])
    with pytest.raises(InputError, match="X has 2 examples but y has 1"):
        Tagger().fit([["a"], ["b"]], [["NOUN"]])
    with pytest.raises(InputError, match="To read a file, use task.read"):
        Tagger().fit("train.conllu", [["NOUN"]])
    with pytest.raises(InputError, match="Tagger requires y to be passed.*fit needs targets y"):
        Tagger().fit([["a"]], None)
    with pytest.raises(InputError, match="1 class"):
        PairClassifier(task="translit").fit([("rome", "רומא"), ("paris", "פריז")], [1, 1])


def test_estimator_generic_and_top_level_exports():
    assert set(latentstruct.__all__) >= {"Tagger", "Chunker", "DependencyParser",
                                          "DocumentClassifier", "PairClassifier", "Estimator",
                                          "load"}
    X, y = translit_pairs(20)
    est = quiet_fit(Estimator(task="translit", C=0.1, max_iter=5), X, y)
    assert est.score(X, y) > 0.8


# --------------------------------------------------------------------------------------
# one model file for Python and the command line
# --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_python_model_used_by_cli_predict_and_back(require_data, tmp_path, capsys):
    train = ewt_sentences(require_data, 120)
    test = ewt_sentences(require_data, 20, start=120)
    tagger = quiet_fit(Tagger(max_iter=5), [list(s.words) for s in train],
                       [list(s.upos) for s in train])
    model = tmp_path / "py.npz"
    tagger.save(model)
    plain = tmp_path / "input.txt"
    plain.write_text("".join(" ".join(s.words) + "\n" for s in test), encoding="utf-8")
    out = tmp_path / "pred.conllu"
    assert main(["predict", "--model", str(model), "--input", str(plain), "--output", str(out)]) == 0
    from latentstruct.data.readers import read_conllu

    cli_tags = [list(s.upos) for s in read_conllu(out)]
    assert cli_tags == tagger.predict([list(s.words) for s in test])

    # the other way round: a model trained by the command line, loaded in Python
    train_file = tmp_path / "train.conllu"
    train_file.write_text(_first_sentences(require_data, 120), encoding="utf-8")
    cli_model = tmp_path / "cli.npz"
    assert main(["train", "pos", "--train", str(train_file), "--model", str(cli_model),
                 "--option", "max_iter=5", "--quiet"]) == 0
    capsys.readouterr()
    loaded = load(cli_model)
    assert isinstance(loaded, Tagger)
    out2 = tmp_path / "pred2.conllu"
    assert main(["predict", "--model", str(cli_model), "--input", str(plain),
                 "--output", str(out2)]) == 0
    assert [list(s.upos) for s in read_conllu(out2)] == loaded.predict([list(s.words) for s in test])


def _first_sentences(require_data, n) -> str:
    text = require_data("ud_english_ewt", "en_ewt-ud-train.conllu").read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n\n") if b.strip()]
    return "\n\n".join(blocks[:n]) + "\n\n"


def test_load_refuses_unknown_estimator_name(tmp_path):
    import json
    import zipfile

    X, y = translit_pairs(15)
    est = quiet_fit(PairClassifier(task="translit", max_iter=3), X, y)
    path = tmp_path / "m.npz"
    est.save(path)
    # rewrite metadata.json with an estimator name the library does not have
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    meta["extra"]["estimator"] = "os.system"
    members["metadata.json"] = json.dumps(meta).encode()
    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(bad, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    with pytest.raises(ModelFormatError, match="estimator 'os.system'"):
        load(bad)


def test_save_refuses_directory_and_unfitted(tmp_path):
    with pytest.raises(NotFittedError):
        Tagger().save(tmp_path / "m.npz")
    X, y = translit_pairs(15)
    est = quiet_fit(PairClassifier(task="translit", max_iter=3), X, y)
    with pytest.raises((ConfigError, InputError, OSError), match="directory"):
        est.save(tmp_path)


def test_convergence_warning_points_at_the_callers_fit():
    X, y = translit_pairs(15)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PairClassifier(task="translit", max_iter=1).fit(X, y)  # this line
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert conv, "max_iter=1 must warn"
    assert all(w.filename == __file__ for w in conv)


@pytest.mark.slow
def test_tagger_with_jlis_draws_binary_examples_from_raw_data(require_data):
    """J-LIS through the estimator: the task's training_sample splits the raw sentences into
    labelled structures S and binary examples B, as `latentstruct train --learner jlis`."""
    sents = ewt_sentences(require_data, 200)
    X, y = [list(s.words) for s in sents], [list(s.upos) for s in sents]
    with pytest.raises(ConfigError, match="give n_binary=N"):
        Tagger(learner="jlis").fit(X, y)
    est = quiet_fit(Tagger(learner="jlis", n_structured_tokens=300, n_binary=60, max_iter=3), X, y)
    assert est.learner_.coef_.shape == (est.learner_.coef_size(est.task_),)
    assert 0.3 < est.score(X[150:], y[150:]) <= 1.0


# --------------------------------------------------------------------------------------
# begin_partial_fit: the first partial_fit call's preparation, without its pass
# --------------------------------------------------------------------------------------
def test_begin_partial_fit_fixes_the_task_on_all_the_data_and_trains_nothing():
    X = [["The", "cat", "sat"], ["A", "dog", "ran", "."], ["Dogs", "bark", "."]]
    y = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB", "PUNCT"], ["NOUN", "VERB", "PUNCT"]]
    classes = ["DET", "NOUN", "PUNCT", "VERB"]
    begun = Tagger(learner="perceptron", shuffle=False).begin_partial_fit(X, y, classes=classes)
    assert begun.classes_ == classes
    assert getattr(begun.learner_, "coef_", None) is None  # no pass yet
    # then batch by batch: the feature index of all of X, so the model of one pass over X
    begun.partial_fit(X[:1], y[:1]).partial_fit(X[1:], y[1:])
    whole = Tagger(learner="perceptron", shuffle=False).partial_fit(X, y, classes=classes)
    np.testing.assert_array_equal(begun.learner_.coef_, whole.learner_.coef_)
    # a first partial_fit on a small batch fixes a smaller index: "bark" has no weight
    small = Tagger(learner="perceptron", shuffle=False).partial_fit(X[:1], y[:1],
                                                                    classes=classes)
    assert small.learner_.coef_.shape[0] < whole.learner_.coef_.shape[0]
    with pytest.raises(ConfigError, match="fitted already"):
        begun.begin_partial_fit(X, y, classes=classes)
    with pytest.raises(AttributeError, match="perceptron"):
        Tagger().begin_partial_fit(X, y, classes=classes)  # ssvm trains in batch
