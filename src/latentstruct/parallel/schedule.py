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

import contextvars
import itertools
import time
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np
from joblib import Parallel

from ..data.progress import progress_bar, progress_enabled

__all__ = ["PROBES", "CostMemory", "balanced_bounds", "chunk_bounds", "pass_log", "rows", "timed_call"]

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


def timed_call(fn: Callable[..., list], a: int, b: int, args, *,
               probes: int = PROBES) -> tuple[list, list]:
    """``fn`` over ``a .. b-1`` in up to ``probes`` contiguous sub-ranges: (the
    concatenated list, [(start, stop, began, wall, cpu)] per sub-range).  ``began`` and
    ``wall`` come from ``time.perf_counter`` (the system's monotonic clock: comparable
    between processes of one machine; the benchmark's per-chunk cost uses them), ``cpu``
    from ``time.thread_time``: the cost estimates use it, so that a worker preempted by
    other load does not make its examples look costly."""
    out: list = []
    times = []
    for s, t in chunk_bounds(b - a, probes):
        c0, t0 = time.thread_time(), time.perf_counter()
        out.extend(fn(a + s, a + t, *args))
        times.append((a + s, a + t, t0, time.perf_counter() - t0, time.thread_time() - c0))
    return out, times


class Pools:
    """Entered ``joblib.Parallel`` objects by backend and settings: one pool serves
    every pass of a fit (Ray's and multiprocessing's pools otherwise start their processes
    anew for each call, seconds each, and two live Ray pools can wait on each other's CPUs).

    Pools never memory-map arguments (``max_nbytes=None``): joblib keys its memory-mapped
    copies of arrays over 1 MB by the array object, so in a pool reused across passes a
    weight vector changed in place since the previous pass reached the workers stale
    (wrong argmaxes, caught by the learners' inference check; a regression test in
    tests/test_parallel_backends.py)."""

    def __init__(self):
        self._open: dict = {}

    def get(self, backend, jobs: int, prefer: str, return_as: str) -> Parallel:
        key = (type(backend).__name__, jobs, prefer, return_as)
        if key not in self._open:
            pool = Parallel(n_jobs=jobs, prefer=prefer, return_as=return_as,
                            max_nbytes=None, batch_size=1)
            pool.__enter__()
            self._open[key] = pool
        return self._open[key]

    def close(self) -> None:
        pools, self._open = list(self._open.values()), {}
        for pool in pools:
            pool.__exit__(None, None, None)


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
            for s, t, _, _, cpu in chunk:
                measured[s:t] = max(cpu, 0.0) / (t - s)
        old = self._costs.get(key)
        self._costs[key] = measured if old is None or len(old) != n_items else (old + measured) / 2
        self._bounds[key] = list(bounds)

    def estimate(self, key):
        """The per-item cost estimate of ``key`` (None before its first timed pass)."""
        return self._costs.get(key)


class Rows:
    """``rows(seq)``: chunk ``(a, b)`` receives only ``seq[a:b]``."""

    __slots__ = ("seq",)

    def __init__(self, seq):
        self.seq = seq


class _Window:
    """Rows ``start .. start+len(items)-1`` of a sequence, indexed by their positions in the
    whole sequence (so that a kernel's ``X[a:b]`` and ``X[k]`` read the same either way)."""

    __slots__ = ("items", "start")

    def __init__(self, items, start: int):
        self.items, self.start = items, start

    def __getitem__(self, key):
        if isinstance(key, slice):
            if key.step not in (None, 1) or key.start is None or key.stop is None:
                raise IndexError(f"a chunk's rows take [a:b] with explicit bounds, got {key}")
            return self.items[key.start - self.start:key.stop - self.start]
        return self.items[int(key) - self.start]

    def __len__(self):
        return len(self.items)


def row_window(items, start: int) -> _Window:
    """The rows ``start .. start+len(items)-1`` a chunk receives, indexed by their global
    positions (what a :func:`rows` argument becomes on its way to a worker)."""
    return _Window(items, start)


