"""Exhaustive enumeration: the reference every decoder is tested against.

Deliberately simple, slow and independent of the decoders: enumerators yield every
structure of a tiny instance, score helpers compute a structure's score with plain Python
loops, and :func:`brute_force` takes the maximum.  Only use on tiny instances (the number of
candidates grows exponentially).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import (
    as_int_array,
    check_chain,
    check_dependency_scores,
    check_tree_scores,
    shape_str,
)
from latentstruct.inference.result import EXACT, INFEASIBLE, DecodeResult
from latentstruct.inference.tree_bp import TreeMarginals

__all__ = [
    "brute_force",
    "all_sequences",
    "all_labelings",
    "all_alignments",
    "all_binary_vectors",
    "sequence_score",
    "alignment_score",
    "tree_score",
    "brute_force_log_partition",
    "projective_trees",
    "all_dependency_trees",
    "dependency_score",
    "brute_force_dependency",
]


def _check_count(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def brute_force(score_fn: Callable[[object], float], candidates: Iterable) -> DecodeResult:
    """Maximise ``score_fn(structure)`` over an iterable of candidate structures.

    Returns the first candidate attaining the maximum, with status ``"exact"``; status
    ``"infeasible"`` (score ``-inf``) when there is no candidate or all score ``-inf``
    (structure ``None`` when there is none).  ``stats["n_candidates"]`` counts the candidates.
    A NaN score raises ValueError.  Complexity: one ``score_fn`` call per candidate.
    """
    best_s = -math.inf
    best = None
    count = 0
    for cand in candidates:
        s = float(score_fn(cand))
        if math.isnan(s):
            raise InputError(f"score_fn returned NaN for candidate {cand!r}; expected a number or -inf")
        if count == 0 or s > best_s:
            best_s, best = s, cand
        count += 1
    status = EXACT if best_s > -math.inf else INFEASIBLE
    return DecodeResult(best, best_s, status, {"n_candidates": count})


def all_sequences(T: int, L: int) -> Iterator[np.ndarray]:
    """Yield every label sequence of length ``T`` over ``L`` labels (int64 arrays, L**T of them).

    Lexicographic order; ``T = 0`` yields one empty array.
    """
    T = _check_count(T, "T")
    L = _check_count(L, "L")
    for y in itertools.product(range(L), repeat=T):
        yield np.array(y, dtype=np.int64)


def all_labelings(n: int, K: int) -> Iterator[np.ndarray]:
    """Yield every labelling of ``n`` nodes with ``K`` labels (int64 arrays, K**n of them)."""
    yield from all_sequences(n, K)


def all_alignments(m: int, n: int, monotone: bool = True) -> Iterator[np.ndarray]:
    """Yield every one-to-one alignment of ``m`` sources to ``n`` targets.

    Encoding: int64 array ``a`` (m,), ``a[i] = j`` or ``-1``.  ``monotone=True`` keeps only
    non-crossing alignments (pairs strictly increasing in both coordinates):
    ``sum_k C(m,k) C(n,k)`` of them; otherwise all partial matchings,
    ``sum_k C(m,k) C(n,k) k!``.  The empty alignment comes first.
    """
    m = _check_count(m, "m")
    n = _check_count(n, "n")
    for k in range(min(m, n) + 1):
        for rows in itertools.combinations(range(m), k):
            col_sets = itertools.combinations(range(n), k)
            if not monotone:
                col_sets = itertools.chain.from_iterable(
                    itertools.permutations(c) for c in itertools.combinations(range(n), k)
                )
            for cols in col_sets:
                a = np.full(m, -1, dtype=np.int64)
                a[list(rows)] = cols
                yield a


def all_binary_vectors(n: int, feasible: Callable[[np.ndarray], bool] | None = None) -> Iterator[np.ndarray]:
    """Yield every 0/1 vector of length ``n`` (int8), optionally only those with ``feasible(z)``."""
    n = _check_count(n, "n")
    for bits in itertools.product((0, 1), repeat=n):
        z = np.array(bits, dtype=np.int8)
        if feasible is None or feasible(z):
            yield z


def sequence_score(labels, unary, transition, start=None, end=None) -> float:
    """Chain score ``start[y0] + sum_t unary[t,y_t] + sum_t transition[y_{t-1},y_t] + end[y_{T-1}]``.

    Shapes as in :func:`latentstruct.inference.viterbi.viterbi`; labels int (T,).  O(T).
    """
    unary, transition, start, end = check_chain(unary, transition, start, end)
    T, L = unary.shape
    y = as_int_array(labels, "labels", "(T,)")
    if y.shape[0] != T or (T and (y.min() < 0 or y.max() >= L)):
        raise InputError(f"labels must be {T} integers in [0, {L}); got {y.tolist()}")
    if T == 0:
        return 0.0
    s = start[y[0]] + unary[0, y[0]]
    for t in range(1, T):
        s += transition[y[t - 1], y[t]] + unary[t, y[t]]
    return float(s + end[y[-1]])


def alignment_score(a, scores) -> float:
    """``sum_{i: a[i] >= 0} scores[i, a[i]]`` for an alignment ``a`` (m,) and scores (m, n). O(m)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise InputError(f"scores must be a 2-d array of shape (m, n); got shape {shape_str(scores.shape)}")
    a = as_int_array(a, "a", "(m,)")
    m, n = scores.shape
    if a.shape[0] != m or (m and (a.min() < -1 or a.max() >= n)):
        raise InputError(f"a must be {m} integers, each -1 or in [0, {n}); got {a.tolist()}")
    s = 0.0
    for i in range(m):
        if a[i] >= 0:
            s += scores[i, a[i]]
    return float(s)


