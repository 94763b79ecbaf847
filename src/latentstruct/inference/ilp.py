"""Binary integer linear programs solved by HiGHS (through ``highspy``).

:class:`ILPModel` holds one HiGHS model built once; between calls only the objective (and,
for ``-inf`` objective entries, a variable's upper bound) changes, and the previous solution
is passed as a MIP start.  The builders :class:`SequenceILP`, :class:`AlignmentILP` and
:class:`TreeILP` express the dynamic-programming problems of this package as ILPs; they are
slower than the dedicated decoders and exist to cross-check them and as templates for tasks
whose constraints have no DP.

Status of a solve (:mod:`latentstruct.inference.result`):

* ``"exact"``: proven optimal (``mip_rel_gap = 0``, ``mip_abs_gap = 1e-9``), and checked:
  the returned solution's score must equal HiGHS' own dual bound.  A solve that fails this
  (HiGHS 1.16 with presolve and a MIP start, in a few % of calls) is repeated once from a
  cleared state without a start (``stats["cold_retry"]``), and is an ``"error"`` if it
  fails again;
* ``"time_limit"``: the time limit was hit while a feasible incumbent exists; it is
  returned, with the gap and the bound in ``stats``;
* ``"infeasible"``: no 0/1 vector satisfies the constraints (structure ``None``, score
  ``-inf``);
* ``"error"``: anything else, including a time limit hit before any feasible solution was
  known (structure ``None``, score ``-inf``, HiGHS' model status in ``stats``).

HiGHS output is silenced.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import highspy
import numpy as np
import scipy.sparse as sp

from latentstruct.exceptions import ConfigError, InferenceError, InputError
from latentstruct.inference.checks import (
    as_scores,
    check_chain,
    check_shape,
    check_time_limit,
    check_tree,
    check_tree_scores,
    shape_str,
)
from latentstruct.inference.result import ERROR, EXACT, INFEASIBLE, TIME_LIMIT, DecodeResult

__all__ = ["ILPModel", "SequenceILP", "AlignmentILP", "TreeILP", "highs_lp", "unit_box_lp"]

_FEAS_TOL = 1e-6
_BANNER_LOCK = threading.Lock()
_banner_shown = False


def new_highs() -> "highspy.Highs":
    """A new ``highspy.Highs``, without the banner HiGHS >= 1.16 writes to standard output
    when the first one of a process is built (it would corrupt e.g. ``evaluate``'s JSON on
    stdout).  The first construction runs with file descriptor 1 pointed at /dev/null, under
    a lock so that concurrent threads never save or restore the wrong descriptor."""
    global _banner_shown
    if _banner_shown:
        return highspy.Highs()
    with _BANNER_LOCK:
        if not _banner_shown:
            sys.stdout.flush()
            saved = os.dup(1)
            try:
                with open(os.devnull, "wb") as null:
                    os.dup2(null.fileno(), 1)
                    try:
                        first = highspy.Highs()
                    finally:
                        os.dup2(saved, 1)
            finally:
                os.close(saved)
            _banner_shown = True
            return first
    return highspy.Highs()


_EXACTNESS_OPTIONS = ("mip_rel_gap", "mip_abs_gap")


def _check_highs_options(options) -> dict:
    if options is None:
        return {}
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise ConfigError(f"highs_options must be a dict of HiGHS option name -> value; got {options!r}")
    fixed = sorted(set(options) & set(_EXACTNESS_OPTIONS))
    if fixed:
        raise ConfigError(
            f"highs_options may not set {', '.join(fixed)}: ILPModel keeps them at their exact values "
            "(mip_rel_gap = 0, mip_abs_gap = 1e-9); drop these keys"
        )
    return dict(options)


def _row_bounds(x, name, n_rows) -> np.ndarray:
    """Row bounds as float64 (n_rows,); a scalar is broadcast to every row."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number or an array of shape (n_rows,); got {x!r}") from None
    if arr.ndim == 0:
        arr = np.full(n_rows, float(arr))
    check_shape(arr, name, (n_rows,), "(n_rows,) with n_rows = A.shape[0]")
    if np.isnan(arr).any():
        raise InputError(f"{name} contains NaN; expected numbers or +-inf")
    return arr


