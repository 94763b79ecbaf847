"""``ModelStructure`` keeps the joint features it computed (the decoded structures' for
the call that decoded them, the gold pairs' for its life): what it serves from them must
equal what the model computes, whatever the learner passes next."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from latentstruct.data.sparse import SparseVector
from latentstruct.pystruct.learners import FrankWolfeSSVM
from latentstruct.pystruct.learners.structure import ModelStructure
from latentstruct.pystruct.models import ChainCRF, MultiClassClf


def _chain(seed=0, n=6, n_states=3, n_features=4):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(int(rng.integers(2, 6)), n_features)) for _ in range(n)]
    Y = [rng.integers(0, n_states, size=len(x)).astype(np.intp) for x in X]
    model = ChainCRF(n_states=n_states, n_features=n_features)
    model.joint_feature(X[0], Y[0])  # sizes the model, as a fit with initialize=False does
    return model, X, Y, rng.normal(size=model.size_joint_feature)


def _plain(model, x, y_a, y_b):
    """The difference as the model computes it, no cache."""
    return SparseVector.from_dense(-np.asarray(model.joint_feature(x, y_b), dtype=float)
                                   + model.joint_feature(x, y_a))


def _same(u, v):
    return np.array_equal(u.indices, v.indices) and np.array_equal(u.values, v.values)


def test_cached_differences_losses_and_scores_equal_the_models():
    model, X, Y, w = _chain()
    s = ModelStructure(model, relaxed=False)
    for _ in range(3):  # the gold cache is warm after the first pass
        results = s.argmax_results(X, w, Y)
        Y_hat = [r.structure for r in results]
        for x, y, r in zip(X, Y, results):
            score = np.dot(w, model.joint_feature(x, r.structure)) + model.loss(y, r.structure)
            assert r.score == float(score)
        assert np.array_equal(s.loss_batch(Y, Y_hat),
                              [model.loss(y, h) for y, h in zip(Y, Y_hat)])
        rows = s.joint_feature_differences(X, Y, Y_hat)
        for k, (x, y, h) in enumerate(zip(X, Y, Y_hat)):
            assert _same(rows[k], _plain(model, x, y, h))
        w = w + 0.3


def test_targets_changed_in_place_or_replaced_are_not_served_stale():
    model, X, Y, w = _chain(1)
    s = ModelStructure(model, relaxed=False)
    h = np.zeros_like(Y[0])
    assert _same(s.joint_feature_difference(X[0], Y[0], h), _plain(model, X[0], Y[0], h))
    Y[0][:] = (Y[0] + 1) % model.n_states  # the same array, new labels
    assert _same(s.joint_feature_difference(X[0], Y[0], h), _plain(model, X[0], Y[0], h))
    other = (Y[0] + 1) % model.n_states  # a new array for the same example
    assert _same(s.joint_feature_difference(X[0], other, h), _plain(model, X[0], other, h))
    x_copy = X[0].copy()  # another example object
    assert _same(s.joint_feature_difference(x_copy, other, h), _plain(model, x_copy, other, h))


def test_decoded_memo_is_per_call_and_checked_by_identity():
    model, X, Y, w = _chain(2)
    s = ModelStructure(model, relaxed=False)
    first = [r.structure for r in s.argmax_results(X, w, Y)]
    s.argmax_results(X, -w, Y)  # a later call: the first call's features are dropped
    for x, y, h in zip(X, Y, first):
        assert _same(s.joint_feature_difference(x, y, h), _plain(model, x, y, h))
    # an equal labelling that is another object, and another example's x
    h = [r.structure for r in s.argmax_results(X[:1], w, Y[:1])][0]
    assert _same(s.joint_feature_difference(X[0], Y[0], h.copy()), _plain(model, X[0], Y[0], h))
    assert _same(s.joint_feature_difference(X[0].copy(), Y[0], h), _plain(model, X[0], Y[0], h))


def test_pickling_drops_the_caches():
    model, X, Y, w = _chain(3)
    s = ModelStructure(model, relaxed=False)
    s.argmax_results(X, w, Y)
    s.joint_feature_differences(X, Y, [np.zeros_like(y) for y in Y])
    assert s._gold
    t = pickle.loads(pickle.dumps(s))
    assert t._gold == {} and t._gold_floats == 0 and not hasattr(t._local, "decoded")
    assert _same(t.joint_feature_difference(X[0], Y[0], np.zeros_like(Y[0])),
                 _plain(model, X[0], Y[0], np.zeros_like(Y[0])))


def test_rescale_c_bypasses_the_caches():
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(8, 3)), rng.integers(0, 3, size=8)
    model = MultiClassClf(n_features=3, n_classes=3, class_weight=[1.0, 2.0, 0.5],
                          rescale_C=True)
    s = ModelStructure(model, relaxed=False)
    s.argmax_results(list(X), np.ones(9), list(Y))
    for x, y in zip(X, Y):
        want = SparseVector.from_dense(-model.joint_feature(x, 0, y) + model.joint_feature(x, y, y))
        assert _same(s.joint_feature_difference(x, y, 0), want)
    assert s._gold == {}


@pytest.mark.filterwarnings("ignore::latentstruct.exceptions.ConvergenceWarning")
def test_refit_on_other_data_matches_a_fresh_learner():
    model, X, Y, _ = _chain(5, n=8)
    _, X2, Y2, _ = _chain(6, n=8)
    learner = FrankWolfeSSVM(model, C=0.5, max_iter=4, random_state=0)
    learner.fit(X, Y, initialize=False)
    learner.fit(X2, Y2, initialize=False)
    fresh = FrankWolfeSSVM(model, C=0.5, max_iter=4, random_state=0).fit(X2, Y2,
                                                                          initialize=False)
    assert np.array_equal(learner.w, fresh.w)
