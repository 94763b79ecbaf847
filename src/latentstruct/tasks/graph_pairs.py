"""Paraphrase identification and textual entailment over latent graph alignments (LCLR §4,
§5.2, §5.3).

An example is a sentence pair; its label is +1 (paraphrase / entailment) or -1.  Each
sentence is a graph whose nodes are its words and whose edges are its dependency arcs
(spaCy, :class:`~latentstruct.data.nlp.Parser`).  The hidden structure aligns the two
graphs with the four variable types of §4 — word mapping, word deletion, edge mapping and
edge deletion — tied by the constraints (6)-(11); the best alignment under ``w`` is found
by :class:`~latentstruct.inference.graph_alignment.GraphAlignmentILP` (see that module for
how the constraints are read).  f(x) = max_h w . Phi(x, h) is positive for a paraphrase /
entailment.

Graphs
------
Nodes are the sentence's tokens except punctuation (universal POS ``PUNCT``; whitespace
tokens are already removed by the parser); a sentence made only of punctuation keeps it.
A token whose head was dropped is attached to its nearest kept ancestor (with its own
dependency label) or becomes a root.  Edges are ``(head, dependent)`` with the dependent's
label.  A word is *negated* when it is a negation marker (``ParsedSentence.is_negation``) or
has a negation marker among its dependents in the full parse.  With ``pa_edges`` the graphs
also get predicate-argument edges, and with ``coref_features`` each word carries its
canonical form (see "Features").

Records may be :class:`~latentstruct.data.pairs.SentencePair` (parsed on the fly; parses
are cached on disk by the parser), ``(str, str)`` or ``(ParsedSentence, ParsedSentence)``
tuples (no parser needed).

Pruning (what has no variable)
------------------------------
All word pairs are scored by a cheap *affinity*, ``max(WNSim, edit similarity) + 0.01 *
[same POS]``, where WNSim is :meth:`~latentstruct.data.wordnet.WordNet.similarity` (1.0 for
equal lower-cased lemmas when ``use_wordnet=False``, else 0.0; with ``coref_features``
also 1.0 for coreferent pairs) and edit similarity is ``1 - levenshtein(a, b) /
max(len(a), len(b))`` on the lower-cased tokens.  Candidate word
mappings are then

* paraphrase: the ``top_k`` best G2 words of every G1 word **united with** the ``top_k``
  best G1 words of every G2 word (ties broken by position, earliest first);
* RTE (G1 = text, G2 = hypothesis): the ``top_k`` best text words of every hypothesis word
  only; text words that are nobody's candidate simply stay unmapped (the text has no
  deletion variables, §5.2).

Every other word pair is pruned: it has no word-mapping variable (fixed to 0).  Candidate
edge mappings are exactly the pairs of edges whose heads and whose dependents are both
candidate word pairs (the problem derives them); word-deletion and edge-deletion
variables are never pruned.  By default (``min_affinity=0``) nothing is pruned by a
threshold, so every word keeps at least ``min(top_k, other sentence length)`` candidates on
the side(s) that choose; ``min_affinity > 0`` also drops chosen pairs whose affinity is
below it.

Features (LCLR Table 2, plus the extras marked +)
-------------------------------------------------
Each part (variable) has a sparse feature vector over a :class:`~latentstruct.data.features.
FeatureIndex` fitted on the training examples; the part score is ``w . phi_part``.  The
features are built by :mod:`latentstruct.tasks.graph_pair_features`.  Always present:

word mapping ``map:``
    ``const`` (+, the learned value of a mapping by itself); ``wnsim`` (real, the WNSim
    value); WordNet bucket ``wn=same|syn|hi|mid|lo|0`` (equal lower-cased lemmas, WNSim 1,
    >= 0.6, >= 0.3, > 0, 0); POS pair ``pos=A|B`` (paraphrase: sorted, RTE: text|hyp);
    ``sp=P&wn=B`` (+, the shared POS, or ``x`` when they differ, with the WordNet bucket);
    ``antonym`` (+, WordNet antonyms; only with ``use_wordnet``).
word deletion ``del:``
    ``const`` (+), ``pos=P``.  RTE: hypothesis words only.
edge mapping ``emap:`` (NODE-INFO)
    ``const`` (+), ``h:wn=B`` and ``d:wn=B`` (WordNet buckets of the head and dependent
    word mappings).
edge deletion ``edel:`` (paraphrase only; RTE has none)
    ``const`` (+).
``bias``
    One feature every structure has (value 1), so f(x) can be negative.

Each further resource is a boolean task parameter (paraphrase default / RTE default), so
it can be ablated:

``ne_features`` (on / off) — named entities (spaCy's)
    ``map:ne=same|diff|one`` (both words in entities of the same / different types, only
    one in an entity) and ``del:ne=TYPE``.
``edit_features`` (on / off) — edit distance
    ``map:ed=eq|hi|mid|lo|none`` (edit similarity 1, >= 0.8, >= 0.6, >= 0.4, below).  The
    pruning affinity always uses edit similarity, whatever this option.
``negation_features`` (on / on) — negation markers
    ``map:neg_mismatch`` (one word negated, the other not).
``coref_features`` (off / off) — canonical entities of pronouns (Coref)
    A rule-based resolver (:func:`~latentstruct.tasks.graph_pair_features.canonical_forms`)
    gives each third-person pronoun the lower-cased lemma of its nearest preceding
    compatible antecedent in the same text (he/she: a PERSON entity or a proper noun outside
    any entity; it: a non-PERSON entity or a singular noun; they: any entity or a plural
    noun; a multi-word entity's last token).  A word mapping where one word's canonical form equals the other
    word's lower-cased lemma, or both canonical forms are equal, gets ``map:coref=same``,
    and its pruning affinity counts it as an exact lemma match (so "He" becomes a candidate
    for "John"); ``map:wnsim`` and the WordNet bucket are unchanged.
``dep_label_features`` (on / off) — dependency labels (DEP)
    ``emap:dep=same`` with ``emap:dep_same=LABEL``, or ``emap:dep=diff``; ``edel:dep=LABEL``.
``pa_edges`` (off / off) — predicate-argument edges
    Both graphs get extra edges approximated from the parse
    (:func:`~latentstruct.tasks.graph_pair_features.predicate_argument_arcs`): for every
    verb, ``verb -prep-> P -pobj-> X`` adds ``verb -> X`` labelled ``pa:<P's lemma>``, the
    passive's by-phrase ``verb -agent-> by -pobj-> X`` adds ``verb -> X`` labelled
    ``pa:subj`` (and ``nsubjpass`` reads ``pa:obj``, but that arc is already a dependency
    edge, which keeps its label).  An arc that is already an edge is not added twice.  The
    new edges have edge-mapping (and, for paraphrase, edge-deletion) variables like any
    other, with the labels above in the DEP features.
``edge_sim_features`` (on / on) — edge features scaled by word similarity
    ``emap:wnsim`` (real, the product of the head and dependent WNSim values: the
    word-mapping evidence scaled by the similarity of both endpoints).
``edge_node_features`` (off / off) — the endpoints' word-mapping features on the edge
    §5.2's edge-mapping features ("the features of the corresponding word mapping
    variables, scaled by the word similarity of the words forming the edge"): every
    ``map:NAME`` feature of the head's word mapping becomes ``emap:hs:NAME`` and every one
    of the dependent's ``emap:ds:NAME``, with its value times the product of the head and
    dependent WNSim values (none when that product is 0).

Table 2's columns are: paraphrase = WordNet, POS, NE, ED (mapping), POS, NE (deletion),
NODE-INFO + DEP (edges); RTE = WordNet, POS, Coref, Neg (mapping), POS (deletion),
NODE-INFO (edge mapping).  The defaults keep the features this module had before the
options existed (paraphrase also has negation; Coref is off for RTE until the experiments
decide).

With ``normalize=True`` every part feature is divided by kappa(x) — the mean length
``(n1 + n2) / 2`` for paraphrase, the hypothesis length for RTE — so that the decision reads
fractions ("a third of the words deleted") rather than counts; the argmax is unchanged and
the bias is not divided.  Names unseen in training are dropped at prediction time.

Structures
----------
A legal alignment is determined by its word mappings (see the inference module), so the
structure ``h`` handed to learners is an int64 array ``a`` of G1's length with ``a[i] = j``
(G1 word i mapped to G2 word j) or ``-1``.  :meth:`GraphPairTask.alignment` rebuilds the
full :class:`~latentstruct.inference.graph_alignment.GraphAlignment`, and
:meth:`GraphPairTask.decode` returns the solver's own result.

Two-stage heuristic
-------------------
:meth:`GraphPairTask.heuristic_weights` scores the same ILP with WNSim (§5.2: "we used
WNSim to score alignments"): weight 1 on ``map:wnsim``, a small deletion cost (-0.1 on
``del:const``) and a mapping constant that makes a word mapping worth it exactly when its
WNSim exceeds ``heuristic_threshold`` (``map:const = -threshold - 0.1 x`` the number of
sides with deletion variables).  Edge variables get no score; they follow the word
mappings through the constraints (10)-(11), so this heuristic is solved exactly by the
matching stage of the ILP solver.
"""

