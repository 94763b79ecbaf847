"""Graph alignment (LCLR §4, constraints (6)–(11)): decoders against brute force, the
constraint checker, the readings of the paper's text, model reuse, the matching shortcut,
statuses and validation."""

from collections import Counter
from itertools import product

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference.graph_alignment import (
    VARIABLE_TYPES,
    GraphAlignment,
    GraphAlignmentILP,
    GraphAlignmentProblem,
    GraphPartScores,
    alignment_score,
    check_alignment,
    enumerate_alignments,
)
from latentstruct.inference.graph_alignment.constraints import constraint_matrix
from latentstruct.testing import check_decoder, scores_close


# ----------------------------------------------------------------------------------------
# random tiny instances
# ----------------------------------------------------------------------------------------
def random_tree(rng, n):
    """Edges of a random tree on n nodes, each edge oriented at random (head, dependent)."""
    edges = []
    for d in range(1, n):
        h = int(rng.integers(0, d))
        edges.append((h, d) if rng.random() < 0.7 else (d, h))
    return np.array(edges, dtype=np.int64).reshape(-1, 2)


def random_problem(rng, max_n=4, p_pair=0.7, flags=None):
    n1, n2 = int(rng.integers(0, max_n + 1)), int(rng.integers(0, max_n + 1))
    pairs = [(i, j) for i in range(n1) for j in range(n2) if rng.random() < p_pair]
    if flags is None:
        flags = dict(
            delete_nodes1=bool(rng.random() < 0.6),
            delete_nodes2=bool(rng.random() < 0.8),
            edge_deletion=bool(rng.random() < 0.6),
        )
    return GraphAlignmentProblem(
        n1, n2, random_tree(rng, n1), random_tree(rng, n2), np.array(pairs).reshape(-1, 2), **flags
    )


def random_scores(rng, problem, p_inf=0.0):
    """Integer scores in [-3, 3] (ties) or Gaussian floats; optionally some -inf."""
    n = problem.n_variables
    v = rng.integers(-3, 4, size=n).astype(float) if rng.random() < 0.5 else rng.normal(size=n) * 2
    if p_inf:
        v[rng.random(n) < p_inf] = -np.inf
    return GraphPartScores.from_vector(problem, v)


def brute(problem, scores):
    return max(alignment_score(a, scores) for a in enumerate_alignments(problem))


def _decode(**kwargs):
    def decode(inst):
        problem, scores = inst
        res = GraphAlignmentILP(problem, **kwargs).solve(scores)
        if res.structure is not None:
            assert check_alignment(problem, res.structure) == [], res
        return res

    return decode


def _instance(p_inf):
    def make(rng):
        problem = random_problem(rng)
        return problem, random_scores(rng, problem, p_inf if rng.random() < 0.3 else 0.0)

    return make


# ----------------------------------------------------------------------------------------
# decoders against brute force
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        {},  # matching -> strengthened LP -> ILP, the default
        {"matching_first": False, "lp_first": False},  # pure branch-and-bound
        {"strengthen": False},
    ],
    ids=["default", "ilp-only", "plain-rows"],
)
def test_decoder_matches_brute_force(kwargs):
    """On 150 random problems (n <= 4 per side, random trees, random candidate pairs and flags,
    integer / float / -inf scores): exact status, score == brute-force maximum, the structure
    attains the score and satisfies (6)–(11).  -inf on a deletion variable can make a problem
    infeasible; check_decoder then requires the "infeasible" status."""
    report = check_decoder(
        decode=_decode(**kwargs),
        candidates=lambda inst: enumerate_alignments(inst[0]),
        score=lambda inst, a: alignment_score(a, inst[1]),
        make_instance=_instance(p_inf=0.2),
        n_instances=150,
        random_state=11,
        check_membership=False,  # legality is checked by check_alignment inside decode
    )
    assert report.n_instances == 150
    assert report.n_infeasible < 40


