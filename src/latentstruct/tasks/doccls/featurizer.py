"""Documents to the rows the ``doccls`` structure scores: :class:`DocumentFeaturizer`.

A scikit-learn transformer over the records of a ``doccls`` dataset: a list of
:class:`~latentstruct.data.documents.Document` (or plain texts), or a
:class:`~latentstruct.tasks.doccls.matrix.DocumentMatrix` of numbers (``make_dataset`` of a
numpy or scipy.sparse matrix).  ``fit`` learns, for texts, the vocabulary (``vocab_``) and,
for tf-idf, the idf weights (``idf_``), scikit-learn's ``CountVectorizer`` doing the
tokenising and counting; for a matrix, its column count (``n_columns_``).  With targets it
also learns the class labels (``classes_``, a held
:class:`~latentstruct.featurizers.targets.ClassEncoder`).  ``transform`` gives the
``DocumentMatrix`` of feature rows; ``encode_targets`` / ``decode_targets`` map labels to
ids and back.

:class:`~latentstruct.tasks.doccls.DocumentClassificationTask` fits one and delegates to it
(``featurizer_``); its model file holds what :meth:`DocumentFeaturizer.get_state` gives, so
a loaded model featurises new documents as it did at training time.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import TransformerMixin

from ...data.documents import Document
from ...data.features import FeatureIndex
from ...exceptions import InputError, ModelFormatError, check_is_fitted
from ...featurizers.targets import ClassEncoder, encode_labels
from ...featurizers.vocabulary import Vocabulary
from ...params import BOOL, Interval, Options, Satisfies
from ...featurizers.base import Featurizer
from .matrix import DocumentMatrix
from .numeric import check_input_kind, check_matrix_width, check_text_options

__all__ = ["DocumentFeaturizer", "FEATURES", "TOKEN_PATTERN", "document_label_id"]

FEATURES = ("tokens", "tfidf")
#: scikit-learn's CountVectorizer default: tokens of two or more word characters
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
#: the prefix of the vocabulary's arrays in a model file
_VOCAB_PREFIX = "doccls_vocab_"


def _is_collection(value) -> bool:
    return not isinstance(value, (str, bytes)) and hasattr(value, "__iter__")


def document_label_id(y) -> int:
    """The class of a structure: an int, or an integer array of shape (1,)."""
    if isinstance(y, (numbers.Integral, np.integer)):
        return int(y)
    arr = np.asarray(y)
    if arr.size != 1 or arr.dtype.kind not in "iu":
        raise InputError(f"a document's structure is one integer label (an int64 array of "
                         f"shape (1,)); got {arr.dtype} array of shape {arr.shape}")
    return int(arr.reshape(-1)[0])


class DocumentFeaturizer(TransformerMixin, Featurizer):
    """Texts (or a numeric matrix) to document rows, and class labels to ids.

    Parameters
    ----------
    features : {"tokens", "tfidf"}, default "tokens"
        Input features of a document: binary indicators of its word tokens, or their
        L2-normalised tf-idf weights.  The tf-idf weights are raw counts times the smoothed
        idf ``ln((1 + n) / (1 + df)) + 1`` of the n training documents, as scikit-learn's
        TfidfVectorizer computes them.
    min_count : int, default 1
        Keep words that occur in at least this many training documents.
    lowercase : bool, default True
        Lower-case the text before tokenising.  Tokens are runs of two or more word
        characters (scikit-learn's CountVectorizer default pattern).
    strip_headers : bool, default False
        Drop each document's header block (everything before its first blank line).  As in
        scikit-learn's ``remove=("headers",)``, a text without a blank line becomes empty.
    classes : collection of str or None, default None
        Labels declared up front, added to those of ``fit``'s targets.

    The four text options must stay at their defaults when ``fit`` is given a numeric
    matrix: its columns already are the features.

    Attributes
    ----------
    input_kind_ : {"text", "matrix"}
        What ``fit`` was given; ``transform`` refuses the other kind.
    vocab_ : FeatureIndex or None
        The words (sorted), for texts; None for a matrix.
    idf_ : ndarray
        The idf weight of every word (tf-idf); empty for binary tokens and a matrix.
    n_columns_ : int or None
        A matrix's column count (None for texts); ``transform`` refuses another.
    classes_ : list of str
        The sorted labels (when ``fit`` had targets); a label's id is its index.

    Examples
    --------
    >>> f = DocumentFeaturizer().fit(["the cat sat", "a dog sat"], ["pets", "farm"])
    >>> f.vocab_.names, f.classes_
    (['cat', 'dog', 'sat', 'the'], ['farm', 'pets'])
    >>> f.transform(["the dog"]).rows.toarray().tolist()
    [[0.0, 1.0, 0.0, 1.0]]
    """

    _parameter_constraints = {
        "features": [Options(*FEATURES)],
        "min_count": [Interval(int, 1)],
        "lowercase": [BOOL],
        "strip_headers": [BOOL],
        "classes": [Satisfies(_is_collection, "a collection of class labels"), None],
    }

    def __init__(self, features="tokens", min_count=1, lowercase=True, strip_headers=False,
                 classes=None):
        self.features = features
        self.min_count = min_count
        self.lowercase = lowercase
        self.strip_headers = strip_headers
        self.classes = classes

    # --- fit ------------------------------------------------------------------------------
    def fit(self, records, y=None, *, path=None) -> "DocumentFeaturizer":
        """Learn the labels of ``y`` (when given: every record needs one, and there must be
        two or more) and the vocabulary and idf weights of the texts, or the column count
        of a matrix; ``path`` names the training file in errors."""
        if not isinstance(records, DocumentMatrix):
            records = list(records)
        if not len(records):
            raise InputError("training data contains no documents", path)
        n_labels = 1
        if y is not None:
            n_labels = self._fit_labels(records, list(y), path)
        if isinstance(records, DocumentMatrix):
            check_text_options(self)
            check_matrix_width(records, n_labels, path)
            self.vocabulary_, self.vocab_, self.idf_ = None, None, np.zeros(0)
            self.input_kind_, self.n_columns_ = "matrix", records.n_attributes
        else:
            self._fit_vocabulary(records, path)
            self.input_kind_, self.n_columns_ = "text", None
        self._count_vectorizer = None
        return self

    def _fit_labels(self, records, y: list, path) -> int:
        missing = [k for k, t in enumerate(y) if t is None]
        if missing:
            rec = records[missing[0]]
            raise InputError("this training document has no label; every training document "
                             "needs one", path, getattr(rec, "line", None) or None)
        self.label_encoder_ = ClassEncoder(classes=self.classes).fit(y)
        self.classes_ = labels = self.label_encoder_.classes_
        if len(labels) < 2:
            # as scikit-learn's classifiers do: with one label there is nothing to tell
            # apart (every loss-augmented argmax is the gold label, the weights stay 0)
            raise InputError(
                f"training data has only one label, {labels[0]!r} ({len(records)} documents): "
                f"one class; a classifier needs documents of at least two labels (this model would "
                f"predict {labels[0]!r} for every document). Add documents of another label",
                path)
        return len(labels)

    def _fit_vocabulary(self, records, path) -> None:
        texts = self.texts(records)
        vec = self._vectorizer(min_df=int(self.min_count))
        try:
            counts = vec.fit_transform(texts)
        except ValueError as exc:  # "empty vocabulary" / "no terms remain"
            raise InputError(
                f"no word (a run of two or more letters or digits) occurs in at least "
                f"min_count={self.min_count} of the {len(texts)} training documents ({exc}); "
                f"lower min_count or give documents with text", path) from None
        names = vec.get_feature_names_out().tolist()
        # the vectorizer's sorted names, in that order: word i is column i of its counts
        self.vocabulary_ = Vocabulary().fit([names])
        self.vocab_ = self.vocabulary_.index_
        if self.features == "tfidf":
            df = np.bincount(sp.csr_matrix(counts).indices, minlength=len(names))
            n = len(texts)
            self.idf_ = np.log((1.0 + n) / (1.0 + df)) + 1.0
        else:
            self.idf_ = np.zeros(0)

    def _vectorizer(self, vocabulary=None, min_df=1):
        from sklearn.feature_extraction.text import CountVectorizer

        return CountVectorizer(lowercase=bool(self.lowercase), token_pattern=TOKEN_PATTERN,
                               min_df=min_df, binary=self.features == "tokens",
                               dtype=np.float64, vocabulary=vocabulary)

    def texts(self, records) -> list[str]:
        """The texts of ``records`` (Documents or strings), headers dropped with
        ``strip_headers``."""
        texts = []
        for k, rec in enumerate(records):
            text = rec.text if isinstance(rec, Document) else rec
            if not isinstance(text, str):
                raise InputError(f"record {k} is a {type(rec).__name__}; expected a Document "
                                 f"(from read_documents) or a str")
            if self.strip_headers:
                text = text.partition("\n\n")[2]
            texts.append(text)
        return texts

    # --- transform ------------------------------------------------------------------------
    _fit_hint = "Call fit(records) on training documents first."

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "input_kind_")

    @property
    def n_features_out_(self) -> int:
        """Columns of ``transform``'s rows: the vocabulary's size, or the matrix's width."""
        check_is_fitted(self)
        return self.n_columns_ if self.input_kind_ == "matrix" else len(self.vocab_)

    def transform(self, records) -> DocumentMatrix:
        """The documents' feature rows (words outside the vocabulary are dropped); a numeric
        matrix's rows as they are.  Records of the other kind than ``fit``'s, or a matrix
        of another width, are an InputError."""
        check_is_fitted(self)
        check_input_kind(self, records)
        if isinstance(records, DocumentMatrix):
            return records
        texts = self.texts(records)
        if getattr(self, "_count_vectorizer", None) is None:
            vocabulary = {w: i for i, w in enumerate(self.vocab_.names)}
            self._count_vectorizer = self._vectorizer(vocabulary=vocabulary)
        m = sp.csr_matrix(self._count_vectorizer.transform(texts), dtype=np.float64)
        m.sum_duplicates()
        if self.features == "tfidf":
            from sklearn.preprocessing import normalize

            m.data *= self.idf_[m.indices]
            m = normalize(m, norm="l2", copy=False)  # an empty row stays empty
        return DocumentMatrix(m.indptr, m.indices, m.data, m.shape[1])

    # --- targets --------------------------------------------------------------------------
    def _check_labels(self) -> None:
        check_is_fitted(self, "classes_", why="it has no labels",
                        fix="Call fit(records, y) with the training labels first.")

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Label strings to int64 arrays of shape (1,); a label not in ``classes_`` is an
        ``UnseenLabelError`` naming ``y[k]`` and the labels."""
        self._check_labels()
        targets = list(targets)
        for k, t in enumerate(targets):
            if t is None:
                raise InputError(f"document {k} has no label; encode_targets needs labelled "
                                 f"documents")
        label_id = {t: i for i, t in enumerate(self.classes_)}
        ids = encode_labels(label_id, self.classes_, targets,
                            where=lambda k: f"y[{k}] (document {k})")
        return list(ids.reshape(-1, 1))

    def decode_targets(self, structures) -> list:
        """Label ids (arrays of shape (1,) or ints) to label strings (None for −1)."""
        self._check_labels()
        labels = self.classes_
        out = []
        for y in structures:
            k = document_label_id(y)
            out.append(labels[k] if k >= 0 else None)
        return out

    # --- persistence ----------------------------------------------------------------------
    def state_arrays(self) -> dict:
        """The vocabulary (UTF-8 blob and offsets; none for a matrix) and the idf weights
        (empty for binary tokens and a matrix), as a model file stores them."""
        check_is_fitted(self)
        arrays = {} if self.input_kind_ == "matrix" else self.vocab_.to_arrays(
            prefix=_VOCAB_PREFIX)
        arrays["doccls_idf"] = np.asarray(self.idf_, dtype=np.float64)
        return arrays

    @classmethod
    def from_state(cls, labels, kind: str, n_columns, arrays, **params) -> "DocumentFeaturizer":
        """A fitted featurizer from a model file: its ``labels``, input ``kind`` ("text" or
        "matrix", checked by the caller), a matrix's ``n_columns``, the ``arrays`` of
        :meth:`state_arrays`, and the task's text options ``params``."""
        featurizer = cls(**params)
        featurizer.label_encoder_ = ClassEncoder.from_classes([str(t) for t in labels])
        featurizer.classes_ = featurizer.label_encoder_.classes_
        featurizer.input_kind_, featurizer.n_columns_ = kind, n_columns
        if kind == "matrix":
            featurizer.vocabulary_ = featurizer.vocab_ = None
        else:
            index = FeatureIndex.from_arrays(arrays, prefix=_VOCAB_PREFIX)
            featurizer.vocabulary_ = Vocabulary.from_index(index)
            featurizer.vocab_ = index
        idf = np.asarray(arrays["doccls_idf"], dtype=np.float64)
        features = featurizer.features
        expected = (len(featurizer.vocab_),) if features == "tfidf" and kind == "text" else (0,)
        if idf.shape != expected:
            raise ModelFormatError(f"idf weights have shape {idf.shape}, expected {expected} for "
                                   f"features={features!r}; the model file is damaged")
        featurizer.idf_ = idf
        featurizer._count_vectorizer = None
        return featurizer
