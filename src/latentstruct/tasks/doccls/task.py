"""Multiclass document classification (``doccls``): 20 Newsgroups and any JSON-lines corpus.

A document is one atomic part with one of L labels.  Its input features are the rows of a
bag-of-words matrix (binary token indicators, or L2-normalised tf-idf), built with
scikit-learn's ``CountVectorizer`` over the training documents; Φ(x, y) = φ(x) ⊗ e_y.  With
``n_attr`` vocabulary entries the weight vector is the emission block of the sequence task
and nothing else::

    w = [ emissions (n_attr x L), row-major: w[a * L + y] ]

(no bias and no transitions), so the structural SVM with 0/1 loss on this task is the
Crammer–Singer multiclass SVM without intercept (with squared slacks, as StructuredSVM
uses).  Loss-augmented argmax adds 1 to every wrong class; ties go to the lowest class.

The task is also *label-factored* (DISTRO, Srikumar & Manning 2014): one emission part per
document, ``part_arity = {"emission": 1}``; part scores from a label matrix A are
``unary = φ(x)ᵀ W_E A`` and there are no transition, start or end parts.
"""

from __future__ import annotations

import numpy as np

from ...data.documents import read_documents, split_by_date, write_documents
from ...exceptions import ConfigError, InputError, check_is_fitted
from ...params import Interval, Options
from ..base import ComposedTask, Dataset, register_task
from ..contracts import LABEL_FACTORED, MARGINALIZABLE, MAX_DECODABLE, SIZED
from ..reports import LabelAccuracy
from .featurizer import FEATURES, TOKEN_PATTERN, DocumentFeaturizer
from .matrix import DocumentMatrix
from .numeric import input_kind_from_state, is_numeric_input, numeric_dataset
from .raw import check_declared_labels, document_dataset
from .structure import MULTICLASS_ARITY, MulticlassStructure

__all__ = [
    "DocumentClassificationTask",
    "MULTICLASS_ARITY",
    "FEATURES",
    "SPLITS",
    "TOKEN_PATTERN",
]

SPLITS = ("all", "train", "eval")
#: the fitted featurizer's attributes the task mirrors (the estimators, inspection and
#: tests read them on the task)
_FEATURIZER_ATTRIBUTES = ("vocab_", "idf_", "input_kind_", "n_columns_")