def tree_score(labels, unary, parents, edge_scores) -> float:
    """``sum_i unary[i, y_i] + sum_{i != root} edge_scores[i, y_parent(i), y_i]``. O(n)."""
    unary, parents, edge_scores, *_ = check_tree_scores(unary, parents, edge_scores)
    n, K = unary.shape
    y = as_int_array(labels, "labels", "(n,)")
    if y.shape[0] != n or y.min() < 0 or y.max() >= K:
        raise InputError(f"labels must be {n} integers in [0, {K}); got {y.tolist()}")
    s = 0.0
    for i in range(n):
        s += unary[i, y[i]]
        if parents[i] >= 0:
            s += edge_scores[i, y[parents[i]], y[i]]
    return float(s)


def brute_force_log_partition(unary, parents, edge_scores) -> TreeMarginals:
    """Log-partition and marginals of p(y) ∝ exp(tree_score(y)) by enumerating all K**n labellings.

    Returns :class:`~latentstruct.inference.tree_bp.TreeMarginals` (``log_partition``,
    ``node_marginals`` (n, K), ``edge_marginals`` (n, K, K) with the root slice zero), the
    reference for :func:`~latentstruct.inference.tree_bp.tree_sum_product`.
    """
    unary, parents, edge_scores, *_ = check_tree_scores(unary, parents, edge_scores)
    n, K = unary.shape
    ys = list(all_labelings(n, K))
    s = np.array([tree_score(y, unary, parents, edge_scores) for y in ys])
    mx = s.max()
    if mx == -np.inf:
        raise InputError("every labelling of the tree has score -inf; the marginals are undefined")
    w = np.exp(s - mx)
    log_z = float(mx + np.log(w.sum()))
    p = w / w.sum()
    node = np.zeros((n, K))
    edge = np.zeros((n, K, K))
    for y, py in zip(ys, p):
        node[np.arange(n), y] += py
        for i in range(n):
            if parents[i] >= 0:
                edge[i, y[parents[i]], y[i]] += py
    return TreeMarginals(node, edge, log_z)


# ----------------------------------------------------------------------------------------
# dependency trees (reference for latentstruct.inference.eisner)
# ----------------------------------------------------------------------------------------
_MAX_TREE_WORDS = 7


def _is_tree(h: tuple) -> bool:
    """``h[m]`` is the head of word m (h[0] unused): every word reaches 0, no self-loop or cycle."""
    n = len(h) - 1
    for m in range(1, n + 1):
        v = m
        for _ in range(n):
            v = h[v]
            if v == 0:
                break
        if v != 0:  # n steps without reaching ROOT: a cycle
            return False
    return True


