"""Eisner's algorithm, its exact k-best and loss augmentation, against brute-force enumeration."""

import importlib

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference import (
    DecodeResult,
    KBestTrees,
    all_dependency_trees,
    brute_force_dependency,
    dependency_score,
    eisner,
    eisner_batch,
    eisner_kbest,
    head_hamming_augmented,
    projective_trees,
)
from latentstruct.inference.brute_force import _is_projective, _is_tree

# the module (``latentstruct.inference.eisner`` as an attribute is the function of that name)
eisner_module = importlib.import_module("latentstruct.inference.eisner")

SINGLE_ROOT_COUNTS = [1, 2, 7, 30, 143, 728]  # n = 1..6
MULTI_ROOT_COUNTS = [1, 3, 12, 55, 273, 1428]


def tree_set(n, single_root):
    return {tuple(h.tolist()) for h in projective_trees(n, single_root=single_root)}


def arc_sum(S, heads):
    """Score recomputed independently of the decoder (plain loop)."""
    return sum(float(S[h, m]) for m, h in enumerate(heads, start=1))


def is_valid(heads, n, single_root):
    h = (0, *[int(x) for x in heads])
    return (
        len(heads) == n
        and all(0 <= x <= n for x in h[1:])
        and _is_tree(h)
        and _is_projective(h)
        and (not single_root or h[1:].count(0) == 1)
    )


def random_instance(rng, n, style):
    S = rng.normal(size=(n + 1, n + 1))
    if style == "integer":  # many exact ties
        S = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(float)
    elif style == "forbidden":  # some instances end up infeasible
        S[rng.random(S.shape) < 0.35] = -np.inf
    return S


# ------------------------------------------------------------------------------------------
# enumeration
# ------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("n", range(1, 7))
def test_tree_counts(n):
    single = list(projective_trees(n))
    multi = list(projective_trees(n, single_root=False))
    assert len(single) == SINGLE_ROOT_COUNTS[n - 1]
    assert len(multi) == MULTI_ROOT_COUNTS[n - 1]
    assert eisner_module._n_projective_trees(n, True) == len(single)
    assert eisner_module._n_projective_trees(n, False) == len(multi)
    # sanity check without the projectivity filter: Cayley's counts of trees rooted at 0
    all_multi = {tuple(h) for h in all_dependency_trees(n, single_root=False, projective=False)}
    all_single = {tuple(h) for h in all_dependency_trees(n, single_root=True, projective=False)}
    assert len(all_multi) == (n + 1) ** (n - 1)
    assert len(all_single) == n ** (n - 1)
    multi_set = {tuple(h) for h in multi}
    single_set = {tuple(h) for h in single}
    assert len(multi_set) == len(multi) and len(single_set) == len(single)
    assert single_set <= multi_set <= all_multi and single_set <= all_single
    assert single_set == {h for h in multi_set if h.count(0) == 1}
    assert all(h.dtype == np.int64 and h.shape == (n,) for h in single + multi)


def test_projectivity_filter_examples():
    assert not _is_projective((0, 0, 4, 1, 0))  # arcs 1 -> 3 and 4 -> 2 cross
    assert _is_projective((0, 0, 1, 2))  # chain 0 -> 1 -> 2 -> 3
    assert not _is_projective((0, 3, 0, 0))  # arc 3 -> 1 crosses 0 -> 2
    assert not _is_tree((0, 2, 1))  # cycle 1 <-> 2
    assert (3, 0, 2) not in tree_set(3, False)  # 3 -> 1 crosses 0 -> 2
    assert (3, 0, 2) in {tuple(h.tolist()) for h in all_dependency_trees(3, projective=False)}
    with pytest.raises(InputError, match="n must be between 1 and 7"):
        list(projective_trees(8))
    with pytest.raises(InputError, match="n must be between 1 and 7"):
        list(projective_trees(0))


