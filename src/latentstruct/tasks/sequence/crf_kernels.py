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

__all__ = ["log_loss_gradient", "node_marginals_batch", "token_scores", "longest_sentence",
           "sgd_epoch", "log_loss_sgd_epoch"]


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
def _sentence_buffers(offsets, L):  # pragma: no cover - numba
    """The work space of a pass of :func:`_sentence_nll` over a corpus: the forward-backward's
    (``chain_work``), the token scores, node marginals and gold targets of the longest
    sentence (T, L), and the edge accumulator (L, L), zeroed."""
    longest = longest_sentence(offsets)
    work, c = chain_work(longest, L)
    rows = max(longest, 1)
    return (work, c, np.empty((rows, L)), np.empty((rows, L)), np.empty((rows, L)),
            np.zeros((L, L)))


@njit(cache=True, nogil=True)
def _sentence_nll(s, labels, t0, transition, M, m_trans, node, target, g_tr, edge_scaled,
                  work, c):  # pragma: no cover - numba
    """``(log Z, log Z − log Z(gold))`` of the sentence of tokens t0.. whose token scores
    (start and end folded in) are ``s`` (T, L), under ``transition`` (``M, m_trans``: its
    :func:`transition_exp`).  Writes the node marginals to ``node`` and the gold's (its
    indicators, or for a partial labelling the clamped marginals) to ``target``, both (T, L);
    adds the transition part of the gradient to ``g_tr`` and ``edge_scaled``: the model's
    edge marginals minus the gold's, the part in ``edge_scaled`` still to be multiplied
    elementwise by ``M`` (:func:`~latentstruct.inference.chain_fb.chain_marginals_into`)."""
    T, L = s.shape
    log_z = chain_marginals_into(s, transition, M, m_trans, node, g_tr, edge_scaled, 1.0,
                                 work, c)
    partial = False
    for t in range(T):
        if labels[t0 + t] < 0:
            partial = True
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
    return log_z, log_z - log_num


@njit(cache=True, nogil=True)
def _loss_gradient(attr_indptr, attr_ids, attr_values, offsets, labels, emission, transition, start, end,
                   g_em, g_tr, g_start, g_end, log_z_out):  # pragma: no cover - numba
    L = emission.shape[1]
    M, m_trans = transition_exp(transition)
    work, c, s_buf, node_buf, target_buf, edge_scaled = _sentence_buffers(offsets, L)
    total = 0.0
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        T = t1 - t0
        if T == 0:
            log_z_out[k] = 0.0
            continue
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        node, target = node_buf[:T], target_buf[:T]
        log_z, loss = _sentence_nll(s, labels, t0, transition, M, m_trans, node, target, g_tr,
                                    edge_scaled, work, c)
        log_z_out[k] = log_z
        total += loss
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


@njit(cache=True, nogil=True)
def _rescale(emission, transition, start, end, factor):  # pragma: no cover - numba
    """Every weight times ``factor`` (the lazily kept L2 decay folded into the weights)."""
    emission *= factor
    transition *= factor
    start *= factor
    end *= factor


