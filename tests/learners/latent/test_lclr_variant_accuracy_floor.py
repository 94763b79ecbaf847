"""Early stopping of the LCLR-variant keeps the lowest validation loss only among the
iterations whose validation accuracy is within one binomial standard error of the best
(``choose_iteration``), and warns when it keeps the first iteration of an unfinished run."""

import math
import warnings

import numpy as np
import pytest

from latentstruct.learners import LCLRVariant
from latentstruct.learners.latent.lclr_variant import choose_iteration


def test_the_loss_cannot_choose_an_iteration_far_below_the_best_accuracy():
    # the shape of grammaticality from zero weights: the first iteration calls nearly every
    # sentence real (accuracy ~0.52) with the lowest squared hinge; later iterations are
    # 10+ points more accurate but make larger mistakes
    losses = [3.79, 8.69, 3.77, 6.43, 4.25, 3.96, 4.10, 3.90, 4.02, 3.95]
    accs = [0.52, 0.5225, 0.5825, 0.51, 0.6025, 0.69, 0.70, 0.66, 0.71, 0.70]
    assert int(np.argmin(losses)) + 1 == 3  # what the loss alone would keep
    best, floor = choose_iteration(losses, accs, 400)
    top = 0.71
    assert floor == pytest.approx(top - math.sqrt(top * (1 - top) / 400))  # 0.6873
    # eligible: iterations 6, 7, 9, 10 (>= 0.6873); the lowest loss among them is 10's
    assert best == 10
    # the same curves with the loss at its lowest after the first iteration
    losses[0] = 1.0
    assert choose_iteration(losses, accs, 400)[0] == 10


def test_within_the_noise_the_loss_still_decides():
    # grammaticality 2,000 + 2,000 from the two-stage model, iterations 9-25 of the validation
    # run (docs/performance.md): accuracy peaks at .675 twice; one standard error at 400
    # held-out examples is 2.3 points, so every iteration from 10 on is eligible and the
    # loss keeps iteration 20 (position 12 here, the first of the tied 1.171s), as the
    # loss-only rule did
    accs = [.648, .675, .668, .668, .670, .673, .668, .658, .673, .673, .660, .675, .668, .660,
            .658, .658, .650]
    losses = [2.864, 2.150, 1.896, 1.607, 1.488, 1.365, 1.265, 1.249, 1.221, 1.194, 1.184,
              1.171, 1.173, 1.176, 1.171, 1.171, 1.175]
    best, floor = choose_iteration(losses, accs, 400)
    assert best == 12 and floor == pytest.approx(0.675 - math.sqrt(0.675 * 0.325 / 400))
    # with 40,000 held-out examples the error is 0.23 points and only the .675s qualify
    assert choose_iteration(losses, accs, 40_000)[0] == 12
    assert choose_iteration(losses[:5], accs[:5], 40_000)[0] == 2


def test_perfect_accuracy_has_no_slack_and_ties_go_to_the_first():
    assert choose_iteration([0.5, 0.2, 0.1], [1.0, 0.99, 0.98], 1000) == (1, 1.0)
    assert choose_iteration([0.3, 0.3, 0.3], [0.6, 0.6, 0.6], 100)[0] == 1
    with pytest.raises(ValueError, match="one loss and one accuracy per iteration"):
        choose_iteration([0.1, 0.2], [0.5], 10)


# ---------------------------------------------------------------------------------------
# The learner's own validation run, with the outer loop scripted: the validation run's
# loop hands after_iteration a prescribed weight vector per iteration (the scoring of the
# held-out part, the stopping rule, the choice, the warning and the final run are the
# learner's own); the final run is the real loop on all the data.
# ---------------------------------------------------------------------------------------

def _separable_with_noise(n=200, noise=0.2, seed=0):
    """Bags of one vector (s, 1): |s| in [2, 4] on the side of the label, a share of the
    labels flipped, so an accurate model makes few but large mistakes."""
    from latentstruct.testing import BagTask

    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    s = y * rng.uniform(2.0, 4.0, size=n)
    X = [np.array([[si, 1.0]]) for si in s]
    flipped = np.where(rng.random(n) < noise, -y, y)
    return BagTask(2).fit(), X, flipped


