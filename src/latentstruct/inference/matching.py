"""One-to-one alignment with crossings allowed: maximum-weight bipartite matching.

Same encoding as :mod:`latentstruct.inference.alignment`: an int64 array ``a`` of length
``m`` with ``a[i] = j`` or ``-1`` (unmatched).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from latentstruct.inference.checks import as_scores
from latentstruct.inference.result import EXACT, DecodeResult

__all__ = ["bipartite_matching"]


def bipartite_matching(scores) -> DecodeResult:
    """Best one-to-one (possibly crossing) partial matching of rows to columns.

    Maximises ``sum_{i: a[i] >= 0} scores[i, a[i]]`` over partial matchings (every row and
    column used at most once; leaving a node unmatched scores 0).

    Method: leaving a node unmatched scores 0, so the problem equals a maximum-weight
    assignment on ``max(scores, 0)`` — a pair of score <= 0 can always be dropped without
    loss, which plays the role of matching the node to a zero-score dummy.  The rectangular
    assignment is solved by :func:`scipy.optimize.linear_sum_assignment`, and pairs with
    score <= 0 are then left unmatched.  Exact.

    Parameters
    ----------
    scores : array (m, n); ``-inf`` forbids a pair.

    Returns
    -------
    DecodeResult with int64 array (m,) (column or -1), status ``"exact"``, score >= 0.

    Complexity: O(m n min(m, n)) (Jonker-Volgenant as implemented in SciPy).
    """
    scores = as_scores(scores, "scores", 2, "(m, n)")
    m, n = scores.shape
    a = np.full(m, -1, dtype=np.int64)
    if m == 0 or n == 0:
        return DecodeResult(a, 0.0, EXACT)
    gain = np.maximum(scores, 0.0)
    rows, cols = linear_sum_assignment(gain, maximize=True)
    keep = scores[rows, cols] > 0.0
    a[rows[keep]] = cols[keep]
    aligned = np.flatnonzero(a >= 0)
    score = float(scores[aligned, a[aligned]].sum()) if aligned.size else 0.0
    return DecodeResult(a, score, EXACT)
