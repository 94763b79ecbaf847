"""Two capabilities of first-order sequence labelling: *marginalizable* and *label-factored*.

The mixins form one line of inheritance, which
:class:`~latentstruct.tasks.sequence.structure.ChainStructure` (the chain every sequence
task extends) joins with ``StructuredTask``::

    SequencePartScores <- MarginalizableSequence <- LabelFactoredSequence <- ChainStructure

They define no ``__init__`` and no parameters, and rely only on these members of the task:
``n_labels``, ``n_attributes``, ``n_features``, ``split_weights(w)`` (emission (n_attr, L),
transition (L, L), start (L,), end (L,)), ``label_scores(w)`` and ``constrained(transition,
start, end)`` (those scores with the chain's constraints, if any, at ``-inf``: every sum and
argmax here runs over the allowed labellings), ``constraints``, ``unary_scores(x, w)`` (T, L),
and on examples ``x``
being one-sentence ``SequenceCorpus`` objects (``attr_indptr``, ``attr_ids``,
``attr_values``, ``offsets``, ``n_tokens``).  An attribute occurrence with value v
(``attr_values``; None: every value 1) scales its emission feature by v, in every form here:
expected features, the CRF's loss and gradient, marginals and DISTRO's input rows.  The weight layout is the one documented in
:mod:`latentstruct.tasks.sequence.labelling`:

    w = [ emissions (n_attr x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

* :class:`MarginalizableSequence` — log-partition, node/edge marginals and expected features of
  the CRF p(y | x) ∝ exp(w·Φ(x, y)), for the hidden-variable log-linear reranker (Koo & Collins
  2005, §3.2: Z and F(t, Θ) from single-variable and pairwise marginals).
* :class:`LabelFactoredSequence` — the parts of a sentence with their label arities and input
  feature rows, part scores from a label matrix A (d × L), and the label indicators of a
  structure, for DISTRO (Srikumar & Manning 2014, Eq. 3–4 and the first-order sequence case of
  §3.1): emission score of token t with label l is ``φ_E,tᵀ W_E a_l``, transition score of
  (l, l') is ``a_lᵀ W_T a_l'``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, NamedTuple

import numpy as np
import scipy.sparse as sp

from ...data.sparse import SparseVector, coalesce_arrays
from ...exceptions import InputError
from ...inference.chain import ChainMarginals, chain_sum_product
from ...inference.constraints import token_mask
from ...inference.result import DecodeResult
from ...inference.viterbi import viterbi, viterbi_batch
from ..label_factored import LabelFactoredBatch, check_unary, gold_labels
from .crf_kernels import (TrainedLogLoss, log_loss_gradient, log_loss_sgd_epoch, node_marginals_batch,
                          trained_layout)
from .kernels import hamming_augmented

__all__ = [
    "ChainPartScores",
    "SequenceLabelParts",
    "SequenceLabelCounts",
    "SequencePartScores",
    "MarginalizableSequence",
    "LabelFactoredSequence",
    "PART_ARITY",
]

#: Number of labels each part type of a first-order chain is labelled with (DISTRO's |y_p|):
#: emissions and start/end are atomic, transitions compositional.
PART_ARITY: Mapping[str, int] = MappingProxyType({"emission": 1, "transition": 2, "start": 1, "end": 1})


class ChainPartScores(NamedTuple):
    """Part scores of one sentence, in the form :func:`~latentstruct.inference.viterbi.viterbi`
    and :func:`~latentstruct.inference.chain.chain_sum_product` take them.

    unary (T, L), transition (L, L) (``[prev, next]``), start (L,), end (L,).
    Unpacks as a tuple: ``viterbi(*scores)``.
    """

    unary: np.ndarray
    transition: np.ndarray
    start: np.ndarray
    end: np.ndarray


def _rebased(labels: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Labels indexed by absolute token position: a corpus view's offsets need not start at 0,
    and the kernel reads ``labels[t]`` for token t of ``offsets``."""
    t0 = int(offsets[0])
    if t0 == 0:
        return labels
    out = np.full(int(offsets[-1]), -1, dtype=np.int64)
    out[t0:] = labels
    return out


