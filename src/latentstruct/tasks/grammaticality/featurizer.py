"""The featurizer of the grammaticality task: tagged sentences to the attribute ids the views
decode over.

:class:`GrammaticalityFeaturizer` is a scikit-learn transformer.  ``fit`` learns the
vocabulary of the word and POS n-gram attributes (``views.ngram_attributes``: 13 per token,
a bias among them) of POS-tagged sentences, keeping those seen ``min_count`` times;
``transform`` gives the ids of every token's attributes as one
:class:`~latentstruct.tasks.sequence.corpus.SequenceCorpus`, the examples of
:class:`~latentstruct.tasks.grammaticality.decoding.ViewsStructure`.  An attribute outside
the vocabulary is dropped.

It takes sentences already tagged: the POS tagger is the task's (attached by
``set_tagger``, saved in its model file), which tags each record once and hands the
featurizer ``(words, tags)`` pairs.  The targets (+1 / -1) need no fitted encoding
(``tasks.validation.check_binary_labels``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sklearn.base import TransformerMixin

from ...data.features import FeatureIndex
from ...exceptions import InputError, check_is_fitted
from ...featurizers import Vocabulary
from ...params import Interval
from ...featurizers.base import Featurizer
from ..sequence.corpus import SequenceCorpus
from .views import ngram_attributes

__all__ = ["GrammaticalityFeaturizer"]


def _tagged(sentence, k: int) -> tuple:
    """``(words, tags)`` of sentence ``k``: a pair, or a record with ``words`` and ``pos``."""
    if hasattr(sentence, "words") and hasattr(sentence, "pos"):
        words, pos = sentence.words, sentence.pos
    elif isinstance(sentence, (tuple, list)) and len(sentence) == 2:
        words, pos = sentence
    else:
        raise InputError(f"sentence {k} is a {type(sentence).__name__}, expected a (words, "
                         f"POS tags) pair or a Sentence with its tags")
    if pos is None:
        raise InputError(f"sentence {k} has no POS tags; the grammaticality features need "
                         f"them: tag it first (GrammaticalityTask.tag)")
    if isinstance(words, (str, bytes)) or len(pos) != len(words):
        raise InputError(f"sentence {k}: expected a list of words and one POS tag per word, "
                         f"got {type(words).__name__} words and {len(pos)} tags")
    return words, pos


class GrammaticalityFeaturizer(TransformerMixin, Featurizer):
    """POS-tagged sentences to the ids of their tokens' n-gram attributes.

    Parameters
    ----------
    min_count : int, default 2
        Keep attributes seen at least this often in ``fit``'s sentences.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        The attribute vocabulary (ids in first-seen order); its ``index_`` is what a model
        file stores (``gattr_*`` arrays).

    Examples
    --------
    >>> f = GrammaticalityFeaturizer(min_count=1).fit([(["Shares", "rose"], ["NOUN", "VERB"])])
    >>> X = f.transform([(["Shares", "fell"], ["NOUN", "VERB"])])
    >>> len(X), X.n_tokens, f.n_features_out_
    (1, 2, 26)
    """

    _parameter_constraints = {"min_count": [Interval(int, 1)]}

    def __init__(self, min_count=2):
        self.min_count = min_count

    def _documents(self, X) -> Iterable[list[list[str]]]:
        """Per sentence, per token, its attribute strings."""
        if isinstance(X, (str, bytes)):
            raise InputError("GrammaticalityFeaturizer takes a list of (words, POS tags) "
                             "pairs, got a single string")
        for k, sentence in enumerate(X):
            yield ngram_attributes(*_tagged(sentence, k))

    def fit(self, X, y=None) -> "GrammaticalityFeaturizer":
        """Learn the vocabulary of the attributes of the tagged sentences ``X``."""
        self.vocabulary_ = Vocabulary(min_count=int(self.min_count)).fit(
            (a for tok in tokens for a in tok) for tokens in self._documents(X))
        return self

    @classmethod
    def from_index(cls, index: FeatureIndex) -> "GrammaticalityFeaturizer":
        """A fitted featurizer around ``index`` (the vocabulary a model file stored)."""
        featurizer = cls(min_count=index.min_count)
        featurizer.vocabulary_ = Vocabulary.from_index(index)
        return featurizer

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "vocabulary_", None) is not None

    @property
    def index_(self) -> FeatureIndex:
        """The frozen attribute index (what a model file stores)."""
        check_is_fitted(self)
        return self.vocabulary_.index_

    @property
    def n_features_out_(self) -> int:
        """The width of ``transform``'s rows: the number of attributes (the vocabulary's
        size)."""
        return len(self.index_)

    def transform(self, X) -> SequenceCorpus:
        """The attribute ids of every token of the tagged sentences ``X``, as one corpus."""
        check_is_fitted(self)
        vocabulary = self.vocabulary_
        indptr, ids, offsets, total = [0], [], [0], 0
        for tokens in self._documents(X):
            for a in vocabulary.transform(tokens):
                ids.append(a)
                total += a.shape[0]
                indptr.append(total)
            offsets.append(len(indptr) - 1)
        attr_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        return SequenceCorpus(np.asarray(indptr), attr_ids, np.asarray(offsets))

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The attribute names, by id."""
        return np.asarray(self.index_.names, dtype=object)
