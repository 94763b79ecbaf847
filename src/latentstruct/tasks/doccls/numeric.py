"""Numeric input of the ``doccls`` task: documents as rows of a matrix of real values.

``make_dataset(X, y)`` takes, besides a list of texts, a dense numpy array or a
``scipy.sparse`` matrix of shape (n_documents, n_columns), such as the output of a fitted
``sklearn.feature_extraction.text.TfidfVectorizer``.  Its columns are then the task's input
features, with their real values (any sign, finite, at most ``MAX_ATTRIBUTE_VALUE`` = 1e6
in magnitude as the sequence tasks' real-valued attributes): Φ(x, y) = x ⊗ e_y over the
matrix's columns,
and no vocabulary is built.  The dataset's records are a :class:`DocumentMatrix` (float64
CSR, duplicates summed and explicit zeros dropped, so a dense array and its sparse copy give
the same records and the same model).

A task fitted on a matrix records it (``input_kind_ = "matrix"``, ``n_columns_``) and
refuses texts, and a task fitted on texts refuses matrices: the columns of a matrix mean
nothing to a model whose features are its own vocabulary, and the other way round.
"""

from __future__ import annotations

import inspect

import numpy as np
import scipy.sparse as sp

from ...exceptions import ConfigError, InputError, ModelFormatError
from ...limits import MAX_ATTRIBUTE_VALUE, MAX_WEIGHTS
from ..base import Dataset, same_value
from .matrix import DocumentMatrix
from .raw import document_label

__all__ = ["INPUT_KINDS", "TEXT_OPTIONS", "is_numeric_input", "numeric_dataset",
           "check_text_options", "check_input_kind", "check_matrix_width",
           "input_kind_from_state"]

#: what a fitted task was trained on: texts (its own vocabulary) or a numeric matrix
INPUT_KINDS = ("text", "matrix")
#: task parameters that say how texts become features; with a matrix they would do nothing
TEXT_OPTIONS = ("features", "min_count", "lowercase", "strip_headers")


class NotNumbersError(InputError, TypeError):
    """A matrix whose values are not numbers (a dict in an object array): an InputError,
    and a TypeError as numpy's conversion (and scikit-learn's ``check_array``) raise it."""


def is_numeric_input(X) -> bool:
    """Whether ``X`` is meant as a matrix of numbers: a scipy sparse matrix, or an array
    (anything with ``__array__`` that is not a list) that is not a 1-D array of texts."""
    if sp.issparse(X):
        return True
    if isinstance(X, (list, tuple, str, bytes)) or not hasattr(X, "__array__"):
        return False
    arr = np.asarray(X)
    return not (arr.ndim == 1 and arr.dtype.kind in "OUS")


def _dense_rows(X) -> DocumentMatrix:
    arr = np.asarray(X)
    if arr.dtype.kind not in "biuf":
        if arr.dtype.kind == "c":
            raise InputError(f"X is an array of complex numbers (dtype {arr.dtype}): Complex "
                             f"data not supported; document features must be real: give "
                             f"X.real or abs(X)")
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            # a TypeError too (numpy's own type), as scikit-learn's check_array raises it
            kind = NotNumbersError if isinstance(exc, TypeError) else InputError
            raise kind(
                f"X is a {arr.ndim}-D array of dtype {arr.dtype} that does not convert to "
                f"numbers ({exc}); give a list of document texts, or a numeric matrix "
                f"(n_documents x n_columns) as a numpy array or scipy.sparse matrix") from None
    _check_2d(arr.shape)
    arr = np.asarray(arr, dtype=np.float64)
    bad = ~(np.abs(arr) <= MAX_ATTRIBUTE_VALUE)  # NaN too
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise _bad_value(i, j, arr[i, j], int(bad.sum()))
    return DocumentMatrix.from_csr(sp.csr_matrix(arr))


def _sparse_rows(X) -> DocumentMatrix:
    if X.dtype.kind not in "biuf":
        raise InputError(f"X is a sparse matrix of dtype {X.dtype}; document features must be "
                         f"real numbers (bool, int or float)")
    _check_2d(X.shape)
    m = sp.csr_matrix(X, dtype=np.float64, copy=True)
    m.sum_duplicates()
    bad = ~(np.abs(m.data) <= MAX_ATTRIBUTE_VALUE)  # NaN too
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        i = int(np.searchsorted(m.indptr, k, side="right") - 1)
        raise _bad_value(i, int(m.indices[k]), m.data[k], int(bad.sum()))
    m.eliminate_zeros()  # an explicit zero is no feature: the same records as the dense array
    return DocumentMatrix.from_csr(m)


def _check_2d(shape) -> None:
    if len(shape) == 2:
        return
    if len(shape) == 1:
        raise InputError(
            f"X is a 1-D array of {shape[0]} numbers; expected a 2-D matrix (n_documents x "
            f"n_columns), one row per document. Reshape your data: X.reshape(1, -1) for one "
            f"document, or X.reshape(-1, 1) for one feature per document")
    raise InputError(f"X has {len(shape)} dimensions (shape {tuple(shape)}); expected a 2-D "
                     f"matrix (n_documents x n_columns), one row per document")


def _bad_value(i: int, j: int, value, count: int) -> InputError:
    more = f" ({count - 1} more such value{'s' * (count != 2)} after it)" if count > 1 else ""
    if np.isfinite(value):
        return InputError(
            f"X[{i}][{j}] (document {i}, column {j}) is {float(value)!r}{more}, larger in "
            f"magnitude than {MAX_ATTRIBUTE_VALUE:g} (latentstruct.limits.MAX_ATTRIBUTE_VALUE: "
            f"one such value swamps every other feature and overflows the CRF's sums); scale "
            f"the columns (e.g. sklearn's MaxAbsScaler) or take logarithms")
    return InputError(
        f"X[{i}][{j}] (document {i}, column {j}) is {float(value)!r}{more}; every value must "
        f"be a finite number. Replace missing or infinite values (e.g. np.nan_to_num(X), or "
        f"fix the vectorizer's input) before fitting or predicting")


