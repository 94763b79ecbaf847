"""The parallel seam (``latentstruct.parallel``) on every joblib backend.

* Learners honour a surrounding ``joblib.parallel_config``: under loky processes, a
  loopback Dask ``LocalCluster`` and a local Ray instance they learn the serial model
  (coef_ and objective curve to 1e-8) for StructuredSVM and LCLR.
* Data a fit keeps constant reaches the workers once per fit: what each pass submits holds
  no example, only references and the weight vector.
* Workers find a writable numba cache.

Dask and Ray come with the ``[distributed]`` extra; their tests skip where it is not
installed, and fail instead under ``CI=true``.  The servers listen on 127.0.0.1 only.
"""

from __future__ import annotations

import itertools
import os
import pickle
import sys
import warnings

import cloudpickle
import numpy as np
import pytest
from joblib import parallel_config

from latentstruct import parallel
from latentstruct.parallel import blocks, chunks, numba_cache, schedule, transport
from latentstruct.exceptions import ConfigError, ConvergenceWarning
from latentstruct.learners import LCLR, StructuredSVM
from latentstruct.parallel import (
    chunk_bounds,
    ensure_numba_cache,
    fit_session,
    parallel_chunks,
    rows,
    shared,
)
from latentstruct.tasks import ChunkTask
from latentstruct.testing import make_bag_problem

# Kernels defined here travel by value, so that worker processes need not import this file.
cloudpickle.register_pickle_by_value(sys.modules[__name__])



# ------------------------------------------------------------------------------- backends
@pytest.fixture(autouse=True)
def split_every_pass(monkeypatch):
    """The structural SVM decodes a pass of fewer than MIN_PARALLEL_EXAMPLES (512)
    examples in its own thread; these problems are smaller, so every pass goes to the
    backend here."""
    from latentstruct.learners.ssvm import ssvm as ssvm_module

    monkeypatch.setattr(ssvm_module, "MIN_PARALLEL_EXAMPLES", 1)


@pytest.fixture(params=["loky", "dask", "ray"])
def backend(request):
    """The name of a joblib backend with 2 workers, ready to use."""
    if request.param == "dask":
        request.getfixturevalue("dask_client")
    if request.param == "ray":
        request.getfixturevalue("ray_backend")
    return request.param


def fit_quietly(make, X, y):
    from latentstruct.exceptions import PerformanceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # online mode on processes, on purpose: the model must still be the serial one
        warnings.simplefilter("ignore", PerformanceWarning)
        return make().fit(X, y)


def assert_same_model(serial, other, curve="objective_curve_"):
    np.testing.assert_allclose(other.coef_, serial.coef_, rtol=0, atol=1e-8)
    a, b = np.asarray(getattr(serial, curve)), np.asarray(getattr(other, curve))
    assert a.shape == b.shape
    np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-8)
    assert other.n_iter_ == serial.n_iter_


# -------------------------------------------------------------------- learners per backend
def chunk_problem(path):
    task = ChunkTask(window=1, affix_length=2)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


@pytest.mark.slow
def test_structured_svm_learns_the_serial_model_on_each_backend(backend, tiny_chunk_file):
    task, X, Y = chunk_problem(tiny_chunk_file)
    make = lambda j: StructuredSVM(task, C=1.0, batch_size=2, max_iter=20, random_state=3,
                                   n_jobs=j)
    serial = fit_quietly(lambda: make(1), X, Y)
    with parallel_config(backend=backend, n_jobs=2):
        other = fit_quietly(lambda: make(None), X, Y)  # n_jobs=None: the configured 2
        predicted = other.predict(X)
    assert serial.n_iter_ >= 2
    assert_same_model(serial, other)
    for a, b in zip(serial.predict(X), predicted):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_online_mode_on_another_process_says_to_use_batch_mode(tiny_chunk_file):
    """Online mode ships w with every mini-batch: on process and cluster backends a pass per
    few examples costs more than it gains (CoNLL-2000 on Dask: ~90 s per iteration against
    ~4 s in batch mode), so the fit says so; threads and batch mode stay quiet."""
    from latentstruct.exceptions import PerformanceWarning

    task, X, Y = chunk_problem(tiny_chunk_file)
    assert len(X) > 2
    make = lambda mode: StructuredSVM(task, mode=mode, batch_size=2, max_iter=2, n_jobs=2)
    with parallel_config(backend="loky"):
        with pytest.warns(PerformanceWarning, match="mode='batch'"):
            make("online").fit(X, Y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PerformanceWarning)
            make("batch").fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        make("online").fit(X, Y)  # threads share memory: nothing is shipped


