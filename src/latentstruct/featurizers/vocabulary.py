"""Attribute names to feature ids, as scikit-learn transformers: a learned vocabulary and
feature hashing.

Both take *documents* (an iterable of iterables of attribute names: a token's attributes,
a document's words) and give one int64 id array per document.  They wrap the feature maps
of :mod:`latentstruct.data.features`, which model files store (``to_arrays``), so a
featurizer rebuilt from a model file (:meth:`Vocabulary.from_index`) gives the ids it gave
at training time.

Why not ``sklearn.feature_extraction.FeatureHasher`` / ``CountVectorizer``: a structure
needs the ids of each token's attributes (a ragged list of id arrays, with the token
boundaries), not a documents x features count matrix, and saved models pin the ids:
:class:`AttributeHasher` hashes with scikit-learn's own ``murmurhash3_32`` (unsigned, seed
0); ``FeatureHasher`` buckets the absolute value of the signed hash and adds a sign, which
would move every id of the models saved before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
from sklearn.base import TransformerMixin

from ..data.features import BaseFeatureIndex, FeatureIndex, HashingIndex
from ..exceptions import ConfigError, InputError, check_is_fitted
from ..params import Interval, Options
from latentstruct.featurizers.base import Featurizer

__all__ = ["Vocabulary", "AttributeHasher", "fit_by_frequency"]


def _documents(X, owner: str) -> Iterable:
    if isinstance(X, (str, bytes)):
        raise InputError(f"{owner} takes documents: an iterable of iterables of attribute "
                         f"names (one per token or document), got a single string; wrap it: "
                         f"[[name, ...]]")
    return X


def _checked(doc, k: int, owner: str):
    if isinstance(doc, (str, bytes)):
        raise InputError(f"{owner}: document {k} is a {type(doc).__name__} ({doc[:40]!r}), "
                         f"expected an iterable of attribute names; wrap a flat list of names "
                         f"in a list: [names]")
    return doc


def fit_by_frequency(index: FeatureIndex, names: Iterable[str]) -> FeatureIndex:
    """Give the names seen at least ``index.min_count`` times ids by descending count (ties
    in first-seen order), then freeze ``index``.

    Same names as ``index.fit``, other ids: the weight rows of frequent attributes, which
    nearly every constraint and decode reads, then share a small, cache-resident block of
    the weight vector (the DCD epochs over the working set run ~1.5x faster on UD EWT).
    """
    counts = Counter(names)
    bad = next((n for n in counts if not isinstance(n, str)), None)
    if bad is not None:
        raise InputError(f"attribute names must be str, got {type(bad).__name__} {bad!r}")
    for name, count in sorted(counts.items(), key=lambda kv: -kv[1]):  # stable sort
        if count >= index.min_count:
            index.add(name)
    return index.freeze()


class _IdTransformer(TransformerMixin, Featurizer):
    """What both maps share: ``transform`` to id arrays, names out, the fitted check."""

    index_: BaseFeatureIndex

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "index_", None) is not None

    def _index(self) -> BaseFeatureIndex:
        """The fitted index (NotFittedError before ``fit``)."""
        check_is_fitted(self)
        return self.index_

    def transform(self, X) -> list[np.ndarray]:
        """One int64 array per document: the ids of its names, in order (a name outside
        the vocabulary is dropped; a hasher drops none)."""
        index = self._index()
        owner = f"{type(self).__name__}.transform"
        return [index.lookup_many(_checked(doc, k, owner))
                for k, doc in enumerate(_documents(X, owner))]

    @property
    def n_features_out_(self) -> int:
        """The number of ids (the vocabulary's size, or ``2**n_bits``)."""
        return len(self._index())

    def __len__(self) -> int:
        return self.n_features_out_


class Vocabulary(_IdTransformer):
    """A learned map from attribute names to contiguous ids.

    Parameters
    ----------
    min_count : int, default 1
        Keep names seen at least this often in ``fit``'s documents.
    order : {"first_seen", "frequency"}, default "first_seen"
        Ids in first-seen order, or by descending count (ties first-seen): the sequence
        tasks' order, which keeps frequent attributes' weights together in memory.

    Attributes
    ----------
    index_ : FeatureIndex
        The frozen map (what a model file stores).

    Examples
    --------
    >>> v = Vocabulary().fit([["b", "a"], ["a", "c"]])
    >>> [ids.tolist() for ids in v.transform([["a", "zzz", "c"]])]
    [[1, 2]]
    >>> Vocabulary(order="frequency").fit([["b", "a"], ["a", "c"]]).get_feature_names_out().tolist()
    ['a', 'b', 'c']
    """

    _parameter_constraints = {"min_count": [Interval(int, 1)],
                              "order": [Options("first_seen", "frequency")]}

    def __init__(self, min_count=1, order="first_seen"):
        self.min_count = min_count
        self.order = order

    def fit(self, X, y=None) -> "Vocabulary":
        """Count the names of the documents ``X`` and keep those seen ``min_count`` times."""
        owner = f"{type(self).__name__}.fit"
        index = FeatureIndex(min_count=int(self.min_count))
        documents = _documents(X, owner)
        if self.order == "frequency":
            fit_by_frequency(index, (name for k, doc in enumerate(documents)
                                     for name in _checked(doc, k, owner)))
        else:
            index.fit(_checked(doc, k, owner) for k, doc in enumerate(documents))
        self.index_ = index
        return self

    @classmethod
    def from_index(cls, index: FeatureIndex, *, order: str = "first_seen") -> "Vocabulary":
        """A fitted Vocabulary around ``index`` (one a model file stored)."""
        if not isinstance(index, FeatureIndex):
            raise ConfigError(f"Vocabulary.from_index takes a FeatureIndex, got "
                              f"{type(index).__name__}")
        vocabulary = cls(min_count=index.min_count, order=order)
        vocabulary.index_ = index
        return vocabulary

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The names, by id."""
        return np.asarray(self._index().names, dtype=object)


class AttributeHasher(_IdTransformer):
    """Attribute names to ids by hashing: ``murmurhash3_32(name) % 2**n_bits``.

    Learns nothing (``fit`` only checks ``n_bits``) and drops no name; distinct names may
    share an id.

    Parameters
    ----------
    n_bits : int, default 20
        ``2**n_bits`` ids.

    Examples
    --------
    >>> h = AttributeHasher(n_bits=4).fit()
    >>> len(h), bool(0 <= h.transform([["w=cat"]])[0][0] < 16)
    (16, True)
    """

    # 32: the hash's own width (the tasks bound their hash_bits lower, by the memory the
    # weights take)
    _parameter_constraints = {"n_bits": [Interval(int, 1, 32, closed="both")]}

    def __init__(self, n_bits=20):
        self.n_bits = n_bits

    def fit(self, X=None, y=None) -> "AttributeHasher":
        self.index_ = HashingIndex(n_bits=int(self.n_bits))
        return self

    @classmethod
    def from_index(cls, index: HashingIndex) -> "AttributeHasher":
        """A fitted hasher around ``index`` (one a model file stored)."""
        if not isinstance(index, HashingIndex):
            raise ConfigError(f"AttributeHasher.from_index takes a HashingIndex, got "
                              f"{type(index).__name__}")
        hasher = cls(n_bits=index.n_bits)
        hasher.index_ = index
        return hasher
