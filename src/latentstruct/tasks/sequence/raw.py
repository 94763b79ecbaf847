"""In-memory data of the sequence tasks (``chunk``, ``pos``, ``citations``): ``make_dataset``.

A sentence of ``X`` comes in one of four kinds (numbers, a 2-D array or a ``(tokens,
array)`` pair: ``tasks.sequence.numeric``; words and feature dicts below), and all
sentences of one ``X`` are of the same kind (a mix is an ``InputError``):

* **templates** -- tokens as the task's files hold them: ``(word, POS)`` pairs for ``chunk``,
  words for ``pos`` and ``citations``.  The task computes its built-in attribute templates
  (word, affixes, shape, window, ...), exactly as for a file: the records are those its
  reader builds (``ChunkSentence``, ``ConlluSentence``, ``Citation``, with ``line=0``).
* **dicts** -- one feature dict per token, the input of sklearn-crfsuite's ``CRF().fit(X, y)``
  (python-crfsuite's ``ItemSequence``), e.g. from its CoNLL tutorial's ``word2features``::

      {"bias": 1.0, "word.lower()": "dogs", "word[-3:]": "ogs", "word.isupper()": False,
       "postag": "NNS", "-1:word.lower()": "the", "BOS": True}

  The token's attributes are exactly the dict's (no built-in templates, no words needed);
  the record is a :class:`DictSentence`.

**Attribute names and values of a feature dict** are python-crfsuite's (``ItemSequence``,
whose ``items()`` shows them; sklearn-crfsuite passes the dicts to it unchanged), so a dict
featurised here gives exactly the attribute names a CRFsuite model file holds:

==============================================  ============================================
value                                           attributes (name: value)
==============================================  ============================================
a string ``{"w": "dogs"}``                      ``"w:dogs"``: 1.0 (``:`` joins key and value)
bytes ``{"w": b"dogs"}``                        the same, the bytes decoded as UTF-8 (bytes
                                                that are no UTF-8 are an ``InputError``)
a number or bool ``{"shop": 0.5}``              ``"shop"``: ``float(value)``; ``True`` is
                                                1.0, ``False`` and ``0`` are kept with the
                                                value 0.0 (an attribute that scores nothing,
                                                as in CRFsuite)
a nested dict ``{"-1": {"w": "the", "n": 2}}``  flattened with ``:``: ``"-1:w:the"``: 1.0,
                                                ``"-1:n"``: 2.0, at any depth
list, tuple or set of strings ``{"k": [...]}``  ``"k:item"``: 1.0 for each item (a set's
                                                items sorted; python-crfsuite refuses a
                                                tuple, latentstruct takes it as a list)
NaN, infinity, magnitude over 1e6               ``InputError`` naming ``X[i][t]`` and the key
(``limits.MAX_ATTRIBUTE_VALUE``)
anything else (None, complex, objects)          ``InputError``
==============================================  ============================================

A value v scales the attribute's features: the emission feature (attribute, label) of a
token contributes ``v * w[attribute, label]`` to a score (CRFsuite's semantics), and
``v`` to the joint feature vector, the CRF's gradient and DISTRO's input rows.  An attribute
named twice in one token (``{"a:b": 1, "a": {"b": 1}}``, a list with a repeat) gets the sum
of its values: the scores CRFsuite gives its two copies.  Keys are strings (or UTF-8
bytes); an attribute whose whole name is empty is refused.  A sentence whose values are all
1 is stored without values; an occurrence with the value 0 names an attribute of the index
(as CRFsuite's) but is left out of the featurised corpus, where it would score nothing, so
sentences whose values are all 0 or 1 (dicts of booleans) keep the binary fast path.

**Models saved before this rule** wrote ``"key=value"`` for a string value and took binary
attributes only (``False``/``0`` absent, any other number refused, repeats kept once).  A
fitted task records its rule (``attribute_names_``: ``"crfsuite"``, saved in the model file
as ``attribute_names``); a model file without it was written under the old rule
(``"legacy"``), and its task keeps featurising dicts that way, so its weights keep meaning
what they meant.  A record made under one rule is refused by a task fitted under the other.

A task records the kind it was fitted on (``attributes_``, saved in the model file) and
refuses to featurise another kind (``tasks.sequence.kinds``): a model trained on feature
dicts cannot be used from the command line (which reads files and cannot run the user's
feature function), and a template model cannot read feature dicts.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Mapping

import numpy as np

from ...data.citations import FIELD_LABEL_FORM, Citation, is_field_label
from ...data.readers import (
    CHUNK_TAG_FORM,
    MAX_LINE_CHARS,
    UPOS_FORM,
    ChunkSentence,
    ConlluSentence,
    excerpt,
    is_chunk_tag,
    is_upos_tag,
)
from ...exceptions import InputError
from ...limits import MAX_ATTRIBUTE_VALUE
from ..base import Dataset
from ..validation import numbers_form, ragged_note, raw_error, raw_examples, raw_string
from .dict_sentence import ATTRIBUTE_NAMINGS, CRFSUITE_NAMES, LEGACY_NAMES, DictSentence
from .kinds import (
    ARRAYS,
    ATTRIBUTE_KINDS,
    DICT_TEXT,
    DICTS,
    TEMPLATES,
    TOKENS_ARRAYS,
    check_dict_sampling,
    check_records_kind,
    check_records_naming,
    check_writable,
    record_kind,
    records_kind,
    records_naming,
)
from .numeric import NumericSentence, is_numeric_array, numeric_rows, numeric_sentence, split_pair

__all__ = [
    "TEMPLATES",
    "DICTS",
    "ARRAYS",
    "TOKENS_ARRAYS",
    "ATTRIBUTE_KINDS",
    "CASE_SEPARATOR",
    "CRFSUITE_NAMES",
    "LEGACY_NAMES",
    "ATTRIBUTE_NAMINGS",
    "DictSentence",
    "feature_dict_attributes",
    "feature_dict_items",
    "check_attribute_value",
    "records_naming",
    "check_records_naming",
    "dict_sentence",
    "record_kind",
    "records_kind",
    "check_records_kind",
    "check_dict_sampling",
    "check_writable",
    "NumericSentence",
    "sequence_dataset",
    "raw_sentence",
    "word_pos_pairs",
    "chunk_record",
    "pos_record",
    "citation_record",
    "chunk_tag_problem",
    "pos_tag_problem",
    "check_declared_tags",
    "numbers_error",
    "any_tag",
    "field_label_problem",
]

#: what separates UPOS from the case value in a ``upos+case`` tag (``NOUN|Case=Erg``)
CASE_SEPARATOR = "|Case="

_NONE = object()


def _describe(value) -> str:
    return excerpt(value, 60)


# --------------------------------------------------------------------------------------
# feature dicts
# --------------------------------------------------------------------------------------
def _flatten_legacy(features: Mapping, prefix: str, out: dict, i: int, t: int) -> None:
    """The rule of models saved before python-crfsuite's names (module docstring)."""
    for key, value in features.items():
        if not isinstance(key, str) or not key:
            raise raw_error(f"feature dict key {_describe(key)}{_within(prefix)} must be a "
                            f"non-empty string (the attribute's name)", i, at=f"[{t}]")
        name = prefix + key
        if isinstance(value, str):
            out[f"{name}={value}"] = None
        elif isinstance(value, (bool, np.bool_)):
            if value:
                out[name] = None
        elif isinstance(value, numbers.Number):
            if value == 1:
                out[name] = None
            elif value != 0:
                raise raw_error(
                    f"feature {name!r} has the value {_describe(value)}; latentstruct's "
                    f"sequence attributes are binary (present or absent), so only True/False, "
                    f"1/0 or a string can be used, never a real-valued weight. Bin the value "
                    f"into a string, e.g. {{{name!r}: f'{{value:.1f}}'}} or a bucket name such "
                    f"as 'low'/'high' (the string becomes the attribute {name}=<value>)",
                    i, at=f"[{t}]")
        elif isinstance(value, Mapping):
            _flatten_legacy(value, name + ":", out, i, t)
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = list(value)
            bad = next((v for v in items if not isinstance(v, str)), _NONE)
            if bad is not _NONE:
                raise raw_error(
                    f"feature {name!r} is a {type(value).__name__} holding "
                    f"{type(bad).__name__} {_describe(bad)}; a list, tuple or set value must "
                    f"hold strings (each becomes the attribute {name}=<item>)", i, at=f"[{t}]")
            for item in (sorted(items) if isinstance(value, (set, frozenset)) else items):
                out[f"{name}={item}"] = None
        else:
            raise raw_error(
                f"feature {name!r} has a value of type {type(value).__name__} "
                f"({_describe(value)}); expected a string, True/False, 1/0, a list of strings "
                f"or a nested dict (sklearn-crfsuite's feature values)", i, at=f"[{t}]")


