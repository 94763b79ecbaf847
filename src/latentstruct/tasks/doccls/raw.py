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
from ..validation import raw_error, raw_examples, raw_string

__all__ = ["document_dataset", "document_label", "MAX_DOCUMENT_CHARS"]

#: Longest document text (characters) ``make_dataset`` accepts: the JSON-lines reader's line
#: limit, so that every document given in memory could also be read from a file.
MAX_DOCUMENT_CHARS = MAX_DOCUMENT_LINE_CHARS


def document_label(value, i: int) -> str:
    """Label ``y[i]`` after checking it is a non-blank string (InputError naming ``y[i]``)."""
    if value is None:
        raise raw_error("the label is None; give every document its class, or pass y=None "
                        "for documents to predict", i, what="y")
    if not isinstance(value, str):
        raise raw_error(
            f"the label is {type(value).__name__} {value!r}; expected a string, the class "
            f"name as the JSON-lines files hold it (predictions come back as these strings). "
            f"Convert class ids first, e.g. y = [names[k] for k in y] or [str(k) for k in y]",
            i, what="y")
    return raw_string(value, i, "the label", name="y")


def document_dataset(X, y=None) -> Dataset:
    """``DocumentClassificationTask.make_dataset``: one ``Document(str(i), label, text)``
    per text (``label`` None without ``y``); targets are the label strings."""
    X, y = raw_examples(X, y, example="document text (a string)")
    docs = []
    for i, text in enumerate(X):
        raw_string(text, i, "the document text", max_length=MAX_DOCUMENT_CHARS)
        docs.append(Document(str(i), None if y is None else document_label(y[i], i), text, 0))
    return Dataset(docs, [d.label for d in docs])
