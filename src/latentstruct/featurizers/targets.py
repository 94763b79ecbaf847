"""Target encoding, as scikit-learn transformers: labels to the ids a structure decodes.

:class:`SequenceLabelEncoder` encodes tag sequences (one array per sentence),
:class:`ClassEncoder` one label per example.  Both learn the sorted label set from
``fit``'s targets (and the ``classes`` declared up front) and refuse, in ``transform``, a
label outside it (:class:`UnseenLabelError`, naming the label, where it is, ``y[3][7]``,
and the model's labels): a model has no weights for a label it never saw, so such a label
can be neither trained on nor silently turned into another id.

Why not ``sklearn.preprocessing.LabelEncoder``: it encodes one flat array and refuses an
unseen label with numpy's "y contains previously unseen labels" and no position; the
structures need per-sentence arrays and the example and token of the bad label.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..exceptions import InputError, check_is_fitted

__all__ = ["UnseenLabelError", "encode_labels", "SequenceLabelEncoder", "ClassEncoder"]


class UnseenLabelError(InputError):
    """A gold label that is not in the model's label set (``label``: the label, ``labels``:
    the set).  An ``InputError``: the CLI prints it as one line and exits 2."""

    def __init__(self, message: str, label, labels, path=None, line=None, example=None):
        super().__init__(message, path, line)
        self.label = label
        self.labels = tuple(labels)
        self.example = example  # the index of the example holding it, where known

    def located(self, path, line) -> "UnseenLabelError":
        """The same error placed at ``path``:``line`` (a reader's record line)."""
        return UnseenLabelError(self.message, self.label, self.labels, path, line, self.example)


def _label_list(labels, limit: int = 30) -> str:
    shown = ", ".join(map(str, labels[:limit]))
    more = f", ... ({len(labels)} in all)" if len(labels) > limit else f" ({len(labels)})"
    return shown + more


def encode_labels(label_id: dict, labels, items, *, where=None, path=None,
                  example=None) -> np.ndarray:
    """The ids of ``items`` (hashable labels) in ``label_id``; a label outside it raises
    :class:`UnseenLabelError` naming the label, where it is (``where(k)``: a phrase for
    position ``k``, such as ``"y[3][7]"``) and the model's label set ``labels``; its
    ``example`` is ``example`` (the index of the example ``items`` belong to) or, when
    None, ``k`` (each item an example of its own).

    A model cannot be trained or scored on a label it has no weights for: before this
    check such a label became ``-1`` and was trained on (or scored as if it were another
    label) without a word.
    """
    items = items if isinstance(items, (list, tuple)) else list(items)
    get = label_id.get
    out = np.fromiter((get(t, -1) for t in items), np.int64, len(items))
    if out.size and out.min() < 0:
        k = int(np.flatnonzero(out < 0)[0])
        label = items[k]
        at = f" at {where(k)}" if where is not None else ""
        raise UnseenLabelError(
            f"the label {label!r}{at} is not one of the model's labels: "
            f"{_label_list(list(labels))}. A model learns only the labels declared when it "
            f"started: declare the full label set up front (partial_fit(X, y, classes=[...]) "
            f"on the first call, or training data that holds every label), or correct the "
            f"label", label, labels, path, None, k if example is None else example)
    return out


def _sorted_labels(labels, what: str) -> list:
    try:
        return sorted(set(labels))
    except TypeError:
        kinds = sorted({type(v).__name__ for v in labels})
        raise InputError(f"{what} mix label types that cannot be ordered ({', '.join(kinds)}); "
                         f"give labels of one type (all str, or all int)") from None


def _check_classes(classes) -> list:
    if classes is None:
        return []
    if isinstance(classes, (str, bytes)):
        raise InputError(f"classes must be a list of labels, got the string {classes!r}; "
                         f"wrap it: classes=[{classes!r}]")
    return list(classes)


class _Encoder(TransformerMixin, BaseEstimator):
    """The label set and its ids (``classes_``), shared by both encoders."""

    def __init__(self, classes=None):
        self.classes = classes

    def _set_classes(self, labels) -> None:
        self.classes_ = _sorted_labels(list(labels) + _check_classes(self.classes),
                                       "the targets and classes")
        self._ids = {t: i for i, t in enumerate(self.classes_)}

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "classes_")

    def _fitted(self) -> dict:
        check_is_fitted(self)
        if not hasattr(self, "_ids"):  # rebuilt by from_classes or a copy of classes_
            self._ids = {t: i for i, t in enumerate(self.classes_)}
        return self._ids

    @classmethod
    def from_classes(cls, classes):
        """A fitted encoder with exactly ``classes`` (a model file's label list) as ids."""
        encoder = cls()
        encoder.classes_ = list(classes)
        encoder._ids = {t: i for i, t in enumerate(encoder.classes_)}
        return encoder

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_ids", None)  # rebuilt on use: a pickle carries the labels once
        return state


