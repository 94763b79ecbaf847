"""The structure of the grammaticality task: chunkings of a sentence in every view, their
per-view Viterbi decoding, the vote, Phi(x, h), the heuristic weights of a supervised
chunker, and the supervised chunking problem :class:`ChunkingView`.

:class:`ViewsStructure` is the base class of
:class:`~latentstruct.tasks.grammaticality.GrammaticalityTask`: the latent-binary structure
over the views' weight blocks, whatever produced its examples
(:class:`~latentstruct.tasks.grammaticality.featurizer.GrammaticalityFeaturizer` does).  It
reads the parameters ``views``, ``combine``, ``constrained`` and ``chunk_types``, which the
task's ``__init__`` stores; ``setup_views(n_attributes)`` lays out the weight blocks (one
:class:`~latentstruct.tasks.grammaticality.views.ViewLayout` per view) once the number of
attributes is known.  Every view reuses the compiled kernels of the sequence tasks.  The
structures are described in :mod:`latentstruct.tasks.grammaticality`.
"""

from __future__ import annotations

import numpy as np

from ...data.sparse import SparseVector, coalesce_arrays
from ...exceptions import ConfigError, InputError, check_is_fitted
from ...inference.result import EXACT, INFEASIBLE, DecodeResult
from ...inference.viterbi import viterbi_batch
from ..base import LatentBinaryTask, StructuredTask
from ..contracts import MAX_DECODABLE, SIZED
from ..sequence.corpus import SequenceCorpus, as_corpus
from ..sequence.encodings import convert, encoding_labels, majority_vote
from ..sequence.kernels import emission_scores, hamming_augmented, phi_difference
from .views import ViewLayout, chunk_type_names, parse_views, view_constraints

__all__ = ["ViewsStructure", "ChunkingView"]


