"""Check a task against the capabilities it declares: :func:`check_task`.

``check_decoder`` checks one decoder against brute force; ``check_task`` checks a whole task
(its decoders, feature maps, loss, sums and persistence) the way the learners use it, so that
anyone writing their own latent structure can see, before training, whether a learner can
trust it.  Both are re-exported by :mod:`latentstruct.testing`.
"""

from __future__ import annotations

import json
import math
import numbers
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import NotFittedError
from latentstruct.inference.result import EXACT, DecodeResult
from latentstruct.tasks.base import Dataset, LatentBinaryTask, StructuredTask, Task
from latentstruct.tasks.contracts import (
    CANDIDATE_LIST,
    HEURISTIC,
    LATENT_BINARY,
    MARGINALIZABLE,
    MAX_DECODABLE,
    RANDOM_TIES,
    SIZED,
    missing_methods,
)

__all__ = ["check_task", "TaskCheckReport", "MAX_ENUMERATED"]

#: most structures an ``enumerate`` callable may yield for one example (keep instances tiny)
MAX_ENUMERATED = 100_000

_ABSTRACT = (Task, StructuredTask, LatentBinaryTask)


@dataclass(frozen=True)
class TaskCheckReport:
    """Summary of a passing :func:`check_task` run.

    n_examples : examples checked; n_weights : random weight vectors per example;
    checks : names of the checks that ran, in the order they first ran;
    max_abs_error : largest absolute difference seen between two scores (or feature values,
    log-partitions, expectations) that had to be equal.
    """

    n_examples: int
    n_weights: int
    checks: tuple[str, ...]
    max_abs_error: float


def check_task(task, examples, enumerate: Callable[[Any], Iterable] | None = None, *,
               n_weights: int = 5, random_state: int | np.random.Generator = 0,
               atol: float = 1e-9, rtol: float = 1e-9) -> TaskCheckReport:
    """Assert that a fitted ``task`` honours every capability it declares.

    Parameters
    ----------
    task : Task
        A fitted task (``task.is_fitted()``); its capabilities are
        ``type(task).offered_capabilities(task.get_params())``.
    examples : Dataset or sequence of (x, y)
        A :class:`~latentstruct.tasks.base.Dataset` of raw records and targets (featurised
        with ``task.featurize`` and ``task.encode_targets``, joined with ``task.as_batch``
        and indexed ``X[i]``, as the learners do), or ``(x, y)`` pairs as a learner sees
        them: ``x`` featurised (one example), ``y`` the encoded target (a structure for a
        max-decodable task, +1 or -1 for a latent-binary one).
    enumerate : callable, optional
        ``x -> iterable of every legal structure of x``: the output y of a max-decodable
        task, the hidden h of a latent-binary one, ``(j, h)`` pairs (candidate j, its hidden
        assignment h) of a candidate-list task, which must then offer
        ``candidate_feature(x, j, h)``.  At most ``MAX_ENUMERATED`` per example: keep the
        examples tiny.  Without it the maximality checks that need the true maximum are
        skipped (the others still run).
    n_weights : int, default 5
        Random weight vectors per example, drawn once from one seeded numpy Generator and
        shared by every example: even draws standard normal, odd draws integers in [-2, 2]
        (exact ties).
    random_state : int or numpy Generator, default 0
    atol, rtol : float
        Two numbers a, b are equal when ``|a - b| <= atol + rtol * max(|a|, |b|)``.

    Returns
    -------
    TaskCheckReport

    Raises
    ------
    AssertionError
        when a check fails, naming the check, the example, the weight draw and the seed,
        and the values that disagree.
    NotFittedError (a ValueError)
        when the task is not fitted.
    TypeError, ValueError
        on misuse: examples that are not a Dataset or (x, y) pairs, a latent-binary target
        that is not +-1, a max-decodable example without target, an ``enumerate`` that is
        not callable or yields nothing or too much.  An exception raised by the task itself
        propagates unchanged, with a note saying which example and weights it came from.

    The checks
    ----------
    Every task:

    * ``capabilities-implemented``: every method of every declared capability is
      implemented (``tasks.contracts.missing_methods``);
    * ``fitted``: ``task.is_fitted()``; ``n-features``: ``n_features`` is a positive int;
    * ``feature-indices`` (wherever a feature vector is read): a SparseVector whose indices
      lie in ``0..n_features-1``.

    max-decodable, for each example (x, y) and weights w, with Φ = ``joint_feature``,
    Δ = ``loss``, r = ``argmax(x, w)`` and a = ``argmax(x, w, y_true=y)``:

    * ``argmax-status``: r is a DecodeResult with status "exact" and a structure;
      ``argmax-score``: ``r.score == w·Φ(x, r.structure)``;
    * ``loss-gold-zero``: ``Δ(y, y) == 0``; ``loss-nonnegative``: Δ(y, ŷ) is finite and
      ``>= 0`` for every structure met (decoded or enumerated);
    * ``loss-augmented-status``, ``loss-augmented-score``: a is exact and
      ``a.score == w·Φ(x, a.structure) + Δ(y, a.structure)``;
    * ``loss-augmented-not-below-plain``: ``a.score >= w·Φ(x, r.structure) + Δ(y, r.structure)``;
    * ``loss-augmented-not-below-gold``: ``a.score >= w·Φ(x, y)`` (y has loss 0);
    * with ``enumerate``: ``argmax-maximum``: ``r.score == max_s w·Φ(x, s)``;
      ``loss-augmented-maximum``: ``a.score == max(max_s w·Φ(x, s) + Δ(y, s), w·Φ(x, y))``;
    * ``argmax-batch``: ``argmax_batch(X, w)``, ``argmax_batch(X, w, Y)``,
      ``argmax_results(X, w, Y)`` and ``argmax_batch`` on a reordered ``subset(X, idx)``
      (what the learners call on batches and mini-batches) return structures whose
      (augmented) scores equal the single decodes' scores, and argmax_results reports them;
    * ``heuristic-decode`` (if also heuristic): ``argmax(x, heuristic_weights())`` is exact
      and consistent.

    The loss-augmented score convention: the score of ``argmax(x, w, y_true=y)`` is the
    augmented score of the structure it returns, ``w·Φ(x, ŷ) + Δ(y, ŷ)``, and its maximum is
    never below the gold structure's ``w·Φ(x, y)``.  Every registered task reports it so
    (the sequence tasks, citations and doccls add Δ to their unary scores, dep to its arc
    scores, and dep returns a non-projective gold tree, which its decoder cannot reach, with
    the score w·Φ(x, y) + 0 when it wins, which is why the gold structure counts as a
    candidate of ``loss-augmented-maximum``).  The learners never read that score directly:
    they recompute the violation Δ(y, ŷ) + w·Φ(x, ŷ) − w·Φ(x, y) from ``loss`` and
    ``joint_feature_difference`` and require it to be >= 0 (the SSVM's slacks, J-LIS's
    structured examples through its inference monitor, the SGD SSVM and DISTRO under
    ``check_inference``); the checks above are what makes that recomputation the reported
    maximum.

    latent-binary, with Φ = ``latent_feature`` and r = ``latent_argmax(x, w)``; y is +-1:

    * ``latent-argmax-status``: r is exact with a structure; ``latent-argmax-score``:
      ``r.score == w·Φ(x, r.structure)``;
    * with ``enumerate``: ``latent-argmax-maximum``: ``r.score == max_h w·Φ(x, h)`` (the
      latent completion is a maximum);
    * ``latent-batch``: ``latent_argmax_batch(X, w)`` gives the single decodes' scores, each
      consistent with its structure, and ``decision_batch`` equals them, on X and on a
      reordered ``subset(X, idx)``;
    * ``heuristic-decode`` (if also heuristic): ``latent_argmax(x, heuristic_weights())`` is
      exact and consistent.

    random-ties: ``random-ties``: ``argmax`` / ``latent_argmax`` with ``random_state`` is
    exact, consistent, and (a maximum) scores as much as the deterministic decode.

    heuristic: ``heuristic-weights``: ``heuristic_weights()`` is a finite float vector of
    length ``n_features``.

    sized: ``example-size``: ``example_size(x)`` is a non-negative int.

    marginalizable, with lz = ``log_partition(x, w)``:

    * ``log-partition``: lz is a float, not NaN; ``log-partition-bound``: lz is not below the
      score of any structure decoded for x (a log-sum-exp is at least its largest term);
    * ``expected-feature``: ``expected_feature(x, w)`` is a finite vector of length
      ``n_features``;
    * with ``enumerate`` (structures scored by Φ of the task's max-decodable, latent-binary
      or candidate-list capability): ``log-partition-enumeration``: lz == log Σ_s exp(w·Φ(s));
      ``expected-feature-enumeration``: the expectation equals Σ_s p(s) Φ(s).

    candidate-list, with lz_j = ``candidate_log_partitions(x, w)``:

    * ``candidate-log-partitions``: a 1-d array without NaN; log Σ_j exp(lz_j) equals
      ``log_partition`` (if marginalizable);
    * ``candidate-max-product``: one exact DecodeResult per candidate, each score <= lz_j;
    * ``candidate-expected-features``: ``candidate_expected_features(x, w, c)`` with
      c = p(t_j | x) reports log_partitions lz and features equal to ``expected_feature``
      (if marginalizable), the same dense and ``sparse=True``;
    * with ``enumerate`` of (j, h): ``candidate-log-partitions-enumeration`` (lz_j equals
      log Σ_h exp(w·Φ(t_j, h))), ``candidate-max-product-maximum`` and
      ``candidate-max-product-score`` (the max-product score is max_h w·Φ(t_j, h), attained
      by its structure).

    Tasks whose ``argmax_is_maximum()`` is False (decode-then-vote) skip every check that
    needs a maximum (``*-maximum``, ``*-not-below-*``, random ties scoring as the
    deterministic decode, the batch forms agreeing in score); the score-consistency checks
    still run.

    Not checked: label-factored, k-best and explainable (their methods are called by one
    learner or command each, in task-specific layouts; test them with the task).

    Persistence (every task), as a model file and a process worker see the task:

    * ``state-json``: ``get_params()`` and the state of ``get_state()`` survive
      ``json.loads(json.dumps(...))`` (numpy scalars allowed, as the model file converts
      them), and its arrays are a dict of non-object numpy arrays;
    * ``state-round-trip``: ``type(task).from_state(params_from_file(params), state,
      arrays)`` (from the JSON copies) is fitted, has the same ``n_features``, and on every
      example and weight vector gives the same feature vectors (Φ(x, y), Φ(x, h) of the
      decoded h) and scores (argmax, loss-augmented argmax, latent argmax, log-partition,
      candidate log-partitions) as the original, on the original's featurised examples
      and, for a Dataset, on its own featurisation of the records;
    * ``pickle-round-trip``: the same for ``pickle.loads(pickle.dumps(task))``.

    Example (a latent task: bags of vectors, the hidden h picks one)::

        from latentstruct.testing import check_task, make_bag_problem

        task, X, y = make_bag_problem(n_examples=6, bag_size=3)
        report = check_task(task, list(zip(X, y)), enumerate=lambda x: range(len(x)))
        assert "latent-argmax-maximum" in report.checks
    """
    checker = _Checker(task, n_weights, random_state, atol, rtol, enumerate)
    pairs, X, Y, dataset = _examples(task, examples, checker.caps)
    return checker.run(pairs, X, Y, dataset)


