"""Save and load a trained (task, learner) pair as one model file (JSON metadata + .npz).

The file records the task's registry name and parameters, the learner's registry name and
JSON-able hyperparameters, the fitted task state (labels, feature index) and the learned
arrays.  Loading rebuilds both objects through the registries; nothing is unpickled.
"""

from __future__ import annotations

import json

import numpy as np

from ..exceptions import ModelFormatError
from ..io import load_model, save_model
from ..params import skip_parameter_validation
from ..registry import model_task_class
from ..tasks.contracts import Structure, params_from_file
from .base import get_learner_class

__all__ = ["save_trained", "load_trained"]


def _json_params(learner) -> dict:
    params = {}
    for key, value in learner.get_params(deep=False).items():
        if key == "structure":  # the task's own state is saved beside it
            continue
        if isinstance(value, np.generic):
            value = value.item()
        try:
            json.dumps(value)
        except TypeError:
            # Arrays such as an initial weight vector are training inputs, not hyperparameters
            # a loaded model needs; record their type so the file says what was used.
            value = f"<{type(value).__name__}>"
        params[key] = value
    return params


def save_trained(path, task: Structure, learner, extra: dict | None = None) -> None:
    """Write ``task`` and fitted ``learner`` to ``path`` atomically."""
    task_state, task_arrays = task.get_state()
    learner_meta, learner_arrays = learner._learned_state()
    clash = set(task_arrays) & set(learner_arrays)
    if clash:
        raise ValueError(f"task and learner both save arrays named {sorted(clash)}")
    metadata = {
        "task": task.name,
        # where the task class was defined: named by the error a process that has not
        # imported it gets on loading (as information; loading never imports it)
        "task_module": type(task).__module__,
        "learner": learner.registry_name,
        "task_params": task.get_params(),
        "learner_params": _json_params(learner),
        "task_state": task_state,
        "learner_state": learner_meta,
        "extra": extra or {},
    }
    save_model(path, metadata, {**task_arrays, **learner_arrays})


# Learned weight vectors (the learner's, LCLR's heuristic ones, a task's POS tagger's):
# learners convert them with np.asarray(..., float64), which would quietly accept integers
# or numeric strings, so their stored dtype and values are checked first.
_WEIGHT_ARRAYS = ("coef_", "heuristic_coef_", "tagger_coef")


def _holds_text(name: str) -> bool:
    """Whether a saved array may hold text: only the ``kind`` tags of feature indexes and
    language models (``data.features``, ``data.lm``) do."""
    return name.endswith("kind")


def _check_weights(path, arrays: dict) -> None:
    if "coef_" not in arrays:
        raise ModelFormatError(f"{path}: model file has no weight vector 'coef_'; the file is "
                               "damaged or not a trained model. Retrain the model.")
    for name in _WEIGHT_ARRAYS:
        if name not in arrays:
            continue
        w = arrays[name]
        if w.dtype not in (np.float32, np.float64):
            raise ModelFormatError(
                f"{path}: weight vector {name!r} has dtype {w.dtype}; expected float32 or "
                f"float64 (latentstruct saves weights as floats); the file is damaged or "
                f"edited. Retrain the model.")
        if w.ndim != 1:
            raise ModelFormatError(
                f"{path}: weight vector {name!r} has shape {w.shape}; expected one dimension. "
                f"Retrain the model.")
        bad = np.flatnonzero(~np.isfinite(w))
        if bad.size:
            raise ModelFormatError(
                f"{path}: weight vector {name!r} has {bad.size} non-finite entries (NaN or "
                f"infinity; the first at index {int(bad[0])}, value {w[bad[0]]}); the file is "
                f"damaged. Retrain the model.")


class _ReadArrays(dict):
    """The arrays of a model file, remembering which ones were read by name."""

    def __init__(self, arrays):
        super().__init__(arrays)
        self.read: set[str] = set()

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.read.add(key)
        return value

    def get(self, key, default=None):
        if key in self:
            self.read.add(key)
        return super().get(key, default)


