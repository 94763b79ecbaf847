"""Checkpoint and resume for the iterative learners.

A checkpoint is the complete state of a training loop after an outer iteration (or epoch):
weights, working sets and cutting-plane caches with their dual variables, the random
generator's state, counters and curves.  Resuming from it continues the loop exactly where
it stopped, so an interrupted run and an uninterrupted one end with the same model (the
same floating-point operations in the same order).

**API.**  Checkpointing is a fit-time setting, not a hyperparameter::

    learner.fit(X, y, checkpoint="run.ckpt.npz")          # written after every iteration
    learner.fit(X, y, resume="run.ckpt.npz")              # continue (same data and params)
    learner.fit(X, y, checkpoint=Checkpoint(path, every=5, on_save=callback))

Where a checkpoint goes says nothing about the model, so it stays out of ``__init__``:
``get_params``/``clone``/``GridSearchCV`` see exactly the hyperparameters, and a model file
never records a path on the machine.  ``fit`` keyword arguments are scikit-learn's place
for such per-call settings (like ``sample_weight``); a ``set_checkpoint`` method would
instead leave state on the estimator that ``clone`` silently drops.

**Format.**  A checkpoint is written with :func:`latentstruct.io.save_model` (JSON metadata
plus ``.npz`` arrays, atomic, never pickle) with ``kind = "checkpoint"`` in its metadata,
so it can never be mistaken for a model file (and vice versa).  It records the learner's
hyperparameters, the task's name and parameters, the number of features and a digest of
the training data (shapes plus a BLAKE2 hash of the arrays); resuming with other data or
other hyperparameters raises ``ConfigError`` naming what differs.  Only the parameters in
the learner's ``resume_may_change`` (``n_jobs``, ``progress``, ...: they never change the
model) may differ.

**Protocol.**  A learner's loop opens a :class:`CheckpointSession` at the start of ``fit``;
``session.state`` is ``None`` for a fresh run or the ``(meta, arrays)`` its loop saved;
after each outer iteration the loop calls ``session.save(iteration, meta, arrays,
done=...)`` with its whole state (a final, ``done`` checkpoint is written too: resuming
from it returns the finished model).  :mod:`~latentstruct.learners.checkpoint_state` turns
random generators, sparse vectors and lists of arrays into JSON and arrays.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..exceptions import ConfigError, ModelFormatError
from ..io import inspect_model, load_model, save_model

__all__ = ["Checkpoint", "CheckpointSession", "CHECKPOINT_KIND", "read_checkpoint",
           "check_cli_options", "check_checkpoint_matches", "data_digest", "learner_record"]

CHECKPOINT_KIND = "checkpoint"
#: version of the loop-state layout inside a checkpoint
CHECKPOINT_VERSION = 1


@dataclass(frozen=True)
class Checkpoint:
    """Where and how often ``fit`` writes checkpoints.

    Parameters
    ----------
    path : str or os.PathLike
        File written (atomically) after every ``every``-th outer iteration and at the end.
    every : int >= 1
    on_save : callable, optional
        ``callable(iteration, path)`` called after each write (for logging; raising from it
        interrupts training right after a checkpoint, as a crash would).
    """

    path: str | os.PathLike
    every: int = 1
    on_save: Callable | None = None

    def __post_init__(self):
        if isinstance(self.every, bool) or not isinstance(self.every, numbers.Integral) \
                or self.every < 1:
            raise ConfigError(f"Checkpoint 'every' must be an int >= 1, got {self.every!r}")
        if self.on_save is not None and not callable(self.on_save):
            raise ConfigError(f"Checkpoint 'on_save' must be callable, got "
                              f"{type(self.on_save).__name__}")
        # said now rather than after the first (possibly long) iteration
        folder = os.path.dirname(os.path.abspath(os.fspath(self.path)))
        if not os.path.isdir(folder):
            raise ConfigError(f"cannot write checkpoint {os.fspath(self.path)}: the folder "
                              f"{folder} does not exist; create it or choose another path")
        if os.path.isdir(os.fspath(self.path)):
            raise ConfigError(f"checkpoint path {os.fspath(self.path)} is a folder; give a "
                              f"file name such as run.ckpt.npz")


def _as_checkpoint(value) -> Checkpoint | None:
    if value is None or isinstance(value, Checkpoint):
        return value
    if isinstance(value, (str, os.PathLike)):
        return Checkpoint(value)
    raise ConfigError(f"checkpoint must be a path or a Checkpoint, got {type(value).__name__}")


# --------------------------------------------------------------------------------------
# what identifies a run: data digest and hyperparameters
# --------------------------------------------------------------------------------------
def _feed(h, obj, seen: set) -> None:
    """Hash ``obj`` into ``h``: arrays by dtype, shape and bytes; containers and plain
    objects recursively (public attributes only: private ones are caches)."""
    if obj is None or isinstance(obj, (bool, numbers.Number, str, bytes)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
        return
    if isinstance(obj, np.generic):
        obj = np.asarray(obj)
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            h.update(f"objarray{obj.shape};".encode())
            for item in obj.ravel():
                _feed(h, item, seen)
            return
        h.update(f"array:{obj.dtype.str}{obj.shape};".encode())
        h.update(np.ascontiguousarray(obj).data)
        return
    if sp.issparse(obj):
        m = obj.tocsr()
        h.update(f"csr{m.shape};".encode())
        for part in (m.indptr, m.indices, m.data):
            _feed(h, part, seen)
        return
    if id(obj) in seen:  # shared sub-objects (and cycles) once
        h.update(b"<seen>;")
        return
    seen.add(id(obj))
    if isinstance(obj, Mapping):
        h.update(f"map{len(obj)};".encode())
        for key in sorted(obj, key=repr):
            _feed(h, key, seen)
            _feed(h, obj[key], seen)
        return
    if isinstance(obj, (list, tuple)):
        h.update(f"seq{len(obj)};".encode())
        for item in obj:
            _feed(h, item, seen)
        return
    fields = dict(getattr(obj, "__dict__", {}))
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if hasattr(obj, name):
                fields[name] = getattr(obj, name)
    h.update(f"obj:{type(obj).__qualname__};".encode())
    for name in sorted(k for k in fields if not k.startswith("_")):
        h.update(name.encode())
        _feed(h, fields[name], seen)


def data_digest(**parts) -> dict:
    """{"digest": hex, "sizes": {name: len}} of the training data ``parts`` (e.g. X=..., Y=...).

    Each part is hashed with BLAKE2b (arrays by dtype, shape and bytes): cheap next to one
    training iteration, and any change to the data changes it."""
    h = hashlib.blake2b(digest_size=16)
    sizes, digests = {}, {}
    for name in sorted(parts):
        value = parts[name]
        part = hashlib.blake2b(digest_size=16)
        _feed(part, value, set())
        digests[name] = part.hexdigest()
        h.update(name.encode() + part.digest())
        try:
            sizes[name] = len(value)
        except TypeError:
            sizes[name] = getattr(value, "n_examples", None)
    return {"digest": h.hexdigest(), "parts": digests, "sizes": sizes}


def _param_value(value):
    """A hyperparameter as recorded in a checkpoint (arrays by digest, objects by type)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.ndarray, list, tuple)) and not isinstance(value, str):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
        if arr is not None:
            h = hashlib.blake2b(np.ascontiguousarray(arr).data, digest_size=12).hexdigest()
            return f"<array {arr.shape} {h}>"
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return f"<{type(value).__name__}>"


