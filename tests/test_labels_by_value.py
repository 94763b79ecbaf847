"""Nothing a label or a file can trick (issue 51): class labels compared by value as
scikit-learn compares them (1, 1.0 and True are one class; ``classes_`` in the caller's
type, saved and loaded as it is), ``partial_fit``'s declared classes checked as ``fit``
checks ``y`` (duplicates by value, tags in the task's format), numbers that are no 2-D
array named as such, and a model file whose feature layout was edited refused."""

from __future__ import annotations

import json
import re
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder

from latentstruct import (Chunker, DependencyParser, DocumentClassifier, Estimator,
                          PairClassifier, Tagger, load)
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError
from latentstruct.tasks.validation import UnseenLabelError

DOCS = ["good day", "bad day", "good", "bad", "good good", "bad bad"]
THREE = ["good day", "bad day", "meh day", "good", "bad", "meh", "good good", "bad bad",
         "meh meh"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _edit_metadata(src, dst, change) -> None:
    """Copy the model file ``src`` to ``dst`` with its metadata.json rewritten by
    ``change(meta)`` (the arrays untouched), as a hand edit would."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "metadata.json":
                meta = json.loads(data)
                change(meta)
                data = json.dumps(meta).encode("utf-8")
            zout.writestr(info, data)


# --------------------------------------------------------------------------------------
# 1. class labels by value
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("y, classes, kind", [
    ([1.0, 0, 1, 0, 1, 0], [0.0, 1.0], "f"),
    ([True, 0, 1, False, 1, 0], [0, 1], "i"),
    ([True, False, True, False, True, False], [False, True], "b"),
    (np.array([1, 0, 1, 0, 1, 0], dtype=np.int32), [0, 1], "i"),
])
def test_equal_labels_are_one_class(y, classes, kind):
    clf = DocumentClassifier(learner="perceptron", random_state=0).fit(DOCS, y)
    assert clf.task_.n_labels == 2  # not '0', '1', '1.0'
    assert clf.classes_.tolist() == classes and clf.classes_.dtype.kind == kind
    # as scikit-learn's own encoder gives them
    np.testing.assert_array_equal(clf.classes_, LabelEncoder().fit(y).classes_)
    assert clf.classes_.dtype == LabelEncoder().fit(y).classes_.dtype
    pred = clf.predict(DOCS)  # was KeyError: '1'
    assert pred.dtype == clf.classes_.dtype
    assert [p == t for p, t in zip(pred, y)] == [True] * 6
    assert clf.score(DOCS, y) == 1.0


def test_mixed_strings_and_numbers_nan_and_non_scalars_are_refused():
    with pytest.raises(InputError, match=r"y mixes strings and numbers \(y\[0\] is 'a', y\[1\] "
                                         r"is 1\); labels are compared by value"):
        DocumentClassifier().fit(DOCS, ["a", 1, "b", 2, "a", 1])
    with pytest.raises(InputError, match=r"y\[2\] is NaN, which equals no label"):
        DocumentClassifier().fit(DOCS, [0.0, 1.0, float("nan"), 0.0, 1.0, 0.0])
    with pytest.raises(InputError, match=r"y\[3\] is None of type NoneType; class labels "
                                         r"must be bool, int, float or str"):
        DocumentClassifier().fit(DOCS, [0, 1, 0, None, 1, 0])


def test_score_compares_gold_labels_by_value():
    clf = DocumentClassifier(learner="perceptron", random_state=0).fit(DOCS, [1, 0, 1, 0, 1, 0])
    assert clf.score(DOCS, [1.0, False, True, 0.0, 1, 0]) == 1.0
    # the string "1" is no class of an int model: always wrong, never scored as 1
    assert clf.score(DOCS, ["1", 0, 1, 0, 1, 0]) == pytest.approx(5 / 6)
    assert clf.score(DOCS, ["(not a class) '1'", 0, 1, 0, 1, 0]) == pytest.approx(5 / 6)


def test_proba_and_decision_columns_follow_classes_by_value():
    # the task sorts its label strings ('10.0' < '2.0' < '7.0'); classes_ sorts values
    y = [10.0, 2, 7, 10, 2, 7, 10, 2, 7]
    clf = DocumentClassifier(learner="crf", random_state=0).fit(THREE, y)
    assert clf.classes_.tolist() == [2.0, 7.0, 10.0]
    pred = clf.predict(THREE)
    assert pred.tolist() == [float(v) for v in y]
    proba = clf.predict_proba(THREE)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], pred)
    scores = clf.decision_function(THREE)
    np.testing.assert_array_equal(clf.classes_[scores.argmax(axis=1)], pred)


@pytest.mark.parametrize("y", [[10, 2, 10, 2, 10, 2], [1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
                               [True, False, True, False, True, False],
                               ["spam", "ham", "spam", "ham", "spam", "ham"]])
def test_classes_survive_save_and_load_in_their_type(y, tmp_path):
    clf = DocumentClassifier(learner="crf", random_state=0).fit(DOCS, y)
    clf.save(tmp_path / "m.npz")
    loaded = load(tmp_path / "m.npz")
    assert loaded.classes_.tolist() == clf.classes_.tolist()
    assert [type(c) for c in loaded.classes_.tolist()] == [type(c) for c in clf.classes_.tolist()]
    assert loaded.predict(DOCS).tolist() == clf.predict(DOCS).tolist()
    np.testing.assert_array_equal(loaded.predict_proba(DOCS), clf.predict_proba(DOCS))
    assert loaded.score(DOCS, y) == clf.score(DOCS, y)


def test_a_file_spelling_its_classes_as_before_still_loads(tmp_path):
    """Before labels were keyed by value, y = [1.0, 0, ...] wrote the classes 0 and 1.0 and
    the task labels '0' and '1.0': such a file loads, its classes matched by value."""
    y = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    clf = DocumentClassifier(learner="perceptron", random_state=0).fit(DOCS, y)
    clf.save(tmp_path / "m.npz")

    def old_spelling(meta):
        meta["extra"]["classes"] = [0, 1.0]
        meta["task_state"]["labels"] = ["0", "1.0"]

    _edit_metadata(tmp_path / "m.npz", tmp_path / "old.npz", old_spelling)
    loaded = load(tmp_path / "old.npz")
    assert loaded.classes_.tolist() == [0.0, 1.0]
    assert loaded.predict(DOCS).tolist() == y


@pytest.mark.parametrize("classes, needle", [
    ([1, 1.0], r"list a label twice \(labels are compared by value"),
    ([0, "1"], r"mixes strings and numbers"),
    ([0, 2], r"do not match its task's labels"),
])
def test_edited_classes_are_refused(classes, needle, tmp_path):
    clf = DocumentClassifier(learner="perceptron", random_state=0).fit(DOCS, [1, 0, 1, 0, 1, 0])
    clf.save(tmp_path / "m.npz")
    _edit_metadata(tmp_path / "m.npz", tmp_path / "e.npz",
                   lambda meta: meta["extra"].__setitem__("classes", classes))
    with pytest.raises(ModelFormatError, match=needle + r".*the file is damaged or edited"):
        load(tmp_path / "e.npz")


@pytest.mark.parametrize("classes, y, shown", [
    ([1, 1.0, 0], [1, 0, 1, 0, 1, 0], "1.0 (as 1 and 1.0"),
    ([True, 0, 1], [1, 0, 1, 0, 1, 0], "1 (as True and 1"),
    (["a", "b", "a"], ["a", "b"] * 3, "'a' (at classes[0] and classes[2]"),
])
def test_partial_fit_classes_listed_twice_by_value(classes, y, shown):
    clf = DocumentClassifier(learner="perceptron")
    with pytest.raises(ConfigError, match=r"classes lists a label twice: " + re.escape(shown)):
        clf.partial_fit(DOCS, y, classes=classes)
    assert getattr(clf, "learner_", None) is None


def test_partial_fit_classes_by_value():
    clf = DocumentClassifier(learner="perceptron", random_state=0)
    clf.partial_fit(DOCS, [1, 0, 1, 0, 1, 0], classes=[0, 1.0, 2])
    assert clf.classes_.tolist() == [0.0, 1.0, 2.0] and clf.task_.n_labels == 3
    clf.partial_fit(DOCS, [True, False, 1, 0, 1, 0], classes=[2, 1, 0])  # the same, by value
    with pytest.raises(ConfigError, match=r"classes=\['0', '1', '2'\] differs"):
        clf.partial_fit(DOCS, [1, 0, 1, 0, 1, 0], classes=["0", "1", "2"])
    with pytest.raises(UnseenLabelError, match=r"y\[0\] is '1', not one of the model's classes "
                                               r"\(0\.0, 1\.0, 2\.0\)"):
        clf.partial_fit(DOCS, ["1", 0, 1, 0, 1, 0])
    assert clf.predict(DOCS).dtype.kind == "f"


def _translit():
    X = [("london", "לונדון"), ("paris", "פריס"), ("rome", "רומא"), ("berlin", "ברלין"),
         ("london", "פריס"), ("paris", "רומא")]
    return X, dict(task="translit", learner="latent-pa", random_state=0)


def test_binary_classes_by_value(tmp_path):
    X, params = _translit()
    clf = PairClassifier(**params).fit(X, [1, True, 1, 1, 0, False])
    assert clf.classes_.tolist() == [0, 1] and clf.classes_.dtype.kind == "i"
    floats = PairClassifier(**params).fit(X, [1.0, True, 1, 1, 0, False])
    assert floats.classes_.tolist() == [0.0, 1.0] and floats.classes_.dtype.kind == "f"
    assert set(clf.predict(X).tolist()) <= {0, 1}
    clf.save(tmp_path / "p.npz")
    loaded = load(tmp_path / "p.npz")
    assert loaded.classes_.tolist() == [0, 1] and loaded.classes_.dtype.kind == "i"
    assert loaded.predict(X).tolist() == clf.predict(X).tolist()
    with pytest.raises(ConfigError, match=r"lists a label twice: True \(as 1 and True"):
        PairClassifier(**params).partial_fit(X, [1, 1, 1, 1, 0, 0], classes=[1, True, 0])
    stream = PairClassifier(**params).partial_fit(X[:4], [1, 1, 1, 1], classes=[0.0, 1.0])
    assert stream.classes_.tolist() == [0.0, 1.0]
    stream.partial_fit(X[4:], [False, False])  # False is the class 0.0


def test_tags_stay_strings():
    with pytest.raises(InputError, match=r"y\[0\]\[0\]: tag must be a string, got int 1"):
        Tagger(task="citations").fit([["a", "b"], ["c"]], [[1, 1.0], [True]])


# --------------------------------------------------------------------------------------
# 2. partial_fit's classes checked as fit checks the tags of y
# --------------------------------------------------------------------------------------
def test_declared_chunk_tags_are_checked_as_y_is():
    X = [[("the", "DT")]]
    with pytest.raises(InputError) as fit_err:
        Chunker(learner="perceptron").fit(X, [["X-NP"]])
    chunker = Chunker(learner="perceptron")
    with pytest.raises(InputError) as err:
        chunker.partial_fit(X, [["B-NP"]], classes=["B-NP", "X-NP", "O"])
    assert str(err.value).startswith("classes[1]: chunk tag 'X-NP' is not ")
    # the same check, the same words as fit's for a tag of y
    assert str(err.value).split(": ", 1)[1] == str(fit_err.value).split(": ", 1)[1]
    assert getattr(chunker, "learner_", None) is None


def test_declared_upos_tags_are_checked_as_y_is():
    with pytest.raises(InputError) as fit_err:
        Tagger(learner="perceptron").fit([["the"]], [["XYZ"]])
    tagger = Tagger(learner="perceptron")
    with pytest.raises(InputError) as err:
        tagger.partial_fit([["the"]], [["DET"]], classes=["DET", "XYZ"])
    assert str(err.value).startswith("classes[1]: tag 'XYZ' is not UPOS")
    assert str(err.value).split(": ", 1)[1] == str(fit_err.value).split(": ", 1)[1]
    assert getattr(tagger, "learner_", None) is None
    with pytest.raises(InputError, match=r"classes\[0\]: tag must be a string, got int 1"):
        Tagger(learner="perceptron").partial_fit([["the"]], [["DET"]], classes=[1, "DET"])
    with pytest.raises(InputError, match=r"classes\[1\]: '_' marks a missing tag"):
        Tagger(learner="perceptron").partial_fit([["the"]], [["DET"]], classes=["DET", "_"])
    # feature dicts take any tag set in y, and so in classes
    ok = Tagger(learner="perceptron").partial_fit([[{"w": "the"}]], [["DET"]],
                                                  classes=["DET", "XYZ"])
    assert ok.classes_ == ["DET", "XYZ"]
    # a tag set of the right form is taken
    assert Tagger(learner="perceptron").partial_fit(
        [["the"]], [["DET"]], classes=["DET", "NOUN"]).classes_ == ["DET", "NOUN"]


def test_declared_citation_labels_and_document_classes_are_checked():
    with pytest.raises(InputError, match=r"classes\[1\]: field label"):
        Tagger(task="citations", learner="perceptron").partial_fit(
            [["A."]], [["author"]], classes=["author", "1st"])
    with pytest.raises(InputError, match=r"classes\[2\]: the label is empty or blank"):
        DocumentClassifier(learner="perceptron").partial_fit(
            DOCS[:2], ["a", "b"], classes=["a", "b", "  "])


# --------------------------------------------------------------------------------------
# 3. numbers in no accepted form
# --------------------------------------------------------------------------------------
RAGGED = np.array([[1.0, 2.0], [3.0]], dtype=object)
FORMS = r"give each sentence as a list of {}s, or as one float array of shape \(n_tokens, n_features\)"


@pytest.mark.parametrize("make, y, token", [
    (lambda: Tagger(), [["NOUN", "VERB"], ["NOUN"]], "word"),
    (lambda: Tagger(task="citations"), [["title", "title"], ["author"]], "token"),
    (lambda: Chunker(), [["B-NP", "I-NP"], ["O"]], r"\(word, POS\) pair"),
    (lambda: Estimator(task="sequence"), [["a", "b"], ["a"]], "feature dict"),
])
def test_sequence_estimators_name_numbers(make, y, token):
    with pytest.raises(InputError) as err:
        make().fit(RAGGED, y)
    msg = str(err.value)
    assert msg.startswith("X[0]: is a list of numbers [1.0, 2.0], a sequence of numbers and not")
    assert re.search(FORMS.format(token), msg), msg
    assert "X is an object array of shape (2,)" in msg
    assert "must be a string" not in msg and "expected a (word, POS) pair" not in msg
    with pytest.raises(InputError, match=r"X\[0\]: is a list of numbers \[1\.0, 2\.0\].*X is a "
                                         r"ragged list of numbers: its rows have 1, 2 numbers"):
        make().fit([[1.0, 2.0], [3.0]], y)
    with pytest.raises(InputError, match=r"X\[0\]: is a 1-D array of shape \(2,\), a sequence "
                                         r"of numbers.*reshape\(-1, 1\)"):
        make().fit([np.array([1.0, 2.0]), np.array([3.0])], y)


def test_number_rows_and_object_arrays_per_sentence():
    y = [["NOUN", "VERB"]]
    with pytest.raises(InputError, match=r"X\[0\]: is a list of number lists, .*\(np\.asarray"
                                         r"\(X\[0\], dtype=float\) is that array\)"):
        Tagger().fit([[[1.0, 2.0], [3.0, 4.0]]], y)
    with pytest.raises(InputError, match=r"X\[0\]: is a list of number lists of unequal lengths "
                                         r"\(1, 2\).*every token needs the same n_features"):
        Tagger().fit([[[1.0, 2.0], [3.0]]], y)
    with pytest.raises(InputError, match=r"X\[0\]: is an object array of numbers of shape "
                                         r"\(2, 2\).*X\[0\]\.astype\(float\)"):
        Tagger().fit([np.array([[1.0, 2.0], [3.0, 4.0]], dtype=object)], y)
    # the float array itself is a sentence
    Tagger(learner="perceptron").fit([np.array([[1.0, 2.0], [3.0, 4.0]])], y)


def test_parser_names_numbers():
    with pytest.raises(InputError, match=r"X\[0\]: is a list of numbers \[1\.0, 2\.0\], a sequence "
                                         r"of numbers and not \(word, POS\) pairs; .*\(tokens, "
                                         r"array\) pair"):
        DependencyParser().fit(RAGGED, [[0, 1], [0]])


def test_document_classifier_names_numbers():
    forms = (r"not a document text; give X as a list of document texts \(strings\), or as one "
             r"2-D numeric matrix")
    with pytest.raises(InputError, match=r"X\[0\]: is a list of numbers \[1\.0, 2\.0\], a sequence "
                                         r"of numbers and " + forms + r".*X is an object array"):
        DocumentClassifier().fit(RAGGED, ["a", "b"])
    with pytest.raises(InputError, match=forms + r".*X is a ragged list of numbers"):
        DocumentClassifier().fit([[1.0, 2.0], [3.0]], ["a", "b"])
    with pytest.raises(InputError, match=forms + r".*np\.asarray\(X, dtype=float\) is that "
                                                 r"matrix"):
        DocumentClassifier().fit([[1.0, 2.0], [3.0, 0.0]], ["a", "b"])
    clf = DocumentClassifier(learner="perceptron").fit(np.array([[1.0, 2.0], [3.0, 0.0]]),
                                                       ["a", "b"])
    assert clf.n_features_in_ == 2


# --------------------------------------------------------------------------------------
# 4. a model file's feature layout against its arrays
# --------------------------------------------------------------------------------------
def _numeric_tagger(tmp_path, pairs: bool, **params):
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(3, 4)) for _ in range(6)]
    if pairs:
        X = [(["a", "b", "c"], x) for x in X]
    tagger = Tagger(learner="perceptron", **params).fit(X, [["NOUN", "VERB", "NOUN"]] * 6)
    tagger.save(tmp_path / "m.npz")
    return tagger, X


def _set_kind(kind):
    return lambda meta: meta["task_state"].__setitem__("attributes", kind)


def test_arrays_model_edited_to_tokens_arrays_is_refused(tmp_path):
    tagger, X = _numeric_tagger(tmp_path, pairs=False)
    assert load(tmp_path / "m.npz").predict(X) == tagger.predict(X)  # the file as written
    _edit_metadata(tmp_path / "m.npz", tmp_path / "e.npz", _set_kind("tokens+arrays"))
    with pytest.raises(ModelFormatError, match=r"e\.npz: the model file says its task was "
                                               r"fitted on tokens \(attributes 'tokens\+arrays'"
                                               r"\).*index at min_count=1 is empty.*the file is "
                                               r"damaged or edited"):
        load(tmp_path / "e.npz")

    def also_min_count(meta):  # the task's min_count edited too: the index keeps its own
        _set_kind("tokens+arrays")(meta)
        meta["task_params"]["min_count"] = 50

    _edit_metadata(tmp_path / "m.npz", tmp_path / "e2.npz", also_min_count)
    with pytest.raises(ModelFormatError, match="the file is damaged or edited"):
        load(tmp_path / "e2.npz")
    _edit_metadata(tmp_path / "m.npz", tmp_path / "e3.npz", _set_kind("templates"))
    with pytest.raises(ModelFormatError, match="damaged or edited"):
        load(tmp_path / "e3.npz")


def test_tokens_arrays_model_edited_to_arrays_is_refused(tmp_path):
    tagger, X = _numeric_tagger(tmp_path, pairs=True)
    assert load(tmp_path / "m.npz").predict(X) == tagger.predict(X)
    _edit_metadata(tmp_path / "m.npz", tmp_path / "e.npz", _set_kind("arrays"))
    with pytest.raises(ModelFormatError, match=r"fitted on numeric arrays alone \(attributes "
                                               r"'arrays'\), but its attribute index holds \d+ "
                                               r"named attributes.*damaged or edited"):
        load(tmp_path / "e.npz")


def test_hashing_mismatch_is_refused(tmp_path):
    _numeric_tagger(tmp_path, pairs=False, feature_index="hashing", hash_bits=8)
    assert load(tmp_path / "m.npz").task_.attributes_ == "arrays"
    _edit_metadata(tmp_path / "m.npz", tmp_path / "e.npz", _set_kind("tokens+arrays"))
    with pytest.raises(ModelFormatError, match=r"feature_index='hashing', but its attribute "
                                               r"index is an exact index.*damaged or edited"):
        load(tmp_path / "e.npz")


def test_an_empty_index_of_a_high_min_count_still_loads(tmp_path):
    """A model of tokens whose min_count left no attribute is legitimate (its index says
    min_count=100): it loads."""
    tagger, X = _numeric_tagger(tmp_path, pairs=True, min_count=100)
    assert len(tagger.task_.attr_index_) == 0
    assert load(tmp_path / "m.npz").predict(X) == tagger.predict(X)
