"""Hard constraints on a chain (``inference.constraints.ChainConstraints``), checked against
brute-force enumeration of the allowed labellings on many tiny random instances: the
constrained argmax (plain and loss-augmented, one sentence and batched, and the
label-factored form), the marginals and log Z, the CRF's loss and gradient, and the tag
schemes' well-formedness (``encodings.well_formed_constraints``)."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from latentstruct.exceptions import InputError
from latentstruct.inference.brute_force import all_sequences, sequence_score
from latentstruct.inference.constraints import ChainConstraints, token_mask
from latentstruct.inference.viterbi import kbest_viterbi, viterbi
from latentstruct.tasks.sequence.corpus import SequenceCorpus
from latentstruct.tasks.sequence.encodings import (ENCODINGS, encoding_labels, is_well_formed,
                                                   well_formed_constraints)
from latentstruct.tasks.sequence.structure import ChainStructure


def random_constraints(rng, L) -> ChainConstraints:
    """Random allowed parts, with at least one allowed labelling of every length (label 0
    may always start, follow itself and end)."""
    trans = rng.random((L, L)) < 0.6
    start, end = rng.random(L) < 0.6, rng.random(L) < 0.6
    trans[0, 0] = start[0] = end[0] = True
    return ChainConstraints(trans, start, end)


def allowed_labellings(c: ChainConstraints, T: int):
    return [y for y in all_sequences(T, c.n_labels) if c.allows(y)]


def test_a_constraint_is_immutable_and_compares_by_what_it_allows():
    c = ChainConstraints(np.eye(2, dtype=bool), [True, False], [True, True])
    assert c == ChainConstraints(np.eye(2, dtype=bool), [True, False], [True, True])
    assert c != ChainConstraints.unconstrained(2) and hash(c) == hash(
        ChainConstraints(np.eye(2, dtype=bool), [True, False], [True, True]))
    with pytest.raises(AttributeError):
        c.start = np.ones(2, bool)
    with pytest.raises(ValueError):
        c.start[0] = False  # read-only
    with pytest.raises(ValueError, match="bool array of shape"):
        ChainConstraints(np.eye(2), [True, True], [True, True])  # floats, not bools
    assert c.first_violation([1]) == (0, "start")
    assert c.first_violation([0, 1]) == (1, "transition")
    assert c.first_violation([0, -1, 1]) is None  # an unknown label violates nothing
    assert c.allows([0, 0]) and not c.allows([0, 1, 1])
    tm, sm, em = c.masks()
    assert tm.tolist() == [[0.0, -np.inf], [-np.inf, 0.0]] and sm.tolist() == [0.0, -np.inf]


@pytest.mark.parametrize("seed", range(40))
def test_constrained_viterbi_and_kbest_are_the_best_allowed_labellings(seed):
    rng = np.random.default_rng(seed)
    T, L = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    c = random_constraints(rng, L)
    unary, trans = rng.normal(size=(T, L)), rng.normal(size=(L, L))
    start, end = rng.normal(size=L), rng.normal(size=L)
    ranked = sorted(((sequence_score(y, unary, trans, start, end), tuple(y))
                     for y in allowed_labellings(c, T)), reverse=True)
    res = viterbi(unary, *c.apply(trans, start, end))
    assert res.score == pytest.approx(ranked[0][0]) and c.allows(res.structure)
    got = kbest_viterbi(unary, *c.apply(trans, start, end), k=len(ranked) + 2)
    finite = [r for r in got if np.isfinite(r.score)]
    assert [r.score for r in finite] == pytest.approx([s for s, _ in ranked])
    assert all(c.allows(r.structure) for r in finite)


def _corpus(rng, T, A):
    """One sentence of T tokens, each with two random attributes (ids < A) of random values."""
    ids = rng.integers(0, A, size=2 * T)
    return SequenceCorpus(np.arange(0, 2 * T + 1, 2), ids, np.array([0, T]),
                          attr_values=rng.uniform(0.5, 2.0, size=2 * T))


def _scores(structure, x, w):
    _, trans, start, end = structure.split_weights(w)
    return structure.unary_scores(x, w), trans, start, end


@pytest.mark.parametrize("seed", range(25))
def test_a_constrained_chain_structure_decodes_and_sums_over_the_allowed_labellings(seed):
    rng = np.random.default_rng(100 + seed)
    T, L, A = int(rng.integers(1, 5)), int(rng.integers(2, 4)), 4
    c = random_constraints(rng, L)
    s = ChainStructure(L, A, c)
    x = _corpus(rng, T, A)
    w = rng.normal(size=s.n_features)
    unary, trans, start, end = _scores(s, x, w)
    allowed = allowed_labellings(c, T)
    scores = np.array([sequence_score(y, unary, trans, start, end) for y in allowed])
    # the argmax, one sentence and batched, and its loss-augmented form
    best = s.argmax(x, w)
    assert best.score == pytest.approx(scores.max()) and c.allows(best.structure)
    assert np.array_equal(s.argmax_batch(x, w)[0], best.structure) or \
        sequence_score(s.argmax_batch(x, w)[0], unary, trans, start, end) == pytest.approx(
            scores.max())
    gold = allowed[int(rng.integers(len(allowed)))]
    aug = scores + np.array([np.count_nonzero(y != gold) for y in allowed])
    assert s.argmax(x, w, gold).score == pytest.approx(aug.max())
    assert c.allows(s.argmax_batch(x, w, [gold])[0])
    # log Z and the marginals: sums over the allowed labellings only
    log_z = logsumexp(scores)
    m = s.marginals(x, w)
    assert m.log_partition == pytest.approx(log_z)
    p = np.exp(scores - log_z)
    node = np.zeros((T, L))
    for y, py in zip(allowed, p):
        node[np.arange(T), y] += py
    assert np.allclose(m.node, node)
    assert np.allclose(s.marginals_batch(x, w)[0], node)
    # the CRF's loss and gradient (numerical, over w) of the gold labelling
    loss, grad = s.log_loss_batch(x, [gold], w)
    assert loss == pytest.approx(log_z - sequence_score(gold, unary, trans, start, end))
    eps = 1e-6
    for k in rng.choice(s.n_features, size=6, replace=False):
        d = np.zeros_like(w)
        d[k] = eps
        num = (s.log_loss_batch(x, [gold], w + d)[0] - s.log_loss_batch(x, [gold], w - d)[0])
        assert grad[k] == pytest.approx(num / (2 * eps), abs=1e-5)
    # the label-factored argmax keeps them too
    lf = s.argmax_from_part_scores(x, unary, trans, start, end)
    assert lf.score == pytest.approx(scores.max()) and c.allows(lf.structure)


def test_a_gold_labelling_the_constraints_forbid_has_an_infinite_loss():
    c = ChainConstraints(np.array([[True, False], [True, True]]), [True, True], [True, True])
    s = ChainStructure(2, 1, c)
    x = SequenceCorpus(np.array([0, 1, 2]), np.array([0, 0]), np.array([0, 2]))
    loss, _ = s.log_loss_batch(x, [np.array([0, 1])], np.zeros(s.n_features))
    assert loss == np.inf


def test_an_unconstrained_structure_is_the_plain_chain():
    rng = np.random.default_rng(7)
    plain, free = ChainStructure(3, 4), ChainStructure(3, 4, ChainConstraints.unconstrained(3))
    x = _corpus(rng, 4, 4)
    w = rng.normal(size=plain.n_features)
    assert plain.constraints is None and repr(plain) == \
        ("ChainStructure(n_labels=3, n_attributes=4, constraints=None, "
         "global_constraints=None, train_global=False)")
    assert np.array_equal(plain.argmax(x, w).structure, free.argmax(x, w).structure)
    assert plain.log_partition(x, w) == pytest.approx(free.log_partition(x, w))
    with pytest.raises(ValueError, match="constraints must be None or ChainConstraints"):
        ChainStructure(3, 4, ChainConstraints.unconstrained(2))
    import pickle
    again = pickle.loads(pickle.dumps(ChainStructure(2, 1, ChainConstraints.unconstrained(2))))
    assert again.constraints == ChainConstraints.unconstrained(2)


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_well_formed_constraints_allow_exactly_the_well_formed_sequences(encoding):
    labels = encoding_labels(["NP", "VP"], encoding)
    c = well_formed_constraints(labels, encoding)
    for T in range(1, 4):
        for y in itertools.product(range(len(labels)), repeat=T):
            tags = [labels[i] for i in y]
            assert c.allows(np.array(y)) == is_well_formed(tags, encoding), (encoding, tags)


def test_well_formed_constraints_refuse_a_label_of_another_scheme():
    with pytest.raises(InputError, match="label 1 .'E-NP'. is not a tag of the iob2 encoding"):
        well_formed_constraints(["O", "E-NP"], "iob2")


def test_allowed_labels_per_token():
    assert token_mask(None, 3, 2) is None and token_mask([None, None], 2, 2) is None
    m = token_mask([None, {1}, [0, 1]], 3, 2)
    assert m.tolist() == [[0.0, 0.0], [-np.inf, 0.0], [0.0, 0.0]]
    rng = np.random.default_rng(3)
    unary, trans = rng.normal(size=(3, 2)), rng.normal(size=(2, 2))
    assert viterbi(unary + m, trans).structure[1] == 1  # forced
    for bad, msg in [([None], "1 entry for 3 tokens"), ([None, set(), None], "token 1 is empty"),
                     ([None, [2], None], "token 1: expected label ids in 0..1"),
                     ("abc", "one entry per token")]:
        with pytest.raises(InputError, match=msg):
            token_mask(bad, 3, 2)
