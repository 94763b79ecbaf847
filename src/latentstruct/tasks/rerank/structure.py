"""Hidden-variable reranking as a structure: :class:`RerankStructure`.

A small immutable object: the number of hash bits, the input kind of the fitted lists
("tokens" or "numbers") and the width of their per-candidate numbers, which fix the weight
layout (``2**hash_bits`` hashed weights, the base score's at ``base_index``, then the
numbers').  It is the model of :mod:`latentstruct.tasks.rerank.task` (log Z_j, the expected
features F(t_j) and max-product per candidate, by the compiled belief propagation of
``scoring``; the introspection the enumeration checks use); no reading, featurising or
evaluation.  A :class:`~latentstruct.tasks.rerank.task.RerankTask` builds one in ``fit``
and ``from_state`` from its fitted featurizer (``task.structure_``); learners see it
through ``task.structure()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ...data.sparse import SparseVector
from ...exceptions import InputError
from ...inference.result import DecodeResult
from ..base import OwnStructure, frozen_fields, set_choice, set_counts
from ..contracts import CANDIDATE_LIST, MARGINALIZABLE
from .data import RerankCorpus
from .features import N_EDGE_TEMPLATES, RerankStorage, edge_feature_index, node_feature_index
from .scoring import (
    number_features, number_scores, sentence_forward, sentence_max_product, sentence_scatter,
)

__all__ = ["RerankStructure", "RerankMarginals", "CandidateExpectation", "INPUT_KINDS"]

_EMPTY = np.zeros(0)
#: what the fitted lists are: candidates alone, or with per-candidate numbers
INPUT_KINDS = ("tokens", "numbers")


@dataclass(frozen=True)
class RerankMarginals:
    """Sums over hidden values for every candidate of one sentence.

    ``log_partition`` = log Σ_j Z_j; ``candidate_log_partitions`` (k,) log Z_j;
    ``candidate_probabilities`` (k,) p(t_j | s); ``node_marginals`` (k, n, K) p(h_w = v | t_j)
    (zero beyond a word's domain); ``edge_marginals`` (k, n, K, K) p(h_parent = a, h_w = b | t_j)
    on the edges of D(t_j) (zero at its root); ``parents`` (k, n) the parents in D(t_j).
    """

    log_partition: float
    candidate_log_partitions: np.ndarray
    candidate_probabilities: np.ndarray
    node_marginals: np.ndarray
    edge_marginals: np.ndarray
    parents: np.ndarray


@dataclass(frozen=True)
class CandidateExpectation:
    """``features`` = Σ_j coef[j] F(t_j) (dense array or uncoalesced SparseVector), with the
    ``log_partitions`` log Z_j it was computed at and the coefficients used."""

    log_partitions: np.ndarray
    coef: np.ndarray
    features: np.ndarray | SparseVector


@frozen_fields("hash_bits", "input_kind", "n_candidate_columns")
class RerankStructure(OwnStructure):
    """The hidden-variable log-linear model over the candidates of featurised k-best lists
    (:mod:`latentstruct.tasks.rerank.task`): log Z_j, F(t_j) and max-product per candidate,
    the marginals, and the introspection of candidate j's domains, graph and templates.

    Parameters
    ----------
    hash_bits : int
        Features are hashed into ``2**hash_bits`` weights; the base score's comes next.
    input_kind : {"tokens", "numbers"}, default "tokens"
        The fitted lists' kind: with "numbers", every candidate has ``n_candidate_columns``
        numbers, whose weights come after the base score's.
    n_candidate_columns : int, default 0
        d, the per-candidate numbers (0 without).

    Immutable: a refitted task builds a new one.
    """

    capabilities = frozenset({MARGINALIZABLE, CANDIDATE_LIST})

    def __init__(self, hash_bits: int, input_kind: str = "tokens", n_candidate_columns: int = 0):
        set_counts(self, hash_bits=hash_bits, n_candidate_columns=n_candidate_columns)
        set_choice(self, "input_kind", input_kind, INPUT_KINDS)

    @property
    def n_features(self) -> int:
        return (1 << self.hash_bits) + 1 + self.n_candidate_columns

    @property
    def base_index(self) -> int:
        """Index of the base-score weight (after the hashed ones)."""
        return 1 << self.hash_bits

    def as_batch(self, X) -> RerankCorpus:
        if isinstance(X, RerankCorpus):
            return X
        X = list(X)
        if not X or not all(isinstance(x, RerankCorpus) for x in X):
            raise InputError("expected a RerankCorpus (from RerankTask.featurize) or a list of "
                             "its one-sentence items")
        if any(x.storage is not X[0].storage for x in X):
            raise InputError("cannot join sentences featurised by different featurize calls; "
                             "featurize all of them together")
        return RerankCorpus(X[0].storage, np.concatenate([x.ids for x in X]))

    def subset(self, X, indices):
        return self.as_batch(X)[np.asarray(indices, dtype=np.int64)]

    # --- capabilities --------------------------------------------------------------------
    def _one(self, x) -> tuple[RerankStorage, int]:
        if not isinstance(x, RerankCorpus) or len(x) != 1:
            raise InputError(f"expected one sentence (a one-sentence RerankCorpus such as X[i]); "
                             f"got {x!r}")
        return x.storage, int(x.ids[0])

    def _weights(self, w) -> np.ndarray:
        w = np.asarray(w)
        if w.shape != (self.n_features,) or w.dtype != np.float64:
            raise InputError(f"weights must be a float64 array of shape ({self.n_features},); "
                             f"got {w.dtype} {w.shape}")
        return np.ascontiguousarray(w)

    @property
    def _mask(self):
        return np.uint64((1 << self.hash_bits) - 1)

    def _numbers_of(self, st: RerankStorage) -> None:
        if (st.numbers is not None) != (self.input_kind == "numbers") or (
                st.numbers is not None and st.numbers.shape[1] != self.n_candidate_columns):
            raise InputError("featurised lists with other per-candidate numbers than the "
                             "model's; featurise them with this task")

    def _forward(self, x, w, scale, marginals):
        st, s = self._one(x)
        w = self._weights(w)
        self._numbers_of(st)
        log_z, NM, EM = sentence_forward(w, float(scale), self._mask, self.base_index,
                                         marginals, s, *st.kernel_args())
        if st.numbers is not None:
            log_z = log_z + float(scale) * number_scores(st, s, w[self.base_index + 1:])
        return log_z, NM, EM

    def candidate_log_partitions(self, x, w, *, scale: float = 1.0) -> np.ndarray:
        """log Z_j = log Σ_h exp(scale·w · Φ(t_j, h)) of every candidate (k,)."""
        return self._forward(x, w, scale, False)[0]

    def candidate_expected_features(self, x, w, coef, *, scale: float = 1.0,
                                    sparse: bool = False) -> CandidateExpectation:
        """Σ_j coef[j] F(t_j) with F(t) = E_{h|t}[Φ(t, h)] under weights scale·w.

        ``coef`` is a (k,) array or a function of the log Z_j (k,) returning one (so that
        p(t_j | s) − q_j needs one pass).  Returns the features dense (n_features,) or, with
        ``sparse``, as an uncoalesced :class:`SparseVector`.
        """
        st, s = self._one(x)
        log_z, NM, EM = self._forward(x, w, scale, True)
        c = np.ascontiguousarray(coef(log_z) if callable(coef) else coef, dtype=np.float64)
        if c.shape != log_z.shape:
            raise InputError(f"coef must have one entry per candidate, shape {log_z.shape}; "
                             f"got {c.shape}")
        args = (c, NM, EM, self._mask, self.base_index)
        cols, vals = number_features(st, s, c)
        cols = cols + (self.base_index + 1)
        if sparse:
            idx, val = sentence_scatter(*args, False, _EMPTY, s, *st.kernel_args())
            return CandidateExpectation(log_z, c, SparseVector(np.concatenate([idx, cols]),
                                                               np.concatenate([val, vals])))
        out = np.zeros(self.n_features)
        sentence_scatter(*args, True, out, s, *st.kernel_args())
        np.add.at(out, cols, vals)
        return CandidateExpectation(log_z, c, out)

    def candidate_max_product(self, x, w) -> list[DecodeResult]:
        """max_h w · Φ(t_j, h) and h* (domain indices per word) of every candidate."""
        st, s = self._one(x)
        w = self._weights(w)
        self._numbers_of(st)
        scores, labels = sentence_max_product(w, 1.0, self._mask, self.base_index,
                                              s, *st.kernel_args())
        scores = scores + number_scores(st, s, w[self.base_index + 1:])
        return [DecodeResult(labels[j], float(scores[j])) for j in range(scores.shape[0])]

    def log_partition(self, x, w) -> float:
        """log Σ_j Z_j over every candidate and hidden assignment."""
        return float(logsumexp(self.candidate_log_partitions(x, w)))

    def marginals(self, x, w) -> RerankMarginals:
        st, s = self._one(x)
        log_z, NM, EM = self._forward(x, w, 1.0, True)
        lp = float(logsumexp(log_z))
        c0 = st.sent_cand_ptr[s]
        parents = st.bp_parent[st.cand_node_ptr[c0]:st.cand_node_ptr[st.sent_cand_ptr[s + 1]]]
        return RerankMarginals(lp, log_z, np.exp(log_z - lp), NM, EM,
                               parents.reshape(log_z.shape[0], -1).copy())

    def expected_feature(self, x, w) -> np.ndarray:
        """E_{p(t, h | s)}[Φ(t, h)] = Σ_j p(t_j | s) F(t_j), dense (n_features,)."""
        return self.candidate_expected_features(
            x, w, lambda lz: np.exp(lz - logsumexp(lz))).features

    # --- introspection (tests, analysis) -------------------------------------------------
    def _cand(self, x, j):
        st, s = self._one(x)
        c0, c1 = int(st.sent_cand_ptr[s]), int(st.sent_cand_ptr[s + 1])
        if not 0 <= j < c1 - c0:
            raise InputError(f"candidate {j} out of range 0..{c1 - c0 - 1}")
        c = c0 + j
        return st, s, c, int(st.cand_node_ptr[c]), int(st.cand_node_ptr[c + 1])

    def hidden_domain_sizes(self, x, j: int) -> np.ndarray:
        """``|H_w(t_j)|`` of every word of candidate j."""
        st, _, _, g0, g1 = self._cand(x, j)
        return st.vs_dom[st.nrow_vs[st.node_row[g0:g1]]].copy()

    def graph_parents(self, x, j: int) -> np.ndarray:
        """Parent of every word in D(t_j) (0-based word index, -1 at its root)."""
        st, _, _, g0, g1 = self._cand(x, j)
        return st.bp_parent[g0:g1].copy()

    def node_templates(self, x, j: int) -> np.ndarray:
        """(n, 20) template hashes of candidate j's words (columns: NODE_TEMPLATE_NAMES)."""
        st, _, _, g0, g1 = self._cand(x, j)
        return st.nrow_tmpl[st.node_row[g0:g1]].copy()

    def edge_templates(self, x, j: int) -> np.ndarray:
        """(n, 3) template hashes of the edge from each word's parent in D(t_j) (0 at the root)."""
        st, _, _, g0, g1 = self._cand(x, j)
        rows = st.edge_row[g0:g1]
        out = np.zeros((g1 - g0, N_EDGE_TEMPLATES), np.uint64)
        out[rows >= 0] = st.erow_tmpl[rows[rows >= 0]]
        return out

    def candidate_feature(self, x, j: int, h) -> SparseVector:
        """Φ(t_j, h) for one hidden assignment h (domain index per word), coalesced.

        Built feature by feature in Python (no belief propagation, no gathers), for checking
        the kernels against enumeration.
        """
        st, _, c, g0, g1 = self._cand(x, j)
        h = np.asarray(h, dtype=np.int64)
        dom = self.hidden_domain_sizes(x, j)
        if h.shape != dom.shape or (h < 0).any() or (h >= dom).any():
            raise InputError(f"h must give each word a value below its domain size {dom.tolist()}")
        mask, idx, val = self._mask, [], []
        for w in range(g1 - g0):
            r = st.node_row[g0 + w]
            v = st.vs_vals[st.nrow_vs[r], h[w]]
            idx += [node_feature_index(t, v, mask) for t in st.nrow_tmpl[r]]
            e = st.edge_row[g0 + w]
            if e >= 0:
                a = st.vs_vals[st.erow_vsp[e], h[st.bp_parent[g0 + w]]]
                b = st.vs_vals[st.erow_vsc[e], h[w]]
                idx += [edge_feature_index(t, a, b, mask) for t in st.erow_tmpl[e]]
        val = [1.0] * len(idx)
        idx.append(self.base_index)
        val.append(float(st.base_val[c]))
        if st.numbers is not None:
            row = st.numbers.getrow(c)
            idx += (row.indices + self.base_index + 1).tolist()
            val += row.data.tolist()
        return SparseVector(np.array(idx, np.int64), np.array(val)).coalesce()

