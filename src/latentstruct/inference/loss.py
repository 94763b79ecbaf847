"""Hamming-loss augmentation of part scores, for loss-augmented argmax.

Loss-augmented inference ``argmax_y score(y) + weight * Hamming(y, y*)`` stays a problem of
the same form when the Hamming loss decomposes over the parts, so the ordinary decoder can
be run on augmented scores:

* chains: ``viterbi(hamming_augment(unary, y_true, w), transition, start, end)``;
* alignments: ``monotone_alignment(aug.scores)`` (or ``bipartite_matching``), then add
  ``aug.constant`` to the score, with ``aug = alignment_hamming_augment(scores, a_true, w)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.alignment import alignment_to_indicator
from latentstruct.inference.checks import as_int_array, as_scores, shape_str

__all__ = [
    "hamming_augment",
    "hamming_loss",
    "alignment_hamming_augment",
    "alignment_hamming_loss",
    "AlignmentAugmentation",
]


def _check_weight(weight) -> float:
    try:
        w = float(weight)
    except (TypeError, ValueError):
        raise InputError(f"weight must be a finite number; got {weight!r}") from None
    if not np.isfinite(w):
        raise InputError(f"weight must be a finite number; got {weight!r}")
    return w


def _check_labels(y, T: int, L: int, name: str) -> np.ndarray:
    y = as_int_array(y, name, "(T,)")
    if y.shape[0] != T:
        raise InputError(f"{name} must have shape (T,) = ({T},) to match unary; got shape {shape_str(y.shape)}")
    if T and (y.min() < 0 or y.max() >= L):
        raise InputError(f"{name} must hold labels in [0, {L}); got values in [{y.min()}, {y.max()}]")
    return y


def hamming_loss(y, y_true) -> int:
    """Number of positions where the label sequences ``y`` and ``y_true`` (both (T,)) differ."""
    y = as_int_array(y, "y", "(T,)")
    y_true = as_int_array(y_true, "y_true", "(T,)")
    if y.shape != y_true.shape:
        raise InputError(
            f"y and y_true must have the same shape; got {shape_str(y.shape)} and {shape_str(y_true.shape)}"
        )
    return int(np.count_nonzero(y != y_true))


def hamming_augment(unary, y_true, weight=1.0) -> np.ndarray:
    """Unary scores augmented with the (weighted) Hamming loss against ``y_true``.

    Returns a new array ``unary + weight * [k != y_true[t]]``, so that for every labelling
    ``y``: chain score with the new unary = chain score + ``weight * hamming_loss(y, y_true)``.
    Viterbi on the result is Hamming-loss-augmented Viterbi.

    Parameters: unary (T, L); y_true int (T,) with labels in [0, L); weight float.
    Complexity O(T L).  The input is not modified.
    """
    unary = as_scores(unary, "unary", 2, "(T, L)")
    T, L = unary.shape
    y_true = _check_labels(y_true, T, L, "y_true")
    w = _check_weight(weight)
    out = unary + w
    out[np.arange(T), y_true] -= w
    return out


class AlignmentAugmentation(NamedTuple):
    """Loss-augmented alignment scores: ``scores`` (m, n) and the additive ``constant``."""

    scores: np.ndarray
    constant: float


def alignment_hamming_loss(a, a_true, n) -> int:
    """Hamming loss between two alignments over their (m, n) indicator matrices.

    ``sum_ij |z_ij - z*_ij|``: a pair aligned in only one of them counts 1, so a source item
    aligned to the wrong target costs 2 (one missed pair, one spurious pair).
    """
    z = alignment_to_indicator(a, n)
    zt = alignment_to_indicator(a_true, n)
    if z.shape != zt.shape:
        raise InputError(f"a and a_true must have the same length; got {z.shape[0]} and {zt.shape[0]}")
    return int(np.abs(z - zt).sum())


def alignment_hamming_augment(scores, a_true, weight=1.0) -> AlignmentAugmentation:
    """Alignment scores augmented with the (weighted) Hamming loss against ``a_true``.

    With ``z`` the binary indicator of an alignment (``z_ij = 1`` iff ``a[i] == j``) and
    ``z*`` that of ``a_true``, the loss is ``sum_ij |z_ij - z*_ij|``, which is linear in ``z``
    because both are 0/1::

        |z - z*| = z (1 - 2 z*) + z*,  so  loss(z) = sum_ij z_ij (1 - 2 z*_ij) + sum_ij z*_ij.

    Hence ``score(a) + weight * loss(a) = sum_{i: a[i]>=0} aug[i, a[i]] + constant`` with
    ``aug = scores + weight * (1 - 2 z*)`` and ``constant = weight * sum_ij z*_ij``.  Run the
    alignment decoder on ``aug`` and add ``constant`` to its score.

    Parameters: scores (m, n); a_true int (m,) with -1 or a target in [0, n); weight float.
    Returns AlignmentAugmentation(scores (m, n), constant float).  Complexity O(m n).
    """
    scores = as_scores(scores, "scores", 2, "(m, n)")
    m, n = scores.shape
    a_true = as_int_array(a_true, "a_true", "(m,)")
    if a_true.shape[0] != m:
        raise InputError(
            f"a_true must have shape (m,) = ({m},) to match scores; got shape {shape_str(a_true.shape)}"
        )
    zt = alignment_to_indicator(a_true, n)
    if (zt.sum(axis=0) > 1).any():
        raise InputError("a_true aligns two source items to the same target; expected a one-to-one alignment")
    w = _check_weight(weight)
    aug = scores + w * (1.0 - 2.0 * zt)
    return AlignmentAugmentation(aug, w * float(zt.sum()))
