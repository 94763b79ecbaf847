"""Sentence corpora: ``tokenize`` and ``read_sentences`` (one sentence per line).

``tokenize`` splits text into words, numbers and punctuation with one regular expression;
``read_sentences`` reads one sentence per line of a UTF-8 file and tokenizes it.  They feed
the trigram language model (:mod:`latentstruct.data.lm`) and the grammaticality task.
"""

from __future__ import annotations

import os
import re

from latentstruct.data.readers.lines import read_lines
from latentstruct.exceptions import InputError

__all__ = ["tokenize", "read_sentences"]

_TOKEN = re.compile(
    r"""
      (?:[^\W\d_]\.){2,}           # abbreviations written with dots: U.S.  U.K.  e.g.
    | \d+(?:[.,:/]\d+)*(?!\w)      # numbers: 1987  5.93  155,221  10:30  1/2
    | \w+(?:['’-]\w+)*             # words, with inner apostrophes and hyphens: don't
                                   #   mid-1987  1980s  (a number glued to letters is a word)
    | [^\w\s]                      # any other non-space character on its own: . , ( $ % "
    """,
    re.VERBOSE,
)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens with one regular expression.

    In order of preference a token is: an abbreviation written with dots (``U.S.``); a
    number with inner ``.``, ``,``, ``:`` or ``/`` between digits (``5.93``, ``155,221``);
    a word of letters, digits and underscores, possibly joined by inner apostrophes or
    hyphens (``company's``, ``mid-1987``); or any other single non-space character
    (punctuation and symbols: ``.``, ``,``, ``(``, ``$``).  Whitespace only separates.

    >>> tokenize("U.S. exports rose 5.93 pct (mid-1987).")
    ['U.S.', 'exports', 'rose', '5.93', 'pct', '(', 'mid-1987', ')', '.']
    """
    if not isinstance(text, str):
        raise InputError(f"tokenize needs a str, got {type(text).__name__}")
    return _TOKEN.findall(text)


def read_sentences(path) -> list[list[str]]:
    """Read a corpus with one sentence per line (UTF-8) and tokenize each line.

    Raises ``InputError`` as ``file:line: message`` for a line that is not UTF-8 or holds no
    token (a blank line is an empty sentence), and ``file: message`` for a file without
    sentences.
    """
    name = os.fspath(path)
    sentences = []
    for lineno, text in read_lines(path):
        tokens = _TOKEN.findall(text)
        if not tokens:
            raise InputError(
                "empty sentence: the line holds no token; expected one sentence per line "
                "(remove blank lines)",
                name,
                lineno,
            )
        sentences.append(tokens)
    if not sentences:
        raise InputError(
            "contains no sentences; expected a UTF-8 text file with one sentence per line",
            name,
        )
    return sentences
