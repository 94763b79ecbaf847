"""One online epoch over a chain corpus in one compiled call: decode, compare, step.

The online learners (the perceptron, ``pa``, ``arow``: ``learners.online``) visit the
examples one by one; for each they decode the best labelling under the current weights,
count its wrong labels and, after a mistake, take a step along
``Delta = Phi(x, y) - Phi(x, y_hat)``.  Run from Python, the per-example calls (decode,
feature difference, the step's numpy expressions) cost ten times the arithmetic on a
CoNLL-sized corpus; CRFsuite runs the same loop in C.  :func:`online_epoch` runs the whole
pass here, with no Python per example.

The *step* is the learner's choice: the code of an update rule of
:mod:`~latentstruct.solvers.online_rules` (perceptron, PA, AROW), applied by the same
``apply_rule`` the learner's Python loop calls, so each rule is written once.  What this
module knows is the chain: the weight
layout ``[emissions (n_attr x L) | transitions (L x L) | start (L) | end (L)]``, the
Viterbi decode (``inference.viterbi``), the Hamming loss and the coalesced difference
(``kernels``).

``support`` (a 0/1 byte per weight, or an empty array for every weight) restricts Delta
to the weights the learner trains (CRFsuite's feature set); the others never move.
``allowed_*`` are the chain constraints (a chunker's well-formed tags, local rules):
forbidden parts score ``-inf`` in every decode.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...inference.viterbi import viterbi_batch_kernel
from ...solvers.online_rules import apply_rule
from .kernels import coalesced_phi_difference, emission_scores

__all__ = ["online_epoch", "EPOCH_STATS"]

#: the entries of ``online_epoch``'s ``out`` array, in order
EPOCH_STATS = ("cost", "errors", "rate", "n_updates", "steps", "first_inconsistent",
               "reported", "recomputed")


@njit(cache=True, nogil=True)
def _labelling_score(attr_indptr, attr_ids, attr_values, w, t0, t1, y, n_attr, n_labels):  # pragma: no cover - numba
    """w . Phi(x, y) read straight from the weight layout (not from the decoder's unary
    matrix): the independent score the inference check compares the decoder's against."""
    L = n_labels
    trans_base = n_attr * L
    start_base = trans_base + L * L
    end_base = start_base + L
    score = 0.0
    T = t1 - t0
    for t in range(T):
        lab = y[t]
        for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
            v = 1.0 if attr_values is None else attr_values[p]
            score += v * w[attr_ids[p] * L + lab]
        if t > 0:
            score += w[trans_base + y[t - 1] * L + lab]
    if T > 0:
        score += w[start_base + y[0]] + w[end_base + y[T - 1]]
    return score


@njit(cache=True, nogil=True)
def online_epoch(attr_indptr, attr_ids, attr_values, offsets, labels, order, w, u, extra,
                 support, allowed_trans, allowed_start, allowed_end, n_attr, n_labels,
                 rule, params, t, check, out):  # pragma: no cover - numba
    """Visit the sentences ``order`` once (see the module docstring), updating ``w`` (and
    the rule's ``u`` and ``extra``) in place from step count ``t``; ``rule``: the update's
    code (``solvers.online_rules.RULES``), ``params`` its hyperparameters.

    ``offsets``: sentence i is tokens ``offsets[i]..offsets[i+1]-1`` of the CSR arrays;
    ``labels``: every token's gold label id (all known), back to back, indexed like the
    tokens minus ``offsets[0]``.  ``out`` (8 floats) receives :data:`EPOCH_STATS`: the
    summed step costs, the summed wrong labels, the summed error rates (wrong labels /
    tokens), the updates made, the step count after the pass, and, with ``check``, the
    first example whose decoder score differs from ``w . Phi(x, y_hat)`` by more than 1e-6
    (relative; -1 if none) with its two scores.
    """
    L = n_labels
    A = n_attr
    e = A * L
    emission = w[:e].reshape((A, L))
    base = offsets[0]
    masked = support.shape[0] > 0
    cost_total = 0.0
    errors_total = 0.0
    rate_total = 0.0
    updates = 0
    bad = -1
    reported = 0.0
    recomputed = 0.0
    bounds = np.zeros(2, np.int64)
    trans = np.empty((L, L))
    start = np.empty(L)
    end = np.empty(L)
    scores = np.empty(1)
    for k in range(order.shape[0]):
        i = order[k]
        t += 1
        t0 = offsets[i]
        t1 = offsets[i + 1]
        T = t1 - t0
        if T == 0:
            continue
        # the transition, start and end scores of the current w, constraints at -inf
        for a in range(L):
            start[a] = w[e + L * L + a] if allowed_start[a] else -np.inf
            end[a] = w[e + L * L + L + a] if allowed_end[a] else -np.inf
            for b in range(L):
                trans[a, b] = w[e + a * L + b] if allowed_trans[a, b] else -np.inf
        unary = emission_scores(attr_indptr, attr_ids, attr_values, emission, t0, t1)
        pred = np.empty(T, np.int64)
        bounds[1] = T
        viterbi_batch_kernel(unary, bounds, trans, start, end, pred, scores)
        gold = labels[t0 - base : t1 - base]
        if check and bad < 0:
            again = _labelling_score(attr_indptr, attr_ids, attr_values, w, t0, t1, pred, A, L)
            tol = 1e-6 * max(1.0, abs(scores[0]), abs(again))
            if not abs(scores[0] - again) <= tol:
                bad = i
                reported = scores[0]
                recomputed = again
        errors = 0
        for q in range(T):
            if gold[q] != pred[q]:
                errors += 1
        if errors == 0:
            continue
        idx, val = coalesced_phi_difference(attr_indptr, attr_ids, attr_values, t0, t1, gold,
                                            pred, A, L)
        if masked:
            m = 0
            for q in range(idx.shape[0]):
                if support[idx[q]]:
                    idx[m] = idx[q]
                    val[m] = val[q]
                    m += 1
            idx = idx[:m]
            val = val[:m]
        violation = 0.0
        for q in range(idx.shape[0]):
            violation -= w[idx[q]] * val[q]
        cost_total += apply_rule(rule, w, u, extra, idx, val, violation, float(errors), t,
                                 params)
        errors_total += errors
        rate_total += errors / T
        updates += 1
    out[0] = cost_total
    out[1] = errors_total
    out[2] = rate_total
    out[3] = updates
    out[4] = t
    out[5] = bad
    out[6] = reported
    out[7] = recomputed