from __future__ import annotations

import hashlib
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..data.atomic import atomic_write
from ..data.features import FeatureIndex, feature_index_from_arrays
from ..data.nlp import ParsedSentence, Parser, check_pipeline_name
from ..data.pairs import (
    SentencePair,
    check_sentence_length,
    read_glue_rte,
    read_msrp,
    read_rte_xml,
)
from ..data.progress import track
from ..data.readers import excerpt
from ..data.sparse import SparseVector
from ..exceptions import ConfigError, InferenceError, InputError, ModelFormatError
from ..inference.graph_alignment import (
    GraphAlignment,
    GraphAlignmentILP,
    GraphAlignmentProblem,
    GraphPartScores,
    alignment_vector,
)
from ..inference.result import DecodeResult
from .base import Dataset, LatentBinaryTask, register_task
from .contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY
from .raw_pairs import binary_predictions, sentence_pair_dataset
from .graph_pair_features import (
    FeatureOptions,
    Lexical,
    add_edges,
    canonical_forms,
    edit_similarity,
    lexical,
    part_features,
    predicate_argument_arcs,
)

__all__ = [
    "SentenceGraph",
    "GraphPair",
    "GraphPairTask",
    "ParaphraseTask",
    "RteTask",
    "candidate_pairs",
    "edit_similarity",
    "binary_metrics",
    "pair_digest",
]