def highs_lp(A, row_lower, row_upper, col_lower, col_upper, cost=None) -> "highspy.HighsLp":
    """A HiGHS LP over ``A``'s columns (any scipy sparse matrix, stored column-wise), with
    column bounds ``col_lower``/``col_upper``, rows between ``row_lower`` and ``row_upper``
    (numpy's infinities become HiGHS'), and ``cost`` (zero when None)."""
    inf = highspy.kHighsInf
    A = sp.csc_matrix(A, dtype=np.float64)
    n_rows, n_vars = A.shape

    def bound(values):
        values = np.asarray(values, dtype=np.float64)
        return np.where(np.isposinf(values), inf, np.where(np.isneginf(values), -inf, values))

    lp = highspy.HighsLp()
    lp.num_col_ = n_vars
    lp.num_row_ = n_rows
    lp.col_cost_ = np.zeros(n_vars) if cost is None else np.asarray(cost, dtype=np.float64)
    lp.col_lower_ = bound(col_lower)
    lp.col_upper_ = bound(col_upper)
    lp.row_lower_ = bound(row_lower)
    lp.row_upper_ = bound(row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = n_vars
    lp.a_matrix_.num_row_ = n_rows
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(np.float64)
    return lp


def unit_box_lp(A: sp.csc_matrix, row_lower: np.ndarray, row_upper: np.ndarray) -> "highspy.HighsLp":
    """A HiGHS LP over ``A``'s columns as variables in [0, 1] with zero cost, rows between
    ``row_lower`` and ``row_upper`` (infinite bounds as HiGHS' infinity); the caller sets the
    costs, the sense and, for an ILP, the integrality."""
    n_vars = A.shape[1]
    return highs_lp(A, row_lower, row_upper, np.zeros(n_vars), np.ones(n_vars))


class ILPModel:
    """Maximise ``objective · z`` over ``z ∈ {0,1}^n_vars`` with ``row_lower <= A z <= row_upper``.

    The HiGHS model is built once here; :meth:`solve` only changes the objective.

    Parameters
    ----------
    n_vars : int >= 1
    A : scipy sparse matrix or array (n_rows, n_vars)
    row_lower, row_upper : arrays (n_rows,); ``-inf`` / ``+inf`` for a one-sided row.
    time_limit : float seconds or None (no limit), default for every solve.
    threads : int, HiGHS threads (1 keeps runs deterministic and plays well with joblib).
    warm_start : bool, default True: pass the previous solution as a MIP start.  ``False``
        makes every solve history-free: the solver state is cleared first and only an
        explicit ``mip_start`` is used, so the optimum returned among ties is a function of
        (model, objective, mip_start) alone (HiGHS is deterministic for a fixed thread count).
    highs_options : dict or None: extra HiGHS options (name -> value) set on the model, e.g.
        ``{"mip_heuristic_run_feasibility_jump": False}``.  The exactness options
        (``mip_rel_gap``, ``mip_abs_gap``) cannot be overridden; an unknown name or a bad
        value raises :class:`~latentstruct.exceptions.ConfigError`.

    Complexity: each solve is a branch-and-bound, exponential in the worst case.
    """

    def __init__(
        self, n_vars, A, row_lower, row_upper, *, time_limit=None, threads=1, warm_start=True, highs_options=None
    ):
        if isinstance(n_vars, (bool, np.bool_)) or not isinstance(n_vars, (int, np.integer)) or n_vars < 1:
            raise InputError(f"n_vars must be an integer >= 1; got {n_vars!r}")
        n_vars = int(n_vars)
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InputError(f"threads must be an integer >= 1; got {threads!r}")
        try:
            A = sp.csc_matrix(A, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"A must be a scipy sparse matrix or 2-d array of shape (n_rows, n_vars); {exc}") from None
        if A.shape[1] != n_vars:
            raise InputError(
                f"A must have shape (n_rows, n_vars) with n_vars = {n_vars}; got shape {shape_str(A.shape)}"
            )
        if not np.all(np.isfinite(A.data)):
            raise InputError("A contains NaN or infinite coefficients; expected finite numbers")
        n_rows = A.shape[0]
        row_lower = _row_bounds(row_lower, "row_lower", n_rows)
        row_upper = _row_bounds(row_upper, "row_upper", n_rows)
        if (row_lower > row_upper).any():
            r = int(np.flatnonzero(row_lower > row_upper)[0])
            raise InputError(
                f"row_lower[{r}] = {row_lower[r]} > row_upper[{r}] = {row_upper[r]}; expected lower <= upper"
            )
        self.n_vars = n_vars
        self.n_rows = n_rows
        self.time_limit = check_time_limit(time_limit)
        self.threads = int(threads)
        self.warm_start = bool(warm_start)
        self.highs_options = _check_highs_options(highs_options)
        self._A = A
        self._row_lower = row_lower
        self._row_upper = row_upper
        self._idx = np.arange(n_vars, dtype=np.int32)
        self._upper = np.ones(n_vars)
        self._previous = None
        self._highs = self._build(integer=True)
        self._lp = None
        self._lp_upper = np.ones(n_vars)

    # -- construction ---------------------------------------------------------------------
    def _build(self, integer: bool):
        h = new_highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", self.threads)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-9)
        for name, value in self.highs_options.items():
            try:
                status = h.setOptionValue(name, value)
            except (TypeError, ValueError, RuntimeError):  # the binding rejects wrongly typed values
                status = highspy.HighsStatus.kError
            if status != highspy.HighsStatus.kOk:
                raise ConfigError(
                    f"highs_options: HiGHS rejected {name} = {value!r}; expected an option name and value "
                    "listed in the HiGHS options reference"
                )
        lp = unit_box_lp(self._A, self._row_lower, self._row_upper)
        if integer:
            lp.integrality_ = [highspy.HighsVarType.kInteger] * self.n_vars
        lp.sense_ = highspy.ObjSense.kMaximize
        status = h.passModel(lp)
        if status == highspy.HighsStatus.kError:
            raise InferenceError(f"HiGHS rejected the model (passModel returned {status})")
        return h

    def _objective(self, objective) -> np.ndarray:
        obj = as_scores(objective, "objective", 1, "(n_vars,)")
        check_shape(obj, "objective", (self.n_vars,), "(n_vars,)")
        return obj

    @staticmethod
    def _set_objective(h, obj, upper_now):
        """Set costs; a -inf cost fixes the variable to 0. Returns the new upper bounds."""
        forbidden = np.isneginf(obj)
        upper = np.where(forbidden, 0.0, 1.0)
        n = obj.shape[0]
        idx = np.arange(n, dtype=np.int32)
        h.changeColsCost(n, idx, np.where(forbidden, 0.0, obj))
        changed = np.flatnonzero(upper != upper_now).astype(np.int32)
        if changed.size:
            h.changeColsBounds(changed.size, changed, np.zeros(changed.size), upper[changed])
        return upper

    # -- solving --------------------------------------------------------------------------
    def solve(self, objective, *, mip_start=None, time_limit=None) -> DecodeResult:
        """Maximise ``objective · z`` subject to the model's constraints, z binary.

        Parameters
        ----------
        objective : array (n_vars,); ``-inf`` forbids a variable (fixes it to 0 for this call).
        mip_start : 0/1 array (n_vars,) or None; None uses the previous solution when
            ``warm_start`` is on.  An infeasible start is ignored by HiGHS.
        time_limit : seconds for this call, overriding the model's default.

        Returns
        -------
        DecodeResult with ``structure`` an int8 0/1 array (n_vars,) (``None`` when infeasible
        or on error), ``score = objective · z`` computed exactly from the rounded solution,
        status as in the module docstring, and ``stats`` with ``time`` (s), ``nodes``,
        ``mip_gap``, ``objective_bound`` and ``model_status``.
        """
        obj = self._objective(objective)
        tl = check_time_limit(time_limit)
        if tl is None:
            tl = self.time_limit
        h = self._highs
        if not self.warm_start:
            # drop basis, incumbent and every other trace of earlier solves, so that the
            # optimum returned among ties depends on (model, objective, mip_start) only
            h.clearSolver()
        self._upper = self._set_objective(h, obj, self._upper)
        h.setOptionValue("time_limit", highspy.kHighsInf if tl is None else tl)
        start = None
        if mip_start is not None:
            start = np.asarray(mip_start, dtype=np.float64).ravel()
            check_shape(start, "mip_start", (self.n_vars,), "(n_vars,)")
            if not np.all((start == 0) | (start == 1)):
                raise InputError("mip_start must contain only 0 and 1")
        elif self.warm_start and self._previous is not None:
            start = self._previous
        if start is not None:
            h.setSolution(self.n_vars, self._idx, np.minimum(start, self._upper))
        t0 = time.perf_counter()
        result = self._run(h, obj, t0)
        if result.status == EXACT and not self._certified(result, obj):
            # HiGHS 1.16 can report "Optimal" for a worse solution than its own bound when
            # presolve meets a MIP start (found by tests/inference/test_ilp.py; 1.15 does not).
            # Never pass that on: solve again from a cleared state without a start, and give
            # up (status "error") if even that is inconsistent.
            first = result.stats
            h.clearSolver()
            result = self._run(h, obj, t0)
            result.stats["cold_retry"] = {"score": first.get("score"), "objective_bound": first["objective_bound"]}
            if result.status == EXACT and not self._certified(result, obj):
                result.stats["reason"] = (
                    "HiGHS reported an optimal solution whose score differs from its own bound, "
                    "twice (once without a MIP start)"
                )
                return DecodeResult(None, -np.inf, ERROR, result.stats)
        if result.structure is not None:
            self._previous = result.structure.astype(np.float64)
        return result

    @staticmethod
    def _certified(result, obj) -> bool:
        """An exact result's score must equal HiGHS' dual bound (the gaps are 0 and 1e-9), up
        to rounding the solution to 0/1: tolerance 1e-6 per unit of total |objective|."""
        bound = result.stats["objective_bound"]
        scale = 1.0 + float(np.abs(obj[np.isfinite(obj)]).sum())
        return bool(np.isfinite(bound)) and abs(result.score - bound) <= 1e-6 * scale

    def _run(self, h, obj, t0) -> DecodeResult:
        """One ``h.run()``; the HiGHS status mapped to a :class:`DecodeResult`."""
        h.run()
        elapsed = time.perf_counter() - t0
        model_status = h.getModelStatus()
        info = h.getInfo()
        stats = {
            "time": elapsed,
            "nodes": int(info.mip_node_count),
            "mip_gap": float(info.mip_gap),
            "objective_bound": float(info.mip_dual_bound),
            "model_status": h.modelStatusToString(model_status),
        }
        has_solution = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
        MS = highspy.HighsModelStatus
        if model_status == MS.kOptimal and has_solution:
            status = EXACT
        elif model_status == MS.kTimeLimit and has_solution:
            status = TIME_LIMIT
        elif model_status in (MS.kInfeasible, MS.kUnboundedOrInfeasible):
            return DecodeResult(None, -np.inf, INFEASIBLE, stats)
        else:
            return DecodeResult(None, -np.inf, ERROR, stats)
        x = np.asarray(h.getSolution().col_value, dtype=np.float64)
        z = (x > 0.5).astype(np.int8)
        Az = self._A @ z.astype(np.float64)
        if (
            (Az < self._row_lower - _FEAS_TOL).any()
            or (Az > self._row_upper + _FEAS_TOL).any()
            or (z > self._upper).any()
        ):
            stats["reason"] = "rounded HiGHS solution violates the constraints"
            return DecodeResult(None, -np.inf, ERROR, stats)
        on = np.flatnonzero(z)
        score = float(obj[on].sum()) if on.size else 0.0
        stats["score"] = score
        return DecodeResult(z, score, status, stats)

    def solve_lp_relaxation(self, objective) -> float:
        """Optimal value of the LP relaxation (0 <= z <= 1): an upper bound on the ILP value.

        ``objective`` as in :meth:`solve`.  Returns ``-inf`` when the relaxation is infeasible;
        raises :class:`~latentstruct.exceptions.InferenceError` on any other failure.
        Complexity: one simplex solve (the LP model is built on first use and then reused).
        """
        obj = self._objective(objective)
        if self._lp is None:
            self._lp = self._build(integer=False)
        h = self._lp
        self._lp_upper = self._set_objective(h, obj, self._lp_upper)
        h.setOptionValue("time_limit", highspy.kHighsInf if self.time_limit is None else self.time_limit)
        h.run()
        ms = h.getModelStatus()
        MS = highspy.HighsModelStatus
        if ms == MS.kOptimal:
            return float(h.getInfo().objective_function_value)
        if ms in (MS.kInfeasible, MS.kUnboundedOrInfeasible):
            return -np.inf
        raise InferenceError(f"HiGHS failed on the LP relaxation: model status {h.modelStatusToString(ms)}")


def _rows_to_model(n_vars, rows, lower, upper, **kwargs) -> ILPModel:
    """Build an ILPModel from a list of rows, each a list of (var, coefficient)."""
    r_idx, c_idx, vals = [], [], []
    for r, row in enumerate(rows):
        for c, v in row:
            r_idx.append(r)
            c_idx.append(c)
            vals.append(v)
    A = sp.csc_matrix((vals, (r_idx, c_idx)), shape=(len(rows), n_vars))
    return ILPModel(n_vars, A, np.asarray(lower, float), np.asarray(upper, float), **kwargs)


def _decode_failure(res: DecodeResult) -> bool:
    return res.structure is None


class SequenceILP:
    """Chain labelling (the problem of :func:`~latentstruct.inference.viterbi.viterbi`) as an ILP.

    Variables: node indicators ``u[t, l]`` and edge indicators ``e[t, p, l]`` (t >= 1).
    Constraints: ``sum_l u[t, l] = 1``; ``sum_p e[t, p, l] = u[t, l]``;
    ``sum_l e[t, p, l] = u[t-1, p]`` (marginalisation; the polytope of a chain is integral).

    Parameters: T >= 0, L >= 1; ``extra_rows``: None, or a function
    ``extra_rows(T, L, node, edge)`` returning more rows ``(rows, lower, upper)``, each row a
    list of ``(variable, coefficient)`` with ``node(t, l)`` and ``edge(t, p, l)`` the
    variables' indices (global constraints, ``inference.global_constraints``); other keyword
    arguments go to :class:`ILPModel`.
    Size: T L + (T-1) L^2 variables, T + 2 (T-1) L rows (and the extra ones).
    """

    def __init__(self, T, L, *, extra_rows=None, **ilp_kwargs):
        for name, v, lo in (("T", T, 0), ("L", L, 1)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < lo:
                raise InputError(f"{name} must be an integer >= {lo}; got {v!r}")
        self.T, self.L = int(T), int(L)
        T, L = self.T, self.L
        self.model = None
        if T == 0:
            return
        self._n_node = T * L
        n_vars = T * L + (T - 1) * L * L

        def e(t, p, l):
            return T * L + (t - 1) * L * L + p * L + l

        def u(t, l):
            return t * L + l

        rows, lo, up = [], [], []
        for t in range(T):
            rows.append([(t * L + l, 1.0) for l in range(L)])
            lo.append(1.0)
            up.append(1.0)
        for t in range(1, T):
            for l in range(L):
                rows.append([(e(t, p, l), 1.0) for p in range(L)] + [(t * L + l, -1.0)])
                lo.append(0.0)
                up.append(0.0)
            for p in range(L):
                rows.append([(e(t, p, l), 1.0) for l in range(L)] + [((t - 1) * L + p, -1.0)])
                lo.append(0.0)
                up.append(0.0)
        if extra_rows is not None:
            more, more_lo, more_up = extra_rows(T, L, u, e)
            rows += more
            lo += list(more_lo)
            up += list(more_up)
        self.model = _rows_to_model(n_vars, rows, lo, up, **ilp_kwargs)

    def objective(self, unary, transition, start=None, end=None) -> np.ndarray:
        """The ILP objective vector for chain scores (shapes as in ``viterbi``)."""
        unary, transition, start, end = check_chain(unary, transition, start, end)
        check_shape(unary, "unary", (self.T, self.L), "(T, L) of this SequenceILP")
        node = unary.copy()
        if self.T:
            node[0] += start
            node[-1] += end
        edges = np.broadcast_to(transition, (max(self.T - 1, 0), self.L, self.L))
        return np.concatenate([node.ravel(), edges.ravel()])

    def solve(self, unary, transition, start=None, end=None, **solve_kwargs) -> DecodeResult:
        """Best labelling by ILP; structure int64 labels (T,) (None if not solved)."""
        obj = self.objective(unary, transition, start, end)
        if self.model is None:
            return DecodeResult(np.zeros(0, dtype=np.int64), 0.0, EXACT)
        res = self.model.solve(obj, **solve_kwargs)
        if _decode_failure(res):
            return res
        labels = res.structure[: self._n_node].reshape(self.T, self.L).argmax(axis=1).astype(np.int64)
        return DecodeResult(labels, res.score, res.status, res.stats)


class AlignmentILP:
    """One-to-one alignment (monotone or not) as an ILP over cell indicators ``z[i, j]``.

    Constraints: every row and every column sum <= 1.  With ``monotone=True``, crossings are
    excluded by the compact "hook" cliques, for i < m-1 and every l:

        sum_{j >= l} z[i, j] + sum_{k > i} z[k, l] <= 1

    Every pair of cells in a hook conflicts (same row, same column, or crossing), and each
    crossing pair (i, j), (k, l) with i < k, j > l lies in the hook (i, l), so the integer
    solutions are exactly the monotone alignments (O(m n) rows instead of O(m^2 n^2) pairs).

    Parameters: m, n >= 0; monotone bool; keyword arguments go to :class:`ILPModel`.
    """

    def __init__(self, m, n, monotone=True, **ilp_kwargs):
        for name, v in (("m", m), ("n", n)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 0:
                raise InputError(f"{name} must be a non-negative integer; got {v!r}")
        self.m, self.n, self.monotone = int(m), int(n), bool(monotone)
        m, n = self.m, self.n
        self.model = None
        if m == 0 or n == 0:
            return
        rows, lo, up = [], [], []
        for i in range(m):
            rows.append([(i * n + j, 1.0) for j in range(n)])
        for j in range(n):
            rows.append([(i * n + j, 1.0) for i in range(m)])
        if self.monotone:
            for i in range(m - 1):
                for l in range(n):
                    rows.append([(i * n + j, 1.0) for j in range(l, n)] + [(k * n + l, 1.0) for k in range(i + 1, m)])
        lo = [-np.inf] * len(rows)
        up = [1.0] * len(rows)
        self.model = _rows_to_model(m * n, rows, lo, up, **ilp_kwargs)

    def solve(self, scores, **solve_kwargs) -> DecodeResult:
        """Best alignment by ILP; structure int64 (m,) with targets or -1 (None if not solved)."""
        scores = as_scores(scores, "scores", 2, "(m, n)")
        check_shape(scores, "scores", (self.m, self.n), "(m, n) of this AlignmentILP")
        if self.model is None:
            return DecodeResult(np.full(self.m, -1, dtype=np.int64), 0.0, EXACT)
        res = self.model.solve(scores.ravel(), **solve_kwargs)
        if _decode_failure(res):
            return res
        z = res.structure.reshape(self.m, self.n)
        a = np.full(self.m, -1, dtype=np.int64)
        rows, cols = np.nonzero(z)
        a[rows] = cols
        return DecodeResult(a, res.score, res.status, res.stats)


class TreeILP:
    """Tree labelling (the problem of :func:`~latentstruct.inference.tree_bp.tree_max_product`) as an ILP.

    Variables: ``u[i, k]`` and, for non-root i, ``e[i, a, b]`` (parent label a, own label b).
    Constraints: ``sum_k u[i, k] = 1``; ``sum_a e[i, a, b] = u[i, b]``;
    ``sum_b e[i, a, b] = u[parent(i), a]``.  Integral for trees.

    Parameters: parents int (n,) with exactly one -1; K >= 1; keyword arguments go to
    :class:`ILPModel`.
    """

    def __init__(self, parents, K, **ilp_kwargs):
        parents, order, root, *_ = check_tree(parents)
        if isinstance(K, (bool, np.bool_)) or not isinstance(K, (int, np.integer)) or K < 1:
            raise InputError(f"K must be an integer >= 1; got {K!r}")
        self.parents, self.K, self.root = parents, int(K), root
        n, K = parents.shape[0], self.K
        self._children = [i for i in range(n) if parents[i] >= 0]
        slot = {c: s for s, c in enumerate(self._children)}

        def e(i, a, b):
            return n * K + slot[i] * K * K + a * K + b

        rows, lo, up = [], [], []
        for i in range(n):
            rows.append([(i * K + k, 1.0) for k in range(K)])
            lo.append(1.0)
            up.append(1.0)
        for i in self._children:
            p = parents[i]
            for b in range(K):
                rows.append([(e(i, a, b), 1.0) for a in range(K)] + [(i * K + b, -1.0)])
                lo.append(0.0)
                up.append(0.0)
            for a in range(K):
                rows.append([(e(i, a, b), 1.0) for b in range(K)] + [(p * K + a, -1.0)])
                lo.append(0.0)
                up.append(0.0)
        self.model = _rows_to_model(n * K + len(self._children) * K * K, rows, lo, up, **ilp_kwargs)

    def solve(self, unary, edge_scores, **solve_kwargs) -> DecodeResult:
        """Best labelling by ILP; structure int64 labels (n,) (None if not solved)."""
        unary, parents, edge_scores, *_ = check_tree_scores(unary, self.parents, edge_scores)
        n = parents.shape[0]
        check_shape(unary, "unary", (n, self.K), "(n, K) of this TreeILP")
        obj = np.concatenate([unary.ravel(), edge_scores[self._children].ravel()])
        res = self.model.solve(obj, **solve_kwargs)
        if _decode_failure(res):
            return res
        labels = res.structure[: n * self.K].reshape(n, self.K).argmax(axis=1).astype(np.int64)
        return DecodeResult(labels, res.score, res.status, res.stats)