# ----------------------------------------------------------------------------------------
# arguments and examples
# ----------------------------------------------------------------------------------------
def _check_arguments(task, n_weights, atol, rtol, enumerate) -> None:
    if not isinstance(task, Task):
        raise TypeError(f"check_task needs a Task instance (a fitted task object), got "
                        f"{type(task).__name__}")
    if isinstance(n_weights, bool) or not isinstance(n_weights, numbers.Integral) or n_weights < 1:
        raise ValueError(f"n_weights must be a positive int, got {n_weights!r}")
    for name, value in (("atol", atol), ("rtol", rtol)):
        if not isinstance(value, numbers.Real) or not value >= 0:
            raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    if enumerate is not None and not callable(enumerate):
        raise TypeError(f"enumerate must be None or a callable x -> iterable of structures, got "
                        f"{type(enumerate).__name__}")
    if not task.is_fitted():
        raise NotFittedError(
            f"check_task needs a fitted task: {type(task).__name__} (task {task.name!r}) is not "
            "fitted; call task.fit(dataset) first (task.is_fitted() must be True)")


def _examples(task, examples, caps):
    """(pairs [(x, y)], batch X, targets Y, dataset or None)."""
    if isinstance(examples, Dataset):
        X = task.as_batch(task.featurize(examples))
        Y = task.encode_targets(examples.targets)
        if len(X) != len(Y):
            raise ValueError(f"the dataset featurises to {len(X)} examples but has {len(Y)} "
                             "targets; a Dataset needs one target per record")
        pairs = [(X[i], Y[i]) for i in range(len(X))]
        dataset = examples
    else:
        if isinstance(examples, (str, bytes)) or not isinstance(examples, Iterable):
            raise TypeError(
                "examples must be a Dataset (raw records and targets) or a sequence of (x, y) "
                f"pairs (x featurised, y the encoded target), got {type(examples).__name__}")
        pairs = []
        for i, item in enumerate(examples):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                what = (f"a {type(item).__name__} of length {len(item)}"
                        if isinstance(item, (tuple, list)) else f"a {type(item).__name__}")
                raise TypeError(
                    f"examples[{i}] is {what}; expected an (x, y) pair: x one featurised example "
                    "(e.g. X[i] of task.featurize(dataset)), y its encoded target "
                    "(task.encode_targets)")
            pairs.append((item[0], item[1]))
        dataset = None
        X = task.as_batch([x for x, _ in pairs]) if pairs else None
        Y = [y for _, y in pairs]
    if not pairs:
        raise ValueError("check_task needs at least one example; got none")
    for i, (_, y) in enumerate(pairs):
        if MAX_DECODABLE in caps and y is None:
            raise ValueError(
                f"example {i} has no target (y is None); a max-decodable task is checked on "
                "labelled examples (the loss and the loss-augmented argmax need y)")
        if LATENT_BINARY in caps and MAX_DECODABLE not in caps:
            ok = np.ndim(y) == 0 and isinstance(np.asarray(y).item(), numbers.Real) \
                and float(np.asarray(y).item()) in (-1.0, 1.0)
            if not ok:
                raise ValueError(
                    f"example {i} has target {y!r}; a latent-binary task's targets are +1 or -1 "
                    "(the binary label; the hidden structure is never given)")
    return pairs, X, Y, dataset


