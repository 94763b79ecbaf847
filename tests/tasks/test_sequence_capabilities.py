"""The marginalizable and label-factored capabilities of sequence labelling, against enumeration.

Sentences of the tiny CoNLL-2000 fixture are cut into windows of at most 4 tokens so that every
one of the L**T labellings (L = 7 chunk labels) can be enumerated.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from latentstruct.exceptions import InputError
from latentstruct.inference.chain import ChainMarginals
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.base import StructuredTask
from latentstruct.tasks.contracts import LABEL_FACTORED, MARGINALIZABLE, missing_methods
from latentstruct.tasks.sequence import concat_corpora
from latentstruct.tasks.sequence.capabilities import (
    PART_ARITY,
    ChainPartScores,
    LabelFactoredSequence,
    MarginalizableSequence,
    SequenceLabelCounts,
    SequenceLabelParts,
)
from latentstruct.testing import all_sequences, check_decoder, sequence_score
from conftest import token_slice

Task = ChunkTask


@pytest.fixture
def tiny(tiny_chunk_file):
    """(the task's chain structure, [(x, y), ...]) with every window of 1..4 tokens of the
    fixture's sentences."""
    task = Task(constrained=False)  # the plain chain: windows may start inside a chunk
    ds = task.read(tiny_chunk_file)
    task.fit(ds)
    X = task.featurize(ds)
    Y = task.encode_targets(ds.targets)
    windows = []
    for i in range(len(X)):
        T = X[i].n_tokens
        for length in range(1, 5):
            for a in range(0, T - length + 1, 2):
                windows.append((token_slice(X[i], a, a + length), Y[i][a : a + length]))
    assert isinstance(task.structure_, MarginalizableSequence)
    assert isinstance(task.structure_, LabelFactoredSequence)
    return task.structure_, windows


def feature_matrix(task, x):
    """All labellings of x and their dense joint feature vectors (n_labellings, n_features)."""
    ys = list(all_sequences(x.n_tokens, task.n_labels))
    return ys, np.stack([task.joint_feature(x, y).to_dense(task.n_features) for y in ys])


def test_declared_capabilities_are_implemented():
    assert {MARGINALIZABLE, LABEL_FACTORED} <= Task.capabilities
    assert missing_methods(Task, (StructuredTask,)) == {}


# ============================================================================================
# marginalizable
# ============================================================================================
@pytest.mark.slow
def test_marginals_and_expected_feature_match_enumeration(tiny):
    task, windows = tiny
    rng = np.random.default_rng(0)
    L = task.n_labels
    short = [wy for wy in windows if wy[0].n_tokens <= 3]
    picked = [short[int(i)] for i in rng.choice(len(short), size=14, replace=False)]
    picked += [wy for wy in windows if wy[0].n_tokens == 4][:3]
    for x, _ in picked:
        T = x.n_tokens
        ys, Phi = feature_matrix(task, x)
        for _ in range(3):
            w = 0.5 * rng.normal(size=task.n_features)
            s = Phi @ w
            mx = s.max()
            p = np.exp(s - mx)
            log_z = float(mx + np.log(p.sum()))
            p /= p.sum()

            m = task.marginals(x, w)
            assert isinstance(m, ChainMarginals)
            assert abs(task.log_partition(x, w) - log_z) <= 1e-9 * max(1.0, abs(log_z))
            assert m.log_partition == task.log_partition(x, w)
            node = np.zeros((T, L))
            edge = np.zeros((T - 1, L, L))
            for y, py in zip(ys, p):
                node[np.arange(T), y] += py
                for t in range(T - 1):
                    edge[t, y[t], y[t + 1]] += py
            np.testing.assert_allclose(m.node, node, atol=1e-9)
            np.testing.assert_allclose(m.edge, edge, atol=1e-9)
            np.testing.assert_allclose(m.node.sum(axis=1), 1.0, atol=1e-12)
            for t in range(T - 1):
                np.testing.assert_allclose(m.edge[t].sum(axis=1), m.node[t], atol=1e-12)
                np.testing.assert_allclose(m.edge[t].sum(axis=0), m.node[t + 1], atol=1e-12)

            ef = task.expected_feature(x, w)
            assert ef.shape == (task.n_features,) and ef.dtype == np.float64
            np.testing.assert_allclose(ef, p @ Phi, atol=1e-9)
            np.testing.assert_allclose(task.expected_feature_sparse(x, w).to_dense(task.n_features), ef,
                                       atol=0)


def test_expected_feature_is_the_gradient_of_log_partition(tiny):
    task, windows = tiny
    rng = np.random.default_rng(1)
    eps = 1e-6
    for k in rng.choice(len(windows), size=10, replace=False):
        x, _ = windows[int(k)]
        w = 0.5 * rng.normal(size=task.n_features)
        ef = task.expected_feature(x, w)
        for _ in range(3):
            v = rng.normal(size=task.n_features)
            v /= np.linalg.norm(v)
            fd = (task.log_partition(x, w + eps * v) - task.log_partition(x, w - eps * v)) / (2 * eps)
            assert fd == pytest.approx(ef @ v, abs=1e-6)


def test_empty_sentence_and_wrong_input(tiny):
    task, windows = tiny
    x = windows[0][0]
    w = np.random.default_rng(2).normal(size=task.n_features)
    empty = token_slice(x, 0, 0)
    assert task.log_partition(empty, w) == 0.0
    assert not task.expected_feature(empty, w).any()
    two = concat_corpora([windows[0][0], windows[1][0]])
    with pytest.raises(InputError, match="one sentence"):
        task.marginals(two, w)
    with pytest.raises(ValueError, match="shape"):
        task.log_partition(x, w[:-1])


# ============================================================================================
# label-factored
# ============================================================================================
def identity_factors(task, w):
    emission, transition, start, end = task.split_weights(w)
    return emission, np.eye(task.n_labels), transition, start, end


def test_parts_hold_token_rows_and_arities(tiny):
    task, windows = tiny
    for x, _ in windows[:10]:
        before = x.attr_ids.copy()
        parts = task.label_factored_parts(x)
        assert isinstance(parts, SequenceLabelParts)
        assert sp.isspmatrix_csr(parts.rows)
        assert parts.rows.shape == (x.n_tokens, task.n_attributes) and parts.n_tokens == x.n_tokens
        assert parts.n_labels == task.n_labels
        assert dict(parts.part_arity) == {"emission": 1, "transition": 2, "start": 1, "end": 1}
        assert parts.part_arity is PART_ARITY
        dense = parts.rows.toarray()
        for t in range(x.n_tokens):
            ids = x.attr_ids[x.attr_indptr[t] : x.attr_indptr[t + 1]]
            assert dense[t].sum() == len(ids)
            assert set(np.flatnonzero(dense[t])) == set(ids.tolist())
        np.testing.assert_array_equal(x.attr_ids, before)  # x is not modified


def test_identity_label_matrix_reproduces_the_task(tiny):
    task, windows = tiny
    rng = np.random.default_rng(3)
    for x, y in windows:
        for kind in ("int", "float"):
            w = rng.integers(-3, 4, size=task.n_features).astype(float) if kind == "int" \
                else rng.normal(size=task.n_features)
            own = task.part_scores(x, w)
            got = task.part_scores_from_label_matrix(task.label_factored_parts(x), *identity_factors(task, w))
            assert isinstance(got, ChainPartScores)
            for a, b in zip(got, own):
                if kind == "int":
                    np.testing.assert_array_equal(a, b)
                else:
                    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
            plain = task.argmax_from_part_scores(x, *got)
            assert plain.status == "exact"
            assert plain.score == pytest.approx(task.argmax(x, w).score, abs=1e-9)
            aug = task.argmax_from_part_scores(x, *got, y_true=y)
            assert aug.score == pytest.approx(task.argmax(x, w, y).score, abs=1e-9)
            unseen = np.array(y).copy()
            unseen[0] = -1  # a gold label unseen in training: every label is wrong there
            aug = task.argmax_from_part_scores(x, *got, y_true=unseen)
            assert aug.score == pytest.approx(task.argmax(x, w, unseen).score, abs=1e-9)


def by_hand(x, y, W_E, A, W_T, s, e):
    """DISTRO score of labels y, with explicit loops over tokens and attributes."""
    total = 0.0
    for t in range(len(y)):
        for p in range(x.attr_indptr[t], x.attr_indptr[t + 1]):
            total += W_E[x.attr_ids[p]] @ A[:, y[t]]
        if t > 0:
            total += A[:, y[t - 1]] @ W_T @ A[:, y[t]]
    return total + s @ A[:, y[0]] + e @ A[:, y[-1]]


@pytest.mark.slow
@pytest.mark.parametrize("augmented", [False, True])
def test_random_label_matrix_argmax_matches_brute_force(tiny, augmented):
    task, windows = tiny
    short = [wy for wy in windows if wy[0].n_tokens <= 3] + [wy for wy in windows if wy[0].n_tokens == 4][:3]
    L = task.n_labels

    def make_instance(rng):
        x, y = short[int(rng.integers(len(short)))]
        d = int(rng.integers(1, L + 3))
        A = rng.normal(size=(d, L))
        A /= np.linalg.norm(A, axis=0)  # unit columns, as DISTRO keeps them
        factors = (rng.normal(size=(task.n_attributes, d)), A, rng.normal(size=(d, d)),
                   rng.normal(size=d), rng.normal(size=d))
        return x, (y if augmented else None), factors

    def decode(inst):
        x, y_true, factors = inst
        scores = task.part_scores_from_label_matrix(task.label_factored_parts(x), *factors)
        res = task.argmax_from_part_scores(x, *scores, y_true=y_true)
        # the reported score is the chain score of the part scores
        assert res.score == pytest.approx(sequence_score(res.structure, *scores)
                                          + (0 if y_true is None else task.loss(y_true, res.structure)),
                                          abs=1e-9)
        return res

    def score(inst, y):
        x, y_true, factors = inst
        return by_hand(x, y, *factors) + (0.0 if y_true is None else task.loss(y_true, y))

    check_decoder(decode, lambda inst: all_sequences(inst[0].n_tokens, L), score,
                  make_instance=make_instance, n_instances=30, random_state=4 + augmented)


def test_label_counts_rebuild_the_joint_feature(tiny):
    task, windows = tiny
    rng = np.random.default_rng(5)
    L = task.n_labels
    for x, y in windows:
        for labels in (np.asarray(y), rng.integers(-1, L, size=len(y))):
            c = task.label_counts(x, labels)
            assert isinstance(c, SequenceLabelCounts)
            np.testing.assert_array_equal(c.token_labels, labels)
            R = task.label_factored_parts(x).rows
            Y = c.emission_indicator()
            assert Y.shape == (len(labels), L)
            # with one-hot label vectors the counts give Phi(x, y) block by block
            phi = np.concatenate([(R.T @ Y).toarray().ravel(), c.transition_counts().ravel(),
                                  c.start_indicator(), c.end_indicator()])
            np.testing.assert_array_equal(phi, task.joint_feature(x, labels).to_dense(task.n_features))
            assert c.bigrams.shape[1] == 2 and len(c.bigrams) <= max(len(labels) - 1, 0)


def test_label_counts_give_the_distro_gradient(tiny):
    """The gradient formulas in SequenceLabelCounts' docstring, against finite differences."""
    task, windows = tiny
    rng = np.random.default_rng(6)
    L = task.n_labels
    for x, y in [wy for wy in windows if wy[0].n_tokens >= 3][:5]:
        d = 3
        W_E, A, W_T = rng.normal(size=(task.n_attributes, d)), rng.normal(size=(d, L)), rng.normal(size=(d, d))
        s, e = rng.normal(size=d), rng.normal(size=d)
        c = task.label_counts(x, y)
        R = task.label_factored_parts(x).rows
        Y, C, si, ei = c.emission_indicator(), c.transition_counts(), c.start_indicator(), c.end_indicator()
        grads = [np.asarray(R.T @ (Y @ A.T)), (W_E.T @ (R.T @ Y)) + W_T @ A @ C.T + W_T.T @ A @ C
                 + np.outer(s, si) + np.outer(e, ei), A @ C @ A.T, A @ si, A @ ei]
        params = [W_E, A, W_T, s, e]
        for k, g in enumerate(grads):
            v = rng.normal(size=params[k].shape)
            plus = [p + 1e-6 * v if j == k else p for j, p in enumerate(params)]
            minus = [p - 1e-6 * v if j == k else p for j, p in enumerate(params)]
            fd = (by_hand(x, y, *plus) - by_hand(x, y, *minus)) / 2e-6
            assert fd == pytest.approx(float(np.sum(g * v)), abs=1e-6)


def test_label_factored_input_errors(tiny):
    task, windows = tiny
    x, y = windows[5]
    parts = task.label_factored_parts(x)
    L, n_attr = task.n_labels, task.n_attributes
    good = dict(W_E=np.zeros((n_attr, 2)), A=np.zeros((2, L)), W_T=np.zeros((2, 2)),
                start_vec=np.zeros(2), end_vec=np.zeros(2))
    for name, bad, match in [("A", np.zeros((2, L + 1)), "A must have shape"),
                             ("W_E", np.zeros((n_attr + 1, 2)), "W_E must have shape"),
                             ("W_T", np.zeros((2, 3)), "W_T must have shape"),
                             ("start_vec", np.zeros(3), "start_vec must have shape"),
                             ("A", np.full((2, L), np.nan), "NaN")]:
        with pytest.raises(InputError, match=match):
            task.part_scores_from_label_matrix(parts, **{**good, name: bad})
    scores = task.part_scores_from_label_matrix(parts, **good)
    with pytest.raises(InputError, match="unary must have shape"):
        task.argmax_from_part_scores(x, scores.unary[:-1], *scores[1:])
    with pytest.raises(InputError, match="shape"):
        task.label_counts(x, np.zeros(len(y) + 1, np.int64))
    with pytest.raises(InputError, match="labels in"):
        task.label_counts(x, np.full(len(y), L))
