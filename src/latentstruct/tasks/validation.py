"""Checks of encoded targets before they reach a learner or a numba kernel.

numba kernels do not check bounds: a label id outside the task's label set would read or
write outside the score arrays (silently wrong weights, or a crash far from the cause), and
a float label would be truncated.  So every task method that hands gold label ids to a
kernel passes them through :func:`check_label_ids` first.  ``-1`` is a valid id there only
when a caller puts it there on purpose: a token whose gold label is left free (the CRF's
partial labels).  ``encode_targets`` never produces it: a gold label the model never saw is
refused by :func:`encode_labels` with the label and the model's label set, so no path turns
an unknown label into a silent ``-1`` (evaluation scores raw gold labels instead:
``Task.evaluate_raw``).

Binary tasks (labels +-1) check their training labels with
:func:`check_binary_training_labels`: a latent binary learner (LCLR and its relatives)
separates positives from negatives, and training data of one class gives it nothing to
separate; this is refused before any parsing or featurising starts.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from ..featurizers.targets import UnseenLabelError, encode_labels

__all__ = ["check_label_ids", "encode_labels", "UnseenLabelError", "check_heads", "check_binary_labels",
           "check_binary_training_labels", "NEGATIVE_RATIO_PARAMS", "raw_error",
           "raw_examples", "raw_binary_labels", "raw_binary_targets", "raw_string", "raw_pair",
           "binary_predictions", "numbers_form", "ragged_note"]

#: parameters by which a task samples its own negatives (their names, for the hint of
#: :func:`check_binary_training_labels`)
NEGATIVE_RATIO_PARAMS = ("neg_ratio", "negative_ratio")


def _as_int_array(y, what: str) -> np.ndarray:
    """``y`` as an int64 array; integer-valued floats are accepted, anything else refused."""
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise InputError(f"{what} must be an array of integer label ids ({exc})") from None
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.floor(arr)):
        return arr.astype(np.int64)
    sample = arr.reshape(-1)[:5].tolist()
    raise InputError(f"{what} must be integer label ids, got {arr.dtype} values such as "
                     f"{sample}; encode gold labels with the task's encode_targets")


def check_label_ids(y, n_labels: int, *, what: str = "gold labels",
                    allow_unseen: bool = True) -> np.ndarray:
    """``y`` as an int64 array after checking that every id is an integer in
    ``0..n_labels-1``, or ``-1`` (a token whose gold label is left free, put there on
    purpose: ``encode_targets`` never gives it) when ``allow_unseen``.

    Raises ``InputError`` naming the first bad id, its position and the valid range.
    """
    arr = _as_int_array(y, what)
    lo = -1 if allow_unseen else 0
    bad = np.flatnonzero((arr.reshape(-1) < lo) | (arr.reshape(-1) >= n_labels))
    if bad.size:
        k = int(bad[0])
        value = int(arr.reshape(-1)[k])
        if value == -1:
            raise InputError(
                f"{what}: position {k} holds -1 (a token whose gold label is left free), "
                f"which this use does not take; encode gold labels with the task's "
                f"encode_targets, which refuses a label the model never saw")
        unseen = " (or -1 for a token left free)" if allow_unseen else ""
        raise InputError(
            f"{what}: label id {value} at position {k} is outside 0..{n_labels - 1}{unseen}; "
            f"the task has {n_labels} labels. Encode gold labels with the encode_targets of "
            f"the task the model was fitted with")
    return arr


def check_heads(heads, n_words: int, *, what: str = "gold heads") -> np.ndarray:
    """``heads`` (one per word, 1-based, 0 = root) as int64 after checking there are
    ``n_words`` of them, each an integer in ``0..n_words``."""
    arr = _as_int_array(heads, what)
    if arr.shape != (n_words,):
        raise InputError(f"{what} has shape {arr.shape}; expected one head per word, "
                         f"({n_words},)")
    bad = np.flatnonzero((arr < 0) | (arr > n_words))
    if bad.size:
        k = int(bad[0])
        raise InputError(f"{what}: head {int(arr[k])} of word {k + 1} is outside 0..{n_words} "
                         f"(0 = root, else a word number of the sentence)")
    return arr


def check_binary_labels(targets, *, what: str = "targets") -> np.ndarray:
    """``targets`` as a 1-d int64 array of labels -1 / +1 (``InputError`` otherwise)."""
    y = _as_int_array(targets, what) if np.size(targets) else np.zeros(0, np.int64)
    if y.ndim != 1 or (y.size and not np.isin(y, (-1, 1)).all()):
        found = sorted(set(np.asarray(targets).reshape(-1).tolist()))[:5]
        raise InputError(f"{what} must be a 1-d sequence of labels -1 or +1, got shape "
                         f"{np.shape(targets)} with values such as {found}")
    return y


def check_binary_training_labels(dataset, task=None) -> np.ndarray:
    """The ±1 training labels of ``dataset``, after checking both classes are present.

    Raises ``InputError`` (naming ``dataset.path``) for labels other than ±1, no examples,
    or examples of one class only: "training data has only positive examples (N); LCLR
    needs both ...".  ``task`` (optional) adds how to get the other class: its negative
    sampling parameter (:data:`NEGATIVE_RATIO_PARAMS`) when it has one.
    """
    path = getattr(dataset, "path", None)
    y = check_binary_labels(dataset.targets, what="training labels")
    n_pos = int(np.count_nonzero(y == 1))
    n_neg = int(y.size - n_pos)
    if n_pos and n_neg:
        return y
    if not y.size:
        raise InputError("training data holds no examples; give a file with positive and "
                         "negative examples", path)
    have, missing = ("positive", "negative") if n_pos else ("negative", "positive")
    params = task.get_params() if task is not None else {}
    ratio = next((p for p in NEGATIVE_RATIO_PARAMS if p in params), None)
    if ratio is not None and missing == "negative":
        how = (f"this task samples its negatives, and {ratio}={params[ratio]!r} with "
               f"{n_pos} positives draws none: raise {ratio} (--option {ratio}=...) or "
               f"train on more examples")
    else:
        how = f"add {missing} examples to the training file"
    raise InputError(
        f"training data has only {have} examples ({max(n_pos, n_neg)}); LCLR and the other "
        f"latent binary learners need both positive (+1) and negative (-1) examples to "
        f"learn a decision between them. {how[0].upper()}{how[1:]}", path)


# --------------------------------------------------------------------------------------
# in-memory data (``Task.make_dataset``): what every task's raw-data constructor shares
# --------------------------------------------------------------------------------------
def raw_error(message: str, i: int, *, at: str = "", what: str = "X") -> InputError:
    """An ``InputError`` located in in-memory data: ``X[3][5]: message``.

    ``i`` is the example's index, ``at`` an optional position inside it (``"[5]"``,
    ``" token 5"``), ``what`` the argument's name (``X`` or ``y``)."""
    return InputError(f"{what}[{i}]{at}: {message}")


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.number, np.bool_))  # bool is an int


