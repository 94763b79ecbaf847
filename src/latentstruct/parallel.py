"""Map work over examples in parallel with joblib, on threads, processes or a cluster.

Inference dominates training time, and it is independent per example, so learners hand
contiguous chunks of examples to :func:`parallel_chunks`.  Chunks (not single examples) keep
the per-task overhead low and let a task use its batch kernels inside each chunk.

**Backends.**  Threads are the default (numba kernels compiled with ``nogil`` and HiGHS
release the GIL).  As in scikit-learn, a surrounding ``joblib.parallel_config(backend=...)``
wins over that default: ``"loky"`` (processes), ``"dask"`` (a ``distributed.Client`` must
exist), ``"ray"`` (after ``ray.util.joblib.register_ray()``).  ``n_jobs=None`` takes the
number of jobs from ``parallel_config`` too; any explicit ``n_jobs`` is used as given.

**Kernels and shared data.**  A kernel is a module-level function ``fn(start, stop, *args)``
(workers unpickle it by name; a closure would drag everything it refers to along).  Data
that stays the same through a fit is wrapped once::

    with shared(task=task, X=X) as data:
        for round in ...:
            parallel_chunks(kernel, len(X), n_jobs, args=(data["task"], data["X"], w))

and the kernel receives the objects themselves.  A learner's ``fit`` runs in a
:func:`fit_session`: all its passes share one worker pool, and a ``shared`` block over the
same objects (the task a learner decodes with, pass after pass) is made once per fit.
What travels, per backend (measured on LCLR: about 400 B + 8 B per feature per chunk):

==========  ===============================================  ==================================
backend     once per ``shared`` block (per fit)              per pass (round)
==========  ===============================================  ==================================
threads     nothing (workers share memory)                   nothing
loky        the data pickled once to a private temp file     per chunk: ~400 B of references
            (``TMPDIR``); each worker process loads it once  + the small arguments (``w``:
            and keeps it (the last 2 blocks, by token)       8 bytes per feature)
dask        the block pickled once, ``client.scatter`` of    per chunk: ~400 B + ``w``, as a
            that copy to each worker as its own key; one     call on the actor of the worker
            actor per worker runs the chunks (joblib's Dask  holding the block (client to
            backend supplies the client)                     worker, no scheduler hop)
ray         ``ray.put``: one copy in each node's object      per chunk: ~400 B + ``w``
            store; each pool process reads it once
other       nothing: the data goes with every chunk          the data, per chunk
==========  ===============================================  ==================================

Results (structures, scores) travel back per example in every case.  Data is sent lazily,
on the first pass that needs it, so a fit with ``n_jobs=1`` or on threads sends nothing,
and it is released (temp file removed, futures and object refs dropped) when the block
(or the fit) ends.  :func:`rows` marks per-example arrays used in one pass only (a seed
per example, a test set, StructuredSVM's mini-batches): each chunk then carries only its
own rows, once.

**Numba.**  Workers need a writable numba cache for kernels compiled with ``cache=True``:
importing this module settles one (:mod:`latentstruct.parallel_numba`), and shared data
is unpickled only after it.

**Chunks** are cut by each example's measured cost in the fit's earlier passes, not by
count (:mod:`latentstruct.parallel_schedule`); the results never depend on the cut.
"""

from __future__ import annotations

import contextvars
import os
import pickle  # carries a fit's shared data to workers (as joblib does); never model files
import shutil
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import BACKENDS, get_active_backend

from .data.progress import progress_enabled
from .exceptions import ConfigError
from .parallel_homes import HomeMemory, Subset, subset
from .parallel_loky import run_affine
from .parallel_numba import _writable_dir, ensure_numba_cache  # noqa: F401 - settles the cache
from .parallel_schedule import (
    CostMemory,
    _Pools,
    chunk_bounds,
    chunk_record,
    gather,
    log_pass,
    logging,
    _Rows,
    _Window,
    pass_log,
    rows,
    timed_call,
    with_progress,
)

__all__ = ["SharedData", "chunk_bounds", "ensure_numba_cache", "fit_session", "parallel_chunks",
           "pass_log", "rows", "sends_to_other_processes", "shared", "subset", "worker_copy"]

_PROGRESS_CHUNKS = 50  # chunks per pass when a progress bar may be shown
_WORKER_CACHE_SIZE = 2  # shared blocks a worker process keeps (most recently used)




# --------------------------------------------------------------------------------------
# shared data


