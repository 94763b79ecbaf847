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
from ...inference.constraints import ChainConstraints
from ...inference.result import DecodeResult
from ...inference.viterbi import viterbi, viterbi_batch
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

__all__ = ["ChainStructure"]


@frozen_fields("n_labels", "n_attributes", "constraints")
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

    Immutable: a refitted task builds a new one.
    """

    def __init__(self, n_labels: int, n_attributes: int, constraints=None):
        set_counts(self, n_labels=n_labels, n_attributes=n_attributes)
        if constraints is not None and (not isinstance(constraints, ChainConstraints)
                                        or constraints.n_labels != self.n_labels):
            raise ValueError(f"ChainStructure: constraints must be None or ChainConstraints "
                             f"over its {self.n_labels} labels, got {constraints!r}")
        object.__setattr__(self, "constraints", constraints)

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
        """``y`` checked before a kernel reads it: integer ids in -1..L-1, one per token."""
        n = int(x.offsets[-1] - x.offsets[0])
        L = self.n_labels
        # Fast path for what learners pass (a decoder's int64 labels), called per example.
        if (type(y) is np.ndarray and y.dtype == np.int64 and y.shape == (n,)
                and first_outside(y, -1, L) < 0):
            return y
        y = check_label_ids(y, L, what=what)
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
        return check_label_ids(flat, self.n_labels, what=what)

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
        wrong = np.concatenate([np.asarray(y) for y in Y_true]) != np.concatenate(
            [np.asarray(y) for y in Y_pred])
        row = np.repeat(np.arange(len(sizes)), sizes)
        return np.bincount(row, weights=wrong, minlength=len(sizes)).astype(np.float64)

    def argmax(self, x: SequenceCorpus, w, y_true=None, *, random_state=None) -> DecodeResult:
        trans, start, end = self.label_scores(w)
        unary = self.unary_scores(x, w)
        if y_true is not None:
            unary = hamming_augmented(unary, y_true)
        return viterbi(unary, trans, start, end, random_state=random_state)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        X = as_corpus(X)
        if random_state is not None:
            return super().argmax_batch(X, w, Y, random_state=random_state)
        trans, start, end = self.label_scores(w)
        unary = self.unary_scores(X, w)
        if Y is not None:
            unary = hamming_augmented(unary, np.concatenate(Y) if len(Y) else np.zeros(0, np.int64))
        labels, _ = viterbi_batch(unary, X.offsets - X.offsets[0], trans, start, end)
        cuts = X.offsets[1:-1] - X.offsets[0]
        return np.split(labels, cuts)

    def loss(self, y_true, y_pred) -> float:
        return float(np.count_nonzero(np.asarray(y_true) != np.asarray(y_pred)))
