"""Hard constraints on the labellings of a first-order chain, exact in every chain decoder.

A chain's labelling ``y_0 .. y_{T-1}`` is scored by unary, transition, start and end parts
(:mod:`latentstruct.inference.viterbi`).  :class:`ChainConstraints` says which transitions
``(y_{t-1}, y_t)``, which first labels and which last labels a labelling may use (boolean
arrays over label ids).  Added to the part scores as ``0`` where allowed and ``-inf`` where
not (:meth:`ChainConstraints.apply`), they leave every labelling that keeps them at its
score and give every other one ``-inf``: Viterbi then returns the best allowed labelling,
k-best the k best allowed ones, and the forward-backward sums (marginals, log Z) run over
the allowed labellings alone, each exactly, with no change to the decoders.  Allowed labels
per token (a label forced or ruled out at one position) are the same idea on the unary
scores (:func:`token_mask`).

The constraints of a chunk tag scheme (an ``I-X`` only after ``B-X`` or ``I-X`` in IOB2, ...)
are built from label names by ``tasks.sequence.encodings.well_formed_constraints``; this
module knows label ids only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from latentstruct.exceptions import InputError

__all__ = ["ChainConstraints", "token_mask"]


def _bool_array(value, shape: tuple, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.shape != shape or arr.dtype != np.bool_:
        raise ValueError(f"ChainConstraints: {name} must be a bool array of shape {shape}, "
                         f"got {arr.dtype} of shape {arr.shape}")
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


class ChainConstraints:
    """Which transitions, first labels and last labels a chain's labelling may use.

    Parameters
    ----------
    transitions : bool array (L, L)
        ``transitions[a, b]``: label ``b`` may follow label ``a``.
    start, end : bool arrays (L,)
        The labels a labelling may start (end) with.

    Immutable (read-only copies of the arrays).  Two constraints compare equal when they
    allow the same parts.
    """

    __slots__ = ("transitions", "start", "end")

    def __init__(self, transitions, start, end):
        t = np.asarray(transitions)
        if t.ndim != 2 or t.shape[0] != t.shape[1]:
            raise ValueError(f"ChainConstraints: transitions must be a square (L, L) bool array, "
                             f"got shape {t.shape}")
        L = t.shape[0]
        object.__setattr__(self, "transitions", _bool_array(t, (L, L), "transitions"))
        object.__setattr__(self, "start", _bool_array(start, (L,), "start"))
        object.__setattr__(self, "end", _bool_array(end, (L,), "end"))

    def __setattr__(self, name, value):
        raise AttributeError(f"ChainConstraints is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (type(self), (self.transitions, self.start, self.end))

    def __eq__(self, other) -> bool:
        return (isinstance(other, ChainConstraints) and self.n_labels == other.n_labels
                and bool(np.array_equal(self.transitions, other.transitions)
                         and np.array_equal(self.start, other.start)
                         and np.array_equal(self.end, other.end)))

    def __hash__(self) -> int:
        return hash((self.transitions.tobytes(), self.start.tobytes(), self.end.tobytes()))

    def __repr__(self) -> str:
        return (f"ChainConstraints(n_labels={self.n_labels}, forbidden transitions="
                f"{int((~self.transitions).sum())}, forbidden starts={int((~self.start).sum())}, "
                f"forbidden ends={int((~self.end).sum())})")

    def __and__(self, other: "ChainConstraints") -> "ChainConstraints":
        """The parts both allow (both sets of constraints at once)."""
        if not isinstance(other, ChainConstraints) or other.n_labels != self.n_labels:
            return NotImplemented
        return ChainConstraints(self.transitions & other.transitions, self.start & other.start,
                                self.end & other.end)

    @classmethod
    def unconstrained(cls, n_labels: int) -> "ChainConstraints":
        """Everything allowed (the chain as it is)."""
        return cls(np.ones((n_labels, n_labels), bool), np.ones(n_labels, bool),
                   np.ones(n_labels, bool))

    @property
    def n_labels(self) -> int:
        return int(self.start.shape[0])

    def masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The additive masks ``(transition (L, L), start (L,), end (L,))``: 0 where allowed,
        ``-inf`` where not."""
        def mask(allowed):
            return np.where(allowed, 0.0, -np.inf)
        return mask(self.transitions), mask(self.start), mask(self.end)

    def apply(self, transition, start, end) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New transition, start and end scores with every forbidden part at ``-inf`` (the
        scores given are not changed)."""
        tm, sm, em = self.masks()
        return (np.asarray(transition, dtype=np.float64) + tm,
                np.asarray(start, dtype=np.float64) + sm, np.asarray(end, dtype=np.float64) + em)

    def first_violation(self, y) -> tuple[int, str] | None:
        """``(position, what)`` of the first part of labelling ``y`` (label ids) that the
        constraints forbid, or None: ``what`` is ``"start"``, ``"transition"`` (from
        ``y[position - 1]`` to ``y[position]``) or ``"end"``.  A label ``-1`` (unknown) never
        violates."""
        y = np.asarray(y, dtype=np.int64)
        if y.size == 0:
            return None
        if y[0] >= 0 and not self.start[y[0]]:
            return 0, "start"
        for t in range(1, y.size):
            a, b = y[t - 1], y[t]
            if a >= 0 and b >= 0 and not self.transitions[a, b]:
                return t, "transition"
        if y[-1] >= 0 and not self.end[y[-1]]:
            return y.size - 1, "end"
        return None

    def allows(self, y) -> bool:
        """Whether labelling ``y`` (label ids) keeps every constraint."""
        return self.first_violation(y) is None


def check_entries(allowed, n: int, item: str, entry: str) -> list:
    """``allowed`` as a list after checking it has one entry per ``item`` (``n`` of them);
    ``entry`` says what an entry is.  An ``InputError`` otherwise."""
    if isinstance(allowed, (str, bytes)) or not hasattr(allowed, "__len__"):
        raise InputError(f"allowed labels must be a list with one entry per {item} ({entry}), "
                         f"got {type(allowed).__name__}")
    if len(allowed) != n:
        entries = "entry" if len(allowed) == 1 else "entries"
        raise InputError(f"allowed labels: {len(allowed)} {entries} for {n} {item}"
                         f"{'' if n == 1 else 's'}; give one per {item} ({entry})")
    return list(allowed)


def token_mask(allowed: Sequence | None, n_tokens: int, n_labels: int) -> np.ndarray | None:
    """The additive unary mask ``(T, L)`` of allowed labels per token, or None when nothing
    is restricted: ``allowed`` is None, or one entry per token, each None (any label) or a
    collection of label ids (the labels that token may take; one id forces it).  An empty
    collection, an id out of range or a wrong count is an ``InputError`` naming the token."""
    if allowed is None:
        return None
    check_entries(allowed, n_tokens, "token", "None for any label, or a collection of label "
                                               "ids")
    mask = np.zeros((n_tokens, n_labels))
    restricted = False
    for t, labels in enumerate(allowed):
        if labels is None:
            continue
        ids = np.asarray(list(labels) if not isinstance(labels, np.ndarray) else labels)
        if ids.size == 0:
            raise InputError(f"allowed labels of token {t} is empty: a token needs at least one "
                             f"label it may take (None for any)")
        if ids.dtype.kind not in "iu" or ids.min() < 0 or ids.max() >= n_labels:
            raise InputError(f"allowed labels of token {t}: expected label ids in "
                             f"0..{n_labels - 1}, got {labels!r}")
        row = np.full(n_labels, -np.inf)
        row[ids] = 0.0
        mask[t] = row
        restricted = True
    return mask if restricted else None
