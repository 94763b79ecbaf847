"""What travels for one chunk, and what a worker does with it.

The driver replaces each shared part by what stands for it on the transport and each
:func:`~latentstruct.parallel.rows` argument by the chunk's rows (:func:`wire_args`); a
process or cluster worker turns them back into the objects, loading a block once
(:func:`resolve_part`), runs the kernel timed in sub-ranges and sends its list back as one
object with the times (:func:`run_chunk`, :class:`ChunkResult`).
"""

from __future__ import annotations

import os
import pickle  # a Dask worker's copy of a block arrives as pickled bytes
import threading
import time

from .blocks import FileRef, Part, Payload, RayRef, cached_part
from .schedule import PROBES, Rows, row_window, timed_call

__all__ = ["ChunkResult", "resolve_part", "run_chunk", "run_local", "wire_args"]


def wire_args(args, transport: str, backend, a: int, b: int) -> tuple[tuple, list]:
    """(names, wired): each argument as it travels, and for each the shared part's name
    (None for an argument that is not one).  A Dask future must be a top-level argument
    for Dask to resolve it, so the name of the part it stands for travels beside it."""
    names, out = [], []
    for x in args:
        name = None
        if isinstance(x, Part):
            name = x.name
            x = x.block._wire(transport, backend)[x.name]
        elif isinstance(x, Rows):
            x = row_window(x.seq[a:b], a)
        names.append(name)
        out.append(x)
    return tuple(names), out


def resolve_part(x, name):
    if isinstance(name, tuple):  # a Dask worker's copy of a block: pickled bytes, loaded once
        token, part = name
        return cached_part(token, part, lambda: pickle.loads(x).value)
    if isinstance(x, (FileRef, RayRef)):
        return x.load()
    return x


class ChunkResult(Payload):
    """A chunk's list as it comes back from a worker, with where and how long it ran:
    ``times`` holds :func:`~latentstruct.parallel.schedule.timed_call`'s sub-range times
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


def run_chunk(fn, a: int, b: int, names: tuple, *args) -> ChunkResult:
    """What a process or cluster worker runs: ``fn`` over ``a .. b-1`` (timed, in
    sub-ranges) with shared parts turned into the objects."""
    t0 = time.perf_counter()
    resolved = [resolve_part(x, name) for x, name in zip(args, names)]
    setup = time.perf_counter() - t0
    value, times = timed_call(fn, a, b, resolved)
    return ChunkResult(value, times, os.getpid(), setup)


#: a thread's chunk is timed in sub-ranges of at least this many items
THREAD_PROBE_ITEMS = 64


def run_local(fn, a: int, b: int, args) -> ChunkResult:
    """What a thread runs: the same, on the objects themselves, in fewer timed sub-ranges
    (one per :data:`THREAD_PROBE_ITEMS` items, at most ``PROBES``): each sub-range is a
    kernel call whose Python holds the GIL, which the other threads wait for, and a
    structural SVM's pass of a few dozen sentences cut in eight made two threads slower
    than one."""
    probes = max(1, min(PROBES, (b - a) // THREAD_PROBE_ITEMS))
    value, times = timed_call(fn, a, b, args, probes=probes)
    return ChunkResult(value, times, threading.get_ident())
