"""Viterbi, batched Viterbi and k-best Viterbi against brute-force enumeration."""

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference import (
    all_sequences,
    brute_force,
    hamming_augment,
    hamming_loss,
    kbest_viterbi,
    sequence_score,
    viterbi,
    viterbi_batch,
)
from latentstruct.testing import check_decoder, random_chain, scores_close


def make_chain(rng):
    """Random tiny chain: float scores, small-integer (tied) scores, or with -inf entries."""
    return random_chain(rng, max_T=4, max_L=3)


def chain_candidates(inst):
    return all_sequences(*inst[0].shape)


def chain_score(inst, y):
    return sequence_score(y, *inst)


def test_viterbi_matches_brute_force():
    rep = check_decoder(lambda inst: viterbi(*inst), chain_candidates, chain_score,
                        make_instance=make_chain, n_instances=400, random_state=1)
    assert rep.n_instances == 400
    assert rep.n_infeasible > 0  # the -inf instances produce some infeasible chains


def test_viterbi_random_tie_breaking_matches_brute_force():
    seeds = iter(range(10**6))
    check_decoder(lambda inst: viterbi(*inst, random_state=next(seeds)), chain_candidates, chain_score,
                  make_instance=make_chain, n_instances=400, random_state=2)


def test_viterbi_accepts_generator_and_defaults():
    rng = np.random.default_rng(0)
    u = rng.normal(size=(3, 2))
    tr = rng.normal(size=(2, 2))
    a = viterbi(u, tr)
    b = viterbi(u, tr, np.zeros(2), np.zeros(2), random_state=np.random.default_rng(5))
    assert scores_close(a.score, b.score)
    assert a.structure.dtype == np.int64 and a.structure.shape == (3,)


def test_loss_augmented_viterbi_matches_brute_force():
    def make(rng):
        unary, transition, start, end = make_chain(rng)
        T, L = unary.shape
        y_true = rng.integers(0, L, size=T)
        w = float(rng.choice([0.5, 1.0, 2.0]))
        return unary, transition, start, end, y_true, w

    check_decoder(
        lambda inst: viterbi(hamming_augment(inst[0], inst[4], inst[5]), *inst[1:4]),
        lambda inst: all_sequences(*inst[0].shape),
        lambda inst, y: sequence_score(y, *inst[:4]) + inst[5] * hamming_loss(y, inst[4]),
        make_instance=make, n_instances=300, random_state=3,
    )


def test_empty_and_length_one():
    r = viterbi(np.zeros((0, 3)), np.zeros((3, 3)))
    assert r.structure.shape == (0,) and r.score == 0.0 and r.exact
    r = viterbi([[1.0, 3.0, 2.0]], np.zeros((3, 3)), start=[0, 0, 5.0])
    assert r.structure.tolist() == [2] and r.score == 7.0


def test_infeasible_chain():
    tr = np.full((2, 2), -np.inf)
    r = viterbi(np.zeros((3, 2)), tr)
    assert r.status == "infeasible" and r.score == -np.inf
    assert kbest_viterbi(np.zeros((3, 2)), tr, k=3) == []
    res = viterbi_batch(np.zeros((3, 2)), [0, 1, 3], tr, None, None)
    assert res.scores[0] == 0.0 and res.scores[1] == -np.inf


def test_deterministic_ties_lowest_label():
    r = viterbi(np.zeros((4, 3)), np.zeros((3, 3)))
    assert r.structure.tolist() == [0, 0, 0, 0]


def test_random_tie_breaking_different_seeds_differ():
    u, tr = np.zeros((4, 3)), np.zeros((3, 3))
    structures = set()
    for seed in range(20):
        r = viterbi(u, tr, random_state=seed)
        assert r.score == 0.0 and r.exact
        structures.add(tuple(r.structure))
    assert len(structures) > 5
    # same seed, same answer
    assert np.array_equal(viterbi(u, tr, random_state=7).structure, viterbi(u, tr, random_state=7).structure)


def test_random_tie_breaking_is_uniform_over_optimal_paths():
    # 0 -> 1 is forbidden: optimal paths 000, 100, 110, 111 (all score 0).  Choosing each
    # back-pointer uniformly would not be uniform over paths; counting makes it so.
    tr = np.array([[0.0, -np.inf], [0.0, 0.0]])
    u = np.zeros((3, 2))
    rng = np.random.default_rng(0)
    counts = {}
    n = 4000
    for _ in range(n):
        y = tuple(viterbi(u, tr, random_state=rng).structure)
        counts[y] = counts.get(y, 0) + 1
    assert set(counts) == {(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)}
    for c in counts.values():
        assert abs(c / n - 0.25) < 0.03, counts


def test_random_tie_breaking_long_chain_does_not_overflow():
    u, tr = np.zeros((2000, 5)), np.zeros((5, 5))
    r = viterbi(u, tr, random_state=0)
    assert r.score == 0.0 and len(set(r.structure.tolist())) == 5


def _random_batch(rng, lengths, L, integer=False):
    N = int(sum(lengths))
    if integer:
        unary = rng.integers(-2, 3, size=(N, L)).astype(float)
    else:
        unary = rng.normal(size=(N, L))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return unary, offsets


