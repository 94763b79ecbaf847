"""``ChainCRF``: a linear-chain CRF whose examples are plain feature arrays.

An example ``x`` is an ``(n_nodes, n_features)`` array; node ``t`` is linked to node
``t + 1``.  The pairwise matrix is directed by default (``pairwise[y_t, y_t+1]``), and
decoding is exact max-product (Viterbi) unless another method is named.
"""

from __future__ import annotations

import numpy as np

from .checks import as_features
from .graph_crf import GraphCRF

__all__ = ["ChainCRF", "chain_edges"]


def chain_edges(n_nodes: int) -> np.ndarray:
    """The ``(n_nodes - 1, 2)`` edges ``(t, t + 1)`` of a chain."""
    nodes = np.arange(n_nodes, dtype=np.intp)
    return np.column_stack([nodes[:-1], nodes[1:]])


class ChainCRF(GraphCRF):
    """A linear-chain CRF (``directed=True``: transitions depend on their order)."""

    def __init__(self, n_states=None, n_features=None, inference_method="max-product",
                 class_weight=None, directed=True):
        super().__init__(n_states, n_features, inference_method, class_weight,
                         directed=directed)

    def _prepare(self, x, where="x", check_width=True):
        """``x`` as ``(features, chain edges)``."""
        features = as_features(x, where, self.n_features if check_width else None)
        return features, chain_edges(features.shape[0])
