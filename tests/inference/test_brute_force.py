"""The brute-force reference, the loss augmentations and latentstruct.testing.check_decoder."""

from math import comb, factorial

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference import (
    DecodeResult,
    alignment_hamming_augment,
    alignment_hamming_loss,
    alignment_score,
    all_alignments,
    all_binary_vectors,
    all_labelings,
    all_sequences,
    brute_force,
    hamming_augment,
    hamming_loss,
    sequence_score,
    viterbi,
)
from latentstruct.testing import check_decoder, random_chain, scores_close


@pytest.mark.parametrize("T, L", [(0, 3), (1, 1), (3, 2), (4, 3)])
def test_all_sequences_count_and_distinct(T, L):
    seqs = list(all_sequences(T, L))
    assert len(seqs) == L**T == len({tuple(s) for s in seqs})
    assert all(s.dtype == np.int64 and s.shape == (T,) for s in seqs)
    assert len(list(all_labelings(T, L))) == L**T


@pytest.mark.parametrize("m, n", [(0, 0), (0, 3), (2, 2), (3, 4), (4, 4)])
def test_all_alignments_counts(m, n):
    mono = list(all_alignments(m, n, monotone=True))
    full = list(all_alignments(m, n, monotone=False))
    assert len(mono) == sum(comb(m, k) * comb(n, k) for k in range(min(m, n) + 1))
    assert len(full) == sum(comb(m, k) * comb(n, k) * factorial(k) for k in range(min(m, n) + 1))
    assert len({tuple(a) for a in full}) == len(full)
    for a in mono:
        assert np.all(np.diff(a[a >= 0]) > 0)
    for a in full:
        used = a[a >= 0]
        assert len(set(used.tolist())) == used.size and np.all(used < n)


def test_all_binary_vectors():
    vs = list(all_binary_vectors(3))
    assert len(vs) == 8 and vs[0].dtype == np.int8
    assert len(list(all_binary_vectors(3, lambda z: z.sum() <= 1))) == 4
    assert [v.tolist() for v in all_binary_vectors(0)] == [[]]


def test_brute_force_semantics():
    r = brute_force(lambda x: -abs(x - 2), range(5))
    assert r.structure == 2 and r.score == 0 and r.status == "exact" and r.stats["n_candidates"] == 5
    r = brute_force(lambda x: 1.0, [3, 4])
    assert r.structure == 3  # first maximiser
    r = brute_force(lambda x: 0.0, [])
    assert r.status == "infeasible" and r.structure is None and r.score == -np.inf
    r = brute_force(lambda x: -np.inf, [1, 2])
    assert r.status == "infeasible"
    with pytest.raises(ValueError, match="NaN"):
        brute_force(lambda x: np.nan, [1])


