"""Global constraints on a chain's labelling, decoded exactly by the HiGHS ILP.

A first-order chain's dynamic programmes (Viterbi, k-best, forward-backward) keep only
constraints on neighbouring labels (:class:`~latentstruct.inference.constraints.ChainConstraints`:
transitions, first and last labels).  The constraints here look at the whole labelling:

* :class:`CountBound`: how many tokens take one of some labels (``low <= count <= high``;
  "at least one" is ``low = 1``);
* :class:`Implication`: if a token takes one of the labels ``if_labels``, some token takes
  one of ``then_labels``;
* :class:`Contiguous`: the tokens of a label form one segment (a field of a citation).

:func:`constrained_argmax` finds the best labelling that keeps them (and any ``-inf`` part,
so a chain's local constraints and the labels allowed per token too) as the integer linear
programme of :class:`~latentstruct.inference.ilp.SequenceILP` with one more row per count,
``T`` per implication and one per contiguous label:

* count: ``sum_{t, l in S} u[t, l]`` between ``low`` and ``high``;
* implication: ``sum_{a in A} u[t, a] - sum_{s, b in B} u[s, b] <= 0`` for every ``t``;
* contiguous ``l``: the number of segments that start, ``u[0, l] + sum_{t >= 1} (u[t, l] -
  e[t, l, l])``, is at most 1.

The ILP is exact (HiGHS with zero gap, its answer checked against its own bound) and
exponential in the worst case; a chain of a few dozen tokens and labels solves in
milliseconds.  Its models are built once per sentence length and kept per thread.
This module knows label ids only; rules written with label names are compiled by
``tasks.sequence.rules``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from latentstruct.exceptions import InferenceError, InputError
from latentstruct.inference.ilp import SequenceILP
from latentstruct.inference.result import EXACT, INFEASIBLE, DecodeResult
from latentstruct.inference.viterbi import kbest_viterbi

__all__ = ["CountBound", "Implication", "Contiguous", "GlobalConstraints", "constrained_argmax"]


def _ids(labels, n_labels: int, what: str) -> tuple[int, ...]:
    ids = tuple(sorted({int(l) for l in labels}))
    if not ids or ids[0] < 0 or ids[-1] >= n_labels:
        raise ValueError(f"{what}: expected a non-empty set of label ids in 0..{n_labels - 1}, "
                         f"got {labels!r}")
    return ids


@dataclass(frozen=True)
class CountBound:
    """``low <= #{t : y_t in labels} <= high`` (``high`` None: no upper bound)."""

    labels: tuple[int, ...]
    low: int = 0
    high: int | None = None

    def holds(self, y: np.ndarray) -> bool:
        n = int(np.isin(y, self.labels).sum())
        return n >= self.low and (self.high is None or n <= self.high)


@dataclass(frozen=True)
class Implication:
    """If some ``y_t`` is in ``if_labels``, some ``y_s`` is in ``then_labels``."""

    if_labels: tuple[int, ...]
    then_labels: tuple[int, ...]

    def holds(self, y: np.ndarray) -> bool:
        return not np.isin(y, self.if_labels).any() or bool(np.isin(y, self.then_labels).any())


@dataclass(frozen=True)
class Contiguous:
    """The tokens labelled ``label`` form at most one segment."""

    label: int

    def holds(self, y: np.ndarray) -> bool:
        on = y == self.label
        starts = int(on[:1].sum()) + int((on[1:] & ~on[:-1]).sum())
        return starts <= 1