@pytest.mark.slow
def test_structured_svm_batch_mode_learns_the_serial_model_on_each_backend(backend,
                                                                         tiny_chunk_file):
    task, X, Y = chunk_problem(tiny_chunk_file)
    make = lambda j: StructuredSVM(task, C=1.0, mode="batch", max_iter=20, random_state=3,
                                   n_jobs=j)
    serial = fit_quietly(lambda: make(1), X, Y)
    with parallel_config(backend=backend, n_jobs=2):
        other = fit_quietly(lambda: make(None), X, Y)
    assert serial.n_iter_ >= 2
    assert_same_model(serial, other)


@pytest.mark.slow
def test_lclr_learns_the_serial_model_on_each_backend(backend):
    task, X, y = make_bag_problem(n_examples=60, bag_size=4, random_state=11)
    make = lambda j: LCLR(task, C=0.5, max_iter=6, random_state=2, n_jobs=j)
    serial = fit_quietly(lambda: make(1), X, y)
    with parallel_config(backend=backend):
        other = fit_quietly(lambda: make(2), X, y)
        decisions = other.decision_function(X)
    assert serial.n_iter_ >= 2
    assert_same_model(serial, other)
    assert serial.cache_size_curve_ == other.cache_size_curve_
    np.testing.assert_allclose(decisions, serial.decision_function(X), rtol=0, atol=1e-8)


@pytest.mark.slow
def test_lclr_on_transliteration_learns_the_serial_model_on_each_backend(backend):
    """CLDR English-Hebrew place names shipped with Babel: numba kernels in the workers, and
    ties broken at random with one seed per example (sent as rows, per pass)."""
    from latentstruct.tasks.translit import TransliterationTask

    task = TransliterationTask(lang="he", n_train=30, n_test=30, neg_ratio=0.2, seed=1)
    train = task.read(None, split="train")
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)
    make = lambda j: LCLR(task, C=0.1, max_iter=3, random_state=0, random_tie_break=True,
                          n_jobs=j)
    serial = fit_quietly(lambda: make(1), X, y)
    with parallel_config(backend=backend, n_jobs=2):
        other = fit_quietly(lambda: make(None), X, y)
    assert_same_model(serial, other)


# ------------------------------------------------------------------ what each pass sends
@pytest.fixture
def spy(monkeypatch):
    """Per pass handed to a pool (joblib's; for loky its executor directly, or the home
    workers' processes; for threads the kept thread pool): the
    backend, and the pickled size and arguments of every submitted chunk; and the paths
    of the shared-data files written."""
    calls = []
    real_map = chunks._map_calls

    def map_calls(pool, tasks, stream):
        calls.append({"backend": type(pool._backend).__name__,
                      "bytes": [len(cloudpickle.dumps(t)) for t in tasks],
                      "args": [t[1] for t in tasks]})
        return real_map(pool, tasks, stream)

    monkeypatch.setattr(chunks, "_map_calls", map_calls)
    real_affine = chunks.run_affine

    def run_affine(tasks, worker_of, n_workers, stream=False):
        # a pass over a block's examples with home workers: loky processes of their own
        calls.append({"backend": "LokyBackend",
                      "bytes": [len(cloudpickle.dumps(t)) for t in tasks],
                      "args": [t[1] for t in tasks]})
        return real_affine(tasks, worker_of, n_workers, stream)

    monkeypatch.setattr(chunks, "run_affine", run_affine)
    real_threads = chunks._threads_map

    def threads_map(tasks, jobs):
        # a threaded pass: the kept thread pool, nothing pickled (the size is what a
        # process pool would have had to send)
        calls.append({"backend": "ThreadingBackend",
                      "bytes": [len(cloudpickle.dumps(t)) for t in tasks],
                      "args": [t[1] for t in tasks]})
        return real_threads(tasks, jobs)

    monkeypatch.setattr(chunks, "_threads_map", threads_map)
    writes = []
    real_write = blocks.write_payload
    monkeypatch.setattr(blocks, "write_payload",
                        lambda path, payload: (writes.append(path), real_write(path, payload)))
    return calls, writes