class _Payload:
    """Wrapper of shared data in transit: unpickling it imports this module first, so the
    numba cache is settled before the data's own modules compile their kernels."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __getstate__(self):
        return (self.value,)  # never a false state: pickle would skip __setstate__

    def __setstate__(self, state):
        self.value = state[0]


class _Part:
    """``data[name]``: one part of a :class:`SharedData` block, as an argument of
    :func:`parallel_chunks` (resolved to the object itself in the worker)."""

    __slots__ = ("block", "name")

    def __init__(self, block: SharedData, name: str):
        self.block, self.name = block, name

    def __reduce__(self):
        raise TypeError("a shared-data part is resolved by parallel_chunks; pass it in "
                        "args=(...), not inside another object")


class _FileRef:
    """A shared block written to a temp file (process backends on this machine)."""

    __slots__ = ("name", "path", "token")

    def __init__(self, token: str, path: str, name: str):
        self.token, self.path, self.name = token, path, name

    def load(self):
        def read():  # the file holds every part of the block
            with open(self.path, "rb") as f:
                value = pickle.load(f).value
            allow_block_memory(os.path.getsize(self.path))
            return value
        return _cached(self.token, self.name, read)


class _RayRef:
    """A part of a shared block in Ray's object store."""

    __slots__ = ("name", "ref", "token")

    def __init__(self, token: str, name: str, ref):
        self.token, self.name, self.ref = token, name, ref

    def load(self):
        import ray

        return _cached(self.token, self.name, lambda: ray.get(self.ref).value)  # every part


class _DaskRef:
    """A part of a shared block on a Dask cluster: one pickled copy of the block scattered
    to each worker as its own key (``placed``: worker address -> future).

    Not ``scatter(broadcast=True)``: Dask's Active Memory Manager (on by default) drops the
    extra replicas of a broadcast key within seconds, after which the scheduler ran both
    chunks of a pass on the one worker holding the data, or copied the block again
    (measured on LCLR: 7 of 27 passes serialised).  A key per worker has one replica,
    which the manager leaves alone, and each chunk is sent to the worker holding its copy."""

    __slots__ = ("name", "placed", "token")

    def __init__(self, token: str, name: str, placed: dict):
        self.token, self.name, self.placed = token, name, placed


#: memory a loky worker may gain per byte of a pickled block it keeps: the examples
#: unpickled and the decoders built for them (300 MSRP pairs: 5.5 MB pickled, ~80 MB with
#: their HiGHS models, measured)
_BLOCK_MEMORY_PER_BYTE = 40
_LEAK_LIMIT: dict = {}  # loky's own memory-leak threshold and the largest block seen


def allow_block_memory(nbytes: int) -> None:
    """Tell loky's memory-leak check, in this worker process, about the blocks it keeps.

    A loky worker restarts itself when its memory has grown by more than 300 MB since its
    first call (joblib's vendored loky, ``_MAX_MEMORY_LEAK_SIZE``).  A worker here keeps
    the last ``_WORKER_CACHE_SIZE`` shared blocks on purpose, with the decoders built for
    their examples; loky took that for a leak and restarted workers in the middle of fits
    (LCLR on 300 MSRP pairs: 9.1 s instead of 4.8 s, the restarted worker loading the block
    and building its ILP models again; and with "A worker stopped while some jobs were
    given to the executor" as a warning).  The threshold becomes loky's own plus
    ``_WORKER_CACHE_SIZE`` times the largest block seen, at ``_BLOCK_MEMORY_PER_BYTE``;
    a real leak still trips it.  A loky without the setting is left alone."""
    try:
        from joblib.externals.loky import process_executor
    except ImportError:  # pragma: no cover - joblib vendors loky
        return
    limit = getattr(process_executor, "_MAX_MEMORY_LEAK_SIZE", None)
    if not isinstance(limit, (int, float)) or isinstance(limit, bool):
        return
    base = _LEAK_LIMIT.setdefault("base", limit)
    largest = _LEAK_LIMIT["largest"] = max(_LEAK_LIMIT.get("largest", 0), int(nbytes))
    process_executor._MAX_MEMORY_LEAK_SIZE = int(
        base + _WORKER_CACHE_SIZE * _BLOCK_MEMORY_PER_BYTE * largest)


_WORKER_CACHE: OrderedDict = OrderedDict()  # block token -> {part name: object}
_WORKER_LOCK = threading.Lock()


