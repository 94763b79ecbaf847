"""CoNLL-U files (Universal Dependencies): :class:`ConlluSentence`, the reader and the
writer of predicted tags or trees.

Malformed input is an ``InputError(message, path, line)`` with the 1-based line number;
the writer goes through ``atomic_write`` (a file is either fully written or untouched).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from latentstruct.data.atomic import atomic_write
from latentstruct.data.readers.lines import (
    check_written_tag,
    excerpt,
    one_prediction_per_item,
    read_lines,
)
from latentstruct.exceptions import InputError

__all__ = ["CONLLU_FIELDS", "UPOS_TAGS", "UPOS_FORM", "is_upos_tag", "ConlluSentence",
           "read_conllu", "write_conllu"]

CONLLU_FIELDS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
_ID, _FORM, _LEMMA, _UPOS, _XPOS, _FEATS, _HEAD, _DEPREL, _DEPS, _MISC = range(10)
# IDs and heads of more than 9 digits are refused before int(): no sentence has a billion
# words, and int() of a 5,000-digit string raises a bare ValueError.
_MAX_DIGITS = 9
_RANGE_ID = re.compile(r"([1-9][0-9]{0,8})-([1-9][0-9]{0,8})")
_EMPTY_ID = re.compile(r"(?:0|[1-9][0-9]*)\.[1-9][0-9]*")
#: The 17 Universal POS tags of UD v2 (https://universaldependencies.org/u/pos/), the values
#: UPOS (column 4) may take besides '_'.
UPOS_TAGS = frozenset((
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
    "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
))
# UD v1 called CCONJ "CONJ"; v1 treebanks (the shared Basque BDT v1.4) still use it.
_UD1_UPOS = frozenset(("CONJ",))
_ALLOWED_UPOS = UPOS_TAGS | _UD1_UPOS | {"_"}
_UPOS_LIST = " ".join(sorted(UPOS_TAGS))
#: what a UPOS tag must be, for the messages of the CoNLL-U reader and ``make_dataset``
UPOS_FORM = f"one of the 17 UD tags {_UPOS_LIST} (or CONJ, UD v1's CCONJ)"


def is_upos_tag(tag: str) -> bool:
    """Whether ``tag`` may stand in UPOS: one of :data:`UPOS_TAGS`, ``CONJ`` or ``_`` (the
    check of :func:`read_conllu`, shared by in-memory data)."""
    return tag in _ALLOWED_UPOS


def _is_word_id(token_id: str) -> bool:
    return token_id.isdigit() and token_id.isascii()


@dataclass(frozen=True, slots=True)
class ConlluSentence:
    """One CoNLL-U sentence, kept whole so that it can be written back unchanged.

    rows : every non-comment line split into its 10 fields, in file order, including
        multiword-token ranges (``1-2``) and empty nodes (``8.1``)
    comments : the comment lines (with their ``#``), in order
    line : 1-based line where the sentence starts (its first comment or row; 0 if it was
        not read from a file)

    The properties ``words``, ``upos``, ``xpos``, ``feats``, ``lemmas``, ``heads`` and
    ``deprels`` cover syntactic words only (integer IDs); ``word_row_indices`` gives their
    positions in ``rows``.  ``heads`` are ints, -1 where HEAD is ``_``; ``feats`` are the
    raw FEATS strings (``Case=Erg|Number=Sing``, or ``_``).
    """

    rows: tuple[tuple[str, ...], ...]
    comments: tuple[str, ...] = ()
    line: int = 0
    word_row_indices: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        rows = self.rows
        if not isinstance(rows, tuple) or not all(isinstance(r, tuple) for r in rows):
            rows = tuple(tuple(r) for r in rows)
            object.__setattr__(self, "rows", rows)
        if not isinstance(self.comments, tuple):
            object.__setattr__(self, "comments", tuple(self.comments))
        for k, row in enumerate(rows):
            if len(row) != 10:
                raise InputError(
                    f"ConlluSentence row {k} has {len(row)} fields, expected 10 "
                    f"({' '.join(CONLLU_FIELDS)})",
                    line=self.line or None,
                )
        object.__setattr__(
            self,
            "word_row_indices",
            tuple(k for k, row in enumerate(rows) if _is_word_id(row[_ID])),
        )

    @classmethod
    def from_words(cls, words, line: int = 0) -> "ConlluSentence":
        """A sentence of syntactic words only: ID and FORM filled, every other field ``_``
        (what plain-text input and in-memory word lists become, so they write as CoNLL-U)."""
        return cls(tuple((str(k), w) + ("_",) * 8 for k, w in enumerate(words, 1)), (), line)

    def _column(self, col: int) -> tuple[str, ...]:
        rows = self.rows
        return tuple(rows[k][col] for k in self.word_row_indices)

    def __len__(self) -> int:
        """Number of syntactic words."""
        return len(self.word_row_indices)

    @property
    def words(self) -> tuple[str, ...]:
        return self._column(_FORM)

    @property
    def lemmas(self) -> tuple[str, ...]:
        return self._column(_LEMMA)

    @property
    def upos(self) -> tuple[str, ...]:
        return self._column(_UPOS)

    @property
    def xpos(self) -> tuple[str, ...]:
        return self._column(_XPOS)

    @property
    def feats(self) -> tuple[str, ...]:
        return self._column(_FEATS)

    def word_line(self, k: int) -> int:
        """1-based file line of syntactic word ``k`` (0-based), or 0 when the sentence was
        not read from a file.  Comments and rows of a sentence are contiguous lines."""
        if not self.line:
            return 0
        return self.line + len(self.comments) + self.word_row_indices[k]

    @property
    def heads(self) -> tuple[int, ...]:
        return tuple(-1 if h == "_" else int(h) for h in self._column(_HEAD))

    @property
    def deprels(self) -> tuple[str, ...]:
        return self._column(_DEPREL)


def _is_blank(text: str) -> bool:
    return not text or text.isspace()


def _shown_id(token_id: str) -> str:
    """A numeric ID as written, or an excerpt when it is absurdly long."""
    return token_id if len(token_id) <= 20 else excerpt(token_id, 20)


def _conllu_error(message: str, path: str, line: int) -> InputError:
    return InputError(message, path, line)


def _upos_error(tag: str, what: str, name: str, line: int) -> InputError:
    found = "empty" if not tag else f"{excerpt(tag)}, not a Universal POS tag"
    return _conllu_error(
        f"UPOS (column 4) of {what} is {found}; expected {UPOS_FORM}, or '_' if it is "
        f"unknown. Language-specific tags belong in XPOS (column 5)",
        name,
        line,
    )


def read_conllu(path) -> list[ConlluSentence]:
    """Read a CoNLL-U file into ``ConlluSentence`` records.

    Checked: 10 tab-separated fields per row; IDs are integers, ranges ``N-M`` (N < M) or
    empty nodes ``N.M``; word IDs run 1, 2, ..., n in order; a range ``N-M`` comes right
    before word N, does not overlap the previous range and ends at a word of its sentence; HEAD is ``_`` or an integer
    between 0 and n; UPOS of words and empty nodes is one of :data:`UPOS_TAGS`, ``CONJ``
    (UD v1's name of CCONJ) or ``_`` (XPOS is free); comments come before the rows of their
    sentence.  Lines are read by :func:`read_lines` (NUL bytes, UTF-8, line length).
    """
    name = os.fspath(path)
    sentences: list[ConlluSentence] = []
    rows: list[tuple[str, ...]] = []
    comments: list[str] = []
    start = 0
    n_words = 0
    max_head = max_head_line = 0
    max_head_word = ""
    range_end = range_line = 0  # the last multiword-token range N-M: M and its line
    range_id = ""

    def flush() -> None:
        if range_end > n_words:
            raise _conllu_error(
                f"multiword-token range {range_id} goes past the last word of its sentence "
                f"({n_words} words); expected a range N-M over words N..M that follow it",
                name,
                range_line,
            )
        if not rows:
            raise _conllu_error(
                "sentence has comment lines but no word lines; expected the comments to "
                "be followed by the rows (ID FORM LEMMA ...) of their sentence",
                name,
                start,
            )
        if max_head > n_words:
            raise _conllu_error(
                f"HEAD {max_head} of word {max_head_word} points past the last word of the "
                f"sentence ({n_words} words); expected 0 (root) or a word ID 1..{n_words}",
                name,
                max_head_line,
            )
        sentences.append(ConlluSentence(tuple(rows), tuple(comments), start))

    for lineno, text in read_lines(path):
        if _is_blank(text):
            if rows or comments:
                flush()
                rows, comments, n_words, max_head = [], [], 0, 0
                range_end = range_line = 0
            continue
        if text[0] == "#":
            if rows:
                raise _conllu_error(
                    "comment line inside a sentence, after its word lines; CoNLL-U comments "
                    "must come before the first row of their sentence (or add a blank line "
                    "to end the sentence first)",
                    name,
                    lineno,
                )
            if not comments:
                start = lineno
            comments.append(text)
            continue
        fields = text.split("\t")
        if len(fields) != 10:
            raise _conllu_error(
                f"expected 10 tab-separated fields ({' '.join(CONLLU_FIELDS)}), got "
                f"{len(fields)}; separate the columns with single tab characters and write "
                f"'_' for an empty field",
                name,
                lineno,
            )
        if not rows and not comments:
            start = lineno
        token_id = fields[_ID]
        if _is_word_id(token_id):
            if len(token_id) > _MAX_DIGITS or int(token_id) != n_words + 1:
                raise _conllu_error(
                    f"word ID {_shown_id(token_id)} out of order: expected {n_words + 1}; word "
                    f"IDs must run 1, 2, 3, ... within each sentence",
                    name,
                    lineno,
                )
            n_words += 1
            head = fields[_HEAD]
            if head != "_":
                if not (head.isdigit() and head.isascii()):
                    raise _conllu_error(
                        f"HEAD {excerpt(head)} of word {token_id} is not an integer or '_'; "
                        f"expected 0 for the root or the ID of the head word",
                        name,
                        lineno,
                    )
                if len(head) > _MAX_DIGITS:
                    raise _conllu_error(
                        f"HEAD {excerpt(head)} of word {token_id} is out of range (more than "
                        f"{_MAX_DIGITS} digits); expected 0 (root) or the ID of the head word",
                        name,
                        lineno,
                    )
                if int(head) > max_head:
                    max_head, max_head_line, max_head_word = int(head), lineno, token_id
            if not is_upos_tag(fields[_UPOS]):
                raise _upos_error(fields[_UPOS], f"word {token_id}", name, lineno)
        else:
            m = _RANGE_ID.fullmatch(token_id)
            if m is not None:
                first, last = int(m.group(1)), int(m.group(2))
                if first >= last:
                    raise _conllu_error(
                        f"bad multiword-token range {excerpt(token_id)}: the first ID must be "
                        f"smaller than the second, e.g. '1-2'",
                        name,
                        lineno,
                    )
                if range_end > n_words:
                    raise _conllu_error(
                        f"multiword-token range {token_id} starts inside the range {range_id} "
                        f"of line {range_line}, which still covers word {n_words + 1}; ranges "
                        f"may not overlap",
                        name,
                        lineno,
                    )
                if first != n_words + 1:
                    raise _conllu_error(
                        f"multiword-token range {token_id} does not cover the words that "
                        f"follow it: the next word is {n_words + 1}; a range N-M comes right "
                        f"before word N",
                        name,
                        lineno,
                    )
                range_end, range_line, range_id = last, lineno, token_id
            elif _EMPTY_ID.fullmatch(token_id) is None:
                raise _conllu_error(
                    f"bad ID {excerpt(token_id)}: expected a word ID (1, 2, ...), a "
                    f"multiword-token range (1-2) or an empty node (8.1)",
                    name,
                    lineno,
                )
            elif not is_upos_tag(fields[_UPOS]):
                raise _upos_error(fields[_UPOS], f"empty node {_shown_id(token_id)}", name, lineno)
        rows.append(tuple(fields))
    if rows or comments:
        flush()
    if not sentences:
        raise InputError(
            "contains no sentences; expected CoNLL-U rows of 10 tab-separated fields with a "
            "blank line after each sentence",
            name,
        )
    return sentences


def write_conllu(path, sentences: Sequence[ConlluSentence], predicted_upos=None, *,
                 column: str = "UPOS") -> None:
    """Write ``sentences`` back in CoNLL-U, with ``column`` (``"UPOS"``, column 4, or
    ``"XPOS"``, column 5) of every word row replaced by ``predicted_upos`` (one tag sequence
    per sentence; ``None`` keeps the original).

    Comments, multiword-token ranges and empty nodes are written exactly as read, so
    ``write_conllu(p2, read_conllu(p1))`` reproduces a well-formed, LF-terminated ``p1``
    byte for byte.  The file is written atomically.
    """
    if column not in ("UPOS", "XPOS"):
        raise ValueError(f"write_conllu writes predicted tags into 'UPOS' or 'XPOS', got "
                         f"column={column!r}")
    col = _UPOS if column == "UPOS" else _XPOS
    sentences = list(sentences)
    if predicted_upos is not None:
        predicted_upos = one_prediction_per_item("write_conllu", sentences, predicted_upos,
                                                 "sentence", "tag sequence")
    chunks = []
    for k, sent in enumerate(sentences):
        if predicted_upos is None:
            rows = sent.rows
        else:
            pred = list(predicted_upos[k])
            indices = sent.word_row_indices
            if len(pred) != len(indices):
                raise InputError(
                    f"cannot write sentence {k} (read from line {sent.line}): it has "
                    f"{len(indices)} words but {len(pred)} predicted tags"
                )
            rows = list(sent.rows)
            for idx, tag in zip(indices, pred):
                check_written_tag(tag, column, k, sent.line)
                row = rows[idx]
                rows[idx] = row[:col] + (tag,) + row[col + 1:]
        lines = [c + "\n" for c in sent.comments]
        lines.extend("\t".join(row) + "\n" for row in rows)
        lines.append("\n")
        chunks.append("".join(lines))
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.writelines(chunks)