def _within(prefix: str) -> str:
    return f" (inside {prefix[:-1]!r})" if prefix else ""


def check_attribute_value(value: float, name: str, where: Callable[[], InputError]) -> float:
    """``value`` (a float) unless NaN, infinite or beyond :data:`MAX_ATTRIBUTE_VALUE` in
    magnitude; ``where(message)`` builds the located InputError."""
    if not math.isfinite(value) or abs(value) > MAX_ATTRIBUTE_VALUE:
        raise where(
            f"attribute {name!r} has the value {value!r}; an attribute's value scales its "
            f"weights in every score, so it must be a finite number of magnitude at most "
            f"{MAX_ATTRIBUTE_VALUE:g} (latentstruct.limits.MAX_ATTRIBUTE_VALUE): scale the "
            f"feature (a log, a z-score) or bin it into a string")
    return value


def _text(value, i: int, t: int, what: str) -> str:
    """A key or string value as str: bytes decoded as UTF-8 (python-crfsuite passes bytes
    through to CRFsuite, whose names are UTF-8)."""
    if type(value) is str or isinstance(value, str):
        return value
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise raw_error(f"{what} {_describe(value)} is bytes but not UTF-8 ({exc.reason} at "
                        f"byte {exc.start}); give str, or bytes in UTF-8", i,
                        at=f"[{t}]") from None


