"""Readers and writers for the line-based corpus formats: CoNLL-2000 chunking and CoNLL-U.

Every reader returns typed, immutable records and reports malformed input as
``InputError(message, path, line)`` with the 1-based line number, so that the command line
can print ``file:line: message``.  Messages say what was found, what was expected and how to
fix it.  Writers go through ``atomic_write``: a file is either fully written or untouched.

``read_lines`` is the shared low-level reader: it yields ``(line_number, text)`` and decodes
each line as strict UTF-8, reporting the line of the first undecodable byte.  It also refuses,
with the line, a NUL byte (binary or corrupt input) and a line longer than ``MAX_LINE_CHARS``
characters (see there).  Messages that quote input go through :func:`excerpt`, so a huge
malformed line never floods the terminal.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from latentstruct.data.atomic import atomic_write
from latentstruct.data.path_rule import open_input
from latentstruct.exceptions import InputError

__all__ = [
    "MAX_LINE_CHARS",
    "excerpt",
    "read_lines",
    "parse_json_line",
    "ChunkSentence",
    "CHUNK_TAG_FORM",
    "is_chunk_tag",
    "read_conll2000",
    "write_conll2000",
    "one_prediction_per_item",
    "CONLLU_FIELDS",
    "UPOS_TAGS",
    "UPOS_FORM",
    "is_upos_tag",
    "ConlluSentence",
    "read_conllu",
    "write_conllu",
]


# --------------------------------------------------------------------------------------
# limits and excerpts
# --------------------------------------------------------------------------------------
#: Longest line, in characters without its line ending, that the line readers accept.  The
#: longest line of the shared corpora is 1,439 characters (GLUE RTE) for the token, sentence
#: and pair formats; a longer line is not a record of these formats but a file without line
#: breaks, a binary file or an attack, and per-character feature extraction on it would run
#: for minutes (a 10 MB translit line took 292 s).  Such a line is refused, not split or
#: truncated: cutting it would silently invent records the file does not contain.  Readers
#: whose records are legitimately longer (JSON documents, k-best lists) pass their own limit.
MAX_LINE_CHARS = 100_000
_COUNT_CAP = 1 << 30  # stop counting an overlong line after this many more bytes


def excerpt(value, limit: int = 120) -> str:
    """``repr(value)``, shortened for error messages that quote input.

    A string longer than ``limit`` characters is cut to its first ``limit`` characters and
    ``"… (N more characters)"`` appended, so an error that quotes input stays one short line
    however long the input is; other values are shown by their ``repr``, cut the same way.

    >>> excerpt("abc")
    "'abc'"
    >>> excerpt("x" * 130, limit=4)
    "'xxxx'… (126 more characters)"
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value) - limit:,} more characters)"
    shown = repr(value)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}… ({len(shown) - limit:,} more characters)"


def _nul_error(raw: bytes, name: str, lineno: int) -> InputError:
    k = raw.index(b"\x00")
    utf16 = lineno == 1 and raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    hint = (" It starts with a UTF-16 byte-order mark: re-encode it as UTF-8, e.g. with "
            "`iconv -f utf-16 -t utf-8`" if utf16 else
            " Expected UTF-8 text; check that the right file was given")
    return InputError(
        f"line contains a NUL byte; the file is binary or corrupt (first NUL at byte {k + 1} "
        f"of the line).{hint}",
        name,
        lineno,
    )


def _too_long_error(n_chars: int, max_chars: int, name: str, lineno: int,
                    at_least: bool = False) -> InputError:
    size = f"more than {n_chars:,}" if at_least else f"{n_chars:,}"
    return InputError(
        f"line is {size} characters long, over the limit of {max_chars:,} characters per "
        f"line; it is refused, not split (no record of this format is that long: the file "
        f"probably lacks line breaks or is not a text file of this format)",
        name,
        lineno,
    )