def _check_one_sentence(x) -> tuple[int, int]:
    """Token range (t0, t1) of a one-sentence corpus, or an InputError."""
    n = len(x)
    if n != 1:
        raise InputError(
            f"expected one sentence (a one-sentence SequenceCorpus such as X[i]); got a corpus of "
            f"{n} sentences. Index the corpus to pass a single example."
        )
    return int(x.offsets[0]), int(x.offsets[-1])


class SequencePartScores:
    """Shared by both capabilities: the task's own part scores of a sentence, restricted
    to the labels a user allows per token (capability *allowed-labels*)."""

    def local_only(self, what: str) -> None:
        """Refuse ``what`` (a decoder of the chain's dynamic programmes) when the structure
        has global constraints (``global_constraints``), which only the ILP argmax keeps."""
        if getattr(self, "global_constraints", None) is not None:
            raise InputError(
                f"{what}: not available with global rules (count, at least one, if-then, "
                f"contiguous), under which only the best labelling can be found (an ILP); "
                f"drop those rules, or keep only local ones (first, last, forbid, require)")

    def training_constraints(self, what: str) -> None:
        """Refuse ``what`` (a training computation of the chain's dynamic programmes: the
        CRF's likelihood, completing partial labels) when training keeps global
        constraints."""
        if (getattr(self, "global_constraints", None) is not None
                and getattr(self, "train_global", False)):
            self.local_only(what)

    def part_scores(self, x, w: np.ndarray, *, allowed=None) -> ChainPartScores:
        """Part scores of sentence ``x`` under ``w``: unary (T, L) and views of the transition,
        start and end blocks of ``w`` (the scores ``argmax`` runs Viterbi on).

        ``allowed``: None, or one entry per token, each None (any label) or a collection of
        label ids (the labels that token may take; one id forces it).  The other labels'
        unary scores are ``-inf``, so every decoder and every sum over these scores runs
        over the labellings that keep the restriction, exactly (``inference.constraints``)."""
        _check_one_sentence(x)
        self.local_only("the part scores of the chain's dynamic programmes (marginals, k-best)")
        return ChainPartScores(self.restricted_unary(self.unary_scores(x, w), allowed),
                               *self.label_scores(w))

    def restricted_unary(self, unary: np.ndarray, allowed) -> np.ndarray:
        """``unary`` (T, L) with the labels ``allowed`` rules out at ``-inf`` (a copy; the
        array itself when ``allowed`` restricts nothing)."""
        mask = token_mask(allowed, unary.shape[0], self.n_labels)
        return unary if mask is None else unary + mask