def _add(out: dict, name: str, value: float, i: int, t: int) -> None:
    if not name:
        raise raw_error("a feature dict gives an attribute with an empty name; give every "
                        "key a non-empty name", i, at=f"[{t}]")
    out[name] = out.get(name, 0.0) + value


_LISTS = (list, tuple, set, frozenset)
# Memory: a training set keeps every token's attribute names and values until the model is
# trained.  Built names are interned (one string object per distinct name, not one per
# occurrence) and the common values 1 and 0 are these two shared objects (a float sum
# would allocate one per occurrence); DictSentence then stores them flat.  On CoNLL-2000
# with the tutorial's dicts the records took about 41 KB per sentence before, 6 after
# (docs/performance.md).
_ONE, _ZERO = 1.0, 0.0


def _flatten_crfsuite(features, prefix: str, out: dict, i: int, t: int) -> None:
    """python-crfsuite's ``to_item``: a dict's entries, or a list's strings (value 1)."""
    if type(features) is not dict and not isinstance(features, Mapping):  # a list of names
        items = list(features)
        if isinstance(features, (set, frozenset)):
            bad = next((v for v in items if not isinstance(v, (str, bytes))), _NONE)
            if bad is _NONE:
                items.sort(key=lambda v: _text(v, i, t, "item"))
        for item in items:
            if not isinstance(item, (str, bytes)):
                raise raw_error(
                    f"feature {prefix[:-1]!r} is a {type(features).__name__} holding "
                    f"{type(item).__name__} {_describe(item)}; a list, tuple or set value "
                    f"must hold strings (each becomes the attribute {prefix}<item>)", i,
                    at=f"[{t}]")
            _add(out, prefix + _text(item, i, t, "item"), 1.0, i, t)
        return
    for key, value in features.items():
        if type(key) is str:  # the common case, without a call
            name = sys.intern(prefix + key) if prefix else key
        elif isinstance(key, (str, bytes)):
            name = sys.intern(prefix + _text(key, i, t, "key"))
        else:
            raise raw_error(f"feature dict key {_describe(key)}{_within(prefix)} must be a "
                            f"string (the attribute's name)", i, at=f"[{t}]")
        kind = type(value)
        # the common types first, by exact type (isinstance against the ABCs is slow)
        if kind is str:
            attr = sys.intern(name + ":" + value)
            prev = out.get(attr)
            out[attr] = _ONE if prev is None else prev + 1.0
        elif kind is bool and name:
            prev, v = out.get(name), (_ONE if value else _ZERO)
            out[name] = v if prev is None else prev + v
        elif kind is float and name and -MAX_ATTRIBUTE_VALUE <= value <= MAX_ATTRIBUTE_VALUE:
            prev = out.get(name)  # NaN fails the comparison above: checked below
            out[name] = value if prev is None else prev + value
        elif isinstance(value, (Mapping, *_LISTS)):
            _flatten_crfsuite(value, name + ":", out, i, t)
        elif isinstance(value, (str, bytes)):
            _add(out, name + ":" + _text(value, i, t, "value"), 1.0, i, t)
        elif isinstance(value, (numbers.Real, np.bool_)) or (
                isinstance(value, numbers.Number) and not isinstance(value, numbers.Complex)):
            try:
                v = float(value)
            except OverflowError:
                v = math.inf if value > 0 else -math.inf
            _add(out, name, check_attribute_value(
                v, name, lambda m: raw_error(m, i, at=f"[{t}]")), i, t)
        else:
            raise raw_error(
                f"feature {name!r} has a value of type {type(value).__name__} "
                f"({_describe(value)}); expected a string, a number, True/False, a list of "
                f"strings or a nested dict (python-crfsuite's feature values)", i, at=f"[{t}]")


