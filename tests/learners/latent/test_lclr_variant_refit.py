"""The LCLR-variant's early stopping without the second run (``refit=False``): the model is
the validation run's own at the chosen iteration, kept while the run goes on among the
iterations that can still be chosen (``choosable_iterations``)."""

import json
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import ConfigError
from latentstruct.learners import LCLRVariant
from latentstruct.learners.latent.lclr_variant import (_ValidationTracker, accuracy_floor,
                                                       choosable_iterations, choose_iteration)
from latentstruct.testing import make_bag_problem

pytestmark = pytest.mark.filterwarnings("ignore::latentstruct.exceptions.ConvergenceWarning")

#: every fitted attribute of the loop's result (fit_time_ aside)
_RESULT = ("coef_", "n_iter_", "converged_", "objective_curve_", "cache_size_curve_",
           "n_cache_hits_", "n_inexact_decodes_", "n_inconsistent_decodes_",
           "n_cutting_plane_cap_hits_", "n_inner_not_converged_", "inner_gap_curve_")
_VALIDATION = ("validation_loss_curve_", "validation_scores_", "best_iteration_",
               "validation_accuracy_floor_")


def _problem():
    # label noise, so that validation accuracy does not simply climb to 1 and stay there
    task, X, y = make_bag_problem(n_examples=240, bag_size=5, random_state=2)
    flip = np.random.default_rng(0).random(y.shape[0]) < 0.25
    return task, X, np.where(flip, -y, y)


_KW = dict(init="zeros", tol=None, max_iter=30, random_state=0, early_stopping=True,
           n_iter_no_change=3)


def _same(a, b, names):
    for name in names:
        va, vb = getattr(a, name), getattr(b, name)
        if isinstance(va, np.ndarray):
            np.testing.assert_array_equal(va, vb, err_msg=name)
        else:
            assert va == vb, name


def test_refit_false_is_the_validation_runs_model_at_the_chosen_iteration():
    task, X, y = _problem()
    m = LCLRVariant(task, refit=False, **_KW).fit(X, y)
    best = m.best_iteration_
    # the validation run went on past the iteration it chose, so the model kept is not
    # simply its last one
    assert 2 <= best < len(m.validation_scores_)
    train, _ = m._validation_split(y)
    plain = LCLRVariant(task, init="zeros", tol=None, max_iter=best, random_state=0).fit(
        task.subset(X, train), y[train])
    _same(m, plain, _RESULT)  # bit for bit
    assert m.n_iter_ == best and plain.stop_reason_ == "max_iter"
    assert m.stop_reason_ == "validation" and not m.converged_
    # the same validation run, curves and choice as refit=True
    r = LCLRVariant(task, refit=True, **_KW).fit(X, y)
    _same(m, r, _VALIDATION)


def test_refit_true_is_the_run_on_all_the_data():
    task, X, y = _problem()
    m = LCLRVariant(task, refit=True, **_KW).fit(X, y)
    full = LCLRVariant(task, init="zeros", tol=None, max_iter=m.best_iteration_,
                       random_state=0).fit(X, y)
    _same(m, full, _RESULT)
    assert m.stop_reason_ == "validation"
    # and refit=False's model differs (it never saw the held-out tenth)
    assert not np.array_equal(LCLRVariant(task, refit=False, **_KW).fit(X, y).coef_, m.coef_)


def test_refit_false_keeps_a_stop_at_the_chosen_iteration():
    # tol stops the validation run by its stall rule; the iteration chosen is then the
    # last one when its loss is lowest, and the model says why it stopped
    task, X, y = _problem()
    kw = dict(_KW, tol=0.5, n_iter_no_change=20)
    m = LCLRVariant(task, refit=False, **kw).fit(X, y)
    train, _ = m._validation_split(y)
    plain = LCLRVariant(task, init="zeros", tol=0.5, max_iter=m.best_iteration_,
                        random_state=0).fit(task.subset(X, train), y[train])
    _same(m, plain, _RESULT)
    expected = "validation" if plain.stop_reason_ == "max_iter" else plain.stop_reason_
    assert m.stop_reason_ == expected


