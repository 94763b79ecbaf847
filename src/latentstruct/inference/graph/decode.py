"""MAP labelling and marginals of a pairwise model on a general graph, as decoder results.

:func:`graph_argmax` is the exact best labelling: the tree dynamic programme on forests,
elsewhere the local-polytope LP on HiGHS and, only when the LP's optimum is fractional, the
ILP on the same rows (:mod:`.polytope`).  It returns a
:class:`~latentstruct.inference.result.DecodeResult` whose score is the labelling's own
score (``sum unary + sum pairwise``) and whose stats say which route decided it.

:func:`graph_marginals` is the Gibbs distribution ``p(y) ∝ exp(score(y))``: its node and
edge marginals and ``log Z``.  They are exact on forests (sum-product,
:func:`latentstruct.inference.tree_bp.tree_sum_product`, below one virtual root) and, on a
graph with cycles, by enumeration where ``n_states ** n_nodes`` is at most
``max_enumerated``.  Beyond that, with ``relaxed=True``, the LP's relaxed marginals stand
in, with ``log Z`` replaced by the LP's optimal value (the zero-temperature limit, whose
gradient in the scores is those marginals), under status :data:`RELAXED`; without it the
call is refused.  The caller (a CRF over such a task) must count and report the relaxed
ones: they are not a probability model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.inference.result import EXACT, INFEASIBLE, DecodeResult
from latentstruct.inference.tree_bp import tree_sum_product

from .maxprod import is_forest, rooted_forest
from .model import PairwiseGraph, check_graph
from .polytope import NoLabelling, solve_exact, solve_relaxation

__all__ = ["graph_argmax", "graph_marginals", "GraphMarginals", "RELAXED", "MAX_ENUMERATED",
           "one_type_graph"]

#: status of marginals that come from the LP relaxation (not a probability model)
RELAXED = "relaxed"
#: default bound on ``n_states ** n_nodes`` for exact marginals by enumeration on loops
MAX_ENUMERATED = 1 << 16


@dataclass(frozen=True)
class GraphMarginals:
    """Node marginals (n_nodes, K), edge marginals (n_edges, K, K) in the edges' own
    orientation (``[e, a, b] = p(y_i = a, y_j = b)`` for ``edges[e] = (i, j)``), ``log Z``,
    the status (``"exact"`` or :data:`RELAXED`) and the route (``"tree"``,
    ``"enumeration"`` or ``"lp"``)."""

    node: np.ndarray
    edge: np.ndarray
    log_partition: float
    status: str
    method: str

    @property
    def exact(self) -> bool:
        return self.status == EXACT


def one_type_graph(unary, pairwise, edges) -> PairwiseGraph:
    """The checked graph of one node type: unary (n, K), pairwise (K, K) or (m, K, K)."""
    graph = check_graph(np.asarray(unary, dtype=np.float64), pairwise, edges)
    if graph.typed or len(graph.grid_shape) != 1:
        raise ConfigError("graph_argmax and graph_marginals take unary scores of shape "
                          "(n_nodes, n_states); reshape grids to one row per node")
    return graph


def graph_argmax(unary, pairwise, edges, constraints=None) -> DecodeResult:
    """The exact best labelling (int64 (n_nodes,)) and its score; status ``"exact"``.

    ``constraints``: None, or a :class:`~latentstruct.inference.GlobalConstraints` over the
    states (a state's count bounded, if-then; the best free labelling is kept when it keeps
    them, else the local polytope with their rows, exactly).  Status ``"infeasible"``
    (labels None, score ``-inf``) when no labelling keeps them.

    ``stats``: ``route`` (``"tree"``, ``"lp"`` when the LP was integral, ``"ilp"`` when it
    was fractional) and ``lp_bound`` (the relaxation's value, >= the score).
    """
    graph = one_type_graph(unary, pairwise, edges)
    if constraints is not None:
        free = graph_argmax(unary, pairwise, edges)
        if constraints.allows(free.structure):
            return free
        try:
            lp, exact = solve_exact(graph, constraints)
        except NoLabelling:
            return DecodeResult(None, -np.inf, INFEASIBLE, {"route": "ilp"})
    else:
        lp, exact = solve_exact(graph)
    labels = np.asarray(exact.labels, dtype=np.int64)
    if lp is exact:
        route = "lp" if graph.blocks[0].edges.shape[0] and not _forest(graph) else "tree"
    else:
        route = "ilp"
    return DecodeResult(labels, graph.score(labels), EXACT,
                        {"route": route, "lp_bound": float(lp.score)})


def _forest(graph: PairwiseGraph) -> bool:
    edges = graph.blocks[0].edges
    return not np.any(edges[:, 0] == edges[:, 1]) and is_forest(edges, graph.n_nodes)


def _logsumexp(scores: np.ndarray) -> tuple[float, np.ndarray]:
    top = float(np.max(scores))
    p = np.exp(scores - top)
    total = float(p.sum())
    return top + float(np.log(total)), p / total


def _tree_marginals(unary, pairwise, edges) -> tuple:
    """Exact marginals of a forest whose self-loops are folded in by the caller."""
    n, k = unary.shape
    forest = rooted_forest(n, pairwise, edges)
    # the virtual root is held at state 0 (the others -inf) and joined by all-zero edges, so
    # log Z and the marginals are the forest's own
    root = np.full((1, k), -np.inf)
    root[0, 0] = 0.0
    res = tree_sum_product(np.vstack([unary, root]), forest.parents, forest.edge_scores)
    edge_m = forest.edge_values(res.edge_marginals, edges.shape[0])
    return res.node_marginals[:n], edge_m, float(res.log_partition)


def _enumerated_marginals(graph: PairwiseGraph) -> tuple:
    unary = graph.unaries[0]
    block = graph.blocks[0]
    n, k = unary.shape
    labels = np.indices((k,) * n).reshape(n, -1).T  # every labelling, one per row
    scores = unary[np.arange(n), labels].sum(axis=1)
    edges = block.edges
    if edges.shape[0]:
        pw = np.asarray(block.pairwise)
        scores = scores + pw[np.arange(edges.shape[0]), labels[:, edges[:, 0]],
                             labels[:, edges[:, 1]]].sum(axis=1)
    log_z, p = _logsumexp(scores)
    node = np.zeros((n, k))
    for i in range(n):
        node[i] = np.bincount(labels[:, i], weights=p, minlength=k)
    edge_m = np.zeros((edges.shape[0], k, k))
    for e, (i, j) in enumerate(edges):
        edge_m[e] = np.bincount(labels[:, i] * k + labels[:, j], weights=p,
                                minlength=k * k).reshape(k, k)
    return node, edge_m, log_z


def graph_marginals(unary, pairwise, edges, *, relaxed: bool = False,
                    max_enumerated: int = MAX_ENUMERATED) -> GraphMarginals:
    """Marginals and log Z of ``p(y) ∝ exp(score(y))`` (see the module docstring).

    Exact on forests and on graphs with at most ``max_enumerated`` labellings; otherwise the
    LP's relaxed marginals when ``relaxed`` (status :data:`RELAXED`), else ConfigError.
    """
    graph = one_type_graph(unary, pairwise, edges)
    unary = graph.unaries[0]
    block = graph.blocks[0]
    edges = block.edges
    pairwise = np.asarray(block.pairwise)
    n, k = unary.shape
    loops = edges[:, 0] == edges[:, 1]
    if is_forest(edges[~loops], n):
        folded = unary.copy()
        for e in np.flatnonzero(loops):
            folded[edges[e, 0]] += np.diag(pairwise[e])
        node, tree_edges, log_z = _tree_marginals(folded, pairwise[~loops], edges[~loops])
        edge_m = np.zeros((edges.shape[0], k, k))
        edge_m[~loops] = tree_edges
        for e in np.flatnonzero(loops):
            edge_m[e] = np.diag(node[edges[e, 0]])
        return GraphMarginals(node, edge_m, log_z, EXACT, "tree")
    if float(k) ** n <= max_enumerated:
        node, edge_m, log_z = _enumerated_marginals(graph)
        return GraphMarginals(node, edge_m, log_z, EXACT, "enumeration")
    if not relaxed:
        raise ConfigError(
            f"exact marginals of a graph with cycles, {n} nodes and {k} states "
            f"({k}^{n} labellings) exceed max_enumerated = {max_enumerated}; allow the LP's "
            "relaxed marginals (relaxed=True; a graph task's marginals='lp') or raise "
            "max_enumerated")
    lp = solve_relaxation(graph)
    return GraphMarginals(np.asarray(lp.unary_marginals[0]), np.asarray(lp.pairwise_marginals[0]),
                          float(lp.score), RELAXED, "lp")