@pytest.mark.slow
def test_a_pass_sends_the_weights_and_references_not_the_examples(spy):
    calls, writes = spy
    task, X, y = make_bag_problem(n_examples=400, bag_size=4, random_state=5)
    data_bytes = len(pickle.dumps(X))
    with parallel_config(backend="loky"):
        model = fit_quietly(lambda: LCLR(task, C=0.5, max_iter=6, n_jobs=2), X, y)
    serial = fit_quietly(lambda: LCLR(task, C=0.5, max_iter=6, n_jobs=1), X, y)
    assert_same_model(serial, model)
    assert model.n_iter_ >= 2 and len(calls) >= 3 * model.n_iter_
    assert {c["backend"] for c in calls} == {"LokyBackend"}
    # Every chunk of every pass, the TwoStage initialisation's included: a kernel, two
    # bounds, references and w (5 floats).
    assert max(max(c["bytes"]) for c in calls) < 2000 < data_bytes / 20
    examples = {id(x) for x in X}
    for c in calls:
        for args in c["args"]:
            assert not any(id(a) in examples or a is X for a in args)
    # once per fit: the loop's block, which the TwoStage initialisation decodes from too (so
    # the workers build each example's decoder once)
    assert len(writes) == 1


@pytest.mark.slow
def test_one_off_passes_send_each_chunk_its_own_rows(spy):
    calls, writes = spy
    task, X, y = make_bag_problem(n_examples=200, random_state=6)
    model = fit_quietly(lambda: LCLR(task, max_iter=3), X, y)
    with parallel_config(backend="loky"):
        model.set_params(n_jobs=2)
        decisions = model.decision_function(X)
    model.set_params(n_jobs=1)
    np.testing.assert_array_equal(decisions, model.decision_function(X))
    (call,) = calls
    whole = len(cloudpickle.dumps(X))
    # two chunks, each with its half of the rows (a closure over X would send all of it twice)
    assert len(call["bytes"]) == 2 and max(call["bytes"]) < 0.6 * whole
    assert sum(call["bytes"]) < 1.1 * whole
    assert len(writes) == 1  # the task, once


@pytest.mark.slow
def test_threads_stay_the_default_and_a_configured_backend_wins(spy):
    calls, writes = spy
    task, X, y = make_bag_problem(random_state=3)
    LCLR(task, max_iter=2, n_jobs=2).fit(X, y)
    assert {c["backend"] for c in calls} == {"ThreadingBackend"} and not writes
    calls.clear()
    with parallel_config(backend="loky"):
        LCLR(task, max_iter=2, n_jobs=2).fit(X, y)
    assert {c["backend"] for c in calls} == {"LokyBackend"} and writes
    calls.clear()
    with parallel_config(backend="loky", n_jobs=2):
        LCLR(task, max_iter=2, n_jobs=1).fit(X, y)  # an explicit n_jobs is used as given
    assert not calls


def test_decode_with_a_fit_block_sends_no_example(spy, tiny_chunk_file):
    """``_decode(..., data=block)``: the hook a batch-mode fit uses to share X and Y once."""
    calls, writes = spy
    task, X, Y = chunk_problem(tiny_chunk_file)
    model = fit_quietly(lambda: StructuredSVM(task, max_iter=3, n_jobs=1), X, Y)
    w = model.coef_
    expected = model._decode(X, w, Y)
    model.set_params(n_jobs=2)
    with parallel_config(backend="loky"), fit_session():
        with shared(structure=task.structure(), X=X, Y=Y) as data:
            for _ in range(3):
                got = model._decode(X, w, Y, data=data)
                assert [np.asarray(g).tolist() for g in got] == [np.asarray(e).tolist()
                                                                 for e in expected]
    assert len(calls) == 3 and len(writes) == 1
    assert max(max(c["bytes"]) for c in calls) < 1000 + 8 * w.size


# ------------------------------------------------------------------ the map's own pieces
def square_rows(a, b, table, offset, seeds):
    """A kernel reading shared parts and per-row markers by global position."""
    return [(k, table[k] * offset + int(seeds[k]), seeds[a:b].shape[0]) for k in range(a, b)]