def test_viterbi_batch_equals_per_sequence():
    rng = np.random.default_rng(4)
    for trial in range(50):
        L = int(rng.integers(1, 4))
        lengths = rng.integers(0, 6, size=int(rng.integers(1, 8)))
        lengths[0] = 0
        if lengths.size > 1:
            lengths[1] = 1
        unary, offsets = _random_batch(rng, lengths, L, integer=trial % 2 == 0)
        tr, st, en = rng.normal(size=(L, L)), rng.normal(size=L), rng.normal(size=L)
        labels, scores = viterbi_batch(unary, offsets, tr, st, en)
        assert labels.dtype == np.int64 and labels.shape == (unary.shape[0],)
        assert scores.dtype == np.float64 and scores.shape == (len(lengths),)
        for s in range(len(lengths)):
            a, b = offsets[s], offsets[s + 1]
            ref = viterbi(unary[a:b], tr, st, en)
            assert scores_close(scores[s], ref.score)
            assert scores_close(sequence_score(labels[a:b], unary[a:b], tr, st, en), scores[s])


def test_viterbi_batch_no_sequences_and_all_empty():
    labels, scores = viterbi_batch(np.zeros((0, 2)), [0], np.zeros((2, 2)), None, None)
    assert labels.shape == (0,) and scores.shape == (0,)
    labels, scores = viterbi_batch(np.zeros((0, 2)), [0, 0, 0], np.zeros((2, 2)), None, None)
    assert scores.tolist() == [0.0, 0.0]


def test_viterbi_batch_on_a_large_batch_equals_per_sequence_viterbi():
    """A CoNLL-sized batch in one call equals per-sentence Viterbi (no timing assertion:
    tests do not measure wall-clock time)."""
    rng = np.random.default_rng(5)
    L = 23  # CoNLL-2000 chunk tags in IOB2
    lengths = rng.integers(1, 48, size=9000)
    unary, offsets = _random_batch(rng, lengths, L)
    tr = rng.normal(size=(L, L))
    labels, scores = viterbi_batch(unary, offsets, tr, None, None)
    assert labels.shape == (unary.shape[0],) and scores.shape == (9000,)
    for s in np.concatenate([[0, 8999], rng.integers(0, 9000, size=200)]):
        a, b = offsets[s], offsets[s + 1]
        ref = viterbi(unary[a:b], tr)
        assert scores_close(scores[s], ref.score)
        assert scores_close(sequence_score(labels[a:b], unary[a:b], tr, None, None), scores[s])


def test_kbest_matches_sorted_enumeration():
    rng = np.random.default_rng(6)
    for _ in range(300):
        inst = make_chain(rng)
        T, L = inst[0].shape
        k = int(rng.integers(1, 12))
        res = kbest_viterbi(*inst, k=k)
        all_scores = sorted((chain_score(inst, y) for y in all_sequences(T, L)), reverse=True)
        finite = [s for s in all_scores if s > -np.inf]
        expected = finite[:k]
        assert len(res) == len(expected)
        for r, e in zip(res, expected):
            assert r.exact
            assert scores_close(r.score, e)
            assert scores_close(chain_score(inst, r.structure), r.score)
        assert len({tuple(r.structure) for r in res}) == len(res)  # distinct
        scores = [r.score for r in res]
        assert scores == sorted(scores, reverse=True)
        if res:
            assert scores_close(res[0].score, viterbi(*inst).score)


def test_kbest_with_huge_k_returns_all():
    res = kbest_viterbi(np.zeros((3, 2)), np.zeros((2, 2)), k=10**9)
    assert len(res) == 8
    assert kbest_viterbi(np.zeros((0, 2)), np.zeros((2, 2)), k=3)[0].structure.shape == (0,)


@pytest.mark.parametrize(
    "args, fragment",
    [
        ((np.zeros(3), np.zeros((3, 3))), "shape (3,)"),
        ((np.zeros((2, 3)), np.zeros((2, 2))), "(2, 2)"),
        ((np.zeros((2, 3)), np.zeros((3, 3)), np.zeros(2)), "start"),
        ((np.zeros((2, 3)), np.zeros((3, 3)), None, np.zeros((3, 1))), "end"),
        ((np.full((2, 3), np.nan), np.zeros((3, 3))), "NaN"),
        ((np.zeros((2, 3)), np.full((3, 3), np.inf)), "+inf"),
        ((np.zeros((2, 0)), np.zeros((0, 0))), "label"),
    ],
)
def test_viterbi_input_validation(args, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        viterbi(*args)


def test_other_validation_errors():
    u, tr = np.zeros((3, 2)), np.zeros((2, 2))
    with pytest.raises(InputError, match="random_state"):
        viterbi(u, tr, random_state="seed")
    with pytest.raises(InputError, match="k must be"):
        kbest_viterbi(u, tr, k=0)
    with pytest.raises(InputError, match="offsets must start at 0 and end at N = unary.shape\\[0\\] = 3"):
        viterbi_batch(u, [0, 2], tr, None, None)
    with pytest.raises(InputError, match="non-decreasing"):
        viterbi_batch(u, [0, 2, 1, 3], tr, None, None)
    with pytest.raises(InputError, match="integers"):
        viterbi_batch(u, [0, 1.5, 3], tr, None, None)


def test_brute_force_reference_agrees_with_simple_case():
    u = np.array([[1.0, 0.0], [0.0, 1.0]])
    tr = np.array([[0.0, 5.0], [0.0, 0.0]])
    ref = brute_force(lambda y: sequence_score(y, u, tr), all_sequences(2, 2))
    assert ref.structure.tolist() == [0, 1] and ref.score == 7.0
    assert viterbi(u, tr).structure.tolist() == [0, 1]
