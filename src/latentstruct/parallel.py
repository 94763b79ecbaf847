"""Map work over examples in parallel with joblib.

Inference dominates training time, and it is independent per example, so learners hand
contiguous chunks of examples to ``parallel_chunks``.  Chunks (not single examples) keep
the per-task overhead low and let a task use its batch kernels inside each chunk.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from .data.progress import progress_bar, progress_enabled

__all__ = ["parallel_chunks", "chunk_bounds"]

_PROGRESS_CHUNKS = 50  # chunks per pass when a progress bar may be shown


def chunk_bounds(n_items: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n_items)`` into at most ``n_chunks`` contiguous, near-equal pieces."""
    n_chunks = max(1, min(n_chunks, n_items))
    edges = np.linspace(0, n_items, n_chunks + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def parallel_chunks(
    fn: Callable[[int, int], list],
    n_items: int,
    n_jobs: int | None = 1,
    *,
    prefer: str = "threads",
    desc: str = "inference",
) -> list:
    """Call ``fn(start, stop)`` on contiguous chunks and concatenate the returned lists.

    With ``n_jobs`` of 1 (or a single chunk) ``fn`` runs in this thread with no joblib
    overhead.  ``prefer="threads"`` suits numba kernels compiled with ``nogil`` and
    HiGHS, which release the GIL; use ``"processes"`` for pure-Python inference.
    When progress bars are on (``latentstruct.data.progress.show_progress``; the command
    line's default), a pass over more than 2 s shows one, named ``desc``.
    """
    jobs = effective_n_jobs(n_jobs)
    if progress_enabled() and n_items > 1:
        return _with_progress(fn, n_items, jobs, prefer, desc)
    if jobs == 1 or n_items <= 1:
        return list(fn(0, n_items)) if n_items else []
    bounds = chunk_bounds(n_items, jobs)
    parts = Parallel(n_jobs=jobs, prefer=prefer)(delayed(fn)(a, b) for a, b in bounds)
    out: list = []
    for p in parts:
        out.extend(p)
    return out


def _with_progress(fn, n_items: int, jobs: int, prefer: str, desc: str) -> list:
    """``parallel_chunks`` in more, smaller chunks, so that a bar (shown after 2 s) can
    advance.  Learners' results never depend on the chunking (``n_jobs`` must not change a
    model, so ``fn`` is per-example; seeded tie-breaks carry one seed per example)."""
    bounds = chunk_bounds(n_items, max(jobs, min(n_items, _PROGRESS_CHUNKS)))
    if jobs == 1:
        parts = (fn(a, b) for a, b in bounds)
    else:
        parts = Parallel(n_jobs=jobs, prefer=prefer, return_as="generator")(
            delayed(fn)(a, b) for a, b in bounds)
    out: list = []
    with progress_bar(n_items, desc, unit="ex") as bar:
        for (a, b), p in zip(bounds, parts):
            out.extend(p)
            bar.update(b - a)
    return out
