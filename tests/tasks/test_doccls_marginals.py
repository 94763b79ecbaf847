"""doccls is marginalizable: the crf learner trains multinomial logistic regression on it,
checked against enumeration (trivially, L classes), finite differences and scikit-learn."""

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.linear_model import LogisticRegression

from latentstruct import DocumentClassifier
from latentstruct.learners import CRF
from latentstruct.tasks import DocumentClassificationTask
from latentstruct.tasks.contracts import MARGINALIZABLE, missing_methods
from latentstruct.tasks.base import StructuredTask

TEXTS = ["goal match team won", "rates bank rose", "team lost match", "bank loan rates fell",
         "the election vote", "vote party won", "match goal late", "loan bank money",
         "party election poll", "won the match"]
LABELS = ["sport", "finance", "sport", "finance", "politics", "politics", "sport", "finance",
          "politics", "sport"]


@pytest.fixture
def docs():
    task = DocumentClassificationTask()
    data = task.make_dataset(TEXTS, LABELS)
    task.fit(data)
    return task, task.featurize(data), task.encode_targets(data.targets)


def test_capability_is_declared_and_implemented():
    assert MARGINALIZABLE in DocumentClassificationTask.capabilities
    assert missing_methods(DocumentClassificationTask, (StructuredTask,)) == {}


def test_loss_partition_and_gradient(docs):
    task, X, Y = docs
    rng = np.random.default_rng(0)
    w = rng.normal(size=task.n_features)
    total, grad = task.structure_.log_loss_batch(X, Y, w)
    ref = 0.0
    for i in range(len(X)):
        scores = [task.structure_.joint_feature(X[i], np.array([k])).dot(w) for k in range(task.n_labels)]
        assert task.structure_.log_partition(X[i], w) == pytest.approx(logsumexp(scores), rel=1e-12)
        ref += logsumexp(scores) - scores[int(Y[i][0])]
        np.testing.assert_allclose(task.structure_.marginals(X[i], w).node[0],
                                   np.exp(np.array(scores) - logsumexp(scores)), atol=1e-12)
    assert total == pytest.approx(ref, rel=1e-12)
    ref_grad = sum(task.structure_.expected_feature(X[i], w) - task.structure_.joint_feature(X[i], Y[i]).to_dense(
        task.n_features) for i in range(len(X)))
    np.testing.assert_allclose(grad, ref_grad, atol=1e-12)
    for _ in range(5):
        d = rng.normal(size=w.size)
        fp, _ = task.structure_.log_loss_batch(X, Y, w + 1e-6 * d)
        fm, _ = task.structure_.log_loss_batch(X, Y, w - 1e-6 * d)
        assert (fp - fm) / 2e-6 == pytest.approx(float(grad @ d), rel=1e-6)
    # an unseen gold class leaves its document free: it adds nothing
    free = [Y[0], np.array([-1])]
    f2, g2 = task.structure_.log_loss_batch(task.structure_.subset(X, [0, 1]), free, w)
    f1, g1 = task.structure_.log_loss_batch(task.structure_.subset(X, [0]), [Y[0]], w)
    assert f2 == pytest.approx(f1, rel=1e-12)
    np.testing.assert_allclose(g2, g1, atol=1e-12)


def test_crf_on_doccls_is_scikit_learns_logistic_regression(docs):
    task, X, Y = docs
    c2 = 0.5
    model = CRF(task, c2=c2, feature_set="all", max_iter=1000, delta=0.0).fit(X, Y)
    lr = LogisticRegression(C=1 / (2 * c2), fit_intercept=False, tol=1e-12, max_iter=10000)
    rows = X.rows.toarray()
    y = np.concatenate(Y)
    lr.fit(rows, y)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, lr.predict_proba(rows)[:, np.argsort(lr.classes_)],
                               atol=1e-5)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert [int(p[0]) for p in model.predict(X)] == list(proba.argmax(axis=1))


def test_document_classifier_predict_proba_follows_classes(tmp_path):
    clf = DocumentClassifier(learner="crf", c2=0.1).fit(TEXTS, LABELS)
    proba = clf.predict_proba(["bank rates", "match goal"])
    assert proba.shape == (2, 3) and list(clf.classes_) == sorted(set(LABELS))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert list(clf.classes_[proba.argmax(axis=1)]) == list(clf.predict(["bank rates", "match goal"]))
    assert list(clf.predict(["bank rates", "match goal"])) == ["finance", "sport"]
    with pytest.raises(AttributeError, match="learner='crf'"):
        DocumentClassifier(max_iter=3).fit(TEXTS, LABELS).predict_proba(TEXTS[:1])
