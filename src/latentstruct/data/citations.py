"""Reader and writer of the Cora citation field-extraction file (McCallum et al.).

The file alternates a marker line ``<NEWREFERENCE>`` with one citation line.  A citation
line is a sequence of fields written as SGML-like spans whose tags are separate
whitespace tokens::

    <NEWREFERENCE>
    <author> A. Cau, R. Kuiper, and W.-P. de Roever. </author> <title> Formalising ... </title>

Tokens are the whitespace-separated words between the tags, and every token takes the
name of the field around it as its label (``author``, ``title``, ``date``, ...: whatever
the file uses).  Fields do not nest, every token lies inside exactly one field, and a
field opens and closes on the same line.

Blank lines between references (after a citation line, or at the end of the file) are
ignored; a blank line right after a marker is an empty citation and an error.  Malformed
input raises ``InputError(message, path, line)`` with the 1-based line number.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from latentstruct.data.atomic import atomic_write
from latentstruct.data.readers.lines import excerpt, one_prediction_per_item, read_lines
from latentstruct.exceptions import InputError

__all__ = [
    "MARKER",
    "Citation",
    "FIELD_LABEL_FORM",
    "is_field_label",
    "CoraSplit",
    "read_cora",
    "write_cora",
    "split_cora",
    "CORA_TRAIN_SIZE",
    "CORA_DEV_SIZE",
]

#: the line that starts every reference
MARKER = "<NEWREFERENCE>"
#: references 1-300 train, 301-400 dev (the deterministic split of the data README)
CORA_TRAIN_SIZE = 300
CORA_DEV_SIZE = 100

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_.-]*)>")
_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
#: what a field label must look like (the tag names of the format), for messages
FIELD_LABEL_FORM = "a letter followed by letters, digits, '_', '.' or '-' (author, title, date)"


def is_field_label(label) -> bool:
    """Whether ``label`` can name a field of the format (``<label> ... </label>``): the check
    of :func:`write_cora`, shared by in-memory data."""
    return isinstance(label, str) and _LABEL.fullmatch(label) is not None


@dataclass(frozen=True, slots=True)
class Citation:
    """One reference: its tokens and the field label of every token.

    tokens, labels : equal-length tuples of strings
    line : 1-based line of the citation text in the file it was read from (0 if it was not
        read from a file)
    """

    tokens: tuple[str, ...]
    labels: tuple[str, ...]
    line: int = 0

    def __post_init__(self):
        for name in ("tokens", "labels"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if len(self.tokens) != len(self.labels):
            raise InputError(
                f"Citation needs one label per token, got {len(self.tokens)} tokens and "
                f"{len(self.labels)} labels",
                line=self.line or None,
            )

    def __len__(self) -> int:
        return len(self.tokens)

    def fields(self) -> list[tuple[str, tuple[str, ...]]]:
        """The citation as ``(label, tokens)`` spans: maximal runs of one label."""
        return _spans(self.tokens, self.labels)


def _spans(tokens: Sequence[str], labels: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    out: list[tuple[str, tuple[str, ...]]] = []
    start = 0
    for t in range(1, len(tokens) + 1):
        if t == len(tokens) or labels[t] != labels[start]:
            out.append((labels[start], tuple(tokens[start:t])))
            start = t
    return out


def _parse_citation(text: str, name: str, lineno: int) -> Citation:
    """Parse one citation line into tokens and labels (errors name ``name:lineno``)."""
    words = text.split()
    if not words:
        raise InputError(
            f"the citation line after {MARKER} is empty; expected the tagged citation, "
            f"e.g. '<author> A. Cau. </author> <title> ... </title>'. Remove the marker of "
            f"an empty reference or add its citation text",
            name,
            lineno,
        )
    tokens: list[str] = []
    labels: list[str] = []
    open_field: str | None = None
    open_at = 0  # 1-based word position of the open tag
    field_size = 0
    for k, word in enumerate(words, 1):
        m = _TAG.fullmatch(word)
        if m is None:
            if open_field is None:
                raise InputError(
                    f"token {excerpt(word)} (word {k} of the line) lies outside any field; every "
                    f"token must be inside a '<field> ... </field>' span. Wrap it in the "
                    f"field it belongs to",
                    name,
                    lineno,
                )
            tokens.append(word)
            labels.append(open_field)
            field_size += 1
            continue
        closing, tag = m.group(1) == "/", m.group(2)
        if word == MARKER:
            raise InputError(
                f"{MARKER} appears inside a citation line (word {k}); the marker must be on "
                f"a line of its own, before each citation line",
                name,
                lineno,
            )
        if not closing:
            if open_field is not None:
                raise InputError(
                    f"nested tag <{tag}> (word {k}) inside the field <{open_field}> opened at "
                    f"word {open_at}; fields cannot nest. Close it with </{open_field}> "
                    f"before opening <{tag}>",
                    name,
                    lineno,
                )
            open_field, open_at, field_size = tag, k, 0
            continue
        if open_field is None:
            raise InputError(
                f"closing tag </{tag}> (word {k}) without a matching opening tag <{tag}>; "
                f"add <{tag}> before the field's first token or remove the stray </{tag}>",
                name,
                lineno,
            )
        if tag != open_field:
            raise InputError(
                f"closing tag </{tag}> (word {k}) does not match the open field "
                f"<{open_field}> (opened at word {open_at}); expected </{open_field}>",
                name,
                lineno,
            )
        if field_size == 0:
            raise InputError(
                f"field <{tag}> (words {open_at}-{k}) contains no tokens; remove the empty "
                f"span or put its text between the tags",
                name,
                lineno,
            )
        open_field = None
    if open_field is not None:
        raise InputError(
            f"unbalanced tags: the field <{open_field}> opened at word {open_at} has no "
            f"closing </{open_field}> before the end of the line; every field must be "
            f"closed on its own citation line",
            name,
            lineno,
        )
    return Citation(tuple(tokens), tuple(labels), lineno)


def read_cora(path) -> list[Citation]:
    """Read a Cora tagged-references file into ``Citation`` records, in file order.

    Checked: each citation line follows its own ``<NEWREFERENCE>`` line; tags are
    balanced (every ``<field>`` is closed by ``</field>`` on the same line, no nesting, no
    stray closing tags); no token lies outside a field; no empty citation or field; at
    least one reference; strict UTF-8.
    """
    name = os.fspath(path)
    citations: list[Citation] = []
    marker_line = 0  # line of a marker still waiting for its citation line, else 0
    previous_citation = 0
    for lineno, text in read_lines(path):
        stripped = text.strip()
        if marker_line:
            if stripped == MARKER:
                raise InputError(
                    f"expected a citation line after the {MARKER} on line {marker_line}, got "
                    f"another {MARKER}; each marker must be followed by exactly one citation "
                    f"line",
                    name,
                    lineno,
                )
            citations.append(_parse_citation(text, name, lineno))
            previous_citation, marker_line = lineno, 0
            continue
        if not stripped:
            continue
        if stripped == MARKER:
            marker_line = lineno
            continue
        if stripped.split()[0] == MARKER:
            raise InputError(
                f"{MARKER} must be alone on its line; move the citation text after it to the "
                f"next line",
                name,
                lineno,
            )
        after = (
            f"the citation on line {previous_citation} already has its text"
            if previous_citation
            else "the file must start with a marker"
        )
        raise InputError(
            f"missing {MARKER} marker: expected {MARKER} before this citation line ({after}); "
            f"put a line {MARKER} before every citation and keep each citation on one line",
            name,
            lineno,
        )
    if marker_line:
        raise InputError(
            f"the {MARKER} on line {marker_line} is the last line of the file; expected it to "
            f"be followed by a citation line. Remove the trailing marker or add its citation",
            name,
            marker_line,
        )
    if not citations:
        raise InputError(
            f"contains no citations; expected {MARKER} lines, each followed by one tagged "
            f"citation line such as '<author> A. Cau. </author> <title> ... </title>'",
            name,
        )
    return citations


def write_cora(path, citations: Sequence[Citation], predicted_labels=None) -> None:
    """Write ``citations`` in the Cora format with ``predicted_labels`` as their fields.

    ``predicted_labels`` holds one label sequence per citation (``None`` writes the
    citations' own labels).  Consecutive tokens with the same label form one span, so
    ``read_cora`` of the written file gives back the same tokens and labels.  Each reference
    is written as ``<NEWREFERENCE>`` and one line of space-separated tags and tokens.  The
    file is written atomically.
    """
    citations = list(citations)
    if predicted_labels is None:
        predicted_labels = [c.labels for c in citations]
    else:
        predicted_labels = one_prediction_per_item("write_cora", citations, predicted_labels,
                                                   "citation", "label sequence")
    chunks = []
    for k, (cit, pred) in enumerate(zip(citations, predicted_labels)):
        pred = list(pred)
        where = f"citation {k} (read from line {cit.line})" if cit.line else f"citation {k}"
        if len(pred) != len(cit.tokens):
            raise InputError(
                f"cannot write {where}: it has {len(cit.tokens)} tokens but {len(pred)} "
                f"predicted labels"
            )
        if not cit.tokens:
            raise InputError(f"cannot write {where}: it has no tokens")
        for label in pred:
            if not is_field_label(label):
                raise InputError(
                    f"cannot write {where}: label {excerpt(label)} is not a valid field name; "
                    f"expected {FIELD_LABEL_FORM}"
                )
        for tok in cit.tokens:
            if not isinstance(tok, str) or not tok or any(c.isspace() for c in tok):
                raise InputError(
                    f"cannot write {where}: token {excerpt(tok)} must be a non-empty string without "
                    f"whitespace"
                )
            if _TAG.fullmatch(tok) is not None:
                raise InputError(
                    f"cannot write {where}: token {excerpt(tok)} looks like a field tag and would "
                    f"be read back as one"
                )
        parts = []
        for label, toks in _spans(cit.tokens, pred):
            parts.append(f"<{label}> {' '.join(toks)} </{label}>")
        chunks.append(f"{MARKER}\n{' '.join(parts)}\n")
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.writelines(chunks)


@dataclass(frozen=True)
class CoraSplit:
    """The deterministic split of the data README: train = references 1-300, dev =
    references 301-400; ``rest`` holds any references after 400 (the held-back 401-500
    when the full file is given; empty for the shared 400-reference file)."""

    train: list[Citation]
    dev: list[Citation]
    rest: list[Citation]


def split_cora(citations: Sequence[Citation]) -> CoraSplit:
    """Split by file order into train (references 1-300) and dev (301-400).

    Raises ``InputError`` when there are fewer than 400 references.
    """
    citations = list(citations)
    need = CORA_TRAIN_SIZE + CORA_DEV_SIZE
    if len(citations) < need:
        raise InputError(
            f"split_cora needs at least {need} references (train 1-{CORA_TRAIN_SIZE}, dev "
            f"{CORA_TRAIN_SIZE + 1}-{need}), got {len(citations)}; pass the whole Cora file"
        )
    return CoraSplit(
        train=citations[:CORA_TRAIN_SIZE],
        dev=citations[CORA_TRAIN_SIZE:need],
        rest=citations[need:],
    )
