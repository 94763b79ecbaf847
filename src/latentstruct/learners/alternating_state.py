"""The state of the alternating loop (LCLR, J-LIS, LCLR-variant) as checkpoint data.

After an outer iteration the loop is fully described by: the weights (current and initial),
the constraint pool with its dual variables, each positive's constraint id, structure and
feature vector, each negative's (and each structured example's) cache in insertion order,
the random generator, the inference monitor's counters and the curves.  ``pack_loop``
turns them into ``(meta, arrays)`` for :class:`~latentstruct.learners.checkpoint.
CheckpointSession`; ``unpack_loop`` rebuilds them bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import ModelFormatError
from ..solvers.dcd import ConstraintPool
from .checkpoint_state import (
    monitor_state,
    pack_arrays,
    pack_bytes,
    pack_sparse,
    prefixed,
    restore_monitor,
    rng_from_state,
    rng_state,
    unpack_arrays,
    unpack_bytes,
    unpack_sparse,
    unprefixed,
)

__all__ = ["pack_loop", "unpack_loop"]


def pack_loop(*, w, w_init, pool, pos_constraint, pos_structure, pos_phi, cache, rng, monitor,
              counters: dict) -> tuple[dict, dict]:
    """(meta, arrays) of the loop after an outer iteration (``counters``: JSON scalars and
    lists, such as the curves and the iteration number)."""
    pool_meta, pool_arrays = pool.get_state()
    pos_ids = list(pos_structure)
    s_meta, s_arrays = pack_arrays([pos_structure[i] for i in pos_ids])
    owners, keys, vectors, losses = [], [], [], []
    for j, entries in cache.items():
        for key, value in entries.items():
            owners.append(j)
            keys.append(key)
            if isinstance(value, tuple):  # a structured example's (d, loss)
                vectors.append(value[0])
                losses.append(value[1])
            else:
                vectors.append(value)
                losses.append(np.nan)
    meta = {**counters, "pool": pool_meta, "structures": s_meta, "rng": rng_state(rng),
            "monitor": monitor_state(monitor), "cache_owners": list(cache)}
    arrays = {"w": w, "w_init": w_init, "pos_constraint": pos_constraint,
              "pos_ids": np.asarray(pos_ids, dtype=np.int64),
              "cache_owner": np.asarray(owners, dtype=np.int64),
              "cache_loss": np.asarray(losses, dtype=np.float64),
              **prefixed("pool", pool_arrays), **prefixed("structure", s_arrays),
              **prefixed("pos_phi", pack_sparse([pos_phi[i] for i in pos_ids])),
              **prefixed("cache_key", pack_bytes(keys)),
              **prefixed("cache_phi", pack_sparse(vectors))}
    return meta, arrays


def unpack_loop(meta: dict, arrays: dict, *, n_structured_from: int, monitor) -> dict:
    """The loop's containers from ``pack_loop``'s output: w, w_init, pool, pos_constraint,
    pos_structure, pos_phi, cache, rng (the monitor is restored in place).  Cache owners
    ``>= n_structured_from`` are structured examples, whose entries are (d, loss)."""
    try:
        pool = ConstraintPool.from_state(meta["pool"], unprefixed("pool", arrays))
        pos_ids = [int(i) for i in arrays["pos_ids"]]
        structures = unpack_arrays(meta["structures"], unprefixed("structure", arrays))
        phis = unpack_sparse(unprefixed("pos_phi", arrays))
        cache = {int(j): {} for j in meta["cache_owners"]}
        keys = unpack_bytes(unprefixed("cache_key", arrays))
        vectors = unpack_sparse(unprefixed("cache_phi", arrays))
        for j, key, vec, loss in zip(arrays["cache_owner"], keys, vectors, arrays["cache_loss"],
                                      strict=True):
            j = int(j)
            cache[j][key] = (vec, float(loss)) if j >= n_structured_from else vec
        restore_monitor(monitor, meta["monitor"])
        return {
            "w": np.array(arrays["w"], dtype=np.float64),
            "w_init": np.array(arrays["w_init"], dtype=np.float64),
            "pool": pool,
            "pos_constraint": np.array(arrays["pos_constraint"], dtype=np.int64),
            "pos_structure": dict(zip(pos_ids, structures, strict=True)),
            "pos_phi": dict(zip(pos_ids, phis, strict=True)),
            "cache": cache,
            "rng": rng_from_state(meta["rng"]),
        }
    except (KeyError, ValueError, IndexError) as exc:
        raise ModelFormatError(f"the checkpoint's loop state is damaged or from another "
                               f"version ({type(exc).__name__}: {exc}); train afresh") from exc
