"""Part scores and alignments of a graph-alignment problem, and the brute-force reference.

:class:`GraphPartScores` holds a real score per hidden variable, :class:`GraphAlignment` one
0/1 assignment of them (the variables and constraints (6)–(11) are described in
:mod:`latentstruct.inference.graph_alignment.problem`).  :func:`enumerate_alignments` and
:func:`alignment_score` are the brute-force reference, :func:`check_alignment` lists the
violated constraints of any alignment.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import as_scores, shape_str
from latentstruct.inference.graph_alignment.problem import VARIABLE_TYPES, GraphAlignmentProblem, readonly_array


def check_variable_shapes(obj, problem: GraphAlignmentProblem, what: str) -> None:
    """Raise InputError unless every variable-type array of ``obj`` has the size ``problem`` gives it."""
    for name, size in problem.sizes().items():
        arr = getattr(obj, name)
        if arr.shape != (size,):
            hint = ""
            if size == 0:
                hint = " (this variable type does not exist in the problem: pass an empty array)"
            raise InputError(
                f"{what}.{name} must have shape {shape_str((size,))} for this problem{hint}; "
                f"got shape {shape_str(arr.shape)}"
            )


@dataclass(frozen=True, eq=False)
class GraphPartScores:
    """Part scores of every variable type (float64 1-d arrays; ``-inf`` forbids a variable).

    Shapes: ``node_map`` (P,), ``del1`` (n1,) or (0,) without G1 deletion variables, ``del2``
    (n2,) or (0,), ``edge_map`` (Q,), ``edge_del1`` (E1,) and ``edge_del2`` (E2,) or (0,) without
    edge deletion — i.e. :meth:`GraphAlignmentProblem.sizes`.  Checked against a problem by
    :meth:`check` (every solver calls it).
    """

    node_map: np.ndarray
    del1: np.ndarray
    del2: np.ndarray
    edge_map: np.ndarray
    edge_del1: np.ndarray
    edge_del2: np.ndarray

    def __post_init__(self):
        for name in VARIABLE_TYPES:
            arr = as_scores(getattr(self, name), name, 1, "(n_variables_of_this_type,)")
            object.__setattr__(self, name, readonly_array(arr.copy()))

    def check(self, problem: GraphAlignmentProblem) -> GraphPartScores:
        """Raise InputError unless the shapes match ``problem``; return self."""
        check_variable_shapes(self, problem, "part_scores")
        return self

    def to_vector(self) -> np.ndarray:
        """Flat float64 vector in :meth:`GraphAlignmentProblem.variable_layout` order."""
        return np.concatenate([getattr(self, name) for name in VARIABLE_TYPES])

    @classmethod
    def from_vector(cls, problem: GraphAlignmentProblem, vector) -> GraphPartScores:
        """Split a flat vector laid out as ``problem.variable_layout()``."""
        v = as_scores(vector, "vector", 1, "(n_variables,)")
        if v.shape != (problem.n_variables,):
            raise InputError(
                f"vector must have shape (n_variables,) = {shape_str((problem.n_variables,))}; "
                f"got shape {shape_str(v.shape)}"
            )
        layout = problem.variable_layout()
        return cls(**{name: v[layout[name]] for name in VARIABLE_TYPES})

    @classmethod
    def zeros(cls, problem: GraphAlignmentProblem) -> GraphPartScores:
        return cls.from_vector(problem, np.zeros(problem.n_variables))


@dataclass(frozen=True, eq=False)
class GraphAlignment:
    """One assignment of every hidden variable of ``problem`` (int8 0/1 arrays).

    Fields are named as in :data:`VARIABLE_TYPES` with the shapes of
    :meth:`GraphAlignmentProblem.sizes`.  The constructor checks shapes and 0/1 values only;
    :func:`check_alignment` checks the constraints (6)–(11).  Build legal alignments from word
    mappings with :meth:`from_node_map`.
    """

    problem: GraphAlignmentProblem = field(repr=False)
    node_map: np.ndarray
    del1: np.ndarray
    del2: np.ndarray
    edge_map: np.ndarray
    edge_del1: np.ndarray
    edge_del2: np.ndarray

    def __post_init__(self):
        if not isinstance(self.problem, GraphAlignmentProblem):
            raise InputError(f"problem must be a GraphAlignmentProblem; got {type(self.problem).__name__}")
        for name in VARIABLE_TYPES:
            arr = np.asarray(getattr(self, name))
            if arr.ndim != 1:
                raise InputError(f"{name} must be a 1-d 0/1 array; got shape {shape_str(arr.shape)}")
            if arr.size and not np.all((arr == 0) | (arr == 1)):
                raise InputError(f"{name} must contain only 0 and 1")
            object.__setattr__(self, name, readonly_array(arr.astype(np.int8)))
        check_variable_shapes(self, self.problem, "alignment")

    @property
    def mapped_pairs(self) -> np.ndarray:
        """int64 (K, 2): the ``(G1 node, G2 node)`` word mappings that are on."""
        return self.problem.node_pairs[self.node_map.astype(bool)]

    @property
    def mapped_edges(self) -> np.ndarray:
        """int64 (K, 2): the ``(G1 edge, G2 edge)`` edge mappings that are on."""
        return self.problem.edge_pairs[self.edge_map.astype(bool)]

    def to_vector(self) -> np.ndarray:
        """Flat int8 0/1 vector in :meth:`GraphAlignmentProblem.variable_layout` order."""
        return np.concatenate([getattr(self, name) for name in VARIABLE_TYPES]).astype(np.int8)

    @classmethod
    def from_vector(cls, problem: GraphAlignmentProblem, vector) -> GraphAlignment:
        v = np.asarray(vector)
        if v.shape != (problem.n_variables,):
            raise InputError(
                f"vector must have shape (n_variables,) = {shape_str((problem.n_variables,))}; "
                f"got shape {shape_str(v.shape)}"
            )
        layout = problem.variable_layout()
        return cls(problem, **{name: v[layout[name]] for name in VARIABLE_TYPES})

    @classmethod
    def _trusted(cls, problem: GraphAlignmentProblem, vector: np.ndarray, layout=None) -> GraphAlignment:
        """``from_vector`` without the checks, for 0/1 vectors the solvers have verified
        (the checks cost about a third of an LP solve on MSRP-sized problems).  ``layout``:
        ``problem.variable_layout()`` if the caller has it already."""
        v = np.array(vector, dtype=np.int8)  # a private copy, made read-only below
        v.setflags(write=False)
        self = object.__new__(cls)
        object.__setattr__(self, "problem", problem)
        for name, sl in (layout or problem.variable_layout()).items():
            object.__setattr__(self, name, v[sl])
        return self

    @classmethod
    def from_node_map(cls, problem: GraphAlignmentProblem, node_map) -> GraphAlignment:
        """The unique legal alignment with these word mappings (see the readings in
        :mod:`latentstruct.inference.graph_alignment.problem`).

        ``node_map`` is a 0/1 array (P,) that maps every node at most once.  Then
        ``del = 1 − Σ mappings`` (where deletion variables exist), ``edge_map[q] =
        node_map[p_head] · node_map[p_dep]`` ((10) and (11)), ``edge_del = 1 − Σ edge
        mappings`` (where edge-deletion variables exist).  O(P + Q + n1 + n2 + E1 + E2).
        """
        return cls._trusted(problem, alignment_vector(problem, node_map))

    @classmethod
    def empty(cls, problem: GraphAlignmentProblem) -> GraphAlignment:
        """Nothing mapped: every word and edge deleted (always legal)."""
        return cls.from_node_map(problem, np.zeros(problem.n_node_pairs, dtype=np.int64))


def alignment_vector(problem: GraphAlignmentProblem, node_map) -> np.ndarray:
    """``GraphAlignment.from_node_map(problem, node_map).to_vector()`` without building the
    object: the int8 0/1 vector, in :meth:`GraphAlignmentProblem.variable_layout` order, of
    the unique legal alignment with these word mappings (the feature vector of a decoded
    structure needs only this, once per structure a learner keeps)."""
    x = np.asarray(node_map)
    if x.shape != (problem.n_node_pairs,) or (x.size and not np.all((x == 0) | (x == 1))):
        raise InputError(
            f"node_map must be a 0/1 array of shape {shape_str((problem.n_node_pairs,))}; "
            f"got shape {shape_str(x.shape)}"
        )
    x = x.astype(np.int64)
    pairs = problem.node_pairs
    out1 = np.bincount(pairs[:, 0], weights=x, minlength=problem.n1).astype(np.int64)
    out2 = np.bincount(pairs[:, 1], weights=x, minlength=problem.n2).astype(np.int64)
    if (out1 > 1).any() or (out2 > 1).any():
        side, node = (1, int(np.argmax(out1))) if (out1 > 1).any() else (2, int(np.argmax(out2)))
        raise InputError(
            f"node_map maps G{side} node {node} more than once; expected a one-to-one partial matching"
        )
    heads, deps = problem.edge_pair_nodes[:, 0], problem.edge_pair_nodes[:, 1]
    y = x[heads] * x[deps]
    ep = problem.edge_pairs
    m1 = np.bincount(ep[:, 0], weights=y, minlength=problem.n_edges1).astype(np.int64)
    m2 = np.bincount(ep[:, 1], weights=y, minlength=problem.n_edges2).astype(np.int64)
    none = np.zeros(0, dtype=np.int64)
    # in VARIABLE_TYPES order (node_map, del1, del2, edge_map, edge_del1, edge_del2)
    v = np.concatenate([
        x,
        1 - out1 if problem.delete_nodes1 else none,
        1 - out2 if problem.delete_nodes2 else none,
        y,
        1 - m1 if problem.edge_deletion else none,
        1 - m2 if problem.edge_deletion else none,
    ])
    if v.size and ((v < 0) | (v > 1)).any():
        # two candidate edge pairs joining the same two words (parallel edges) would
        # both map one edge: no legal alignment has these word mappings
        raise InputError("node_map maps an edge more than once (parallel edges in a graph); "
                         "expected word mappings that map each edge at most once")
    return v.astype(np.int8)


def alignment_score(alignment: GraphAlignment, scores: GraphPartScores) -> float:
    """``Σ_s h_s θ_s`` — the sum of the scores of the variables that are on (Eq. 12).

    A forbidden (``-inf``) variable that is on gives ``-inf``; an off one contributes nothing.
    Plain sum over the active entries (the reference for the decoders).
    """
    if not isinstance(alignment, GraphAlignment):
        raise InputError(f"alignment must be a GraphAlignment; got {type(alignment).__name__}")
    if not isinstance(scores, GraphPartScores):
        raise InputError(f"scores must be a GraphPartScores; got {type(scores).__name__}")
    scores.check(alignment.problem)
    total = 0.0
    for name in VARIABLE_TYPES:
        on = getattr(alignment, name).astype(bool)
        for s in getattr(scores, name)[on]:
            total += float(s)
    return float(total)


def check_alignment(problem: GraphAlignmentProblem, alignment: GraphAlignment) -> list[str]:
    """Violated constraints of ``alignment`` (empty list when it is legal).

    Each message starts with the constraint number of §4, e.g.
    ``"(6) G1 node 2: del1 + mappings = 2, expected exactly 1"``.  Shape mismatches with
    ``problem`` are reported as ``"shape: ..."`` (and nothing else is checked).  Written
    independently of the ILP matrix so that it can check the ILP.
    """
    if not isinstance(alignment, GraphAlignment):
        raise InputError(f"alignment must be a GraphAlignment; got {type(alignment).__name__}")
    bad: list[str] = []
    for name, size in problem.sizes().items():
        got = getattr(alignment, name).shape
        if got != (size,):
            bad.append(f"shape: {name} has shape {shape_str(got)}, expected {shape_str((size,))}")
    if bad:
        return bad
    x = alignment.node_map.astype(np.int64)
    y = alignment.edge_map.astype(np.int64)

    def exactly_or_at_most(number, label, sums, deletion, has_deletion, what):
        for k, s in enumerate(sums):
            if has_deletion:
                total = int(deletion[k]) + int(s)
                if total != 1:
                    bad.append(f"({number}) {label} {k}: {what[0]} + {what[1]} = {total}, expected exactly 1")
            elif s > 1:
                bad.append(f"({number}) {label} {k}: {what[1]} = {int(s)}, expected at most 1")

    pairs = problem.node_pairs
    mapped1 = np.bincount(pairs[:, 0], weights=x, minlength=problem.n1)
    mapped2 = np.bincount(pairs[:, 1], weights=x, minlength=problem.n2)
    exactly_or_at_most(6, "G1 node", mapped1, alignment.del1, problem.delete_nodes1, ("del1", "word mappings"))
    exactly_or_at_most(7, "G2 node", mapped2, alignment.del2, problem.delete_nodes2, ("del2", "word mappings"))
    ep = problem.edge_pairs
    emapped1 = np.bincount(ep[:, 0], weights=y, minlength=problem.n_edges1)
    emapped2 = np.bincount(ep[:, 1], weights=y, minlength=problem.n_edges2)
    exactly_or_at_most(
        8, "G1 edge", emapped1, alignment.edge_del1, problem.edge_deletion, ("edge_del1", "edge mappings")
    )
    exactly_or_at_most(
        9, "G2 edge", emapped2, alignment.edge_del2, problem.edge_deletion, ("edge_del2", "edge mappings")
    )
    for q, (ph, pd) in enumerate(problem.edge_pair_nodes.tolist()):
        e1, e2 = ep[q].tolist()
        where = f"edge pair {q} (G1 edge {e1} -> G2 edge {e2})"
        if x[ph] + x[pd] - y[q] > 1:
            bad.append(f"(10) {where}: both endpoint word mappings are on but the edge mapping is off")
        if y[q] > x[ph]:
            bad.append(f"(11) {where}: edge mapping on but head mapping {pairs[ph].tolist()} off")
        if y[q] > x[pd]:
            bad.append(f"(11) {where}: edge mapping on but dependent mapping {pairs[pd].tolist()} off")
    return bad


def enumerate_alignments(problem: GraphAlignmentProblem) -> Iterator[GraphAlignment]:
    """Yield every legal alignment (brute force; tiny problems only).

    Every legal alignment is determined by its word mappings (see the readings in
    :mod:`latentstruct.inference.graph_alignment.problem`), so this yields :meth:`GraphAlignment.from_node_map` of every one-to-one partial matching among the
    candidate pairs — ``Σ_k (#matchings of size k)`` alignments, exponential in the sizes.
    The empty alignment comes first.  (The tests confirm, on tiny problems, that these are
    exactly the 0/1 vectors that :func:`check_alignment` accepts.)
    """
    by_node: list[list[int]] = [[] for _ in range(problem.n1)]
    for p, (i, _) in enumerate(problem.node_pairs.tolist()):
        by_node[i].append(p)
    targets = problem.node_pairs[:, 1].tolist()
    x = np.zeros(problem.n_node_pairs, dtype=np.int64)
    used: set[int] = set()

    def rec(i):
        if i == problem.n1:
            yield GraphAlignment.from_node_map(problem, x)
            return
        yield from rec(i + 1)  # node i unmapped
        for p in by_node[i]:
            j = targets[p]
            if j in used:
                continue
            used.add(j)
            x[p] = 1
            yield from rec(i + 1)
            x[p] = 0
            used.discard(j)

    yield from rec(0)
