"""Paired significance tests over per-item scores (Koo & Collins 2005, footnote 4).

The sign test compares two systems item by item (sentence by sentence): it counts the items
where system A scores higher and where system B does, drops ties, and asks how likely so
lopsided a split is if each untied item were a fair coin (a two-sided exact binomial test,
``scipy.stats.binomtest``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

__all__ = ["SignTest", "sign_test"]


@dataclass(frozen=True)
class SignTest:
    """Outcome of a paired sign test of A against B."""

    n_better: int  # items where A scores higher
    n_worse: int  # items where B scores higher
    n_ties: int
    p_value: float  # two-sided

    def to_json(self) -> dict:
        return {"better": self.n_better, "worse": self.n_worse, "ties": self.n_ties,
                "p_value": self.p_value}


def sign_test(scores_a, scores_b, *, tol: float = 1e-12) -> SignTest:
    """Two-sided sign test of per-item scores ``scores_a`` against ``scores_b``.

    Items whose scores differ by at most ``tol`` are ties and are dropped; with no untied
    item the p-value is 1.
    """
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"sign_test needs two 1-d arrays of equal length, got shapes "
                         f"{a.shape} and {b.shape}")
    diff = a - b
    better = int(np.count_nonzero(diff > tol))
    worse = int(np.count_nonzero(diff < -tol))
    ties = int(a.shape[0] - better - worse)
    n = better + worse
    p = 1.0 if n == 0 else float(binomtest(better, n, 0.5, alternative="two-sided").pvalue)
    return SignTest(better, worse, ties, p)
