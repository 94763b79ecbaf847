"""How well probabilities match frequencies: reliability bins and the expected calibration
error (ECE) of confidence scores, such as a CRF's per-token marginals.

For predictions with confidence ``c_i`` (the probability the model gives its chosen label)
and correctness ``a_i`` (1 when that label is right), the [0, 1] range is cut into
``n_bins`` equal-width bins; in bin b with ``n_b`` predictions the mean confidence is
``conf_b`` and the accuracy ``acc_b``, and

    ECE = Σ_b (n_b / N) |acc_b − conf_b|

(Guo et al. 2017, Eq. 3).  The bins are scikit-learn's
(:func:`sklearn.calibration.calibration_curve` with ``strategy="uniform"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.calibration import calibration_curve

from .exceptions import InputError

__all__ = ["Reliability", "reliability", "token_confidence"]


@dataclass(frozen=True)
class Reliability:
    """Per non-empty bin: mean confidence, accuracy and count; the ECE; the bin count."""

    confidence: np.ndarray
    accuracy: np.ndarray
    count: np.ndarray
    ece: float
    n_bins: int

    def to_json(self) -> dict:
        return {"ece": self.ece, "n_bins": self.n_bins,
                "bins": [{"confidence": float(c), "accuracy": float(a), "count": int(n)}
                         for c, a, n in zip(self.confidence, self.accuracy, self.count)]}


def reliability(confidence, correct, n_bins: int = 15) -> Reliability:
    """Reliability bins and ECE of ``confidence`` (floats in [0, 1]) against ``correct``
    (booleans or 0/1), both of one entry per prediction."""
    conf = np.asarray(confidence, dtype=np.float64).ravel()
    hit = np.asarray(correct).ravel()
    if conf.shape != hit.shape or conf.size == 0:
        raise InputError(f"confidence and correct must be non-empty and of equal length; got "
                         f"{conf.size} and {hit.size}")
    if not np.all((conf >= 0) & (conf <= 1)):
        raise InputError("confidence values must lie in [0, 1]")
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive int; got {n_bins!r}")
    hit = hit.astype(np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # the same bins as calibration_curve: interior edges, right-open, 1.0 in the last bin
    which = np.searchsorted(edges[1:-1], conf, side="right")
    count = np.bincount(which, minlength=n_bins)
    accuracy, mean_conf = calibration_curve(hit, conf, n_bins=n_bins, strategy="uniform") \
        if np.unique(hit).size > 1 else _one_class(hit, conf, which, count)
    count = count[count > 0]
    ece = float(np.sum(count / conf.size * np.abs(accuracy - mean_conf)))
    return Reliability(mean_conf, accuracy, count, ece, int(n_bins))


def _one_class(hit, conf, which, count):
    """calibration_curve refuses a single class; the bins are then plain means."""
    full = count > 0
    sums_c = np.bincount(which, weights=conf, minlength=count.size)[full]
    sums_a = np.bincount(which, weights=hit, minlength=count.size)[full]
    return sums_a / count[full], sums_c / count[full]


def token_confidence(marginals, gold) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) per token from per-sentence marginals ((T, L) arrays) and gold
    label ids: the top label's probability, and whether the top label is the gold one
    (a gold label −1, a token left free, counts as wrong)."""
    m = np.concatenate([np.asarray(a, dtype=np.float64) for a in marginals]) if len(marginals) \
        else np.zeros((0, 1))
    y = np.concatenate([np.asarray(g).reshape(-1) for g in gold]) if len(gold) else np.zeros(0)
    if m.shape[0] != y.shape[0]:
        raise InputError(f"marginals cover {m.shape[0]} tokens but gold has {y.shape[0]}")
    top = m.argmax(axis=1)
    return m[np.arange(m.shape[0]), top], top == y
