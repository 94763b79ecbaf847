"""The featurizer of the hidden-state CRF (``hcrf``): sentences or numbers to the attribute
ids (and values) the hidden chain decodes over, and the class labels to ids.

:class:`HiddenChainFeaturizer` is a scikit-learn transformer.  ``fit`` learns, from the
training records and their labels:

* the input form (``attributes_``: ``"templates"`` for sentences, ``"arrays"`` or
  ``"tokens+arrays"`` for numbers, ``tasks.hidden_chain.numbers``) and the arrays' width
  (``n_columns_``); any other form or width is refused later;
* the vocabulary of the tokens' template attributes (``featurizers.TokenTemplates``
  without POS: bias, word, lowercased window words and bigrams, affixes, shape), kept when
  seen ``min_count`` times; an array alone has no words, so its vocabulary is empty;
* the classes (``classes_``): ``classes`` when given (a dataset's declared labels), else
  the distinct labels, ints before strings, each sorted.

``transform`` gives one :class:`~latentstruct.tasks.sequence.corpus.SequenceCorpus`: per
token its template ids, then its array's nonzero columns as ids after the vocabulary (with
their values, unless every value is 1).  ``encode_targets`` / ``decode_targets`` map labels
to class ids and back.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import TransformerMixin

from ...data.features import FeatureIndex
from ...exceptions import InputError, check_is_fitted
from ...featurizers import TokenTemplates, Vocabulary
from ...params import Interval
from ...featurizers.base import Featurizer
from ..sequence.corpus import SequenceCorpus
from ..sequence.kinds import ARRAYS, TEMPLATES, check_records_kind, records_kind
from ..sequence.numeric import (
    NUMERIC_KINDS,
    NumericSentence,
    append_numeric_ids,
    check_numeric_columns,
    numeric_columns,
)
from .numbers import record_words

__all__ = ["HiddenChainFeaturizer", "sorted_classes"]

#: the task the messages name (a model of this featurizer is an ``hcrf`` model)
_TASK = "hcrf"


def sorted_classes(labels) -> tuple:
    """The distinct labels, ints before strings, each sorted (a class's id is its place)."""
    return tuple(sorted(set(labels), key=lambda c: (isinstance(c, str), c)))


class HiddenChainFeaturizer(TransformerMixin, Featurizer):
    """Sentences (or numbers) to the hidden-state CRF's attribute ids; labels to class ids.

    Parameters
    ----------
    window : int, default 1
        Lowercased words at offsets -window..window (and the word bigrams around the token)
        are attributes of a token (``featurizers.TokenTemplates``).
    affix_length : int, default 3
        Prefixes and suffixes of 1..affix_length characters are attributes.
    min_count : int, default 2
        Keep attributes seen at least this often in ``fit``'s sentences.
    classes : list or None
        The class labels, when declared up front (``Dataset.labels``); None: the labels
        ``fit`` is given.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        The template attributes (its ``index_`` is what a model file stores, ``hattr_*``).
    attributes_ : str
        The input form fitted on: "templates", "arrays" or "tokens+arrays".
    n_columns_ : int
        The width of the numeric arrays (0 for sentences).
    classes_ : tuple
        The class labels; a label's id is its position.
    """

    _parameter_constraints = {"window": [Interval(int, 0, 5)],
                              "affix_length": [Interval(int, 0, 10)],
                              "min_count": [Interval(int, 1)]}

    def __init__(self, window=1, affix_length=3, min_count=2, classes=None):
        self.window = window
        self.affix_length = affix_length
        self.min_count = min_count
        self.classes = classes

    def _templates(self) -> TokenTemplates:
        return TokenTemplates(window=int(self.window), affix_length=int(self.affix_length))

    def _attributes(self, templates: TokenTemplates, words) -> list[list[str]]:
        return templates.transform([words])[0]

    def fit(self, X, y=None) -> "HiddenChainFeaturizer":
        """Learn the classes (``classes``, else the labels ``y``), the input form and width
        of the records ``X``, and the vocabulary of their template attributes."""
        labels = self.classes if self.classes is not None else y
        if labels is None:
            raise InputError("training sentences need labels (give y, or classes)")
        classes = sorted_classes(labels)
        if len(classes) < 2:
            raise InputError(f"the training data has one class only ({list(classes)!r}); a "
                             "classifier needs at least two")
        if any(c is None for c in classes):
            raise InputError("training sentences need labels (a target is None)")
        records = list(X)
        kind = records_kind(records)  # one form only: a mix is refused, naming a sentence
        n_columns = numeric_columns(records)
        templates = self._templates()
        # an array alone has no words: its columns are its only attributes
        self.vocabulary_ = Vocabulary(min_count=int(self.min_count)).fit(
            (a for tok in self._attributes(templates, record_words(r)) for a in tok)
            for r in records if kind != ARRAYS)
        self.classes_ = classes
        self.attributes_ = kind
        self.n_columns_ = n_columns
        return self

    @classmethod
    def from_state(cls, index: FeatureIndex, classes, attributes: str = TEMPLATES,
                   n_columns: int = 0, **params) -> "HiddenChainFeaturizer":
        """A fitted featurizer from what a model file stored: the vocabulary ``index``, the
        classes, the input form and width; ``params`` are the task's ``window``,
        ``affix_length`` and ``min_count``."""
        featurizer = cls(**params)
        featurizer.vocabulary_ = Vocabulary.from_index(index)
        featurizer.classes_ = tuple(classes)
        featurizer.attributes_ = attributes
        featurizer.n_columns_ = int(n_columns)
        return featurizer

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "vocabulary_", None) is not None

    def _fitted(self) -> Vocabulary:
        check_is_fitted(self)
        return self.vocabulary_

    @property
    def index_(self) -> FeatureIndex:
        """The frozen vocabulary of template attributes (what a model file stores)."""
        return self._fitted().index_

    @property
    def n_features_out_(self) -> int:
        """The width of ``transform``'s rows: named attributes (the vocabulary) plus numeric
        columns (after them)."""
        return len(self._fitted().index_) + self.n_columns_

    def transform(self, X) -> SequenceCorpus:
        """The records' attribute ids (and, with numbers other than 1, their values) as one
        corpus; refused (InputError naming the sentence) for records of another form than
        ``fit``'s (``attributes_``) or arrays of another width (``n_columns_``)."""
        vocabulary = self._fitted()
        records = X if isinstance(X, (list, tuple)) else list(X)
        kind = self.attributes_
        check_records_kind(records, kind, _TASK)
        if kind in NUMERIC_KINDS:
            check_numeric_columns(records, self.n_columns_, _TASK)
        templates = self._templates()
        n_named = len(vocabulary.index_)
        # all-binary numbers keep the corpus without values (the kernels' fast path)
        with_values = any(isinstance(r, NumericSentence) and r.has_real_values for r in records)
        values = [] if with_values else None
        indptr, ids, offsets, total = [0], [], [0], 0
        for r in records:
            if isinstance(r, NumericSentence):
                words = record_words(r)
                tok_ids = (None if words is None
                           else vocabulary.transform(self._attributes(templates, words)))
                total = append_numeric_ids(r, tok_ids, n_named, with_values, ids, values,
                                           indptr, total)
                offsets.append(len(indptr) - 1)
                continue
            for a in vocabulary.transform(self._attributes(templates, r.words)):
                ids.append(a)
                if with_values:
                    values.append(np.ones(a.shape[0]))
                total += a.shape[0]
                indptr.append(total)
            offsets.append(len(indptr) - 1)
        attr_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        attr_values = (np.concatenate(values) if values else np.zeros(0)) if with_values else None
        return SequenceCorpus(np.asarray(indptr), attr_ids, np.asarray(offsets), attr_values)

    def encode_targets(self, y) -> np.ndarray:
        """Class ids (positions in ``classes_``); an unknown label is an InputError."""
        self._fitted()
        ids = {c: k for k, c in enumerate(self.classes_)}
        out = np.empty(len(y), dtype=np.int64)
        for i, t in enumerate(y):
            t = t.item() if isinstance(t, np.generic) else t
            if t not in ids:
                raise InputError(f"target {i} is {t!r}, not one of the classes the task was "
                                 f"fitted on: {list(self.classes_)}")
            out[i] = ids[t]
        return out

    def decode_targets(self, ids) -> list:
        """Class ids back to the labels."""
        self._fitted()
        return [self.classes_[int(p)] for p in ids]

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The attribute names by id: the vocabulary, then ``column j`` for each column."""
        names = list(self.index_.names) + [f"column {j}" for j in range(self.n_columns_)]
        return np.asarray(names, dtype=object)
