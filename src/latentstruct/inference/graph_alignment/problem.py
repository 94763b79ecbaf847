"""Graph alignment (LCLR §4): word / edge mapping and deletion variables tied by (6)–(11).

The intermediate representation of paraphrase identification and RTE in Chang et al. (2010,
§4) aligns two graphs G1 and G2 (vertices = words, directed edges = dependency relations).
This subpackage is the numeric layer only: graphs are node counts and ``(head, dependent)``
index arrays, and every hidden variable has a real-valued part score.  Tasks turn words into
part scores (``θ_s = w · φ_s(x)``) through :meth:`GraphAlignmentProblem.variable_layout`.

This module defines the problem: its variables, the constraints that tie them and the
validated :class:`GraphAlignmentProblem`.  Scores and alignments are in
:mod:`~latentstruct.inference.graph_alignment.alignments`, the constraint matrix in
:mod:`~latentstruct.inference.graph_alignment.constraints`, the exact solver in
:mod:`~latentstruct.inference.graph_alignment.solver`.

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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import shape_str

#: The six variable types, in layout order (also the field names of scores and alignments).
VARIABLE_TYPES = ("node_map", "del1", "del2", "edge_map", "edge_del1", "edge_del2")


def _count(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def check_flag(value, name: str) -> bool:
    """``value`` as a bool, or InputError unless it is True or False."""
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


def readonly_array(a: np.ndarray) -> np.ndarray:
    """A C-contiguous, read-only view (or copy) of ``a``."""
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


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
            set_(self, name, check_flag(getattr(self, name), name))
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
        set_(self, "edge_pairs", readonly_array(np.array(out_pairs, dtype=np.int64).reshape(-1, 2)))
        set_(self, "edge_pair_nodes", readonly_array(np.array(out_nodes, dtype=np.int64).reshape(-1, 2)))

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
