"""Check a task against the capabilities it declares: :func:`check_task`.

``check_decoder`` checks one decoder against brute force; ``check_task`` checks a whole task
(its decoders, feature maps, loss, sums and persistence) the way the learners use it, so that
anyone writing their own latent structure can see, before training, whether a learner can
trust it.  Both are re-exported by :mod:`latentstruct.testing`.

This module holds the public :func:`check_task` and :class:`TaskCheckReport`, the handling of
its arguments and examples (and of their enumerations), and the order in which the checks
run.  The checks themselves live in :mod:`latentstruct.testing.capabilities` (one per
capability) and :mod:`latentstruct.testing.state` (the state round trip and the trip to a process worker).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from latentstruct.exceptions import check_is_fitted
from .capabilities import CapabilityChecker, noted
from .state import check_state
from latentstruct.tasks.base import Dataset, Task
from latentstruct.tasks.contracts import (
    CANDIDATE_LIST,
    CLASS_POSTERIOR,
    HEURISTIC,
    LATENT_BINARY,
    MARGINALIZABLE,
    MAX_DECODABLE,
)

__all__ = ["check_task", "TaskCheckReport", "MAX_ENUMERATED", "ChecksSkippedWarning",
           "ENUMERATION_CHECKS"]

#: most structures an ``enumerate`` callable may yield for one example: 100,000 (keep the
#: enumerated instances tiny; ``check_task`` refuses an enumeration that yields more)
MAX_ENUMERATED = 100_000

#: capability -> the checks that compare with ``enumerate``'s brute force, skipped without it
#: (the ``*-maximum`` ones also when ``argmax_is_maximum()`` is False: nothing to compare)
ENUMERATION_CHECKS: dict[str, tuple[str, ...]] = {
    MAX_DECODABLE: ("argmax-maximum", "loss-augmented-maximum"),
    LATENT_BINARY: ("latent-argmax-maximum",),
    MARGINALIZABLE: ("log-partition-enumeration", "expected-feature-enumeration"),
    CANDIDATE_LIST: ("candidate-log-partitions-enumeration", "candidate-max-product-maximum",
                     "candidate-max-product-score"),
    CLASS_POSTERIOR: ("class-log-partitions-enumeration", "log-loss-gradient-enumeration"),
}


class ChecksSkippedWarning(UserWarning):
    """``check_task`` skipped checks (named in the message and in ``report.skipped``)
    because no ``enumerate`` was given."""


@dataclass(frozen=True)
class TaskCheckReport:
    """Summary of a passing :func:`check_task` run.

    n_examples : examples checked; n_weights : random weight vectors per example;
    checks : names of the checks that ran, in the order they first ran;
    max_abs_error : largest absolute difference seen between two scores (or feature values,
    log-partitions, expectations) that had to be equal;
    skipped : names of the checks of the task's capabilities that did not run because no
    ``enumerate`` was given (see :data:`ENUMERATION_CHECKS`); empty with one.
    """

    n_examples: int
    n_weights: int
    checks: tuple[str, ...]
    max_abs_error: float
    skipped: tuple[str, ...] = ()


def check_task(task, examples, enumerate: Callable[[Any], Iterable] | None = None, *,
               n_weights: int = 5, random_state: int | np.random.Generator = 0,
               atol: float = 1e-9, rtol: float = 1e-9) -> TaskCheckReport:
    """Assert that a fitted ``task`` honours every capability it declares.

    Parameters
    ----------
    task : Task
        A fitted task (``exceptions.is_fitted(task)``); its capabilities are
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
        ``candidate_feature(x, j, h)``.  At most ``MAX_ENUMERATED`` (100,000) per example:
        keep the examples tiny.  Without it the checks that need the true maximum (or the
        true sums) are skipped, the others still run, and ``check_task`` says which were
        skipped (``report.skipped`` and a :class:`ChecksSkippedWarning`): a decoder that
        searches too small a space (misses legal structures) returns consistent, exact-looking
        results and is caught only by comparing with ``enumerate``.
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
        The checks that ran (``checks``) and, without ``enumerate``, those skipped
        (``skipped``).

    Warns
    -----
    ChecksSkippedWarning
        without ``enumerate``, naming the checks of the task's capabilities that it skipped.

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

    Notes
    -----
    The checks.  Every task:

    * ``capabilities-implemented``: every method of every declared capability is
      implemented (``tasks.contracts.missing_methods``);
    * ``fitted``: ``exceptions.is_fitted(task)``; ``n-features``: ``n_features`` is a positive int;
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
      ``joint_feature_differences`` and ``loss_batch`` of those structures (on X and on a
      reordered subset) equal ``joint_feature_difference`` and ``loss`` per example;
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

    class-posterior, with lz_k = ``class_log_partitions(X, w)[i, k]`` and y the class id:

    * ``class-log-partitions``: an (1, K) array without NaN per example; log Σ_k exp(lz_k)
      equals ``log_partition`` (if marginalizable);
    * ``log-loss-batch``: ``log_loss_batch([x], [y], w)`` is ``log Σ_k exp(lz_k) − lz_y`` with
      a finite gradient of length ``n_features``, equal to ``expected_feature(x, w)`` minus
      ``expected_feature`` restricted to class y (if marginalizable, from the enumeration);
    * with ``enumerate`` of (k, h) pairs scored by ``class_feature(x, k, h)``:
      ``class-log-partitions-enumeration`` (lz_k equals log Σ_h exp(w·Φ(x, k, h))) and
      ``log-loss-gradient-enumeration`` (the gradient equals Σ_{k,h} p(k, h) Φ −
      Σ_h p(h | y) Φ(x, y, h));
    * ``class-posterior-batch``: on the batch X, ``class_log_partitions`` gives the single
      rows and ``log_loss_batch`` the sum of the single losses and gradients.

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
    * ``state-round-trip``: ``type(task).from_state(params_from_file(type(task), params), state,
      arrays)`` (from the JSON copies) is fitted, has the same ``n_features``, and on every
      example and weight vector gives the same feature vectors (Φ(x, y), Φ(x, h) of the
      decoded h) and scores (argmax, loss-augmented argmax, latent argmax, log-partition,
      candidate log-partitions) as the original, on the original's featurised examples
      and, for a Dataset, on its own featurisation of the records;
    * ``pickle-round-trip``: the same for the copy a process worker receives
      (:func:`latentstruct.parallel.worker_copy`: cloudpickle, as the parallel seam sends).

    Example (a latent task: bags of vectors, the hidden h picks one)::

        from latentstruct.testing import check_task, make_bag_problem

        task, X, y = make_bag_problem(n_examples=6, bag_size=3)
        report = check_task(task, list(zip(X, y)), enumerate=lambda x: range(len(x)))
        assert "latent-argmax-maximum" in report.checks
    """
    _check_arguments(task, n_weights, atol, rtol, enumerate)
    checker = CapabilityChecker(task, n_weights, random_state, atol, rtol)
    pairs, X, Y, dataset = _examples(task, examples, checker.caps)
    return _run(checker, enumerate, pairs, X, Y, dataset)


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
    check_is_fitted(task, what=f"{type(task).__name__} (task {task.name!r})",
                    fix="Call task.fit(dataset) first (latentstruct.exceptions.is_fitted(task) must be True).",
                    why="check_task needs a fitted task")


def _examples(task, examples, caps):
    """(pairs [(x, y)], batch X, targets Y, dataset or None)."""
    if isinstance(examples, Dataset):
        X = task.structure_object().as_batch(task.featurize(examples))
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
        X = task.structure_object().as_batch([x for x, _ in pairs]) if pairs else None
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


def _enumerated(checker: CapabilityChecker, enumerate_structures, i, x, y) -> _Enumerated:
    """Every legal structure of example i, from ``enumerate_structures(x)``, with its feature
    vectors."""
    task, caps, n = checker.task, checker.caps, checker.task.n_features
    where = checker.where(i) + " (enumerate)"
    if not {MAX_DECODABLE, LATENT_BINARY, CANDIDATE_LIST, CLASS_POSTERIOR} & caps:
        raise TypeError(
            f"enumerate is used with max-decodable, latent-binary, candidate-list or "
            f"class-posterior tasks "
            f"(it needs their feature map); {type(checker.owner).__name__} offers "
            f"{', '.join(sorted(caps)) or 'no capability'}; pass enumerate=None")
    structures = []
    for s in enumerate_structures(x):
        structures.append(s)
        if len(structures) > MAX_ENUMERATED:
            raise ValueError(f"enumerate(x) of example {i} yielded more than {MAX_ENUMERATED} "
                             "structures; check_task enumerates tiny examples only")
    if not structures:
        raise ValueError(f"enumerate(x) of example {i} yielded no structure; it must yield "
                         "every legal structure of x (at least one)")

    def matrix(what, vectors):
        rows = [checker.sparse(where, what, v) for v in vectors]
        indptr = np.cumsum([0] + [r.nnz for r in rows])
        idx = np.concatenate([r.indices for r in rows])
        val = np.concatenate([r.values for r in rows])
        return sp.csr_matrix((val, idx, indptr), shape=(len(rows), n))

    out = _Enumerated(structures)
    if MAX_DECODABLE in caps:
        out.joint = matrix("joint_feature(x, s)", (task.joint_feature(x, s) for s in structures))
        out.losses = np.array([checker.loss(where, y, s, "s") for s in structures])
    if LATENT_BINARY in caps:
        out.latent = matrix("latent_feature(x, h)",
                            (task.latent_feature(x, h) for h in structures))
    if {CANDIDATE_LIST, CLASS_POSTERIOR} & caps and out.joint is None and out.latent is None:
        # (j, h) pairs: a candidate and its hidden assignment, or a class and its hidden
        # structure (Φ(x, k, h) of a class-posterior task)
        method = "candidate_feature" if CANDIDATE_LIST in caps else "class_feature"
        feature = getattr(task, method, None)
        if not callable(feature):
            raise TypeError(
                f"enumerate for a {'candidate-list' if CANDIDATE_LIST in caps else 'class-posterior'}"
                f" task yields (j, h) pairs scored by task.{method}(x, j, h), which "
                f"{type(task).__name__} does not define; define it (Φ as a SparseVector) or "
                "pass enumerate=None")
        groups = []
        for s in structures:
            if not isinstance(s, (tuple, list)) or len(s) != 2:
                raise TypeError(f"enumerate(x) of example {i} yielded {s!r}; for a "
                                "candidate-list (class-posterior) task it yields (j, h) pairs: "
                                "candidate (class) j and its hidden assignment h")
            groups.append(int(s[0]))
        out.groups = np.array(groups, dtype=np.int64)
        out.candidate = matrix(f"{method}(x, j, h)",
                               (feature(x, int(j), h) for j, h in structures))
    return out


# ----------------------------------------------------------------------------------------
# the run
# ----------------------------------------------------------------------------------------
def _random_weights(random_state, n_weights: int, n: int) -> list[np.ndarray]:
    """Even draws standard normal, odd draws integers in [-2, 2], from one seeded Generator."""
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    return [rng.normal(size=n) if k % 2 == 0 else rng.integers(-2, 3, size=n).astype(np.float64)
            for k in range(n_weights)]


def _run(checker: CapabilityChecker, enumerate_structures, pairs, X, Y, dataset) -> TaskCheckReport:
    caps, n_weights = checker.caps, checker.n_weights
    checker.check_declaration()
    weights = _random_weights(checker.random_state, n_weights, checker.task.n_features)
    heuristic = None
    if HEURISTIC in caps:
        with noted("check_task: raised while calling heuristic_weights()"):
            heuristic = checker.check_heuristic_weights()
    plain = np.full((len(pairs), n_weights), np.nan)
    augmented = np.full((len(pairs), n_weights), np.nan)
    latent = np.full((len(pairs), n_weights), np.nan)
    latent_h: dict[tuple[int, int], Any] = {}
    for i, (x, y) in enumerate(pairs):
        with noted(f"check_task: raised while checking {checker.where(i)}"):
            checker.check_example(i, x, y)
            enum = (_enumerated(checker, enumerate_structures, i, x, y)
                    if enumerate_structures is not None else None)
        for k, w in enumerate(weights):
            with noted(f"check_task: raised while checking {checker.where(i, k)}"):
                known = []  # scores of decoded structures (log Z is not below them)
                if MAX_DECODABLE in caps:
                    plain[i, k], augmented[i, k] = checker.check_max_decodable(i, k, x, y, w, enum)
                    known.append(plain[i, k])
                if LATENT_BINARY in caps:
                    res = checker.check_latent(i, k, x, w, enum)
                    latent[i, k], latent_h[i, k] = res.score, res.structure
                    known.append(latent[i, k])
                if CANDIDATE_LIST in caps:
                    known.extend(checker.check_candidate_list(i, k, x, w, enum))
                if CLASS_POSTERIOR in caps:  # log Z is not below any class's log Z(x, k)
                    known.extend(checker.check_class_posterior(i, k, x, y, w, enum))
                if MARGINALIZABLE in caps:
                    checker.check_marginalizable(i, k, x, w, enum, known)
        if heuristic is not None:
            with noted(f"check_task: raised while checking {checker.where(i)} with the "
                       "heuristic weights"):
                checker.check_heuristic_decode(i, x, heuristic)
    for k, w in enumerate(weights):
        with noted(f"check_task: raised while checking the batch forms with weights {k}"):
            if MAX_DECODABLE in caps:
                checker.check_argmax_batch(k, pairs, X, Y, w, plain[:, k], augmented[:, k])
            if LATENT_BINARY in caps:
                checker.check_latent_batch(k, pairs, X, w, latent[:, k])
            if CLASS_POSTERIOR in caps:
                checker.check_class_posterior_batch(k, pairs, X, Y, w)
    check_state(checker, pairs, dataset, weights, latent_h)
    skipped = _skipped(checker) if enumerate_structures is None else ()
    return TaskCheckReport(len(pairs), n_weights, tuple(checker.ran), float(checker.max_err),
                           skipped)


def _skipped(checker: CapabilityChecker) -> tuple[str, ...]:
    """The enumeration checks of the task's capabilities that did not run, with a warning
    naming them (a passing run without them proves less than it seems)."""
    skipped = []
    for cap, names in ENUMERATION_CHECKS.items():
        if cap not in checker.caps:
            continue
        for name in names:
            needs_maximum = name.endswith("-maximum")
            if name not in checker.ran and (checker.maximal or not needs_maximum):
                skipped.append(name)
    if skipped:
        warnings.warn(ChecksSkippedWarning(
            f"check_task ran without enumerate, so it skipped {len(skipped)} check(s): "
            f"{', '.join(skipped)}. A decoder that searches too small a space (misses legal "
            "structures) passes every other check; pass enumerate=lambda x: <every legal "
            "structure of x> on tiny examples to compare it with brute force"), stacklevel=4)
    return tuple(skipped)
