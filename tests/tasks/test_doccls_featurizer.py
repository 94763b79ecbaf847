"""The ``doccls`` featurizer (:class:`DocumentFeaturizer`) as a scikit-learn transformer, and
the task delegating to it: the same rows and labels as the task gives, rebuilt from a model
file's state, cloned and pickled, each kind refused where the other was fitted."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import TfidfVectorizer

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.featurizers import ClassEncoder
from latentstruct.tasks.doccls import DocumentClassificationTask, DocumentFeaturizer, DocumentMatrix
from latentstruct.tasks.doccls.featurizer import TOKEN_PATTERN
from latentstruct.tasks.validation import UnseenLabelError

TEXTS = ["The cat sat on the mat", "A dog sat", "Dogs chase cats", "the dog and the cat",
         "Rates rose again", "markets fell on rates"]
LABELS = ["pets", "pets", "pets", "pets", "money", "money"]


def test_fit_learns_vocabulary_idf_and_labels():
    f = DocumentFeaturizer(features="tfidf").fit(TEXTS, LABELS)
    ref = TfidfVectorizer(token_pattern=TOKEN_PATTERN).fit(TEXTS)
    assert f.vocab_.names == ref.get_feature_names_out().tolist()
    np.testing.assert_allclose(f.idf_, ref.idf_, rtol=0, atol=1e-12)
    assert f.classes_ == ["money", "pets"] and isinstance(f.label_encoder_, ClassEncoder)
    assert (f.input_kind_, f.n_columns_, f.n_features_out_) == ("text", None, len(ref.idf_))
    rows = f.transform(TEXTS).rows.toarray()
    np.testing.assert_allclose(rows, ref.transform(TEXTS).toarray(), rtol=0, atol=1e-12)


def test_binary_tokens_drop_unknown_words_and_respect_min_count():
    f = DocumentFeaturizer(min_count=2).fit(TEXTS, LABELS)
    assert f.vocab_.names == ["cat", "dog", "on", "rates", "sat", "the"]
    assert f.idf_.shape == (0,)
    row = f.transform(["the the zebra dog"]).rows.toarray()[0]
    assert row.tolist() == [0, 1, 0, 0, 0, 1]  # binary: "the" twice is 1, "zebra" dropped


def test_the_task_delegates_to_its_featurizer():
    task = DocumentClassificationTask(features="tfidf", strip_headers=False)
    data = task.make_dataset(TEXTS, LABELS)
    task.fit(data)
    f = task.featurizer_
    assert isinstance(f, DocumentFeaturizer) and f.get_params()["features"] == "tfidf"
    assert task.labels_ == f.classes_ and task.vocab_ is f.vocab_ and task.idf_ is f.idf_
    alone = DocumentFeaturizer(features="tfidf").fit(data.records, data.targets)
    a, b = task.featurize(data).rows, alone.transform(data.records).rows
    assert (a != b).nnz == 0
    assert [y.tolist() for y in task.encode_targets(["pets", "money"])] == [[1], [0]]
    assert task.decode_targets([np.array([0]), 1, np.array([-1])]) == ["money", "pets", None]


def test_unseen_label_keeps_its_message():
    f = DocumentFeaturizer().fit(TEXTS, LABELS)
    with pytest.raises(UnseenLabelError, match=r"'tech' at y\[1\] \(document 1\).*money, pets"):
        f.encode_targets(["pets", "tech"])
    with pytest.raises(InputError, match="document 0 has no label"):
        f.encode_targets([None])


def test_declared_classes_and_the_one_label_refusal():
    f = DocumentFeaturizer(classes=["tech"]).fit(TEXTS, LABELS)
    assert f.classes_ == ["money", "pets", "tech"]
    with pytest.raises(InputError, match="only one label, 'pets'"):
        DocumentFeaturizer().fit(TEXTS[:4], LABELS[:4])
    with pytest.raises(InputError, match="has no label"):
        DocumentFeaturizer().fit(TEXTS[:2], ["pets", None])


def test_without_targets_it_featurises_but_has_no_labels():
    f = DocumentFeaturizer().fit(TEXTS)
    assert f.transform(["cat"]).shape == (1, f.n_features_out_)
    with pytest.raises(NotFittedError, match="no labels"):
        f.encode_targets(["pets"])


def test_a_matrix_is_taken_as_it_is_and_the_kinds_are_kept_apart():
    M = DocumentMatrix.from_csr(sp.random(6, 5, density=0.5, random_state=0, format="csr"))
    f = DocumentFeaturizer().fit(M, LABELS)
    assert (f.input_kind_, f.n_columns_, f.vocab_, f.n_features_out_) == ("matrix", 5, None, 5)
    assert f.transform(M) is M
    with pytest.raises(InputError, match="got document texts"):
        f.transform(TEXTS)
    with pytest.raises(InputError, match="got a numeric matrix"):
        DocumentFeaturizer().fit(TEXTS, LABELS).transform(M)
    with pytest.raises(ConfigError, match="min_count=2 says how texts become features"):
        DocumentFeaturizer(min_count=2).fit(M, LABELS)


def test_parameters_are_checked_on_fit_and_fitted_checked_on_transform():
    with pytest.raises(ConfigError, match="features"):
        DocumentFeaturizer(features="bigrams").fit(TEXTS, LABELS)
    with pytest.raises(NotFittedError, match="DocumentFeaturizer"):
        DocumentFeaturizer().transform(TEXTS)


@pytest.mark.parametrize("features", ["tokens", "tfidf"])
def test_rebuilt_from_the_model_state_it_featurises_the_same(features):
    task = DocumentClassificationTask(features=features, strip_headers=True)
    data = task.make_dataset([t + "\n\n" + t for t in TEXTS], LABELS)
    task.fit(data)
    state, arrays = task.get_state()
    back = DocumentClassificationTask.from_state(task.get_params(), state, arrays)
    assert isinstance(back.featurizer_, DocumentFeaturizer)
    assert back.featurizer_.classes_ == task.labels_
    assert (back.featurize(data).rows != task.featurize(data).rows).nnz == 0


def test_clone_and_pickle():
    f = DocumentFeaturizer(features="tfidf", min_count=2).fit(TEXTS, LABELS)
    fresh = clone(f)
    assert fresh.get_params() == f.get_params() and not hasattr(fresh, "vocab_")
    task = DocumentClassificationTask().fit(DocumentClassificationTask().make_dataset(TEXTS,
                                                                                       LABELS))
    data = task.make_dataset(TEXTS)
    before = task.featurize(data).rows  # builds the cached vectorizer
    copy = pickle.loads(pickle.dumps(task))
    assert copy.labels_ == task.labels_ and (copy.featurize(data).rows != before).nnz == 0
    assert copy.encode_targets(["money"])[0].tolist() == [0]
