"""``SaveLogger``: PyStruct's checkpointing logger, writing no pickle.

PyStruct pickled the whole learner.  Here a learner is saved as one zip file (the
layout of numpy's ``.npz``): ``state.json`` describes the object tree (numbers, strings,
lists, tuples, dicts and the learner's and model's own attributes) and every array is a
``.npy`` member beside it, read back with ``allow_pickle=False``.  Only objects whose
class lives in ``latentstruct.pystruct`` are rebuilt (by class name, without calling a
constructor), so loading a file never runs code the file names; an attribute of any other
type (a random state, an open pool) is not saved, listed under ``"not_saved"``, and comes
back as None.
"""

from __future__ import annotations

import importlib
import io
import json
import zipfile

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.exceptions import ConfigError, ModelFormatError

__all__ = ["SaveLogger", "save_learner", "load_learner"]

FORMAT = "latentstruct.pystruct.SaveLogger/1"
ROOT_PACKAGE = "latentstruct.pystruct"
# attributes that refer back to the saving machinery itself
TRANSIENT = frozenset({"logger"})


class _Encoder:
    """Turns an object tree into JSON-able values and a list of arrays."""

    def __init__(self):
        self.arrays: list[np.ndarray] = []
        self.not_saved: list[str] = []

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value) if np.isfinite(value) else {"$float": repr(float(value))}
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                return {"$objarray": [self.encode(v, f"{where}[{i}]")
                                      for i, v in enumerate(value.ravel())],
                        "shape": list(value.shape)}
            self.arrays.append(value)
            return {"$array": len(self.arrays) - 1}
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {"$dict": [[self.encode(k, f"{where} key"), self.encode(v, f"{where}[{k!r}]")]
                              for k, v in value.items()]}
        cls = type(value)
        if cls.__module__.startswith(ROOT_PACKAGE) and hasattr(value, "__dict__"):
            state = {}
            for name, attr in vars(value).items():
                if name in TRANSIENT:
                    state[name] = None
                    continue
                state[name] = self.encode(attr, f"{where}.{name}")
            return {"$object": f"{cls.__module__}:{cls.__qualname__}", "state": state}
        self.not_saved.append(f"{where} ({cls.__module__}.{cls.__qualname__})")
        return None


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays

    def decode(self, value):
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "$array" in value:
            return self.arrays[value["$array"]]
        if "$float" in value:
            return float(value["$float"])
        if "$tuple" in value:
            return tuple(self.decode(v) for v in value["$tuple"])
        if "$dict" in value:
            return {_hashable(self.decode(k)): self.decode(v) for k, v in value["$dict"]}
        if "$objarray" in value:
            items = [self.decode(v) for v in value["$objarray"]]
            out = np.empty(len(items), dtype=object)
            out[:] = items if items else []
            return out.reshape(value["shape"])
        if "$object" in value:
            cls = _resolve(value["$object"])
            obj = cls.__new__(cls)
            obj.__dict__.update({k: self.decode(v) for k, v in value["state"].items()})
            return obj
        raise ModelFormatError(f"unknown entry {sorted(value)[:3]}")


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def _resolve(name: str):
    module_name, _, qualname = name.partition(":")
    if not (module_name == ROOT_PACKAGE or module_name.startswith(ROOT_PACKAGE + ".")):
        raise ModelFormatError(f"the file names class {name!r}, outside {ROOT_PACKAGE}; only "
                             f"latentstruct.pystruct's learners and models are loaded")
    target = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if not isinstance(target, type):
        raise ModelFormatError(f"the file names class {name!r}, which this version of "
                             f"latentstruct does not have")
    return target


def save_learner(learner, file_name) -> list[str]:
    """Write ``learner`` (and its model) to ``file_name``; returns what was not saved."""
    encoder = _Encoder()
    tree = encoder.encode(learner, "learner")
    header = {"format": FORMAT, "tree": tree, "not_saved": encoder.not_saved}
    with atomic_write(file_name, "wb") as handle:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("state.json", json.dumps(header))
            for i, array in enumerate(encoder.arrays):
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, np.ascontiguousarray(array),
                                          allow_pickle=False)
                archive.writestr(f"a{i}.npy", buffer.getvalue())
    return encoder.not_saved


def load_learner(file_name):
    """Read back a learner written by ``save_learner``."""
    try:
        with zipfile.ZipFile(file_name) as archive:
            header = json.loads(archive.read("state.json"))
            if header.get("format") != FORMAT:
                raise ModelFormatError(f"{file_name}: format {header.get('format')!r}; expected "
                                     f"{FORMAT!r} (a file written by SaveLogger)")
            arrays = {}
            for name in archive.namelist():
                if name.endswith(".npy"):
                    with archive.open(name) as member:
                        arrays[int(name[1:-4])] = np.lib.format.read_array(
                            io.BytesIO(member.read()), allow_pickle=False)
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, ValueError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"{file_name}: not a SaveLogger file ({exc}); save the learner "
                             f"with SaveLogger.save first (PyStruct's pickles are not read)"
                             ) from exc
    return _Decoder(arrays).decode(header["tree"])


class SaveLogger:
    """Saves a learner while it trains, and loads it back.

    Parameters
    ----------
    file_name : str
        Where to save; a ``%d`` in it is replaced by the iteration, giving one file per save.
    save_every : int
        A learner calls the logger each iteration; it saves every ``save_every``-th one
        and at the end (iteration ``"final"``).
    verbose : int
        Print where each save went.
    """

    def __init__(self, file_name, save_every=10, verbose=0):
        if not isinstance(save_every, (int, np.integer)) or save_every < 1:
            raise ConfigError(f"SaveLogger: save_every={save_every!r}; expected a positive "
                              f"integer (save every that many iterations)")
        self.file_name = file_name
        self.save_every = save_every
        self.verbose = verbose

    def __repr__(self):
        return (f"{type(self).__name__}(file_name={self.file_name!r}, "
                f"save_every={self.save_every})")

    def __call__(self, learner, iteration=0):
        """Save ``learner`` if ``iteration`` is ``"final"`` or a multiple of ``save_every``."""
        if iteration == "final" or int(iteration) % self.save_every == 0:
            name = self.file_name
            if "%d" in name:
                name = name.replace("%d", "final" if iteration == "final" else str(int(iteration)))
            self.save(learner, name)

    def save(self, learner, file_name=None):
        """Write ``learner`` to ``file_name`` (default: this logger's file)."""
        file_name = self.file_name if file_name is None else file_name
        not_saved = save_learner(learner, file_name)
        if self.verbose:
            extra = f" (not saved: {', '.join(not_saved)})" if not_saved else ""
            print(f"saving {type(learner).__name__} to {file_name}{extra}")

    def load(self):
        """The learner saved in ``file_name``."""
        return load_learner(self.file_name)
