"""The structured SVM's constraints and primal objective, and inference by enumeration.

For an example ``(x, y)`` and weights ``w``, the most violated constraint is the label
``y_hat`` maximising ``loss(y, y_hat) + w . joint_feature(x, y_hat)`` (the model's
loss-augmented inference), its feature difference ``joint_feature(x, y) -
joint_feature(x, y_hat)`` and its slack ``loss - w . difference``.  The primal objective
the learners report is ``||w||^2 / 2 + C * (sum of slacks)``, with each slack clipped at
zero (n-slack) or only their sum (one-slack).

``exhaustive_inference`` and ``exhaustive_loss_augmented_inference`` try every labelling:
the reference the tests hold the real decoders to, usable only on a handful of nodes.
"""

from __future__ import annotations

import itertools

import numpy as np

from latentstruct.exceptions import ConfigError, InputError

__all__ = ["find_constraint", "violated_constraint", "objective_primal",
           "exhaustive_inference", "exhaustive_loss_augmented_inference"]

#: the largest number of labellings the exhaustive search will try
MAX_LABELLINGS = 2 ** 22


def _raw_constraint(model, x, y, w, y_hat, relaxed, compute_difference):
    """``(y_hat, delta, slack, loss)``, the slack not clipped (see ``find_constraint``)."""
    if y_hat is None:
        y_hat = model.loss_augmented_inference(x, y, w, relaxed=relaxed)
    rescale = getattr(model, "rescale_C", False)
    # a rescaled model weighs each node by its class; its joint_feature takes y for that
    extra = (y,) if rescale else ()
    delta = -np.asarray(model.joint_feature(x, y_hat, *extra), dtype=float)
    if compute_difference:
        delta = delta + model.joint_feature(x, y, *extra)
    if isinstance(y_hat, tuple):  # relaxed marginals: (unary, pairwise)
        loss = model.continuous_loss(y, y_hat[0])
    else:
        loss = model.loss(y, y_hat)
    return y_hat, delta, loss - np.dot(w, delta), loss


def find_constraint(model, x, y, w, y_hat=None, relaxed=True, compute_difference=True):
    """The most violated constraint of one example: ``(y_hat, delta_joint_feature, slack,
    loss)``.

    ``y_hat`` given skips the inference; ``relaxed`` asks the model for the LP relaxation
    (then ``y_hat`` may be a pair of unary and pairwise marginals, and the loss is the
    model's ``continuous_loss``); without ``compute_difference`` the difference is only
    ``-joint_feature(x, y_hat)``.  The slack is clipped at zero.
    """
    y_hat, delta, slack, loss = _raw_constraint(model, x, y, w, y_hat, relaxed,
                                                compute_difference)
    return y_hat, delta, max(slack, 0.0), loss


def violated_constraint(model, x, y, w, relaxed=True):
    """``find_constraint``'s ``(y_hat, delta, slack, loss)`` with the slack not clipped:
    what the learners weigh against their working sets."""
    return _raw_constraint(model, x, y, w, None, relaxed, True)


def objective_primal(model, w, X, Y, C, variant="n_slack", n_jobs=1):
    """``||w||^2 / 2 + C * slack`` over the data ``(X, Y)``.

    ``variant="n_slack"`` sums each example's slack clipped at zero; ``"one_slack"`` clips
    only the sum (the one-slack formulation's single slack variable).  ``n_jobs`` other
    than 1 scores the examples in joblib's processes.
    """
    if variant not in ("n_slack", "one_slack"):
        raise ConfigError(f"objective_primal: variant={variant!r}; expected 'n_slack' or "
                          f"'one_slack'")
    if len(X) != len(Y):
        raise InputError(f"objective_primal: {len(X)} inputs X but {len(Y)} labels Y; pass one "
                         f"label per input")
    w = np.asarray(w, dtype=float)
    if n_jobs == 1:
        found = [violated_constraint(model, x, y, w) for x, y in zip(X, Y)]
    else:
        from joblib import Parallel, delayed
        found = Parallel(n_jobs=n_jobs)(delayed(violated_constraint)(model, x, y, w)
                                        for x, y in zip(X, Y))
    slacks = np.array([f[2] for f in found], dtype=float)
    if variant == "n_slack":
        total = np.maximum(slacks, 0).sum()
    else:
        total = max(slacks.sum(), 0.0)
    return C * total + np.dot(w, w) / 2.0


def _label_shape(x) -> tuple[int, ...]:
    """The shape of a labelling of ``x``: a grid's height and width, or a graph's nodes."""
    if isinstance(x, np.ndarray):
        if x.ndim < 2:
            raise InputError(f"exhaustive inference: x has shape {x.shape}; expected a grid "
                             f"(height, width, n_features) or a tuple (features, edges, ...)")
        return x.shape[:-1]
    if isinstance(x, (tuple, list)) and len(x) > 0:
        return (int(np.shape(x[0])[0]),)
    raise InputError(f"exhaustive inference: x is a {type(x).__name__}; expected a grid array "
                     f"or a tuple (features, edges, ...)")


def _enumerate_best(model, x, score):
    shape = _label_shape(x)
    n_nodes = int(np.prod(shape))
    n_states = int(model.n_states)
    if float(n_states) ** n_nodes > MAX_LABELLINGS:
        raise ConfigError(f"exhaustive inference: {n_states}^{n_nodes} labellings is more than "
                          f"{MAX_LABELLINGS}; use it on at most a few nodes")
    best, best_score = None, -np.inf
    for labels in itertools.product(range(n_states), repeat=n_nodes):
        y = np.array(labels, dtype=np.int64).reshape(shape)
        value = score(y)
        if value > best_score:
            best, best_score = y, value
    return best


def exhaustive_inference(model, x, w):
    """The labelling maximising ``w . joint_feature(x, y)``, found by trying every one
    (the first one found, in lexicographic order, among equals)."""
    w = np.asarray(w, dtype=float)
    return _enumerate_best(model, x, lambda y: np.dot(w, model.joint_feature(x, y)))


def exhaustive_loss_augmented_inference(model, x, y, w):
    """The labelling maximising ``loss(y, y_hat) + w . joint_feature(x, y_hat)``, found by
    trying every one."""
    w = np.asarray(w, dtype=float)
    return _enumerate_best(model, x, lambda y_hat: model.loss(y, y_hat)
                           + np.dot(w, model.joint_feature(x, y_hat)))
