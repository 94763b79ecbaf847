"""PyStruct's model interface: what every structured model offers its learners.

A model scores an output ``y`` for an input ``x`` by ``w . joint_feature(x, y)``.
``inference`` maximises that score, ``loss_augmented_inference`` maximises it plus
``loss(y, y_hat)``, and ``size_joint_feature`` is the length of ``w``.  Energies follow
PyStruct's sign: the CRFs' inference returns ``-score`` as its energy.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import InputError

from .checks import as_labels, check_weights

__all__ = ["StructuredModel", "run_inference", "barrier", "marginal_rows"]


def run_inference(unary, pairwise, edges, inference_method, relaxed=False,
                  return_energy=False):
    """The layer's ``inference_dispatch`` (PyStruct's signature), the one decoder entry.

    The import is deferred so that the models load before the inference package does;
    tests replace this function with brute-force enumeration.
    """
    from latentstruct.pystruct.inference import inference_dispatch

    if not return_energy and not np.any(pairwise) and np.ndim(unary) == 2:
        # without pairwise scores the nodes are independent: each node's best state is
        # exact (the local polytope is integral too), and ties go to the lowest state
        # every time, where a warm solver's choice among tied optima depends on its past
        return np.argmax(unary, axis=1).astype(np.intp)
    return inference_dispatch(unary, pairwise, edges, inference_method,
                              relaxed=relaxed, return_energy=return_energy)


def barrier(unary, pairwise, n_edges: int) -> float:
    """A penalty larger than any score a labelling can gain elsewhere (bars a state).

    ``pairwise`` is one matrix every edge shares, or one per edge (3-d).
    """
    pairwise = np.asarray(pairwise, dtype=np.float64)
    edge_total = (float(np.abs(pairwise).sum()) if pairwise.ndim == 3
                  else n_edges * float(np.abs(pairwise).max(initial=0.0)))
    return 1.0 + 2.0 * (float(np.abs(unary).sum()) + edge_total)


class StructuredModel:
    """The interface PyStruct's learners train: joint feature, loss, (loss-augmented) argmax.

    Subclasses set ``size_joint_feature`` and implement ``joint_feature``, ``inference``
    and ``loss_augmented_inference``; ``loss`` is the (class-weighted) Hamming loss.
    """

    size_joint_feature = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}, size_joint_feature: {self.size_joint_feature}"

    def __init__(self):
        self.inference_calls = 0

    def initialize(self, X, Y):
        """Infer sizes from the training data (a no-op for models whose sizes are fixed)."""

    def _check_size_w(self, w) -> np.ndarray:
        return check_weights(w, self.size_joint_feature, type(self).__name__)

    # -- labels --------------------------------------------------------------------------
    def check_labels(self, X, Y, name="Y", latent=False) -> list:
        """``Y`` as a list of labellings in the form the model computes with, each checked
        against its ``x``.

        The learners call this once, where labels come in (``fit``, ``score``), so that
        every later use (indexing class weights, counting edges, comparing with a
        prediction) sees integer states of the right number and range: integer-valued
        floats (PyStruct accepted them, and scikit-learn compares labels by value) become
        ints, and a labelling of the wrong length or with a state out of range is refused
        naming ``{name}[i]``.  ``latent``: ``Y`` holds a latent model's labels rather than
        its hidden states.
        """
        X, Y = list(X), list(Y)
        if len(X) != len(Y):
            raise InputError(f"X has {len(X)} examples but {name} has {len(Y)}; give one "
                             f"labelling per example")
        return [self._check_label(x, y, i, name, latent)
                for i, (x, y) in enumerate(zip(X, Y))]

    def _check_label(self, x, y, index, name, latent):
        """One labelling of ``x``; a model without its own check only turns integer-valued
        floats into ints (its labels may be anything else, which it knows how to read)."""
        if isinstance(y, tuple):
            return y
        arr = np.asarray(y)
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            return arr.astype(np.intp)
        return y

    def _labels_of(self, y, where, name):
        """``y`` as a flat int array of this model's states (``n_states`` when known)."""
        return as_labels(y, where, None, getattr(self, "n_states", None), name=name)

    def _loss_pair(self, y, y_hat, what="loss"):
        """``y`` and ``y_hat`` as flat int states of one example (same count, in range).

        A grid's prediction comes back in the grid's shape while its ``y`` may be flat:
        both are compared flat, as the Hamming loss does not depend on the shape.
        """
        y = self._labels_of(y, what, "y")
        y_hat = self._labels_of(y_hat, what, "y_hat")
        if y.size != y_hat.size:
            raise InputError(f"{what}: y has {y.size} labels but y_hat has {y_hat.size}; "
                             f"compare two labellings of the same example")
        return y, y_hat

    # -- batches -------------------------------------------------------------------------
    def batch_joint_feature(self, X, Y, Y_true=None):
        """The sum of ``joint_feature(x, y)`` over the examples."""
        total = np.zeros(self.size_joint_feature)
        if Y_true is None:
            for x, y in zip(X, Y):
                total += self.joint_feature(x, y)
        else:
            for x, y, y_true in zip(X, Y, Y_true):
                total += self.joint_feature(x, y, y_true)
        return total

    def _loss_augmented_djoint_feature(self, x, y, y_hat, w):
        """``joint_feature(x, y) - joint_feature(x, y_hat)`` (the constraint's direction)."""
        return self.joint_feature(x, y) - self.joint_feature(x, y_hat)

    def batch_inference(self, X, w, relaxed=None):
        kwargs = {} if relaxed is None else {"relaxed": relaxed}
        return [self.inference(x, w, **kwargs) for x in X]

    def batch_loss_augmented_inference(self, X, Y, w, relaxed=None):
        kwargs = {} if relaxed is None else {"relaxed": relaxed}
        return [self.loss_augmented_inference(x, y, w, **kwargs) for x, y in zip(X, Y)]

    def batch_loss(self, Y, Y_hat):
        return [self.loss(y, y_hat) for y, y_hat in zip(Y, Y_hat)]

    # -- losses --------------------------------------------------------------------------
    def _class_weight_of(self, y) -> np.ndarray:
        weights = getattr(self, "class_weight", None)
        y = np.asarray(y)
        if weights is None:
            return np.ones(y.shape)
        return np.asarray(weights)[y]

    def loss(self, y, y_hat):
        """Hamming loss, each node weighted by its true state's class weight.

        A relaxed ``y_hat`` (a ``(unary_marginals, pairwise_marginals)`` tuple) gets the
        continuous loss of its marginals.
        """
        if isinstance(y_hat, tuple):
            return self.continuous_loss(y, y_hat[0])
        y, y_hat = self._loss_pair(y, y_hat)
        return float(np.sum(self._class_weight_of(y) * (y != y_hat)))

    def batch_continuous_loss(self, Y, Y_hat):
        return [self.continuous_loss(y, y_hat) for y, y_hat in zip(Y, Y_hat)]

    def continuous_loss(self, y, y_hat):
        """Expected Hamming loss of unary marginals ``y_hat`` (``(..., n_states)``)."""
        y = self._labels_of(y, "continuous_loss", "y")
        marginals = marginal_rows(y_hat, y.size, getattr(self, "n_states", None))
        right = marginals[np.arange(y.size), y]
        return float(np.sum(self._class_weight_of(y) * (1.0 - right)))

    def max_loss(self, y):
        """The largest loss any output can have against ``y``."""
        return float(np.sum(self._class_weight_of(self._labels_of(y, "max_loss", "y"))))


def marginal_rows(y_hat, n_nodes: int, n_states) -> np.ndarray:
    """Unary marginals ``y_hat`` as ``(n_nodes, n_states)`` rows, or a one-line InputError
    (numpy's reshape error would name neither the marginals nor the labelling)."""
    marginals = np.asarray(y_hat, dtype=np.float64)
    width = n_states if n_states is not None else (marginals.size // n_nodes if n_nodes else 0)
    if marginals.size != n_nodes * width or (n_nodes and width == 0):
        raise InputError(f"continuous_loss: y_hat's marginals have shape {marginals.shape} but "
                         f"y has {n_nodes} labels; give one row of state marginals per node")
    return marginals.reshape(n_nodes, width)
