"""Feature dicts straight to a :class:`SequenceCorpus` at prediction time: the fast path
of ``featurize(make_dataset(X))`` (issue 55, item 4).

``make_dataset`` turns every token's feature dict into a tuple of attribute names
(``tasks.sequence.raw``: ``"key:value"`` for a string value, ``"key"`` for a number or a
bool, nested dicts and lists flattened), a :class:`DictSentence` keeps them, and
``ChainFeaturizer.transform`` looks the names up in the attribute index.  Per token that is
a Python call, a dict of names, interned strings and small arrays: most of the time of a
prediction.  :func:`dict_corpus` gives the same corpus without any of it:

* the index's names are looked up by their ``(key, value)`` pairs, as the dicts' own
  ``items()`` give them, in one table (``("word.lower()", "the")`` for the name
  ``"word.lower():the"``, ``("bias", True)`` for the name ``"bias"`` with the value 1,
  ``("bias", False)`` for it with the value 0): one C-level ``map`` over a sentence's items
  (no name is built, no per-token object);
* what the table cannot answer alone is checked per sentence, by C-level passes too: every
  token a ``dict``, every key a non-empty ``str`` that is no ``key:`` prefix of another key
  (two such keys could name one attribute twice, which the slow path sums), every value a
  ``str``, ``bool``, ``float`` or ``int``; a number other than 0 or 1 misses the table and
  is then read on its own (range-checked, its attribute's id and value patched in).

A sentence with anything else (nested dicts, lists of strings, bytes, numpy scalars, a key
that is a ``key:`` prefix of another) is featurised token by token by the slow path's own
function (``raw.feature_dict_items``), so its ids and values are the slow path's exactly; and
whatever the slow path would refuse (a bad value, an empty name, an empty sentence, a token
that is no dict, X of another kind) makes :func:`dict_corpus` return None, so that the
caller runs the slow path, which raises its own error, naming the sentence and token.

The corpus is the slow path's, array for array: the same attribute ids in the same order
(a dict's order), occurrences of unknown attributes and of the value 0 dropped, and
``attr_values`` None unless some value (of a known attribute or not) is other than 0 or 1,
as ``ChainFeaturizer.transform`` decides it.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from itertools import accumulate, chain, islice, repeat

import numpy as np

from ...data.features import FeatureIndex
from ...exceptions import InputError
from ...limits import MAX_ATTRIBUTE_VALUE
from .corpus import SequenceCorpus
from .dict_sentence import CRFSUITE_NAMES
from .kinds import DICTS
from .raw import feature_dict_items

__all__ = ["dict_corpus", "DictLookup"]

#: the value types whose attribute the table answers (exact types: a subclass, a numpy
#: scalar or bytes takes the slow path)
_PLAIN_VALUES = frozenset({str, bool, float, int})
_DICT = {dict}
_items = dict.items
_values = dict.values
#: in the table, an attribute named with the value 0 (dropped, as the slow path drops it)
_ZERO = -2
_MISS = -1


class DictLookup:
    """The ``(key, value) -> attribute id`` table of one frozen :class:`FeatureIndex`,
    filled key by key as prediction meets the keys (:meth:`register`): ``(key, s)`` for each
    name ``key:s`` of the index, ``(key, True)`` and ``(key, False)`` for a name ``key``
    (the id, and :data:`_ZERO`).  A number equal to 1 or 0 finds the same entries (``1 ==
    1.0 == True``, with equal hashes), a string never equals a bool."""

    #: keys registered without entries (no name starts with them) kept at most, so that a
    #: stream of unseen keys does not grow the table's memory without bound
    MAX_EMPTY_KEYS = 1 << 16

    def __init__(self, index: FeatureIndex):
        self.ids = index._ids  # name -> id (read only: the index is frozen)
        self.table: dict = {}
        self._registered: set = set()
        self._sorted: list | None = None

    def register(self, key: str) -> None:
        """Add the entries of every name that ``key`` starts (``key`` itself with a number
        or a bool, ``key:...`` with a string)."""
        if key in self._registered:
            return
        table, ids = self.table, self.ids
        if self._sorted is None:
            self._sorted = sorted(ids)
        names = self._sorted
        head = key + ":"
        n = len(head)
        j = bisect_left(names, head)
        found = key in ids
        if found:
            table[(key, True)] = ids[key]
            table[(key, False)] = _ZERO
        while j < len(names) and names[j].startswith(head):
            name = names[j]
            table[(key, name[n:])] = ids[name]
            found = True
            j += 1
        if found or len(self._registered) < self.MAX_EMPTY_KEYS:
            self._registered.add(key)


_LOOKUPS: "weakref.WeakKeyDictionary[FeatureIndex, DictLookup]" = weakref.WeakKeyDictionary()


def dict_lookup(index: FeatureIndex) -> DictLookup:
    """The :class:`DictLookup` of ``index`` (made once, kept while the index lives)."""
    lookup = _LOOKUPS.get(index)
    if lookup is None:
        lookup = _LOOKUPS[index] = DictLookup(index)
    return lookup


class _Keys:
    """The keys one call has admitted to the fast path: non-empty strings, none a ``key:``
    prefix of another (so no two keys of a token can name one attribute)."""

    def __init__(self, lookup: DictLookup):
        self.lookup = lookup
        self.admitted: set = set()
        self.refused: set = set()
        self._prefixes: set = set()  # every "a" of an admitted key "a:..."

    def admit(self, keys) -> bool:
        """Whether every key of ``keys`` is (now) admitted."""
        ok = True
        for key in keys:
            if key in self.admitted:
                continue
            if key in self.refused or not self._admit(key):
                self.refused.add(key)
                ok = False
        return ok

    def _admit(self, key) -> bool:
        if type(key) is not str or not key or key in self._prefixes:
            return False
        heads = []
        p = key.find(":")
        while p >= 0:
            head = key[:p]
            if head in self.admitted:
                return False
            heads.append(head)
            p = key.find(":", p + 1)
        self.admitted.add(key)
        self._prefixes.update(heads)
        self.lookup.register(key)
        return True


def dict_corpus(X, featurizer) -> SequenceCorpus | None:
    """``featurizer.transform(make_dataset(X).records)`` for ``X`` a list (or tuple) of
    non-empty lists (or tuples) of feature dicts, for a featurizer fitted on feature dicts
    under python-crfsuite's names with a learned index; None for anything else, and for
    input the slow path refuses (the caller then runs it, and it raises)."""
    if type(X) is not list and type(X) is not tuple:
        return None
    vocabulary = featurizer.__dict__.get("vocabulary_")
    if (not X or vocabulary is None or featurizer.__dict__.get("attributes_") != DICTS
            or featurizer.__dict__.get("attribute_names_") != CRFSUITE_NAMES):
        return None
    index = vocabulary.index_
    if type(index) is not FeatureIndex or not index.frozen:
        return None
    lookup = dict_lookup(index)
    keys = _Keys(lookup)
    admitted = keys.admitted
    get = lookup.table.get
    ids_get = lookup.ids.get
    miss = repeat(_MISS)
    flat: list = []           # one id per occurrence (-1 unknown, -2 value 0)
    tok_lens: list = []       # occurrences per token
    sent_lens: list = []      # tokens per sentence
    patches: list = []        # (occurrence, id, value) of values other than 1
    real = False              # some value other than 0 or 1: attr_values kept
    for i, sent in enumerate(X):
        kind = type(sent)
        if (kind is not list and kind is not tuple) or not sent or \
                set(map(type, sent)) != _DICT:
            return None
        base = len(flat)
        types = set(map(type, chain.from_iterable(map(_values, sent))))
        if types <= _PLAIN_VALUES and (admitted.issuperset(chain.from_iterable(sent))
                                       or keys.admit(set(chain.from_iterable(sent)))):
            found = list(map(get, chain.from_iterable(map(_items, sent)), miss))
            if (float in types or int in types) and _MISS in found:
                # a number other than 0 or 1 misses the table (as an unknown name does)
                ends = list(accumulate(map(len, sent)))
                p = found.index(_MISS)
                while True:
                    t = bisect_left(ends, p + 1)
                    key, value = next(islice(_items(sent[t]), p - (ends[t - 1] if t else 0),
                                             None))
                    if type(value) is not str and type(value) is not bool:
                        if not -MAX_ATTRIBUTE_VALUE <= value <= MAX_ATTRIBUTE_VALUE:
                            return None  # NaN, infinite or too large: the slow path says so
                        value = float(value)
                        if value != 0.0 and value != 1.0:
                            real = True
                            a = ids_get(key)
                            if a is not None:
                                patches.append((base + p, a, value))
                    try:
                        p = found.index(_MISS, p + 1)
                    except ValueError:
                        break
            flat += found
            tok_lens += map(len, sent)
        else:
            # nested dicts, lists, other value types or keys: the slow path's own function,
            # token by token (its ids and values exactly); its error makes the caller run it
            for t, features in enumerate(sent):
                try:
                    names, values = feature_dict_items(features, i, t)
                except InputError:
                    return None
                start = len(flat)
                flat += map(ids_get, names, miss)
                tok_lens.append(len(names))
                for k, value in enumerate(values):
                    if value != 1.0:
                        if value != 0.0:
                            real = True
                        patches.append((start + k, flat[start + k], value))
        sent_lens.append(len(sent))
    attr = np.fromiter(flat, dtype=np.int64, count=len(flat))
    values = None
    if patches:
        at, ids, vals = zip(*patches)
        at = np.array(at, dtype=np.int64)
        attr[at] = ids
        values = np.ones(attr.shape[0])
        values[at] = vals
        keep = np.flatnonzero((attr >= 0) & (values != 0.0))
    else:
        keep = np.flatnonzero(attr >= 0)
    ends = np.zeros(len(tok_lens) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(tok_lens, dtype=np.int64, count=len(tok_lens)), out=ends[1:])
    offsets = np.zeros(len(sent_lens) + 1, dtype=np.int64)
    np.cumsum(sent_lens, out=offsets[1:])
    # token t keeps the occurrences of keep in ends[t]:ends[t + 1]
    if real:  # a value other than 0 or 1, maybe of an attribute dropped: values kept
        values = np.ones(keep.shape[0]) if values is None else values[keep]
    return SequenceCorpus(np.searchsorted(keep, ends), attr[keep], offsets,
                          values if real else None)