# ============================================================================================
# marginalizable
# ============================================================================================
class MarginalizableSequence(SequencePartScores):
    """Capability *marginalizable*: sums over all label sequences of one sentence.

    The model is p(y | x; w) = exp(w·Φ(x, y) − log Z(x; w)) over all L**T label sequences,
    computed exactly by sum-product on the chain (O(T L²) per sentence).
    """

    def marginals(self, x, w: np.ndarray, *, allowed=None) -> ChainMarginals:
        """Log-partition and marginals of p(y | x; w) (with ``allowed``, see
        :meth:`part_scores`: of p(y | x, y keeps the restriction; w)).

        Returns
        -------
        ChainMarginals
            ``log_partition`` (float), ``node`` (T, L) with ``node[t, k] = p(y_t = k)``, and
            ``edge`` (T − 1, L, L) with ``edge[t, a, b] = p(y_t = a, y_{t+1} = b)``.
        """
        return chain_sum_product(*self.part_scores(x, w, allowed=allowed))

    def log_partition(self, x, w: np.ndarray, *, allowed=None) -> float:
        """``log Σ_y exp(w·Φ(x, y))`` over every label sequence of sentence ``x`` (that
        keeps ``allowed``, see :meth:`part_scores`)."""
        return self.marginals(x, w, allowed=allowed).log_partition

    def expected_feature_sparse(self, x, w: np.ndarray) -> SparseVector:
        """``E_{p(y|x;w)}[Φ(x, y)]`` as a coalesced :class:`SparseVector` laid out like ``w``.

        This is Koo & Collins' F(t, Θ) (§3.2), the gradient of :meth:`log_partition` in ``w``:
        emission (a, k) gets Σ_t v_t(a) p(y_t = k) (v_t(a): the value of attribute a at token
        t, 1 for a binary attribute); transition (a, b) gets
        Σ_t p(y_t = a, y_{t+1} = b); start / end get the first / last node marginals.
        Its support is the sentence's attributes × labels plus the transition/start/end blocks.
        """
        t0, t1 = _check_one_sentence(x)
        m = self.marginals(x, w)
        L, n_attr = self.n_labels, self.n_attributes
        trans_base = n_attr * L
        start_base = trans_base + L * L
        end_base = start_base + L
        a0, a1 = int(x.attr_indptr[t0]), int(x.attr_indptr[t1])
        counts = np.diff(x.attr_indptr[t0 : t1 + 1])
        tokens = np.repeat(np.arange(t1 - t0), counts)
        labels = np.arange(L)
        em_idx = (x.attr_ids[a0:a1, None] * L + labels[None, :]).ravel()
        em_val = m.node[tokens]
        if x.attr_values is not None:
            em_val = em_val * x.attr_values[a0:a1, None]
        em_val = em_val.ravel()
        if t1 > t0:
            idx = [em_idx, trans_base + np.arange(L * L), start_base + labels, end_base + labels]
            val = [em_val, m.edge.sum(axis=0).ravel(), m.node[0], m.node[-1]]
        else:
            idx, val = [em_idx], [em_val]
        return SparseVector(*coalesce_arrays(np.concatenate(idx), np.concatenate(val)))

    def expected_feature(self, x, w: np.ndarray) -> np.ndarray:
        """``E_{p(y|x;w)}[Φ(x, y)]`` as a dense float64 array of length ``n_features``
        (laid out like ``w``); see :meth:`expected_feature_sparse` for the sparse form."""
        return self.expected_feature_sparse(x, w).to_dense(self.n_features)

    # --- the batch form (what the CRF learner uses) ---------------------------------------
    def log_loss_batch(self, X, Y, w: np.ndarray, *, out=None) -> tuple[float, np.ndarray]:
        """Negative conditional log-likelihood of a corpus and its gradient, in one compiled
        pass: ``(Σ_i [log Z(x_i) − log Z(x_i, y_i)], Σ_i (E[Φ | x_i] − E[Φ | x_i, y_i]))``.

        A fully labelled sentence has ``log Z(x_i, y_i) = w·Φ(x_i, y_i)``; a gold label −1
        (unseen when the task was fitted) leaves its token free, and the numerator sums over
        the labellings that agree with the known labels.  Same value and gradient as summing
        :meth:`log_partition`, :meth:`expected_feature` and ``joint_feature`` per sentence
        (a test checks it), without per-sentence Python.  ``out``: an array shaped like
        ``w`` to receive the gradient (zeroed first), reused across calls by the CRF learner.
        """
        self.training_constraints("the CRF's likelihood")
        X = self.as_batch(X)
        offsets = X.offsets
        labels = gold_labels(Y, int(offsets[-1] - offsets[0]), self.n_labels)
        total, grad, _ = log_loss_gradient(X.attr_indptr, X.attr_ids, offsets,
                                           _rebased(labels, offsets), w, self.n_attributes,
                                           self.n_labels, out=out, attr_values=X.attr_values,
                                           constraints=self.constraints)
        return total, grad

    def log_loss_trained(self, X, Y, support) -> TrainedLogLoss:
        """The corpus prepared once for the CRF's loss on the trained weights only (what
        L-BFGS optimises): ``support`` holds the sorted indices of the trained weights, the
        others being zero.  Returns ``loss(z, out=None) -> (N, g)``, with ``z = w[support]``,
        ``N`` and ``g`` :meth:`log_loss_batch`'s value at that ``w`` and its gradient's
        entries on the support (the same numbers, bit for bit), computed from ``z`` alone:
        each attribute occurrence reads and updates only its own entries of an internal
        array about the support's size, and nothing as long as the whole layout is built
        or zeroed per call
        (:class:`~latentstruct.tasks.sequence.crf_kernels.TrainedLogLoss`).
        ``loss.load(z)`` then ``loss.evaluate(a, b, out, work)``: the same on sentences
        a..b-1, blocks of sentences evaluated apart (at once, in threads).
        Gold labels −1 and the chain's constraints are handled as :meth:`log_loss_batch`
        handles them."""
        self.training_constraints("the CRF's likelihood")
        X = self.as_batch(X)
        offsets = X.offsets
        labels = _rebased(gold_labels(Y, int(offsets[-1] - offsets[0]), self.n_labels), offsets)
        return TrainedLogLoss(X.attr_indptr, X.attr_ids, offsets, labels,
                              trained_layout(support, self.n_attributes, self.n_labels),
                              attr_values=X.attr_values, constraints=self.constraints)

    def log_loss_sgd(self, X, Y, support=None):
        """The corpus prepared once for per-example SGD on the CRF's log-loss: returns
        ``epoch(w, order, eta0, lam, t=0) -> (Σ loss, t)``, one compiled pass over the
        sentences ``order`` (indices into ``X``) that updates ``w`` (contiguous float64) in
        place by CRFsuite's ``l2sgd`` step, ``η_t = η0 / (1 + η0 λ t)``, the decay
        ``w <- (1 − η_t λ) w`` then ``w <- w − η_t ∇ℓ_i(w)`` on the weights ``support``
        (sorted indices; None: all) lists, the decay kept lazily so that a step touches only
        the sentence's features (:func:`~latentstruct.tasks.sequence.crf_kernels.sgd_epoch`).
        It returns the sum of the examples' losses, each at the weights its step saw, and
        the example count after the pass.  Gold labels −1 and the chain's constraints are
        handled as :meth:`log_loss_batch` handles them."""
        self.training_constraints("the CRF's likelihood")
        X = self.as_batch(X)
        offsets = X.offsets
        labels = _rebased(gold_labels(Y, int(offsets[-1] - offsets[0]), self.n_labels), offsets)
        trained = None
        if support is not None:
            trained = np.zeros(self.n_features, dtype=np.uint8)
            trained[np.asarray(support, dtype=np.int64)] = 1
        A, L, constraints = self.n_attributes, self.n_labels, self.constraints

        def epoch(w, order, eta0, lam, t=0):
            return log_loss_sgd_epoch(X.attr_indptr, X.attr_ids, offsets, labels, order, w, A, L,
                                      eta0=eta0, lam=lam, t=t, trained=trained,
                                      attr_values=X.attr_values, constraints=constraints)

        return epoch

    def observed_feature_support(self, X, Y, *, possible_states: bool = False,
                                 possible_transitions: bool = True) -> np.ndarray:
        """Sorted indices of the features a CRF trains, CRFsuite's feature set: the
        (attribute, label) emission pairs that occur in the gold structures ``Y`` of ``X``
        (every pair with ``possible_states``, CRFsuite's ``feature.possible_states``) and
        every transition weight (with ``possible_transitions=False``, CRFsuite's default
        ``feature.possible_transitions=0``: only the label bigrams of the gold structures).
        The other emission weights and the start and end weights (CRFsuite's chains have
        none) stay zero, so the model is CRFsuite's."""
        X = self.as_batch(X)
        t0, t1 = int(X.offsets[0]), int(X.offsets[-1])
        labels = gold_labels(Y, t1 - t0, self.n_labels)
        a0, a1 = int(X.attr_indptr[t0]), int(X.attr_indptr[t1])
        per_token = np.diff(X.attr_indptr[t0 : t1 + 1])
        token_label = np.repeat(labels, per_token)
        known = token_label >= 0
        L = self.n_labels
        base = self.n_attributes * L
        if possible_states:
            emission = np.arange(base)
        else:
            emission = np.unique(X.attr_ids[a0:a1][known] * L + token_label[known])
        if possible_transitions:
            return np.concatenate([emission, np.arange(base, base + L * L)])
        # the bigrams (y_t, y_t+1) inside a sentence, both labels known
        follows = np.ones(max(t1 - t0 - 1, 0), dtype=bool)
        starts = np.asarray(X.offsets[1:-1]) - t0  # a sentence start follows no token
        follows[starts[(starts > 0) & (starts < t1 - t0)] - 1] = False
        prev, nxt = labels[:-1], labels[1:]
        keep = follows & (prev >= 0) & (nxt >= 0)
        bigrams = np.unique(base + prev[keep] * L + nxt[keep])
        return np.concatenate([emission, bigrams]).astype(np.int64)

    def marginals_batch(self, X, w: np.ndarray) -> list[np.ndarray]:
        """Node marginals of every sentence of corpus ``X``: a list of (T_i, L) arrays whose
        rows sum to one (``[t, k] = p(y_t = k | x_i)``), in one compiled pass."""
        self.local_only("marginals")
        X = self.as_batch(X)
        _, node = node_marginals_batch(X.attr_indptr, X.attr_ids, X.offsets, w,
                                       self.n_attributes, self.n_labels,
                                       attr_values=X.attr_values, constraints=self.constraints)
        return np.split(node, X.offsets[1:-1] - X.offsets[0])


