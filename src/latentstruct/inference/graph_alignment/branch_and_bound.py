"""The LP relaxation of graph alignment and an exact branch-and-bound over it.

Problem (see :mod:`latentstruct.inference.graph_alignment.problem` for the variables and the rows
(6)–(11)): maximise ``θ · z`` over ``z ∈ {0, 1}^n`` with ``lower <= A z <= upper``, where
the columns ``node_cols`` are the word mappings ``h_{v1,v2}``.  Every other variable is a
function of the word mappings on the 0/1 points (deletions by (6)–(9), edge mappings by
(10)/(11)), so a branch-and-bound only has to branch on word mappings: once they are all
integral at an LP optimum, the LP optimum is integral.

:class:`LPStage` holds the LP relaxation ``0 <= z <= 1`` as one HiGHS model (built once per
problem; only costs and bounds change between calls).  :class:`LPBranchAndBound` solves
the binary program exactly by depth-first branch-and-bound on that same model:

* a node fixes some word mappings to 0 or 1 (column bounds) and solves the LP by HiGHS'
  dual simplex, warm-started from the basis the previous node left (the sequence of nodes
  is a function of the problem and the scores, so the answer is too);
* its LP value bounds every 0/1 point below it; the node is pruned when that bound does not
  exceed the incumbent by more than ``1e-9 · (1 + Σ|θ|)``;
* the incumbent is the best *greedy rounding* of a node's LP word mappings — take values
  >= 1/2 in decreasing order (ties by column) while both words are free, and complete the
  alignment — which is legal by construction (it is scored, so a rounding that switches on
  a ``-inf`` variable is never kept);
* branching variable: the word mapping farthest from 0 and 1; among ties (most are 1/2) the
  one with the largest ``|θ_p|``, then the first; the "mapped" child is explored first.

When every node is closed the incumbent is optimal: its score is within the tolerance of
the largest bound of any 0/1 point.  On the 2,153 fractional LPs of LCLR on 300 MSRP pairs
this takes 3.5 node LPs on average (22 at most), each a fraction of a millisecond, against
HiGHS' MIP which spends most of its 15–30 ms per call on set-up.  A node budget
(``max_lp_solves``) or the time limit stops the search; the caller then falls back to
HiGHS' MIP, so the budget bounds the cost of the rare hard instance without giving up
exactness.

This module knows nothing of the alignment classes: a problem is described by arrays.
"""

from __future__ import annotations

import math
import time

import highspy
import numpy as np

from latentstruct.exceptions import InferenceError
from latentstruct.inference.ilp import new_highs, unit_box_lp

__all__ = ["LPStage", "LPBranchAndBound", "AlignmentCompletion"]

#: an LP value within this of 0 or 1 counts as integral (and the LP certificate's tolerance,
#: relative to ``1 + Σ|θ|``)
INTEGRAL_TOL = 1e-6
#: branch-and-bound prunes a node whose bound exceeds the incumbent by at most this, relative
#: to ``1 + Σ|θ|`` (far tighter than HiGHS' own certificate in ``ilp.ILPModel``)
PRUNE_TOL = 1e-9


def vector_score(obj: np.ndarray, z: np.ndarray) -> float:
    """``Σ obj[z == 1]``, correctly rounded (``math.fsum``), so independent of summation order."""
    return math.fsum(obj[np.flatnonzero(z)].tolist())


def lp_options(h, threads) -> None:
    """Options shared by the LP and ILP models (silent, single-threaded by default)."""
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", threads)


