"""Home workers: every example of a shared block is decoded by the same worker process in
every pass of a fit.

A worker keeps what it builds for an example (an MSRP pair's HiGHS model: ~1.4 ms to build,
more than the ~0.3 ms decode that reuses it), so an example decoded by one process in one
pass and by another in the next is built twice.  LCLR's passes run over X and over its
positive and negative subsets; cut each on its own (by count, or by each kind's costs), and
chunk k of the negatives holds other pairs than chunk k of X.  Measured on all 3,261 MSRP
training pairs with two loky workers: the passes that met new pairs took 1.2-1.6x the
serial time instead of 0.5x, and the workers' kernel time summed to 1.41x the serial
inference.

So a block's examples get *homes*: the base sequence (``X``) is cut into one contiguous
range per worker, and a part declared as a subset of it (``subset(X_neg, of="X",
at=neg_idx)``) is cut where its items cross those ranges, so chunk k of any pass holds only
examples of range k and goes to worker k (a Dask actor, or a loky process of its own:
:mod:`latentstruct.parallel.loky`).  The ranges balance the examples' *total* measured cost
over the fit's passes (each pass adds the CPU time of its sub-ranges, spread over their
items), and move only when that gains more than ``REBALANCE_GAIN`` (a moved example is
built again).  With more chunks than workers (progress bars), each range is cut into
several chunks of the same worker.  As with every cut, the results never depend on it.
"""

from __future__ import annotations

import numpy as np

from .schedule import REBALANCE_GAIN, balanced_bounds, chunk_bounds, slowest_share

__all__ = ["HomeMemory", "HomePlan", "Subset", "subset"]


class Subset:
    """A part of a shared block that holds items of another part (its base) at the base
    positions ``at`` (strictly increasing): see :func:`subset`."""

    __slots__ = ("at", "of", "value")

    def __init__(self, value, of: str, at):
        at = np.asarray(at, dtype=np.int64).reshape(-1)
        if len(value) != at.shape[0]:
            raise ValueError(f"subset of {of!r}: {len(value)} items but {at.shape[0]} "
                             "positions")
        if at.size > 1 and np.any(np.diff(at) <= 0):
            raise ValueError(f"subset of {of!r}: positions must strictly increase")
        self.value, self.of, self.at = value, of, at


def subset(value, *, of: str, at) -> Subset:
    """Declare a part of :func:`~latentstruct.parallel.shared` as the items of part ``of``
    at positions ``at``: ``shared(X=X, neg=subset(X_neg, of="X", at=neg_idx))``.  Passes
    over either then send each example to the same worker (its home)."""
    return Subset(value, of, at)


class HomePlan:
    """How one pass is cut: ``bounds`` in the pass's own item positions, and for each chunk
    the worker (0 .. workers-1) it must run on; ``at`` maps the pass's items to base
    positions (None when the pass is over the base itself)."""

    __slots__ = ("at", "bounds", "key", "n_base", "worker")

    def __init__(self, key, bounds, worker, at, n_base: int):
        self.key, self.bounds, self.worker, self.at = key, bounds, worker, at
        self.n_base = n_base


class HomeMemory:
    """The home ranges of the bases of a fit's (or a block's) shared parts, and the total
    measured cost of each base item, by (block, base, number of workers)."""

    def __init__(self):
        self._cost: dict = {}  # key -> total CPU seconds per base item
        self._ranges: dict = {}  # key -> [(lo, hi)] per worker

    def plan(self, key, n_base: int, at, workers: int, n_chunks: int) -> HomePlan:
        """Cut a pass over the base (``at`` None) or over the subset at base positions
        ``at`` into chunks of home ranges, at least one per worker that has items."""
        ranges = self._home_ranges(key, n_base, workers)
        per_worker = max(1, -(-n_chunks // workers))  # ceil: sub-chunks per worker
        bounds, owner = [], []
        for k, (lo, hi) in enumerate(ranges):
            a, b = (lo, hi) if at is None else (int(np.searchsorted(at, lo)),
                                                int(np.searchsorted(at, hi)))
            for s, t in chunk_bounds(b - a, per_worker):
                bounds.append((a + s, a + t))
                owner.append(k)
        return HomePlan(key, bounds, owner, at, n_base)

    def _home_ranges(self, key, n_base: int, workers: int) -> list[tuple[int, int]]:
        cost = self._cost.get(key)
        old = self._ranges.get(key)
        if cost is None or cost.sum() <= 0:
            new = chunk_bounds(n_base, workers)
        else:
            new = balanced_bounds(cost, workers)
        if old is not None and len(old) == len(new) and old[-1][1] == n_base:
            # keep the homes unless moving them is clearly better: a moved example is
            # built again by its new worker
            if cost is None or slowest_share(cost, old) <= slowest_share(cost, new) + REBALANCE_GAIN:
                return old
        self._ranges[key] = new
        return new

    def record(self, plan: HomePlan, times) -> None:
        """Add a pass's measured costs (each chunk's sub-range times, as
        :func:`~latentstruct.parallel.schedule.timed_call` returns them) to its base
        items."""
        if any(t is None for t in times):
            return
        cost = self._cost.get(plan.key)
        if cost is None or cost.shape[0] != plan.n_base:
            cost = self._cost[plan.key] = np.zeros(plan.n_base)
        for chunk in times:
            for s, t, _, _, cpu in chunk:
                if t <= s:
                    continue
                where = np.arange(s, t) if plan.at is None else plan.at[s:t]
                cost[where] += max(cpu, 0.0) / (t - s)