def feature_dict_items(features, i: int = 0, t: int = 0) -> tuple[tuple[str, ...],
                                                                    tuple[float, ...]]:
    """(attribute names, their values) of one token's feature dict under python-crfsuite's
    rule (module docstring): ``{"walk": 1, "shop": 0.5}`` gives ``(("walk", "shop"),
    (1.0, 0.5))``.  A token given as a list of strings (python-crfsuite's other item form)
    gives each string with the value 1.  ``i`` and ``t`` locate the token (``X[i][t]``) in
    error messages."""
    if type(features) is not dict and not isinstance(features, (Mapping, *_LISTS)):
        raise raw_error(f"expected a feature dict, got {type(features).__name__} "
                        f"{_describe(features)}", i, at=f"[{t}]")
    out: dict = {}
    _flatten_crfsuite(features, "", out, i, t)
    return tuple(out), tuple(out.values())


def feature_dict_attributes(features, i: int = 0, t: int = 0, *,
                            naming: str = CRFSUITE_NAMES) -> tuple[str, ...]:
    """The attribute strings of one token's feature dict under ``naming`` (rules in the
    module docstring; :func:`feature_dict_items` gives the values too).

    ``i`` and ``t`` locate the token (``X[i][t]``) in error messages.
    """
    if naming == CRFSUITE_NAMES:
        return feature_dict_items(features, i, t)[0]
    if not isinstance(features, Mapping):
        raise raw_error(f"expected a feature dict, got {type(features).__name__} "
                        f"{_describe(features)}", i, at=f"[{t}]")
    out: dict = {}
    _flatten_legacy(features, "", out, i, t)
    return tuple(out)


