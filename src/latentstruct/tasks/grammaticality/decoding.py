"""The structure of the grammaticality task: chunkings of a sentence in every view, their
per-view Viterbi decoding, the vote, Phi(x, h), the heuristic weights of a supervised
chunker, and the supervised chunking problem :class:`ChunkingView`.

:class:`ViewsStructure` is a small immutable object: the views' weight blocks (one
:class:`~latentstruct.tasks.grammaticality.views.ViewLayout` per view) over a fitted
:class:`~latentstruct.tasks.grammaticality.featurizer.GrammaticalityFeaturizer`'s attributes,
how the views combine, and (once a supervised chunker is trained) the chunker's weights.  It
is the latent-binary model of the task; it reads, tags, samples and evaluates nothing.  A
:class:`~latentstruct.tasks.grammaticality.GrammaticalityTask` builds one in ``fit`` and
``from_state`` (``task.structure_``; :meth:`ViewsStructure.build` lays the blocks out) and
replaces it by one with the chunker's weights when they are attached
(:meth:`ViewsStructure.with_chunker_weights`).  Every view reuses the compiled kernels of
the sequence tasks; ``LatentPA`` runs its epochs in one compiled call where the views are
concatenated (``latent_pa_batch``/``latent_pa_pass``,
:mod:`~latentstruct.tasks.grammaticality.online_kernels`).  The structures are described
in :mod:`latentstruct.tasks.grammaticality`.
"""

from __future__ import annotations

import numpy as np

from ...data.sparse import SparseVector, coalesce_arrays
from ...exceptions import ConfigError, InputError
from ...inference.result import EXACT, INFEASIBLE, DecodeResult
from ...inference.viterbi import viterbi_batch
from ..base import LatentBinaryDefaults, StructuredTask
from ..contracts import HEURISTIC, LATENT_BINARY, MAX_DECODABLE, SIZED
from ..sequence.corpus import SequenceCorpus, as_corpus
from ..sequence.encodings import convert, encoding_labels, majority_vote
from ..sequence.kernels import emission_scores, hamming_augmented, phi_difference
from .online_kernels import LatentPABatch
from .views import ViewLayout, view_constraints

__all__ = ["ViewsStructure", "ChunkingView"]

COMBINE = ("concat", "vote")

#: what the compiled LatentPA pass does itself: a subclass overriding one of these decodes,
#: scores or maps features its own way, and keeps the learner's Python loop
_COMPILED_AS = ("latent_argmax", "latent_argmax_batch", "latent_feature", "_views_feature",
                "_decode_views", "_view_weights", "_check_w")


