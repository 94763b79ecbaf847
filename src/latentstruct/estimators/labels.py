"""How the labels of raw ``y`` reach a task, for the estimators: a classifier's classes
(any JSON scalar type), a binary task's two classes, ``partial_fit``'s declared label set,
and the ``classes_`` of a loaded model.  A label the model does not have is refused here
(``UnseenLabelError``), never turned into something else.

Labels are compared **by value**, as numpy and scikit-learn compare them (``np.unique``,
``LabelEncoder``): ``1``, ``1.0`` and ``True`` are one class, a string is never equal to a
number.  ``classes_`` is one numpy array in the caller's type (numbers unified as
``np.asarray`` unifies them: ``[True, 0, 1]`` gives int classes, ``[1.0, 0]`` float ones).
A task takes its labels as strings: class ``c``'s string is :func:`label_key` of it, and the
way back from a task's label string to a class is by value too (:func:`class_labels`), so a
model file whose classes were written as ``0`` and ``1.0`` still finds them."""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import ConfigError, InputError, ModelFormatError
from ..tasks.validation import UnseenLabelError

__all__ = ["declared_classes", "check_declared", "check_in_classes", "object_array",
           "json_scalar", "classes_from", "label_values", "label_key", "value_key",
           "class_labels", "unseen_key", "same_classes", "allowed_label_ids"]


def value_key(value):
    """A hashable key equal for labels equal by value (``1``, ``1.0``, ``True``, numpy
    scalars of them; Python's hash already equates equal numbers), distinct for a string
    and the number it spells; None for anything that is no label (a list, None, bytes)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (bool, int, float)):
        return ("n", value)
    return None


def label_key(c) -> str:
    """The string a task takes for class ``c`` (an element of ``classes_``): its text as a
    Python scalar, so that a numpy scalar and its Python twin give the same string."""
    return str(c.item() if isinstance(c, np.generic) else c)


def _scalar(value, where: str):
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, str)):
        what = "Complex data not supported: " if isinstance(value, complex) else ""
        raise InputError(f"{where} is {value!r} of type {type(value).__name__}; {what}class "
                         f"labels must be bool, int, float or str (a model file stores them)")
    if isinstance(value, float) and math.isnan(value):
        raise InputError(f"{where} is NaN, which equals no label (not even itself), so it "
                         f"can name no class; give every example a real label or drop it")
    return value


def label_values(values, what: str = "y") -> np.ndarray:
    """``values`` (labels, a list or an array) as one 1-D array whose elements compare by
    value: numbers unified by ``np.asarray`` (bool, int or float), strings an object array
    (a numpy string array stays as it is).  InputError naming ``what[k]`` for a label that
    is no JSON scalar or is NaN, and for strings mixed with numbers."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "biufU":
        if values.dtype.kind == "f" and np.isnan(values).any():
            k = int(np.flatnonzero(np.isnan(values))[0])
            _scalar(values[k], f"{what}[{k}]")  # raises: NaN names no class
        return values
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    items = [_scalar(v, f"{what}[{k}]") for k, v in enumerate(items)]
    first_str = next((k for k, v in enumerate(items) if isinstance(v, str)), None)
    first_num = next((k for k, v in enumerate(items) if not isinstance(v, str)), None)
    if first_str is not None and first_num is not None:
        raise InputError(
            f"{what} mixes strings and numbers ({what}[{first_str}] is {items[first_str]!r}, "
            f"{what}[{first_num}] is {items[first_num]!r}); labels are compared by value and "
            f"a string never equals a number: give labels of one type")
    if first_num is None:
        return np.array(items, dtype=object)
    arr = np.asarray(items)  # bool, int64 or float64, as scikit-learn's np.asarray(y)
    return arr if arr.ndim == 1 else np.array(items, dtype=object)


