"""Exact argmax over graph alignments: :class:`GraphAlignmentILP`, cheapest exact stage first.

:class:`GraphAlignmentILP` builds its HiGHS models once per problem and changes only the
objective between calls.  Cheapest exact stage first: (1) when the edge terms vanish — no
candidate edge pairs, or every edge pair's net score ``edge_map[q] − edge_del1[e1] −
edge_del2[e2]`` is exactly 0 — the score is linear in the word mappings and the problem is a
maximum-weight bipartite matching with deletion costs, solved by
:func:`scipy.optimize.linear_sum_assignment`; (2) the LP relaxation, whose optimum is often
integral and then optimal; (3) when it is fractional, an exact branch-and-bound on the word
mappings over the same LP model (:mod:`latentstruct.inference.graph_alignment.branch_and_bound`,
which also holds the LP stage); (4) if that runs out of its node budget, HiGHS' branch-and-bound through
:class:`~latentstruct.inference.ilp.ILPModel`.  ``stats["solver"]`` says which stage
answered.  Every solve is history-free (no basis or MIP start carried over from earlier
calls), so the alignment returned for given scores — also among tied optima — does not
depend on what the model solved before.
"""

from __future__ import annotations

import time

import highspy
import numpy as np
from scipy.optimize import linear_sum_assignment

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import as_scores, check_time_limit, shape_str
from latentstruct.inference.graph_alignment.alignments import GraphAlignment, GraphPartScores, alignment_score, check_variable_shapes
from latentstruct.inference.graph_alignment.branch_and_bound import INTEGRAL_TOL as _INTEGRAL_TOL
from latentstruct.inference.graph_alignment.branch_and_bound import AlignmentCompletion, LPBranchAndBound, LPStage
from latentstruct.inference.graph_alignment.branch_and_bound import vector_score as _vector_score
from latentstruct.inference.graph_alignment.constraints import constraint_matrix
from latentstruct.inference.graph_alignment.problem import GraphAlignmentProblem, check_flag
from latentstruct.inference.ilp import ILPModel
from latentstruct.inference.result import EXACT, INFEASIBLE, DecodeResult


#: HiGHS options of the branch-and-bound stage.  It only runs on a fractional LP, already has
#: a legal MIP start (the empty alignment) and usually closes at the root node.  Measured on
#: the fractional calls of ``benchmarks/ilp_inference.py`` (MSRP-sized, pruned): the
#: feasibility jump heuristic costs about half of the call (12 ms -> 6 ms) and finds nothing
#: the root LP and cuts do not; presolve a further quarter (12 -> 9 ms with the heuristic
#: on).  Exactness is unaffected (mip_rel_gap = 0).
_MIP_OPTIONS = {"mip_heuristic_run_feasibility_jump": False, "presolve": "off"}


