"""The chunking views of the grammaticality task: attributes, constraints, weight blocks.

:func:`parse_views` and :func:`chunk_type_names` read the ``views`` and ``chunk_types``
parameters; :func:`ngram_attributes` gives every token its word and POS n-gram attributes;
:func:`view_constraints` the 0 / -inf masks under which only the well-formed tag sequences
of an encoding score finitely; :class:`ViewLayout` one view's tag set, the offset of its
weight block and its masks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...exceptions import ConfigError
from ..sequence.encodings import ENCODINGS, get_encoding, well_formed_constraints

__all__ = ["CONLL2000_CHUNK_TYPES", "parse_views", "chunk_type_names", "chunk_types_ok",
           "ngram_attributes", "view_constraints", "ViewLayout"]

#: the 11 chunk types of CoNLL-2000 (23 tags per IOB/IOE view)
CONLL2000_CHUNK_TYPES = ("ADJP", "ADVP", "CONJP", "INTJ", "LST", "NP", "PP", "PRT", "SBAR",
                         "UCP", "VP")


def parse_views(views) -> list[str]:
    """The configured views, validated (``ConfigError`` for an unknown or repeated one)."""
    if isinstance(views, str):
        names = [v.strip() for v in views.split(",")]
    elif isinstance(views, (list, tuple)):
        names = list(views)
    else:
        raise ConfigError(
            f"views must be a view name or a comma-separated list such as "
            f"'iob1,iob2,ioe1,ioe2,oc', got {views!r}"
        )
    if not names or names == [""]:
        raise ConfigError("views is empty; give at least one of: " + ", ".join(ENCODINGS))
    for v in names:
        get_encoding(v)
    if len(set(names)) != len(names):
        raise ConfigError(f"views must be distinct, got {views!r}")
    return names


def chunk_types_ok(chunk_types) -> bool:
    """Whether ``chunk_types`` is "conll2000" or a non-empty list (or comma list) of types."""
    if chunk_types == "conll2000":
        return True
    if isinstance(chunk_types, str):
        return bool([t for t in chunk_types.split(",") if t.strip()])
    return isinstance(chunk_types, (list, tuple)) and bool(chunk_types)


def chunk_type_names(chunk_types) -> list[str]:
    """The chunk types of the ``chunk_types`` parameter: the 11 of CoNLL-2000 for
    "conll2000", else the listed ones (``ConfigError`` for none)."""
    if chunk_types == "conll2000":
        return list(CONLL2000_CHUNK_TYPES)
    if isinstance(chunk_types, str):
        types = [t.strip() for t in chunk_types.split(",") if t.strip()]
    elif isinstance(chunk_types, (list, tuple)):
        types = list(chunk_types)
    else:
        types = []
    if not types:
        raise ConfigError(
            f"chunk_types must be 'conll2000' or a comma list such as 'NP,VP', got "
            f"{chunk_types!r}"
        )
    return types


def ngram_attributes(words: Sequence[str], pos: Sequence[str]) -> list[list[str]]:
    """Per token: a bias and the 1-, 2-, 3-grams of lowercased words and of POS tags that
    contain the token (13 attribute strings per token)."""
    n = len(words)
    lw = ["<s>", "<s>"] + [w.lower() for w in words] + ["</s>", "</s>"]
    lp = ["<s>", "<s>"] + list(pos) + ["</s>", "</s>"]
    out = []
    for t in range(n):
        c = t + 2
        attrs = ["b"]
        for name, s in (("w", lw), ("p", lp)):
            attrs.append(f"{name}={s[c]}")
            attrs.append(f"{name}-1,0={s[c - 1]}|{s[c]}")
            attrs.append(f"{name}0,1={s[c]}|{s[c + 1]}")
            attrs.append(f"{name}-2..0={s[c - 2]}|{s[c - 1]}|{s[c]}")
            attrs.append(f"{name}-1..1={s[c - 1]}|{s[c]}|{s[c + 1]}")
            attrs.append(f"{name}0..2={s[c]}|{s[c + 1]}|{s[c + 2]}")
        out.append(attrs)
    return out


def view_constraints(labels: Sequence[str], encoding: str):
    """Additive (0 / -inf) masks ``(transition (L, L), start (L,), end (L,))`` under which
    exactly the well-formed tag sequences of ``encoding`` (``encodings.is_well_formed``)
    have a finite score: the masks of ``encodings.well_formed_constraints``, which the
    chunker's constrained decoding uses too."""
    return well_formed_constraints(labels, encoding).masks()


@dataclass(frozen=True)
class ViewLayout:
    """One view of a fitted task: its encoding's name and tag set, the first weight of its
    block, and its (0 / -inf) transition, start and end constraint masks."""

    name: str
    labels: tuple
    offset: int  # first weight of the view's block
    trans_mask: np.ndarray
    start_mask: np.ndarray
    end_mask: np.ndarray

    @property
    def n_labels(self) -> int:
        return len(self.labels)
