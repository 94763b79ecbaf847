"""Chunk kernels of the latent learners' parallel passes over examples (latent argmax,
decision values, loss-augmented argmax): module level, so that process and cluster workers
unpickle them by name.  Each takes the chunk's bounds ``a``, ``b`` first, as
:func:`latentstruct.parallel.parallel_chunks` calls it."""

from __future__ import annotations

__all__ = ["latent_chunk", "seeded_latent_chunk", "decision_chunk", "structured_chunk"]


def latent_chunk(a, b, structure, Xs, w):
    """Latent argmax of examples a..b-1 (deterministic ties)."""
    return structure.latent_argmax_batch(Xs[a:b], w)


def seeded_latent_chunk(a, b, structure, Xs, w, seeds):
    """Latent argmax of examples a..b-1, each with its own seed (ties broken at random).

    Per-example seeds make the result independent of how examples are split into chunks, so
    ``n_jobs`` never changes the model."""
    return [structure.latent_argmax(Xs[k], w, random_state=int(seeds[k])) for k in range(a, b)]


def decision_chunk(a, b, structure, X, w):
    """[f(x) for examples a..b-1], as one array in a list."""
    return [structure.decision_batch(X[a:b], w)]


def structured_chunk(a, b, structure, X, Y, w):
    """Loss-augmented argmax results of structured examples a..b-1."""
    return structure.argmax_results(X[a:b], w, Y[a:b])
