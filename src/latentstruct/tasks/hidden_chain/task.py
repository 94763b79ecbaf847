"""The hidden-state CRF task (``hcrf``): :class:`HiddenChainTask`.

Parameters, fitting and featurising (through its featurizer, ``featurizer_``, a
:class:`~latentstruct.tasks.hidden_chain.featurizer.HiddenChainFeaturizer`: the vocabulary,
the input form and the classes), evaluation over negative sets, and persistence.  The task
holds its structure (``structure_``, a
:class:`~latentstruct.tasks.hidden_chain.structure.HiddenChainStructure`: the weight layout
and the marginalizable and class-posterior capabilities, through the compiled pass of
``kernels``), which ``fit`` and ``from_state`` build from the featurizer.  The data (real sentences against trigram-LM samples) is the
grammaticality task's :class:`~latentstruct.tasks.grammaticality.data.LanguageModelData`.
The model is described in :mod:`latentstruct.tasks.hidden_chain`.
"""

from __future__ import annotations

import numpy as np

from ...data.atomic import atomic_write
from ...data.features import FeatureIndex, feature_index_from_arrays
from ...data.lm import TrigramLM
from ...data.paths import dataset_path
from ...exceptions import InputError, ModelFormatError, check_is_fitted
from ...params import Interval, Options
from ..base import ComposedTask, Dataset, featurizer_param_defaults, register_task
from ..contracts import CLASS_POSTERIOR, MARGINALIZABLE
from ..grammaticality.data import DATA_PARAMETER_CONSTRAINTS, LanguageModelData
from ..sequence.corpus import SequenceCorpus
from ..sequence.kinds import TEMPLATES
from ..sequence.numeric import NUMERIC_KINDS
from ..validation import raw_error
from .featurizer import HiddenChainFeaturizer
from .numbers import chain_dataset, record_words
from .structure import TOPOLOGIES, HiddenChainStructure

__all__ = ["HiddenChainTask"]

_MAX_STATES = 64


