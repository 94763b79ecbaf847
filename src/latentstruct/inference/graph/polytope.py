"""The local-polytope relaxation of a pairwise model, and its exact ILP, on HiGHS.

Variables: ``mu_i(a)`` for each node and state, ``mu_e(a, b)`` for each edge and pair of
states, all in [0, 1].  Rows: ``sum_a mu_i(a) = 1`` per node; per edge ``e = (i, j)``,
``sum_b mu_e(a, b) = mu_i(a)`` and ``sum_a mu_e(a, b) = mu_j(b)`` (marginalisation); plus
the rows of any logic constraints (:mod:`.logic`).  The objective is the score
``sum unary * mu_i + sum pairwise * mu_e``, maximised.

The LP is solved by HiGHS' simplex, so its solution is a vertex of the polytope.  On trees
and chains (with no constraints) the polytope is integral: there the optimum comes from
the tree dynamic programme of :mod:`.maxprod` instead, as one-hot marginals.  Elsewhere it may be
fractional; :func:`solve_exact` then solves the same rows with binary variables (the ILP,
through :class:`latentstruct.inference.ilp.ILPModel`, whose optimality is certified).

Each thread keeps the HiGHS models of the last ``CACHE_SIZE`` distinct sets of rows and
re-solves them with new costs from the previous optimal basis, since learners decode the
same graphs over and over.  The optimal value never depends on that history; where the
LP has several optimal vertices (ties), which one is returned may.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from latentstruct.exceptions import InferenceError
from latentstruct.inference.ilp import ILPModel, new_highs, unit_box_lp
from latentstruct.inference.result import EXACT, INFEASIBLE

from .model import PairwiseGraph
from .logic import constraint_rows
from .maxprod import forest_labels, is_forest

__all__ = ["LocalPolytope", "Relaxation", "solve_relaxation", "solve_exact",
           "forest_solution", "INTEGRAL_TOL", "CACHE_SIZE", "NoLabelling"]

#: how far from 0/1 a node indicator may be and still count as integral
INTEGRAL_TOL = 1e-6


class NoLabelling(InferenceError):
    """The constraints (ad3+'s logic, a graph task's rules) admit no labelling."""


@dataclass(frozen=True)
class Relaxation:
    """An LP solution: node marginals per type, edge marginals per type pair, its score.

    ``integral`` says whether every node indicator is 0 or 1 (within ``INTEGRAL_TOL``);
    ``labels`` are then the global labels (else the argmax of each node's marginals).
    """

    unary_marginals: list
    pairwise_marginals: list
    score: float
    integral: bool
    labels: np.ndarray


class LocalPolytope:
    """The rows of the local polytope of a :class:`PairwiseGraph` (and its constraints)."""

    def __init__(self, graph: PairwiseGraph, constraints=None):
        self.graph = graph
        states = graph.node_states
        n_nodes = graph.n_nodes
        self.node_start = np.zeros(n_nodes + 1, dtype=np.int64)
        np.cumsum(states, out=self.node_start[1:])
        n_node_vars = int(self.node_start[-1])
        node_of_var = np.repeat(np.arange(n_nodes), states)
        rows = [node_of_var]
        cols = [np.arange(n_node_vars)]
        vals = [np.ones(n_node_vars)]
        lower = [np.ones(n_nodes)]
        upper = [np.ones(n_nodes)]
        n_rows = n_nodes
        var = n_node_vars
        self.block_start = []
        cost = [np.concatenate([u.ravel() for u in graph.unaries])]
        for block in graph.blocks:
            m, s1, s2 = block.pairwise.shape
            self.block_start.append(var)
            if m == 0:
                continue
            e, a, b = np.meshgrid(np.arange(m), np.arange(s1), np.arange(s2), indexing="ij")
            e, a, b = e.ravel(), a.ravel(), b.ravel()
            evar = var + np.arange(m * s1 * s2)
            # sum_b mu_e(a, b) - mu_i(a) = 0: one row per (edge, state of i)
            out_rows = n_rows + e * s1 + a
            rows += [out_rows, n_rows + np.arange(m * s1)]
            cols += [evar, (self.node_start[block.edges[:, 0]][:, None]
                            + np.arange(s1)[None, :]).ravel()]
            vals += [np.ones(evar.size), -np.ones(m * s1)]
            n_rows += m * s1
            # sum_a mu_e(a, b) - mu_j(b) = 0: one row per (edge, state of j)
            in_rows = n_rows + e * s2 + b
            rows += [in_rows, n_rows + np.arange(m * s2)]
            cols += [evar, (self.node_start[block.edges[:, 1]][:, None]
                            + np.arange(s2)[None, :]).ravel()]
            vals += [np.ones(evar.size), -np.ones(m * s2)]
            n_rows += m * s2
            lower.append(np.zeros(m * (s1 + s2)))
            upper.append(np.zeros(m * (s1 + s2)))
            cost.append(np.asarray(block.pairwise).ravel())
            var += m * s1 * s2
        c_rows, c_cols, c_vals, c_lo, c_hi = constraint_rows(constraints, states,
                                                             self.node_start[:-1])
        rows.append(n_rows + c_rows)
        cols.append(c_cols)
        vals.append(c_vals)
        lower.append(c_lo)
        upper.append(c_hi)
        n_rows += c_lo.size
        self.n_vars = var
        self.n_rows = n_rows
        self.n_node_vars = n_node_vars
        self.has_constraints = c_lo.size > 0
        self.A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                        np.concatenate(cols))),
                               shape=(n_rows, var))
        self.lower = np.concatenate(lower)
        self.upper = np.concatenate(upper)
        self.cost = np.concatenate(cost)

    # -- reading a solution ------------------------------------------------------------
    def _split(self, z):
        g = self.graph
        unary = []
        for t, u in enumerate(g.unaries):
            start = self.node_start[g.offsets[t]]
            unary.append(z[start:start + u.size].reshape(u.shape))
        pairwise = []
        for block, start in zip(g.blocks, self.block_start):
            size = int(np.prod(block.pairwise.shape))
            pairwise.append(z[start:start + size].reshape(block.pairwise.shape))
        return unary, pairwise

    def relaxation_from(self, z) -> Relaxation:
        z = np.clip(np.asarray(z, dtype=np.float64), 0.0, 1.0) + 0.0  # no -0.0
        unary, pairwise = self._split(z)
        node = z[:self.n_node_vars]
        integral = bool(np.all(np.minimum(node, 1.0 - node) <= INTEGRAL_TOL))
        labels = np.concatenate([np.argmax(u, axis=1) for u in unary]).astype(np.int64)
        score = float(np.dot(self.cost, z))
        return Relaxation(unary, pairwise, score, integral, labels)

    # -- solving -----------------------------------------------------------------------
    def solve_lp(self) -> Relaxation:
        """The LP optimum (a vertex, by the simplex method)."""
        if self.n_vars == 0:  # a graph without nodes: HiGHS calls an empty model an error
            return self.relaxation_from(np.zeros(0))
        h = _solvers_for(self).lp()
        h.changeColsCost(self.n_vars, np.arange(self.n_vars, dtype=np.int32), self.cost)
        h.run()
        status = h.getModelStatus()
        MS = highspy.HighsModelStatus
        if status not in (MS.kOptimal, MS.kInfeasible, MS.kUnboundedOrInfeasible):
            # never pass on a failed warm start: once more from a cleared state
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
        if status in (MS.kInfeasible, MS.kUnboundedOrInfeasible):
            raise NoLabelling("the constraints admit no labelling (the LP relaxation is "
                              "infeasible); check the constraints passed to ad3+, or the "
                              "graph task's rules")
        if status != MS.kOptimal:
            raise InferenceError("HiGHS did not solve the local-polytope LP: model status "
                                 f"{h.modelStatusToString(status)} (largest |score| "
                                 f"{np.abs(self.cost).max():.3g}; HiGHS takes 1e20 as inf)")
        return self.relaxation_from(np.asarray(h.getSolution().col_value))

    def solve_ilp(self, start: np.ndarray | None = None) -> Relaxation:
        """The exact optimum over labellings (binary indicators), certified by HiGHS."""
        result = _solvers_for(self).ilp().solve(self.cost, mip_start=start)
        if result.status == INFEASIBLE:
            raise NoLabelling("the constraints admit no labelling (the ILP is infeasible); "
                              "check the constraints passed to ad3+, or the graph task's "
                              "rules")
        if result.status != EXACT:
            raise InferenceError(f"HiGHS did not solve the exact ILP: status {result.status}, "
                                 f"{result.stats.get('model_status')}")
        return self.relaxation_from(np.asarray(result.structure, dtype=np.float64))

    def labels_as_start(self, labels) -> np.ndarray:
        """The 0/1 vector of a labelling (a MIP start), edge indicators included."""
        z = np.zeros(self.n_vars)
        z[self.node_start[:-1] + labels] = 1.0
        for block, start in zip(self.graph.blocks, self.block_start):
            m, s1, s2 = block.pairwise.shape
            if m:
                a, b = labels[block.edges[:, 0]], labels[block.edges[:, 1]]
                z[start + np.arange(m) * s1 * s2 + a * s2 + b] = 1.0
        return z


class _Solvers:
    """The HiGHS LP and ILP of one polytope's rows, built once and re-solved per objective.

    Learners decode the same graph (and grids of one size share a graph) again and again
    with new scores: only the costs change, and HiGHS' simplex starts from the last
    optimal basis instead of from scratch.
    """

    def __init__(self, polytope: "LocalPolytope"):
        self.A, self.lower, self.upper = polytope.A, polytope.lower, polytope.upper
        self.n_vars, self.n_rows = polytope.n_vars, polytope.n_rows
        self._lp = None
        self._ilp = None

    def lp(self):
        if self._lp is None:
            h = new_highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("threads", 1)
            # presolve redoes its work on every call and drops the warm basis: without it
            # a GridCRF's calls took 30 ms against 41 ms (10 x 12 grid, 3 states, warm)
            h.setOptionValue("presolve", "off")
            lp = unit_box_lp(self.A, self.lower, self.upper)
            lp.sense_ = highspy.ObjSense.kMaximize
            if h.passModel(lp) == highspy.HighsStatus.kError:
                raise InferenceError("HiGHS rejected the local-polytope LP")
            self._lp = h
        return self._lp

    def ilp(self) -> ILPModel:
        if self._ilp is None:
            self._ilp = ILPModel(self.n_vars, self.A, self.lower, self.upper)
        return self._ilp


#: solvers kept per thread, by the digest of their rows (least recently used dropped)
_CACHE = threading.local()
CACHE_SIZE = 16


def clear_solver_cache() -> None:
    """Drop this thread's warm solvers.

    A warm simplex starts from the last basis, so among tied optima it may return another
    vertex than a cold one: a fit would then depend on what the process decoded before.
    Learners call this when a fit starts, so that the same fit gives the same weights
    whatever ran earlier (within one fit the order of decodes is fixed by the seed)."""
    cache = getattr(_CACHE, "solvers", None)
    if cache is not None:
        cache.clear()


def _solvers_for(polytope: LocalPolytope) -> _Solvers:
    digest = hashlib.blake2b(digest_size=16)
    for arr in (polytope.A.indptr, polytope.A.indices, polytope.A.data, polytope.lower,
                polytope.upper):
        digest.update(np.ascontiguousarray(arr).tobytes())
        digest.update(b"|")
    key = (polytope.n_vars, polytope.n_rows, digest.digest())
    cache = getattr(_CACHE, "solvers", None)
    if cache is None:
        cache = _CACHE.solvers = OrderedDict()
    solvers = cache.get(key)
    if solvers is None:
        solvers = cache[key] = _Solvers(polytope)
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return solvers


def forest_solution(graph: PairwiseGraph, constraints=None) -> Relaxation | None:
    """The LP's optimum by dynamic programming where the graph is a forest, else None.

    Without constraints the local polytope of a forest is integral, so its optimum is the
    best labelling (as one-hot marginals), which the tree DP finds in O(n K^2) instead of a
    simplex solve.  Graphs of several node types and self-loops go to the LP.
    """
    if constraints or graph.typed:
        return None
    block = graph.blocks[0]
    edges = block.edges
    if np.any(edges[:, 0] == edges[:, 1]) or not is_forest(edges, graph.n_nodes):
        return None
    unary = graph.unaries[0]
    n, k = unary.shape
    labels = forest_labels(unary, np.asarray(block.pairwise), edges) if n else \
        np.zeros(0, dtype=np.int64)
    unary_m = np.zeros((n, k))
    unary_m[np.arange(n), labels] = 1.0
    pairwise_m = np.zeros(block.pairwise.shape)
    pairwise_m[np.arange(edges.shape[0]), labels[edges[:, 0]], labels[edges[:, 1]]] = 1.0
    return Relaxation([unary_m], [pairwise_m], graph.score(labels), True, labels)


def solve_relaxation(graph: PairwiseGraph, constraints=None) -> Relaxation:
    """The local-polytope LP of ``graph`` (with ``constraints``), maximised."""
    forest = forest_solution(graph, constraints)
    if forest is not None:
        return forest
    return LocalPolytope(graph, constraints).solve_lp()


def solve_exact(graph: PairwiseGraph, constraints=None) -> tuple:
    """The exact optimum: the LP when it is integral, else the ILP on the same rows.

    Returns ``(relaxation, exact)``: the LP solution and the exact one (the same object when
    the LP was integral), so a caller can report either.
    """
    forest = forest_solution(graph, constraints)
    if forest is not None:
        return forest, forest
    polytope = LocalPolytope(graph, constraints)
    lp = polytope.solve_lp()
    if lp.integral:
        return lp, lp
    start = None if polytope.has_constraints else polytope.labels_as_start(lp.labels)
    return lp, polytope.solve_ilp(start)
