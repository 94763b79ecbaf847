"""Brute-force references for the PyStruct-compatible models' tests.

``brute_dispatch`` has ``inference_dispatch``'s signature and enumerates every labelling
of the potentials; ``enumerate_best`` enumerates labellings scored through the model's
own ``joint_feature`` (and loss), so a test compares a decoder with the definition.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from latentstruct.pystruct.models import base


def brute_dispatch(unary, pairwise, edges, inference_method, relaxed=False,
                   return_energy=False):
    """Exhaustive MAP over the potentials (a stand-in for the layer's dispatch)."""
    unary = np.asarray(unary, dtype=np.float64)
    n_nodes, n_states = unary.shape
    edges = np.asarray(edges, dtype=int).reshape(-1, 2)
    pairwise = np.asarray(pairwise, dtype=np.float64)
    if pairwise.ndim == 2:
        pairwise = np.broadcast_to(pairwise, (len(edges), n_states, n_states))
    # every labelling at once: one row per labelling, first node slowest
    grid = np.indices((n_states,) * n_nodes).reshape(n_nodes, -1).T
    scores = unary[np.arange(n_nodes), grid].sum(axis=1)
    for e, (i, j) in enumerate(edges):
        scores += pairwise[e][grid[:, i], grid[:, j]]
    best = int(np.argmax(scores))
    labels = grid[best].astype(np.intp)
    return (labels, -float(scores[best])) if return_energy else labels


def choose_dispatch(kind, monkeypatch):
    """Use ``brute_dispatch`` ("brute") or the layer's own dispatch ("real", skipping the
    test when the inference package is not there)."""
    if kind == "brute":
        monkeypatch.setattr(base, "run_inference", brute_dispatch)
        return kind
    module = pytest.importorskip("latentstruct.pystruct.inference")
    if not hasattr(module, "inference_dispatch"):
        pytest.skip("latentstruct.pystruct.inference has no inference_dispatch yet")
    return kind


def enumerate_best(model, x, w, n_nodes, n_states, y_true=None, shape=None):
    """The best score (plus loss when ``y_true``) over every labelling."""
    best = -np.inf
    for labels in itertools.product(range(n_states), repeat=n_nodes):
        y = np.array(labels) if shape is None else np.array(labels).reshape(shape)
        s = w @ model.joint_feature(x, y)
        if y_true is not None:
            s += model.loss(y_true, y)
        best = max(best, s)
    return best