@pytest.mark.parametrize("where", ["threading", "loky"])
def test_shared_parts_and_rows_reach_a_kernel_unchanged(where):
    table = np.arange(37.0) ** 2
    seeds = np.arange(37) * 7
    expected = square_rows(0, 37, table, 3.0, seeds)
    with parallel_config(backend=where):
        with shared(table=table) as data:
            for n_jobs in (1, 2):
                got = parallel_chunks(square_rows, 37, n_jobs,
                                      args=(data["table"], 3.0, rows(seeds)))
                assert [g[:2] for g in got] == [e[:2] for e in expected]
    for n_jobs in (1, 2):
        with pytest.raises(RuntimeError, match="closed"):
            parallel_chunks(square_rows, 37, n_jobs, args=(data["table"], 3.0, rows(seeds)))


class _Memo:
    """An example that caches a value on itself, as a graph pair keeps its HiGHS model."""

    def __init__(self, k):
        self.k, self.built = k, None


def _memo_chunk(a, b, items):
    """Per item: (the workers that had cached on it before this call, this worker's pid)."""
    out = []
    for k in range(a, b):
        before = items[k].built or frozenset()
        items[k].built = before | {os.getpid()}
        out.append((before, os.getpid()))
    return out


@pytest.mark.slow
def test_parts_that_share_objects_share_them_in_each_worker(backend):
    """A block travels as one pickle: X and a subset of it (LCLR's positives) hold the same
    example objects in a worker, so what a pass over one caches on an example the other
    finds (on Dask and Ray the parts were pickled apart, and every ILP was built twice)."""
    X = [_Memo(k) for k in range(6)]
    seen = [set() for _ in X]  # the workers that have visited each example so far
    revisits = 0
    with parallel_config(backend=backend, n_jobs=2), fit_session():
        with shared(X=X, sub=list(X)) as data:
            for p in range(8):
                part = data["X"] if p % 2 == 0 else data["sub"]
                for k, (before, pid) in enumerate(parallel_chunks(_memo_chunk, 6, None,
                                                                  args=(part,))):
                    # a worker holds one object per example, whichever part reaches it
                    assert before == (frozenset({pid}) if pid in seen[k] else frozenset())
                    revisits += pid in seen[k]
                    seen[k].add(pid)
    assert revisits > 0  # some example was met again by the same worker, via the other part
    assert all(x.built is None for x in X)  # the caller's objects are untouched


def _arrays_chunk(a, b, offset):
    return [(np.arange(3) + k * offset, float(k)) for k in range(a, b)]


@pytest.mark.slow
def test_a_chunk_comes_back_as_one_object_with_its_arrays_intact(backend):
    """Workers return a chunk's list wrapped in one object (Dask would otherwise serialise
    it element by element and array by array); the driver gets the plain list back."""
    wrapped = transport.run_chunk(_arrays_chunk, 0, 3, (None,), 2)
    assert isinstance(wrapped, blocks.Payload) and len(wrapped.value) == 3
    with parallel_config(backend=backend, n_jobs=2), fit_session():
        got = parallel_chunks(_arrays_chunk, 50, None, args=(2,))
    assert isinstance(got, list) and len(got) == 50
    for k, (arr, val) in enumerate(got):
        np.testing.assert_array_equal(arr, np.arange(3) + 2 * k)
        assert val == float(k)


def _pid_chunk(a, b, X):
    return [os.getpid()] * (b - a)


@pytest.mark.slow
def test_dask_passes_use_every_worker_after_the_memory_manager_ran(dask_client):
    """Each Dask worker holds its own key of a shared block, and each chunk goes to the
    worker holding its copy: Dask's Active Memory Manager (every 2 s by default) dropped
    the replicas of a broadcast key, after which passes ran on one worker."""
    import time

    X = np.arange(1000.0)
    with parallel_config(backend="dask", n_jobs=2), fit_session():
        with shared(X=X) as data:
            for _ in range(3):
                pids = parallel_chunks(_pid_chunk, 10, None, args=(data["X"],))
                assert len(set(pids)) == 2  # both workers, one chunk each
                time.sleep(2.5)  # let the memory manager run between passes


@pytest.mark.slow
def test_dask_chunk_k_runs_on_the_same_worker_in_every_pass(dask_client):
    """Passes over a shared block go to one actor per worker: chunk k of every pass runs in
    the same worker process (its examples keep the decoders built there)."""
    X = np.arange(1000.0)
    with parallel_config(backend="dask", n_jobs=2), fit_session():
        with shared(X=X) as data:
            first = parallel_chunks(_pid_chunk, 10, None, args=(data["X"],))
            for _ in range(5):
                # the cut may move with the measured costs; the chunks' workers do not
                pids = parallel_chunks(_pid_chunk, 10, None, args=(data["X"],))
                assert (pids[0], pids[-1]) == (first[0], first[-1])
    assert first[0] != first[-1]  # two workers, one chunk each


