"""AROW (``arow``, CRFsuite's ``arow`` algorithm): its mean and diagonal covariance after one
and two steps against the closed form computed here from dense Phi vectors; the rest of its
contract (separable data, seeds, clone, model files, ``partial_fit``, the command line) is
tested with the passive-aggressive learner in ``test_structured_pa.py``."""

import numpy as np
import pytest

from latentstruct.learners import AROW
from latentstruct.learners.persistence import load_trained, save_trained
from test_structured_pa import chunk, quiet  # noqa: F401  (the same problem as pa's)


def hand_step(task, x, y, mean, var, gamma):
    """One AROW step (diagonal covariance ``var``) from the closed form; new (mean, var)
    and the step's violation."""
    y_hat = task.structure_.argmax(x, mean).structure
    errors = float(np.count_nonzero(np.asarray(y) != np.asarray(y_hat)))
    assert errors > 0
    delta = (task.structure_.joint_feature(x, y).to_dense(task.n_features)
             - task.structure_.joint_feature(x, y_hat).to_dense(task.n_features))
    violation = -float(mean @ delta)
    alpha = (violation + errors) / (gamma + float(np.sum(var * delta ** 2)))
    new_mean = mean + alpha * var * delta
    new_var = 1.0 / (1.0 / var + delta ** 2 / gamma)
    return new_mean, new_var, violation


@pytest.mark.parametrize("variance,gamma", [(1.0, 1.0), (0.3, 2.5), (4.0, 0.2)])
def test_one_and_two_steps_match_the_closed_form(chunk, variance, gamma):
    task, X, Y = chunk
    n = task.n_features
    one = AROW(task, variance=variance, gamma=gamma, shuffle=False)
    quiet(lambda: one.partial_fit(task.structure_object().subset(X, [0]), Y[:1]))
    m1, v1, viol1 = hand_step(task, X[0], Y[0], np.zeros(n), np.full(n, variance), gamma)
    assert viol1 == 0
    np.testing.assert_allclose(one.coef_, m1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(one.covariance_, v1, rtol=1e-12, atol=0)
    assert one.objective_curve_ == [pytest.approx(one.errors_curve_[0])]  # cost = errors
    touched = v1 < variance
    assert touched.any() and np.all(one.covariance_[~touched] == variance)
    m2, v2, viol2 = hand_step(task, X[1], Y[1], m1, v1, gamma)
    assert viol2 > 0
    two = AROW(task, variance=variance, gamma=gamma, shuffle=False, max_iter=1)
    quiet(lambda: two.fit(task.structure_object().subset(X, np.arange(2)), Y[:2]))
    np.testing.assert_allclose(two.coef_, m2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(two.covariance_, v2, rtol=1e-12, atol=0)
    assert two.t_ == 2 and two.n_updates_ == 2


def test_the_covariance_only_shrinks_and_is_saved(chunk, tmp_path):
    task, X, Y = chunk
    m = quiet(lambda: AROW(task, variance=2.0, max_iter=3).fit(X, Y))
    assert np.all(m.covariance_ <= 2.0) and np.all(m.covariance_ > 0)
    path = tmp_path / "arow.npz"
    save_trained(path, task, m)
    arrays = np.load(path)
    np.testing.assert_array_equal(arrays["online.covariance"], m.covariance_)
    np.testing.assert_array_equal(load_trained(path)[1].covariance_, m.covariance_)
