"""The data DISTRO's loops run on: the training examples as a label-factored batch (or a
sample of one) with their gold labels, the unary part scores that travel to the decoding
workers, and the chunk kernel that decodes them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["DistroData", "PartScores", "SubBatch", "argmax_chunk", "part_indices"]


class PartScores:
    """The unary part scores (and gold labels, for loss-augmented decoding) of some
    examples, stacked; ``[a:b]`` is examples a..b-1 as views, so that ``parallel.rows``
    hands each chunk only its own parts."""

    __slots__ = ("offsets", "unary", "y")

    def __init__(self, offsets, unary, y):
        self.offsets, self.unary, self.y = offsets, unary, y

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def __getitem__(self, key):
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise IndexError(f"part scores are cut by examples [a:b], got {key!r}")
        a, b, _ = key.indices(len(self))
        lo, hi = int(self.offsets[a]), int(self.offsets[b])
        return PartScores(self.offsets[a:b + 1] - lo, self.unary[lo:hi],
                           None if self.y is None else self.y[lo:hi])


def argmax_chunk(a, b, structure, scores, transition, start, end) -> list:
    """The (loss-augmented) best labelling of examples a..b-1, concatenated, as a one-item
    list (module level, so that process and cluster workers unpickle it by name)."""
    s = scores[a:b]
    z = structure.argmax_from_part_scores_batch(s.offsets, s.unary, transition, start, end, Y=s.y)
    return [np.asarray(z, dtype=np.int64)]


def part_indices(all_offsets, idx, offsets) -> np.ndarray:
    """Indices of the parts of examples ``idx`` (whose stacked ``offsets`` are given)."""
    n = int(offsets[-1])
    shift = np.repeat(all_offsets[idx] - offsets[:-1], np.diff(offsets))
    return np.arange(n, dtype=np.int64) + shift


class DistroData(NamedTuple):
    """The training data as the learner's loops see it: a LabelFactoredBatch (or a sample of
    one), the concatenated gold labels of its parts, and the number of examples."""

    batch: object
    y: np.ndarray
    n: int


class SubBatch:
    """A sample of a LabelFactoredBatch (rows and offsets already cut out)."""

    def __init__(self, rows, offsets):
        self.rows, self.offsets = rows, offsets

    @property
    def n_examples(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def example_rows(self, indices):
        from ...tasks.contracts import LabelFactoredBatch

        return LabelFactoredBatch.example_rows(self, indices)
