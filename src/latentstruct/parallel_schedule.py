"""How :func:`latentstruct.parallel.parallel_chunks` cuts a pass into chunks: by each
example's measured cost, not by count.

Examples of one task can differ in inference cost by an order of magnitude (a graph-
alignment ILP grows with both sentences), so equal counts leave one worker idle while the
other finishes.  Passes of a fit repeat over the same examples, so the cost of each one in
the previous pass is a good estimate for the next:

* a worker runs its chunk ``(a, b)`` as a few contiguous sub-ranges (:data:`PROBES`) and
  times each (:func:`timed_call`); the driver gets the times back with the results;
* :class:`CostMemory` keeps, per kind of pass (the kernel, the shared parts it reads and
  the number of items), a cost per item: the measured time of its sub-range spread over
  its items, averaged with the previous estimate (a boundary that moved refines it);
* the next pass over the same items is cut into contiguous chunks of equal estimated cost
  (:func:`balanced_bounds`); the first pass, or one without a memory, is cut by count.

Only the chunking depends on the times: results are per example and reassembled in
example order, so a model never depends on them (tests check every backend against the
serial fit).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import numpy as np

__all__ = ["PROBES", "CostMemory", "balanced_bounds", "chunk_bounds", "timed_call"]

#: timed sub-ranges per chunk (a worker calls the kernel once per sub-range; learners'
#: kernels are per example, so this is the same as more, smaller chunks)
PROBES = 8

#: a pass is re-cut only when the estimated finishing time of its slowest chunk, with the
#: previous bounds, exceeds the balanced one by more than this share: moving a boundary
#: moves examples to a worker that may not have their cached state (an ILP model) yet
REBALANCE_GAIN = 0.02


def chunk_bounds(n_items: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n_items)`` into at most ``n_chunks`` contiguous, near-equal pieces."""
    n_chunks = max(1, min(n_chunks, n_items))
    edges = np.linspace(0, n_items, n_chunks + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges) if b > a]


def balanced_bounds(costs, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(len(costs))`` into at most ``n_chunks`` contiguous, non-empty pieces
    of near-equal total cost (each boundary where the running total is closest to its
    share).  Costs that are all zero, or not finite, give :func:`chunk_bounds`."""
    costs = np.asarray(costs, dtype=np.float64)
    n = len(costs)
    n_chunks = max(1, min(n_chunks, n))
    if n_chunks == 1:
        return [(0, n)] if n else []
    if not np.all(np.isfinite(costs)) or np.any(costs < 0) or costs.sum() <= 0:
        return chunk_bounds(n, n_chunks)
    cum = np.cumsum(costs)
    targets = cum[-1] * np.arange(1, n_chunks) / n_chunks
    i = np.searchsorted(cum, targets, side="left")  # first item whose running total >= target
    before = np.where(i > 0, cum[np.maximum(i - 1, 0)], 0.0)  # total of items < i
    edges = np.where(targets - before <= cum[i] - targets, i, i + 1)  # cut before or after i
    out, prev = [], 0
    for k, e in enumerate(edges):
        e = int(min(max(e, prev + 1), n - (n_chunks - 1 - k)))  # every piece non-empty
        out.append((prev, e))
        prev = e
    out.append((prev, n))
    return out


def slowest_share(costs, bounds) -> float:
    """The estimated cost of the costliest chunk of ``bounds``, as a share of the total."""
    cum = np.concatenate([[0.0], np.cumsum(costs)])
    total = cum[-1]
    return max(cum[b] - cum[a] for a, b in bounds) / total if total > 0 else 0.0


def timed_call(fn: Callable[..., list], a: int, b: int, args) -> tuple[list, list]:
    """``fn`` over ``a .. b-1`` in up to :data:`PROBES` contiguous sub-ranges: (the
    concatenated list, [(start, stop, started_at, seconds)] per sub-range), times from
    ``time.perf_counter`` (the system's monotonic clock: comparable between processes of
    one machine, which the benchmark's per-chunk cost uses)."""
    out: list = []
    times = []
    for s, t in chunk_bounds(b - a, PROBES):
        t0 = time.perf_counter()
        out.extend(fn(a + s, a + t, *args))
        times.append((a + s, a + t, t0, time.perf_counter() - t0))
    return out, times


class CostMemory:
    """Per-item cost estimates of the passes of one fit (or one ``shared`` block), by kind
    of pass; :meth:`bounds` cuts the next pass of a kind, :meth:`record` learns from it."""

    def __init__(self):
        self._costs: dict = {}  # key -> per-item seconds (float64 array)
        self._bounds: dict = {}  # key -> the bounds the last pass of that kind used

    def bounds(self, key, n_items: int, n_chunks: int) -> list[tuple[int, int]]:
        costs = self._costs.get(key) if key is not None else None
        if costs is None or len(costs) != n_items:
            return chunk_bounds(n_items, n_chunks)
        new = balanced_bounds(costs, n_chunks)
        old = self._bounds.get(key)
        if old is not None and len(old) == len(new) and old[-1][1] == n_items:
            # keep the previous cut unless the new one is clearly better (hysteresis)
            if slowest_share(costs, old) <= slowest_share(costs, new) + REBALANCE_GAIN:
                return old
        return new

    def record(self, key, n_items: int, bounds, times) -> None:
        """Learn from a pass cut at ``bounds``: ``times`` holds each chunk's
        :func:`timed_call` sub-range times (or None where a chunk was not timed)."""
        if key is None or any(t is None for t in times):
            return
        measured = np.zeros(n_items)
        for chunk in times:
            for s, t, _, seconds in chunk:
                measured[s:t] = max(seconds, 0.0) / (t - s)
        old = self._costs.get(key)
        self._costs[key] = measured if old is None or len(old) != n_items else (old + measured) / 2
        self._bounds[key] = list(bounds)

    def estimate(self, key):
        """The per-item cost estimate of ``key`` (None before its first timed pass)."""
        return self._costs.get(key)
