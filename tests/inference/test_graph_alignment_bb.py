"""The LP-based branch-and-bound stage of graph alignment (``graph_alignment.branch_and_bound``): exact
against brute-force enumeration on hundreds of tiny random instances with fractional LP
optima, ties, -inf scores, every combination of deletion flags; its hand-over to HiGHS' MIP;
history-free answers; the completion of word mappings."""

from collections import Counter

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference.graph_alignment import (
    GraphAlignment,
    GraphAlignmentILP,
    GraphAlignmentProblem,
    GraphPartScores,
    alignment_score,
    check_alignment,
    enumerate_alignments,
)
from latentstruct.inference.graph_alignment.branch_and_bound import AlignmentCompletion
from latentstruct.testing import scores_close

FLAGS = [
    dict(delete_nodes1=d1, delete_nodes2=d2, edge_deletion=ed)
    for d1 in (True, False)
    for d2 in (True, False)
    for ed in (True, False)
]


def random_graph(rng, n, p_extra=0.3):
    """A random tree on n nodes (random orientation) plus a few extra edges (cycles allowed)."""
    edges = set()
    for d in range(1, n):
        h = int(rng.integers(0, d))
        edges.add((h, d) if rng.random() < 0.7 else (d, h))
    for a in range(n):
        for b in range(n):
            if a != b and (a, b) not in edges and (b, a) not in edges and rng.random() < p_extra / n:
                edges.add((a, b))
    return np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)


def dense_problem(rng, flags, n_max=4, p_pair=0.85):
    """Small, densely paired problems: their LP relaxations are often fractional."""
    n1, n2 = int(rng.integers(2, n_max + 1)), int(rng.integers(2, n_max + 1))
    keep = rng.random((n1, n2)) < p_pair
    return GraphAlignmentProblem(n1, n2, random_graph(rng, n1), random_graph(rng, n2), np.argwhere(keep), **flags)


def scores_for(rng, problem, kind):
    """Edge mappings attractive, word mappings slightly repulsive: the LP relaxation likes
    half-and-half solutions.  ``"ties"``: small integers (many tied optima); ``"inf"``: some
    variables forbidden (possibly every way out of a word: infeasible)."""
    lay = problem.variable_layout()
    n = problem.n_variables
    if kind == "ties":
        v = rng.integers(-2, 3, size=n).astype(float)
        v[lay["edge_map"]] = rng.integers(0, 4, size=problem.n_edge_pairs)
    else:
        v = np.zeros(n)
        v[lay["node_map"]] = rng.normal(size=problem.n_node_pairs) * 0.3 - 0.2
        v[lay["edge_map"]] = rng.random(problem.n_edge_pairs) * 2
        if kind == "inf":
            v[rng.random(n) < 0.1] = -np.inf
    return GraphPartScores.from_vector(problem, v)


def brute(problem, scores):
    return max(alignment_score(a, scores) for a in enumerate_alignments(problem))


@pytest.mark.slow
@pytest.mark.parametrize("strengthen", [True, False], ids=["strengthened", "plain-rows"])
def test_branch_and_bound_matches_brute_force(strengthen):
    """400 instances per setting (50 per deletion-flag combination): every call is exact
    (or proven infeasible), its score is the brute-force maximum, its alignment legal and
    scoring what it says; the branch-and-bound stage answers every fractional LP here.  The
    strengthening rows make tiny LPs rarely fractional, so the plain rows carry the count."""
    rng = np.random.default_rng(101 if strengthen else 102)
    seen = Counter()
    for k in range(400):
        flags = FLAGS[k % len(FLAGS)]
        problem = dense_problem(rng, flags, n_max=5 if k % 10 == 0 else 4, p_pair=1.0 if k % 2 else 0.85)
        scores = scores_for(rng, problem, ("ties", "inf", "edges")[k % 3])
        res = GraphAlignmentILP(problem, matching_first=False, strengthen=strengthen).solve(scores)
        seen[res.stats["solver"]] += 1
        best = brute(problem, scores)
        if res.status == "infeasible":
            assert best == -np.inf and res.structure is None
            seen["infeasible"] += 1
            continue
        assert res.status == "exact", res.stats
        assert check_alignment(problem, res.structure) == []
        assert scores_close(res.score, best), (res.score, best, res.stats)
        assert scores_close(alignment_score(res.structure, scores), res.score)
        if res.stats["solver"] == "bb":
            assert res.stats["bb_outcome"] == "optimal"
            assert res.stats["lp_integral"] is False
            # the LP bound is an upper bound; the fractional ones are often strict
            assert res.stats["lp_bound"] >= res.score - 1e-7
            seen["strict_gap"] += res.stats["lp_bound"] > res.score + 1e-6
    assert seen["ilp"] == 0, seen
    if strengthen:
        assert seen["bb"] >= 2, seen
    else:
        assert seen["bb"] >= 60 and seen["strict_gap"] >= 30, seen