_SPLITS = ("train", "test")
_FI_PREFIX = "graph_pairs_fi_"
#: the training-pair digests saved with an RTE model (see RteTask.read)
_DIGEST_KEY = "graph_pairs_train_digests"
#: names given ids first, in this order (so the heuristic and the bias have fixed ids)
_FIXED_NAMES = ("bias", "map:const", "map:wnsim", "del:const", "emap:const", "edel:const")


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
        """The graph of a parsed sentence (punctuation dropped, see the module docstring).

        ``coref`` fills ``canonical`` with :func:`~latentstruct.tasks.graph_pair_features.
        canonical_forms` (resolved on the full parse); ``pa_edges`` adds the new arcs of
        :func:`~latentstruct.tasks.graph_pair_features.predicate_argument_arcs` between kept
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


def binary_metrics(y_true, y_pred) -> dict:
    """``{"accuracy", "f1"}`` of +-1 labels; F1 of the positive class (0 when undefined)."""
    y = np.asarray(y_true)
    p = np.asarray(y_pred)
    if p.shape != y.shape:
        raise InputError(f"{y.shape[0]} targets but predictions have shape {p.shape}")
    if y.size == 0:
        return {"accuracy": 0.0, "f1": 0.0}
    tp = int(np.sum((y > 0) & (p > 0)))
    fp = int(np.sum((y <= 0) & (p > 0)))
    fn = int(np.sum((y > 0) & (p <= 0)))
    f1 = 2.0 * tp / (2 * tp + fp + fn) if tp else 0.0
    return {"accuracy": float(np.mean(y == p)), "f1": float(f1)}


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


def _check_int(name, v, *, allow_none=False, minimum=0):
    if v is None and allow_none:
        return
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)) or v < minimum:
        what = f"an integer >= {minimum}" + (" or None" if allow_none else "")
        raise ConfigError(f"{name} must be {what}, got {v!r}")


def _check_flag(name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {v!r}")


# --------------------------------------------------------------------------------------
# the tasks
# --------------------------------------------------------------------------------------
class GraphPairTask(LatentBinaryTask):
    """Shared machinery of :class:`ParaphraseTask` and :class:`RteTask` (see the module
    docstring).  Subclasses set the class attributes below, their parameters and ``read``.

    The feature resources under Other Parameters are LCLR Table 2's (booleans, each
    ablatable; defaults per task in the subclass signatures; see the module docstring,
    "Features", for the names they add).

    Parameters
    ----------
    top_k : int >= 1, default 3 — candidate word mappings per word (see "Pruning").
    min_affinity : float in [0, 2], default 0 — candidates below this affinity are pruned.
    n_train, n_test : int or None — seeded samples of the train / test split (None: all).
    seed : int — seed of splits and samples.
    normalize : bool, default True — divide part features by kappa(x).
    use_wordnet : bool, default True — WNSim from WordNet (else lemma equality only).
    heuristic_threshold : float, default 0.5 — WNSim above which the two-stage heuristic maps.
    time_limit : float seconds or None, default 10 — per ILP solve (status ``time_limit``
        then returns the best legal alignment found).
    min_count : int, default 1 — feature names seen fewer times in training are dropped.
    pipeline : str — the spaCy pipeline that parses the sentences (:class:`Parser`); one of
        ``data.nlp.ALLOWED_PIPELINES``.
    cache_dir : str or None — folder of the parse cache (:class:`Parser`).  It is never taken
        from a model file (``local_params``: give it again at evaluation time).

    Other Parameters
    ----------------
    ne_features : bool — spaCy's named entities, ``map:ne=...`` and ``del:ne=TYPE``.
    edit_features : bool — the edit-similarity bucket of a word mapping, ``map:ed=...``.
    negation_features : bool — a negation marker on one side only, ``map:neg_mismatch``.
    coref_features : bool — pronouns' canonical entities (rule-based resolver),
        ``map:coref=same``; coreferent pairs also count as lemma matches for pruning.
    dep_label_features : bool — dependency labels, ``emap:dep...`` and ``edel:dep=LABEL``.
    pa_edges : bool — predicate-argument edges added to both graphs (labels ``pa:...``).
    edge_sim_features : bool — edge evidence scaled by both endpoints' WNSim, ``emap:wnsim``.
    edge_node_features : bool — the head's and the dependent's word-mapping features scaled
        by the edge's WNSim product (§5.2), ``emap:hs:...`` / ``emap:ds:...``.
    """

    default_learner: ClassVar[str] = "lclr"
    # No random-ties: the ILP breaks ties deterministically (random_state is ignored).
    capabilities = frozenset({LATENT_BINARY, HEURISTIC, EXPLAINABLE})
    # the test sample, the ILP time limit and where parses are cached; nothing that makes features
    evaluation_params = frozenset({"n_test", "time_limit", "cache_dir"})
    # a folder on this machine: a model file's value would make evaluate write there
    local_params = frozenset({"cache_dir"})
    #: variable types of the latent space
    delete_nodes1: ClassVar[bool] = True
    delete_nodes2: ClassVar[bool] = True
    edge_deletion: ClassVar[bool] = True
    #: pruning from both sides (paraphrase) or from G2's words only (RTE)
    prune_both_sides: ClassVar[bool] = True
    #: the two sentences play the same role (sorted POS pairs)
    symmetric: ClassVar[bool] = True
    #: how messages about in-memory data (``make_dataset``) name the two sentences
    raw_names: ClassVar[tuple[str, str]] = ("text_a", "text_b")
    #: the boolean feature-resource parameters (see "Feature resources")
    FEATURE_FLAGS: ClassVar[tuple[str, ...]] = (
        "ne_features", "edit_features", "negation_features", "coref_features",
        "dep_label_features", "pa_edges", "edge_sim_features", "edge_node_features")

    # --- parameters -------------------------------------------------------------------
    def _validate_params(self) -> None:
        check_pipeline_name(self.pipeline)
        _check_int("top_k", self.top_k, minimum=1)
        _check_int("n_train", self.n_train, allow_none=True)
        _check_int("n_test", self.n_test, allow_none=True)
        _check_int("seed", self.seed)
        _check_int("min_count", self.min_count, minimum=1)
        _check_flag("normalize", self.normalize)
        _check_flag("use_wordnet", self.use_wordnet)
        for name in self.FEATURE_FLAGS:
            _check_flag(name, getattr(self, name))
        a = self.min_affinity
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Real) or not 0.0 <= a <= 2.0:
            raise ConfigError(f"min_affinity must be a number in [0, 2], got {a!r}")
        t = self.heuristic_threshold
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Real) or not 0.0 <= t <= 1.0:
            raise ConfigError(f"heuristic_threshold must be a number in [0, 1], got {t!r}")
        tl = self.time_limit
        if tl is not None and (isinstance(tl, (bool, np.bool_)) or not isinstance(tl, numbers.Real)
                               or tl <= 0):
            raise ConfigError(f"time_limit must be a positive number of seconds or None, got {tl!r}")

    # --- resources (built lazily, never saved or pickled) -----------------------------
    #: attributes holding handles (spaCy pipeline, WordNet reader) or a pure cache; dropped
    #: by ``__getstate__`` and re-created on first use, so that process / Dask / Ray
    #: workers can receive the task
    _transient: ClassVar[tuple[str, ...]] = ("_parser_obj", "_parser_key", "_wordnet_obj", "_ed_memo")

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in self._transient:
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _parser(self) -> Parser:
        key = (check_pipeline_name(self.pipeline), self.cache_dir)
        if getattr(self, "_parser_obj", None) is None or self._parser_key != key:
            self._parser_obj = Parser(self.pipeline, cache_dir=self.cache_dir)
            self._parser_key = key
        return self._parser_obj

    def _wordnet(self):
        if not self.use_wordnet:
            return None
        if getattr(self, "_wordnet_obj", None) is None:
            from ..data.wordnet import WordNet

            self._wordnet_obj = WordNet()
        return self._wordnet_obj

    def _edit_sim(self, a: str, b: str) -> float:
        memo = self.__dict__.setdefault("_ed_memo", {})
        key = (a, b) if a <= b else (b, a)
        v = memo.get(key)
        if v is None:
            v = memo[key] = edit_similarity(*key)
        return v

    # --- reading --------------------------------------------------------------------------
    def _check_split(self, split) -> None:
        if split not in _SPLITS:
            raise ConfigError(f"split must be one of: {', '.join(_SPLITS)}; got {split!r}")

    @staticmethod
    def _sample(items: list, n, rng_seed) -> list:
        if not n or n >= len(items):
            return items
        rng = np.random.default_rng(rng_seed)
        idx = np.sort(rng.choice(len(items), size=int(n), replace=False))
        return [items[i] for i in idx.tolist()]

    @staticmethod
    def _dataset(pairs: list, path) -> Dataset:
        targets = np.array([1 if p.label == 1 else -1 for p in pairs], dtype=np.int64)
        return Dataset(list(pairs), targets, path)

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentence pairs from memory: the in-memory twin of ``read``.

        ``X``: a list of ``(first, second)`` pairs of strings (paraphrase: the two
        sentences; RTE: text and hypothesis); ``y``: one binary label per pair (+1/-1, 1/0
        or True/False; 1 = paraphrase / entailment), or None for pairs to predict.  Each
        sentence goes through the readers' check (:func:`~latentstruct.data.pairs.
        pair_sentence`: stripped, non-empty, at most ``MAX_SENTENCE_CHARS`` characters)
        and each pair becomes the :class:`~latentstruct.data.pairs.SentencePair` the
        readers build (id ``str(i)``, label 1/0, or None without ``y``); spaCy parses them
        later, in ``fit`` and ``featurize``, as it does file data.

        Unlike ``read``, the dataset holds every given pair, in order: no train/dev split
        (``dev_fraction``), no ``n_train``/``n_test`` sample, and no removal of repeated
        pairs or of pairs seen in training (RTE's ``read``).  A bad pair is an
        ``InputError`` naming ``X[i]`` (``X[i][0]``/``X[i][1]`` for one sentence) or ``y[i]``.
        """
        return sentence_pair_dataset(X, y, names=self.raw_names)

    def decode_predictions(self, predictions) -> list:
        """``predict``'s +-1 labels as a list of Python ints +1 / -1."""
        return binary_predictions(predictions)

    # --- graphs and examples --------------------------------------------------------------
    def _graphs(self, records, where) -> list[tuple]:
        """(id, G1, G2) for every record (sentences parsed in one batch)."""
        texts, kinds = [], []
        for k, rec in enumerate(records):
            if isinstance(rec, SentencePair):
                texts.extend([rec.first, rec.second])
                kinds.append("text")
            elif isinstance(rec, tuple) and len(rec) == 2 and all(isinstance(s, ParsedSentence) for s in rec):
                kinds.append("parsed")
            elif isinstance(rec, tuple) and len(rec) == 2 and all(isinstance(s, str) for s in rec):
                for s in rec:
                    if not s.strip():
                        raise InputError(f"record {k}: empty sentence; both sentences must be non-empty",
                                         where)
                texts.extend(rec)
                kinds.append("text")
            else:
                raise InputError(
                    f"record {k} must be a SentencePair, a (str, str) or a (ParsedSentence, "
                    f"ParsedSentence) pair, got {type(rec).__name__}", where)
        parsed = iter(self._parser().parse(texts)) if texts else iter(())
        out = []
        for k, (rec, kind) in enumerate(zip(records, kinds)):
            if kind == "text":
                s1, s2 = next(parsed), next(parsed)
            else:
                s1, s2 = rec
            try:
                g1, g2 = (SentenceGraph.from_parsed(s, coref=bool(self.coref_features),
                                                    pa_edges=bool(self.pa_edges)) for s in (s1, s2))
            except InputError as exc:
                line = rec.line if isinstance(rec, SentencePair) and rec.line else None
                raise InputError(f"record {k}: {exc.message}", where, line) from None
            g1, g2 = self._transform_graphs(g1, g2)
            pid = rec.id if isinstance(rec, SentencePair) else str(k)
            out.append((pid, g1, g2))
        return out

    def _transform_graphs(self, g1, g2):
        """Hook for dataset variants (Extended MSRP doubles the longer sentence)."""
        return g1, g2

    def _lexical(self, g1: SentenceGraph, g2: SentenceGraph) -> Lexical:
        """WNSim, lemma-equality, edit-similarity and coreference matrices and the pruning
        affinity (:func:`~latentstruct.tasks.graph_pair_features.lexical`)."""
        return lexical(g1, g2, self._wordnet(), self._edit_sim, coref=bool(self.coref_features))

    def _problem(self, g1, g2, affinity) -> GraphAlignmentProblem:
        pairs = candidate_pairs(affinity, int(self.top_k), both_sides=self.prune_both_sides,
                                min_affinity=float(self.min_affinity))
        return GraphAlignmentProblem(len(g1), len(g2), g1.edges, g2.edges, pairs,
                                     delete_nodes1=self.delete_nodes1,
                                     delete_nodes2=self.delete_nodes2,
                                     edge_deletion=self.edge_deletion)

    def _kappa(self, g1, g2) -> float:
        if not self.normalize:
            return 1.0
        if self.prune_both_sides:
            return (len(g1) + len(g2)) / 2.0
        return float(len(g2))

    def _feature_options(self) -> FeatureOptions:
        return FeatureOptions(
            symmetric=self.symmetric, named_entities=bool(self.ne_features),
            edit_distance=bool(self.edit_features), negation=bool(self.negation_features),
            coref=bool(self.coref_features), dep_labels=bool(self.dep_label_features),
            edge_sim=bool(self.edge_sim_features), edge_node=bool(self.edge_node_features))

    def _part_names(self, g1, g2, problem, lex) -> list[list[tuple[str, float]]]:
        """Feature (name, value) lists of every variable, in variable-layout order."""
        return part_features(g1, g2, problem, lex, self._feature_options(), self._wordnet())

    def _raw_examples(self, dataset: Dataset):
        where = dataset.path
        graphs = self._graphs(list(dataset.records), where)
        for pid, g1, g2 in track(graphs, "word similarities and ILP structure", unit="pair"):
            lex = self._lexical(g1, g2)
            problem = self._problem(g1, g2, lex[3])
            yield pid, g1, g2, lex, problem, self._part_names(g1, g2, problem, lex)

    # --- fitting ----------------------------------------------------------------------------
    def fit(self, dataset: Dataset) -> "GraphPairTask":
        """Build the feature index from the parts of every training example."""
        self._validate_params()
        if len(dataset) == 0:
            raise InputError("training data contains no sentence pairs", dataset.path)
        index = FeatureIndex(min_count=int(self.min_count))
        for name in _FIXED_NAMES:
            index.add(name)
        index.fit([name for part in raw[5] for name, _ in part] for raw in self._raw_examples(dataset))
        self.feature_index_ = index
        self.train_digests_ = self._digests(dataset)
        self.fitted_ = True
        return self

    @staticmethod
    def _digests(dataset: Dataset) -> np.ndarray:
        rows = [np.frombuffer(pair_digest(r.first, r.second), dtype=np.uint8)
                for r in dataset.records if isinstance(r, SentencePair)]
        return np.array(rows, dtype=np.uint8).reshape(-1, 20)

    @property
    def n_features(self) -> int:
        self.check_fitted()
        return len(self.feature_index_)

    def _example(self, pid, g1, g2, lex, problem, parts) -> GraphPair:
        index = self.feature_index_
        kappa = self._kappa(g1, g2)
        rows, cols, vals = [], [], []
        lookup = index.lookup
        for r, part in enumerate(parts):
            for name, value in part:
                c = lookup(name)
                if c >= 0 and value != 0.0:
                    rows.append(r)
                    cols.append(c)
                    vals.append(value / kappa)
        F = sp.csr_matrix((vals, (rows, cols)), shape=(problem.n_variables, len(index)), dtype=np.float64)
        F.sum_duplicates()
        return GraphPair(pid, g1, g2, problem, F, kappa, self.time_limit, lex[3])

    def featurize(self, dataset: Dataset) -> list[GraphPair]:
        """One :class:`GraphPair` per record (parse, graphs, pruning, part features)."""
        self.check_fitted()
        self._validate_params()
        return [self._example(*raw) for raw in self._raw_examples(dataset)]

    def make_example(self, first, second, pair_id="0") -> GraphPair:
        """Featurise one pair given as two ``ParsedSentence`` or two strings."""
        self.check_fitted()
        if isinstance(first, str) and isinstance(second, str):
            rec = (first, second)
        elif isinstance(first, ParsedSentence) and isinstance(second, ParsedSentence):
            rec = (first, second)
        else:
            raise InputError(
                f"expected two strings or two ParsedSentence objects, got {type(first).__name__} "
                f"and {type(second).__name__}")
        x = self.featurize(Dataset([rec], [1]))[0]
        x.pair_id = pair_id
        return x

    def encode_pair(self, source: str, target: str) -> GraphPair:
        """One raw sentence pair (first / text, second / hypothesis), featurised."""
        for what, s in (("first sentence", source), ("second sentence", target)):
            if not isinstance(s, str) or not s.strip():
                raise InputError(f"{what} must be a non-empty string, got {excerpt(s)}")
            check_sentence_length(s, f"the {what}")
        return self.make_example(source, target)

    def encode_targets(self, targets) -> np.ndarray:
        y = np.asarray(targets)
        if y.ndim != 1 or (y.size and not np.isin(y, (-1, 1)).all()):
            raise InputError("targets must be a 1-d sequence of labels -1 or +1")
        return y.astype(np.int64)

    # --- model interface ------------------------------------------------------------------
    def _check_w(self, w) -> np.ndarray:
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise InputError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w

    @staticmethod
    def _check_x(x) -> GraphPair:
        if not isinstance(x, GraphPair):
            raise InputError(
                f"expected a featurised sentence pair (GraphPair, from featurize or encode_pair), "
                f"got {type(x).__name__}")
        return x

    def part_scores(self, x: GraphPair, w) -> GraphPartScores:
        """theta_s = w . phi_s for every variable of ``x``."""
        self.check_fitted()
        x = self._check_x(x)
        return GraphPartScores.from_vector(x.problem, x.features @ self._check_w(w))

    def decode(self, x: GraphPair, w) -> DecodeResult:
        """The ILP's result: a legal :class:`GraphAlignment` and its part-score sum (no bias)."""
        self.check_fitted()
        x = self._check_x(x)
        # the flat part-score vector straight to the decoder (= part_scores(x, w), unsplit)
        res = x.ilp.solve_vector(x.features @ self._check_w(w))
        if res.structure is None:
            raise InferenceError(
                f"graph-alignment ILP of pair {x.pair_id!r} returned status {res.status!r} "
                f"without an alignment ({res.stats}); raise time_limit")
        return res

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        """Best alignment as ``a`` (see "Structures"), score w . Phi(x, a) with the bias.

        ``random_state`` is accepted for the interface and ignored: HiGHS and the matching
        stage break ties deterministically (the same call gives the same alignment)."""
        w = self._check_w(w)
        res = self.decode(x, w)
        a = np.full(x.n1, -1, dtype=np.int64)
        mp = res.structure.mapped_pairs
        a[mp[:, 0]] = mp[:, 1]
        return DecodeResult(a, float(w[0] + res.score), res.status, res.stats)

    def node_map(self, x: GraphPair, h) -> np.ndarray:
        """The 0/1 word-mapping vector over ``x.problem.node_pairs`` of the structure ``h``."""
        x = self._check_x(x)
        a = np.asarray(h)
        if a.shape != (x.n1,) or (x.n1 and not np.issubdtype(a.dtype, np.integer)):
            raise InputError(f"structure must be an integer array of shape ({x.n1},), got {h!r}")
        v = np.zeros(x.problem.n_node_pairs, dtype=np.int64)
        for i, j in enumerate(a.tolist()):
            if j < 0:
                if j != -1:
                    raise InputError(f"structure entries must be -1 or a G2 word, got {j}")
                continue
            p = x.pair_index.get((i, j))
            if p is None:
                raise InputError(f"word pair ({i}, {j}) is not a candidate mapping of pair {x.pair_id!r} "
                                 "(it was pruned)")
            v[p] = 1
        return v

    def alignment(self, x: GraphPair, h) -> GraphAlignment:
        """The full legal alignment whose word mappings are ``h``."""
        return GraphAlignment.from_node_map(x.problem, self.node_map(x, h))

    def latent_feature(self, x, h) -> SparseVector:
        """Phi(x, h): the bias plus the features of every active variable."""
        self.check_fitted()
        x = self._check_x(x)
        on = alignment_vector(x.problem, self.node_map(x, h)).astype(np.float64)
        # sum of the active variables' feature rows (scipy's CSC product adds them in row
        # order, as a row gather would; about 5x faster on MSRP pairs), then the bias
        dense = x.features.T @ on
        dense[0] += 1.0
        idx = np.flatnonzero(dense)
        return SparseVector(idx, dense[idx])

    def heuristic_weights(self) -> np.ndarray:
        """The two-stage WNSim objective (module docstring, "Two-stage heuristic")."""
        self.check_fitted()
        idx = self.feature_index_
        w = np.zeros(self.n_features)
        n_del_sides = int(self.delete_nodes1) + int(self.delete_nodes2)
        w[idx.lookup("map:wnsim")] = 1.0
        w[idx.lookup("del:const")] = -0.1
        w[idx.lookup("map:const")] = -float(self.heuristic_threshold) - 0.1 * n_del_sides
        return w

    # --- explanations ----------------------------------------------------------------------
    def cell_scores(self, x, w) -> np.ndarray:
        """(n1, n2) word-mapping part scores; ``-inf`` where the pair was pruned."""
        x = self._check_x(x)
        s = self.part_scores(x, w)
        out = np.full((x.n1, x.n2), -np.inf)
        pairs = x.problem.node_pairs
        out[pairs[:, 0], pairs[:, 1]] = s.node_map
        return out

    def explain(self, x, w, h=None) -> dict:
        """The alignment ``h`` of one pair with every active part's score, as JSON-able data.

        ``h`` (the structure of :meth:`latent_argmax`: G1 word -> G2 word or -1) defaults to
        the argmax under ``w``; pass the learner's own choice (a two-stage model keeps its
        heuristic alignment).  Drawn by :func:`latentstruct.plotting.draw_explanation`.

        Returns a dict of plain Python values (``json.dumps`` works):

        ``kind``
            ``"graph-alignment"``.
        ``words1``, ``words2``
            The tokens of G1 (first sentence / text) and G2 (second / hypothesis).
        ``edges1``, ``edges2``
            ``[head, dependent, label]`` dependency edges.
        ``mapped_pairs``
            ``[i, j, part score]`` for every word mapping that is on.
        ``mapped_edges``
            ``[G1 edge, G2 edge, part score]`` for every edge mapping that is on.
        ``word_deletions1``, ``word_deletions2``
            ``[word, part score]`` for every word-deletion variable that is on (none for the
            text of RTE, whose words have no deletion variables).
        ``edge_deletions1``, ``edge_deletions2``
            ``[edge, part score]`` for every edge-deletion variable that is on (none for RTE).
        ``deleted1``, ``deleted2``, ``deleted_edges1``, ``deleted_edges2``
            Indices of the words / edges without a mapping.
        ``bias``
            The bias weight, which every alignment scores.
        ``score``
            w . Phi(x, h) = bias + the sum of all part scores listed above; for the model's
            own alignment this is its decision value.
        """
        x = self._check_x(x)
        w = self._check_w(w)
        if h is None:
            h = self.latent_argmax(x, w).structure
        al = self.alignment(x, h)
        s = self.part_scores(x, w)
        p = x.problem

        def on(name) -> list[int]:
            return np.flatnonzero(getattr(al, name)).tolist()

        mapped = [[int(p.node_pairs[k, 0]), int(p.node_pairs[k, 1]), float(s.node_map[k])]
                  for k in on("node_map")]
        mapped_edges = [[int(p.edge_pairs[q, 0]), int(p.edge_pairs[q, 1]), float(s.edge_map[q])]
                        for q in on("edge_map")]
        m1 = {i for i, _, _ in mapped}
        m2 = {j for _, j, _ in mapped}
        e1 = {a for a, _, _ in mapped_edges}
        e2 = {b for _, b, _ in mapped_edges}
        return {
            "kind": "graph-alignment",
            "words1": [str(t) for t in x.g1.tokens], "words2": [str(t) for t in x.g2.tokens],
            "edges1": [[int(a), int(b), str(lab)]
                       for (a, b), lab in zip(x.g1.edges.tolist(), x.g1.labels)],
            "edges2": [[int(a), int(b), str(lab)]
                       for (a, b), lab in zip(x.g2.edges.tolist(), x.g2.labels)],
            "mapped_pairs": mapped, "mapped_edges": mapped_edges,
            "word_deletions1": [[k, float(s.del1[k])] for k in on("del1")],
            "word_deletions2": [[k, float(s.del2[k])] for k in on("del2")],
            "edge_deletions1": [[k, float(s.edge_del1[k])] for k in on("edge_del1")],
            "edge_deletions2": [[k, float(s.edge_del2[k])] for k in on("edge_del2")],
            "deleted1": [i for i in range(x.n1) if i not in m1],
            "deleted2": [j for j in range(x.n2) if j not in m2],
            "deleted_edges1": [e for e in range(p.n_edges1) if e not in e1],
            "deleted_edges2": [e for e in range(p.n_edges2) if e not in e2],
            "bias": float(w[0]),
            "score": float(self.latent_feature(x, h).dot(w)),
        }

    # --- evaluation -----------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        """``{"accuracy", "f1"}`` (F1 of the positive class)."""
        return binary_metrics(self.encode_targets(targets), np.asarray(predictions))

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        X = self.featurize(dataset)
        return self.evaluate(dataset.targets, predict(X))

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """``id<TAB>prediction<TAB>gold`` lines with labels 1 / 0 (header first), atomically."""
        p = np.asarray(predictions)
        if p.shape != (len(dataset.records),):
            raise InputError(f"{len(dataset.records)} pairs but predictions have shape {p.shape}")
        if p.size and not np.isin(p, (-1, 1)).all():
            raise InputError("predictions must be labels -1 or +1")
        y = self.encode_targets(dataset.targets)
        with atomic_write(path) as fh:
            fh.write("id\tprediction\tlabel\n")
            for k, (rec, pred, gold) in enumerate(zip(dataset.records, p.tolist(), y.tolist())):
                pid = rec.id if isinstance(rec, SentencePair) else str(k)
                fh.write(f"{pid}\t{int(pred > 0)}\t{int(gold > 0)}\n")

    # --- persistence ----------------------------------------------------------------------
    def get_state(self):
        self.check_fitted()
        arrays = dict(self.feature_index_.to_arrays(_FI_PREFIX))
        arrays[_DIGEST_KEY] = self.train_digests_
        return {"n_features": len(self.feature_index_)}, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        check_pipeline_name(task.pipeline)  # the file names no module to import
        index = feature_index_from_arrays(arrays, _FI_PREFIX)
        n = state.get("n_features") if isinstance(state, dict) else None
        if n != len(index):
            raise ModelFormatError(
                f"task state says {n!r} features but the saved feature index has {len(index)}")
        if any(index.lookup(name) != k for k, name in enumerate(_FIXED_NAMES)):
            raise ModelFormatError("the saved feature index does not start with the fixed "
                                   f"features {_FIXED_NAMES}; retrain the model")
        try:
            digests = np.asarray(arrays[_DIGEST_KEY])
        except KeyError:
            raise ModelFormatError(f"model file lacks the array {_DIGEST_KEY!r}") from None
        if digests.dtype != np.uint8 or digests.ndim != 2 or digests.shape[1] != 20:
            raise ModelFormatError(f"{_DIGEST_KEY} must be a uint8 array (n, 20), got "
                                   f"{digests.dtype} {digests.shape}")
        task.feature_index_ = index
        task.train_digests_ = digests
        task.fitted_ = True
        return task