def test_every_stage_is_exercised_and_exact():
    """The random instances reach the matching, LP and LP-branch-and-bound stages, each
    exact (the HiGHS MIP stage then only runs as the branch-and-bound's fallback)."""
    rng = np.random.default_rng(5)
    seen = Counter()
    for _ in range(150):
        problem = random_problem(rng, p_pair=0.9)
        scores = random_scores(rng, problem)
        res = GraphAlignmentILP(problem).solve(scores)
        seen[res.stats["solver"]] += 1
        assert res.status == "exact"
        assert scores_close(res.score, brute(problem, scores))
        for key in ("time", "nodes", "status", "solver"):
            assert key in res.stats
        assert res.stats["status"] == res.status
        if res.stats["solver"] == "lp":  # the optimality certificate: the LP bound is attained
            assert scores_close(res.stats["lp_bound"], res.score, atol=1e-7)
    assert seen["matching"] > 0 and seen["lp"] > 0 and seen["bb"] > 0 and seen["ilp"] == 0, seen


@pytest.mark.slow
def test_ilp_stage_on_denser_problems():
    """Problems on 5 x 5 nodes with all pairs as candidates (fractional LPs are common):
    the LP branch-and-bound stage, and HiGHS' MIP without it, still equal brute force."""
    rng = np.random.default_rng(8)
    n_ilp = Counter()
    for _ in range(12):
        problem = GraphAlignmentProblem(5, 5, random_tree(rng, 5), random_tree(rng, 5), np.argwhere(np.ones((5, 5))))
        scores = random_scores(rng, problem)
        for kwargs in ({}, {"bb_max_lp_solves": 0}):
            res = GraphAlignmentILP(problem, **kwargs).solve(scores)
            n_ilp[res.stats["solver"]] += 1
            if res.stats["solver"] == "lp":
                assert scores_close(res.stats["lp_bound"], res.score, atol=1e-7)
            assert res.status == "exact" and check_alignment(problem, res.structure) == []
            assert scores_close(res.score, brute(problem, scores))
            assert scores_close(alignment_score(res.structure, scores), res.score)
    assert n_ilp["ilp"] > 0 and n_ilp["bb"] == n_ilp["ilp"], n_ilp


def test_lp_relaxation_bounds_the_optimum():
    rng = np.random.default_rng(2)
    for _ in range(40):
        problem = random_problem(rng)
        if problem.n_variables == 0:
            continue
        scores = random_scores(rng, problem)
        ilp = GraphAlignmentILP(problem)
        assert ilp.lp_relaxation(scores) >= ilp.solve(scores).score - 1e-9


# ----------------------------------------------------------------------------------------
# the legal set: enumeration, checker and ILP rows agree
# ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_enumeration_is_exactly_the_legal_set():
    """On tiny problems, every 0/1 vector over all variables is checked: the vectors that
    check_alignment accepts are exactly those of enumerate_alignments, and exactly those
    that satisfy the ILP rows (also with the aggregated rows of strengthen=True)."""
    rng = np.random.default_rng(3)
    n_checked = 0
    while n_checked < 20:
        problem = random_problem(rng, max_n=3, p_pair=0.5)
        n = problem.n_variables
        if n > 12 or problem.n_edge_pairs == 0:
            continue
        n_checked += 1
        enumerated = {tuple(a.to_vector()) for a in enumerate_alignments(problem)}
        matrices = [constraint_matrix(problem, strengthen) for strengthen in (False, True)]
        legal = set()
        for bits in product((0, 1), repeat=n):
            z = np.array(bits, dtype=np.int8)
            ok = check_alignment(problem, GraphAlignment.from_vector(problem, z)) == []
            for A, lo, up, _ in matrices:
                Az = A @ z.astype(float)
                assert ok == bool(np.all(Az >= lo) and np.all(Az <= up)), (problem, z)
            if ok:
                legal.add(bits)
        assert legal == enumerated


def test_strengthening_rows_hold_for_every_legal_alignment():
    """Valid inequalities: every legal alignment satisfies the "11-agg" and "clique" rows, on
    problems (up to 4 words a side, dense candidates) where such rows exist."""
    rng = np.random.default_rng(11)
    seen = Counter()
    for _ in range(40):
        problem = random_problem(rng, max_n=4, p_pair=0.8)
        A, lo, up, kinds = constraint_matrix(problem, True)
        seen.update(kinds)
        for a in enumerate_alignments(problem):
            Az = A @ a.to_vector().astype(float)
            assert np.all(Az >= lo) and np.all(Az <= up), (problem, a)
    assert seen["clique"] > 20 and seen["11-agg"] > 10


