"""Chunks cut by cost (``latentstruct.parallel.schedule``): balanced bounds for given costs,
the per-item cost memory a fit keeps between passes, and passes that are re-cut by measured
times and still give the serial results on every backend.

No assertion here depends on a clock: measured times are replaced by a fixed cost per item
where the bounds are checked, and only values are compared where real times are used.
"""

from __future__ import annotations

import itertools
import sys

import cloudpickle
import numpy as np
import pytest
from joblib import parallel_config

from latentstruct import parallel
from latentstruct.parallel import schedule as parallel_schedule
from latentstruct.parallel import transport
from latentstruct.parallel import chunk_bounds, fit_session, parallel_chunks, rows, shared
from latentstruct.parallel.schedule import CostMemory, balanced_bounds, timed_call

cloudpickle.register_pickle_by_value(sys.modules[__name__])


def covers(bounds, n):
    return (bounds[0][0] == 0 and bounds[-1][1] == n and all(b > a for a, b in bounds)
            and all(x[1] == y[0] for x, y in itertools.pairwise(bounds)))


def chunk_costs(costs, bounds):
    return [float(np.sum(costs[a:b])) for a, b in bounds]


# ----------------------------------------------------------------------- balanced bounds
def test_balanced_bounds_split_the_cost_not_the_count():
    costs = np.array([10.0] + [1.0] * 10)
    assert balanced_bounds(costs, 2) == [(0, 1), (1, 11)]
    costs = np.array([1.0] * 30 + [5.0] * 10)  # the last quarter holds 5/8 of the cost
    got = balanced_bounds(costs, 2)
    assert covers(got, 40) and got == [(0, 32), (32, 40)]
    assert chunk_costs(costs, got) == [40.0, 40.0]  # against [20, 60] by count


@pytest.mark.parametrize("n,k", [(10, 3), (5, 8), (1, 1), (230, 50), (7, 7), (100, 2)])
def test_balanced_bounds_are_contiguous_and_non_empty(n, k):
    rng = np.random.default_rng(n * 100 + k)
    for costs in (rng.exponential(size=n), np.ones(n), np.r_[np.zeros(n - 1), 1.0],
                  np.r_[100.0, np.zeros(n - 1)]):
        got = balanced_bounds(costs, k)
        assert covers(got, n) and len(got) == min(n, k)


def test_balanced_bounds_of_equal_costs_are_the_count_split():
    for n, k in [(10, 3), (300, 2), (301, 4), (50, 50)]:
        assert balanced_bounds(np.ones(n), k) == chunk_bounds(n, k)


def test_balanced_bounds_without_usable_costs_split_by_count():
    assert balanced_bounds(np.zeros(9), 3) == chunk_bounds(9, 3)
    assert balanced_bounds(np.array([1.0, np.nan, 1.0, 1.0]), 2) == chunk_bounds(4, 2)
    assert balanced_bounds(np.array([]), 2) == []


def test_balanced_bounds_minimise_the_costliest_chunk_on_random_costs():
    """Each boundary is placed where the running total is closest to its share: the
    costliest chunk is within one item of the ideal share."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        costs = rng.lognormal(sigma=1.0, size=300)
        for k in (2, 3, 10):
            got = chunk_costs(costs, balanced_bounds(costs, k))
            assert max(got) <= costs.sum() / k + costs.max()
            assert max(got) <= max(chunk_costs(costs, chunk_bounds(300, k))) + costs.max()


# --------------------------------------------------------------------------- timed calls
def _squares(a, b, offset):
    return [k * k + offset for k in range(a, b)]


def test_timed_call_gives_the_kernels_list_and_times_its_sub_ranges():
    value, times = timed_call(_squares, 5, 105, (3,))
    assert value == _squares(5, 105, 3)
    assert len(times) == parallel_schedule.PROBES
    assert [(s, t) for s, t, _, _, _ in times] == [(5 + a, 5 + b) for a, b in
                                                    chunk_bounds(100, parallel_schedule.PROBES)]
    assert all(wall >= 0 and cpu >= 0 for _, _, _, wall, cpu in times)
    value, times = timed_call(_squares, 0, 3, (0,))  # fewer items than probes
    assert value == [0, 1, 4] and [t[:2] for t in times] == [(0, 1), (1, 2), (2, 3)]


# ---------------------------------------------------------------------------- the memory
def fake_times(costs, bounds):
    """timed_call's report for ``bounds`` when item k costs costs[k] seconds."""
    out = []
    for a, b in bounds:
        out.append([(a + s, a + t, 0.0, 2.0 * float(np.sum(costs[a + s:a + t])),
                     float(np.sum(costs[a + s:a + t])))  # wall: twice the CPU time (load)
                    for s, t in chunk_bounds(b - a, parallel_schedule.PROBES)])
    return out


def test_the_memory_recuts_a_pass_by_the_costs_it_measured():
    costs = np.r_[np.full(100, 4.0), np.ones(200)]  # the first third holds 2/3 of the work
    memory, key = CostMemory(), ("kernel", "X", 300)
    first = memory.bounds(key, 300, 2)
    assert first == [(0, 150), (150, 300)]  # nothing measured yet: by count
    bounds = first
    for _ in range(4):
        memory.record(key, 300, bounds, fake_times(costs, bounds))
        bounds = memory.bounds(key, 300, 2)
    load = chunk_costs(costs, bounds)
    assert max(load) / (sum(load) / 2) < 1.05  # was 550 / 300 by count
    assert bounds[0][1] < 100
    # another kind of pass, or another size, starts by count again
    assert memory.bounds(("kernel", "Y", 300), 300, 2) == first
    assert memory.bounds(key, 299, 2) == chunk_bounds(299, 2)
    assert memory.bounds(None, 300, 2) == first


