"""Feature-name to feature-id maps.

Tasks describe features by name (``"w=the|t=DT"``); learners need contiguous integer ids.

* ``FeatureIndex`` is built on training data and then frozen: names seen at least
  ``min_count`` times get ids ``0..n-1`` in first-seen order; names not in the index are
  dropped at prediction time (a weight for them could never have been learnt).
* ``HashingIndex`` needs no fitting: the id of a name is its MurmurHash3 (seed 0) modulo
  ``2**n_bits``, stable across processes and machines.

Both save themselves as plain numpy arrays (``to_arrays`` / ``from_arrays``), so a model
file never needs pickle.  ``make_feature_index(kind, **params)`` builds one from a registry
and ``feature_index_from_arrays`` restores whichever kind was saved.
"""

from __future__ import annotations

import abc
import itertools
from collections import Counter
from collections.abc import Iterable

import numpy as np
from sklearn.utils import murmurhash3_32

from latentstruct.exceptions import ConfigError, InputError, ModelFormatError

__all__ = [
    "BaseFeatureIndex",
    "FeatureIndex",
    "HashingIndex",
    "FEATURE_INDEX_KINDS",
    "make_feature_index",
    "feature_index_from_arrays",
]

# UTF-8 with surrogatepass so that every Python str (even a lone surrogate) round-trips.
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"


class BaseFeatureIndex(abc.ABC):
    """The interface every feature map offers."""

    kind: str = ""

    @abc.abstractmethod
    def lookup(self, name: str) -> int:
        """The id of ``name``, or -1 if it has none."""

    @abc.abstractmethod
    def lookup_many(self, names: Iterable[str]) -> np.ndarray:
        """int64 ids of ``names`` in order; names without an id are dropped."""

    def lookup_all(self, names) -> np.ndarray:
        """int64 id of each of ``names`` (a list or tuple), -1 for one without an id: one
        entry per name, unlike :meth:`lookup_many`."""
        return np.fromiter(map(self.lookup, names), dtype=np.int64, count=len(names))

    @abc.abstractmethod
    def __len__(self) -> int:
        """Number of feature ids (the dimension of the weight vector)."""

    @property
    @abc.abstractmethod
    def frozen(self) -> bool:
        """True once no more names can be added."""

    @abc.abstractmethod
    def to_arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        """Plain numpy arrays (no object dtype) that ``from_arrays`` restores from."""

    @classmethod
    @abc.abstractmethod
    def from_arrays(cls, arrays, prefix: str = "") -> "BaseFeatureIndex":
        """Rebuild from the output of ``to_arrays``."""

    @property
    def n_features(self) -> int:
        return len(self)


def _get_array(arrays, key: str) -> np.ndarray:
    try:
        return np.asarray(arrays[key])
    except KeyError:
        raise ModelFormatError(
            f"feature index array {key!r} is missing; the arrays hold "
            f"{sorted(arrays.keys())!r}"
        ) from None


def _kind_array(kind: str) -> np.ndarray:
    return np.array(kind, dtype=f"<U{len(kind)}")


