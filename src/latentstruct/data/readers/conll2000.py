"""CoNLL-2000 chunking files (``word POS chunk-tag``): :class:`ChunkSentence`, the reader
and the writer.

Malformed input is an ``InputError(message, path, line)`` with the 1-based line number;
the writer goes through ``atomic_write`` (a file is either fully written or untouched).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from latentstruct.data.atomic import atomic_write
from latentstruct.data.readers.lines import (
    check_written_tag,
    excerpt,
    one_prediction_per_item,
    open_binary,
    read_lines,
)
from latentstruct.exceptions import InputError

__all__ = ["ChunkSentence", "CHUNK_TAG_FORM", "UNKNOWN_TAG", "is_chunk_tag", "read_conll2000",
           "write_conll2000"]

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


#: the tag of a token whose tag is unknown, in a training file (partial labels)
UNKNOWN_TAG = "_"


def read_conll2000(path) -> list[ChunkSentence]:
    """Read a CoNLL-2000 chunking file: ``word POS chunk-tag`` per line, blank line between
    sentences (the last sentence may lack its blank line).  Columns may be separated by any
    run of spaces or tabs.  Chunk tags must be ``O`` or ``B-TYPE`` / ``I-TYPE``, or ``_``
    for a tag that is unknown (partial labels: the learners that take them complete or sum
    over it; scoring refuses it).
    """
    name = os.fspath(path)
    sentences: list[ChunkSentence] = []
    words: list[str] = []
    pos: list[str] = []
    tags: list[str] = []
    start = 0
    valid_tags: set[str] = set()
    last_line = 0  # the file's last line, if it holds a token
    for lineno, text in read_lines(path):
        fields = text.split()
        last_line = lineno if fields else 0
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
            if not is_chunk_tag(tag) and tag != UNKNOWN_TAG:
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
    if last_line:
        _check_cut_last_tag(path, sentences, last_line)
    if not sentences:
        raise InputError(
            "contains no sentences; expected lines 'word POS chunk-tag' with a blank line "
            "after each sentence",
            name,
        )
    return sentences


def _check_cut_last_tag(path, sentences: list[ChunkSentence], lineno: int) -> None:
    """Refuse a file cut inside its last tag: a last line without its newline whose chunk
    type no other line has (``I-N`` cut from ``I-NP``) would be learned as a new type."""
    tag = sentences[-1].tags[-1]
    if tag in ("O", UNKNOWN_TAG) or sum(t[2:] == tag[2:] for s in sentences for t in s.tags) > 1:
        return  # the type is on another line too (or the tag has none)
    with open_binary(path) as fh:  # standard input is kept in memory: the same bytes
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
    raise InputError(
        f"the last line ends without a newline and its chunk tag {tag!r} names the chunk "
        f"type {tag[2:]!r}, which no other line has: the file looks truncated (cut inside "
        f"the tag). Restore the file's end from the original; if {tag[2:]!r} is a real chunk "
        f"type, end the line with a newline",
        os.fspath(path),
        lineno,
    )


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
            check_written_tag(tag, "chunk tag", k, sent.line)
        lines = [f"{w} {p} {t}\n" for w, p, t in zip(sent.words, sent.pos, pred)]
        lines.append("\n")
        chunks.append("".join(lines))
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.writelines(chunks)