def dict_sentence(tokens, i: int, naming: str = CRFSUITE_NAMES) -> DictSentence:
    """The :class:`DictSentence` of ``X[i]``, a list of feature dicts, under ``naming``."""
    if naming == LEGACY_NAMES:
        return DictSentence.from_tokens([feature_dict_attributes(f, i, t, naming=LEGACY_NAMES)
                                         for t, f in enumerate(tokens)], None, LEGACY_NAMES)
    names, values, binary = [], [], True
    for t, f in enumerate(tokens):
        n, v = feature_dict_items(f, i, t)
        names.append(n)
        values.append(v)
        binary = binary and all(x == 1.0 for x in v)
    return DictSentence.from_tokens(names, None if binary else values, CRFSUITE_NAMES)


# --------------------------------------------------------------------------------------
# make_dataset
# --------------------------------------------------------------------------------------
def _is_sequence(value) -> bool:
    return (not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__len__")
            and hasattr(value, "__getitem__"))


def numbers_error(i: int, form: str, token: str, *, arrays: bool = True,
                  note: str = "") -> InputError:
    """The InputError for ``X[i]`` given as numbers in no form a sentence takes (``form``:
    :func:`~latentstruct.tasks.validation.numbers_form`'s words), saying what it is, what
    the accepted forms are (``arrays``: whether a 2-D array alone is one; else numbers go
    beside the tokens, in a ``(tokens, array)`` pair) and how to make one; ``note``: how
    ``X`` came to hold it (:func:`~latentstruct.tasks.validation.ragged_note`)."""
    if "number lists" in form:
        hint = ("every token needs the same n_features" if "unequal" in form else
                f"np.asarray(X[{i}], dtype=float) is that array")
    elif "shape (" in form and not form.endswith(",)"):
        hint = f"X[{i}].astype(float) is that array"
    else:
        hint = f"for one feature per token: np.asarray(X[{i}], dtype=float).reshape(-1, 1)"
    if arrays:
        return raw_error(f"is {form}, a sequence of numbers and not {token}s or a 2-D array; "
                         f"give each sentence as a list of {token}s, or as one float array of "
                         f"shape (n_tokens, n_features) ({hint}){note}", i)
    return raw_error(f"is {form}, a sequence of numbers and not {token}s; give each sentence "
                     f"as a list of {token}s, with numbers beside them as a (tokens, array) "
                     f"pair, the array of shape (n_tokens, n_features){note}", i)


def raw_sentence(value, i: int, token: str, *, dicts: bool = True) -> list:
    """``X[i]`` as a non-empty list of tokens (``token`` names one in messages; ``dicts``:
    whether feature dicts are an alternative); a string, a non-sequence, numbers
    (:func:`numbers_error`) or an empty sentence is an InputError naming ``X[i]``."""
    form = numbers_form(value)
    if form is not None:  # else each number would be refused as a token, a misleading why
        raise numbers_error(i, form, token, arrays=dicts)
    if isinstance(value, str):
        raise raw_error(f"is a string ({_describe(value)}); expected a list of {token}s, one "
                        f"per token (split the sentence into tokens first)", i)
    if not _is_sequence(value):
        alt = (", a list of per-token feature dicts, a 2-D numeric array (tokens x columns) "
               "or a (tokens, array) pair") if dicts else ""
        raise raw_error(f"is a {type(value).__name__}; expected a list of {token}s{alt}", i)
    tokens = list(value)
    if not tokens:
        raise raw_error(f"is an empty sentence; give at least one {token}", i)
    return tokens


def _tags(value, i: int, n: int, check_tag: Callable[[str], str | None], *,
          any_label: bool = False) -> tuple[str, ...]:
    if isinstance(value, str) or not _is_sequence(value):
        raise raw_error(f"is a {type(value).__name__} ({_describe(value)}); expected a list of "
                        f"tags, one per token of X[{i}]", i, what="y")
    tags = list(value)
    if len(tags) != n:
        raise raw_error(f"has {len(tags)} tags but X[{i}] has {n} tokens; give one tag per "
                        f"token", i, what="y")
    return tuple(_tag(tag, i, f"[{t}]", "y", check_tag, any_label)
                 for t, tag in enumerate(tags))


