"""The map: :func:`parallel_chunks` calls a kernel on contiguous chunks of a pass's items,
on threads, loky processes, Dask or Ray, and gathers the results in order.

The cut comes from the fit's cost estimates (:mod:`.schedule`) or, for the examples of a
block with declared subsets, from their home workers (:mod:`.homes`); only the cut depends
on measured times, never the results.
"""

from __future__ import annotations

import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import BACKENDS, get_active_backend

from ..data.progress import progress_enabled
from .blocks import Part, current_session
from .loky import run_affine
from .schedule import Rows, chunk_bounds, chunk_record, gather, log_pass, logging, with_progress
from .transport import run_chunk, run_local, wire_args

__all__ = ["parallel_chunks", "sends_to_other_processes"]

_PROGRESS_CHUNKS = 50  # chunks per pass when a progress bar may be shown


def _transport(backend) -> str:
    """How shared data reaches the workers of ``backend`` (a joblib backend instance)."""
    if getattr(backend, "supports_sharedmem", False):
        return "local"
    if type(backend).__module__.split(".")[0] == "ray":
        return "ray"
    if type(backend).__name__ == "DaskDistributedBackend" and hasattr(backend, "client"):
        return "dask"
    local_processes = tuple(BACKENDS[k] for k in ("loky", "multiprocessing") if k in BACKENDS)
    if isinstance(backend, local_processes):
        return "file"
    return "inline"


def _local_args(args) -> list:
    return [a.block.value(a.name) if isinstance(a, Part)
            else a.seq if isinstance(a, Rows) else a for a in args]


def parallel_chunks(
    fn: Callable[..., list],
    n_items: int,
    n_jobs: int | None = 1,
    *,
    args: tuple = (),
    prefer: str = "threads",
    desc: str = "inference",
) -> list:
    """Call ``fn(start, stop, *args)`` on contiguous chunks of ``range(n_items)`` and
    concatenate the returned lists.

    ``args`` may hold parts of a :func:`shared` block (``data["X"]``) and :func:`rows`
    markers; the kernel receives the objects.  With one job (or one item) ``fn`` runs in
    this thread with no joblib overhead.  ``prefer`` is joblib's soft hint: a backend set
    with ``joblib.parallel_config`` wins over it, as in scikit-learn; ``n_jobs=None`` takes
    the configured number of jobs.  When progress bars are on
    (``latentstruct.data.progress.show_progress``; the command line's default), a pass
    over more than 2 s shows one, named ``desc``.

    Chunks are cut by cost: a pass over shared parts that an earlier pass of the fit (or
    of the block) went over is cut where the examples' measured times balance
    (:mod:`latentstruct.parallel.schedule`).  The result never depends on the chunking or
    the backend: learners' kernels are per example, and the results are reassembled in
    example order.
    """
    if not logging():
        return _parallel_chunks(fn, n_items, n_jobs, args, prefer, desc, None)
    start = time.perf_counter()
    record: dict = {"called": start}
    out = _parallel_chunks(fn, n_items, n_jobs, args, prefer, desc, record)
    small = [a for a in args if not isinstance(a, (Part, Rows))]
    log_pass(fn, n_items, effective_n_jobs(n_jobs), start, record, _pickled_size, small, out)
    return out


def _pickled_size(obj) -> int:
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _cost_key(fn, args, n_items):
    """The kind of a pass, for its cost estimates: the kernel, the shared parts it reads,
    the number of items (None, so not remembered, for a pass over no shared part)."""
    parts = tuple((x.block._token, x.name) if isinstance(x, Part) else None for x in args)
    if not any(parts):
        return None
    return (getattr(fn, "__module__", None), getattr(fn, "__qualname__", repr(fn)), parts,
            n_items)


