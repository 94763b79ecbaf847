"""Process workers with a fixed identity: chunk k of a pass runs in process k.

joblib's loky pool is one executor whose idle processes take the next task from a shared
queue, so which process runs chunk k changes from pass to pass.  For passes over a shared
block with home ranges (:mod:`latentstruct.parallel.homes`) the seam instead keeps one
single-process loky executor per worker slot, so a worker decodes the same examples in
every pass and builds what it caches for them (an ILP model) once.

The executors are made on first use and kept for later fits (as joblib keeps its reusable
executor); a process idle for ``IDLE_TIMEOUT`` seconds exits, and its executor starts a new
one on the next call.  Each process gets the thread limits joblib gives loky workers (the
machine's cores shared among the workers), so that BLAS or numba threads do not
oversubscribe the machine.
"""

from __future__ import annotations

import atexit
import os
import threading

__all__ = ["IDLE_TIMEOUT", "affine_executors", "run_affine", "shutdown_affine"]

IDLE_TIMEOUT = 300  # seconds, as joblib's loky backend

#: the thread-count variables joblib limits in its loky workers
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")

_EXECUTORS: dict = {}  # number of workers -> [executor per slot]
_LOCK = threading.Lock()


def _worker_env(n_workers: int) -> dict:
    per = str(max(1, (os.cpu_count() or 1) // n_workers))
    return {var: os.environ.get(var, per) for var in _THREAD_VARS}


def affine_executors(n_workers: int) -> list:
    """``n_workers`` single-process loky executors (slot k always the same process while
    it lives)."""
    from joblib.externals.loky import ProcessPoolExecutor

    with _LOCK:
        pool = _EXECUTORS.get(n_workers)
        if pool is None:
            env = _worker_env(n_workers)
            pool = [ProcessPoolExecutor(max_workers=1, timeout=IDLE_TIMEOUT, env=env)
                    for _ in range(n_workers)]
            _EXECUTORS[n_workers] = pool
        return pool


def run_affine(calls, worker_of, n_workers: int, stream: bool = False):
    """Results of ``calls`` (``(fn, args, kwargs)`` as ``joblib.delayed`` makes them), in
    order, call k run by slot ``worker_of[k]``: a list, or with ``stream`` a generator
    that yields each as it is in (for a progress bar).  On an error or Ctrl-C what has not
    started is dropped."""
    from joblib.externals.loky.process_executor import BrokenProcessPool, ShutdownExecutorError

    futures: list = []
    try:
        for attempt in (0, 1):
            pool = affine_executors(n_workers)
            try:
                futures = [_submit(pool[k % n_workers], c) for c, k in zip(calls, worker_of)]
                break
            except (BrokenProcessPool, ShutdownExecutorError):
                # a process of the kept pool died (killed, out of memory): a new pool
                _drop(n_workers)
                if attempt:
                    raise
        if stream:
            return _results(futures)
        return [f.result() for f in futures]
    except BaseException:
        _cancel(futures)
        raise


def _results(futures):
    try:
        for f in futures:
            yield f.result()
    except BaseException:
        _cancel(futures)
        raise


def _cancel(futures) -> None:
    for f in futures:
        f.cancel()


def _submit(executor, call):
    f, a, kw = call
    return executor.submit(f, *a, **kw)


def _drop(n_workers: int) -> None:
    with _LOCK:
        pool = _EXECUTORS.pop(n_workers, None)
    for ex in pool or ():
        ex.shutdown(wait=False)


def shutdown_affine() -> None:
    """Stop every kept executor (at exit, and for tests)."""
    with _LOCK:
        pools = list(_EXECUTORS.values())
        _EXECUTORS.clear()
    for pool in pools:
        for ex in pool:
            ex.shutdown(wait=False)


atexit.register(shutdown_affine)
