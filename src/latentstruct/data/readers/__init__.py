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

Modules: ``lines`` (``read_lines``, limits, excerpts, JSON lines, the writers' shared
checks), ``conll2000`` (chunking files), ``conllu`` (CoNLL-U files) and ``docbin`` (spaCy's
binary ``.spacy`` corpora, read into the records of the other two; spaCy is imported only
when one is read).
"""

from latentstruct.data.readers.conll2000 import (
    CHUNK_TAG_FORM,
    ChunkSentence,
    is_chunk_tag,
    read_conll2000,
    write_conll2000,
)
from latentstruct.data.readers.conllu import (
    CONLLU_FIELDS,
    UPOS_FORM,
    UPOS_TAGS,
    ConlluSentence,
    is_upos_tag,
    read_conllu,
    write_conllu,
)
from latentstruct.data.readers.lines import (
    MAX_LINE_CHARS,
    excerpt,
    one_prediction_per_item,
    parse_json_line,
    read_lines,
)

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