def numeric_dataset(X, y=None) -> Dataset:
    """``make_dataset`` of a numeric matrix: records a :class:`DocumentMatrix` of its rows,
    targets the labels of ``y`` (non-blank strings, checked as for texts) or ``None`` each.

    InputError for a matrix that is not 2-D, a non-finite value (naming ``X[i][j]``), a
    label that is not a non-blank string (naming ``y[i]``), or a row count other than
    ``len(y)``."""
    rows = _sparse_rows(X) if sp.issparse(X) else _dense_rows(X)
    n = len(rows)
    if y is None:
        return Dataset(rows, [None] * n)
    if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
        raise InputError(f"y is a {type(y).__name__}; expected a list holding one label per "
                         f"row of X")
    y = list(y)
    if len(y) != n:
        raise InputError(f"X has {n} rows (documents) but y has {len(y)} labels; give one "
                         f"label per row of X")
    return Dataset(rows, [document_label(v, i) for i, v in enumerate(y)])


def check_matrix_width(rows: DocumentMatrix, n_labels: int, path=None) -> None:
    """InputError for a training matrix without columns, or one whose columns times
    ``n_labels`` (one weight per column and label) exceed ``limits.MAX_WEIGHTS``."""
    d = rows.n_attributes
    if d < 1:
        raise InputError(f"X has {len(rows)} rows but no column: 0 feature(s) (shape="
                         f"({len(rows)}, 0)) while a minimum of 1 is required; a document "
                         f"classifier needs at least one feature column", path)
    if d * n_labels > MAX_WEIGHTS.high:
        raise InputError(f"X has {d:,} columns and y {n_labels} labels: {d * n_labels:,} "
                         f"weights, more than the {MAX_WEIGHTS.high:,} a model may hold; reduce "
                         f"the columns (e.g. a vectorizer's max_features or min_df)", path)


def check_text_options(estimator) -> None:
    """ConfigError when a task or featurizer about to fit on a matrix has a text option set
    away from its default: ``features``, ``min_count``, ``lowercase`` and ``strip_headers``
    say how texts become features, and a matrix's columns already are the features."""
    signature = inspect.signature(type(estimator).__init__)
    changed = [f"{k}={getattr(estimator, k)!r}" for k in TEXT_OPTIONS
               if not same_value(getattr(estimator, k), signature.parameters[k].default)]
    if changed:
        raise ConfigError(
            f"{', '.join(changed)} {'says' if len(changed) == 1 else 'say'} how texts become "
            f"features, but X is a numeric matrix whose columns are the features (their values "
            f"are used as they are); leave {', '.join(TEXT_OPTIONS)} at their defaults, or do "
            f"that step in your vectorizer (e.g. TfidfVectorizer(min_df=...))")


def check_input_kind(task, records) -> None:
    """InputError when ``records`` are not of the kind the fitted ``task`` (or its
    featurizer: ``input_kind_``, ``n_columns_``, ``n_features_out_``) was trained on, or a
    matrix has another number of columns."""
    kind = getattr(task, "input_kind_", "text")
    if isinstance(records, DocumentMatrix):
        if kind != "matrix":
            words = (task.n_features_out_ if hasattr(type(task), "n_features_out_")
                     else task.n_attributes)
            raise InputError(
                f"this model was fitted on document texts (its features are its own vocabulary "
                f"of {words} words) and takes texts; got a numeric matrix of shape "
                f"{records.shape}. Give the texts, or fit the model on the matrix")
        if records.n_attributes != task.n_columns_:
            # scikit-learn's wording (its n_features_in_ check), then the fix
            raise InputError(
                f"X has {records.n_attributes} features, but {type(task).__name__} is expecting "
                f"{task.n_columns_} features as input (the columns of its training matrix); "
                f"transform the documents with the same fitted vectorizer that made the "
                f"training matrix (vectorizer.transform(texts))")
    elif kind == "matrix":
        raise InputError(
            f"this model was fitted on a numeric matrix of {task.n_columns_} columns and takes "
            f"such a matrix (n_documents x {task.n_columns_}, a numpy array or scipy.sparse "
            f"matrix); got document texts. Transform them with the vectorizer that made the "
            f"training matrix (vectorizer.transform(texts)), or fit the model on texts")


def input_kind_from_state(state: dict) -> tuple[str, int | None]:
    """``(input kind, n_columns or None)`` of a saved task's JSON state; ModelFormatError for
    an unknown kind or a matrix model without a valid column count.  Files written before
    numeric input have neither key: they were fitted on texts."""
    kind, n_columns = state.get("input", "text"), state.get("n_columns")
    if kind not in INPUT_KINDS:
        raise ModelFormatError(f"the doccls state's input kind is {kind!r}, expected one of "
                               f"{', '.join(map(repr, INPUT_KINDS))}; the model file is damaged "
                               f"or edited")
    if kind == "text":
        return kind, None
    if isinstance(n_columns, bool) or not isinstance(n_columns, int) or n_columns < 1:
        raise ModelFormatError(f"the doccls state's n_columns is {n_columns!r}, expected an "
                               f"integer >= 1 for a model fitted on a matrix; the model file is "
                               f"damaged or edited")
    return kind, n_columns
