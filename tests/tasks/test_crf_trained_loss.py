"""The CRF's loss on the trained weights only (``crf_kernels.TrainedLogLoss``, a chain's
``log_loss_trained``): on random corpora, with attribute values, unknown gold labels (−1),
chain constraints and every kind of support (CRFsuite's observed set, every state, every
transition, a support reaching start and end), its loss and gradient are those of the
whole-vector kernel ``log_loss_gradient`` at the expanded weights, gathered on the support,
bit for bit (the weights it skips are zeros)."""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.inference.constraints import ChainConstraints
from latentstruct.tasks.sequence.crf_kernels import (TrainedLogLoss, log_loss_gradient,
                                                     trained_layout)


def random_corpus(rng, n_sent, n_attr, L, *, values: bool, unknown: float, walk=None):
    """CSR arrays of ``n_sent`` sentences (1..7 tokens, 0..6 attributes a token, repeats
    allowed), gold labels with a share ``unknown`` of −1, attribute values or None, and
    the gold labels before any was made unknown.  ``walk`` (transitions (L, L), start (L,),
    bool): the complete labellings start and move only where it allows."""
    lengths = rng.integers(1, 8, size=n_sent)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n_tok = int(offsets[-1])
    per_token = rng.integers(0, 7, size=n_tok)
    indptr = np.concatenate([[0], np.cumsum(per_token)]).astype(np.int64)
    # a few frequent attributes (whole rows in the internal layout) and many rare ones
    ids = np.where(rng.random(indptr[-1]) < 0.4, rng.integers(0, 3, indptr[-1]),
                   rng.integers(0, n_attr, indptr[-1])).astype(np.int64)
    vals = rng.choice([0.5, -1.5, 2.0, 0.0, 1.0, 3.25], size=ids.size) if values else None
    complete = rng.integers(0, L, size=n_tok).astype(np.int64)
    if walk is not None:
        trans, start = walk
        for k in range(n_sent):
            y = rng.choice(np.flatnonzero(start))
            for t in range(offsets[k], offsets[k + 1]):
                complete[t] = y = y if t == offsets[k] else rng.choice(np.flatnonzero(trans[y]))
    labels = np.where(rng.random(n_tok) < unknown, -1, complete)
    return indptr, ids, vals, offsets, labels, complete


def random_walk_constraints(rng, L):
    """Allowed transitions (each label keeps a successor) and first labels."""
    trans = rng.random((L, L)) < 0.6
    trans[np.arange(L), rng.integers(0, L, size=L)] = True
    start = rng.random(L) < 0.6
    start[rng.integers(0, L)] = True
    return trans, start


def gold_constraints(rng, walk, offsets, complete, L):
    """The constraints of ``walk``, with the last labels of the complete gold labellings
    and some others allowed at the end (every example keeps a finite loss)."""
    end = rng.random(L) < 0.6
    end[complete[offsets[1:] - 1]] = True
    return ChainConstraints(walk[0], walk[1], end)


def observed_support(indptr, ids, offsets, labels, n_attr, L, *, states, transitions,
                     start_end=False, rng=None):
    """CRFsuite's feature set of the corpus (the pairs its gold labels show; every pair
    with ``states``), with every transition or only some, and optionally some start/end
    weights."""
    base = n_attr * L
    if states:
        emission = np.arange(base)
    else:
        token = np.repeat(np.arange(len(labels)), np.diff(indptr))
        known = labels[token] >= 0
        emission = np.unique(ids[known] * L + labels[token][known])
    if transitions:
        label_block = base + np.arange(L * L)
    else:
        label_block = base + np.flatnonzero(rng.random(L * L) < 0.5)
    parts = [emission, label_block]
    if start_end:
        parts.append(base + L * L + np.flatnonzero(rng.random(2 * L) < 0.5))
    return np.concatenate(parts).astype(np.int64)


def whole_and_trained(rng, corpus, support, n_attr, L, constraints, scale=0.8):
    indptr, ids, vals, offsets, labels, _ = corpus
    n_features = n_attr * L + L * L + 2 * L
    z = rng.normal(scale=scale, size=support.size)
    w = np.zeros(n_features)
    w[support] = z
    f, g, _ = log_loss_gradient(indptr, ids, offsets, labels, w, n_attr, L, attr_values=vals,
                                constraints=constraints)
    loss = TrainedLogLoss(indptr, ids, offsets, labels, trained_layout(support, n_attr, L),
                          attr_values=vals, constraints=constraints)
    return (f, g[support]), loss, z


CASES = [
    # (values, unknown share, constraints, possible states, all transitions, start/end)
    (False, 0.0, False, False, True, False),
    (True, 0.0, False, False, True, False),
    (True, 0.2, False, False, True, False),
    (False, 0.2, True, False, True, False),
    (True, 0.15, True, False, False, False),
    (True, 0.1, True, True, True, False),
    (False, 0.0, False, True, False, True),
    (False, 0.0, True, True, True, True),
    (True, 0.25, True, False, True, True),
]