def _check_all_used(path, arrays: _ReadArrays, task, learner) -> None:
    """Refuse an array no part of the model reads: every array of a model file is one its
    task or learner saves (``get_state``, ``_learned_state``), optional ones included
    (``online.w``, ``online.u``, ``support_``, ``heuristic_coef_``, a tagger's arrays)."""
    unread = set(arrays) - arrays.read
    if not unread:
        return
    # an array read through a copy (a tagger's ``tagger_*`` arrays) is one the model
    # itself would save; only the names are compared
    unread -= set(task.get_state()[1]) | set(learner._learned_state()[1])
    if unread:
        name = sorted(unread)[0]
        raise ModelFormatError(
            f"{path}: model file holds the array {name!r}"
            + (f" (and {len(unread) - 1} more)" if len(unread) > 1 else "")
            + f", which neither its task ({task.name!r}) nor its learner "
            f"({learner.registry_name!r}) uses; the file is damaged or edited. Retrain the model.")


def load_trained(path, *, expected_task: str | None = None):
    """Return ``(task, learner, metadata)`` from a model file written by ``save_trained``.

    The file is data, never configuration: the task parameters that name places or code on
    this machine (``local_params`` of the task class: paths, cache directories) take their
    defaults, not the file's values, which stay in the returned ``metadata`` as information
    only.  Weight vectors must be finite float arrays.
    """
    metadata, arrays = load_model(path, expected_task=expected_task, allow_text=_holds_text)
    if metadata.get("kind") == "checkpoint":
        raise ModelFormatError(
            f"{path} is a training checkpoint, not a model file; continue the training with "
            f"`latentstruct train ... --resume {path}`, which writes the model at its end")
    _check_weights(path, arrays)
    arrays = _ReadArrays(arrays)
    task_cls = model_task_class(metadata, path)  # unregistered: say how to register it
    try:
        learner_cls = get_learner_class(metadata["learner"])
        task_params = params_from_file(task_cls, metadata["task_params"])
        # the file's values are checked even when a fit loads it (a pretrained tagger)
        with skip_parameter_validation(False):
            task = task_cls.from_state(task_params, metadata["task_state"], arrays)
        params = {k: v for k, v in metadata["learner_params"].items()
                  if not (isinstance(v, str) and v.startswith("<"))}
        learner_cls.validate_params(params)  # the file's values are checked like a user's
        learner = learner_cls(structure=task.structure(), **params)
        learner._restore(metadata["learner_state"], arrays)
        _check_all_used(path, arrays, task, learner)
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        # AttributeError: a state that should be an object is a number or a list;
        # ArithmeticError: a number beyond any float (JSON integers have any length)
        if isinstance(exc, ModelFormatError):
            # a task's from_state knows the file's content, not its name: add the name, as
            # every other refusal of a model file gives it
            if str(exc).startswith(str(path)):
                raise
            raise ModelFormatError(f"{path}: {exc}") from exc
        raise ModelFormatError(
            f"{path}: model file is inconsistent ({type(exc).__name__}: {exc}); it was written "
            "by an incompatible version or edited by hand. Retrain the model."
        ) from exc
    size = learner.coef_size(task.structure())
    if learner.coef_.shape != (size,):
        raise ModelFormatError(
            f"{path}: weight vector has {learner.coef_.shape[0]} entries but the task's feature "
            f"index defines {size}; the file is corrupt. Retrain the model."
        )
    heuristic = getattr(learner, "heuristic_coef_", None)
    if "heuristic_coef_" in arrays and heuristic.shape != (task.n_features,):
        raise ModelFormatError(
            f"{path}: heuristic weight vector has {heuristic.shape[0]} entries but the task's "
            f"feature index defines {task.n_features}; the file is corrupt. Retrain the model."
        )
    return task, learner, metadata
