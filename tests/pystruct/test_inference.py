"""The PyStruct layer's inference back-ends against enumeration on tiny random graphs.

Every exact back-end (``ad3``, ``ad3+``, ``qpbo``, ``lp`` unrelaxed, ``max-product`` on
forests) must return a labelling whose score (summed here by hand, not by the package)
equals the best score over every labelling; relaxed LP marginals must be normalised,
consistent with each other, bound the optimum from above and be integral on trees.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, InferenceError, InputError
from latentstruct.pystruct.inference import (compute_energy, get_installed, inference_ad3,
                                             inference_dispatch, inference_lp,
                                             inference_max_product, is_chain, is_forest,
                                             iterative_max_product, lp_general_graph)

EXACT = ["ad3", "ad3+", "qpbo", "lp", ("ad3", {"branch_and_bound": True})]


# -- tiny random problems and their enumeration ------------------------------------------
def hand_score(unary, pairwise, edges, labels):
    total = sum(unary[i][labels[i]] for i in range(len(labels)))
    for e, (i, j) in enumerate(edges):
        matrix = pairwise if np.ndim(pairwise) == 2 else pairwise[e]
        total += matrix[labels[i]][labels[j]]
    return float(total)


def enumerate_best(unary, pairwise, edges, feasible=lambda y: True):
    n, k = np.shape(unary)
    scores = [hand_score(unary, pairwise, edges, y)
              for y in itertools.product(range(k), repeat=n) if feasible(y)]
    return max(scores) if scores else None


def random_edges(rng, n, kind):
    if n == 1:
        return np.zeros((0, 2), dtype=int)
    if kind == "chain":
        edges = np.c_[np.arange(n - 1), np.arange(1, n)]
    elif kind == "tree":
        edges = np.array([(int(rng.integers(0, i)), i) for i in range(1, n)])
    else:  # loopy: a tree plus extra edges, which close cycles
        edges = [(int(rng.integers(0, i)), i) for i in range(1, n)]
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        for p in rng.choice(len(pairs), size=min(len(pairs), 2), replace=False):
            edges.append(pairs[p])
        edges = np.array(edges)
    flip = rng.random(len(edges)) < 0.5  # either orientation
    edges[flip] = edges[flip][:, ::-1]
    return edges[rng.permutation(len(edges))]


def random_problem(seed, kind):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    edges = random_edges(rng, n, kind)
    unary = rng.normal(size=(n, k))
    if rng.random() < 0.5:
        pairwise = 2 * rng.normal(size=(k, k))  # shared
    else:
        pairwise = 2 * rng.normal(size=(len(edges), k, k))  # per edge
    return unary, pairwise, edges


PROBLEMS = [(seed, kind) for kind in ("chain", "tree", "loopy") for seed in range(40)]


# -- exact back-ends --------------------------------------------------------------------
@pytest.mark.parametrize("method", EXACT, ids=str)
def test_exact_methods_reach_the_enumerated_optimum(method):
    for seed, kind in PROBLEMS:
        unary, pairwise, edges = random_problem(seed, kind)
        best = enumerate_best(unary, pairwise, edges)
        labels, energy = inference_dispatch(unary, pairwise, edges, method,
                                            return_energy=True)
        assert labels.shape == (unary.shape[0],) and labels.dtype.kind == "i"
        score = hand_score(unary, pairwise, edges, labels)
        assert score == pytest.approx(best, abs=1e-9), (seed, kind)
        assert -energy == pytest.approx(score, abs=1e-9)


def test_max_product_is_exact_on_chains_trees_and_forests():
    for seed in range(60):
        kind = ("chain", "tree")[seed % 2]
        unary, pairwise, edges = random_problem(seed, kind)
        best = enumerate_best(unary, pairwise, edges)
        labels = inference_max_product(unary, pairwise, edges)
        assert hand_score(unary, pairwise, edges, labels) == pytest.approx(best, abs=1e-9)
        labels = iterative_max_product(unary, pairwise, edges)
        assert hand_score(unary, pairwise, edges, labels) == pytest.approx(best, abs=1e-9)
    # a forest: two trees and an isolated node, nodes numbered out of order
    rng = np.random.default_rng(7)
    edges = np.array([[4, 0], [0, 2], [5, 3]])
    unary = rng.normal(size=(7, 3))
    pairwise = rng.normal(size=(3, 3, 3))
    labels = inference_dispatch(unary, pairwise, edges, "max-product")
    best = enumerate_best(unary, pairwise, edges)
    assert hand_score(unary, pairwise, edges, labels) == pytest.approx(best, abs=1e-9)


def test_max_product_on_loops_returns_a_labelling_and_its_energy():
    for seed in range(20):
        unary, pairwise, edges = random_problem(seed, "loopy")
        labels, energy = inference_dispatch(unary, pairwise, edges, "max-product",
                                            return_energy=True)
        score = hand_score(unary, pairwise, edges, labels)
        assert -energy == pytest.approx(score)
        assert score <= enumerate_best(unary, pairwise, edges) + 1e-9


def test_unary_ignores_pairwise_scores():
    rng = np.random.default_rng(0)
    unary = rng.normal(size=(5, 3))
    edges = np.c_[np.arange(4), np.arange(1, 5)]
    labels = inference_dispatch(unary, 10 * np.eye(3), edges, "unary")
    np.testing.assert_array_equal(labels, unary.argmax(axis=1))


@pytest.mark.parametrize("method", ["lp", "ad3", "ad3+", "qpbo", "max-product", "unary"])
def test_a_graph_without_nodes_gives_empty_labels(method):
    labels, energy = inference_dispatch(np.zeros((0, 3)), np.eye(3), np.zeros((0, 2), int),
                                        method, return_energy=True)
    assert labels.shape == (0,) and energy == 0.0


def test_self_loops_count_their_diagonal():
    rng = np.random.default_rng(3)
    unary = rng.normal(size=(3, 2))
    pairwise = rng.normal(size=(3, 2, 2))
    edges = np.array([[0, 1], [1, 1], [1, 2]])
    best = enumerate_best(unary, pairwise, edges)
    for method in ("max-product", "ad3", "lp"):
        labels = inference_dispatch(unary, pairwise, edges, method)
        assert hand_score(unary, pairwise, edges, labels) == pytest.approx(best, abs=1e-9)


# -- the LP relaxation ------------------------------------------------------------------
def check_marginals(unary_m, pairwise_m, edges):
    assert np.all(unary_m >= -1e-9) and np.all(pairwise_m >= -1e-9)
    np.testing.assert_allclose(unary_m.sum(axis=1), 1.0, atol=1e-7)
    for e, (i, j) in enumerate(edges):
        np.testing.assert_allclose(pairwise_m[e].sum(axis=1), unary_m[i], atol=1e-7)
        np.testing.assert_allclose(pairwise_m[e].sum(axis=0), unary_m[j], atol=1e-7)


def relaxed_score(unary, pairwise, edges, unary_m, pairwise_m):
    pw = np.broadcast_to(pairwise, (len(edges),) + unary.shape[1:] * 2)
    return float((unary * unary_m).sum() + (pw * pairwise_m).sum())


def test_lp_marginals_are_consistent_bound_the_optimum_and_are_tight_on_trees():
    for seed, kind in PROBLEMS:
        unary, pairwise, edges = random_problem(seed, kind)
        (unary_m, pairwise_m), energy = inference_lp(unary, pairwise, edges, relaxed=True,
                                                     return_energy=True)
        assert unary_m.shape == unary.shape
        assert pairwise_m.shape == (len(edges),) + unary.shape[1:] * 2
        check_marginals(unary_m, pairwise_m, edges)
        value = relaxed_score(unary, pairwise, edges, unary_m, pairwise_m)
        assert -energy == pytest.approx(value, abs=1e-9)
        best = enumerate_best(unary, pairwise, edges)
        assert value >= best - 1e-7
        if kind != "loopy":
            assert value == pytest.approx(best, abs=1e-7)
            np.testing.assert_allclose(unary_m.max(axis=1), 1.0, atol=1e-7)


def test_the_simplex_lp_itself_is_tight_on_forests_where_the_dp_stands_in():
    from latentstruct.inference.graph.model import check_graph
    from latentstruct.inference.graph.polytope import LocalPolytope, forest_solution

    for seed, kind in PROBLEMS:
        unary, pairwise, edges = random_problem(seed, kind)
        graph = check_graph(unary, pairwise, edges)
        lp = LocalPolytope(graph).solve_lp()
        dp = forest_solution(graph)
        if kind == "loopy" and len(edges) > unary.shape[0] - 1:
            assert dp is None
            continue
        best = enumerate_best(unary, pairwise, edges)
        assert lp.integral and lp.score == pytest.approx(best, abs=1e-7)
        assert dp.score == pytest.approx(best, abs=1e-9)
        check_marginals(dp.unary_marginals[0], dp.pairwise_marginals[0], edges)


def test_lp_is_fractional_on_a_frustrated_cycle_and_ad3_returns_those_marginals():
    # three binary nodes on a triangle, each edge rewarding disagreement: no labelling
    # satisfies all three edges, but the LP puts 1/2 everywhere and gains all three
    unary = np.zeros((3, 2))
    pairwise = np.array([[0.0, 1.0], [1.0, 0.0]])
    edges = np.array([[0, 1], [1, 2], [2, 0]])
    (unary_m, pairwise_m), energy = inference_dispatch(unary, pairwise, edges, "ad3",
                                                       relaxed=True, return_energy=True)
    np.testing.assert_allclose(unary_m, 0.5, atol=1e-7)
    assert energy == pytest.approx(-3.0)
    labels, energy = inference_dispatch(unary, pairwise, edges, "ad3", return_energy=True)
    assert energy == pytest.approx(-2.0)  # the ILP: two of three edges disagree
    assert hand_score(unary, pairwise, edges, labels) == pytest.approx(2.0)
    labels = inference_ad3(unary, pairwise, edges, relaxed=True, branch_and_bound=True)
    assert hand_score(unary, pairwise, edges, labels) == pytest.approx(2.0)


def test_lp_general_graph_is_the_cost_form_of_inference_lp():
    for seed in range(20):
        unary, pairwise, edges = random_problem(seed, "loopy")
        um, pm, energy = lp_general_graph(-unary, edges, -pairwise)
        (um2, pm2), energy2 = inference_lp(unary, pairwise, edges, relaxed=True,
                                           return_energy=True)
        np.testing.assert_array_equal(um, um2)
        np.testing.assert_array_equal(pm, pm2)
        assert energy == pytest.approx(energy2)


def test_reversed_edges_with_transposed_pairwise_give_the_same_labels():
    rng = np.random.default_rng(5)
    forward = np.c_[np.arange(5), np.arange(1, 6)]
    for _ in range(10):
        unary, pairwise = rng.normal(size=(6, 3)), rng.normal(size=(3, 3))
        for method in ("lp", "ad3", "max-product"):
            a = inference_dispatch(unary, pairwise, forward, method)
            b = inference_dispatch(unary, pairwise.T, forward[:, ::-1], method)
            np.testing.assert_array_equal(a, b)


def test_grid_shaped_unaries_give_grid_shaped_results():
    rng = np.random.default_rng(1)
    unary = rng.normal(size=(2, 3, 2))
    edges = np.array([[0, 1], [1, 2], [3, 4], [4, 5], [0, 3], [1, 4], [2, 5]])
    labels = inference_dispatch(unary, np.eye(2), edges, "ad3")
    assert labels.shape == (2, 3)
    unary_m, _ = inference_dispatch(unary, np.eye(2), edges, "lp", relaxed=True)
    assert unary_m.shape == (2, 3, 2)


# -- ad3+: logic constraints and typed graphs ---------------------------------------------
def literal(y, node, state, negated):
    return (y[node] == state) != bool(negated)


def holds(y, op, nodes, states, negated):
    lits = [literal(y, n, s, g) for n, s, g in zip(nodes, states, negated)]
    head, last = lits[:-1], lits[-1]
    return {"XOR": sum(lits) == 1, "OR": any(lits), "ATMOSTONE": sum(lits) <= 1,
            "IMPLY": (not all(head)) or last, "XOROUT": sum(head) == int(last),
            "OROUT": any(head) == last, "ANDOUT": all(head) == last}[op]


def test_ad3plus_constraints_against_enumeration():
    ops = ["XOR", "OR", "ATMOSTONE", "IMPLY", "XOROUT", "OROUT", "ANDOUT"]
    checked = 0
    for seed in range(70):
        rng = np.random.default_rng(100 + seed)
        unary, pairwise, edges = random_problem(seed, ("chain", "tree", "loopy")[seed % 3])
        n, k = unary.shape
        if n < 2:
            continue
        constraints = []
        for _ in range(int(rng.integers(1, 3))):
            size = int(rng.integers(2, n + 1))
            nodes = [int(v) for v in rng.choice(n, size=size, replace=False)]
            states = [int(rng.integers(0, k)) for _ in nodes]
            negated = [bool(rng.random() < 0.3) for _ in nodes]
            constraints.append((ops[(seed + len(constraints)) % len(ops)], nodes, states,
                                negated))

        def feasible(y):
            return all(holds(y, *c) for c in constraints)

        best = enumerate_best(unary, pairwise, edges, feasible)
        if best is None:
            with pytest.raises(InferenceError, match="constraints admit no labelling"):
                inference_dispatch(unary, pairwise, edges, "ad3+", constraints=constraints)
            continue
        labels = inference_dispatch(unary, pairwise, edges, "ad3+", constraints=constraints)
        assert feasible(labels), (seed, constraints, labels)
        assert hand_score(unary, pairwise, edges, labels) == pytest.approx(best, abs=1e-9)
        checked += 1
    assert checked >= 40


def test_constraint_with_one_state_and_one_negation_for_all_nodes():
    unary = np.array([[0.0, 5.0], [0.0, 4.0], [0.0, 3.0]])  # alone: all ones
    labels = inference_dispatch(unary, np.zeros((2, 2)), np.zeros((0, 2), int), "ad3+",
                                constraints=[("ATMOSTONE", [0, 1, 2], 1, False)])
    np.testing.assert_array_equal(labels, [1, 0, 0])


def test_typed_graph_against_enumeration():
    rng = np.random.default_rng(11)
    for _ in range(15):
        u0, u1 = rng.normal(size=(2, 2)), rng.normal(size=(3, 3))
        e01 = np.array([[0, 0], [1, 2], [1, 0]])
        e00 = np.array([[0, 1]])
        pw00, pw01 = rng.normal(size=(1, 2, 2)), rng.normal(size=(3, 2, 3))
        edges = [e00, e01, np.zeros((0, 2), int), np.zeros((0, 2), int)]
        pairwise = [pw00, pw01, np.zeros((0, 3, 2)), np.zeros((0, 3, 3))]
        best = -np.inf
        for y0 in itertools.product(range(2), repeat=2):
            for y1 in itertools.product(range(3), repeat=3):
                s = u0[[0, 1], y0].sum() + u1[[0, 1, 2], y1].sum() + pw00[0, y0[0], y0[1]]
                s += sum(pw01[k, y0[a], y1[b]] for k, (a, b) in enumerate(e01))
                best = max(best, s)
        labels, energy = inference_dispatch([u0, u1], pairwise, edges, "ad3+",
                                            return_energy=True)
        assert labels.shape == (5,)
        assert -energy == pytest.approx(best, abs=1e-9)
        relaxed = inference_dispatch([u0, u1], pairwise, edges, "lp", relaxed=True)
        assert [m.shape for m in relaxed[0]] == [(2, 2), (3, 3)]
        assert relaxed[1][1].shape == (3, 2, 3)


def test_typed_graph_bad_edges_name_the_type_pair():
    u0, u1 = np.zeros((2, 2)), np.zeros((3, 3))
    edges = [np.zeros((0, 2), int), np.array([[0, 0], [1, 3]]), np.zeros((0, 2), int),
             np.zeros((0, 2), int)]
    pairwise = [np.zeros((0, 2, 2)), np.zeros((2, 2, 3)), np.zeros((0, 3, 2)),
                np.zeros((0, 3, 3))]
    with pytest.raises(InputError, match=r"edges\[1\]\[1\] = \(1, 3\) is out of range"):
        inference_dispatch([u0, u1], pairwise, edges, "ad3+")


def test_warm_solvers_across_interleaved_graphs_stay_exact(monkeypatch):
    from latentstruct.inference.graph import polytope as linear_programming

    monkeypatch.setattr(linear_programming, "CACHE_SIZE", 2)  # force evictions
    problems = [random_problem(seed, "loopy") for seed in range(8)]
    for round_ in range(3):
        for unary, pairwise, edges in problems:
            scaled = unary * (1 + round_)
            best = enumerate_best(scaled, pairwise, edges)
            labels = inference_dispatch(scaled, pairwise, edges, "ad3")
            assert hand_score(scaled, pairwise, edges, labels) == pytest.approx(best, abs=1e-9)


# -- energy, dispatch, graph predicates ---------------------------------------------------
def test_compute_energy_is_the_hand_sum():
    for seed, kind in PROBLEMS[::4]:
        unary, pairwise, edges = random_problem(seed, kind)
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, unary.shape[1], size=unary.shape[0])
        assert compute_energy(unary, pairwise, edges, labels) == pytest.approx(
            hand_score(unary, pairwise, edges, labels), abs=1e-12)
    unary = np.array([[1.0, 2.0], [3.0, 4.0]])
    pairwise = np.array([[10.0, 20.0], [30.0, 40.0]])
    assert compute_energy(unary, pairwise, np.array([[0, 1]]), [1, 0]) == 2 + 3 + 30


def test_get_installed_keeps_ours_in_order_and_drops_others():
    assert get_installed() == ["max-product", "lp", "ad3", "ad3+", "qpbo", "unary"]
    listed = get_installed([("ad3", {"branch_and_bound": True}), ("ogm", {"alg": "dd"}),
                            "qpbo", "ogm", "lp"])
    assert listed == [("ad3", {"branch_and_bound": True}), "qpbo", "lp"]
    assert get_installed(["ad3+"]) == ["ad3+"]


def test_is_chain_and_is_forest():
    chain = np.c_[np.arange(4), np.arange(1, 5)]
    assert is_chain(chain, 5) and not is_chain(chain, 4) and not is_chain(chain[::-1], 5)
    assert is_forest(chain) and is_forest(np.vstack([chain, chain + 5]), 10)
    assert not is_forest(np.vstack([chain, [4, 0]]))
    assert not is_forest(np.array([[0, 0]])) and not is_forest(np.array([[0, 1], [1, 0]]))


# -- bad input ---------------------------------------------------------------------------
def test_bad_input_gets_one_line_naming_the_position():
    unary = np.zeros((4, 2))
    edges = np.array([[0, 1], [1, 2], [2, 9]])
    with pytest.raises(InputError, match=r"edges\[2\] = \(2, 9\) is out of range for 4 "):
        inference_dispatch(unary, np.eye(2), edges, "ad3")
    bad = unary.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match=r"unary_potentials\[3, 1\] = nan is not finite"):
        inference_dispatch(bad, np.eye(2), edges[:2], "lp")
    pw = np.zeros((2, 2, 2))
    pw[1, 0, 1] = np.inf
    with pytest.raises(InputError, match=r"pairwise_potentials\[1, 0, 1\] = inf"):
        inference_dispatch(unary, pw, edges[:2], "max-product")
    with pytest.raises(InputError, match=r"shape \(2, 2\) .* or \(2, 2, 2\)"):
        inference_dispatch(unary, np.zeros((3, 3)), edges[:2], "qpbo")
    with pytest.raises(InputError, match=r"shape \(n_edges, 2\)"):
        inference_dispatch(unary, np.eye(2), np.array([0, 1, 2]), "ad3")
    with pytest.raises(InputError, match=r"labels\[1\] = 5 is out of range"):
        compute_energy(unary, np.eye(2), edges[:2], [0, 5, 0, 0])
    with pytest.raises(InputError, match=r"constraints\[0\]: nodes\[1\] = 7 is out of range"):
        inference_dispatch(unary, np.eye(2), edges[:2], "ad3+",
                           constraints=[("XOR", [0, 7], 1, False)])
    with pytest.raises(InputError, match=r"constraints\[0\]: unknown operator 'NAND'"):
        inference_dispatch(unary, np.eye(2), edges[:2], "ad3+",
                           constraints=[("NAND", [0, 1], 1, False)])
    with pytest.raises(InputError, match=r"unaries\[0, 1\] = nan is not finite"):
        lp_general_graph(np.array([[0.0, np.nan]]), np.zeros((0, 2), int), np.eye(2))
    for err in (InputError,):
        with pytest.raises(err) as info:
            inference_dispatch(unary, np.eye(2), edges, "ad3")
        assert "\n" not in str(info.value)


def test_bad_options_are_config_errors():
    unary, edges = np.zeros((2, 2)), np.array([[0, 1]])
    with pytest.raises(ConfigError, match="unknown inference_method 'ogm'"):
        inference_dispatch(unary, np.eye(2), edges, "ogm")
    with pytest.raises(ConfigError, match="takes no option 'constraints'"):
        inference_dispatch(unary, np.eye(2), edges, "ad3", constraints=[])
    with pytest.raises(ConfigError, match="damping must be"):
        inference_dispatch(unary, np.eye(2), edges, ("max-product", {"damping": 1.5}))
