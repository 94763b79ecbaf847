"""How the labels of raw ``y`` reach a task, for the estimators: a classifier's classes
(any JSON scalar type), a binary task's two classes, ``partial_fit``'s declared label set,
and the ``classes_`` of a loaded model.  A label the model does not have is refused here
(``UnseenLabelError``), never turned into something else."""

from __future__ import annotations

import numpy as np

from ..exceptions import ConfigError, InputError, ModelFormatError
from ..tasks.validation import UnseenLabelError

__all__ = ["declared_classes", "check_declared", "check_in_classes", "object_array",
           "json_scalar", "classes_from"]


def declared_classes(classes, name: str):
    """``partial_fit``'s first-call ``classes`` as a list (None stays None: the task says
    after fitting whether it has a label set that needed it)."""
    if classes is None:
        return None
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise ConfigError(f"{name}.partial_fit: classes must be a list of labels (the full "
                          f"label set of the stream), got {classes!r}")
    declared = list(classes.tolist() if isinstance(classes, np.ndarray) else classes)
    if not declared:
        raise ConfigError(f"{name}.partial_fit: classes is empty; give the full label set "
                          f"of the stream")
    if len({str(c) for c in declared}) != len(declared):
        raise ConfigError(f"{name}.partial_fit: classes lists a label twice ({declared!r})")
    return declared


def check_declared(task, declared, name: str) -> None:
    """After the first ``partial_fit`` batch fitted the task: its label set must be
    ``declared`` exactly (a batch label outside ``classes`` is refused, naming it), and a
    task with a label set needs ``classes``."""
    labels = getattr(task, "labels_", None)
    if labels is None:
        labels = getattr(task, "classes_", None)
    if labels is None:
        return
    labels = [str(v) for v in labels]
    if declared is None:
        if labels:
            raise ConfigError(
                f"{name}.partial_fit needs classes=[...] on its first call: the full label set "
                f"of the stream (this batch holds {len(labels)}: "
                f"{', '.join(labels[:10])}{', ...' if len(labels) > 10 else ''}), so that a "
                f"label first seen in a later batch has its weights from the start")
        return
    extra = sorted(set(labels) - {str(c) for c in declared})
    if extra:
        raise UnseenLabelError(
            f"the first batch holds the label {extra[0]!r}, which classes= does not list "
            f"({', '.join(map(str, declared))}); classes must give every label of the "
            f"stream", extra[0], declared)


def check_in_classes(y: np.ndarray, classes: list) -> None:
    """InputError naming the first label of ``y`` that is not one of ``classes``."""
    known = np.isin(y, np.asarray(classes, dtype=object)) if len(y) else np.ones(0, bool)
    if not known.all():
        k = int(np.flatnonzero(~known)[0])
        raise UnseenLabelError(
            f"y[{k}] is {y[k]!r}, not one of the model's classes "
            f"({', '.join(map(repr, classes))}); a model learns only the classes declared "
            f"when it started (partial_fit's classes= on the first call, or fit's y)",
            y[k], classes)


def object_array(y) -> np.ndarray:
    return y if isinstance(y, np.ndarray) else np.asarray(list(y), dtype=object)


def json_scalar(value, what: str = "a class label"):
    """A class label as JSON: bool, int, float or str (a model file holds only data)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int, float, str)):
        return value
    raise InputError(f"{what} holds the label {value!r} of type {type(value).__name__}; class "
                     f"labels must be bool, int, float or str (a model file stores them)")


def classes_from(classes, mode, task, path):
    """``classes_`` of a loaded model: the file's (est.save) or, for a model the command
    line trained, what its task implies (-1/+1, or the task's label strings)."""
    labels = getattr(task, "labels_", None)
    if mode is None:
        return None if labels is None else list(labels)
    if classes is None:  # trained on the command line
        return np.array([-1, 1]) if mode == "binary" else np.array(list(labels), dtype=object)
    if (not isinstance(classes, list) or (mode == "binary" and len(classes) != 2)
            or not all(isinstance(c, (bool, int, float, str)) for c in classes)):
        raise ModelFormatError(f"{path}: model file's 'classes' must be a list of "
                               f"{'two ' if mode == 'binary' else ''}labels (bool, int, float or "
                               f"str); the file is damaged or edited")
    if mode == "labels" and sorted(str(c) for c in classes) != sorted(labels or ()):
        raise ModelFormatError(f"{path}: model file's 'classes' do not match its task's labels; "
                               f"the file is damaged or edited")
    return np.array(classes, dtype=object) if any(isinstance(c, str) for c in classes) \
        else np.array(classes)