def test_enumeration_counts_matchings():
    """All pairs candidate, no edges: the alignments are the partial matchings of K_{3,2}."""
    problem = GraphAlignmentProblem(3, 2, [], [], np.argwhere(np.ones((3, 2))))
    assert sum(1 for _ in enumerate_alignments(problem)) == 1 + 6 + 6  # sizes 0, 1, 2


# ----------------------------------------------------------------------------------------
# check_alignment flags each constraint type
# ----------------------------------------------------------------------------------------
def _small_problem(**flags):
    # G1 and G2: 0 -> 1, 0 -> 2; every word pair is a candidate, so 4 edge pairs
    edges = [(0, 1), (0, 2)]
    return GraphAlignmentProblem(3, 3, edges, edges, np.argwhere(np.ones((3, 3))), **flags)


def _modified(alignment, **changes):
    fields = {name: np.array(getattr(alignment, name)) for name in VARIABLE_TYPES}
    for name, (index, value) in changes.items():
        fields[name][index] = value
    return GraphAlignment(alignment.problem, **fields)


def _pair(problem, i, j):
    return int(np.flatnonzero((problem.node_pairs[:, 0] == i) & (problem.node_pairs[:, 1] == j))[0])


def _edge_pair(problem, e1, e2):
    return int(np.flatnonzero((problem.edge_pairs[:, 0] == e1) & (problem.edge_pairs[:, 1] == e2))[0])


def _numbers(messages):
    return {m.split(")")[0] + ")" for m in messages}


def test_check_alignment_flags_each_constraint():
    p = _small_problem()
    assert p.n_edge_pairs == 4
    x = np.zeros(p.n_node_pairs, dtype=int)
    x[[_pair(p, 0, 0), _pair(p, 1, 1), _pair(p, 2, 2)]] = 1
    legal = GraphAlignment.from_node_map(p, x)
    assert check_alignment(p, legal) == []
    assert legal.edge_map.sum() == 2 and legal.edge_del1.sum() == 0
    assert sorted(map(tuple, legal.mapped_pairs.tolist())) == [(0, 0), (1, 1), (2, 2)]
    q = _edge_pair(p, 0, 0)  # G1 edge 0 (0->1) -> G2 edge 0 (0->1)

    cases = {
        # (6): word 0 of G1 both mapped and deleted; (7) follows for none
        "(6)": dict(del1=(0, 1)),
        "(7)": dict(del2=(1, 1)),
        # (8)/(9): an edge both mapped and deleted
        "(8)": dict(edge_del1=(0, 1)),
        "(9)": dict(edge_del2=(1, 1)),
        # (10): both endpoint mappings on, edge mapping off (and so (8)/(9) count 0)
        "(10)": dict(edge_map=(q, 0)),
    }
    for number, change in cases.items():
        assert number in _numbers(check_alignment(p, _modified(legal, **change))), number
    # (10) alone: switch the edge mapping off and delete both edges so (8)/(9) still hold
    only10 = _modified(legal, edge_map=(q, 0), edge_del1=(0, 1), edge_del2=(0, 1))
    assert _numbers(check_alignment(p, only10)) == {"(10)"}
    # (11): an edge mapping on whose dependent mapping is off
    empty = GraphAlignment.empty(p)
    x = np.zeros(p.n_node_pairs, dtype=int)
    x[_pair(p, 0, 0)] = 1
    head_only = GraphAlignment.from_node_map(p, x)
    bad = _modified(head_only, edge_map=(q, 1), edge_del1=(0, 0), edge_del2=(0, 0))
    msgs = check_alignment(p, bad)
    assert _numbers(msgs) == {"(11)"} and "dependent" in msgs[0]
    bad = _modified(empty, edge_map=(q, 1), edge_del1=(0, 0), edge_del2=(0, 0))
    msgs = check_alignment(p, bad)
    assert _numbers(msgs) == {"(11)"} and len(msgs) == 2  # head and dependent both off
    # (6)/(7) "exactly one": a word neither mapped nor deleted
    assert _numbers(check_alignment(p, _modified(empty, del1=(2, 0)))) == {"(6)"}
    assert _numbers(check_alignment(p, _modified(empty, del2=(2, 0)))) == {"(7)"}
    # (8)/(9) "exactly one": an edge neither mapped nor deleted
    assert _numbers(check_alignment(p, _modified(empty, edge_del1=(1, 0)))) == {"(8)"}
    assert _numbers(check_alignment(p, _modified(empty, edge_del2=(1, 0)))) == {"(9)"}