@register_task
class HiddenChainTask(LanguageModelData, ComposedTask):
    """Classification of a token sequence through a hidden chain (a hidden-state CRF).

    With K classes and S hidden states per class the hidden labels are the K·S pairs
    (class k, state j); a hidden chain stays inside its class's block.  With Φ the
    token attributes crossed with the hidden label, the within-block transitions and the
    start / end hidden labels::

        p(y | x) = Σ_h exp(w·Φ(x, y, h)) / Σ_{y', h} exp(w·Φ(x, y', h))

    (Quattoni et al. 2007; pyhcrf).  Trained by the ``crf`` learner; see
    :mod:`latentstruct.tasks.hidden_chain`.

    Parameters
    ----------
    n_states : int, default 3
        Hidden states per class (S).
    topology : {"left-to-right", "ergodic"}, default "left-to-right"
        Moves allowed inside a class's block of states (structural, not weights):
        "left-to-right" starts every chain in state 0 and moves from state j to j or j + 1;
        "ergodic" allows any start and transition, as pyhcrf does, but its states are
        interchangeable: the ``crf`` learner starts from w = 0, where they stay tied, so
        S ergodic states then act as one (pyhcrf starts from random weights).
    window, affix_length, min_count
        The featurizer's (:class:`HiddenChainFeaturizer`'s, which documents them), by name.
    lm_corpus : str or None
        Sentences whose non-held-out part trains the trigram LM of the negatives (default
        ``$LATENTSTRUCT_DATA/english_sentences/reuters21578_sentences.txt``).
    heldout_fraction : float in [0, 1), default 0.05
        Share of sentences (by hash) held out from the LM and the model.
    n_train : int or None
        A seeded sample of this many training positives (None: all).
    negative_ratio : float, default 1.0
        Training LM negatives per training positive.
    test_sentences : {"auto", "heldout", "all"}, default "auto"
        Positives of ``read(path, "test")`` (the grammaticality task's rule).
    n_test : int or None, default 3000
        At most this many test positives.
    n_negative_sets : int, default 5
        Test negative sets, each as large as the positives (0: positives only).
    seed : int, default 0
        Seed of the training sample and the training negatives.
    test_seed : int, default 1000
        Test negative set k is drawn with seed ``test_seed + k``.

    The data parameters are the ``grammaticality`` task's, with the same defaults: the
    same values read the same sentences and LM samples.

    Notes
    -----
    ``read(None)`` reads the default sentence file (``has_default_data``), so
    ``latentstruct train hcrf`` needs no ``--train``.  In memory, ``make_dataset(X, y)``
    takes sentences (strings or token lists) and any labels (ints or strings, two or
    more classes)::

        task = HiddenChainTask(n_states=2, min_count=1)
        data = task.make_dataset(["the cat sat", "sat cat the"], ["good", "bad"])

    It also takes numbers (``tasks.hidden_chain.numbers``): per sentence a (tokens x d)
    array (numpy or scipy.sparse) whose columns are the tokens' only attributes, or a
    ``(tokens, array)`` pair adding them to the built-in ones.  The fitted task records the
    form (``attributes_``: ``"templates"``, ``"arrays"`` or ``"tokens+arrays"``) and
    ``n_columns_`` and refuses any other.
    """

    name = "hcrf"
    default_learner = "crf"
    capabilities = frozenset({MARGINALIZABLE, CLASS_POSTERIOR})
    structure_class = HiddenChainStructure
    has_default_data = True
    score_metric = "accuracy"
    evaluation_params = frozenset({"test_sentences", "n_test", "n_negative_sets", "test_seed"})
    local_params = frozenset({"lm_corpus"})

    #: the featurizer ``fit`` builds; its template options are the task's too (its classes
    #: are the training data's)
    featurizer_class = HiddenChainFeaturizer
    featurizer_fixed = {"classes": None}

    def __init__(self, *, n_states=3, topology="left-to-right", lm_corpus=None,
                 heldout_fraction=0.05, n_train=None, negative_ratio=1.0,
                 test_sentences="auto", n_test=3000, n_negative_sets=5, seed=0, test_seed=1000,
                 **featurizer_params):
        super().__init__(**featurizer_params)
        self.n_states = n_states
        self.topology = topology
        self.lm_corpus = lm_corpus
        self.heldout_fraction = heldout_fraction
        self.n_train = n_train
        self.negative_ratio = negative_ratio
        self.test_sentences = test_sentences
        self.n_test = n_test
        self.n_negative_sets = n_negative_sets
        self.seed = seed
        self.test_seed = test_seed

    # ------------------------------------------------------------------------------------
    # parameters
    # ------------------------------------------------------------------------------------
    _parameter_constraints = {  # and the featurizer's own
        **DATA_PARAMETER_CONSTRAINTS,
        "n_states": [Interval(int, 1, _MAX_STATES)],
        "n_train": [Interval(int, 1), None],
        "n_test": [Interval(int, 1), None],
        "seed": [Interval(int, 0)],
        "test_seed": [Interval(int, 0)],
        "topology": [Options(*TOPOLOGIES)],
    }

    # ------------------------------------------------------------------------------------
    # data
    # ------------------------------------------------------------------------------------
    def read(self, path, *, split: str = "train") -> Dataset:
        """Real sentences of ``path`` (default: the Reuters sentence file) against trigram-LM
        samples, exactly as the ``grammaticality`` task reads them (targets +1 / -1)."""
        if path is None:
            path = dataset_path("english_sentences", "reuters21578_sentences.txt")
        return LanguageModelData.read(self, path, split=split)

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from memory: each a string (tokenized as the sentence files are) or a
        list of tokens, or numbers (a (tokens x d) array, or a ``(tokens, array)`` pair:
        ``tasks.hidden_chain.numbers``); ``y`` one label per sentence (an int or a string;
        two or more classes) or None.  A bad sentence or label is an ``InputError`` naming
        ``X[i]`` / ``y[i]`` (and a bad value's row and column)."""
        ds = chain_dataset(X)
        if y is None:
            return ds
        labels = list(y)
        if len(labels) != len(ds):
            raise InputError(f"X has {len(ds)} sentences but y has {len(labels)} labels")
        out = []
        for i, v in enumerate(labels):
            if isinstance(v, (bool, np.bool_)):
                v = 1 if v else -1
            elif isinstance(v, np.integer):
                v = int(v)
            elif isinstance(v, np.str_):
                v = str(v)
            if not isinstance(v, (int, str)):
                raise raw_error(f"label {v!r:.60} is not an int or a string", i, what="y")
            out.append(v)
        return Dataset(ds.records, out)

    def decode_predictions(self, predictions) -> list:
        """Class ids (``predict``'s output) as the raw labels of ``y``."""
        check_is_fitted(self)
        return self.featurizer_.decode_targets(predictions)

    # ------------------------------------------------------------------------------------
    # fitting and featurising: the featurizer's
    # ------------------------------------------------------------------------------------
    def fit(self, dataset: Dataset) -> "HiddenChainTask":
        """Fit the featurizer: the classes (``dataset.labels`` if given, else the sorted
        distinct targets), the input form and the vocabulary of the training sentences."""
        if len(dataset) == 0:
            raise InputError("training data contains no sentences", dataset.path)
        featurizer = self.make_featurizer().set_params(classes=dataset.labels)
        try:
            featurizer.fit(dataset.records, dataset.targets)
        except InputError as exc:
            if exc.path is not None or dataset.path is None:
                raise
            raise InputError(exc.message, dataset.path) from None
        self.featurizer_ = featurizer
        self._build_structure()
        return self

    def _new_structure(self) -> HiddenChainStructure:
        """The weight layout of the fitted classes and attributes, with ``n_states`` states
        per class in ``topology``."""
        return self.structure_class(len(self.featurizer_.classes_), int(self.n_states),
                                    self.topology, self.featurizer_.n_features_out_)

    @property
    def classes_(self) -> tuple:
        """The class labels (the featurizer's); a label's id is its position."""
        return self._featurizer().classes_

    @property
    def attributes_(self) -> str:
        """The input form fitted on: "templates", "arrays" or "tokens+arrays"."""
        return self._featurizer().attributes_

    @property
    def n_columns_(self) -> int:
        """The width of the numeric arrays fitted on (0 for sentences)."""
        return self._featurizer().n_columns_

    @property
    def attr_index_(self) -> FeatureIndex:
        """The vocabulary of template attributes (what the model file stores)."""
        return self._featurizer().index_

    def _featurizer(self) -> HiddenChainFeaturizer:
        featurizer = getattr(self, "featurizer_", None)
        if featurizer is None:  # AttributeError, so hasattr/getattr(..., default) work
            raise AttributeError("the hcrf task is not fitted: it has no featurizer_")
        return featurizer

    @property
    def n_classes(self) -> int:
        check_is_fitted(self)
        return len(self.classes_)

    @property
    def n_attributes(self) -> int:
        """Named attributes (the index) plus numeric columns (``n_columns_``, after them)."""
        check_is_fitted(self)
        return self.featurizer_.n_features_out_

    def featurize(self, dataset: Dataset) -> SequenceCorpus:
        """The sentences' attribute ids (and, with numbers other than 1, their values) as
        one ``SequenceCorpus``; refused (InputError naming the sentence) for sentences of
        another form than the task was fitted on (``attributes_``) or arrays of another
        width (``n_columns_``)."""
        check_is_fitted(self)
        return self.featurizer_.transform(dataset.records)

    def encode_targets(self, targets) -> np.ndarray:
        """Class ids (positions in ``classes_``); an unknown label is an InputError."""
        check_is_fitted(self)
        return self.featurizer_.encode_targets(targets)

    # ------------------------------------------------------------------------------------
    # evaluation
    # ------------------------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        targets, predictions = np.asarray(targets), np.asarray(predictions)
        return {"accuracy": float(np.mean(targets == predictions)) if targets.size else 0.0}

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Accuracy (with LM negative sets: on the positives plus each set, averaged over the
        sets, as the grammaticality task reports it) and the accuracy on each class."""
        X = self.featurize(dataset)
        y = self.encode_targets(dataset.targets)
        pred = np.asarray(predict(X), dtype=np.int64)
        correct = pred == y
        sets = np.array([getattr(r, "negative_set", -1) for r in dataset.records])
        if (sets >= 0).any():
            fixed = sets < 0
            accs = [float(np.mean(correct[fixed | (sets == k)])) for k in sorted(set(sets[~fixed]))]
            out = {"accuracy": float(np.mean(accs)), "accuracy_std": float(np.std(accs)),
                   "n_negative_sets": len(accs)}
        else:
            out = {"accuracy": float(np.mean(correct)) if correct.size else 0.0}
        for k, c in enumerate(self.classes_):
            mask = y == k
            if mask.any():
                key = {1: "positive", -1: "negative"}.get(c) if set(self.classes_) == {-1, 1} \
                    else None
                out[f"{key}_accuracy" if key else f"accuracy[{c}]"] = float(np.mean(correct[mask]))
        return out

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """One line per sentence: the predicted label (+1 / -1 for the binary data), a tab,
        the tokens (a ``(tokens, array)`` pair's tokens; an array alone has none and is
        refused)."""
        if any(record_words(r) is None for r in dataset.records):
            raise InputError("sentences given as numeric arrays alone have no tokens to write "
                             "beside their labels; take the predicted labels from "
                             "task.decode_predictions(predictions) instead")
        labels = self.decode_predictions(predictions)
        with atomic_write(path, "w") as fh:
            for r, p in zip(dataset.records, labels, strict=True):
                text = f"{p:+d}" if isinstance(p, int) and set(self.classes_) == {-1, 1} else str(p)
                fh.write(f"{text}\t{' '.join(record_words(r))}\n")

    # ------------------------------------------------------------------------------------
    # persistence
    # ------------------------------------------------------------------------------------
    def get_state(self):
        check_is_fitted(self)
        featurizer = self.featurizer_
        state = {"classes": list(featurizer.classes_),
                 "train_digest": getattr(self, "train_digest_", None)}
        kind = featurizer.attributes_
        if kind in NUMERIC_KINDS:  # only then, so other model files are as before
            state["attributes"] = kind
            state["n_columns"] = int(featurizer.n_columns_)
        arrays = dict(featurizer.index_.to_arrays(prefix="hattr_"))
        lm = getattr(self, "lm_", None)  # fitted when LM negatives were drawn
        if lm is not None:
            arrays.update(lm.to_arrays(prefix="lm_"))
        return state, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        try:
            index = feature_index_from_arrays(arrays, prefix="hattr_")
            classes = state["classes"]
        except KeyError as exc:
            raise ModelFormatError(f"hcrf model state lacks {exc}") from None
        if not isinstance(classes, list) or len(classes) < 2 or not all(
                isinstance(c, (int, str)) and not isinstance(c, bool) for c in classes):
            raise ModelFormatError("hcrf model state: 'classes' must list two or more int or "
                                   "string labels; the file is damaged. Retrain the model.")
        if not isinstance(index, FeatureIndex):
            raise ModelFormatError(f"hcrf model state: the attribute index is a "
                                   f"{type(index).__name__}, expected a vocabulary "
                                   f"(FeatureIndex); the file is damaged. Retrain the model.")
        kind = state.get("attributes", TEMPLATES)  # absent: a model of sentences
        n_columns = state.get("n_columns", 0)
        if (kind not in (TEMPLATES, *NUMERIC_KINDS) or isinstance(n_columns, bool)
                or not isinstance(n_columns, int) or n_columns < 0
                or (kind in NUMERIC_KINDS) != ("n_columns" in state)):
            raise ModelFormatError(f"hcrf model state: attributes {kind!r} with n_columns "
                                   f"{n_columns!r} is no input form of this task (expected "
                                   f"{TEMPLATES!r} without n_columns, or one of "
                                   f"{', '.join(map(repr, NUMERIC_KINDS))} with it); the file "
                                   f"is damaged or edited. Retrain the model.")
        task.featurizer_ = HiddenChainFeaturizer.from_state(
            index, classes, kind, n_columns,
            **{k: getattr(task, k) for k in featurizer_param_defaults(cls)})
        if any(k.startswith("lm_") for k in arrays):
            task.lm_ = TrigramLM.from_arrays(arrays, prefix="lm_")
        task.train_digest_ = state.get("train_digest")
        task._build_structure()
        return task
