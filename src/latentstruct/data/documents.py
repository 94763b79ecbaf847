"""Reader and writer of labelled documents as JSON lines (document classification, 20NG).

One JSON object per line, UTF-8::

    {"id": "49960", "label": "alt.atheism", "text": "From: mathew <mathew@mantis.co.uk>\\n..."}

* ``text`` (required): a non-blank string, the document;
* ``label`` (required unless ``allow_unlabelled=True``, as for ``latentstruct predict``): a
  non-blank string, the class;
* ``id`` (optional): a non-empty string naming the document (20 Newsgroups: the Usenet
  article number).  Two documents of one label may not share an id: the by-date split of the
  ``doccls`` task orders each label's documents by id, and a repeated id means the same post
  was merged in twice (an error, not a warning, so that the split never depends on the order
  of duplicates).  The same id under two labels is fine (article numbers are per newsgroup);
* any other keys are kept as they are and written back by :func:`write_documents`.

Blank lines are skipped.  Malformed input raises ``InputError(message, path, line)`` with the
1-based line number (the command line prints ``file:line: message`` and exits 2); messages say
what was found, what was expected and how to fix it.  :func:`write_documents` goes through
``atomic_write``: a file is either fully written or untouched.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.data.readers.lines import (
    excerpt,
    one_prediction_per_item,
    parse_json_line,
    read_lines,
)
from latentstruct.exceptions import InputError

__all__ = ["Document", "read_documents", "write_documents", "split_by_date", "DOCUMENT_KEYS",
           "MAX_DOCUMENT_LINE_CHARS"]

#: the keys the reader interprets; every other key of a line is kept in ``Document.extra``
DOCUMENT_KEYS = ("id", "label", "text")

_EXAMPLE = '{"id": "49960", "label": "alt.atheism", "text": "..."}'

#: Longest line (one JSON document, in characters) ``read_documents`` accepts: 65 times the
#: longest 20 Newsgroups post (77,015 characters as a JSON line).  Documents are tokenised
#: in linear time, so the limit only keeps a file without line breaks (or a binary file)
#: from being read whole into memory; such a line is refused, not split, since a piece of
#: it is not a JSON object.
MAX_DOCUMENT_LINE_CHARS = 5_000_000


@dataclass(frozen=True)
class Document:
    """One document.

    id : str or None
        The document's id (``None`` when the line has no ``id``).
    label : str or None
        Its class (``None`` only for unlabelled input read with ``allow_unlabelled=True``).
    text : str
    line : int
        1-based line of the file it was read from (0 if it was not read from a file).
    extra : mapping
        The line's other keys, written back unchanged by :func:`write_documents`.
    """

    id: str | None
    label: str | None
    text: str
    line: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict:
        """The document as the JSON object it was read from (keys: id, label, text, extra)."""
        out: dict = {}
        if self.id is not None:
            out["id"] = self.id
        if self.label is not None:
            out["label"] = self.label
        out["text"] = self.text
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out


def _describe(value) -> str:
    if value is None:
        return "null"
    kind = {bool: "a boolean", int: "a number", float: "a number", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)
    shown = json.dumps(value, ensure_ascii=False)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} ({shown})"


def _string_field(obj: dict, key: str, name: str, lineno: int, *, required: bool,
                  how: str) -> str | None:
    """``obj[key]`` as a non-blank string, None when absent and not required."""
    if key not in obj:
        if not required:
            return None
        raise InputError(
            f"missing {key!r}; expected a JSON object with the keys \"label\" and \"text\" "
            f"such as {_EXAMPLE}. {how}", name, lineno)
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(
            f"{key!r} is {_describe(value)}; expected a string. Write it in quotes, e.g. "
            f"\"{key}\": \"...\"", name, lineno)
    if not value.strip():
        raise InputError(
            f"{key!r} is {'empty' if not value else 'blank (only whitespace)'}; expected a "
            f"non-empty string. {how}", name, lineno)
    return value


def read_documents(path, *, allow_unlabelled: bool = False) -> list[Document]:
    """Read a JSON-lines file of documents (see the module docstring for the format).

    Parameters
    ----------
    path : str or os.PathLike
    allow_unlabelled : bool, default False
        Accept lines without a ``label`` (their ``Document.label`` is None), for prediction.
        A ``label`` that is present must still be a non-blank string.

    Returns
    -------
    list of Document, in file order.

    Raises
    ------
    InputError
        With ``path`` and the line: undecodable bytes, a NUL byte, a line longer than
        :data:`MAX_DOCUMENT_LINE_CHARS`, invalid JSON, a line that is not a
        JSON object, a missing or blank ``text`` (or ``label``), a non-string ``id``,
        ``label`` or ``text``, an id repeated within a label; with ``path`` only: a file
        without any document.
    """
    name = os.fspath(path)
    docs: list[Document] = []
    seen: dict[tuple[str, str], int] = {}
    label_how = ("Give every line a label" + (
        "" if allow_unlabelled else " (only `latentstruct predict` reads unlabelled documents)"))
    for lineno, text in read_lines(path, max_chars=MAX_DOCUMENT_LINE_CHARS):
        if not text.strip():
            continue
        obj = parse_json_line(text, name, lineno,
                              f"expected one JSON object per line such as {_EXAMPLE}")
        if not isinstance(obj, dict):
            raise InputError(
                f"the line holds {_describe(obj)}, not a JSON object; expected one object per "
                f"line such as {_EXAMPLE}", name, lineno)
        doc_id = _string_field(obj, "id", name, lineno, required=False,
                               how="Give the document an id, or leave the key out")
        label = _string_field(obj, "label", name, lineno, required=not allow_unlabelled,
                              how=label_how + ", or remove the line")
        body = _string_field(obj, "text", name, lineno, required=True,
                             how="Every document needs its text; remove the line if it has none")
        if doc_id is not None and label is not None:
            first = seen.setdefault((label, doc_id), lineno)
            if first != lineno:
                raise InputError(
                    f"id {excerpt(doc_id)} of label {excerpt(label)} was already used on line {first}; "
                    f"expected ids unique within a label (the by-date split orders a label's "
                    f"documents by id). Remove the duplicate line or give it its own id",
                    name, lineno)
        extra = {k: v for k, v in obj.items() if k not in DOCUMENT_KEYS}
        docs.append(Document(doc_id, label, body, lineno, extra))
    if not docs:
        raise InputError(
            f"the file holds no documents; expected JSON lines such as {_EXAMPLE}", name)
    return docs


def _date_key(doc: Document) -> tuple:
    """Sort key standing in for a post's date: integer ids numerically, before any other id
    (compared as strings); a document without id by its line."""
    if doc.id is not None:
        text = doc.id.strip()
        if text.isascii() and text.isdigit():
            # numeric order without int(): by length, then digits (int() refuses more than
            # 4,300 digits, and an id is any string)
            digits = text.lstrip("0")
            return (0, len(digits), digits)
        return (1, 0, doc.id)
    return (2, doc.line, "")


def split_by_date(documents: Sequence[Document], eval_fraction: float = 0.2, *, path=None):
    """The 20 Newsgroups *by-date* split, within each label: (train indices, eval indices).

    A label's documents are ordered by id (Usenet article numbers grow with time; integer
    ids compare as numbers, other ids as strings after them, a document without id by its
    line), and the last ``round(eval_fraction * n)`` of its n documents form the eval part,
    at least 1 and at most n - 1 when n >= 2 (a label with a single document keeps it for
    training).  Both index arrays are int64 in increasing (file) order.  On the 20NG bydate
    training file (11,314 posts) ``eval_fraction=0.2`` gives 9,050 train / 2,264 eval.

    Raises InputError (naming ``path``, the file the documents came from, and the line) for
    a document without a label: the split is per label.
    """
    if isinstance(eval_fraction, bool) or not isinstance(eval_fraction, (int, float)) \
            or not 0.0 < float(eval_fraction) < 1.0:
        raise ValueError(f"eval_fraction must be a number in (0, 1), got {eval_fraction!r}")
    by_label: dict[str, list[int]] = {}
    for k, doc in enumerate(documents):
        if doc.label is None:
            raise InputError("this document has no label, and the train/eval split picks "
                             "documents per label; label every line, or read the whole file "
                             "(split='all')", path, doc.line or None)
        by_label.setdefault(doc.label, []).append(k)
    is_eval = np.zeros(len(documents), dtype=bool)
    for members in by_label.values():
        n = len(members)
        if n < 2:
            continue
        n_eval = min(max(int(math.floor(float(eval_fraction) * n + 0.5)), 1), n - 1)
        ordered = sorted(members, key=lambda k: _date_key(documents[k]))
        is_eval[ordered[n - n_eval:]] = True
    return np.flatnonzero(~is_eval).astype(np.int64), np.flatnonzero(is_eval).astype(np.int64)


def write_documents(path, documents: Sequence[Document], predicted=None) -> None:
    """Write ``documents`` as JSON lines (UTF-8, non-ASCII kept as is), atomically.

    With ``predicted`` (one label string per document) every object gets a ``"predicted"``
    key after the document's own keys (a ``predicted`` key read from the input is replaced).
    """
    documents = list(documents)
    if predicted is not None:
        predicted = one_prediction_per_item("write_documents", documents, predicted,
                                            "document", "label")
    lines = []
    for k, doc in enumerate(documents):
        obj = doc.to_json()
        if predicted is not None:
            label = predicted[k]
            if not isinstance(label, str):
                raise InputError(f"cannot write document {k} (read from line {doc.line}): the "
                                 f"predicted label {excerpt(label)} is not a string")
            obj.pop("predicted", None)
            obj["predicted"] = label
        line = json.dumps(obj, ensure_ascii=False)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (from a \ud800-\udfff JSON escape)
            line = json.dumps(obj)
        lines.append(line + "\n")
    with atomic_write(path, "w") as fh:
        fh.writelines(lines)