class LPStage:
    """The LP relaxation of (12) s.t. (6)–(11) as one HiGHS model kept across calls.

    Only the costs (and, for ``-inf`` scores, upper bounds) change between calls.  Every
    solve starts from a cleared solver state (``clearSolver``) and then from the same
    *canonical* basis — the empty alignment's: every deletion variable basic (at 1), every
    inequality row's slack basic, everything else at its lower bound.  That basis is a
    function of the problem alone, so the answer still depends on (model, objective) only,
    never on what the model solved before (a simplex restarted from the previous basis can
    stop at a different optimal vertex when optima tie); and it is primal feasible and close
    to the optimum of pruned problems, so the simplex needs fewer iterations than from HiGHS'
    own cold start (measured on ``benchmarks/ilp_inference.py``: about 30 instead of 70, 30 %
    less time).  The basis matrix is a permutation of the identity (each deletion variable
    lies in its own equality row only), hence always valid.  Presolve is off: on these small
    LPs it costs more than it saves.  Returns the LP solution vector, which
    :class:`~latentstruct.inference.ilp.ILPModel` does not expose.

    ``upper`` holds the current column upper bounds (0 for a ``-inf`` score); the
    branch-and-bound changes bounds of this model only inside one call and restores them.
    """

    def __init__(self, A, lower, upper, threads, basic_cols):
        n_rows, n_vars = A.shape
        h = new_highs()
        lp_options(h, threads)
        h.setOptionValue("presolve", "off")
        h.setOptionValue("solver", "simplex")
        lp = unit_box_lp(A, lower, upper)
        lp.sense_ = highspy.ObjSense.kMaximize
        if h.passModel(lp) == highspy.HighsStatus.kError:
            raise InferenceError("HiGHS rejected the LP relaxation of the graph-alignment model")
        self._basis = _canonical_basis(lower, upper, basic_cols)
        self.h = h
        self._n = n_vars
        self._idx = np.arange(n_vars, dtype=np.int32)
        self._time_limit = None
        self.upper = np.ones(n_vars)

    def solve(self, obj: np.ndarray, forbidden: np.ndarray, time_limit):
        """(model status, optimal value or None, solution or None); ``forbidden`` = isneginf(obj)."""
        h = self.h
        h.clearSolver()  # history-free: the answer depends on (model, objective) only
        if forbidden.any() or self.upper.min(initial=1.0) < 1.0:
            upper = np.where(forbidden, 0.0, 1.0)
            changed = np.flatnonzero(upper != self.upper).astype(np.int32)
            if changed.size:
                h.changeColsBounds(changed.size, changed, np.zeros(changed.size), upper[changed])
            self.upper = upper
            obj = np.where(forbidden, 0.0, obj)
        h.changeColsCost(self._n, self._idx, obj)
        if time_limit != self._time_limit:  # one option call fewer per solve
            h.setOptionValue("time_limit", highspy.kHighsInf if time_limit is None else time_limit)
            self._time_limit = time_limit
        if h.setBasis(self._basis) != highspy.HighsStatus.kOk:
            raise InferenceError("HiGHS rejected the canonical starting basis of the graph-alignment LP")
        h.run()
        ms = h.getModelStatus()
        if ms != highspy.HighsModelStatus.kOptimal:
            return ms, None, None
        return ms, float(h.getObjectiveValue()), np.asarray(h.getSolution().col_value, dtype=np.float64)


def _canonical_basis(lower: np.ndarray, upper: np.ndarray, basic_cols: np.ndarray):
    """The empty alignment's basis: ``basic_cols`` (the deletion variables) and the slacks of
    the inequality rows basic; equality rows and every other column nonbasic at a bound."""
    BS = highspy.HighsBasisStatus
    equality = lower == upper
    if int(np.count_nonzero(basic_cols)) != int(np.count_nonzero(equality)):
        raise InferenceError(
            f"internal: {int(np.count_nonzero(basic_cols))} deletion variables for "
            f"{int(np.count_nonzero(equality))} equality rows; expected one per row"
        )
    basis = highspy.HighsBasis()
    basis.col_status = [BS.kBasic if b else BS.kLower for b in basic_cols.tolist()]
    basis.row_status = [BS.kUpper if e else BS.kBasic for e in equality.tolist()]
    basis.valid = True
    return basis


