"""Model inspection: what a trained linear model has learnt, as plain data.

:func:`inspect_model` reads a fitted task and its learner's weights and returns a JSON-able
dict, like sklearn-crfsuite's ``state_features_`` and ``transition_features_``:

* label-structured models (``chunk``, ``pos``, ``citations``, ``doccls``; kind
  ``"labels"``): per label the strongest attributes (largest weights) and the most
  negative ones, each with its readable name from the task's feature index, and for the
  sequence tasks the first-order label-transition matrix with the start and end weights;
* every other model (the latent ``translit``, ``paraphrase``, ``rte``, ``grammaticality``
  and ``dep``, ``rerank``; kind ``"weights"``): the largest-magnitude weights with their
  feature names, and the bias where the model has one.

Feature names come from the task's index.  With a hashed index (``feature_index=hashing``,
and the ``dep`` and ``rerank`` features) the names were never stored: features are shown
by their hash bucket (``#1234``) and ``hashed_features`` is true.  Numeric columns are
named ``column j``: those of a sequence model's arrays (after its attribute index) and
those of the matrix a ``doccls`` model was fitted on.  A DISTRO model is shown
through its effective per-label weights (W_E A, A^T W_T A, ...), a J-LIS model through its
task weights, with the bias of its binary examples as ``binary_bias``.

This module sits above the learners (it reads their weights) and below the command line.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..data.features import FeatureIndex
from ..exceptions import ConfigError, check_is_fitted
from ..tasks import (DependencyTask, DocumentClassificationTask, GrammaticalityTask,
                    GraphPairTask, RerankTask, SequenceLabellingTask, TransliterationTask)

__all__ = ["inspect_model", "model_weights", "feature_namer"]

#: the name of character id 0 (unknown characters and the word boundary) in translit names
_NO_CHAR = "\u2205"


def feature_namer(index) -> tuple[Callable[[int], str], bool]:
    """``(id -> name, hashed)`` for a feature index: the stored names of a FeatureIndex, or
    ``#id`` for a hashing index (its names were never stored)."""
    if isinstance(index, FeatureIndex):
        names = index.names
        return names.__getitem__, False
    return (lambda i: f"#{i}"), True


def model_weights(task, learner) -> tuple[np.ndarray, dict]:
    """The weight vector in ``task``'s feature layout, and extra learned values.

    Most learners keep exactly that vector as ``coef_``.  J-LIS appends the bias of its
    binary examples (returned as ``{"binary_bias": b}``); DISTRO keeps a factored model,
    whose effective weights are rebuilt here.
    """
    coef = getattr(learner, "coef_", None)
    if coef is None:
        raise ConfigError(f"the {type(learner).__name__} model has no weights (coef_) to inspect")
    coef = np.asarray(coef, dtype=np.float64)
    name = getattr(learner, "registry_name", "")
    n = task.n_features
    if name == "distro":
        return _distro_weights(task, learner), {}
    if name == "jlis" and coef.shape == (n + 1,):
        return coef[:-1], {"binary_bias": float(coef[-1])}
    if coef.shape != (n,):
        raise ConfigError(f"cannot inspect a {name or type(learner).__name__} model: it has "
                          f"{coef.shape[0]} weights, the {task.name!r} task {n} features")
    return coef, {}


def _distro_weights(task, learner) -> np.ndarray:
    """DISTRO's effective weights in the task's label-factored layout."""
    from ..learners.ssvm.distro_model import DistroParams

    p = DistroParams.unpack(learner.coef_, learner.n_attributes_, learner.n_components_,
                            task.n_labels, learner.has_transitions_)
    parts = [(p.emission() @ p.A).ravel()]
    trans, start, end = p.label_scores()
    if isinstance(task, SequenceLabellingTask):
        L = task.n_labels
        if trans is None:  # no transitions learnt: they score 0
            trans, start, end = np.zeros((L, L)), np.zeros(L), np.zeros(L)
        parts += [trans.ravel(), start, end]
    return np.concatenate(parts)


def _entries(values: np.ndarray, ids: np.ndarray, name) -> list[dict]:
    return [{"feature": name(int(i)), "weight": float(values[i])} for i in ids]


def _top(values: np.ndarray, k: int, *, by_magnitude: bool = False, negative: bool = False):
    """Indices of the ``k`` largest entries (by value, |value| or -value), best first,
    skipping zeros; ties broken by index."""
    key = np.abs(values) if by_magnitude else (-values if negative else values)
    nonzero = np.flatnonzero(key > 0)
    if nonzero.size > k:
        part = np.argpartition(-key[nonzero], k - 1)[:k]
        nonzero = nonzero[part]
    order = np.lexsort((nonzero, -key[nonzero]))
    return nonzero[order]


