"""Map work over examples in parallel with joblib.

Inference dominates training time, and it is independent per example, so learners hand
contiguous chunks of examples to ``parallel_chunks``.  Chunks (not single examples) keep
the per-task overhead low and let a task use its batch kernels inside each chunk.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

__all__ = ["parallel_chunks", "chunk_bounds"]


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
) -> list:
    """Call ``fn(start, stop)`` on contiguous chunks and concatenate the returned lists.

    With ``n_jobs`` of 1 (or a single chunk) ``fn`` runs in this thread with no joblib
    overhead.  ``prefer="threads"`` suits numba kernels compiled with ``nogil`` and
    HiGHS, which release the GIL; use ``"processes"`` for pure-Python inference.
    """
    jobs = effective_n_jobs(n_jobs)
    if jobs == 1 or n_items <= 1:
        return list(fn(0, n_items)) if n_items else []
    bounds = chunk_bounds(n_items, jobs)
    parts = Parallel(n_jobs=jobs, prefer=prefer)(delayed(fn)(a, b) for a, b in bounds)
    out: list = []
    for p in parts:
        out.extend(p)
    return out
