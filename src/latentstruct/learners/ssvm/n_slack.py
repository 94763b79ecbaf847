"""The L1-slack structured SVM by n-slack cutting planes, the QP over the working set
solved exactly on HiGHS (``latentstruct.solvers.qp``)."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...exceptions import ConfigError
from ...parallel import shared
from ..base import register_learner
from ..docs import fill_doc
from .l1_ssvm import FitData, L1SlackLearner
from .one_slack import CuttingPlaneHooks
from ..params import Interval, Satisfies, store_init_args

__all__ = ["NSlackSSVM"]


@register_learner("n-slack")
@fill_doc
class NSlackSSVM(CuttingPlaneHooks, L1SlackLearner):
    """Structured SVM with one linear slack per example, trained by the n-slack
    cutting-plane method (Tsochantaridis, Joachims, Hofmann and Altun 2005, "Large margin
    methods for structured and interdependent output variables", Algorithm 1, margin
    rescaling), the QP over the working set solved exactly on HiGHS.

    Problem::

        min_{w, xi >= 0}  1/2 ||w||^2 + C sum_i xi_i
        s.t.  w . (Phi(x_i, y_i) - Phi(x_i, y)) >= Delta(y_i, y) - xi_i
              for every example i and structure y.

    Algorithm: each pass visits the examples in order, ``batch_size`` at a time (-1: all
    of them), decoding them (loss-augmented) at the current w; an example's argmax joins
    the working set when its slack exceeds the example's slack over the working set by
    more than ``tol``, and after each batch that added a constraint the dual QP over the
    working set is solved exactly (HiGHS).  A pass that adds nothing ends training.
    Constraints whose dual variable stays below ``inactive_threshold * C`` for more than
    ``inactive_window`` solves are removed.

    The dual has one variable per constraint and a dense Gram matrix over them: the
    method suits data sets of up to some thousands of examples (the one-slack method
    keeps one constraint per iteration instead).

    Parameters
    ----------
    %(structure_C)s
    tol : float, default 0.001
        Slack (in loss units) by which an argmax must beat its example's working set to be
        added; a pass that adds none ends training.
    max_iter : int, default 100
        Maximum number of passes over the examples.
    batch_size : int, default 100
        Examples decoded at one w between QP solves (-1: a whole pass).
    %(inactive_constraints)s
    n_jobs : int, default 1
        Parallel decoding over the examples of a batch (``latentstruct.parallel``).
    %(check_inference_working_set)s
    progress : bool, default False
        Show a progress bar over passes.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, passes run
    objective_curve_ : list of float, the QP's dual objective after each pass
    primal_objective_curve_ : list of float, the primal at the w each pass started from,
        the last at the final w
    working_set_ : WorkingSet, the constraints at the end (each tagged with its structure)
    converged_ : bool
    n_inexact_decodes_ : int, decodes whose status was not exact
    """

    _parameter_constraints = {
        **CuttingPlaneHooks.CONSTRAINTS,
        "batch_size": [Interval(int, 1, None), Satisfies(lambda v: v == -1, "-1")],
    }

    def __init__(self, structure=None, C=1.0, tol=1e-3, max_iter=100, batch_size=100,
                 inactive_threshold=1e-5, inactive_window=50, n_jobs=1, check_inference=True,
                 progress=False):
        store_init_args(self, locals())

    def _seed(self, ws, data: FitData, constraints) -> None:
        """Add given structures (one list per example) to the working set, as constraints
        against this fit's targets."""
        if len(constraints) != len(data):
            raise ConfigError(f"constraints has {len(constraints)} entries for {len(data)} "
                              f"examples; give one list of structures per example")
        for i, y_hat, d, loss in self._constraints_of(data, constraints):
            if not ws.contains(d, loss, i):
                ws.add(d, loss, i, tag=y_hat)

    def fit(self, X, Y, *, coef_init=None, working_set=None, constraints=None,
            nonpositive=None, callback=None, on_converge=None, on_inexact=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``.

        Hooks (see :mod:`latentstruct.learners.ssvm.l1_ssvm`): ``coef_init`` (used while the
        working set is empty), ``working_set`` (a working set of these examples to start
        from), ``constraints`` (per example, structures whose constraints start the working
        set), ``nonpositive`` (indices of weights held ``<= 0``),
        ``callback(learner, iteration)``, ``on_converge()`` (True: go on) and
        ``on_inexact(what)`` (True: stop)."""
        structure, X, Y, neg, ws, w = self._start(X, Y, coef_init, working_set, nonpositive)
        n = len(X)
        C, tol = float(self.C), float(self.tol)
        self.objective_curve_, self.primal_objective_curve_ = [], []
        self.coef_, self.n_iter_ = w, 0
        limits = np.full(n, C)
        step = n if self.batch_size == -1 else int(self.batch_size)
        with shared(structure=structure, X=X, Y=Y) as block:
            data = FitData(structure, X, Y, block)
            if constraints is not None:
                self._seed(ws, data, constraints)
            w, dual = self._first_solve(ws, limits, neg, w)
            converged, stopped, it, w_at_start = False, "", 0, w
            bar = tqdm(total=self.max_iter, desc="n-slack", unit="pass",
                       disable=bar_disable(self.progress), leave=False)
            for it in range(1, self.max_iter + 1):
                w_at_start, slacks, added = w, np.zeros(n), 0
                for begin in range(0, n, step):
                    idx = np.arange(begin, min(n, begin + step))
                    found = self._violated(data, w, idx)
                    current = ws.slacks(w, n)[idx]
                    new = []
                    for k, i in enumerate(idx):
                        slack = found.violations[k]
                        slacks[i] = slack
                        if self._below_known(slack, current[k], f"argmax of example {i}",
                                             on_inexact):
                            stopped = "inexact"
                        if slack <= current[k] + tol or found.diffs[k] is None:
                            continue
                        if not ws.contains(found.diffs[k], found.losses[k], i):
                            new.append(k)
                    if new:
                        ws.add_rows([found.diffs[k] for k in new], found.losses[new], idx[new],
                                    [found.results[k].structure for k in new])
                        w, dual = self._solve(ws, limits, neg)
                        self._prune(ws)
                        added += len(new)
                    if stopped:
                        break
                self.objective_curve_.append(dual)
                self.primal_objective_curve_.append(
                    float(C * np.maximum(slacks, 0).sum() + 0.5 * w_at_start @ w_at_start))
                self.coef_, self.n_iter_ = w, it
                bar.set_postfix(dual=f"{dual:.6g}", added=added, ws=len(ws))
                bar.update(1)
                if callback is not None and callback(self, it):
                    stopped = stopped or "callback"
                if stopped:
                    break
                if added == 0 and not (on_converge is not None and on_converge()):
                    converged = True
                    break
            bar.close()
            if w is not w_at_start or stopped:  # the last pass moved w
                self.primal_objective_curve_.append(self._primal(data, w))
        return self._finish(ws, w, it, converged, stopped)