def test_brute_force_dependency_sorted_and_finite():
    rng = np.random.default_rng(3)
    S = rng.normal(size=(4, 4))
    S[0, 2] = -np.inf
    res = brute_force_dependency(S, single_root=False, k=1000)
    scores = [s for _, s in res]
    assert scores == sorted(scores, reverse=True)
    assert len(res) == sum(1 for h in projective_trees(3, single_root=False) if h[1] != 0)
    assert all(np.isclose(s, dependency_score(h, S)) for h, s in res)
    assert len(brute_force_dependency(S, k=3)) == 3
    S[:] = -np.inf
    assert brute_force_dependency(S, k=5) == []


# ------------------------------------------------------------------------------------------
# Eisner and k-best Eisner against brute force
# ------------------------------------------------------------------------------------------
def _check_against_brute_force(S, single_root, k):
    n = S.shape[0] - 1
    ref = brute_force_dependency(S, single_root=single_root, k=10_000)  # every finite tree
    trees = tree_set(n, single_root)
    r = eisner(S, single_root=single_root)
    assert isinstance(r, DecodeResult)
    assert r.structure.dtype == np.int64 and r.structure.shape == (n,)
    assert is_valid(r.structure, n, single_root) and tuple(r.structure.tolist()) in trees
    if ref:
        assert r.status == "exact"
        assert np.isclose(r.score, ref[0][1], rtol=0, atol=1e-9)
        assert np.isclose(arc_sum(S, r.structure), r.score, rtol=0, atol=1e-9)
    else:
        assert r.status == "infeasible" and r.score == -np.inf

    kb = eisner_kbest(S, k, single_root=single_root)
    assert isinstance(kb, KBestTrees)
    expected = min(k, len(ref))
    assert kb.heads.shape == (expected, n) and kb.heads.dtype == np.int64
    assert kb.scores.shape == (expected,) and kb.scores.dtype == np.float64
    np.testing.assert_allclose(kb.scores, [s for _, s in ref[:k]], rtol=0, atol=1e-9)
    assert np.all(np.diff(kb.scores) <= 0)
    assert len({tuple(h.tolist()) for h in kb.heads}) == expected  # distinct trees
    for h, s in zip(kb.heads, kb.scores):
        assert tuple(h.tolist()) in trees and is_valid(h, n, single_root)
        assert np.isclose(arc_sum(S, h), s, rtol=0, atol=1e-9)
    if expected:
        assert kb.heads[0].tolist() == r.structure.tolist() and kb.scores[0] == r.score
    return ref, kb


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("style", ["normal", "forbidden", "integer"])
def test_eisner_and_kbest_match_brute_force(single_root, style):
    rng = np.random.default_rng(100 + 7 * single_root + len(style))
    n_inst = 0
    for _ in range(60):
        n = int(rng.integers(1, 7))
        S = random_instance(rng, n, style)
        k = int(rng.integers(1, 21))
        _check_against_brute_force(S, single_root, k)
        n_inst += 1
    assert n_inst == 60


@pytest.mark.parametrize("single_root", [True, False])
def test_kbest_all_trees_when_k_exceeds_count(single_root):
    rng = np.random.default_rng(8)
    for n in range(1, 7):
        S = rng.normal(size=(n + 1, n + 1))
        ref, kb = _check_against_brute_force(S, single_root, 5000)
        assert len(kb) == len(ref) == (SINGLE_ROOT_COUNTS if single_root else MULTI_ROOT_COUNTS)[n - 1]
        assert {tuple(h.tolist()) for h in kb.heads} == tree_set(n, single_root)


