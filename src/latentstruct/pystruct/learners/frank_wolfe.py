"""``FrankWolfeSSVM``: the structured SVM's dual by (block-coordinate) Frank-Wolfe."""

from __future__ import annotations

import numpy as np

from latentstruct.params import BOOL, RANDOM_STATE, Interval, Options
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS, constraint_of

__all__ = ["FrankWolfeSSVM", "make_rng"]


def make_rng(random_state):
    """A numpy generator from ``random_state`` (an int, a Generator or RandomState, None)."""
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    return np.random.default_rng(random_state)


def _fw_job(model, x, y, w):
    return constraint_of(model, x, y, w, relaxed=False)


class FrankWolfeSSVM(BaseSSVM):
    """Structured SVM trained on its dual by the block-coordinate Frank-Wolfe algorithm
    (Lacoste-Julien, Jaggi, Schmidt and Pletscher 2013, Algorithm 3 with line search,
    Algorithm 4's weighted averaging), or by batch Frank-Wolfe (their Algorithm 2).

    Problem::

        min_w  1/2 ||w||^2 + C sum_i max_y [loss(y_i, y) - w . (phi(x_i, y_i) - phi(x_i, y))]

    whose dual, over one distribution per example on its labellings, is
    ``max  ell - 1/2 ||w||^2`` with ``w = sum_i w_i`` and ``ell = sum_i ell_i``, ``w_i`` and
    ``ell_i`` the expected ``C (phi(x_i, y_i) - phi(x_i, y))`` and ``C loss(y_i, y)``.

    Algorithm: a block step on example i takes the loss-augmented labelling ``y*`` at the
    current ``w`` (the linear oracle), the corner ``w_s = C (phi(x_i, y_i) - phi(x_i, y*))``,
    ``ell_s = C loss(y_i, y*)``, the block's duality gap ``g_i = (w_i - w_s) . w - ell_i +
    ell_s`` and the step ``gamma = clip(g_i / ||w_i - w_s||^2, 0, 1)`` (the exact line search;
    without ``line_search``, ``2n / (k + 2n)`` after k block steps), then moves ``w_i,
    ell_i`` by ``gamma`` towards the corner.  An epoch visits every example (``sample_method``:
    a fresh permutation ``'perm'``, ``n`` uniform draws ``'rnd'``, in order ``'seq'``).  Every
    ``check_dual_every`` epochs the exact duality gap (primal minus dual, a pass of inference)
    is computed; training stops when it is at most ``tol``.  With ``do_averaging`` the
    returned ``w`` is the weighted average ``w_avg <- k/(k+2) w_avg + 2/(k+2) w``.

    ``batch_mode=True`` is batch Frank-Wolfe: each iteration takes every example's oracle at
    one ``w``, whose gap is the exact duality gap; it stops at ``tol``; no averaging.

    Parameters (beyond BaseSSVM's): ``batch_mode``, ``line_search``, ``check_dual_every``,
    ``tol``, ``do_averaging``, ``sample_method``, ``random_state`` as above.

    Attributes: ``w``; ``objective_curve_`` (the dual after each epoch, of the averaged
    point when averaging); ``primal_objective_curve_`` (the primal at each gap check, last
    at the final ``w``); ``duality_gaps_`` (each exact gap computed).
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "batch_mode": [BOOL],
        "line_search": [BOOL],
        "check_dual_every": [Interval(int, 1, None)],
        "tol": [Interval(float, 0, None)],
        "do_averaging": [BOOL],
        "sample_method": [Options("perm", "rnd", "seq")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, model, max_iter=1000, C=1.0, verbose=0, n_jobs=1, show_loss_every=0,
                 logger=None, batch_mode=False, line_search=True, check_dual_every=10,
                 tol=.001, do_averaging=True, sample_method="perm", random_state=None):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.batch_mode = batch_mode
        self.line_search = line_search
        self.check_dual_every = check_dual_every
        self.tol = tol
        self.do_averaging = do_averaging
        self.sample_method = sample_method
        self.random_state = random_state

    def fit(self, X, Y, constraints=None, initialize=True):
        """Train on inputs ``X`` and labellings ``Y`` (``constraints`` must be None: the
        Frank-Wolfe learner keeps no working set)."""
        if constraints is not None:
            from latentstruct.exceptions import ConfigError
            raise ConfigError("FrankWolfeSSVM.fit: constraints=... is not supported (Frank-Wolfe "
                              "keeps no working set); pass constraints=None")
        Y = self._start(X, Y, initialize)
        self.duality_gaps_ = []
        if self.batch_mode:
            self._fit_batch(X, Y)
        else:
            self._fit_blocks(X, Y)
        self.primal_objective_curve_.append(self._primal(X, Y, self.w))
        self._finish()
        return self

    def _corners(self, X, Y, w):
        """Every example's corner ``(w_s, ell_s)`` and slack at ``w``."""
        found = self._map(_fw_job, [self.model] * len(X), X, Y, [w] * len(X))
        return ([self.C * f[1] for f in found], [self.C * f[2] for f in found],
                np.array([f[3] for f in found]))

    def _fit_batch(self, X, Y):
        w = np.zeros(self.model.size_joint_feature)
        ell = 0.0
        for k in range(self.max_iter):
            w_parts, ell_parts, slacks = self._corners(X, Y, w)
            w_s = np.sum(w_parts, axis=0)
            ell_s = float(np.sum(ell_parts))
            gap = float(w @ (w - w_s) - ell + ell_s)
            self.primal_objective_curve_.append(
                float(0.5 * w @ w + self.C * np.maximum(slacks, 0).sum()))
            self.duality_gaps_.append(gap)
            if gap <= self.tol:
                self.w = w
                self.objective_curve_.append(float(ell - 0.5 * w @ w))
                break
            direction = w - w_s
            norm = float(direction @ direction)
            if self.line_search:
                gamma = min(max(gap / norm, 0.0), 1.0) if norm > 0 else 0.0
            else:
                gamma = 2.0 / (k + 2.0)
            w = w - gamma * direction
            ell = (1 - gamma) * ell + gamma * ell_s
            self.w = w
            self.objective_curve_.append(float(ell - 0.5 * w @ w))
            self._tick()
            self._say("iteration %d: duality gap %.6g", k, gap)
            self._after_iteration(X, Y, k)
        self.w = w

    def _fit_blocks(self, X, Y):
        n = len(X)
        size = self.model.size_joint_feature
        rng = make_rng(self.random_state)
        w_blocks = np.zeros((n, size))
        ell_blocks = np.zeros(n)
        w = np.zeros(size)
        ell = 0.0
        w_avg, ell_avg = w.copy(), 0.0
        steps = 0
        for epoch in range(self.max_iter):
            if self.sample_method == "perm":
                order = rng.permutation(n)
            elif self.sample_method == "rnd":
                order = rng.choice(n, size=n)
            else:
                order = np.arange(n)
            for i in order:
                _, d, loss, _ = constraint_of(self.model, X[i], Y[i], w, relaxed=False)
                w_s = self.C * d
                ell_s = self.C * loss
                direction = w_blocks[i] - w_s
                gap = float(direction @ w - ell_blocks[i] + ell_s)
                if self.line_search:
                    norm = float(direction @ direction)
                    gamma = min(max(gap / norm, 0.0), 1.0) if norm > 0 else 0.0
                else:
                    gamma = 2.0 * n / (steps + 2.0 * n)
                new_block = w_blocks[i] - gamma * direction
                new_ell = (1 - gamma) * ell_blocks[i] + gamma * ell_s
                w += new_block - w_blocks[i]
                ell += new_ell - ell_blocks[i]
                w_blocks[i], ell_blocks[i] = new_block, new_ell
                if self.do_averaging:
                    rho = 2.0 / (steps + 2.0)
                    w_avg = (1 - rho) * w_avg + rho * w
                    ell_avg = (1 - rho) * ell_avg + rho * ell
                steps += 1
            out_w, out_ell = (w_avg, ell_avg) if self.do_averaging else (w, ell)
            self.w = out_w.copy()
            self.objective_curve_.append(float(out_ell - 0.5 * out_w @ out_w))
            self._tick()
            self._after_iteration(X, Y, epoch)
            if (epoch + 1) % self.check_dual_every == 0 or epoch == self.max_iter - 1:
                primal = self._primal(X, Y, out_w)
                gap = primal - self.objective_curve_[-1]
                self.primal_objective_curve_.append(primal)
                self.duality_gaps_.append(gap)
                self._say("epoch %d: duality gap %.6g", epoch, gap)
                if gap <= self.tol:
                    break
        self.w = (w_avg if self.do_averaging else w).copy()
