"""Monotone (order-preserving) one-to-one alignment by dynamic programming.

An alignment of ``m`` source items to ``n`` target items is encoded as an int64 array ``a``
of length ``m``: ``a[i] = j`` when source ``i`` is aligned to target ``j``, ``-1`` when it is
unaligned.  It is *one-to-one* when no target is used twice and *monotone* (non-crossing)
when the aligned pairs are strictly increasing in both coordinates.  Its score is
``sum_{i: a[i] >= 0} scores[i, a[i]]``; the empty alignment scores 0, so cells with a
negative score are never taken, and ``-inf`` forbids a cell.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import as_generator, as_int_array, as_scores, shape_str
from latentstruct.inference.result import EXACT, DecodeResult

__all__ = ["monotone_alignment", "alignment_to_indicator", "indicator_to_alignment"]


@njit(cache=True)
def _monotone_kernel(scores, randomize, uniforms, out):  # pragma: no cover - numba
    """Suffix DP with a one-to-one map between choice sequences and alignments.

    G[i, j]: best alignment of rows i.. to columns j..;  G[m, j] = 0.
    H[i, j]: best one where row i is aligned to some column >= j;  H[i, n] = -inf.
        G[i, j] = max(G[i+1, j]  (row i unaligned),  H[i, j])
        H[i, j] = max(scores[i, j] + G[i+1, j+1]  (row i -> j),  H[i, j+1])
    Each alignment is produced by exactly one choice sequence, so counting optimal choices
    (cG, cH) and sampling in proportion gives a uniform draw among optimal alignments.
    Counts of row i are divided by rscale[i] (their max) to avoid overflow; they are
    expressed in units of row i+1 when compared with counts of row i+1.
    """
    m, n = scores.shape
    G = np.zeros((m + 1, n + 1))
    H = np.full((m + 1, n + 1), -np.inf)
    cG = np.ones((m + 1, n + 1))
    cH = np.zeros((m + 1, n + 1))
    rscale = np.ones(m + 1)
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            take = scores[i, j] + G[i + 1, j + 1]
            skip = H[i, j + 1]
            H[i, j] = take if take >= skip else skip
            if randomize:
                c = 0.0
                if take == H[i, j] and take > -np.inf:
                    c += cG[i + 1, j + 1]
                if skip == H[i, j] and skip > -np.inf:
                    c += cH[i, j + 1]
                cH[i, j] = c
        for j in range(n, -1, -1):
            un = G[i + 1, j]
            al = H[i, j]
            G[i, j] = un if un >= al else al
            if randomize:
                c = 0.0
                if un == G[i, j]:
                    c += cG[i + 1, j]
                if al == G[i, j]:
                    c += cH[i, j]
                cG[i, j] = c
        if randomize:
            mx = 0.0
            for j in range(n + 1):
                if cG[i, j] > mx:
                    mx = cG[i, j]
                if cH[i, j] > mx:
                    mx = cH[i, j]
            if mx > 0.0:
                for j in range(n + 1):
                    cG[i, j] /= mx
                    cH[i, j] /= mx
                rscale[i] = mx
    # backtrack
    j = 0
    q = 0
    for i in range(m):
        un = G[i + 1, j]
        if not randomize:
            aligned = H[i, j] > un
        else:
            w_un = cG[i + 1, j] if un == G[i, j] else 0.0
            w_al = cH[i, j] * rscale[i] if H[i, j] == G[i, j] else 0.0
            if w_un + w_al > 0.0:
                aligned = uniforms[q] * (w_un + w_al) >= w_un
            else:
                aligned = H[i, j] > un
            q += 1
        if not aligned:
            out[i] = -1
            continue
        while True:
            take = scores[i, j] + G[i + 1, j + 1]
            skip = H[i, j + 1]
            if not randomize:
                here = take >= skip
            else:
                w_t = cG[i + 1, j + 1] if (take == H[i, j] and take > -np.inf) else 0.0
                w_s = cH[i, j + 1] * rscale[i] if (skip == H[i, j] and skip > -np.inf) else 0.0
                if w_t + w_s > 0.0:
                    here = uniforms[q] * (w_t + w_s) < w_t
                else:
                    here = take >= skip
                q += 1
            if here:
                break
            j += 1
        out[i] = j
        j += 1
    return G[0, 0]


def monotone_alignment(scores, *, random_state=None) -> DecodeResult:
    """Best monotone one-to-one alignment (non-crossing, unaligned items allowed).

    Maximises ``sum_{i: a[i] >= 0} scores[i, a[i]]`` over alignments whose aligned pairs are
    strictly increasing in both source and target position.

    Parameters
    ----------
    scores : array (m, n)
        Score of aligning source ``i`` to target ``j``; ``-inf`` forbids the pair.
    random_state : None, int or numpy.random.Generator
        ``None``: deterministic ties (prefer leaving a source item unaligned, then the
        lowest target).  Otherwise one optimal alignment is drawn uniformly at random among
        all alignments with exactly the optimal float score (J-LIS section 5).

    Returns
    -------
    DecodeResult with ``structure`` an int64 array (m,) (target index or -1), status
    ``"exact"``.  The score is >= 0 (the empty alignment is always feasible).

    Complexity: O(m n) time and memory.
    """
    scores = as_scores(scores, "scores", 2, "(m, n)")
    m, n = scores.shape
    out = np.full(m, -1, dtype=np.int64)
    if m == 0 or n == 0:
        return DecodeResult(out, 0.0, EXACT)
    randomize = random_state is not None
    # one draw per row (aligned or not) plus one per step along a row's candidate targets
    uniforms = as_generator(random_state).random(2 * m + n + 1) if randomize else np.zeros(1)
    score = _monotone_kernel(scores, randomize, uniforms, out)
    aligned = out >= 0
    # report the score of the returned structure, summed in a fixed order
    exact_score = float(scores[np.flatnonzero(aligned), out[aligned]].sum()) if aligned.any() else 0.0
    del score
    return DecodeResult(out, exact_score, EXACT)


def alignment_to_indicator(a, n) -> np.ndarray:
    """Binary indicator matrix z (m, n) of alignment ``a`` (int (m,), entries -1 or in [0, n)).

    ``z[i, j] = 1`` iff ``a[i] == j``.  Complexity O(m n).
    """
    a = as_int_array(a, "a", "(m,)")
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InputError(f"n must be a non-negative integer (number of targets); got {n!r}")
    bad = (a < -1) | (a >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"a[{i}] = {a[i]} is out of range; expected -1 (unaligned) or a target in [0, {n})")
    z = np.zeros((a.shape[0], int(n)), dtype=np.int64)
    rows = np.flatnonzero(a >= 0)
    z[rows, a[rows]] = 1
    return z


def indicator_to_alignment(z) -> np.ndarray:
    """Alignment ``a`` (int64 (m,)) of a 0/1 indicator matrix ``z`` (m, n).

    Each row and each column of ``z`` may hold at most one 1 (one-to-one).  Complexity O(m n).
    """
    z = np.asarray(z)
    if z.ndim != 2:
        raise InputError(f"z must be a 2-d 0/1 array of shape (m, n); got shape {shape_str(z.shape)}")
    if not np.all((z == 0) | (z == 1)):
        raise InputError("z must contain only 0 and 1")
    z = z.astype(np.int64)
    rs = z.sum(axis=1)
    cs = z.sum(axis=0)
    if (rs > 1).any():
        i = int(np.flatnonzero(rs > 1)[0])
        raise InputError(f"row {i} of z has {rs[i]} ones; a one-to-one alignment has at most one per row")
    if (cs > 1).any():
        j = int(np.flatnonzero(cs > 1)[0])
        raise InputError(f"column {j} of z has {cs[j]} ones; a one-to-one alignment has at most one per column")
    a = np.full(z.shape[0], -1, dtype=np.int64)
    rows, cols = np.nonzero(z)
    a[rows] = cols
    return a