def rows(seq) -> Rows:
    """Mark ``seq`` (one entry per item) so that chunk ``(a, b)`` receives only its rows;
    the kernel still indexes it by global position (``seq[a:b]``, ``seq[k]``)."""
    return Rows(seq)


# --------------------------------------------------------------------------------------
# gathering a pass, and the pass log


def gather(parts, bounds, desc: str) -> list:
    """The chunks' lists (in order) as one list, under a bar when bars are on."""
    if progress_enabled():
        return with_progress(parts, bounds, desc)
    out: list = []
    for part in parts:
        out.extend(part)
    return out


def with_progress(parts, bounds, desc: str) -> list:
    """Gather ``parts`` (the chunks' results, in order) under a bar (shown after 2 s).
    Passes run in more, smaller chunks then; a backend that cannot stream results (Ray,
    multiprocessing) moves the bar once, at the end.  Learners' results never depend on
    the chunking (``n_jobs`` must not change a model, so kernels are per example; seeded
    tie-breaks carry one seed per example)."""
    n_items = bounds[-1][1]
    out: list = []
    with progress_bar(n_items, desc, unit="ex") as bar:
        for (a, b), p in zip(bounds, parts):
            out.extend(p)
            bar.update(b - a)
    return out


def chunk_record(bounds, r) -> dict:
    """A chunk's entry in the pass log, from its bounds and its ``ChunkResult``."""
    busy, cpu = sum(t[3] for t in r.times), sum(t[4] for t in r.times)
    return {"start": bounds[0], "stop": bounds[1], "worker": r.worker, "busy": busy,
            "began": r.times[0][2], "ended": r.times[-1][2] + r.times[-1][3],
            "cpu": cpu, "setup": r.setup}


_PASS_LOG: contextvars.ContextVar = contextvars.ContextVar("latentstruct_pass_log",
                                                           default=None)


@contextmanager
def pass_log(count_bytes: bool = True):
    """Record every :func:`parallel_chunks` pass run inside the block: a list of dicts with
    ``fn`` (the kernel's name), ``items``, ``jobs``, ``seconds`` (wall time of the pass),
    ``arg_bytes`` (pickled size of the per-pass arguments: everything but shared parts and
    rows, i.e. what a process or cluster worker receives each pass, once per chunk or
    worker) and ``result_bytes`` (pickled size of the results sent back).  A pass that ran
    on workers also has ``began`` and ``ended`` (the driver's ``time.perf_counter()`` at
    its start and when its last result was in) and ``chunks``: per chunk ``start``,
    ``stop``, ``worker`` (its process or thread id), ``busy`` (seconds in the kernel),
    ``cpu`` (its thread's CPU seconds there), ``began`` and ``ended`` (the worker's
    ``perf_counter``, the same clock on one machine) and ``setup`` (seconds loading shared
    data first).  For measuring
    (benchmarks/scaling.py's cost model); the byte counts cost a pickling per pass, and
    ``count_bytes=False`` leaves them out (0) for timing a fit under the log."""
    log: list = []
    token = _PASS_LOG.set((log, count_bytes))
    try:
        yield log
    finally:
        _PASS_LOG.reset(token)


def logging() -> bool:
    """Whether a :func:`pass_log` block is open."""
    return _PASS_LOG.get() is not None


def log_pass(fn, n_items, jobs, start, record, size, small, out) -> None:
    """Append a pass to the open log: ``size(obj)`` is an object's pickled size (the seam's
    pickling), ``small`` the per-pass arguments, ``out`` the results."""
    seconds = time.perf_counter() - start
    log, count_bytes = _PASS_LOG.get()
    log.append({"fn": getattr(fn, "__name__", str(fn)), "items": n_items, "jobs": jobs,
                "seconds": seconds, "arg_bytes": size(small) if count_bytes else 0,
                "result_bytes": size(out) if count_bytes else 0, **record})
