"""One :func:`latentstruct.parallel.parallel_chunks` pass on a Dask cluster: the chunks go
to the client of joblib's Dask backend directly, not through joblib.

joblib's own Dask backend is a layer too many for passes of a fraction of a second: it
batches calls through callbacks on the client's event loop and scatters every argument
over 1 kB to one worker first; measured on a loopback cluster, a pass of two chunks cost
~40 ms more than the chunks themselves.  The backend's client, its workers and ``n_jobs``
are used as configured.

**Passes over a shared block go to actors.**  Each worker holding a copy of the block gets
one :class:`_ChunkActor` (a Dask actor, made once per client and worker), and chunk ``k``
of a pass is a method call on the actor of worker ``k mod P``.  An actor call goes from
the client to the worker and back directly, without the scheduler's hops and their
batching intervals (client to scheduler 10 ms, scheduler to worker 5 ms in distributed
2026.8): a pass of two trivial chunks took 3.1 ms against 16.4 ms with ``Client.map`` and
``gather`` on a loopback cluster of two workers (``docs/scaling.md``).  The actor finds
the block in its worker's data by the key it was scattered under, and chunk ``k`` of every
pass runs on the same worker, so the decoders a worker builds for its examples stay with
them.  Actor calls are not cancelled on an error or Ctrl-C (Dask cannot): the chunks
already sent finish on their workers and their results are dropped.  Nor are they retried:
a worker lost in the middle of a fit fails that fit's pass with Dask's error (tasks would
be rerun elsewhere, but the block a fit placed on that worker is gone with it anyway).

Passes with no shared block (nothing placed) still go through ``Client.map`` and one
``gather``.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .blocks import DaskRef, first_unpicklable
from .transport import run_chunk, wire_args

__all__ = ["dask_chunks"]

#: per-pass arguments above this size go to the Dask workers by ``scatter`` (peer to peer)
#: rather than inside the task (through the scheduler, which warns on large task graphs)
_DASK_INLINE_BYTES = 1 << 20

# client -> {worker address: (the actor's future, which keeps it alive, and the actor)}
_ACTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ACTORS_LOCK = threading.Lock()


class _ChunkActor:
    """Runs chunks on the worker it lives on, with the shared block taken from the worker's
    own data (``keys``: the key of each argument that is a block, else None)."""

    def run(self, fn, a, b, names, keys, *args):
        from distributed import get_worker

        data = get_worker().data
        resolved = [data[k] if k is not None else x for x, k in zip(args, keys)]
        return run_chunk(fn, a, b, names, *resolved)


def _actor(client, addr: str):
    """The :class:`_ChunkActor` of worker ``addr`` (made on first use, kept with the
    client)."""
    with _ACTORS_LOCK:
        per_client = _ACTORS.setdefault(client, {})
        if addr not in per_client:
            future = client.submit(_ChunkActor, workers=[addr], actor=True, pure=False)
            per_client[addr] = (future, future.result())
        return per_client[addr][1]


def dask_chunks(backend, fn, bounds, args, worker_of=None) -> list:
    """The chunks' :class:`~latentstruct.parallel.ChunkResult` objects, in chunk order;
    ``worker_of[k]`` (home workers: :mod:`latentstruct.parallel.homes`) says which of the
    block's workers runs chunk k, else chunk k goes to worker k (round robin)."""
    from distributed import Future

    client = backend.client
    calls = []
    workers = None
    for k, (a, b) in enumerate(bounds):
        names, wired = wire_args(args, "dask", backend, a, b)
        if k == 0:
            # a chunk that cannot be pickled fails here with the part named, not deep
            # in Dask
            bad = first_unpicklable(((f"argument {i}", x) for i, x in enumerate(wired)
                                      if not isinstance(x, (Future, DaskRef))), backend)
            if bad is not None:
                raise bad
            refs = [x for x in wired if isinstance(x, DaskRef)]
            workers = sorted(refs[0].placed) if refs else None
        calls.append((names, wired, a, b))
    if workers is None:
        return _mapped(client, fn, calls)
    futures = []
    for k, (names, wired, a, b) in enumerate(calls):
        # chunk k runs on the worker holding its copy of the shared block (round robin over
        # the workers the block was sent to); the kernel finds each part by (token, name)
        addr = workers[(k if worker_of is None else worker_of[k]) % len(workers)]
        names = tuple((x.token, x.name) if isinstance(x, DaskRef) else nm
                      for x, nm in zip(wired, names))
        keys = [x.placed[addr].key if isinstance(x, DaskRef) else None for x in wired]
        values = [None if isinstance(x, DaskRef) else x for x in wired]
        futures.append(_actor(client, addr).run(fn, a, b, names, keys, *values))
    return [f.result() for f in futures]


def _mapped(client, fn, calls) -> list:
    """A pass with no shared block: ``Client.map`` in one message and one ``gather``."""
    big: dict = {}  # id -> future: a large argument (w of a large model) is scattered once

    def travel(x):
        if isinstance(x, np.ndarray) and x.nbytes > _DASK_INLINE_BYTES:
            if id(x) not in big:
                (big[id(x)],) = client.scatter([x], broadcast=True, hash=False)
            return big[id(x)]
        return x

    futures: list = []
    try:
        # One message for the whole pass: chunks submitted one by one wait for the client's
        # batched stream to the scheduler (10 ms apart).
        futures = client.map(run_chunk, *zip(*[[fn, a, b, names, *[travel(x) for x in wired]]
                                                for names, wired, a, b in calls]), pure=False)
        return client.gather(futures)
    except BaseException:
        client.cancel(futures)  # an error or Ctrl-C: nothing keeps running for this pass
        raise
    finally:
        big.clear()