def test_check_alignment_at_most_once_without_deletion_variables():
    p = _small_problem(delete_nodes1=False, delete_nodes2=False, edge_deletion=False)
    empty = GraphAlignment.empty(p)
    assert check_alignment(p, empty) == []  # unmapped words are legal without deletion variables
    twice1 = _modified(empty, node_map=([_pair(p, 0, 1), _pair(p, 0, 2)], 1))
    assert "(6)" in _numbers(check_alignment(p, twice1))
    twice2 = _modified(empty, node_map=([_pair(p, 1, 0), _pair(p, 2, 0)], 1))
    assert "(7)" in _numbers(check_alignment(p, twice2))
    # G1 edge 0 mapped to both G2 edges: (8) at most one (and (11) since the pairs are off)
    two_edges = _modified(empty, edge_map=([_edge_pair(p, 0, 0), _edge_pair(p, 0, 1)], 1))
    assert "(8)" in _numbers(check_alignment(p, two_edges))
    two_edges = _modified(empty, edge_map=([_edge_pair(p, 0, 0), _edge_pair(p, 1, 0)], 1))
    assert "(9)" in _numbers(check_alignment(p, two_edges))


def test_check_alignment_reports_shape_mismatch():
    p = _small_problem()
    other = _small_problem(delete_nodes1=False)
    msgs = check_alignment(other, GraphAlignment.empty(p))
    assert msgs and all(m.startswith("shape:") for m in msgs)


# ----------------------------------------------------------------------------------------
# the readings of the paper's text
# ----------------------------------------------------------------------------------------
def test_reading_no_deletion_side_means_at_most_once():
    """RTE: no deletion variables for the (longer) text side; it can stay partly unmapped."""
    text = GraphAlignmentProblem(4, 2, [(0, 1), (1, 2), (1, 3)], [(0, 1)], np.argwhere(np.ones((4, 2))),
                                 delete_nodes1=False, delete_nodes2=True, edge_deletion=False)
    assert text.sizes()["del1"] == 0 and text.sizes()["edge_del1"] == 0
    # mapping costs 1, deleting a hypothesis word 0.5, leaving a text word unmapped nothing
    scores = GraphPartScores(-np.ones(8), [], [-0.5, -0.5], -np.ones(text.n_edge_pairs), [], [])
    for kwargs in ({}, {"matching_first": False}):
        res = GraphAlignmentILP(text, **kwargs).solve(scores)
        assert res.status == "exact" and res.structure.node_map.sum() == 0  # mapping nothing is legal
        assert scores_close(res.score, -1.0)  # both hypothesis words deleted
    assert check_alignment(text, GraphAlignment.empty(text)) == []


def test_reading_edges_map_head_to_head():
    # G1: 0 -> 1; G2: 1 -> 0.  Pairs (0,1), (1,0) keep the orientation; (0,0), (1,1) reverse it.
    p = GraphAlignmentProblem(2, 2, [(0, 1)], [(1, 0)], [(0, 1), (1, 0)])
    assert p.edge_pairs.tolist() == [[0, 0]] and p.edge_pair_nodes.tolist() == [[0, 1]]
    p = GraphAlignmentProblem(2, 2, [(0, 1)], [(1, 0)], [(0, 0), (1, 1)])
    assert p.n_edge_pairs == 0


def test_reading_edge_mapping_iff_both_endpoints_and_deletion_iff_unmapped():
    """Edge mappings and all deletions are functions of the word mappings in every legal
    alignment; an edge without candidate partners is always deleted."""
    rng = np.random.default_rng(4)
    for _ in range(30):
        p = random_problem(rng, max_n=3, flags=dict(delete_nodes1=True, delete_nodes2=True, edge_deletion=True))
        x_of = {}
        for a in enumerate_alignments(p):
            x = a.node_map
            assert np.array_equal(a.edge_map, x[p.edge_pair_nodes[:, 0]] * x[p.edge_pair_nodes[:, 1]])
            mapped1 = np.bincount(p.edge_pairs[:, 0], weights=a.edge_map, minlength=p.n_edges1)
            assert np.array_equal(a.edge_del1, 1 - mapped1)
            lonely = np.setdiff1d(np.arange(p.n_edges1), p.edge_pairs[:, 0])
            assert np.all(a.edge_del1[lonely] == 1)
            assert tuple(x) not in x_of  # word mappings identify the alignment
            x_of[tuple(x)] = a


