"""LCLR on a small real subset: CLDR English-Hebrew place names shipped with Babel."""

import warnings

import numpy as np
import pytest

from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import LCLR, TwoStage
from latentstruct.learners.latent.lclr import squared_hinge_objective
from latentstruct.tasks.translit import TransliterationTask


@pytest.fixture(scope="module")
def small_translit():
    task = TransliterationTask(lang="he", n_train=40, n_test=60, neg_ratio=0.2, seed=1)
    train = task.read(None, split="train")
    test = task.read(None, split="test")
    task.fit(train)
    return task, task.featurize(train), task.encode_targets(train.targets), test


@pytest.mark.slow
def test_objective_never_increases_on_real_pairs(small_translit):
    """LCLR Theorem 1: Eq. (3) does not increase between outer iterations."""
    task, X, y, _ = small_translit
    m = LCLR(task, C=0.1, dcd_tol=1e-8, dcd_max_iter=100000, tol=1e-9, max_iter=15).fit(X, y)
    curve = np.array(m.objective_curve_)
    assert len(curve) >= 3
    assert np.all(np.diff(curve) <= 1e-7 * curve[:-1]), curve
    assert curve[-1] < 0.5 * curve[0]
    assert curve[-1] == pytest.approx(
        squared_hinge_objective(m.coef_, m.decision_function(X), y, 0.1), rel=1e-9)


@pytest.mark.slow
def test_lclr_ranks_better_than_two_stage(small_translit):
    task, X, y, test = small_translit
    two = TwoStage(task, C=0.1).fit(X, y)
    lclr = LCLR(task, C=0.1, coef_init=two.coef_).fit(X, y)
    m_two = task.evaluate_model(test, two.predict, two.decision_function)
    m_lclr = task.evaluate_model(test, lclr.predict, lclr.decision_function)
    assert m_lclr["mrr"] > m_two["mrr"]
    # the latent alignments LCLR chooses are legal: one-to-one and non-crossing
    for h in lclr.latent_argmax(X[:20]):
        aligned = h[h >= 0]
        assert np.all(np.diff(aligned) > 0)


@pytest.mark.slow
def test_unseen_characters_still_score(small_translit):
    task, X, y, _ = small_translit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lclr = LCLR(task, C=0.1, max_iter=3).fit(X, y)
    x = task.encode_pair("zqxjü", "ЖЩЪ")  # nothing of this was seen in training
    score = lclr.decision_function([x])[0]
    assert np.isfinite(score)
