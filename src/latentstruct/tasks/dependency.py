"""First-order (arc-factored) dependency parsing (``dep``): projective trees by Eisner.

A sentence's structure is its dependency tree, decoded exactly over projective trees by
:func:`latentstruct.inference.eisner.eisner` from per-arc scores.  Features are
MSTParser-style first-order arc features plus, for labelled trees, label features of each
arc (:mod:`latentstruct.tasks.dependency_features`).

**Structures.**  A tree y of an n-word sentence is an int64 array of shape (3, n)::

    y[0]  heads: y[0, m-1] is the head of word m, 0 for ROOT
    y[1]  label ids (indices into ``labels_``); -1 when unlabelled or a gold label unseen
          in training (such a gold label never matches a prediction)
    y[2]  1 where the word is scored by UAS/LAS (``data.dependency.punctuation_mask``)

Row 2 is carried along for evaluation (decoders copy it from the featurised sentence) and
never affects scores, losses or features; (2, n) arrays of heads and labels are accepted
wherever a structure is read.

**Weight layout** (``n_features`` entries)::

    [ arc block: 2**hash_bits | label block: 2**label_hash_bits rows x n_labels ]

The label feature of (label context hashed to row r, label l) is
``2**hash_bits + r * n_labels + l``; unlabelled tasks have no label block.
score(h, m, l) = arc(h, m) + label(h, m, l).

**Decoding and loss.**  The first-order labelled argmax folds the best label into each arc,
s(h, m) = arc(h, m) + max_l label(h, m, l), runs Eisner on s and reads each chosen arc's
label back.  The loss counts head and label errors::

    Delta(y, y') = #{m : h'_m != h_m} + #{m : h'_m != h_m or l'_m != l_m}

(unlabelled: the first term only): the unlabelled plus the labelled attachment errors,
counted over all words, punctuation included.  It decomposes over arcs, so the
loss-augmented argmax is exact: +1 on arc h -> m when h is not m's gold head, and +1
*inside* the max for every label l when h is not the gold head or l is not the gold label,
s(h, m) = arc(h, m) + [h != h_m] + max_l (label(h, m, l) + [h != h_m or l != l_m]).
Gold trees that are not projective (2.3 % of UD EWT's training sentences) cannot be
decoded; the loss-augmented argmax returns the gold tree itself when it scores higher than
every projective tree, so it is an exact maximum over the projective trees and the gold
one (plain decoding stays projective).
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..data.dependency import (
    DependencySentence,
    punctuation_mask,
    read_dependencies,
    write_dependencies,
)
from ..data.readers import excerpt
from ..data.sparse import SparseVector
from ..exceptions import ConfigError, InputError
from ..inference.eisner import eisner, eisner_kbest
from ..inference.result import DecodeResult
from .base import Dataset, StructuredTask, register_task
from .contracts import KBEST, MAX_DECODABLE, SIZED
from .dependency_corpus import DepCorpus, as_dep_corpus, token_codes
from .dependency_features import (
    is_projective,
    phi_difference,
    score_batch,
    tree_ids_in_range,
    tree_label_score,
)
from .dependency_params import DependencyParams
from .dependency_raw import dependency_records, raw_trees
from .dependency_tagging import TaggerMixin
from .reports import attachment_report
from .validation import check_heads, check_label_ids

__all__ = ["DependencyTask", "DepTarget"]


class DepTarget(NamedTuple):
    """A gold tree as read: heads (0 = root), label strings ('_' unlabelled), scored mask."""

    heads: tuple
    deprels: tuple
    scored: tuple


_EMPTY = np.zeros(0, np.int64)


@register_task
class DependencyTask(DependencyParams, TaggerMixin, StructuredTask):
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
    (``tasks.dependency_raw``); ``decode_predictions`` gives trees in ``y``'s form.
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
        self._validate_params()
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
        ``tasks.dependency_raw``), each tree checked by ``check_tree`` (a single root when
        ``single_root`` resolves to True).  A bad entry is an ``InputError`` naming it
        (``X[3][5]``, ``y[2][4]``).
        """
        self._validate_params()
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
        self._validate_params()
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
            self.labels_ = sorted({d for r in records for d in r.deprels})
        else:
            self.labels_ = []
        self._label_id = {t: i for i, t in enumerate(self.labels_)}
        if self.pos == "gold":
            self._check_pos_column(records, dataset.path)
        self.bins_ = self._bins()
        self.fitted_ = True
        return self

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
        self.check_fitted()
        n = self.n_arc_features
        if self.labelled_:
            n += self.n_labels << int(self.label_hash_bits)
        return n

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

        return DepCorpus(cat(words), cat(prefixes), cat(pos), cat(scored), np.asarray(offsets))

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Gold trees to (3, n) arrays; a label unseen in training becomes -1."""
        self.check_fitted()
        out = []
        get = self._label_id.get
        for t in targets:
            heads = np.asarray(t[0], dtype=np.int64)
            n = heads.shape[0]
            y = np.empty((3, n), dtype=np.int64)
            y[0] = heads
            y[1] = [get(d, -1) for d in t[1]] if self.labelled_ else -1
            y[2] = np.asarray(t[2], dtype=np.int64) if len(t) > 2 else 1
            out.append(y)
        return out

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

    def _check_w(self, w) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w

    def _kernel_args(self):
        return (np.int64(self.n_arc_features - 1), np.int64(self.n_arc_features),
                np.int64((1 << int(self.label_hash_bits)) - 1),
                np.int64(self.n_labels if self.labelled_ else 0), self.bins_)

    def _scores(self, X: DepCorpus, w, Y=None):
        mask, n_arc, lmask, L, bins = self._kernel_args()
        if Y is None:
            gh = gl = _EMPTY
        else:
            Y = list(Y)
            if len(Y) != len(X):
                raise ValueError(f"{len(X)} sentences but {len(Y)} gold trees")
            lengths = X.lengths()
            Y = [self._tree_ids(y, int(lengths[i]), f"gold tree {i}") for i, y in enumerate(Y)]
            gh = np.concatenate([y[0] for y in Y]) if Y else _EMPTY
            gl = np.concatenate([y[1] for y in Y]) if Y else _EMPTY
            if not self.labelled_:
                gl = np.full_like(gh, -1)
        return score_batch(X.word, X.prefix, X.pos, X.offsets, self._check_w(w), mask, n_arc,
                           lmask, L, bins, gh, gl, Y is not None)

    def arc_scores(self, x, w, *, with_labels: bool = False):
        """The (n+1, n+1) arc scores of one sentence with the best label folded in.

        ``S[h, m]`` = arc(h, m) + max_l label(h, m, l) (-inf on the diagonal and in column 0;
        row/column 0 is ROOT).  With ``with_labels`` also the (n+1, n+1) int array of the
        maximising label ids (-1 when unlabelled).
        """
        x = self._one(x)
        S, B, sq = self._scores(x, w)
        n1 = int(x.offsets[1] - x.offsets[0])
        S = S.reshape(n1, n1)
        return (S, B.reshape(n1, n1).astype(np.int64)) if with_labels else S

    def _one(self, x) -> DepCorpus:
        x = as_dep_corpus(x)
        if len(x) != 1:
            raise ValueError(f"expected one featurised sentence, got {len(x)}")
        return x

    def _tree_ids(self, y, n: int, what: str) -> np.ndarray:
        """``y`` as int64 rows (heads, label ids, ...) checked before a kernel indexes with
        them: heads in 0..n, label ids in -1..L-1 (labels are ignored when unlabelled)."""
        if (isinstance(y, np.ndarray) and y.dtype == np.int64 and y.ndim == 2
                and y.shape[0] >= 2 and y.shape[1] == n):
            # fast path (every decode of every pass comes here): int64 rows in range
            L = self.n_labels if self.labelled_ else 0
            if tree_ids_in_range(y[0], y[1], n, L):
                return y[:2] if L else np.stack([y[0], np.full(n, -1, np.int64)])
        if np.ndim(y) != 2 or np.shape(y)[0] < 2 or np.shape(y)[1] != n:
            raise ValueError(f"{what} must have shape (3, {n}) (heads, labels, scored), got "
                             f"{np.shape(y)}")
        heads = check_heads(np.asarray(y)[0], n, what=f"{what}: heads")
        labels = np.asarray(y)[1]
        labels = check_label_ids(labels, self.n_labels, what=f"{what}: labels") \
            if self.labelled_ else np.full(n, -1, np.int64)
        return np.stack([heads, labels])

    def _phi(self, x: DepCorpus, y_a, y_b=None):
        mask, n_arc, lmask, L, bins = self._kernel_args()
        n = int(x.offsets[1] - x.offsets[0]) - 1
        ya = self._tree_ids(y_a, n, "structure")
        none = np.full(n, -1, np.int64)
        la = ya[1] if self.labelled_ else none
        if y_b is None:
            hb = lb = none
        else:
            yb = self._tree_ids(y_b, n, "structure y_b")
            hb, lb = yb[0], (yb[1] if self.labelled_ else none)
        return SparseVector(*phi_difference(x.word, x.prefix, x.pos, x.offsets[0], n + 1, ya[0],
                                            la, hb, lb, mask, n_arc, lmask, L, bins))

    def joint_feature(self, x, y) -> SparseVector:
        """Phi(x, y): the arc features of every arc of y plus its label features, coalesced
        (unique indices, in no particular order)."""
        return self._phi(self._one(x), y)

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        """Phi(x, y_a) - Phi(x, y_b), coalesced; words whose head and label agree cancel."""
        return self._phi(self._one(x), y_a, y_b)

    def loss(self, y_true, y_pred) -> float:
        """Head errors plus (labelled) words with a wrong head or label."""
        a, b = np.asarray(y_true), np.asarray(y_pred)
        wrong_head = a[0] != b[0]
        loss = int(np.count_nonzero(wrong_head))
        if self.labelled_:
            loss += int(np.count_nonzero(wrong_head | (a[1] != b[1])))
        return float(loss)

    def argmax(self, x, w, y_true=None, *, random_state=None) -> DecodeResult:
        """Best projective tree of one sentence; loss-augmented when ``y_true`` is given."""
        Y = None if y_true is None else [y_true]
        return self.argmax_results(self._one(x), w, Y)[0]

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list[DecodeResult]:
        X = as_dep_corpus(X)
        S, B, sq = self._scores(X, w, Y)
        out = []
        for i in range(len(X)):
            n1 = int(X.offsets[i + 1] - X.offsets[i])
            Si, Bi = S[sq[i]:sq[i + 1]], B[sq[i]:sq[i + 1]]
            heads = _EMPTY if n1 == 1 else np.asarray(
                eisner(Si.reshape(n1, n1), single_root=self.single_root_).structure, np.int64)
            # the score of the returned tree under the (folded, augmented) arc scores
            score, labels = tree_label_score(Si, Bi, heads)
            score = float(score)
            y = np.empty((3, n1 - 1), np.int64)
            y[0] = heads
            y[1] = labels if self.labelled_ else -1
            y[2] = X.scored[X.offsets[i] + 1:X.offsets[i + 1]]
            if Y is not None:
                y, score = self._gold_if_better(X[i], w, np.asarray(Y[i]), y, score)
            out.append(DecodeResult(y, score))
        return out

    def _gold_if_better(self, x, w, gold, y, score):
        """The gold tree when it is not projective and beats the loss-augmented argmax."""
        if is_projective(np.ascontiguousarray(gold[0], dtype=np.int64)):
            return y, score
        gold_score = self._phi(x, gold).dot(w)
        if gold_score > score + 1e-9 * max(1.0, abs(score)):
            g = np.array(y)
            g[0] = gold[0]
            g[1] = gold[1] if self.labelled_ else -1
            return g, gold_score
        return y, score

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        return [r.structure for r in self.argmax_results(X, w, Y)]

    def kbest(self, x, w, k: int) -> list[tuple[np.ndarray, tuple, float]]:
        """The ``k`` best projective trees of one sentence, best first.

        Each is ``(heads, deprels, score)``: heads (n,) int64 (0 = root), label strings chosen
        per arc as in the 1-best decoder ('_' when unlabelled), and the model score w . Phi.
        """
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        S, B = self.arc_scores(x, w, with_labels=True)
        n = S.shape[0] - 1
        if n == 0:
            return [(_EMPTY.copy(), (), 0.0)]
        trees = eisner_kbest(S, int(k), single_root=self.single_root_)
        out = []
        for heads, score in zip(np.asarray(trees.heads), np.asarray(trees.scores)):
            heads = np.asarray(heads, dtype=np.int64)
            ids = B[heads, np.arange(1, n + 1)]
            deprels = tuple(self.labels_[i] for i in ids) if self.labelled_ else ("_",) * n
            out.append((heads, deprels, float(score)))
        return out

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
        arrays: dict = {}
        self._tagger_state(state, arrays)
        return state, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task._validate_params()
        task.labels_ = list(state["labels"])
        task._label_id = {t: i for i, t in enumerate(task.labels_)}
        task.labelled_ = bool(state["labelled"])
        task.single_root_ = bool(state["single_root"])
        task.pos_column_ = state["pos_column"]
        task.data_format_ = state["data_format"]
        task.bins_ = task._bins()
        task._restore_tagger(state, arrays)
        task.fitted_ = True
        return task


def _gold_trees(records) -> list[DepTarget]:
    """The targets of read trees: heads, labels and the scored (non-punctuation) mask."""
    return [DepTarget(r.heads, r.deprels, tuple(punctuation_mask(r).tolist())) for r in records]


def _check_gold(dataset: Dataset, what: str) -> None:
    if any(t is None for t in dataset.targets):
        raise InputError(f"the {what} data has no gold trees (make_dataset without y); give "
                         f"y, one tree per sentence", dataset.path)
