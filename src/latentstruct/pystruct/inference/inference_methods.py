"""PyStruct's inference back-ends, on HiGHS and numpy, and the dispatch that picks one.

=================  ========================================================================
``max-product``    exact dynamic programming on forests (chains, trees); loopy max-product
                   on graphs with cycles (approximate there, as in PyStruct)
``lp``             the local-polytope LP (HiGHS simplex); ``relaxed=True`` returns its
                   marginals ``(unary_marginals, pairwise_marginals)`` always, as PyStruct's
                   ``lp`` does; otherwise labels, exact: a fractional LP falls back to the ILP
``ad3``            exact: the LP, and the ILP only when the LP is fractional.  With
                   ``relaxed=True`` (and no ``branch_and_bound``) a fractional LP's marginals
                   are returned, as AD3 returns its relaxed solution; an integral one gives
                   labels.  ``branch_and_bound=True`` always gives exact labels
``ad3+``           ``ad3`` plus hard logic constraints (``constraints=``, see
                   :mod:`latentstruct.inference.graph.logic`)
                   and graphs with several node types
``qpbo``           exact labels by the same LP-then-ILP route (PyStruct's QPBO was exact only
                   on submodular binary problems); ``relaxed`` is ignored
``unary``          each node's best state alone, pairwise scores ignored
=================  ========================================================================

Every back-end maximises ``unary + pairwise`` scores; with ``return_energy=True`` the result
comes with the energy ``-score`` of what is returned (for marginals, the negated LP value),
which is PyStruct's sign.  AD3's own iteration options (``n_iterations``, ``eta``,
``inference_exception``) and ``verbose`` are accepted and have no effect: HiGHS solves to
optimality.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.inference.graph.model import PairwiseGraph, check_graph
from latentstruct.inference.graph.polytope import Relaxation, solve_exact, solve_relaxation

from .maxprod import inference_max_product

__all__ = ["inference_dispatch", "get_installed", "inference_lp", "inference_ad3",
           "inference_ad3plus", "inference_qpbo", "inference_unaries",
           "inference_max_product", "INFERENCE_METHODS"]

_AD3_OPTIONS = ("verbose", "branch_and_bound", "n_iterations", "eta", "inference_exception")


def _labels_out(graph: PairwiseGraph, labels):
    labels = np.asarray(labels, dtype=np.int64)
    if graph.typed:
        return labels
    return labels.reshape(graph.grid_shape)


def _marginals_out(graph: PairwiseGraph, res: Relaxation):
    if graph.typed:
        return list(res.unary_marginals), list(res.pairwise_marginals)
    unary = res.unary_marginals[0].reshape(graph.grid_shape + graph.unaries[0].shape[1:])
    return unary, res.pairwise_marginals[0]


def _finish(graph: PairwiseGraph, result, score, return_energy):
    return (result, 0.0 - float(score)) if return_energy else result


def _labels_result(graph, labels, return_energy):
    labels = np.asarray(labels, dtype=np.int64)
    return _finish(graph, _labels_out(graph, labels), graph.score(labels), return_energy)


def inference_lp(unary_potentials, pairwise_potentials, edges, relaxed=False, verbose=0,
                 return_energy=False):
    """The local-polytope LP: marginals when ``relaxed``, else exact labels."""
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    if relaxed:
        res = solve_relaxation(graph)
        return _finish(graph, _marginals_out(graph, res), res.score, return_energy)
    _, exact = solve_exact(graph)
    return _labels_result(graph, exact.labels, return_energy)


def _exact_or_relaxed(graph, relaxed, branch_and_bound, return_energy, constraints=None):
    lp, exact = solve_exact(graph, constraints) if (branch_and_bound or not relaxed) \
        else (None, None)
    if lp is None:
        lp = solve_relaxation(graph, constraints)
        if not lp.integral:
            return _finish(graph, _marginals_out(graph, lp), lp.score, return_energy)
        exact = lp
    return _labels_result(graph, exact.labels, return_energy)


def inference_ad3(unary_potentials, pairwise_potentials, edges, relaxed=False, verbose=0,
                  return_energy=False, branch_and_bound=False, n_iterations=None, eta=None,
                  inference_exception=None):
    """PyStruct's ``ad3``, exact on HiGHS (see the module docstring for ``relaxed``)."""
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    return _exact_or_relaxed(graph, relaxed, branch_and_bound, return_energy)