def learner_record(learner) -> dict:
    """The learner's hyperparameters (without ``structure``) as a checkpoint records them."""
    return {k: _param_value(v) for k, v in learner.get_params(deep=False).items()
            if k != "structure"}


def _same(a, b) -> bool:
    """Equality of JSON values: 1 equals 1.0 and NaN itself, but True is no number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b or (a != a and b != b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _differences(recorded: dict, current: dict, skip, defaults: dict | None = None) -> list[str]:
    """What differs between the recorded and current parameters.  A parameter the recorded
    side lacks (it did not exist when the file was written) counts as its default in
    ``defaults``: the code that wrote the file behaved as that default does."""
    # both sides as JSON gives them back (tuples become lists), as the checkpoint holds them
    recorded, current, defaults = (json.loads(json.dumps(d, allow_nan=True))
                                   for d in (recorded, current, defaults or {}))
    out = []
    for key in sorted(set(recorded) | set(current)):
        if key in skip:
            continue
        a, b = recorded.get(key, defaults.get(key, "<unset>")), current.get(key, "<unset>")
        if not _same(a, b):
            out.append(f"{key}={a!r} in the checkpoint but {key}={b!r} now")
    return out


# --------------------------------------------------------------------------------------
# reading and checking a checkpoint file
# --------------------------------------------------------------------------------------
def read_checkpoint(path) -> tuple[dict, dict]:
    """``(metadata, arrays)`` of a checkpoint file; ``ConfigError`` if ``path`` is a model
    file, ``ModelFormatError`` if it is damaged."""
    metadata, arrays = load_model(path)
    _check_kind(path, metadata)
    return metadata, arrays


def check_cli_options(checkpoint, resume, task, learner_cls, learner_params: dict) -> None:
    """Before any data is read (``latentstruct train --checkpoint/--resume``): raise
    ``ConfigError`` unless ``checkpoint`` (a path or None) can be written and the
    checkpoint at ``resume`` (a path or None) was written by ``learner_cls`` with
    ``learner_params`` (the others at their defaults) on a task like ``task``."""
    if checkpoint is not None:
        _as_checkpoint(checkpoint)
    if resume is None:
        return
    path = resume
    metadata = inspect_model(path)
    _check_kind(path, metadata)
    record = learner_record(learner_cls(**learner_params))
    check_checkpoint_matches(path, metadata, learner_cls, record, task.name, task.get_params(),
                             frozenset(getattr(task, "local_params", ())))


def _check_kind(path, metadata) -> None:
    if metadata.get("kind") != CHECKPOINT_KIND:
        raise ConfigError(
            f"{os.fspath(path)} is a {metadata.get('learner', '?')!r} model file, not a "
            f"checkpoint; resume takes a file written by --checkpoint "
            f"(fit(..., checkpoint=PATH)), or train afresh without --resume")
    version = metadata.get("checkpoint_version")
    if version != CHECKPOINT_VERSION:
        raise ModelFormatError(
            f"checkpoint {os.fspath(path)} has layout version {version!r}; this library "
            f"resumes version {CHECKPOINT_VERSION}. Train afresh (or with the version that "
            f"wrote it)")


def check_checkpoint_matches(path, metadata: dict, learner_cls, learner_params: dict,
                             task_name: str, task_params: dict,
                             local_params=frozenset()) -> None:
    """Raise ``ConfigError`` unless the checkpoint was written by a ``learner_cls`` with
    these hyperparameters on a task ``task_name`` with these parameters.

    Needs no data, so ``latentstruct train --resume`` calls it before reading any."""
    name = os.fspath(path)
    learner = getattr(learner_cls, "registry_name", learner_cls.__name__)
    if metadata.get("learner") != learner:
        raise ConfigError(f"checkpoint {name} was written by learner {metadata.get('learner')!r},"
                          f" not {learner!r}; resume with --learner {metadata.get('learner')}")
    if metadata.get("task") != task_name:
        raise ConfigError(f"checkpoint {name} is for task {metadata.get('task')!r}, not "
                          f"{task_name!r}")
    skip = set(getattr(learner_cls, "resume_may_change", ()))
    diff = _differences(metadata.get("learner_params", {}), learner_params, skip,
                        learner_record(learner_cls()))
    if diff:
        raise ConfigError(f"checkpoint {name} was written with other learner "
                          f"hyperparameters: {'; '.join(diff)}. Resume with the same options "
                          f"(only {', '.join(sorted(skip)) or 'none'} may change), or train "
                          f"afresh without --resume")
    # parameters naming places on this machine (cache folders) do not change the task
    tdiff = _differences(metadata.get("task_params", {}), _jsonable(task_params),
                         set(local_params))
    if tdiff:
        raise ConfigError(f"checkpoint {name} was written with other task parameters: "
                          f"{'; '.join(tdiff)}. Resume with the same options, or train afresh")


def _jsonable(params: dict) -> dict:
    return {k: _param_value(v) for k, v in params.items()}


# --------------------------------------------------------------------------------------
# the session a fit holds
# --------------------------------------------------------------------------------------
class CheckpointSession:
    """What one ``fit`` does about checkpoints.

    Parameters
    ----------
    learner : the learner being fitted (its structure's ``identity`` is recorded)
    data : dict of the training data, e.g. ``{"X": X, "Y": Y}`` (only hashed, and only when
        a checkpoint is written or read)
    checkpoint : None, a path or a :class:`Checkpoint`
    resume : None or the path of a checkpoint to continue from

    ``state`` is None for a fresh run, else the ``(meta, arrays)`` the loop saved; ``iteration``
    and ``done`` are the saved iteration count and whether that run had finished.
    """

    def __init__(self, learner, data: dict, checkpoint=None, resume=None):
        self.learner = learner
        self.checkpoint = _as_checkpoint(checkpoint)
        self.state = None
        self.iteration = 0
        self.done = False
        self._record = self._digest = None
        if self.checkpoint is None and resume is None:
            return
        self._record = learner_record(learner)
        self._digest = data_digest(**data)
        if resume is not None:
            self._resume(resume)

    @property
    def active(self) -> bool:
        """Whether this fit writes checkpoints."""
        return self.checkpoint is not None

    @property
    def resuming(self) -> bool:
        """Whether this fit continues a checkpoint (``state`` holds its loop state)."""
        return self.state is not None

    def _resume(self, path) -> None:
        metadata, arrays = read_checkpoint(path)
        structure = self.learner._structure()
        who = structure.identity
        check_checkpoint_matches(path, metadata, type(self.learner), self._record, who.name,
                                 who.params, who.local_params)
        name = os.fspath(path)
        if metadata.get("n_features") != int(structure.n_features):
            raise ConfigError(
                f"checkpoint {name} has {metadata.get('n_features')} features but the task "
                f"now has {structure.n_features}; the task was fitted on other data. Resume with "
                f"the same training data")
        recorded = metadata.get("data_digest") or {}
        if recorded.get("digest") != self._digest["digest"]:
            what = [f"{part} ({recorded.get('sizes', {}).get(part)} examples in the checkpoint, "
                    f"{self._digest['sizes'].get(part)} now)"
                    for part in sorted(self._digest["parts"])
                    if recorded.get("parts", {}).get(part) != self._digest["parts"][part]]
            raise ConfigError(
                f"checkpoint {name} was written for other training data: {', '.join(what)} "
                f"differ. Resume with the data the checkpoint was written for, or train "
                f"afresh without --resume")
        state = metadata.get("state")
        if not isinstance(state, dict):
            raise ModelFormatError(f"checkpoint {name} has no loop state; it is damaged")
        prefix = "state."
        self.state = (state, {k[len(prefix):]: v for k, v in arrays.items()
                              if k.startswith(prefix)})
        self.iteration = int(metadata.get("iteration", 0))
        self.done = bool(metadata.get("done", False))
        self._path = name

    def restored(self, key: str):
        """``meta[key]`` of the resumed state, with a clear error if it is missing."""
        meta, arrays = self.state
        if key in meta:
            return meta[key]
        if key in arrays:
            return arrays[key]
        raise ModelFormatError(f"checkpoint {self._path} lacks {key!r} in its loop state; it "
                               f"was written by another version or is damaged")

    def save(self, iteration: int, meta: dict, arrays: dict, *, done: bool = False) -> None:
        """Write the loop state after ``iteration`` (every ``every``-th and the last)."""
        ck = self.checkpoint
        if ck is None:
            return
        if not done and iteration % int(ck.every):
            return
        structure = self.learner._structure()
        metadata = {
            "kind": CHECKPOINT_KIND,
            "checkpoint_version": CHECKPOINT_VERSION,
            "task": structure.identity.name,
            "learner": getattr(type(self.learner), "registry_name", type(self.learner).__name__),
            "task_params": _jsonable(structure.identity.params),
            "learner_params": self._record,
            "n_features": int(structure.n_features),
            "data_digest": self._digest,
            "iteration": int(iteration),
            "done": bool(done),
            "state": meta,
        }
        save_model(ck.path, metadata, {f"state.{k}": v for k, v in arrays.items()})
        if ck.on_save is not None:
            ck.on_save(int(iteration), ck.path)
