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
importing this package settles one (:mod:`latentstruct.parallel.numba_cache`), and shared data
is unpickled only after it.

**Chunks** are cut by each example's measured cost in the fit's earlier passes, not by
count (:mod:`latentstruct.parallel.schedule`); a block whose parts are declared as subsets
of a base (:func:`subset`) sends each example to the same worker in every pass
(:mod:`latentstruct.parallel.homes`).  The results never depend on the cut.

Modules: :mod:`.blocks` (shared blocks and fit sessions), :mod:`.chunks` (the map),
:mod:`.transport` (what a chunk carries and what a worker runs), :mod:`.schedule` (cuts by
cost, the pass log), :mod:`.homes` (home workers), :mod:`.loky` (process workers with a
fixed identity), :mod:`.dask` (Dask actors), :mod:`.numba_cache`.
"""

from __future__ import annotations

from .numba_cache import ensure_numba_cache  # first: settles the numba cache  # isort: skip
from .blocks import SharedData, fit_session, shared, worker_copy
from .chunks import parallel_chunks, sends_to_other_processes
from .homes import subset
from .schedule import chunk_bounds, pass_log, rows

__all__ = ["SharedData", "chunk_bounds", "ensure_numba_cache", "fit_session", "parallel_chunks",
           "pass_log", "rows", "sends_to_other_processes", "shared", "subset", "worker_copy"]
