"""The sequence tasks' batch methods (one compiled call per mini-batch, used by the
structural SVM): ``joint_feature_differences`` and ``loss_batch`` against the per-example
methods and the base class's loops, on valued and binary corpora, with -1 (free) labels,
and their refusals."""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.data.sparse import SparseRows, SparseVector
from latentstruct.exceptions import InputError
from latentstruct.tasks import SequenceTask
from latentstruct.tasks.base import MaxDecodableDefaults
from latentstruct.tasks.sequence import ChainStructure, PosTask

L, N_ATTR = 3, 5


def _task_and_corpus(seed, valued):
    """(the chain structure a fitted task holds, a featurised corpus, the rng)."""
    rng = np.random.default_rng(seed)
    task = SequenceTask()
    task.fit(task.make_dataset([[{f"a{k}": 1 for k in range(N_ATTR)}] * L],
                               [[f"l{j}" for j in range(L)]]))
    X_raw = []
    for _ in range(int(rng.integers(1, 9))):
        sent = []
        for _ in range(int(rng.integers(1, 6))):
            chosen = rng.choice(N_ATTR, size=int(rng.integers(0, N_ATTR + 1)), replace=False)
            sent.append({f"a{a}": (float(rng.choice([0.5, -1.5, 2.0, 1.0])) if valued else 1)
                         for a in chosen})
        X_raw.append(sent)
    return task.structure_, task.featurize(task.make_dataset(X_raw)), rng


def _labels(rng, X, free=True):
    lo = -1 if free else 0
    return [rng.integers(lo, L, int(n)).astype(np.int64) for n in X.lengths()]


@pytest.mark.parametrize("valued", [True, False])
@pytest.mark.parametrize("seed", range(25))
def test_differences_and_losses_equal_the_per_example_methods(seed, valued):
    task, X, rng = _task_and_corpus(seed, valued)
    Y_a, Y_b = _labels(rng, X), _labels(rng, X)
    if seed % 3 == 0:  # some sentences decoded right: empty differences, loss 0
        Y_b = [a.copy() if i % 2 else b for i, (a, b) in enumerate(zip(Y_a, Y_b))]
    rows = task.joint_feature_differences(X, Y_a, Y_b)
    base = MaxDecodableDefaults.joint_feature_differences(task, X, Y_a, Y_b)
    assert isinstance(rows, SparseRows) and len(rows) == len(X)
    np.testing.assert_array_equal(rows.indptr, base.indptr)
    np.testing.assert_array_equal(rows.indices, base.indices)
    np.testing.assert_array_equal(rows.values, base.values)
    w = rng.normal(size=task.n_features)
    for i in range(len(X)):
        one = task.joint_feature_difference(X[i], Y_a[i], Y_b[i])
        np.testing.assert_array_equal(rows[i].indices, one.indices)
        np.testing.assert_array_equal(rows[i].values, one.values)
        assert rows.dots(w)[i] == pytest.approx(one.dot(w), rel=1e-12, abs=1e-12)
    losses = task.loss_batch(Y_a, Y_b)
    np.testing.assert_array_equal(losses, [task.loss(a, b) for a, b in zip(Y_a, Y_b)])
    np.testing.assert_array_equal(losses, MaxDecodableDefaults.loss_batch(task, Y_a, Y_b))


def test_a_subset_gives_the_rows_of_its_sentences():
    task, X, rng = _task_and_corpus(3, True)
    while len(X) < 3:
        task, X, rng = _task_and_corpus(int(rng.integers(100)), True)
    Y_a, Y_b = _labels(rng, X, free=False), _labels(rng, X, free=False)
    pick = [len(X) - 1, 0]
    rows = task.joint_feature_differences(task.subset(X, pick), [Y_a[i] for i in pick],
                                          [Y_b[i] for i in pick])
    for j, i in enumerate(pick):
        one = task.joint_feature_difference(X[i], Y_a[i], Y_b[i])
        np.testing.assert_array_equal(rows[j].indices, one.indices)
        np.testing.assert_array_equal(rows[j].values, one.values)


def test_the_pos_task_shares_the_batch_methods():
    assert PosTask.structure_class is SequenceTask.structure_class is ChainStructure


@pytest.mark.parametrize("change, pattern", [
    (lambda Y: Y[:-1], r"structures for \d+ sentences"),
    (lambda Y: [np.r_[Y[0], 0]] + Y[1:], r"sentence 0 has \d+ tokens but its structure has"),
    (lambda Y: [np.full_like(Y[0], L)] + Y[1:], r"label id 3 at position 0 is outside 0\.\.2"),
])
def test_bad_structures_are_refused_in_one_line(change, pattern):
    task, X, rng = _task_and_corpus(5, True)
    Y = _labels(rng, X, free=False)
    with pytest.raises(InputError, match=pattern):
        task.joint_feature_differences(X, change(list(Y)), Y)


def test_loss_batch_refuses_mismatched_lengths():
    task = ChainStructure(2, 1)
    with pytest.raises(InputError, match="2 gold structures but 1 predicted"):
        task.loss_batch([[0], [1]], [[0]])
    with pytest.raises(InputError, match="structure 0: 2 gold labels but 1 predicted"):
        task.loss_batch([[0, 1]], [[0]])
    assert task.loss_batch([], []).shape == (0,)


def test_sparse_rows_round_trip_and_dots():
    rng = np.random.default_rng(0)
    vectors = [SparseVector(rng.integers(0, 50, k), rng.normal(size=k)) for k in (3, 0, 7, 1)]
    rows = SparseRows.from_vectors(vectors)
    assert len(rows) == 4 and rows.indptr.tolist() == [0, 3, 3, 10, 11]
    w = rng.normal(size=50)
    np.testing.assert_allclose(rows.dots(w), [v.dot(w) for v in vectors], rtol=1e-12)
    for got, want in zip(rows, vectors):
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.values, want.values)
    assert rows[-1].nnz == 1
    with pytest.raises(IndexError, match="row 4 out of range for 4 rows"):
        rows[4]
    empty = SparseRows.from_vectors([])
    assert len(empty) == 0 and empty.dots(w).shape == (0,)


@pytest.mark.parametrize("indptr, n", [([1, 2], 2), ([0, 2, 1], 2), ([0, 3], 2), ([], 0)])
def test_sparse_rows_refuse_a_bad_indptr(indptr, n):
    with pytest.raises(ValueError, match="SparseRows needs indptr from 0"):
        SparseRows(np.asarray(indptr, dtype=np.int64), np.zeros(n, np.int64), np.zeros(n))