def _json_scalar(value):
    """``json.dumps`` default: numpy scalars as the model file stores them."""
    if isinstance(value, (np.bool_, np.integer, np.floating, np.str_)):
        return value.item()
    raise TypeError(f"{type(value).__module__}.{type(value).__qualname__} object {value!r} is "
                    "not JSON-serialisable")


def _softmax(scores: np.ndarray) -> np.ndarray:
    return np.exp(scores - logsumexp(scores))


# ----------------------------------------------------------------------------------------
# the enumeration of one example
# ----------------------------------------------------------------------------------------
@dataclass
class _Enumerated:
    structures: list
    joint: sp.csr_matrix | None = None  # Φ(x, s) rows of a max-decodable task
    losses: np.ndarray | None = None  # Δ(y, s)
    latent: sp.csr_matrix | None = None  # Φ(x, h) rows of a latent-binary task
    candidate: sp.csr_matrix | None = None  # Φ(t_j, h) rows of a candidate-list task
    groups: np.ndarray | None = None  # j of each (j, h)

    def primary(self) -> sp.csr_matrix:
        """The rows that the marginalizable sums run over (the first feature map built)."""
        return next(m for m in (self.joint, self.latent, self.candidate) if m is not None)


# ----------------------------------------------------------------------------------------
# the checker
# ----------------------------------------------------------------------------------------
class _Checker:
    def __init__(self, task, n_weights, random_state, atol, rtol, enumerate):
        _check_arguments(task, n_weights, atol, rtol, enumerate)
        self.task = task
        self.caps = frozenset(type(task).offered_capabilities(task.get_params()))
        self.n_weights = int(n_weights)
        self.random_state = random_state
        self.rng = (random_state if isinstance(random_state, np.random.Generator)
                    else np.random.default_rng(random_state))
        self.atol, self.rtol = float(atol), float(rtol)
        self.enumerate = enumerate
        self.maximal = bool(task.argmax_is_maximum())
        self.ran: dict[str, None] = {}
        self.max_err = 0.0

    # --- bookkeeping ---------------------------------------------------------------------
    def where(self, i=None, k=None) -> str:
        if i is None:
            return f"task {type(self.task).__name__}"
        if k is None:
            return f"example {i}"
        return f"example {i}, weights {k} (random_state={self.random_state!r})"

    def mark(self, name: str) -> None:
        self.ran.setdefault(name, None)

    def fail(self, name: str, where: str, message: str):
        raise AssertionError(f"check_task: {where}: {message} [check {name!r}]")

    def tol(self, a: float, b: float) -> float:
        return self.atol + self.rtol * max(abs(a), abs(b))

    def close(self, a, b) -> bool:
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return False
        if math.isinf(a) or math.isinf(b):
            return a == b
        self.max_err = max(self.max_err, abs(a - b))
        return abs(a - b) <= self.tol(a, b)

    def expect_close(self, name, where, a, b, message: Callable[[], str]) -> None:
        self.mark(name)
        if not self.close(a, b):
            self.fail(name, where, message())

    def expect_not_below(self, name, where, a, b, message: Callable[[], str]) -> None:
        """``a >= b`` up to the tolerance."""
        self.mark(name)
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b) or (a < b and not self.close(a, b)):
            self.fail(name, where, message())

    def expect_arrays_close(self, name, where, a, b, message: Callable[[float], str]) -> None:
        self.mark(name)
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            self.fail(name, where, message(math.inf) + f" (shapes {a.shape} and {b.shape})")
        if a.size == 0:
            return
        both_inf = np.isinf(a) & np.isinf(b) & (a == b)
        diff = np.where(both_inf, 0.0, np.abs(a - b))
        bound = self.atol + self.rtol * np.maximum(np.abs(a), np.abs(b))
        worst = float(np.max(np.where(np.isnan(diff), np.inf, diff)))
        if np.isfinite(worst):
            self.max_err = max(self.max_err, worst)
        if not np.all(np.where(both_inf, True, diff <= bound)):
            self.fail(name, where, message(worst))

    # --- reading the task's answers ------------------------------------------------------
    def decoded(self, name: str, where: str, what: str, res) -> DecodeResult:
        self.mark(name)
        if not isinstance(res, DecodeResult):
            self.fail(name, where, f"{what} returned {type(res).__name__}, expected a DecodeResult")
        if res.status != EXACT:
            self.fail(name, where, f"{what} returned status {res.status!r}, expected 'exact' "
                      f"(stats {res.stats}); learners refuse non-exact decodes under "
                      "check_inference")
        if res.structure is None:
            self.fail(name, where, f"{what} returned no structure (None)")
        return res

    def sparse(self, where: str, what: str, vec) -> SparseVector:
        self.mark("feature-indices")
        if not isinstance(vec, SparseVector):
            self.fail("feature-indices", where,
                      f"{what} returned {type(vec).__name__}, expected a SparseVector")
        n = self.task.n_features
        if vec.indices.size and (vec.indices.min() < 0 or vec.indices.max() >= n):
            self.fail("feature-indices", where,
                      f"{what} has feature indices in [{vec.indices.min()}, {vec.indices.max()}], "
                      f"outside 0..n_features-1 = 0..{n - 1}")
        return vec

    def dot(self, where: str, what: str, vec, w) -> float:
        return self.sparse(where, what, vec).dot(w)

    def joint_score(self, where: str, x, s, w) -> float:
        """w·joint_feature(x, s)."""
        return self.dot(where, "joint_feature(x, structure)", self.task.joint_feature(x, s), w)

    def latent_score(self, where: str, x, h, w) -> float:
        """w·latent_feature(x, h)."""
        return self.dot(where, "latent_feature(x, h)", self.task.latent_feature(x, h), w)

    def loss(self, where: str, y, s, what: str) -> float:
        self.mark("loss-nonnegative")
        value = self.task.loss(y, s)
        try:
            value = float(value)
        except (TypeError, ValueError):
            self.fail("loss-nonnegative", where,
                      f"loss(y, {what}) returned {value!r}, not a number")
        if not (math.isfinite(value) and value >= 0.0):
            self.fail("loss-nonnegative", where,
                      f"loss(y, {what}) = {value!r}; a loss is finite and >= 0 (y = {y!r}, "
                      f"{what} = {s!r})")
        return value

    # --- the run -------------------------------------------------------------------------
    def run(self, pairs, X, Y, dataset) -> TaskCheckReport:
        self.check_declaration()
        n = self.task.n_features
        weights = []
        for k in range(self.n_weights):
            if k % 2 == 0:
                weights.append(self.rng.normal(size=n))
            else:
                weights.append(self.rng.integers(-2, 3, size=n).astype(np.float64))
        heuristic = None
        if HEURISTIC in self.caps:
            with _noted("check_task: raised while calling heuristic_weights()"):
                heuristic = self.check_heuristic_weights()
        plain = np.full((len(pairs), self.n_weights), np.nan)
        augmented = np.full((len(pairs), self.n_weights), np.nan)
        latent = np.full((len(pairs), self.n_weights), np.nan)
        latent_h: dict[tuple[int, int], Any] = {}
        for i, (x, y) in enumerate(pairs):
            with _noted(f"check_task: raised while checking {self.where(i)}"):
                self.check_example(i, x, y)
                enum = self.enumerated(i, x, y) if self.enumerate is not None else None
            for k, w in enumerate(weights):
                where = self.where(i, k)
                with _noted(f"check_task: raised while checking {where}"):
                    known = []  # scores of decoded structures (log Z is not below them)
                    if MAX_DECODABLE in self.caps:
                        plain[i, k], augmented[i, k] = self.check_max_decodable(i, k, x, y, w, enum)
                        known.append(plain[i, k])
                    if LATENT_BINARY in self.caps:
                        res = self.check_latent(i, k, x, w, enum)
                        latent[i, k], latent_h[i, k] = res.score, res.structure
                        known.append(latent[i, k])
                    if CANDIDATE_LIST in self.caps:
                        known.extend(self.check_candidate_list(i, k, x, w, enum))
                    if MARGINALIZABLE in self.caps:
                        self.check_marginalizable(i, k, x, w, enum, known)
            if heuristic is not None:
                with _noted(f"check_task: raised while checking {self.where(i)} with the "
                            "heuristic weights"):
                    self.check_heuristic_decode(i, x, heuristic)
        for k, w in enumerate(weights):
            with _noted(f"check_task: raised while checking the batch forms with weights {k}"):
                if MAX_DECODABLE in self.caps:
                    self.check_argmax_batch(k, pairs, X, Y, w, plain[:, k], augmented[:, k])
                if LATENT_BINARY in self.caps:
                    self.check_latent_batch(k, pairs, X, w, latent[:, k])
        self.check_state(pairs, dataset, weights, latent_h)
        return TaskCheckReport(len(pairs), self.n_weights, tuple(self.ran), float(self.max_err))

    # --- every task ------------------------------------------------------------------------
    def check_declaration(self) -> None:
        task, where = self.task, self.where()
        self.mark("capabilities-implemented")
        missing = missing_methods(type(task), _ABSTRACT)
        if missing:
            listed = "; ".join(f"{cap}: {', '.join(methods)}" for cap, methods in missing.items())
            self.fail("capabilities-implemented", where,
                      f"declares capabilities whose methods it does not implement ({listed}); "
                      "implement them or drop the capability from `capabilities`")
        self.mark("fitted")
        if not task.is_fitted():  # pragma: no cover - refused earlier as misuse
            self.fail("fitted", where, "task.is_fitted() is False")
        self.mark("n-features")
        n = task.n_features
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            self.fail("n-features", where, f"n_features is {n!r}; expected a positive int")

    def check_example(self, i, x, y) -> None:
        where = self.where(i)
        if SIZED in self.caps:
            self.mark("example-size")
            size = self.task.example_size(x)
            if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
                self.fail("example-size", where,
                          f"example_size(x) is {size!r}; expected a non-negative int")
        if MAX_DECODABLE in self.caps:
            self.mark("loss-gold-zero")
            zero = self.task.loss(y, y)
            if not (isinstance(zero, numbers.Real) and abs(float(zero)) <= self.atol):
                self.fail("loss-gold-zero", where,
                          f"loss(y, y) = {zero!r}, expected 0 (a structure has no loss against "
                          f"itself; y = {y!r})")

    def check_heuristic_weights(self) -> np.ndarray:
        where, n = self.where(), self.task.n_features
        self.mark("heuristic-weights")
        hw = self.task.heuristic_weights()
        arr = np.asarray(hw)
        if not isinstance(hw, np.ndarray) or arr.dtype.kind != "f" or arr.shape != (n,) \
                or not np.all(np.isfinite(arr)):
            desc = (f"a {arr.dtype} array of shape {arr.shape}" if isinstance(hw, np.ndarray)
                    else f"a {type(hw).__name__}")
            bad = "" if not (isinstance(hw, np.ndarray) and arr.dtype.kind == "f") \
                else f", {int(np.sum(~np.isfinite(arr)))} not finite"
            self.fail("heuristic-weights", where,
                      f"heuristic_weights() returned {desc}{bad}; expected a finite float array "
                      f"of shape ({n},)")
        return arr.astype(np.float64)

    def check_heuristic_decode(self, i, x, hw) -> None:
        where = self.where(i) + " (heuristic_weights())"
        if LATENT_BINARY in self.caps:
            r = self.decoded("heuristic-decode", where, "latent_argmax(x, heuristic_weights())",
                             self.task.latent_argmax(x, hw))
            s = self.latent_score(where, x, r.structure, hw)
            self.expect_close("heuristic-decode", where, r.score, s, lambda: (
                f"latent_argmax with the heuristic weights reports score {float(r.score)!r} but "
                f"w·latent_feature(x, h) = {s!r}"))
        if MAX_DECODABLE in self.caps:
            r = self.decoded("heuristic-decode", where, "argmax(x, heuristic_weights())",
                             self.task.argmax(x, hw))
            s = self.joint_score(where, x, r.structure, hw)
            self.expect_close("heuristic-decode", where, r.score, s, lambda: (
                f"argmax with the heuristic weights reports score {float(r.score)!r} but "
                f"w·joint_feature(x, structure) = {s!r}"))

    # --- enumeration -----------------------------------------------------------------------
    def enumerated(self, i, x, y) -> _Enumerated:
        task, n = self.task, self.task.n_features
        where = self.where(i) + " (enumerate)"
        if not {MAX_DECODABLE, LATENT_BINARY, CANDIDATE_LIST} & self.caps:
            raise TypeError(
                f"enumerate is used with max-decodable, latent-binary or candidate-list tasks "
                f"(it needs their feature map); {type(task).__name__} offers "
                f"{', '.join(sorted(self.caps)) or 'no capability'}; pass enumerate=None")
        structures = []
        for s in self.enumerate(x):
            structures.append(s)
            if len(structures) > MAX_ENUMERATED:
                raise ValueError(f"enumerate(x) of example {i} yielded more than {MAX_ENUMERATED} "
                                 "structures; check_task enumerates tiny examples only")
        if not structures:
            raise ValueError(f"enumerate(x) of example {i} yielded no structure; it must yield "
                             "every legal structure of x (at least one)")

        def matrix(what, vectors):
            rows = [self.sparse(where, what, v) for v in vectors]
            indptr = np.cumsum([0] + [r.nnz for r in rows])
            idx = np.concatenate([r.indices for r in rows]) if rows else np.zeros(0, np.int64)
            val = np.concatenate([r.values for r in rows]) if rows else np.zeros(0)
            return sp.csr_matrix((val, idx, indptr), shape=(len(rows), n))

        out = _Enumerated(structures)
        if MAX_DECODABLE in self.caps:
            out.joint = matrix("joint_feature(x, s)",
                               (task.joint_feature(x, s) for s in structures))
            out.losses = np.array([self.loss(where, y, s, "s") for s in structures])
        if LATENT_BINARY in self.caps:
            out.latent = matrix("latent_feature(x, h)",
                                (task.latent_feature(x, h) for h in structures))
        if CANDIDATE_LIST in self.caps and out.joint is None and out.latent is None:
            feature = getattr(task, "candidate_feature", None)
            if not callable(feature):
                raise TypeError(
                    f"enumerate for a candidate-list task yields (j, h) pairs scored by "
                    f"task.candidate_feature(x, j, h), which {type(task).__name__} does not "
                    "define; define it (Φ(t_j, h) as a SparseVector) or pass enumerate=None")
            groups = []
            for s in structures:
                if not isinstance(s, (tuple, list)) or len(s) != 2:
                    raise TypeError(f"enumerate(x) of example {i} yielded {s!r}; for a "
                                    "candidate-list task it yields (j, h) pairs: candidate j and "
                                    "its hidden assignment h")
                groups.append(int(s[0]))
            out.groups = np.array(groups, dtype=np.int64)
            out.candidate = matrix("candidate_feature(x, j, h)",
                                   (feature(x, int(j), h) for j, h in structures))
        return out

    # --- max-decodable ---------------------------------------------------------------------
    def check_max_decodable(self, i, k, x, y, w, enum) -> tuple[float, float]:
        task, where = self.task, self.where(i, k)
        r = self.decoded("argmax-status", where, "argmax(x, w)", task.argmax(x, w))
        s_plain = self.joint_score(where, x, r.structure, w)
        self.expect_close("argmax-score", where, r.score, s_plain, lambda: (
            f"argmax reports score {float(r.score)!r} but w·joint_feature(x, structure) = "
            f"{s_plain!r}; the decoder and joint_feature disagree (structure {r.structure!r})"))
        loss_plain = self.loss(where, y, r.structure, "argmax structure")

        a = self.decoded("loss-augmented-status", where, "argmax(x, w, y_true=y)",
                         task.argmax(x, w, y_true=y))
        s_aug = self.joint_score(where, x, a.structure, w)
        loss_aug = self.loss(where, y, a.structure, "loss-augmented structure")
        self.expect_close("loss-augmented-score", where, a.score, s_aug + loss_aug, lambda: (
            f"the loss-augmented argmax reports score {float(a.score)!r} but "
            f"w·joint_feature(x, ŷ) + loss(y, ŷ) = {s_aug!r} + {loss_aug!r} = "
            f"{s_aug + loss_aug!r}; it must report the augmented score of the structure it "
            f"returns (ŷ = {a.structure!r})"))
        s_gold = self.joint_score(where, x, y, w)
        if self.maximal:
            self.expect_not_below(
                "loss-augmented-not-below-plain", where, a.score, s_plain + loss_plain, lambda: (
                    f"the loss-augmented argmax scores {float(a.score)!r}, below the plain "
                    f"argmax's structure, whose augmented score is w·Φ + loss = {s_plain!r} + "
                    f"{loss_plain!r}; the loss-augmented argmax ignores (part of) the loss"))
            self.expect_not_below("loss-augmented-not-below-gold", where, a.score, s_gold, lambda: (
                f"the loss-augmented argmax scores {float(a.score)!r}, below the gold structure's "
                f"w·joint_feature(x, y) = {s_gold!r} (loss 0); learners need the maximum "
                "violation to be >= 0"))
            if enum is not None:
                scores = enum.joint @ w
                best = int(np.argmax(scores))
                self.expect_close("argmax-maximum", where, r.score, scores[best], lambda: (
                    f"argmax reports score {float(r.score)!r} but the best of the {len(scores)} "
                    f"enumerated structures scores {float(scores[best])!r} (structure "
                    f"{enum.structures[best]!r}); the argmax is not a maximum"))
                aug = scores + enum.losses
                best_a = int(np.argmax(aug))
                ref = max(float(aug[best_a]), s_gold)
                self.expect_close("loss-augmented-maximum", where, a.score, ref, lambda: (
                    f"the loss-augmented argmax reports score {float(a.score)!r} but the best "
                    f"w·Φ(x, s) + loss(y, s) over the {len(aug)} enumerated structures (and the "
                    f"gold structure, {s_gold!r}) is {ref!r} (structure "
                    f"{enum.structures[best_a]!r}, w·Φ {float(scores[best_a])!r}, loss "
                    f"{float(enum.losses[best_a])!r}); the loss-augmented argmax is not a maximum"))
        if RANDOM_TIES in self.caps:
            seed = i * self.n_weights + k
            rt = self.decoded("random-ties", where, f"argmax(x, w, random_state={seed})",
                              task.argmax(x, w, random_state=seed))
            s_rt = self.joint_score(where, x, rt.structure, w)
            self.expect_close("random-ties", where, rt.score, s_rt, lambda: (
                f"argmax(x, w, random_state={seed}) reports score {float(rt.score)!r} but "
                f"w·joint_feature(x, structure) = {s_rt!r}"))
            if self.maximal:
                self.expect_close("random-ties", where, rt.score, r.score, lambda: (
                    f"argmax(x, w, random_state={seed}) scores {float(rt.score)!r} but "
                    f"argmax(x, w) scores {float(r.score)!r}; breaking ties at random must not "
                    "change the maximum"))
        return float(r.score), float(a.score)

    def batch_where(self, k) -> str:
        return f"batch of all examples, weights {k} (random_state={self.random_state!r})"

    def check_argmax_batch(self, k, pairs, X, Y, w, plain, augmented) -> None:
        """The batch forms the learners call (SSVM, SGD SSVM and prediction use
        ``argmax_batch``, J-LIS ``argmax_results``; mini-batches come from ``subset``)."""
        task, where, n = self.task, self.batch_where(k), len(pairs)
        plain, augmented = [float(v) for v in plain], [float(v) for v in augmented]
        order = np.arange(n)[::-1]  # a reordered mini-batch
        results = task.argmax_results(X, w, Y)
        calls = [
            ("argmax_batch(X, w)", range(n), False, task.argmax_batch(X, w), None),
            ("argmax_batch(X, w, Y)", range(n), True, task.argmax_batch(X, w, Y), None),
            ("argmax_results(X, w, Y)", range(n), True, [r.structure for r in results], results),
            ("argmax_batch(subset(X, reversed), w, Y)", order, True,
             task.argmax_batch(task.subset(X, order), w, [Y[i] for i in order]), None),
        ]
        self.mark("argmax-batch")
        for what, idx, augment, structures, reported in calls:
            if len(structures) != n:
                self.fail("argmax-batch", where,
                          f"{what} returned {len(structures)} results for {n} examples")
            for pos, (i, s) in enumerate(zip(idx, structures)):
                x, y = pairs[i]
                score = self.joint_score(where, x, s, w)
                if augment:
                    score += self.loss(where, y, s, f"the structure of {what}")
                if reported is not None:
                    res = self.decoded("argmax-batch", f"{where}, example {i}", what,
                                       reported[pos])
                    self.expect_close("argmax-batch", where, res.score, score, lambda: (
                        f"{what} reports score {float(res.score)!r} for example {i} but its "
                        f"structure scores w·Φ + loss = {score!r}"))
                if self.maximal:
                    single = augmented[i] if augment else plain[i]
                    self.expect_close("argmax-batch", where, score, single, lambda: (
                        f"the structure {what} returns for example {i} scores {score!r} but the "
                        f"single decode ({'loss-augmented ' if augment else ''}argmax) scores "
                        f"{single!r}; the batch and single decoders disagree"))

    # --- latent-binary -----------------------------------------------------------------------
    def check_latent(self, i, k, x, w, enum) -> DecodeResult:
        task, where = self.task, self.where(i, k)
        r = self.decoded("latent-argmax-status", where, "latent_argmax(x, w)",
                         task.latent_argmax(x, w))
        s = self.latent_score(where, x, r.structure, w)
        self.expect_close("latent-argmax-score", where, r.score, s, lambda: (
            f"latent_argmax reports score {float(r.score)!r} but w·latent_feature(x, h) = "
            f"{s!r}; the decoder and latent_feature disagree (h = {r.structure!r})"))
        if self.maximal and enum is not None:
            scores = enum.latent @ w
            best = int(np.argmax(scores))
            self.expect_close("latent-argmax-maximum", where, r.score, scores[best], lambda: (
                f"latent_argmax reports score {float(r.score)!r} (h = {r.structure!r}) but the "
                f"best of the {len(scores)} enumerated structures scores "
                f"{float(scores[best])!r} (h = {enum.structures[best]!r}); the latent completion "
                "is not a maximum"))
        if RANDOM_TIES in self.caps:
            seed = i * self.n_weights + k
            rt = self.decoded("random-ties", where, f"latent_argmax(x, w, random_state={seed})",
                              task.latent_argmax(x, w, random_state=seed))
            s_rt = self.latent_score(where, x, rt.structure, w)
            self.expect_close("random-ties", where, rt.score, s_rt, lambda: (
                f"latent_argmax(x, w, random_state={seed}) reports score {float(rt.score)!r} but "
                f"w·latent_feature(x, h) = {s_rt!r}"))
            if self.maximal:
                self.expect_close("random-ties", where, rt.score, r.score, lambda: (
                    f"latent_argmax(x, w, random_state={seed}) scores {float(rt.score)!r} but "
                    f"latent_argmax(x, w) scores {float(r.score)!r}; breaking ties at random "
                    "must not change the maximum"))
        return r

    def check_latent_batch(self, k, pairs, X, w, single) -> None:
        """The batch forms the latent learners call (``latent_argmax_batch``,
        ``decision_batch``, on ``subset`` mini-batches too)."""
        task, where, n = self.task, self.batch_where(k), len(pairs)
        single = [float(v) for v in single]
        self.mark("latent-batch")
        results = task.latent_argmax_batch(X, w)
        if len(results) != n:
            self.fail("latent-batch", where,
                      f"latent_argmax_batch returned {len(results)} results for {n} examples")
        for i, res in enumerate(results):
            self.decoded("latent-batch", where + f", example {i}", "latent_argmax_batch(X, w)", res)
            s = self.dot(where, "latent_feature(x, h)",
                         task.latent_feature(pairs[i][0], res.structure), w)
            self.expect_close("latent-batch", where, res.score, s, lambda: (
                f"latent_argmax_batch reports score {float(res.score)!r} for example {i} but "
                f"w·latent_feature(x, h) = {s!r}"))
            if self.maximal:
                self.expect_close("latent-batch", where, res.score, single[i], lambda: (
                    f"latent_argmax_batch scores example {i} {float(res.score)!r} but "
                    f"latent_argmax scores it {single[i]!r}; the batch and single decoders "
                    "disagree"))
        scores = [float(r.score) for r in results]
        order = np.arange(n)[::-1]  # a reordered mini-batch
        for what, got, ref in (
                ("decision_batch(X, w)", task.decision_batch(X, w), scores),
                ("decision_batch(subset(X, reversed), w)",
                 task.decision_batch(task.subset(X, order), w), [scores[i] for i in order])):
            got = np.asarray(got, dtype=np.float64)
            if got.shape != (n,):
                self.fail("latent-batch", where,
                          f"{what} returned shape {got.shape}, expected ({n},)")
            self.expect_arrays_close("latent-batch", where, got, ref, lambda worst: (
                f"{what} differs from the scores of latent_argmax_batch by up to {worst!r}: "
                f"{got.tolist()} vs {ref}"))

    # --- marginalizable and candidate-list -------------------------------------------------
    def check_marginalizable(self, i, k, x, w, enum, known) -> None:
        task, where, n = self.task, self.where(i, k), self.task.n_features
        self.mark("log-partition")
        lz = task.log_partition(x, w)
        if not isinstance(lz, numbers.Real) or math.isnan(float(lz)):
            self.fail("log-partition", where, f"log_partition returned {lz!r}; expected a float")
        lz = float(lz)
        for s in known:
            self.expect_not_below("log-partition-bound", where, lz, s, lambda: (
                f"log_partition = {lz!r} is below {float(s)!r}, the score of a decoded "
                "structure; a log-sum-exp over all structures is never below one of its terms"))
        self.mark("expected-feature")
        ef = task.expected_feature(x, w)
        if isinstance(ef, SparseVector):
            ef = self.sparse(where, "expected_feature", ef).to_dense(n)
        ef = np.asarray(ef)
        if ef.shape != (n,) or ef.dtype.kind not in "fiu" or not np.all(np.isfinite(ef)):
            self.fail("expected-feature", where,
                      f"expected_feature returned a {ef.dtype} array of shape {ef.shape}; expected "
                      f"a finite float vector of length n_features = {n}")
        if enum is not None:
            M = enum.primary()
            scores = M @ w
            ref = float(logsumexp(scores))
            self.expect_close("log-partition-enumeration", where, lz, ref, lambda: (
                f"log_partition = {lz!r} but log Σ exp(w·Φ) over the {len(scores)} enumerated "
                f"structures = {ref!r}"))
            expected = M.T @ _softmax(scores)
            self.expect_arrays_close("expected-feature-enumeration", where, ef, expected,
                                     lambda worst: (
                f"expected_feature differs from Σ_s p(s) Φ(x, s) over the enumeration by up to "
                f"{worst!r}"))

    def check_candidate_list(self, i, k, x, w, enum) -> list[float]:
        task, where, n = self.task, self.where(i, k), self.task.n_features
        self.mark("candidate-log-partitions")
        lzs = np.asarray(task.candidate_log_partitions(x, w), dtype=np.float64)
        if lzs.ndim != 1 or lzs.size == 0 or np.isnan(lzs).any():
            self.fail("candidate-log-partitions", where,
                      f"candidate_log_partitions returned {lzs!r}; expected a non-empty 1-d float "
                      "array without NaN (one log Z_j per candidate)")
        if MARGINALIZABLE in self.caps:
            lz = float(task.log_partition(x, w))
            total = float(logsumexp(lzs))
            self.expect_close("candidate-log-partitions", where, lz, total, lambda: (
                f"log_partition = {lz!r} but log Σ_j exp(candidate_log_partitions) = {total!r}"))
        self.mark("candidate-max-product")
        mp = list(task.candidate_max_product(x, w))
        if len(mp) != lzs.size:
            self.fail("candidate-max-product", where,
                      f"candidate_max_product returned {len(mp)} results for {lzs.size} candidates")
        for j, r in enumerate(mp):
            self.decoded("candidate-max-product", where + f", candidate {j}",
                         "candidate_max_product", r)
            self.expect_not_below("candidate-max-product", where, lzs[j], r.score, lambda: (
                f"the max-product score of candidate {j} is {float(r.score)!r}, above its "
                f"log-partition {float(lzs[j])!r}; a maximum is never above the log-sum-exp"))
        # what the hidden-variable reranker asks for: coefficients from the log Z_j
        coef = _softmax(lzs)
        dense = task.candidate_expected_features(x, w, lambda lz_: _softmax(np.asarray(lz_)))
        sparse = task.candidate_expected_features(x, w, coef, sparse=True)
        self.expect_arrays_close("candidate-expected-features", where, dense.log_partitions, lzs,
                                 lambda worst: (
            f"candidate_expected_features reports log_partitions "
            f"{np.asarray(dense.log_partitions).tolist()} but candidate_log_partitions gives "
            f"{lzs.tolist()}"))
        feats = np.asarray(dense.features, dtype=np.float64)
        sfeats = self.sparse(where, "candidate_expected_features(sparse=True).features",
                             sparse.features).to_dense(n)
        self.expect_arrays_close("candidate-expected-features", where, sfeats, feats,
                                 lambda worst: (
            f"candidate_expected_features with sparse=True differs from the dense form by up "
            f"to {worst!r}"))
        if MARGINALIZABLE in self.caps:
            ef = task.expected_feature(x, w)
            if isinstance(ef, SparseVector):
                ef = ef.to_dense(n)
            self.expect_arrays_close("candidate-expected-features", where, feats, ef,
                                     lambda worst: (
                f"Σ_j p(t_j) F(t_j) from candidate_expected_features differs from "
                f"expected_feature by up to {worst!r}"))
        if enum is not None and enum.candidate is not None:
            scores = enum.candidate @ w
            for j in range(lzs.size):
                mask = enum.groups == j
                if not mask.any():
                    raise ValueError(f"enumerate(x) of example {i} yielded no (j, h) pair for "
                                     f"candidate {j}; it must yield every hidden assignment of "
                                     "every candidate")
                ref = float(logsumexp(scores[mask]))
                self.expect_close("candidate-log-partitions-enumeration", where, lzs[j], ref,
                                  lambda: (
                    f"candidate_log_partitions[{j}] = {float(lzs[j])!r} but "
                    f"log Σ_h exp(w·Φ(t_j, h)) over the enumeration = {ref!r}"))
                best = float(scores[mask].max())
                r = mp[j]
                self.expect_close("candidate-max-product-maximum", where, r.score, best, lambda: (
                    f"candidate_max_product scores candidate {j} {float(r.score)!r} but the best "
                    f"enumerated hidden assignment scores {best!r}; the max-product is not a "
                    "maximum"))
                s = self.dot(where, "candidate_feature(x, j, h)",
                             task.candidate_feature(x, j, r.structure), w)
                self.expect_close("candidate-max-product-score", where, r.score, s, lambda: (
                    f"candidate_max_product reports score {float(r.score)!r} for candidate {j} but "
                    f"w·candidate_feature(x, j, h) = {s!r} (h = {r.structure!r})"))
        return [float(r.score) for r in mp]

    # --- persistence ---------------------------------------------------------------------------
    def signature(self, task, x, y, w, h) -> list[tuple[str, Any]]:
        """What a restored task must reproduce on one example: feature vectors and scores."""
        out: list[tuple[str, Any]] = []
        if MAX_DECODABLE in self.caps:
            out.append(("joint_feature(x, y)", task.joint_feature(x, y)))
            out.append(("argmax score", task.argmax(x, w).score))
            out.append(("loss-augmented argmax score", task.argmax(x, w, y_true=y).score))
        if LATENT_BINARY in self.caps:
            out.append(("latent_feature(x, h)", task.latent_feature(x, h)))
            out.append(("latent_argmax score", task.latent_argmax(x, w).score))
        if MARGINALIZABLE in self.caps:
            out.append(("log_partition", task.log_partition(x, w)))
        if CANDIDATE_LIST in self.caps:
            out.append(("candidate_log_partitions",
                        np.asarray(task.candidate_log_partitions(x, w), dtype=np.float64)))
        return out

    def compare(self, name, where, how, mine, theirs) -> None:
        self.mark(name)
        for (label, a), (_, b) in zip(mine, theirs):
            if isinstance(a, SparseVector):
                if not isinstance(b, SparseVector):
                    self.fail(name, where,
                              f"{how}: {label} is a {type(b).__name__}, not a SparseVector")
                a, b = a.coalesce(), b.coalesce()
                if not np.array_equal(a.indices, b.indices):
                    self.fail(name, where, (
                        f"{how}: {label} has other feature indices than the original's "
                        f"({b.indices[:10].tolist()}... vs {a.indices[:10].tolist()}...); the "
                        "restored task maps the example to other features"))
                self.expect_arrays_close(name, where, b.values, a.values, lambda worst: (
                    f"{how}: {label} differs from the original's by up to {worst!r}"))
            elif isinstance(a, np.ndarray):
                self.expect_arrays_close(name, where, b, a, lambda worst: (
                    f"{how}: {label} differs from the original's by up to {worst!r}: "
                    f"{np.asarray(b).tolist()} vs {a.tolist()}"))
            else:
                self.expect_close(name, where, b, a, lambda: (
                    f"{how}: {label} is {b!r}, the original's is {a!r}"))

    def check_restored(self, name, how, restored, pairs, dataset, weights, latent_h) -> None:
        task = self.task
        where = self.where()
        self.mark(name)
        if type(restored) is not type(task):
            self.fail(name, where, f"{how} gave a {type(restored).__name__}, expected a "
                      f"{type(task).__name__}")
        if not restored.is_fitted():
            self.fail(name, where, f"{how} gave a task that is not fitted (is_fitted() is False)")
        if restored.n_features != task.n_features:
            self.fail(name, where, f"{how} gave a task with n_features = {restored.n_features!r}, "
                      f"the original has {task.n_features!r}")
        theirs_pairs = [pairs]
        if dataset is not None:
            X2 = restored.as_batch(restored.featurize(dataset))
            Y2 = restored.encode_targets(dataset.targets)
            if len(X2) != len(pairs):
                self.fail(name, where, f"{how}: the restored task featurises the dataset to "
                          f"{len(X2)} examples, the original to {len(pairs)}")
            theirs_pairs.append([(X2[i], Y2[i]) for i in range(len(X2))])
        for j, other in enumerate(theirs_pairs):
            label = how if j == 0 else f"{how}, on its own featurisation of the dataset"
            for i, ((x, y), (x2, y2)) in enumerate(zip(pairs, other)):
                for k, w in enumerate(weights):
                    where = self.where(i, k)
                    with _noted(f"check_task: raised while checking {where} ({label})"):
                        h = latent_h.get((i, k))
                        mine = self.signature(task, x, y, w, h)
                        theirs = self.signature(restored, x2, y2, w, h)
                        self.compare(name, where, label, mine, theirs)

    def check_state(self, pairs, dataset, weights, latent_h) -> None:
        task, where = self.task, self.where()
        cls = type(task)
        with _noted("check_task: raised while checking the task's state (get_state/from_state)"):
            params = task.get_params()
            got = task.get_state()
            self.mark("state-json")
            if not isinstance(got, tuple) or len(got) != 2:
                self.fail("state-json", where, f"get_state() returned {type(got).__name__}; "
                          "expected a (state dict, arrays dict) pair")
            state, arrays = got
            try:
                text = json.dumps({"params": params, "state": state}, default=_json_scalar)
            except (TypeError, ValueError) as exc:
                self.fail("state-json", where, (
                    f"get_params() or the state of get_state() is not JSON-serialisable ({exc}); "
                    "a model file stores them as JSON: keep dicts, lists, strings, numbers, "
                    "booleans and None there and put arrays in the arrays dict"))
            loaded = json.loads(text)
            if not isinstance(arrays, dict) or not all(
                    isinstance(key, str) and isinstance(v, np.ndarray) and v.dtype.kind != "O"
                    for key, v in arrays.items()):
                self.fail("state-json", where, (
                    "the arrays of get_state() must be a dict of str -> numpy arrays without "
                    f"object dtype (a model file stores them in .npz); got {_describe(arrays)}"))
            arrays = {key: np.array(v) for key, v in arrays.items()}
            restored = cls.from_state(cls.params_from_file(loaded["params"]), loaded["state"],
                                      arrays)
        self.check_restored("state-round-trip", "from_state(get_state())", restored, pairs,
                            dataset, weights, latent_h)
        self.mark("pickle-round-trip")
        try:
            copy = pickle.loads(pickle.dumps(task))
        except Exception as exc:  # any pickling failure is the finding
            self.fail("pickle-round-trip", where, (
                f"the task does not survive pickle.loads(pickle.dumps(task)): "
                f"{type(exc).__name__}: {exc}; learners ship tasks to process workers by pickle"))
        self.check_restored("pickle-round-trip", "pickle.loads(pickle.dumps(task))", copy, pairs,
                            dataset, weights, latent_h)


def _describe(arrays) -> str:
    if not isinstance(arrays, dict):
        return f"a {type(arrays).__name__}"
    parts = []
    for key, v in list(arrays.items())[:5]:
        kind = f"{v.dtype} array" if isinstance(v, np.ndarray) else type(v).__name__
        parts.append(f"{key!r}: {kind}")
    return "{" + ", ".join(parts) + (", ...}" if len(arrays) > 5 else "}")


class _noted:
    """Context manager adding a note (which example, which weights) to a task's exception;
    the exception itself propagates unchanged.  Check failures carry their own context."""

    def __init__(self, note: str):
        self.note = note

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and not isinstance(exc, AssertionError) and isinstance(exc, Exception):
            exc.add_note(self.note)
        return False