def test_the_memory_keeps_a_cut_that_is_nearly_balanced():
    """Moving a boundary moves examples to a worker without their cached state: a cut
    within REBALANCE_GAIN of the balanced one is kept."""
    costs = np.ones(200)
    memory, key = CostMemory(), "k"
    nearly = [(0, 101), (101, 200)]
    memory.record(key, 200, nearly, fake_times(costs, nearly))
    assert memory.bounds(key, 200, 2) == nearly
    off = [(0, 120), (120, 200)]
    memory.record(key, 200, off, fake_times(costs, off))
    assert memory.bounds(key, 200, 2) == [(0, 100), (100, 200)]


def test_an_untimed_chunk_teaches_the_memory_nothing():
    memory = CostMemory()
    memory.record("k", 10, [(0, 5), (5, 10)], [None, [(5, 10, 0.0, 1.0, 1.0)]])
    assert memory.estimate("k") is None


# ------------------------------------------------------------------ passes of a fit
def _uneven(a, b, table, w, seeds):
    """Per item: a value from the shared table, the pass's weight and the item's own seed."""
    return [(k, float(table[k] * w + seeds[k])) for k in range(a, b)]


def test_a_fit_recuts_its_passes_by_cost(monkeypatch):
    """On threads, with item k costing ``cost[k]`` (a fixed report in place of the clock):
    the first pass is cut by count, the later ones so that both chunks cost the same, and
    every pass gives the serial list."""
    n = 120
    cost = np.r_[np.full(40, 5.0), np.ones(80)]

    def fake_timed(fn, a, b, args, **kwargs):  # kwargs: probes
        return fn(a, b, *args), fake_times(cost, [(a, b)])[0]

    monkeypatch.setattr(transport, "timed_call", fake_timed)
    table = np.arange(float(n))
    with parallel.pass_log() as log, fit_session():
        with shared(table=table) as data:
            for p in range(4):
                seeds = np.arange(n) * (p + 1)
                got = parallel_chunks(_uneven, n, 2, args=(data["table"], 0.5, rows(seeds)))
                assert got == _uneven(0, n, table, 0.5, seeds)
    cuts = [[(c["start"], c["stop"]) for c in e["chunks"]] for e in log]
    assert cuts[0] == [(0, 60), (60, 120)]
    for cut in cuts[2:]:
        load = chunk_costs(cost, cut)
        assert abs(load[0] - load[1]) <= 5.0  # within one item; by count: 220 against 60
    assert cuts[-1][0][1] < 40


@pytest.mark.slow
def test_passes_recut_by_real_times_give_the_serial_results(backend):
    """The real clock on each backend: whatever the cut, the list is the serial one, in
    example order, and the pass log's chunks cover the items once."""
    n = 90
    table = np.linspace(0.0, 1.0, n)
    with parallel_config(backend=backend, n_jobs=2), parallel.pass_log() as log, \
            fit_session():
        with shared(table=table) as data:
            for p in range(4):
                seeds = np.arange(n) + 7 * p
                got = parallel_chunks(_slow_uneven, n, None,
                                      args=(data["table"], float(p), rows(seeds)))
                assert got == _slow_uneven(0, n, table, float(p), seeds)
    for entry in log:
        cut = [(c["start"], c["stop"]) for c in entry["chunks"]]
        assert covers(cut, n) and len(cut) == 2
        assert all(c["busy"] >= 0 and c["ended"] >= c["began"] for c in entry["chunks"])


def _slow_uneven(a, b, table, w, seeds):
    """Items 0..29 take more work than the rest."""
    out = []
    for k in range(a, b):
        x = 0.0
        for _ in range(2000 if k < 30 else 100):
            x += table[k] * 1e-9
        out.append((k, float(table[k] * w + seeds[k]) + x * 0.0))
    return out


def test_a_one_off_pass_is_cut_by_count():
    """A pass over no shared part (a one-off decode) has no kind to remember."""
    with parallel.pass_log() as log, fit_session():
        for _ in range(2):
            parallel_chunks(_squares, 50, 2, args=(1,))
    assert [[(c["start"], c["stop"]) for c in e["chunks"]] for e in log] == \
        [[(0, 25), (25, 50)]] * 2


def _fails_at(a, b, bad):
    if a <= bad < b:
        raise ValueError(f"item {bad} failed")
    return list(range(a, b))


@pytest.mark.slow
@pytest.mark.parametrize("where", ["threading", "loky"])
def test_an_error_in_a_pooled_pass_reaches_the_caller(where):
    """A pooled loky pass goes to the executor directly: a kernel's error still surfaces,
    and the pool serves the next pass."""
    with parallel_config(backend=where, n_jobs=2), fit_session():
        with pytest.raises(ValueError, match="item 7 failed"):
            parallel_chunks(_fails_at, 20, None, args=(7,))
        assert parallel_chunks(_fails_at, 20, None, args=(-1,)) == list(range(20))