class AlignmentCompletion:
    """The unique legal 0/1 vector with given word mappings, as index arithmetic.

    ``node_map`` (a 0/1 partial matching over the candidate pairs) determines the rest:
    ``del = 1 − Σ mappings`` of each word (where deletion variables exist), ``edge_map[q] =
    x[p_head] · x[p_dep]``, ``edge_del = 1 − Σ edge mappings`` of each edge (where edge
    deletion exists).  Same result as ``GraphAlignment.from_node_map(...).to_vector()``
    without its checks (the branch-and-bound only builds matchings).

    Parameters: ``layout`` — the problem's ``variable_layout()``; ``node_pairs`` (P, 2);
    ``edge_pairs`` (Q, 2); ``edge_pair_nodes`` (Q, 2); ``n1, n2, n_edges1, n_edges2``.
    """

    def __init__(self, layout, node_pairs, edge_pairs, edge_pair_nodes, n1, n2, n_edges1, n_edges2):
        self._layout = layout
        self._pairs = node_pairs
        self._ep = edge_pairs
        self._epn = edge_pair_nodes
        self._sizes = (n1, n2, n_edges1, n_edges2)
        self.n = max((sl.stop for sl in layout.values()), default=0)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        n1, n2, m1, m2 = self._sizes
        L = self._layout
        z = np.zeros(self.n, dtype=np.int8)
        z[L["node_map"]] = x
        if L["del1"].stop > L["del1"].start:
            z[L["del1"]] = 1 - np.bincount(self._pairs[:, 0], weights=x, minlength=n1).astype(np.int8)
        if L["del2"].stop > L["del2"].start:
            z[L["del2"]] = 1 - np.bincount(self._pairs[:, 1], weights=x, minlength=n2).astype(np.int8)
        y = x[self._epn[:, 0]] * x[self._epn[:, 1]]
        z[L["edge_map"]] = y
        if L["edge_del1"].stop > L["edge_del1"].start:
            z[L["edge_del1"]] = 1 - np.bincount(self._ep[:, 0], weights=y, minlength=m1).astype(np.int8)
            z[L["edge_del2"]] = 1 - np.bincount(self._ep[:, 1], weights=y, minlength=m2).astype(np.int8)
        return z


