"""J-LIS: structured learning with indirect (binary) supervision (Chang et al. 2010, ICML)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import ConfigError, ConvergenceWarning, check_is_fitted
from ...inference.result import DecodeResult
from ...tasks.contracts import (LATENT_BINARY, MAX_DECODABLE, RANDOM_TIES, SIZED, Identity,
                               as_structure)
from .alternating import StructuredPart, alternating_latent_fit, store_alternating_result
from ..base import (
    LinearStructuredLearner,
    check_coef_init,
    register_learner,
)
from ..checkpoint import CheckpointSession
from .lclr import NONNEGATIVE, POSITIVE
from ..params import BOOL, COEF_INIT, NJOBS, PASSES, RANDOM_STATE, SOLVER_EPOCHS, Options, store_init_args
from ..ssvm.ssvm import StructuredSVM

__all__ = ["JLIS", "NormalizedBinaryView"]

_NORMALIZATIONS = ("length", "none")


class NormalizedBinaryView:
    """The binary view of a structured task that J-LIS learns from (Chang et al. 2010, §2.2).

    Phi_B(x, h) = Phi(x, h) / kappa(x), followed by one dummy (bias) feature added after the
    normalisation, so f_B(x) = max_h w . Phi_B(x, h) asks "has x a good structure?".
    kappa(x) is the number of tokens (``normalization="length"``, the paper's choice for
    POS tagging and citations) or 1 (``"none"``).  The argmax over h is the structured
    task's own (unaugmented) argmax, since kappa(x) > 0 does not change it.  The weight
    vector is the structured task's weights followed by the bias weight.

    It is a structure over a structure (``base``: a task's view or any max-decodable,
    sized structure) and offers the latent-binary capability, so LCLR can train on it (the
    tests use this to check that J-LIS with S empty is LCLR over Phi_B); it is J-LIS's own
    construction, so it lives next to J-LIS and is not registered for the command line.
    """

    def __init__(self, base, normalization="length"):
        if normalization not in _NORMALIZATIONS:
            raise ConfigError(f"normalization must be one of {', '.join(_NORMALIZATIONS)}, "
                              f"got {normalization!r}")
        self.base = as_structure(base)
        self.normalization = normalization
        self.identity = Identity("jlis-binary-view", {"normalization": normalization})
        ties = {RANDOM_TIES} if RANDOM_TIES in self.base.capabilities else set()
        self.capabilities = frozenset({LATENT_BINARY} | ties)

    def __repr__(self) -> str:
        return f"NormalizedBinaryView(base={self.base!r}, normalization={self.normalization!r})"

    def argmax_is_maximum(self) -> bool:
        return self.base.argmax_is_maximum()

    def score(self, Y_true, Y_pred) -> float:
        """Accuracy of +-1 ``Y_pred`` against +-1 ``Y_true``."""
        t, p = np.asarray(Y_true), np.asarray(Y_pred)
        return float(np.mean(t == p)) if t.size else 0.0

    def as_batch(self, X):
        return self.base.as_batch(X)

    @property
    def n_features(self) -> int:
        return self.base.n_features + 1

    def kappa(self, x) -> float:
        if self.normalization == "none":
            return 1.0
        n = self.base.example_size(x)
        if n <= 0:
            raise ConfigError(
                "a binary example has length 0; every sentence needs at least one token"
            )
        return float(n)

    def subset(self, X, indices):
        return self.base.subset(X, indices)

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        res = self.base.argmax(x, w[:-1], random_state=random_state)
        return DecodeResult(res.structure, res.score / self.kappa(x) + float(w[-1]),
                            res.status, res.stats)

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        results = self.base.argmax_results(X, w[:-1], random_state=random_state)
        return [DecodeResult(r.structure, r.score / self.kappa(X[i]) + float(w[-1]), r.status,
                             r.stats) for i, r in enumerate(results)]

    def latent_feature(self, x, h) -> SparseVector:
        phi = self.base.joint_feature(x, h)
        return SparseVector(
            np.append(phi.indices, self.base.n_features),
            np.append(phi.values / self.kappa(x), 1.0),
        )

    def decision_batch(self, X, w) -> np.ndarray:
        return np.array([r.score for r in self.latent_argmax_batch(X, w)], dtype=np.float64)


@register_learner("jlis")
class JLIS(LinearStructuredLearner):
    """Joint Learning with Indirect Supervision.

    Optimisation problem (J-LIS Eq. 4 with the squared hinge)::

        Q(w) = 1/2 ||w||^2
               + C1 sum_{i in S} max(0, max_h Delta(h_i, h) - w . (Phi(x_i, h_i) - Phi(x_i, h)))^2
               + C2 sum_{i in B} max(0, 1 - y_i max_h w . Phi_B(x_i, h))^2

    with Phi_B(x, h) = Phi(x, h) / kappa(x) plus a bias feature added after normalisation
    (§2.2; kappa = number of tokens).  S holds labelled structures, B binary examples: a
    positive has some good structure, a negative (e.g. a shuffled sentence) none.

    Algorithm 1 fixes each positive's structure h^t at its argmax and minimises the convex
    A(w, w^t); Algorithm 2 does so by cutting planes over working sets W_i (S) and V_i
    (B-), each restricted problem (Eq. 9) solved by the grouped squared-hinge DCD (Alg. 3).
    Working sets persist across outer iterations.  Q never increases (Theorem 1).
    Initialised from a StructuredSVM trained on S (or ``coef_init``).

    With B empty this is the structural SVM; with S empty it is LCLR over Phi_B.

    Parameters
    ----------
    task : StructuredTask (fitted; ``example_size`` gives kappa)
    C1, C2 : float, default 0.1 and 0.1
        Costs of the structured and the binary squared slacks.
    normalization : {"length", "none"} -- divide each example's features by its size kappa(x) (§4), or not
    tol : float, default 1e-5 -- stop when Q's relative decrease is below it
    max_iter : int, default 20 -- outer iterations (Algorithm 1)
    max_cutting_plane_rounds : int, default 50 -- Algorithm 2 rounds per outer iteration
    epsilon : float, default 1e-3 -- a structure joins a working set only when its violation
        exceeds the set's by more than this (SVM-struct's epsilon)
    dcd_tol : float -- projected-gradient tolerance of each inner DCD solve
    dcd_max_iter : int -- epoch limit of each inner DCD solve
    inner_gap : float or None, default 1e-3 -- inexact cutting plane.  Let g be a tenth (in
        the last iteration, max_iter, a hundredth) of the previous outer iteration's relative
        decrease of Q, clipped to [tol, inner_gap].
        Round r solves its restricted problem (Eq. 9) only to relative duality gap
        max(inner_gap / 2^r, g / 2), and the rounds stop as soon as the restricted dual
        certifies w within relative gap g of the optimum of the outer iteration's convex
        problem (positives' structures fixed, every structure of B- and S, evaluated with the
        round's exact decodes).  A relative decrease below tol measured after a looser solve
        is not taken as convergence: the next iteration is solved to tol (from the previous
        weights if Q rose, that iteration then left out of ``objective_curve_``, so Q never
        increases).  Q and its optimum are unchanged; only the intermediate
        restricted problems are solved inexactly (with caches of near-identical structures
        sharing slacks, and the bias shared by all of B, the DCD needs ~1,000 epochs per
        restricted problem to reach dcd_tol).  None: every restricted problem solved to
        dcd_tol alone until no working set grows (the earlier behaviour, several times
        slower: benchmarks/jlis_speed.py)
    random_tie_break : bool, default True -- break inference ties uniformly at random (§5, fn. 7)
    coef_init : array of shape (n_features + 1,), optional -- warm start from these weights
    init_max_iter : int, default 30 -- outer iterations of the initial StructuredSVM
    check_inference : bool, default True -- raise on a non-exact decode, a reported score
        that is not its structure's, an argmax beaten by a known structure, or an increase
        of Q that Theorem 1 rules out (else count them and warn)
    n_jobs : int, default 1 -- worker threads for inference over examples
    random_state : int or None, default 0 -- seed of the tie-breaking and sampling
    progress : bool, default False -- show a progress bar over outer iterations

    ``fit`` needs binary examples: ``X_binary=None`` is an error (an explicitly empty B,
    ``X_binary=[]``, is allowed and gives the structural SVM on S, a reduction the tests use).

    Attributes
    ----------
    coef_ : task weights followed by the bias of Phi_B
    n_iter_, converged_, stop_reason_, objective_curve_ (Q at the initial weights and after
    each outer iteration), cache_size_curve_, n_cache_hits_, n_inexact_decodes_,
    n_cutting_plane_cap_hits_, n_inner_not_converged_, inner_gap_curve_, fit_time_
    """

    uses_binary_examples = True
    requires = frozenset({MAX_DECODABLE, SIZED})
    evaluation_params = frozenset({"n_jobs", "progress", "check_inference"})

    @classmethod
    def required_capabilities(cls, params=None) -> dict[str, str]:
        out = {MAX_DECODABLE: "", SIZED: "kappa(x) normalises the binary features"}
        if (params or {}).get("random_tie_break", True):
            out[RANDOM_TIES] = "random_tie_break=True; set it to False"
        return out

    _parameter_constraints = {
        "C1": [POSITIVE], "C2": [POSITIVE], "normalization": [Options(*_NORMALIZATIONS)],
        "tol": [POSITIVE], "max_iter": [PASSES], "max_cutting_plane_rounds": [PASSES],
        "epsilon": [NONNEGATIVE], "dcd_tol": [POSITIVE], "dcd_max_iter": [SOLVER_EPOCHS],
        "inner_gap": [POSITIVE, None],
        "random_tie_break": [BOOL], "coef_init": [COEF_INIT, None], "init_max_iter": [PASSES],
        "check_inference": [BOOL], "n_jobs": [NJOBS, None], "random_state": RANDOM_STATE,
        "progress": [BOOL],
    }

    def __init__(self, structure=None, C1=0.1, C2=0.1, normalization="length", tol=1e-5, max_iter=20,
                 max_cutting_plane_rounds=50, epsilon=1e-3, dcd_tol=1e-3, dcd_max_iter=2000,
                 inner_gap=1e-3, random_tie_break=True, coef_init=None, init_max_iter=30,
                 check_inference=True, n_jobs=1, random_state=0, progress=False):
        store_init_args(self, locals())

    def coef_size(self, structure) -> int:
        return structure.n_features + 1

    def _initial_weights(self, structure, X, Y) -> np.ndarray:
        if self.coef_init is not None:
            return check_coef_init(self.coef_init, structure.n_features + 1,
                                   " (task weights and the bias of Phi_B)")
        if len(X) == 0:
            raise ConfigError(
                "J-LIS got no structured examples (|S| = 0) and no initial weights: give "
                "labelled structures (e.g. --option n_structured_tokens=N > 0) or coef_init"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            base = StructuredSVM(structure, C=self.C1, max_iter=self.init_max_iter,
                                 random_state=self.random_state, n_jobs=self.n_jobs).fit(X, Y)
        return np.append(base.coef_, 0.0)

    def fit(self, X, Y, X_binary=None, y_binary=None, *, checkpoint=None, resume=None):
        """Learn from labelled structures (X, Y) and binary examples (X_binary, y_binary);
        ``checkpoint``/``resume`` as for ``LCLR.fit``."""
        structure = self._check_structure()
        C1 = float(self.C1)
        C2 = float(self.C2)
        if len(X) != len(Y):
            raise ConfigError(f"X has {len(X)} examples but Y has {len(Y)}")
        if X_binary is None:
            raise ConfigError(
                "J-LIS got no binary examples B; without them it is the structural SVM. Give "
                "binary examples (X_binary, y_binary) -- on the command line --option "
                "n_binary=N draws N positive sentences and negatives_per_positive shuffles of "
                "each -- or use StructuredSVM (--learner ssvm)"
            )
        X = structure.as_batch(X) if len(X) else X
        if len(X_binary):
            X_binary = structure.as_batch(X_binary)
        y_binary = np.asarray(y_binary, dtype=np.float64)
        if len(X_binary) != y_binary.shape[0]:
            raise ConfigError(f"X_binary has {len(X_binary)} examples but y_binary has "
                              f"{y_binary.shape[0]}")
        if y_binary.size and not np.isin(y_binary, (-1, 1)).all():
            raise ConfigError("binary labels must be -1 or +1")
        if y_binary.size and not (y_binary < 0).any():
            raise ConfigError(
                "the binary examples B are all positive; J-LIS needs negative examples (inputs "
                "with no good structure, e.g. shuffled sentences): set negatives_per_positive > 0"
            )
        if len(X) == 0 and y_binary.size == 0:
            raise ConfigError("J-LIS needs structured examples S, binary examples B, or both")
        adapter = NormalizedBinaryView(structure, self.normalization)
        t_start = time.perf_counter()
        session = CheckpointSession(self, {"X": X, "Y": list(Y), "X_binary": X_binary,
                                           "y_binary": y_binary}, checkpoint, resume)
        w0 = None if session.resuming else self._initial_weights(structure, X, Y)
        structured = StructuredPart(structure, X, list(Y), C1) if len(X) else None
        run, monitor = alternating_latent_fit(self, adapter, X_binary, y_binary, C2, w0,
                                              structured=structured, desc="jlis",
                                              session=session)
        return store_alternating_result(self, run, t_start, monitor)

    def structure_weights(self) -> np.ndarray:
        """The task part of ``coef_`` (its last entry is the binary bias)."""
        check_is_fitted(self)
        return self.coef_[:-1]

    def decision_function(self, X) -> np.ndarray:
        """``f_B(x) = max_h coef_ . Phi_B(x, h)``: does x have a good structure?"""
        check_is_fitted(self)
        X = self._structure().as_batch(X)
        return NormalizedBinaryView(self._structure(), self.normalization).decision_batch(X, self.coef_)
