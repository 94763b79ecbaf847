"""Compiled sums of the hidden-state CRF: per-class log-partitions, the corpus log-loss and its
gradient, and node marginals, in one pass over a corpus.

The hidden labels are the K·S pairs (class k, state j), numbered ``k * S + j``; a chain never
leaves its class's block (transitions between blocks are ruled out, −inf), so the sum over
hidden chains of class k is the forward–backward of the S-state chain of block k alone::

    log Z(x, k) = log Σ_{h ∈ block k} exp(w·Φ(x, k, h)),     log Z(x) = log Σ_k Z(x, k).

Weights are laid out as::

    [ emissions (A x K·S) | transitions (K x S x S, prev -> next within a block)
      | start (K·S) | end (K·S) ]

:func:`hidden_chain_pass` runs, for every sentence, the K block chains of
:func:`latentstruct.inference.chain_fb.chain_marginals_into` once each.  The numerator of
the log-loss, log Z(x_i, y_i), is the forward–backward clamped to the gold class's block
(the chain of block y_i: every label outside it is ruled out), and the denominator is the
log-sum-exp of all blocks, so one run per block serves both.  The gradient of
``log Z(x) − log Z(x, y)`` is ``Σ_k (p(k | x) − [k = y]) E_{h | x, k}[Φ(x, k, h)]``: each
block's expected features are scattered once with the coefficient ``p(k | x) − [k = y]``
(``p(k | x)`` alone for an unlabelled sentence, y = −1, which gives E[Φ] itself).
O(Σ_t (|attrs(t)| K·S + K·S²)) time, no per-sentence Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...inference.chain_fb import chain_marginals_into, chain_work, transition_exp
from ..sequence.crf_kernels import longest_sentence, token_scores

__all__ = ["hidden_chain_pass", "split_weights", "topology_masks", "HiddenChainPass"]


def split_weights(w, n_attributes: int, n_classes: int, n_states: int):
    """Views (emission (A, K·S), transition (K, S, S), start (K·S), end (K·S)) of ``w``."""
    A, K, S = int(n_attributes), int(n_classes), int(n_states)
    L = K * S
    a = A * L
    b = a + K * S * S
    return (w[:a].reshape(A, L), w[a:b].reshape(K, S, S), w[b:b + L], w[b + L:b + 2 * L])


@njit(cache=True, nogil=True)
def _pass(attr_indptr, attr_ids, attr_values, offsets, labels, emission, transition, start, end,
          want_grad, g_em, g_tr, g_start, g_end, want_node, node_out,
          class_log_z):  # pragma: no cover - numba
    K, S = transition.shape[0], transition.shape[1]
    L = K * S
    Ms = np.empty((K, S, S))
    ms = np.empty(K)
    for k in range(K):
        Mk, mk = transition_exp(transition[k])
        Ms[k] = Mk
        ms[k] = mk
    Tm = max(longest_sentence(offsets), 1)
    work, c = chain_work(Tm, S)
    s_buf = np.empty((Tm, L))
    node3 = np.empty((K, Tm, S))
    e_acc = np.zeros((K, S, S))
    e_scaled = np.zeros((K, S, S))
    G_acc = np.zeros((K, S, S))
    G_scaled = np.zeros((K, S, S))
    lz_k = np.empty(K)
    coef = np.empty(K)
    base = offsets[0]
    total = 0.0
    for i in range(offsets.shape[0] - 1):
        t0, t1 = offsets[i], offsets[i + 1]
        T = t1 - t0
        y = labels[i]
        if T == 0:  # no hidden chain: every class scores 0
            for k in range(K):
                class_log_z[i, k] = 0.0
            if y >= 0:
                total += np.log(K)
            continue
        # scores of every token and hidden label, start and end folded in; class k's chain
        # reads its block of columns
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        e_acc[:] = 0.0
        e_scaled[:] = 0.0
        mx = -np.inf
        for k in range(K):
            lz_k[k] = chain_marginals_into(s[:, k * S : (k + 1) * S], transition[k], Ms[k], ms[k],
                                           node3[k, :T], e_acc[k], e_scaled[k], 1.0, work, c)
            class_log_z[i, k] = lz_k[k]
            if lz_k[k] > mx:
                mx = lz_k[k]
        acc = 0.0
        for k in range(K):
            acc += np.exp(lz_k[k] - mx)
        lz = mx + np.log(acc)
        for k in range(K):
            coef[k] = np.exp(lz_k[k] - lz)
        if want_node:
            for t in range(T):
                for k in range(K):
                    for j in range(S):
                        node_out[t0 - base + t, k * S + j] = coef[k] * node3[k, t, j]
        if y >= 0:
            total += lz - lz_k[y]
            coef[y] -= 1.0
        if not want_grad:
            continue
        for t in range(T):
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                row = attr_ids[p]
                v = 1.0 if attr_values is None else attr_values[p]
                for k in range(K):
                    ck = coef[k] * v
                    for j in range(S):
                        g_em[row, k * S + j] += ck * node3[k, t, j]
        for k in range(K):
            ck = coef[k]
            for j in range(S):
                g_start[k * S + j] += ck * node3[k, 0, j]
                g_end[k * S + j] += ck * node3[k, T - 1, j]
            for a in range(S):
                for b in range(S):
                    G_acc[k, a, b] += ck * e_acc[k, a, b]
                    G_scaled[k, a, b] += ck * e_scaled[k, a, b]
    if want_grad:
        for k in range(K):
            for a in range(S):
                for b in range(S):
                    g_tr[k, a, b] += G_acc[k, a, b] + Ms[k, a, b] * G_scaled[k, a, b]
    return total


class HiddenChainPass:
    """What :func:`hidden_chain_pass` returns: ``loss`` (Σ_i log Z(x_i) − log Z(x_i, y_i)
    over the labelled sentences), ``grad`` (its gradient, or None), ``class_log_z`` (n, K),
    ``node`` ((N, K·S) node marginals of all tokens, or None)."""

    __slots__ = ("loss", "grad", "class_log_z", "node")

    def __init__(self, loss, grad, class_log_z, node):
        self.loss, self.grad, self.class_log_z, self.node = loss, grad, class_log_z, node


def topology_masks(n_states: int, topology: str) -> tuple[np.ndarray, np.ndarray]:
    """Structural scores (0 or −inf, never weights) added to every block's transitions
    (S, S) and start scores (S,).

    ``"left-to-right"``: a chain starts in state 0 and moves from state j to j or j + 1
    (the Bakis topology of HMM-based sequence classifiers): every state has its own place
    in the order, so learning from w = 0 separates them.  ``"ergodic"``: any start, any
    transition inside the block (pyhcrf's; its states are interchangeable, so from w = 0
    they stay tied and S states behave as one; pyhcrf breaks the tie by a random start)."""
    S = int(n_states)
    if topology == "ergodic":
        return np.zeros((S, S)), np.zeros(S)
    trans = np.full((S, S), -np.inf)
    for j in range(S):
        trans[j, j] = 0.0
        if j + 1 < S:
            trans[j, j + 1] = 0.0
    start = np.full(S, -np.inf)
    start[0] = 0.0
    return trans, start


def hidden_chain_pass(corpus, labels, w, n_attributes: int, n_classes: int, n_states: int, *,
                      topology: str = "ergodic", gradient: bool = True,
                      node: bool = False) -> HiddenChainPass:
    """One compiled pass over ``corpus`` (a ``SequenceCorpus``) under weights ``w`` (its
    ``attr_values``, when present, scale each attribute's scores and gradient).

    ``labels`` (n,) are the gold class ids (−1: unlabelled, contributing its expected
    features with coefficient p(k | x) and nothing to the loss); ``topology`` the allowed
    moves inside a block (:func:`topology_masks`; a ruled-out transition or start gets
    marginal 0, so its weight has gradient 0); ``gradient`` asks for the gradient, ``node``
    for the node marginals p(h_t = (k, j) | x)."""
    K, S, A = int(n_classes), int(n_states), int(n_attributes)
    w = np.ascontiguousarray(w, dtype=np.float64)
    emission, transition, start, end = split_weights(w, A, K, S)
    t_mask, s_mask = topology_masks(S, topology)
    transition = transition + t_mask[None, :, :]
    start = start + np.tile(s_mask, K)
    n = len(corpus)
    grad = np.zeros_like(w)
    if gradient:
        g_em, g_tr, g_start, g_end = split_weights(grad, A, K, S)
    else:
        g_em, g_tr = np.zeros((0, K * S)), np.zeros((K, S, S))
        g_start, g_end = np.zeros(K * S), np.zeros(K * S)
    offsets = corpus.offsets
    node_out = np.zeros((int(offsets[-1] - offsets[0]) if node else 0, K * S))
    class_log_z = np.empty((n, K))
    total = _pass(corpus.attr_indptr, corpus.attr_ids, corpus.attr_values, offsets,
                  np.ascontiguousarray(labels, dtype=np.int64), emission,
                  np.ascontiguousarray(transition), start, end, gradient, g_em, g_tr, g_start,
                  g_end, node, node_out, class_log_z)
    return HiddenChainPass(float(total), grad if gradient else None, class_log_z,
                           node_out if node else None)
