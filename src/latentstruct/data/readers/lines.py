"""The shared low-level line reader of every corpus format, and its limits and messages.

``read_lines`` yields ``(line_number, text)`` and decodes each line as strict UTF-8,
reporting the line of the first undecodable byte.  It also refuses, with the line, a NUL
byte (binary or corrupt input) and a line longer than ``MAX_LINE_CHARS`` characters (see
there).  Messages that quote input go through :func:`excerpt`, so a huge malformed line
never floods the terminal.  Also here: :func:`parse_json_line` for the JSON-lines formats,
and the checks writers share (:func:`one_prediction_per_item`, :func:`check_written_tag`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

from latentstruct.data.path_rule import open_input
from latentstruct.exceptions import InputError

__all__ = [
    "MAX_LINE_CHARS",
    "excerpt",
    "open_binary",
    "read_lines",
    "parse_json_line",
    "one_prediction_per_item",
    "check_written_tag",
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
def open_binary(path):
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
    with open_binary(path) as fh:
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


def check_written_tag(tag, what: str, k: int, sentence_line: int) -> None:
    """InputError unless a predicted ``tag`` that a writer puts in a column of sentence ``k``
    is a non-empty string without whitespace."""
    if not isinstance(tag, str) or not tag or any(c.isspace() for c in tag):
        raise InputError(
            f"cannot write sentence {k} (read from line {sentence_line}): predicted {what} "
            f"{excerpt(tag)} must be a non-empty string without whitespace"
        )


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
