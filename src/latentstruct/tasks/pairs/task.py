"""The shared machinery of the paraphrase and RTE tasks: :class:`GraphPairTask`.

Parameters and their checks, reading and in-memory data, fitting (the featurizer,
:class:`~latentstruct.tasks.pairs.featurizer.PairFeaturizer`, turns sentence pairs into
featurised :class:`~latentstruct.tasks.pairs.GraphPair` examples), evaluation and
persistence.  The task holds its structure, a
:class:`~latentstruct.tasks.pairs.structure.GraphPairStructure` built from the fitted feature
index (``structure_``: the ILP decoding, Phi, the heuristic and ``explain``); the model is
described in :mod:`latentstruct.tasks.pairs`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ...data.atomic import atomic_write
from ...data.features import FeatureIndex, feature_index_from_arrays
from ...data.nlp import ParsedSentence, check_pipeline_name
from ...data.pairs import SentencePair, check_sentence_length
from ...data.readers import excerpt
from ...exceptions import ConfigError, InputError, ModelFormatError, check_is_fitted
from ...params import Interval
from ..base import ComposedBinaryTask, Dataset
from ..contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY
from ..validation import binary_predictions
from .featurizer import (FEATURE_FLAGS, FIXED_NAMES, LAYOUT_FLAGS, PAIR_FEATURE_CONSTRAINTS,
                         PairFeaturizer, encode_binary_targets)
from .graphs import GraphPair, pair_digest
from .raw import sentence_pair_dataset
from .scores import score_feature_names
from .structure import GraphPairStructure

__all__ = ["GraphPairTask", "binary_metrics", "file_paths"]

_SPLITS = ("train", "test")
_FI_PREFIX = "graph_pairs_fi_"
#: the training-pair digests saved with an RTE model (see RteTask.read)
_DIGEST_KEY = "graph_pairs_train_digests"
#: names given ids first, in this order (so the heuristic and the bias have fixed ids)
_FIXED_NAMES = FIXED_NAMES


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
class GraphPairTask(ComposedBinaryTask):
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
    #: the structure the task holds (``structure_``): ILP decoding, Phi, the heuristic
    structure_class = GraphPairStructure
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
    FEATURE_FLAGS: ClassVar[tuple[str, ...]] = FEATURE_FLAGS

    #: what each parameter may be (``latentstruct.params``; checked on entering ``fit``,
    #: ``read``, ``pair_tokens`` and ``featurize``): the featurizer's, then the data's and
    #: the heuristic's
    _parameter_constraints: ClassVar[dict] = {
        **PAIR_FEATURE_CONSTRAINTS,
        "n_train": [Interval(int, 0), None],
        "n_test": [Interval(int, 0), None],
        "seed": [Interval(int, 0)],
        "heuristic_threshold": [Interval(float, 0, 1)],
    }

    # --- the featurizer -----------------------------------------------------------------
    def _featurizer_params(self) -> dict:
        """The featurizer's parameters: this task's values and its class's layout."""
        own = self.param_defaults()
        params = {name: getattr(self, name) for name in PairFeaturizer._get_param_names()
                  if name in own}
        params.update({name: getattr(self, name) for name in LAYOUT_FLAGS})
        return params

    def pair_featurizer(self) -> PairFeaturizer:
        """The :class:`~latentstruct.tasks.pairs.featurizer.PairFeaturizer` of this task's
        current parameters: the fitted one (``featurizer_``) after ``fit``, else an
        unfitted one (graphs, tokens and part names need no fitting).  Evaluation-time
        parameters changed after ``fit`` (``time_limit``, ``cache_dir``) reach it here."""
        f = self.__dict__.get("featurizer_")
        if f is None:
            f = self.__dict__.get("_unfitted_featurizer")
            if f is None:
                f = self._unfitted_featurizer = PairFeaturizer()
        return f.set_params(**self._featurizer_params())

    @property
    def feature_index_(self) -> FeatureIndex:
        """The fitted feature index (``featurizer_``'s)."""
        f = self.__dict__.get("featurizer_")
        if f is None:
            raise AttributeError("feature_index_")
        return f.feature_index_

    @feature_index_.setter
    def feature_index_(self, index) -> None:
        # a state set by hand (a test, an older caller) becomes a fitted featurizer; the
        # structure of the index it replaces, if any, is built again when asked for
        k = int(getattr(self, "n_pair_scores_", 0))
        self.featurizer_ = PairFeaturizer.from_index(index, k, **self._featurizer_params())
        self.__dict__.pop("structure_", None)

    @property
    def n_pair_scores_(self) -> int:
        """k, the user's scores per word pair the model was fitted with (0: none)."""
        f = self.__dict__.get("featurizer_")
        if f is None:
            raise AttributeError("n_pair_scores_")
        return f.n_pair_scores_

    def _parser(self):
        """The featurizer's spaCy parser (:meth:`PairFeaturizer.parser`)."""
        return self.pair_featurizer().parser()

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
    def pair_tokens(self, X) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """The tokens a word-pair score matrix of each example is over: ``(tokens_a,
        tokens_b)`` of every pair of ``X`` (raw pairs, scored or not, or a ``Dataset``).

        They are the graph nodes: spaCy's tokens of each sentence with punctuation dropped
        (see "Graphs"); with ``extended`` the longer sentence is doubled.  Needs no fitting
        (only the parser)."""
        self.check_params()
        data = X if isinstance(X, Dataset) else self.make_dataset(X)
        return self.pair_featurizer().pair_tokens(data)

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
        """Fit the featurizer (``featurizer_``: the feature index from the parts of every
        training example) and keep the training pairs' digests."""
        if len(dataset) == 0:
            raise InputError("training data contains no sentence pairs", dataset.path)
        self.featurizer_ = self.pair_featurizer().fit(dataset)
        self.__dict__.pop("_unfitted_featurizer", None)
        self.train_digests_ = self._digests(dataset)
        self._build_structure()
        return self

    def _new_structure(self) -> GraphPairStructure:
        """The structure of the fitted feature index, this class's deletion layout and the
        heuristic's threshold."""
        return self.structure_class(
            self.feature_index_, self.n_pair_scores_, delete_nodes1=self.delete_nodes1,
            delete_nodes2=self.delete_nodes2, heuristic_threshold=self.heuristic_threshold)

    @staticmethod
    def _digests(dataset: Dataset) -> np.ndarray:
        rows = [np.frombuffer(pair_digest(r.first, r.second), dtype=np.uint8)
                for r in dataset.records if isinstance(r, SentencePair)]
        return np.array(rows, dtype=np.uint8).reshape(-1, 20)

    def featurize(self, dataset: Dataset) -> list[GraphPair]:
        """One :class:`GraphPair` per record (parse, graphs, pruning, part features):
        ``featurizer_.transform``."""
        check_is_fitted(self)
        self.check_params()
        return self.pair_featurizer().transform(dataset)

    def make_example(self, first, second, pair_id="0") -> GraphPair:
        """Featurise one pair given as two ``ParsedSentence`` or two strings."""
        check_is_fitted(self)
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
        return encode_binary_targets(targets)

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
        check_is_fitted(self)
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
        task.featurizer_ = PairFeaturizer.from_index(index, k, **task._featurizer_params())
        task.train_digests_ = digests
        task._build_structure()
        return task
