"""Token attributes of the sequence tasks' built-in templates (CRFsuite's chunking baseline).

:func:`token_attributes` gives every token its attribute strings (bias, word, lowercase,
affixes, shape, window words and word bigrams, and with POS input the window POS tags,
bigrams and trigrams); :func:`word_shape` collapses a word's character classes.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["word_shape", "token_attributes"]


def word_shape(word: str) -> str:
    """Collapsed character classes: ``Xx`` for ``Hello``, ``d.d`` for ``3.14``."""
    out = []
    for ch in word:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        else:
            c = ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def token_attributes(
    words: Sequence[str],
    pos: Sequence[str] | None,
    *,
    window: int = 2,
    affix_length: int = 3,
) -> list[list[str]]:
    """Attribute strings of every token.

    Templates: bias; the word and its lowercase; prefixes and suffixes up to
    ``affix_length``; shape; lowercased window words in [-window, window] and the word
    bigrams around the token; and, when ``pos`` is given, window POS tags with POS bigrams
    and trigrams (the CoNLL-2000 baseline templates of CRFsuite's chunking example).
    """
    n = len(words)
    lower = [w.lower() for w in words]
    pad = max(window, 1)  # the word-bigram templates look one token either side
    pad_l = ["<s>"] * pad + lower + ["</s>"] * pad
    if pos is not None:
        pad_p = ["<s>"] * pad + list(pos) + ["</s>"] * pad
    out = []
    for t in range(n):
        w = words[t]
        lw = lower[t]
        c = t + pad  # index into the padded lists
        attrs = ["b", "w=" + w, "sh=" + word_shape(w)]
        for k in range(1, affix_length + 1):
            if len(lw) >= k:
                attrs.append(f"p{k}={lw[:k]}")
                attrs.append(f"s{k}={lw[-k:]}")
        for d in range(-window, window + 1):
            attrs.append(f"l[{d}]={pad_l[c + d]}")
        attrs.append(f"l[-1]|l[0]={pad_l[c - 1]}|{lw}")
        attrs.append(f"l[0]|l[1]={lw}|{pad_l[c + 1]}")
        if pos is not None:
            for d in range(-window, window + 1):
                attrs.append(f"p[{d}]={pad_p[c + d]}")
            for d in range(-window, window):
                attrs.append(f"p[{d}]|p[{d + 1}]={pad_p[c + d]}|{pad_p[c + d + 1]}")
            for d in range(-window, window - 1):
                attrs.append(
                    f"p[{d}..{d + 2}]={pad_p[c + d]}|{pad_p[c + d + 1]}|{pad_p[c + d + 2]}"
                )
        out.append(attrs)
    return out
