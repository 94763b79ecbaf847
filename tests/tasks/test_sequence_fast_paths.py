"""The compiled fast paths of the sequence tasks against their plain references."""

from collections import Counter

import numpy as np
import pytest

from latentstruct.data.features import FeatureIndex
from latentstruct.data.sparse import coalesce_arrays
from latentstruct.exceptions import InputError
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.sequence import SequenceCorpus, concat_corpora
from latentstruct.tasks.sequence.kernels import coalesced as _coalesced


def fitted(path):
    task = ChunkTask()
    ds = task.read(path)
    task.fit(ds)
    return task, ds


def random_corpus(rng, n_sent=7):
    lengths = rng.integers(0, 5, size=n_sent)
    n_tok = int(lengths.sum())
    per_tok = rng.integers(0, 4, size=n_tok)
    indptr = np.concatenate([[0], np.cumsum(per_tok)])
    ids = rng.integers(0, 50, size=int(indptr[-1]))
    return SequenceCorpus(indptr, ids, np.concatenate([[0], np.cumsum(lengths)]))


def same_corpus(a, b):
    return (np.array_equal(a.attr_indptr, b.attr_indptr) and np.array_equal(a.attr_ids, b.attr_ids)
            and np.array_equal(a.offsets, b.offsets))


@pytest.mark.parametrize("seed", range(5))
def test_subset_and_slices_match_concatenated_sentences(seed):
    rng = np.random.default_rng(seed)
    X = random_corpus(rng)
    n = len(X)
    picks = [list(rng.integers(-n, n, size=9)), [], [n - 1, 0, 0]]
    for idx in picks:
        ref = concat_corpora([X[int(i)] for i in idx])
        assert same_corpus(X.subset(idx), ref)
        assert same_corpus(X[np.asarray(idx, dtype=np.int64)], ref)
    for sl in (slice(2, 5), slice(None), slice(1, None, 2), slice(5, 2), slice(-3, None)):
        ref = concat_corpora([X[i] for i in range(n)[sl]])
        assert same_corpus(X[sl], ref)
        assert same_corpus(X[sl][1:], concat_corpora([X[i] for i in range(n)[sl][1:]]))
    assert same_corpus(X[X.lengths() > 1], concat_corpora([X[i] for i in range(n)
                                                           if X.lengths()[i] > 1]))


def test_subset_rejects_bad_indices():
    X = random_corpus(np.random.default_rng(0))
    with pytest.raises(IndexError, match="sentence index 7 out of range for 7"):
        X.subset([0, 7])
    with pytest.raises(IndexError, match="-8 out of range"):
        X[[-8]]
    with pytest.raises(TypeError, match="ints"):
        X.subset([0.5])


@pytest.mark.parametrize("seed", range(5))
def test_coalesced_matches_coalesce_arrays(seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 12, size=40)
    val = rng.choice([-1.0, 1.0, 2.0], size=40)
    got_i, got_v = _coalesced(idx, val)
    ref_i, ref_v = coalesce_arrays(idx, val)
    assert np.array_equal(got_i, ref_i) and np.array_equal(got_v, ref_v)
    assert 0.0 not in got_v
    empty_i, empty_v = _coalesced(np.zeros(0, np.int64), np.zeros(0))
    assert empty_i.size == 0 and empty_v.size == 0


def test_attribute_ids_follow_descending_training_counts(tiny_chunk_file):
    task, ds = fitted(tiny_chunk_file)
    names = [a for sentence in task.reader.sentences(ds.records)
             for tok in task.featurizer_.attribute_strings(sentence) for a in tok]
    counts = Counter(names)
    ids = task.attr_index_.names
    assert sorted(ids) == sorted(FeatureIndex().fit([names]).names)  # the same names
    assert [counts[a] for a in ids] == sorted(counts.values(), reverse=True)
    first_seen = list(counts)  # ties keep first-seen order
    for a, b in zip(ids, ids[1:]):
        if counts[a] == counts[b]:
            assert first_seen.index(a) < first_seen.index(b)
    strict = ChunkTask(min_count=2).fit(ds)
    assert set(strict.attr_index_.names) == {a for a, c in counts.items() if c >= 2}


def test_joint_feature_difference_checks_label_ids(tiny_chunk_file):
    task, ds = fitted(tiny_chunk_file)
    X = task.featurize(ds)
    y = task.encode_targets(ds.targets)[0]
    bad = y.copy()
    bad[3] = task.n_labels
    with pytest.raises(InputError, match=f"label id {task.n_labels} at position 3"):
        task.structure_.joint_feature_difference(X[0], y, bad)
    with pytest.raises(InputError, match="one label id per token"):
        task.structure_.joint_feature_difference(X[0], y, y[:-1])
    d = task.structure_.joint_feature_difference(X[0], y, y.astype(np.int32))  # other int types convert
    assert d.nnz == 0


def test_subset_takes_any_iterable_of_ints():
    X = random_corpus(np.random.default_rng(1))
    ref = concat_corpora([X[2], X[0]])
    for idx in ((2, 0), range(2, -1, -2), (i for i in (2, 0)), np.array([2, 0], np.uint8)):
        assert same_corpus(X.subset(idx), ref)