@njit(cache=True, nogil=True)
def sgd_epoch(attr_indptr, attr_ids, attr_values, offsets, labels, order, emission, transition,
              start, end, tr_mask, start_mask, end_mask, trained, eta0, lam, t):  # pragma: no cover - numba
    """One epoch of per-example SGD on the L2-regularised negative log-likelihood, CRFsuite's
    ``l2sgd`` step (``train_l2sgd.c``), over the sentences ``order`` (indices into
    ``offsets``), updating the weight blocks in place; returns ``(Σ loss, t)``.

    For the k-th example visited (``t`` counting examples over the whole run)::

        η = η0 / (1 + η0 λ t)                       (= 1 / (λ (t0 + t)), t0 = 1 / (λ η0))
        w <- (1 − η λ) w                            (the decay comes first, as in CRFsuite)
        w <- w − η ∇ℓ_i(w)                          (ℓ_i: the example's NLL, at the decayed w)

    on the weights ``trained`` marks (a 0/1 byte per weight; empty: every weight).  The
    decay is kept lazily, ``w = decay · v`` with only ``v`` stored (CRFsuite's scale factor),
    so a step touches only the example's emission rows, the transitions and start/end: the
    scores are those of ``v`` times ``decay``, the update ``v −= (η / decay) ∇ℓ_i``.  The
    decay is folded back into the weights at the end of the epoch (and, should it fall below
    1e-150, at once).  The loss summed is each example's at the weights its step saw (before
    its gradient step), CRFsuite's epoch loss.  ``tr_mask``, ``start_mask``, ``end_mask``:
    0, or ``-inf`` where chain constraints forbid the part.  The forward–backward and the
    gradient are :func:`_sentence_nll`'s, the batch loss's own."""
    L = emission.shape[1]
    work, c, s_buf, node_buf, target_buf, edge_scaled = _sentence_buffers(offsets, L)
    g_tr = np.empty((L, L))
    tr_eff = np.empty((L, L))
    all_trained = trained.shape[0] == 0
    A = emission.shape[0]
    tr_base = A * L
    start_base = tr_base + L * L
    end_base = start_base + L
    decay = 1.0
    total = 0.0
    for i in range(order.shape[0]):
        k = order[i]
        t0, t1 = offsets[k], offsets[k + 1]
        T = t1 - t0
        eta = eta0 / (1.0 + eta0 * lam * t)
        decay *= 1.0 - eta * lam
        t += 1
        if T == 0:
            continue
        gain = eta / decay
        for a in range(L):
            for b in range(L):
                tr_eff[a, b] = decay * transition[a, b] + tr_mask[a, b]
        M, m_trans = transition_exp(tr_eff)
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        for u in range(T):
            for j in range(L):
                s[u, j] *= decay
        for j in range(L):
            s[0, j] += start_mask[j]
            s[T - 1, j] += end_mask[j]
        node, target = node_buf[:T], target_buf[:T]
        edge_scaled[:] = 0.0
        g_tr[:] = 0.0
        _, loss = _sentence_nll(s, labels, t0, tr_eff, M, m_trans, node, target, g_tr,
                                edge_scaled, work, c)
        total += loss
        if not np.isfinite(loss):
            continue  # no labelling allowed, or the weights overflowed: no usable gradient
        for u in range(T):
            for p in range(attr_indptr[t0 + u], attr_indptr[t0 + u + 1]):
                row = attr_ids[p]
                step = gain if attr_values is None else gain * attr_values[p]
                base = row * L
                for j in range(L):
                    if all_trained or trained[base + j]:
                        emission[row, j] -= step * (node[u, j] - target[u, j])
        for a in range(L):
            for b in range(L):
                if all_trained or trained[tr_base + a * L + b]:
                    transition[a, b] -= gain * (g_tr[a, b] + M[a, b] * edge_scaled[a, b])
        for j in range(L):
            if all_trained or trained[start_base + j]:
                start[j] -= gain * (node[0, j] - target[0, j])
            if all_trained or trained[end_base + j]:
                end[j] -= gain * (node[T - 1, j] - target[T - 1, j])
        if decay < 1e-150:
            _rescale(emission, transition, start, end, decay)
            decay = 1.0
    _rescale(emission, transition, start, end, decay)
    return total, t


def log_loss_sgd_epoch(attr_indptr, attr_ids, offsets, labels, order, w, n_attributes: int,
                       n_labels: int, *, eta0: float, lam: float, t: int = 0, trained=None,
                       attr_values=None, constraints=None) -> tuple[float, int]:
    """One epoch of :func:`sgd_epoch` over the sentences ``order`` of a corpus (``labels``:
    the gold label ids of all its tokens, by absolute position, −1 unknown), updating ``w``
    (contiguous float64, laid out as in the module docstring) in place from example count
    ``t``; ``trained``: a 0/1 byte per weight (None: every weight trained).  Returns
    ``(Σ of the examples' losses, each at the weights its step saw, t + len(order))``."""
    L, A = int(n_labels), int(n_attributes)
    if w.dtype != np.float64 or not w.flags.c_contiguous or w.shape != (A * L + L * L + 2 * L,):
        raise ValueError(f"the SGD epoch updates w in place: it needs a contiguous float64 "
                         f"array of {A * L + L * L + 2 * L} weights, got {w.dtype} {w.shape}")
    if lam < 0 or eta0 <= 0 or eta0 * lam >= 1:
        raise ValueError(f"the SGD epoch needs eta0 > 0, lam >= 0 and eta0 * lam < 1 (the first "
                         f"decay factor is 1 - eta0 * lam); got eta0={eta0}, lam={lam}")
    emission, transition, start, end = _label_blocks(w, A, L, None)
    if constraints is None:
        tr_mask, start_mask, end_mask = np.zeros((L, L)), np.zeros(L), np.zeros(L)
    else:
        tr_mask, start_mask, end_mask = (np.ascontiguousarray(m, dtype=np.float64)
                                         for m in constraints.masks())
    trained = np.zeros(0, np.uint8) if trained is None else np.ascontiguousarray(trained, np.uint8)
    total, t = sgd_epoch(attr_indptr, attr_ids, attr_values,
                         np.ascontiguousarray(offsets, dtype=np.int64),
                         np.ascontiguousarray(labels, dtype=np.int64),
                         np.ascontiguousarray(order, dtype=np.int64), emission, transition,
                         start, end, tr_mask, start_mask, end_mask, trained, float(eta0),
                         float(lam), int(t))
    return float(total), int(t)