def _count_rest(fh, head: bytes) -> tuple[int, bool]:
    """Characters of an overlong line whose first bytes are ``head`` (the rest is read from
    ``fh`` up to the line end, in chunks, without keeping it); and whether counting stopped
    at the cap (the line is longer still)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    n = len(decoder.decode(head))
    read = 0
    while True:
        chunk = fh.readline(1 << 20)
        if not chunk:
            break
        read += len(chunk)
        if chunk.endswith(b"\n"):
            tail = decoder.decode(chunk, final=True)
            n += len(tail) - (2 if tail.endswith("\r\n") else 1)
            return n, False
        n += len(decoder.decode(chunk))
        if read > _COUNT_CAP:
            return n, True
    return n + len(decoder.decode(b"", final=True)), False


# --------------------------------------------------------------------------------------
# lines
# --------------------------------------------------------------------------------------
def _open_binary(path):
    """Open ``path`` for reading bytes (:func:`~latentstruct.data.path_rule.open_input`:
    standard input and pipes are read once into memory, FIFOs and devices refused, OS
    errors turned into InputError)."""
    return open_input(path)


def read_lines(path, *, max_chars: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line of ``path`` (1-based numbers).

    The text has its line ending (``\\n`` or ``\\r\\n``) removed.  Lines are split on
    ``\\n`` only (never on other Unicode line separators that may occur inside a field), and
    each is decoded as strict UTF-8; a UTF-8 byte-order mark at the start of the file is
    dropped.  Raises ``InputError`` for a missing file and, with the line number, for a NUL
    byte (``"line contains a NUL byte; the file is binary or corrupt"``), for bytes that are
    not UTF-8, and for a line longer than ``max_chars`` characters (default
    :data:`MAX_LINE_CHARS`).

    The length is checked before any decoding or per-character work, and at most
    ``4 * max_chars + 2`` bytes of a line are held in memory: a longer line is counted in
    chunks for the message and refused.
    """
    name = os.fspath(path)
    # a line of max_chars characters takes at most 4 bytes each plus "\r\n"
    byte_limit = 4 * int(max_chars) + 2
    with _open_binary(path) as fh:
        lineno = 0
        while True:
            raw = fh.readline(byte_limit)
            if not raw:
                return
            lineno += 1
            if b"\x00" in raw:
                raise _nul_error(raw, name, lineno)
            if len(raw) == byte_limit and not raw.endswith(b"\n"):
                n_chars, capped = _count_rest(fh, raw)
                raise _too_long_error(n_chars, max_chars, name, lineno, capped)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"invalid UTF-8: byte 0x{raw[exc.start]:02x} at column {exc.start + 1} "
                    f"cannot be decoded ({exc.reason}); expected UTF-8 text. Re-encode the "
                    f"file, e.g. with `iconv -f latin1 -t utf-8`",
                    name,
                    lineno,
                ) from None
            if text.endswith("\n"):
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
            if lineno == 1 and text.startswith("\ufeff"):
                text = text[1:]
            if len(raw) > max_chars and len(text) > max_chars:
                raise _too_long_error(len(text), max_chars, name, lineno)
            yield lineno, text