def declared_classes(classes, name: str):
    """``partial_fit``'s first-call ``classes`` as a list (None stays None: the task says
    after fitting whether it has a label set that needed it).  A label listed twice, by
    value (``[1, 1.0]``), is a ConfigError."""
    if classes is None:
        return None
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise ConfigError(f"{name}.partial_fit: classes must be a list of labels (the full "
                          f"label set of the stream), got {classes!r}")
    declared = list(classes.tolist() if isinstance(classes, np.ndarray) else classes)
    if not declared:
        raise ConfigError(f"{name}.partial_fit: classes is empty; give the full label set "
                          f"of the stream")
    seen = {}
    for k, c in enumerate(declared):
        key = value_key(c)
        if key is None:  # no label at all: the label checks that follow name it
            continue
        if key in seen:
            j = seen[key]
            same = (f"as {declared[j]!r} and {c!r}: labels are compared by value, as numpy "
                    f"and scikit-learn compare them" if repr(declared[j]) != repr(c) else
                    f"at classes[{j}] and classes[{k}]")
            raise ConfigError(f"{name}.partial_fit: classes lists a label twice: {c!r} "
                              f"({same}); list each label once")
        seen[key] = k
    return declared


def same_classes(given, mine) -> bool:
    """Whether two label lists hold the same labels, by value."""
    return {value_key(c) for c in given} == {value_key(c) for c in mine} \
        and None not in {value_key(c) for c in given}


def check_declared(task, declared, name: str) -> None:
    """After the first ``partial_fit`` batch fitted the task: its label set must be
    ``declared`` exactly (a batch label outside ``classes`` is refused, naming it), and a
    task with a label set needs ``classes``.  ``declared`` holds the task's label strings."""
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


def check_in_classes(y, classes) -> None:
    """InputError naming the first label of ``y`` that is not one of ``classes``, by value
    (``1.0`` is the class ``1``; the string ``"1"`` is not)."""
    known = {value_key(c) for c in classes}
    known.discard(None)
    for k, v in enumerate(y):
        if value_key(v) not in known:
            raise UnseenLabelError(
                f"y[{k}] is {v!r}, not one of the model's classes "
                f"({', '.join(map(repr, _plain(classes)))}); a model learns only the classes "
                f"declared when it started (partial_fit's classes= on the first call, or "
                f"fit's y)", v, _plain(classes))


def _plain(classes) -> list:
    return [c.item() if isinstance(c, np.generic) else c for c in classes]


def object_array(y) -> np.ndarray:
    """``y`` as a numpy array (an array-like that is no sequence, such as one with only
    ``__array__``, through ``np.asarray``); a column vector (n, 1) is raveled with
    scikit-learn's ``DataConversionWarning``, as its classifiers do."""
    if not isinstance(y, np.ndarray):
        y = (np.asarray(y) if hasattr(y, "__array__") and not isinstance(y, (list, tuple))
             else np.asarray(list(y), dtype=object))
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.utils.validation import column_or_1d

        y = column_or_1d(y, warn=True)
    return y


def json_scalar(value, what: str = "a class label"):
    """A class label as JSON: bool, int, float or str (a model file holds only data)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int, float, str)):
        return value
    raise InputError(f"{what} holds the label {value!r} of type {type(value).__name__}; class "
                     f"labels must be bool, int, float or str (a model file stores them)")


def _number(text: str):
    """The number a task's label string spells (``label_key`` of a number), or None."""
    if text in ("True", "False"):
        return text == "True"
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return None


def class_labels(classes, labels) -> list[str]:
    """The task's label string of each class of ``classes`` (a ``classes_``), matched by
    value: a string class is the label of that text, a number the label that spells an
    equal number (``"1"`` and ``"1.0"`` both spell the class ``1.0``).  ValueError unless
    every class has exactly one label and every label one class."""
    labels = [str(v) for v in labels]
    by_key = {}
    strings = any(isinstance(c, str) for c in _plain(classes))
    for j, text in enumerate(labels):
        key = ("s", text) if strings else value_key(_number(text))
        if key is None:
            raise ValueError(f"the task's label {text!r} is no number")
        if key in by_key:
            raise ValueError(f"the task's labels {labels[by_key[key]]!r} and {text!r} are "
                             f"one value")
        by_key[key] = j
    out = []
    for c in classes:
        j = by_key.get(value_key(c))
        if j is None:
            raise ValueError(f"the class {c!r} has no label among the task's "
                             f"({', '.join(labels[:10])})")
        out.append(labels[j])
    if len(out) != len(labels) or len(set(out)) != len(out):
        raise ValueError(f"the classes ({', '.join(map(repr, _plain(classes)))}) and the "
                         f"task's labels ({', '.join(labels[:10])}) are not one to one")
    return out