def test_infeasible_and_forced():
    n = 4
    S = np.full((n + 1, n + 1), -np.inf)
    for sr in (True, False):
        r = eisner(S, single_root=sr)
        assert r.status == "infeasible" and r.score == -np.inf
        assert is_valid(r.structure, n, sr)  # still a well-formed tree
        kb = eisner_kbest(S, 5, single_root=sr)
        assert kb.heads.shape == (0, n) and kb.scores.shape == (0,) and len(kb) == 0
    # only the arcs of one (non-chain) tree allowed: 0 -> 2, 2 -> 1, 2 -> 4, 4 -> 3
    gold = [2, 0, 4, 2]
    S = np.full((n + 1, n + 1), -np.inf)
    for m, h in enumerate(gold, start=1):
        S[h, m] = float(m)
    for sr in (True, False):
        r = eisner(S, single_root=sr)
        assert r.structure.tolist() == gold and r.score == 10.0 and r.exact
        kb = eisner_kbest(S, 3, single_root=sr)
        assert kb.heads.tolist() == [gold] and kb.scores.tolist() == [10.0]
    # two words may only attach to ROOT: infeasible with a single root, feasible without
    S = np.full((3, 3), -np.inf)
    S[0, 1] = S[0, 2] = 1.0
    assert eisner(S).status == "infeasible" and len(eisner_kbest(S, 4)) == 0
    r = eisner(S, single_root=False)
    assert r.structure.tolist() == [0, 0] and r.score == 2.0


def test_single_root_flag():
    rng = np.random.default_rng(11)
    S = rng.normal(size=(9, 9))
    S[0, 1:] += 10.0  # ROOT arcs very attractive
    multi = eisner(S, single_root=False)
    single = eisner(S, single_root=True)
    assert multi.structure.tolist() == [0] * 8
    assert single.structure.tolist().count(0) == 1
    assert multi.score > single.score


# ------------------------------------------------------------------------------------------
# larger sentences: no brute force, but validity, k = 1 consistency and sorted distinct lists
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [9, 17, 33])
@pytest.mark.parametrize("single_root", [True, False])
def test_kbest_larger_sentences(n, single_root):
    rng = np.random.default_rng(n)
    S = rng.normal(size=(n + 1, n + 1))
    S[rng.random(S.shape) < 0.1] = -np.inf
    r = eisner(S, single_root=single_root)
    kb = eisner_kbest(S, 300, single_root=single_root)  # grows the per-item pools
    assert len(kb) == 300
    assert kb.heads[0].tolist() == r.structure.tolist() and kb.scores[0] == r.score
    k1 = eisner_kbest(S, 1, single_root=single_root)
    assert k1.heads.tolist() == [r.structure.tolist()] and k1.scores.tolist() == [r.score]
    assert np.all(np.diff(kb.scores) <= 0)
    assert len({tuple(h.tolist()) for h in kb.heads}) == 300
    for h, s in zip(kb.heads, kb.scores):
        assert is_valid(h, n, single_root)
        assert np.isclose(arc_sum(S, h), s, rtol=0, atol=1e-9)
    # a prefix of the 300-best is the 20-best
    kb20 = eisner_kbest(S, 20, single_root=single_root)
    np.testing.assert_array_equal(kb20.scores, kb.scores[:20])


# ------------------------------------------------------------------------------------------
# ties
# ------------------------------------------------------------------------------------------
def test_ties_deterministic():
    for n in range(1, 8):
        S = np.zeros((n + 1, n + 1))
        chain = list(range(n))  # documented: all-equal scores give the right-branching chain
        for sr in (True, False):
            assert eisner(S, single_root=sr).structure.tolist() == chain
            kb = eisner_kbest(S, 50, single_root=sr)
            assert kb.heads[0].tolist() == chain
            assert np.all(kb.scores == 0.0)
            assert len({tuple(h.tolist()) for h in kb.heads}) == len(kb)
            again = eisner_kbest(S, 50, single_root=sr)
            np.testing.assert_array_equal(again.heads, kb.heads)
    rng = np.random.default_rng(21)
    for _ in range(30):
        n = int(rng.integers(2, 12))
        S = rng.integers(-1, 2, size=(n + 1, n + 1)).astype(float)
        a, b = eisner(S), eisner(S.copy())
        assert a.structure.tolist() == b.structure.tolist()
        ka, kb = eisner_kbest(S, 25, single_root=False), eisner_kbest(S.copy(), 25, single_root=False)
        np.testing.assert_array_equal(ka.heads, kb.heads)


