"""CRFs on 2-d grids: ``GridCRF`` and ``DirectionalGridCRF``.

An example ``x`` is an ``(height, width, n_features)`` array and ``y`` a
``(height, width)`` array of states; node ``(i, j)`` is row ``i * width + j`` of the
flattened features.  Edges join each pixel to its right and lower neighbours (and, with
``neighborhood=8``, its two lower diagonal ones).  ``GridCRF`` shares one symmetric
pairwise matrix; ``DirectionalGridCRF`` learns a full matrix per direction (horizontal,
vertical, then the diagonals), as an edge-feature CRF with one-hot direction features.
Labels and unary marginals come back in the grid's shape.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from latentstruct.exceptions import ConfigError, InputError

from .checks import as_features
from .edge_feature_graph_crf import EdgeFeatureGraphCRF
from .graph_crf import GraphCRF

__all__ = ["GridCRF", "DirectionalGridCRF", "grid_edge_lists", "check_grid"]


@lru_cache(maxsize=64)
def grid_edge_lists(height: int, width: int, neighborhood: int = 4) -> tuple:
    """The grid's edges, one ``(n, 2)`` array per direction (right, down, diagonals)."""
    if neighborhood not in (4, 8):
        raise ConfigError(f"neighborhood must be 4 or 8, got {neighborhood!r}")
    index = np.arange(height * width, dtype=np.intp).reshape(height, width)
    pairs = [(index[:, :-1], index[:, 1:]), (index[:-1, :], index[1:, :])]
    if neighborhood == 8:
        pairs += [(index[:-1, :-1], index[1:, 1:]), (index[:-1, 1:], index[1:, :-1])]
    lists = []
    for a, b in pairs:
        edges = np.column_stack([a.ravel(), b.ravel()])
        edges.setflags(write=False)
        lists.append(edges)
    return tuple(lists)


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
        if neighborhood not in (4, 8):
            raise ConfigError(f"{type(self).__name__}: neighborhood must be 4 or 8, got "
                              f"{neighborhood!r}")
        self.neighborhood = neighborhood
        super().__init__(n_states, n_features, inference_method, class_weight)

    def _prepare(self, x, where="x", check_width=True):
        grid = check_grid(x, where)
        features = as_features(grid.reshape(-1, grid.shape[-1]), where,
                               self.n_features if check_width else None)
        edges = np.vstack(grid_edge_lists(grid.shape[0], grid.shape[1], self.neighborhood))
        return features, edges

    def _shape_result(self, x, result):
        return _reshape_to_grid(np.shape(x), result, self.n_states)


class DirectionalGridCRF(GridCRF, EdgeFeatureGraphCRF):
    """A grid CRF with a full pairwise matrix per edge direction."""

    def __init__(self, n_states=None, n_features=None, inference_method=None,
                 neighborhood=4, class_weight=None):
        if neighborhood not in (4, 8):
            raise ConfigError(f"{type(self).__name__}: neighborhood must be 4 or 8, got "
                              f"{neighborhood!r}")
        self.neighborhood = neighborhood
        EdgeFeatureGraphCRF.__init__(self, n_states, n_features, neighborhood // 2,
                                     inference_method, class_weight)

    def _prepare(self, x, where="x", check_width=True):
        grid = check_grid(x, where)
        features = as_features(grid.reshape(-1, grid.shape[-1]), where,
                               self.n_features if check_width else None)
        lists = grid_edge_lists(grid.shape[0], grid.shape[1], self.neighborhood)
        edges = np.vstack(lists)
        edge_features = np.zeros((len(edges), len(lists)))
        start = 0
        for k, part in enumerate(lists):
            edge_features[start:start + len(part), k] = 1.0
            start += len(part)
        return features, edges, edge_features

    def _check_widths(self, prepared, source):
        GraphCRF._check_widths(self, prepared, source)

    def _width_of(self, prepared):
        return prepared[0].shape[1]