class ViewsStructure(LatentBinaryTask):
    """Latent chunkings of a sentence, one per view, behind a binary decision (module
    docstring): f(x) = max_h w . Phi(x, h), h the chunk tags of every view."""

    # ------------------------------------------------------------------------------------
    # the views and their weight blocks
    # ------------------------------------------------------------------------------------
    def view_names(self) -> list[str]:
        """The configured views, validated (``ConfigError`` for an unknown or repeated one)."""
        return parse_views(self.views)

    def chunk_type_names(self) -> list[str]:
        """The configured chunk types (``ConfigError`` for an empty list)."""
        return chunk_type_names(self.chunk_types)

    def setup_views(self, n_attributes: int) -> None:
        """Lay out the views' weight blocks over ``n_attributes`` attributes::

            [ view_1: emissions (A x L_1) | transitions (L_1 x L_1) | start | end ] ... [ bias ]
        """
        types = self.chunk_type_names()
        self.chunk_types_ = tuple(types)
        views, offset = [], 0
        A = int(n_attributes)
        for name in self.view_names():
            labels = tuple(encoding_labels(types, name))
            L = len(labels)
            if self.constrained:
                tm, sm, em = view_constraints(labels, name)
            else:
                tm, sm, em = np.zeros((L, L)), np.zeros(L), np.zeros(L)
            views.append(ViewLayout(name, labels, offset, tm, sm, em))
            offset += A * L + L * L + 2 * L
        self.views_ = tuple(views)
        self._n_attributes = A
        self._label_ids = [{t: i for i, t in enumerate(v.labels)} for v in views]
        self._bias_index = offset

    @property
    def n_attributes(self) -> int:
        """The attributes every view's emission block has a row for."""
        check_is_fitted(self)
        return self._n_attributes

    @property
    def n_features(self) -> int:
        check_is_fitted(self)
        return self._bias_index + 1

    def as_batch(self, X) -> SequenceCorpus:
        return as_corpus(X)

    def subset(self, X: SequenceCorpus, indices) -> SequenceCorpus:
        return as_corpus(X).subset(indices)

    def example_size(self, x: SequenceCorpus) -> int:
        return x.n_tokens

    def loss(self, y_true, y_pred) -> float:
        return float(y_true != y_pred)

    # ------------------------------------------------------------------------------------
    # decoding
    # ------------------------------------------------------------------------------------
    def _view_weights(self, w: np.ndarray, view: ViewLayout):
        A, L = self._n_attributes, view.n_labels
        o = view.offset
        e = o + A * L
        return (w[o:e].reshape(A, L), w[e:e + L * L].reshape(L, L),
                w[e + L * L:e + L * L + L], w[e + L * L + L:e + L * L + 2 * L])

    def _check_w(self, w) -> np.ndarray:
        check_is_fitted(self)
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w

    def _decode_views(self, X: SequenceCorpus, w: np.ndarray, Y=None):
        """Per view: (unary (N, L), masked transition/start/end, labels (N,), scores
        (n_seq,)) of the independent Viterbi decoding of every sentence, and the sentence
        offsets.  With gold structures ``Y`` (one (n_views, T_i) array per sentence) the
        unary scores are Hamming-loss-augmented (+1 on every tag but the gold one)."""
        offsets = X.offsets - X.offsets[0]
        out = []
        for k, view in enumerate(self.views_):
            E, T, S, En = self._view_weights(w, view)
            unary = emission_scores(X.attr_indptr, X.attr_ids, X.attr_values, E, X.offsets[0],
                                    X.offsets[-1])
            if Y is not None:
                gold = (np.concatenate([y[k] for y in Y]) if len(Y)
                        else np.zeros(0, np.int64))
                unary = hamming_augmented(unary, np.ascontiguousarray(gold, dtype=np.int64))
            T, S, En = T + view.trans_mask, S + view.start_mask, En + view.end_mask
            res = viterbi_batch(unary, offsets, T, S, En)
            out.append((unary, T, S, En, res.labels, res.scores))
        return offsets, out

    def _vote(self, h: np.ndarray) -> np.ndarray:
        """The majority vote (in O+C space) of the views' chunkings ``h`` (n_views, T),
        written back in every view."""
        tags = {v.name: [v.labels[i] for i in h[k]] for k, v in enumerate(self.views_)}
        voted = majority_vote(tags)
        return np.array([[self._label_ids[k][t] for t in voted[v.name]]
                         for k, v in enumerate(self.views_)], dtype=np.int64).reshape(h.shape)

    def vote(self, h) -> np.ndarray:
        """Public form of the vote: ``h`` int array (n_views, T) -> voted (n_views, T)."""
        check_is_fitted(self)
        return self._vote(self._check_structure(h, np.asarray(h).shape[-1]))

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        """Best structure of every sentence (concat: exact per-view Viterbi; vote: the
        vote of the per-view Viterbi chunkings) with its score w . Phi(x, h)."""
        w = self._check_w(w)
        X = as_corpus(X)
        offsets, decoded = self._decode_views(X, w)
        bias = float(w[self._bias_index])
        out = []
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            h = np.stack([d[4][a:b] for d in decoded]) if b > a else np.zeros(
                (len(decoded), 0), np.int64)
            if self.combine == "concat":
                score = float(sum(d[5][s] for d in decoded)) + bias
            else:
                h = self._vote(h)
                score = bias + sum(
                    _chain_score(d[0][a:b], d[1], d[2], d[3], h[k])
                    for k, d in enumerate(decoded))
            out.append(DecodeResult(h, score, EXACT))
        return out

    def argmax_is_maximum(self) -> bool:
        """Decode-then-vote (``combine="vote"``) is the paper's procedure, not a maximum of
        w . Phi(x, h); per-view Viterbi (``"concat"``) is exact."""
        return self.combine != "vote"

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        return self.latent_argmax_batch(x, w)[0]

    def decision_batch(self, X, w) -> np.ndarray:
        if self.combine == "vote":
            return super().decision_batch(X, w)
        w = self._check_w(w)
        _, decoded = self._decode_views(as_corpus(X), w)
        return sum(d[5] for d in decoded) + float(w[self._bias_index])

    def _check_structure(self, h, T: int) -> np.ndarray:
        h = np.asarray(h, dtype=np.int64)
        V = len(self.views_)
        if h.shape != (V, T):
            raise InputError(
                f"a structure must be an int array of shape (n_views, n_tokens) = ({V}, {T}), "
                f"got shape {h.shape}"
            )
        for k, v in enumerate(self.views_):
            if T and (h[k].min() < 0 or h[k].max() >= v.n_labels):
                raise InputError(
                    f"view {v.name} has {v.n_labels} tags; structure row {k} holds an id "
                    f"outside 0..{v.n_labels - 1}"
                )
        return h

    def _views_feature(self, x: SequenceCorpus, h_a, h_b=None, *, bias: float = 0.0
                       ) -> SparseVector:
        """Phi_views(x, h_a) - Phi_views(x, h_b) (h_b None: zero) plus ``bias`` times the
        bias feature: each view's emission, transition, start and end indicators in its
        own block."""
        check_is_fitted(self)
        T = x.n_tokens
        h_a = self._check_structure(h_a, T)
        h_b = (np.full(h_a.shape, -1, dtype=np.int64) if h_b is None
               else self._check_structure(h_b, T))
        A = self._n_attributes
        idx, val = [], []
        if bias:
            idx.append(np.array([self._bias_index], np.int64))
            val.append(np.array([float(bias)]))
        for k, v in enumerate(self.views_):
            i, vv = phi_difference(x.attr_indptr, x.attr_ids, x.attr_values, x.offsets[0],
                                   x.offsets[-1], h_a[k], h_b[k], A, v.n_labels)
            idx.append(i + v.offset)
            val.append(vv)
        return SparseVector(*coalesce_arrays(np.concatenate(idx), np.concatenate(val)))

    def latent_feature(self, x: SequenceCorpus, h) -> SparseVector:
        """Phi(x, h): each view's emission, transition, start and end indicators in its own
        block, plus the bias."""
        return self._views_feature(x, h, bias=1.0)

    def encode_chunking(self, tags) -> np.ndarray:
        """A chunking given as IOB2 tags, written in every view: tag ids (n_views, T)."""
        check_is_fitted(self)
        return np.array([[self._label_ids[k][t] for t in convert(tags, "iob2", v.name)]
                         for k, v in enumerate(self.views_)], dtype=np.int64)

    def decode_structure(self, h) -> dict[str, list[str]]:
        """Tag strings of a structure, by view."""
        check_is_fitted(self)
        h = np.asarray(h)
        return {v.name: [v.labels[i] for i in h[k]] for k, v in enumerate(self.views_)}

    # ------------------------------------------------------------------------------------
    # the heuristic weights: a supervised chunker's (Clifton et al. 2013, section 4)
    # ------------------------------------------------------------------------------------
    def chunking_task(self) -> "ChunkingView":
        """The supervised chunking problem in this task's feature space (a max-decodable
        ``ChunkingView``), for training the chunker of ``heuristic_weights``."""
        check_is_fitted(self)
        return ChunkingView(self)

    def set_chunker_weights(self, coef) -> "ViewsStructure":
        """Attach a supervised chunker's weights (shape ``(n_features,)``, in the layout of
        ``chunking_task()``) as ``heuristic_weights``."""
        check_is_fitted(self)
        coef = np.array(coef, dtype=np.float64)
        if coef.shape != (self.n_features,):
            raise ConfigError(
                f"chunker weights must have shape ({self.n_features},) -- this task's "
                f"n_features -- got {coef.shape}; train them with "
                "latentstruct.pipelines.train_chunker(task) after fit"
            )
        if not np.all(np.isfinite(coef)):
            raise ConfigError("chunker weights must be finite")
        self.chunker_coef_ = coef
        return self

    def heuristic_ready(self) -> bool:
        """Whether ``heuristic_weights()`` is available (chunker weights are attached)."""
        return self.is_fitted() and getattr(self, "chunker_coef_", None) is not None

    def heuristic_weights(self) -> np.ndarray:
        """The supervised chunker's weights (unscaled, bias 0), attached by
        :func:`latentstruct.pipelines.train_chunker` or ``set_chunker_weights``."""
        check_is_fitted(self)
        if getattr(self, "chunker_coef_", None) is None:
            raise ConfigError(
                "this grammaticality task has no supervised chunker to initialise from (the "
                "learner asks for heuristic_weights: LCLR / lclr-variant with "
                "init=two-stage, two-stage, or latent-pa with init=heuristic). In code, call "
                "latentstruct.pipelines.train_chunker(task) after task.fit; `latentstruct "
                "train` trains it unless chunker=None (leave chunker=auto or set "
                "chunker=perceptron); or initialise the learner from zeros (init=zeros)"
            )
        return self.chunker_coef_.copy()