def _cached(token: str, name: str, load: Callable[[], dict]):
    """Part ``name`` of block ``token`` in this process, loaded at most once; ``load()``
    returns some parts of the block, ``name`` among them.  The last few blocks are kept
    (a worker outlives the fits it serves)."""
    with _WORKER_LOCK:
        parts = _WORKER_CACHE.setdefault(token, {})
        _WORKER_CACHE.move_to_end(token)
        while len(_WORKER_CACHE) > _WORKER_CACHE_SIZE:
            _WORKER_CACHE.popitem(last=False)
        if name in parts:
            return parts[name]
    loaded = load()
    with _WORKER_LOCK:
        parts.update(loaded)
    return loaded[name]


class SharedData:
    """Named objects sent to each parallel worker at most once while the block is open
    (see :func:`shared`); ``data[name]`` is the argument a kernel receives as that object."""

    def __init__(self, parts: dict, pools: _Pools):
        # a part declared with subset(...) is kept as its items, with where they sit in
        # its base (for home workers: parallel_homes)
        self.subsets = {name: (p.of, p.at) for name, p in parts.items() if isinstance(p, Subset)}
        for name, (base, _) in self.subsets.items():
            if base not in parts or isinstance(parts[base], Subset):
                raise ValueError(f"shared part {name!r} is a subset of {base!r}, which is not "
                                 "a (non-subset) part of the same block")
        self._parts = {name: p.value if isinstance(p, Subset) else p
                       for name, p in parts.items()}
        self._token = uuid.uuid4().hex
        self._sent: dict = {}  # transport -> {name: what travels instead of the object}
        self._tmpdir: str | None = None
        self.pools = pools
        self.costs = CostMemory()  # per-item costs of its passes (outside a fit_session)
        self.homes = HomeMemory()  # its examples' home workers (outside a fit_session)
        self._closed = False

    def __getitem__(self, name: str) -> _Part:
        if name not in self._parts:
            raise KeyError(f"no shared part {name!r}; parts are {sorted(self._parts)}")
        return _Part(self, name)

    def value(self, name: str):
        """The object itself, in this process."""
        self._check_open()
        return self._parts[name]

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this shared-data block is closed; use it inside its 'with'")

    def _wire(self, transport: str, backend) -> dict:
        """What stands for each part on ``transport``; sent on first use."""
        self._check_open()
        if transport not in self._sent:
            try:
                self._sent[transport] = getattr(self, f"_send_{transport}")(backend)
            except (TypeError, AttributeError, pickle.PicklingError) as error:
                raise self._unpicklable(backend, error) from error
        return self._sent[transport]

    def _unpicklable(self, backend, error) -> Exception:
        """A ConfigError naming the part that cannot travel (or ``error`` itself)."""
        return _first_unpicklable(((repr(k), v) for k, v in self._parts.items()), backend) or error

    def _send_file(self, backend) -> dict:
        self._tmpdir = tempfile.mkdtemp(prefix="latentstruct-shared-")
        path = os.path.join(self._tmpdir, "data.pkl")
        _write_payload(path, _Payload(self._parts))
        return {name: _FileRef(self._token, path, name) for name in self._parts}

    # Every transport sends the block as ONE pickle: parts that share objects (LCLR's X and
    # its positive and negative subsets hold the same examples, and each example keeps its
    # HiGHS model) must share them in the workers too, or each copy rebuilds its models
    # (a whole extra pass of ILP builds on Dask, measured) and takes memory again.
    def _send_dask(self, backend) -> dict:
        import cloudpickle

        client = backend.client
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ConfigError("the Dask cluster has no workers; start some, or use another "
                              "backend")
        blob = cloudpickle.dumps(_Payload(self._parts), protocol=pickle.HIGHEST_PROTOCOL)
        placed = {}
        for addr in workers:
            # a list, so that the bytes are one key (not an iterable to split)
            (placed[addr],) = client.scatter([blob], workers=[addr], hash=False)
        return {name: _DaskRef(self._token, name, placed) for name in self._parts}

    def _send_ray(self, backend) -> dict:
        import ray

        ref = ray.put(_Payload(self._parts))
        return {name: _RayRef(self._token, name, ref) for name in self._parts}

    def _send_inline(self, backend) -> dict:
        return dict(self._parts)

    def close(self) -> None:
        """Release what was sent: the temp file, the Dask futures, the Ray object refs."""
        self._closed = True
        self._sent.clear()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def _first_unpicklable(named, backend) -> ConfigError | None:
    """A ConfigError for the first (name, object) in ``named`` that cannot be pickled."""
    import cloudpickle

    for name, obj in named:
        try:
            cloudpickle.dumps(obj)
        except Exception as e:  # noqa: BLE001 - any failure names the culprit
            return ConfigError(
                f"the joblib backend {type(backend).__name__} runs inference in other "
                f"processes, so the {name} it is sent ({type(obj).__name__}) must be "
                f"picklable, but pickling it failed: {e}. Train with the default thread "
                "backend (no joblib.parallel_config backend, or backend='threading'), or "
                f"make {type(obj).__name__} picklable (drop open files and handles in "
                "__getstate__ and reopen them on use).")
    return None


