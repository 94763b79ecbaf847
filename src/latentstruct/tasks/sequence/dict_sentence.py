"""A sentence given as per-token feature dicts (sklearn-crfsuite's input), as the sequence
tasks keep it between ``make_dataset`` and ``featurize``: :class:`DictSentence`, and the two
rules that name its attributes (``tasks.sequence.raw`` builds them from the dicts)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DictSentence", "CRFSUITE_NAMES", "LEGACY_NAMES", "ATTRIBUTE_NAMINGS"]

#: feature-dict attribute names as python-crfsuite's ``ItemSequence`` makes them (``key:value``,
#: real values); the rule of every task fitted since it was introduced
CRFSUITE_NAMES = "crfsuite"
#: the rule of models saved before (``key=value``, binary attributes only); a model file
#: without an ``attribute_names`` entry was written under it
LEGACY_NAMES = "legacy"
#: the values of a fitted sequence task's ``attribute_names_``
ATTRIBUTE_NAMINGS = (CRFSUITE_NAMES, LEGACY_NAMES)


@dataclass(frozen=True, eq=False)
class DictSentence:
    """A sentence given as per-token feature dicts: each token's attribute names and values,
    stored flat (a training set keeps every sentence until the model is trained: one tuple
    of names and one small array per sentence, not two tuples per token).

    names : every token's attribute names, token after token (see the module docstring
        for how a feature dict becomes them)
    ends : int64 array, one per token: token t's names are ``names[ends[t - 1]:ends[t]]``
    flat_values : None when every value is 1 (binary); else the values parallel to
        ``names``, as bool when each is 0 or 1, else float64
    naming : the rule that named the attributes (:data:`CRFSUITE_NAMES` or
        :data:`LEGACY_NAMES`); a task featurises only records of its own rule

    ``attributes`` and ``values`` give the same per token (tuples of tuples), and
    :meth:`from_tokens` builds a sentence from them.
    """

    names: tuple[str, ...]
    ends: np.ndarray
    flat_values: np.ndarray | None = None
    naming: str = CRFSUITE_NAMES

    @classmethod
    def from_tokens(cls, attributes, values=None, naming: str = CRFSUITE_NAMES) -> "DictSentence":
        """From one tuple of names per token and, unless every value is 1, one tuple of
        values per token, parallel to them."""
        names = tuple(name for tok in attributes for name in tok)
        ends = np.cumsum([len(tok) for tok in attributes], dtype=np.int64)
        flat = None
        if values is not None:
            flat = np.fromiter((v for tok in values for v in tok), dtype=np.float64,
                               count=len(names))
            if np.all((flat == 0.0) | (flat == 1.0)):
                flat = flat.astype(bool)
        return cls(names, ends, flat, naming)

    def __len__(self) -> int:
        return int(self.ends.shape[0])

    def starts(self) -> np.ndarray:
        return np.r_[0, self.ends[:-1]].astype(np.int64) if len(self) else self.ends

    @property
    def attributes(self) -> tuple[tuple[str, ...], ...]:
        """One tuple of attribute names per token."""
        return tuple(self.names[a:b] for a, b in zip(self.starts().tolist(), self.ends.tolist()))

    @property
    def values(self) -> tuple[tuple[float, ...], ...] | None:
        """None when every value is 1, else one tuple of float values per token."""
        if self.flat_values is None:
            return None
        flat = self.flat_values.astype(np.float64).tolist()
        return tuple(tuple(flat[a:b]) for a, b in zip(self.starts().tolist(), self.ends.tolist()))

    def __eq__(self, other) -> bool:
        if not isinstance(other, DictSentence):
            return NotImplemented
        mine, theirs = self.flat_values, other.flat_values
        return (self.names == other.names and np.array_equal(self.ends, other.ends)
                and self.naming == other.naming and (mine is None) == (theirs is None)
                and (mine is None or np.array_equal(mine.astype(np.float64),
                                                    theirs.astype(np.float64))))

    __hash__ = None
