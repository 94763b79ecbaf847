"""Readers for sentence-pair classification corpora: MSRP paraphrases and RTE entailment.

Every reader returns a list of :class:`SentencePair` (label 1 = paraphrase / entailment,
0 = not) and reports malformed input as ``InputError(message, path, line)`` so that the
command line can print ``file:line: message``.

Formats
-------
``read_msrp``
    The Microsoft Research Paraphrase Corpus release: tab-separated, header
    ``Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String<TAB>#2 String``.  Lines are split on TAB
    only; double quotes are ordinary characters (the corpus has unbalanced quotes, so a CSV
    reader with quoting on would merge rows).
``read_glue_rte``
    GLUE's RTE TSV: header ``index<TAB>sentence1<TAB>sentence2<TAB>label`` with labels
    ``entailment`` / ``not_entailment``.  Same splitting rules.
``read_rte_xml``
    The PASCAL RTE XML: ``<pair id=".." value="TRUE|FALSE">`` (RTE-1) or
    ``<pair id=".." entailment="YES|NO">`` (RTE-2, RTE-3), each with one ``<t>`` and one
    ``<h>``.  Whitespace runs inside ``<t>``/``<h>`` (RTE-1 wraps long texts over lines) are
    collapsed to single spaces.  External DTDs are never fetched, and an internal DTD subset
    (``<!DOCTYPE x [...]>``) may not declare entities or attribute lists: attribute defaults
    would label pairs the file leaves unlabelled, and entities expand text.
``read_pairs``
    Picks one of the above from the file's extension (``.xml``) or its header line.

In the TSV readers, completely blank lines are skipped; every other line must have exactly
the header's number of columns.

Limits: every sentence (text, hypothesis) holds at most :data:`MAX_SENTENCE_CHARS`
characters, and no file may contain a NUL byte; both are refused with the file and line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

from latentstruct.data.readers.lines import excerpt, open_binary, read_lines
from latentstruct.exceptions import InputError

__all__ = [
    "MAX_SENTENCE_CHARS",
    "check_sentence_length",
    "pair_sentence",
    "SentencePair",
    "MSRP_HEADER",
    "GLUE_RTE_HEADER",
    "read_msrp",
    "read_glue_rte",
    "read_rte_xml",
    "read_pairs",
    "PAIR_FORMATS",
]

#: Longest sentence (text T or hypothesis H, in characters) a pair may hold.  MSRP, GLUE RTE
#: and the RTE-1/2/3 XML files stay under 1,500 characters per sentence.  Each sentence is
#: parsed by spaCy (which refuses texts over its ``nlp.max_length`` of 1,000,000 characters
#: with error E088) and aligned word by word with the other sentence in an ILP whose size
#: grows with the product of their lengths, so a document-sized "sentence" would fail or
#: stall.  It is refused, not split: a pair's label belongs to the whole text, and a piece
#: of it need not paraphrase or entail anything.
MAX_SENTENCE_CHARS = 10_000
_XML_CHUNK = 1 << 20

MSRP_HEADER = ("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String")
GLUE_RTE_HEADER = ("index", "sentence1", "sentence2", "label")


@dataclass(frozen=True, slots=True)
class SentencePair:
    """One labelled sentence pair.

    id : the pair's identifier (MSRP: ``"<#1 ID>_<#2 ID>"``; RTE XML: the ``id``
        attribute; GLUE: the ``index`` column)
    first, second : the two sentences (paraphrase: sentence 1 and 2; entailment: text T and
        hypothesis H)
    label : 1 (paraphrase / entails), 0, or None for an unlabelled pair (in-memory input to
        predict, ``make_dataset(X)`` without ``y``; the file readers always give 1 or 0)
    line : 1-based line where the pair starts in its file (0 if not read from a file)
    """

    id: str
    first: str
    second: str
    label: int | None
    line: int = 0

    def __post_init__(self):
        if self.label is not None and (self.label not in (0, 1) or isinstance(self.label, bool)):
            raise InputError(
                f"SentencePair {excerpt(self.id)}: label must be the int 1 or 0 (or None), got "
                f"{excerpt(repr(self.label))}",
                line=self.line or None,
            )


# --------------------------------------------------------------------------------------
# tab-separated files
# --------------------------------------------------------------------------------------
def check_sentence_length(text: str, what: str, path=None, line=None,
                          at_least: bool = False) -> None:
    """Raise ``InputError`` (naming ``path``/``line`` when given) if ``text`` is longer than
    :data:`MAX_SENTENCE_CHARS` characters; ``what`` names it in the message."""
    if len(text) > MAX_SENTENCE_CHARS:
        size = f"at least {len(text):,}" if at_least else f"{len(text):,}"
        raise InputError(
            f"{what} is {size} characters long, over the limit of {MAX_SENTENCE_CHARS:,} "
            f"characters per sentence; it is refused, not split (the pair's label belongs to "
            f"the whole text, and every sentence is parsed and aligned word by word)",
            path,
            line,
        )


def _header_text(header: tuple[str, ...]) -> str:
    return "<TAB>".join(header)


def _read_tsv(
    path,
    header: tuple[str, ...],
    what: str,
    parse_row: Callable[[list[str], str, int], SentencePair],
) -> list[SentencePair]:
    """Shared TSV loop: check the header, split on TAB only, one pair per non-blank line."""
    name = os.fspath(path)
    pairs: list[SentencePair] = []
    seen_header = False
    n_cols = len(header)
    for lineno, text in read_lines(path):
        if not seen_header:
            fields = tuple(f.strip() for f in text.split("\t"))
            if fields != header:
                raise InputError(
                    f"the first line is not the {what} header: expected "
                    f"{_header_text(header)!r}, got {excerpt(text)}. Add the header line (columns "
                    f"separated by single tabs) or use the reader for this file's format",
                    name,
                    lineno,
                )
            seen_header = True
            continue
        if not text.strip():
            continue
        fields = text.split("\t")
        if len(fields) != n_cols:
            raise InputError(
                f"expected {n_cols} tab-separated columns ({', '.join(header)}), got "
                f"{len(fields)}. Columns are split on TAB only (quotes are plain "
                f"characters); check for a missing or extra tab in this line",
                name,
                lineno,
            )
        pairs.append(parse_row(fields, name, lineno))
    if not seen_header:
        raise InputError(
            f"the file is empty; expected the {what} header {_header_text(header)!r} and then "
            f"one pair per line",
            name,
        )
    if not pairs:
        raise InputError(
            f"the file has the {what} header but no pairs; expected one pair per line after it",
            name,
        )
    return pairs


def pair_sentence(value: str, what: str, path=None, line=None) -> str:
    """One sentence of a pair as the readers keep it: stripped of surrounding white space,
    after the checks every reader shares.

    Raises ``InputError`` at ``path``/``line`` (a file and its line, or an in-memory
    location such as ``X[3][1]``) for a sentence that is empty once stripped or longer than
    :data:`MAX_SENTENCE_CHARS`; ``what`` names it ("the '#1 String' column").  The TSV
    readers and ``GraphPairTask.make_dataset`` both call it.
    """
    value = value.strip()
    if not value:
        raise InputError(
            f"{what} is empty; every pair needs two non-empty sentences",
            path,
            line,
        )
    check_sentence_length(value, what, path, line)
    return value


def _sentence(value: str, column: str, name: str, lineno: int) -> str:
    return pair_sentence(value, f"the {column!r} column", name, lineno)


def _msrp_row(fields: list[str], name: str, lineno: int) -> SentencePair:
    quality, id1, id2, s1, s2 = fields
    quality = quality.strip()
    if quality not in ("0", "1"):
        raise InputError(
            f"label (column 'Quality') must be 1 (paraphrase) or 0 (not), got {excerpt(quality)}",
            name,
            lineno,
        )
    ids = []
    for column, value in (("#1 ID", id1), ("#2 ID", id2)):
        value = value.strip()
        if not value:
            raise InputError(
                f"the {column!r} column is empty; expected the sentence's numeric ID",
                name,
                lineno,
            )
        ids.append(value)
    return SentencePair(
        f"{ids[0]}_{ids[1]}",
        _sentence(s1, "#1 String", name, lineno),
        _sentence(s2, "#2 String", name, lineno),
        int(quality),
        lineno,
    )


def read_msrp(path) -> list[SentencePair]:
    """Read an MSRP file (``msr_paraphrase_train.txt`` / ``_test.txt`` layout).

    The first line must be the header ``Quality #1 ID #2 ID #1 String #2 String`` (tab
    separated; a UTF-8 byte-order mark is ignored).  Each pair's ``id`` is
    ``"<#1 ID>_<#2 ID>"``.  Raises ``InputError`` with the line for a wrong column count, a
    label other than 0/1, an empty sentence or ID, or bytes that are not UTF-8; and for an
    empty file or one without pairs.
    """
    return _read_tsv(path, MSRP_HEADER, "MSRP", _msrp_row)


_GLUE_LABELS = {"entailment": 1, "not_entailment": 0}


def _glue_row(fields: list[str], name: str, lineno: int) -> SentencePair:
    index, s1, s2, label = fields
    label = label.strip()
    if label not in _GLUE_LABELS:
        raise InputError(
            f"label must be one of {', '.join(_GLUE_LABELS)}, got {excerpt(label)}",
            name,
            lineno,
        )
    index = index.strip()
    if not index:
        raise InputError("the 'index' column is empty; expected the pair's index", name, lineno)
    return SentencePair(
        index,
        _sentence(s1, "sentence1", name, lineno),
        _sentence(s2, "sentence2", name, lineno),
        _GLUE_LABELS[label],
        lineno,
    )


def read_glue_rte(path) -> list[SentencePair]:
    """Read GLUE's RTE ``train.tsv`` / ``dev.tsv`` (``index sentence1 sentence2 label``).

    ``entailment`` becomes label 1, ``not_entailment`` 0; ``first`` is the text and
    ``second`` the hypothesis.  GLUE's unlabelled ``test.tsv`` (no label column) is rejected
    by the header check.  Errors as in :func:`read_msrp`.
    """
    return _read_tsv(path, GLUE_RTE_HEADER, "GLUE RTE", _glue_row)


# --------------------------------------------------------------------------------------
# RTE XML
# --------------------------------------------------------------------------------------
_RTE_LABELS = {
    "value": {"TRUE": 1, "FALSE": 0},  # RTE-1
    "entailment": {"YES": 1, "NO": 0},  # RTE-2, RTE-3 (2-way)
}
_WHITESPACE = re.compile(r"\s+")


class _RTEHandler:
    """expat callbacks that collect <pair> elements with the line each starts on."""

    def __init__(self, parser, name: str):
        self.parser = parser
        self.name = name
        self.pairs: list[SentencePair] = []
        self.ids: dict[str, int] = {}
        self.depth = 0
        self.pair: dict | None = None  # the <pair> being read
        self.field: str | None = None  # "t" or "h" while inside one
        self.chunks: list[str] = []
        self.size = 0  # characters in self.chunks

    def error(self, message: str, line: int | None = None) -> InputError:
        return InputError(message, self.name, line or self.parser.CurrentLineNumber)

    def start(self, tag: str, attrs: dict) -> None:
        self.depth += 1
        line = self.parser.CurrentLineNumber
        if tag == "pair":
            if self.pair is not None:
                raise self.error(
                    f"<pair> inside the <pair> that starts on line {self.pair['line']}; "
                    f"close each </pair> before the next one"
                )
            self.pair = {"line": line, "attrs": attrs, "t": None, "h": None}
        elif tag in ("t", "h"):
            if self.pair is None:
                raise self.error(f"<{tag}> outside a <pair>; expected it inside <pair>...</pair>")
            if self.field is not None:
                raise self.error(f"<{tag}> inside <{self.field}>; close </{self.field}> first")
            if self.pair[tag] is not None:
                raise self.error(
                    f"second <{tag}> in the <pair> that starts on line {self.pair['line']}; "
                    f"a pair has exactly one <t> (text) and one <h> (hypothesis)"
                )
            self.field = tag
            self.chunks = []
            self.size = 0
            self.pair[tag] = ("", line)
        elif self.field is not None:
            raise self.error(
                f"element <{excerpt(tag, 40)}> inside <{self.field}>; expected plain text "
                f"(escape '<' as &lt;)"
            )

    def data(self, text: str) -> None:
        if self.field is not None:
            self.chunks.append(text)
            self.size += len(text)
            # whitespace runs collapse later; a raw text ten times the limit cannot fit it,
            # and is refused here so that it is never held whole in memory
            if self.size > 10 * MAX_SENTENCE_CHARS:
                check_sentence_length("".join(self.chunks), self._what(), self.name,
                                      self.pair[self.field][1], at_least=True)

    def _what(self) -> str:
        return f"the <{self.field}> ({'text' if self.field == 't' else 'hypothesis'}) of the " \
               f"pair that starts on line {self.pair['line']}"

    def end(self, tag: str) -> None:
        self.depth -= 1
        if tag in ("t", "h") and self.field == tag:
            text = _WHITESPACE.sub(" ", "".join(self.chunks)).strip()
            line = self.pair[tag][1]
            if not text:
                what = "text" if tag == "t" else "hypothesis"
                raise self.error(
                    f"empty <{tag}> ({what}) in the pair that starts on line "
                    f"{self.pair['line']}; every pair needs a non-empty text and hypothesis",
                    line,
                )
            check_sentence_length(text, self._what(), self.name, line)
            self.pair[tag] = (text, line)
            self.field = None
        elif tag == "pair" and self.pair is not None:
            self.pairs.append(self._finish(self.pair))
            self.pair = None

    def _finish(self, pair: dict) -> SentencePair:
        line, attrs = pair["line"], pair["attrs"]
        pair_id = attrs.get("id", "").strip()
        if not pair_id:
            raise self.error("<pair> has no id attribute; expected e.g. <pair id=\"12\" ...>", line)
        if pair_id in self.ids:
            raise self.error(
                f"duplicate pair id {excerpt(pair_id)} (first used on line {self.ids[pair_id]}); "
                f"pair ids must be unique within a file",
                line,
            )
        present = [a for a in _RTE_LABELS if a in attrs]
        if not present:
            raise self.error(
                f"pair {excerpt(pair_id)} has no label: expected value=\"TRUE|FALSE\" (RTE-1) or "
                f"entailment=\"YES|NO\" (RTE-2/3) on the <pair> element",
                line,
            )
        if len(present) > 1:
            raise self.error(
                f"pair {excerpt(pair_id)} has both value= and entailment= attributes; keep one "
                f"label",
                line,
            )
        attr = present[0]
        raw = attrs[attr].strip()
        labels = _RTE_LABELS[attr]
        if raw.upper() not in labels:
            raise self.error(
                f"pair {excerpt(pair_id)}: {attr}={excerpt(raw)} is not a 2-way label; expected "
                f"{' or '.join(labels)} (3-way labels such as UNKNOWN/CONTRADICTION are not "
                f"supported: map them to NO first)",
                line,
            )
        for tag, what in (("t", "text"), ("h", "hypothesis")):
            if pair[tag] is None:
                raise self.error(
                    f"pair {excerpt(pair_id)} has no <{tag}> ({what}); expected one <t> and "
                    f"one <h>",
                    line,
                )
        self.ids[pair_id] = line
        return SentencePair(pair_id, pair["t"][0], pair["h"][0], labels[raw.upper()], line)


def read_rte_xml(path) -> list[SentencePair]:
    """Read a PASCAL RTE XML file (RTE-1 ``value=TRUE|FALSE``, RTE-2/3 ``entailment=YES|NO``).

    ``first`` is the text T, ``second`` the hypothesis H, ``line`` the line of the
    ``<pair>`` start tag.  Raises ``InputError`` (file and line) for malformed XML (including
    bytes that do not match the declared encoding), a NUL byte, a pair without a label or
    with an unknown one, a missing, repeated or empty ``<t>``/``<h>``, a text or hypothesis
    longer than :data:`MAX_SENTENCE_CHARS`, a missing or duplicate ``id``, any entity or
    attribute-list declaration in an internal DTD subset (refused: attribute defaults would
    label unlabelled pairs, entities expand text) or reference to an undeclared entity, and
    a file with no pairs.  The file is parsed in chunks, never held whole in memory.
    """
    name = os.fspath(path)
    parser = expat.ParserCreate()
    handler = _RTEHandler(parser, name)
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.data

    def refuse(what: str):
        return InputError(
            f"the document {what}; RTE files may name an external DTD (<!DOCTYPE "
            f"entailment-corpus SYSTEM \"rte.dtd\">, never fetched) but declare nothing inline: "
            f"attribute defaults (<!ATTLIST ...>) would label pairs the file leaves unlabelled "
            f"and entities expand text. Remove the declarations",
            name,
            parser.CurrentLineNumber,
        )

    def refuse_attlist(element, attribute, *args):
        raise refuse(f"declares default attributes (<!ATTLIST {excerpt(element, 40)} "
                     f"{excerpt(attribute, 40)} ...>)")

    def refuse_entity(entity_name, *args):
        raise refuse(f"declares the entity {excerpt(entity_name, 40)} (only the predefined "
                     f"&lt; &gt; &amp; &quot; &apos; are allowed)")

    def refuse_skipped(entity_name, is_parameter_entity):
        # an entity only an (unread) external DTD could define: expat would drop it silently
        raise InputError(
            f"reference to the undeclared entity {excerpt(entity_name, 40)}; only the "
            f"predefined &lt; &gt; &amp; &quot; &apos; and character references are allowed",
            name,
            parser.CurrentLineNumber,
        )

    parser.AttlistDeclHandler = refuse_attlist
    parser.EntityDeclHandler = refuse_entity
    parser.SkippedEntityHandler = refuse_skipped
    declared = []  # the encoding the XML declaration names, once expat has read it
    parser.XmlDeclHandler = lambda version, encoding, standalone: declared.append(encoding)
    newlines = 0  # line breaks in the chunks already parsed
    seen_content = False
    with open_binary(path) as fh:
        try:
            while True:
                chunk = fh.read(_XML_CHUNK)
                if b"\x00" in chunk:
                    k = chunk.index(b"\x00")
                    utf16 = not seen_content and chunk[:2] in (b"\xff\xfe", b"\xfe\xff")
                    raise InputError(
                        "line contains a NUL byte; the file is binary or corrupt (expected a "
                        "UTF-8 RTE XML document" + ("; this one is UTF-16: re-encode it, e.g. "
                                                    "with `iconv -f utf-16 -t utf-8`)" if utf16
                                                    else ")"),
                        name,
                        newlines + chunk.count(b"\n", 0, k) + 1,
                    )
                if not seen_content and chunk.strip():
                    seen_content = True
                if not chunk:
                    if not seen_content:
                        raise InputError("the file is empty; expected an RTE XML document", name)
                    parser.Parse(b"", True)
                    break
                parser.Parse(chunk, False)
                newlines += chunk.count(b"\n")
        except expat.ExpatError as exc:
            raise InputError(
                f"malformed XML: {expat.ErrorString(exc.code)} (column {exc.offset + 1}); "
                f"expected a well-formed UTF-8 RTE document",
                name,
                exc.lineno,
            ) from None
        except (LookupError, ValueError) as exc:
            # expat asks Python's codecs for an encoding it lacks: an unknown name is a
            # LookupError, a multi-byte or non-text codec a ValueError (UnicodeError)
            if isinstance(exc, InputError) or not declared or declared[-1] is None:
                raise
            why = str(exc) if len(str(exc)) <= 80 else str(exc)[:80] + "…"
            if str(exc).startswith("unknown encoding"):
                why = "no such encoding"
            raise InputError(
                f"the XML declaration names the encoding {excerpt(declared[-1], 40)}, which "
                f"cannot be read ({why}); expected a UTF-8 RTE document (a single-byte "
                f"encoding such as ISO-8859-1 is read too): re-encode it, e.g. with "
                f"`iconv -t utf-8`, and declare encoding=\"UTF-8\"",
                name,
                parser.CurrentLineNumber,
            ) from None
    if not handler.pairs:
        raise InputError(
            "contains no <pair> elements; expected <pair id=.. entailment=..><t>..</t><h>..</h></pair>",
            name,
        )
    return handler.pairs


# --------------------------------------------------------------------------------------
# dispatch
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _TSVFormat:
    name: str
    header: tuple[str, ...]
    reader: Callable[[object], list[SentencePair]]


#: TSV formats recognised by ``read_pairs`` from their header line (the error text of
#: ``read_pairs`` is generated from this table).
PAIR_FORMATS: tuple[_TSVFormat, ...] = (
    _TSVFormat("MSRP", MSRP_HEADER, read_msrp),
    _TSVFormat("GLUE RTE", GLUE_RTE_HEADER, read_glue_rte),
)


def read_pairs(path) -> list[SentencePair]:
    """Read any supported pair file: ``.xml`` as RTE XML, otherwise by the header line
    (see ``PAIR_FORMATS``)."""
    name = os.fspath(path)
    if Path(name).suffix.lower() == ".xml":
        return read_rte_xml(path)
    first = None
    for lineno, text in read_lines(path):
        first = tuple(f.strip() for f in text.split("\t"))
        break
    if first is None:
        raise InputError("the file is empty; expected a sentence-pair file with a header", name)
    for fmt in PAIR_FORMATS:
        if first == fmt.header:
            return fmt.reader(path)
    known = "; ".join(f"{fmt.name}: {_header_text(fmt.header)!r}" for fmt in PAIR_FORMATS)
    raise InputError(
        f"unknown sentence-pair format: the first line {excerpt('<TAB>'.join(first))} is none of "
        f"the known headers ({known}); RTE XML files need the .xml extension",
        name,
        1,
    )