def _is_number_sequence(value) -> bool:
    """A non-empty list, tuple or 1-D array whose every item is a real number."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.size > 0 and (
            value.dtype.kind in "biuf" or (value.dtype == object and all(map(_is_number, value))))
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(map(_is_number, value))


def numbers_form(value) -> str | None:
    """What ``value`` (one example of ``X``) is when it is numbers in a form that holds no
    tokens or text and is no 2-D array either: ``"a 1-D array of shape (3,)"``, ``"an
    object array of shape (2, 2)"``, ``"a list of numbers [1.0, 2.0]"``, ``"a list of
    number lists"``; None for anything else.  Such numbers would otherwise be read as
    tokens, and refused for what a token must be (``word must be a string, got float``)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            return f"a 1-D array of shape {value.shape}" if value.ndim == 1 else None
        if value.dtype != object or value.size == 0:
            return None
        flat = value.ravel()
        if all(map(_is_number, flat)):
            return f"an object array of numbers of shape {value.shape}"
        if value.ndim == 1 and all(map(_is_number_sequence, flat)):
            return f"an object array of {len(flat)} number lists"
        return None
    if not isinstance(value, (list, tuple)) or not value:
        return None
    kind = type(value).__name__
    if all(map(_is_number, value)):
        return f"a {kind} of numbers {_describe(list(value))}"
    if all(map(_is_number_sequence, value)):
        lengths = sorted({len(v) for v in value})
        ragged = (f" of unequal lengths ({', '.join(map(str, lengths[:5]))})"
                  if len(lengths) > 1 else "")
        return f"a {kind} of number lists{ragged}"
    return None


def ragged_note(X) -> str:
    """A note on how ``X`` came to hold sequences of numbers: numpy's object array of rows
    of unequal length (``np.array([[1.0, 2.0], [3.0]], dtype=object)``), or a list whose
    number rows differ in length; empty when neither."""
    if isinstance(X, np.ndarray) and X.dtype == object:
        return (f" (X is an object array of shape {X.shape}: numpy holds rows of unequal "
                f"length, or rows of mixed types, as Python objects)")
    if isinstance(X, (list, tuple)) and len(X) > 1 and all(map(_is_number_sequence, X)):
        lengths = sorted({len(v) for v in X})
        if len(lengths) > 1:
            return (f" (X is a ragged list of numbers: its rows have "
                    f"{', '.join(map(str, lengths[:5]))} numbers)")
    return ""