class GlobalConstraints:
    """A conjunction of global constraints over ``n_labels`` label ids.

    Parameters
    ----------
    n_labels : int
    constraints : iterable of CountBound, Implication and Contiguous, their label ids in
        ``0..n_labels-1``.

    Immutable and hashable (two with the same constraints are equal), so a decoder can key
    its built ILP models by it.
    """

    __slots__ = ("n_labels", "constraints")

    def __init__(self, n_labels: int, constraints):
        n_labels = int(n_labels)
        checked = []
        for c in constraints:
            if isinstance(c, CountBound):
                low, high = int(c.low), None if c.high is None else int(c.high)
                if low < 0 or (high is not None and high < low):
                    raise ValueError(f"CountBound: expected 0 <= low <= high, got {c!r}")
                c = CountBound(_ids(c.labels, n_labels, "CountBound"), low, high)
            elif isinstance(c, Implication):
                c = Implication(_ids(c.if_labels, n_labels, "Implication"),
                                _ids(c.then_labels, n_labels, "Implication"))
            elif isinstance(c, Contiguous):
                c = Contiguous(_ids([c.label], n_labels, "Contiguous")[0])
            else:
                raise ValueError(f"GlobalConstraints: expected CountBound, Implication or "
                                 f"Contiguous, got {c!r}")
            if c not in checked:
                checked.append(c)
        object.__setattr__(self, "n_labels", n_labels)
        object.__setattr__(self, "constraints", tuple(checked))

    def __setattr__(self, name, value):
        raise AttributeError(f"GlobalConstraints is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (type(self), (self.n_labels, self.constraints))

    def __eq__(self, other) -> bool:
        return (isinstance(other, GlobalConstraints) and self.n_labels == other.n_labels
                and self.constraints == other.constraints)

    def __hash__(self) -> int:
        return hash((self.n_labels, self.constraints))

    def __repr__(self) -> str:
        return f"GlobalConstraints(n_labels={self.n_labels}, {list(self.constraints)!r})"

    def __bool__(self) -> bool:
        return bool(self.constraints)

    def first_violation(self, y):
        """The first constraint labelling ``y`` (label ids) breaks, or None."""
        y = np.asarray(y, dtype=np.int64)
        return next((c for c in self.constraints if not c.holds(y)), None)

    def allows(self, y) -> bool:
        """Whether labelling ``y`` keeps every constraint."""
        return self.first_violation(y) is None

    def rows(self, T: int, L: int, node, edge) -> tuple[list, list, list]:
        """The ILP rows of the constraints over :class:`SequenceILP`'s variables
        (``node(t, l)``, ``edge(t, p, l)``): ``(rows, lower, upper)``.  On a graph's nodes
        (``edge`` None: no chain order) counts and if-thens apply, a contiguous label is an
        ``InputError``."""
        rows, lo, up = [], [], []
        for c in self.constraints:
            if isinstance(c, CountBound):
                rows.append([(node(t, l), 1.0) for t in range(T) for l in c.labels])
                lo.append(float(c.low))
                up.append(np.inf if c.high is None else float(c.high))
            elif isinstance(c, Implication):
                then = [(node(s, b), -1.0) for s in range(T) for b in c.then_labels]
                for t in range(T):
                    # a label in both sets satisfies the implication itself: the two
                    # coefficients of its variable add up (to 0)
                    merged: dict = {}
                    for var, coef in [(node(t, a), 1.0) for a in c.if_labels] + then:
                        merged[var] = merged.get(var, 0.0) + coef
                    rows.append([(v, k) for v, k in merged.items() if k != 0.0])
                    lo.append(-np.inf)
                    up.append(0.0)
            else:
                if edge is None:
                    raise InputError(f"{c!r}: a contiguous label is a rule of chains (one "
                                     f"segment in token order); a graph's nodes have no order")
                l = c.label
                rows.append([(node(0, l), 1.0)] + [(node(t, l), 1.0) for t in range(1, T)]
                            + [(edge(t, l, l), -1.0) for t in range(1, T)])
                lo.append(-np.inf)
                up.append(1.0)
        return rows, lo, up


#: how many of the best labellings (k-best Viterbi) are tried before the ILP is solved (0:
#: none, the ILP at once)
KBEST_BEFORE_ILP = 32
_MAX_MODELS = 64  # built ILP models kept per thread (one per sentence length)
_local = threading.local()


def _model(constraints: GlobalConstraints, T: int, L: int) -> SequenceILP:
    cache = getattr(_local, "models", None)
    if cache is None:
        cache = _local.models = OrderedDict()
    key = (constraints, T, L)
    model = cache.get(key)
    if model is None:
        # history-free solves: the optimum returned among ties depends on the scores alone.
        # HiGHS' presolve costs more than it saves on these small models (0.15 s of a 0.02 s
        # solve for 10 tokens and 13 labels); the answer is certified either way.
        model = SequenceILP(T, L, extra_rows=constraints.rows, warm_start=False,
                            highs_options={"presolve": "off"})
        cache[key] = model
        if len(cache) > _MAX_MODELS:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return model


def constrained_argmax(unary, transition, start, end, constraints: GlobalConstraints
                       ) -> DecodeResult:
    """The best labelling of a chain (scores as :func:`~latentstruct.inference.viterbi.viterbi`
    takes them, ``-inf`` forbidding a part) among those that keep ``constraints``.

    The labellings are first enumerated best first by k-best Viterbi (k = 1, then
    ``KBEST_BEFORE_ILP``): the first that keeps the constraints is their optimum (they only
    remove labellings), and the ILP is not needed.  Only when none of them does is the ILP
    solved; ``stats["ilp"]`` says whether it was.

    Returns a ``DecodeResult``: labels (T,) int64 and their score, status ``"exact"``; or
    structure None, score ``-inf`` and status ``"infeasible"`` when no labelling keeps them.
    Any other outcome of the solver is an ``InferenceError`` (never passed on as a
    labelling).
    """
    unary = np.asarray(unary, dtype=np.float64)
    T, L = unary.shape
    if L != constraints.n_labels:
        raise ValueError(f"constrained_argmax: the scores have {L} labels, the constraints "
                         f"{constraints.n_labels}")
    if T == 0:
        return DecodeResult(np.zeros(0, dtype=np.int64), 0.0, EXACT)
    for k in sorted({1, KBEST_BEFORE_ILP}) if KBEST_BEFORE_ILP > 0 else ():
        ranked = kbest_viterbi(unary, transition, start, end, k=k)
        kept = next((r for r in ranked if constraints.allows(r.structure)), None)
        if kept is not None:
            return DecodeResult(kept.structure, kept.score, EXACT, {"ilp": False})
        if len(ranked) < k:  # every labelling was seen: none keeps the constraints
            return DecodeResult(None, -np.inf, INFEASIBLE, {"ilp": False})
    result = _model(constraints, T, L).solve(unary, transition, start, end)
    result.stats["ilp"] = True
    if result.status in (EXACT, INFEASIBLE):
        return result
    raise InferenceError(f"the ILP of a {T}-token chain with global constraints ended with "
                         f"status {result.status!r} ({result.stats.get('model_status')}); "
                         f"no labelling is returned")
