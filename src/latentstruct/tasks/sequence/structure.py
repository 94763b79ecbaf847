"""The first-order chain as a structure: :class:`ChainStructure`.

Parts are (token, label) emissions and (label, label) transitions, plus start and end
transitions.  With ``n_attributes`` token attributes (a featurised sentence's attribute
ids, ``SequenceCorpus``) and ``L`` labels the weight vector is laid out as

    [ emissions (n_attributes x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

and the part scores for Viterbi are a gather over this layout.  Loss is Hamming
(mislabelled tokens); the loss-augmented argmax adds 1 to every wrong label's unary score.

A :class:`ChainStructure` is a small immutable object of two numbers, ``n_labels`` and
``n_attributes``: no featurizer, labels, reading or evaluation.  A sequence task builds
one from its fitted featurizer and label set (``SequenceLabellingTask.structure_``), and
its learners see it through ``task.structure()``.  The class is one line of inheritance:
the capabilities' mixins (``tasks.sequence.capabilities``: part scores, then
*marginalizable*, then *label-factored*) joined with the max-decodable defaults
(:class:`~latentstruct.tasks.base.MaxDecodableDefaults`).  It holds the joint feature, the
(loss-augmented) argmax, the loss and their batch forms.
"""

from __future__ import annotations

import numpy as np

from ...data.sparse import SparseRows, SparseVector
from ...exceptions import InputError
from ...inference.constraints import ChainConstraints, check_entries
from ...inference.global_constraints import GlobalConstraints, constrained_argmax
from ...inference.result import DecodeResult
from ...inference.viterbi import kbest_viterbi, viterbi, viterbi_batch
from ..base import MaxDecodableDefaults, frozen_fields, set_counts
from ..validation import check_label_ids
from .capabilities import LabelFactoredSequence
from .corpus import SequenceCorpus, as_corpus
from .kernels import (
    coalesced,
    coalesced_phi_difference,
    coalesced_phi_differences,
    emission_scores,
    first_outside,
    hamming_augmented,
    phi_difference,
)
from .online_kernels import EPOCH_STATS, online_epoch

__all__ = ["ChainStructure", "completed", "OnlineChainBatch"]

#: what ``ChainStructure.online_pass`` computes as these methods do (a subclass that
#: overrides one gets the Python loop)
_COMPILED_AS = ("argmax", "joint_feature_difference", "loss", "label_scores", "unary_scores")


def _per_sentence(allowed, n: int) -> list:
    """``allowed`` of a batch: one entry per sentence (None or per-token entries)."""
    return check_entries(allowed, n, "sentence", "None where any labelling is allowed, or "
                                                 "one entry per token")


def completed(labels, known) -> np.ndarray:
    """A completed partial labelling: ``labels`` where ``known``, else the code
    ``-2 - label`` (the tag was unknown and a decoder chose ``label``)."""
    labels = np.asarray(labels, dtype=np.int64)
    return np.where(known, labels, -2 - labels)


def _labels_of(y, n_labels: int):
    """The labels of ``y``: a completed code ``-2 - label`` as ``label``."""
    arr = np.asarray(y)
    if arr.dtype.kind in "iu" and arr.size and arr.min() <= -2:
        if arr.min() < -1 - n_labels:
            return arr  # out of range: check_label_ids names it
        return np.where(arr <= -2, -2 - arr, arr)
    return y


def _known(y) -> np.ndarray:
    """``y`` with every unknown tag (-1 or a completed code) as -1: the loss-augmented
    argmax adds the same 1 to every label of such a token, a constant."""
    y = np.asarray(y)
    return np.where(y < 0, -1, y) if y.size and y.min() < -1 else y


def _no_labelling(allowed, *, global_rules: bool = False) -> str:
    if global_rules:
        return ("no labelling of the sentence keeps the rules (a count or an if-then that "
                "a sentence this short cannot meet, say)"
                + ("" if allowed is None else " together with the labels allowed per token"))
    if allowed is None:
        return "no labelling of the sentence keeps the structure's constraints"
    return ("no labelling keeps both the labels allowed per token and the model's own "
            "constraints (a chunker's well-formed tag sequences, say): allow more labels, or "
            "force labels that may follow each other")


