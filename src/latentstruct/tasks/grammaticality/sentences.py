"""The sentence records of the grammaticality task and the hashes that split them.

:class:`Sentence` is one example (tokens, optional POS tags, and for test negatives the
index of its sampled negative set); :func:`is_heldout` decides a sentence's held-out share
from a hash of its tokens, and :func:`sentences_digest` identifies a sentence file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ...exceptions import InputError

__all__ = ["Sentence", "is_heldout", "sentences_digest"]


@dataclass(frozen=True)
class Sentence:
    """One example: its tokens, optionally POS tags, and (for test negatives) the index of
    the sampled negative set it belongs to (-1 otherwise)."""

    words: tuple
    pos: tuple | None = None
    negative_set: int = -1

    def __post_init__(self):
        if not isinstance(self.words, tuple):
            object.__setattr__(self, "words", tuple(self.words))
        if self.pos is not None and not isinstance(self.pos, tuple):
            object.__setattr__(self, "pos", tuple(self.pos))
        if not self.words:
            raise InputError("a sentence needs at least one token, got an empty sentence")
        if self.pos is not None and len(self.pos) != len(self.words):
            raise InputError(
                f"a sentence has {len(self.words)} words but {len(self.pos)} POS tags"
            )


def is_heldout(tokens: Sequence[str], fraction: float) -> bool:
    """Whether a sentence belongs to the held-out share ``fraction``: a BLAKE2b hash of its
    space-joined tokens, read as a number in [0, 1), falls below ``fraction``."""
    digest = hashlib.blake2b(" ".join(tokens).encode("utf-8", "surrogatepass"),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64 < fraction


def sentences_digest(sentences: Sequence[Sequence[str]]) -> str:
    """BLAKE2b (hex) of tokenized sentences: each sentence's tokens joined by spaces, the
    sentences joined by newlines.  Two files with the same sentences share the digest
    (whatever their line endings or spacing)."""
    h = hashlib.blake2b(digest_size=16)
    for s in sentences:
        h.update(" ".join(s).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest()