class FeatureIndex(BaseFeatureIndex):
    """A frozen-after-fit map from feature names to contiguous int ids.

    Parameters
    ----------
    min_count : int, default 1
        ``fit`` keeps only names that occur at least this many times.

    Examples
    --------
    >>> idx = FeatureIndex().fit([["a", "b"], ["b", "c"]])
    >>> idx.lookup("b"), idx.lookup("zzz")
    (1, -1)
    >>> idx.lookup_many(["c", "zzz", "a"]).tolist()
    [2, 0]
    """

    kind = "index"

    def __init__(self, min_count: int = 1):
        if (
            isinstance(min_count, bool)
            or not isinstance(min_count, (int, np.integer))
            or min_count < 1
        ):
            raise ConfigError(
                f"min_count must be an integer >= 1, got {min_count!r}"
            )
        self.min_count = int(min_count)
        self._ids: dict[str, int] = {}
        self._names: list[str] = []
        self._frozen = False

    # building -----------------------------------------------------------------------
    def _check_not_frozen(self, action: str) -> None:
        if self._frozen:
            raise ConfigError(
                f"cannot {action}: this FeatureIndex is frozen ({len(self)} features); "
                f"build a new FeatureIndex to index different data"
            )

    def fit(self, documents: Iterable[Iterable[str]]) -> "FeatureIndex":
        """Count names over ``documents`` (an iterable of iterables of names), keep those
        with count >= ``min_count``, give them ids in first-seen order, and freeze.

        Names already added with ``add`` keep their ids.  Returns ``self``.
        """
        self._check_not_frozen("fit")
        if isinstance(documents, (str, bytes)):
            raise InputError(
                "FeatureIndex.fit expects an iterable of iterables of feature names "
                "(one iterable per instance), got a single string"
            )
        counts: Counter = Counter()
        for k, doc in enumerate(documents):
            if isinstance(doc, (str, bytes)):
                raise InputError(
                    f"FeatureIndex.fit expects an iterable of iterables of feature names "
                    f"(one iterable per instance), but element {k} is a {type(doc).__name__} "
                    f"({doc[:40]!r}); wrap a flat list of names in a list: fit([names])"
                )
            counts.update(doc)
        bad = next((name for name in counts if not isinstance(name, str)), None)
        if bad is not None:
            raise InputError(
                f"feature names must be str, got {type(bad).__name__} {bad!r}"
            )
        ids, names = self._ids, self._names
        min_count = self.min_count
        for name, count in counts.items():  # Counter keeps first-insertion order
            if count >= min_count and name not in ids:
                ids[name] = len(names)
                names.append(name)
        self._frozen = True
        return self

    def add(self, name: str) -> int:
        """Give ``name`` the next id (or return its existing id); only before freezing."""
        self._check_not_frozen(f"add {name!r}")
        if not isinstance(name, str):
            raise InputError(f"feature names must be str, got {type(name).__name__} {name!r}")
        i = self._ids.get(name)
        if i is None:
            i = self._ids[name] = len(self._names)
            self._names.append(name)
        return i

    def freeze(self) -> "FeatureIndex":
        """Stop accepting new names.  Returns ``self``."""
        self._frozen = True
        return self

    @property
    def frozen(self) -> bool:
        return self._frozen

    # queries ------------------------------------------------------------------------
    def lookup(self, name: str) -> int:
        return self._ids.get(name, -1)

    def lookup_many(self, names: Iterable[str]) -> np.ndarray:
        ids = self._ids
        return np.fromiter(
            (i for i in map(ids.get, names) if i is not None), dtype=np.int64
        )

    def lookup_all(self, names) -> np.ndarray:
        return np.fromiter(map(self._ids.get, names, itertools.repeat(-1, len(names))),
                           dtype=np.int64, count=len(names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name) -> bool:
        return name in self._ids

    @property
    def names(self) -> list[str]:
        """Feature names in id order (a copy)."""
        return list(self._names)

    def __repr__(self) -> str:
        state = "frozen" if self._frozen else "open"
        return f"FeatureIndex(min_count={self.min_count}, n_features={len(self)}, {state})"

    # saving -------------------------------------------------------------------------
    def to_arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        """Names as one UTF-8 byte blob plus offsets (every str round-trips exactly,
        including tabs, newlines, NUL and lone surrogates)."""
        encoded = [name.encode(_ENCODING, _ERRORS) for name in self._names]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)),
                      out=offsets[1:])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        return {
            prefix + "kind": _kind_array(self.kind),
            prefix + "names_utf8": blob,
            prefix + "names_offsets": offsets,
            prefix + "min_count": np.array(self.min_count, dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays, prefix: str = "") -> "FeatureIndex":
        """Rebuild a frozen index from ``to_arrays`` output (raises ModelFormatError)."""
        kind = str(_get_array(arrays, prefix + "kind"))
        if kind != cls.kind:
            raise ModelFormatError(
                f"arrays hold a feature index of kind {kind!r}, expected {cls.kind!r}"
            )
        blob = _get_array(arrays, prefix + "names_utf8")
        offsets = _get_array(arrays, prefix + "names_offsets")
        min_count = _get_array(arrays, prefix + "min_count")
        if (
            blob.dtype != np.uint8 or blob.ndim != 1
            or offsets.ndim != 1 or offsets.size < 1 or offsets.dtype.kind not in "iu"
            or offsets[0] != 0 or offsets[-1] != blob.size
            or np.any(np.diff(offsets) < 0)
        ):
            raise ModelFormatError(
                f"feature index arrays are inconsistent: names_utf8 has dtype {blob.dtype} "
                f"and {blob.size} bytes, names_offsets has {offsets.size} entries; the model "
                f"file is damaged"
            )
        data = blob.tobytes()
        bounds = offsets.tolist()
        try:
            names = [
                data[a:b].decode(_ENCODING, _ERRORS) for a, b in zip(bounds[:-1], bounds[1:])
            ]
        except UnicodeDecodeError as exc:
            raise ModelFormatError(
                f"feature names are not valid UTF-8 ({exc}); the model file is damaged"
            ) from None
        index = cls(min_count=int(min_count))
        index._names = names
        index._ids = {name: i for i, name in enumerate(names)}
        if len(index._ids) != len(names):
            raise ModelFormatError(
                "feature index holds duplicate names; the model file is damaged"
            )
        index._frozen = True
        return index


def _murmur(name: str) -> int:
    """MurmurHash3 (seed 0, unsigned) of the UTF-8 bytes of ``name``.

    Equal to ``murmurhash3_32(name, seed=0, positive=True)`` for every encodable str; lone
    surrogates are hashed through their surrogatepass bytes instead of raising.
    """
    try:
        return murmurhash3_32(name, seed=0, positive=True)
    except UnicodeEncodeError:
        return murmurhash3_32(name.encode(_ENCODING, _ERRORS), seed=0, positive=True)


class HashingIndex(BaseFeatureIndex):
    """Feature ids by hashing: ``murmurhash3_32(name, seed=0, positive=True) % 2**n_bits``.

    Needs no fitting and never drops a name; distinct names may share an id.  Always
    frozen.  ``fit``, ``add`` and ``freeze`` exist so that it can stand in for a
    ``FeatureIndex``; they change nothing.
    """

    kind = "hashing"

    def __init__(self, n_bits: int = 20):
        if (
            isinstance(n_bits, bool)
            or not isinstance(n_bits, (int, np.integer))
            or not 1 <= n_bits <= 32
        ):
            raise ConfigError(f"n_bits must be an integer in [1, 32], got {n_bits!r}")
        self.n_bits = int(n_bits)
        self._size = 1 << self.n_bits

    def fit(self, documents=None) -> "HashingIndex":
        return self

    def add(self, name: str) -> int:
        return self.lookup(name)

    def freeze(self) -> "HashingIndex":
        return self

    @property
    def frozen(self) -> bool:
        return True

    def lookup(self, name: str) -> int:
        if not isinstance(name, str):
            raise InputError(f"feature names must be str, got {type(name).__name__} {name!r}")
        return _murmur(name) % self._size

    def lookup_many(self, names: Iterable[str]) -> np.ndarray:
        size = self._size
        if not isinstance(names, (list, tuple)):
            names = list(names)
        try:
            return np.fromiter(
                (murmurhash3_32(n, seed=0, positive=True) % size for n in names),
                dtype=np.int64, count=len(names),
            )
        except UnicodeEncodeError:  # a lone surrogate: take the slow path
            return np.fromiter((_murmur(n) % size for n in names), dtype=np.int64,
                               count=len(names))

    def lookup_all(self, names) -> np.ndarray:
        return self.lookup_many(names)  # every name has an id

    def __len__(self) -> int:
        return self._size

    def __contains__(self, name) -> bool:
        return isinstance(name, str)

    def __repr__(self) -> str:
        return f"HashingIndex(n_bits={self.n_bits})"

    def to_arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        return {
            prefix + "kind": _kind_array(self.kind),
            prefix + "n_bits": np.array(self.n_bits, dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays, prefix: str = "") -> "HashingIndex":
        kind = str(_get_array(arrays, prefix + "kind"))
        if kind != cls.kind:
            raise ModelFormatError(
                f"arrays hold a feature index of kind {kind!r}, expected {cls.kind!r}"
            )
        n_bits = _get_array(arrays, prefix + "n_bits")
        try:
            return cls(n_bits=int(n_bits))
        except (ConfigError, TypeError) as exc:
            raise ModelFormatError(f"bad hashing index in model file: {exc}") from None


FEATURE_INDEX_KINDS: dict[str, type[BaseFeatureIndex]] = {
    FeatureIndex.kind: FeatureIndex,
    HashingIndex.kind: HashingIndex,
}


def _valid_kinds() -> str:
    return ", ".join(repr(k) for k in sorted(FEATURE_INDEX_KINDS))


def make_feature_index(kind: str = "index", **params) -> BaseFeatureIndex:
    """Build a feature map by name: ``"index"`` (FeatureIndex) or ``"hashing"``."""
    try:
        cls = FEATURE_INDEX_KINDS[kind]
    except (KeyError, TypeError):
        raise ConfigError(
            f"unknown feature index kind {kind!r}; valid kinds are {_valid_kinds()}"
        ) from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(f"bad parameters for feature index kind {kind!r}: {exc}") from None


def feature_index_from_arrays(arrays, prefix: str = "") -> BaseFeatureIndex:
    """Restore whichever kind of feature map ``to_arrays`` saved under ``prefix``."""
    kind = str(_get_array(arrays, prefix + "kind"))
    try:
        cls = FEATURE_INDEX_KINDS[kind]
    except KeyError:
        raise ModelFormatError(
            f"unknown feature index kind {kind!r} in model file; this library reads "
            f"{_valid_kinds()}"
        ) from None
    return cls.from_arrays(arrays, prefix)
