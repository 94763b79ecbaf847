"""An estimator is its featurizer plus its learner: ``featurizer_`` is the fitted task's
featurizer, a scikit-learn transformer whose output is what ``learner_`` decodes."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError

from latentstruct import DocumentClassifier, Tagger

X = [["the", "cat", "sat"], ["a", "dog", "ran"], ["the", "dog", "sat"]]
Y = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]


def test_tagger_featurizer_is_the_tasks_and_gives_the_learners_numbers():
    tagger = Tagger(max_iter=3).fit(X, Y)
    f = tagger.featurizer_
    assert f is tagger.task_.featurizer_
    assert isinstance(f, TransformerMixin) and isinstance(f, BaseEstimator)
    assert f.get_params()["window"] == tagger.task_.window
    corpus = f.transform(X)  # word lists: the raw sentences the tagger takes
    scores = tagger.learner_.predict(corpus)
    assert tagger.task_.decode_predictions(scores) == tagger.predict(X)


def test_classifier_featurizer_and_the_not_fitted_error():
    docs = ["goals and matches", "rates and banks", "matches and goals again"]
    clf = DocumentClassifier(max_iter=3).fit(docs, ["sport", "money", "sport"])
    assert type(clf.featurizer_).__name__ == "DocumentFeaturizer"
    assert clf.featurizer_.classes_ == ["money", "sport"]
    with pytest.raises(NotFittedError, match="This Tagger instance is not fitted yet"):
        _ = Tagger().featurizer_
    assert np.isfinite(clf.learner_.coef_).all()