def unseen_key(value, labels) -> str:
    """A gold label no class equals, as a string the task takes (non-blank, one line) that
    is none of its ``labels``: scored as what it is, a label no prediction matches."""
    taken = set(map(str, labels))
    text = "(not a class) " + " ".join(repr(value)[:80].split())
    while text in taken:
        text += "*"
    return text


def classes_from(classes, mode, task, path):
    """``classes_`` of a loaded model: the file's (est.save) or, for a model the command
    line trained, what its task implies (-1/+1, or the task's label strings).  The file's
    classes must be distinct by value and, for a classifier, one to one with the task's
    labels by value (ModelFormatError otherwise: the file is damaged or edited)."""
    labels = getattr(task, "labels_", None)
    if mode is None:
        return None if labels is None else list(labels)
    if classes is None:  # trained on the command line
        return np.array([-1, 1]) if mode == "binary" else np.array(list(labels), dtype=object)
    damaged = "the file is damaged or edited"
    if (not isinstance(classes, list) or (mode == "binary" and len(classes) != 2)
            or not all(isinstance(c, (bool, int, float, str)) for c in classes)):
        raise ModelFormatError(f"{path}: model file's 'classes' must be a list of "
                               f"{'two ' if mode == 'binary' else ''}labels (bool, int, float or "
                               f"str); {damaged}")
    try:
        values = label_values(classes, "classes")
    except InputError as exc:
        raise ModelFormatError(f"{path}: model file's {exc.message}; {damaged}") from None
    if len(np.unique(values)) != len(values):
        raise ModelFormatError(f"{path}: model file's 'classes' ({classes!r}) list a label "
                               f"twice (labels are compared by value: 1, 1.0 and True are "
                               f"one); {damaged}")
    if mode == "labels":
        try:
            class_labels(values, labels or ())
        except ValueError as exc:
            raise ModelFormatError(f"{path}: model file's 'classes' do not match its task's "
                                   f"labels ({exc}); {damaged}") from None
    return values


def allowed_label_ids(allowed, labels: list, n_examples: int) -> list:
    """``predict(X, allowed=...)``'s label names as the model's label ids: one entry per
    sentence, None or one entry per token, each None (any label), a label (forced) or a
    collection of labels.  A label the model lacks is an ``InputError`` naming the
    sentence, the token and the model's labels (the token count is checked with the
    sentence's tokens, by the decoder)."""
    from ..inference.constraints import check_entries

    allowed = check_entries(allowed, n_examples, "sentence", "None where any labelling is "
                                                             "allowed, or one entry per token")
    index = {label: k for k, label in enumerate(labels)}
    out = []
    for i, tokens in enumerate(allowed):
        if tokens is None:
            out.append(None)
            continue
        if isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__iter__"):
            raise InputError(f"allowed[{i}] must be None or a list with one entry per token, "
                             f"got {tokens!r}")
        row = []
        for t, entry in enumerate(tokens):
            if entry is None:
                row.append(None)
                continue
            names = [entry] if isinstance(entry, str) or not hasattr(entry, "__iter__") \
                else list(entry)
            unknown = [n for n in names if not isinstance(n, str) or n not in index]
            if unknown:
                raise InputError(f"allowed[{i}][{t}]: {unknown[0]!r} is not a label of the "
                                 f"model; its labels are {', '.join(map(repr, labels))}")
            if not names:
                raise InputError(f"allowed[{i}][{t}] is empty: a token needs at least one "
                                 f"label it may take (None for any)")
            row.append(sorted({index[n] for n in names}))
        out.append(row)
    return out
