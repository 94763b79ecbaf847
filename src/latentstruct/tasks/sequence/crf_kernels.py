"""Compiled conditional log-likelihood of first-order sequence labelling, for the CRF learner.

For a corpus of sentences (the ``SequenceCorpus`` CSR arrays) with gold labels and weights laid
out as in :mod:`latentstruct.tasks.sequence.labelling`::

    [ emissions (n_attr x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

:func:`log_loss_gradient` returns the negative conditional log-likelihood

    N(w) = Σ_i [ log Z(x_i; w) − log Z(x_i, y_i; w) ]

and its gradient ``Σ_i (E_{p(y|x_i)}[Φ] − E_{p(y|x_i, y_i)}[Φ])``.  A fully labelled sentence has
``log Z(x_i, y_i) = w·Φ(x_i, y_i)`` and the second expectation is ``Φ(x_i, y_i)`` itself; a gold
label of −1 (a label unseen when the task was fitted) leaves its position free, and the
numerator then sums over every labelling that agrees with the known labels (a clamped
forward–backward), which is the likelihood of what was observed.

``attr_values`` (None: binary attributes) scales each attribute occurrence: its score
``v * w[a, y]`` and its gradient entry ``v * (marginal - target)`` (CRFsuite's semantics).

One call scores every token once (the gather over its attributes' label rows), runs the
forward–backward of :mod:`latentstruct.inference.chain_fb`, and scatters the marginals back:
O(Σ_t (|attrs(t)| L + L²)) time, no per-sentence Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...inference.chain_fb import chain_marginals_into, chain_work, transition_exp

__all__ = ["log_loss_gradient", "node_marginals_batch", "token_scores", "longest_sentence"]


@njit(cache=True, nogil=True)
def longest_sentence(offsets):  # pragma: no cover - numba
    """The most tokens of one sentence of ``offsets`` (work buffers are sized by it)."""
    out = 0
    for k in range(offsets.shape[0] - 1):
        out = max(out, offsets[k + 1] - offsets[k])
    return out


@njit(cache=True, nogil=True)
def token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1, s):  # pragma: no cover - numba
    """Token scores of tokens t0..t1-1 (start and end folded in) into ``s[:T]``; each
    attribute's row scaled by its value (``attr_values``, None: all 1)."""
    L = emission.shape[1]
    T = t1 - t0
    s[:T] = 0.0
    for t in range(T):
        for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
            row = attr_ids[p]
            if attr_values is None:
                for j in range(L):
                    s[t, j] += emission[row, j]
            else:
                v = attr_values[p]
                for j in range(L):
                    s[t, j] += v * emission[row, j]
    for j in range(L):
        s[0, j] += start[j]
        s[T - 1, j] += end[j]
    return s[:T]


@njit(cache=True, nogil=True)
def _loss_gradient(attr_indptr, attr_ids, attr_values, offsets, labels, emission, transition, start, end,
                   g_em, g_tr, g_start, g_end, log_z_out):  # pragma: no cover - numba
    L = emission.shape[1]
    M, m_trans = transition_exp(transition)
    longest = longest_sentence(offsets)
    work, c = chain_work(longest, L)
    s_buf = np.empty((max(longest, 1), L))
    node_buf = np.empty((max(longest, 1), L))
    target_buf = np.empty((max(longest, 1), L))
    edge_scaled = np.zeros((L, L))
    total = 0.0
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        T = t1 - t0
        if T == 0:
            log_z_out[k] = 0.0
            continue
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        node = node_buf[:T]
        log_z = chain_marginals_into(s, transition, M, m_trans, node, g_tr, edge_scaled, 1.0,
                                     work, c)
        log_z_out[k] = log_z
        partial = False
        for t in range(T):
            if labels[t0 + t] < 0:
                partial = True
        target = target_buf[:T]
        target[:] = 0.0
        if partial:
            clamped = s.copy()
            for t in range(T):
                y = labels[t0 + t]
                if y >= 0:
                    for j in range(L):
                        if j != y:
                            clamped[t, j] = -np.inf
            log_num = chain_marginals_into(clamped, transition, M, m_trans, target, g_tr,
                                           edge_scaled, -1.0, work, c)
        else:
            log_num = 0.0
            for t in range(T):
                y = labels[t0 + t]
                target[t, y] = 1.0
                log_num += s[t, y]
                if t > 0:
                    yp = labels[t0 + t - 1]
                    log_num += transition[yp, y]
                    g_tr[yp, y] -= 1.0
        total += log_z - log_num
        for t in range(T):
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                row = attr_ids[p]
                if attr_values is None:
                    for j in range(L):
                        g_em[row, j] += node[t, j] - target[t, j]
                else:
                    v = attr_values[p]
                    for j in range(L):
                        g_em[row, j] += v * (node[t, j] - target[t, j])
        for j in range(L):
            g_start[j] += node[0, j] - target[0, j]
            g_end[j] += node[T - 1, j] - target[T - 1, j]
    for i in range(L):
        for j in range(L):
            g_tr[i, j] += M[i, j] * edge_scaled[i, j]
    return total


