"""Graph alignment (LCLR §4): word / edge mapping and deletion variables tied by (6)–(11).

The intermediate representation of paraphrase identification and RTE in Chang et al. (2010,
§4) aligns two graphs G1 and G2 (vertices = words, directed edges = dependency relations).
This module is the numeric layer only: graphs are node counts and ``(head, dependent)``
index arrays, and every hidden variable has a real-valued part score.  Tasks turn words into
part scores (``θ_s = w · φ_s(x)``) through :meth:`GraphAlignmentProblem.variable_layout`.

Variables (all binary; the names are used for part scores, alignments and the layout alike)
-------------------------------------------------------------------------------------------
``node_map[p]``   word mapping ``h_{v1,v2}`` for candidate pair ``node_pairs[p] = (v1, v2)``
``del1[i]``       word deletion ``h_{v1,*}`` of G1 node i (only if ``delete_nodes1``)
``del2[j]``       word deletion ``h_{*,v2}`` of G2 node j (only if ``delete_nodes2``)
``edge_map[q]``   edge mapping ``h_{e1,e2}`` for candidate edge pair ``edge_pairs[q] = (e1, e2)``
``edge_del1[e]``  edge deletion ``h_{e1,*}`` of G1 edge e (only if ``edge_deletion``)
``edge_del2[e]``  edge deletion ``h_{*,e2}`` of G2 edge e (only if ``edge_deletion``)

A variable type that does not exist has length 0 (in scores, alignments and the layout).

Constraints, as written in §4, and how they are read here
---------------------------------------------------------
(6)  ∀ v1 ∈ V(G1):  h_{v1,*} + Σ_{v2} h_{v1,v2} = 1
(7)  ∀ v2 ∈ V(G2):  h_{*,v2} + Σ_{v1} h_{v1,v2} = 1
(8)  ∀ e1 ∈ E(G1):  h_{e1,*} + Σ_{e2} h_{e1,e2} = 1
(9)  ∀ e2 ∈ E(G2):  h_{*,e2} + Σ_{e1} h_{e1,e2} = 1
(10) for e1 = (v1, v1'), e2 = (v2, v2'):  h_{v1,v2} + h_{v1',v2'} − h_{e1,e2} ≤ 1
(11)                                      h_{v1,v2} ≥ h_{e1,e2};  h_{v1',v2'} ≥ h_{e1,e2}

Readings where the text leaves a choice (each is tested in
``tests/inference/test_graph_alignment.py``):

* **Pruning.** The sums in (6)–(9) run over *candidate* pairs only: a word pair that is not in
  ``node_pairs`` has no variable (it is fixed to 0).  Pruning is the caller's job (e.g. the
  top-k pairs per word by a lexical affinity); it should say what it pruned.
* **Missing deletion variables.** When a side has no word-deletion variables (RTE creates them
  only for the hypothesis, §5), the equality of (6)/(7) without ``h_{v,*}`` would force every
  word of that side to be mapped, which is infeasible whenever the text is longer than the
  hypothesis.  It is read as ``Σ h_{v1,v2} ≤ 1`` ("mapped to at most one vertex"): an unmapped
  word of that side simply contributes nothing.  Likewise (8)/(9) become ``Σ h_{e1,e2} ≤ 1``
  without edge-deletion variables (RTE uses none, Table 2).
* **Edge orientation.** In (10)/(11) an edge mapping pairs head with head and dependent with
  dependent: e1 = (v1, v1') and e2 = (v2, v2') need the pairs (v1, v2) and (v1', v2').  An
  edge pair is a candidate exactly when both of these are candidate word pairs; reversed
  mappings (head to dependent) are not modelled.
* **If and only if.** (10) and (11) together make ``h_{e1,e2} = h_{v1,v2} · h_{v1',v2'}``:
  an edge mapping is on exactly when both endpoint mappings are on; it has no freedom of its
  own.  Consequently edge deletion is tied to the edge not being mapped: by (8)/(9)
  ``h_{e,*} = 1 − Σ h_{e,e'}``, so an edge is deleted if and only if it is not mapped (and an
  edge without any candidate edge pair is always deleted).  Word deletion is likewise
  ``h_{v,*} = 1 − Σ h_{v,v'}``.  Every legal alignment is therefore determined by its word
  mappings, which form a partial one-to-one matching among the candidate pairs
  (:meth:`GraphAlignment.from_node_map`).
* **Parallel edges** (two identical ``(head, dependent)`` rows in one graph) would make
  (10) switch on two edge mappings of the same partner edge and violate (8)/(9), silently
  forbidding word-mapping combinations; they are rejected, as are self-loops.  Cycles are
  otherwise allowed (the paper's graphs are acyclic, but nothing here depends on it).

Solvers
-------
:class:`GraphAlignmentILP` builds its HiGHS models once per problem and changes only the
objective between calls.  Cheapest exact stage first: (1) when the edge terms vanish — no
candidate edge pairs, or every edge pair's net score ``edge_map[q] − edge_del1[e1] −
edge_del2[e2]`` is exactly 0 — the score is linear in the word mappings and the problem is a
maximum-weight bipartite matching with deletion costs, solved by
:func:`scipy.optimize.linear_sum_assignment`; (2) the LP relaxation, whose optimum is often
integral and then optimal; (3) when it is fractional, an exact branch-and-bound on the word
mappings over the same LP model (:mod:`latentstruct.inference.graph_alignment_bb`, which also
holds the LP stage); (4) if that runs out of its node budget, HiGHS' branch-and-bound through
:class:`~latentstruct.inference.ilp.ILPModel`.  ``stats["solver"]`` says which stage
answered.  Every solve is history-free (no basis or MIP start carried over from earlier
calls), so the alignment returned for given scores — also among tied optima — does not
depend on what the model solved before.

:func:`enumerate_alignments` and :func:`alignment_score` are the brute-force reference,
:func:`check_alignment` lists the violated constraints of any alignment.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from latentstruct.exceptions import InferenceError, InputError
from latentstruct.inference.checks import as_scores, check_time_limit, shape_str
from latentstruct.inference.graph_alignment_bb import INTEGRAL_TOL as _INTEGRAL_TOL
from latentstruct.inference.graph_alignment_bb import AlignmentCompletion, LPBranchAndBound, LPStage
from latentstruct.inference.graph_alignment_bb import vector_score as _vector_score
from latentstruct.inference.ilp import ILPModel
from latentstruct.inference.result import EXACT, INFEASIBLE, DecodeResult

__all__ = [
    "VARIABLE_TYPES",
    "GraphAlignmentProblem",
    "GraphPartScores",
    "GraphAlignment",
    "GraphAlignmentILP",
    "check_alignment",
    "enumerate_alignments",
    "alignment_score",
    "alignment_vector",
]

#: The six variable types, in layout order (also the field names of scores and alignments).
VARIABLE_TYPES = ("node_map", "del1", "del2", "edge_map", "edge_del1", "edge_del2")


def _count(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def _index_pairs(x, name: str, expected: str) -> np.ndarray:
    """Return ``x`` as a read-only int64 array (k, 2), rejecting non-integral values."""
    arr = np.asarray(x)
    if arr.size == 0:
        arr = np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InputError(f"{name} must be an integer array of shape {expected}; got shape {shape_str(arr.shape)}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InputError(f"{name} must contain integers; got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr))):
        raise InputError(f"{name} must contain integers; got non-integral values")
    out = np.ascontiguousarray(arr.astype(np.int64))
    out.setflags(write=False)
    return out


def _check_range(arr: np.ndarray, col: int, n: int, name: str, what: str) -> None:
    bad = np.flatnonzero((arr[:, col] < 0) | (arr[:, col] >= n))
    if bad.size:
        r = int(bad[0])
        raise InputError(
            f"{name}[{r}] = {arr[r].tolist()} refers to {what} {int(arr[r, col])}, "
            f"expected an index in [0, {n})"
        )


def _first_duplicate(arr: np.ndarray):
    """(first, second) row indices of the first repeated row, or None."""
    seen: dict[tuple[int, int], int] = {}
    for r, (a, b) in enumerate(arr.tolist()):
        if (a, b) in seen:
            return seen[(a, b)], r
        seen[(a, b)] = r
    return None


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


# ----------------------------------------------------------------------------------------
# the problem
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class GraphAlignmentProblem:
    """The structure of one graph-alignment latent space (no scores, no words).

    Parameters
    ----------
    n1, n2 : int >= 0
        Node (word) counts of G1 and G2.
    edges1, edges2 : int arrays (E1, 2), (E2, 2)
        Directed edges as ``(head, dependent)`` node indices.  No self-loops, no repeated
        rows (see the module docstring).
    node_pairs : int array (P, 2)
        Candidate word mappings ``(i, j)``: G1 node i may map to G2 node j.  Pairs not listed
        have no variable — pruning (e.g. top-k per word by a lexical affinity) is done by the
        caller, which should say what it pruned.  No repeated pairs.
    delete_nodes1, delete_nodes2 : bool, default True
        Whether word-deletion variables exist for G1 / G2.  Without them, (6) / (7) read
        "mapped at most once" (RTE: only the hypothesis side has deletion variables).
    edge_deletion : bool, default True
        Whether edge-deletion variables exist (for both graphs).  Without them, (8) / (9)
        read "mapped at most once".

    Attributes
    ----------
    edge_pairs : int array (Q, 2)
        Derived: ``(e1, e2)`` edge indices of every pair of edges whose head pair
        ``(h1, h2)`` and dependent pair ``(d1, d2)`` are both candidate word pairs, in
        lexicographic order of ``(e1, e2)``.
    edge_pair_nodes : int array (Q, 2)
        Derived: ``(p_head, p_dep)``, the indices in ``node_pairs`` of those two word
        pairs — the variables in (10)/(11).

    Notes
    -----
    All arrays are read-only.  Equality is identity (the class holds arrays).

    The paper's two settings: paraphrase identification uses every variable type (the
    defaults); RTE (§5) uses G1 = text, G2 = hypothesis with ``delete_nodes1=False,
    delete_nodes2=True, edge_deletion=False``.
    """

    n1: int
    n2: int
    edges1: np.ndarray
    edges2: np.ndarray
    node_pairs: np.ndarray
    delete_nodes1: bool = True
    delete_nodes2: bool = True
    edge_deletion: bool = True
    edge_pairs: np.ndarray = field(init=False, repr=False)
    edge_pair_nodes: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        set_ = object.__setattr__
        n1 = _count(self.n1, "n1")
        n2 = _count(self.n2, "n2")
        set_(self, "n1", n1)
        set_(self, "n2", n2)
        for name in ("delete_nodes1", "delete_nodes2", "edge_deletion"):
            set_(self, name, _flag(getattr(self, name), name))
        for name, n, graph in (("edges1", n1, "G1"), ("edges2", n2, "G2")):
            e = _index_pairs(getattr(self, name), name, "(E, 2) of (head, dependent) node indices")
            _check_range(e, 0, n, name, f"{graph} node")
            _check_range(e, 1, n, name, f"{graph} node")
            loops = np.flatnonzero(e[:, 0] == e[:, 1])
            if loops.size:
                r = int(loops[0])
                raise InputError(
                    f"{name}[{r}] = {e[r].tolist()} is a self-loop; expected (head, dependent) with "
                    "head != dependent — drop the edge"
                )
            dup = _first_duplicate(e)
            if dup is not None:
                raise InputError(
                    f"{name}[{dup[0]}] and {name}[{dup[1]}] are the same edge {e[dup[1]].tolist()}; "
                    "parallel edges would make constraints (8)-(10) forbid word mappings — "
                    "merge them (keep one row per (head, dependent))"
                )
            set_(self, name, e)
        pairs = _index_pairs(self.node_pairs, "node_pairs", "(P, 2) of (G1 node, G2 node)")
        _check_range(pairs, 0, n1, "node_pairs", "G1 node")
        _check_range(pairs, 1, n2, "node_pairs", "G2 node")
        dup = _first_duplicate(pairs)
        if dup is not None:
            raise InputError(
                f"node_pairs[{dup[0]}] and node_pairs[{dup[1]}] are the same pair {pairs[dup[1]].tolist()}; "
                "expected each candidate word pair once"
            )
        set_(self, "node_pairs", pairs)
        pair_index = {(i, j): p for p, (i, j) in enumerate(pairs.tolist())}
        # candidate edge pairs: (e1, e2) with (h1, h2) and (d1, d2) both candidate word pairs
        out_pairs, out_nodes = [], []
        e2_list = self.edges2.tolist()
        for a, (h1, d1) in enumerate(self.edges1.tolist()):
            for b, (h2, d2) in enumerate(e2_list):
                ph = pair_index.get((h1, h2))
                if ph is None:
                    continue
                pd = pair_index.get((d1, d2))
                if pd is None:
                    continue
                out_pairs.append((a, b))
                out_nodes.append((ph, pd))
        set_(self, "edge_pairs", _readonly(np.array(out_pairs, dtype=np.int64).reshape(-1, 2)))
        set_(self, "edge_pair_nodes", _readonly(np.array(out_nodes, dtype=np.int64).reshape(-1, 2)))

    # -- sizes ----------------------------------------------------------------------------
    @property
    def n_edges1(self) -> int:
        return int(self.edges1.shape[0])

    @property
    def n_edges2(self) -> int:
        return int(self.edges2.shape[0])

    @property
    def n_node_pairs(self) -> int:
        return int(self.node_pairs.shape[0])

    @property
    def n_edge_pairs(self) -> int:
        return int(self.edge_pairs.shape[0])

    def sizes(self) -> dict[str, int]:
        """Number of variables of each type, in layout order (0 for a type that does not exist)."""
        return {
            "node_map": self.n_node_pairs,
            "del1": self.n1 if self.delete_nodes1 else 0,
            "del2": self.n2 if self.delete_nodes2 else 0,
            "edge_map": self.n_edge_pairs,
            "edge_del1": self.n_edges1 if self.edge_deletion else 0,
            "edge_del2": self.n_edges2 if self.edge_deletion else 0,
        }

    def variable_layout(self) -> dict[str, slice]:
        """Where each variable type lives in the flat variable vector (the ILP's columns).

        Keys in :data:`VARIABLE_TYPES` order; entry k of a type refers to: ``node_map`` →
        ``node_pairs[k]``; ``del1`` → G1 node k; ``del2`` → G2 node k; ``edge_map`` →
        ``edge_pairs[k]`` (and ``edge_pair_nodes[k]``); ``edge_del1`` → ``edges1[k]``;
        ``edge_del2`` → ``edges2[k]``.  A task builds the flat part-score vector (or the
        feature matrix whose rows are parts) in this order and calls
        :meth:`GraphPartScores.from_vector`.
        """
        out, start = {}, 0
        for name, size in self.sizes().items():
            out[name] = slice(start, start + size)
            start += size
        return out

    @property
    def n_variables(self) -> int:
        return int(sum(self.sizes().values()))


# ----------------------------------------------------------------------------------------
# part scores and alignments
# ----------------------------------------------------------------------------------------
def _check_sizes(obj, problem: GraphAlignmentProblem, what: str) -> None:
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
            object.__setattr__(self, name, _readonly(arr.copy()))

    def check(self, problem: GraphAlignmentProblem) -> GraphPartScores:
        """Raise InputError unless the shapes match ``problem``; return self."""
        _check_sizes(self, problem, "part_scores")
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
            object.__setattr__(self, name, _readonly(arr.astype(np.int8)))
        _check_sizes(self, self.problem, "alignment")

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
        """The unique legal alignment with these word mappings (see the module docstring).

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

    Every legal alignment is determined by its word mappings (module docstring), so this
    yields :meth:`GraphAlignment.from_node_map` of every one-to-one partial matching among the
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


# ----------------------------------------------------------------------------------------
# the ILP (and the matching shortcut)
# ----------------------------------------------------------------------------------------
def _constraint_matrix(problem: GraphAlignmentProblem, strengthen: bool = False):
    """Rows of (6)–(11) as a sparse matrix with row bounds.  Returns (A, lower, upper, kinds).

    ``kinds`` names each row's constraint number ("6" … "11", and "11-agg" / "clique" for the
    optional strengthening rows).  Rows with no variable at all (a node without candidate
    pairs and without a deletion variable) are left out.

    ``strengthen`` appends valid inequalities that aggregate (11): for a fixed edge e of one
    graph and a fixed word pair p at its head (or at its dependent), the candidate edge pairs
    of e that use p satisfy ``Σ_q h_q <= h_p``.  Valid because those edge pairs differ in the
    other endpoint of the partner edge (no parallel edges), which is one word, mapped at most
    once ((6)/(7)).  It also appends clique rows: for an edge pair q with head pair
    (h1, h2) and dependent pair (d1, d2), and any other G1 word i (i ∉ {h1, d1}) with both
    (i, h2) and (i, d2) candidate, ``h_q + h_{i,h2} + h_{i,d2} <= 1`` (and symmetrically for a
    G2 word j ∉ {h2, d2} with (h1, j) and (d1, j) candidate).  Valid: h_q = 1 maps h1 to h2
    and d1 to d2, so no other word can take h2 or d2, and i maps at most once anyway.  The
    typical fractional LP point (two half matchings with h_q = 1/2) violates them.
    Both families cut fractional LP points only: the 0/1 solutions are unchanged.
    """
    layout = problem.variable_layout()
    x0 = layout["node_map"].start
    rows, cols, vals, lower, upper, kinds = [], [], [], [], [], []
    r = 0

    def group_rows(number, n_items, items_of_var, var_offset, del_offset, has_del):
        """One row per item: deletion var (if any) + Σ member vars, = 1 or <= 1."""
        nonlocal r
        members: list[list[int]] = [[] for _ in range(n_items)]
        for v, item in enumerate(items_of_var):
            members[item].append(var_offset + v)
        for k in range(n_items):
            row_vars = list(members[k])
            if has_del:
                row_vars.append(del_offset + k)
            if not row_vars:
                continue
            rows.extend([r] * len(row_vars))
            cols.extend(row_vars)
            vals.extend([1.0] * len(row_vars))
            lower.append(1.0 if has_del else -np.inf)
            upper.append(1.0)
            kinds.append(number)
            r += 1

    pairs = problem.node_pairs
    # (6) each G1 word is mapped to a single G2 word or deleted (at most once without deletion)
    group_rows("6", problem.n1, pairs[:, 0].tolist(), x0, layout["del1"].start, problem.delete_nodes1)
    # (7) each G2 word likewise
    group_rows("7", problem.n2, pairs[:, 1].tolist(), x0, layout["del2"].start, problem.delete_nodes2)
    y0 = layout["edge_map"].start
    ep = problem.edge_pairs
    # (8) each G1 edge is mapped to a single G2 edge or deleted
    group_rows("8", problem.n_edges1, ep[:, 0].tolist(), y0, layout["edge_del1"].start, problem.edge_deletion)
    # (9) each G2 edge likewise
    group_rows("9", problem.n_edges2, ep[:, 1].tolist(), y0, layout["edge_del2"].start, problem.edge_deletion)
    for q, (ph, pd) in enumerate(problem.edge_pair_nodes.tolist()):
        y = y0 + q
        # (10) h_{v1,v2} + h_{v1',v2'} - h_{e1,e2} <= 1: both endpoint mappings force the edge mapping
        rows.extend([r, r, r])
        cols.extend([x0 + ph, x0 + pd, y])
        vals.extend([1.0, 1.0, -1.0])
        lower.append(-np.inf)
        upper.append(1.0)
        kinds.append("10")
        r += 1
        # (11) h_{v1,v2} >= h_{e1,e2} and h_{v1',v2'} >= h_{e1,e2}
        for p in (ph, pd):
            rows.extend([r, r])
            cols.extend([y, x0 + p])
            vals.extend([1.0, -1.0])
            lower.append(-np.inf)
            upper.append(0.0)
            kinds.append("11")
            r += 1
    if strengthen:
        groups: dict[tuple[int, int, int], list[int]] = {}
        for q, ((e1, e2), (ph, pd)) in enumerate(zip(ep.tolist(), problem.edge_pair_nodes.tolist())):
            for key in ((0, e1, ph), (1, e1, pd), (2, e2, ph), (3, e2, pd)):
                groups.setdefault(key, []).append(q)
        for (_, _, pair), qs in groups.items():
            if len(qs) < 2:
                continue  # a single edge pair: the row would repeat (11)
            rows.extend([r] * (len(qs) + 1))
            cols.extend([y0 + q for q in qs] + [x0 + pair])
            vals.extend([1.0] * len(qs) + [-1.0])
            lower.append(-np.inf)
            upper.append(0.0)
            kinds.append("11-agg")
            r += 1
        for row in _clique_rows(problem):
            rows.extend([r] * 3)
            cols.extend([y0 + row[0], x0 + row[1], x0 + row[2]])
            vals.extend([1.0, 1.0, 1.0])
            lower.append(-np.inf)
            upper.append(1.0)
            kinds.append("clique")
            r += 1
    A = sp.csc_matrix((vals, (rows, cols)), shape=(r, problem.n_variables), dtype=np.float64)
    return A, np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64), kinds