def _paths(path) -> list:
    if path is None:
        return []
    if isinstance(path, (str, os.PathLike)):
        return [path]
    if isinstance(path, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in path):
        return list(path)
    raise ConfigError(f"path must be a file path or a list of file paths, got {path!r}")


@register_task
class ParaphraseTask(GraphPairTask):
    """Paraphrase identification on MSRP (LCLR §5.3): every variable type of §4.

    ``read(path, split)`` reads an MSRP TSV file.  MSRP has no dev split and its test file
    is held back, so a deterministic dev split is held out of the file: a permutation of
    its pairs seeded by ``seed``; the last ``round(dev_fraction * N)`` positions form the dev
    split (``split="test"``) and the rest the training split (``split="train"``), each kept
    in file order.  ``dev_fraction=0`` uses the whole file for either split (e.g. to evaluate
    on the official test file).  ``n_train`` / ``n_test`` then draw seeded samples of the
    training / dev split.

    ``extended=True`` is the Extended data set of §5.3: in every pair (train and test) the
    longer sentence (more graph nodes; the first on a tie) is concatenated with itself —
    two disjoint copies of its graph, which is what parsing "S S" as two sentences gives —
    and ``n_train=None`` then means 500 sampled training pairs, as in the paper (an explicit
    ``n_train`` wins).  Without ``extended``, ``n_train=None`` means all.

    Parameters
    ----------
    dev_fraction : float, default 0.2
        Fraction of the file's pairs held out as the dev split (0: the whole file).
    extended : bool, default False
        Build the Extended data set of §5.3 (the longer sentence doubled).
    ne_features, edit_features, negation_features, dep_label_features, edge_sim_features : bool, default True
    coref_features, pa_edges, edge_node_features : bool, default False

    Notes
    -----
    The feature resources are described in :class:`GraphPairTask`; the defaults are Table 2's
    paraphrase column (NE, ED, DEP) plus negation and edge similarity.

    Data in memory (:meth:`~GraphPairTask.make_dataset`): ``X`` is a list of
    ``(text_a, text_b)`` sentence pairs, ``y`` their labels (+1/-1, 1/0 or True/False;
    1 = paraphrase) or None; ``decode_predictions`` gives +1/-1 ints::

        task = ParaphraseTask()
        data = task.make_dataset(
            [("The cat sat on the mat.", "A cat was sitting on the mat."),
             ("Stocks rose sharply.", "The film opens on Friday.")], [1, 0])
    """

    name = "paraphrase"
    EXTENDED_N_TRAIN: ClassVar[int] = 500

    evaluation_params = GraphPairTask.evaluation_params | {"dev_fraction"}

    def __init__(self, top_k=3, n_train=None, n_test=None, seed=0, dev_fraction=0.2,
                 extended=False, min_affinity=0.0, normalize=True, use_wordnet=True, heuristic_threshold=0.5,
                 time_limit=10.0, min_count=1, pipeline="en_core_web_sm", cache_dir=None,
                 ne_features=True, edit_features=True, negation_features=True, coref_features=False,
                 dep_label_features=True, pa_edges=False, edge_sim_features=True,
                 edge_node_features=False):
        self.top_k = top_k
        self.n_train = n_train
        self.n_test = n_test
        self.seed = seed
        self.dev_fraction = dev_fraction
        self.extended = extended
        self.min_affinity = min_affinity
        self.normalize = normalize
        self.use_wordnet = use_wordnet
        self.heuristic_threshold = heuristic_threshold
        self.time_limit = time_limit
        self.min_count = min_count
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.ne_features = ne_features
        self.edit_features = edit_features
        self.negation_features = negation_features
        self.coref_features = coref_features
        self.dep_label_features = dep_label_features
        self.pa_edges = pa_edges
        self.edge_sim_features = edge_sim_features
        self.edge_node_features = edge_node_features

    def _validate_params(self) -> None:
        super()._validate_params()
        _check_flag("extended", self.extended)
        r = self.dev_fraction
        if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Real) or not 0.0 <= r < 1.0:
            raise ConfigError(f"dev_fraction must be a number in [0, 1), got {r!r}")

    def _transform_graphs(self, g1, g2):
        if not self.extended:
            return g1, g2
        return (g1.doubled(), g2) if len(g1) >= len(g2) else (g1, g2.doubled())

    def read(self, path, *, split: str = "train") -> Dataset:
        """MSRP pairs of the train or dev split (see the class docstring), labels +-1."""
        self._validate_params()
        self._check_split(split)
        paths = _paths(path)
        if len(paths) != 1:
            raise ConfigError(f"task 'paraphrase' reads one MSRP TSV file, got {path!r}")
        pairs = read_msrp(paths[0])
        N = len(pairs)
        n_dev = int(round(self.dev_fraction * N))
        if n_dev:
            perm = np.random.default_rng(self.seed).permutation(N)
            chosen = np.sort(perm[N - n_dev:] if split == "test" else perm[:N - n_dev])
            pairs = [pairs[i] for i in chosen.tolist()]
        if split == "train":
            n = self.n_train
            if n is None and self.extended:
                n = self.EXTENDED_N_TRAIN
            pairs = self._sample(pairs, n, [self.seed, 1])
        else:
            pairs = self._sample(pairs, self.n_test, [self.seed, 2])
        return self._dataset(pairs, str(paths[0]))