def test_parallel_edges_and_self_loops_are_rejected():
    with pytest.raises(InputError, match="same edge"):
        GraphAlignmentProblem(2, 2, [(0, 1), (0, 1)], [], [(0, 0)])
    with pytest.raises(InputError, match="self-loop"):
        GraphAlignmentProblem(2, 2, [], [(1, 1)], [(0, 0)])


# ----------------------------------------------------------------------------------------
# model reuse, the matching shortcut, statuses
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lp_first", [True, False])
def test_reused_model_equals_fresh_models(lp_first):
    """One model solving 40 objectives in a row (including -inf entries that forbid variables
    and are lifted again) gives the optimal scores of fresh models."""
    rng = np.random.default_rng(6)
    for _ in range(4):
        problem = GraphAlignmentProblem(4, 4, random_tree(rng, 4), random_tree(rng, 4), np.argwhere(np.ones((4, 4))))
        reused = GraphAlignmentILP(problem, matching_first=False, lp_first=lp_first)
        for _ in range(10):
            scores = random_scores(rng, problem, p_inf=0.15 if rng.random() < 0.5 else 0.0)
            a = reused.solve(scores)
            b = GraphAlignmentILP(problem, matching_first=False, lp_first=lp_first).solve(scores)
            assert a.status == b.status
            assert scores_close(a.score, b.score), (a.stats, b.stats)
            if a.structure is not None:
                assert check_alignment(problem, a.structure) == []
                assert scores_close(alignment_score(a.structure, scores), a.score)


def test_mip_start_is_accepted_and_does_not_change_the_optimum():
    rng = np.random.default_rng(9)
    problem = GraphAlignmentProblem(4, 4, random_tree(rng, 4), random_tree(rng, 4), np.argwhere(np.ones((4, 4))))
    scores = random_scores(rng, problem)
    start = next(iter(enumerate_alignments(problem)))
    ilp = GraphAlignmentILP(problem, lp_first=False)
    assert scores_close(ilp.solve(scores, mip_start=start).score, brute(problem, scores))
    with pytest.raises(InputError, match="mip_start"):
        ilp.solve(scores, mip_start=np.zeros(problem.n_variables))


def test_matching_shortcut_equals_ilp():
    """No candidate edge pairs (or edge terms that cancel): linear_sum_assignment agrees with
    the ILP on the same problem, including sides without deletion variables."""
    rng = np.random.default_rng(7)
    n_cancel = 0
    for k in range(80):
        if k % 2:
            problem = random_problem(rng, max_n=4, p_pair=0.6)
            problem = GraphAlignmentProblem(problem.n1, problem.n2, [], [], problem.node_pairs,
                                            problem.delete_nodes1, problem.delete_nodes2, problem.edge_deletion)
            scores = random_scores(rng, problem)
        else:
            problem = random_problem(rng, max_n=4, p_pair=0.9)
            # integer scores, so that the cancellation below is exact in floating point
            v = GraphPartScores.from_vector(problem, rng.integers(-3, 4, size=problem.n_variables))
            em = v.edge_map.copy()
            if problem.edge_deletion:  # net edge-pair scores cancel: no pairwise terms
                em = v.edge_del1[problem.edge_pairs[:, 0]] + v.edge_del2[problem.edge_pairs[:, 1]]
            else:
                em[:] = 0.0
            scores = GraphPartScores(v.node_map, v.del1, v.del2, em, v.edge_del1, v.edge_del2)
        fast = GraphAlignmentILP(problem).solve(scores)
        if problem.n_variables == 0:
            continue
        slow = GraphAlignmentILP(problem, matching_first=False, lp_first=False).solve(scores)
        assert fast.stats["solver"] == "matching", fast.stats
        n_cancel += problem.n_edge_pairs > 0
        assert slow.stats["solver"] == "ilp"
        assert fast.status == slow.status == "exact"
        assert scores_close(fast.score, slow.score)
        assert scores_close(fast.score, brute(problem, scores))
        assert check_alignment(problem, fast.structure) == []
    assert n_cancel > 5