# ============================================================================================
# the task
# ============================================================================================
@register_task
class DocumentClassificationTask(ComposedTask):
    """Multiclass document classification with 0/1 loss (20 Newsgroups).

    Data: JSON lines ``{"id": ..., "label": ..., "text": ...}`` (see
    :mod:`latentstruct.data.documents`); ``predict`` also reads lines without a label.

    Parameters
    ----------
    features, min_count, lowercase, strip_headers
        The featurizer's (:class:`DocumentFeaturizer`'s, which documents them), by name.
    split : {"all", "train", "eval"}
        Which documents of a file are read: all, or the by-date "train" or "eval" part.
        Each label's documents are ordered by integer id and the last ``eval_fraction`` of
        them form the eval part.  May change after training: train with split=train,
        evaluate with split=eval.
    eval_fraction : float, default 0.2
        Share of each label's documents in the eval part (rounded; at least 1 and at most
        all but one of a label with two or more documents).  Fixed once trained, so that the
        eval part stays disjoint from the training part.

    Notes
    -----
    On the 20 Newsgroups bydate training file (11,314 posts, 20 labels) the split gives
    9,050 train and 2,264 eval documents; every eval post of a label has a larger id than
    every train post of that label.  ``latentstruct train doccls --option split=train``
    (StructuredSVM defaults: C=0.1, squared slacks; binary tokens, 106,588 words) converges
    in 9 iterations, about 45 s on one core, and ``latentstruct evaluate --option
    split=eval`` gives accuracy 0.856 (``features=tfidf``: 0.887).  For reference,
    scikit-learn's LinearSVC(multi_class="crammer_singer", fit_intercept=False), the
    L1-slack variant, gets 0.865 / 0.849 / 0.844 at C = 0.01 / 0.1 / 1 on the same features.

    With ``learner="crf"`` it is multinomial logistic regression (no intercept), and
    ``predict_proba`` gives class probabilities (:mod:`.marginals`).  The task sets the
    crf learner's L2 coefficient ``c2`` to 0.01 by default (the learner's own 1.0
    underfits a document's features; ``learner_defaults``); a given ``c2`` wins.

    Data in memory (:meth:`make_dataset`): ``X`` is a list of document texts, or a numeric
    matrix (a numpy array or scipy.sparse matrix, n_documents x n_columns, such as a fitted
    ``TfidfVectorizer``'s output) whose columns are then the input features with their real
    values (:mod:`.numeric`); ``y`` their class labels (strings) or None;
    ``decode_predictions`` gives label strings::

        task = DocumentClassificationTask()
        data = task.make_dataset(["The match ended 2-1.", "Rates rose again."],
                                 ["sport", "finance"])

    Attributes after ``fit``: ``featurizer_`` (the fitted :class:`DocumentFeaturizer` that
    ``featurize`` and ``encode_targets`` use), and, mirrored from it, ``labels_``,
    ``input_kind_`` ("text" or "matrix"), ``n_columns_`` (the matrix's column count; None
    for texts), ``vocab_`` (texts; None for a matrix) and ``idf_``.
    """

    name = "doccls"
    capabilities = frozenset({MAX_DECODABLE, LABEL_FACTORED, SIZED, MARGINALIZABLE})
    #: the structure the task holds (``structure_``): Φ, the 0/1 loss, argmax, marginals
    structure_class = MulticlassStructure
    evaluation_params = frozenset({"split"})
    default_learner = "ssvm"
    score_metric = "accuracy"
    #: accuracy over documents, with per-label scores as its breakdown
    metric = LabelAccuracy()
    # The crf learner's c2 = 1.0 is CRFsuite's default for sentences, whose loss sums many
    # tokens; it underfits a document (one part; a tf-idf row has norm 1).  On the by-date
    # dev split of 20 Newsgroups' training file (split=train / split=eval), tf-idf accuracy
    # is 0.849 at c2 = 1.0, 0.875 at 0.1 and 0.882 at 0.01 (binary tokens: 0.838 / 0.840 /
    # 0.840); the sweep and its timings are in docs/guide/crf.md.
    learner_defaults = {"crf": {"c2": 0.01}}

    #: the featurizer ``fit`` builds; its text options are the task's too (its labels are
    #: the training data's)
    featurizer_class = DocumentFeaturizer
    featurizer_fixed = {"classes": None}

    def __init__(self, *, split="all", eval_fraction=0.2, **featurizer_params):
        super().__init__(**featurizer_params)
        self.split = split
        self.eval_fraction = eval_fraction

    # --- parameters -------------------------------------------------------------------
    _parameter_constraints = {  # and the featurizer's own
        "split": [Options(*SPLITS)],
        "eval_fraction": [Interval(float, 0.0, 1.0, closed="neither")],
    }

    # --- data -------------------------------------------------------------------------
    def read(self, path, *, split: str = "train") -> Dataset:
        """Read a JSON-lines file and keep the documents of the task's ``split`` parameter.

        The keyword ``split`` is the caller's purpose, not the task parameter: "train"
        (``latentstruct train``) needs a label on every line; anything else ("test", for
        ``evaluate`` and ``predict``) accepts unlabelled lines (``evaluate`` then refuses
        them in :meth:`evaluate_model`).  Targets are label strings (None where absent).
        """
        self.check_params()
        if path is None:
            raise ConfigError("the doccls task needs a data path: a JSON-lines file of "
                              '{"id": ..., "label": ..., "text": ...} objects')
        docs = read_documents(path, allow_unlabelled=split != "train")
        if self.split != "all":
            unlabelled = next((d for d in docs if d.label is None), None)
            if unlabelled is not None:
                raise InputError(
                    f"this document has no label, and split={self.split!r} picks the by-date "
                    f"part of each label; give every line a label, or read the whole file "
                    f"with split='all' (--option split=all)", path, unlabelled.line)
            train_idx, eval_idx = split_by_date(docs, float(self.eval_fraction), path=path)
            keep = train_idx if self.split == "train" else eval_idx
            docs = [docs[int(k)] for k in keep]
        return Dataset(docs, [d.label for d in docs], str(path))

    def make_dataset(self, X, y=None) -> Dataset:
        """Documents from memory: the in-memory twin of :meth:`read`, or a numeric matrix.

        A numpy array or scipy.sparse matrix ``X`` (n_documents x n_columns) gives a dataset
        whose records are its rows, a :class:`DocumentMatrix` (:func:`.numeric.numeric_dataset`:
        2-D, finite values; a bad value is an InputError naming ``X[i][j]``); the text
        options must then stay at their defaults.  Otherwise:

        ``X``: a list of document texts (non-blank strings, at most ``MAX_DOCUMENT_CHARS``
        characters, the JSON-lines reader's line limit); ``y``: one class label per text,
        a non-blank **string** as in the JSON-lines files (class ids such as 20NG's ints
        are refused: convert them to names or ``str`` first, so that predictions,
        ``decode_predictions`` and saved models all speak the same labels), or None for
        documents to predict.  Records are :class:`~latentstruct.data.documents.Document`
        with ids ``"0"``, ``"1"``, ... and the targets are the label strings, as ``read``
        gives them.

        The ``split`` parameter (the by-date train/eval part of a file) does not apply:
        the dataset holds every given document, in order.  ``strip_headers`` and the other
        featurisation parameters apply as to file data.  A bad document is an
        ``InputError`` naming ``X[i]`` or ``y[i]``.
        """
        if is_numeric_input(X):
            return numeric_dataset(X, y)
        return document_dataset(X, y)

    def decode_predictions(self, predictions) -> list:
        """``predict``'s label ids (arrays of shape (1,)) as label strings."""
        check_is_fitted(self)
        return self.decode_targets(predictions)

    def fit(self, dataset: Dataset) -> "DocumentClassificationTask":
        """Fit the featurizer (``featurizer_``) on the training data: the sorted label list,
        and the vocabulary (and idf weights for tf-idf) of texts, or the column count of a
        numeric matrix (records a :class:`DocumentMatrix`)."""
        records = dataset.records if isinstance(dataset.records, DocumentMatrix) \
            else list(dataset.records)
        if dataset.labels:
            check_declared_labels(dataset.labels)
        featurizer = self.make_featurizer().set_params(classes=dataset.labels).fit(
            records, dataset.targets, path=dataset.path)
        self._use_featurizer(featurizer)
        self.n_train_documents_ = len(records)
        self._build_structure()
        return self

    def _use_featurizer(self, featurizer: DocumentFeaturizer) -> None:
        """Hold the fitted ``featurizer`` and mirror its learned attributes."""
        self.featurizer_ = featurizer
        self.labels_ = featurizer.classes_
        for name in _FEATURIZER_ATTRIBUTES:
            setattr(self, name, getattr(featurizer, name))

    def featurize(self, dataset: Dataset) -> DocumentMatrix:
        """The documents' feature rows (words outside the training vocabulary are dropped); a
        numeric matrix's rows as they are (``featurizer_.transform``).  Records of the other
        kind than the task was fitted on, or a matrix of another width, are an InputError."""
        check_is_fitted(self)
        return self.featurizer_.transform(dataset.records)

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Label strings to int64 arrays of shape (1,).  A label not in ``labels_`` is
        refused (``UnseenLabelError`` naming it and the model's labels); evaluation scores
        raw gold labels (:meth:`evaluate_raw`)."""
        check_is_fitted(self)
        return self.featurizer_.encode_targets(targets)

    def decode_targets(self, structures) -> list:
        """Label ids (arrays of shape (1,) or ints) to label strings (None for −1)."""
        check_is_fitted(self)
        return self.featurizer_.decode_targets(structures)

    # --- the structure's sizes (the task's queries) -------------------------------------
    @property
    def n_labels(self) -> int:
        check_is_fitted(self)
        return len(self.labels_)

    @property
    def n_attributes(self) -> int:
        """Input features: the vocabulary's size, or a matrix's column count."""
        check_is_fitted(self)
        return self.featurizer_.n_features_out_

    def _new_structure(self) -> MulticlassStructure:
        """The structure of the fitted featurizer's classes and width."""
        return self.structure_class(len(self.labels_), self.featurizer_.n_features_out_)

    # --- evaluation and output ----------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        """``{"accuracy": float, "n": int}`` of predicted against gold labels (ids; a gold
        ``-1`` matches nothing): ``metric.score`` on them as labels."""
        return self.metric.score(self.decode_targets(targets), self.decode_targets(predictions))

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Metrics on labelled documents; a document without a label is an InputError."""
        for rec, t in zip(dataset.records, dataset.targets):
            if t is None:
                raise InputError("this document has no label; evaluate needs a label on every "
                                 "line (latentstruct predict reads unlabelled documents)",
                                 dataset.path, getattr(rec, "line", None) or None)
        return super().evaluate_model(dataset, predict, decision_function)

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """The documents as JSON lines, each with its predicted label as ``"predicted"``."""
        write_documents(path, dataset.records, self.decode_targets(predictions))

    # --- persistence --------------------------------------------------------------------
    def get_state(self):
        """Labels, the training size, the input kind and a matrix's column count as JSON; the
        vocabulary (UTF-8 blob and offsets; none for a matrix) and the idf weights (empty for
        binary tokens and a matrix) as arrays (the featurizer's)."""
        check_is_fitted(self)
        matrix = self.input_kind_ == "matrix"
        return ({"labels": list(self.labels_), "n_train_documents": int(self.n_train_documents_),
                 "input": self.input_kind_, "n_columns": int(self.n_columns_) if matrix else None},
                self.featurizer_.state_arrays())

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.check_params()
        kind, n_columns = input_kind_from_state(state)
        task._use_featurizer(DocumentFeaturizer.from_state(
            state["labels"], kind, n_columns, arrays, **task.make_featurizer().get_params()))
        task.n_train_documents_ = int(state.get("n_train_documents", 0))
        task._build_structure()
        return task