def test_kbest_tie_order_is_pinned():
    # all scores equal: the order of the documented tie rule (at every item: split point, then
    # rank of the left part, then of the right part).  At the root the split is the rightmost
    # word attached to ROOT: first the trees where it is word 1, then word 2, then word 3.
    kb = eisner_kbest(np.zeros((4, 4)), 20, single_root=False)
    assert kb.heads.tolist() == [
        [0, 1, 2], [0, 3, 1], [0, 1, 1],
        [2, 0, 2], [0, 0, 2],
        [3, 3, 0], [3, 1, 0], [2, 3, 0], [0, 3, 0], [0, 1, 0], [2, 0, 0], [0, 0, 0],
    ]
    kb = eisner_kbest(np.zeros((4, 4)), 20, single_root=True)
    assert kb.heads.tolist() == [[0, 1, 2], [0, 3, 1], [0, 1, 1], [2, 0, 2], [3, 3, 0], [3, 1, 0], [2, 3, 0]]


@pytest.mark.parametrize("single_root", [True, False])
def test_integer_scores_exact_kbest(single_root):
    rng = np.random.default_rng(31)
    for _ in range(40):
        n = int(rng.integers(2, 7))
        S = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(float)
        k = int(rng.integers(1, 40))
        ref = brute_force_dependency(S, single_root=single_root, k=k)
        kb = eisner_kbest(S, k, single_root=single_root)
        assert kb.scores.tolist() == [s for _, s in ref]  # integers: exact equality
        assert len({tuple(h.tolist()) for h in kb.heads}) == len(kb)


# ------------------------------------------------------------------------------------------
# loss augmentation
# ------------------------------------------------------------------------------------------
def test_head_hamming_augmented_matrix():
    S = np.arange(16, dtype=float).reshape(4, 4)
    aug = head_hamming_augmented(S, [2, 0, -1])
    diff = aug - S
    expected = np.ones((4, 4))
    expected[:, 0] = 0.0
    np.fill_diagonal(expected, 0.0)
    expected[2, 1] = 0.0  # gold arc 2 -> 1
    expected[0, 2] = 0.0  # gold arc 0 -> 2; word 3 unknown: every arc into it gets +1
    np.testing.assert_array_equal(diff, expected)
    assert S[0, 1] == 1.0  # input untouched


@pytest.mark.parametrize("single_root", [True, False])
def test_loss_augmented_decoding_matches_brute_force(single_root):
    rng = np.random.default_rng(41)
    for _ in range(80):
        n = int(rng.integers(1, 7))
        S = rng.normal(size=(n + 1, n + 1))
        gold = np.array([rng.choice([h for h in range(-1, n + 1) if h != m]) for m in range(1, n + 1)])
        if rng.random() < 0.5:  # a real (possibly non-projective) gold tree
            trees = list(all_dependency_trees(n, single_root=single_root, projective=False))
            gold = trees[int(rng.integers(len(trees)))]
        best = max(
            arc_sum(S, h) + sum(int(h[m] != gold[m]) for m in range(n))
            for h in projective_trees(n, single_root=single_root)
        )
        aug = head_hamming_augmented(S, gold)
        r = eisner(aug, single_root=single_root)
        assert np.isclose(r.score, best, rtol=0, atol=1e-9)
        loss = sum(int(r.structure[m] != gold[m]) for m in range(n))
        assert np.isclose(arc_sum(S, r.structure) + loss, r.score, rtol=0, atol=1e-9)


# ------------------------------------------------------------------------------------------
# input validation
# ------------------------------------------------------------------------------------------
def test_bad_input():
    with pytest.raises(InputError, match="must be square"):
        eisner(np.zeros((3, 4)))
    with pytest.raises(InputError, match="2-d array"):
        eisner(np.zeros(4))
    with pytest.raises(InputError, match="2-d array"):
        eisner(np.zeros((2, 2, 2)))
    with pytest.raises(InputError, match="n >= 1"):
        eisner(np.zeros((1, 1)))
    with pytest.raises(InputError, match="n >= 1"):
        eisner(np.zeros((0, 0)))
    S = np.zeros((3, 3))
    S[1, 2] = np.nan
    with pytest.raises(InputError, match="NaN"):
        eisner(S)
    with pytest.raises(InputError, match="NaN"):
        eisner_kbest(S, 2)
    S[1, 2] = np.inf
    with pytest.raises(InputError, match=r"\+inf"):
        eisner(S)
    with pytest.raises(InputError, match="numeric"):
        eisner([["a", "b"], ["c", "d"]])
    for bad_k in (0, -1, 1.5, True, None):
        with pytest.raises(InputError, match="k must be an integer >= 1"):
            eisner_kbest(np.zeros((3, 3)), bad_k)
        with pytest.raises(InputError, match="k must be an integer >= 1"):
            eisner_batch([np.zeros((3, 3))], k=bad_k)
    with pytest.raises(InputError, match="single_root"):
        eisner(np.zeros((3, 3)), single_root="yes")
    assert issubclass(InputError, ValueError)