def test_matching_is_skipped_when_deletions_are_forbidden():
    # a forbidden deletion forces a mapping, which a plain matching cannot express
    p = GraphAlignmentProblem(2, 2, [], [], [(0, 0), (1, 1)])
    scores = GraphPartScores([-5.0, -1.0], [-np.inf, 0.0], [0.0, 0.0], [], [], [])
    res = GraphAlignmentILP(p).solve(scores)
    assert res.stats["solver"] != "matching" and res.status == "exact"
    assert res.structure.mapped_pairs.tolist() == [[0, 0]] and scores_close(res.score, -5.0)


def test_infeasible_when_every_way_out_is_forbidden():
    p = GraphAlignmentProblem(1, 1, [], [], [(0, 0)])
    scores = GraphPartScores([-np.inf], [-np.inf], [0.0], [], [], [])
    for kwargs in ({}, {"lp_first": False}):
        res = GraphAlignmentILP(p, **kwargs).solve(scores)
        assert res.status == "infeasible" and res.structure is None and res.score == -np.inf


def test_trivial_problems():
    empty = GraphAlignmentProblem(0, 0, [], [], [])
    for kwargs in ({}, {"matching_first": False}):
        res = GraphAlignmentILP(empty, **kwargs).solve(GraphPartScores.zeros(empty))
        assert res.status == "exact" and res.score == 0.0 and res.structure.to_vector().size == 0


def test_time_limit_status():
    """Documented behaviour: with a time limit the ILP stage returns "exact" if it finishes,
    else "time_limit" with the best legal alignment found (the empty alignment is always a
    MIP start, so an incumbent exists) and the bound in stats; "error" (structure None) is
    the status only if HiGHS stops before it has any incumbent.  The matching stage ignores
    the limit."""
    rng = np.random.default_rng(12)
    n = 14
    problem = GraphAlignmentProblem(n, n, random_tree(rng, n), random_tree(rng, n), np.argwhere(np.ones((n, n))))
    scores = GraphPartScores.from_vector(problem, rng.normal(size=problem.n_variables))
    ilp = GraphAlignmentILP(problem, lp_first=False, time_limit=1e-4)
    res = ilp.solve(scores)
    assert res.status in ("time_limit", "exact", "error"), res.stats
    if res.status == "error":
        assert res.structure is None
    else:
        assert check_alignment(problem, res.structure) == []
        assert scores_close(alignment_score(res.structure, scores), res.score)
        assert res.stats["objective_bound"] >= res.score - 1e-9
    assert res.stats["time"] < 5.0
    res = ilp.solve(scores, time_limit=1e-4)  # per-call limit, now warm-started
    assert res.status in ("time_limit", "exact")
    assert check_alignment(problem, res.structure) == []
    with pytest.raises(InputError, match="time_limit"):
        ilp.solve(scores, time_limit=0)


# ----------------------------------------------------------------------------------------
# layout, containers, validation
# ----------------------------------------------------------------------------------------
def test_variable_layout_round_trips():
    p = _small_problem(delete_nodes1=False)
    ilp = GraphAlignmentILP(p, strengthen=False)
    layout = ilp.variable_layout()
    assert list(layout) == list(VARIABLE_TYPES)
    sizes = p.sizes()
    assert sizes == {"node_map": 9, "del1": 0, "del2": 3, "edge_map": 4, "edge_del1": 2, "edge_del2": 2}
    assert [layout[k].stop - layout[k].start for k in VARIABLE_TYPES] == list(sizes.values())
    assert layout["edge_del2"].stop == p.n_variables == ilp.n_variables == 20
    assert ilp.n_constraints == len(ilp.constraint_kinds)
    assert Counter(ilp.constraint_kinds) == {"6": 3, "7": 3, "8": 2, "9": 2, "10": 4, "11": 8}
    v = np.arange(p.n_variables, dtype=float)
    s = GraphPartScores.from_vector(p, v)
    assert np.array_equal(s.to_vector(), v)
    assert np.array_equal(s.edge_map, v[layout["edge_map"]])
    a = GraphAlignment.empty(p)
    assert np.array_equal(GraphAlignment.from_vector(p, a.to_vector()).to_vector(), a.to_vector())
    assert alignment_score(a, s) == float(v[layout["del2"]].sum() + v[layout["edge_del1"]].sum()
                                          + v[layout["edge_del2"]].sum())


