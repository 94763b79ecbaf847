"""sklearn-crfsuite's ``metrics``: scikit-learn's token-level metrics over label sequences.

Every ``flat_*`` function joins the sequences of ``y_true`` and of ``y_pred`` into one list
of labels each and hands them to the scikit-learn metric of the same name, with the same
keyword arguments (``average=``, ``labels=``, ...).  ``sequence_accuracy_score`` counts
whole sequences.  The names, arguments and results are sklearn-crfsuite's, so
``from latentstruct.crfsuite import metrics`` replaces ``from sklearn_crfsuite import
metrics``.
"""

from __future__ import annotations

import itertools

from sklearn import metrics as _sk

__all__ = ["flat_accuracy_score", "flat_precision_score", "flat_recall_score",
           "flat_f1_score", "flat_fbeta_score", "flat_classification_report",
           "sequence_accuracy_score"]


def _flat(y_true, y_pred) -> tuple[list, list]:
    """The two sequences of sequences as two flat label lists (one per token)."""
    return (list(itertools.chain.from_iterable(y_true)),
            list(itertools.chain.from_iterable(y_pred)))


def flat_accuracy_score(y_true, y_pred) -> float:
    """The share of tokens whose predicted label is the gold one."""
    return _sk.accuracy_score(*_flat(y_true, y_pred))


def flat_precision_score(y_true, y_pred, **kwargs) -> float:
    """scikit-learn's ``precision_score`` over tokens (``average=`` as there)."""
    return _sk.precision_score(*_flat(y_true, y_pred), **kwargs)


def flat_recall_score(y_true, y_pred, **kwargs) -> float:
    """scikit-learn's ``recall_score`` over tokens."""
    return _sk.recall_score(*_flat(y_true, y_pred), **kwargs)


def flat_f1_score(y_true, y_pred, **kwargs) -> float:
    """scikit-learn's ``f1_score`` over tokens."""
    return _sk.f1_score(*_flat(y_true, y_pred), **kwargs)


def flat_fbeta_score(y_true, y_pred, beta, **kwargs) -> float:
    """scikit-learn's ``fbeta_score`` over tokens."""
    return _sk.fbeta_score(*_flat(y_true, y_pred), beta=beta, **kwargs)


def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """scikit-learn's ``classification_report`` over tokens."""
    return _sk.classification_report(*_flat(y_true, y_pred), labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred) -> float:
    """The share of sequences predicted entirely right (0 for no sequence)."""
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} sequences but y_pred has {len(y_pred)}")
    if not y_true:
        return 0
    return sum(list(a) == list(b) for a, b in zip(y_true, y_pred)) / len(y_true)
