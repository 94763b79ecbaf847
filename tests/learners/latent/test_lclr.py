import warnings

import numpy as np
import pytest
from sklearn.svm import LinearSVC

from latentstruct.exceptions import ConfigError, ConvergenceWarning, NotFittedError
from latentstruct.learners import LCLR, TwoStage
from latentstruct.learners.latent.lclr import squared_hinge_objective
from latentstruct.testing import make_bag_problem


def primal(w, X, y, C):
    return 0.5 * w @ w + C * np.sum(np.maximum(0, 1 - y * (X @ w)) ** 2)


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_single_element_latent_space_equals_squared_hinge_svm(C):
    task, bags, y = make_bag_problem(n_examples=60, bag_size=1, random_state=3)
    m = LCLR(task, C=C, init="zeros", dcd_tol=1e-10, dcd_max_iter=100000, tol=1e-12).fit(bags, y)
    X = np.array([b[0] for b in bags])
    ref = LinearSVC(C=C, loss="squared_hinge", dual=True, fit_intercept=False, tol=1e-10,
                    max_iter=1_000_000).fit(X, y)
    assert primal(m.coef_, X, y, C) == pytest.approx(primal(ref.coef_.ravel(), X, y, C), rel=1e-6)
    np.testing.assert_allclose(m.coef_, ref.coef_.ravel(), atol=1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_objective_never_increases(seed):
    task, X, y = make_bag_problem(n_examples=50, bag_size=4, random_state=seed)
    m = LCLR(task, C=1.0, init="zeros", dcd_tol=1e-9, dcd_max_iter=100000, tol=1e-12,
             max_iter=30).fit(X, y)
    curve = np.array(m.objective_curve_)
    assert len(curve) >= 3
    assert np.all(np.diff(curve) <= 1e-9 * curve[:-1])
    # the recorded objective is Eq. (3) at the returned weights
    assert curve[-1] == pytest.approx(squared_hinge_objective(m.coef_, m.decision_function(X), y, 1.0))


def test_cache_grows_monotonically_and_is_reused():
    task, X, y = make_bag_problem(n_examples=60, bag_size=4, random_state=1)
    m = LCLR(task, C=1.0, init="zeros", max_iter=20).fit(X, y)
    sizes = np.array(m.cache_size_curve_)
    assert np.all(np.diff(sizes) >= 0)
    assert sizes[-1] > 0 and sizes[-1] <= (y < 0).sum() * 4
    assert m.n_cache_hits_ > 0


def test_lclr_beats_two_stage_when_the_heuristic_is_poor():
    task, X, y = make_bag_problem(n_examples=200, bag_size=4, random_state=7)
    Xt, yt = X[100:], y[100:]
    two = TwoStage(task, C=1.0).fit(X[:100], y[:100])
    lclr = LCLR(task, C=1.0, max_iter=30).fit(X[:100], y[:100])
    assert lclr.score(Xt, yt) > two.score(Xt, yt) + 0.05


def test_warm_start_from_coef_init():
    task, X, y = make_bag_problem(random_state=2)
    w0 = np.ones(task.n_features)
    m = LCLR(task, coef_init=w0, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(X, y)
    assert m.objective_curve_[0] == pytest.approx(
        squared_hinge_objective(w0, np.array([max(b @ w0) for b in X]), y, 1.0))
    with pytest.raises(ConfigError, match="coef_init must have shape"):
        LCLR(task, coef_init=np.ones(2)).fit(X, y)


def test_max_iter_one_warns_and_api():
    task, X, y = make_bag_problem(random_state=4)
    with pytest.warns(ConvergenceWarning):
        m = LCLR(task, max_iter=1).fit(X, y)
    assert m.n_iter_ == 1
    assert set(np.unique(m.predict(X))) <= {-1, 1}
    h = m.latent_argmax(X)
    assert all(0 <= hi < 3 for hi in h)
    with pytest.raises(NotFittedError):
        LCLR(task).predict(X)


@pytest.mark.parametrize("bad, match", [({"C": -1.0}, "'C' parameter"), ({"init": "x"}, "'init' parameter")])
def test_invalid_parameters(bad, match):
    task, X, y = make_bag_problem(random_state=5)
    with pytest.raises(ConfigError, match=match):
        LCLR(task, **bad).fit(X, y)


def test_labels_must_be_pm1():
    task, X, y = make_bag_problem(random_state=5)
    with pytest.raises(ConfigError, match="labels must be -1 or \\+1"):
        LCLR(task).fit(X, np.where(y > 0, 1, 0))


def test_objective_pass_results_are_reused_without_changing_the_model():
    """The objective's pass over X at w serves the next latent completion and first
    negatives' decode at that w, and takes the negatives of the cutting plane's last round:
    fewer decodes, the same model and curve as a task whose own decision_batch (a
    score-only kernel, here the same numbers) turns the reuse off."""
    task, X, y = make_bag_problem(n_examples=60, bag_size=4, random_state=5)
    calls = {"decodes": 0}
    base_cls = type(task)

    class Counting(base_cls):
        def latent_argmax(self, x, w, *, random_state=None):
            calls["decodes"] += 1
            return super().latent_argmax(x, w, random_state=random_state)

    class OwnDecisions(Counting):
        def decision_batch(self, X, w):
            return np.array([self.latent_argmax(x, w).score for x in X], dtype=np.float64)

    fits = {}
    for cls in (Counting, OwnDecisions):
        t = cls.__new__(cls)
        t.__dict__.update(task.__dict__)
        calls["decodes"] = 0
        m = LCLR(t, C=1.0, init="zeros", max_iter=15).fit(X, y)
        fits[cls.__name__] = (m, calls["decodes"])
    (reused, n_reused), (plain, n_plain) = fits["Counting"], fits["OwnDecisions"]
    assert reused.n_iter_ == plain.n_iter_ >= 3
    np.testing.assert_array_equal(reused.coef_, plain.coef_)
    assert reused.objective_curve_ == plain.objective_curve_
    # each outer iteration saves at least the positives' completion pass
    assert n_reused <= n_plain - reused.n_iter_ * int((y > 0).sum())