def _tag(tag, i: int, at: str, name: str, check_tag: Callable[[str], str | None],
         any_label: bool) -> str | None:
    """``tag`` (``name[i]at``: ``y[3][7]``, ``classes[2]``) after the checks every tag of
    ``y`` gets: a non-empty string, not ``_`` unless ``any_label``, and ``check_tag``'s;
    None in ``y`` is an unknown tag (partial labels) and stays None."""
    if tag is None and name == "y":
        return None
    raw_string(tag, i, "tag", at=at, allow_space=any_label, name=name,
               max_length=MAX_LINE_CHARS)
    if tag == "_" and not any_label:
        raise raw_error("'_' marks a missing tag in the file formats; in memory give None "
                        "for a token whose tag is unknown (partial labels), or y=None for "
                        "unlabelled sentences", i, at=at, what=name)
    problem = check_tag(tag)
    if problem is not None:
        raise raw_error(problem, i, at=at, what=name)
    return str(tag)


def check_declared_tags(labels, kind: str, check_tag: Callable[[str], str | None],
                        check_dict_tag: Callable | None = None, *,
                        any_label: bool = False) -> None:
    """The declared label set (``partial_fit``'s ``classes``, ``Dataset.labels``) of a task
    fitted on sentences of ``kind``, checked tag by tag exactly as ``sequence_dataset``
    checks the tags of ``y`` for that kind (the same functions, so the same wording),
    located ``classes[k]``: a declared tag is a label the model gets weights for, so a tag
    ``fit`` would refuse in ``y`` is refused here too."""
    check = check_tag if kind == TEMPLATES or check_dict_tag is None else check_dict_tag
    for k, tag in enumerate(labels):
        _tag(tag, k, "", "classes", check, any_label)


