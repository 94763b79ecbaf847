"""Input validation shared by the decoders of :mod:`latentstruct.inference`.

Each function takes what a caller passed (arrays, seeds, time limits), returns it in the
form the kernels need (C-contiguous float64 / int64 arrays, a ``numpy.random.Generator``)
or raises :class:`~latentstruct.exceptions.InputError` saying what was expected and what was
got.  Chains, trees and dependency score matrices have their own checks here, so that the
DP decoders, the ILP formulations and the brute-force enumerators read inputs the same way.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.result import EXACT, INFEASIBLE
from latentstruct.limits import MAX_ATTRIBUTE_VALUE


def refuse_huge_values(arr: np.ndarray, where: str, name: str) -> None:
    """Refuse a finite but huge feature value, naming the first one.

    A value such as 1e300 multiplies its weights in every score: the scores, a QP's Gram
    matrix and an LP's costs overflow, and HiGHS fails deep inside training ("status
    Empty").  The limit is the sequence tasks' (``limits.MAX_ATTRIBUTE_VALUE``)."""
    bad = np.abs(arr) > MAX_ATTRIBUTE_VALUE
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        more = int(bad.sum()) - 1
        extra = f" ({more} more such values)" if more else ""
        raise InputError(f"{where}: {name}[{', '.join(map(str, pos))}] = {float(arr[pos])!r} is "
                         f"too large{extra}; a feature's value scales its weights in every "
                         f"score, so its magnitude must be at most {MAX_ATTRIBUTE_VALUE:g} "
                         f"(latentstruct.limits.MAX_ATTRIBUTE_VALUE): scale large features "
                         f"(a log, a z-score)")


def shape_str(shape) -> str:
    """A shape as error messages print it: ``(3, 4)``, ``(5,)``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def as_scores(x, name: str, ndim: int, expected: str, *, allow_neg_inf: bool = True) -> np.ndarray:
    """Return ``x`` as a C-contiguous float64 array of ``ndim`` dimensions, or raise.

    ``expected`` is the shape as it should be described in the error, e.g. ``"(T, L)"``.
    ``-inf`` is allowed when ``allow_neg_inf`` (it forbids a part); ``+inf`` and NaN never are.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a numeric array of shape {expected}; got an object of type "
            f"{type(x).__name__} that cannot be converted to float64 ({exc})"
        ) from None
    if arr.ndim != ndim:
        raise InputError(
            f"{name} must be a {ndim}-d array of shape {expected}; got shape {shape_str(arr.shape)}"
        )
    if np.isnan(arr).any():
        raise InputError(f"{name} contains NaN; expected finite scores (or -inf for a forbidden part)")
    if np.isposinf(arr).any():
        raise InputError(f"{name} contains +inf; expected finite scores (or -inf for a forbidden part)")
    if not allow_neg_inf and np.isneginf(arr).any():
        raise InputError(f"{name} contains -inf; this solver needs finite scores")
    return np.ascontiguousarray(arr)


def check_shape(arr: np.ndarray, name: str, shape: tuple, expected: str) -> None:
    """Raise unless ``arr.shape == shape``; ``expected`` names the shape in the error."""
    if arr.shape != tuple(shape):
        raise InputError(
            f"{name} must have shape {expected} = {shape_str(shape)}; got shape {shape_str(arr.shape)}"
        )