@pytest.mark.slow
def test_an_error_in_a_dask_chunk_reaches_the_caller(dask_client):
    with parallel_config(backend="dask", n_jobs=2), fit_session():
        with shared(X=np.arange(4.0)) as data:
            with pytest.raises(ZeroDivisionError):
                parallel_chunks(_failing_chunk, 4, None, args=(data["X"],))
            # the actors still serve the next pass
            assert len(parallel_chunks(_pid_chunk, 4, None, args=(data["X"],))) == 4


def _failing_chunk(a, b, X):
    if a > 0:
        raise ZeroDivisionError("chunk failed on purpose")
    return [0] * (b - a)


@pytest.mark.slow
def test_bars_change_nothing_on_each_backend(backend):
    """With progress bars on, passes run in many small chunks (streamed where the backend
    can, gathered at once on Ray) and give the same list."""
    from latentstruct.data.progress import show_progress

    table = np.arange(120.0) ** 2
    seeds = np.arange(120) * 3
    expected = square_rows(0, 120, table, 2.0, seeds)
    with parallel_config(backend=backend, n_jobs=2), show_progress(), fit_session():
        with shared(table=table) as data:
            got = parallel_chunks(square_rows, 120, None, args=(data["table"], 2.0, rows(seeds)))
    assert [g[:2] for g in got] == [e[:2] for e in expected]
    assert max(g[2] for g in got) < 120 // 2  # many chunks, not one per worker


@pytest.mark.slow
def test_data_that_cannot_travel_is_a_config_error(backend, tmp_path):
    handle = open(tmp_path / "f.txt", "w")  # noqa: SIM115 - an unpicklable object
    try:
        with parallel_config(backend=backend), shared(task=handle) as data:
            with pytest.raises(ConfigError, match=r"'task' it is sent \(TextIOWrapper\) must "
                               r"be picklable.*default thread backend"):
                parallel_chunks(square_rows, 4, 2, args=(data["task"], 1.0, rows(np.zeros(4))))
            if backend == "dask":  # joblib's Dask backend would wait forever on such a chunk
                with pytest.raises(ConfigError, match=r"argument 0 it is sent \(_Window\)"):
                    parallel_chunks(square_rows, 4, 2, args=(rows([handle] * 4), 1.0, None))
            # threads share memory: nothing is pickled
            with parallel_config(backend="threading"):
                got = parallel_chunks(lambda a, b, f: [f.closed] * (b - a), 4, 2,
                                      args=(data["task"],))
            assert got == [False] * 4
    finally:
        handle.close()


def test_a_window_indexes_rows_by_their_global_position():
    items = list("abcdefgh")
    window = schedule._Window(items[3:6], 3)
    assert window[3:6] == ["d", "e", "f"] and window[4] == "e" and window[4:5] == ["e"]
    with pytest.raises(IndexError):
        window[::2]


def _leak_limit_chunk(a, b, X):
    from joblib.externals.loky import process_executor

    return [process_executor._MAX_MEMORY_LEAK_SIZE] * (b - a)


def test_loky_workers_allow_for_the_blocks_they_keep():
    """loky restarts a worker whose memory grew by 300 MB since its first call; a worker
    keeping shared blocks (and the decoders built for their examples) is not leaking, so
    the threshold grows with the largest block it loaded."""
    from joblib.externals.loky import process_executor

    base = process_executor._MAX_MEMORY_LEAK_SIZE  # this process never loads a block
    X = np.random.default_rng(0).normal(size=200_000)  # 1.6 MB pickled
    with parallel_config(backend="loky", n_jobs=2), fit_session():
        with shared(X=X) as data:
            limits = parallel_chunks(_leak_limit_chunk, 4, None, args=(data["X"],))
    expected = base + blocks.WORKER_CACHE_SIZE * blocks.BLOCK_MEMORY_PER_BYTE * X.nbytes
    # (a reused worker may have loaded a larger block in an earlier test)
    assert min(limits) >= expected