def raw_examples(X, y=None, *, example: str = "raw example") -> tuple[list, list | None]:
    """``X`` (and ``y``) as lists after the checks every ``make_dataset`` shares.

    ``X`` must be a sequence of examples (a list, tuple or array; not a string, a path or
    a single example's mapping), ``y`` None or a sequence of the same length.  ``example``
    names one example in messages ("token list", "(text_a, text_b) pair").
    """
    import os

    for name, value in (("X", X), ("y", y)):
        if value is None and name == "y":
            continue
        if isinstance(value, (str, bytes, os.PathLike)):
            raise InputError(
                f"{name} is a {type(value).__name__} ({_describe(value)}); expected a list "
                f"holding one {example if name == 'X' else 'target'} per example. To read a "
                f"file, use task.read(path)")
        if isinstance(value, dict) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
            raise InputError(
                f"{name} is a {type(value).__name__}; expected a list holding one "
                f"{example if name == 'X' else 'target'} per example")
    X = list(X)
    if y is None:
        return X, None
    y = list(y)
    if len(y) != len(X):
        raise InputError(f"X has {len(X)} examples but y has {len(y)} targets; give one target "
                         f"per example")
    return X, y


def raw_string(value, i: int, what: str, *, at: str = "", max_length: int | None = None,
               allow_space: bool = True, name: str = "X") -> str:
    """``value`` after checking it is a non-empty string without NUL bytes (and, with
    ``allow_space=False``, without white space; with ``max_length``, not longer)."""
    if not isinstance(value, str):
        raise raw_error(f"{what} must be a string, got {type(value).__name__} "
                        f"{_describe(value)}", i, at=at, what=name)
    if not value.strip():
        raise raw_error(f"{what} is empty or blank; give it some text", i, at=at, what=name)
    if "\0" in value:
        raise raw_error(f"{what} holds a NUL byte; remove it", i, at=at, what=name)
    # str.split() cuts at exactly the characters str.isspace() names: one piece, the
    # value itself, when it holds none (a C-level scan)
    if not allow_space and value.split() != [value]:
        raise raw_error(f"{what} {_describe(value)} holds white space, which the task's file "
                        f"format uses as a separator; give one token per entry", i, at=at,
                        what=name)
    if max_length is not None and len(value) > max_length:
        raise raw_error(f"{what} has {len(value)} characters, more than the limit of "
                        f"{max_length} (it is refused, not cut: a cut one would be other data)",
                        i, at=at, what=name)
    return value


def raw_binary_labels(y) -> np.ndarray:
    """In-memory binary labels as an int64 array of -1/+1: +1/-1, 1/0 and True/False are
    accepted (1 and True are positive); anything else is an ``InputError`` naming ``y[i]``."""
    out = np.empty(len(y), dtype=np.int64)
    for i, v in enumerate(y):
        if isinstance(v, (bool, np.bool_)):
            out[i] = 1 if v else -1
        elif isinstance(v, (int, np.integer)) and int(v) in (-1, 0, 1):
            out[i] = 1 if int(v) == 1 else -1
        elif isinstance(v, (float, np.floating)) and float(v) in (-1.0, 0.0, 1.0):
            out[i] = 1 if float(v) == 1.0 else -1
        else:
            raise raw_error(f"label {_describe(v)} is not binary; expected +1/-1, 1/0 or "
                            f"True/False (1 and True are positive)", i, what="y")
    return out


def raw_binary_targets(y, n: int):
    """The targets of ``n`` in-memory examples: +-1 int64 labels of ``y``
    (:func:`raw_binary_labels`), or ``[None] * n`` without ``y``."""
    return [None] * n if y is None else raw_binary_labels(y)


def raw_pair(value, i: int, example: str) -> tuple:
    """``X[i]`` as a 2-tuple after checking it is a tuple or list of two elements (a string,
    a dict or a set is refused); ``example`` names the pair in the message."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        got = (f"a {type(value).__name__} of {len(value)} element{'s' * (len(value) != 1)}"
               if isinstance(value, (tuple, list)) else f"a {type(value).__name__}")
        raise raw_error(f"expected a {example} (a tuple of two strings), got {got}; give one "
                        f"pair per example, e.g. X = [(a, b), ...]", i)
    return tuple(value)


# --------------------------------------------------------------------------------------
# predictions
# --------------------------------------------------------------------------------------
def binary_predictions(predictions) -> list[int]:
    """A latent-binary learner's ``predict`` output as a list of Python ints +1 / -1 (the raw
    form of ``y`` that ``make_dataset`` takes); ``InputError`` for anything else."""
    if isinstance(predictions, (str, bytes)):
        raise InputError(f"predictions must be a sequence of labels -1 or +1, got a "
                         f"{type(predictions).__name__}")
    values = np.asarray(list(predictions))
    return check_binary_labels(values, what="predictions").tolist()