@pytest.mark.slow
def test_tied_optima_are_reproducible_and_history_free():
    """With small-integer scores (many optima tie) a model that has solved other objectives
    first returns exactly the alignment a fresh model returns, through the bb stage."""
    rng = np.random.default_rng(103)
    n_bb = 0
    for k in range(200):
        problem = dense_problem(rng, FLAGS[k % len(FLAGS)], p_pair=1.0)
        target = scores_for(rng, problem, "ties")
        fresh = GraphAlignmentILP(problem, matching_first=False, strengthen=False).solve(target)
        used = GraphAlignmentILP(problem, matching_first=False, strengthen=False)
        for kind in ("edges", "inf", "ties"):
            used.solve(scores_for(rng, problem, kind))
        again = used.solve(target)
        assert fresh.stats["solver"] == again.stats["solver"]
        assert fresh.status == again.status
        if fresh.structure is not None:
            assert np.array_equal(fresh.structure.to_vector(), again.structure.to_vector())
            assert scores_close(fresh.score, brute(problem, target))
        n_bb += fresh.stats["solver"] == "bb"
    assert n_bb >= 10


@pytest.mark.slow
def test_node_budget_hands_over_to_highs_mip():
    """A budget of one node LP gives up on most fractional LPs: HiGHS' MIP then answers
    (``solver == "ilp"``, ``bb_outcome == "gave_up"``), still exact; the model's bounds are
    restored, so the next call answers as a fresh model would."""
    rng = np.random.default_rng(104)
    seen = Counter()
    for k in range(150):
        problem = dense_problem(rng, FLAGS[k % len(FLAGS)])
        scores = scores_for(rng, problem, "edges")
        tight = GraphAlignmentILP(problem, matching_first=False, strengthen=False, bb_max_lp_solves=1)
        res = tight.solve(scores)
        seen[(res.stats["solver"], res.stats.get("bb_outcome"))] += 1
        assert res.status == "exact"
        assert scores_close(res.score, brute(problem, scores))
        if res.stats["solver"] == "ilp":
            assert res.stats["bb_outcome"] == "gave_up" and res.stats["bb_lp_solves"] == 1
        other = scores_for(rng, problem, "ties")
        after = tight.solve(other)
        ref = GraphAlignmentILP(problem, matching_first=False, strengthen=False, bb_max_lp_solves=1).solve(other)
        assert np.array_equal(after.structure.to_vector(), ref.structure.to_vector())
    assert seen[("ilp", "gave_up")] >= 5, seen
    off = GraphAlignmentILP(dense_problem(rng, FLAGS[0]), matching_first=False, bb_max_lp_solves=0)
    assert off._bb is None


def test_bb_agrees_with_highs_mip_on_sentence_sized_problems():
    """Pruned problems of 8-12 words (top-3 pairs per word): the bb stage and HiGHS' MIP
    reach the same optimal value on every fractional LP."""
    rng = np.random.default_rng(105)
    n_frac = 0
    for _ in range(25):
        n1, n2 = (int(v) for v in rng.integers(8, 13, size=2))
        affinity = rng.random((n1, n2))
        keep = np.zeros((n1, n2), dtype=bool)
        keep[np.repeat(np.arange(n1), 3), np.argsort(-affinity, axis=1)[:, :3].ravel()] = True
        keep[np.argsort(-affinity, axis=0)[:3].ravel(), np.tile(np.arange(n2), 3)] = True
        problem = GraphAlignmentProblem(n1, n2, random_graph(rng, n1, 0), random_graph(rng, n2, 0), np.argwhere(keep))
        bb, mip = GraphAlignmentILP(problem, strengthen=False), GraphAlignmentILP(problem, strengthen=False,
                                                                                   bb_max_lp_solves=0)
        base = rng.normal(size=problem.n_variables)
        for _ in range(4):
            s = GraphPartScores.from_vector(problem, base + 0.3 * rng.normal(size=problem.n_variables))
            a, b = bb.solve(s), mip.solve(s)
            assert a.status == b.status == "exact"
            assert scores_close(a.score, b.score)
            assert check_alignment(problem, a.structure) == []
            n_frac += a.stats["solver"] == "bb"
            assert b.stats["solver"] in ("lp", "ilp")
    assert n_frac > 0


def test_completion_equals_from_node_map():
    rng = np.random.default_rng(106)
    for k in range(80):
        problem = dense_problem(rng, FLAGS[k % len(FLAGS)])
        p = problem
        complete = AlignmentCompletion(p.variable_layout(), p.node_pairs, p.edge_pairs, p.edge_pair_nodes,
                                       p.n1, p.n2, p.n_edges1, p.n_edges2)
        for a in list(enumerate_alignments(problem))[:: 7]:
            z = complete(a.node_map.astype(np.int8))
            assert z.dtype == np.int8
            assert np.array_equal(z, GraphAlignment.from_node_map(problem, a.node_map).to_vector())


def test_bb_budget_validation():
    problem = dense_problem(np.random.default_rng(0), FLAGS[0])
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(InputError, match="bb_max_lp_solves"):
            GraphAlignmentILP(problem, bb_max_lp_solves=bad)