def _label_blocks(w, A: int, L: int, constraints):
    """The emission, transition, start and end blocks of ``w`` (views), the last three with
    the parts ``constraints`` forbid at ``-inf`` (copies) when there are constraints."""
    emission = w[: A * L].reshape(A, L)
    transition = w[A * L : A * L + L * L].reshape(L, L)
    start = w[A * L + L * L : A * L + L * L + L]
    end = w[A * L + L * L + L : A * L + L * L + 2 * L]
    if constraints is not None:
        transition, start, end = constraints.apply(transition, start, end)
    return emission, transition, start, end


def log_loss_gradient(attr_indptr, attr_ids, offsets, labels, w, n_attributes: int,
                      n_labels: int, out=None, attr_values=None, constraints=None):
    """(N(w), ∇N(w), log Z per sentence) of a corpus; ``labels`` are the gold label ids of all
    tokens concatenated (−1: unknown), ``w`` laid out as in the module docstring,
    ``attr_values`` the corpus's attribute values (None: binary).

    ``constraints`` (``inference.constraints.ChainConstraints``, or None): both sums run over
    the labellings they allow (a forbidden part scores ``-inf``, so its probability and its
    gradient are 0); a gold labelling they forbid has probability 0 and the loss is ``inf``.

    ``out`` (float64, the shape of ``w``), when given, is zeroed and receives the gradient:
    a caller that evaluates many times reuses one buffer instead of a fresh array whose pages
    the kernel would fault in on every call."""
    L, A = int(n_labels), int(n_attributes)
    w = np.ascontiguousarray(w, dtype=np.float64)
    emission, transition, start, end = _label_blocks(w, A, L, constraints)
    if out is None:
        grad = np.zeros_like(w)
    else:
        grad = out
        grad.fill(0.0)
    g_em = grad[: A * L].reshape(A, L)
    g_tr = grad[A * L : A * L + L * L].reshape(L, L)
    g_start = grad[A * L + L * L : A * L + L * L + L]
    g_end = grad[A * L + L * L + L : A * L + L * L + 2 * L]
    log_z = np.empty(len(offsets) - 1)
    total = _loss_gradient(attr_indptr, attr_ids, attr_values, np.ascontiguousarray(offsets, dtype=np.int64),
                           np.ascontiguousarray(labels, dtype=np.int64), emission, transition,
                           start, end, g_em, g_tr, g_start, g_end, log_z)
    return float(total), grad, log_z


@njit(cache=True, nogil=True)
def _node_batch(attr_indptr, attr_ids, attr_values, offsets, emission, transition, start, end,
                node_all, log_z_out):  # pragma: no cover - numba
    L = emission.shape[1]
    M, m_trans = transition_exp(transition)
    sink = np.zeros((L, L))
    base = offsets[0]
    longest = longest_sentence(offsets)
    work, c = chain_work(longest, L)
    s_buf = np.empty((max(longest, 1), L))
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        if t1 == t0:
            log_z_out[k] = 0.0
            continue
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        log_z_out[k] = chain_marginals_into(s, transition, M, m_trans,
                                            node_all[t0 - base : t1 - base], sink, sink, 0.0,
                                            work, c)


def node_marginals_batch(attr_indptr, attr_ids, offsets, w, n_attributes: int, n_labels: int,
                         attr_values=None, constraints=None):
    """(log Z per sentence, node marginals (N, L) of all tokens) of a corpus under ``w``
    (``attr_values``: the corpus's attribute values, None: binary), over the labellings
    ``constraints`` allow (None: all)."""
    L, A = int(n_labels), int(n_attributes)
    w = np.ascontiguousarray(w, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    node = np.zeros((int(offsets[-1] - offsets[0]), L))
    log_z = np.empty(offsets.size - 1)
    _node_batch(attr_indptr, attr_ids, attr_values, offsets,
                *_label_blocks(w, A, L, constraints), node, log_z)
    return log_z, node
