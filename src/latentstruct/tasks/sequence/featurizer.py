"""Sentences to the numbers the chain decodes over: :class:`ChainFeaturizer`.

A scikit-learn transformer over the sequence tasks' sentence records, in one of four kinds
(``tasks.sequence.kinds``): words (a word list, or a ``(words, pos)`` pair), whose tokens
get the built-in templates (:class:`~latentstruct.featurizers.TokenTemplates`); per-token
feature dicts (a :class:`DictSentence`); numbers (a :class:`NumericSentence`: an array
alone, or the templates of its tokens plus the array's columns).  ``fit`` learns the kind
(``attributes_``), the rule naming feature-dict attributes (``attribute_names_``), the
column count of numbers (``n_columns_``) and the attribute ids: a
:class:`~latentstruct.featurizers.Vocabulary` (ids by descending count) or an
:class:`~latentstruct.featurizers.AttributeHasher`.  ``transform`` gives one
:class:`~latentstruct.tasks.sequence.corpus.SequenceCorpus`: every token's attribute ids
(numeric columns after the index: ``len(index_) + j``) and, when some value is not 1, the
values.

:class:`~latentstruct.tasks.sequence.SequenceLabellingTask` fits one on its training
sentences and delegates to it (``featurizer_``); a model file holds its state (the kind,
the naming, the column count and the index's arrays), and :meth:`ChainFeaturizer.from_index`
rebuilds it, so a loaded model featurises new sentences as it did at training time.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
from sklearn.base import TransformerMixin

from ...data.features import FeatureIndex, HashingIndex
from ...exceptions import ConfigError, InputError, check_is_fitted
from ...featurizers.templates import TokenTemplates
from ...featurizers.vocabulary import AttributeHasher, Vocabulary
from ...params import BOOL
from ...featurizers.base import Featurizer
from .corpus import SequenceCorpus
from .dict_sentence import CRFSUITE_NAMES, DictSentence
from .kinds import (
    ATTRIBUTE_KINDS,
    DICTS,
    check_records_kind,
    check_records_naming,
    records_kind,
    records_naming,
)
from .numeric import (
    ARRAYS,
    NUMERIC_KINDS,
    NumericSentence,
    append_numeric_ids,
    check_numeric_columns,
    numeric_columns,
)
from .params import FEATURE_PARAMETERS

__all__ = ["ChainFeaturizer", "sentence_words_pos"]


def sentence_words_pos(sentence) -> tuple:
    """``(words, pos)`` of a template sentence: a ``(words, pos_tags)`` pair as it is, a
    word list with ``pos`` None (TokenTemplates' two forms)."""
    if (isinstance(sentence, tuple) and len(sentence) == 2
            and not isinstance(sentence[0], str)):
        return sentence
    return sentence, None


class ChainFeaturizer(TransformerMixin, Featurizer):
    """Sentences to a :class:`SequenceCorpus` of token attribute ids (and values).

    Parameters
    ----------
    min_count : int, default 1
        Keep attributes seen at least this often in ``fit``'s sentences (``"index"``).
    feature_index : {"index", "hashing"}, default "index"
        A learned index of the training attributes (ids by descending count), or hashing.
    hash_bits : int, default 20
        ``2**hash_bits`` ids when hashing.
    window : int, default 2
        Context words (and tags) on each side, in the templates.
    affix_length : int, default 3
        Longest prefix and suffix, in the templates.
    uses_pos : bool, default False
        Whether the templates read the POS tags of ``(words, pos)`` pairs (the chunker).
    attribute_order : {"frequency", "first_seen"}, default "frequency"
        The order of the index's ids: by descending count (frequent attributes' weights
        together in memory) or as the training sentences first show them, CRFsuite's order,
        which ``latentstruct.crfsuite`` asks for so that ``attributes_`` lists them as
        sklearn-crfsuite does.  The model is the same either way, its weights permuted.

    Attributes
    ----------
    attributes_ : str
        The kind of sentence fitted on (``"templates"``, ``"dicts"``, ``"arrays"``,
        ``"tokens+arrays"``); ``transform`` refuses any other.
    attribute_names_ : str
        The rule naming feature-dict attributes (``"crfsuite"``, or ``"legacy"`` for older
        models).
    n_columns_ : int
        Columns of the numbers (0 unless the kind is numeric).
    vocabulary_ : Vocabulary or AttributeHasher
        Attribute names to ids (``index_`` is its feature map, what model files store).

    Examples
    --------
    >>> f = ChainFeaturizer(window=0, affix_length=1).fit([["The", "dog"], ["A", "dog"]])
    >>> X = f.transform([["the", "dog"]])
    >>> len(X), X.n_tokens, f.get_feature_names_out()[:3].tolist()
    (1, 2, ['b', 'w=dog', 'sh=x'])
    """

    _parameter_constraints = {**FEATURE_PARAMETERS, "uses_pos": [BOOL]}

    def __init__(self, min_count=1, feature_index="index", hash_bits=20, window=2,
                 affix_length=3, uses_pos=False, attribute_order="frequency"):
        self.attribute_order = attribute_order
        self.min_count = min_count
        self.feature_index = feature_index
        self.hash_bits = hash_bits
        self.window = window
        self.affix_length = affix_length
        self.uses_pos = uses_pos

    # --- attribute strings ------------------------------------------------------------
    def template_attributes(self, sentence) -> list[list[str]]:
        """The built-in templates of a sentence of words (a word list or a ``(words, pos)``
        pair; the tags are read only with ``uses_pos``): per token, its attribute strings."""
        words, pos = sentence_words_pos(sentence)
        return TokenTemplates(window=self.window, affix_length=self.affix_length).transform(
            [(list(words), pos if self.uses_pos else None)])[0]

    def attribute_strings(self, sentence) -> list[list[str]]:
        """Per token, the attribute names of ``sentence``: a feature-dict sentence's own,
        the templates of a sentence of words, those of the tokens of a ``(tokens, array)``
        sentence (none for an array alone: its columns are no named attributes)."""
        if isinstance(sentence, DictSentence):
            return [list(a) for a in sentence.attributes]
        if isinstance(sentence, NumericSentence):
            if sentence.base is None:
                return [[] for _ in range(len(sentence))]
            sentence = sentence.base
        return self.template_attributes(sentence)

    # --- fitting ------------------------------------------------------------------------
    def fit(self, X, y=None) -> "ChainFeaturizer":
        """Learn the kind of ``X``'s sentences, their naming and column count, and the
        attribute ids (the index of their attributes, or the hasher)."""
        records = list(X)
        kind = records_kind(records)
        n_columns = numeric_columns(records)
        if kind == ARRAYS:
            # an array alone names no attribute: a hashing table would be 2**hash_bits
            # empty rows, and an index an empty one (whatever min_count, as saved before)
            vocabulary = Vocabulary(order=self.attribute_order).fit([])
        elif self.feature_index == "hashing":
            vocabulary = AttributeHasher(n_bits=self.hash_bits).fit()
        else:
            vocabulary = Vocabulary(min_count=self.min_count, order=self.attribute_order).fit(
                self._documents(records))
        self.vocabulary_ = vocabulary
        self.attributes_ = kind
        self.attribute_names_ = records_naming(records, default=CRFSUITE_NAMES)
        self.n_columns_ = n_columns
        return self

    def _documents(self, records):
        """What the vocabulary counts: a feature-dict sentence's names as one document,
        every other sentence's tokens' attribute strings one document each."""
        for rec in records:
            if isinstance(rec, DictSentence):
                yield rec.names
            else:
                yield from self.attribute_strings(rec)

    @classmethod
    def from_index(cls, index, *, attributes: str, attribute_names: str, n_columns: int = 0,
                   **params) -> "ChainFeaturizer":
        """A fitted featurizer around a model file's index (``Vocabulary.from_index`` or
        ``AttributeHasher.from_index``), kind, naming and column count."""
        if attributes not in ATTRIBUTE_KINDS:
            raise ConfigError(f"unknown attribute kind {attributes!r}; expected one of "
                              f"{', '.join(ATTRIBUTE_KINDS)}")
        featurizer = cls(**params)
        featurizer.vocabulary_ = (AttributeHasher.from_index(index)
                                  if isinstance(index, HashingIndex)
                                  else Vocabulary.from_index(index,
                                                             order=featurizer.attribute_order))
        featurizer.attributes_ = attributes
        featurizer.attribute_names_ = attribute_names
        featurizer.n_columns_ = int(n_columns)
        return featurizer

    _fit_hint = "Call fit(sentences) first."

    def __sklearn_is_fitted__(self) -> bool:
        return "vocabulary_" in self.__dict__

    def _fitted(self):
        check_is_fitted(self)
        return self.vocabulary_

    @property
    def index_(self) -> FeatureIndex | HashingIndex:
        """The attribute names' feature map (what a model file stores)."""
        vocabulary = self.__dict__.get("vocabulary_")
        if vocabulary is None:
            raise AttributeError("index_: the featurizer is not fitted")
        return vocabulary.index_

    @property
    def n_features_out_(self) -> int:
        """The width of ``transform``'s rows: named attributes (the index) plus numeric
        columns (after them)."""
        return len(self.index_) + self.n_columns_

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The attribute names by id (hashed ids have no names: ``#j``), then the numeric
        columns (``column j``)."""
        vocabulary = self._fitted()
        if isinstance(vocabulary, Vocabulary):
            names = list(vocabulary.get_feature_names_out())
        else:
            names = [f"#{j}" for j in range(len(vocabulary))]
        return np.asarray(names + [f"column {j}" for j in range(self.n_columns_)],
                          dtype=object)

    # --- transforming -------------------------------------------------------------------
    def check_sentences(self, records, task_name: str = "chain") -> None:
        """InputError unless ``records`` are of the fitted kind (``attributes_``), feature
        dicts are named under ``attribute_names_`` and arrays have ``n_columns_`` columns;
        the messages name the model ``task_name``."""
        self._fitted()
        kind = self.attributes_
        check_records_kind(records, kind, task_name)
        if kind == DICTS:
            check_records_naming(records, self.attribute_names_, task_name)
        if kind in NUMERIC_KINDS:
            check_numeric_columns(records, self.n_columns_, task_name)

    def transform(self, X, *, task_name: str = "chain") -> SequenceCorpus:
        """The sentences' attribute ids (and values, when a feature dict or an array gives
        any other than 1) as one ``SequenceCorpus``; sentences of another kind, naming or
        width than fitted are refused (:meth:`check_sentences`, naming ``task_name``)."""
        if isinstance(X, (str, bytes)):
            raise InputError(f"{type(self).__name__}.transform takes a list of sentences, got "
                             f"a single string")
        records = X if isinstance(X, (list, tuple)) else list(X)
        self.check_sentences(records, task_name)
        index = self.vocabulary_.index_  # fitted: check_sentences checked
        lookup = index.lookup_many
        indptr = [0]
        ids = []
        offsets = [0]
        # an occurrence with the value 0 (a False in sklearn-crfsuite's dicts) scores
        # nothing and has a zero gradient: it stays in the index (CRFsuite's attribute) but
        # not in the corpus, so dicts of booleans keep the binary fast path
        with_values = any(_has_real_values(r) for r in records)
        values = [] if with_values else None
        total = 0
        for rec in records:
            if isinstance(rec, DictSentence):
                total = _dict_sentence_ids(rec, index, with_values, ids, values, indptr, total)
            elif isinstance(rec, NumericSentence):
                tok_ids = None if rec.base is None else [
                    lookup(tok) for tok in self.template_attributes(rec.base)]
                total = append_numeric_ids(rec, tok_ids, len(index), with_values, ids, values,
                                           indptr, total)
            else:  # every value 1
                total = _template_sentence_ids(self.template_attributes(rec), index,
                                               with_values, ids, values, indptr, total)
            offsets.append(len(indptr) - 1)
        attr_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        attr_values = None
        if with_values:
            attr_values = np.concatenate(values) if values else np.zeros(0)
        return SequenceCorpus(np.asarray(indptr), attr_ids, np.asarray(offsets), attr_values)


def _has_real_values(record) -> bool:
    """Whether a record gives some attribute a value other than 0 or 1."""
    if isinstance(record, NumericSentence):  # its zeros are gone already
        return record.has_real_values
    if not isinstance(record, DictSentence) or record.flat_values is None:
        return False
    return record.flat_values.dtype != np.bool_  # from_tokens keeps 0/1 values as bool


def _template_sentence_ids(tokens: list, index, with_values: bool, ids: list, values,
                           indptr: list, total: int) -> int:
    """Append one template sentence's attribute ids (every value 1) to ``transform``'s
    lists, its tokens' names (``tokens``: one list per token) looked up at once, unknown
    names dropped; returns the new total."""
    every = index.lookup_all(list(chain.from_iterable(tokens)))
    keep = np.flatnonzero(every >= 0)
    ends = np.cumsum([len(tok) for tok in tokens], dtype=np.int64)
    ids.append(every[keep])
    if with_values:
        values.append(np.ones(keep.shape[0]))
    indptr.extend((total + np.searchsorted(keep, ends)).tolist())
    return total + int(keep.shape[0])


def _dict_sentence_ids(rec, index, with_values: bool, ids: list, values, indptr: list,
                       total: int) -> int:
    """Append one :class:`DictSentence`'s attribute ids (and values) to ``transform``'s
    lists, at once for the sentence: unknown names, and occurrences of value 0, are
    dropped; returns the new total."""
    every = index.lookup_all(rec.names)
    keep = every >= 0
    flat = rec.flat_values
    if flat is not None:
        keep &= flat != 0
    token = np.repeat(np.arange(len(rec)), np.diff(np.r_[0, rec.ends]))
    counts = np.bincount(token[keep], minlength=len(rec))
    ids.append(every[keep])
    if with_values:
        values.append(np.ones(int(keep.sum())) if flat is None
                      else flat[keep].astype(np.float64))
    indptr.extend((total + np.cumsum(counts)).tolist())
    return total + int(counts.sum())