def inference_ad3plus(unary_potentials, pairwise_potentials, edges, relaxed=False, verbose=0,
                      return_energy=False, branch_and_bound=False, constraints=None,
                      n_iterations=None, eta=None, inference_exception=None):
    """``ad3+``: ``ad3`` with logic ``constraints`` (``inference.graph.logic``) and typed
    graphs."""
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    return _exact_or_relaxed(graph, relaxed, branch_and_bound, return_energy, constraints)


def inference_qpbo(unary_potentials, pairwise_potentials, edges, relaxed=False, verbose=0,
                   return_energy=False):
    """PyStruct's ``qpbo``: exact labels (LP, then ILP when fractional)."""
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    _, exact = solve_exact(graph)
    return _labels_result(graph, exact.labels, return_energy)


def inference_unaries(unary_potentials, pairwise_potentials, edges, relaxed=False, verbose=0,
                      return_energy=False):
    """Each node's best state by its unary score alone (pairwise scores ignored)."""
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    labels = np.concatenate([np.argmax(u, axis=1) for u in graph.unaries])
    return _labels_result(graph, labels, return_energy)


def _max_product(unary_potentials, pairwise_potentials, edges, relaxed=False,
                 return_energy=False, **options):
    graph = check_graph(unary_potentials, pairwise_potentials, edges)
    labels = inference_max_product(unary_potentials, pairwise_potentials, edges, **options)
    return _labels_result(graph, np.asarray(labels).ravel(), return_energy)


#: name -> (back-end, the keyword options it takes besides relaxed and return_energy)
INFERENCE_METHODS = {
    "max-product": (_max_product, ("max_iter", "damping", "tol", "verbose")),
    "lp": (inference_lp, ("verbose",)),
    "ad3": (inference_ad3, _AD3_OPTIONS),
    "ad3+": (inference_ad3plus, _AD3_OPTIONS + ("constraints",)),
    "qpbo": (inference_qpbo, ("verbose",)),
    "unary": (inference_unaries, ("verbose",)),
}


def _method_name(entry):
    """The back-end name of ``'name'`` or ``('name', {options})``; None when neither."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], str):
        return entry[0]
    return None


def get_installed(method_list=None):
    """The entries of ``method_list`` this layer runs, in their order (all of ours when None).

    Entries are names or ``(name, options)`` pairs, returned as given.  All six back-ends
    run here (HiGHS and numpy); PyStruct's ``ogm`` is not offered.
    """
    if method_list is None:
        return list(INFERENCE_METHODS)
    if isinstance(method_list, str) or not hasattr(method_list, "__iter__"):
        raise ConfigError("method_list must be a list of method names or (name, options) "
                          f"pairs; got {method_list!r}")
    return [entry for entry in method_list if _method_name(entry) in INFERENCE_METHODS]


def inference_dispatch(unary_potentials, pairwise_potentials, edges, inference_method,
                       return_energy=False, relaxed=False, **kwargs):
    """Run the back-end ``inference_method`` (a name or ``(name, options)``).

    Returns labels, or ``(unary_marginals, pairwise_marginals)`` where the back-end gives
    marginals under ``relaxed``; with ``return_energy`` a ``(result, -score)`` pair.
    """
    name = _method_name(inference_method)
    options = {}
    if name is not None and not isinstance(inference_method, str):
        if not isinstance(inference_method[1], dict):
            raise ConfigError(f"inference_method {inference_method!r}: the options must be a "
                              "dict, as in ('ad3', {'branch_and_bound': True})")
        options.update(inference_method[1])
    if name not in INFERENCE_METHODS:
        raise ConfigError(f"unknown inference_method {inference_method!r}; expected one of "
                          f"{', '.join(repr(m) for m in INFERENCE_METHODS)} (or a (name, "
                          "options) pair)")
    options.update(kwargs)
    function, accepted = INFERENCE_METHODS[name]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConfigError(f"inference_method {name!r} takes no option {unknown[0]!r}; it "
                          f"takes {', '.join(accepted)}")
    if name == "max-product":
        options.pop("verbose", None)
    return function(unary_potentials, pairwise_potentials, edges, relaxed=relaxed,
                    return_energy=return_energy, **options)
