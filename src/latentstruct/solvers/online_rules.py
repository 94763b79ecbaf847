"""The online learners' update rules, compiled, each written once.

Every rule has the signature ``rule(w, u, extra, idx, val, violation, errors, t, params)
-> cost``: ``w`` the weights, ``u`` the averaging accumulator (an empty array without
averaging), ``extra`` the rule's own per-weight state (AROW's diagonal covariance; empty
otherwise), ``(idx, val)`` the sparse ``Delta = Phi(x, y) - Phi(x, y_hat)`` (an index may
repeat: each entry adds), ``violation = -w . Delta``, ``errors`` the task loss of the
prediction, ``t`` the step count of this example (1-based, over all epochs), ``params`` the
rule's hyperparameters as floats.  It updates ``w``, ``u`` and ``extra`` in place and
returns the example's cost (the epoch's summed cost is the learner's objective curve).

A rule is named by its code (:data:`RULES`) and applied by :func:`apply_rule`: the
learners' Python loop (``learners.online``) calls it after each mistake, and a structure's
compiled epoch (``ChainStructure.online_pass``) calls the same function inside its loop, so
a rule never has two implementations.  (A code, not a compiled function passed as an
argument: numba cannot cache a kernel specialised on a function argument, and would
compile it again, seconds, in every process.)
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["perceptron_step", "pa_step", "arow_step", "pa_tau", "apply_rule", "PA_TYPES",
           "RULES"]

#: the rules' codes, as ``apply_rule`` and a compiled pass take them
RULES = {"perceptron": 0, "pa": 1, "arow": 2}

#: ``pa_type`` codes, as CRFsuite numbers its passive-aggressive variants
PA_TYPES = {"pa": 0, "pa-i": 1, "pa-ii": 2}


@njit(cache=True, nogil=True)
def _accumulate(u, idx, val, scale, t):  # pragma: no cover - numba
    """The averaging trick's accumulator: u += (t - 1) * scale * Delta."""
    if u.shape[0]:
        c = (t - 1) * scale
        for k in range(idx.shape[0]):
            u[idx[k]] += c * val[k]


@njit(cache=True, nogil=True)
def perceptron_step(w, u, extra, idx, val, violation, errors, t, params):  # pragma: no cover - numba
    """Collins (2002): w <- w + Delta; the cost is the errors."""
    for k in range(idx.shape[0]):
        w[idx[k]] += val[k]
    _accumulate(u, idx, val, 1.0, t)
    return errors


@njit(cache=True, nogil=True)
def pa_tau(loss, sq_norm, pa_type, c):  # pragma: no cover - numba
    """The passive-aggressive multiplier of one update (Crammer et al. 2006, Eq. 2-3 and
    their PA-I / PA-II forms; ``pa_type`` 0, 1, 2 as :data:`PA_TYPES`): ``loss /
    ||Delta||^2``, capped at ``c`` (PA-I), or ``loss / (||Delta||^2 + 1 / (2 c))`` (PA-II).
    A zero loss gives 0; so does a zero Delta under PA and PA-I, which cannot move."""
    if loss <= 0.0:
        return 0.0
    if pa_type == 2:
        return loss / (sq_norm + 1.0 / (2.0 * c))
    if sq_norm <= 0.0:
        return 0.0
    tau = loss / sq_norm
    if pa_type == 1:
        return min(c, tau)
    return tau


@njit(cache=True, nogil=True)
def pa_step(w, u, extra, idx, val, violation, errors, t, params):  # pragma: no cover - numba
    """CRFsuite's ``pa``: cost = violation + sqrt(errors) (``params[2]``, error-sensitive)
    or + 1; w <- w + tau Delta with tau of :func:`pa_tau` (``params[0]`` the type,
    ``params[1]`` c).  ``||Delta||^2`` is taken over the coalesced entries."""
    cost = violation + (math.sqrt(errors) if params[2] != 0.0 else 1.0)
    sq = 0.0
    for k in range(idx.shape[0]):
        sq += val[k] * val[k]
    tau = pa_tau(cost, sq, int(params[0]), params[1])
    for k in range(idx.shape[0]):
        w[idx[k]] += tau * val[k]
    _accumulate(u, idx, val, tau, t)
    return cost


@njit(cache=True, nogil=True)
def arow_step(w, u, extra, idx, val, violation, errors, t, params):  # pragma: no cover - numba
    """AROW (Crammer, Kulesza & Dredze 2009) with a diagonal covariance ``extra``, as
    CRFsuite's ``arow``: cost = violation + errors, alpha = cost / (gamma + Delta' S Delta)
    (``params[0]`` gamma), w <- w + alpha S Delta, 1/S <- 1/S + Delta^2 / gamma."""
    gamma = params[0]
    conf = 0.0
    for k in range(idx.shape[0]):
        conf += extra[idx[k]] * val[k] * val[k]
    cost = violation + errors
    alpha = cost / (gamma + conf)
    for k in range(idx.shape[0]):
        j = idx[k]
        w[j] += alpha * extra[j] * val[k]
    for k in range(idx.shape[0]):
        j = idx[k]
        extra[j] = 1.0 / (1.0 / extra[j] + val[k] * val[k] / gamma)
    _accumulate(u, idx, val, alpha, t)
    return cost


@njit(cache=True, nogil=True)
def apply_rule(rule, w, u, extra, idx, val, violation, errors, t, params):  # pragma: no cover - numba
    """The rule of code ``rule`` (:data:`RULES`) on one mistake; its cost."""
    if rule == 0:
        return perceptron_step(w, u, extra, idx, val, violation, errors, t, params)
    if rule == 1:
        return pa_step(w, u, extra, idx, val, violation, errors, t, params)
    return arow_step(w, u, extra, idx, val, violation, errors, t, params)