def _scripted(monkeypatch, weights, stop_reason="max_iter"):
    """Replace the validation run's loop by one that visits ``weights`` in turn (until
    after_iteration says stop); return the list of max_iter values of the final runs."""
    import latentstruct.learners.latent.lclr_variant as mod

    real = mod.alternating_latent_fit
    final_max_iter = []

    def loop(learner, task, X, y, C, w0, *, after_iteration=None, max_iter=None, **kw):
        if after_iteration is None:  # the final run on all the data: the real loop
            final_max_iter.append(max_iter)
            return real(learner, task, X, y, C, w0, max_iter=max_iter, **kw)
        reason = stop_reason

        def snapshot():  # refit=True keeps no model of the validation run
            raise AssertionError("refit=True asked the validation run for a snapshot")

        for it, w in enumerate(weights, 1):
            if after_iteration(it, np.asarray(w, dtype=float), snapshot):
                reason = "validation"
                break

        class Run:
            pass

        class Monitor:
            def warn(self):
                pass

        run = Run()
        run.stop_reason = reason
        return run, Monitor()

    monkeypatch.setattr(mod, "alternating_latent_fit", loop)
    return final_max_iter


# iteration 1: a small bias, everything called positive (accuracy = share of positives,
# squared hinge about 1); iterations 2-8: the separating direction, right on ~80 % of the
# held-out examples but by margins of 2-4, so each mistake costs (1 + |s|)^2 = 9-25
_WEIGHTS = [[0.0, 0.05]] + [[1.0, 0.0]] * 7


def test_a_model_far_less_accurate_is_refused_although_its_hinge_is_lowest(monkeypatch):
    task, X, y = _separable_with_noise()
    final = _scripted(monkeypatch, _WEIGHTS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no "first iteration" warning
        m = LCLRVariant(task, init="zeros", tol=None, max_iter=20, early_stopping=True,
                        validation_fraction=0.25, n_iter_no_change=3, refit=True).fit(X, y)
    L, A = m.validation_loss_curve_, m.validation_scores_
    # the curves are those of the scripted weights on the held-out quarter
    _, val = m._validation_split(y)
    yv = y[val]
    sv = np.array([X[i][0, 0] for i in val])
    f1 = np.full(len(val), 0.05)
    assert L[0] == pytest.approx(np.mean(np.maximum(0, 1 - yv * f1) ** 2))
    assert A[0] == pytest.approx(np.mean(yv > 0))
    assert L[1] == pytest.approx(np.mean(np.maximum(0, 1 - yv * sv) ** 2))
    assert A[1] == pytest.approx(np.mean(np.sign(sv) == yv))
    # the case of the issue: the hinge is lowest at iteration 1, the accuracy far higher later
    assert int(np.argmin(L)) == 0 and L[1] > L[0] + 1.0
    se = math.sqrt(A[1] * (1 - A[1]) / len(val))
    assert A[1] - A[0] > 3 * se
    # the loop ran n_iter_no_change iterations past the best accuracy (iteration 2)
    assert len(L) == 2 + 3
    # the choice: the later, accurate iteration (the first of the equal ones)
    assert m.best_iteration_ == 2 and final == [2]
    assert m.validation_accuracy_floor_ == pytest.approx(A[1] - se)
    assert m.n_iter_ <= 2


def test_keeping_the_first_iteration_of_an_unfinished_run_warns(monkeypatch):
    task, X, y = _separable_with_noise()
    # iteration 1 is the accurate one; the later ones have the lower loss (a new best at
    # iteration 2, so the run goes on to 5) but are refused by the accuracy floor
    _scripted(monkeypatch, [[1.0, 0.0]] + [[0.0, 0.05]] * 7)
    with pytest.warns(UserWarning, match=r"early stopping chose the first outer iteration "
                      r"of 5 .*early_stopping=False"):
        m = LCLRVariant(task, init="zeros", tol=None, max_iter=20, early_stopping=True,
                        validation_fraction=0.25, n_iter_no_change=3, refit=True).fit(X, y)
    L = m.validation_loss_curve_
    assert m.best_iteration_ == 1 and len(L) == 5 and int(np.argmin(L)) == 1


def test_a_run_that_finished_at_its_first_iteration_does_not_warn(monkeypatch):
    task, X, y = _separable_with_noise()
    _scripted(monkeypatch, [[1.0, 0.0], [1.0, 0.0]], stop_reason="fixed_point")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m = LCLRVariant(task, init="zeros", tol=None, max_iter=20, early_stopping=True,
                        validation_fraction=0.25, n_iter_no_change=3, refit=True).fit(X, y)
    assert m.best_iteration_ == 1
