"""scikit-learn's own estimator checks on the estimators.

``DocumentClassifier`` takes a numeric matrix, as a scikit-learn classifier does: it runs
every check of ``sklearn.utils.estimator_checks`` (``parametrize_with_checks``), the two
that cannot apply marked as expected failures with the reason.  The sequence estimators
(``Tagger``, ``Chunker``, ``DependencyParser``) take lists of sentences, not a matrix, so the
checks that fit them on random matrices do not apply; they run the checks of the estimator
API: clone, get/set params, real default parameters, nothing but parameters set in
``__init__``, not-fitted errors, repr and tags, and pickling on their own data.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import estimator_checks as ec
from sklearn.utils.estimator_checks import parametrize_with_checks

from latentstruct import Chunker, DependencyParser, DocumentClassifier, Tagger

#: checks of scikit-learn that cannot apply to DocumentClassifier, and why
DOCUMENT_CLASSIFIER_EXPECTED_FAILURES = {
    "check_classifiers_train": (
        "it also fits on X.tolist(), a list of number lists, which DocumentClassifier refuses "
        "by design (X is texts or one numeric matrix; the error names np.asarray(X, "
        "dtype=float), tests/test_labels_by_value.py); on the arrays it passes"),
    "check_classifiers_regression_target": (
        "class labels are compared by value and may be floats (0.5 and 1.5 are two classes, "
        "as a model file stores them), so a continuous target is many classes, not refused"),
}


def _document_classifier_failures(estimator):
    return DOCUMENT_CLASSIFIER_EXPECTED_FAILURES


@parametrize_with_checks([DocumentClassifier(max_iter=5)],
                         expected_failed_checks=_document_classifier_failures)
def test_document_classifier_passes_scikit_learns_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter=5: ConvergenceWarning on the random data
        check(estimator)


# --- the sequence estimators ----------------------------------------------------------
SEQUENCE_ESTIMATORS = [Tagger(max_iter=3), Chunker(max_iter=3),
                       DependencyParser(max_iter=3, n_jobs=1)]
#: scikit-learn's checks of the estimator API, which need no fit on a random matrix
API_CHECKS = [
    ec.check_estimator_cloneable,
    ec.check_estimator_repr,
    ec.check_no_attributes_set_in_init,
    ec.check_get_params_invariance,
    ec.check_set_params,
    ec.check_parameters_default_constructible,
    ec.check_do_not_raise_errors_in_init_or_set_params,
    ec.check_estimators_unfitted,
    ec.check_valid_tag_types,
    ec.check_estimator_tags_renamed,
    ec.check_mixin_order,
]
DATA = {
    "Tagger": ([["The", "cat", "sat"], ["A", "dog", "ran"], ["The", "dog", "sat"]],
               [["DET", "NOUN", "VERB"]] * 3),
    "Chunker": ([[("He", "PRP"), ("ran", "VBD")], [("The", "DT"), ("dog", "NN")]],
                [["B-NP", "B-VP"], ["B-NP", "I-NP"]]),
    "DependencyParser": ([[("Dogs", "NOUN"), ("bark", "VERB")],
                          [("Cats", "NOUN"), ("sleep", "VERB"), ("now", "ADV")]],
                         [[2, 0], [2, 0, 2]]),
}


def _name(est) -> str:
    return type(est).__name__


@pytest.mark.parametrize("estimator", SEQUENCE_ESTIMATORS, ids=_name)
@pytest.mark.parametrize("check", API_CHECKS, ids=lambda c: c.__name__)
def test_sequence_estimators_pass_the_api_checks(estimator, check):
    check(_name(estimator), estimator)


def _fit(estimator):
    X, y = DATA[_name(estimator)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator).fit(X, y)


@pytest.mark.parametrize("estimator", SEQUENCE_ESTIMATORS, ids=_name)
def test_sequence_estimators_pickle_and_clone_fitted(estimator):
    X, _ = DATA[_name(estimator)]
    fitted = _fit(estimator)
    back = pickle.loads(pickle.dumps(fitted))
    assert back.predict(X) == fitted.predict(X)
    np.testing.assert_array_equal(back.learner_.coef_, fitted.learner_.coef_)
    twin = clone(fitted)  # parameters only: unfitted, the same get_params
    assert twin.get_params() == fitted.get_params()
    with pytest.raises(NotFittedError, match=f"This {_name(estimator)} instance is not fitted"):
        twin.predict(X)
    # fitting the twin gives the same model (the parameters are all there is)
    np.testing.assert_array_equal(_fit(twin).learner_.coef_, fitted.learner_.coef_)


@pytest.mark.parametrize("estimator", SEQUENCE_ESTIMATORS, ids=_name)
def test_sequence_estimators_fresh_get_params_are_the_signature_defaults(estimator):
    import inspect

    cls = type(estimator)
    params = cls().get_params()
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if p.kind is p.KEYWORD_ONLY:
            assert params[name] == p.default, (cls.__name__, name)


def test_check_is_fitted_is_one_rule_for_every_object():
    from latentstruct.exceptions import check_is_fitted
    from latentstruct.featurizers import Vocabulary

    vocabulary = Vocabulary()
    with pytest.raises(NotFittedError, match="This Vocabulary instance is not fitted yet"):
        check_is_fitted(vocabulary)  # its __sklearn_is_fitted__
    check_is_fitted(vocabulary.fit([["a"]]))
    with pytest.raises(NotFittedError, match="it has no labels. Call fit"):
        check_is_fitted(vocabulary, "classes_", why="it has no labels", fix="Call fit.")
    # scikit-learn's own check_is_fitted asks the same question
    from sklearn.utils.validation import check_is_fitted as sklearn_check

    sklearn_check(vocabulary)
    with pytest.raises(NotFittedError):
        sklearn_check(Tagger())
    # the same rule as a query, for any object of the package (a task included)
    from latentstruct.exceptions import is_fitted
    from latentstruct.tasks import PosTask

    assert is_fitted(vocabulary) and not is_fitted(Vocabulary())
    assert not is_fitted(vocabulary, "classes_") and not is_fitted(Tagger())
    task = PosTask()
    assert not is_fitted(task)
    task.fit(task.make_dataset([["a", "b"]], [["NOUN", "VERB"]]))
    assert is_fitted(task) and is_fitted(task, "labels_")
    assert not hasattr(task, "is_fitted")  # one query, not a method of each class
    # the earlier form, the condition first, keeps working (code written against it)
    check_is_fitted(True, "This W instance")
    with pytest.raises(NotFittedError, match="This W instance is not fitted yet: no w"):
        check_is_fitted(False, "This W instance", why="no w")