def test_accuracy_floor_never_falls_as_the_best_accuracy_rises():
    # on the accuracies n_val examples can have, k / n_val (k >= 1) ...
    for n in range(1, 400):
        floors = [accuracy_floor(k / n, n) for k in range(1, n + 1)]
        assert all(b >= a for a, b in zip(floors, floors[1:])), n
    # ... and for any accuracy from 1 / n_val on
    rng = np.random.default_rng(0)
    for n in (2, 3, 10, 400, 10**6):
        a = np.sort(rng.uniform(1.0 / n, 1.0, size=2000))
        f = np.array([accuracy_floor(v, n) for v in np.r_[1.0 / n, a, 1.0]])
        assert np.all(np.diff(f) >= -1e-15), n
    # below 1 / n_val it does fall: the reason choosable_iterations prunes nothing there
    assert accuracy_floor(0.25 / 400, 400) < accuracy_floor(0.0, 400)
    # choose_iteration's floor is this one
    assert choose_iteration([1.0, 2.0], [0.5, 0.75], 40)[1] == accuracy_floor(0.75, 40)


def _curves(rng, length, n_val):
    """Random curves of the kind a validation run gives (accuracies on n_val examples),
    with ties in both: losses from a few values, accuracies from a few counts."""
    losses = rng.choice(rng.uniform(0.5, 4.0, size=6), size=length)
    counts = rng.integers(0, n_val + 1, size=5)
    return losses, rng.choice(counts, size=length) / n_val


def test_choosable_iterations_keep_every_iteration_that_can_still_be_chosen():
    rng = np.random.default_rng(1)
    for trial in range(3000):
        n_val = int(rng.choice([1, 2, 3, 5, 20, 400]))
        losses, accs = _curves(rng, int(rng.integers(1, 25)), n_val)
        out = set()  # iterations once pruned
        for k in range(1, len(losses) + 1):
            keep = set(choosable_iterations(losses[:k], accs[:k], n_val))
            # the current choice, and every later prefix's choice among these k, is kept
            assert choose_iteration(losses[:k], accs[:k], n_val)[0] in keep
            for j in range(k, len(losses) + 1):
                best = choose_iteration(losses[:j], accs[:j], n_val)[0]
                assert best > k or best in keep, (trial, k, j)
            # pruned for good
            assert not (keep & out)
            out |= set(range(1, k + 1)) - keep


def test_choosable_iterations_prune_dominated_and_below_the_floor():
    # 1: low loss but far below the floor; 2 and 3: on the floor's right side, 3 dominates 2
    # (same accuracy, lower loss); 4: the best accuracy
    losses = [0.5, 2.0, 1.5, 1.8]
    accs = [0.50, 0.80, 0.80, 0.85]
    assert accuracy_floor(0.85, 40) < 0.80 < 0.85 - 0.01
    assert choosable_iterations(losses, accs, 40) == [3, 4]
    # equal loss and accuracy: the first wins, the later is out
    assert choosable_iterations([1.0, 1.0], [0.7, 0.7], 400) == [1]
    assert choosable_iterations([], [], 10) == []
    with pytest.raises(ValueError):
        choosable_iterations([1.0], [0.5, 0.6], 10)


class _Prescribed:
    """A structure whose decision values are prescribed per iteration (w is the iteration)."""

    def __init__(self, decisions):
        self.decisions = decisions

    def decision_batch(self, X, w):
        return self.decisions[int(w[0]) - 1]


def test_the_tracker_keeps_the_choosable_snapshots_only():
    rng = np.random.default_rng(3)
    n_val = 50
    y_val = np.where(rng.random(n_val) < 0.5, 1.0, -1.0)
    for _ in range(50):
        decisions = [y_val * rng.normal(0.5, 1.5, size=n_val) for _ in range(30)]
        tracker = _ValidationTracker(_Prescribed(decisions), None, y_val, patience=5, keep=True)
        for it in range(1, 31):
            stop = tracker(it, np.array([float(it)]), lambda it=it: ("snapshot", it))
            keep = choosable_iterations(tracker.losses, tracker.accuracies, n_val)
            assert sorted(tracker.kept) == keep
            assert all(tracker.kept[t] == ("snapshot", t) for t in keep)
            if stop:
                break
        best, _ = choose_iteration(tracker.losses, tracker.accuracies, n_val)
        assert best in tracker.kept
    # refit=True's tracker keeps nothing and never asks for a snapshot
    tracker = _ValidationTracker(_Prescribed(decisions), None, y_val, patience=5, keep=False)
    tracker(1, np.array([1.0]), lambda: pytest.fail("snapshot taken"))
    assert tracker.kept == {}


