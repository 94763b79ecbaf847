"""One :func:`latentstruct.parallel.parallel_chunks` pass on a Dask cluster: the chunks go
to the client of joblib's Dask backend directly, not through joblib.

joblib's own Dask backend is a layer too many for passes of a fraction of a second: it
batches calls through callbacks on the client's event loop and scatters every argument
over 1 kB to one worker first; measured on a loopback cluster, a pass of two chunks cost
~40 ms more than the chunks themselves, against ~14 ms when submitted directly.  The
backend's client, its workers and ``n_jobs`` are used as configured.

A pass's chunks go to the scheduler in one message (``Client.map``), each to the worker
holding its copy of the shared block, and the results are fetched in one ``gather`` (one
round trip per worker, not one per chunk).
"""

from __future__ import annotations

import numpy as np

from .parallel import _DaskRef, _first_unpicklable, _run_chunk, _wire_args

__all__ = ["dask_chunks"]

#: per-pass arguments above this size go to the Dask workers by ``scatter`` (peer to peer)
#: rather than inside the task (through the scheduler, which warns on large task graphs)
_DASK_INLINE_BYTES = 1 << 20


def dask_chunks(backend, fn, bounds, args) -> list:
    """The chunks' :class:`~latentstruct.parallel._Result` objects, in chunk order."""
    from distributed import Future

    client = backend.client
    big: dict = {}  # id -> future: a large argument (w of a large model) is scattered once

    def travel(x):
        if isinstance(x, np.ndarray) and x.nbytes > _DASK_INLINE_BYTES:
            if id(x) not in big:
                (big[id(x)],) = client.scatter([x], broadcast=True, hash=False)
            return big[id(x)]
        return x

    futures: list = []
    try:
        workers = None
        calls = []
        for k, (a, b) in enumerate(bounds):
            names, wired = _wire_args(args, "dask", backend, a, b)
            if k == 0:
                # a chunk that cannot be pickled fails here with the part named, not deep
                # in Dask
                bad = _first_unpicklable(((f"argument {i}", x) for i, x in enumerate(wired)
                                          if not isinstance(x, (Future, _DaskRef))), backend)
                if bad is not None:
                    raise bad
                refs = [x for x in wired if isinstance(x, _DaskRef)]
                workers = sorted(refs[0].placed) if refs else None
            if workers is not None:
                # chunk k runs where its copy of the shared block is (round robin over the
                # workers the block was sent to); the kernel finds each part by (token, name)
                addr = workers[k % len(workers)]
                names = tuple((x.token, x.name) if isinstance(x, _DaskRef) else nm
                              for x, nm in zip(wired, names))
                wired = [x.placed[addr] if isinstance(x, _DaskRef) else x for x in wired]
            calls.append([fn, a, b, names, *[travel(x) for x in wired]])
        # One message for the whole pass: chunks submitted one by one wait for the client's
        # batched stream to the scheduler (10 ms apart; a pass on a loopback cluster took
        # ~30 ms against ~17 ms).  The scheduler places each chunk on the worker holding
        # its copy of the block (its only dependency of any size); no restriction is
        # needed, and map() would set one for every chunk.
        futures = client.map(_run_chunk, *zip(*calls), pure=False)
        return client.gather(futures)
    except BaseException:
        client.cancel(futures)  # an error or Ctrl-C: nothing keeps running for this pass
        raise
    finally:
        big.clear()
