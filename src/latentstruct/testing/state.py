"""The persistence checks of :func:`~latentstruct.testing.tasks.check_task`.

A task is saved as a model file (``get_params`` and the state of ``get_state`` as JSON, its
arrays in an .npz) and shipped to process workers (``parallel.worker_copy``).  :func:`check_state` checks both
round trips: the restored task must give the same feature vectors and scores as the
original on every example and weight vector (``state-json``, ``state-round-trip``,
``pickle-round-trip``).  Internal: the public entry point is
:func:`latentstruct.testing.check_task`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import is_fitted
from latentstruct.parallel import worker_copy
from .capabilities import CapabilityChecker, noted
from latentstruct.tasks.contracts import (
    CANDIDATE_LIST,
    params_from_file,
    LATENT_BINARY,
    MARGINALIZABLE,
    MAX_DECODABLE,
)

__all__ = ["check_state"]


def check_state(checker: CapabilityChecker, pairs, dataset, weights, latent_h) -> None:
    """``state-json``, ``state-round-trip`` and ``pickle-round-trip`` on ``pairs`` (and on the
    restored task's own featurisation of ``dataset``, if any); ``latent_h[i, k]`` is the
    hidden structure decoded for example i and weights k, whose features are compared."""
    task, where = checker.owner, checker.where()
    cls = type(task)
    with noted("check_task: raised while checking the task's state (get_state/from_state)"):
        params = task.get_params()
        got = task.get_state()
        checker.mark("state-json")
        if not isinstance(got, tuple) or len(got) != 2:
            checker.fail("state-json", where, f"get_state() returned {type(got).__name__}; "
                         "expected a (state dict, arrays dict) pair")
        state, arrays = got
        try:
            text = json.dumps({"params": params, "state": state}, default=_json_scalar)
        except (TypeError, ValueError) as exc:
            checker.fail("state-json", where, (
                f"get_params() or the state of get_state() is not JSON-serialisable ({exc}); "
                "a model file stores them as JSON: keep dicts, lists, strings, numbers, "
                "booleans and None there and put arrays in the arrays dict"))
        loaded = json.loads(text)
        if not isinstance(arrays, dict) or not all(
                isinstance(key, str) and isinstance(v, np.ndarray) and v.dtype.kind != "O"
                for key, v in arrays.items()):
            checker.fail("state-json", where, (
                "the arrays of get_state() must be a dict of str -> numpy arrays without "
                f"object dtype (a model file stores them in .npz); got {_describe(arrays)}"))
        arrays = {key: np.array(v) for key, v in arrays.items()}
        restored = cls.from_state(params_from_file(cls, loaded["params"]), loaded["state"],
                                  arrays)
    _check_restored(checker, "state-round-trip", "from_state(get_state())", restored, pairs,
                    dataset, weights, latent_h)
    checker.mark("pickle-round-trip")
    try:
        copy = worker_copy(task)
    except Exception as exc:  # any serialisation failure is the finding
        checker.fail("pickle-round-trip", where, (
            f"the task does not survive the trip to a process worker (serialised and loaded "
            f"back as the parallel seam sends it): {type(exc).__name__}: {exc}"))
    _check_restored(checker, "pickle-round-trip", "the worker's copy of the task", copy,
                    pairs, dataset, weights, latent_h)


def _check_restored(checker, name, how, restored, pairs, dataset, weights, latent_h) -> None:
    task, where = checker.owner, checker.where()
    checker.mark(name)
    if type(restored) is not type(task):
        checker.fail(name, where, f"{how} gave a {type(restored).__name__}, expected a "
                     f"{type(task).__name__}")
    if not is_fitted(restored):
        checker.fail(name, where, f"{how} gave a task that is not fitted (is_fitted(task) is False)")
    if restored.n_features != task.n_features:
        checker.fail(name, where, f"{how} gave a task with n_features = "
                     f"{restored.n_features!r}, the original has {task.n_features!r}")
    theirs_pairs = [pairs]
    if dataset is not None:
        X2 = restored.structure_object().as_batch(restored.featurize(dataset))
        Y2 = restored.encode_targets(dataset.targets)
        if len(X2) != len(pairs):
            checker.fail(name, where, f"{how}: the restored task featurises the dataset to "
                         f"{len(X2)} examples, the original to {len(pairs)}")
        theirs_pairs.append([(X2[i], Y2[i]) for i in range(len(X2))])
    for j, other in enumerate(theirs_pairs):
        label = how if j == 0 else f"{how}, on its own featurisation of the dataset"
        for i, ((x, y), (x2, y2)) in enumerate(zip(pairs, other)):
            for k, w in enumerate(weights):
                where = checker.where(i, k)
                with noted(f"check_task: raised while checking {where} ({label})"):
                    h = latent_h.get((i, k))
                    mine = _signature(checker.caps, task.structure_object(), x, y, w, h)
                    theirs = _signature(checker.caps, restored.structure_object(), x2, y2, w,
                                        h)
                    _compare(checker, name, where, label, mine, theirs)


def _signature(caps, task, x, y, w, h) -> list[tuple[str, Any]]:
    """What a restored task's structure (``task``, its ``structure_object()``) must
    reproduce on one example: feature vectors and scores."""
    out: list[tuple[str, Any]] = []
    if MAX_DECODABLE in caps:
        out.append(("joint_feature(x, y)", task.joint_feature(x, y)))
        out.append(("argmax score", task.argmax(x, w).score))
        out.append(("loss-augmented argmax score", task.argmax(x, w, y_true=y).score))
    if LATENT_BINARY in caps:
        out.append(("latent_feature(x, h)", task.latent_feature(x, h)))
        out.append(("latent_argmax score", task.latent_argmax(x, w).score))
    if MARGINALIZABLE in caps:
        out.append(("log_partition", task.log_partition(x, w)))
    if CANDIDATE_LIST in caps:
        out.append(("candidate_log_partitions",
                    np.asarray(task.candidate_log_partitions(x, w), dtype=np.float64)))
    return out


def _compare(checker, name, where, how, mine, theirs) -> None:
    checker.mark(name)
    for (label, a), (_, b) in zip(mine, theirs):
        if isinstance(a, SparseVector):
            if not isinstance(b, SparseVector):
                checker.fail(name, where,
                             f"{how}: {label} is a {type(b).__name__}, not a SparseVector")
            a, b = a.coalesce(), b.coalesce()
            if not np.array_equal(a.indices, b.indices):
                checker.fail(name, where, (
                    f"{how}: {label} has other feature indices than the original's "
                    f"({b.indices[:10].tolist()}... vs {a.indices[:10].tolist()}...); the "
                    "restored task maps the example to other features"))
            checker.expect_arrays_close(name, where, b.values, a.values, lambda worst: (
                f"{how}: {label} differs from the original's by up to {worst!r}"))
        elif isinstance(a, np.ndarray):
            checker.expect_arrays_close(name, where, b, a, lambda worst: (
                f"{how}: {label} differs from the original's by up to {worst!r}: "
                f"{np.asarray(b).tolist()} vs {a.tolist()}"))
        else:
            checker.expect_close(name, where, b, a, lambda: (
                f"{how}: {label} is {b!r}, the original's is {a!r}"))


def _json_scalar(value):
    """``json.dumps`` default: numpy scalars as the model file stores them."""
    if isinstance(value, (np.bool_, np.integer, np.floating, np.str_)):
        return value.item()
    raise TypeError(f"{type(value).__module__}.{type(value).__qualname__} object {value!r} is "
                    "not JSON-serialisable")


def _describe(arrays) -> str:
    if not isinstance(arrays, dict):
        return f"a {type(arrays).__name__}"
    parts = []
    for key, v in list(arrays.items())[:5]:
        kind = f"{v.dtype} array" if isinstance(v, np.ndarray) else type(v).__name__
        parts.append(f"{key!r}: {kind}")
    return "{" + ", ".join(parts) + (", ...}" if len(arrays) > 5 else "}")