def test_refit_false_round_trips_through_a_model_file(tmp_path):
    from latentstruct.io import load_model
    from latentstruct.learners.persistence import save_trained
    task, X, y = _problem()
    m = LCLRVariant(task, refit=False, **_KW).fit(X, y)
    meta, arrays = m._learned_state()
    loaded = LCLRVariant(task)
    loaded._restore(json.loads(json.dumps(meta)), arrays)  # model files keep meta as JSON
    _same(loaded, m, ("coef_", "n_iter_", "objective_curve_") + _VALIDATION)
    # through a file, as save_trained writes it (the bag task is not registered, so the
    # learner's part is read back by hand)
    path = tmp_path / "m.npz"
    save_trained(path, task, m)
    metadata, arrays = load_model(path)
    assert metadata["learner_params"]["refit"] is False
    back = LCLRVariant(task, **metadata["learner_params"])
    back._restore(metadata["learner_state"], arrays)
    assert back.get_params() == m.get_params()
    _same(back, m, ("coef_", "n_iter_") + _VALIDATION)
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))


def test_refit_is_a_parameter_like_the_others():
    assert LCLRVariant().get_params()["refit"] is False  # scikit-learn's convention
    m = LCLRVariant(refit=True, early_stopping=True)
    c = clone(m)
    assert c.get_params()["refit"] is True and c.get_params() == m.get_params()
    assert m.set_params(refit=False).refit is False
    task, X, y = _problem()
    with pytest.raises(ConfigError, match="refit"):
        LCLRVariant(task, init="zeros", early_stopping=True, refit="no").fit(X, y)
    # without early stopping refit changes nothing
    a = LCLRVariant(task, init="zeros", max_iter=4, refit=False).fit(X, y)
    b = LCLRVariant(task, init="zeros", max_iter=4, refit=True).fit(X, y)
    _same(a, b, _RESULT + ("stop_reason_",))


@pytest.mark.parametrize("stop_at", [1, 4, "last"])
def test_refit_false_resumes_to_the_uninterrupted_model(tmp_path, stop_at):
    from latentstruct.learners import Checkpoint
    task, X, y = _problem()
    whole = LCLRVariant(task, refit=False, **_KW).fit(X, y)
    n_val_iter = len(whole.validation_scores_)
    at = n_val_iter if stop_at == "last" else stop_at

    class Stop(Exception):
        pass

    seen = []

    def stop(iteration, path):
        seen.append(iteration)
        if iteration == at:
            raise Stop

    path = tmp_path / "run.ckpt.npz"
    with pytest.raises(Stop):
        LCLRVariant(task, refit=False, **_KW).fit(X, y, checkpoint=Checkpoint(path, on_save=stop))
    # the checkpoints are the validation run's (one per iteration of it)
    assert seen == list(range(1, at + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        resumed = LCLRVariant(task, refit=False, **_KW).fit(X, y, resume=path)
    _same(resumed, whole, _RESULT + _VALIDATION + ("stop_reason_",))
    # a checkpoint of refit=False is no start for refit=True
    with pytest.raises(ConfigError, match="refit"):
        LCLRVariant(task, refit=True, **_KW).fit(X, y, resume=path)


def test_the_floor_slack_matches_choose_iteration():
    # an iteration exactly on the floor is eligible in choose_iteration and kept here
    n = 400
    top = 0.7
    floor = accuracy_floor(top, n)
    assert math.isclose(floor, top - math.sqrt(top * 0.3 / n))
    losses, accs = [2.0, 1.0], [top, floor]
    assert choose_iteration(losses, accs, n)[0] == 2
    assert 2 in choosable_iterations(losses, accs, n)


def test_a_refit_true_checkpoint_is_no_start_for_refit_false(tmp_path):
    # a checkpoint whose loop state is a final run's (refit=True, or written before refit
    # existed), recorded as refit=False: refused with the way out, not half-restored
    from latentstruct.io import load_model, save_model
    from latentstruct.learners import Checkpoint
    task, X, y = _problem()
    path = tmp_path / "run.ckpt.npz"
    kw = dict(_KW, max_iter=3)
    LCLRVariant(task, refit=True, **kw).fit(X, y, checkpoint=Checkpoint(path))
    metadata, arrays = load_model(path)
    metadata["learner_params"]["refit"] = False
    save_model(path, metadata, arrays)
    with pytest.raises(ConfigError, match="resume with refit=True"):
        LCLRVariant(task, refit=False, **kw).fit(X, y, resume=path)
