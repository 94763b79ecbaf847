"""First-order dependency parsing (``dep``): :class:`DependencyTask`.

Reading CoNLL-U and PTB ``.dp`` trees, resolving the "auto" parameters and the labels in
``fit``, featurising sentences to per-position codes, UAS / LAS evaluation and persistence.
Decoding is the :class:`~latentstruct.tasks.dependency.decoding.ArcFactoredDecoding` mixin;
the model is described in :mod:`latentstruct.tasks.dependency`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...data.dependency import (
    DependencySentence,
    punctuation_mask,
    read_dependencies,
    write_dependencies,
)
from ...data.readers import excerpt
from ...exceptions import ConfigError, InputError
from ..base import Dataset, StructuredTask, register_task
from ..contracts import KBEST, MAX_DECODABLE, SIZED
from ..reports import attachment_report
from ..validation import encode_labels
from .corpus import DepCorpus, as_dep_corpus, token_codes
from .decoding import ArcFactoredDecoding
from .numbers import INPUT_KINDS, check_count
from .params import DependencyParams
from .raw import VectorSentence, dependency_records, raw_trees
from .tagging import TaggerMixin
from .vectors import N_VECTOR_BLOCKS

__all__ = ["DependencyTask", "DepTarget"]


class DepTarget(NamedTuple):
    """A gold tree as read: heads (0 = root), label strings ('_' unlabelled), scored mask."""

    heads: tuple
    deprels: tuple
    scored: tuple


_EMPTY = np.zeros(0, np.int64)


@register_task
class DependencyTask(DependencyParams, TaggerMixin, ArcFactoredDecoding, StructuredTask):
    """Projective first-order dependency parsing of CoNLL-U or PTB ``.dp`` data, by UAS.

    Parameters
    ----------
    hash_bits : int, default 22
        Arc features are hashed into 2**hash_bits weights.
    label_hash_bits : int, default 18
        Label contexts are hashed into 2**label_hash_bits rows of one weight per label.
    single_root : {"auto", True, False}
        Decode trees with exactly one word attached to ROOT; "auto": True for CoNLL-U
        training data (UD requires it), False for ``.dp`` data.
    labelled : {"auto", True, False}
        Predict dependency labels too; "auto": when the training data has DEPRELs.
    pos : {"gold", "predicted"}
        POS tags for the features: the file's own, or UPOS predicted by the project's
        tagger (``latentstruct train`` attaches one, see ``tagger_model``); not for ``.dp``.
    pos_column : {"auto", "upos", "xpos"}
        Which gold POS column feeds the features; "auto": UPOS for CoNLL-U, the PTB tag
        (xpos) for ``.dp``.
    distance_bins : tuple of int, default (1, 2, 3, 4, 5, 10)
        Starts of the arc-length bins conjoined with every arc template (increasing, from 1).
        A comma-separated string such as "1,2,4,8" is accepted.
    ptb_split : {"all", "train", "heldout", "auto"}
        Documents read from a directory of wsj_NNNN.dp files: all of them, wsj_0001-0119,
        wsj_0120-0142, or "auto" (the train documents for training data, the held-out ones
        for test data).  Files are always read whole.
    tagger_model : str or None
        With pos="predicted": a ``pos`` model file used as the tagger; without one,
        ``latentstruct train`` trains the default tagger on UD EWT.
    tagger_sentences : int, default 3000
        Training sentences of that default tagger (the first ones of UD EWT train).

    Notes
    -----
    On UD EWT train (12.5k sentences) a StructuredSVM iteration (two loss-augmented
    decoding passes and the working-set solve, one core) takes 18 s at first and up to a
    minute as the working set grows, so the default ``max_iter=50`` runs for about 40
    minutes without reaching ``tol`` (relative gap 0.09 after 43 iterations).  Recommended:
    ``latentstruct train dep --train en_ewt-ud-train.conllu --model dep.npz --option
    max_iter=15`` (about 7 minutes; EWT dev UAS 0.867, LAS 0.811).

    Raw form (``make_dataset``): ``X`` holds one sentence per example, a list of
    ``(word, POS)`` pairs, and ``y`` one gold tree per sentence (or None): its heads
    (1-based, 0 = root), or ``(head, deprel)`` pairs for a labelled parser::

        X = [[("Dogs", "NOUN"), ("bark", "VERB"), (".", "PUNCT")], [("Hi", "INTJ")]]
        y = [[2, 0, 2], [0]]
        y_labelled = [[(2, "nsubj"), (0, "root"), (2, "punct")], [(0, "root")]]

    UPOS tags are taken as CoNLL-U data, other tags (PTB) as ``.dp`` data
    (``tasks.dependency.raw``); ``decode_predictions`` gives trees in ``y``'s form.

    A sentence may come with numbers, ``(tokens, vectors)`` with ``vectors`` an
    (n_tokens x d) array (dense or ``scipy.sparse``): they reach the arc features as the
    head's and the dependent's vectors by direction, their elementwise product and a root
    block (6 d weights after the hashed ones; :mod:`latentstruct.tasks.dependency.vectors`).
    The fitted task records ``input_kind_`` ("tokens" or "numbers") and ``n_columns_`` (d;
    0 for tokens) and refuses input of the other kind or column count.
    """

    name = "dep"
    score_metric = "uas"
    default_learner = "ssvm"
    # A tree's feature difference has thousands of non-zeros, so the structural SVM's
    # generic C=0.1 leaves the cutting plane far from converged after 50 iterations on UD
    # EWT (duality gap 0.09 after 43); C=0.001 converges in 8 iterations to a relative gap
    # of 0.1 and in 23 to 0.01, and dev UAS stops moving at the first (85.66 against 85.60,
    # punctuation included), so the task stops at tol=0.1.  The exact evaluation pass runs
    # only near the end (evaluate="near": 3 evaluations instead of 8).  The online passes'
    # sweeps do most of the dual work, so two epochs of the full working-set solve per
    # iteration suffice (same iterations and UAS as 20 on 2,000 sentences, 37% less CPU),
    # and decoding, the rest of the time, runs on every core (threads; the model does not
    # depend on it).  Measurements: docs/performance.md.
    learner_defaults = {"ssvm": {"C": 0.001, "tol": 0.1, "evaluate": "near",
                                 "inner_max_iter": 2, "n_jobs": -1}}
    capabilities = frozenset({MAX_DECODABLE, SIZED, KBEST})
    evaluation_params = frozenset({"ptb_split"})
    # a file path: the tagger is saved in the model file, its path is never reused
    local_params = frozenset({"tagger_model"})

    def __init__(self, hash_bits=22, label_hash_bits=18, single_root="auto", labelled="auto",
                 pos="gold", pos_column="auto", distance_bins=(1, 2, 3, 4, 5, 10),
                 ptb_split="all", tagger_model=None, tagger_sentences=3000):
        self.hash_bits = hash_bits
        self.label_hash_bits = label_hash_bits
        self.single_root = single_root
        self.labelled = labelled
        self.pos = pos
        self.pos_column = pos_column
        self.distance_bins = distance_bins
        self.ptb_split = ptb_split
        self.tagger_model = tagger_model
        self.tagger_sentences = tagger_sentences

    # --- data --------------------------------------------------------------------------
    def read(self, path, *, split: str = "train") -> Dataset:
        """Read CoNLL-U / ``.dp`` trees; ``split`` picks the PTB documents when
        ``ptb_split="auto"`` ("train": wsj_0001-0119, anything else: wsj_0120-0142)."""
        self.check_params()
        if path is None:
            raise ConfigError("the dep task needs a data path (a .conllu file, a .dp file or a "
                              "directory of .dp files)")
        doc_split = "all"
        if Path(path).is_dir():
            doc_split = self.ptb_split
            if doc_split == "auto":
                doc_split = "train" if split == "train" else "heldout"
        single_root = None if self.single_root == "auto" else bool(self.single_root)
        records = read_dependencies(path, single_root=single_root, split=doc_split)
        if self.pos == "predicted" and any(r.file_format == "dp" for r in records):
            raise ConfigError(
                "pos='predicted' needs UD data: the project's tagger predicts UPOS, while .dp "
                "files carry PTB tags; use pos='gold' for .dp data")
        return Dataset(records, _gold_trees(records), str(path))

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of
        ``(word, POS)`` pairs; ``y`` a list of gold trees, each a list of heads (ints,
        1-based, 0 = root) or of ``(head, deprel)`` pairs, or None (targets None:
        unlabelled input for ``predict``).

        The records are ``DependencySentence`` records as the readers build them (line 0;
        UPOS tags as from CoNLL-U, other tags as from ``.dp``; see
        ``tasks.dependency.raw``), each tree checked by ``check_tree`` (a single root when
        ``single_root`` resolves to True).  A bad entry is an ``InputError`` naming it
        (``X[3][5]``, ``y[2][4]``).
        """
        self.check_params()
        records = dependency_records(self, X, y)
        return Dataset(records, [None] * len(records) if y is None else _gold_trees(records))

    def decode_predictions(self, predictions) -> list[list]:
        """``predict``'s (3, n) trees in ``make_dataset``'s ``y`` form: a list of heads per
        sentence (``[[2, 0, 2], ...]``), or of ``(head, deprel)`` pairs when the parser is
        labelled (``[[(2, "nsubj"), (0, "root"), (2, "punct")], ...]``)."""
        self.check_fitted()
        return raw_trees(self.decode_targets(predictions), bool(self.labelled_))

    def fit(self, dataset: Dataset) -> "DependencyTask":
        """Resolve the "auto" parameters from the training data and collect the labels."""
        records = list(dataset.records)
        if not records:
            raise InputError("training data contains no sentences", dataset.path)
        _check_gold(dataset, "training")
        formats = {r.file_format for r in records}
        fmt = "conllu" if formats == {"conllu"} else "dp" if formats == {"dp"} else "mixed"
        if fmt == "mixed" and "auto" in (self.pos_column, self.single_root):
            raise ConfigError("the training data mixes CoNLL-U and .dp sentences; set "
                              "pos_column and single_root explicitly")
        if self.pos == "predicted" and fmt != "conllu":
            raise ConfigError("pos='predicted' needs CoNLL-U (UD) training data: the tagger "
                              "predicts UPOS and .dp files have PTB tags only")
        self.data_format_ = fmt
        self.pos_column_ = ("upos" if fmt == "conllu" else "xpos") \
            if self.pos_column == "auto" else self.pos_column
        self.single_root_ = (fmt == "conllu") if self.single_root == "auto" \
            else bool(self.single_root)
        has_labels = any(r.labelled for r in records)
        self.labelled_ = has_labels if self.labelled == "auto" else bool(self.labelled)
        if self.labelled_:
            for r in records:
                if "_" in r.deprels:
                    k = r.deprels.index("_")
                    raise InputError(
                        f"word {k + 1} ({excerpt(r.words[k])}) has no DEPREL ('_') but the task is "
                        f"labelled; give every word a label, or set labelled=False",
                        r.path or dataset.path, r.line or None)
            self.labels_ = sorted({d for r in records for d in r.deprels}
                                  | set(dataset.labels or ()))
        else:
            self.labels_ = []
        self._label_id = {t: i for i, t in enumerate(self.labels_)}
        if self.pos == "gold":
            self._check_pos_column(records, dataset.path)
        self.bins_ = self._bins()
        self.input_kind_, self.n_columns_ = _input_kind(records, dataset.path)
        self.fitted_ = True
        return self

    def _check_input(self, records, path) -> None:
        """Refuse records of the other input kind or column count than the model's."""
        kind, d = _input_kind(records, path)
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

    @property
    def vector_offset(self) -> int:
        """Index of the first vector weight (after the hashed arc and label blocks)."""
        self.check_fitted()
        n = self.n_arc_features
        if self.labelled_:
            n += self.n_labels << int(self.label_hash_bits)
        return n

    def _check_pos_column(self, records, path) -> None:
        column = self.pos_column_
        if all(t == "_" for r in records for t in getattr(r, column)):
            other = "xpos" if column == "upos" else "upos"
            raise InputError(f"the {column.upper()} column is empty ('_') in every sentence, so "
                             f"it cannot feed the features; train with pos_column={other!r} "
                             f"(this model reads {column})", path)

    def resolved_single_root(self) -> bool:
        """Whether decoding attaches exactly one word to ROOT (``single_root`` resolved)."""
        self.check_fitted()
        return bool(self.single_root_)

    def is_labelled(self) -> bool:
        """Whether the task predicts labels (``labelled`` resolved from the training data)."""
        self.check_fitted()
        return bool(self.labelled_)

    @property
    def n_labels(self) -> int:
        self.check_fitted()
        return len(self.labels_)

    @property
    def n_arc_features(self) -> int:
        return 1 << int(self.hash_bits)

    @property
    def n_features(self) -> int:
        return self.vector_offset + N_VECTOR_BLOCKS * int(self.n_columns_)

    def _pos_tags(self, records) -> list[tuple]:
        if self.pos == "predicted":
            return self.tag([r.words for r in records])
        column = self.pos_column_
        return [getattr(r, column) for r in records]

    def featurize(self, dataset: Dataset) -> DepCorpus:
        """Token codes of every sentence (ROOT first) as one ``DepCorpus``."""
        self.check_fitted()
        records = list(dataset.records)
        if self.pos == "gold" and records:
            self._check_pos_column(records, dataset.path)
        self._check_input(records, dataset.path)
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

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Gold trees to (3, n) arrays (heads, relation ids, scored).  A relation not in
        ``labels_`` is refused (``UnseenLabelError`` naming it and the model's relations);
        evaluation scores raw gold trees instead (:meth:`evaluate_raw`)."""
        return self._encode(targets, unseen_ok=False)

    def _encode(self, targets, *, unseen_ok: bool) -> list[np.ndarray]:
        """The (3, n) arrays; with ``unseen_ok`` (evaluation only) a relation the model
        never saw gets id -1, which no predicted relation equals (LAS counts it wrong)."""
        self.check_fitted()
        out = []
        label_id, labels = self._label_id, self.labels_
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

    def evaluate_raw(self, targets, predictions) -> dict:
        """``evaluate`` against raw gold trees: a relation the model never saw counts as a
        wrong label (LAS), its head as any other (UAS)."""
        return self.evaluate(self._encode(targets, unseen_ok=True), predictions)

    def decode_targets(self, structures) -> list[DepTarget]:
        """(3, n) arrays to ``DepTarget`` (label strings, '_' when unlabelled)."""
        labels = self.labels_
        out = []
        for y in structures:
            y = np.asarray(y)
            deprels = tuple(labels[i] if i >= 0 else "_" for i in y[1].tolist()) \
                if self.labelled_ else ("_",) * y.shape[1]
            scored = tuple(bool(v) for v in y[2]) if y.shape[0] > 2 else (True,) * y.shape[1]
            out.append(DepTarget(tuple(y[0].tolist()), deprels, scored))
        return out

    # --- model interface ---------------------------------------------------------------
    def subset(self, X, indices) -> DepCorpus:
        return as_dep_corpus(X).subset(indices)

    def as_batch(self, X) -> DepCorpus:
        return as_dep_corpus(X)

    def example_size(self, x) -> int:
        return as_dep_corpus(x).n_tokens

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        """UAS and LAS over the scored (non-punctuation) words.

        Returns ``{"uas", "las" (None when unlabelled), "n_tokens_scored", "n_sentences",
        "pos" ("gold" or "predicted")}``.
        """
        scored = correct_h = correct_l = n_sent = 0
        for y, p in zip(targets, predictions, strict=True):
            y, p = np.asarray(y), np.asarray(p)
            mask = y[2].astype(bool) if y.shape[0] > 2 else np.ones(y.shape[1], bool)
            ok = (y[0] == p[0]) & mask
            scored += int(mask.sum())
            correct_h += int(ok.sum())
            correct_l += int((ok & (y[1] == p[1]) & (y[1] >= 0)).sum())
            n_sent += 1
        return {
            "uas": correct_h / scored if scored else 0.0,
            "las": (correct_l / scored if scored else 0.0) if self.labelled_ else None,
            "n_tokens_scored": scored,
            "n_sentences": n_sent,
            "pos": self.pos,
        }

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """The metrics of ``evaluate`` that ``latentstruct evaluate`` prints: numbers and
        None (``las`` of an unlabelled parser); ``pos``, a string, is left out."""
        _check_gold(dataset, "evaluation")
        metrics = super().evaluate_model(dataset, predict, decision_function)
        return {k: v for k, v in metrics.items() if not isinstance(v, str)}

    def report(self, dataset: Dataset, predictions) -> dict:
        """Per gold relation: scored tokens, UAS and LAS (None for an unlabelled parser)."""
        pred = self.decode_targets(predictions)
        gold = list(dataset.targets)
        return attachment_report([g.heads for g in gold], [p.heads for p in pred],
                                 [g.deprels for g in gold],
                                 [p.deprels for p in pred] if self.labelled_ else None,
                                 [g.scored for g in gold])

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """CoNLL-U with the predicted HEAD and DEPREL ('_' when unlabelled)."""
        trees = self.decode_targets(predictions)
        write_dependencies(path, dataset.records, [t.heads for t in trees],
                           [t.deprels for t in trees])

    # --- persistence ---------------------------------------------------------------------
    def get_state(self):
        self.check_fitted()
        state = {"labels": list(self.labels_), "labelled": bool(self.labelled_),
                 "single_root": bool(self.single_root_), "pos_column": self.pos_column_,
                 "data_format": self.data_format_}
        if self.input_kind_ == "numbers":  # a model without vectors is saved as before
            state.update(input_kind=self.input_kind_, n_columns=int(self.n_columns_))
        arrays: dict = {}
        self._tagger_state(state, arrays)
        return state, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.check_params()
        task.labels_ = list(state["labels"])
        task._label_id = {t: i for i, t in enumerate(task.labels_)}
        task.labelled_ = bool(state["labelled"])
        task.single_root_ = bool(state["single_root"])
        task.pos_column_ = state["pos_column"]
        task.data_format_ = state["data_format"]
        # model files from before per-token vectors hold neither: trained on tokens
        task.input_kind_ = state.get("input_kind", "tokens")
        if task.input_kind_ not in INPUT_KINDS:
            raise InputError(f"the model file's input_kind is {task.input_kind_!r}; expected "
                             f"one of {', '.join(INPUT_KINDS)}. The file is damaged; save the "
                             f"model again")
        task.n_columns_ = check_count(state.get("n_columns", 0), "n_columns")
        task.bins_ = task._bins()
        task._restore_tagger(state, arrays)
        task.fitted_ = True
        return task


def _input_kind(records, path) -> tuple[str, int]:
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


def _gold_trees(records) -> list[DepTarget]:
    """The targets of read trees: heads, labels and the scored (non-punctuation) mask."""
    return [DepTarget(r.heads, r.deprels, tuple(punctuation_mask(r).tolist())) for r in records]


def _check_gold(dataset: Dataset, what: str) -> None:
    if any(t is None for t in dataset.targets):
        raise InputError(f"the {what} data has no gold trees (make_dataset without y); give "
                         f"y, one tree per sentence", dataset.path)
