"""Learners see a narrow structure, never the task (issue 53).

Every registered learner is handed a *strict proxy* of its task's structure: an object that
lets through only the members of ``tasks.contracts.Structure`` and of the protocols of the
capabilities the learner declares it needs (the optional batch forms of ``BatchMarginals``
where the task has them), records each one used, and raises on anything else.  Each learner
then fits, predicts and scores.  A learner that reached for a member it did not declare (the
task's ``fit``, ``evaluate``, ``get_state``, a capability it does not require) fails here.

A structure written by hand (a few methods, no task) trains with the same learners through
``as_structure``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from latentstruct.data.sparse import SparseVector
from latentstruct.inference.result import DecodeResult
from latentstruct.learners import LCLR, LEARNERS, StructuredPerceptron, StructuredSVM
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.contracts import (CompletedStructure, alternatives, as_structure,
                                         structure_members)
from latentstruct.testing import make_bag_problem


class StrictProxy:
    """Only ``allowed`` members of ``inner``; each use recorded in ``used``."""

    def __init__(self, inner, allowed):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_allowed", frozenset(allowed))
        object.__setattr__(self, "used", set())

    def __getattr__(self, name):
        if name not in self._allowed:
            raise AssertionError(f"the learner touched {name!r}, which it did not declare")
        self.used.add(name)
        return getattr(self._inner, name)

    def __reduce__(self):  # worker processes get the structure itself
        return (lambda x: x, (self._inner,))


def allowed_for(learner_cls, structure) -> frozenset:
    """The base and the members of the capabilities the learner needs that ``structure``
    offers (a requirement with alternatives: those the structure has)."""
    needed = learner_cls.required_capabilities(learner_cls().get_params(deep=False))
    needed = {a for req in needed for a in alternatives(req)} | learner_cls.uses_if_offered
    caps = {a for a in needed if a in structure.capabilities}
    return structure_members(caps, has=lambda m: hasattr(structure, m))


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def chunk_problem(tiny_chunk_file):
    task = ChunkTask(window=0, affix_length=1)
    data = task.read(tiny_chunk_file)
    task.fit(data)
    return task, task.featurize(data), task.encode_targets(data.targets)


def rerank_problem():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "probabilistic"))
    from test_reranker import prepared, tiny

    return prepared(tiny(), domain="pos", graph="sibling", n_hidden=2, hash_bits=6)


def problem(name, tiny_chunk_file):
    if name == "hidden-reranker":
        return rerank_problem()
    cls = LEARNERS[name]
    needed = cls.required_capabilities(cls().get_params(deep=False))
    if any("latent-binary" in alternatives(req) for req in needed):
        return make_bag_problem()
    return chunk_problem(tiny_chunk_file)


FAST = {"max_iter": 2}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_learner_trains_on_a_strict_proxy_of_its_declared_structure(name, tiny_chunk_file):
    cls = LEARNERS[name]
    task, X, Y = problem(name, tiny_chunk_file)
    view = task.structure()
    proxy = StrictProxy(view, allowed_for(cls, view))
    params = {k: v for k, v in FAST.items() if k in cls().get_params()}
    learner = cls(structure=proxy, **params)
    if cls.uses_binary_examples:  # J-LIS: a few sentences as binary positives
        quiet(lambda: learner.fit(X, Y, X_binary=task.subset(X, [0, 1]), y_binary=[1, -1]))
    else:
        quiet(lambda: learner.fit(X, Y))
    predicted = learner.predict(X)
    assert len(predicted) == len(Y)
    assert np.isfinite(learner.score(X, Y))
    assert proxy.used  # it really went through the proxy
    assert {"n_features", "as_batch"} & proxy.used


def test_the_proxy_refuses_an_undeclared_member(tiny_chunk_file):
    task, X, Y = chunk_problem(tiny_chunk_file)
    proxy = StrictProxy(task.structure(), allowed_for(StructuredSVM, task.structure()))
    with pytest.raises(AssertionError, match="touched 'marginals'"):
        getattr(proxy, "marginals")  # noqa: B009 - the access is what is tested


def test_a_tasks_structure_shows_nothing_else(tiny_chunk_file):
    task, X, Y = chunk_problem(tiny_chunk_file)
    view = task.structure()
    assert as_structure(task).capabilities == view.capabilities
    assert view.identity.name == "chunk" and view.identity.kind == "ChunkTask"
    assert view.n_features == task.n_features
    for member in ("fit", "featurize", "read", "evaluate", "get_state", "encode_targets",
                   "set_params", "write_predictions"):
        with pytest.raises(AttributeError, match="not part of the structure a learner sees"):
            getattr(view, member)
    with pytest.raises(AttributeError, match="immutable"):
        view.n_features = 3
    assert set(view.capabilities) >= {"max-decodable", "marginalizable"}


# -- a structure written by hand -------------------------------------------------------------
class Choose:
    """Pick one row of a (k, d) matrix: the smallest structure a learner can train (no task,
    no base class): ``n_features``, ``argmax``, ``joint_feature``, ``loss``."""

    def __init__(self, d):
        self.n_features = d

    def joint_feature(self, x, y):
        return SparseVector(np.arange(self.n_features), np.asarray(x[int(y)], dtype=float))

    def argmax(self, x, w, y_true=None, *, random_state=None):
        scores = np.asarray(x) @ w + (0.0 if y_true is None else
                                      (np.arange(len(x)) != int(y_true)).astype(float))
        best = int(np.argmax(scores))
        return DecodeResult(best, float(scores[best]))

    def loss(self, y, y_hat):
        return float(int(y) != int(y_hat))


def choose_problem(n=60, k=4, d=5, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=d)
    mu *= 3.0 / np.linalg.norm(mu)  # separable, not trivially
    X, Y = [], []
    for _ in range(n):
        x = rng.normal(size=(k, d))
        y = int(rng.integers(k))
        x[y] += mu
        X.append(x)
        Y.append(y)
    return X, Y


@pytest.mark.parametrize("learner", [StructuredSVM(C=1.0, max_iter=20), StructuredPerceptron(max_iter=5)])
def test_a_hand_written_structure_trains(learner):
    X, Y = choose_problem()
    structure = Choose(5)
    s = as_structure(structure)
    assert isinstance(s, CompletedStructure) and s.capabilities == {"max-decodable"}
    learner.set_params(structure=structure)
    quiet(lambda: learner.fit(X, Y))
    accuracy = np.mean([p == y for p, y in zip(learner.predict(X), Y)])
    assert accuracy > 0.8  # chance is 0.25
    assert learner.score(X, Y) == pytest.approx(-(1 - accuracy))  # minus the mean loss


def test_a_hand_written_latent_structure_trains_lclr():
    task, X, y = make_bag_problem()

    class Bags:  # the bag task's latent part, written by hand
        n_features = task.n_features
        latent_argmax = staticmethod(task.latent_argmax)
        latent_feature = staticmethod(task.latent_feature)

    model = quiet(lambda: LCLR(Bags(), init="zeros", C=1.0).fit(X, y))
    assert np.mean(model.predict(X) == np.asarray(y)) > 0.8


def test_an_object_offering_nothing_is_refused_in_one_line():
    from latentstruct.exceptions import ConfigError

    with pytest.raises(ConfigError, match="offers no capability"):
        as_structure(object())
    with pytest.raises(ConfigError, match="needs a structure"):
        as_structure(None)


def test_a_tasks_structure_is_one_view_until_its_parameters_change():
    """``task.structure()`` is the same object while the task's parameters stay (a fit's
    shared blocks ship it once), its members are worked out once (a learner reaches them
    per example), and a parameter that may change after training (``set_params``) gives a
    new view for the new value."""
    import warnings

    from latentstruct import Chunker

    X = [[("He", "PRP"), ("runs", "VBZ")], [("A", "DT"), ("cat", "NN")]] * 4
    y = [["B-NP", "O"], ["B-NP", "I-NP"]] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        task = Chunker(max_iter=2).fit(X, y).task_
    view = task.structure()
    assert task.structure() is view
    assert view.identity.params == task.get_params()
    assert view.argmax.__func__ is type(task.structure_).argmax
    assert view.argmax.__self__ is task.structure_
    old = task.input_scheme
    task.set_params(input_scheme="iob2" if old != "iob2" else "iob1")
    other = task.structure()
    assert other is not view and other.identity.params["input_scheme"] == task.input_scheme
    assert view.identity.params["input_scheme"] == old  # the old view keeps what it was made for