# ============================================================================================
# label-factored
# ============================================================================================
@dataclass(frozen=True)
class SequenceLabelParts:
    """The parts of one sentence as DISTRO sees them (no labels attached yet).

    rows : scipy.sparse.csr_matrix (T, n_attributes), float64
        Input feature rows φ_E,t of the emission parts: row t holds token t's attribute
        values (1 for a binary attribute; a repeated attribute counts twice, as in the
        task's own scores).
    n_labels : int
        L, the number of labels (columns of the label matrix A).
    part_arity : mapping part type -> number of labels
        ``{"emission": 1, "transition": 2, "start": 1, "end": 1}``.  There are T emission
        parts, T − 1 transition parts and one start and one end part; the transition, start
        and end parts have no input features beyond an indicator (DISTRO footnote 1).
    """

    rows: sp.csr_matrix
    n_labels: int
    part_arity: Mapping[str, int] = field(default_factory=lambda: PART_ARITY)

    @property
    def n_tokens(self) -> int:
        return int(self.rows.shape[0])


@dataclass(frozen=True)
class SequenceLabelCounts:
    """Which labels a structure y puts on each part of a sentence (a −1 label switches no part).

    token_labels : int64 (T,)
        Label of emission part t (row t of ``SequenceLabelParts.rows``); −1 for a token whose gold
        label is left free (given so on purpose: ``encode_targets`` never gives −1).
    bigrams : int64 (k, 2)
        (y_t, y_{t+1}) of the transition parts whose two labels are both known (k ≤ T − 1).
    first, last : int
        y_0 and y_{T−1} (−1 for an empty sentence or an unknown label).
    n_labels : int

    With Y = :meth:`emission_indicator`, C = :meth:`transition_counts`, s = :meth:`start_indicator`,
    e = :meth:`end_indicator` and R the parts' rows, the DISTRO score is
    ``⟨Y, R W_E A⟩ + ⟨C, Aᵀ W_T A⟩ + start_vecᵀ A s + end_vecᵀ A e`` and its gradients are
    ``∂/∂W_E = Rᵀ Y Aᵀ``, ``∂/∂W_T = A C Aᵀ``, ``∂/∂start_vec = A s``, ``∂/∂end_vec = A e`` and
    ``∂/∂A = W_Eᵀ Rᵀ Y + W_T A Cᵀ + W_Tᵀ A C + start_vec sᵀ + end_vec eᵀ``.
    """

    token_labels: np.ndarray
    bigrams: np.ndarray
    first: int
    last: int
    n_labels: int

    def emission_indicator(self) -> sp.csr_matrix:
        """Y, csr (T, L): ``Y[t, l] = 1`` iff token t is labelled l."""
        y = self.token_labels
        known = np.flatnonzero(y >= 0)
        return sp.csr_matrix((np.ones(known.size), (known, y[known])), shape=(y.shape[0], self.n_labels))

    def transition_counts(self) -> np.ndarray:
        """C, (L, L): ``C[a, b]`` = number of transitions a -> b."""
        out = np.zeros((self.n_labels, self.n_labels))
        np.add.at(out, (self.bigrams[:, 0], self.bigrams[:, 1]), 1.0)
        return out

    def start_indicator(self) -> np.ndarray:
        """s, (L,): one-hot of the first label (all zeros if none)."""
        return _one_hot(self.first, self.n_labels)

    def end_indicator(self) -> np.ndarray:
        """e, (L,): one-hot of the last label (all zeros if none)."""
        return _one_hot(self.last, self.n_labels)