class LPBranchAndBound:
    """Exact depth-first branch-and-bound over :class:`LPStage`'s model (module docstring).

    Parameters
    ----------
    lp : LPStage, whose model it branches on (bounds are restored before returning).
    node_cols : int array (P,), the word-mapping columns (the branching candidates).
    node_pairs : int array (P, 2), their ``(G1 word, G2 word)`` — for the greedy rounding.
    complete : callable, 0/1 word mappings (P,) -> the full 0/1 vector (``AlignmentCompletion``).
    max_lp_solves : int >= 1, node LPs (the root's not counted) before giving up.
    """

    def __init__(self, lp: LPStage, node_cols, node_pairs, complete, max_lp_solves: int):
        self.lp = lp
        self.cols = np.asarray(node_cols, dtype=np.int32)
        self._i = np.asarray(node_pairs)[:, 0].tolist()
        self._j = np.asarray(node_pairs)[:, 1].tolist()
        self.complete = complete
        self.max_lp_solves = int(max_lp_solves)

    def _round(self, xv: np.ndarray) -> np.ndarray:
        """Greedy rounding of LP word mappings to a partial matching (module docstring)."""
        x = np.zeros(xv.shape[0], dtype=np.int8)
        cand = np.flatnonzero(xv >= 0.5 - INTEGRAL_TOL)
        if cand.size:
            used1, used2 = set(), set()
            # decreasing value, ties by column (stable sort on the negated values)
            for p in cand[np.argsort(-xv[cand], kind="stable")].tolist():
                i, j = self._i[p], self._j[p]
                if i in used1 or j in used2:
                    continue
                used1.add(i)
                used2.add(j)
                x[p] = 1
        return x

    def solve(self, obj: np.ndarray, root_value: float, root_x: np.ndarray, deadline=None):
        """Branch and bound from the solved root LP (its value and solution).

        ``obj`` is the objective with ``-inf`` for forbidden variables (their upper bound is
        already 0 in the model).  ``deadline``: ``time.perf_counter()`` value or None.

        Returns ``(outcome, z, score, lp_solves)``: outcome ``"optimal"`` (z the 0/1 optimum,
        score its exact value), ``"infeasible"`` (no 0/1 point: z None), or ``"gave_up"``
        (node budget, time limit or a HiGHS failure: z None; the caller must use another
        solver).
        """
        h = self.lp.h
        cols = self.cols
        base_upper = self.lp.upper[cols].copy()
        finite = obj[np.isfinite(obj)]
        tol = PRUNE_TOL * (1.0 + float(np.abs(finite).sum()))
        best, best_z = -math.inf, None
        fixed: dict[int, float] = {}  # position in cols -> fixed value, as now in the model
        lp_solves = 0
        Optimal, Infeasible = highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible
        # stack of (fixings, bound of the parent, LP solution or None when still to solve)
        stack: list[tuple[dict, float, np.ndarray | None]] = [({}, root_value, root_x)]
        try:
            while stack:
                fix, bound, x = stack.pop()
                if bound <= best + tol:
                    continue
                if x is None:
                    if lp_solves >= self.max_lp_solves or (deadline is not None and time.perf_counter() > deadline):
                        return "gave_up", None, -math.inf, lp_solves
                    self._set_fixings(h, fixed, fix, base_upper)
                    fixed = fix
                    h.run()  # dual simplex from the previous node's basis
                    lp_solves += 1
                    ms = h.getModelStatus()
                    if ms == Infeasible:
                        continue
                    if ms != Optimal:
                        return "gave_up", None, -math.inf, lp_solves
                    bound = float(h.getObjectiveValue())
                    if bound <= best + tol:
                        continue
                    x = np.asarray(h.getSolution().col_value, dtype=np.float64)
                xv = x[cols]
                z = self.complete(self._round(xv))
                score = vector_score(obj, z)
                if score > best:  # -inf (a forbidden variable switched on) is never kept
                    best, best_z = score, z
                    if bound <= best + tol:
                        continue
                frac = np.abs(xv - np.rint(xv))
                if frac.max(initial=0.0) <= INTEGRAL_TOL:
                    # integral word mappings: this LP optimum is the 0/1 point scored above
                    # (kept unless numerically off: then the bound is not trusted, give up)
                    if score >= bound - INTEGRAL_TOL * (1.0 + float(np.abs(finite).sum())):
                        continue
                    return "gave_up", None, -math.inf, lp_solves
                # most fractional word mapping; among those (LP optima are mostly halves) the
                # one whose own score is largest in magnitude: 23 % fewer node LPs on MSRP
                cand = np.flatnonzero(frac >= frac.max() - 1e-9)
                k = int(cand[np.argmax(np.abs(obj[cols[cand]]))])
                # children inherit the parent's bound; the "mapped" child is popped first
                stack.append(({**fix, k: 0.0}, bound, None))
                stack.append(({**fix, k: 1.0}, bound, None))
        finally:
            self._set_fixings(h, fixed, {}, base_upper)
        if best_z is None:
            return "infeasible", None, -math.inf, lp_solves
        return "optimal", best_z, best, lp_solves

    def _set_fixings(self, h, old: dict, new: dict, base_upper: np.ndarray) -> None:
        """Change the model's word-mapping bounds from fixings ``old`` to ``new``."""
        touched = sorted(set(old) | set(new))
        if not touched:
            return
        idx = np.asarray(touched, dtype=np.int64)
        lower = np.array([new.get(k, 0.0) for k in touched])
        upper = np.array([new[k] if k in new else base_upper[k] for k in touched])
        h.changeColsBounds(idx.size, self.cols[idx], lower, upper)
