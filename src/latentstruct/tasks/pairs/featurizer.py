"""Sentence pairs to featurised graph alignments: :class:`PairFeaturizer`.

The featurizer of the paraphrase and RTE tasks, in scikit-learn's transformer style: it
parses both sentences (spaCy, through :class:`~latentstruct.data.nlp.Parser` and its
cache), builds the sentence graphs, the word-pair resources (WNSim, lemma equality, edit
similarity, coreference; :func:`~latentstruct.tasks.pairs.features.lexical`), prunes the
candidate word mappings, names the part features of every variable of the alignment
problem, and maps the names to columns.  ``fit`` learns those columns (the feature index,
with the fixed features first and the user's ``map:score:K`` columns after them);
``transform`` gives the :class:`~latentstruct.tasks.pairs.GraphPair` examples the
alignment decoder works on.  The task (:class:`~latentstruct.tasks.pairs.GraphPairTask`)
builds one from its parameters and delegates ``fit`` and ``featurize`` to it.

Records are what a task's ``Dataset`` holds: a
:class:`~latentstruct.data.pairs.SentencePair` (a scored one carries the user's word-pair
scores), a ``(str, str)`` pair or a pair of ``ParsedSentence``.  ``fit`` and
``transform`` take a ``Dataset`` (whose ``path`` places errors in a file) or a list of
records.

The names seen in training are counted by a :class:`~latentstruct.featurizers.Vocabulary`
(``min_count``, first-seen order); the columns are the fixed features (``bias``, the
constant per variable type, ``map:wnsim``) and the score columns first, whatever
``min_count`` says (the two-stage heuristic's weights and model files rely on those ids),
then the vocabulary's other names in its order: the ids the task gave before.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import TransformerMixin

from ...data.features import FeatureIndex
from ...data.nlp import ParsedSentence, Parser, check_pipeline_name
from ...data.pairs import SentencePair
from ...data.progress import track
from ...exceptions import InputError, check_is_fitted
from ...featurizers import Vocabulary
from ...inference.graph_alignment import GraphAlignmentProblem
from ...params import BOOL, Interval, Satisfies
from ...featurizers.base import Featurizer
from ..base import Dataset
from .features import FeatureOptions, Lexical, edit_similarity, lexical, part_features
from .graphs import GraphPair, SentenceGraph, candidate_pairs
from .scores import (check_score_shape, n_scores, record_scores, score_candidates,
                     score_feature_names, scores_refusal)

__all__ = ["PairFeaturizer", "FIXED_NAMES", "FEATURE_FLAGS", "LAYOUT_FLAGS",
           "PAIR_FEATURE_CONSTRAINTS", "encode_binary_targets"]

#: names given ids first, in this order (so the heuristic and the bias have fixed ids)
FIXED_NAMES = ("bias", "map:const", "map:wnsim", "del:const", "emap:const", "edel:const")
#: the boolean feature-resource parameters (LCLR Table 2; see GraphPairTask)
FEATURE_FLAGS = ("ne_features", "edit_features", "negation_features", "coref_features",
                 "dep_label_features", "pa_edges", "edge_sim_features", "edge_node_features")
#: the variable types of the alignment problem and how candidates are pruned
LAYOUT_FLAGS = ("delete_nodes1", "delete_nodes2", "edge_deletion", "prune_both_sides",
                "symmetric")

#: what each parameter that shapes the features may be (the tasks declare these too)
PAIR_FEATURE_CONSTRAINTS = {
    "top_k": [Interval(int, 1)],
    "min_affinity": [Interval(float, 0, 2)],
    "normalize": [BOOL],
    "use_wordnet": [BOOL],
    "time_limit": [Interval(float, 0, None, closed="neither"), None],
    "min_count": [Interval(int, 1)],
    "pipeline": [Satisfies(lambda v: check_pipeline_name(v) is not None,
                           "the name of an allowed spaCy pipeline")],
    "extended": [BOOL],
    **{name: [BOOL] for name in FEATURE_FLAGS + LAYOUT_FLAGS},
}


def encode_binary_targets(targets) -> np.ndarray:
    """``targets`` as an int64 array of -1 / +1 labels; InputError for anything else (the
    target encoding of the pair and transliteration tasks)."""
    y = np.asarray(targets)
    if y.ndim != 1 or (y.size and not np.isin(y, (-1, 1)).all()):
        raise InputError("targets must be a 1-d sequence of labels -1 or +1")
    return y.astype(np.int64)


def _records(X, where=None) -> tuple[list, object]:
    """(records, where) of a ``Dataset`` or a list of records (``where`` then places
    errors)."""
    if isinstance(X, Dataset):
        return list(X.records), X.path
    return list(X), where


class PairFeaturizer(TransformerMixin, Featurizer):
    """Sentence pairs to :class:`~latentstruct.tasks.pairs.GraphPair` examples (module
    docstring).

    Parameters
    ----------
    top_k, min_affinity, normalize, use_wordnet, time_limit, min_count, pipeline,
    cache_dir, extended, ne_features ... edge_node_features
        The task parameters of the same names (:class:`~latentstruct.tasks.pairs.
        GraphPairTask`, :class:`~latentstruct.tasks.pairs.ParaphraseTask`); the defaults
        are the paraphrase task's.
    delete_nodes1, delete_nodes2, edge_deletion : bool, default True
        Variable types of the alignment problem (RTE: no text deletion, no edge deletion).
    prune_both_sides : bool, default True
        Candidate mappings of every word of both sentences (paraphrase) or of the second
        sentence's words only (RTE); also what kappa(x) counts.
    symmetric : bool, default True
        POS pairs sorted (the sentences play the same role) or ordered first|second.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        Feature name -> column: the fixed features, the score columns, then the names seen
        at least ``min_count`` times in ``fit``'s pairs (first-seen order).
    feature_index_ : FeatureIndex
        ``vocabulary_.index_``, frozen (what a model file stores).
    n_pair_scores_ : int
        k, the user's scores per word pair the featurizer was fitted with (0: none).
    """

    _parameter_constraints: ClassVar[dict] = PAIR_FEATURE_CONSTRAINTS
    #: handles (spaCy pipeline, WordNet reader) and a pure cache: dropped by pickling and
    #: re-created on first use, so that process / Dask / Ray workers can receive it
    _transient: ClassVar[tuple[str, ...]] = ("_parser_obj", "_parser_key", "_wordnet_obj",
                                             "_ed_memo")

    def __init__(self, top_k=3, min_affinity=0.0, normalize=True, use_wordnet=True,
                 time_limit=10.0, min_count=1, pipeline="en_core_web_sm", cache_dir=None,
                 extended=False, ne_features=True, edit_features=True, negation_features=True,
                 coref_features=False, dep_label_features=True, pa_edges=False,
                 edge_sim_features=True, edge_node_features=False, delete_nodes1=True,
                 delete_nodes2=True, edge_deletion=True, prune_both_sides=True, symmetric=True):
        self.top_k = top_k
        self.min_affinity = min_affinity
        self.normalize = normalize
        self.use_wordnet = use_wordnet
        self.time_limit = time_limit
        self.min_count = min_count
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.extended = extended
        self.ne_features = ne_features
        self.edit_features = edit_features
        self.negation_features = negation_features
        self.coref_features = coref_features
        self.dep_label_features = dep_label_features
        self.pa_edges = pa_edges
        self.edge_sim_features = edge_sim_features
        self.edge_node_features = edge_node_features
        self.delete_nodes1 = delete_nodes1
        self.delete_nodes2 = delete_nodes2
        self.edge_deletion = edge_deletion
        self.prune_both_sides = prune_both_sides
        self.symmetric = symmetric

    @classmethod
    def from_index(cls, index: FeatureIndex, n_pair_scores: int = 0, **params) -> "PairFeaturizer":
        """A fitted featurizer around a saved feature index (a model file's)."""
        self = cls(**params)
        self.vocabulary_ = Vocabulary.from_index(index)
        self.n_pair_scores_ = int(n_pair_scores)
        return self

    @property
    def feature_index_(self) -> FeatureIndex:
        """The fitted columns (``vocabulary_.index_``)."""
        vocabulary = self.__dict__.get("vocabulary_")
        if vocabulary is None:
            raise AttributeError("feature_index_")
        return vocabulary.index_

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: the default is __dict__ itself
        for name in self._transient:
            state.pop(name, None)
        return state

    # --- resources (built lazily, never saved or pickled) -----------------------------
    def parser(self) -> Parser:
        """The spaCy parser of ``pipeline`` and ``cache_dir`` (opened on first use)."""
        key = (check_pipeline_name(self.pipeline), self.cache_dir)
        if getattr(self, "_parser_obj", None) is None or self._parser_key != key:
            self._parser_obj = Parser(self.pipeline, cache_dir=self.cache_dir)
            self._parser_key = key
        return self._parser_obj

    def wordnet(self):
        """The WordNet reader (None without ``use_wordnet``)."""
        if not self.use_wordnet:
            return None
        if getattr(self, "_wordnet_obj", None) is None:
            from ...data.wordnet import WordNet

            self._wordnet_obj = WordNet()
        return self._wordnet_obj

    def _edit_sim(self, a: str, b: str) -> float:
        memo = self.__dict__.setdefault("_ed_memo", {})
        key = (a, b) if a <= b else (b, a)
        v = memo.get(key)
        if v is None:
            v = memo[key] = edit_similarity(*key)
        return v

    # --- graphs and parts -------------------------------------------------------------------
    def graphs(self, X, where=None) -> list[tuple]:
        """(id, G1, G2) for every record of ``X`` (sentences parsed in one batch); needs no
        fitting.  ``where`` (a file) places errors in records given as a list."""
        records, where = _records(X, where)
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
        parsed = iter(self.parser().parse(texts)) if texts else iter(())
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
            if self.extended:  # the Extended data set of LCLR §5.3: the longer one doubled
                g1, g2 = (g1.doubled(), g2) if len(g1) >= len(g2) else (g1, g2.doubled())
            pid = rec.id if isinstance(rec, SentencePair) else str(k)
            out.append((pid, g1, g2))
        return out

    def lexical(self, g1: SentenceGraph, g2: SentenceGraph) -> Lexical:
        """WNSim, lemma-equality, edit-similarity and coreference matrices and the pruning
        affinity (:func:`~latentstruct.tasks.pairs.features.lexical`)."""
        return lexical(g1, g2, self.wordnet(), self._edit_sim, coref=bool(self.coref_features))

    def problem(self, g1, g2, affinity, scores=None) -> GraphAlignmentProblem:
        """The alignment problem of one pair: its pruned candidate word mappings (and the
        user's scores' own ``top_k`` per word) and the variable types."""
        pairs = candidate_pairs(affinity, int(self.top_k), both_sides=bool(self.prune_both_sides),
                                min_affinity=float(self.min_affinity))
        if scores is not None:
            pairs = score_candidates(pairs, scores, int(self.top_k), bool(self.prune_both_sides))
        return GraphAlignmentProblem(len(g1), len(g2), g1.edges, g2.edges, pairs,
                                     delete_nodes1=bool(self.delete_nodes1),
                                     delete_nodes2=bool(self.delete_nodes2),
                                     edge_deletion=bool(self.edge_deletion))

    def kappa(self, g1, g2) -> float:
        """kappa(x), the divisor of every part feature (1 without ``normalize``)."""
        if not self.normalize:
            return 1.0
        if self.prune_both_sides:
            return (len(g1) + len(g2)) / 2.0
        return float(len(g2))

    def feature_options(self) -> FeatureOptions:
        """The resources switched on, as ``part_features`` takes them."""
        return FeatureOptions(
            symmetric=bool(self.symmetric), named_entities=bool(self.ne_features),
            edit_distance=bool(self.edit_features), negation=bool(self.negation_features),
            coref=bool(self.coref_features), dep_labels=bool(self.dep_label_features),
            edge_sim=bool(self.edge_sim_features), edge_node=bool(self.edge_node_features))

    def parts(self, X, where=None):
        """Per record of ``X``: ``(id, G1, G2, lexical, problem, parts)``, ``parts`` the
        feature ``(name, value)`` list of every variable in variable-layout order (the
        user's ``map:score:K`` values on the word mappings, which come first).  Needs no
        fitting."""
        records, where = _records(X, where)
        graphs = self.graphs(records, where)
        options = self.feature_options()
        for k, (rec, (pid, g1, g2)) in enumerate(
                track(list(zip(records, graphs)), "word similarities and ILP structure", unit="pair")):
            S = record_scores(rec)
            if S is not None:
                check_score_shape(S, k, g1, g2, where)
            lex = self.lexical(g1, g2)
            problem = self.problem(g1, g2, lex[3], S)
            parts = part_features(g1, g2, problem, lex, options, self.wordnet())
            if S is not None:  # word mappings come first in the variable layout
                names = score_feature_names(S.shape[2])
                for part, (i, j) in zip(parts, problem.node_pairs.tolist()):
                    part.extend(zip(names, S[i, j].tolist()))
            yield pid, g1, g2, lex, problem, parts

    def pair_tokens(self, X) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """``(tokens_a, tokens_b)``, the graph nodes, of every record of ``X``."""
        return [(g1.tokens, g2.tokens) for _, g1, g2 in self.graphs(X)]

    # --- fit / transform ----------------------------------------------------------------------
    def fit(self, X, y=None) -> "PairFeaturizer":
        """Learn the feature index from the parts of every pair of ``X``."""
        records, where = _records(X)
        k = n_scores(records, where)
        seen = Vocabulary(min_count=int(self.min_count)).fit(
            [name for part in raw[5] for name, _ in part] for raw in self.parts(records, where))
        index = FeatureIndex(min_count=int(self.min_count))
        for name in (*FIXED_NAMES, *score_feature_names(k), *seen.index_.names):
            index.add(name)  # a name already there keeps its id
        self.vocabulary_ = Vocabulary.from_index(index.freeze())
        self.n_pair_scores_ = k
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return self.__dict__.get("vocabulary_") is not None

    def _index(self) -> FeatureIndex:
        """The fitted feature index (NotFittedError before ``fit``)."""
        check_is_fitted(self)
        return self.vocabulary_.index_

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The column names, in column order."""
        return np.asarray(self._index().names, dtype=object)

    def example(self, pid, g1, g2, lex, problem, parts) -> GraphPair:
        """One :class:`GraphPair` from the output of :meth:`parts` (names outside the
        index dropped, values divided by kappa)."""
        index = self._index()
        kappa = self.kappa(g1, g2)
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

    def transform(self, X) -> list[GraphPair]:
        """One :class:`GraphPair` per record of ``X`` (parse, graphs, pruning, features);
        InputError when the records carry another number of word-pair scores than
        ``fit``'s."""
        check_is_fitted(self)
        self.check_params()  # time_limit may change after fit
        records, where = _records(X)
        k = n_scores(records, where)
        fitted_k = int(getattr(self, "n_pair_scores_", 0))
        if k != fitted_k:
            raise scores_refusal(fitted_k, k, where)
        return [self.example(*raw) for raw in self.parts(records, where)]
