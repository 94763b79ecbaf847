"""Capability *marginalizable* of multiclass classification: softmax over the classes.

A document has one part, labelled with one of L classes, so the sums over structures are
sums over classes: ``log Z(x) = log Σ_k exp(s_k(x))`` with ``s_k(x) = φ(x)ᵀ W[:, k]``, and
the marginals are the softmax of the scores.  The ``crf`` learner then trains multinomial
logistic regression (no intercept) over the task's features, and ``predict_proba`` gives
class probabilities.

The mixin relies on the task's ``as_batch``, ``split_weights`` (W, (n_attributes, L)),
``unary_scores`` (the (n, L) scores of a batch), ``n_labels``, ``n_attributes``,
``n_features`` and on one-document ``DocumentMatrix`` examples (``indices``, ``data``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp, softmax

from ...inference.chain import ChainMarginals
from ..label_factored import gold_labels

__all__ = ["MarginalizableMulticlass"]


def _one(task, x):
    X = task.as_batch(x)
    if len(X) != 1:
        from ...exceptions import InputError

        raise InputError(f"expected one document (X[i]); got a batch of {len(X)}. Index the "
                         "batch to pass a single example")
    return X


class MarginalizableMulticlass:
    """Log-partition, marginals and expected features of p(k | x) ∝ exp(s_k(x))."""

    def marginals(self, x, w: np.ndarray) -> ChainMarginals:
        """``log_partition`` and ``node`` (1, L), the class probabilities of document ``x``
        (a chain of one position: ``edge`` is empty)."""
        s = self.unary_scores(_one(self, x), w)[0]
        log_z = float(logsumexp(s))
        return ChainMarginals(log_z, np.exp(s - log_z)[None, :],
                              np.zeros((0, self.n_labels, self.n_labels)))

    def log_partition(self, x, w: np.ndarray) -> float:
        """``log Σ_k exp(s_k(x))``."""
        return self.marginals(x, w).log_partition

    def expected_feature(self, x, w: np.ndarray) -> np.ndarray:
        """``E_{p(k|x)}[Φ(x, k)]``, dense (n_features,): entry a·L + k is φ_a(x) p(k | x)."""
        X = _one(self, x)
        p = self.marginals(X, w).node[0]
        out = np.zeros((self.n_attributes, self.n_labels))
        np.add.at(out, X.rows.indices, X.rows.data[:, None] * p[None, :])
        return out.ravel()

    def log_loss_batch(self, X, Y, w: np.ndarray) -> tuple[float, np.ndarray]:
        """``Σ_i [log Z(x_i) − s_{y_i}(x_i)]`` and its gradient ``Φᵀ (P − onehot(Y))`` laid
        out like ``w``, from one sparse product each way; a gold class −1 (unseen in
        training) leaves the document free, so it adds nothing."""
        X = self.as_batch(X)
        y = gold_labels(Y, len(X), self.n_labels)
        s = self.unary_scores(X, w)
        log_z = logsumexp(s, axis=1)
        target = np.zeros_like(s)
        known = np.flatnonzero(y >= 0)
        target[known, y[known]] = 1.0
        # a free document's numerator sums over every class: it equals log Z
        target[y < 0] = softmax(s[y < 0], axis=1)
        numerator = np.where(y >= 0, s[np.arange(len(X)), np.maximum(y, 0)], log_z)
        diff = softmax(s, axis=1) - target
        grad = np.asarray(X.rows.T @ diff).ravel()
        return float(np.sum(log_z - numerator)), grad

    def marginals_batch(self, X, w: np.ndarray) -> list[np.ndarray]:
        """Class probabilities of every document, as (1, L) arrays."""
        p = softmax(self.unary_scores(self.as_batch(X), w), axis=1)
        return [row[None, :] for row in p]

    def observed_feature_support(self, X, Y) -> np.ndarray:
        """The (attribute, class) weights of attributes seen with that class in training
        (CRFsuite-style ``possible_states=0``), sorted."""
        X = self.as_batch(X)
        y = gold_labels(Y, len(X), self.n_labels)
        rows = X.rows.tocoo()
        label = y[rows.row]
        keep = label >= 0
        return np.unique(rows.col[keep].astype(np.int64) * self.n_labels + label[keep])
