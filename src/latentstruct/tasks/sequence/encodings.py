"""Chunk encodings (the "views" of Clifton & Sarkar 2013, Table 1) as exact conversions.

A chunking of ``n`` tokens is a list of non-overlapping spans ``Span(type, start, end)``
(``end`` inclusive, 0-based), sorted by ``start``.  Every encoding is a way of writing a
chunking as one tag per token: ``O`` for a token outside every chunk, otherwise
``P-TYPE`` where ``P`` is a one-letter prefix and ``TYPE`` the chunk type (``NP``, ``VP``,
...).  The five encodings (Tjong Kim Sang & Veenstra 1999; Shen & Sarkar 2005):

``iob1``  I for every chunk token, except that the first token of a chunk that directly
          follows a chunk *of the same type* is B.
``iob2``  B for the first token of every chunk, I for its other tokens (CoNLL-2000 uses this).
``ioe1``  I for every chunk token, except that the last token of a chunk that is directly
          followed by a chunk *of the same type* is E.
``ioe2``  E for the last token of every chunk, I for its other tokens.
``oc``    O+C: S for a chunk of one token; for a longer chunk B on its first token, E on its
          last token and I on the tokens in between.  So O+C marks both chunk boundaries of
          every chunk (each chunk opens with B or S and closes with E or S) and, as the paper
          says, makes every distinction of the other four views.

Tag sets: iob1 and iob2 use {B, I}, ioe1 and ioe2 use {I, E}, oc uses {B, I, E, S}, each
with every chunk type, plus ``O`` (``encoding_labels``).  With the 11 chunk types of
CoNLL-2000 that is 23 tags for each IOB/IOE view and 45 for O+C.

The paper's text says the suffix is "the part-of-speech tag of the token"; its Table 1 shows
untyped tags and its experiments use "the CONLL 2000 tagset (23 chunk tags)", which is B/I
times the 11 chunk types plus O.  We use the chunk type as the suffix, which is what the
23-tag count and Shen & Sarkar (2005) describe.

Worked example (Table 1 of the paper; its NP chunks are "early trading", "Hong Kong",
"Monday", "gold", "$ 366.50" and "an ounce", and every other token is outside)::

    token    iob1   iob2   ioe1   ioe2   oc
    In       O      O      O      O      O
    early    I-NP   B-NP   I-NP   I-NP   B-NP
    trading  I-NP   I-NP   I-NP   E-NP   E-NP
    in       O      O      O      O      O
    Hong     I-NP   B-NP   I-NP   I-NP   B-NP
    Kong     I-NP   I-NP   E-NP   E-NP   E-NP
    Monday   B-NP   B-NP   I-NP   E-NP   S-NP
    ,        O      O      O      O      O
    gold     I-NP   B-NP   I-NP   E-NP   S-NP
    was      O      O      O      O      O
    quoted   O      O      O      O      O
    at       O      O      O      O      O
    $        I-NP   B-NP   I-NP   I-NP   B-NP
    366.50   I-NP   I-NP   E-NP   E-NP   E-NP
    an       B-NP   B-NP   I-NP   I-NP   B-NP
    ounce    I-NP   I-NP   I-NP   E-NP   E-NP
    .        O      O      O      O      O

    spans: [Span('NP', 1, 2), Span('NP', 4, 5), Span('NP', 6, 6), Span('NP', 8, 8),
            Span('NP', 12, 13), Span('NP', 14, 15)]

"Monday" gets B in iob1 because it directly follows the NP "Hong Kong"; "Kong" gets E in
ioe1 because the NP "Monday" directly follows it.  Adjacent chunks of *different* types need
no marker in iob1/ioe1: "in/I-PP Hong/I-NP" already separates two chunks.

Reading tags, including ill-formed sequences
--------------------------------------------
``spans_from_tags`` reads every encoding with the chunk rules of conlleval, the CoNLL-2000
scoring script (``latentstruct.tasks.sequence.chunk_metrics.extract_chunks``), which know
all of the prefixes B, I, E and S.  Those rules amount to: a chunk is a maximal run of non-``O``
tokens of one type, cut before every B or S and after every E or S.  They are implemented
here as one pass over the tags (several times faster than ``extract_chunks``); the tests
check on random sequences of every view that both give the same chunks.  For well-formed
sequences this is exactly the definition above (``tags_from_spans`` inverts it).  A decoder
may predict ill-formed sequences; they are read as follows:

* iob1 / iob2: ``I-X`` after ``O`` or after a tag of another type opens a chunk (conlleval's
  rule), so ``O I-NP I-NP`` is one NP of two tokens.  iob1 and iob2 are read identically;
  ``O B-NP`` (ill-formed iob1) is one NP.
* ioe1 / ioe2: the mirror image.  ``I-X`` before ``O``, before a tag of another type or at
  the end of the sentence closes a chunk, so ``I-NP I-NP O`` is one NP even in ioe2, and
  ``E-NP`` after ``O`` is a one-token NP.
* oc: B or S opens a chunk and E or S closes one, whatever surrounds them; a chunk also
  ends at ``O`` or a type change.  ``B-NP O`` is the NP (0, 0); ``O I-NP E-NP`` is the NP
  (1, 2); ``E-NP E-NP`` is two one-token NPs; ``B-NP I-NP B-NP`` is (0, 1) and (2, 2).

A tag whose prefix the encoding does not use (``E-NP`` in iob2, ``B-NP`` in ioe1), an
untyped tag (``B``) or a non-string raises ``InputError``.  ``convert`` therefore always
returns a well-formed sequence, and ``is_well_formed`` tells whether a sequence is the
canonical writing of the chunking it is read as.

Majority vote (paper §3)
------------------------
``majority_vote`` converts every view's prediction to O+C, takes at each token the O+C tag
proposed by the most views, reads the voted O+C sequence with the rules above (which also
repairs it when the per-token winners do not fit together, e.g. ``B-NP O``) and writes the
chunking back in each requested view.  Ties go to the tied tag proposed by the view that
comes first in the fixed order iob1, iob2, ioe1, ioe2, oc (the order of ``ENCODINGS``), so the
result does not depend on the order of the input dictionary.  When every view encodes the
same chunking, the vote is unanimous and each view's well-formed input comes back unchanged.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.constraints import ChainConstraints

__all__ = [
    "Span",
    "Encoding",
    "ENCODINGS",
    "get_encoding",
    "spans_from_tags",
    "tags_from_spans",
    "convert",
    "is_well_formed",
    "well_formed_constraints",
    "encoding_labels",
    "majority_vote",
]


class Span(NamedTuple):
    """One chunk: its type and its first and last token (0-based, ``end`` inclusive).

    A ``Span`` is a tuple, so it compares equal to ``(type, start, end)``.
    """

    type: str
    start: int
    end: int


# Writers: tags of one encoding for checked, sorted, non-overlapping spans.
def _write_iob1(spans: list[Span], n: int) -> list[str]:
    out = ["O"] * n
    prev = None
    for span in spans:
        typ, start, end = span
        out[start:end + 1] = ["I-" + typ] * (end - start + 1)
        if prev is not None and prev.end == start - 1 and prev.type == typ:
            out[start] = "B-" + typ
        prev = span
    return out


def _write_iob2(spans: list[Span], n: int) -> list[str]:
    out = ["O"] * n
    for typ, start, end in spans:
        out[start:end + 1] = ["B-" + typ] + ["I-" + typ] * (end - start)
    return out


def _write_ioe1(spans: list[Span], n: int) -> list[str]:
    out = ["O"] * n
    nxt = None
    for span in reversed(spans):
        typ, start, end = span
        out[start:end + 1] = ["I-" + typ] * (end - start + 1)
        if nxt is not None and nxt.start == end + 1 and nxt.type == typ:
            out[end] = "E-" + typ
        nxt = span
    return out


def _write_ioe2(spans: list[Span], n: int) -> list[str]:
    out = ["O"] * n
    for typ, start, end in spans:
        out[start:end + 1] = ["I-" + typ] * (end - start) + ["E-" + typ]
    return out


def _write_oc(spans: list[Span], n: int) -> list[str]:
    out = ["O"] * n
    for typ, start, end in spans:
        if start == end:
            out[start] = "S-" + typ
        else:
            out[start:end + 1] = ["B-" + typ] + ["I-" + typ] * (end - start - 1) + ["E-" + typ]
    return out


@dataclass(frozen=True)
class Encoding:
    """A chunk encoding (a view): its registry name, the prefixes it uses, a description,
    and the function that writes a chunking in it."""

    name: str
    prefixes: tuple[str, ...]
    description: str
    write: Callable[[list[Span], int], list[str]] = field(repr=False, compare=False)


ENCODINGS: Mapping[str, Encoding] = MappingProxyType(
    {
        "iob1": Encoding(
            "iob1", ("B", "I"),
            "I inside chunks; B only on the first token of a chunk that directly follows a "
            "chunk of the same type",
            _write_iob1,
        ),
        "iob2": Encoding(
            "iob2", ("B", "I"), "B on the first token of every chunk, I inside", _write_iob2
        ),
        "ioe1": Encoding(
            "ioe1", ("I", "E"),
            "I inside chunks; E only on the last token of a chunk that is directly followed "
            "by a chunk of the same type",
            _write_ioe1,
        ),
        "ioe2": Encoding(
            "ioe2", ("I", "E"), "E on the last token of every chunk, I inside", _write_ioe2
        ),
        "oc": Encoding(
            "oc", ("B", "I", "E", "S"),
            "O+C: S for a one-token chunk; otherwise B first, E last, I in between",
            _write_oc,
        ),
    }
)
"""The chunk encodings by name, in the fixed order used to break ties in ``majority_vote``."""

_VIEW_RANK = {name: k for k, name in enumerate(ENCODINGS)}


def get_encoding(name) -> Encoding:
    """The ``Encoding`` registered as ``name``; ``ConfigError`` for an unknown name."""
    try:
        return ENCODINGS[name]
    except (KeyError, TypeError):
        raise ConfigError(
            f"unknown view {name!r}; expected one of: {', '.join(ENCODINGS)}"
        ) from None


# --------------------------------------------------------------------------------------
# reading and writing
# --------------------------------------------------------------------------------------
# Valid tags seen so far, per encoding (a memo: membership is all that is asked).
_VALID_TAGS: dict[str, set[str]] = {name: {"O"} for name in ENCODINGS}


def _tag_error(i: int, tag, enc: Encoding) -> InputError:
    examples = ", ".join(f"'{p}-NP'" for p in enc.prefixes)
    return InputError(
        f"tag {i} {tag!r} is not a {enc.name} tag; expected 'O' or one of the prefixes "
        f"{'/'.join(enc.prefixes)} followed by '-TYPE' (e.g. {examples})"
    )


def _check_tags(tags, enc: Encoding) -> list[str]:
    if isinstance(tags, str):
        raise InputError(
            f"tags must be a sequence of tag strings, got the string {tags!r}; pass a list "
            f"such as ['B-NP', 'I-NP', 'O']"
        )
    tags = list(tags)
    valid = _VALID_TAGS[enc.name]
    for i, tag in enumerate(tags):
        if type(tag) is str and tag in valid:
            continue
        if (
            isinstance(tag, str) and len(tag) > 2 and tag[1] == "-"
            and tag[0] in enc.prefixes and not any(c.isspace() for c in tag)
        ):
            valid.add(tag)
        else:
            raise _tag_error(i, tag, enc)
    return tags


def _read(tags: list[str]) -> list[Span]:
    """conlleval's chunks of checked ``tags``, in one pass: a chunk is a maximal run of
    non-O tokens of one type, cut before every B/S and after every E/S.  (The same chunks
    as ``chunk_metrics.extract_chunks``, which the tests check on random sequences.)"""
    spans = []
    start = -1
    cur = ""
    closes = False
    for i, tag in enumerate(tags):
        if tag == "O":
            if start >= 0:
                spans.append(Span(cur, start, i - 1))
                start = -1
            continue
        prefix = tag[0]
        typ = tag[2:]
        if start >= 0 and (closes or prefix == "B" or prefix == "S" or typ != cur):
            spans.append(Span(cur, start, i - 1))
            start = -1
        if start < 0:
            start = i
            cur = typ
        closes = prefix == "E" or prefix == "S"
    if start >= 0:
        spans.append(Span(cur, start, len(tags) - 1))
    return spans


def spans_from_tags(tags: Sequence[str], encoding: str) -> list[Span]:
    """The chunks of ``tags`` written in ``encoding``, sorted by start.

    Ill-formed sequences are read by conlleval's rules (see the module docstring); a tag
    the encoding does not use raises ``InputError``.
    """
    enc = get_encoding(encoding)
    return _read(_check_tags(tags, enc))


def _is_int(x) -> bool:
    if isinstance(x, bool):
        return False
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _bad_type(typ) -> bool:
    return not isinstance(typ, str) or not typ or any(c.isspace() for c in typ)


def _check_spans(spans, n: int) -> list[Span]:
    if isinstance(n, bool) or not _is_int(n) or n < 0:
        raise InputError(f"n (the number of tokens) must be an integer >= 0, got {n!r}")
    checked = []
    good_types: set[str] = set()
    for k, span in enumerate(spans):
        try:
            typ, start, end = span
        except (TypeError, ValueError):
            raise InputError(
                f"span {k} {span!r} is not a (type, start, end) triple"
            ) from None
        if typ not in good_types:
            if _bad_type(typ):
                raise InputError(
                    f"span {k} {span!r}: the chunk type must be a non-empty string without "
                    f"whitespace, such as 'NP'"
                )
            good_types.add(typ)
        if type(start) is not int or type(end) is not int:
            if not (_is_int(start) and _is_int(end)):
                start = end = -1  # reported below
            else:
                start, end = int(start), int(end)
        if not 0 <= start <= end < n:
            raise InputError(
                f"span {k} {span!r}: expected integer positions 0 <= start <= end < n = {n} "
                f"(end is inclusive)"
            )
        checked.append(Span(typ, start, end))
    checked.sort(key=lambda s: s.start)
    for a, b in zip(checked, checked[1:]):
        if b.start <= a.end:
            raise InputError(
                f"spans {tuple(a)} and {tuple(b)} overlap; a chunking needs non-overlapping "
                f"spans"
            )
    return checked


def tags_from_spans(spans: Iterable[Sequence], n: int, encoding: str) -> list[str]:
    """Write the chunking ``spans`` over ``n`` tokens as tags of ``encoding``.

    ``spans`` are ``(type, start, end_inclusive)`` triples in any order; they must lie in
    ``0..n-1`` and must not overlap (``InputError`` otherwise).
    """
    enc = get_encoding(encoding)
    return enc.write(_check_spans(spans, n), n)


def convert(tags: Sequence[str], source: str, target: str) -> list[str]:
    """Rewrite ``tags`` from encoding ``source`` into encoding ``target``.

    The result is always well-formed; an ill-formed input is read by conlleval's rules first.
    """
    src = get_encoding(source)
    tgt = get_encoding(target)
    tags = _check_tags(tags, src)
    return tgt.write(_read(tags), len(tags))


def is_well_formed(tags: Sequence[str], encoding: str) -> bool:
    """True when ``tags`` is exactly how ``encoding`` writes the chunking it is read as."""
    enc = get_encoding(encoding)
    tags = _check_tags(tags, enc)
    return convert(tags, encoding, encoding) == tags


def well_formed_constraints(labels: Sequence[str], encoding: str) -> ChainConstraints:
    """The chain constraints (over the ids of ``labels``, in that order) under which exactly
    the well-formed tag sequences of ``encoding`` are allowed (those :func:`is_well_formed`
    accepts).  Every encoding's well-formedness is first order:

    * iob1: B-X only right after I-X or B-X (so never first);
    * iob2: I-X only right after B-X or I-X (so never first);
    * ioe1: E-X only right before I-X or E-X (so never last);
    * ioe2: I-X only right before I-X or E-X (so never last);
    * oc:   B-X and I-X only right before I-X or E-X; I-X and E-X only right after B-X or
      I-X (so a sequence starts with O, B or S and ends with O, E or S).

    A label that is neither ``O`` nor ``P-TYPE`` with a prefix of the encoding is an
    ``InputError``.

    >>> c = well_formed_constraints(["O", "B-NP", "I-NP"], "iob2")
    >>> c.transitions.astype(int).tolist(), c.start.astype(int).tolist()
    ([[1, 1, 0], [1, 1, 1], [1, 1, 1]], [1, 1, 0])
    """
    enc = get_encoding(encoding)
    parsed = []
    for k, t in enumerate(labels):
        if t == "O":
            parsed.append(("O", None))
        elif (isinstance(t, str) and len(t) > 2 and t[1] == "-" and t[0] in enc.prefixes
              and not any(c.isspace() for c in t)):
            parsed.append((t[0], t[2:]))
        else:
            raise InputError(f"label {k} ({t!r}) is not a tag of the {encoding} encoding: "
                             f"expected O or one of {', '.join(p + '-TYPE' for p in enc.prefixes)}")
    L = len(parsed)
    trans = np.ones((L, L), dtype=bool)
    start = np.ones(L, dtype=bool)
    end = np.ones(L, dtype=bool)
    inside = {"B", "I"}  # oc tags that must be continued
    for b, (pb, tb) in enumerate(parsed):
        for a, (pa, ta) in enumerate(parsed):
            same = ta is not None and ta == tb
            ok = True
            if encoding == "iob1" and pb == "B":
                ok = same and pa in ("I", "B")
            elif encoding == "iob2" and pb == "I":
                ok = same and pa in ("B", "I")
            if encoding == "ioe1" and pa == "E":
                ok = ok and same and pb in ("I", "E")
            elif encoding == "ioe2" and pa == "I":
                ok = ok and same and pb in ("I", "E")
            if encoding == "oc":
                if pa in inside:
                    ok = same and pb in ("I", "E")
                if pb in ("I", "E"):
                    ok = ok and same and pa in inside
            trans[a, b] = ok
        if (encoding in ("iob1", "iob2") and pb == ("B" if encoding == "iob1" else "I")) or (
                encoding == "oc" and pb in ("I", "E")):
            start[b] = False
        if (encoding in ("ioe1", "ioe2") and pb == ("E" if encoding == "ioe1" else "I")) or (
                encoding == "oc" and pb in inside):
            end[b] = False
    return ChainConstraints(trans, start, end)


def encoding_labels(chunk_types: Iterable[str], encoding: str) -> list[str]:
    """The tag set of a view: ``O``, then ``P-TYPE`` for each type (sorted, duplicates
    dropped) and each prefix of the encoding in its order (B, I / I, E / B, I, E, S).

    >>> encoding_labels(["VP", "NP"], "oc")
    ['O', 'B-NP', 'I-NP', 'E-NP', 'S-NP', 'B-VP', 'I-VP', 'E-VP', 'S-VP']
    """
    enc = get_encoding(encoding)
    if isinstance(chunk_types, str):
        raise InputError(
            f"chunk_types must be a collection of type names, got the string "
            f"{chunk_types!r}; pass e.g. ['NP', 'VP']"
        )
    types = set()
    for t in chunk_types:
        if not isinstance(t, str) or not t or any(c.isspace() for c in t):
            raise InputError(
                f"chunk type {t!r} must be a non-empty string without whitespace, such as 'NP'"
            )
        types.add(t)
    return ["O"] + [f"{p}-{t}" for t in sorted(types) for p in enc.prefixes]


# --------------------------------------------------------------------------------------
# majority vote
# --------------------------------------------------------------------------------------
def majority_vote(
    tag_sequences_by_view: Mapping[str, Sequence[str]],
    target_views: Sequence[str] | None = None,
) -> dict[str, list[str]]:
    """Per-token majority vote of several views' tag sequences for one sentence, in O+C.

    Parameters
    ----------
    tag_sequences_by_view : mapping view name -> tag sequence (all of one length)
    target_views : views to return the voted chunking in (default: the input views, in
        input order)

    Returns
    -------
    dict view -> well-formed tag list, in ``target_views`` order.

    Every sequence is converted to O+C (read by conlleval's rules), each token takes the O+C
    tag with the most votes (ties: the tag proposed by the view earliest in the order
    iob1, iob2, ioe1, ioe2, oc), and the voted O+C sequence is read back into a chunking
    (repairing it if the winners do not fit together) and written in each target view.
    """
    if not isinstance(tag_sequences_by_view, Mapping) or not tag_sequences_by_view:
        raise InputError(
            "majority_vote needs a non-empty mapping {view name: tag sequence}, got "
            f"{tag_sequences_by_view!r}"
        )
    views = list(tag_sequences_by_view)
    for v in views:
        get_encoding(v)
    if target_views is None:
        targets = views
    else:
        if isinstance(target_views, str):
            raise ConfigError(
                f"target_views must be a list of view names, got the string "
                f"{target_views!r}; use [{target_views!r}]"
            )
        targets = list(target_views)
        for v in targets:
            get_encoding(v)
    ordered = sorted(views, key=_VIEW_RANK.__getitem__)
    as_oc = {v: convert(tag_sequences_by_view[v], v, "oc") for v in ordered}
    lengths = {v: len(t) for v, t in as_oc.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(
            f"majority_vote needs tag sequences of one length (one sentence), got lengths "
            f"{lengths}"
        )
    n = lengths[ordered[0]]
    columns = [as_oc[v] for v in ordered]
    voted = []
    for i in range(n):
        counts: dict[str, int] = {}
        for col in columns:  # insertion order = tie-break priority
            tag = col[i]
            counts[tag] = counts.get(tag, 0) + 1
        voted.append(max(counts, key=counts.__getitem__))
    spans = spans_from_tags(voted, "oc")
    return {v: ENCODINGS[v].write(spans, n) for v in targets}
