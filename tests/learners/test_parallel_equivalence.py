"""Parallel inference does not change what is learned: ``n_jobs=2`` gives the model of
``n_jobs=1`` (same weights to 1e-12, same number of iterations, same objective curve).

The learners hand contiguous chunks of examples to joblib (``latentstruct.parallel``) and
concatenate the results in order, and their random streams (DCD permutations, visiting
orders) never depend on how inference was split; so the two fits must agree.  Each
problem has more examples than jobs, so ``n_jobs=2`` really runs two chunks.
"""

import warnings

import numpy as np
import pytest

from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import LCLR, StructuredSVM, TwoStage
from latentstruct.learners.ssvm import ssvm as ssvm_module
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.base import Dataset
from latentstruct.testing import make_bag_problem


def fit_quietly(make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return make().fit(X, y)


def assert_same_model(serial, parallel, curves=("objective_curve_",), counters=("n_iter_",)):
    np.testing.assert_allclose(parallel.coef_, serial.coef_, rtol=0, atol=1e-12)
    for name in counters:
        assert getattr(parallel, name) == getattr(serial, name), name
    for name in curves:
        a, b = np.asarray(getattr(serial, name), float), np.asarray(getattr(parallel, name), float)
        assert a.shape == b.shape, (name, a.shape, b.shape)
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=name)


def both(make, X, y):
    """The model fitted with n_jobs=1 and with n_jobs=2 (same everything else)."""
    return fit_quietly(lambda: make(1), X, y), fit_quietly(lambda: make(2), X, y)


# ----------------------------------------------------------------------------- StructuredSVM
SSVM_CURVES = ("objective_curve_", "dual_curve_")
SSVM_COUNTERS = ("n_iter_", "n_constraints_")


@pytest.fixture(autouse=True)
def split_every_pass(monkeypatch):
    """The structural SVM decodes a pass of fewer than MIN_PARALLEL_EXAMPLES (512)
    examples in one thread; these problems are smaller, so every pass is split here
    (what is tested is that a split changes nothing)."""
    monkeypatch.setattr(ssvm_module, "MIN_PARALLEL_EXAMPLES", 1)


def ssvm(task, n_jobs, **kw):
    params = dict(C=0.1, max_iter=6, batch_size=8, random_state=3)
    params.update(kw)
    return StructuredSVM(task, n_jobs=n_jobs, **params)


def test_structured_svm_on_the_tiny_chunk_file(tiny_chunk_file):
    task = ChunkTask(window=1, affix_length=2)
    ds = task.read(tiny_chunk_file)
    task.fit(ds)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    assert len(X) == 3
    serial, parallel = both(lambda j: ssvm(task, j, C=1.0, batch_size=2, max_iter=20), X, Y)
    assert serial.n_iter_ >= 2
    assert_same_model(serial, parallel, SSVM_CURVES, SSVM_COUNTERS)


def test_structured_svm_splits_only_passes_of_min_parallel_examples(tiny_chunk_file,
                                                                   monkeypatch):
    """Online mini-batches below the threshold are decoded in the calling thread (split
    between two threads they were slower than one), the evaluation passes over every
    example are split, and the model is the same either way."""
    task = ChunkTask(window=1, affix_length=2)
    ds = task.read(tiny_chunk_file)
    task.fit(ds)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    monkeypatch.setattr(ssvm_module, "MIN_PARALLEL_EXAMPLES", 3)
    calls = []
    real = ssvm_module.parallel_chunks

    def spy(fn, n_items, n_jobs, **kw):
        calls.append((n_items, n_jobs))
        return real(fn, n_items, n_jobs, **kw)

    monkeypatch.setattr(ssvm_module, "parallel_chunks", spy)
    parallel = fit_quietly(lambda: ssvm(task, 2, C=1.0, batch_size=2, max_iter=5), X, Y)
    assert (3, 2) in calls and (2, 1) in calls and (1, 1) in calls
    assert all(jobs == (2 if n >= 3 else 1) for n, jobs in calls), calls
    monkeypatch.setattr(ssvm_module, "parallel_chunks", real)
    serial = fit_quietly(lambda: ssvm(task, 1, C=1.0, batch_size=2, max_iter=5), X, Y)
    assert_same_model(serial, parallel, SSVM_CURVES, SSVM_COUNTERS)


@pytest.mark.slow
def test_structured_svm_on_real_conll2000(require_data):
    task = ChunkTask()
    full = task.read(require_data("conll2000", "train.txt"))
    train = Dataset(full.records[:120], full.targets[:120])
    task.fit(train)
    X, Y = task.featurize(train), task.encode_targets(train.targets)
    serial, parallel = both(lambda j: ssvm(task, j), X, Y)
    assert serial.n_iter_ >= 3 and serial.n_constraints_ > len(X)
    assert_same_model(serial, parallel, SSVM_CURVES, SSVM_COUNTERS)
    for a, b in zip(serial.predict(X), parallel.predict(X)):
        np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- LCLR, TwoStage
LCLR_CURVES = ("objective_curve_", "cache_size_curve_")
LCLR_COUNTERS = ("n_iter_", "n_cache_hits_")


@pytest.mark.parametrize("init", ["two-stage", "zeros"])
def test_lclr_on_bags(init):
    task, X, y = make_bag_problem(n_examples=60, bag_size=4, random_state=11)
    serial, parallel = both(lambda j: LCLR(task, C=0.5, init=init, max_iter=8, n_jobs=j,
                                           random_state=2), X, y)
    assert serial.n_iter_ >= 2
    assert_same_model(serial, parallel, LCLR_CURVES, LCLR_COUNTERS)
    np.testing.assert_array_equal(serial.decision_function(X), parallel.decision_function(X))


def test_two_stage_on_bags():
    task, X, y = make_bag_problem(n_examples=60, bag_size=4, random_state=12)
    serial, parallel = both(lambda j: TwoStage(task, C=0.5, n_jobs=j, random_state=4), X, y)
    assert_same_model(serial, parallel)
    np.testing.assert_array_equal(serial.heuristic_coef_, parallel.heuristic_coef_)
    np.testing.assert_array_equal(serial.decision_function(X), parallel.decision_function(X))


@pytest.mark.slow
def test_lclr_on_a_small_transliteration_problem():
    """CLDR English-Hebrew place names shipped with Babel (as in test_lclr_transliteration)."""
    from latentstruct.tasks.translit import TransliterationTask

    task = TransliterationTask(lang="he", n_train=30, n_test=30, neg_ratio=0.2, seed=1)
    train = task.read(None, split="train")
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)
    assert len(X) > 2
    serial, parallel = both(lambda j: LCLR(task, C=0.1, max_iter=4, n_jobs=j, random_state=0), X, y)
    assert serial.n_iter_ >= 2
    assert_same_model(serial, parallel, LCLR_CURVES, LCLR_COUNTERS)