def test_score_helpers_validate():
    with pytest.raises(InputError, match="labels"):
        sequence_score([0, 5], np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(InputError, match="a must be"):
        alignment_score([3], np.zeros((1, 2)))
    with pytest.raises(InputError, match="T must be"):
        list(all_sequences(-1, 2))


def test_hamming_augment_identity():
    rng = np.random.default_rng(40)
    for _ in range(100):
        unary, tr, st, en = random_chain(rng, kind="float")
        T, L = unary.shape
        y_true = rng.integers(0, L, size=T)
        w = float(rng.normal())
        aug = hamming_augment(unary, y_true, w)
        for y in all_sequences(T, L):
            lhs = sequence_score(y, aug, tr, st, en)
            rhs = sequence_score(y, unary, tr, st, en) + w * hamming_loss(y, y_true)
            assert scores_close(lhs, rhs)


def test_hamming_augment_does_not_modify_input_and_validates():
    u = np.zeros((2, 3))
    out = hamming_augment(u, [0, 2], 2.0)
    assert np.all(u == 0) and out.tolist() == [[0, 2, 2], [2, 2, 0]]
    with pytest.raises(ValueError, match=r"y_true must have shape \(T,\) = \(2,\)"):
        hamming_augment(u, [0], 1.0)
    with pytest.raises(ValueError, match=r"labels in \[0, 3\)"):
        hamming_augment(u, [0, 3], 1.0)


def test_alignment_augment_identity():
    rng = np.random.default_rng(41)
    for _ in range(60):
        m, n = int(rng.integers(0, 4)), int(rng.integers(0, 4))
        s = rng.normal(size=(m, n))
        cands = list(all_alignments(m, n, monotone=False))
        a_true = cands[int(rng.integers(0, len(cands)))]
        w = float(rng.uniform(0.1, 3))
        aug = alignment_hamming_augment(s, a_true, w)
        assert aug.constant == w * np.count_nonzero(a_true >= 0)
        for a in cands:
            lhs = alignment_score(a, aug.scores) + aug.constant
            rhs = alignment_score(a, s) + w * alignment_hamming_loss(a, a_true, n)
            assert scores_close(lhs, rhs)
    # wrong target for one source costs 2
    assert alignment_hamming_loss([1, -1], [0, -1], 2) == 2


# -- check_decoder itself -----------------------------------------------------------------
def _chain_check(decode, **kw):
    return check_decoder(
        decode,
        lambda inst: all_sequences(*inst[0].shape),
        lambda inst, y: sequence_score(y, *inst),
        make_instance=lambda rng: random_chain(rng, kind="float"),
        **kw,
    )


def test_check_decoder_passes_viterbi():
    rep = _chain_check(lambda inst: viterbi(*inst), n_instances=50)
    assert rep.n_instances == 50 and rep.max_abs_error < 1e-9


def test_check_decoder_catches_suboptimal_decoder():
    def greedy(inst):
        unary = inst[0]
        y = unary.argmax(axis=1) if unary.shape[0] else np.zeros(0, dtype=np.int64)
        return DecodeResult(y, sequence_score(y, *inst))

    with pytest.raises(AssertionError, match="differs from the brute-force maximum"):
        _chain_check(greedy, n_instances=50)


def test_check_decoder_catches_wrong_reported_score():
    def lying(inst):
        r = viterbi(*inst)
        return DecodeResult(r.structure, r.score, stats={}) if r.structure.size == 0 else DecodeResult(
            np.zeros_like(r.structure), r.score)

    with pytest.raises(AssertionError, match="returned structure scores"):
        _chain_check(lying, n_instances=50)


def test_check_decoder_catches_illegal_structure_and_bad_status():
    def illegal(inst):
        r = viterbi(*inst)
        return DecodeResult(np.append(r.structure, 0), r.score)

    with pytest.raises(AssertionError, match="not one of the legal candidates"):
        check_decoder(
            illegal,
            lambda inst: all_sequences(*inst[0].shape),
            lambda inst, y: sequence_score(y[: inst[0].shape[0]], *inst),
            make_instance=lambda rng: random_chain(rng, kind="float"),
            n_instances=20,
        )
    with pytest.raises(AssertionError, match="status is 'time_limit'"):
        _chain_check(lambda inst: DecodeResult(viterbi(*inst).structure, viterbi(*inst).score, "time_limit"),
                     n_instances=5)
    with pytest.raises(AssertionError, match="expected a DecodeResult"):
        _chain_check(lambda inst: viterbi(*inst).structure, n_instances=5)


def test_a_decode_result_survives_pickling_and_copies_with_every_field():
    """Workers send results back pickled; DecodeResult pickles through its constructor."""
    import copy
    import pickle

    from latentstruct.inference.result import TIME_LIMIT, DecodeResult

    r = DecodeResult(np.array([2, -1, 0]), 1.25, TIME_LIMIT, {"nodes": 3, "time": 0.5})
    for q in (pickle.loads(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)),
              copy.deepcopy(r), copy.copy(r)):
        assert type(q) is DecodeResult
        np.testing.assert_array_equal(q.structure, r.structure)
        assert (q.score, q.status, q.stats) == (1.25, TIME_LIMIT, {"nodes": 3, "time": 0.5})
        assert not q.exact