def _clique_rows(problem: GraphAlignmentProblem) -> list[tuple[int, int, int]]:
    """(edge pair q, word pair a, word pair b) of every clique row (see _constraint_matrix)."""
    pair_index = {(i, j): p for p, (i, j) in enumerate(problem.node_pairs.tolist())}
    g1_of: dict[int, set[int]] = {}  # G2 word -> its candidate G1 words
    g2_of: dict[int, set[int]] = {}  # G1 word -> its candidate G2 words
    for i, j in pair_index:
        g1_of.setdefault(j, set()).add(i)
        g2_of.setdefault(i, set()).add(j)
    out = []
    pairs = problem.node_pairs.tolist()
    for q, (ph, pd) in enumerate(problem.edge_pair_nodes.tolist()):
        (h1, h2), (d1, d2) = pairs[ph], pairs[pd]
        for i in sorted((g1_of[h2] & g1_of[d2]) - {h1, d1}):
            out.append((q, pair_index[(i, h2)], pair_index[(i, d2)]))
        for j in sorted((g2_of[h1] & g2_of[d1]) - {h2, d2}):
            out.append((q, pair_index[(h1, j)], pair_index[(d1, j)]))
    return out


#: HiGHS options of the branch-and-bound stage.  It only runs on a fractional LP, already has
#: a legal MIP start (the empty alignment) and usually closes at the root node.  Measured on
#: the fractional calls of ``benchmarks/ilp_inference.py`` (MSRP-sized, pruned): the
#: feasibility jump heuristic costs about half of the call (12 ms -> 6 ms) and finds nothing
#: the root LP and cuts do not; presolve a further quarter (12 -> 9 ms with the heuristic
#: on).  Exactness is unaffected (mip_rel_gap = 0).
_MIP_OPTIONS = {"mip_heuristic_run_feasibility_jump": False, "presolve": "off"}


