"""The hidden-variable log-linear reranker of Koo & Collins (2005)."""

from __future__ import annotations

import sys
import time

import numpy as np
from tqdm.auto import tqdm

from ...data.progress import bar_disable
from ...exceptions import ConfigError, warn_convergence, check_is_fitted
from ...parallel import fit_session, parallel_chunks, rows, shared
from ...solvers.sgd import SCHEDULES, SGDState, lbfgs, sgd
from ...tasks.contracts import CANDIDATE_LIST, MARGINALIZABLE
from ..base import LinearStructuredLearner, check_examples, register_learner

from ..checkpoint import CheckpointSession
from ..checkpoint_state import rng_from_state, rng_state
from ..params import BOOL, NJOBS, NONNEGATIVE, PASSES, POSITIVE, RANDOM_STATE, Options, store_init_args

__all__ = ["HiddenVariableReranker", "candidate_loss", "candidate_coefficients"]

SOLVERS = ("sgd", "lbfgs")
# Sentences per block of the full-batch gradient.  Blocks, not the parallel chunks, fix the
# order of the floating-point sums, so the objective is the same bit for bit whatever n_jobs,
# the backend or the progress bars (which change the chunks) are.
_BLOCK = 16


def _lse(a: np.ndarray) -> float:
    m = float(a.max())
    return m + float(np.log(np.exp(a - m).sum()))


def candidate_loss(log_z: np.ndarray, oracle: np.ndarray) -> float:
    """−log Σ_{j ∈ oracle} p(t_j | s) = log Σ_j Z_j − log Σ_{j ∈ oracle} Z_j."""
    return _lse(log_z) - _lse(log_z[oracle])


def candidate_coefficients(log_z: np.ndarray, oracle: np.ndarray) -> np.ndarray:
    """p − q: p = softmax(log Z) over all candidates, q = softmax over the oracle set (zero
    elsewhere); the gradient of :func:`candidate_loss` is Σ_j (p_j − q_j) F(t_j)."""
    if oracle.max() >= log_z.shape[0]:
        raise ConfigError(f"oracle candidate {int(oracle.max())} does not exist; the sentence "
                          f"has {log_z.shape[0]} candidates (targets and examples misaligned?)")
    p = np.exp(log_z - _lse(log_z))
    lo = log_z[oracle]
    p[oracle] -= np.exp(lo - _lse(lo))
    return p


