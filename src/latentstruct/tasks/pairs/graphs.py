"""Sentence graphs and featurised sentence pairs of the paraphrase and RTE tasks.

:class:`SentenceGraph` is one parsed sentence as a graph (words, dependency edges, and
optionally predicate-argument edges and pronouns' canonical forms); :func:`candidate_pairs`
is the top-k pruning of word mappings; :class:`GraphPair` is one featurised pair (graphs,
alignment problem, part-feature matrix and its lazily built ILP); :func:`pair_digest`
identifies a pair's texts (RTE's deduplication).  The graphs are described in
:mod:`latentstruct.tasks.pairs`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ...data.nlp import ParsedSentence
from ...exceptions import InputError
from ...inference.graph_alignment import GraphAlignmentILP, GraphAlignmentProblem
from .features import add_edges, canonical_forms, predicate_argument_arcs

__all__ = ["SentenceGraph", "candidate_pairs", "pair_digest", "GraphPair"]


# --------------------------------------------------------------------------------------
# graphs
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SentenceGraph:
    """The graph of one sentence: per-node word information and dependency edges.

    ``ner`` holds the entity type (``PERSON``, ``GPE``...) or ``""``; ``negated`` is True
    for negation markers and words with a negation dependent; ``edges`` is an int64 array
    (E, 2) of ``(head, dependent)`` and ``labels`` the dependents' dependency labels (or a
    ``pa:...`` label for a predicate-argument edge).  ``canonical`` holds each word's
    canonical form from the pronoun resolver (``""`` for all but resolved pronouns; empty
    tuple: not computed, read as all ``""``).
    """

    tokens: tuple
    lemmas: tuple
    pos: tuple
    ner: tuple
    negated: tuple
    edges: np.ndarray
    labels: tuple
    canonical: tuple = ()

    def __post_init__(self):
        if not self.canonical:
            object.__setattr__(self, "canonical", ("",) * len(self.tokens))

    def __len__(self) -> int:
        return len(self.tokens)

    @classmethod
    def from_parsed(cls, sent: ParsedSentence, drop_punct: bool = True, *, coref: bool = False,
                    pa_edges: bool = False) -> "SentenceGraph":
        """The graph of a parsed sentence (punctuation dropped, see
        :mod:`latentstruct.tasks.pairs`).

        ``coref`` fills ``canonical`` with :func:`~latentstruct.tasks.pairs.features.
        canonical_forms` (resolved on the full parse); ``pa_edges`` adds the new arcs of
        :func:`~latentstruct.tasks.pairs.features.predicate_argument_arcs` between kept
        words after the dependency edges (an existing edge keeps its label).
        """
        if not isinstance(sent, ParsedSentence):
            raise InputError(f"expected a ParsedSentence, got {type(sent).__name__}")
        n = len(sent)
        keep = [i for i in range(n) if sent.pos[i] != "SPACE"]
        if drop_punct:
            content = [i for i in keep if sent.pos[i] != "PUNCT"]
            keep = content or keep
        if not keep:
            raise InputError(
                f"sentence {sent.text[:60]!r} has no tokens; every sentence needs at least one word"
            )
        new = {old: k for k, old in enumerate(keep)}
        neg_child = [False] * n
        for i, h in enumerate(sent.heads):
            if h >= 0 and sent.is_negation[i]:
                neg_child[h] = True
        edges, labels = [], []
        for i in keep:
            h = sent.heads[i]
            while h >= 0 and h not in new:
                h = sent.heads[h]
            if h >= 0:
                edges.append((new[h], new[i]))
                labels.append(sent.deprels[i])
        if pa_edges:
            arcs = [(new[v], new[a], lab) for v, a, lab in predicate_argument_arcs(sent)
                    if v in new and a in new]
            edges, labels = add_edges(edges, labels, arcs)

        def pick(values):
            return tuple(values[i] for i in keep)

        ner = tuple(tag.split("-", 1)[1] if "-" in tag else "" for tag in pick(sent.ner))
        return cls(
            tokens=pick(sent.tokens),
            lemmas=pick(sent.lemmas),
            pos=pick(sent.pos),
            ner=ner,
            negated=tuple(bool(sent.is_negation[i] or neg_child[i]) for i in keep),
            edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
            labels=tuple(labels),
            canonical=pick(canonical_forms(sent)) if coref else (),
        )

    def doubled(self) -> "SentenceGraph":
        """The sentence concatenated with itself: two disjoint copies of the graph (§5.3)."""
        n = len(self)
        return SentenceGraph(self.tokens * 2, self.lemmas * 2, self.pos * 2, self.ner * 2,
                             self.negated * 2, np.concatenate([self.edges, self.edges + n]),
                             self.labels * 2, self.canonical * 2)


def candidate_pairs(affinity: np.ndarray, k: int, *, both_sides: bool = True,
                    min_affinity: float = 0.0) -> np.ndarray:
    """Candidate word pairs ``(i, j)`` (int64 (P, 2), sorted) kept by top-k pruning.

    Row i keeps its ``k`` highest-affinity columns; with ``both_sides`` every column j also
    keeps its ``k`` highest-affinity rows, and the union is returned.  Without it only the
    columns choose (``k`` best rows of every column: RTE's hypothesis words choosing text
    words).  Ties go to the earlier position (stable sort).  Pairs whose affinity is below
    ``min_affinity`` are then dropped as well.
    """
    A = np.asarray(affinity, dtype=np.float64)
    n1, n2 = A.shape
    keep = np.zeros((n1, n2), dtype=bool)
    if n1 and n2:
        kc = min(k, n1)
        top_rows = np.argsort(-A, axis=0, kind="stable")[:kc, :]
        keep[top_rows, np.arange(n2)[None, :]] = True
        if both_sides:
            kr = min(k, n2)
            top_cols = np.argsort(-A, axis=1, kind="stable")[:, :kr]
            keep[np.arange(n1)[:, None], top_cols] = True
        keep &= A >= min_affinity
    return np.argwhere(keep).astype(np.int64).reshape(-1, 2)


def _normalise_text(s: str) -> str:
    return " ".join(s.lower().split())


def pair_digest(first: str, second: str) -> bytes:
    """sha1 of the two texts, lower-cased and with whitespace runs collapsed (20 bytes)."""
    payload = _normalise_text(first) + "\x00" + _normalise_text(second)
    return hashlib.sha1(payload.encode("utf-8", "surrogatepass")).digest()


# --------------------------------------------------------------------------------------
# featurised examples
# --------------------------------------------------------------------------------------
class GraphPair:
    """One featurised sentence pair: both graphs, the alignment problem, the part-feature
    matrix and (built on the first decode, then kept) the ILP.

    ``features`` is a CSR matrix (n_variables, n_features) whose row r is the feature
    vector of variable r in ``problem.variable_layout()`` order (already divided by
    ``kappa``).  ``pair_index`` maps a candidate ``(i, j)`` to its ``node_pairs`` row.
    The ILP is built with ``strengthen=True`` (the aggregated form of (11): the same legal
    alignments, but the LP relaxation is integral more often, which cut LCLR's decoding
    time on MSRP by about a third) and the task's ``time_limit``.  It holds HiGHS models, which are never
    pickled: a pickled example (process, Dask or Ray workers) drops its ILP and rebuilds it
    on first use in the worker.  The ILP's solves are history-free, so the rebuilt model
    decodes exactly as the original would.
    """

    def __init__(self, pair_id, g1: SentenceGraph, g2: SentenceGraph,
                 problem: GraphAlignmentProblem, features, kappa: float, time_limit=None,
                 affinity=None):
        self.pair_id = pair_id
        self.g1 = g1
        self.g2 = g2
        self.problem = problem
        self.features = features
        self.kappa = float(kappa)
        self.time_limit = time_limit
        self.affinity = affinity
        self.pair_index = {(i, j): p for p, (i, j) in enumerate(problem.node_pairs.tolist())}
        self._ilp: GraphAlignmentILP | None = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_ilp"] = None  # HiGHS handles: rebuilt lazily by ``ilp``
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    @property
    def ilp(self) -> GraphAlignmentILP:
        """The example's solver, built on first use and reused (only objectives change)."""
        if self._ilp is None:
            self._ilp = GraphAlignmentILP(self.problem, time_limit=self.time_limit, strengthen=True)
        return self._ilp

    @property
    def n1(self) -> int:
        return self.problem.n1

    @property
    def n2(self) -> int:
        return self.problem.n2

    def __repr__(self) -> str:
        p = self.problem
        return (f"GraphPair(id={self.pair_id!r}, n1={p.n1}, n2={p.n2}, node_pairs={p.n_node_pairs}, "
                f"edge_pairs={p.n_edge_pairs}, variables={p.n_variables})")
