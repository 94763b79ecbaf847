"""The checker behind :func:`~latentstruct.testing.tasks.check_task`, and its per-capability checks.

:class:`CapabilityChecker` holds one run's bookkeeping (the checks that ran, the largest
error seen), compares numbers within the tolerance, reads a task's answers (decodes, feature
vectors, losses) and fails with a message naming the check, the example and the weights.
Its ``check_*`` methods check one capability each on one example and weight vector (or on
the batch of all examples); :mod:`latentstruct.testing.tasks` decides which run, and
:mod:`latentstruct.testing.state` checks persistence with the same checker.  Internal:
the public entry point is :func:`latentstruct.testing.check_task`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import is_fitted
from latentstruct.inference.result import EXACT, DecodeResult
from latentstruct.tasks.base import LatentBinaryTask, StructuredTask, Task
from latentstruct.tasks.contracts import (
    LATENT_BINARY,
    MARGINALIZABLE,
    MAX_DECODABLE,
    RANDOM_TIES,
    SIZED,
    missing_methods,
)

__all__ = ["CapabilityChecker", "noted", "softmax"]

_ABSTRACT = (Task, StructuredTask, LatentBinaryTask)

# the feature map of each decoder, as the messages name it
_FEATURE = {"argmax": "joint_feature(x, structure)", "latent_argmax": "latent_feature(x, h)"}


class noted:
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


def softmax(scores: np.ndarray) -> np.ndarray:
    return np.exp(scores - logsumexp(scores))


class CapabilityChecker:
    """One :func:`~latentstruct.testing.tasks.check_task` run on a fitted ``task`` whose
    arguments have been validated."""

    def __init__(self, task, n_weights, random_state, atol, rtol):
        self.owner = task
        # what the checks call: the structure object (the task, or the one it holds)
        self.task = task.structure_object()
        self.caps = frozenset(type(task).offered_capabilities(task.get_params()))
        self.n_weights = int(n_weights)
        self.random_state = random_state
        self.atol, self.rtol = float(atol), float(rtol)
        self.maximal = bool(self.task.argmax_is_maximum())
        self.ran: dict[str, None] = {}
        self.max_err = 0.0

    # --- bookkeeping ---------------------------------------------------------------------
    def where(self, i=None, k=None) -> str:
        if i is None:
            return f"task {type(self.owner).__name__}"
        if k is None:
            return f"example {i}"
        return f"example {i}, weights {k} (random_state={self.random_state!r})"

    def batch_where(self, k) -> str:
        return f"batch of all examples, weights {k} (random_state={self.random_state!r})"

    def mark(self, name: str) -> None:
        self.ran.setdefault(name, None)

    def fail(self, name: str, where: str, message: str):
        raise AssertionError(f"check_task: {where}: {message} [check {name!r}]")

    def close(self, a, b) -> bool:
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return False
        if math.isinf(a) or math.isinf(b):
            return a == b
        self.max_err = max(self.max_err, abs(a - b))
        return abs(a - b) <= self.atol + self.rtol * max(abs(a), abs(b))

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

    def score_of(self, method: str, where: str, x, s, w) -> float:
        """w·Φ(x, s) with the feature map of decoder ``method`` (argmax or latent_argmax)."""
        score = self.joint_score if method == "argmax" else self.latent_score
        return score(where, x, s, w)

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

    # --- every task ------------------------------------------------------------------------
    def check_declaration(self) -> None:
        task, where = self.owner, self.where()
        self.mark("capabilities-implemented")
        missing = missing_methods(type(task), _ABSTRACT)
        if missing:
            listed = "; ".join(f"{cap}: {', '.join(methods)}" for cap, methods in missing.items())
            self.fail("capabilities-implemented", where,
                      f"declares capabilities whose methods it does not implement ({listed}); "
                      "implement them or drop the capability from `capabilities`")
        self.mark("fitted")
        if not is_fitted(task):  # pragma: no cover - refused earlier as misuse
            self.fail("fitted", where, "is_fitted(task) is False")
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
        float_array = isinstance(hw, np.ndarray) and arr.dtype.kind == "f"
        if not float_array or arr.shape != (n,) or not np.all(np.isfinite(arr)):
            desc = (f"a {arr.dtype} array of shape {arr.shape}" if isinstance(hw, np.ndarray)
                    else f"a {type(hw).__name__}")
            bad = f", {int(np.sum(~np.isfinite(arr)))} not finite" if float_array else ""
            self.fail("heuristic-weights", where,
                      f"heuristic_weights() returned {desc}{bad}; expected a finite float array "
                      f"of shape ({n},)")
        return arr.astype(np.float64)

    def check_heuristic_decode(self, i, x, hw) -> None:
        where = self.where(i) + " (heuristic_weights())"
        for method, cap in (("latent_argmax", LATENT_BINARY), ("argmax", MAX_DECODABLE)):
            if cap not in self.caps:
                continue
            r = self.decoded("heuristic-decode", where, f"{method}(x, heuristic_weights())",
                             getattr(self.task, method)(x, hw))
            s = self.score_of(method, where, x, r.structure, hw)
            self.expect_close("heuristic-decode", where, r.score, s, lambda: (
                f"{method} with the heuristic weights reports score {float(r.score)!r} but "
                f"w·{_FEATURE[method]} = {s!r}"))

    def check_random_ties(self, i, k, x, w, method: str, r: DecodeResult) -> None:
        """``method(x, w, random_state=seed)`` (argmax or latent_argmax) is exact, consistent
        and, for a maximum, scores as much as the deterministic decode ``r``."""
        where, seed = self.where(i, k), i * self.n_weights + k
        what = f"{method}(x, w, random_state={seed})"
        rt = self.decoded("random-ties", where, what,
                          getattr(self.task, method)(x, w, random_state=seed))
        s_rt = self.score_of(method, where, x, rt.structure, w)
        self.expect_close("random-ties", where, rt.score, s_rt, lambda: (
            f"{what} reports score {float(rt.score)!r} but w·{_FEATURE[method]} = {s_rt!r}"))
        if self.maximal:
            self.expect_close("random-ties", where, rt.score, r.score, lambda: (
                f"{what} scores {float(rt.score)!r} but {method}(x, w) scores "
                f"{float(r.score)!r}; breaking ties at random must not change the maximum"))

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
                    self._too_few(len(scores), r, float(scores[best]))
                    if r.score > scores[best] else
                    f"argmax reports score {float(r.score)!r} but the best of the {len(scores)} "
                    f"enumerated structures scores {float(scores[best])!r} (structure "
                    f"{enum.structures[best]!r}); the argmax is not a maximum"))
                aug = scores + enum.losses
                best_a = int(np.argmax(aug))
                ref = max(float(aug[best_a]), s_gold)
                self.expect_close("loss-augmented-maximum", where, a.score, ref, lambda: (
                    self._too_few(len(aug), a, ref, "loss-augmented argmax")
                    if a.score > ref else
                    f"the loss-augmented argmax reports score {float(a.score)!r} but the best "
                    f"w·Φ(x, s) + loss(y, s) over the {len(aug)} enumerated structures (and the "
                    f"gold structure, {s_gold!r}) is {ref!r} (structure "
                    f"{enum.structures[best_a]!r}, w·Φ {float(scores[best_a])!r}, loss "
                    f"{float(enum.losses[best_a])!r}); the loss-augmented argmax is not a maximum"))
        if RANDOM_TIES in self.caps:
            self.check_random_ties(i, k, x, w, "argmax", r)
        return float(r.score), float(a.score)

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
        self.check_difference_batch(where, pairs, X, Y, order, calls[1][3])

    def check_difference_batch(self, where, pairs, X, Y, order, Y_hat) -> None:
        """The structural SVM's batch forms of a mini-batch's cutting planes:
        ``joint_feature_differences`` and ``loss_batch`` (on X and on a reordered subset)
        equal the per-example ``joint_feature_difference`` and ``loss``."""
        task = self.task
        for what, idx, batch in (("X", range(len(pairs)), X),
                                 ("subset(X, reversed)", order, task.subset(X, order))):
            gold, pred = [Y[i] for i in idx], [Y_hat[i] for i in idx]
            rows = task.joint_feature_differences(batch, gold, pred)
            losses = np.asarray(task.loss_batch(gold, pred), dtype=np.float64)
            if len(rows) != len(gold) or losses.shape != (len(gold),):
                self.fail("argmax-batch", where, f"joint_feature_differences / loss_batch on "
                          f"{what} gave {len(rows)} rows and {losses.shape[0]} losses for "
                          f"{len(gold)} examples")
            for pos, i in enumerate(idx):
                x, y = pairs[i]
                one = task.joint_feature_difference(x, y, Y_hat[i])
                gap = float(np.abs(rows[pos].to_dense(task.n_features) -
                                   one.to_dense(task.n_features)).max(initial=0.0))
                self.expect_close("argmax-batch", where, gap, 0.0, lambda: (
                    f"joint_feature_differences({what}, ...) row {pos} differs from "
                    f"joint_feature_difference(x, y, y_hat) of example {i} by up to {gap!r}"))
                single = float(task.loss(y, Y_hat[i]))
                self.expect_close("argmax-batch", where, losses[pos], single, lambda: (
                    f"loss_batch({what}) gives example {i} the loss {float(losses[pos])!r} but "
                    f"loss(y, y_hat) is {single!r}"))

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
                self._too_few(len(scores), r, float(scores[best]), "latent_argmax")
                if r.score > scores[best] else
                f"latent_argmax reports score {float(r.score)!r} (h = {r.structure!r}) but the "
                f"best of the {len(scores)} enumerated structures scores "
                f"{float(scores[best])!r} (h = {enum.structures[best]!r}); the latent completion "
                "is not a maximum"))
        if RANDOM_TIES in self.caps:
            self.check_random_ties(i, k, x, w, "latent_argmax", r)
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
            s = self.latent_score(where, pairs[i][0], res.structure, w)
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

    @staticmethod
    def _too_few(n: int, result, best: float, what: str = "argmax") -> str:
        """The message when the decoder beats every enumerated structure: the enumeration,
        not the decoder, is incomplete (its score is consistent, checked before)."""
        return (f"{what} found a structure scoring {float(result.score)!r}, above every one of "
                f"the {n} structures `enumerate(x)` listed (the best scores {best!r}): the "
                f"enumeration misses legal structures, such as the decoder's "
                f"{result.structure!r}. Make `enumerate` list every legal structure of x "
                f"(latentstruct.inference.all_alignments(m, n) lists only non-crossing "
                f"alignments unless monotone=False; a bipartite matching may cross)")

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
        if MAX_DECODABLE in self.caps:  # the CRF and predict_marginals read .node
            self.check_marginals_format(where, x, w)
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
            expected = M.T @ softmax(scores)
            self.expect_arrays_close("expected-feature-enumeration", where, ef, expected,
                                     lambda worst: (
                f"expected_feature differs from Σ_s p(s) Φ(x, s) over the enumeration by up to "
                f"{worst!r}"))

    def check_marginals_format(self, where, x, w) -> None:
        """``marginals(x, w)`` is an object whose ``.node`` is the (positions, n_labels)
        array of node marginals, each row a distribution (what ``predict_marginals`` and the
        CRF read)."""
        task = self.task
        self.mark("marginals-format")
        m = task.marginals(x, w)
        node = getattr(m, "node", None)
        if node is None:
            self.fail("marginals-format", where,
                      f"marginals(x, w) returned a {type(m).__name__}; expected an object whose "
                      f".node is the (positions, n_labels) array of node marginals (such as "
                      f"latentstruct.inference.chain.ChainMarginals: .node, .edge, .log_z)")
        node = np.asarray(node, dtype=np.float64)
        n_labels = getattr(task, "n_labels", None)
        if node.ndim != 2 or (n_labels is not None and node.shape[1] != int(n_labels)):
            self.fail("marginals-format", where,
                      f"marginals(x, w).node has shape {node.shape}; expected (positions, "
                      f"n_labels = {n_labels})")
        if node.size and (not np.all(np.isfinite(node)) or node.min() < -self.atol
                          or not np.allclose(node.sum(axis=1), 1.0, atol=1e-6)):
            self.fail("marginals-format", where,
                      "marginals(x, w).node rows must be probability distributions (finite, "
                      ">= 0, each summing to 1)")

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
        coef = softmax(lzs)
        dense = task.candidate_expected_features(x, w, lambda lz_: softmax(np.asarray(lz_)))
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

    # --- class-posterior -------------------------------------------------------------------
    def _class_rows(self, where, X, w, n) -> np.ndarray:
        lz = np.asarray(self.task.class_log_partitions(X, w), dtype=np.float64)
        if lz.ndim != 2 or lz.shape[0] != n or lz.shape[1] < 1 or np.isnan(lz).any():
            self.fail("class-log-partitions", where,
                      f"class_log_partitions returned an array of shape {lz.shape}; expected "
                      f"({n}, n_classes) floats without NaN")
        return lz

    def check_class_posterior(self, i, k, x, y, w, enum) -> list[float]:
        task, where, n = self.task, self.where(i, k), self.task.n_features
        self.mark("class-log-partitions")
        lz = self._class_rows(where, task.as_batch([x]), w, 1)[0]
        total = float(logsumexp(lz))
        if MARGINALIZABLE in self.caps:
            ref = float(task.log_partition(x, w))
            self.expect_close("class-log-partitions", where, total, ref, lambda: (
                f"log Σ_k exp(class_log_partitions) = {total!r} but log_partition = {ref!r}"))
        self.mark("log-loss-batch")
        y = int(y)
        f, g = task.log_loss_batch(task.as_batch([x]), np.array([y]), w)
        g = np.asarray(g, dtype=np.float64)
        self.expect_close("log-loss-batch", where, float(f), total - float(lz[y]), lambda: (
            f"log_loss_batch = {float(f)!r} but log Σ_k Z(x, k) − log Z(x, y) = "
            f"{total - float(lz[y])!r} (y = {y})"))
        if g.shape != (n,) or not np.all(np.isfinite(g)):
            self.fail("log-loss-batch", where, f"log_loss_batch's gradient has shape {g.shape} "
                      f"or is not finite; expected a finite vector of length n_features = {n}")
        if enum is None or enum.candidate is None:
            return lz.tolist()
        scores = enum.candidate @ w
        for c in range(lz.size):
            mask = enum.groups == c
            if not mask.any():
                raise ValueError(f"enumerate(x) of example {i} yielded no (k, h) pair for class "
                                 f"{c}; it must yield every hidden structure of every class")
            ref = float(logsumexp(scores[mask]))
            self.expect_close("class-log-partitions-enumeration", where, lz[c], ref, lambda: (
                f"class_log_partitions[{c}] = {float(lz[c])!r} but log Σ_h exp(w·Φ(x, k, h)) "
                f"over the enumeration = {ref!r}"))
        p_all = softmax(scores)
        gold = enum.groups == y
        p_gold = np.where(gold, np.exp(scores - logsumexp(scores[gold])), 0.0)
        expected = enum.candidate.T @ (p_all - p_gold)
        self.expect_arrays_close("log-loss-gradient-enumeration", where, g, expected,
                                 lambda worst: (
            f"log_loss_batch's gradient differs from E[Φ] − E[Φ | y] over the enumeration by "
            f"up to {worst!r}"))
        return lz.tolist()

    def check_class_posterior_batch(self, k, pairs, X, Y, w) -> None:
        task, where = self.task, self.batch_where(k)
        self.mark("class-posterior-batch")
        lz = self._class_rows(where, X, w, len(pairs))
        f, g = task.log_loss_batch(X, np.asarray(Y, dtype=np.int64), w)
        f_ref, g_ref = 0.0, np.zeros(task.n_features)
        for i, (x, y) in enumerate(pairs):
            one = self._class_rows(where, task.as_batch([x]), w, 1)[0]
            self.expect_arrays_close("class-posterior-batch", where, lz[i], one, lambda worst: (
                f"class_log_partitions on the batch differs from example {i} alone by {worst!r}"))
            fi, gi = task.log_loss_batch(task.as_batch([x]), np.array([int(y)]), w)
            f_ref += float(fi)
            g_ref += np.asarray(gi, dtype=np.float64)
        self.expect_close("class-posterior-batch", where, float(f), f_ref, lambda: (
            f"log_loss_batch on the batch = {float(f)!r}, the sum over examples = {f_ref!r}"))
        self.expect_arrays_close("class-posterior-batch", where, np.asarray(g), g_ref,
                                 lambda worst: (
            f"log_loss_batch's gradient on the batch differs from the sum over examples by up "
            f"to {worst!r}"))