def _parallel_chunks(fn, n_items, n_jobs, args, prefer, desc, record) -> list:
    if n_items <= 0:
        return []
    jobs = effective_n_jobs(n_jobs)
    if jobs == 1 or n_items == 1:
        if progress_enabled() and n_items > 1:
            bounds = chunk_bounds(n_items, min(n_items, _PROGRESS_CHUNKS))
            local = _local_args(args)
            return with_progress((fn(a, b, *local) for a, b in bounds), bounds, desc)
        return list(fn(0, n_items, *_local_args(args)))
    backend, _ = get_active_backend(prefer=prefer)
    transport = _transport(backend)
    n_chunks = max(jobs, min(n_items, _PROGRESS_CHUNKS)) if progress_enabled() else jobs
    session = current_session()
    block = next((x.block for x in args if isinstance(x, Part)), None)
    owner = session if session is not None else block
    plan = _home_plan(owner, args, n_items, jobs, n_chunks, transport, backend)
    key = _cost_key(fn, args, n_items)
    if plan is not None:
        bounds = plan.bounds
    else:
        bounds = (owner.costs.bounds(key, n_items, n_chunks) if owner is not None
                  else chunk_bounds(n_items, n_chunks))
    if record is not None:
        record["began"] = time.perf_counter()
    stream = False
    if transport == "dask":
        from .dask import dask_chunks

        parts = dask_chunks(backend, fn, bounds, args, None if plan is None else plan.worker)
    else:
        if transport == "local":
            local = _local_args(args)
            calls = [delayed(run_local)(fn, a, b, local) for a, b in bounds]
        else:
            calls = []
            for a, b in bounds:
                names, wired = wire_args(args, transport, backend, a, b)
                calls.append(delayed(run_chunk)(fn, a, b, names, *wired))
        stream = progress_enabled() and getattr(backend, "supports_return_generator", True)
        if transport == "local" and not stream and type(backend).__name__ == "ThreadingBackend":
            parts = _threads_map(calls, jobs)
        elif plan is not None:  # loky, each chunk in its home worker's process
            parts = run_affine(calls, plan.worker, jobs, stream)
        else:
            return_as = "generator" if stream else "list"
            pools = owner.pools if owner is not None else None
            parallel = (pools.get(backend, jobs, prefer, return_as) if pools is not None
                        else Parallel(n_jobs=jobs, prefer=prefer, return_as=return_as,
                                      max_nbytes=None, batch_size=1))
            parts = _map_calls(parallel, calls, stream)
    done: list = []  # the chunks' ChunkResult, values taken out as they are gathered
    out = gather(_taken(parts, done), bounds, desc)
    if plan is not None:
        owner.homes.record(plan, [r.times for r in done])
    elif owner is not None:
        owner.costs.record(key, n_items, bounds, [r.times for r in done])
    if record is not None:
        record["ended"] = time.perf_counter()
        record["chunks"] = [chunk_record(ab, r) for ab, r in zip(bounds, done)]
    return out


def _home_plan(owner, args, n_items: int, jobs: int, n_chunks: int, transport: str, backend):
    """Chunks of home ranges (:mod:`latentstruct.parallel.homes`) for a pass over a shared
    part that is, or is declared the base of, a subset; None where workers have no
    identity to keep (threads share memory; joblib's multiprocessing pool picks any
    process) or no such part is passed."""
    if owner is None or not (transport == "dask" or (transport == "file"
                                                     and type(backend).__name__ == "LokyBackend")):
        return None
    for x in args:
        if not isinstance(x, Part):
            continue
        block = x.block
        if x.name in block.subsets:
            base, at = block.subsets[x.name]
        elif any(b == x.name for b, _ in block.subsets.values()):
            base, at = x.name, None
        else:
            continue
        n_base = len(block.value(base))
        if (n_base if at is None else len(at)) != n_items:
            return None
        return owner.homes.plan((block._token, base, jobs), n_base, at, jobs, n_chunks)
    return None


#: one thread pool per size, kept for the process's life: a pass submits its chunks there
_THREAD_POOLS: dict = {}
_THREAD_LOCK = threading.Lock()
_IN_POOL = threading.local()


def _threads_map(calls: list, jobs: int) -> list:
    """The chunks of a threaded pass, in order, on a kept ``ThreadPoolExecutor``.

    joblib's threading backend costs about 10 ms per pass (a pool started and its results
    polled), more than a small pass's work: the structural SVM's online mode makes hundreds
    of passes per fit, and n_jobs=2 made it three times slower than one thread.  A kept
    pool costs a tenth of a millisecond.  A pass started inside one of its threads (nested
    parallelism) runs its chunks in that thread: waiting on the same pool could deadlock."""
    if getattr(_IN_POOL, "active", False):
        return [fn(*args, **kwargs) for fn, args, kwargs in calls]
    with _THREAD_LOCK:
        pool = _THREAD_POOLS.get(jobs)
        if pool is None:
            pool = _THREAD_POOLS[jobs] = ThreadPoolExecutor(
                jobs, thread_name_prefix="latentstruct", initializer=_mark_pool_thread)
    futures = [pool.submit(fn, *args, **kwargs) for fn, args, kwargs in calls]
    return [f.result() for f in futures]


def _mark_pool_thread() -> None:
    _IN_POOL.active = True


def _taken(parts, done: list):
    """Each chunk's list; its ChunkResult (less the list) goes to ``done``."""
    for r in parts:
        value, r.value = r.value, None
        done.append(r)
        yield value


def _map_calls(parallel: Parallel, calls: list, stream: bool):
    """The chunks' results, in order: a pooled loky pass goes to the pool's executor
    directly (joblib collects results by polling every 10 ms, and its own dispatch costs
    a few ms more: ~11 against ~6 ms per pass of two trivial chunks, measured under load);
    other backends, and passes under a progress bar, through ``parallel(calls)``."""
    executor = getattr(getattr(parallel, "_backend", None), "_workers", None)
    if stream or type(parallel._backend).__name__ != "LokyBackend" or executor is None:
        return parallel(calls)
    futures = []
    try:
        futures = [executor.submit(f, *a, **kw) for f, a, kw in calls]
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()  # an error or Ctrl-C: what has not started is dropped
        raise


def sends_to_other_processes(n_jobs) -> bool:
    """True when passes with ``n_jobs`` would run outside this process (loky, Dask, Ray, ...):
    every pass then ships its arguments, so many small passes cost more than they gain."""
    if effective_n_jobs(n_jobs) == 1:
        return False
    backend, _ = get_active_backend(prefer="threads")
    return _transport(backend) != "local"