@register_task
class RteTask(GraphPairTask):
    """Recognising textual entailment (LCLR §5.2): G1 = text, G2 = hypothesis.

    Word mapping, hypothesis word deletion and edge mapping (no text deletion variables and
    no edge deletion, Table 2); candidate mappings are pruned from the hypothesis side only.

    ``read(path, split)`` reads PASCAL RTE XML (``.xml``) or GLUE RTE TSV files; ``path``
    may also be a list of such files (their pairs are concatenated).  Identical pairs
    (same text and hypothesis after lower-casing and collapsing whitespace) are kept once.
    ``split="test"`` of a *fitted* task also drops every pair identical to one of the
    training pairs it was fitted on (their digests are saved with the model), so e.g. GLUE
    dev — which contains RTE-1/2/3 development pairs — can test a model trained on the
    RTE-1/2/3 dev XML files without sharing a pair.  ``n_train`` / ``n_test`` draw seeded
    samples afterwards.

    Parameters
    ----------
    negation_features, edge_sim_features : bool, default True
    ne_features, edit_features, dep_label_features, coref_features, pa_edges, edge_node_features : bool, default False

    Notes
    -----
    The feature resources are described in :class:`GraphPairTask`.  Table 2's RTE column is
    WordNet, POS, Coref and Neg for word mappings and NODE-INFO for edges; Coref is off by
    default (a rule-based stand-in, see ``coref_features``); NE, ED and DEP are the
    paraphrase column's extras, available here for ablations.

    Data in memory (:meth:`~GraphPairTask.make_dataset`): ``X`` is a list of
    ``(text, hypothesis)`` pairs, ``y`` their labels (+1/-1, 1/0 or True/False;
    1 = the text entails the hypothesis) or None; ``decode_predictions`` gives +1/-1 ints::

        task = RteTask()
        data = task.make_dataset(
            [("Paris is the capital of France.", "Paris is in France."),
             ("Paris is the capital of France.", "Paris is in Spain.")], [1, 0])
    """

    name = "rte"
    raw_names = ("text", "hypothesis")
    delete_nodes1 = False
    delete_nodes2 = True
    edge_deletion = False
    prune_both_sides = False
    symmetric = False

    def __init__(self, top_k=3, n_train=None, n_test=None, seed=0, min_affinity=0.0,
                 normalize=True, use_wordnet=True, heuristic_threshold=0.5, time_limit=10.0, min_count=1,
                 pipeline="en_core_web_sm", cache_dir=None, ne_features=False, edit_features=False,
                 negation_features=True, coref_features=False, dep_label_features=False,
                 pa_edges=False, edge_sim_features=True, edge_node_features=False):
        self.top_k = top_k
        self.n_train = n_train
        self.n_test = n_test
        self.seed = seed
        self.min_affinity = min_affinity
        self.normalize = normalize
        self.use_wordnet = use_wordnet
        self.heuristic_threshold = heuristic_threshold
        self.time_limit = time_limit
        self.min_count = min_count
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.ne_features = ne_features
        self.edit_features = edit_features
        self.negation_features = negation_features
        self.coref_features = coref_features
        self.dep_label_features = dep_label_features
        self.pa_edges = pa_edges
        self.edge_sim_features = edge_sim_features
        self.edge_node_features = edge_node_features

    @staticmethod
    def read_file(path) -> list[SentencePair]:
        """One RTE file: ``.xml`` as PASCAL RTE XML, anything else as GLUE RTE TSV."""
        if os.fspath(path).lower().endswith(".xml"):
            return read_rte_xml(path)
        return read_glue_rte(path)

    def read(self, path, *, split: str = "train") -> Dataset:
        """RTE pairs (see the class docstring), labels +-1 (+1 = entailment)."""
        self._validate_params()
        self._check_split(split)
        paths = _paths(path)
        if not paths:
            raise ConfigError("task 'rte' needs at least one RTE XML or GLUE RTE TSV file")
        pairs, seen = [], set()
        exclude = set()
        if split == "test" and getattr(self, "fitted_", False):
            exclude = {bytes(row) for row in self.train_digests_}
        for p in paths:
            for pair in self.read_file(p):
                d = pair_digest(pair.first, pair.second)
                if d in seen or d in exclude:
                    continue
                seen.add(d)
                pairs.append(pair)
        where = ", ".join(str(p) for p in paths)
        if not pairs:
            raise InputError("no pairs left after removing the pairs the model was trained on", where)
        if split == "train":
            pairs = self._sample(pairs, self.n_train, [self.seed, 1])
        else:
            pairs = self._sample(pairs, self.n_test, [self.seed, 2])
        return self._dataset(pairs, where)
