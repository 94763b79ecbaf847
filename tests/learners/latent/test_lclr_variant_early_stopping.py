"""The LCLR-variant's early stopping: the number of outer iterations chosen on a seeded,
stratified validation split, then (``refit=True``) a run on all the data for that many
iterations."""

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.learners import LCLRVariant
from latentstruct.learners.latent.lclr_variant import LCLRVariant as Direct
from latentstruct.testing import make_bag_problem

pytestmark = pytest.mark.filterwarnings("ignore::latentstruct.exceptions.ConvergenceWarning")


def _problem():
    # label noise, so that validation accuracy does not simply climb to 1 and stay there
    task, X, y = make_bag_problem(n_examples=240, bag_size=5, random_state=2)
    flip = np.random.default_rng(0).random(y.shape[0]) < 0.25
    return task, X, np.where(flip, -y, y)


def _replay(task, X, y, n_iter_no_change, max_iter):
    """The validation run by hand: the same split, the loop on the training part, the
    held-out loss and accuracy of the weights after each iteration."""
    ref = LCLRVariant(task, init="zeros", tol=None, max_iter=max_iter, random_state=0,
                      early_stopping=True)
    train, val = ref._validation_split(y)
    losses, scores = [], []
    for t in range(1, max_iter + 1):
        m = LCLRVariant(task, init="zeros", tol=None, max_iter=t, random_state=0)
        m.fit(task.subset(X, train), y[train])
        if m.n_iter_ < t:  # another rule (a fixed point, a stall) ended the run before t
            break
        f = m.decision_function(task.subset(X, val))
        losses.append(float(np.mean(np.maximum(0.0, 1.0 - y[val] * f) ** 2)))
        scores.append(float(np.mean(m.predict(task.subset(X, val)) == y[val])))
        # the run ends n_iter_no_change iterations after the last new best loss or accuracy
        if t - (max(int(np.argmin(losses)), int(np.argmax(scores))) + 1) >= n_iter_no_change:
            break
    return train, val, losses, scores


@pytest.mark.slow
def test_validation_curves_best_iteration_and_the_final_run_match_a_replay():
    task, X, y = _problem()
    m = LCLRVariant(task, init="zeros", tol=None, max_iter=30, random_state=0,
                    early_stopping=True, n_iter_no_change=3, refit=True).fit(X, y)
    train, val, losses, scores = _replay(task, X, y, 3, 30)
    # stratified, disjoint, all examples, ceil(0.1 n) held out
    assert len(val) == 24 and len(np.intersect1d(train, val)) == 0
    assert len(train) + len(val) == len(y)
    assert np.mean(y[val] > 0) == pytest.approx(np.mean(y > 0), abs=0.03)
    np.testing.assert_allclose(m.validation_loss_curve_, losses, rtol=1e-12, atol=0)
    np.testing.assert_allclose(m.validation_scores_, scores, rtol=0, atol=1e-12)
    # lowest loss among the iterations within one binomial standard error of the best accuracy
    top = max(scores)
    floor = top - np.sqrt(top * (1 - top) / 24)
    best = min((loss, t) for t, (loss, acc) in enumerate(zip(losses, scores), 1)
               if acc >= floor - 1e-12)[1]
    assert m.best_iteration_ == best and m.validation_accuracy_floor_ == pytest.approx(floor)
    # this run is ended by the validation rule, n_iter_no_change iterations after the last
    # new best (loss or accuracy)
    last = max(int(np.argmin(losses)), int(np.argmax(scores))) + 1
    assert best >= 2 and len(losses) == last + 3
    # the final model: all the data, best_iteration_ outer iterations
    full = LCLRVariant(task, init="zeros", tol=None, max_iter=best, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.coef_, full.coef_)
    assert m.n_iter_ == best and m.stop_reason_ == "validation" and not m.converged_


def test_off_by_default_and_same_model_as_before():
    task, X, y = _problem()
    a = LCLRVariant(task, init="zeros", max_iter=6, random_state=0).fit(X, y)
    assert a.validation_loss_curve_ == [] and a.validation_scores_ == []
    assert a.best_iteration_ is None and a.n_iter_ == 6 and a.stop_reason_ == "max_iter"
    assert LCLRVariant().get_params()["early_stopping"] is False
    assert Direct is LCLRVariant


def test_split_is_seeded_by_random_state():
    task, X, y = _problem()
    a = LCLRVariant(task, early_stopping=True, random_state=0)._validation_split(y)
    b = LCLRVariant(task, early_stopping=True, random_state=0)._validation_split(y)
    c = LCLRVariant(task, early_stopping=True, random_state=1)._validation_split(y)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1])


def test_too_few_examples_and_bad_params_say_so():
    task, X, y = make_bag_problem(n_examples=12, bag_size=3, random_state=1)
    y = np.where(np.arange(12) == 0, 1.0, -1.0)  # one positive: nothing to stratify
    with pytest.raises(ConfigError, match="too few to keep both labels"):
        LCLRVariant(task, init="zeros", early_stopping=True).fit(X, y)
    task, X, y = _problem()
    for bad in ({"validation_fraction": 1.0}, {"validation_fraction": 0.0},
                {"n_iter_no_change": 0}, {"early_stopping": "yes"}):
        with pytest.raises(ConfigError):
            LCLRVariant(task, **{"init": "zeros", "early_stopping": True, **bad}).fit(X, y)


def test_model_state_keeps_the_validation_record():
    import json
    task, X, y = _problem()
    m = LCLRVariant(task, init="zeros", tol=None, max_iter=8, random_state=0,
                    early_stopping=True, n_iter_no_change=2).fit(X, y)
    meta, arrays = m._learned_state()
    loaded = LCLRVariant(task)
    loaded._restore(json.loads(json.dumps(meta)), arrays)  # model files keep meta as JSON
    assert loaded.validation_scores_ == m.validation_scores_ and len(m.validation_scores_) >= 2
    assert loaded.validation_loss_curve_ == m.validation_loss_curve_
    assert loaded.best_iteration_ == m.best_iteration_
    assert loaded.validation_accuracy_floor_ == m.validation_accuracy_floor_ is not None
    np.testing.assert_array_equal(loaded.coef_, m.coef_)


@pytest.mark.slow
def test_resume_gives_the_uninterrupted_model(tmp_path):
    from latentstruct.learners import Checkpoint
    task, X, y = _problem()
    kw = dict(init="zeros", tol=None, max_iter=20, random_state=0, early_stopping=True,
              n_iter_no_change=3, refit=True)  # refit=False: test_lclr_variant_refit.py
    whole = LCLRVariant(task, **kw).fit(X, y)
    assert whole.best_iteration_ >= 2

    class Stop(Exception):
        pass

    def stop_at_one(iteration, path):
        if iteration == 1:
            raise Stop

    path = tmp_path / "run.ckpt.npz"
    with pytest.raises(Stop):
        LCLRVariant(task, **kw).fit(X, y, checkpoint=Checkpoint(path, on_save=stop_at_one))
    resumed = LCLRVariant(task, **kw).fit(X, y, resume=path)
    np.testing.assert_array_equal(resumed.coef_, whole.coef_)
    assert resumed.validation_scores_ == whole.validation_scores_