def sequence_dataset(X, y, *, token: str, build: Callable | None, check_tag: Callable,
                     check_dict_tag: Callable | None = None,
                     naming: str = CRFSUITE_NAMES) -> Dataset:
    """The :class:`Dataset` of ``make_dataset`` for a sequence task.

    ``token`` names one template token in messages (``"word"``, ``"(word, POS) pair"``);
    ``build(i, tokens, tags)`` makes the record of template sentence ``X[i]`` (checking its
    tokens), ``tags`` being the checked tag tuple or None; ``build=None``: the task has no
    templates, every token is a feature dict or a list of attribute strings
    (python-crfsuite's two item forms), or the sentence an array; ``check_tag(tag)`` returns
    why a tag is refused, or None (with ``build=None`` a tag may hold spaces and be ``_``:
    such a task writes no column format of its own); ``check_dict_tag`` replaces it for
    feature-dict and numeric sentences, which a task never writes (None: the same check);
    ``naming`` the attribute-naming rule of feature dicts (the task's, see the module
    docstring).  Targets are tag tuples, or None per sentence without ``y``.  Arrays and
    ``(tokens, array)`` pairs become :class:`NumericSentence` records
    (``tasks.sequence.numeric``), every sentence with the columns of ``X[0]``.
    """
    given_X = X
    X, y = raw_examples(X, y, example=f"sentence (a list of {token}s)")
    if not X:
        raise InputError(f"X holds no sentences; give at least one sentence (a list of "
                         f"{token}s, or of per-token feature dicts)")
    records, targets = [], []
    first_kind = first_columns = None
    given = {DICTS: DICT_TEXT, TEMPLATES: f"{token}s", ARRAYS: "a numeric array",
             TOKENS_ARRAYS: f"a (list of {token}s, array) pair"}
    for i, value in enumerate(X):
        form = numbers_form(value)
        if form is not None:  # numbers that are no 2-D array: say so, not "word must be..."
            raise numbers_error(i, form, token, note=ragged_note(given_X))
        pair, numbers = split_pair(value), None
        if is_numeric_array(value):
            numbers = numeric_rows(value, f"X[{i}]")
            kind, n = ARRAYS, numbers.shape[0]
        elif pair is not None:
            if build is None:
                raise raw_error("is a (tokens, array) pair, but this task has no templates "
                                "of tokens; give the array alone (tokens x columns)", i)
            tokens = _in_pair(lambda: raw_sentence(pair[0], i, token, dicts=False), i)
            numbers = numeric_rows(pair[1], f"X[{i}][1]")
            kind, n = TOKENS_ARRAYS, len(tokens)
            if numbers.shape[0] != n:
                raise raw_error(f"the array X[{i}][1] has {numbers.shape[0]} rows but the "
                                f"tokens X[{i}][0] are {n}; give one row per token", i)
        else:
            tokens = raw_sentence(value, i, token)
            kind = DICTS if build is None or isinstance(tokens[0], Mapping) else TEMPLATES
            n = len(tokens)
        if first_kind is None:
            first_kind = kind
        elif kind != first_kind:
            raise raw_error(f"is given as {given[kind]} but X[0] as {given[first_kind]}; all "
                            f"sentences of X must be of one kind", i)
        if numbers is not None:
            if first_columns is None:
                first_columns = numbers.shape[1]
                if kind == ARRAYS and first_columns == 0:
                    raise raw_error("is an array with 0 columns; give at least one feature "
                                    "column per token", i)
            elif numbers.shape[1] != first_columns:
                raise raw_error(f"has {numbers.shape[1]} feature columns but X[0] has "
                                f"{first_columns}; every sentence's array must have the same "
                                f"columns (expected {first_columns})", i)
        check = check_tag if kind == TEMPLATES or check_dict_tag is None else check_dict_tag
        tags = None if y is None else _tags(y[i], i, n, check, any_label=build is None)
        if kind == ARRAYS:
            records.append(numeric_sentence(None, numbers))
        elif kind == TOKENS_ARRAYS:
            base = _in_pair(lambda: _template_record(build, i, tokens, tags, token), i)
            records.append(numeric_sentence(base, numbers))
        elif kind == DICTS:
            if build is not None:  # a (word, POS) pair among dicts is a mistake, no item
                for t, tok in enumerate(tokens):
                    if not isinstance(tok, Mapping):
                        raise raw_error(f"expected a feature dict, got {type(tok).__name__} "
                                        f"{_describe(tok)}", i, at=f"[{t}]")
            records.append(dict_sentence(tokens, i, naming))
        else:
            records.append(_template_record(build, i, tokens, tags, token))
        targets.append(tags)
    return Dataset(records, targets)


def _template_record(build: Callable, i: int, tokens: list, tags, token: str):
    for t, tok in enumerate(tokens):
        if isinstance(tok, Mapping):
            raise raw_error(f"is a feature dict but X[{i}][0] is not; a sentence is "
                            f"either all feature dicts or all {token}s", i, at=f"[{t}]")
    return build(i, tokens, tags)


def _in_pair(make: Callable, i: int):
    """``make()``, an error about ``X[i]...`` named inside the pair's tokens, ``X[i][0]...``."""
    try:
        return make()
    except InputError as exc:
        head = f"X[{i}]"
        if exc.path is None and exc.message.startswith(head):
            raise InputError(f"{head}[0]{exc.message[len(head):]}") from None
        raise


def _word(value, i: int, t: int, what: str = "word", *, pair_hint: bool = False) -> str:
    if pair_hint and isinstance(value, (tuple, list)):
        raise raw_error(f"is a {type(value).__name__} {_describe(value)}; this task takes "
                        f"words (strings), not pairs: its features use no POS tags", i,
                        at=f"[{t}]")
    return str(raw_string(value, i, what, at=f"[{t}]", max_length=MAX_LINE_CHARS,
                          allow_space=False))