class ViewsStructure(LatentBinaryDefaults):
    """Latent chunkings of a sentence, one per view, behind a binary decision (module
    docstring): f(x) = max_h w . Phi(x, h), h the chunk tags of every view.

    Parameters
    ----------
    views : sequence of ViewLayout
        The views' tag sets, weight offsets and constraint masks (:meth:`build` makes them).
    chunk_types : sequence of str
        The chunk types the tag sets are made of.
    n_attributes : int
        The attributes every view's emission block has a row for.
    combine : {"concat", "vote"}, default "concat"
        Score the concatenated views (exact), or decode each view and vote.
    chunker_coef : array of shape (n_features,) or None
        A supervised chunker's weights: ``heuristic_weights()`` (None: none trained).

    Immutable: a refitted task builds a new one, and attaching a chunker replaces it.
    """

    capabilities = frozenset({LATENT_BINARY, HEURISTIC})

    def __init__(self, views, chunk_types, n_attributes: int, combine: str = "concat",
                 chunker_coef=None):
        views = tuple(views)
        if not views or not all(isinstance(v, ViewLayout) for v in views):
            raise ValueError("ViewsStructure: views must be a non-empty sequence of ViewLayout")
        if combine not in COMBINE:
            raise ValueError(f"ViewsStructure: combine must be one of {COMBINE}, got "
                             f"{combine!r}")
        A = int(n_attributes)
        n_features = (views[-1].offset + A * views[-1].n_labels + views[-1].n_labels ** 2
                      + 2 * views[-1].n_labels + 1)
        if chunker_coef is not None:
            chunker_coef = _checked_chunker_coef(chunker_coef, n_features)
        values = {"views_": views, "chunk_types_": tuple(chunk_types), "_n_attributes": A,
                  "combine": combine, "_n_features": n_features,
                  "_label_ids": tuple({t: i for i, t in enumerate(v.labels)} for v in views),
                  "_bias_index": n_features - 1, "_chunker_coef": chunker_coef}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @classmethod
    def build(cls, view_names, chunk_types, constrained: bool, n_attributes: int,
              combine: str = "concat") -> "ViewsStructure":
        """Lay out the views' weight blocks over ``n_attributes`` attributes::

            [ view_1: emissions (A x L_1) | transitions (L_1 x L_1) | start | end ] ... [ bias ]

        each view's tag set made of ``chunk_types`` in its encoding, constrained to the
        well-formed sequences when ``constrained``."""
        types = tuple(chunk_types)
        views, offset = [], 0
        A = int(n_attributes)
        for name in view_names:
            labels = tuple(encoding_labels(types, name))
            L = len(labels)
            if constrained:
                tm, sm, em = view_constraints(labels, name)
            else:
                tm, sm, em = np.zeros((L, L)), np.zeros(L), np.zeros(L)
            views.append(ViewLayout(name, labels, offset, tm, sm, em))
            offset += A * L + L * L + 2 * L
        return cls(views, types, A, combine)

    def with_chunker_weights(self, coef) -> "ViewsStructure":
        """This structure with a supervised chunker's weights (shape ``(n_features,)``, in
        the layout of :class:`ChunkingView`) as ``heuristic_weights()``."""
        return type(self)(self.views_, self.chunk_types_, self._n_attributes, self.combine,
                          coef)

    def __setattr__(self, name, value):
        raise AttributeError(f"a {type(self).__name__} is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (type(self), (self.views_, self.chunk_types_, self._n_attributes, self.combine,
                             self._chunker_coef))

    def __repr__(self) -> str:
        names = ",".join(v.name for v in self.views_)
        return (f"{type(self).__name__}(views={names!r}, n_chunk_types="
                f"{len(self.chunk_types_)}, n_attributes={self._n_attributes}, "
                f"combine={self.combine!r}, chunker={self._chunker_coef is not None})")

    def __sklearn_is_fitted__(self) -> bool:
        return True  # built from a fitted featurizer's attributes

    @property
    def n_attributes(self) -> int:
        """The attributes every view's emission block has a row for."""
        return self._n_attributes

    @property
    def n_features(self) -> int:
        return self._n_features

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

    # --- the compiled LatentPA pass (CompiledLatentPA) -------------------------------------
    def latent_pa_batch(self, X, y, known=None) -> LatentPABatch | None:
        """``X`` and its labels ``y`` (+-1) prepared once for :meth:`latent_pa_pass`, with
        ``known`` ({sentence: Phi(x, h)}, the features of the structure each was last
        decoded to, as a checkpoint records them) remembered.  None for decode-then-vote
        (``combine="vote"``: the vote is not compiled) and for a subclass that decodes,
        scores or maps features its own way (it overrides one of :data:`_COMPILED_AS`):
        the learner's Python loop handles those."""
        if self.combine != "concat" or any(
                getattr(type(self), m) is not getattr(ViewsStructure, m) for m in _COMPILED_AS):
            return None
        X = as_corpus(X)
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (len(X),):
            raise InputError(f"{len(X)} sentences but labels of shape {y.shape}")
        return LatentPABatch(X, y, self.views_, self._n_attributes, known)

    def latent_pa_pass(self, batch: LatentPABatch, w: np.ndarray, u: np.ndarray,
                       order: np.ndarray, pa_type: int, C: float, max_rounds: int, t: int,
                       check: bool, rtol: float) -> dict:
        """One pass of LatentPA (Clifton et al. 2013, Algorithm 1 lines 4-10) over ``batch``
        in ``order``, compiled (:func:`~latentstruct.tasks.grammaticality.online_kernels.
        latent_pa_epoch`): for each sentence, every view's Viterbi chunking under the
        current ``w``, its score ``w . Phi(x, h*)``, the hinge loss, the step
        ``tau = solvers.online_rules.pa_tau(loss, ||Phi||^2, pa_type, C)`` and
        ``w += tau y Phi(x, h*)`` (``u += (t - 1) tau y Phi`` where ``u`` is not empty), a
        negative re-decoded until it scores below 0 or ``max_rounds`` rounds have run.
        Each decode is checked against ``w . Phi`` and against the structure the sentence
        was last decoded to (``rtol``); with ``check`` the pass stops at the first failure.
        Updates ``w``, ``u`` and the batch's memory in place; returns the pass's statistics
        (:data:`~latentstruct.tasks.grammaticality.online_kernels.PASS_STATS`)."""
        if w.shape != (self.n_features,) or w.dtype != np.float64 or not w.flags.c_contiguous:
            raise ValueError(f"latent_pa_pass needs the weights as a contiguous float64 array "
                             f"of {self.n_features}, got {w.dtype} {w.shape}")
        return batch.run(w, u, order, pa_type, C, max_rounds, t, check,
                         self.argmax_is_maximum(), rtol)

    def latent_pa_known(self, batch: LatentPABatch) -> dict:
        """{sentence: Phi(x, h)} of the structure each sentence of ``batch`` was last decoded
        to (what ``latent_pa_batch`` takes as ``known``)."""
        return batch.known_features(self._bias_index)

    def encode_chunking(self, tags) -> np.ndarray:
        """A chunking given as IOB2 tags, written in every view: tag ids (n_views, T)."""
        return np.array([[self._label_ids[k][t] for t in convert(tags, "iob2", v.name)]
                         for k, v in enumerate(self.views_)], dtype=np.int64)

    def decode_structure(self, h) -> dict[str, list[str]]:
        """Tag strings of a structure, by view."""
        h = np.asarray(h)
        return {v.name: [v.labels[i] for i in h[k]] for k, v in enumerate(self.views_)}

    # ------------------------------------------------------------------------------------
    # the heuristic weights: a supervised chunker's (Clifton et al. 2013, section 4)
    # ------------------------------------------------------------------------------------
    def chunking_task(self) -> "ChunkingView":
        """The supervised chunking problem in this structure's feature space (a
        max-decodable :class:`ChunkingView`), for training the chunker of
        ``heuristic_weights``."""
        return ChunkingView(self)

    @property
    def has_chunker(self) -> bool:
        """Whether a supervised chunker's weights are attached (``heuristic_weights()``)."""
        return self._chunker_coef is not None

    def heuristic_weights(self) -> np.ndarray:
        """The supervised chunker's weights (unscaled, bias 0), attached by
        :func:`latentstruct.pipelines.train_chunker` (the task's ``set_chunker_weights``)."""
        if self._chunker_coef is None:
            raise ConfigError(
                "this grammaticality task has no supervised chunker to initialise from (the "
                "learner asks for heuristic_weights: LCLR / lclr-variant with "
                "init=two-stage, two-stage, or latent-pa with init=heuristic). In code, call "
                "latentstruct.pipelines.train_chunker(task) after task.fit; `latentstruct "
                "train` trains it unless chunker=None (leave chunker=auto or set "
                "chunker=perceptron); or initialise the learner from zeros (init=zeros)"
            )
        return self._chunker_coef.copy()


