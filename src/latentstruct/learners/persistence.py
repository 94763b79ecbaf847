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
from ..tasks.base import StructuredTask, get_task_class
from .base import get_learner_class

__all__ = ["save_trained", "load_trained"]


def _json_params(learner) -> dict:
    params = {}
    for key, value in learner.get_params(deep=False).items():
        if key == "task":
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


def save_trained(path, task: StructuredTask, learner, extra: dict | None = None) -> None:
    """Write ``task`` and fitted ``learner`` to ``path`` atomically."""
    task_state, task_arrays = task.get_state()
    learner_meta, learner_arrays = learner._learned_state()
    clash = set(task_arrays) & set(learner_arrays)
    if clash:
        raise ValueError(f"task and learner both save arrays named {sorted(clash)}")
    metadata = {
        "task": task.name,
        "learner": learner.registry_name,
        "task_params": task.get_params(),
        "learner_params": _json_params(learner),
        "task_state": task_state,
        "learner_state": learner_meta,
        "extra": extra or {},
    }
    save_model(path, metadata, {**task_arrays, **learner_arrays})


def load_trained(path, *, expected_task: str | None = None):
    """Return ``(task, learner, metadata)`` from a model file written by ``save_trained``."""
    metadata, arrays = load_model(path, expected_task=expected_task)
    try:
        task_cls = get_task_class(metadata["task"])
        learner_cls = get_learner_class(metadata["learner"])
        task = task_cls.from_state(metadata["task_params"], metadata["task_state"], arrays)
        params = {k: v for k, v in metadata["learner_params"].items()
                  if not (isinstance(v, str) and v.startswith("<"))}
        learner = learner_cls(task=task, **params)
        learner._restore(metadata["learner_state"], arrays)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(
            f"{path}: model file is inconsistent ({type(exc).__name__}: {exc}); it was written "
            "by an incompatible version or edited by hand. Retrain the model."
        ) from exc
    if learner.coef_.shape != (learner.coef_size(task),):
        raise ModelFormatError(
            f"{path}: weight vector has {learner.coef_.shape[0]} entries but the task's feature "
            f"index defines {learner.coef_size(task)}; the file is corrupt. Retrain the model."
        )
    return task, learner, metadata
