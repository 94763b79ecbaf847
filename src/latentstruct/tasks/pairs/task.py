"""The shared machinery of the paraphrase and RTE tasks: :class:`GraphPairTask`.

Parameters and their checks, the parser and WordNet resources, in-memory data, sentence
graphs to featurised :class:`~latentstruct.tasks.pairs.GraphPair` examples (pruning and part
features), fitting the feature index, evaluation and persistence.  Decoding is the
:class:`~latentstruct.tasks.pairs.decoding.AlignmentDecoding` mixin; the model is described
in :mod:`latentstruct.tasks.pairs`.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ...data.atomic import atomic_write
from ...data.features import FeatureIndex, feature_index_from_arrays
from ...data.nlp import ParsedSentence, Parser, check_pipeline_name
from ...data.pairs import SentencePair, check_sentence_length
from ...data.progress import track
from ...data.readers import excerpt
from ...exceptions import ConfigError, InputError, ModelFormatError
from ...inference.graph_alignment import GraphAlignmentProblem
from ..base import Dataset, LatentBinaryTask
from ..contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY
from ..validation import binary_predictions
from .decoding import AlignmentDecoding
from .features import FeatureOptions, Lexical, edit_similarity, lexical, part_features
from .graphs import GraphPair, SentenceGraph, candidate_pairs, pair_digest
from .raw import sentence_pair_dataset
from .scores import (check_score_shape, n_scores, record_scores, score_candidates,
                     score_feature_names, scores_refusal)

__all__ = ["GraphPairTask", "binary_metrics", "check_flag", "file_paths"]

_SPLITS = ("train", "test")
_FI_PREFIX = "graph_pairs_fi_"
#: the training-pair digests saved with an RTE model (see RteTask.read)
_DIGEST_KEY = "graph_pairs_train_digests"
#: names given ids first, in this order (so the heuristic and the bias have fixed ids)
_FIXED_NAMES = ("bias", "map:const", "map:wnsim", "del:const", "emap:const", "edel:const")


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


def _check_int(name, v, *, allow_none=False, minimum=0):
    if v is None and allow_none:
        return
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)) or v < minimum:
        what = f"an integer >= {minimum}" + (" or None" if allow_none else "")
        raise ConfigError(f"{name} must be {what}, got {v!r}")


def check_flag(name, v):
    """ConfigError unless ``v`` is a bool (a task parameter named ``name``)."""
    if not isinstance(v, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {v!r}")


def file_paths(path) -> list:
    """``path`` as a list of file paths (a path, a list of paths, or None for none)."""
    if path is None:
        return []
    if isinstance(path, (str, os.PathLike)):
        return [path]
    if isinstance(path, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in path):
        return list(path)
    raise ConfigError(f"path must be a file path or a list of file paths, got {path!r}")


# --------------------------------------------------------------------------------------
# the shared task
# --------------------------------------------------------------------------------------
class GraphPairTask(AlignmentDecoding, LatentBinaryTask):
    """Shared machinery of :class:`ParaphraseTask` and :class:`RteTask` (see
    :mod:`latentstruct.tasks.pairs`).  Subclasses set the class attributes below, their
    parameters and ``read``.

    The feature resources under Other Parameters are LCLR Table 2's (booleans, each
    ablatable; defaults per task in the subclass signatures; see
    :mod:`latentstruct.tasks.pairs`, "Features", for the names they add).

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
        check_flag("normalize", self.normalize)
        check_flag("use_wordnet", self.use_wordnet)
        for name in self.FEATURE_FLAGS:
            check_flag(name, getattr(self, name))
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
        affinity (:func:`~latentstruct.tasks.pairs.features.lexical`)."""
        return lexical(g1, g2, self._wordnet(), self._edit_sim, coref=bool(self.coref_features))

    def _problem(self, g1, g2, affinity, scores=None) -> GraphAlignmentProblem:
        pairs = candidate_pairs(affinity, int(self.top_k), both_sides=self.prune_both_sides,
                                min_affinity=float(self.min_affinity))
        if scores is not None:
            pairs = score_candidates(pairs, scores, int(self.top_k), self.prune_both_sides)
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
        records = list(dataset.records)
        graphs = self._graphs(records, where)
        for k, (rec, (pid, g1, g2)) in enumerate(
                track(list(zip(records, graphs)), "word similarities and ILP structure", unit="pair")):
            S = record_scores(rec)
            if S is not None:
                check_score_shape(S, k, g1, g2, where)
            lex = self._lexical(g1, g2)
            problem = self._problem(g1, g2, lex[3], S)
            parts = self._part_names(g1, g2, problem, lex)
            if S is not None:  # word mappings come first in the variable layout
                names = score_feature_names(S.shape[2])
                for part, (i, j) in zip(parts, problem.node_pairs.tolist()):
                    part.extend(zip(names, S[i, j].tolist()))
            yield pid, g1, g2, lex, problem, parts

    def pair_tokens(self, X) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """The tokens a word-pair score matrix of each example is over: ``(tokens_a,
        tokens_b)`` of every pair of ``X`` (raw pairs, scored or not, or a ``Dataset``).

        They are the graph nodes: spaCy's tokens of each sentence with punctuation dropped
        (see "Graphs"); with ``extended`` the longer sentence is doubled.  Needs no fitting
        (only the parser)."""
        self._validate_params()
        data = X if isinstance(X, Dataset) else self.make_dataset(X)
        return [(g1.tokens, g2.tokens) for _, g1, g2 in self._graphs(list(data.records), data.path)]

    def with_pair_scores(self, X, f) -> list[tuple]:
        """``[(a, b, f(tokens_a, tokens_b)), ...]``: the pairs of ``X`` with the scores of the
        function ``f`` over :meth:`pair_tokens` (an (n_a x n_b) or (n_a x n_b x k) array per
        pair).  The result is what ``fit``/``predict`` take; the model never stores ``f``
        (model files hold data only), so give the same ``f`` again at prediction."""
        if not callable(f):
            raise InputError(f"f must be a function f(tokens_a, tokens_b) -> (n_a x n_b) array, "
                             f"got {type(f).__name__}")
        data = self.make_dataset([tuple(x[:2]) if isinstance(x, (tuple, list)) else x for x in X])
        out = []
        for i, (rec, (ta, tb)) in enumerate(zip(data.records, self.pair_tokens(data))):
            S = np.asarray(f(list(ta), list(tb)), dtype=np.float64)
            if S.shape[:2] != (len(ta), len(tb)) or S.ndim not in (2, 3):
                raise InputError(f"f returned shape {S.shape} for X[{i}], expected "
                                 f"({len(ta)}, {len(tb)}) or ({len(ta)}, {len(tb)}, k): one "
                                 f"row per token of {list(ta)}, one column per token of {list(tb)}")
            out.append((rec.first, rec.second, S))
        return out

    # --- fitting ----------------------------------------------------------------------------
    def fit(self, dataset: Dataset) -> "GraphPairTask":
        """Build the feature index from the parts of every training example."""
        self._validate_params()
        if len(dataset) == 0:
            raise InputError("training data contains no sentence pairs", dataset.path)
        index = FeatureIndex(min_count=int(self.min_count))
        for name in _FIXED_NAMES:
            index.add(name)
        k = n_scores(dataset.records, dataset.path)
        for name in score_feature_names(k):
            index.add(name)
        index.fit([name for part in raw[5] for name, _ in part] for raw in self._raw_examples(dataset))
        self.feature_index_ = index
        self.n_pair_scores_ = k
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
        k = n_scores(dataset.records, dataset.path)
        fitted_k = getattr(self, "n_pair_scores_", 0)
        if k != fitted_k:
            raise scores_refusal(fitted_k, k, dataset.path)
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
        # a task whose state was set without fit (a model file's, a test's) has no scores
        k = int(getattr(self, "n_pair_scores_", 0))
        return {"n_features": len(self.feature_index_), "n_pair_scores": k}, arrays

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
        k = state.get("n_pair_scores", 0)  # models from before issue 43 have none
        if (isinstance(k, bool) or not isinstance(k, int) or k < 0
                or any(index.lookup(name) < 0 for name in score_feature_names(k))):
            raise ModelFormatError(f"task state n_pair_scores must be a non-negative integer "
                                   f"whose map:score:K features are in the index, got {k!r}")
        task.feature_index_ = index
        task.n_pair_scores_ = k
        task.train_digests_ = digests
        task.fitted_ = True
        return task