def worker_copy(obj):
    """The copy of ``obj`` a process worker (loky, Dask, Ray) receives: serialised the way
    this seam sends shared data (cloudpickle) and loaded back.  ``check_task`` uses it to
    check that a task survives the trip to a worker."""
    import cloudpickle

    return pickle.loads(cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _write_payload(path: str, payload: _Payload) -> None:
    import cloudpickle  # as loky pickles: a task may hold a lambda or a local class

    with open(path, "wb") as f:
        cloudpickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)


class _Session:
    """What a fit keeps for its passes: one pool, and its shared blocks by identity."""

    def __init__(self):
        self.pools = _Pools()
        self.costs = CostMemory()  # per-item costs of its passes, by kind of pass
        self.homes = HomeMemory()  # the home workers of its blocks' examples
        self.blocks: dict = {}  # ((name, id(obj)), ...) -> SharedData (holding the objs)

    def close(self) -> None:
        self.pools.close()
        for block in self.blocks.values():
            block.close()
        self.blocks.clear()


_SESSION: contextvars.ContextVar = contextvars.ContextVar("latentstruct_parallel_session",
                                                          default=None)


@contextmanager
def fit_session():
    """Within the block (a learner's ``fit``; nested blocks join the outer one), passes
    share one worker pool, and :func:`shared` blocks over the same objects are reused and
    released only at its end: a task decoded in many passes reaches each worker once."""
    if _SESSION.get() is not None:
        yield
        return
    session = _Session()
    token = _SESSION.set(session)
    try:
        yield
    finally:
        _SESSION.reset(token)
        session.close()


@contextmanager
def shared(**parts):
    """A block of named objects that parallel passes inside it use unchanged: each worker
    receives them at most once (see the module docstring for what each backend sends).
    Inside a :func:`fit_session`, the block lives until the session ends and a later
    ``shared`` over the same objects returns it again, as does one over some of the
    objects of an open block under the same names.

    >>> with shared(task=task, X=X) as data:            # doctest: +SKIP
    ...     parallel_chunks(kernel, len(X), 2, args=(data["task"], data["X"], w))
    """
    session = _SESSION.get()
    if session is not None:
        key = tuple(sorted((name, id(obj.value if isinstance(obj, Subset) else obj))
                           for name, obj in parts.items()))
        if key not in session.blocks:
            # A block of the session that holds these very objects under these names (and
            # more) serves as well: LCLR's two-stage start decodes X inside the loop's block
            # over X and its subsets, so process workers build each example's ILP model
            # once, not once per block.
            wanted = set(key)
            holder = next((b for k, b in session.blocks.items() if wanted <= set(k)), None)
            session.blocks[key] = holder or SharedData(parts, session.pools)
        yield session.blocks[key]
        return
    block = SharedData(parts, _Pools())
    try:
        yield block
    finally:
        block.pools.close()
        block.close()


# --------------------------------------------------------------------------------------
# the map


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
    return [a.block.value(a.name) if isinstance(a, _Part)
            else a.seq if isinstance(a, _Rows) else a for a in args]


def _wire_args(args, transport: str, backend, a: int, b: int) -> tuple[tuple, list]:
    """(names, wired): each argument as it travels, and for each the shared part's name
    (None for an argument that is not one).  A Dask future must be a top-level argument
    for Dask to resolve it, so the name of the part it stands for travels beside it."""
    names, out = [], []
    for x in args:
        name = None
        if isinstance(x, _Part):
            name = x.name
            x = x.block._wire(transport, backend)[x.name]
        elif isinstance(x, _Rows):
            x = _Window(x.seq[a:b], a)
        names.append(name)
        out.append(x)
    return tuple(names), out


def _resolve(x, name):
    if isinstance(name, tuple):  # a Dask worker's copy of a block: pickled bytes, loaded once
        token, part = name
        return _cached(token, part, lambda: pickle.loads(x).value)
    if isinstance(x, (_FileRef, _RayRef)):
        return x.load()
    return x