def parse_json_line(text: str, name: str, lineno: int, expected: str):
    """``json.loads(text)``, with every way it can fail as ``InputError(name, lineno)``:
    ``"not valid JSON (<why>); <expected>"``.  Besides syntax errors that covers nesting too
    deep for the parser (a RecursionError) and integers of more than 4,300 digits (Python's
    conversion limit, a bare ValueError)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        why = f"{exc.msg} at column {exc.colno}"
    except RecursionError:
        why = "arrays or objects nested too deeply"
    except ValueError as exc:
        why = excerpt(str(exc).split(":")[0], 80)[1:-1]
    raise InputError(f"not valid JSON ({why}); {expected}", name, lineno)


def _is_blank(text: str) -> bool:
    return not text or text.isspace()


def _check_written_tag(tag, what: str, k: int, sentence_line: int) -> None:
    if not isinstance(tag, str) or not tag or any(c.isspace() for c in tag):
        raise InputError(
            f"cannot write sentence {k} (read from line {sentence_line}): predicted {what} "
            f"{excerpt(tag)} must be a non-empty string without whitespace"
        )


# --------------------------------------------------------------------------------------
# CoNLL-2000 chunking
# --------------------------------------------------------------------------------------
_CHUNK_TAG = re.compile(r"O|[BI]-\S+")
#: what a chunk tag must look like, for the messages of every reader and ``make_dataset``
CHUNK_TAG_FORM = "'O' or an IOB tag 'B-TYPE' / 'I-TYPE' (for example B-NP, I-VP)"


def is_chunk_tag(tag: str) -> bool:
    """Whether ``tag`` is a CoNLL-2000 chunk tag: ``O``, ``B-TYPE`` or ``I-TYPE`` (the check
    of :func:`read_conll2000`, shared by in-memory data)."""
    return _CHUNK_TAG.fullmatch(tag) is not None


@dataclass(frozen=True, slots=True)
class ChunkSentence:
    """One CoNLL-2000 sentence.

    words, pos, tags : equal-length tuples (chunk tags are IOB, e.g. ``B-NP``, ``I-NP``, ``O``)
    line : 1-based line of the sentence's first token in the file it was read from (0 if
        it was not read from a file)
    """

    words: tuple[str, ...]
    pos: tuple[str, ...]
    tags: tuple[str, ...]
    line: int = 0

    def __post_init__(self):
        for name in ("words", "pos", "tags"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if not len(self.words) == len(self.pos) == len(self.tags):
            raise InputError(
                f"ChunkSentence needs as many POS tags and chunk tags as words, got "
                f"{len(self.words)} words, {len(self.pos)} POS tags, {len(self.tags)} chunk tags",
                line=self.line or None,
            )

    def __len__(self) -> int:
        return len(self.words)


def read_conll2000(path) -> list[ChunkSentence]:
    """Read a CoNLL-2000 chunking file: ``word POS chunk-tag`` per line, blank line between
    sentences (the last sentence may lack its blank line).  Columns may be separated by any
    run of spaces or tabs.  Chunk tags must be ``O`` or ``B-TYPE`` / ``I-TYPE``.
    """
    name = os.fspath(path)
    sentences: list[ChunkSentence] = []
    words: list[str] = []
    pos: list[str] = []
    tags: list[str] = []
    start = 0
    valid_tags: set[str] = set()
    for lineno, text in read_lines(path):
        fields = text.split()
        if not fields:
            if words:
                sentences.append(ChunkSentence(tuple(words), tuple(pos), tuple(tags), start))
                words, pos, tags = [], [], []
            continue
        if len(fields) != 3:
            raise InputError(
                f"expected 3 columns 'word POS chunk-tag' separated by spaces, got "
                f"{len(fields)} column{'s' if len(fields) != 1 else ''}: {excerpt(text)}. Each token "
                f"line needs exactly these three fields; a blank line ends a sentence",
                name,
                lineno,
            )
        word, tag_pos, tag = fields
        if tag not in valid_tags:
            if not is_chunk_tag(tag):
                raise InputError(
                    f"invalid chunk tag {excerpt(tag)} in the third column: expected "
                    f"{CHUNK_TAG_FORM}",
                    name,
                    lineno,
                )
            valid_tags.add(tag)
        if not words:
            start = lineno
        words.append(word)
        pos.append(tag_pos)
        tags.append(tag)
    if words:
        sentences.append(ChunkSentence(tuple(words), tuple(pos), tuple(tags), start))
    if not sentences:
        raise InputError(
            "contains no sentences; expected lines 'word POS chunk-tag' with a blank line "
            "after each sentence",
            name,
        )
    return sentences


def one_prediction_per_item(writer: str, items: list, predictions, item: str,
                            prediction: str) -> list:
    """``predictions`` as a list, checked to hold exactly one entry per element of ``items``
    (InputError naming ``writer`` otherwise)."""
    predictions = list(predictions)
    if len(predictions) != len(items):
        raise InputError(
            f"{writer} got {len(items)} {item}s but {len(predictions)} predicted "
            f"{prediction}s; pass one {prediction} per {item}"
        )
    return predictions


def write_conll2000(path, sentences: Sequence[ChunkSentence], predicted_tags=None) -> None:
    """Write ``sentences`` in CoNLL-2000 format (``word POS tag``, single spaces, a blank
    line after every sentence), with ``predicted_tags`` (one sequence per sentence) in the
    chunk column; ``None`` writes the sentences' own tags.  The file is written atomically.
    """
    sentences = list(sentences)
    if predicted_tags is None:
        predicted_tags = [s.tags for s in sentences]
    else:
        predicted_tags = one_prediction_per_item("write_conll2000", sentences, predicted_tags,
                                                 "sentence", "tag sequence")
    chunks = []
    for k, (sent, pred) in enumerate(zip(sentences, predicted_tags)):
        pred = list(pred)
        if len(pred) != len(sent.words):
            raise InputError(
                f"cannot write sentence {k} (read from line {sent.line}): it has "
                f"{len(sent.words)} words but {len(pred)} predicted tags"
            )
        for tag in pred:
            _check_written_tag(tag, "chunk tag", k, sent.line)
        lines = [f"{w} {p} {t}\n" for w, p, t in zip(sent.words, sent.pos, pred)]
        lines.append("\n")
        chunks.append("".join(lines))
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.writelines(chunks)


# --------------------------------------------------------------------------------------
# CoNLL-U
# --------------------------------------------------------------------------------------
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
                _check_written_tag(tag, column, k, sent.line)
                row = rows[idx]
                rows[idx] = row[:col] + (tag,) + row[col + 1:]
        lines = [c + "\n" for c in sent.comments]
        lines.extend("\t".join(row) + "\n" for row in rows)
        lines.append("\n")
        chunks.append("".join(lines))
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.writelines(chunks)