class GraphAlignmentILP:
    """Exact argmax over the alignments of one problem; the HiGHS models are built once.

    Parameters
    ----------
    problem : GraphAlignmentProblem
    time_limit : float seconds or None (default: no limit), per solve (LP and ILP stages
        each get it).
    matching_first : bool, default True: use the matching stage whenever it applies
        (``False`` sends every call to the LP/ILP stages, e.g. to cross-check them).
    lp_first : bool, default True: try the LP relaxation before branch-and-bound.
    strengthen : bool, default True: add the aggregated form of (11) and clique rows (valid
        inequalities, see below) to the LP and ILP.  The legal alignments are the same; the
        LP relaxation is integral far more often (random MSRP-sized problems of
        ``benchmarks/ilp_inference.py``, top-3 pairs per word, 3 x 480 calls: 1.8 % of the
        LPs fractional instead of 10.9 % — 4.4 % with the aggregated rows alone), so
        branch-and-bound, by far the most expensive stage, runs about 6 times less often,
        for about 15 % more rows.  ``False`` gives exactly the rows (6)–(11).
    threads : int, HiGHS threads (default 1).
    bb_max_lp_solves : int >= 0, default 200: node LPs the LP-based branch-and-bound (stage
        3) may solve before it hands the call to HiGHS' MIP; 0 skips that stage.

    ``solve(part_scores)`` returns a :class:`~latentstruct.inference.result.DecodeResult`
    whose structure is a :class:`GraphAlignment` (``None`` when infeasible or on error) and
    whose score is :func:`alignment_score` of it.  Method — cheapest exact stage first, the
    stage used is ``stats["solver"]``:

    0. ``"trivial"`` — a problem without variables has one alignment (the empty one).
    1. ``"matching"`` (with ``matching_first``) — when the edge terms vanish (no candidate edge pairs, or every net
       edge-pair score ``edge_map[q] − edge_del1[e1] − edge_del2[e2]`` is exactly 0, the
       ``edge_del`` terms counted only where edge deletion exists) and every deletion score
       is finite, the score is a constant plus ``Σ_p x_p (node_map[p] − del1[i] − del2[j])``
       over a one-to-one partial matching (a deletion score is subtracted only where that
       deletion variable exists): a maximum-weight bipartite matching, solved by
       :func:`scipy.optimize.linear_sum_assignment` on the clipped gains.  Exact, O(n³).
    2. ``"lp"`` (with ``lp_first``) — the LP relaxation of (12) s.t. (6)–(11), kept as one
       HiGHS model (solved from a cleared state and the empty alignment's basis, presolve
       off; see ``LPStage``).  If its optimal
       vertex is integral (every entry within 1e-6 of 0 or 1), the rounded vector
       satisfies every row and its score reaches the LP bound (to 1e-6 relative to the
       scores' magnitude), it is an optimal alignment: exact.  With candidate pairs pruned
       to a few per word this settles most calls (about 98 % with ``strengthen`` and 89 %
       without, top-3 pairs per word on the random MSRP-sized problems of
       ``benchmarks/ilp_inference.py``); an infeasible relaxation proves infeasibility.
    3. ``"bb"`` (with ``lp_first`` and ``bb_max_lp_solves > 0``) — when the LP optimum is
       fractional, a depth-first branch-and-bound on the word mappings over the same LP
       model (:class:`~latentstruct.inference.graph_alignment.branch_and_bound.LPBranchAndBound`:
       fix a word mapping to 1 or 0, re-solve by dual simplex, prune by the LP bound, greedy
       rounding as incumbent).  Exact when the tree closes (bound and incumbent within
       1e-9 relative to the scores' magnitude).  LCLR on 300 MSRP pairs: every fractional
       LP closed, a median of 3 node LPs, about 4 times faster than stage 4.  It hands over
       to stage 4 when the node budget or the time limit runs out.
    4. ``"ilp"`` — otherwise HiGHS branch-and-bound on the binary program (12) s.t. (6)–(11)
       (``mip_rel_gap = 0``) through :class:`~latentstruct.inference.ilp.ILPModel`, with
       HiGHS' feasibility-jump heuristic and presolve off (``_MIP_OPTIONS``: each took a
       large share of a call on these small programs).  The
       constraint matrix never changes; only the objective (and, for ``-inf`` scores, a
       variable's upper bound) does.  The MIP start is ``mip_start`` if given, else the
       empty alignment (legal unless ``-inf`` scores forbid one of its deletion variables,
       in which case HiGHS ignores it).  Worst case exponential (quadratic-assignment-like);
       keep candidate pairs pruned.

    Determinism: both HiGHS models are solved from a cleared solver state
    (``clearSolver``; the LP then from a basis fixed by the problem, and the branch-and-bound
    nodes of stage 3, in an order fixed by the LP solutions, each from the basis the
    previous node left), single-threaded by default, so the result is a function of
    (problem, scores, ``mip_start``, options) only — an optimal alignment is chosen among
    ties the same way on every call, whatever the model solved before, and a pickled copy
    (which rebuilds its models on first use) decodes identically.  Earlier versions restarted
    the simplex from the previous basis and passed the previous alignment as MIP start;
    among tied optima that returned different alignments depending on the call history
    (LCLR's ``coef_`` then differed between two fits on the same data).  The saving it
    bought was small next to the model build that reuse avoids (see
    ``benchmarks/ilp_inference.py``).

    With ``strengthen=True`` (the default) both HiGHS models also hold, for every edge e of either graph
    and every word pair p at e's head (or dependent) shared by two or more of e's candidate
    edge pairs, the row ``Σ_{q ∋ e, p} h_q <= h_p`` — (11) summed over the partner edges,
    valid because those partners differ in their other endpoint, a single word that (6)/(7)
    map at most once; and the clique rows ``h_q + h_{i,h2} + h_{i,d2} <= 1`` of
    ``constraint_matrix``.  ``n_constraints`` then counts these rows too
    (``constraint_kinds`` labels them ``"11-agg"`` and ``"clique"``).

    ``stats``: ``solver``, ``time`` (s, the whole call), ``nodes`` (branch-and-bound nodes;
    0 for matching and LP), ``status`` (= ``result.status``); ``reason`` for matching;
    ``lp_time``, ``lp_bound`` and ``lp_integral`` when the LP stage ran; ``bb_lp_solves``
    and ``bb_outcome`` (``"optimal"``, ``"infeasible"`` or ``"gave_up"``) when stage 3 ran
    (``nodes`` is then its node LPs); for the ILP also
    ``solver_time``, ``mip_gap``, ``objective_bound`` and ``model_status``.

    Statuses: ``"exact"``; ``"time_limit"`` — the ILP hit the time limit and the best legal
    alignment found so far is returned (its gap and bound in ``stats``; a legal MIP start is
    always passed, so an incumbent normally exists); ``"infeasible"`` — only possible when
    ``-inf`` scores forbid word- or edge-deletion variables (structure ``None``, score
    ``-inf``);
    ``"error"`` — anything else, e.g. a time limit hit with no incumbent (structure
    ``None``).  The matching stage ignores ``time_limit`` (it is polynomial and exact); an LP
    stage that hits the limit hands over to the ILP stage.
    """

    def __init__(
        self,
        problem: GraphAlignmentProblem,
        *,
        time_limit=None,
        matching_first=True,
        lp_first=True,
        strengthen=True,
        threads=1,
        bb_max_lp_solves=200,
    ):
        if not isinstance(problem, GraphAlignmentProblem):
            raise InputError(f"problem must be a GraphAlignmentProblem; got {type(problem).__name__}")
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InputError(f"threads must be an integer >= 1; got {threads!r}")
        self.problem = problem
        self.time_limit = check_time_limit(time_limit)
        self.matching_first = check_flag(matching_first, "matching_first")
        self.lp_first = check_flag(lp_first, "lp_first")
        self.strengthen = check_flag(strengthen, "strengthen")
        self.threads = int(threads)
        b = bb_max_lp_solves
        if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) or b < 0:
            raise InputError(f"bb_max_lp_solves must be an integer >= 0; got {b!r}")
        self.bb_max_lp_solves = int(b)
        self._bb: LPBranchAndBound | None = None
        A, lower, upper, kinds = constraint_matrix(problem, self.strengthen)
        self._A, self._lower, self._upper = A, lower, upper
        #: the constraint number ("6" ... "11") of each ILP row
        self.constraint_kinds = tuple(kinds)
        self._model: ILPModel | None = None
        self._lp: LPStage | None = None
        # the ILP's MIP start when the caller gives none: legal unless -inf forbids one of its
        # variables, and the same on every call (a previous solution would make the optimum
        # returned among ties depend on the call history)
        self._empty = GraphAlignment.empty(problem).to_vector().astype(np.float64)
        self._layout = problem.variable_layout()
        # deletion variables: the matching stage needs them finite; the LP's starting basis
        self._deletion = np.zeros(problem.n_variables, dtype=bool)
        for name in ("del1", "del2", "edge_del1", "edge_del2"):
            self._deletion[self._layout[name]] = True
        # HiGHS is only needed when edge terms can be present: build it now then, so that the
        # cost is paid once, up front.
        if problem.n_edge_pairs:
            self._ensure_model()

    # -- pickling: HiGHS handles are dropped and rebuilt on first use -------------------------
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_model"] = None
        state["_lp"] = None
        state["_bb"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- sizes ----------------------------------------------------------------------------
    @property
    def n_variables(self) -> int:
        return self.problem.n_variables

    @property
    def n_constraints(self) -> int:
        return int(self._A.shape[0])

    def variable_layout(self) -> dict[str, slice]:
        """See :meth:`GraphAlignmentProblem.variable_layout`."""
        return self.problem.variable_layout()

    def _ensure_model(self) -> ILPModel:
        if self._model is None:
            self._model = ILPModel(
                self.n_variables,
                self._A,
                self._lower,
                self._upper,
                time_limit=self.time_limit,
                threads=self.threads,
                warm_start=False,  # history-free solves (see the class docstring)
                highs_options=_MIP_OPTIONS,
            )
            if self.lp_first:
                self._lp = LPStage(self._A, self._lower, self._upper, self.threads, self._deletion)
                if self.bb_max_lp_solves:
                    p, L = self.problem, self._layout
                    complete = AlignmentCompletion(
                        L, p.node_pairs, p.edge_pairs, p.edge_pair_nodes, p.n1, p.n2, p.n_edges1, p.n_edges2
                    )
                    cols = np.arange(L["node_map"].start, L["node_map"].stop)
                    self._bb = LPBranchAndBound(self._lp, cols, p.node_pairs, complete, self.bb_max_lp_solves)
        return self._model

    # -- solving --------------------------------------------------------------------------
    def _matching_reason(self, obj: np.ndarray, forbidden: np.ndarray):
        """Why the matching stage applies, or None; ``obj`` = the flat scores, ``forbidden`` =
        isneginf(obj)."""
        p = self.problem
        if forbidden[self._deletion].any():
            return None
        if p.n_edge_pairs == 0:
            return "no candidate edge pairs"
        L = self._layout
        net = obj[L["edge_map"]]
        if p.edge_deletion:
            net = net - obj[L["edge_del1"]][p.edge_pairs[:, 0]] - obj[L["edge_del2"]][p.edge_pairs[:, 1]]
        if np.all(net == 0.0):
            return "edge-pair net scores are all zero (no pairwise terms)"
        return None

    def _solve_matching(self, s: GraphPartScores, reason: str, t0: float) -> DecodeResult:
        p = self.problem
        pairs = p.node_pairs
        gain = s.node_map.copy()
        if p.delete_nodes1:
            gain -= s.del1[pairs[:, 0]]
        if p.delete_nodes2:
            gain -= s.del2[pairs[:, 1]]
        x = np.zeros(p.n_node_pairs, dtype=np.int64)
        usable = np.flatnonzero(gain > 0.0)  # -inf and non-positive gains are never worth it
        if usable.size:
            W = np.zeros((p.n1, p.n2))
            W[pairs[usable, 0], pairs[usable, 1]] = gain[usable]
            rows, cols = linear_sum_assignment(W, maximize=True)
            index = {(i, j): k for k, (i, j) in enumerate(pairs.tolist())}
            for i, j in zip(rows.tolist(), cols.tolist()):
                if W[i, j] > 0.0:
                    x[index[(i, j)]] = 1
        alignment = GraphAlignment.from_node_map(p, x)
        score = alignment_score(alignment, s)
        elapsed = time.perf_counter() - t0
        stats = {"solver": "matching", "reason": reason, "time": elapsed, "nodes": 0, "status": EXACT}
        return DecodeResult(alignment, score, EXACT, stats)

    def _rounded_if_legal(self, x: np.ndarray, upper: np.ndarray):
        """The 0/1 rounding of an LP solution if it is integral and satisfies every row."""
        z = np.rint(x)
        if np.abs(x - z).max(initial=0.0) > _INTEGRAL_TOL:
            return None
        Az = self._A @ z
        if (Az < self._lower - 0.5).any() or (Az > self._upper + 0.5).any() or (z > upper).any():
            return None  # cannot happen for an integral LP point; kept as a guard
        return z.astype(np.int8)

    def solve(self, part_scores: GraphPartScores, *, time_limit=None, mip_start: GraphAlignment | None = None):
        """Best legal alignment for ``part_scores`` (see the class docstring).

        Parameters
        ----------
        part_scores : GraphPartScores with the shapes of ``problem.sizes()``.
        time_limit : seconds for this call (LP and ILP stages), overriding the constructor's.
        mip_start : GraphAlignment to start the ILP (stage 4) from instead of the empty
            alignment (among tied optima the ILP's answer may depend on it).
        """
        t0 = time.perf_counter()
        if not isinstance(part_scores, GraphPartScores):
            raise InputError(f"part_scores must be a GraphPartScores; got {type(part_scores).__name__}")
        s = part_scores.check(self.problem)
        start = None
        if mip_start is not None:
            if not isinstance(mip_start, GraphAlignment):
                raise InputError(f"mip_start must be a GraphAlignment; got {type(mip_start).__name__}")
            check_variable_shapes(mip_start, self.problem, "mip_start")
            start = mip_start.to_vector()
        return self._solve(s.to_vector(), s, time_limit, start, t0)

    def solve_vector(self, scores, *, time_limit=None) -> DecodeResult:
        """:meth:`solve` for the part scores as one flat vector in :meth:`variable_layout`
        order (what a task computes as ``features @ w``), without building a
        :class:`GraphPartScores` — the same result, minus the per-type copies and checks
        that cost a few % of a decode."""
        t0 = time.perf_counter()
        obj = as_scores(scores, "scores", 1, "(n_variables,)")
        if obj.shape != (self.n_variables,):
            raise InputError(
                f"scores must have shape (n_variables,) = {shape_str((self.n_variables,))}; "
                f"got shape {shape_str(obj.shape)}"
            )
        return self._solve(obj, None, time_limit, None, t0)

    def _solve(self, obj: np.ndarray, s: GraphPartScores | None, time_limit, start, t0: float) -> DecodeResult:
        """The stages of :meth:`solve` on the flat scores ``obj`` (``s``: the same scores as
        a GraphPartScores, or None to build them only if the matching stage needs them)."""
        tl = check_time_limit(time_limit)
        if tl is None:
            tl = self.time_limit
        forbidden = np.isneginf(obj)
        reason = self._matching_reason(obj, forbidden) if self.matching_first else None
        if reason is not None:
            if s is None:
                s = GraphPartScores.from_vector(self.problem, obj)
            return self._solve_matching(s, reason, t0)
        if self.n_variables == 0:  # nothing to decide: the empty alignment is the only one
            stats = {"solver": "trivial", "time": time.perf_counter() - t0, "nodes": 0, "status": EXACT}
            return DecodeResult(GraphAlignment.empty(self.problem), 0.0, EXACT, stats)
        model = self._ensure_model()
        stats: dict = {}
        if self._lp is not None:
            t_lp = time.perf_counter()
            lp_status, lp_value, lp_x = self._lp.solve(obj, forbidden, tl)
            stats["lp_time"] = time.perf_counter() - t_lp
            stats["lp_bound"] = lp_value
            if lp_status == highspy.HighsModelStatus.kInfeasible:
                stats.update(solver="lp", time=time.perf_counter() - t0, nodes=0, status=INFEASIBLE)
                stats["model_status"] = "Infeasible"
                return DecodeResult(None, -np.inf, INFEASIBLE, stats)
            z = None if lp_x is None else self._rounded_if_legal(lp_x, self._lp.upper)
            stats["lp_integral"] = z is not None
            if z is not None:
                score = _vector_score(obj, z)
                # certificate: a legal alignment scoring the LP bound is optimal
                scale = 1.0 + np.abs(obj[~forbidden]).sum()  # obj has no +inf or NaN (checked)
                if score >= lp_value - _INTEGRAL_TOL * scale:
                    stats.update(solver="lp", time=time.perf_counter() - t0, nodes=0, status=EXACT)
                    return DecodeResult(GraphAlignment._trusted(self.problem, z, self._layout), score, EXACT, stats)
                stats["lp_integral"] = False  # numerically borderline LP: let the ILP decide
            elif lp_x is not None and self._bb is not None:
                t_bb = time.perf_counter()
                deadline = None if tl is None else t0 + tl
                outcome, z, score, n_lp = self._bb.solve(obj, lp_value, lp_x, deadline)
                stats.update(bb_lp_solves=n_lp, bb_outcome=outcome, bb_time=time.perf_counter() - t_bb)
                if outcome == "optimal":
                    stats.update(solver="bb", time=time.perf_counter() - t0, nodes=n_lp, status=EXACT)
                    return DecodeResult(GraphAlignment._trusted(self.problem, z, self._layout), score, EXACT, stats)
                if outcome == "infeasible":
                    stats.update(solver="bb", time=time.perf_counter() - t0, nodes=n_lp, status=INFEASIBLE)
                    return DecodeResult(None, -np.inf, INFEASIBLE, stats)
        res = model.solve(obj, mip_start=self._empty if start is None else start, time_limit=tl)
        ilp_stats = dict(res.stats)
        ilp_stats["solver_time"] = ilp_stats.pop("time")
        stats.update(ilp_stats)
        stats.update(solver="ilp", time=time.perf_counter() - t0, status=res.status)
        if res.structure is None:
            return DecodeResult(None, res.score, res.status, stats)
        z = res.structure
        alignment = GraphAlignment._trusted(self.problem, z, self._layout)
        return DecodeResult(alignment, _vector_score(obj, z), res.status, stats)

    def lp_relaxation(self, part_scores: GraphPartScores) -> float:
        """Optimal value of the LP relaxation of (12) s.t. (6)–(11): an upper bound on the
        best alignment's score (``-inf`` if the relaxation is infeasible)."""
        if not isinstance(part_scores, GraphPartScores):
            raise InputError(f"part_scores must be a GraphPartScores; got {type(part_scores).__name__}")
        s = part_scores.check(self.problem)
        if self.n_variables == 0:
            return 0.0
        return self._ensure_model().solve_lp_relaxation(s.to_vector())