def _one_hot(k: int, n: int) -> np.ndarray:
    out = np.zeros(n)
    if k >= 0:
        out[k] = 1.0
    return out


def _dense(x, name: str, shape: tuple, expected: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array of shape {expected}; got {type(x).__name__}") from None
    if arr.shape != shape:
        raise InputError(f"{name} must have shape {expected} = {shape}; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contains NaN or infinite values; expected finite numbers")
    return arr


def emission_scores_from_label_matrix(parts, W_E, A) -> tuple[np.ndarray, np.ndarray]:
    """(unary = R W_E A, A as checked float64) for parts with input rows R; W_E (F, d), A (d, L)."""
    L = parts.n_labels
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != L:
        raise InputError(f"A must have shape (d, L) with L = {L} labels; got shape {A.shape}")
    d = A.shape[0]
    A = _dense(A, "A", (d, L), "(d, L)")
    W_E = _dense(W_E, "W_E", (parts.rows.shape[1], d), "(n_attributes, d)")
    return np.asarray(parts.rows @ W_E) @ A, A


class LabelFactoredSequence(MarginalizableSequence):
    """Capability *label-factored*: part scores from a label matrix (DISTRO).

    It extends :class:`MarginalizableSequence` only to keep the mixins one line of
    inheritance (every chain offers both); it uses none of its methods.

    With d-dimensional label vectors (columns of A, d × L), the one-hot part scores of the
    task become ``unary = R W_E A``, ``transition = Aᵀ W_T A``, ``start = start_vecᵀ A``,
    ``end = end_vecᵀ A``; the ordinary Viterbi decoder is then reused unchanged.  With
    d = L and A = I these are exactly the task's own scores (W_E, W_T, start_vec, end_vec
    being the blocks of ``split_weights(w)``).
    """

    def label_factored_parts(self, x) -> SequenceLabelParts:
        """Parts of sentence ``x``: emission input rows (csr (T, n_attributes)), arities, L."""
        t0, t1 = _check_one_sentence(x)
        a0 = int(x.attr_indptr[t0])
        indptr = np.array(x.attr_indptr[t0 : t1 + 1] - a0, dtype=np.int64)
        a1 = int(x.attr_indptr[t1])
        ids = np.array(x.attr_ids[a0:a1], dtype=np.int64)  # a copy: x stays untouched
        vals = np.ones(ids.size) if x.attr_values is None else np.array(x.attr_values[a0:a1])
        rows = sp.csr_matrix((vals, ids, indptr), shape=(t1 - t0, self.n_attributes))
        rows.sum_duplicates()
        return SequenceLabelParts(rows, self.n_labels)

    def part_scores_from_label_matrix(self, parts: SequenceLabelParts, W_E, A, W_T, start_vec,
                                      end_vec) -> ChainPartScores:
        """DISTRO part scores of a sentence (Eq. 3–4, first-order sequence case).

        Parameters
        ----------
        parts : SequenceLabelParts from :meth:`label_factored_parts`
        W_E : (n_attributes, d) emission weights; A : (d, L) label matrix (column l = a_l);
        W_T : (d, d) transition weights; start_vec, end_vec : (d,).

        Returns
        -------
        ChainPartScores
            unary (T, L) = R W_E A; transition (L, L) = Aᵀ W_T A; start (L,) = start_vecᵀ A;
            end (L,) = end_vecᵀ A.
        """
        unary, A = emission_scores_from_label_matrix(parts, W_E, A)
        d = A.shape[0]
        W_T = _dense(W_T, "W_T", (d, d), "(d, d)")
        start_vec = _dense(start_vec, "start_vec", (d,), "(d,)")
        end_vec = _dense(end_vec, "end_vec", (d,), "(d,)")
        return ChainPartScores(unary, A.T @ W_T @ A, start_vec @ A, end_vec @ A)

    def argmax_from_part_scores(self, x, unary, transition, start, end, y_true=None, *,
                                random_state=None) -> DecodeResult:
        """Exact best labelling of sentence ``x`` for given part scores (Viterbi).

        Loss-augmented by the Hamming loss against ``y_true`` when it is given (the same
        augmentation as ``argmax``: +1 on every wrong label; a −1 gold label makes every label
        wrong).  ``random_state`` breaks ties at random as in :func:`viterbi`.

        Returns
        -------
        DecodeResult with int64 labels (T,), the (augmented) score and status ``"exact"``.
        """
        t0, t1 = _check_one_sentence(x)
        self.local_only("the label-factored argmax (Viterbi)")
        unary = np.asarray(unary, dtype=np.float64)
        if unary.shape != (t1 - t0, self.n_labels):
            raise InputError(
                f"unary must have shape (T, L) = ({t1 - t0}, {self.n_labels}) for this sentence; "
                f"got shape {unary.shape}"
            )
        if y_true is not None:
            unary = hamming_augmented(unary, np.asarray(y_true, dtype=np.int64))
        return viterbi(unary, *self.constrained(transition, start, end),
                       random_state=random_state)

    def label_counts(self, x, y) -> SequenceLabelCounts:
        """Labels that structure ``y`` (int (T,), values in [−1, L)) puts on each part of ``x``."""
        t0, t1 = _check_one_sentence(x)
        T, L = t1 - t0, self.n_labels
        y = np.asarray(y)
        if y.shape != (T,) or (T and y.dtype.kind not in "iu"):
            raise InputError(f"y must be an integer array of shape ({T},); got shape {y.shape}, dtype {y.dtype}")
        y = y.astype(np.int64)
        if T and (y.min() < -1 or y.max() >= L):
            raise InputError(f"y must hold labels in [-1, {L}); got values in [{y.min()}, {y.max()}]")
        pairs = np.stack([y[:-1], y[1:]], axis=1) if T > 1 else np.zeros((0, 2), np.int64)
        pairs = pairs[(pairs >= 0).all(axis=1)]
        first = int(y[0]) if T else -1
        last = int(y[-1]) if T else -1
        return SequenceLabelCounts(y, pairs, first, last, L)

    # --- the batch form (what the DISTRO learner uses; see tasks/label_factored.py) ---------
    def label_factored_batch(self, X) -> LabelFactoredBatch:
        """Every sentence of corpus ``X`` at once: token rows (csr (N, n_attributes)), sentence
        offsets, L and the chain's part arities."""
        X = self.as_batch(X)
        t0, t1 = int(X.offsets[0]), int(X.offsets[-1])
        a0 = int(X.attr_indptr[t0])
        indptr = np.array(X.attr_indptr[t0 : t1 + 1] - a0, dtype=np.int64)
        a1 = int(X.attr_indptr[t1])
        ids = np.array(X.attr_ids[a0:a1], dtype=np.int64)
        vals = np.ones(ids.size) if X.attr_values is None else np.array(X.attr_values[a0:a1])
        # entries stay in the task's own order, a repeated attribute as two entries: the
        # products then sum exactly as the one-hot emission scores do
        rows = sp.csr_matrix((vals, ids, indptr), shape=(t1 - t0, self.n_attributes))
        offsets = np.asarray(X.offsets, dtype=np.int64) - t0
        return LabelFactoredBatch(rows, offsets, self.n_labels, PART_ARITY)

    def argmax_from_part_scores_batch(self, batch_offsets, unary, transition, start, end,
                                      Y=None) -> np.ndarray:
        """Exact best labelling of every sentence (one compiled Viterbi call), concatenated.

        ``batch_offsets`` are the sentence boundaries in the rows of ``unary`` (N, L); ``Y``
        (concatenated gold labels, or a list per sentence) adds the Hamming loss.  Ties go to
        the lowest label, as in :func:`viterbi_batch`.
        """
        self.local_only("the label-factored argmax (Viterbi)")
        offsets = np.asarray(batch_offsets, dtype=np.int64)
        N = int(offsets[-1]) if offsets.size else 0
        unary = check_unary(unary, N, self.n_labels)
        if Y is not None:
            unary = hamming_augmented(unary, gold_labels(Y, N))
        return viterbi_batch(unary, offsets, *self.constrained(transition, start, end)).labels