class SequenceLabelEncoder(_Encoder):
    """Tag sequences to id arrays (one per sentence), and back.

    Parameters
    ----------
    classes : list or None
        Labels to include beyond those ``fit`` sees (the full tag set, declared up front).

    Attributes
    ----------
    classes_ : list
        The sorted label set; a label's id is its position.

    Examples
    --------
    >>> enc = SequenceLabelEncoder().fit([["DET", "NOUN"], ["VERB"]])
    >>> [ids.tolist() for ids in enc.transform([["NOUN", "DET"]])]
    [[1, 0]]
    >>> enc.inverse_transform([[2, 2]])
    [['VERB', 'VERB']]

    An unknown tag (None, partial labels) is the id -1 (``inverse_transform`` gives None).
    """

    def fit(self, Y, y=None) -> "SequenceLabelEncoder":
        self._set_classes(t for k, tags in enumerate(_sequences(Y)) for t in _tags(tags, k)
                          if t is not None)
        return self

    def transform(self, Y) -> list[np.ndarray]:
        """Tag sequences to id arrays; an unknown tag (None: partial labels) is -1."""
        ids, labels = self._fitted(), self.classes_
        out = []
        for i, tags in enumerate(_sequences(Y)):
            tags = _tags(tags, i)
            where = lambda t, i=i: f"y[{i}][{t}] (sentence {i}, token {t})"  # noqa: E731
            if any(t is None for t in tags):
                known = [k for k, t in enumerate(tags) if t is not None]
                codes = np.full(len(tags), -1, dtype=np.int64)
                codes[known] = encode_labels(ids, labels, [tags[k] for k in known], example=i,
                                             where=lambda j, i=i: where(known[j]))
                out.append(codes)
            else:
                out.append(encode_labels(ids, labels, tags, example=i, where=where))
        return out

    def inverse_transform(self, Y) -> list[list]:
        self._fitted()
        labels = self.classes_
        return [[labels[int(i)] if i >= 0 else None for i in ids] for ids in Y]


def _sequences(Y):
    if isinstance(Y, (str, bytes)):
        raise InputError("y must be a list of tag sequences (one list per sentence), got a "
                         "single string")
    return Y


def _tags(tags, k: int) -> list:
    if isinstance(tags, (str, bytes)):
        raise InputError(f"y[{k}] is a string ({tags[:40]!r}), expected a list of tags (one "
                         f"per token); wrap a one-token sentence's tag: [{tags[:40]!r}]")
    return tags if isinstance(tags, list) else list(tags)


class ClassEncoder(_Encoder):
    """One label per example to ids, and back (a classifier's targets).

    Examples
    --------
    >>> enc = ClassEncoder(classes=["sport"]).fit(["politics", "tech"])
    >>> enc.classes_, enc.transform(["tech", "sport"]).tolist()
    (['politics', 'sport', 'tech'], [2, 1])
    """

    def fit(self, y, _=None) -> "ClassEncoder":
        self._set_classes(_sequences(y))
        return self

    def transform(self, y) -> np.ndarray:
        ids = self._fitted()
        return encode_labels(ids, self.classes_, list(_sequences(y)),
                             where=lambda k: f"y[{k}]")

    def inverse_transform(self, y) -> list:
        self._fitted()
        return [self.classes_[int(i)] for i in y]
