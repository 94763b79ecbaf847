"""Dependency sentences to the numbers the parser decodes over: :class:`DependencyFeaturizer`.

A scikit-learn transformer over ``DependencySentence`` records (read from CoNLL-U or
``.dp`` files, or built by ``make_dataset``).  ``fit`` learns what the training sentences
fix: their file format, the gold POS column the features read, whether trees are labelled
and with which relations, and the input kind (tokens, or tokens with per-token vectors of
d columns).  ``transform`` gives one :class:`~latentstruct.tasks.dependency.corpus.DepCorpus`:
each position's hashed codes (lowercased word, 5-character prefix, POS tag; ROOT first,
:func:`~latentstruct.tasks.dependency.corpus.token_codes`), the punctuation mask and, with
vectors, their CSR rows.  ``encode_targets`` / ``decode_targets`` are the label encoding of
gold trees, (3, n) arrays of heads, relation ids and the scored mask.

:class:`~latentstruct.tasks.dependency.DependencyTask` fits one and delegates to it
(``featurizer_``); its model file holds the featurizer's state (:meth:`get_state`), so a
loaded parser featurises new sentences as it did at training time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.base import TransformerMixin

from ...data.dependency import DependencySentence, punctuation_mask
from ...data.readers import excerpt
from ...exceptions import ConfigError, InputError, check_is_fitted
from ...params import BOOL, Options, Satisfies
from ...featurizers.base import Featurizer
from ..validation import encode_labels
from .corpus import DepCorpus, token_codes
from .numbers import INPUT_KINDS, check_count
from .raw import VectorSentence

__all__ = ["DependencyFeaturizer", "DepTarget", "data_format", "check_pos_relation",
           "check_pos_column", "input_kind"]

_EMPTY = np.zeros(0, np.int64)


class DepTarget(NamedTuple):
    """A gold tree as read: heads (0 = root), label strings ('_' unlabelled), scored mask."""

    heads: tuple
    deprels: tuple
    scored: tuple


def data_format(records) -> str:
    """"conllu" or "dp" when every record comes from that format, "mixed" otherwise."""
    formats = {r.file_format for r in records}
    return "conllu" if formats == {"conllu"} else "dp" if formats == {"dp"} else "mixed"


def check_pos_relation(pos, pos_column) -> None:
    """Refuse ``pos="predicted"`` with ``pos_column="xpos"`` (the tagger predicts UPOS)."""
    if pos == "predicted" and pos_column == "xpos":
        raise ConfigError("pos='predicted' tags words with the project's UPOS tagger, so "
                          "pos_column must be 'upos' or 'auto', not 'xpos'")


def _is_collection(value) -> bool:
    return not isinstance(value, (str, bytes)) and hasattr(value, "__iter__")


class DependencyFeaturizer(TransformerMixin, Featurizer):
    """Dependency sentences to per-position codes (a ``DepCorpus``), and gold trees to ids.

    Parameters
    ----------
    pos : {"gold", "predicted"}, default "gold"
        POS tags for the codes: the records' own (the ``pos_column`` column), or those
        ``tagger`` predicts (UPOS; the training sentences must be CoNLL-U).
    pos_column : {"auto", "upos", "xpos"}, default "auto"
        Which gold POS column feeds the codes; "auto": UPOS for CoNLL-U, XPOS for ``.dp``.
    labelled : {"auto", True, False}, default "auto"
        Encode dependency relations; "auto": when the training sentences have DEPRELs.
    classes : collection of str or None, default None
        Relations declared up front, added to those of the training sentences.
    tagger : object with ``tag(sentences)`` or None, default None
        The UPOS tagger of ``pos="predicted"``
        (:class:`~latentstruct.tasks.dependency.tagging.UposTagger`).

    Attributes
    ----------
    data_format_ : {"conllu", "dp", "mixed"}
        The file format of the training sentences.
    pos_column_ : {"upos", "xpos"}
        The gold POS column read (``pos_column`` resolved).
    labelled_ : bool
        Whether relations are encoded (``labelled`` resolved).
    labels_ : list of str
        The sorted relations (empty when unlabelled); a relation's id is its index.
    input_kind_ : {"tokens", "numbers"}
        Whether the sentences came with per-token vectors, of ``n_columns_`` columns (0
        for tokens); ``transform`` refuses the other kind or width.

    Examples
    --------
    >>> from latentstruct.data.dependency import DependencySentence
    >>> s = DependencySentence(("Dogs", "bark"), ("_", "_"), ("NOUN", "VERB"), ("_", "_"),
    ...                        (2, 0), ("nsubj", "root"), file_format="conllu")
    >>> f = DependencyFeaturizer().fit([s])
    >>> f.pos_column_, f.labels_, f.transform([s]).offsets.tolist()
    ('upos', ['nsubj', 'root'], [0, 3])
    """

    _parameter_constraints = {
        "pos": [Options("gold", "predicted")],
        "pos_column": [Options("auto", "upos", "xpos")],
        "labelled": [Options("auto"), BOOL],
        "classes": [Satisfies(_is_collection, "a collection of relation labels"), None],
        "tagger": [Satisfies(lambda v: callable(getattr(v, "tag", None)),
                             "an object with a tag(sentences) method (a UposTagger)"), None],
    }

    def __init__(self, pos="gold", pos_column="auto", labelled="auto", classes=None,
                 tagger=None):
        self.pos = pos
        self.pos_column = pos_column
        self.labelled = labelled
        self.classes = classes
        self.tagger = tagger

    # --- fit ------------------------------------------------------------------------------
    def fit(self, records, y=None, *, path=None) -> "DependencyFeaturizer":
        """Learn the format, POS column, relations and input kind of ``records`` (the
        training sentences; ``path`` names their file in errors)."""
        check_pos_relation(self.pos, self.pos_column)
        records = list(records)
        if not records:
            raise InputError("training data contains no sentences", path)
        fmt = data_format(records)
        if fmt == "mixed" and self.pos_column == "auto":
            raise ConfigError("the training data mixes CoNLL-U and .dp sentences; set "
                              "pos_column explicitly")
        if self.pos == "predicted" and fmt != "conllu":
            raise ConfigError("pos='predicted' needs CoNLL-U (UD) training data: the tagger "
                              "predicts UPOS and .dp files have PTB tags only")
        self.data_format_ = fmt
        self.pos_column_ = ("upos" if fmt == "conllu" else "xpos") \
            if self.pos_column == "auto" else self.pos_column
        has_labels = any(r.labelled for r in records)
        self.labelled_ = has_labels if self.labelled == "auto" else bool(self.labelled)
        if self.labelled_:
            for r in records:
                if "_" in r.deprels:
                    k = r.deprels.index("_")
                    raise InputError(
                        f"word {k + 1} ({excerpt(r.words[k])}) has no DEPREL ('_') but the task is "
                        f"labelled; give every word a label, or set labelled=False",
                        r.path or path, r.line or None)
            self.labels_ = sorted({d for r in records for d in r.deprels}
                                  | set(self.classes or ()))
        else:
            self.labels_ = []
        self.label_id_ = {t: i for i, t in enumerate(self.labels_)}
        if self.pos == "gold":
            check_pos_column(records, self.pos_column_, path)
        self.input_kind_, self.n_columns_ = input_kind(records, path)
        return self

    # --- transform ------------------------------------------------------------------------
    _fit_hint = "Call fit(records) on training sentences first."

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "labels_")

    def transform(self, records, *, path=None) -> DepCorpus:
        """Token codes of every sentence (ROOT first) as one ``DepCorpus``."""
        check_is_fitted(self)
        records = list(records)
        if self.pos == "gold" and records:
            check_pos_column(records, self.pos_column_, path)
        self._check_input(records, path)
        tags = self._pos_tags(records)
        words, prefixes, pos, scored, offsets = [], [], [], [], [0]
        for r, p in zip(records, tags):
            if not isinstance(r, DependencySentence):
                raise InputError(f"the dep task featurises DependencySentence records, got "
                                 f"{type(r).__name__}")
            cw, cx, cp = token_codes(r.words, p)
            words.append(cw)
            prefixes.append(cx)
            pos.append(cp)
            scored.append(np.concatenate([[0], punctuation_mask(r).astype(np.int64)]))
            offsets.append(offsets[-1] + len(r) + 1)

        def cat(parts):
            return np.concatenate(parts) if parts else _EMPTY

        return DepCorpus(cat(words), cat(prefixes), cat(pos), cat(scored), np.asarray(offsets),
                         _position_rows(records, self.n_columns_)
                         if self.input_kind_ == "numbers" else None)

    def _pos_tags(self, records) -> list[tuple]:
        if self.pos == "predicted":
            if self.tagger is None:
                raise ConfigError("pos='predicted' needs a POS tagger: call "
                                  "latentstruct.pipelines.attach_tagger(task) or set_tagger "
                                  "before featurize")
            return self.tagger.tag([r.words for r in records])
        column = self.pos_column_
        return [getattr(r, column) for r in records]

    def _check_input(self, records, path) -> None:
        """Refuse records of the other input kind or column count than the fitted ones."""
        kind, d = input_kind(records, path)
        if kind == self.input_kind_ and d == self.n_columns_:
            return
        if self.input_kind_ == "tokens":
            raise InputError(f"this parser was trained on tokens only, but the sentences come "
                             f"with vectors ({d} columns); give sentences without vectors, or "
                             f"train the parser on (tokens, vectors) examples", path)
        if kind == "tokens":
            raise InputError(f"this parser was trained with per-token vectors "
                             f"({self.n_columns_} columns), but the sentences have none; give "
                             f"each sentence as (tokens, vectors) with an (n_tokens x "
                             f"{self.n_columns_}) array", path)
        raise InputError(f"the sentences' vectors have {d} columns, but this parser was "
                         f"trained with {self.n_columns_}; give the columns it was trained "
                         f"with, in the same order", path)

    # --- targets --------------------------------------------------------------------------
    def encode_targets(self, targets, *, unseen_ok: bool = False) -> list[np.ndarray]:
        """Gold trees to (3, n) int64 arrays (heads, relation ids, scored).  A relation not
        in ``labels_`` is refused (``UnseenLabelError`` naming it and the relations); with
        ``unseen_ok`` (evaluation only) it gets id -1, which no predicted relation equals."""
        check_is_fitted(self)
        out = []
        label_id, labels = self.label_id_, self.labels_
        for i, t in enumerate(targets):
            heads = np.asarray(t[0], dtype=np.int64)
            n = heads.shape[0]
            y = np.empty((3, n), dtype=np.int64)
            y[0] = heads
            if not self.labelled_:
                y[1] = -1
            elif unseen_ok:
                y[1] = [label_id.get(d, -1) for d in t[1]]
            else:
                y[1] = encode_labels(label_id, labels, list(t[1]), example=i,
                                     where=lambda k, i=i: f"sentence {i}, word {k + 1}")
            y[2] = np.asarray(t[2], dtype=np.int64) if len(t) > 2 else 1
            out.append(y)
        return out

    def decode_targets(self, structures) -> list[DepTarget]:
        """(3, n) arrays to ``DepTarget`` (label strings, '_' when unlabelled)."""
        check_is_fitted(self)
        labels = self.labels_
        out = []
        for y in structures:
            y = np.asarray(y)
            deprels = tuple(labels[i] if i >= 0 else "_" for i in y[1].tolist()) \
                if self.labelled_ else ("_",) * y.shape[1]
            scored = tuple(bool(v) for v in y[2]) if y.shape[0] > 2 else (True,) * y.shape[1]
            out.append(DepTarget(tuple(y[0].tolist()), deprels, scored))
        return out

    # --- persistence ----------------------------------------------------------------------
    def get_state(self) -> dict:
        """The fitted attributes as the dep model file stores them (JSON values)."""
        check_is_fitted(self)
        state = {"labels": list(self.labels_), "labelled": bool(self.labelled_),
                 "pos_column": self.pos_column_, "data_format": self.data_format_}
        if self.input_kind_ == "numbers":  # a model without vectors is saved as before
            state.update(input_kind=self.input_kind_, n_columns=int(self.n_columns_))
        return state

    @classmethod
    def from_state(cls, state: dict, **params) -> "DependencyFeaturizer":
        """A fitted featurizer from :meth:`get_state`'s ``state`` (a dep model file's; one
        saved before per-token vectors has no input kind: tokens) and its ``params``."""
        featurizer = cls(**params)
        featurizer.labels_ = list(state["labels"])
        featurizer.label_id_ = {t: i for i, t in enumerate(featurizer.labels_)}
        featurizer.labelled_ = bool(state["labelled"])
        featurizer.pos_column_ = state["pos_column"]
        featurizer.data_format_ = state["data_format"]
        featurizer.input_kind_ = state.get("input_kind", "tokens")
        if featurizer.input_kind_ not in INPUT_KINDS:
            raise InputError(f"the model file's input_kind is {featurizer.input_kind_!r}; "
                             f"expected one of {', '.join(INPUT_KINDS)}. The file is damaged; "
                             f"save the model again")
        featurizer.n_columns_ = check_count(state.get("n_columns", 0), "n_columns")
        return featurizer


def check_pos_column(records, column: str, path) -> None:
    """Refuse a gold POS ``column`` that is empty ('_') in every record."""
    if all(t == "_" for r in records for t in getattr(r, column)):
        other = "xpos" if column == "upos" else "upos"
        raise InputError(f"the {column.upper()} column is empty ('_') in every sentence, so "
                         f"it cannot feed the features; train with pos_column={other!r} "
                         f"(this model reads {column})", path)


def input_kind(records, path) -> tuple[str, int]:
    """("numbers", d) when every record carries vectors of d columns, ("tokens", 0) when
    none does; records of both kinds, or of several column counts, are refused."""
    with_vectors = [isinstance(r, VectorSentence) and r.vectors is not None for r in records]
    if not any(with_vectors):
        return "tokens", 0
    if not all(with_vectors):
        i, j = with_vectors.index(True), with_vectors.index(False)
        raise InputError(f"sentence {i} comes with vectors but sentence {j} does not; give "
                         f"every sentence vectors, or none", path)
    d = records[0].vectors.shape[1]
    for i, r in enumerate(records):
        if r.vectors.shape[1] != d:
            raise InputError(f"sentence {i}'s vectors have {r.vectors.shape[1]} columns but "
                             f"sentence 0's have {d}; every sentence needs the same columns",
                             path)
        if r.vectors.shape[0] != len(r):
            raise InputError(f"sentence {i} has {len(r)} words but {r.vectors.shape[0]} "
                             f"vector rows; give one row per word", path)
    return "numbers", int(d)


def _position_rows(records, d: int):
    """The CSR rows of every position of ``records`` (ROOT's row empty), for ``DepCorpus``."""
    ptr, idx, val, base = [np.zeros(1, np.int64)], [], [], 0
    for r in records:
        m = r.vectors
        ptr.append(np.concatenate([[base], base + m.indptr[1:]]).astype(np.int64))
        idx.append(m.indices.astype(np.int64))
        val.append(m.data)
        base += int(m.indptr[-1])
    cat = (lambda a, t: np.concatenate(a).astype(t) if a else np.zeros(0, t))
    return cat(ptr, np.int64), cat(idx, np.int64), cat(val, np.float64), d
