"""PyStruct's ``pystruct.inference`` on latentstruct: exact back-ends on HiGHS and numpy.

``inference_dispatch(unary_potentials, pairwise_potentials, edges, inference_method,
return_energy=False, relaxed=False, **options)`` runs one back-end: ``max-product`` (exact
on chains and trees, loopy otherwise), ``lp`` (the local-polytope LP, marginals when
relaxed), ``ad3``, ``ad3+`` (with logic constraints) and ``qpbo`` (exact: the LP, then the
ILP only when the LP is fractional) and ``unary``.  ``get_installed`` lists them (all six
run here), ``compute_energy`` scores a labelling.  Scores are maximised (PyStruct's sign);
returned energies are ``-score``.  The algorithms live in the inference layer,
:mod:`latentstruct.inference.graph` (one copy, which latentstruct's graph tasks use too);
this package is PyStruct's face over them: :mod:`.linear_programming` (PyStruct's
cost-form ``lp_general_graph``), :mod:`.maxprod` (``inference_max_product``) and
:mod:`.inference_methods` (the back-ends and the dispatch).  ``ad3+``'s logic constraints
are :mod:`latentstruct.inference.graph.logic`'s.
"""

from latentstruct.inference.graph.model import compute_energy

from .inference_methods import (
    INFERENCE_METHODS,
    get_installed,
    inference_ad3,
    inference_ad3plus,
    inference_dispatch,
    inference_lp,
    inference_max_product,
    inference_qpbo,
    inference_unaries,
)
from .linear_programming import lp_general_graph
from .maxprod import is_chain, is_forest, iterative_max_product, tree_max_product

__all__ = ["inference_dispatch", "compute_energy", "get_installed", "inference_lp",
           "inference_ad3", "inference_ad3plus", "inference_qpbo", "inference_unaries",
           "inference_max_product", "lp_general_graph", "is_chain", "is_forest",
           "iterative_max_product", "tree_max_product", "INFERENCE_METHODS"]