def _is_projective(h: tuple) -> bool:
    """No two arcs cross, ROOT's arcs drawn from position 0 (arcs sharing an end never cross)."""
    arcs = [(min(h[m], m), max(h[m], m)) for m in range(1, len(h))]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


@functools.lru_cache(maxsize=None)
def _dependency_trees(n: int, single_root: bool, projective: bool) -> tuple:
    out = []
    for heads in itertools.product(range(n + 1), repeat=n):
        h = (0, *heads)
        if any(h[m] == m for m in range(1, n + 1)):
            continue
        if single_root and heads.count(0) != 1:
            continue
        if not _is_tree(h):
            continue
        if projective and not _is_projective(h):
            continue
        out.append(heads)
    return tuple(out)


def all_dependency_trees(n: int, *, single_root: bool = True, projective: bool = True) -> Iterator[np.ndarray]:
    """Yield every dependency tree over words ``1..n`` rooted at ROOT = 0, as int64 heads (n,).

    ``heads[m - 1]`` is the head of word ``m``.  Enumerates all ``(n + 1)**n`` head
    assignments and keeps those forming a tree (every word reaches 0, no cycle), with exactly
    one word attached to 0 when ``single_root``, and, when ``projective``, no two crossing
    arcs (arcs from ROOT count as arcs from position 0).  Counts: all trees
    ``(n + 1)**(n - 1)`` (single root ``n**(n - 1)``); projective ones 1, 3, 12, 55, 273, 1428
    (single root 1, 2, 7, 30, 143, 728) for n = 1..6.  Lexicographic order of ``heads``.
    ``1 <= n <= 7`` (the enumeration is cached per argument triple).
    """
    n = _check_count(n, "n")
    if not 1 <= n <= _MAX_TREE_WORDS:
        raise InputError(f"n must be between 1 and {_MAX_TREE_WORDS} for tree enumeration; got {n}")
    for heads in _dependency_trees(n, bool(single_root), bool(projective)):
        yield np.array(heads, dtype=np.int64)


def projective_trees(n: int, *, single_root: bool = True) -> Iterator[np.ndarray]:
    """Yield every projective dependency tree over words ``1..n`` (int64 heads (n,), ROOT = 0).

    Same as ``all_dependency_trees(n, single_root=single_root, projective=True)``;
    ``1 <= n <= 7``.
    """
    yield from all_dependency_trees(n, single_root=single_root, projective=True)


def dependency_score(heads, scores) -> float:
    """``sum_{m=1..n} scores[heads[m - 1], m]`` for heads (n,) and scores (n + 1, n + 1). O(n)."""
    S = check_dependency_scores(scores)
    n = S.shape[0] - 1
    h = as_int_array(heads, "heads", "(n,)")
    if h.shape[0] != n or h.min() < 0 or h.max() > n:
        raise InputError(f"heads must be {n} integers in [0, {n}]; got {h.tolist()}")
    s = 0.0
    for m in range(1, n + 1):
        s += S[h[m - 1], m]
    return float(s)


def brute_force_dependency(scores, *, single_root: bool = True, k: int = 1) -> list[tuple[np.ndarray, float]]:
    """The ``k`` best projective trees by enumeration: a list of (heads int64 (n,), score).

    Sorted by score descending (equal scores in the enumeration order of
    :func:`projective_trees`); trees of score ``-inf`` are left out, so fewer than ``k``
    (possibly none) are returned when fewer trees have a finite score.  Scores as in
    :func:`latentstruct.inference.eisner.eisner`; ``1 <= n <= 7``.
    """
    S = check_dependency_scores(scores)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1; got {k!r}")
    n = S.shape[0] - 1
    scored = []
    for heads in projective_trees(n, single_root=single_root):
        s = 0.0
        for m in range(1, n + 1):
            s += S[heads[m - 1], m]
        if s > -math.inf:
            scored.append((heads, float(s)))
    scored.sort(key=lambda hs: -hs[1])  # stable: ties keep the enumeration order
    return scored[: int(k)]
