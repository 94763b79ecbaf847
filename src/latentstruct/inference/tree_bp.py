"""Exact max-product and sum-product belief propagation on a tree (log space).

A labelling ``y`` of the ``n`` nodes of a rooted tree, each with one of ``K`` labels, scores

    score(y) = sum_i unary[i, y_i] + sum_{i != root} edge_scores[i, y_{parents[i]}, y_i]

The tree is given by ``parents`` (int, shape (n,)): ``parents[i]`` is the parent of node
``i`` and ``parents[root] == -1``.  Exactly one root is required; a forest (several roots),
a cycle or an out-of-range parent is an :class:`~latentstruct.exceptions.InputError`.  (To
decode a forest, call the functions once per tree, or add a virtual root with one label.)

Scores may be ``-inf`` to forbid a label or a pair of labels; everything is computed in log
space with a stable log-sum-exp, so ``-inf`` never produces NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import check_tree_scores, decode_status
from latentstruct.inference.result import DecodeResult

__all__ = ["tree_max_product", "tree_sum_product", "TreeMarginals", "logsumexp_vector"]


@dataclass(frozen=True)
class TreeMarginals:
    """Marginals of the Gibbs distribution p(y) ∝ exp(score(y)) on a tree.

    Attributes
    ----------
    node_marginals : (n, K)
        ``p(y_i = k)``; every row sums to one.
    edge_marginals : (n, K, K)
        ``[i, a, b] = p(y_{parent(i)} = a, y_i = b)``; the root's slice is all zeros.
    log_partition
        ``log sum_y exp(score(y))``.
    """

    node_marginals: np.ndarray
    edge_marginals: np.ndarray
    log_partition: float


@njit(cache=True)
def max_product_kernel(unary, parents, edge_scores, order, labels):  # pragma: no cover - numba
    """Compiled max-product on a checked tree (``order`` root-first): writes the best labels, returns its score."""
    n, K = unary.shape
    belief = unary.copy()
    arg = np.zeros((n, K), dtype=np.int64)  # arg[i, parent label] = best label of i
    for q in range(n - 1, 0, -1):
        i = order[q]
        p = parents[i]
        for a in range(K):
            best = -np.inf
            bi = 0
            for b in range(K):
                v = edge_scores[i, a, b] + belief[i, b]
                if v > best:
                    best = v
                    bi = b
            arg[i, a] = bi
            belief[p, a] += best
    root = order[0]
    best = -np.inf
    bi = 0
    for a in range(K):
        if belief[root, a] > best:
            best = belief[root, a]
            bi = a
    labels[root] = bi
    for q in range(1, n):
        i = order[q]
        labels[i] = arg[i, labels[parents[i]]]
    return best


@njit(cache=True, nogil=True)
def logsumexp_vector(x):  # pragma: no cover - numba
    """log Σ exp(x) of a 1-d array, compiled (-inf when every entry is -inf)."""
    m = -np.inf
    for v in x:
        if v > m:
            m = v
    if m == -np.inf:
        return -np.inf
    s = 0.0
    for v in x:
        s += np.exp(v - m)
    return m + np.log(s)


@njit(cache=True)
def _sum_product_kernel(unary, parents, edge_scores, order, ptr, kids, node_marg, edge_marg):  # pragma: no cover
    n, K = unary.shape
    up = unary.copy()  # unary + messages from all children
    msg = np.full((n, K), -np.inf)  # msg[i, a]: message from i to its parent, parent label a
    tmp = np.empty(K)
    for q in range(n - 1, 0, -1):
        i = order[q]
        for a in range(K):
            for b in range(K):
                tmp[b] = edge_scores[i, a, b] + up[i, b]
            msg[i, a] = logsumexp_vector(tmp)
        p = parents[i]
        for a in range(K):
            up[p, a] += msg[i, a]
    root = order[0]
    log_z = logsumexp_vector(up[root])
    if log_z == -np.inf:
        return log_z
    # outside scores; excl[i, a] = unary[p, a] + messages into p from children other than i
    out = np.zeros((n, K))
    excl = np.zeros((n, K))
    for q in range(n):
        v = order[q]
        c0 = ptr[v]
        c1 = ptr[v + 1]
        d = c1 - c0
        if d == 0:
            continue
        prefix = np.zeros((d + 1, K))
        suffix = np.zeros((d + 1, K))
        for j in range(d):
            for a in range(K):
                prefix[j + 1, a] = prefix[j, a] + msg[kids[c0 + j], a]
                suffix[d - j - 1, a] = suffix[d - j, a] + msg[kids[c1 - 1 - j], a]
        for j in range(d):
            c = kids[c0 + j]
            for a in range(K):
                excl[c, a] = unary[v, a] + prefix[j, a] + suffix[j + 1, a]
            for b in range(K):
                for a in range(K):
                    tmp[a] = out[v, a] + excl[c, a] + edge_scores[c, a, b]
                out[c, b] = logsumexp_vector(tmp)
    for i in range(n):
        for a in range(K):
            node_marg[i, a] = np.exp(out[i, a] + up[i, a] - log_z)
        p = parents[i]
        if p < 0:
            continue
        for a in range(K):
            for b in range(K):
                edge_marg[i, a, b] = np.exp(out[p, a] + excl[i, a] + edge_scores[i, a, b] + up[i, b] - log_z)
    return log_z


def tree_max_product(unary, parents, edge_scores) -> DecodeResult:
    """Best labelling of a tree by max-product (Viterbi on trees).

    Maximises ``sum_i unary[i, y_i] + sum_{i != root} edge_scores[i, y_parent(i), y_i]``.

    Parameters
    ----------
    unary : array (n, K)
    parents : int array (n,), exactly one ``-1`` (the root)
    edge_scores : array (n, K, K); ``edge_scores[i, label of parent, label of i]``, the
        root's slice is ignored.

    Returns
    -------
    DecodeResult with int64 labels (n,); status ``"exact"``, or ``"infeasible"`` with score
    ``-inf`` when every labelling scores ``-inf``.  Ties go to the lowest label.

    Complexity: O(n K^2) time, O(n K) memory.
    """
    unary, parents, edge_scores, order, root, ptr, kids = check_tree_scores(unary, parents, edge_scores)
    labels = np.zeros(parents.shape[0], dtype=np.int64)
    score = float(max_product_kernel(unary, parents, edge_scores, order, labels))
    return DecodeResult(labels, score, decode_status(score))


def tree_sum_product(unary, parents, edge_scores) -> TreeMarginals:
    """Log-partition and marginals of p(y) ∝ exp(score(y)) on a tree (sum-product).

    ``score`` is the one of :func:`tree_max_product`; inputs have the same shapes.  Messages
    are passed leaves-to-root then root-to-leaves in log space; the outside score of a child
    excludes its own message through prefix/suffix sums (no subtraction, so ``-inf`` is safe).

    Returns
    -------
    TreeMarginals(node_marginals (n, K), edge_marginals (n, K, K), log_partition)

    Raises
    ------
    InputError
        when every labelling scores ``-inf`` (the distribution does not exist).

    Complexity: O(n K^2) time, O(n K^2) memory for the edge marginals.
    """
    unary, parents, edge_scores, order, root, ptr, kids = check_tree_scores(unary, parents, edge_scores)
    n, K = unary.shape
    node_marg = np.zeros((n, K))
    edge_marg = np.zeros((n, K, K))
    log_z = float(_sum_product_kernel(unary, parents, edge_scores, order, ptr, kids, node_marg, edge_marg))
    if log_z == -np.inf:
        raise InputError(
            "every labelling of the tree has score -inf, so the marginals are undefined; "
            "expected at least one labelling with finite unary and edge scores"
        )
    return TreeMarginals(node_marg, edge_marg, log_z)