def inspect_model(task, learner, *, top: int = 20) -> dict:
    """What a trained model has learnt, as plain data (see the module docstring).

    Returns a dict with ``task``, ``learner``, ``kind`` (``"labels"`` or ``"weights"``),
    ``hashed_features``, ``bias`` (None without one), and for ``"labels"``: ``labels``,
    ``features`` ({label: {"positive": [...], "negative": [...]}}, each a list of
    ``{"feature": name, "weight": w}``, at most ``top``, strongest first) and, for sequence
    tasks, ``transitions`` ({"labels", "weights": rows = previous label, columns = next
    label, "start", "end"}); for ``"weights"``: ``largest`` (the ``top`` largest-magnitude
    weights).  Zero weights are never listed.
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ConfigError(f"top must be a positive integer, got {top!r}")
    check_is_fitted(task)
    w, extra = model_weights(task, learner)
    out = {"task": task.name, "learner": getattr(learner, "registry_name", type(learner).__name__),
           "n_features": int(w.shape[0])}
    if isinstance(task, (SequenceLabellingTask, DocumentClassificationTask)):
        out.update(_label_view(task, w, top))
    else:
        names, bias_at, hashed = _flat_names(task)
        ids = _top(w, top, by_magnitude=True)
        out.update({"kind": "weights", "hashed_features": hashed,
                    "bias": None if bias_at is None else float(w[bias_at]),
                    "largest": _entries(w, ids, names)})
    out.update(extra)
    return out


def _label_view(task, w: np.ndarray, top: int) -> dict:
    labels = [str(lab) for lab in task.labels_]
    if isinstance(task, SequenceLabellingTask):
        emission, trans, start, end = task.structure_object().split_weights(w)
        name, hashed = feature_namer(task.attr_index_)
        n_named = len(task.attr_index_)
        if getattr(task, "n_columns_", 0):  # a numeric array's columns follow the index
            name = (lambda i, named=name: named(i) if i < n_named else f"column {i - n_named}")
    elif getattr(task, "input_kind_", "text") == "matrix":  # fitted on a numeric matrix
        emission, trans = task.structure_object().split_weights(w), None
        name, hashed = (lambda i: f"column {i}"), False  # its columns are the features
    else:
        emission, trans = task.structure_object().split_weights(w), None
        name, hashed = feature_namer(task.vocab_)
    features = {}
    for j, lab in enumerate(labels):
        col = np.ascontiguousarray(emission[:, j])
        features[lab] = {"positive": _entries(col, _top(col, top), name),
                         "negative": _entries(col, _top(col, top, negative=True), name)}
    out = {"kind": "labels", "hashed_features": hashed, "bias": None, "labels": labels,
           "features": features}
    if trans is not None:
        out["transitions"] = {"labels": labels, "weights": trans.tolist(),
                              "start": start.tolist(), "end": end.tolist()}
    return out


def _flat_names(task) -> tuple[Callable[[int], str], int | None, bool]:
    """``(feature id -> name, id of the bias or None, hashed)`` of a task's weight vector."""
    if isinstance(task, TransliterationTask):
        return _translit_names(task), 0, False
    if isinstance(task, GraphPairTask):
        name, hashed = feature_namer(task.feature_index_)
        return name, task.feature_index_.lookup("bias"), hashed
    if isinstance(task, GrammaticalityTask):
        return _grammaticality_names(task), task.n_features - 1, False
    if isinstance(task, DependencyTask):
        arcs, labels = task.structure_.n_arc_features, list(task.labels_)

        def dep_name(i: int) -> str:  # layout: arcs, then one row of L weights per context
            if i < arcs:
                return f"arc #{i}"
            r, lab = divmod(i - arcs, len(labels))
            return f"label context #{r} | {labels[lab]}"

        return dep_name, None, True
    if isinstance(task, RerankTask):
        base = task.structure_object().base_index
        return (lambda i: "base parser score" if i == base else f"#{i}"), None, True
    return (lambda i: f"#{i}"), None, True


def _translit_names(task) -> Callable[[int], str]:
    src = [_NO_CHAR] + list(task.source_alphabet_)
    tgt = [_NO_CHAR] + list(task.target_alphabet_)
    blocks = task.structure_object().feature_blocks()
    tags = {"unigram": "U", "bigram_prev": "BP", "bigram_next": "BN"}

    def name(i: int) -> str:
        for block, (off, shape) in blocks.items():
            if off <= i < off + math.prod(shape):
                if block == "bias":
                    return "bias"
                if block == "cell":
                    return "aligned cell"
                idx = np.unravel_index(i - off, shape)
                if block == "unigram":
                    return f"U[{src[idx[0]]}\u2192{tgt[idx[1]]}]"
                a, b, c, d = idx
                return f"{tags[block]}[{src[a]}{src[b]}\u2192{tgt[c]}{tgt[d]}]"
        raise IndexError(f"feature {i} is outside the {task.n_features} translit features")

    return name


def _grammaticality_names(task) -> Callable[[int], str]:
    attr, _ = feature_namer(task.attr_index_)
    structure = task.structure_object()
    A = structure.n_attributes
    bias = structure.n_features - 1

    def name(i: int) -> str:
        if i == bias:
            return "bias"
        for v in structure.views_:
            L = len(v.labels)
            k = i - v.offset
            if 0 <= k < A * L + L * L + 2 * L:
                if k < A * L:
                    a, lab = divmod(k, L)
                    return f"{v.name}: {attr(a)} | {v.labels[lab]}"
                k -= A * L
                if k < L * L:
                    a, b = divmod(k, L)
                    return f"{v.name}: {v.labels[a]} -> {v.labels[b]}"
                k -= L * L
                return f"{v.name}: {'start' if k < L else 'end'} {v.labels[k % L]}"
        raise IndexError(f"feature {i} is outside the {task.n_features} grammaticality features")

    return name