def test_ignored_entries_may_hold_anything():
    rng = np.random.default_rng(5)
    S = rng.normal(size=(5, 5))
    T = S.copy()
    T[:, 0] = np.nan
    np.fill_diagonal(T, np.inf)
    assert eisner(T).structure.tolist() == eisner(S).structure.tolist()
    np.testing.assert_array_equal(eisner_kbest(T, 7).heads, eisner_kbest(S, 7).heads)


def test_head_hamming_bad_gold():
    S = np.zeros((4, 4))
    with pytest.raises(InputError, match=r"shape \(n,\) = \(3,\)"):
        head_hamming_augmented(S, [0, 1])
    with pytest.raises(InputError, match="not a valid head of word 2"):
        head_hamming_augmented(S, [0, 2, 1])  # self-loop
    with pytest.raises(InputError, match="not a valid head of word 3"):
        head_hamming_augmented(S, [0, 1, 7])
    with pytest.raises(InputError, match="integers"):
        head_hamming_augmented(S, [0, 1.5, 2])


# ------------------------------------------------------------------------------------------
# batch
# ------------------------------------------------------------------------------------------
def test_batch_equals_single_calls(monkeypatch):
    rng = np.random.default_rng(51)
    mats = [rng.normal(size=(n + 1, n + 1)) for n in (1, 4, 12, 7, 25)]
    mats[2][rng.random(mats[2].shape) < 0.2] = -np.inf
    mats.append(np.full((4, 4), -np.inf))
    for sr in (True, False):
        out = eisner_batch(mats, single_root=sr)
        assert len(out) == len(mats)
        for S, r in zip(mats, out):
            ref = eisner(S, single_root=sr)
            assert isinstance(r, DecodeResult)
            assert r.structure.tolist() == ref.structure.tolist()
            assert r.score == ref.score and r.status == ref.status
        outk = eisner_batch(mats, single_root=sr, k=6)
        for S, kb in zip(mats, outk):
            ref = eisner_kbest(S, 6, single_root=sr)
            assert isinstance(kb, KBestTrees)
            np.testing.assert_array_equal(kb.heads, ref.heads)
            np.testing.assert_array_equal(kb.scores, ref.scores)
    assert eisner_batch([]) == []
    # validation happens once per matrix, all up front, then only kernel calls
    for k, kernel in ((1, "eisner_kernel"), (3, "eisner_kbest_kernel")):
        events = []
        real_check = eisner_module.check_dependency_scores
        real_kernel = getattr(eisner_module, kernel)

        def check(S, name="scores", real_check=real_check):
            events.append(name)
            return real_check(S, name)

        def run(*args, real_kernel=real_kernel):
            events.append("kernel")
            return real_kernel(*args)

        monkeypatch.setattr(eisner_module, "check_dependency_scores", check)
        monkeypatch.setattr(eisner_module, kernel, run)
        eisner_batch(mats, k=k)
        assert events == [f"score_list[{i}]" for i in range(len(mats))] + ["kernel"] * len(mats)
        monkeypatch.undo()
    bad = mats[:2] + [np.zeros((2, 3))]
    with pytest.raises(InputError, match=r"score_list\[2\] must be square"):
        eisner_batch(bad)
    with pytest.raises(InputError, match="sequence of score matrices"):
        eisner_batch(np.zeros((3, 3)))

