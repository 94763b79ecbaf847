"""Pairwise CRFs on general graphs: the shared CRF machinery and ``GraphCRF``.

An example is ``x = (features, edges)``: ``features`` an ``(n_nodes, n_features)`` array,
``edges`` an ``(n_edges, 2)`` int array of node pairs; ``y`` is an int array of one state
per node.  The weights are the unary block ``(n_states, n_features)`` (row by row), then
the pairwise block: the full ``n_states x n_states`` matrix when ``directed``, otherwise
its lower triangle row by row (the matrix is symmetric).  An edge ``(i, j)`` scores
``pairwise[y_i, y_j]``.  The features and potentials are the core's
(:class:`latentstruct.tasks.graph.layout.GraphLayout`, the one GraphCRF feature map, which
the graph tasks score through too); this module reads and checks PyStruct's examples and
decodes.  Every decoder is reached through the layer's ``inference_dispatch``; the energy
it returns is ``-score``, as in PyStruct.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

import numpy as np

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks.graph.featurizer import GraphExample
from latentstruct.tasks.graph.layout import GraphLayout

from . import base
from .base import StructuredModel
from .checks import (as_class_weight, as_edges, as_features, as_labels, check_dimension,
                     count_states, unpack_x)

__all__ = ["CRF", "GraphCRF", "one_hot"]

#: What a CRF decodes with when the caller names no method: an exact ILP on HiGHS (the
#: layer solves the LP first and branches only when that is fractional).
DEFAULT_INFERENCE = "ad3"


def one_hot(y, n_states: int) -> np.ndarray:
    """``(n_nodes, n_states)`` indicator rows of the states ``y``."""
    y = np.asarray(y).ravel()
    out = np.zeros((y.size, n_states))
    out[np.arange(y.size), y] = 1.0
    return out


@functools.lru_cache(maxsize=256)
def _pairwise_layout(n_states: int, n_edge_columns: int, symmetric: bool, sym: tuple,
                     anti: tuple) -> GraphLayout:
    """The layout of ``n_states`` states' pairwise weights, kept: a model asks for it on
    every joint feature and decode, and it is no state of the model (not on the model, so
    a ``SaveLogger`` file and what a learner holds are what they were)."""
    return GraphLayout(n_states, 0, n_edge_columns, symmetric, sym, anti)


class CRF(StructuredModel, ABC):
    """What PyStruct's pairwise CRFs share: sizes, class weights, (loss-augmented) decoding.

    Subclasses say how to read an example (``_prepare``), its potentials and its joint
    feature; this class owns ``initialize``, ``inference`` and ``loss_augmented_inference``.
    """

    def __init__(self, n_states=None, n_features=None, inference_method=None,
                 class_weight=None):
        super().__init__()
        self.n_states = n_states
        self.n_features = n_features
        self.inference_method = (DEFAULT_INFERENCE if inference_method is None
                                 else inference_method)
        self._class_weight_given = class_weight
        self.class_weight = None
        self._set_size_joint_feature()
        self._set_class_weight()

    # -- sizes ---------------------------------------------------------------------------
    @abstractmethod
    def _set_size_joint_feature(self):
        """Set ``size_joint_feature`` from ``n_states`` and ``n_features`` (the weight layout
        of the concrete model)."""

    def _set_class_weight(self):
        if self.n_states is not None:
            self.class_weight = as_class_weight(self._class_weight_given, self.n_states,
                                                type(self).__name__)

    def _set_states_from(self, Y):
        """Infer (or check) the state count from training labels."""
        check_dimension(self, "n_states", count_states(Y), "the labels Y")

    def _check_labels(self, prepared, y, where):
        """Check a training label (a state per node here; latent models take labels)."""
        return self._check_y(prepared, y, where)

    def _check_target(self, prepared, y, where):
        """Check what a learner trains and scores on: the states ``y`` (``h`` for latent
        models, whose learners' targets are the completed hidden states)."""
        return self._check_y(prepared, y, where)

    def _check_label(self, x, y, index, name, latent):
        """``y`` of ``x`` (``X[index]``) as int states in ``y``'s own shape (a grid keeps
        its rows), checked against the example's nodes and the model's states."""
        prepared = self._prepare(x, f"X[{index}]")
        check = self._check_labels if latent else self._check_target
        labels = check(prepared, y, f"{name}[{index}]")
        shape = np.shape(y)
        return labels.reshape(shape) if labels.size == int(np.prod(shape)) else labels

    def initialize(self, X, Y):
        """Infer ``n_features`` and ``n_states`` from the data, or check the given ones.

        Each example is checked on the way (its tuple, edges, features and labels), so a
        bad one is refused here, named by its index, before any training starts.
        """
        X, Y = list(X), list(Y)
        if len(X) != len(Y):
            raise InputError(f"X has {len(X)} examples but Y has {len(Y)}; give one y per x")
        prepared = [self._prepare(x, f"X[{i}]", check_width=False) for i, x in enumerate(X)]
        widths = {self._width_of(p) for p in prepared}
        if len(widths) > 1:
            first = self._width_of(prepared[0])
            bad = next(i for i, p in enumerate(prepared) if self._width_of(p) != first)
            raise InputError(f"X[{bad}]: feature width {self._width_of(prepared[bad])} "
                             f"differs from X[0]'s {first}; every example needs the same "
                             f"feature columns")
        if prepared:
            self._check_widths(prepared[0], "the data")
        if Y:
            self._set_states_from(Y)
        self._set_size_joint_feature()
        self._set_class_weight()
        for i, (p, y) in enumerate(zip(prepared, Y)):
            self._check_labels(p, y, f"X[{i}]")

    def _width_of(self, prepared):
        return prepared[0].shape[1]

    def _check_widths(self, prepared, source):
        check_dimension(self, "n_features", self._width_of(prepared), source)

    def _check_y(self, prepared, y, where):
        return as_labels(y, where, prepared[0].shape[0], self.n_states)

    # -- what an example is --------------------------------------------------------------
    def _prepare(self, x, where="x", check_width=True):
        """``x`` as checked arrays: ``(features, edges)``."""
        features, edges = unpack_x(x, where, ("features", "edges"))
        features = as_features(features, where, self.n_features if check_width else None)
        return features, as_edges(edges, where, features.shape[0])

    def _get_features(self, x):
        return self._prepare(x)[0]

    def _get_edges(self, x):
        return self._prepare(x)[1]

    def _prepare_sized(self, x):
        """``_prepare(x)``, first fixing sizes still unknown (``n_features``) from ``x``."""
        prepared = self._prepare(x)
        if self.size_joint_feature is None:
            if self.n_states is None:
                raise ConfigError(f"{type(self).__name__}: n_states is unknown; pass it to "
                                  f"the constructor or call initialize(X, Y) first")
            self._check_widths(prepared, "x")
            self._set_size_joint_feature()
            self._set_class_weight()
        return prepared

    def _unary_shape(self):
        return self.n_states, self.n_features

    def _unary_size(self):
        rows, cols = self._unary_shape()
        return rows * cols

    def _get_unary_potentials(self, x, w):
        """``(n_nodes, n_states)`` unary scores: features times the unary weights."""
        prepared = self._prepare_sized(x)
        return self._unary_from(prepared, self._check_size_w(w))

    def _get_pairwise_potentials(self, x, w):
        """The pairwise scores the decoder gets: one shared matrix or one per edge."""
        prepared = self._prepare_sized(x)
        return self._pairwise_from(prepared, self._check_size_w(w))

    def _shape_result(self, x, result):
        """Labels or marginals in the shape the caller's ``y`` has (grids reshape)."""
        return result

    # -- decoding ------------------------------------------------------------------------
    def _potentials(self, x, w):
        prepared = self._prepare_sized(x)
        w = self._check_size_w(w)
        return (prepared, self._unary_from(prepared, w), self._pairwise_from(prepared, w),
                prepared[1])

    def _unary_from(self, prepared, w):
        unary_w = w[:self._unary_size()].reshape(self._unary_shape())
        return prepared[0] @ unary_w.T

    @abstractmethod
    def _pairwise_from(self, prepared, w):
        """The pairwise potentials of a prepared ``x`` under ``w`` (the model's layout)."""

    def _decode(self, x, unary, pairwise, edges, relaxed, return_energy):
        self.inference_calls += 1
        out = base.run_inference(unary, pairwise, edges, self.inference_method,
                                 relaxed=relaxed, return_energy=return_energy)
        if return_energy:
            result, energy = out
            return self._shape_result(x, result), energy
        return self._shape_result(x, out)

    def _decode_barred(self, x, w, problem, relaxed, return_energy, y=None, split=None):
        """Decode ``problem`` (``(unary, pairwise, edges)``, some states barred by a
        ``barrier``: hidden or typed nodes).  Labels come back as ints, marginals through
        ``split``; the energy is the model's own, ``-(w . joint_feature + loss against
        y)``, free of the barrier's rounding."""
        self.inference_calls += 1
        result = base.run_inference(*problem, self.inference_method, relaxed=relaxed)
        if isinstance(result, tuple):
            result = result if split is None else split(result)
        else:
            result = np.asarray(result, dtype=np.intp)
        if not return_energy:
            return result
        score = np.dot(self._check_size_w(w), self.joint_feature(x, result))
        if y is not None:
            score += self.loss(y, result)
        return result, -score

    def inference(self, x, w, relaxed=False, return_energy=False):
        """The highest-scoring ``y`` for ``x`` (marginals when relaxed and fractional)."""
        _, unary, pairwise, edges = self._potentials(x, w)
        return self._decode(x, unary, pairwise, edges, relaxed, return_energy)

    def _augment(self, unary, y):
        """Add each node's loss to its unaries: ``class_weight[y_i]`` to every other state."""
        y = np.asarray(y).ravel()
        penalty = np.asarray(self.class_weight)[y]
        unary = unary + penalty[:, None]
        unary[np.arange(y.size), y] -= penalty
        return unary

    def loss_augmented_inference(self, x, y, w, relaxed=False, return_energy=False):
        """The ``y_hat`` maximising ``w . joint_feature(x, y_hat) + loss(y, y_hat)``."""
        prepared, unary, pairwise, edges = self._potentials(x, w)
        y = self._check_y(prepared, y, "x")
        return self._decode(x, self._augment(unary, y), pairwise, edges, relaxed,
                            return_energy)

    # -- joint feature -------------------------------------------------------------------
    def _marginals(self, prepared, y):
        """``(unary_marginals (n_nodes, n_states), y)`` of a discrete or relaxed ``y``."""
        n_nodes = prepared[0].shape[0]
        if isinstance(y, tuple):
            unary = np.asarray(y[0], dtype=np.float64).reshape(n_nodes, self.n_states)
            return unary, y
        labels = self._check_y(prepared, y, "x")
        return one_hot(labels, self.n_states), labels


class GraphCRF(CRF):
    """A pairwise CRF on each example's own graph, with one pairwise matrix for all edges.

    Parameters: ``n_states``, ``n_features`` (inferred by ``initialize`` when None),
    ``inference_method`` (a name or ``(name, kwargs)`` as PyStruct takes; default exact),
    ``class_weight`` (per state, weighting the Hamming loss), ``directed`` (a full rather
    than a symmetric pairwise matrix).
    """

    def __init__(self, n_states=None, n_features=None, inference_method=None,
                 class_weight=None, directed=False):
        self.directed = directed
        super().__init__(n_states, n_features, inference_method, class_weight)

    def _layout_options(self) -> tuple:
        """The pairwise layout's ``(n_edge_columns, symmetric, symmetric_edge_columns,
        antisymmetric_edge_columns)``: one matrix, symmetric unless ``directed``."""
        return 0, not self.directed, (), ()

    def _pairwise_layout(self) -> GraphLayout:
        """The core's layout of the pairwise weights (those after this model's unary block,
        whose size a latent model chooses itself; the layout's own unary block is empty)."""
        return _pairwise_layout(int(self.n_states), *self._layout_options())

    def _example(self, prepared) -> GraphExample:
        """A prepared ``x`` as the core's graph example (no edge features here)."""
        return GraphExample(prepared[0], prepared[1], None)

    def _n_pairwise(self):
        return self._pairwise_layout().n_pairwise

    def _set_size_joint_feature(self):
        if self.n_states is not None and self.n_features is not None:
            self.size_joint_feature = self._unary_size() + self._n_pairwise()

    def _pairwise_from(self, prepared, w):
        return self._pairwise_layout().pairwise_potentials(self._example(prepared),
                                                           w[self._unary_size():])

    def joint_feature(self, x, y):
        """Unary features summed per state, then pairwise (co-)occurrence counts.

        ``y`` is a state per node, or relaxed ``(unary_marginals, pairwise_marginals)``,
        pairwise marginals per edge ``(n_edges, n_states, n_states)`` or (without edge
        features) already summed.
        """
        prepared = self._prepare_sized(x)
        unary, labels = self._marginals(prepared, y)
        layout, example = self._pairwise_layout(), self._example(prepared)
        if isinstance(y, tuple):
            pairwise = layout.expected_pairwise_feature(example, y[1])
        else:
            pairwise = layout.pairwise_feature(example, labels)
        return np.hstack([self._unary_part(prepared, unary, layout, example), pairwise])

    def _unary_part(self, prepared, unary_marginals, layout, example):
        """The unary block of the joint feature (a latent model keeps fewer rows)."""
        return layout.expected_unary_feature(example, unary_marginals)

    def explain(self, x, w, y=None):
        """latentstruct's extension (PyStruct has none): why ``w`` labels ``x`` as it does,
        or scores ``y`` as it does.  An ``estimators.graph_explain.GraphExplanation``: every
        node part's (its features with its state) and edge part's share of ``w ·
        joint_feature(x, y)`` (they sum to it), the best other labelling and the margin
        (exact: one argmax per node with its state ruled out).  ``y`` None: the model's
        ``inference(x, w)``.  A model whose weights are not the pairwise layout of its
        nodes' own states (the latent-node models, typed graphs) is refused."""
        from latentstruct.estimators.graph_explain import graph_explanation
        from latentstruct.tasks.graph.structure import GraphStructure

        prepared = self._prepare_sized(x)
        w = self._check_size_w(w)
        labels = (np.asarray(self.inference(x, w), dtype=np.int64) if y is None
                  else np.asarray(y, dtype=np.int64)).ravel()
        refused = ConfigError(f"explain covers models whose weights are the unary and "
                              f"pairwise blocks of their nodes' own states (GraphCRF, "
                              f"ChainCRF, GridCRF, EdgeFeatureGraphCRF); "
                              f"{type(self).__name__}'s are not")
        n_edge, symmetric, sym, anti = self._layout_options()
        layout = GraphLayout(int(self.n_states), int(prepared[0].shape[1]), n_edge,
                             symmetric, sym, anti)
        if layout.size != w.size:
            raise refused
        explained = graph_explanation(GraphStructure(layout), self._example(prepared), w,
                                      labels)
        # the layout's score must be the model's own (a subclass may read w otherwise)
        expected = float(np.dot(w, self.joint_feature(x, labels.reshape(np.shape(y))
                                                      if y is not None else labels)))
        if abs(explained.score - expected) > 1e-9 * (1 + abs(expected)):
            raise refused
        return explained
