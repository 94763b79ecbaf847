"""Read model files written by CRFsuite (python-crfsuite, sklearn-crfsuite, ``crfsuite learn``).

CRFsuite stores a first-order linear-chain CRF in one little-endian binary file (its
``crf1d`` model writer; the layout below was worked out from CRFsuite's public description
and checked against files that ``pycrfsuite.Trainer`` writes).  This module reads it with
``struct`` and numpy, whole, into a :class:`CRFsuiteModel`; no CRFsuite code is involved.

File layout (all integers unsigned 32-bit little-endian, offsets from the start of the file)::

    header (48 bytes)
      0  magic "lCRF"       4  file size          8  model type "FOMC"   12  version (100)
     16  number of features (CRFsuite leaves it 0; the FEAT chunk counts them)
     20  number of labels L 24  number of attributes A
     28  offset of FEAT     32  offset of the labels CQDB   36  offset of the attributes CQDB
     40  offset of LFRF     44  offset of AFRF
    FEAT chunk: "FEAT", chunk size, K, then K records of 20 bytes:
      type (0 state, 1 transition), source, destination, weight (float64)
      state feature:      source = attribute id, destination = label id
      transition feature: source = previous label id, destination = next label id
    CQDB chunks (labels, then attributes): a "constant quark database", string <-> id:
      "CQDB", chunk size, flags, byte-order mark 0x62445371, backward-array size, offset of
      the backward array; 256 hash-table references (offset, slot count); records
      (int32 id, uint32 key size, key bytes ending in NUL); the hash tables (pairs of hash,
      record offset); the backward array (record offset of id 0, 1, ...).  Offsets inside
      a CQDB count from the start of the chunk.
    LFRF chunk (4-byte aligned): "LFRF", chunk size, n (L + 2 as CRFsuite writes it: two
      unused slots, left 0), n offsets; at each offset a count then that many feature ids,
      the transition features leaving label l.
    AFRF chunk (4-byte aligned): "AFRF", chunk size, A, A offsets; the state features of
      attribute a, the same way.

Scoring (what CRFsuite's tagger computes, and what the arrays here mean): the score of
labels ``y`` for items ``x_1..x_T``, each item a set of (attribute, value) pairs, is
``Σ_t Σ_(a, v) in x_t v · W[a, y_t] + Σ_(t ≥ 2) transitions[y_(t-1), y_t]``; there is no
start, end or bias term (a "bias" attribute is an attribute like any other), and attributes
the model does not know are ignored.  CRFsuite drops zero weights and the attributes left
without a state feature when it saves, so absent entries are zeros.

A model file may come from anyone, so everything is checked before it is used: the file
size (at most :func:`max_crfsuite_bytes`), the magic, type and version, every chunk's tag,
size and place inside the file, the counts, every id (in range, of the right feature type,
referenced from the right reference list exactly once), finite weights, and the names
(strict UTF-8, unique, the CQDB's hash tables pointing at exactly its records; the hash
values themselves are not recomputed).  The format has no checksum, so a damaged weight
that is still a finite number cannot be noticed.  Anything else, a
truncated file or a file of another format, is one :class:`~latentstruct.exceptions.
ModelFormatError` that names the file, what was expected and what was found.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np

from latentstruct.data.path_rule import env_byte_limit, open_input
from latentstruct.exceptions import InputError, ModelFormatError

__all__ = ["CRFsuiteModel", "read_crfsuite_model", "max_crfsuite_bytes",
           "DEFAULT_MAX_CRFSUITE_BYTES", "MAX_CRFSUITE_BYTES_ENV", "MAX_CRFSUITE_LABELS"]

#: the largest CRFsuite model file read (its offsets are 32-bit, so no file exceeds 4 GiB)
DEFAULT_MAX_CRFSUITE_BYTES = 2 * 1024 ** 3
#: environment variable that overrides DEFAULT_MAX_CRFSUITE_BYTES
MAX_CRFSUITE_BYTES_ENV = "LATENTSTRUCT_MAX_CRFSUITE_BYTES"
#: the most labels read: the transition matrix is L × L float64 (10,000 labels: 800 MB)
MAX_CRFSUITE_LABELS = 10_000

_MAGIC = b"lCRF"
_MODEL_TYPE = b"FOMC"
_VERSION = 100
_HEADER = struct.Struct("<4sI4sIIIIIIIII")  # 48 bytes
_CHUNK = struct.Struct("<4sII")  # tag, size, count: 12 bytes
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
_CQDB_HEADER = struct.Struct("<4sIIIII")  # 24 bytes
_CQDB_TABLES = 256
_CQDB_DATA = _CQDB_HEADER.size + 8 * _CQDB_TABLES  # first record: 2,072
_CQDB_BYTEORDER = 0x62445371
_FT_STATE, _FT_TRANS = 0, 1
_REWRITE = ("write the model again (pycrfsuite.Trainer.train, or `crfsuite learn -m`) or give "
            "the right file")


def max_crfsuite_bytes() -> int:
    """The largest CRFsuite model file read: ``$LATENTSTRUCT_MAX_CRFSUITE_BYTES`` if set,
    else ``DEFAULT_MAX_CRFSUITE_BYTES`` (2 GiB)."""
    return env_byte_limit(MAX_CRFSUITE_BYTES_ENV, DEFAULT_MAX_CRFSUITE_BYTES)


@dataclass(frozen=True, eq=False)
class CRFsuiteModel:
    """A CRFsuite first-order CRF, as read by :func:`read_crfsuite_model`.

    Attributes
    ----------
    path : str
        The file it was read from.
    labels : tuple of str
        Label names by label id (CRFsuite's order: first appearance in the training data).
    attributes : tuple of str
        Attribute names by attribute id, exactly as CRFsuite stores them (python-crfsuite
        turns an item ``{"word": "the", "len": 0.3, "shape": {"upper": 1.0}}`` into the
        attributes ``"word:the"`` (value 1), ``"len"`` (value 0.3) and ``"shape:upper"``;
        a list item ``["bias"]`` into ``"bias"`` with value 1).  Only attributes with at
        least one state feature are stored.
    state_attributes, state_labels : int64 arrays (K_s,)
        The state features: ``W[state_attributes[k], state_labels[k]] =
        state_weights[k]``, sorted by attribute then label; every other entry of ``W`` is 0.
    state_weights : float64 array (K_s,)
    transitions : float64 array (L, L)
        ``transitions[prev, next]``: the score of label ``next`` right after ``prev``
        (0 where CRFsuite stores no transition feature).  There are no start or end scores.
    model_type : str
        ``"FOMC"`` (first-order Markov CRF, CRFsuite's only type).
    version : int
        The format version (100).
    n_features : int
        State plus transition features in the file.
    file_size : int
        Bytes.

    Arrays are read-only.  ``W`` as a matrix: :meth:`state_matrix`.
    """

    path: str
    labels: tuple[str, ...]
    attributes: tuple[str, ...]
    state_attributes: np.ndarray
    state_labels: np.ndarray
    state_weights: np.ndarray
    transitions: np.ndarray
    model_type: str
    version: int
    n_features: int
    file_size: int

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_attributes(self) -> int:
        return len(self.attributes)

    def label_ids(self) -> dict[str, int]:
        """``{label name: label id}``."""
        return {name: k for k, name in enumerate(self.labels)}

    def attribute_ids(self) -> dict[str, int]:
        """``{attribute name: attribute id}`` (the CRFsuite string of each attribute)."""
        return {name: k for k, name in enumerate(self.attributes)}

    def state_matrix(self):
        """``W`` as a ``scipy.sparse.csr_matrix`` of shape (n_attributes, n_labels)."""
        from scipy.sparse import csr_matrix

        return csr_matrix((self.state_weights, (self.state_attributes, self.state_labels)),
                          shape=(self.n_attributes, self.n_labels))


class _File:
    """The bytes of one model file, with range-checked readers whose failures name it."""

    def __init__(self, name: str, data: bytes):
        self.name = name
        self.data = data
        self.size = len(data)

    def error(self, what: str, expected: str, found: str, fix: str = _REWRITE) -> ModelFormatError:
        return ModelFormatError(f"CRFsuite model file {self.name}: {what}: expected {expected}, "
                                f"found {found}; {fix}")

    def need(self, offset: int, length: int, what: str) -> None:
        """Refuse unless bytes [offset, offset + length) lie inside the file."""
        if offset < 0 or offset + length > self.size:
            raise self.error(
                f"{what} lies outside the file (the file is truncated or damaged)",
                f"{length:,} bytes at offset {offset:,}", f"a file of {self.size:,} bytes")

    def unpack(self, fmt: struct.Struct, offset: int, what: str) -> tuple:
        self.need(offset, fmt.size, what)
        return fmt.unpack_from(self.data, offset)

    def u32(self, offset: int, count: int, what: str) -> np.ndarray:
        self.need(offset, 4 * count, what)
        return np.frombuffer(self.data, dtype="<u4", count=count, offset=offset).astype(np.int64)


def _describe_foreign(head: bytes) -> str:
    """What a file that does not start with CRFsuite's magic looks like."""
    if not head:
        return "an empty file"
    if head.startswith(b"\x89PNG"):
        return "a PNG image"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return ("a zip archive (a latentstruct .npz model is one: read it with "
                "latentstruct.load or latentstruct.io.load_model)")
    if head.startswith(b"\x93NUMPY"):
        return "a numpy .npy array"
    if head.startswith(b"\x80") and len(head) > 1 and head[1] <= 5:
        return "a Python pickle (never loaded: a pickle can run code)"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\t\r\n" for c in text):
        return f"text starting {text[:24]!r}"
    return f"the bytes {head[:8].hex(' ')}"


def _read_bytes(path) -> _File:
    name = os.fspath(path)
    name = os.fsdecode(name) if isinstance(name, bytes) else name
    limit = max_crfsuite_bytes()
    try:
        with open_input(path) as fh:
            data = fh.read(limit + 1)
    except InputError as exc:
        raise ModelFormatError(f"cannot read CRFsuite model file: {exc}") from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read CRFsuite model file {name}: "
                               f"{exc.strerror or exc}") from None
    if len(data) > limit:
        raise ModelFormatError(
            f"CRFsuite model file {name} is over {limit:,} bytes, the largest read "
            f"(${MAX_CRFSUITE_BYTES_ENV} raises it); check that this is the right file")
    return _File(name, data)


def _header(f: _File) -> dict:
    if 0 < f.size < 4 and _MAGIC.startswith(f.data):
        raise f.error("the file is truncated", f"a header of {_HEADER.size} bytes",
                      f"a file of {f.size} bytes")
    if f.size < 4 or f.data[:4] != _MAGIC:
        raise f.error("not a CRFsuite model", f"a file starting with the magic {_MAGIC!r}",
                      _describe_foreign(f.data[:64]),
                      "give a model file that CRFsuite or python-crfsuite wrote")
    if f.size < _HEADER.size:
        raise f.error("the file is truncated", f"a header of {_HEADER.size} bytes",
                      f"a file of {f.size} bytes")
    (_, size, mtype, version, n_feat, n_labels, n_attrs, off_feat, off_labels, off_attrs,
     off_lrefs, off_arefs) = _HEADER.unpack_from(f.data, 0)
    if size != f.size:
        state = "truncated" if f.size < size else "longer than it says (damaged)"
        raise f.error(f"the file is {state}", f"{size:,} bytes (the size in its header)",
                      f"{f.size:,} bytes")
    if mtype != _MODEL_TYPE:
        raise f.error("unknown model type", f"{_MODEL_TYPE!r} (a first-order CRF)",
                      repr(mtype), "only CRFsuite's first-order CRF (crf1d) is read")
    if version != _VERSION:
        raise f.error("unknown format version", str(_VERSION), str(version),
                      "only CRFsuite's format version 100 is read")
    if not 1 <= n_labels <= MAX_CRFSUITE_LABELS:
        raise f.error("number of labels out of range", f"1 to {MAX_CRFSUITE_LABELS:,}",
                      f"{n_labels:,}")
    for what, off in (("FEAT", off_feat), ("labels CQDB", off_labels),
                      ("attributes CQDB", off_attrs), ("LFRF", off_lrefs), ("AFRF", off_arefs)):
        if not _HEADER.size <= off < f.size:
            raise f.error(f"the offset of the {what} chunk is out of range",
                          f"{_HEADER.size} to {f.size - 1:,}", f"{off:,}")
    return dict(n_features=n_feat, n_labels=n_labels, n_attrs=n_attrs, off_feat=off_feat,
                off_labels=off_labels, off_attrs=off_attrs, off_lrefs=off_lrefs,
                off_arefs=off_arefs)


def _chunk(f: _File, offset: int, tag: bytes, what: str) -> tuple[int, int]:
    """(chunk size, item count) of the chunk ``tag`` at ``offset``, which must fit the file."""
    found, size, count = f.unpack(_CHUNK, offset, f"the {what} chunk header")
    if found != tag:
        raise f.error(f"bad {what} chunk at offset {offset:,}", f"the tag {tag!r}", repr(found))
    if size < _CHUNK.size or offset + size > f.size:
        raise f.error(f"the {what} chunk's size does not fit the file",
                      f"{_CHUNK.size} to {f.size - offset:,} bytes", f"{size:,}")
    return size, count


def _features(f: _File, h: dict) -> np.ndarray:
    size, k = _chunk(f, h["off_feat"], b"FEAT", "features (FEAT)")
    if size != _CHUNK.size + _FEATURE.itemsize * k:
        raise f.error("the FEAT chunk's size does not match its feature count",
                      f"{_CHUNK.size} + 20 × {k:,} bytes", f"{size:,} bytes")
    if h["n_features"] not in (0, k):
        raise f.error("the header's feature count disagrees with the FEAT chunk",
                      f"0 or {k:,}", f"{h['n_features']:,}")
    feats = np.frombuffer(f.data, dtype=_FEATURE, count=k, offset=h["off_feat"] + _CHUNK.size)
    bad = np.flatnonzero(feats["type"] > _FT_TRANS)
    if bad.size:
        raise f.error(f"feature {int(bad[0])} has an unknown type",
                      "0 (state) or 1 (transition)", str(int(feats["type"][bad[0]])))
    bad = np.flatnonzero(~np.isfinite(feats["weight"]))
    if bad.size:
        raise f.error(f"feature {int(bad[0])} has a weight that is not finite",
                      "a finite weight", str(float(feats["weight"][bad[0]])))
    L, A = h["n_labels"], h["n_attrs"]
    state = feats["type"] == _FT_STATE
    for mask, field, bound, what in ((state, "src", A, "an attribute"),
                                     (~state, "src", L, "a previous label"),
                                     (np.ones(k, bool), "dst", L, "a label")):
        bad = np.flatnonzero(mask & (feats[field] >= bound))
        if bad.size:
            raise f.error(f"feature {int(bad[0])} refers to {what} id out of range",
                          f"an id below {bound:,}", str(int(feats[field][bad[0]])))
    key = (feats["type"].astype(np.int64) * (max(A, L) + 1) + feats["src"]) * L + feats["dst"]
    uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    if uniq.size < k:
        j = int(first[np.flatnonzero(counts > 1)[0]])
        raise f.error(f"feature {j} (type {int(feats['type'][j])}, source "
                      f"{int(feats['src'][j])}, destination {int(feats['dst'][j])}) occurs "
                      "more than once", "each feature once", f"{int(counts.max())} copies")
    return feats


def _cqdb(f: _File, offset: int, n: int, what: str) -> tuple[str, ...]:
    """The ``n`` strings, by id, of the CQDB chunk at ``offset``."""
    tag, size, _flag, order, bwd_size, bwd_offset = f.unpack(
        _CQDB_HEADER, offset, f"the {what} CQDB header")
    if tag != b"CQDB":
        raise f.error(f"bad {what} chunk at offset {offset:,}", "the tag b'CQDB'", repr(tag))
    if order != _CQDB_BYTEORDER:
        found = ("the big-endian mark (written on a big-endian machine, which is not read)"
                 if order == int.from_bytes(_CQDB_BYTEORDER.to_bytes(4, "little"), "big")
                 else f"0x{order:08x}")
        raise f.error(f"the {what} CQDB's byte-order mark is wrong",
                      f"0x{_CQDB_BYTEORDER:08x}", found)
    if size < _CQDB_DATA or offset + size > f.size:
        raise f.error(f"the {what} CQDB's size does not fit the file",
                      f"{_CQDB_DATA:,} to {f.size - offset:,} bytes", f"{size:,}")
    tables = f.u32(offset + _CQDB_HEADER.size, 2 * _CQDB_TABLES, f"the {what} CQDB tables")
    t_off, t_num = tables[0::2], tables[1::2]
    if int(t_num.sum()) != 2 * n:
        raise f.error(f"the {what} CQDB holds another number of strings than the header says",
                      f"{n:,} strings ({2 * n:,} hash slots)", f"{int(t_num.sum()):,} slots")
    if n == 0:
        return ()
    if bwd_offset < _CQDB_DATA or bwd_size < n or bwd_offset + 4 * n > size:
        raise f.error(f"the {what} CQDB's id-to-string array is out of range",
                      f"{n:,} entries inside the chunk's {size:,} bytes",
                      f"{bwd_size:,} entries at offset {bwd_offset:,}")
    records = f.u32(offset + bwd_offset, n, f"the {what} CQDB id-to-string array")
    bad = np.flatnonzero((records < _CQDB_DATA) | (records + 8 > size))
    if bad.size:
        k = int(bad[0])
        raise f.error(f"{what} id {k}'s record is out of range",
                      f"an offset from {_CQDB_DATA:,} to {size - 8:,}", f"{int(records[k]):,}")
    at = offset + records  # absolute offsets of the records: (int32 id, uint32 key size, key)
    rid = _u32_at(f, at)
    bad = np.flatnonzero(rid != np.arange(n))
    if bad.size:
        k = int(bad[0])
        found = int(rid[k]) - (1 << 32) if rid[k] >= 1 << 31 else int(rid[k])
        raise f.error(f"{what} record {k} carries another id", str(k), str(found))
    ksize = _u32_at(f, at + 4)
    ends = at + 8 + ksize  # one past the key's NUL
    bad = np.flatnonzero((ksize < 1) | (ends > offset + size))
    if not bad.size:
        bytes_ = np.frombuffer(f.data, dtype=np.uint8)
        bad = np.flatnonzero(bytes_[ends - 1] != 0)
    if bad.size:
        k = int(bad[0])
        raise f.error(f"{what} {k}'s name is malformed", "a NUL-terminated string inside the chunk",
                      f"{int(ksize[k]):,} bytes at offset {int(records[k]) + 8:,} of a "
                      f"{size:,}-byte chunk")
    data = f.data
    try:
        names = [data[s:e].decode("utf-8") for s, e in zip((at + 8).tolist(), (ends - 1).tolist())]
    except UnicodeDecodeError:
        for k, (s, e) in enumerate(zip((at + 8).tolist(), (ends - 1).tolist())):
            raw = data[s:e]
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise f.error(f"{what} {k}'s name is not UTF-8", "UTF-8 text",
                              f"the byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of "
                              f"{raw[:40]!r}") from None
        raise  # pragma: no cover - the loop finds the name that failed
    if "\x00" in "".join(names):
        k = next(k for k, name in enumerate(names) if "\x00" in name)
        raise f.error(f"{what} {k}'s name contains a NUL byte", "one NUL, at the end",
                      f"a NUL at byte {names[k].encode('utf-8').index(0) + 1}")
    if len(set(names)) != n:
        seen: dict[str, int] = {}
        for k, name in enumerate(names):
            if name in seen:
                raise f.error(f"the {what} name {name!r} occurs twice", "unique names",
                              f"ids {seen[name]} and {k}")
            seen[name] = k
    # the hash tables (string -> id, what CRFsuite looks names up with) must point at
    # exactly these records, or CRFsuite would read another model than this one
    slots = []
    for t in np.flatnonzero(t_num).tolist():
        start, count = int(t_off[t]), int(t_num[t])
        if start < _CQDB_DATA or start + 8 * count > size:
            raise f.error(f"{what} CQDB hash table {t} is out of range",
                          "a table inside the chunk", f"{count:,} slots at offset {start:,}")
        slots.append(f.u32(offset + start, 2 * count, f"{what} CQDB hash table {t}")[1::2])
    pointed = np.concatenate(slots)
    pointed = np.sort(pointed[pointed != 0])
    if pointed.size != n or not np.array_equal(pointed, np.sort(records)):
        raise f.error(f"the {what} CQDB's hash tables and id-to-string array disagree",
                      f"both pointing at the same {n:,} records",
                      f"{pointed.size:,} records in the hash tables")
    return tuple(names)


def _u32_at(f: _File, positions: np.ndarray) -> np.ndarray:
    """The little-endian uint32 at each byte position (all checked to lie in the file)."""
    b = np.frombuffer(f.data, dtype=np.uint8)
    return (b[positions].astype(np.int64) | (b[positions + 1].astype(np.int64) << 8)
            | (b[positions + 2].astype(np.int64) << 16) | (b[positions + 3].astype(np.int64) << 24))


def _refs(f: _File, offset: int, tag: bytes, n: int, spare: int, feats: np.ndarray,
          ftype: int, what: str) -> None:
    """Check the reference chunk ``tag``: list ``i < n`` holds exactly the features of type
    ``ftype`` whose source is ``i``, and together the lists hold each such feature once."""
    size, count = _chunk(f, offset, tag, what)
    if count not in (n, n + spare):
        raise f.error(f"the {what} chunk has another number of lists",
                      f"{n:,}" + (f" or {n + spare:,}" if spare else ""), f"{count:,}")
    end = offset + size
    first = offset + _CHUNK.size + 4 * count
    if first > end:
        raise f.error(f"the {what} offsets overrun the chunk", f"{count:,} offsets",
                      f"a chunk of {size:,} bytes")
    offsets = f.u32(offset + _CHUNK.size, count, f"the {what} offsets")
    if count > n and offsets[n:].any():
        raise f.error(f"the {what} chunk's unused lists are not empty", "offset 0",
                      f"{int(offsets[n:].max()):,}")
    at = offsets[:n]
    bad = np.flatnonzero((at < first) | (at > end - 4))
    if bad.size:
        i = int(bad[0])
        raise f.error(f"{what} list {i} is out of range",
                      f"an offset from {first:,} to {end - 4:,}", f"{int(at[i]):,}")
    m = _u32_at(f, at)
    n_own = int(np.count_nonzero(feats["type"] == ftype))
    if int(m.sum()) != n_own:  # each is referenced once: checked before anything is allocated
        raise f.error(f"the {what} lists hold another number of references than there are "
                      f"{'transition' if ftype == _FT_TRANS else 'state'} features",
                      f"{n_own:,}", f"{int(m.sum()):,}")
    bad = np.flatnonzero(at + 4 + 4 * m > end)
    if bad.size:
        i = int(bad[0])
        raise f.error(f"{what} list {i} overruns its chunk",
                      f"at most {(end - int(at[i]) - 4) // 4:,} feature ids", f"{int(m[i]):,}")
    owner = np.repeat(np.arange(n, dtype=np.int64), m)
    within = np.arange(owner.size, dtype=np.int64) - np.repeat(np.cumsum(m) - m, m)
    fids = _u32_at(f, np.repeat(at + 4, m) + 4 * within)
    bad = np.flatnonzero(fids >= len(feats))
    if bad.size:
        j = int(bad[0])
        raise f.error(f"{what} list {int(owner[j])} refers to a feature id out of range",
                      f"an id below {len(feats):,}", str(int(fids[j])))
    wrong = (feats["type"][fids] != ftype) | (feats["src"][fids] != owner)
    if wrong.any():
        j = int(np.flatnonzero(wrong)[0])
        fid = int(fids[j])
        raise f.error(f"{what} list {int(owner[j])} refers to feature {fid}, which is not one "
                      f"of its own", f"a feature of type {ftype} with source {int(owner[j])}",
                      f"type {int(feats['type'][fid])}, source {int(feats['src'][fid])}")
    seen = np.bincount(fids, minlength=len(feats))
    bad = np.flatnonzero((feats["type"] == ftype) & (seen != 1))
    if bad.size:
        j = int(bad[0])
        raise f.error(f"feature {j} is referenced {int(seen[j])} times from the {what} chunk",
                      "exactly once", f"{int(seen[j])} times")


def read_crfsuite_model(path) -> CRFsuiteModel:
    """Read a CRFsuite model file (``.crfsuite``, as python-crfsuite and ``crfsuite learn``
    write it) into a :class:`CRFsuiteModel`.

    The whole file is read (at most :func:`max_crfsuite_bytes`, 2 GiB by default) and
    checked (see the module docstring).  Raises
    :class:`~latentstruct.exceptions.ModelFormatError` naming the file, what was expected
    and what was found when it is missing, empty, truncated, of another format (a PNG, a
    zip such as a latentstruct ``.npz`` model, text) or inconsistent.
    """
    f = _read_bytes(path)
    h = _header(f)
    feats = _features(f, h)
    labels = _cqdb(f, h["off_labels"], h["n_labels"], "label")
    attributes = _cqdb(f, h["off_attrs"], h["n_attrs"], "attribute")
    L = len(labels)
    _refs(f, h["off_lrefs"], b"LFRF", L, 2, feats, _FT_TRANS, "label references (LFRF)")
    _refs(f, h["off_arefs"], b"AFRF", len(attributes), 0, feats, _FT_STATE,
          "attribute references (AFRF)")

    state = feats[feats["type"] == _FT_STATE]
    order = np.lexsort((state["dst"], state["src"]))
    state = state[order]
    trans = feats[feats["type"] == _FT_TRANS]
    transitions = np.zeros((L, L), dtype=np.float64)
    transitions[trans["src"].astype(np.int64), trans["dst"].astype(np.int64)] = trans["weight"]
    arrays = [state["src"].astype(np.int64), state["dst"].astype(np.int64),
              state["weight"].astype(np.float64), transitions]
    for a in arrays:
        a.setflags(write=False)
    return CRFsuiteModel(path=f.name, labels=labels, attributes=attributes,
                         state_attributes=arrays[0], state_labels=arrays[1],
                         state_weights=arrays[2], transitions=arrays[3],
                         model_type=_MODEL_TYPE.decode("ascii"), version=_VERSION,
                         n_features=len(feats), file_size=f.size)
