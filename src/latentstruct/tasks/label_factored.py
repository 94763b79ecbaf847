"""The batch form of the *label-factored* capability (DISTRO, Srikumar & Manning 2014).

A label-factored task splits each example into parts; a part with m labels is scored through
the tensor product of its labels' vectors (columns of the label matrix A, d × L) with the
part's input features (Eq. 3).  Tasks describe every example of a corpus at once so that a
learner can score and decode a whole mini-batch with a few matrix products and one compiled
decoder call, never touching the task's features itself:

* :meth:`label_factored_batch(X)` returns a :class:`LabelFactoredBatch`: the stacked input
  rows of every atomic ("emission") part, the example boundaries, and which part types the
  task has (``part_arity``).  A multiclass task has one emission part per example and nothing
  else; a first-order chain has T emission parts, T − 1 transitions and a start and an end
  part per sentence.
* :meth:`argmax_from_part_scores_batch(batch, unary, transition, start, end, Y=None)` decodes
  every example exactly from part scores (unary = R W_E A, transition = Aᵀ W_T A, start /
  end = vᵀ A), Hamming-loss-augmented against the concatenated gold labels ``Y`` when given.

A part type absent from ``part_arity`` has no parameters: the learner passes ``None`` for its
scores and the task ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import scipy.sparse as sp

from ..exceptions import InputError

__all__ = ["LabelFactoredBatch", "check_unary", "gold_labels"]


@dataclass(frozen=True)
class LabelFactoredBatch:
    """Every example of a corpus as DISTRO sees it.

    rows : scipy.sparse.csr_matrix (N, n_attributes), float64
        Input features φ_p of the N atomic parts, example after example.
    offsets : int64 (n_examples + 1,)
        Example s owns rows ``offsets[s]:offsets[s+1]``.
    n_labels : int
        L, the number of labels (columns of A).
    part_arity : mapping part type -> number of labels
        ``{"emission": 1}`` for a multiclass task; a first-order chain adds
        ``"transition": 2, "start": 1, "end": 1``.
    """

    rows: sp.csr_matrix
    offsets: np.ndarray
    n_labels: int
    part_arity: Mapping[str, int]

    @property
    def n_examples(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def has_transitions(self) -> bool:
        return "transition" in self.part_arity

    def example_rows(self, indices) -> tuple[sp.csr_matrix, np.ndarray]:
        """(rows, offsets) of the examples ``indices`` (in that order), stacked."""
        indices = np.asarray(indices, dtype=np.int64)
        starts, stops = self.offsets[indices], self.offsets[indices + 1]
        lengths = stops - starts
        offsets = np.zeros(indices.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if indices.size == 0:
            return self.rows[:0], offsets
        take = np.arange(offsets[-1], dtype=np.int64) + np.repeat(starts - offsets[:-1], lengths)
        return self.rows[take], offsets


def check_unary(unary, n_rows: int, n_labels: int) -> np.ndarray:
    """``unary`` as float64 (n_rows, n_labels), or an InputError naming the expected shape."""
    unary = np.asarray(unary, dtype=np.float64)
    if unary.shape != (n_rows, n_labels):
        raise InputError(f"unary must have shape (N, L) = ({n_rows}, {n_labels}); got {unary.shape}")
    return unary


def gold_labels(Y, n_rows: int, n_labels: int | None = None, *,
                allow_unseen: bool = True) -> np.ndarray:
    """Concatenated gold labels as int64 (n_rows,) (−1: a label left free, put there on purpose).

    With ``n_labels``, every id is checked to be an integer in ``0..n_labels-1`` (or −1 when
    ``allow_unseen``) before it can reach a kernel (``tasks.validation.check_label_ids``).
    """
    from .validation import check_label_ids

    if isinstance(Y, np.ndarray) and Y.ndim == 1:
        y = Y
    else:
        parts = [np.asarray(v).reshape(-1) for v in Y]
        y = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    if n_labels is not None:
        y = check_label_ids(y, int(n_labels), allow_unseen=allow_unseen)
    y = np.asarray(y).astype(np.int64, copy=False)
    if y.shape != (n_rows,):
        raise InputError(f"gold labels must cover the {n_rows} parts; got {y.shape[0]}")
    return y
