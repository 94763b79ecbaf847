"""The named estimators' explicit signatures: the learners' common hyperparameters and every
option of their tasks as keyword-only parameters with real defaults (the values of the
class's default task and learner; left there with another pair, the pair's own default),
the learner's other options through ``**options``; scikit-learn's introspection and
``clone`` work on them."""

import inspect
import warnings

import pytest
from sklearn.base import clone

from latentstruct.estimators import (Chunker, DependencyParser, DocumentClassifier, Estimator,
                                     PairClassifier, Tagger)
from latentstruct.exceptions import ConfigError, ConvergenceWarning
from latentstruct.learners import LEARNERS
from latentstruct.tasks import TASKS

NAMED = [Tagger, Chunker, DependencyParser, DocumentClassifier, PairClassifier]
COMMON = ("C", "max_iter", "tol", "random_state", "n_jobs", "progress")


def _keywords(cls):
    return [n for n, p in inspect.signature(cls.__init__).parameters.items()
            if p.kind is p.KEYWORD_ONLY]


@pytest.mark.parametrize("cls", NAMED, ids=lambda c: c.__name__)
def test_each_named_estimator_spells_out_its_tasks_options(cls):
    params = inspect.signature(cls.__init__).parameters
    assert list(params)[:4] == ["self", "task", "learner", "pos_label"]
    assert not any(p.kind is p.VAR_POSITIONAL for p in params.values())
    keywords = _keywords(cls)
    # real defaults: the value of the class's default pair (of the first of its tasks that
    # has the option, for an option the default task lacks), which get_params shows
    fresh = cls().get_params()
    for k in keywords:
        default = params[k].default
        owner = next((t for t in cls._tasks if k in TASKS[t].param_defaults()), None)
        if owner is not None and owner != cls._default_task:
            assert default == TASKS[owner].param_defaults()[k], (cls.__name__, k)
        else:
            assert fresh[k] == default and type(fresh[k]) is type(default), (cls.__name__, k)
    task_options = {k for t in cls._tasks for k in TASKS[t].param_defaults()}
    # all of them, and nothing else: a task option added or removed is one of these keywords
    # to add to (or drop from) the class's __init__ in latentstruct/estimators/__init__.py
    assert sorted(set(COMMON) | task_options) == sorted(keywords), cls.__name__
    assert cls._explicit == tuple(keywords)
    # scikit-learn's own introspection accepts the signature (no varargs)
    assert set(keywords) <= set(cls._get_param_names())
    learner_options = {k for lc in LEARNERS.values() for k in lc().get_params(deep=False)}
    assert set(COMMON) <= learner_options


def test_a_keyword_left_at_default_is_the_pairs_own_default():
    est = Tagger()
    assert est.C == 0.1 and est.get_params()["C"] == 0.1
    assert est.get_params()["tol"] == 0.05  # pos's default for ssvm, not the learner's 0.01
    assert Tagger(task="citations").get_params()["window"] == 1  # citations' own window
    assert Tagger(task="citations").get_params()["tag_column"] == "upos"  # pos's only
    assert DependencyParser().get_params()["C"] == 0.001
    assert PairClassifier(task="translit").get_params()["n_train"] == 250
    assert repr(Tagger()) == "Tagger()" and repr(Tagger(C=0.5)) == "Tagger(C=0.5)"
    perceptron = Tagger(learner="perceptron")
    assert perceptron.get_params()["C"] == 0.1 and perceptron.get_params()["max_iter"] == 10
    with pytest.raises(ConfigError, match="unknown parameter 'C'"):
        Tagger(learner="perceptron", C=1.0).fit([["a"]], [["X"]])
    with warnings.catch_warnings():  # C left at its default: not the perceptron's, ignored
        warnings.simplefilter("ignore", ConvergenceWarning)
        Tagger(learner="perceptron", C=0.1, max_iter=1).fit([["a", "b"]], [["X", "NOUN"]])
    # the one value another pair cannot be given by a named keyword: the class's default,
    # which stands for the pair's own (Estimator(task=..., learner=...) takes it)
    assert Tagger(learner="perceptron", max_iter=50).get_params()["max_iter"] == 10
    generic = Estimator(task="pos", learner="perceptron", max_iter=50)
    assert generic.get_params()["max_iter"] == 50


def test_none_is_a_value_not_the_default():
    """``random_state=None`` reaches the learner as None (fresh entropy), as before."""
    X, y = [["the", "cat"], ["a", "dog"]], [["DET", "NOUN"], ["DET", "NOUN"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = Tagger(learner="perceptron", random_state=None, max_iter=1).fit(X, y)
    assert est.learner_.random_state is None
    assert Tagger(random_state=None).get_params()["random_state"] is None


@pytest.mark.parametrize("cls", NAMED, ids=lambda c: c.__name__)
def test_clone_round_trips(cls):
    est = cls(max_iter=3)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin.max_iter == 3
    assert repr(twin) == repr(est) == f"{cls.__name__}(max_iter=3)"


def test_set_params_back_to_default_and_other_options_by_name():
    est = Tagger(C=0.5)
    est.set_params(C=0.1)
    assert est.get_params()["C"] == 0.1 and repr(est) == "Tagger()"
    crf = Tagger(learner="crf", c2=0.5)  # a learner's own option: through **options
    assert crf.get_params()["c2"] == 0.5 and repr(crf) == "Tagger(learner='crf', c2=0.5)"
    assert clone(crf).get_params()["c2"] == 0.5
    assert Estimator._explicit == ()  # the generic class names no option