@frozen_fields("n_labels", "n_attributes", "constraints", "global_constraints",
               "train_global")
class ChainStructure(LabelFactoredSequence, MaxDecodableDefaults):
    """Joint feature, argmax, loss (and marginals, label-factored parts) of a first-order
    chain over ``SequenceCorpus`` sentences.

    Parameters
    ----------
    n_labels : int
        The number of labels L (label ids 0..L-1).
    n_attributes : int
        The range of the token attribute ids (the featurizer's ``n_features_out_``).
    constraints : ChainConstraints or None
        Hard constraints on the labellings (``inference.constraints``; a chunker's
        well-formed tag sequences, ``encodings.well_formed_constraints``).  Every decoder of
        the structure keeps them: the argmax and its loss-augmented form (what the structural
        SVM and the online learners train with), the marginals and log Z (the CRF's
        likelihood and its gradient), and the label-factored argmax.  None: every labelling.
    global_constraints : GlobalConstraints or None
        Constraints on the whole labelling (a label's count, if-then, a contiguous field:
        ``inference.global_constraints``, from a task's ``rules``).  The argmax keeps them
        exactly, through the HiGHS ILP (:func:`constrained_argmax`).  The decoders that sum
        or rank labellings for prediction (marginals, k-best, the label-factored argmax)
        cannot, and refuse.
    train_global : bool, default False
        Whether training keeps the global constraints too: the loss-augmented argmax
        becomes an ILP (inference-based training), and the CRF's likelihood and the
        completion of partial labels, which cannot keep them, refuse.  False: training
        keeps the local constraints alone and prediction all of them (learning plus
        inference, the constrained conditional models' usual way, and an ILP only where
        the best labellings break a rule).

    Immutable: a refitted task builds a new one.
    """

    def __init__(self, n_labels: int, n_attributes: int, constraints=None,
                 global_constraints=None, train_global: bool = False):
        set_counts(self, n_labels=n_labels, n_attributes=n_attributes)
        if constraints is not None and (not isinstance(constraints, ChainConstraints)
                                        or constraints.n_labels != self.n_labels):
            raise ValueError(f"ChainStructure: constraints must be None or ChainConstraints "
                             f"over its {self.n_labels} labels, got {constraints!r}")
        if global_constraints is not None and (
                not isinstance(global_constraints, GlobalConstraints)
                or global_constraints.n_labels != self.n_labels):
            raise ValueError(f"ChainStructure: global_constraints must be None or "
                             f"GlobalConstraints over its {self.n_labels} labels, got "
                             f"{global_constraints!r}")
        object.__setattr__(self, "constraints", constraints)
        object.__setattr__(self, "global_constraints", global_constraints or None)
        object.__setattr__(self, "train_global", bool(train_global))

    def _ilp_for(self, training: bool) -> bool:
        """Whether an argmax (``training``: loss-augmented) runs the ILP."""
        return self.global_constraints is not None and (self.train_global or not training)

    def _ilp_argmax(self, unary, trans, start, end) -> DecodeResult:
        return constrained_argmax(unary, trans, start, end, self.global_constraints)

    def label_scores(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The transition (L, L), start (L,) and end (L,) scores the decoders use: the
        blocks of ``w`` (views), with every part the ``constraints`` forbid at ``-inf`` (a
        copy) when there are any."""
        _, transition, start, end = self.split_weights(w)
        return self.constrained(transition, start, end)

    def constrained(self, transition, start, end) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``transition``, ``start`` and ``end`` scores with the parts the ``constraints``
        forbid at ``-inf`` (a copy; the scores themselves when there are no constraints)."""
        if self.constraints is None:
            return transition, start, end
        return self.constraints.apply(transition, start, end)

    @property
    def n_features(self) -> int:
        L = self.n_labels
        return self.n_attributes * L + L * L + 2 * L

    def split_weights(self, w: np.ndarray):
        """Views (emission (n_attr, L), transition (L, L), start (L,), end (L,)) of w."""
        L, A = self.n_labels, self.n_attributes
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        e = A * L
        return (
            w[:e].reshape(A, L),
            w[e : e + L * L].reshape(L, L),
            w[e + L * L : e + L * L + L],
            w[e + L * L + L :],
        )

    def subset(self, X: SequenceCorpus, indices) -> SequenceCorpus:
        return self.as_batch(X).subset(indices)

    def as_batch(self, X) -> SequenceCorpus:
        return as_corpus(X)

    def example_size(self, x: SequenceCorpus) -> int:
        return x.n_tokens

    def unary_scores(self, X: SequenceCorpus, w: np.ndarray) -> np.ndarray:
        emission, _, _, _ = self.split_weights(w)
        return emission_scores(X.attr_indptr, X.attr_ids, X.attr_values, emission, X.offsets[0],
                               X.offsets[-1])

    def _label_ids(self, x: SequenceCorpus, y, what: str) -> np.ndarray:
        """``y`` checked before a kernel reads it: integer ids in -1..L-1, one per token,
        a completed unknown tag (a code ``-2 - label``, :func:`completed`) as its label."""
        n = int(x.offsets[-1] - x.offsets[0])
        L = self.n_labels
        # Fast path for what learners pass (a decoder's int64 labels), called per example.
        if (type(y) is np.ndarray and y.dtype == np.int64 and y.shape == (n,)
                and first_outside(y, -1, L) < 0):
            return y
        y = check_label_ids(_labels_of(y, L), L, what=what)
        if y.shape != (n,):
            raise InputError(f"{what} has shape {y.shape}; expected one label id per token, "
                             f"({n},)")
        return y

    def joint_feature(self, x: SequenceCorpus, y) -> SparseVector:
        y = self._label_ids(x, y, "structure")
        none = np.full_like(y, -1)
        idx, val = phi_difference(
            x.attr_indptr, x.attr_ids, x.attr_values, x.offsets[0], x.offsets[-1], y, none,
            self.n_attributes, self.n_labels,
        )
        return SparseVector(*coalesced(idx, val))

    def joint_feature_difference(self, x: SequenceCorpus, y_a, y_b) -> SparseVector:
        y_a = self._label_ids(x, y_a, "structure y_a")
        y_b = self._label_ids(x, y_b, "structure y_b")
        return SparseVector(*coalesced_phi_difference(
            x.attr_indptr, x.attr_ids, x.attr_values, x.offsets[0], x.offsets[-1], y_a, y_b,
            self.n_attributes, self.n_labels))

    def _batch_label_ids(self, X: SequenceCorpus, Y, what: str) -> np.ndarray:
        """The label ids of every sentence of ``Y`` back to back, checked once: one
        sequence per sentence of ``X``, one id in -1..L-1 per token."""
        if len(Y) != len(X):
            raise InputError(f"{what}: {len(Y)} structures for {len(X)} sentences")
        lengths = X.lengths()
        sizes = np.fromiter((len(y) for y in Y), dtype=np.int64, count=len(Y))
        bad = np.flatnonzero(sizes != lengths)
        if bad.size:
            k = int(bad[0])
            raise InputError(f"{what}: sentence {k} has {lengths[k]} tokens but its structure "
                             f"has {sizes[k]} labels; expected one label id per token")
        flat = np.concatenate([np.asarray(y) for y in Y]) if len(Y) else np.zeros(0, np.int64)
        return check_label_ids(_labels_of(flat, self.n_labels), self.n_labels, what=what)

    def joint_feature_differences(self, X, Y_a, Y_b) -> SparseRows:
        """Every sentence's coalesced Phi difference in one compiled call (the structural
        SVM's cutting planes of a mini-batch; per sentence, the Python around the kernel
        call cost more than the kernel)."""
        X = as_corpus(X)
        y_a = self._batch_label_ids(X, Y_a, "structures Y_a")
        y_b = self._batch_label_ids(X, Y_b, "structures Y_b")
        return SparseRows(*coalesced_phi_differences(
            X.attr_indptr, X.attr_ids, X.attr_values, X.offsets, y_a, y_b,
            self.n_attributes, self.n_labels))

    def loss_batch(self, Y_true, Y_pred) -> np.ndarray:
        """Hamming loss of every pair, counted over the batch at once."""
        if len(Y_true) != len(Y_pred):
            raise InputError(f"{len(Y_true)} gold structures but {len(Y_pred)} predicted ones")
        if not len(Y_true):
            return np.zeros(0)
        sizes = np.fromiter((len(y) for y in Y_true), dtype=np.int64, count=len(Y_true))
        pred_sizes = np.fromiter((len(y) for y in Y_pred), dtype=np.int64, count=len(Y_pred))
        if np.any(sizes != pred_sizes):
            k = int(np.flatnonzero(sizes != pred_sizes)[0])
            raise InputError(f"structure {k}: {sizes[k]} gold labels but {pred_sizes[k]} "
                             f"predicted ones")
        gold = np.concatenate([np.asarray(y) for y in Y_true])
        # an unknown gold tag (partial labels: -1, or completed) costs nothing
        wrong = (gold != np.concatenate([np.asarray(y) for y in Y_pred])) & (gold >= 0)
        row = np.repeat(np.arange(len(sizes)), sizes)
        return np.bincount(row, weights=wrong, minlength=len(sizes)).astype(np.float64)

    def argmax(self, x: SequenceCorpus, w, y_true=None, *, random_state=None,
               allowed=None) -> DecodeResult:
        """The best labelling of sentence ``x`` (loss-augmented with ``y_true``), over the
        labellings the ``constraints`` and ``allowed`` (one entry per token, see
        :meth:`part_scores`) keep; a restriction that keeps none is an ``InputError``."""
        trans, start, end = self.label_scores(w)
        unary = self.restricted_unary(self.unary_scores(x, w), allowed)
        if y_true is not None:
            unary = hamming_augmented(unary, _known(y_true))
        if self._ilp_for(training=y_true is not None):
            if random_state is not None:
                self.local_only("an argmax that breaks ties at random")
            result = self._ilp_argmax(unary, trans, start, end)
            if result.structure is None:
                raise InputError(_no_labelling(allowed, global_rules=True))
            return result
        result = viterbi(unary, trans, start, end, random_state=random_state)
        if allowed is not None and not np.isfinite(result.score):
            raise InputError(_no_labelling(allowed))
        return result

    def argmax_batch(self, X, w, Y=None, *, random_state=None, allowed=None) -> list:
        """The best labelling of every sentence of ``X``, in one compiled call;
        ``allowed``: None or one entry per sentence, each what :meth:`argmax` takes."""
        X = as_corpus(X)
        if allowed is not None:
            allowed = _per_sentence(allowed, len(X))
        if self._ilp_for(training=Y is not None):
            return [self._argmax_or_name(X, i, w, Y, random_state, allowed)
                    for i in range(len(X))]
        if random_state is not None:
            if allowed is None:
                return super().argmax_batch(X, w, Y, random_state=random_state)
            return [self.argmax(X[i], w, None if Y is None else Y[i], random_state=random_state,
                                allowed=allowed[i]).structure for i in range(len(X))]
        trans, start, end = self.label_scores(w)
        unary = self.unary_scores(X, w)
        if allowed is not None:
            unary = unary.copy()
            for i, a in enumerate(allowed):
                if a is not None:
                    rows = slice(X.offsets[i] - X.offsets[0], X.offsets[i + 1] - X.offsets[0])
                    try:
                        unary[rows] = self.restricted_unary(unary[rows], a)
                    except InputError as exc:
                        raise InputError(f"sentence {i}: {exc.message}") from None
        if Y is not None:
            unary = hamming_augmented(
                unary, _known(np.concatenate(Y)) if len(Y) else np.zeros(0, np.int64))
        labels, scores = viterbi_batch(unary, X.offsets - X.offsets[0], trans, start, end)
        if allowed is not None and not np.all(np.isfinite(scores)):
            i = int(np.flatnonzero(~np.isfinite(scores))[0])
            raise InputError(f"sentence {i}: {_no_labelling(allowed[i])}")
        cuts = X.offsets[1:-1] - X.offsets[0]
        return np.split(labels, cuts)

    def _argmax_or_name(self, X, i, w, Y, random_state, allowed):
        try:
            return self.argmax(X[i], w, None if Y is None else Y[i], random_state=random_state,
                               allowed=None if allowed is None else allowed[i]).structure
        except InputError as exc:
            raise InputError(f"sentence {i}: {exc.message}") from None

    def kbest(self, x: SequenceCorpus, w, k: int, *, allowed=None) -> list[DecodeResult]:
        """The ``k`` best distinct labellings of sentence ``x``, best first, each a
        ``DecodeResult`` (labels, score w·Φ(x, y)), over the labellings the ``constraints``
        and ``allowed`` (see :meth:`part_scores`) keep: exact k-best Viterbi
        (``inference.viterbi.kbest_viterbi``).  Fewer than ``k`` when fewer labellings
        exist; the first is :meth:`argmax`'s (the same tie-breaking: lowest labels)."""
        self.local_only("a k-best list")
        results = kbest_viterbi(*self.part_scores(x, w, allowed=allowed), k=k)
        if not results:
            raise InputError(_no_labelling(allowed))
        return results

    def contributions(self, x: SequenceCorpus, w, y) -> list[tuple]:
        """What each part of labelling ``y`` of sentence ``x`` adds to its score
        ``w·Φ(x, y)``, as ``(position, kind, attribute, label, value)`` tuples, tokens in
        order: ``"state"`` (one per attribute occurrence: attribute id, label id, its value
        times the weight), ``"start"`` and ``"end"`` (attribute None) and ``"transition"``
        (at the later token; attribute None, label ``(previous, label)``).  The values sum
        to the score (an explanation of a prediction, ``explain_prediction``)."""
        if len(x) != 1:
            raise InputError(f"contributions explain one sentence; got a corpus of {len(x)} "
                             f"sentences (index it: X[i])")
        y = self._label_ids(x, y, "structure")
        emission, trans, start, end = self.split_weights(w)
        t0 = int(x.offsets[0])
        T = int(x.offsets[-1]) - t0
        out: list[tuple] = []
        for t in range(T):
            label = int(y[t])
            if t == 0:
                out.append((0, "start", None, label, float(start[label])))
            else:
                prev = int(y[t - 1])
                out.append((t, "transition", None, (prev, label), float(trans[prev, label])))
            for p in range(int(x.attr_indptr[t0 + t]), int(x.attr_indptr[t0 + t + 1])):
                a = int(x.attr_ids[p])
                v = 1.0 if x.attr_values is None else float(x.attr_values[p])
                out.append((t, "state", a, label, v * float(emission[a, label])))
            if t == T - 1:
                out.append((t, "end", None, label, float(end[label])))
        return out

    def loss(self, y_true, y_pred) -> float:
        """Hamming loss over the tokens whose gold tag is known (partial labels: an unknown
        tag, -1 or completed, costs nothing)."""
        y_true = np.asarray(y_true)
        return float(np.count_nonzero((y_true != np.asarray(y_pred)) & (y_true >= 0)))

    # --- partial labels --------------------------------------------------------------------
    def unknown_parts(self, Y) -> int:
        """How many tokens of the targets ``Y`` have an unknown gold tag (-1)."""
        return int(sum(np.count_nonzero(np.asarray(y) == -1) for y in Y))

    def complete_batch(self, X, w, Y) -> list:
        """Every target of ``Y`` with its unknown tags (-1) completed by the best labelling
        under ``w`` that keeps the known ones (and the ``constraints``): the latent
        completion of partial labels (Yu & Joachims 2009), in one compiled call.  A
        completed tag is written as the code ``-2 - label`` (:func:`completed`), so the
        joint feature counts it while the loss, and the loss-augmented argmax, do not."""
        self.training_constraints("completing partial labels")
        X = as_corpus(X)
        gold = self._batch_label_ids(X, Y, "partial targets")
        if not np.any(gold == -1):
            return [np.asarray(y, dtype=np.int64) for y in Y]
        trans, start, end = self.label_scores(w)
        unary = self.unary_scores(X, w)
        known = gold >= 0
        mask = np.full(unary.shape, -np.inf)
        mask[~known] = 0.0
        mask[np.flatnonzero(known), gold[known]] = 0.0
        labels, scores = viterbi_batch(unary + mask, X.offsets - X.offsets[0], trans, start, end)
        if not np.all(np.isfinite(scores)):
            i = int(np.flatnonzero(~np.isfinite(scores))[0])
            raise InputError(f"training sentence {i}: no labelling keeps its known tags and "
                             f"the model's constraints (a chunker's well-formed sequences); "
                             f"check its tags")
        codes = np.where(known, gold, -2 - labels)
        return np.split(codes, X.offsets[1:-1] - X.offsets[0])

    # --- the compiled online pass (CompiledOnline) -----------------------------------------
    def online_batch(self, X, Y) -> OnlineChainBatch | None:
        """``X`` and ``Y`` prepared once for :meth:`online_pass`: the corpus and its gold
        label ids back to back, checked.  None where the compiled pass would not decode as
        :meth:`argmax` does (global constraints: the ILP) or a gold tag is not a known label
        (partial labels), or where a subclass decodes, differences or counts errors its own
        way (it overrides :data:`_COMPILED_AS`): the learner's Python loop handles those."""
        if self.global_constraints is not None or any(
                getattr(type(self), m) is not getattr(ChainStructure, m) for m in _COMPILED_AS):
            return None
        X = as_corpus(X)
        labels = self._batch_label_ids(X, Y, "structures Y")
        if labels.size and labels.min() < 0:
            return None
        if self.constraints is None:
            allowed = ChainConstraints.unconstrained(self.n_labels)
        else:
            allowed = self.constraints
        return OnlineChainBatch(X, np.ascontiguousarray(labels, dtype=np.int64), allowed)

    def online_pass(self, batch: OnlineChainBatch, w: np.ndarray, order: np.ndarray, rule,
                    params: np.ndarray, u: np.ndarray, extra: np.ndarray,
                    support: np.ndarray, t: int, check: bool) -> dict:
        """One online pass over ``batch`` in ``order``, compiled (:func:`~latentstruct.tasks.
        sequence.online_kernels.online_epoch`): for each sentence, the Viterbi labelling
        under the current ``w`` (the constraints kept) and, after a mistake, the learner's
        update ``rule`` (a code of :data:`~latentstruct.solvers.online_rules.RULES`) on the
        coalesced ``Phi(x, y) - Phi(x, y_hat)`` restricted to ``support``.
        Updates ``w``, ``u`` and ``extra`` in place; returns the pass's statistics
        (:data:`~latentstruct.tasks.sequence.online_kernels.EPOCH_STATS`)."""
        if w.shape != (self.n_features,) or w.dtype != np.float64 or not w.flags.c_contiguous:
            raise ValueError(f"online_pass needs the weights as a contiguous float64 array of "
                             f"{self.n_features}, got {w.dtype} {w.shape}")
        X, c = batch.corpus, batch.constraints
        out = np.zeros(len(EPOCH_STATS))
        online_epoch(X.attr_indptr, X.attr_ids, X.attr_values, X.offsets, batch.labels,
                     order, w, u, extra, support, c.transitions, c.start, c.end,
                     self.n_attributes, self.n_labels, int(rule), params, int(t), bool(check), out)
        return dict(zip(EPOCH_STATS, out.tolist()))


class OnlineChainBatch:
    """A corpus and its gold label ids, prepared once for ``ChainStructure.online_pass``
    (every epoch of a run reuses it)."""

    __slots__ = ("corpus", "labels", "constraints")

    def __init__(self, corpus: SequenceCorpus, labels: np.ndarray, constraints: ChainConstraints):
        self.corpus, self.labels, self.constraints = corpus, labels, constraints

    def __len__(self) -> int:
        return len(self.corpus)