def as_int_array(x, name: str, expected: str) -> np.ndarray:
    """Return ``x`` as a 1-d C-contiguous int64 array, rejecting non-integral values."""
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise InputError(
            f"{name} must be a 1-d integer array of shape {expected}; got shape {shape_str(arr.shape)}"
        )
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InputError(f"{name} must contain integers; got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise InputError(f"{name} must contain integers; got non-integral values")
    return np.ascontiguousarray(arr.astype(np.int64))


def optional_vector(x, name: str, L: int) -> np.ndarray:
    """A float64 (L,) score vector, zeros when ``x`` is None (a chain's ``start`` / ``end``)."""
    if x is None:
        return np.zeros(L, dtype=np.float64)
    arr = as_scores(x, name, 1, "(L,)")
    check_shape(arr, name, (L,), "(L,)")
    return arr


def as_generator(random_state) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator or an int seed (None is the caller's case)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (int, np.integer)):
        raise InputError(
            "random_state must be None, an int seed or a numpy.random.Generator; "
            f"got {type(random_state).__name__}"
        )
    return np.random.default_rng(int(random_state))


def decode_status(score: float) -> str:
    """``"exact"`` for a finite best score, ``"infeasible"`` for ``-inf``."""
    return EXACT if score > -np.inf else INFEASIBLE


def check_chain(unary, transition, start, end):
    """Validate a chain's scores; return (unary (T, L), transition (L, L), start (L,), end (L,))."""
    unary = as_scores(unary, "unary", 2, "(T, L)")
    L = unary.shape[1]
    transition = as_scores(transition, "transition", 2, "(L, L)")
    check_shape(transition, "transition", (L, L), "(L, L) with L = unary.shape[1]")
    if L == 0:
        raise InputError("unary must have at least one label column; got shape " + shape_str(unary.shape))
    start = optional_vector(start, "start", L)
    end = optional_vector(end, "end", L)
    return unary, transition, start, end


def check_tree(parents):
    """Validate ``parents``; return (parents int64, topological order root-first, root,
    ptr, kids): the children of node v are ``kids[ptr[v]:ptr[v + 1]]``."""
    parents = as_int_array(parents, "parents", "(n,)")
    n = parents.shape[0]
    if n == 0:
        raise InputError("parents must describe a tree with at least one node; got shape (0,)")
    bad = (parents < -1) | (parents >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"parents[{i}] = {parents[i]} is out of range; expected -1 (root) or a node index in [0, {n})"
        )
    roots = np.flatnonzero(parents == -1)
    if roots.size != 1:
        raise InputError(
            f"parents must describe exactly one tree (exactly one entry equal to -1); got {roots.size} "
            f"roots {roots[:10].tolist()}. Decode each tree of a forest separately."
        )
    root = int(roots[0])
    # breadth-first order from the root through a children CSR
    order_children = np.argsort(parents, kind="stable")
    counts = np.bincount(parents[parents >= 0], minlength=n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    kids = order_children[n - ptr[-1]:]  # drop the root (parent -1 sorts first)
    order = np.empty(n, dtype=np.int64)
    order[0] = root
    head, tail = 0, 1
    while head < tail:
        v = order[head]
        head += 1
        ch = kids[ptr[v]:ptr[v + 1]]
        order[tail:tail + ch.size] = ch
        tail += ch.size
        if tail > n:  # pragma: no cover - impossible with one parent per node
            break
    if tail != n:
        unreached = np.setdiff1d(np.arange(n), order[:tail])
        raise InputError(
            f"parents contains a cycle: nodes {unreached[:10].tolist()} are not connected to the root "
            f"{root}; expected every node to reach the root by following parents"
        )
    return parents, order, root, ptr, kids.astype(np.int64)


def check_tree_scores(unary, parents, edge_scores):
    """Validate a tree and its scores; return (unary, parents, edge_scores, order, root, ptr, kids)."""
    parents, order, root, ptr, kids = check_tree(parents)
    n = parents.shape[0]
    unary = as_scores(unary, "unary", 2, "(n, K)")
    if unary.shape[0] != n or unary.shape[1] == 0:
        raise InputError(
            f"unary must have shape (n, K) with n = len(parents) = {n} and K >= 1; got shape "
            f"{shape_str(unary.shape)}"
        )
    K = unary.shape[1]
    try:
        edge_scores = np.array(edge_scores, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise InputError(
            f"edge_scores must be a numeric array of shape (n, K, K); got {type(edge_scores).__name__}"
        ) from None
    if edge_scores.ndim != 3:
        raise InputError(
            f"edge_scores must be a 3-d array of shape (n, K, K); got shape {shape_str(edge_scores.shape)}"
        )
    check_shape(edge_scores, "edge_scores", (n, K, K), "(n, K, K)")
    edge_scores[root] = 0.0  # the root's slice is ignored, whatever it holds
    edge_scores = as_scores(edge_scores, "edge_scores", 3, "(n, K, K)")
    return unary, parents, edge_scores, order, root, ptr, kids


def check_dependency_scores(scores, name: str = "scores") -> np.ndarray:
    """Return ``scores`` as a C-contiguous float64 (n + 1, n + 1) copy, n >= 1, or raise.

    Column 0 and the diagonal are ignored (set to ``-inf`` in the copy); every other entry
    must be finite or ``-inf``.
    """
    expected = "(n + 1, n + 1)"
    try:
        arr = np.array(scores, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a numeric array of shape {expected}; got an object of type "
            f"{type(scores).__name__} that cannot be converted to float64 ({exc})"
        ) from None
    if arr.ndim != 2:
        raise InputError(
            f"{name} must be a 2-d array of shape {expected} (scores[h, m] scores the arc h -> m, "
            f"index 0 is ROOT); got shape {shape_str(arr.shape)}"
        )
    if arr.shape[0] != arr.shape[1]:
        raise InputError(f"{name} must be square, of shape {expected}; got shape {shape_str(arr.shape)}")
    if arr.shape[0] < 2:
        raise InputError(
            f"{name} must have shape {expected} with n >= 1 words (row/column 0 is ROOT); "
            f"got shape {shape_str(arr.shape)}"
        )
    arr[:, 0] = -np.inf  # arcs into ROOT: ignored
    np.fill_diagonal(arr, -np.inf)  # self-loops: ignored
    return as_scores(arr, name, 2, expected)


def check_time_limit(time_limit, name="time_limit"):
    """A positive number of seconds as float, or None (no limit)."""
    if time_limit is None:
        return None
    try:
        t = float(time_limit)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be None or a positive number of seconds; got {time_limit!r}") from None
    if not t > 0:
        raise InputError(f"{name} must be None or a positive number of seconds; got {time_limit!r}")
    return t
