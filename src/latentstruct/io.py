"""Model files: JSON metadata plus numpy arrays in one zip file, never pickle.

A model file is an ``.npz`` archive written by ``np.savez_compressed`` (one ``<name>.npy``
member per array) with one extra member, ``metadata.json`` (UTF-8 JSON), added with the
``zipfile`` module.  ``np.load(path, allow_pickle=False)`` can open it directly.

The metadata always holds::

    format_version  int   FORMAT_VERSION of the library that wrote the file
    library_version str   latentstruct.__version__ of that library
    task            str   task name, e.g. "chunk" or "pos"
    learner         str   learner name
    task_params     dict  the task's parameters
    learner_params  dict  the learner's hyperparameters
    array_names     list  names of the arrays stored in the file

plus anything else the caller adds.  Files are written atomically.

A model file may come from anyone, so loading trusts none of it: before anything is read,
the sizes the zip directory declares are checked (``metadata.json`` at most 16 MiB, each
array and all arrays together at most ``max_model_bytes()``, 4 GiB by default), then each
array's npy header (its dtype must be bool, integer, float or -- where allowed -- text, and
its shape must fit the limit and match the member's size) before its data is allocated.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .version import __version__
from latentstruct.data.atomic import atomic_write
from latentstruct.data.path_rule import env_byte_limit
from latentstruct.exceptions import ModelFormatError

__all__ = ["FORMAT_VERSION", "METADATA_MEMBER", "MAX_METADATA_BYTES", "DEFAULT_MAX_MODEL_BYTES",
           "MAX_MODEL_BYTES_ENV", "max_model_bytes", "save_model", "load_model",
           "inspect_model", "open_zip", "check_zip_members", "check_array_member",
           "read_array_member", "CORRUPTION_ERRORS"]

FORMAT_VERSION = 1
METADATA_MEMBER = "metadata.json"
#: largest uncompressed metadata.json read (real ones are a few kB)
MAX_METADATA_BYTES = 16 * 2**20
#: default largest uncompressed size of one array, and of all arrays of a file
DEFAULT_MAX_MODEL_BYTES = 4 * 2**30
#: environment variable that overrides DEFAULT_MAX_MODEL_BYTES
MAX_MODEL_BYTES_ENV = "LATENTSTRUCT_MAX_MODEL_BYTES"
# deflate's largest expansion is about 1032:1
_MAX_DEFLATE_RATIO = 1040
# array dtype kinds a model file may hold besides text: bool, signed, unsigned, float
_NUMERIC_KINDS = frozenset("biuf")

# key -> (accepted types, description used in messages)
_REQUIRED_KEYS: dict[str, tuple[type, str]] = {
    "format_version": (int, "an integer"),
    "task": (str, "a string"),
    "learner": (str, "a string"),
    "task_params": (dict, "a JSON object"),
    "learner_params": (dict, "a JSON object"),
    "array_names": (list, "a list of strings"),
}

# Errors that a damaged zip / npy / deflate stream can raise while being read (members with
# an unknown compression method are refused by _check_members before anything is read).
_CORRUPTION_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
                      zlib.error, KeyError, OSError)


def _not_a_model(path, detail: str) -> ModelFormatError:
    return ModelFormatError(
        f"model file {os.fspath(path)} is truncated or not a latentstruct model ({detail}); "
        f"re-save or re-train the model"
    )


# --------------------------------------------------------------------------------------
# JSON conversion
# --------------------------------------------------------------------------------------
def _to_json(value, where: str):
    """A JSON-ready copy of ``value``: numpy scalars become Python scalars, tuples lists.

    Anything else that JSON cannot hold (arbitrary objects, arrays, non-string keys) is
    rejected with a message naming where it was found.
    """
    if isinstance(value, np.generic):  # before the Python types: np.float64 is a float
        if isinstance(value, (np.bool_, np.integer, np.floating, np.str_)):
            return value.item()
        raise ModelFormatError(
            f"cannot save model metadata: {where} is a numpy {value.dtype} scalar, which JSON "
            f"cannot hold; convert it to a bool, int, float or str"
        )
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if isinstance(key, np.str_):
                key = str(key)
            if not isinstance(key, str):
                raise ModelFormatError(
                    f"cannot save model metadata: {where} has the key {key!r} of type "
                    f"{type(key).__name__}; JSON object keys must be strings"
                )
            out[key] = _to_json(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_to_json(item, f"{where}[{k}]") for k, item in enumerate(value)]
    if isinstance(value, np.ndarray):
        raise ModelFormatError(
            f"cannot save model metadata: {where} is a numpy array of shape {value.shape}; "
            f"put arrays in the `arrays` argument (or convert a small one with .tolist())"
        )
    raise ModelFormatError(
        f"cannot save model metadata: {where} is a {type(value).__module__}."
        f"{type(value).__qualname__} object, which is not JSON-serialisable; store only "
        f"dicts, lists, strings, numbers, booleans and None"
    )


def _check_schema(metadata, path, saving: bool) -> None:
    """Raise ModelFormatError unless ``metadata`` has the required keys with the right types."""
    where = "cannot save model:" if saving else f"model file {os.fspath(path)}:"
    if not isinstance(metadata, dict):
        raise ModelFormatError(
            f"{where} metadata must be a JSON object, got {type(metadata).__name__}"
        )
    for key, (kind, description) in _REQUIRED_KEYS.items():
        if key not in metadata:
            raise ModelFormatError(
                f"{where} metadata lacks the required key {key!r} ({description}); "
                + ("add it to the metadata" if saving
                   else "the file is damaged or was not written by latentstruct.save_model")
            )
        value = metadata[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ModelFormatError(
                f"{where} metadata key {key!r} must be {description}, got "
                f"{type(value).__name__} {value!r}"
            )
    bad = [n for n in metadata["array_names"] if not isinstance(n, str)]
    if bad:
        raise ModelFormatError(
            f"{where} metadata key 'array_names' must be a list of strings, got {bad[0]!r}"
        )


# --------------------------------------------------------------------------------------
# saving
# --------------------------------------------------------------------------------------
def save_model(path, metadata: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write a model file atomically.

    Parameters
    ----------
    path : destination (conventionally ending in ``.npz``; no suffix is added)
    metadata : JSON-serialisable dict with at least ``task`` (str), ``learner`` (str),
        ``task_params`` (dict) and ``learner_params`` (dict).  Numpy scalars are converted;
        other objects are rejected.  ``format_version``, ``library_version`` and
        ``array_names`` are set here (values passed in are replaced).
    arrays : name -> numpy array (bool, integer, float or fixed-width str dtypes; object
        arrays are rejected because they would need pickle, and so are the other kinds,
        which ``load_model`` refuses).
    """
    if not isinstance(metadata, Mapping):
        raise ModelFormatError(
            f"cannot save model: metadata must be a dict, got {type(metadata).__name__}"
        )
    if not isinstance(arrays, Mapping):
        raise ModelFormatError(
            f"cannot save model: arrays must be a dict of name -> numpy array, got "
            f"{type(arrays).__name__}"
        )
    clean_arrays: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if not isinstance(name, str) or not name or name == METADATA_MEMBER:
            raise ModelFormatError(
                f"cannot save model: array name {name!r} is not allowed; use a non-empty "
                f"string other than {METADATA_MEMBER!r}"
            )
        array = np.asarray(array)
        if array.dtype.hasobject:
            raise ModelFormatError(
                f"cannot save model: array {name!r} has dtype object, which cannot be stored "
                f"without pickle; convert it to a numeric or fixed-width string dtype"
            )
        dtype = array.dtype
        if dtype.kind not in _NUMERIC_KINDS | {"U"} or dtype.fields is not None:
            # what load_model accepts: bool, integer, float and str arrays
            raise ModelFormatError(
                f"cannot save model: array {name!r} has dtype {dtype}; model files hold bool, "
                f"integer, float or fixed-width str arrays; convert it to one of those"
            )
        clean_arrays[name] = array

    meta = _to_json(dict(metadata), "metadata")
    meta["format_version"] = FORMAT_VERSION
    meta["library_version"] = __version__
    meta["array_names"] = list(clean_arrays)
    _check_schema(meta, path, saving=True)
    try:
        text = json.dumps(meta, ensure_ascii=False, indent=1, sort_keys=True,
                          allow_nan=True)
    except (TypeError, ValueError) as exc:  # pragma: no cover - _to_json rejects these first
        raise ModelFormatError(
            f"cannot save model: metadata is not JSON-serialisable: {exc}") from exc

    with atomic_write(path, "w+b") as fh:
        np.savez_compressed(fh, **clean_arrays)
        fh.seek(0)
        with zipfile.ZipFile(fh, mode="a", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(METADATA_MEMBER, text.encode("utf-8"))


# --------------------------------------------------------------------------------------
# limits: a model file may come from anywhere, so its sizes are checked before reading
# --------------------------------------------------------------------------------------
def max_model_bytes() -> int:
    """The largest uncompressed size (bytes) of one array and of all arrays of a model file:
    ``$LATENTSTRUCT_MAX_MODEL_BYTES`` if set, else ``DEFAULT_MAX_MODEL_BYTES`` (4 GiB)."""
    return env_byte_limit(MAX_MODEL_BYTES_ENV, DEFAULT_MAX_MODEL_BYTES)


def _too_big(path, what: str, size: int, limit: int, scope: str) -> ModelFormatError:
    # the metadata's limit is fixed; the arrays' limit is the user's to raise
    hint = (f" (if you trust it, raise ${MAX_MODEL_BYTES_ENV})"
            if scope in ("one array", "all arrays together") else "")
    return ModelFormatError(
        f"model file {os.fspath(path)}: {what} would take {size} bytes, above the limit of "
        f"{limit} bytes for {scope}; the file is damaged or not a latentstruct model{hint}"
    )


def _check_members(zf: zipfile.ZipFile, path, limit: int,
                   metadata_member: str = METADATA_MEMBER) -> dict[str, zipfile.ZipInfo]:
    """Check the sizes the zip central directory declares, before anything is read.

    zipfile never returns more than a member's declared ``file_size`` (and fails the CRC
    check when the data disagree), so these declared sizes bound what reading can cost.
    ``metadata_member`` (``metadata.json``; SaveLogger files call it ``state.json``) may
    hold up to ``MAX_METADATA_BYTES``; every other member is an array, counted against
    ``limit`` alone and together.
    """
    infos: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in zf.infolist():
        name = info.filename
        if name in infos:
            raise _not_a_model(path, f"the zip archive has two members named {name!r}")
        infos[name] = info
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _not_a_model(path, f"member {name!r} uses zip compression method "
                                     f"{info.compress_type}; model files use deflate")
        if info.flag_bits & 0x1:  # zipfile would ask for a password (a RuntimeError)
            raise _not_a_model(path, f"member {name!r} is encrypted; model files are not")
        size = info.file_size
        if name == metadata_member:
            if size > MAX_METADATA_BYTES:
                raise _too_big(path, metadata_member, size, MAX_METADATA_BYTES, metadata_member)
        elif size > limit:
            raise _too_big(path, f"member {name!r}", size, limit, "one array")
        else:
            total += size
        # deflate expands at most ~1032:1; a member declaring more is a bomb or a lie
        stored = info.compress_type == zipfile.ZIP_STORED and size != info.compress_size
        if stored or size > _MAX_DEFLATE_RATIO * info.compress_size + 1024:
            raise _not_a_model(path, f"member {name!r} declares {size} bytes from "
                                     f"{info.compress_size} compressed bytes, more than the "
                                     f"compression can produce")
    if total > limit:
        raise _too_big(path, "the arrays together", total, limit, "all arrays together")
    return infos


class _CountingReader:
    """A read-only stream that counts the bytes read (the length of an npy header)."""

    def __init__(self, fp):
        self._fp = fp
        self.n_read = 0

    def read(self, size: int = -1) -> bytes:
        data = self._fp.read(size)
        self.n_read += len(data)
        return data


def _array_header(fp, path, name: str):
    """``(shape, fortran_order, dtype, header_bytes)`` of an npy stream (no data read)."""
    counted = _CountingReader(fp)
    version = np.lib.format.read_magic(counted)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(counted)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(counted)
    else:
        raise _not_a_model(path, f"array {name!r} is in npy format version {version}; model "
                                 f"files use versions 1.0 and 2.0")
    return shape, fortran, dtype, counted.n_read


def _check_array(path, name: str, shape, dtype: np.dtype, header_bytes: int,
                 info: zipfile.ZipInfo, limit: int, allow_text: bool) -> None:
    where = f"model file {os.fspath(path)}: array {name!r}"
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise ModelFormatError(
            f"{where} has dtype {dtype}; model arrays are plain bool, integer, float"
            + (" or text" if allow_text else "") + " arrays (never objects or records); the "
            "file is damaged or was not written by latentstruct"
        )
    kinds = _NUMERIC_KINDS | ({"U"} if allow_text else set())
    if dtype.kind not in kinds:
        expected = "bool, integer, float" + (" or text" if allow_text else "")
        raise ModelFormatError(
            f"{where} has dtype {dtype} (kind {dtype.kind!r}); expected {expected}; the file "
            f"is damaged or was not written by latentstruct"
        )
    nbytes = dtype.itemsize
    for dim in shape:
        nbytes *= int(dim)  # Python ints: no overflow
    if nbytes > limit:
        raise _too_big(path, f"array {name!r} of shape {tuple(shape)} and dtype {dtype}",
                       nbytes, limit, "one array")
    if header_bytes + nbytes != info.file_size:
        raise _not_a_model(path, f"array {name!r} declares shape {tuple(shape)} and dtype "
                                 f"{dtype} ({nbytes} bytes), but its zip member holds "
                                 f"{info.file_size - header_bytes} bytes of data")


def check_array_member(zf: zipfile.ZipFile, path, name: str, info: zipfile.ZipInfo,
                       limit: int, allow_text: bool) -> tuple[tuple, np.dtype]:
    """``(shape, dtype)`` of the npy member ``info``, read from its header alone and checked:
    a plain bool/integer/float (or, with ``allow_text``, text) dtype, at most ``limit``
    bytes, and exactly the member's declared size.  No array data is read."""
    with zf.open(info) as fp:
        shape, _, dtype, header_bytes = _array_header(fp, path, name)
    _check_array(path, name, shape, dtype, header_bytes, info, limit, allow_text)
    return tuple(int(d) for d in shape), dtype


def read_array_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """The array of an npy member ``check_array_member`` accepted (its size is known, so
    ``read_array`` allocates no more than that; never unpickles)."""
    with zf.open(info) as fp:
        return np.lib.format.read_array(fp, allow_pickle=False)


def _read_arrays(zf: zipfile.ZipFile, path, names, infos, limit: int,
                 allow_text) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for name in names:
        info = infos[name + ".npy"]
        text_ok = allow_text is None or bool(allow_text(name))
        check_array_member(zf, path, name, info, limit, text_ok)
        arrays[name] = read_array_member(zf, info)
    return arrays


# --------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------
def _read_metadata(zf: zipfile.ZipFile, path) -> dict:
    try:
        raw = zf.read(METADATA_MEMBER)
    except KeyError:
        raise _not_a_model(path, f"the zip archive has no {METADATA_MEMBER} member") from None
    try:
        metadata = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # ValueError: bad JSON or an integer too long to convert; RecursionError: nesting
        detail = str(exc) or type(exc).__name__
        raise _not_a_model(path, f"{METADATA_MEMBER} is not valid UTF-8 JSON: {detail}") from None
    if not isinstance(metadata, dict):
        raise _not_a_model(
            path, f"{METADATA_MEMBER} holds a {type(metadata).__name__}, not a JSON object"
        )
    return metadata


def _validate(metadata: dict, members: set[str], path, expected_task) -> None:
    name = os.fspath(path)
    version = metadata.get("format_version")
    if version is None:
        raise ModelFormatError(
            f"model file {name}: metadata lacks the required key 'format_version'; the file "
            f"is damaged or was not written by latentstruct.save_model"
        )
    if isinstance(version, bool) or not isinstance(version, int):
        raise ModelFormatError(
            f"model file {name}: metadata key 'format_version' must be an integer, got "
            f"{type(version).__name__} {version!r}"
        )
    if version != FORMAT_VERSION:
        written_by = metadata.get("library_version", "an unknown version")
        raise ModelFormatError(
            f"model file {name} has format version {version} (written by latentstruct "
            f"{written_by}), but this library (latentstruct {__version__}) reads format "
            f"version {FORMAT_VERSION}; use a matching latentstruct version or re-train the "
            f"model"
        )
    _check_schema(metadata, path, saving=False)
    missing = [a for a in metadata["array_names"] if a + ".npy" not in members]
    if missing:
        raise ModelFormatError(
            f"model file {name}: arrays listed in its metadata are missing from the file: "
            f"{', '.join(repr(a) for a in missing)}; the file is damaged"
        )
    listed = {a + ".npy" for a in metadata["array_names"]} | {METADATA_MEMBER}
    unlisted = sorted(members - listed)
    if unlisted:
        raise ModelFormatError(
            f"model file {name} holds the member {unlisted[0]!r}"
            + (f" (and {len(unlisted) - 1} more)" if len(unlisted) > 1 else "")
            + ", which its metadata does not list; a model file holds only metadata.json and "
            "the arrays named in its 'array_names'. The file is damaged or edited: re-save or "
            "re-train the model"
        )
    if expected_task is not None and metadata["task"] != expected_task:
        raise ModelFormatError(
            f"model file {name} is a {metadata['task']!r} model, expected {expected_task!r}; "
            f"pass a model trained for the {expected_task!r} task"
        )


def check_zip_members(zf: zipfile.ZipFile, path, metadata_member: str,
                      limit: int | None = None) -> dict[str, zipfile.ZipInfo]:
    """The members of a zip archive by name, after the model loader's checks of what the
    central directory declares (one name each; stored or deflated, unencrypted; the
    ``metadata_member`` at most ``MAX_METADATA_BYTES``; each other member and all of them
    together at most ``limit``, default ``max_model_bytes()``; no member declaring more than
    deflate can expand to).  For other zip formats that hold JSON and npy arrays."""
    return _check_members(zf, path, max_model_bytes() if limit is None else limit,
                          metadata_member)


#: what reading a damaged zip, deflate stream or npy member can raise
CORRUPTION_ERRORS = _CORRUPTION_ERRORS


def open_zip(path, not_a_zip=None) -> zipfile.ZipFile:
    """A zip archive opened for reading, or ModelFormatError saying why not: a missing
    file, a directory, a FIFO, socket or device (refused before opening: it would block),
    no permission, or not a zip archive (``not_a_zip(detail)`` makes that error, for
    formats other than model files)."""
    return _open_zip(path, not_a_zip)


def _open_zip(path, not_a_zip=None) -> zipfile.ZipFile:
    name = os.fspath(path)
    if not Path(path).exists():
        raise ModelFormatError(
            f"no such file: {name} (working directory: {Path.cwd()}); check the model path"
        )
    if Path(path).is_dir():
        raise ModelFormatError(f"model path {name} is a directory, expected a model file")
    if not Path(path).is_file():  # a FIFO would block on open; zip needs random access
        raise ModelFormatError(
            f"model path {name} is not a regular file (a FIFO, socket or device); a model "
            f"file is read with random access (a zip archive): give the path of the file itself"
        )
    try:
        return zipfile.ZipFile(path, mode="r")
    except PermissionError:
        raise ModelFormatError(f"permission denied: cannot read model file {name}") from None
    except _CORRUPTION_ERRORS as exc:
        make = _not_a_model if not_a_zip is None else (lambda _, detail: not_a_zip(detail))
        raise make(path, f"{type(exc).__name__}: {exc}") from None


def inspect_model(path, *, expected_task: str | None = None) -> dict:
    """Read and check only the metadata of a model file (arrays are not loaded)."""
    limit = max_model_bytes()
    with _open_zip(path) as zf:
        try:
            infos = _check_members(zf, path, limit)
            metadata = _read_metadata(zf, path)
        except ModelFormatError:
            raise
        except _CORRUPTION_ERRORS as exc:
            raise _not_a_model(path, f"{type(exc).__name__}: {exc}") from None
    _validate(metadata, set(infos), path, expected_task)
    return metadata


def load_model(path, *, expected_task: str | None = None,
               allow_text=None) -> tuple[dict, dict[str, np.ndarray]]:
    """Load a model file written by ``save_model``; return ``(metadata, arrays)``.

    Raises ModelFormatError when the file is missing, truncated or corrupt, is not a
    latentstruct model, has another format version, lacks a required metadata key, or
    (with ``expected_task``) belongs to another task.  Never unpickles anything.

    A model file may come from anywhere, so before anything is read the sizes are checked
    against limits: ``metadata.json`` at most ``MAX_METADATA_BYTES`` (16 MiB), each array
    and all arrays together at most ``max_model_bytes()`` (4 GiB, or
    ``$LATENTSTRUCT_MAX_MODEL_BYTES``), and each array's npy header must agree with its zip
    member.  Array dtypes must be bool, integer or float; fixed-width text only for the
    arrays ``allow_text(name)`` accepts (``allow_text=None``: any array, as ``save_model``
    stores text arrays).
    """
    limit = max_model_bytes()
    with _open_zip(path) as zf:
        try:
            infos = _check_members(zf, path, limit)
            metadata = _read_metadata(zf, path)
            _validate(metadata, set(infos), path, expected_task)
            arrays = _read_arrays(zf, path, metadata["array_names"], infos, limit, allow_text)
        except ModelFormatError:
            raise
        except _CORRUPTION_ERRORS as exc:
            raise _not_a_model(path, f"{type(exc).__name__}: {exc}") from None
    return metadata, arrays