def word_pos_pairs(i: int, tokens: list, task: str = "chunker") -> tuple[tuple, tuple]:
    """Words and POS tags of ``X[i]``, a list of ``(word, POS)`` pairs, each checked as a
    file's column would be (non-empty, no white space, at most ``MAX_LINE_CHARS``)."""
    words, pos = [], []
    for t, tok in enumerate(tokens):
        if isinstance(tok, str):
            raise raw_error(f"is the string {_describe(tok)}; the {task} needs (word, POS) "
                            f"pairs, since its features use the POS tag of every word (Penn "
                            f"Treebank tags, as in CoNLL-2000)", i, at=f"[{t}]")
        if not isinstance(tok, (tuple, list)) or len(tok) != 2:
            raise raw_error(f"is {_describe(tok)}; expected a (word, POS) pair", i, at=f"[{t}]")
        words.append(_word(tok[0], i, t, "word"))
        pos.append(_word(tok[1], i, t, "POS tag"))
    return tuple(words), tuple(pos)


def chunk_record(i: int, tokens: list, tags) -> ChunkSentence:
    """The ``ChunkSentence`` of ``X[i]``, a list of ``(word, POS)`` pairs (tags ``_``
    without ``y``, as ``read`` gives unlabelled ``word POS`` lines)."""
    words, pos = word_pos_pairs(i, tokens)
    return ChunkSentence(words, pos, tags if tags is not None else ("_",) * len(words), 0)


def pos_record(i: int, tokens: list, tags) -> ConlluSentence:
    """The ``ConlluSentence`` of ``X[i]``, a list of words: ID and FORM, every other field
    ``_`` (what ``read`` builds from plain text); the tags stay in the targets."""
    return ConlluSentence.from_words([_word(tok, i, t, pair_hint=True)
                                      for t, tok in enumerate(tokens)])


def citation_record(i: int, tokens: list, labels) -> Citation:
    """The ``Citation`` of ``X[i]``, a list of tokens (labels ``_`` without ``y``, as
    ``read`` gives plain references)."""
    words = tuple(_word(tok, i, t, "token", pair_hint=True) for t, tok in enumerate(tokens))
    return Citation(words, labels if labels is not None else ("_",) * len(words), 0)


def chunk_tag_problem(tag: str) -> str | None:
    """Why ``tag`` is no chunk tag (the reader's check), or None."""
    return None if is_chunk_tag(tag) else f"chunk tag {tag!r} is not {CHUNK_TAG_FORM}"


def any_tag(tag: str) -> None:
    """No check beyond the one every tag gets (a non-empty string): a pos model trained on
    feature dicts takes any tag set (NER, chunk tags), since it never writes a CoNLL-U UPOS
    column (the command line refuses such a model: it cannot compute the dicts)."""
    return None


def pos_tag_problem(tag_column: str) -> Callable[[str], str | None]:
    """The tag check of ``PosTask`` for ``tag_column``: UPOS tags as the CoNLL-U reader
    checks them ("upos"; the UPOS part of "upos+case", whose case must not be empty), any
    tag for "xpos"."""
    def problem(tag: str) -> str | None:
        if tag_column == "xpos":
            return None
        upos, sep, case = tag.partition(CASE_SEPARATOR)
        if tag_column == "upos+case" and sep and not case:
            return f"tag {tag!r} has an empty case after {CASE_SEPARATOR!r}"
        if not is_upos_tag(upos):
            form = "UPOS" if tag_column == "upos" else f"UPOS or UPOS{CASE_SEPARATOR}VALUE"
            return (f"tag {tag!r} is not {form}: expected {UPOS_FORM} (tag_column="
                    f"{tag_column!r}); for language-specific tags use tag_column='xpos'")
        return None
    return problem


def field_label_problem(label: str) -> str | None:
    """Why ``label`` cannot name a citation field (the Cora format's check), or None."""
    return None if is_field_label(label) else (
        f"field label {label!r} is not {FIELD_LABEL_FORM}")
