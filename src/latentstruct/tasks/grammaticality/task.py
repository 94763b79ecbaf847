"""Grammaticality over latent chunkings (``grammaticality``): :class:`GrammaticalityTask`.

Parameters, the POS tagger, fitting (the featurizer's vocabulary, then the structure over
the views' weight blocks), featurising, the supervised chunker's training data, evaluation
over negative sets, and persistence (with the tagger and the LM).  The task holds a
featurizer (``featurizer_``, a
:class:`~latentstruct.tasks.grammaticality.featurizer.GrammaticalityFeaturizer`) and the
structure it builds from it (``structure_``, a
:class:`~latentstruct.tasks.grammaticality.decoding.ViewsStructure`), reading its data
through the mixin :class:`~latentstruct.tasks.grammaticality.data.LanguageModelData`; the
model is described in :mod:`latentstruct.tasks.grammaticality`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...data.atomic import atomic_write
from ...data.features import FeatureIndex, feature_index_from_arrays
from ...data.lm import TrigramLM
from ...data.paths import dataset_path
from ...data.progress import track
from ...exceptions import ConfigError, InputError, ModelFormatError, check_is_fitted, is_fitted
from ...limits import CHUNKER_EPOCHS
from ...params import Interval, Options, Satisfies, bounded
from ..base import ComposedBinaryTask, Dataset, register_task
from ..contracts import HEURISTIC, LATENT_BINARY
from ..sequence.corpus import SequenceCorpus
from ..sequence.encodings import ENCODINGS
from ..sequence.pos import PosTask, check_tagger
from ..validation import check_binary_labels
from .chunker import chunker_examples
from .data import DATA_PARAMETER_CONSTRAINTS, LanguageModelData
from .decoding import COMBINE, ChunkingView, ViewsStructure
from .featurizer import GrammaticalityFeaturizer
from .sentences import Sentence
from .views import chunk_type_names, chunk_types_ok, parse_views

__all__ = ["GrammaticalityTask"]

_TAG_BATCH = 2000


@register_task
class GrammaticalityTask(LanguageModelData, ComposedBinaryTask):
    """Real sentences (+1) against trigram-LM samples (-1) over latent chunkings.

    See :mod:`latentstruct.tasks.grammaticality` for the model, the data and the splits.

    Parameters
    ----------
    views : str, default "iob2"
        One chunk encoding or a comma-separated list of distinct ones
        ("iob1,iob2,ioe1,ioe2,oc").
    combine : {"concat", "vote"}, default "concat"
        Score the views' concatenated features, or decode each view on its own and take the
        per-token majority vote (the paper's decode-then-vote; see
        :mod:`latentstruct.tasks.grammaticality`).
    constrained : bool, default True
        Decode only well-formed tag sequences in every view.
    chunk_types : str, default "conll2000"
        The chunk types of the tag sets: the 11 CoNLL-2000 types, or a comma list ("NP,VP").
    min_count
        The featurizer's (:class:`GrammaticalityFeaturizer`'s, which documents it), by name.
    tagger_model : str or None
        A ``pos`` model file (``latentstruct train pos --learner ssvm ...``) whose tagger
        gives the POS tags.  The task does not read it:
        :func:`latentstruct.pipelines.attach_tagger` loads it and calls ``set_tagger``
        (``latentstruct train`` does).  Without it, ``attach_tagger`` trains the default
        tagger on UD EWT (:func:`latentstruct.pipelines.train_pos_tagger`).  A tagger is
        needed unless every record has POS tags.  The tagger is copied into this task's
        model file.
    tagger_sentences : int, default 3000
        Size of that default tagger's training sample (the first sentences of UD EWT train).
    lm_corpus : str or None
        Sentences (one per line) whose non-held-out part trains the trigram LM; default
        ``$LATENTSTRUCT_DATA/english_sentences/reuters21578_sentences.txt``.
    heldout_fraction : float in [0, 1), default 0.05
        Share of sentences (by hash) held out from training the LM and the model.
    n_train : int or None
        Use a seeded sample of this many training positives (None: all).
    negative_ratio : float, default 1.0
        Training negatives per training positive.
    test_sentences : {"auto", "heldout", "all"}, default "auto"
        Positives of ``read(path, "test")``: "auto" takes the held-out sentences when the
        file is the training file (same sentence digest) and every sentence otherwise;
        "heldout" and "all" force either choice.
    n_test : int or None, default 3000
        At most this many test positives (the first ones of the file).
    n_negative_sets : int, default 5
        Negative sets sampled for evaluation (each as large as the positive set); 0 reads
        only the positives (``latentstruct predict --option test_sentences=all --option
        n_negative_sets=0 --option n_test=null`` labels every line of a file).
    seed : int, default 0
        Seed of the training sample and the training negatives (and the chunker's order).
    test_seed : int, default 1000
        Negative set k of the evaluation is drawn with seed ``test_seed + k``.
    chunker : {"auto", "perceptron", None}, default "auto"
        When the training pipeline (:func:`latentstruct.pipelines.attach_chunker`, called by
        ``latentstruct train`` after ``fit``) trains the supervised chunker whose weights are
        ``heuristic_weights`` (§4's initialisation): "auto" only when the learner needs
        them (LCLR / LCLR-variant with init="two-stage", TwoStage, LatentPA with
        init="heuristic"), "perceptron" always, None never.  ``fit`` itself never trains
        it; in code, call :func:`latentstruct.pipelines.train_chunker` after ``fit``.
    chunker_corpus : str or None
        CoNLL-2000 file; default ``$LATENTSTRUCT_DATA/conll2000/train.txt``.
    chunker_sentences : int, default 2000
        The chunker trains on the first sentences of ``chunker_corpus``.
    chunker_epochs : int, default 3
        Epochs of the chunker's averaged perceptron.

    Notes
    -----
    Data in memory (:meth:`make_dataset`): ``X`` is a list of sentences, each a string
    (tokenized like the sentence files) or a list of tokens; ``y`` their labels (+1/-1,
    1/0 or True/False; 1 = grammatical) or None; ``decode_predictions`` gives +1/-1 ints::

        task = GrammaticalityTask()
        data = task.make_dataset(["Shares rose 5 pct in early trading .",
                                  ["pct", "the", "rose", "in", "of", "."]], [1, -1])
    """

    name = "grammaticality"
    default_learner = "latent-pa"
    #: heuristic weights are those of the supervised chunker (not offered with chunker=None)
    capabilities = frozenset({LATENT_BINARY, HEURISTIC})
    structure_class = ViewsStructure
    pretrained_helpers = frozenset({"pos-tagger", "supervised-chunker"})  # pipelines.training
    # The LCLR-variant's held-out accuracy stops rising after 10-20 outer iterations while
    # the objective keeps moving for 30 more, and those late iterations are the slow ones
    # (1,000-2,000 DCD epochs per restricted solve): the number of iterations is chosen on
    # a validation split of the training data, by the loss among the iterations within a
    # standard error of the best accuracy (the loss alone kept iteration 1 from
    # init=zeros).  docs/performance.md, results/grammaticality_early_stopping.md.
    learner_defaults = {"lclr-variant": {"early_stopping": True}}
    #: what evaluate/predict may change: which sentences and negatives are scored
    evaluation_params = frozenset({"test_sentences", "n_test", "n_negative_sets", "test_seed"})
    # file paths read at training time only (tagger and LM are saved in the model file)
    local_params = frozenset({"tagger_model", "lm_corpus", "chunker_corpus"})

    @classmethod
    def offered_capabilities(cls, params: dict | None = None) -> frozenset:
        """With ``chunker=None`` no chunker is ever trained, so there are no heuristic
        weights (a learner that needs them is refused before any data is read)."""
        caps = frozenset(cls.capabilities)
        if params is not None and params.get("chunker", "auto") is None:
            caps -= {HEURISTIC}
        return caps

    #: the featurizer ``fit`` builds; its ``min_count`` is the task's too
    featurizer_class = GrammaticalityFeaturizer

    def __init__(self, *, views="iob2", combine="concat", constrained=True,
                 chunk_types="conll2000", tagger_model=None, tagger_sentences=3000, lm_corpus=None,
                 heldout_fraction=0.05, n_train=None, negative_ratio=1.0,
                 test_sentences="auto", n_test=3000, n_negative_sets=5, seed=0, test_seed=1000,
                 chunker="auto", chunker_corpus=None, chunker_sentences=2000, chunker_epochs=3,
                 **featurizer_params):
        super().__init__(**featurizer_params)
        self.views = views
        self.combine = combine
        self.constrained = constrained
        self.chunk_types = chunk_types
        self.tagger_model = tagger_model
        self.tagger_sentences = tagger_sentences
        self.lm_corpus = lm_corpus
        self.heldout_fraction = heldout_fraction
        self.n_train = n_train
        self.negative_ratio = negative_ratio
        self.test_sentences = test_sentences
        self.n_test = n_test
        self.n_negative_sets = n_negative_sets
        self.seed = seed
        self.test_seed = test_seed
        self.chunker = chunker
        self.chunker_corpus = chunker_corpus
        self.chunker_sentences = chunker_sentences
        self.chunker_epochs = chunker_epochs

    # ------------------------------------------------------------------------------------
    # parameters
    # ------------------------------------------------------------------------------------
    _parameter_constraints = {
        **DATA_PARAMETER_CONSTRAINTS,
        "views": [Satisfies(parse_views, "a view name or a comma-separated list of distinct "
                            f"views among {', '.join(ENCODINGS)} (such as "
                            "'iob1,iob2,ioe1,ioe2,oc')")],
        "chunk_types": [Satisfies(chunk_types_ok, "'conll2000' or a comma list of chunk "
                                  "types such as 'NP,VP'")],
        "combine": [Options(*COMBINE)],
        "chunker": [Options("auto", "perceptron"), None],
        "n_train": [Interval(int, 1), None],
        "n_test": [Interval(int, 1), None],
        "chunker_sentences": [Interval(int, 1)],
        "chunker_epochs": [bounded(CHUNKER_EPOCHS)],
        "tagger_sentences": [Interval(int, 1)],
        "seed": [Interval(int, 0)],
        "test_seed": [Interval(int, 0)],
    }

    # ------------------------------------------------------------------------------------
    # POS tagger
    # ------------------------------------------------------------------------------------
    def set_tagger(self, pos_task: PosTask, coef: np.ndarray) -> "GrammaticalityTask":
        """Use a fitted ``PosTask`` with weights ``coef`` as the POS tagger."""
        self.tagger_coef_ = check_tagger(pos_task, coef)
        self.tagger_ = pos_task
        self._tag_memo = None
        return self

    def has_tagger(self) -> bool:
        """Whether a POS tagger is attached (``set_tagger``, or loaded with the model)."""
        return getattr(self, "tagger_", None) is not None

    @property
    def needs_tagger(self) -> bool:
        """True when no tagger is attached and ``tagger_model`` is None: the training
        pipeline then trains the default one (:func:`latentstruct.pipelines.attach_tagger`,
        which calls :func:`latentstruct.pipelines.train_pos_tagger` on ``tagger_sentences``).
        Checks the parameters first, so a bad ``tagger_sentences`` fails before any training."""
        self.check_params()
        return not self.has_tagger() and self.tagger_model is None

    def _ensure_tagger(self) -> None:
        if self.has_tagger():
            return
        if self.tagger_model is None:
            raise ConfigError(
                "the grammaticality task needs a POS tagger: train one with "
                "`latentstruct train pos --train en_ewt-ud-train.conllu --model pos.npz "
                "--learner ssvm` and pass --option tagger_model=pos.npz (or call set_tagger)"
            )
        raise ConfigError(
            f"the grammaticality task needs a POS tagger: tagger_model={self.tagger_model!r} "
            "is given but not loaded; the task does not read model files itself -- call "
            "latentstruct.pipelines.attach_tagger(task) (or set_tagger) before read/fit"
        )

    def tag(self, sentences: Sequence[Sequence[str]]) -> list[tuple]:
        """UPOS tags of tokenized sentences from the tagger (deterministic)."""
        self._ensure_tagger()
        pos_task, coef = self.tagger_, self.tagger_coef_
        out: list[tuple] = []
        batches = range(0, len(sentences), _TAG_BATCH)
        for a in track(batches, "POS tagging", unit=f"×{_TAG_BATCH} sent"):
            chunk = [Sentence(tuple(s)) for s in sentences[a:a + _TAG_BATCH]]
            X = pos_task.featurize(Dataset(chunk, [None] * len(chunk)))
            labels = pos_task.structure_.argmax_batch(X, coef)
            out.extend(tuple(t) for t in pos_task.decode_targets(labels))
        return out

    def _pos_of(self, records) -> list[tuple]:
        """POS tags of every record: its own, or the tagger's (memoised for one record list,
        so ``fit`` and ``featurize`` of the same data tag it once)."""
        memo = getattr(self, "_tag_memo", None)
        if memo is not None and memo[0] is records:
            return memo[1]
        missing = [i for i, r in enumerate(records) if r.pos is None]
        tagged = self.tag([records[i].words for i in missing]) if missing else []
        out = [r.pos for r in records]
        for i, p in zip(missing, tagged):
            out[i] = p
        self._tag_memo = (records, out)
        return out

    # ------------------------------------------------------------------------------------
    # fitting and featurising
    # ------------------------------------------------------------------------------------
    def fit(self, dataset: Dataset) -> "GrammaticalityTask":
        """Fit the featurizer on the training sentences (tagging them first) and lay out the
        views.  Nothing is trained here: the supervised chunker of ``heuristic_weights``
        is trained afterwards by :func:`latentstruct.pipelines.train_chunker` (any weights
        attached before are dropped, as the feature space changes)."""
        if len(dataset) == 0:
            raise InputError("training data contains no sentences", dataset.path)
        records = dataset.records
        self.featurizer_ = self.make_featurizer().fit(self._tagged(records, self._pos_of(records)))
        self._build_structure()
        return self

    def _new_structure(self) -> ViewsStructure:
        """The views' weight blocks over the fitted featurizer's attributes (no chunker)."""
        return self.structure_class.build(self.view_names(), self.chunk_type_names(),
                                          bool(self.constrained),
                                          self.featurizer_.n_features_out_, self.combine)

    # ------------------------------------------------------------------------------------
    # the views and the supervised chunker
    # ------------------------------------------------------------------------------------
    def view_names(self) -> list[str]:
        """The configured views, validated (``ConfigError`` for an unknown or repeated one)."""
        return parse_views(self.views)

    def chunk_type_names(self) -> list[str]:
        """The configured chunk types (``ConfigError`` for an empty list)."""
        return chunk_type_names(self.chunk_types)

    @property
    def views_(self) -> tuple:
        """The fitted views (``structure_.views_``: tag sets, weight offsets, masks)."""
        return self.structure_object().views_

    @property
    def chunk_types_(self) -> tuple:
        """The fitted chunk types (``structure_.chunk_types_``)."""
        return self.structure_object().chunk_types_

    def chunking_task(self) -> ChunkingView:
        """The supervised chunking problem in this task's feature space (a max-decodable
        ``ChunkingView`` over ``structure_``), for training the chunker of
        ``heuristic_weights``."""
        return self.structure_object().chunking_task()

    def set_chunker_weights(self, coef) -> "GrammaticalityTask":
        """Attach a supervised chunker's weights (shape ``(n_features,)``, in the layout of
        ``chunking_task()``): ``structure_`` becomes the structure with them as its
        ``heuristic_weights()``."""
        self.structure_ = self.structure_object().with_chunker_weights(coef)
        return self

    def heuristic_ready(self) -> bool:
        """Whether ``structure_.heuristic_weights()`` is available (chunker weights are
        attached)."""
        return is_fitted(self) and self.structure_object().has_chunker

    @property
    def attr_index_(self) -> FeatureIndex:
        """The featurizer's attribute index (what the model file stores)."""
        featurizer = getattr(self, "featurizer_", None)
        if featurizer is None:
            raise AttributeError("attr_index_: the task is not fitted")
        return featurizer.index_

    def featurize(self, dataset: Dataset) -> SequenceCorpus:
        check_is_fitted(self)
        return self._featurize_records(dataset.records, self._pos_of(dataset.records))

    @staticmethod
    def _tagged(records, pos) -> list[tuple]:
        return [(r.words, p) for r, p in zip(records, pos, strict=True)]

    def _featurize_records(self, records, pos) -> SequenceCorpus:
        """The featurizer's corpus of ``records`` tagged with ``pos``."""
        return self.featurizer_.transform(self._tagged(records, pos))

    def encode_targets(self, targets) -> np.ndarray:
        """Labels +1 (a real sentence) / -1 (a sampled one) as int64; anything else is an
        InputError."""
        return check_binary_labels(targets)

    def chunk_training_data(self) -> tuple[SequenceCorpus, list[np.ndarray]]:
        """``(X, Y)`` of ``chunking_task()``: the first ``chunker_sentences`` sentences of
        ``chunker_corpus`` (CoNLL-2000), tagged by this task's POS tagger and featurised with
        its templates, and their gold chunkings written in every view's encoding (int
        arrays (n_views, T)).  ``InputError`` (file:line) for a chunk type outside
        ``chunk_types``."""
        check_is_fitted(self)
        self.check_params()
        path = self.chunker_corpus or dataset_path("conll2000", "train.txt")
        records, gold = chunker_examples(self.structure_object(), path,
                                         int(self.chunker_sentences))
        return self._featurize_records(records, self.tag([r.words for r in records])), gold

    # ------------------------------------------------------------------------------------
    # evaluation
    # ------------------------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        targets, predictions = np.asarray(targets), np.asarray(predictions)
        return {"accuracy": float(np.mean(targets == predictions)) if targets.size else 0.0}

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Accuracy on the positives plus each negative set, averaged over the sets (§4)."""
        X = self.featurize(dataset)
        y = self.encode_targets(dataset.targets)
        if decision_function is not None:
            pred = np.where(np.asarray(decision_function(X)) >= 0.0, 1, -1)
        else:
            pred = np.asarray(predict(X))
        correct = pred == y
        sets = np.array([r.negative_set for r in dataset.records])
        positive = y > 0
        ids = sorted(set(sets[~positive].tolist())) or [None]
        accs = []
        for k in ids:
            mask = positive if k is None else positive | ((sets == k) & ~positive)
            accs.append(float(np.mean(correct[mask])))
        return {
            "accuracy": float(np.mean(accs)),
            "accuracy_std": float(np.std(accs)),
            "positive_accuracy": float(np.mean(correct[positive])) if positive.any() else 0.0,
            "negative_accuracy": float(np.mean(correct[~positive])) if (~positive).any() else 0.0,
            "n_positives": int(positive.sum()),
            "n_negative_sets": len(ids) if ids != [None] else 0,
        }

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """One line per sentence: the predicted label (+1 / -1), a tab, the tokens."""
        with atomic_write(path, "w") as fh:
            for r, p in zip(dataset.records, predictions, strict=True):
                fh.write(f"{int(p):+d}\t{' '.join(r.words)}\n")

    # ------------------------------------------------------------------------------------
    # persistence
    # ------------------------------------------------------------------------------------
    def get_state(self):
        check_is_fitted(self)
        self._ensure_tagger_for_state()
        lm = self.fit_lm()
        t_state, t_arrays = self.tagger_.get_state()
        state = {
            "chunk_types": list(self.chunk_types_),
            "views": [v.name for v in self.views_],
            "tagger_params": self.tagger_.get_params(),
            "tagger_state": t_state,
            "train_digest": getattr(self, "train_digest_", None),
        }
        arrays = dict(self.featurizer_.index_.to_arrays(prefix="gattr_"))
        arrays.update({"tagger_" + k: v for k, v in t_arrays.items()})
        arrays["tagger_coef"] = self.tagger_coef_
        arrays.update(lm.to_arrays(prefix="lm_"))
        return state, arrays

    def _ensure_tagger_for_state(self) -> None:
        check_is_fitted(self, "tagger_", what="This grammaticality model's POS tagger",
                        fix="Pass tagger_model or call set_tagger before fit.",
                        why="a grammaticality model cannot be saved without it")

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        try:
            index = feature_index_from_arrays(arrays, prefix="gattr_")
            if not isinstance(index, FeatureIndex):
                raise ModelFormatError(f"grammaticality model state: the attribute index is a "
                                       f"{type(index).__name__}, expected a vocabulary "
                                       f"(FeatureIndex); the file is damaged. Retrain the model.")
            task.featurizer_ = GrammaticalityFeaturizer.from_index(index)
            if list(state["views"]) != task.view_names():
                raise ModelFormatError(
                    f"the model was trained with views {state['views']}, but the parameters "
                    f"say {task.views!r}"
                )
            tagger_arrays = {k[len("tagger_"):]: v for k, v in arrays.items()
                             if k.startswith("tagger_")}
            pos_task = PosTask.from_state(state["tagger_params"], state["tagger_state"],
                                          tagger_arrays)
            task.set_tagger(pos_task, arrays["tagger_coef"])
            task.lm_ = TrigramLM.from_arrays(arrays, prefix="lm_")
        except KeyError as exc:
            raise ModelFormatError(f"grammaticality model state lacks {exc}") from None
        task._build_structure()
        # models saved before the digest was recorded have none: "auto" then holds out
        task.train_digest_ = state.get("train_digest")
        return task
