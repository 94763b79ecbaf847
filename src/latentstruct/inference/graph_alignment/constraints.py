"""The rows (6)–(11) of a graph-alignment problem as a sparse constraint matrix with row
bounds, and the optional strengthening rows (aggregated (11) and cliques) that cut
fractional LP points; the exact solver (:mod:`latentstruct.inference.graph_alignment.solver`)
builds its HiGHS models from it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from latentstruct.inference.graph_alignment.problem import GraphAlignmentProblem


def constraint_matrix(problem: GraphAlignmentProblem, strengthen: bool = False):
    """Rows of (6)–(11) as a sparse matrix with row bounds.  Returns (A, lower, upper, kinds).

    ``kinds`` names each row's constraint number ("6" … "11", and "11-agg" / "clique" for the
    optional strengthening rows).  Rows with no variable at all (a node without candidate
    pairs and without a deletion variable) are left out.

    ``strengthen`` appends valid inequalities that aggregate (11): for a fixed edge e of one
    graph and a fixed word pair p at its head (or at its dependent), the candidate edge pairs
    of e that use p satisfy ``Σ_q h_q <= h_p``.  Valid because those edge pairs differ in the
    other endpoint of the partner edge (no parallel edges), which is one word, mapped at most
    once ((6)/(7)).  It also appends clique rows: for an edge pair q with head pair
    (h1, h2) and dependent pair (d1, d2), and any other G1 word i (i ∉ {h1, d1}) with both
    (i, h2) and (i, d2) candidate, ``h_q + h_{i,h2} + h_{i,d2} <= 1`` (and symmetrically for a
    G2 word j ∉ {h2, d2} with (h1, j) and (d1, j) candidate).  Valid: h_q = 1 maps h1 to h2
    and d1 to d2, so no other word can take h2 or d2, and i maps at most once anyway.  The
    typical fractional LP point (two half matchings with h_q = 1/2) violates them.
    Both families cut fractional LP points only: the 0/1 solutions are unchanged.
    """
    layout = problem.variable_layout()
    x0 = layout["node_map"].start
    rows, cols, vals, lower, upper, kinds = [], [], [], [], [], []
    r = 0

    def group_rows(number, n_items, items_of_var, var_offset, del_offset, has_del):
        """One row per item: deletion var (if any) + Σ member vars, = 1 or <= 1."""
        nonlocal r
        members: list[list[int]] = [[] for _ in range(n_items)]
        for v, item in enumerate(items_of_var):
            members[item].append(var_offset + v)
        for k in range(n_items):
            row_vars = list(members[k])
            if has_del:
                row_vars.append(del_offset + k)
            if not row_vars:
                continue
            rows.extend([r] * len(row_vars))
            cols.extend(row_vars)
            vals.extend([1.0] * len(row_vars))
            lower.append(1.0 if has_del else -np.inf)
            upper.append(1.0)
            kinds.append(number)
            r += 1

    pairs = problem.node_pairs
    # (6) each G1 word is mapped to a single G2 word or deleted (at most once without deletion)
    group_rows("6", problem.n1, pairs[:, 0].tolist(), x0, layout["del1"].start, problem.delete_nodes1)
    # (7) each G2 word likewise
    group_rows("7", problem.n2, pairs[:, 1].tolist(), x0, layout["del2"].start, problem.delete_nodes2)
    y0 = layout["edge_map"].start
    ep = problem.edge_pairs
    # (8) each G1 edge is mapped to a single G2 edge or deleted
    group_rows("8", problem.n_edges1, ep[:, 0].tolist(), y0, layout["edge_del1"].start, problem.edge_deletion)
    # (9) each G2 edge likewise
    group_rows("9", problem.n_edges2, ep[:, 1].tolist(), y0, layout["edge_del2"].start, problem.edge_deletion)
    for q, (ph, pd) in enumerate(problem.edge_pair_nodes.tolist()):
        y = y0 + q
        # (10) h_{v1,v2} + h_{v1',v2'} - h_{e1,e2} <= 1: both endpoint mappings force the edge mapping
        rows.extend([r, r, r])
        cols.extend([x0 + ph, x0 + pd, y])
        vals.extend([1.0, 1.0, -1.0])
        lower.append(-np.inf)
        upper.append(1.0)
        kinds.append("10")
        r += 1
        # (11) h_{v1,v2} >= h_{e1,e2} and h_{v1',v2'} >= h_{e1,e2}
        for p in (ph, pd):
            rows.extend([r, r])
            cols.extend([y, x0 + p])
            vals.extend([1.0, -1.0])
            lower.append(-np.inf)
            upper.append(0.0)
            kinds.append("11")
            r += 1
    if strengthen:
        groups: dict[tuple[int, int, int], list[int]] = {}
        for q, ((e1, e2), (ph, pd)) in enumerate(zip(ep.tolist(), problem.edge_pair_nodes.tolist())):
            for key in ((0, e1, ph), (1, e1, pd), (2, e2, ph), (3, e2, pd)):
                groups.setdefault(key, []).append(q)
        for (_, _, pair), qs in groups.items():
            if len(qs) < 2:
                continue  # a single edge pair: the row would repeat (11)
            rows.extend([r] * (len(qs) + 1))
            cols.extend([y0 + q for q in qs] + [x0 + pair])
            vals.extend([1.0] * len(qs) + [-1.0])
            lower.append(-np.inf)
            upper.append(0.0)
            kinds.append("11-agg")
            r += 1
        for row in _clique_rows(problem):
            rows.extend([r] * 3)
            cols.extend([y0 + row[0], x0 + row[1], x0 + row[2]])
            vals.extend([1.0, 1.0, 1.0])
            lower.append(-np.inf)
            upper.append(1.0)
            kinds.append("clique")
            r += 1
    A = sp.csc_matrix((vals, (rows, cols)), shape=(r, problem.n_variables), dtype=np.float64)
    return A, np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64), kinds


def _clique_rows(problem: GraphAlignmentProblem) -> list[tuple[int, int, int]]:
    """(edge pair q, word pair a, word pair b) of every clique row (see constraint_matrix)."""
    pair_index = {(i, j): p for p, (i, j) in enumerate(problem.node_pairs.tolist())}
    g1_of: dict[int, set[int]] = {}  # G2 word -> its candidate G1 words
    g2_of: dict[int, set[int]] = {}  # G1 word -> its candidate G2 words
    for i, j in pair_index:
        g1_of.setdefault(j, set()).add(i)
        g2_of.setdefault(i, set()).add(j)
    out = []
    pairs = problem.node_pairs.tolist()
    for q, (ph, pd) in enumerate(problem.edge_pair_nodes.tolist()):
        (h1, h2), (d1, d2) = pairs[ph], pairs[pd]
        for i in sorted((g1_of[h2] & g1_of[d2]) - {h1, d1}):
            out.append((q, pair_index[(i, h2)], pair_index[(i, d2)]))
        for j in sorted((g2_of[h1] & g2_of[d1]) - {h2, d2}):
            out.append((q, pair_index[(h1, j)], pair_index[(d1, j)]))
    return out
