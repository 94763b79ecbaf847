"""Multiclass classification as a structure: :class:`MulticlassStructure`.

A small immutable object of two numbers, the number of classes L and the number of input
features (the featurizer's width): Φ(x, y) = φ(x) ⊗ e_y, the 0/1 loss, the (loss-augmented)
argmax, the marginals (:class:`~latentstruct.tasks.doccls.marginals.MarginalizableMulticlass`)
and the label-factored parts DISTRO reads; no vocabulary, labels, reading or evaluation.  A
:class:`~latentstruct.tasks.doccls.task.DocumentClassificationTask` builds one from its fitted
featurizer in ``fit`` and ``from_state`` (``task.structure_``); learners see it through
``task.structure()``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

import numpy as np
import scipy.sparse as sp

from ...data.sparse import SparseVector, coalesce_arrays
from ...exceptions import InputError
from ...inference.result import DecodeResult
from ..base import MaxDecodableDefaults, frozen_fields, join_corpora, set_counts
from ..contracts import LABEL_FACTORED, MARGINALIZABLE, MAX_DECODABLE, SIZED
from ..label_factored import LabelFactoredBatch, check_unary, gold_labels
from ..sequence.capabilities import (ChainPartScores, SequenceLabelCounts, SequenceLabelParts,
                                     emission_scores_from_label_matrix)
from ..validation import check_label_ids
from .featurizer import document_label_id as _label
from .marginals import MarginalizableMulticlass
from .matrix import DocumentMatrix, concat_document_matrices

__all__ = ["MulticlassStructure", "MULTICLASS_ARITY"]

#: part types of a multiclass example: one atomic emission part
MULTICLASS_ARITY: Mapping[str, int] = MappingProxyType({"emission": 1})

def _one_document(x) -> DocumentMatrix:
    if not isinstance(x, DocumentMatrix):
        raise InputError(f"expected one featurised document (a DocumentMatrix row such as X[i]); "
                         f"got {type(x).__name__}")
    if len(x) != 1:
        raise InputError(f"expected one document (a one-row DocumentMatrix such as X[i]); got "
                         f"{len(x)} documents. Index the matrix to pass a single example.")
    return x


@frozen_fields("n_labels", "n_attributes")
class MulticlassStructure(MarginalizableMulticlass, MaxDecodableDefaults):
    """Joint feature, 0/1 loss, argmax, marginals and label-factored parts of one class per
    document (a ``DocumentMatrix`` row).

    Parameters
    ----------
    n_labels : int
        The number of classes L (class ids 0..L-1).
    n_attributes : int
        The number of input features (the featurizer's ``n_features_out_``).

    Immutable: a refitted task builds a new one.
    """

    capabilities = frozenset({MAX_DECODABLE, LABEL_FACTORED, SIZED, MARGINALIZABLE})

    def __init__(self, n_labels: int, n_attributes: int):
        set_counts(self, n_labels=n_labels, n_attributes=n_attributes)

    @property
    def n_features(self) -> int:
        return self.n_attributes * self.n_labels

    def split_weights(self, w: np.ndarray) -> np.ndarray:
        """The emission block of ``w`` as an (n_attributes, L) view (it is all of ``w``)."""
        w = np.asarray(w)
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w.reshape(self.n_attributes, self.n_labels)

    def as_batch(self, X) -> DocumentMatrix:
        if sp.issparse(X):
            return DocumentMatrix.from_csr(X)
        return join_corpora(X, DocumentMatrix, concat_document_matrices)

    def subset(self, X, indices) -> DocumentMatrix:
        return self.as_batch(X).subset(indices)

    def example_size(self, x) -> int:
        """One decision per document."""
        return 1

    def unary_scores(self, X, w: np.ndarray) -> np.ndarray:
        """Class scores (n_docs, L) = rows @ W of a batch (one sparse matrix product)."""
        X = self.as_batch(X)
        return np.asarray(X.rows @ self.split_weights(w))

    def _scores(self, x: DocumentMatrix, w) -> np.ndarray:
        W = self.split_weights(w)
        return x.data @ W[x.indices] if x.indices.size else np.zeros(W.shape[1])

    def _class_id(self, y) -> int:
        """The class of structure ``y``, checked to lie in −1..L−1 before it indexes ``w``."""
        return int(check_label_ids([_label(y)], self.n_labels, what="structure")[0])

    def joint_feature(self, x, y) -> SparseVector:
        """Φ(x, y) = φ(x) ⊗ e_y: entry a * L + y holds attribute a's value (empty for y = −1)."""
        x = _one_document(x)
        k = self._class_id(y)
        if k < 0:
            return SparseVector.empty()
        return SparseVector(*coalesce_arrays(x.indices * self.n_labels + k, x.data))

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        x = _one_document(x)
        a, b = self._class_id(y_a), self._class_id(y_b)
        if a == b:
            return SparseVector.empty()
        L = self.n_labels
        idx, val = [], []
        if a >= 0:
            idx.append(x.indices * L + a)
            val.append(x.data)
        if b >= 0:
            idx.append(x.indices * L + b)
            val.append(-x.data)
        if not idx:
            return SparseVector.empty()
        return SparseVector(*coalesce_arrays(np.concatenate(idx), np.concatenate(val)))

    def argmax(self, x, w, y_true=None, *, random_state=None) -> DecodeResult:
        """Best class of document ``x`` (array of shape (1,)), loss-augmented by the 0/1 loss
        against ``y_true`` when given (+1 on every wrong class); ties go to the lowest class.
        The score is the (augmented) score of the returned class; ``random_state`` is unused.
        """
        x = _one_document(x)
        scores = self._scores(x, w)
        if y_true is not None:
            scores = _zero_one_augmented(scores[None, :], np.array([_label(y_true)]))[0]
        k = int(np.argmax(scores))
        return DecodeResult(np.array([k], dtype=np.int64), float(scores[k]))

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        """Best class of every document: one sparse product and a row-wise argmax."""
        X = self.as_batch(X)
        scores = self.unary_scores(X, w)
        if Y is not None:
            scores = _zero_one_augmented(scores, gold_labels(Y, len(X)))
        best = np.argmax(scores, axis=1).astype(np.int64) if len(X) else np.zeros(0, np.int64)
        return list(best.reshape(-1, 1))

    def loss(self, y_true, y_pred) -> float:
        """0/1 loss (a gold label −1, left free, is always wrong)."""
        return float(_label(y_true) != _label(y_pred))

    # --- label-factored (DISTRO), per example ---------------------------------------------
    def label_factored_parts(self, x) -> SequenceLabelParts:
        """The one emission part of document ``x``: its row (csr (1, n_attributes)), L and
        ``part_arity = {"emission": 1}``."""
        x = _one_document(x)
        rows = sp.csr_matrix((x.data.copy(), x.indices.copy(), np.array([0, x.indices.size])),
                             shape=(1, self.n_attributes))
        return SequenceLabelParts(rows, self.n_labels, MULTICLASS_ARITY)

    def part_scores_from_label_matrix(self, parts: SequenceLabelParts, W_E, A, W_T=None,
                                      start_vec=None, end_vec=None) -> ChainPartScores:
        """DISTRO part scores of a document: unary (1, L) = φ(x)ᵀ W_E A.

        A multiclass example has no transition, start or end parts: ``W_T``, ``start_vec``
        and ``end_vec`` are ignored and the returned transition (L, L), start and end (L,)
        are zeros.  W_E : (n_attributes, d); A : (d, L).
        """
        L = parts.n_labels
        unary, _ = emission_scores_from_label_matrix(parts, W_E, A)
        return ChainPartScores(unary, np.zeros((L, L)), np.zeros(L), np.zeros(L))

    def argmax_from_part_scores(self, x, unary, transition=None, start=None, end=None,
                                y_true=None, *, random_state=None) -> DecodeResult:
        """Best class of document ``x`` for given part scores (``unary`` (1, L); the
        transition, start and end scores are ignored: a document has no such parts).

        Loss-augmented by the 0/1 loss against ``y_true`` when given; ties go to the lowest
        class.  Returns a DecodeResult with an int64 array (1,), its score, status "exact".
        """
        _one_document(x)
        scores = check_unary(unary, 1, self.n_labels)
        if y_true is not None:
            scores = _zero_one_augmented(scores, np.array([_label(y_true)]))
        k = int(np.argmax(scores[0]))
        return DecodeResult(np.array([k], dtype=np.int64), float(scores[0, k]))

    def label_counts(self, x, y) -> SequenceLabelCounts:
        """The label structure ``y`` (int (1,), in [−1, L)) puts on the document's one part;
        no transitions, and no start/end labels (first = last = −1)."""
        _one_document(x)
        L = self.n_labels
        y = np.asarray(y)
        if y.shape != (1,) or y.dtype.kind not in "iu":
            raise InputError(f"y must be an integer array of shape (1,); got shape {y.shape}, "
                             f"dtype {y.dtype}")
        y = y.astype(np.int64)
        if not -1 <= int(y[0]) < L:
            raise InputError(f"y must hold a label in [-1, {L}); got {int(y[0])}")
        return SequenceLabelCounts(y, np.zeros((0, 2), np.int64), -1, -1, L)

    # --- label-factored, batch form -------------------------------------------------------
    def label_factored_batch(self, X) -> LabelFactoredBatch:
        """Every document of ``X``: its rows (csr (n, n_attributes)), offsets 0..n, L and
        ``{"emission": 1}``."""
        X = self.as_batch(X)
        return LabelFactoredBatch(X.rows, np.arange(len(X) + 1, dtype=np.int64), self.n_labels,
                                  MULTICLASS_ARITY)

    def argmax_from_part_scores_batch(self, batch_offsets, unary, transition=None, start=None,
                                      end=None, Y=None) -> np.ndarray:
        """Best class of every document, int64 (N,), from ``unary`` (N, L); +1 on every wrong
        class against the gold labels ``Y`` (concatenated int64 or a list of (1,) arrays)
        when given; ties go to the lowest class.  Transition/start/end scores are ignored."""
        offsets = np.asarray(batch_offsets, dtype=np.int64)
        N = int(offsets.shape[0]) - 1
        if N < 0 or not np.array_equal(offsets, np.arange(N + 1)):
            raise InputError("batch_offsets must be 0, 1, ..., N: a document is exactly one "
                             "part (use label_factored_batch(X).offsets)")
        scores = check_unary(unary, N, self.n_labels)
        if Y is not None:
            scores = _zero_one_augmented(scores, gold_labels(Y, N))
        if N == 0:
            return np.zeros(0, np.int64)
        return np.argmax(scores, axis=1).astype(np.int64)


def _zero_one_augmented(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """scores (N, L) + 1 on every wrong class of each row (every class when gold is −1)."""
    gold = check_label_ids(gold, scores.shape[1], what="gold labels")
    out = scores + 1.0
    known = np.flatnonzero(gold >= 0)
    out[known, gold[known]] -= 1.0
    return out