class GraphAlignmentILP:
    """Exact argmax over the alignments of one problem; the HiGHS models are built once.

    Parameters
    ----------
    problem : GraphAlignmentProblem
    time_limit : float seconds or None (default: no limit), per solve (LP and ILP stages
        each get it).
    matching_first : bool, default True: use the matching stage whenever it applies
        (``False`` sends every call to the LP/ILP stages, e.g. to cross-check them).
    lp_first : bool, default True: try the LP relaxation before branch-and-bound.
    strengthen : bool, default True: add the aggregated form of (11) and clique rows (valid
        inequalities, see below) to the LP and ILP.  The legal alignments are the same; the
        LP relaxation is integral far more often (random MSRP-sized problems of
        ``benchmarks/ilp_inference.py``, top-3 pairs per word, 3 x 480 calls: 1.8 % of the
        LPs fractional instead of 10.9 % — 4.4 % with the aggregated rows alone), so
        branch-and-bound, by far the most expensive stage, runs about 6 times less often,
        for about 15 % more rows.  ``False`` gives exactly the rows (6)–(11).
    threads : int, HiGHS threads (default 1).
    bb_max_lp_solves : int >= 0, default 200: node LPs the LP-based branch-and-bound (stage
        3) may solve before it hands the call to HiGHS' MIP; 0 skips that stage.

    ``solve(part_scores)`` returns a :class:`~latentstruct.inference.result.DecodeResult`
    whose structure is a :class:`GraphAlignment` (``None`` when infeasible or on error) and
    whose score is :func:`alignment_score` of it.  Method — cheapest exact stage first, the
    stage used is ``stats["solver"]``:

    0. ``"trivial"`` — a problem without variables has one alignment (the empty one).
    1. ``"matching"`` (with ``matching_first``) — when the edge terms vanish (no candidate edge pairs, or every net
       edge-pair score ``edge_map[q] − edge_del1[e1] − edge_del2[e2]`` is exactly 0, the
       ``edge_del`` terms counted only where edge deletion exists) and every deletion score
       is finite, the score is a constant plus ``Σ_p x_p (node_map[p] − del1[i] − del2[j])``
       over a one-to-one partial matching (a deletion score is subtracted only where that
       deletion variable exists): a maximum-weight bipartite matching, solved by
       :func:`scipy.optimize.linear_sum_assignment` on the clipped gains.  Exact, O(n³).
    2. ``"lp"`` (with ``lp_first``) — the LP relaxation of (12) s.t. (6)–(11), kept as one
       HiGHS model (solved from a cleared state and the empty alignment's basis, presolve
       off; see ``LPStage``).  If its optimal
       vertex is integral (every entry within 1e-6 of 0 or 1), the rounded vector
       satisfies every row and its score reaches the LP bound (to 1e-6 relative to the
       scores' magnitude), it is an optimal alignment: exact.  With candidate pairs pruned
       to a few per word this settles most calls (about 98 % with ``strengthen`` and 89 %
       without, top-3 pairs per word on the random MSRP-sized problems of
       ``benchmarks/ilp_inference.py``); an infeasible relaxation proves infeasibility.
    3. ``"bb"`` (with ``lp_first`` and ``bb_max_lp_solves > 0``) — when the LP optimum is
       fractional, a depth-first branch-and-bound on the word mappings over the same LP
       model (:class:`~latentstruct.inference.graph_alignment_bb.LPBranchAndBound`: fix a
       word mapping to 1 or 0, re-solve by dual simplex, prune by the LP bound, greedy
       rounding as incumbent).  Exact when the tree closes (bound and incumbent within
       1e-9 relative to the scores' magnitude).  LCLR on 300 MSRP pairs: every fractional
       LP closed, a median of 3 node LPs, about 4 times faster than stage 4.  It hands over
       to stage 4 when the node budget or the time limit runs out.
    4. ``"ilp"`` — otherwise HiGHS branch-and-bound on the binary program (12) s.t. (6)–(11)
       (``mip_rel_gap = 0``) through :class:`~latentstruct.inference.ilp.ILPModel`, with
       HiGHS' feasibility-jump heuristic and presolve off (``_MIP_OPTIONS``: each took a
       large share of a call on these small programs).  The
       constraint matrix never changes; only the objective (and, for ``-inf`` scores, a
       variable's upper bound) does.  The MIP start is ``mip_start`` if given, else the
       empty alignment (legal unless ``-inf`` scores forbid one of its deletion variables,
       in which case HiGHS ignores it).  Worst case exponential (quadratic-assignment-like);
       keep candidate pairs pruned.

    Determinism: both HiGHS models are solved from a cleared solver state
    (``clearSolver``; the LP then from a basis fixed by the problem, and the branch-and-bound
    nodes of stage 3, in an order fixed by the LP solutions, each from the basis the
    previous node left), single-threaded by default, so the result is a function of
    (problem, scores, ``mip_start``, options) only — an optimal alignment is chosen among
    ties the same way on every call, whatever the model solved before, and a pickled copy
    (which rebuilds its models on first use) decodes identically.  Earlier versions restarted
    the simplex from the previous basis and passed the previous alignment as MIP start;
    among tied optima that returned different alignments depending on the call history
    (LCLR's ``coef_`` then differed between two fits on the same data).  The saving it
    bought was small next to the model build that reuse avoids (see
    ``benchmarks/ilp_inference.py``).

    With ``strengthen=True`` (the default) both HiGHS models also hold, for every edge e of either graph
    and every word pair p at e's head (or dependent) shared by two or more of e's candidate
    edge pairs, the row ``Σ_{q ∋ e, p} h_q <= h_p`` — (11) summed over the partner edges,
    valid because those partners differ in their other endpoint, a single word that (6)/(7)
    map at most once; and the clique rows ``h_q + h_{i,h2} + h_{i,d2} <= 1`` of
    ``_constraint_matrix``.  ``n_constraints`` then counts these rows too
    (``constraint_kinds`` labels them ``"11-agg"`` and ``"clique"``).

    ``stats``: ``solver``, ``time`` (s, the whole call), ``nodes`` (branch-and-bound nodes;
    0 for matching and LP), ``status`` (= ``result.status``); ``reason`` for matching;
    ``lp_time``, ``lp_bound`` and ``lp_integral`` when the LP stage ran; ``bb_lp_solves``
    and ``bb_outcome`` (``"optimal"``, ``"infeasible"`` or ``"gave_up"``) when stage 3 ran
    (``nodes`` is then its node LPs); for the ILP also
    ``solver_time``, ``mip_gap``, ``objective_bound`` and ``model_status``.

    Statuses: ``"exact"``; ``"time_limit"`` — the ILP hit the time limit and the best legal
    alignment found so far is returned (its gap and bound in ``stats``; a legal MIP start is
    always passed, so an incumbent normally exists); ``"infeasible"`` — only possible when
    ``-inf`` scores forbid word- or edge-deletion variables (structure ``None``, score
    ``-inf``);
    ``"error"`` — anything else, e.g. a time limit hit with no incumbent (structure
    ``None``).  The matching stage ignores ``time_limit`` (it is polynomial and exact); an LP
    stage that hits the limit hands over to the ILP stage.
    """

    def __init__(
        self,
        problem: GraphAlignmentProblem,
        *,
        time_limit=None,
        matching_first=True,
        lp_first=True,
        strengthen=True,
        threads=1,
        bb_max_lp_solves=200,
    ):
        if not isinstance(problem, GraphAlignmentProblem):
            raise InputError(f"problem must be a GraphAlignmentProblem; got {type(problem).__name__}")
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InputError(f"threads must be an integer >= 1; got {threads!r}")
        self.problem = problem
        self.time_limit = check_time_limit(time_limit)
        self.matching_first = _flag(matching_first, "matching_first")
        self.lp_first = _flag(lp_first, "lp_first")
        self.strengthen = _flag(strengthen, "strengthen")
        self.threads = int(threads)
        b = bb_max_lp_solves
        if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) or b < 0:
            raise InputError(f"bb_max_lp_solves must be an integer >= 0; got {b!r}")
        self.bb_max_lp_solves = int(b)
        self._bb: LPBranchAndBound | None = None
        A, lower, upper, kinds = _constraint_matrix(problem, self.strengthen)
        self._A, self._lower, self._upper = A, lower, upper
        #: the constraint number ("6" ... "11") of each ILP row
        self.constraint_kinds = tuple(kinds)
        self._model: ILPModel | None = None
        self._lp: LPStage | None = None
        # the ILP's MIP start when the caller gives none: legal unless -inf forbids one of its
        # variables, and the same on every call (a previous solution would make the optimum
        # returned among ties depend on the call history)
        self._empty = GraphAlignment.empty(problem).to_vector().astype(np.float64)
        self._layout = problem.variable_layout()
        # deletion variables: the matching stage needs them finite; the LP's starting basis
        self._deletion = np.zeros(problem.n_variables, dtype=bool)
        for name in ("del1", "del2", "edge_del1", "edge_del2"):
            self._deletion[self._layout[name]] = True
        # HiGHS is only needed when edge terms can be present: build it now then, so that the
        # cost is paid once, up front.
        if problem.n_edge_pairs:
            self._ensure_model()

    # -- pickling: HiGHS handles are dropped and rebuilt on first use -------------------------
    def __getstate__(self):
        state = self.__dict__.copy()
        state["_model"] = None
        state["_lp"] = None
        state["_bb"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- sizes ----------------------------------------------------------------------------
    @property
    def n_variables(self) -> int:
        return self.problem.n_variables

    @property
    def n_constraints(self) -> int:
        return int(self._A.shape[0])

    def variable_layout(self) -> dict[str, slice]:
        """See :meth:`GraphAlignmentProblem.variable_layout`."""
        return self.problem.variable_layout()

    def _ensure_model(self) -> ILPModel:
        if self._model is None:
            self._model = ILPModel(
                self.n_variables,
                self._A,
                self._lower,
                self._upper,
                time_limit=self.time_limit,
                threads=self.threads,
                warm_start=False,  # history-free solves (see the class docstring)
                highs_options=_MIP_OPTIONS,
            )
            if self.lp_first:
                self._lp = LPStage(self._A, self._lower, self._upper, self.threads, self._deletion)
                if self.bb_max_lp_solves:
                    p, L = self.problem, self._layout
                    complete = AlignmentCompletion(
                        L, p.node_pairs, p.edge_pairs, p.edge_pair_nodes, p.n1, p.n2, p.n_edges1, p.n_edges2
                    )
                    cols = np.arange(L["node_map"].start, L["node_map"].stop)
                    self._bb = LPBranchAndBound(self._lp, cols, p.node_pairs, complete, self.bb_max_lp_solves)
        return self._model

    # -- solving --------------------------------------------------------------------------
    def _matching_reason(self, obj: np.ndarray, forbidden: np.ndarray):
        """Why the matching stage applies, or None; ``obj`` = the flat scores, ``forbidden`` =
        isneginf(obj)."""
        p = self.problem
        if forbidden[self._deletion].any():
            return None
        if p.n_edge_pairs == 0:
            return "no candidate edge pairs"
        L = self._layout
        net = obj[L["edge_map"]]
        if p.edge_deletion:
            net = net - obj[L["edge_del1"]][p.edge_pairs[:, 0]] - obj[L["edge_del2"]][p.edge_pairs[:, 1]]
        if np.all(net == 0.0):
            return "edge-pair net scores are all zero (no pairwise terms)"
        return None

    def _solve_matching(self, s: GraphPartScores, reason: str, t0: float) -> DecodeResult:
        p = self.problem
        pairs = p.node_pairs
        gain = s.node_map.copy()
        if p.delete_nodes1:
            gain -= s.del1[pairs[:, 0]]
        if p.delete_nodes2:
            gain -= s.del2[pairs[:, 1]]
        x = np.zeros(p.n_node_pairs, dtype=np.int64)
        usable = np.flatnonzero(gain > 0.0)  # -inf and non-positive gains are never worth it
        if usable.size:
            W = np.zeros((p.n1, p.n2))
            W[pairs[usable, 0], pairs[usable, 1]] = gain[usable]
            rows, cols = linear_sum_assignment(W, maximize=True)
            index = {(i, j): k for k, (i, j) in enumerate(pairs.tolist())}
            for i, j in zip(rows.tolist(), cols.tolist()):
                if W[i, j] > 0.0:
                    x[index[(i, j)]] = 1
        alignment = GraphAlignment.from_node_map(p, x)
        score = alignment_score(alignment, s)
        elapsed = time.perf_counter() - t0
        stats = {"solver": "matching", "reason": reason, "time": elapsed, "nodes": 0, "status": EXACT}
        return DecodeResult(alignment, score, EXACT, stats)

    def _rounded_if_legal(self, x: np.ndarray, upper: np.ndarray):
        """The 0/1 rounding of an LP solution if it is integral and satisfies every row."""
        z = np.rint(x)
        if np.abs(x - z).max(initial=0.0) > _INTEGRAL_TOL:
            return None
        Az = self._A @ z
        if (Az < self._lower - 0.5).any() or (Az > self._upper + 0.5).any() or (z > upper).any():
            return None  # cannot happen for an integral LP point; kept as a guard
        return z.astype(np.int8)

    def solve(self, part_scores: GraphPartScores, *, time_limit=None, mip_start: GraphAlignment | None = None):
        """Best legal alignment for ``part_scores`` (see the class docstring).

        Parameters
        ----------
        part_scores : GraphPartScores with the shapes of ``problem.sizes()``.
        time_limit : seconds for this call (LP and ILP stages), overriding the constructor's.
        mip_start : GraphAlignment to start the ILP (stage 4) from instead of the empty
            alignment (among tied optima the ILP's answer may depend on it).
        """
        t0 = time.perf_counter()
        if not isinstance(part_scores, GraphPartScores):
            raise InputError(f"part_scores must be a GraphPartScores; got {type(part_scores).__name__}")
        s = part_scores.check(self.problem)
        start = None
        if mip_start is not None:
            if not isinstance(mip_start, GraphAlignment):
                raise InputError(f"mip_start must be a GraphAlignment; got {type(mip_start).__name__}")
            _check_sizes(mip_start, self.problem, "mip_start")
            start = mip_start.to_vector()
        return self._solve(s.to_vector(), s, time_limit, start, t0)

    def solve_vector(self, scores, *, time_limit=None) -> DecodeResult:
        """:meth:`solve` for the part scores as one flat vector in :meth:`variable_layout`
        order (what a task computes as ``features @ w``), without building a
        :class:`GraphPartScores` — the same result, minus the per-type copies and checks
        that cost a few % of a decode."""
        t0 = time.perf_counter()
        obj = as_scores(scores, "scores", 1, "(n_variables,)")
        if obj.shape != (self.n_variables,):
            raise InputError(
                f"scores must have shape (n_variables,) = {shape_str((self.n_variables,))}; "
                f"got shape {shape_str(obj.shape)}"
            )
        return self._solve(obj, None, time_limit, None, t0)

    def _solve(self, obj: np.ndarray, s: GraphPartScores | None, time_limit, start, t0: float) -> DecodeResult:
        """The stages of :meth:`solve` on the flat scores ``obj`` (``s``: the same scores as
        a GraphPartScores, or None to build them only if the matching stage needs them)."""
        tl = check_time_limit(time_limit)
        if tl is None:
            tl = self.time_limit
        forbidden = np.isneginf(obj)
        reason = self._matching_reason(obj, forbidden) if self.matching_first else None
        if reason is not None:
            if s is None:
                s = GraphPartScores.from_vector(self.problem, obj)
            return self._solve_matching(s, reason, t0)
        if self.n_variables == 0:  # nothing to decide: the empty alignment is the only one
            stats = {"solver": "trivial", "time": time.perf_counter() - t0, "nodes": 0, "status": EXACT}
            return DecodeResult(GraphAlignment.empty(self.problem), 0.0, EXACT, stats)
        model = self._ensure_model()
        stats: dict = {}
        if self._lp is not None:
            t_lp = time.perf_counter()
            lp_status, lp_value, lp_x = self._lp.solve(obj, forbidden, tl)
            stats["lp_time"] = time.perf_counter() - t_lp
            stats["lp_bound"] = lp_value
            if lp_status == highspy.HighsModelStatus.kInfeasible:
                stats.update(solver="lp", time=time.perf_counter() - t0, nodes=0, status=INFEASIBLE)
                stats["model_status"] = "Infeasible"
                return DecodeResult(None, -np.inf, INFEASIBLE, stats)
            z = None if lp_x is None else self._rounded_if_legal(lp_x, self._lp.upper)
            stats["lp_integral"] = z is not None
            if z is not None:
                score = _vector_score(obj, z)
                # certificate: a legal alignment scoring the LP bound is optimal
                scale = 1.0 + np.abs(obj[~forbidden]).sum()  # obj has no +inf or NaN (checked)
                if score >= lp_value - _INTEGRAL_TOL * scale:
                    stats.update(solver="lp", time=time.perf_counter() - t0, nodes=0, status=EXACT)
                    return DecodeResult(GraphAlignment._trusted(self.problem, z, self._layout), score, EXACT, stats)
                stats["lp_integral"] = False  # numerically borderline LP: let the ILP decide
            elif lp_x is not None and self._bb is not None:
                t_bb = time.perf_counter()
                deadline = None if tl is None else t0 + tl
                outcome, z, score, n_lp = self._bb.solve(obj, lp_value, lp_x, deadline)
                stats.update(bb_lp_solves=n_lp, bb_outcome=outcome, bb_time=time.perf_counter() - t_bb)
                if outcome == "optimal":
                    stats.update(solver="bb", time=time.perf_counter() - t0, nodes=n_lp, status=EXACT)
                    return DecodeResult(GraphAlignment._trusted(self.problem, z, self._layout), score, EXACT, stats)
                if outcome == "infeasible":
                    stats.update(solver="bb", time=time.perf_counter() - t0, nodes=n_lp, status=INFEASIBLE)
                    return DecodeResult(None, -np.inf, INFEASIBLE, stats)
        res = model.solve(obj, mip_start=self._empty if start is None else start, time_limit=tl)
        ilp_stats = dict(res.stats)
        ilp_stats["solver_time"] = ilp_stats.pop("time")
        stats.update(ilp_stats)
        stats.update(solver="ilp", time=time.perf_counter() - t0, status=res.status)
        if res.structure is None:
            return DecodeResult(None, res.score, res.status, stats)
        z = res.structure
        alignment = GraphAlignment._trusted(self.problem, z, self._layout)
        return DecodeResult(alignment, _vector_score(obj, z), res.status, stats)

    def lp_relaxation(self, part_scores: GraphPartScores) -> float:
        """Optimal value of the LP relaxation of (12) s.t. (6)–(11): an upper bound on the
        best alignment's score (``-inf`` if the relaxation is infeasible)."""
        if not isinstance(part_scores, GraphPartScores):
            raise InputError(f"part_scores must be a GraphPartScores; got {type(part_scores).__name__}")
        s = part_scores.check(self.problem)
        if self.n_variables == 0:
            return 0.0
        return self._ensure_model().solve_lp_relaxation(s.to_vector())
