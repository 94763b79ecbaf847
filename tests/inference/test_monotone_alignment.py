"""Monotone alignment DP and bipartite matching against brute force."""

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference import (
    alignment_hamming_augment,
    alignment_hamming_loss,
    alignment_score,
    alignment_to_indicator,
    all_alignments,
    bipartite_matching,
    indicator_to_alignment,
    monotone_alignment,
)
from latentstruct.testing import check_decoder, random_alignment_scores


def make_scores(rng, max_m=4, max_n=4):
    return random_alignment_scores(rng, max_m, max_n)


def _check(decode, monotone, n_instances, seed):
    return check_decoder(
        decode,
        lambda s: all_alignments(*s.shape, monotone=monotone),
        lambda s, a: alignment_score(a, s),
        make_instance=make_scores,
        n_instances=n_instances,
        random_state=seed,
    )


def test_monotone_alignment_matches_brute_force():
    _check(monotone_alignment, True, 400, 10)


def test_monotone_alignment_random_ties_match_brute_force():
    seeds = iter(range(10**6))
    _check(lambda s: monotone_alignment(s, random_state=next(seeds)), True, 400, 11)


def test_bipartite_matching_matches_brute_force():
    _check(bipartite_matching, False, 400, 12)


def test_returned_alignment_is_monotone_and_one_to_one():
    rng = np.random.default_rng(13)
    for _ in range(200):
        s = make_scores(rng, 6, 6)
        for a in (monotone_alignment(s).structure, monotone_alignment(s, random_state=rng).structure):
            used = a[a >= 0]
            assert np.all(np.diff(used) > 0)
        b = bipartite_matching(s).structure
        used = b[b >= 0]
        assert len(set(used.tolist())) == used.size


def test_negative_cells_never_taken():
    s = -np.ones((3, 3))
    assert monotone_alignment(s).structure.tolist() == [-1, -1, -1]
    assert bipartite_matching(s).structure.tolist() == [-1, -1, -1]
    assert monotone_alignment(s).score == 0.0


def test_crossing_versus_monotone():
    s = np.array([[0.0, 5.0], [5.0, 0.0]])
    assert monotone_alignment(s).score == 5.0
    m = bipartite_matching(s)
    assert m.score == 10.0 and m.structure.tolist() == [1, 0]


def test_random_ties_uniform_over_optimal_alignments():
    # all-zero 2x2: the 6 monotone alignments are all optimal
    s = np.zeros((2, 2))
    rng = np.random.default_rng(14)
    counts = {}
    n = 6000
    for _ in range(n):
        r = monotone_alignment(s, random_state=rng)
        assert r.score == 0.0
        counts[tuple(r.structure)] = counts.get(tuple(r.structure), 0) + 1
    assert len(counts) == 6
    for c in counts.values():
        assert abs(c / n - 1 / 6) < 0.03, counts


def test_random_ties_different_seeds_differ():
    s = np.zeros((4, 4))
    seen = {tuple(monotone_alignment(s, random_state=seed).structure) for seed in range(20)}
    assert len(seen) > 5
    assert monotone_alignment(s).structure.tolist() == [-1, -1, -1, -1]  # deterministic default


def test_large_random_ties_do_not_overflow():
    r = monotone_alignment(np.zeros((300, 300)), random_state=0)
    assert r.score == 0.0 and r.structure.shape == (300,)
    used = r.structure[r.structure >= 0]
    assert np.all(np.diff(used) > 0)


def test_empty_inputs():
    assert monotone_alignment(np.zeros((0, 3))).structure.shape == (0,)
    assert monotone_alignment(np.zeros((3, 0))).structure.tolist() == [-1, -1, -1]
    assert bipartite_matching(np.zeros((2, 0))).score == 0.0


def test_loss_augmented_monotone_and_matching_match_brute_force():
    def make(rng):
        s = make_scores(rng)
        m, n = s.shape
        monotone = bool(rng.integers(0, 2))
        cands = list(all_alignments(m, n, monotone))
        a_true = cands[int(rng.integers(0, len(cands)))]
        w = float(rng.choice([0.5, 1.0, 3.0]))
        return s, a_true, w, monotone

    def decode(inst):
        s, a_true, w, monotone = inst
        aug = alignment_hamming_augment(s, a_true, w)
        r = (monotone_alignment if monotone else bipartite_matching)(aug.scores)
        return type(r)(r.structure, r.score + aug.constant, r.status)

    check_decoder(
        decode,
        lambda inst: all_alignments(*inst[0].shape, monotone=inst[3]),
        lambda inst, a: alignment_score(a, inst[0]) + inst[2] * alignment_hamming_loss(a, inst[1], inst[0].shape[1]),
        make_instance=make, n_instances=300, random_state=15,
    )


def test_indicator_round_trip():
    for m, n in [(0, 0), (3, 2), (2, 4), (4, 4)]:
        for a in all_alignments(m, n, monotone=False):
            z = alignment_to_indicator(a, n)
            assert z.shape == (m, n)
            assert np.array_equal(indicator_to_alignment(z), a)


def test_indicator_validation():
    with pytest.raises(InputError, match="column 0"):
        indicator_to_alignment([[1, 0], [1, 0]])
    with pytest.raises(InputError, match="row 0"):
        indicator_to_alignment([[1, 1]])
    with pytest.raises(InputError, match="out of range"):
        alignment_to_indicator([0, 3], 3)
    with pytest.raises(InputError, match="shape"):
        indicator_to_alignment(np.zeros(3))


@pytest.mark.parametrize("decoder", [monotone_alignment, bipartite_matching])
def test_alignment_input_validation(decoder):
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        decoder(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        decoder(np.array([[np.nan]]))


def test_augment_validation():
    with pytest.raises(ValueError, match=r"a_true must have shape \(m,\) = \(2,\)"):
        alignment_hamming_augment(np.zeros((2, 2)), [0], 1.0)
    with pytest.raises(ValueError, match="one-to-one"):
        alignment_hamming_augment(np.zeros((2, 2)), [0, 0], 1.0)
    with pytest.raises(ValueError, match="weight"):
        alignment_hamming_augment(np.zeros((2, 2)), [0, 1], np.nan)