@pytest.mark.parametrize("values, unknown, constrained, states, transitions, start_end", CASES)
@pytest.mark.parametrize("L", [1, 3, 6])
def test_trained_loss_is_the_whole_loss_gathered_on_the_support(values, unknown, constrained,
                                                                states, transitions,
                                                                start_end, L):
    rng = np.random.default_rng([L, int(values), int(unknown * 100), int(constrained),
                                 int(states), int(transitions), int(start_end)])
    n_attr = 40
    walk = random_walk_constraints(rng, L) if constrained else None
    corpus = random_corpus(rng, 30, n_attr, L, values=values, unknown=unknown, walk=walk)
    indptr, ids, vals, offsets, labels, complete = corpus
    constraints = None
    if constrained:
        constraints = gold_constraints(rng, walk, offsets, complete, L)
        assert L == 1 or not constraints.transitions.all()
    support = observed_support(indptr, ids, offsets, labels, n_attr, L, states=states,
                               transitions=transitions, start_end=start_end, rng=rng)
    layout = trained_layout(support, n_attr, L)
    assert layout.n_trained == support.size
    for seed in range(3):
        (f, g), loss, z = whole_and_trained(rng, corpus, support, n_attr, L, constraints)
        assert np.isfinite(f)
        got_f, got_g = loss(z)
        assert got_f == pytest.approx(f, rel=1e-12, abs=1e-10)
        np.testing.assert_allclose(got_g, g, rtol=0, atol=1e-10)
        # the same numbers: a skipped weight is a zero, which changes no sum
        assert got_f == f and np.array_equal(got_g, g)
        # into a given buffer (zeroed first), and again: the work arrays are reused
        out = np.full(support.size, np.nan)
        f2, g2 = loss(z, out=out)
        assert g2 is out and f2 == f and np.array_equal(out, g)


def test_blocks_of_sentences_evaluated_apart_sum_to_the_whole():
    rng = np.random.default_rng(5)
    n_attr, L = 25, 4
    corpus = random_corpus(rng, 40, n_attr, L, values=True, unknown=0.1)
    indptr, ids, vals, offsets, labels, _ = corpus
    support = observed_support(indptr, ids, offsets, labels, n_attr, L, states=False,
                               transitions=True)
    (f, g), loss, z = whole_and_trained(rng, corpus, support, n_attr, L, None)
    with pytest.raises(ValueError, match="load"):
        loss.evaluate(0, 3, np.empty(support.size), loss.work())
    loss.load(z)
    # blocks: contiguous sentence ranges, each with its gradient buffer and work array
    cuts = [0, 7, 7, 23, 40]
    results = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        out = np.full(support.size, np.nan)
        results.append((loss.evaluate(a, b, out, loss.work()), out))
    assert [loss.n_tokens(a, b) for a, b in zip(cuts[:-1], cuts[1:])] == [
        int(offsets[b] - offsets[a]) for a, b in zip(cuts[:-1], cuts[1:])]
    assert loss.n_tokens() == int(offsets[-1])
    np.testing.assert_array_equal(loss.sizes(), np.diff(offsets))
    assert results[1][0] == 0.0 and not results[1][1].any()
    total = sum(r[0] for r in results)
    grad = sum(r[1] for r in results)
    assert total == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(grad, g, rtol=0, atol=1e-10)
    # each block is the loss of its sentences alone (their own corpus view, by absolute
    # token position: its offsets do not start at 0)
    sub = TrainedLogLoss(indptr, ids, offsets[7:24], labels, loss.layout, attr_values=vals)
    f_sub, g_sub = sub(z)
    assert f_sub == results[2][0] and np.array_equal(g_sub, results[2][1])
    with pytest.raises(ValueError, match="not a range"):
        loss.evaluate(3, 41, np.empty(support.size), loss.work())
    with pytest.raises(ValueError, match="out must have shape"):
        loss.evaluate(0, 3, np.empty(support.size + 1), loss.work())


def test_layout_places_every_trained_weight_once():
    L, n_attr = 5, 6
    # attribute 0: every label (a whole row); 1: two of five; 2: none; 3: one (rows from
    # 1/4 of the labels: 2 of 5 is a row too); then two transitions, a start, an end
    support = np.array([0, 1, 2, 3, 4, 5 + 1, 5 + 3, 15 + 4, 30, 30 + 7, 30 + 25 + 2,
                        30 + 25 + 5 + 4])
    layout = trained_layout(support, n_attr, L)
    assert layout.n_emission == 8 and layout.n_trained == support.size
    em_ptr = layout.em_ptr.astype(np.int64)
    np.testing.assert_array_equal(np.diff(em_ptr), [5, 5, 0, 1, 0, 0])
    np.testing.assert_array_equal(layout.pos, [0, 1, 2, 3, 4, 6, 8, 10])
    np.testing.assert_array_equal(layout.em_label, [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 4])
    np.testing.assert_array_equal(layout.label_block, [0, 7, 27, 34])
    for bad in ([3, 2], [1, 1], [-1, 2], [0, n_attr * L + L * L + 2 * L]):
        with pytest.raises(ValueError, match="increasing weight indices"):
            trained_layout(np.array(bad), n_attr, L)
    with pytest.raises(ValueError, match="1-d array"):
        trained_layout(np.zeros((2, 2), np.int64), n_attr, L)
    empty = trained_layout(np.zeros(0, np.int64), n_attr, L)
    assert empty.n_trained == 0
    loss = TrainedLogLoss(np.array([0, 1]), np.array([2]), np.array([0, 1]), np.array([3]),
                          empty)
    f, g = loss(np.zeros(0))
    assert f == pytest.approx(np.log(L)) and g.shape == (0,)
    with pytest.raises(ValueError, match="trained weights"):
        loss(np.zeros(3))