def _checked_chunker_coef(coef, n_features: int) -> np.ndarray:
    """A chunker's weights as a read-only float64 copy, or ConfigError (shape, finiteness)."""
    coef = np.array(coef, dtype=np.float64)
    if coef.shape != (n_features,):
        raise ConfigError(
            f"chunker weights must have shape ({n_features},) -- this task's n_features -- "
            f"got {coef.shape}; train them with latentstruct.pipelines.train_chunker(task) "
            "after fit"
        )
    if not np.all(np.isfinite(coef)):
        raise ConfigError("chunker weights must be finite")
    coef.setflags(write=False)
    return coef


class ChunkingView(StructuredTask):
    """The supervised chunking problem over a :class:`ViewsStructure` (max-decodable).

    Built by ``ViewsStructure.chunking_task()`` (and the task's ``chunking_task()``) to
    train the chunker whose weights are the structure's ``heuristic_weights`` (Clifton et
    al. 2013, §4); not registered for the command line (it reads no files: its data come
    from the task's ``chunk_training_data()``).

    * examples ``x``: the task's featurised sentences (``SequenceCorpus``);
    * structures ``y``: int arrays (n_views, T), the chunk tags of the sentence in every
      view's encoding (tag ids of ``structure.views_[k].labels``);
    * Phi(x, y): the structure's ``latent_feature(x, y)`` without the bias entry -- the
      same weight layout and ``n_features``, so learned weights are directly the heuristic
      weights (with bias weight 0);
    * argmax: every view decoded independently by its (constrained, when the task is)
      Viterbi, exact; with ``y_true`` loss-augmented by the Hamming loss over all views'
      tags.  The structure's ``combine`` plays no part;
    * loss: Hamming loss over all views' tags.

    Parameters
    ----------
    structure : ViewsStructure
        The views (a fitted ``GrammaticalityTask`` is taken as its ``structure_``).
    """

    name = "grammaticality-chunking"
    capabilities = frozenset({MAX_DECODABLE, SIZED})

    def __init__(self, structure=None):
        self.structure = structure

    def _base(self) -> ViewsStructure:
        structure = self.structure
        if not isinstance(structure, ViewsStructure) and hasattr(structure, "structure_object"):
            structure = structure.structure_object()  # a fitted grammaticality task
        if not isinstance(structure, ViewsStructure):
            raise ConfigError(
                f"ChunkingView needs a ViewsStructure (a fitted GrammaticalityTask's "
                f"structure_) as its 'structure', got {type(self.structure).__name__}"
            )
        return structure

    def __sklearn_is_fitted__(self) -> bool:
        try:
            self._base()
        except (ConfigError, AttributeError):  # no structure, or an unfitted task's
            return False
        return True

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