class _Result(_Payload):
    """A chunk's list as it comes back from a worker, with where and how long it ran:
    ``times`` holds :func:`~latentstruct.parallel_schedule.timed_call`'s sub-range times
    (the cost of each example, for cutting the next pass), ``setup`` the seconds spent
    before them (loading shared data: once per block and worker), ``worker`` the process
    (or thread) id.  One pickle: Dask serialises a bare list item by item (a frame per
    element, and per numpy array in it), which cost ~0.5 ms per decoded example on LCLR."""

    __slots__ = ("setup", "times", "worker")

    def __init__(self, value, times, worker, setup=0.0):
        self.value, self.times, self.worker, self.setup = value, times, worker, setup

    def __getstate__(self):
        return (self.value, self.times, self.worker, self.setup)

    def __setstate__(self, state):
        self.value, self.times, self.worker, self.setup = state


def _run_chunk(fn, a: int, b: int, names: tuple, *args) -> _Result:
    """What a process or cluster worker runs: ``fn`` over ``a .. b-1`` (timed, in
    sub-ranges) with shared parts turned into the objects."""
    t0 = time.perf_counter()
    resolved = [_resolve(x, name) for x, name in zip(args, names)]
    setup = time.perf_counter() - t0
    value, times = timed_call(fn, a, b, resolved)
    return _Result(value, times, os.getpid(), setup)


def _run_local(fn, a: int, b: int, args) -> _Result:
    """What a thread runs: the same, on the objects themselves."""
    value, times = timed_call(fn, a, b, args)
    return _Result(value, times, threading.get_ident())


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
    (:mod:`latentstruct.parallel_schedule`).  The result never depends on the chunking or
    the backend: learners' kernels are per example, and the results are reassembled in
    example order.
    """
    if not logging():
        return _parallel_chunks(fn, n_items, n_jobs, args, prefer, desc, None)
    start = time.perf_counter()
    record: dict = {"called": start}
    out = _parallel_chunks(fn, n_items, n_jobs, args, prefer, desc, record)
    small = [a for a in args if not isinstance(a, (_Part, _Rows))]
    log_pass(fn, n_items, effective_n_jobs(n_jobs), start, record, _pickled_size, small, out)
    return out


def _pickled_size(obj) -> int:
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _cost_key(fn, args, n_items):
    """The kind of a pass, for its cost estimates: the kernel, the shared parts it reads,
    the number of items (None, so not remembered, for a pass over no shared part)."""
    parts = tuple((x.block._token, x.name) if isinstance(x, _Part) else None for x in args)
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
    session = _SESSION.get()
    block = next((x.block for x in args if isinstance(x, _Part)), None)
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
        from .parallel_dask import dask_chunks

        parts = dask_chunks(backend, fn, bounds, args, None if plan is None else plan.worker)
    else:
        if transport == "local":
            local = _local_args(args)
            calls = [delayed(_run_local)(fn, a, b, local) for a, b in bounds]
        else:
            calls = []
            for a, b in bounds:
                names, wired = _wire_args(args, transport, backend, a, b)
                calls.append(delayed(_run_chunk)(fn, a, b, names, *wired))
        stream = progress_enabled() and getattr(backend, "supports_return_generator", True)
        if plan is not None:  # loky, each chunk in its home worker's process
            parts = run_affine(calls, plan.worker, jobs, stream)
        else:
            return_as = "generator" if stream else "list"
            pools = owner.pools if owner is not None else None
            parallel = (pools.get(backend, jobs, prefer, return_as) if pools is not None
                        else Parallel(n_jobs=jobs, prefer=prefer, return_as=return_as,
                                      max_nbytes=None, batch_size=1))
            parts = _map_calls(parallel, calls, stream)
    done: list = []  # the chunks' _Result, values taken out as they are gathered
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
    """Chunks of home ranges (:mod:`latentstruct.parallel_homes`) for a pass over a shared
    part that is, or is declared the base of, a subset; None where workers have no
    identity to keep (threads share memory; joblib's multiprocessing pool picks any
    process) or no such part is passed."""
    if owner is None or not (transport == "dask" or (transport == "file"
                                                     and type(backend).__name__ == "LokyBackend")):
        return None
    for x in args:
        if not isinstance(x, _Part):
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


def _taken(parts, done: list):
    """Each chunk's list; its _Result (less the list) goes to ``done``."""
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
