"""In-memory data of the ``doccls`` task: the body of ``make_dataset``.

``X`` is a list of document texts, ``y`` a list of class labels (strings) or None; records
are :class:`~latentstruct.data.documents.Document` with ids ``"0"``, ``"1"``, ... .  The
checks are those of the JSON-lines reader (non-blank text, no NUL byte, its line limit),
located as ``X[i]`` / ``y[i]`` instead of ``file:line``.  Nothing is sampled or split: the
dataset holds exactly the given documents, in order.
"""

from __future__ import annotations

from ...data.documents import MAX_DOCUMENT_LINE_CHARS, Document
from ..base import Dataset
from ..validation import numbers_form, ragged_note, raw_error, raw_examples, raw_string

__all__ = ["document_dataset", "document_label", "check_declared_labels", "MAX_DOCUMENT_CHARS"]

#: Longest document text (characters) ``make_dataset`` accepts: the JSON-lines reader's line
#: limit, so that every document given in memory could also be read from a file.
MAX_DOCUMENT_CHARS = MAX_DOCUMENT_LINE_CHARS


def document_label(value, i: int, what: str = "y") -> str:
    """Label ``y[i]`` after checking it is a non-blank string (InputError naming ``y[i]``;
    ``what``: the argument's name, ``classes`` for a declared label set)."""
    if value is None:
        raise raw_error("the label is None; give every document its class, or pass y=None "
                        "for documents to predict", i, what=what)
    if not isinstance(value, str):
        raise raw_error(
            f"the label is {type(value).__name__} {value!r}; expected a string, the class "
            f"name as the JSON-lines files hold it (predictions come back as these strings). "
            f"Convert class ids first, e.g. y = [names[k] for k in y] or [str(k) for k in y]",
            i, what=what)
    return raw_string(value, i, "the label", name=what)


def check_declared_labels(labels) -> None:
    """A declared label set (``Dataset.labels``: ``partial_fit``'s classes) checked label by
    label as ``y``'s are, located ``classes[k]``: each gets weights and is written to the
    model file, so one ``y`` could not hold is refused."""
    for k, label in enumerate(labels):
        document_label(label, k, "classes")


def _numbers_error(i: int, form: str, X):
    """``X[i]`` is numbers, not a text: what it is, the two forms ``X`` takes, and how to
    make the matrix (or why it cannot be one: rows of unequal length)."""
    note = ragged_note(X)
    if note:
        hint = f"; every document needs the same n_columns{note}"
    elif isinstance(X, (list, tuple)):
        hint = " (np.asarray(X, dtype=float) is that matrix, when every row has n_columns numbers)"
    else:
        hint = ""
    return raw_error(f"is {form}, a sequence of numbers and not a document text; give X as a "
                     f"list of document texts (strings), or as one 2-D numeric matrix "
                     f"(n_documents x n_columns: a float numpy array or a scipy.sparse matrix)"
                     f"{hint}", i)


def document_dataset(X, y=None) -> Dataset:
    """``DocumentClassificationTask.make_dataset``: one ``Document(str(i), label, text)``
    per text (``label`` None without ``y``); targets are the label strings."""
    given_X = X
    X, y = raw_examples(X, y, example="document text (a string)")
    docs = []
    for i, text in enumerate(X):
        form = numbers_form(text)
        if form is not None:  # a row of a matrix that did not become one: say so
            raise _numbers_error(i, form, given_X)
        raw_string(text, i, "the document text", max_length=MAX_DOCUMENT_CHARS)
        docs.append(Document(str(i), None if y is None else document_label(y[i], i), text, 0))
    return Dataset(docs, [d.label for d in docs])
