"""Eisner's chart for first-order projective dependency parsing (compiled with numba).

The chart holds the best score of every item; the trees are read out of it by
:mod:`latentstruct.inference.eisner_derivations` and the public entry points are in
:mod:`latentstruct.inference.eisner`.

The chart (Eisner 1996; Eisner & Satta 1999) has, for every span ``s < t`` of positions
``0..n``, three kinds of items:

* ``CR[s, t]``, complete right-facing: head ``s`` together with all its descendants in
  ``s+1..t``, where ``t`` is the end of the rightmost subtree;
* ``CL[s, t]``, complete left-facing: head ``t`` with all its descendants in ``s..t-1``;
* ``SP[s, t]``, the split item ``CR[s, r] + CL[r+1, t]`` for the best ``r``: two adjacent
  complete spans, still unconnected.  Adding the arc ``s -> t`` gives the *incomplete*
  right-facing item ``IR[s, t] = SP[s, t] + scores[s, t]``; adding ``t -> s`` gives the
  incomplete left-facing item ``IL[s, t] = SP[s, t] + scores[t, s]``.  Keeping ``SP`` once for
  both directions halves the work on incomplete items.

Recurrences (``CR[s, s] = CL[s, s] = 0``)::

    SP[s, t] = max_{s <= r < t}  CR[s, r] + CL[r+1, t]
    CR[s, t] = max_{s < r <= t}  IR[s, r] + CR[r, t]        (r: the rightmost dependent of s)
    CL[s, t] = max_{s <= r < t}  CL[s, r] + IL[r, t]        (r: the leftmost dependent of t)

and the best tree scores ``CR[0, n]``.  ROOT never gets a head: ``CL[0, t]`` and ``IL[0, t]``
do not exist.  For ``single_root=True`` the split item ``SP[0, t]`` is restricted to
``r = 0`` (``CR[0, 0] + CL[1, t]``), so ``IR[0, t]`` is an arc from ROOT whose subtree fills
``1..t`` and ``CR[0, n] = IR[0, r] + CR[r, n]`` attaches exactly one word ``r`` to ROOT.

Every projective tree has exactly one derivation in this chart (the split points are forced
by the tree), so the k best derivations are the k best distinct trees.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: chart item kinds (first index of the chart arrays)
CR = 0  # complete, right-facing: head s, span s..t
CL = 1  # complete, left-facing: head t, span s..t
SP = 2  # split item CR[s, r] + CL[r+1, t]; IR / IL add the arc s->t / t->s


@njit(cache=True)
def fill_chart(scores, single_root, best, arg):  # pragma: no cover - numba
    """Eisner's 1-best chart: ``best[kind, s, t]`` and its split point ``arg[kind, s, t]``.

    Strict ``>`` over increasing split points keeps the smallest split among ties; an item
    with no finite derivation keeps score -inf and its first split (so back-tracking an
    infeasible chart still yields a well-formed tree).
    """
    N = scores.shape[0]
    for s in range(N):
        for t in range(N):
            for kind in range(3):
                best[kind, s, t] = -np.inf
                arg[kind, s, t] = s
        best[CR, s, s] = 0.0
        best[CL, s, s] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            # SP[s, t] = max_{s <= r < t} CR[s, r] + CL[r+1, t]   (single root: r = 0 when s = 0)
            r_hi = s if (single_root and s == 0) else t - 1
            b = -np.inf
            a = s
            for r in range(s, r_hi + 1):
                v = best[CR, s, r] + best[CL, r + 1, t]
                if v > b:
                    b = v
                    a = r
            best[SP, s, t] = b
            arg[SP, s, t] = a
            # CL[s, t] = max_{s <= r < t} CL[s, r] + IL[r, t],  IL[r, t] = SP[r, t] + arc t -> r
            # (s = 0 would make ROOT a dependent: the item does not exist)
            if s > 0:
                b = -np.inf
                a = s
                for r in range(s, t):
                    v = best[CL, s, r] + (best[SP, r, t] + scores[t, r])
                    if v > b:
                        b = v
                        a = r
                best[CL, s, t] = b
                arg[CL, s, t] = a
            # CR[s, t] = max_{s < r <= t} IR[s, r] + CR[r, t],  IR[s, r] = SP[s, r] + arc s -> r
            b = -np.inf
            a = s + 1
            for r in range(s + 1, t + 1):
                v = (best[SP, s, r] + scores[s, r]) + best[CR, r, t]
                if v > b:
                    b = v
                    a = r
            best[CR, s, t] = b
            arg[CR, s, t] = a


@njit(cache=True)
def item_children(kind, s, t, r):  # pragma: no cover - numba
    """The two sub-items (kind, s, t) of item (kind, s, t) split at r: left then right."""
    if kind == CR:  # IR[s, r] (= SP[s, r] + arc s->r) and CR[r, t]
        return SP, s, r, CR, r, t
    if kind == CL:  # CL[s, r] and IL[r, t] (= SP[r, t] + arc t->r)
        return CL, s, r, SP, r, t
    return CR, s, r, CL, r + 1, t  # SP: CR[s, r] and CL[r+1, t]


@njit(cache=True)
def split_arc_scores(scores, kind, s, t, r):  # pragma: no cover - numba
    """Arc scores added to the (left, right) sub-item values of item (kind, s, t) split at r."""
    if kind == CR:
        return scores[s, r], 0.0
    if kind == CL:
        return 0.0, scores[t, r]
    return 0.0, 0.0


@njit(cache=True)
def split_range(kind, s, t, single_root):  # pragma: no cover - numba
    """First and last split point of item (kind, s, t)."""
    if kind == CR:
        return s + 1, t
    if kind == SP and single_root and s == 0:
        return 0, 0
    return s, t - 1