def test_worker_cache_keeps_the_parts_of_the_most_recent_blocks():
    blocks.WORKER_CACHE.clear()
    loads = []

    def load(token, name):
        loads.append((token, name))
        return {name: token + name}

    for token, name in [("a", "X"), ("b", "X"), ("a", "X"), ("a", "task"), ("c", "X"),
                        ("a", "task"), ("b", "X")]:
        assert blocks.cached_part(token, name, lambda t=token, n=name: load(t, n)) == token + name
    # "b" was evicted when "c" came, while "a" stayed in use
    assert loads == [("a", "X"), ("b", "X"), ("a", "task"), ("c", "X"), ("b", "X")]
    assert list(blocks.WORKER_CACHE) == ["a", "b"]
    blocks.WORKER_CACHE.clear()


def test_chunk_bounds_cover_the_range_once():
    for n, k in [(10, 3), (5, 8), (1, 1), (230, 50)]:
        b = chunk_bounds(n, k)
        assert b[0][0] == 0 and b[-1][1] == n and len(b) == min(n, k)
        assert all(x[1] == y[0] for x, y in itertools.pairwise(b))


# ------------------------------------------------------------------------------- numba
def test_numba_cache_prefers_a_writable_numba_cache_dir(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    assert ensure_numba_cache(env, in_tree=str(tmp_path / "tree")) == env["NUMBA_CACHE_DIR"]
    assert (tmp_path / "cache").is_dir()


def test_numba_cache_falls_back_to_a_private_temp_dir(tmp_path, monkeypatch):
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"NUMBA_CACHE_DIR": str(blocker / "cache")}  # under a file: never writable
    got = ensure_numba_cache(env, in_tree=str(blocker / "tree"),
                             user_wide=lambda: str(blocker / "user"))
    assert env["NUMBA_CACHE_DIR"] == got and numba_cache.writable_dir(got)
    assert got.startswith(str(tmp_path / "tmp" / "latentstruct-numba-"))
    # numba's own per-user directory comes before the fallback
    env = {}
    user = str(tmp_path / "user")
    assert ensure_numba_cache(env, in_tree=str(blocker / "t"), user_wide=lambda: user) == user
    assert env == {}


def cache_dir_in_worker(a, b):
    import numba

    return [(os.getpid(), ensure_numba_cache(), numba.config.CACHE_DIR)] * (b - a)


def test_loky_workers_have_a_writable_numba_cache():
    with parallel_config(backend="loky"):
        got = parallel_chunks(cache_dir_in_worker, 4, 2, prefer="processes")
    assert {pid for pid, _, _ in got} - {os.getpid()}
    for _, path, configured in got:
        assert numba_cache.writable_dir(path)
        if os.environ.get("NUMBA_CACHE_DIR"):
            assert configured == os.environ["NUMBA_CACHE_DIR"] == path


def _weights_chunk(a, b, w):
    return [float(w.sum())] * (b - a)


@pytest.mark.slow
def test_a_large_weight_vector_changed_in_place_reaches_process_workers_fresh():
    """joblib memory-maps arrays over 1 MB once per array object; a fit's pool outlives a
    pass, and learners update w in place, so each pass must send the current values."""
    w = np.zeros(300_000)  # 2.4 MB
    with parallel_config(backend="loky"), fit_session():
        for value in (0.0, 1.0, 2.0):
            w[:] = value
            got = parallel_chunks(_weights_chunk, 4, 2, args=(w,))
            assert got == [value * w.size] * 4


@pytest.mark.slow
def test_pass_log_records_each_pass_and_what_travels():
    w = np.ones(1000)
    with parallel.pass_log() as log:
        with shared(X=list(range(50))) as data:
            parallel_chunks(_weights_chunk, 6, 2, args=(w,))
            parallel_chunks(_shared_len_chunk, 4, 1, args=(data["X"],))
    assert [e["fn"] for e in log] == ["_weights_chunk", "_shared_len_chunk"]
    assert [e["items"] for e in log] == [6, 4]
    assert [e["jobs"] for e in log] == [2, 1]
    assert log[0]["arg_bytes"] > 8000  # the weights travel ...
    assert log[1]["arg_bytes"] < 100  # ... shared parts do not
    assert log[0]["result_bytes"] == len(pickle.dumps([1000.0] * 6, protocol=5))
    assert all(e["seconds"] >= 0 for e in log)
    parallel_chunks(_weights_chunk, 2, 1, args=(w,))  # outside the block: not recorded
    assert len(log) == 2


def _shared_len_chunk(a, b, X):
    return [len(X)] * (b - a)
