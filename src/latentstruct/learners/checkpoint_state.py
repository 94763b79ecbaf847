"""Loop state as checkpoint data: JSON for scalars and random generators, arrays for
vectors (see :mod:`latentstruct.learners.checkpoint`).  Every encoder has its decoder, and
a round trip gives back bit-identical values (floats go through JSON as their shortest
repr, which Python reads back exactly)."""

from __future__ import annotations

import numpy as np

from ..data.sparse import SparseVector
from ..exceptions import ConfigError

__all__ = ["rng_state", "rng_from_state", "pack_sparse", "unpack_sparse", "pack_arrays",
           "unpack_arrays", "pack_bytes", "unpack_bytes", "prefixed", "unprefixed",
           "monitor_state", "restore_monitor"]

def _json_tree(value):
    """Arrays inside a bit generator's state (Philox, MT19937 keys) as tagged lists."""
    if isinstance(value, dict):
        return {k: _json_tree(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": value.dtype.str}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _from_json_tree(value):
    if isinstance(value, dict):
        if "__ndarray__" in value:
            return np.array(value["__ndarray__"], dtype=np.dtype(value["dtype"]))
        return {k: _from_json_tree(v) for k, v in value.items()}
    return value


def rng_state(rng: np.random.Generator) -> dict:
    """The state of a numpy ``Generator`` (any bit generator) as JSON-able data."""
    return _json_tree(rng.bit_generator.state)


def rng_from_state(state: dict) -> np.random.Generator:
    """A generator in exactly the state :func:`rng_state` recorded."""
    state = _from_json_tree(state)
    bit_generator = getattr(np.random, state["bit_generator"])()
    bit_generator.state = state
    return np.random.Generator(bit_generator)


def pack_sparse(vectors: list) -> dict:
    """Arrays holding a list of SparseVectors exactly (indices and values as stored)."""
    lengths = np.array([v.indices.shape[0] for v in vectors], dtype=np.int64)
    ptr = np.zeros(len(vectors) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    idx = np.concatenate([v.indices for v in vectors]) if vectors else np.zeros(0, np.int64)
    val = np.concatenate([v.values for v in vectors]) if vectors else np.zeros(0)
    return {"ptr": ptr, "indices": idx.astype(np.int64), "values": val.astype(np.float64)}


def unpack_sparse(arrays: dict) -> list:
    """The SparseVectors :func:`pack_sparse` stored."""
    ptr, idx, val = arrays["ptr"], arrays["indices"], arrays["values"]
    return [SparseVector(idx[a:b].copy(), val[a:b].copy()) for a, b in zip(ptr[:-1], ptr[1:])]


def pack_arrays(items: list) -> tuple[dict, dict]:
    """(meta, arrays) holding a list of numeric arrays (any shapes, one dtype) exactly."""
    items = [np.asarray(a) for a in items]
    dtypes = {a.dtype.str for a in items}
    if len(dtypes) > 1 or any(a.dtype.hasobject for a in items):
        raise ConfigError(f"cannot checkpoint structures of dtypes {sorted(dtypes)}; a "
                          f"checkpoint holds structures of one numeric dtype")
    dtype = dtypes.pop() if dtypes else "<i8"
    flat = (np.concatenate([a.ravel() for a in items]) if items
            else np.zeros(0, dtype=np.dtype(dtype)))
    return {"dtype": dtype, "shapes": [list(a.shape) for a in items]}, {"data": flat}


def unpack_arrays(meta: dict, arrays: dict) -> list:
    """The arrays :func:`pack_arrays` stored."""
    data = arrays["data"].astype(np.dtype(meta["dtype"]), copy=False)
    out, pos = [], 0
    for shape in meta["shapes"]:
        size = int(np.prod(shape, dtype=np.int64))
        out.append(data[pos : pos + size].reshape(shape).copy())
        pos += size
    return out


def pack_bytes(items: list) -> dict:
    """Arrays holding a list of byte strings (such as structure keys)."""
    ptr = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in items], out=ptr[1:])
    buf = np.frombuffer(b"".join(items), dtype=np.uint8).copy()
    return {"ptr": ptr, "bytes": buf}


def unpack_bytes(arrays: dict) -> list:
    """The byte strings :func:`pack_bytes` stored."""
    ptr, buf = arrays["ptr"], arrays["bytes"]
    return [buf[a:b].tobytes() for a, b in zip(ptr[:-1], ptr[1:])]


def prefixed(prefix: str, arrays: dict) -> dict:
    """``arrays`` with ``prefix.`` before every name."""
    return {f"{prefix}.{k}": v for k, v in arrays.items()}


def unprefixed(prefix: str, arrays: dict) -> dict:
    """The arrays whose names start with ``prefix.``, without it."""
    p = prefix + "."
    return {k[len(p):]: v for k, v in arrays.items() if k.startswith(p)}


def monitor_state(monitor) -> dict:
    """An InferenceMonitor's counters as JSON."""
    return {"statuses": dict(monitor.statuses), "n_decodes": monitor.n_decodes,
            "n_inconsistent": monitor.n_inconsistent, "per_iteration": list(monitor.per_iteration),
            "iteration": monitor._iteration}


def restore_monitor(monitor, state: dict) -> None:
    """Put the counters :func:`monitor_state` recorded back into ``monitor``."""
    monitor.statuses.clear()
    monitor.statuses.update(state["statuses"])
    monitor.n_decodes = int(state["n_decodes"])
    monitor.n_inconsistent = int(state["n_inconsistent"])
    monitor.per_iteration = [int(v) for v in state["per_iteration"]]
    monitor._iteration = int(state["iteration"])