def test_strengthened_lp_needs_branch_and_bound_less_often():
    """The aggregated (11) rows (the default) keep every optimum and make the LP relaxation
    integral more often on pruned, sentence-sized problems: fewer calls reach the ILP."""
    rng = np.random.default_rng(5)
    reached = {False: 0, True: 0}
    for _ in range(30):
        n1, n2 = (int(v) for v in rng.integers(8, 13, size=2))
        affinity = rng.random((n1, n2))
        keep = np.zeros((n1, n2), dtype=bool)  # top-3 pairs per word, on both sides
        keep[np.repeat(np.arange(n1), 3), np.argsort(-affinity, axis=1)[:, :3].ravel()] = True
        keep[np.argsort(-affinity, axis=0)[:3].ravel(), np.tile(np.arange(n2), 3)] = True
        problem = GraphAlignmentProblem(n1, n2, random_tree(rng, n1), random_tree(rng, n2), np.argwhere(keep))
        plain, strong = GraphAlignmentILP(problem, strengthen=False), GraphAlignmentILP(problem)
        base = rng.normal(size=problem.n_variables)
        for _ in range(4):
            s = GraphPartScores.from_vector(problem, base + 0.3 * rng.normal(size=problem.n_variables))
            a, b = plain.solve(s), strong.solve(s)
            assert a.status == b.status == "exact"
            assert scores_close(a.score, b.score)
            reached[False] += a.stats["solver"] in ("bb", "ilp")  # fractional LP
            reached[True] += b.stats["solver"] in ("bb", "ilp")
    assert reached[True] < reached[False]
    assert reached[False] > 0


def test_strengthened_model_has_extra_rows_only():
    p = _small_problem()
    plain, strong = GraphAlignmentILP(p, strengthen=False), GraphAlignmentILP(p)
    extra = Counter(strong.constraint_kinds) - Counter(plain.constraint_kinds)
    assert set(extra) == {"11-agg", "clique"} and extra["11-agg"] > 0 and extra["clique"] > 0
    assert not Counter(plain.constraint_kinds) - Counter(strong.constraint_kinds)


def test_validation_messages():
    with pytest.raises(InputError, match=r"node_pairs\[1\] = \[0, 5\] refers to G2 node 5"):
        GraphAlignmentProblem(2, 2, [], [], [(0, 0), (0, 5)])
    with pytest.raises(InputError, match="same pair"):
        GraphAlignmentProblem(2, 2, [], [], [(0, 0), (0, 0)])
    with pytest.raises(InputError, match=r"edges1 must be an integer array of shape"):
        GraphAlignmentProblem(2, 2, [0, 1], [], [])
    with pytest.raises(InputError, match="n1 must be a non-negative integer"):
        GraphAlignmentProblem(-1, 2, [], [], [])
    with pytest.raises(InputError, match="delete_nodes1 must be True or False"):
        GraphAlignmentProblem(1, 1, [], [], [], delete_nodes1=1)
    p = _small_problem(delete_nodes1=False)
    ilp = GraphAlignmentILP(p)
    good = GraphPartScores.zeros(p)
    bad = GraphPartScores(good.node_map, np.zeros(3), good.del2, good.edge_map, good.edge_del1, good.edge_del2)
    with pytest.raises(InputError, match=r"part_scores.del1 must have shape \(0,\).*does not exist"):
        ilp.solve(bad)
    with pytest.raises(InputError, match="NaN"):
        GraphPartScores([np.nan], [], [], [], [], [])
    with pytest.raises(InputError, match="part_scores must be a GraphPartScores"):
        ilp.solve(np.zeros(p.n_variables))
    with pytest.raises(InputError, match="maps G1 node 0 more than once"):
        GraphAlignment.from_node_map(p, np.r_[1, 1, np.zeros(7, int)])
    with pytest.raises(InputError, match="only 0 and 1"):
        GraphAlignment(p, np.full(9, 2), [], np.ones(3), np.zeros(4), np.ones(2), np.ones(2))


