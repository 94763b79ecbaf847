"""Shared blocks: the data a fit's passes use unchanged, sent to each worker at most once.

:func:`shared` makes a block of named objects (a task, its examples, subsets of them), and
:func:`fit_session` keeps a learner's blocks, pool and cost estimates for all its passes.
What stands for a part on each transport (a temp file, Ray refs, Dask keys), and the
worker-side cache that loads it once, live here too; see :mod:`latentstruct.parallel`
for what travels on each backend.
"""

from __future__ import annotations

import contextvars
import os
import pickle  # carries a fit's shared data to workers (as joblib does); never model files
import shutil
import tempfile
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from functools import cached_property
from contextlib import contextmanager

from ..exceptions import ConfigError
from .homes import HomeMemory, Subset
from .schedule import CostMemory, Pools

__all__ = ["SharedData", "fit_session", "shared", "worker_copy", "current_session",
           "allow_block_memory"]

WORKER_CACHE_SIZE = 2  # shared blocks a worker process keeps (most recently used)


class Payload:
    """Wrapper of shared data in transit: unpickling it imports this module first, so the
    numba cache is settled before the data's own modules compile their kernels."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __getstate__(self):
        return (self.value,)  # never a false state: pickle would skip __setstate__

    def __setstate__(self, state):
        self.value = state[0]


class Part:
    """``data[name]``: one part of a :class:`SharedData` block, as an argument of
    :func:`parallel_chunks` (resolved to the object itself in the worker)."""

    __slots__ = ("block", "name")

    def __init__(self, block: SharedData, name: str):
        self.block, self.name = block, name

    def __reduce__(self):
        raise TypeError("a shared-data part is resolved by parallel_chunks; pass it in "
                        "args=(...), not inside another object")


class FileRef:
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
        return cached_part(self.token, self.name, read)


class RayRef:
    """A part of a shared block in Ray's object store."""

    __slots__ = ("name", "ref", "token")

    def __init__(self, token: str, name: str, ref):
        self.token, self.name, self.ref = token, name, ref

    def load(self):
        import ray

        return cached_part(self.token, self.name, lambda: ray.get(self.ref).value)  # every part


class DaskRef:
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
BLOCK_MEMORY_PER_BYTE = 40
_LEAK_LIMIT: dict = {}  # loky's own memory-leak threshold and the largest block seen


def allow_block_memory(nbytes: int) -> None:
    """Tell loky's memory-leak check, in this worker process, about the blocks it keeps.

    A loky worker restarts itself when its memory has grown by more than 300 MB since its
    first call (joblib's vendored loky, ``_MAX_MEMORY_LEAK_SIZE``).  A worker here keeps
    the last ``WORKER_CACHE_SIZE`` shared blocks on purpose, with the decoders built for
    their examples; loky took that for a leak and restarted workers in the middle of fits
    (LCLR on 300 MSRP pairs: 9.1 s instead of 4.8 s, the restarted worker loading the block
    and building its ILP models again; and with "A worker stopped while some jobs were
    given to the executor" as a warning).  The threshold becomes loky's own plus
    ``WORKER_CACHE_SIZE`` times the largest block seen, at ``BLOCK_MEMORY_PER_BYTE``;
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
        base + WORKER_CACHE_SIZE * BLOCK_MEMORY_PER_BYTE * largest)


WORKER_CACHE: OrderedDict = OrderedDict()  # block token -> {part name: object}
_WORKER_LOCK = threading.Lock()


def cached_part(token: str, name: str, load: Callable[[], dict]):
    """Part ``name`` of block ``token`` in this process, loaded at most once; ``load()``
    returns some parts of the block, ``name`` among them.  The last few blocks are kept
    (a worker outlives the fits it serves)."""
    with _WORKER_LOCK:
        parts = WORKER_CACHE.setdefault(token, {})
        WORKER_CACHE.move_to_end(token)
        while len(WORKER_CACHE) > WORKER_CACHE_SIZE:
            WORKER_CACHE.popitem(last=False)
        if name in parts:
            return parts[name]
    loaded = load()
    with _WORKER_LOCK:
        parts.update(loaded)
    return loaded[name]


class SharedData:
    """Named objects sent to each parallel worker at most once while the block is open
    (see :func:`shared`); ``data[name]`` is the argument a kernel receives as that object."""

    def __init__(self, parts: dict, pools: Pools):
        # a part declared with subset(...) is kept as its items, with where they sit in
        # its base (for home workers: .homes)
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
        self._closed = False

    @cached_property
    def homes(self) -> HomeMemory:
        """Its examples' home workers (outside a fit_session), made when a pass first has
        any: a serial pass never does."""
        return HomeMemory()

    def __getitem__(self, name: str) -> Part:
        if name not in self._parts:
            raise KeyError(f"no shared part {name!r}; parts are {sorted(self._parts)}")
        return Part(self, name)

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
        return first_unpicklable(((repr(k), v) for k, v in self._parts.items()), backend) or error

    def _send_file(self, backend) -> dict:
        self._tmpdir = tempfile.mkdtemp(prefix="latentstruct-shared-")
        path = os.path.join(self._tmpdir, "data.pkl")
        write_payload(path, Payload(self._parts))
        return {name: FileRef(self._token, path, name) for name in self._parts}

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
        blob = cloudpickle.dumps(Payload(self._parts), protocol=pickle.HIGHEST_PROTOCOL)
        placed = {}
        for addr in workers:
            # a list, so that the bytes are one key (not an iterable to split)
            (placed[addr],) = client.scatter([blob], workers=[addr], hash=False)
        return {name: DaskRef(self._token, name, placed) for name in self._parts}

    def _send_ray(self, backend) -> dict:
        import ray

        ref = ray.put(Payload(self._parts))
        return {name: RayRef(self._token, name, ref) for name in self._parts}

    def _send_inline(self, backend) -> dict:
        return dict(self._parts)

    def close(self) -> None:
        """Release what was sent: the temp file, the Dask futures, the Ray object refs."""
        self._closed = True
        self._sent.clear()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def first_unpicklable(named, backend) -> ConfigError | None:
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


def write_payload(path: str, payload: Payload) -> None:
    import cloudpickle  # as loky pickles: a task may hold a lambda or a local class

    with open(path, "wb") as f:
        cloudpickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)


class _Session:
    """What a fit keeps for its passes: one pool, and its shared blocks by identity."""

    def __init__(self):
        self.pools = Pools()
        self.costs = CostMemory()  # per-item costs of its passes, by kind of pass
        self.blocks: dict = {}  # ((name, id(obj)), ...) -> SharedData (holding the objs)

    @cached_property
    def homes(self) -> HomeMemory:
        """The home workers of its blocks' examples, made when a pass first has any."""
        return HomeMemory()

    def close(self) -> None:
        self.pools.close()
        for block in self.blocks.values():
            block.close()
        self.blocks.clear()


SESSION: contextvars.ContextVar = contextvars.ContextVar("latentstruct_parallel_session",
                                                          default=None)


@contextmanager
def fit_session():
    """Within the block (a learner's ``fit``; nested blocks join the outer one), passes
    share one worker pool, and :func:`shared` blocks over the same objects are reused and
    released only at its end: a task decoded in many passes reaches each worker once."""
    if SESSION.get() is not None:
        yield
        return
    session = _Session()
    token = SESSION.set(session)
    try:
        yield
    finally:
        SESSION.reset(token)
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
    session = SESSION.get()
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
    block = SharedData(parts, Pools())
    try:
        yield block
    finally:
        block.pools.close()
        block.close()


def current_session():
    """The open :func:`fit_session`'s state, or None."""
    return SESSION.get()