class ChunkingView(StructuredTask):
    """The supervised chunking problem of a fitted ``GrammaticalityTask`` (max-decodable).

    Built by ``GrammaticalityTask.chunking_task()`` to train the chunker whose weights are
    the task's ``heuristic_weights`` (Clifton et al. 2013, §4); not registered for the
    command line (it reads no files: its data come from ``chunk_training_data()``).

    * examples ``x``: the task's featurised sentences (``SequenceCorpus``);
    * structures ``y``: int arrays (n_views, T), the chunk tags of the sentence in every
      view's encoding (tag ids of ``task.views_[k].labels``);
    * Phi(x, y): the task's ``latent_feature(x, y)`` without the bias entry -- the same
      weight layout and ``n_features`` as the task, so learned weights are directly the
      task's heuristic weights (with bias weight 0);
    * argmax: every view decoded independently by its (constrained, when the task is)
      Viterbi, exact; with ``y_true`` loss-augmented by the Hamming loss over all views'
      tags.  The ``combine`` of the task plays no part;
    * loss: Hamming loss over all views' tags.
    """

    name = "grammaticality-chunking"
    capabilities = frozenset({MAX_DECODABLE, SIZED})

    def __init__(self, task=None):
        self.task = task

    def _base(self) -> ViewsStructure:
        if not isinstance(self.task, ViewsStructure):
            raise ConfigError(
                f"ChunkingView needs a fitted GrammaticalityTask as its 'task', got "
                f"{type(self.task).__name__}"
            )
        return self.task

    def __sklearn_is_fitted__(self) -> bool:
        return isinstance(self.task, ViewsStructure) and self.task.is_fitted()

    @property
    def n_features(self) -> int:
        return self._base().n_features

    def subset(self, X: SequenceCorpus, indices) -> SequenceCorpus:
        return as_corpus(X).subset(indices)

    def as_batch(self, X):
        return as_corpus(X)

    def example_size(self, x: SequenceCorpus) -> int:
        return x.n_tokens

    def joint_feature(self, x: SequenceCorpus, y) -> SparseVector:
        return self._base()._views_feature(x, y)

    def joint_feature_difference(self, x: SequenceCorpus, y_a, y_b) -> SparseVector:
        return self._base()._views_feature(x, y_a, y_b)

    def _decode(self, X, w, Y=None) -> list[DecodeResult]:
        task = self._base()
        w = task._check_w(w)
        X = as_corpus(X)
        if Y is not None:
            if len(Y) != len(X):
                raise InputError(f"{len(X)} sentences but {len(Y)} gold structures")
            lengths = X.lengths()
            Y = [task._check_structure(y, int(lengths[i])) for i, y in enumerate(Y)]
        offsets, decoded = task._decode_views(X, w, Y)
        out = []
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            h = np.stack([d[4][a:b] for d in decoded]).astype(np.int64, copy=False)
            score = float(sum(d[5][s] for d in decoded))
            out.append(DecodeResult(h, score, EXACT if np.isfinite(score) else INFEASIBLE))
        return out

    def argmax(self, x: SequenceCorpus, w, y_true=None, *, random_state=None) -> DecodeResult:
        """Per-view Viterbi (Hamming-loss-augmented over all views with ``y_true``); the
        score is w . Phi(x, y) (plus the loss when augmented)."""
        return self._decode(x, w, None if y_true is None else [y_true])[0]

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list[DecodeResult]:
        return self._decode(X, w, Y)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        return [r.structure for r in self._decode(X, w, Y)]

    def loss(self, y_true, y_pred) -> float:
        a, b = np.asarray(y_true), np.asarray(y_pred)
        if a.shape != b.shape:
            raise InputError(
                f"structures of shape {a.shape} and {b.shape} cannot be compared; both must be "
                "(n_views, n_tokens)"
            )
        return float(np.count_nonzero(a != b))

    def encode_targets(self, targets) -> list[np.ndarray]:
        return [np.asarray(t, dtype=np.int64) for t in targets]

    def evaluate(self, targets, predictions) -> dict:
        """Tag accuracy over all views' tags, and per view (``accuracy_<view>``)."""
        task = self._base()
        out = {}
        total = correct = 0
        for k, v in enumerate(task.views_):
            n = sum(int(np.asarray(t)[k].size) for t in targets)
            c = sum(int(np.count_nonzero(np.asarray(t)[k] == np.asarray(p)[k]))
                    for t, p in zip(targets, predictions, strict=True))
            out[f"accuracy_{v.name}"] = c / n if n else 0.0
            total, correct = total + n, correct + c
        return {"accuracy": correct / total if total else 0.0, **out}


def _chain_score(unary, trans, start, end, labels) -> float:
    """start[y_0] + sum_t unary[t, y_t] + sum_t trans[y_{t-1}, y_t] + end[y_{T-1}]."""
    T = labels.shape[0]
    if T == 0:
        return 0.0
    s = float(unary[np.arange(T), labels].sum()) + float(start[labels[0]]) + float(end[labels[-1]])
    if T > 1:
        s += float(trans[labels[:-1], labels[1:]].sum())
    return s