# ----------------------------------------------------------------------------------------
# determinism: the decoded structure does not depend on the model's solve history
# ----------------------------------------------------------------------------------------
def _tied_scores(rng, problem, low=-1, high=2):
    """Integer scores in [low, high]: many alignments tie for the optimum."""
    return GraphPartScores.from_vector(problem, rng.integers(low, high + 1, size=problem.n_variables))


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"matching_first": False, "lp_first": False}, {"strengthen": False}, {"matching_first": False}],
    ids=["default", "ilp-only", "plain-rows", "lp-then-ilp"],
)
@pytest.mark.slow
def test_decoding_is_independent_of_solve_history(kwargs):
    """On random problems with tied optima (integer scores), a model that has first solved
    a history of other objectives (ties, Gaussian, -inf) returns exactly the structure a
    fresh model returns, and both equal the brute-force optimum's score.  Before solves
    were made history-free, a warm-started LP / MIP start picked another optimum among the
    ties on a large share of these instances."""
    rng = np.random.default_rng(21)
    n_ties = n_compared = 0
    for _ in range(60):
        problem = random_problem(rng, max_n=5, p_pair=0.8)
        if problem.n_variables == 0:
            continue
        targets = [_tied_scores(rng, problem) for _ in range(3)]
        history = GraphAlignmentILP(problem, **kwargs)
        for _ in range(4):
            history.solve(_tied_scores(rng, problem, -3, 3))
            history.solve(random_scores(rng, problem, p_inf=0.2))
        for scores in targets:
            fresh = GraphAlignmentILP(problem, **kwargs).solve(scores)
            again = history.solve(scores)
            history.solve(_tied_scores(rng, problem))  # and more history in between
            assert fresh.status == again.status == "exact"
            assert np.array_equal(fresh.structure.to_vector(), again.structure.to_vector()), (
                fresh.stats, again.stats)
            assert fresh.stats["solver"] == again.stats["solver"]
            assert scores_close(fresh.score, brute(problem, scores))
            best = [alignment_score(a, scores) for a in enumerate_alignments(problem)]
            n_ties += sum(scores_close(b, fresh.score) for b in best) > 1
            n_compared += 1
    assert n_compared > 100
    assert n_ties > n_compared // 5  # the instances do exercise ties


def test_tied_instances_match_brute_force():
    """All-equal and tiny-integer scores (maximal ties) through every stage: exact, legal,
    the brute-force maximum, and the same structure on a repeated call."""
    rng = np.random.default_rng(22)
    for trial in range(80):
        problem = random_problem(rng, max_n=4, p_pair=0.9)
        if trial % 4 == 0:
            scores = GraphPartScores.from_vector(problem, np.full(problem.n_variables, float(rng.integers(-1, 2))))
        else:
            scores = _tied_scores(rng, problem, -1, 1)
        for kwargs in ({}, {"matching_first": False, "lp_first": False}, {"matching_first": False}):
            ilp = GraphAlignmentILP(problem, **kwargs)
            res = ilp.solve(scores)
            assert res.status == "exact" and check_alignment(problem, res.structure) == []
            assert scores_close(res.score, brute(problem, scores))
            assert scores_close(alignment_score(res.structure, scores), res.score)
            assert np.array_equal(ilp.solve(scores).structure.to_vector(), res.structure.to_vector())


def test_pickled_model_decodes_identically():
    """Pickling drops the HiGHS models; the copy rebuilds them on use and returns the same
    structures (solves are history-free)."""
    import pickle

    import cloudpickle

    rng = np.random.default_rng(23)
    problem = GraphAlignmentProblem(5, 5, random_tree(rng, 5), random_tree(rng, 5), np.argwhere(np.ones((5, 5))))
    ilp = GraphAlignmentILP(problem, strengthen=True)
    warm = [_tied_scores(rng, problem) for _ in range(5)]
    for s in warm:
        ilp.solve(s)
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, pickle.loads)):
        copy = loads(dumps(ilp))
        assert copy._model is None and copy._lp is None
        for s in warm[::-1]:
            a, b = ilp.solve(s), copy.solve(s)
            assert np.array_equal(a.structure.to_vector(), b.structure.to_vector())
            assert a.score == b.score
