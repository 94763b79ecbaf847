"""Home workers: each example of a shared block is decoded by one worker process in every
pass, over the block's base part and over the subsets declared of it."""

from __future__ import annotations

import os
import sys

import cloudpickle
import numpy as np
import pytest
from joblib import parallel_config

from latentstruct.parallel import fit_session, parallel_chunks, shared, subset
from latentstruct.parallel.homes import HomeMemory, Subset

cloudpickle.register_pickle_by_value(sys.modules[__name__])


class _Memo:
    """An example that caches on itself, as a graph pair keeps its HiGHS model."""

    def __init__(self, k):
        self.k, self.built = k, None


def _memo_chunk(a, b, items):
    """Per item: (its id, the workers that had cached on it before, this worker's pid)."""
    out = []
    for k in range(a, b):
        before = items[k].built or frozenset()
        items[k].built = before | {os.getpid()}
        out.append((items[k].k, before, os.getpid()))
    return out


# ------------------------------------------------------------------------------ the plan

def test_subset_chunks_lie_in_their_workers_home_ranges():
    homes = HomeMemory()
    at = np.array([0, 3, 4, 9, 10, 11, 15, 19])
    base = homes.plan("k", 20, None, 2, 2)
    assert base.bounds == [(0, 10), (10, 20)] and base.worker == [0, 1]
    sub = homes.plan("k", 20, at, 2, 2)
    assert sub.bounds == [(0, 4), (4, 8)] and sub.worker == [0, 1]
    # more chunks than workers (progress bars): each range cut further, same workers
    many = homes.plan("k", 20, at, 2, 6)
    assert [w for w in many.worker] == [0, 0, 0, 1, 1, 1]
    assert many.bounds[0][0] == 0 and many.bounds[-1][1] == 8
    assert all(b1 == a2 for (_, b1), (a2, _) in zip(many.bounds, many.bounds[1:]))
    assert max(b for (_, b), w in zip(many.bounds, many.worker) if w == 0) == 4


def _uniform_times(bounds, cost):
    return [[(s, s + 1, 0.0, 0.0, cost(s)) for s in range(a, b)] for a, b in bounds]


def test_home_ranges_follow_the_total_cost_and_stay_put_for_small_gains():
    homes = HomeMemory()
    plan = homes.plan("k", 100, None, 2, 2)
    assert plan.bounds == [(0, 50), (50, 100)]
    homes.record(plan, _uniform_times(plan.bounds, lambda s: 1.0))
    # item 0 costs 1.5 more: the balanced cut would move to 49, a 0.5 % gain: kept, since
    # a moved example is built again by its new worker
    homes.record(plan, _uniform_times(plan.bounds, lambda s: 1.5 if s == 0 else 0.0))
    assert homes.plan("k", 100, None, 2, 2).bounds == [(0, 50), (50, 100)]
    # items 0-9 cost 50 more each (the passes' total): the homes move
    homes.record(plan, _uniform_times(plan.bounds, lambda s: 50.0 if s < 10 else 0.0))
    moved = homes.plan("k", 100, None, 2, 2).bounds
    assert moved[0][1] < 20 and moved[1] == (moved[0][1], 100)


def test_a_subset_must_name_a_base_part_and_increasing_positions():
    with pytest.raises(ValueError, match="strictly increase"):
        Subset([1, 2], "X", [3, 1])
    with pytest.raises(ValueError, match="2 items but 3 positions"):
        Subset([1, 2], "X", [0, 1, 2])
    with pytest.raises(ValueError, match="not a \\(non-subset\\) part"):
        with shared(Y=[1, 2, 3], sub=subset([1], of="X", at=[0])):
            pass


# -------------------------------------------------------------------- in real workers

@pytest.fixture(params=["loky", "dask"])
def process_backend(request):
    if request.param == "dask":
        request.getfixturevalue("dask_client")
    return request.param


@pytest.mark.slow
def test_every_example_is_decoded_by_one_worker_over_the_base_and_its_subsets(
        process_backend, monkeypatch):
    """Passes alternate over X, its even and its odd items (as LCLR alternates over X, its
    positives and its negatives): each example is only ever visited by one process, so
    nothing a worker caches on it is built twice.  (The measured costs are not recorded
    here, so the home ranges stay where the first pass put them; moving them is the unit
    test's.)"""
    monkeypatch.setattr(HomeMemory, "record", lambda self, plan, times: None)
    X = [_Memo(k) for k in range(40)]
    evens, odds = np.arange(0, 40, 2), np.arange(1, 40, 2)
    home: dict = {}
    with parallel_config(backend=process_backend, n_jobs=2), fit_session():
        with shared(X=X, even=subset([X[i] for i in evens], of="X", at=evens),
                    odd=subset([X[i] for i in odds], of="X", at=odds)) as data:
            for p in range(9):
                name, n = (("X", 40), ("even", 20), ("odd", 20))[p % 3]
                for k, before, pid in parallel_chunks(_memo_chunk, n, None,
                                                      args=(data[name],)):
                    assert home.setdefault(k, pid) == pid, (p, name, k)
                    assert before in (frozenset(), frozenset({pid}))
    assert len(set(home.values())) == 2  # both workers have examples
    assert all(x.built is None for x in X)  # the caller's objects are untouched