@register_learner("hidden-reranker")
class HiddenVariableReranker(LinearStructuredLearner):
    """Conditional log-linear reranker with hidden variables (Koo & Collins 2005, §3).

    Model (Eq. 2): p(t_j | s) = Z_j / Σ_j' Z_j' with Z_j = Σ_h exp(Θ · Φ(t_j, h)), the sum over
    the hidden values h of candidate t_j computed exactly by the task (belief propagation on
    the tree D(t_j), §3.1–3.2).  Objective (Eq. 3 with tied oracles and an L2 term)::

        J(Θ) = (1/n) Σ_i [ log Σ_j Z_ij − log Σ_{j ∈ O_i} Z_ij ] + (alpha/2) ||Θ||²

    where O_i is the oracle set of sentence i (the task's targets; several candidates when
    they tie).  J is Eq. 3 divided by n plus (n·alpha/2)||Θ||², so ``alpha`` is "per example":
    the same alpha regularises equally on a small and a large training set.  Its gradient is
    (1/n) Σ_i Σ_j (p_ij − q_ij) F(t_ij) + alpha Θ, p = softmax(log Z_i·) over the candidates, q
    the same over O_i, F(t) = E_{h|t}[Φ(t, h)] (§3.2).  J is non-convex when there are hidden
    values or tied oracles (a difference of log-partitions); with domain "none" and one oracle
    per sentence it is the convex conditional log-linear (maxent) reranker.

    Parameters
    ----------
    task : a fitted task with capabilities marginalizable and candidate-list (``rerank``)
    solver : {"sgd", "lbfgs"}, default "sgd"
        Stochastic gradient descent (the paper's choice) or SciPy's L-BFGS-B on the full J.
    eta0 : float, default 0.05
        Initial SGD learning rate.
    schedule : {"bottou", "inverse_time", "constant"}, default "bottou"
        SGD learning-rate schedule (``latentstruct.solvers.sgd``): bottou is
        eta0 / (1 + eta0·alpha·t) over steps t.
    n_epochs : int, default 10
        SGD passes over the training sentences (in a seeded random order each).
    max_iter : int, default 200
        L-BFGS iterations (solver "lbfgs").
    alpha : float, default 1e-4
        L2 strength, per example (J = mean loss + alpha/2 ||Θ||²); 0 is allowed.
    init_noise : float, default 0.01
        Standard deviation of the Gaussian noise the weights start from.  Needed: at Θ = 0
        the sub-values of one class (NN_1 … NN_5) have identical templates, get identical
        gradients and would never separate.
    random_state : None, int or Generator, default 0
        Seeds the initial noise and the SGD visiting order.
    tol : float or None, default 1e-4
        SGD: stop when an epoch lowers the running objective by less than tol relative
        (None: run n_epochs). L-BFGS: the gradient tolerance gtol (None: 1e-6).
    progress : bool, default False
        Progress bar over epochs / iterations.
    verbose : bool, default False
        Print the objective after every epoch / iteration to stderr.
    n_jobs : int or None, default 1
        Parallel jobs (joblib's convention; None takes ``joblib.parallel_config``'s) for the
        full-batch objective and gradient (solver "lbfgs", :meth:`objective`) and for
        prediction, through :func:`latentstruct.parallel.parallel_chunks` on threads or on
        the backend a surrounding ``joblib.parallel_config`` names.  The gradient is summed
        in fixed blocks of 16 sentences (each block's partial sum, then the blocks in
        order), so every n_jobs and backend gives the same model bit for bit.  SGD updates
        the weights after every sentence and stays serial: n_jobs does not change it.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    loss_curve_ : list of float, J after every epoch (SGD: the mean of the example losses met
        during the epoch plus the L2 term) or L-BFGS iteration
    n_iter_ : int, epochs or iterations run
    converged_ : bool, whether the tol test stopped the run
    fit_time_ : float, seconds
    """

    requires = frozenset({MARGINALIZABLE, CANDIDATE_LIST})
    evaluation_params = frozenset({"n_jobs", "progress", "verbose"})

    _parameter_constraints = {
        "solver": [Options(*SOLVERS)], "eta0": [POSITIVE],
        "schedule": [Options(*SCHEDULES)], "n_epochs": [PASSES],
        "max_iter": [PASSES],  # L-BFGS iterations: each a pass of BP over every list
        "alpha": [NONNEGATIVE],
        "init_noise": [NONNEGATIVE], "random_state": RANDOM_STATE,
        "n_jobs": [NJOBS, None], "tol": [NONNEGATIVE, None], "progress": [BOOL],
        "verbose": [BOOL],
    }

    def __init__(self, structure=None, solver="sgd", eta0=0.05, schedule="bottou", n_epochs=10,
                 max_iter=200, alpha=1e-4, init_noise=0.01, random_state=0, tol=1e-4,
                 progress=False, verbose=False, n_jobs=1):
        store_init_args(self, locals())

    # --- validation ----------------------------------------------------------------------
    def _validate(self, X, Y):
        structure = self._check_structure()  # the hyperparameters: checked on entering fit
        X, Y = structure.as_batch(X), list(Y)
        check_examples(X, Y)
        oracles = []
        for i, y in enumerate(Y):
            try:
                o = np.asarray(y.oracle)
            except AttributeError:
                raise ConfigError(f"target {i} has no 'oracle' (the candidates to rank first); "
                                  f"encode the targets with task.encode_targets") from None
            if o.ndim != 1 or o.size == 0 or o.dtype.kind not in "iu" or o.min() < 0:
                raise ConfigError(f"target {i} must name a non-empty set of candidate indices; "
                                  f"got oracle={o!r}")
            oracles.append(o.astype(np.int64))
        return structure, X, oracles

    # --- the objective -------------------------------------------------------------------
    def _mean_loss_grad(self, data, n: int, w):
        """(1/n) Σ_i ℓ_i(w) and its dense gradient (no L2 term), from the block partial sums
        of :func:`_loss_grad_blocks` (in parallel chunks of blocks), added in block order.

        ``data``: a ``shared(task=..., X=..., oracles=...)`` block, so that a fit's many
        passes send the sentences to each worker once."""
        grad = np.zeros(data.value("structure").n_features)
        total = 0.0
        parts = parallel_chunks(_loss_grad_blocks, -(-n // _BLOCK), self.n_jobs,
                                args=(data["structure"], data["X"], data["oracles"], w),
                                desc=f"gradient (blocks of {_BLOCK} sentences)")
        for loss, keys, values in parts:
            total += loss
            grad[keys] += values  # keys are unique within a block
        return total / n, grad / n

    def objective(self, X, Y, w) -> tuple[float, np.ndarray]:
        """J(w) and its gradient (dense) on examples X with targets Y (see the class docs)."""
        self.check_params()  # outside a fit, the hyperparameters are checked here
        structure, X, oracles = self._validate(X, Y)
        w = np.asarray(w, dtype=np.float64)
        with shared(structure=structure, X=X, oracles=oracles) as data:
            loss, grad = self._mean_loss_grad(data, len(X), w)
        alpha = float(self.alpha)
        return loss + 0.5 * alpha * float(w @ w), grad + alpha * w

    # --- fitting -------------------------------------------------------------------------
    def fit(self, X, Y, *, checkpoint=None, resume=None):
        """Learn ``coef_`` from featurised k-best lists X and their targets Y.

        With ``solver="sgd"``, ``checkpoint`` (a path or
        :class:`~latentstruct.learners.checkpoint.Checkpoint`) saves the weights, the step
        count and the random state after every epoch, and ``resume`` continues from such a
        file to the model an uninterrupted run gives.  L-BFGS cannot be resumed exactly:
        its curvature pairs live inside SciPy's L-BFGS-B, which offers no way to save or
        restore them, so ``solver="lbfgs"`` refuses both."""
        structure, X, oracles = self._validate(X, Y)
        sgd_run = self.solver == "sgd"
        if not sgd_run and (checkpoint is not None or resume is not None):
            raise ConfigError(
                "HiddenVariableReranker with solver='lbfgs' cannot checkpoint or resume: "
                "SciPy's L-BFGS-B keeps its state (the curvature pairs) inside the solver and "
                "offers no way to restore it, so a resumed run would not be the same run. Use "
                "solver='sgd', or train without --checkpoint/--resume")
        t_start = time.perf_counter()
        session = CheckpointSession(self, {"X": X, "Y": list(Y)}, checkpoint, resume)
        start = None
        if session.resuming:
            meta, arrays = session.state
            start = SGDState(arrays["v"], meta["scale"], meta["t"], session.iteration,
                             tuple(meta["curve"]), meta["converged"], rng_from_state(meta["rng"]))
            rng, w0 = start.rng, start.v
        else:
            rng = np.random.default_rng(self.random_state)
            w0 = float(self.init_noise) * rng.standard_normal(structure.n_features)

        def save(state: SGDState):
            if session.active:
                done = state.converged or state.epoch == int(self.n_epochs)
                meta = {"scale": state.scale, "t": state.t, "curve": list(state.curve),
                        "converged": state.converged, "rng": rng_state(state.rng)}
                session.save(state.epoch, meta, {"v": state.v}, done=done)

        total = int(self.n_epochs if sgd_run else self.max_iter)
        bar = tqdm(total=total, initial=session.iteration, desc="hidden-reranker",
                   unit="epoch" if sgd_run else "iter", disable=bar_disable(self.progress), leave=False)

        def report(step, value):
            bar.set_postfix(objective=f"{value:.6g}")
            bar.update(1)
            if self.verbose:
                print(f"hidden-reranker {self.solver} {step}: objective {value:.6g} "
                      f"({time.perf_counter() - t_start:.1f}s)", file=sys.stderr)

        try:
            if sgd_run:
                def example(i, v, scale):
                    o = oracles[i]
                    res = structure.candidate_expected_features(
                        X[i], v, lambda lz: candidate_coefficients(lz, o), scale=scale,
                        sparse=True)
                    return candidate_loss(res.log_partitions, o), res.features

                res = sgd(example, len(X), w0, schedule=self.schedule, eta0=self.eta0,
                          alpha=self.alpha, n_epochs=self.n_epochs, random_state=rng,
                          tol=self.tol, callback=report, on_epoch=save, start=start)
                limit = f"n_epochs={self.n_epochs}"
            else:
                with shared(structure=structure, X=X, oracles=oracles) as data:
                    res = lbfgs(lambda w: self._mean_loss_grad(data, len(X), w), w0,
                                alpha=self.alpha, max_iter=self.max_iter,
                                tol=1e-6 if self.tol is None else max(float(self.tol), 1e-300),
                                callback=report)
                limit = f"max_iter={self.max_iter} ({res.message})"
        finally:
            bar.close()
        self.coef_ = res.w
        self.loss_curve_ = [float(v) for v in res.objective_curve]
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        self.fit_time_ = time.perf_counter() - t_start
        if not self.converged_ and (self.tol is not None or not sgd_run):
            warn_convergence(f"HiddenVariableReranker ({self.solver}) stopped at {limit} before "
                             f"reaching tol={self.tol}; raise the limit or the tolerance")
        return self

    # --- prediction ----------------------------------------------------------------------
    def _log_z(self, X) -> list[np.ndarray]:
        check_is_fitted(self)
        X = self._structure().as_batch(X)
        # X whole, once per worker: a slice of it would carry the whole feature storage
        with shared(structure=self._structure(), X=X) as data:
            return parallel_chunks(_log_z_chunk, len(X), self.n_jobs,
                                   args=(data["structure"], data["X"], self.coef_), desc="reranking")

    def predict(self, X) -> list[int]:
        """Index of the best candidate of every sentence: argmax_j log Z_j, an exact sum over
        the hidden values (§6.2); ties go to the lower index (the base parser's order)."""
        return [int(np.argmax(lz)) for lz in self._log_z(X)]

    def predict_log_proba(self, X) -> list[np.ndarray]:
        """log p(t_j | s) of every candidate of every sentence (for mixtures, §4.3)."""
        return [lz - _lse(lz) for lz in self._log_z(X)]

    def decode_hidden(self, X) -> list:
        """The max-product hidden assignment h* of each sentence's predicted candidate (§6.3):
        a ``DecodeResult`` whose structure gives each word's domain index (value class
        ``v // n_sub``, sub-value ``v % n_sub``) and whose score is max_h Θ·Φ(t, h)."""
        check_is_fitted(self)
        X = self._structure().as_batch(X)
        with fit_session():  # both passes: one worker pool, the sentences sent once
            chosen = self.predict(X)
            with shared(structure=self._structure(), X=X) as data:
                return parallel_chunks(_max_product_chunk, len(X), self.n_jobs,
                                       args=(data["structure"], data["X"], self.coef_, rows(chosen)),
                                       desc="hidden values")

    # --- persistence ---------------------------------------------------------------------
    def _learned_state(self) -> tuple[dict, dict]:
        check_is_fitted(self)
        meta = {"n_iter_": int(self.n_iter_), "loss_curve_": list(self.loss_curve_),
                "converged_": bool(self.converged_)}
        return meta, {"coef_": self.coef_}

    def _restore(self, meta: dict, arrays: dict) -> None:
        self.coef_ = np.asarray(arrays["coef_"], dtype=np.float64)
        self.n_iter_ = int(meta.get("n_iter_", 0))
        self.loss_curve_ = [float(v) for v in meta.get("loss_curve_", [])]
        self.converged_ = bool(meta.get("converged_", False))


# --- kernels of the parallel passes (module level: process and cluster workers unpickle
# them by name) ----------------------------------------------------------------------------
def _loss_grad_blocks(a, b, structure, X, oracles, w) -> list:
    """Blocks a..b-1 (sentences ``k·_BLOCK`` .. ``(k+1)·_BLOCK − 1``): per block, the summed
    loss and the summed gradient as (unique feature indices, values), in sentence order."""
    n = len(X)
    out = []
    for k in range(a, b):
        total, indices, values = 0.0, [], []
        for i in range(k * _BLOCK, min(n, (k + 1) * _BLOCK)):
            o = oracles[i]
            res = structure.candidate_expected_features(
                X[i], w, lambda lz, o=o: candidate_coefficients(lz, o), sparse=True)
            total += candidate_loss(res.log_partitions, o)
            indices.append(res.features.indices)
            values.append(res.features.values)
        keys, where = np.unique(np.concatenate(indices), return_inverse=True)
        # bincount adds in input order: a block's sums never depend on where it runs
        sums = np.bincount(where.reshape(-1), weights=np.concatenate(values),
                           minlength=keys.shape[0])
        out.append((total, keys, sums))
    return out


def _log_z_chunk(a, b, structure, X, w) -> list:
    """log Z_j of every candidate of sentences a..b-1."""
    return [structure.candidate_log_partitions(X[i], w) for i in range(a, b)]


def _max_product_chunk(a, b, structure, X, w, chosen) -> list:
    """The max-product hidden assignment of the chosen candidate of sentences a..b-1."""
    return [structure.candidate_max_product(X[i], w)[int(chosen[i])] for i in range(a, b)]
