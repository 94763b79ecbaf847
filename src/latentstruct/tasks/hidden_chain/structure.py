"""The hidden-state CRF as a structure: :class:`HiddenChainStructure`.

A small immutable object: the number of classes K, of hidden states per class S, the
topology of the moves inside a class's block and the number of token attributes A of a
fitted :class:`~latentstruct.tasks.hidden_chain.featurizer.HiddenChainFeaturizer`.  It is
the model of :mod:`latentstruct.tasks.hidden_chain` (the weight layout, the marginalizable
and class-posterior capabilities through the compiled pass of ``kernels``, Φ(x, k, h) for
the enumeration checks); no reading, sampling or evaluation.  A
:class:`~latentstruct.tasks.hidden_chain.task.HiddenChainTask` builds one in ``fit`` and
``from_state`` (``task.structure_``); learners see it through ``task.structure()``.

The weights, with L = K·S hidden labels (label ``k·S + j`` is state j of class k)::

    [ emissions (A x L) | transitions (K blocks of S x S) | start (L) | end (L) ]
"""

from __future__ import annotations

import numpy as np

from ...data.sparse import SparseVector
from ...exceptions import InputError
from ...inference.chain import ChainMarginals
from ..base import OwnStructure, frozen_fields, set_choice, set_counts
from ..contracts import CLASS_POSTERIOR, MARGINALIZABLE
from ..sequence.corpus import SequenceCorpus, as_corpus
from .kernels import hidden_chain_pass, topology_masks

__all__ = ["HiddenChainStructure", "TOPOLOGIES"]

#: the moves allowed inside a class's block of states
TOPOLOGIES = ("left-to-right", "ergodic")


@frozen_fields("n_classes", "n_states", "topology", "n_attributes")
class HiddenChainStructure(OwnStructure):
    """Classes of token sequences through a hidden chain of states inside each class's
    block (module docstring): log Z per class, the log-loss and its gradient, node
    marginals over the hidden labels and E[Φ], all from one compiled pass.

    Parameters
    ----------
    n_classes : int
        K, the classes (ids 0..K-1).
    n_states : int
        S, hidden states per class.
    topology : {"left-to-right", "ergodic"}
        The moves allowed inside a block.
    n_attributes : int
        A, token attributes (named ones, then numeric columns).

    Immutable: a refitted task builds a new one.
    """

    capabilities = frozenset({MARGINALIZABLE, CLASS_POSTERIOR})

    def __init__(self, n_classes: int, n_states: int, topology: str, n_attributes: int):
        set_counts(self, n_classes=n_classes, n_states=n_states, n_attributes=n_attributes)
        set_choice(self, "topology", topology, TOPOLOGIES)

    @property
    def n_hidden(self) -> int:
        """K·S, the number of hidden labels (class, state)."""
        return self.n_classes * self.n_states

    @property
    def n_features(self) -> int:
        K, S = self.n_classes, self.n_states
        return self.n_attributes * K * S + K * S * S + 2 * K * S

    def as_batch(self, X) -> SequenceCorpus:
        return as_corpus(X)

    def subset(self, X, indices) -> SequenceCorpus:
        return as_corpus(X).subset(indices)

    def observed_feature_support(self, X, Y) -> np.ndarray:
        """CRFsuite's feature set for the hidden-state CRF (the ``crf`` learner's
        ``feature_set="observed"``): every (attribute, hidden label of the gold class's
        block) pair of the training sentences, and every transition, start and end weight."""
        X = as_corpus(X)
        K, S, A = self.n_classes, self.n_states, self.n_attributes
        Y = np.asarray(Y, dtype=np.int64)
        seen = np.zeros((A, K), dtype=bool)
        tok_of = np.repeat(np.arange(len(X)), np.diff(X.offsets))
        n_attr = np.diff(X.attr_indptr)
        sent = np.repeat(tok_of, n_attr[X.offsets[0]:X.offsets[-1]])
        a0 = X.attr_indptr[X.offsets[0]]
        seen[X.attr_ids[a0:a0 + sent.shape[0]], Y[sent]] = True
        rows, cls = np.nonzero(seen)
        emission = (rows[:, None] * (K * S) + cls[:, None] * S + np.arange(S)[None, :]).ravel()
        rest = np.arange(A * K * S, self.n_features)
        return np.unique(np.concatenate([emission, rest])).astype(np.int64)

    # ------------------------------------------------------------------------------------
    # class-posterior and marginalizable
    # ------------------------------------------------------------------------------------
    def _pass(self, X, labels, w, **kw):
        X = as_corpus(X)
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise InputError(f"w has shape {w.shape}, expected ({self.n_features},)")
        if labels is None:
            labels = np.full(len(X), -1, dtype=np.int64)
        return hidden_chain_pass(X, labels, w, self.n_attributes, self.n_classes,
                                 self.n_states, topology=self.topology, **kw)

    def class_log_partitions(self, X, w) -> np.ndarray:
        """(n, K) array of log Z(x_i, k) = log Σ_h exp(w·Φ(x_i, k, h))."""
        return self._pass(X, None, w, gradient=False).class_log_z

    def log_loss_batch(self, X, Y, w) -> tuple[float, np.ndarray]:
        """``(Σ_i [log Σ_k Z(x_i, k) − log Z(x_i, y_i)], gradient)`` in one compiled pass;
        ``Y`` are class ids (the task's ``encode_targets``)."""
        Y = np.asarray(Y, dtype=np.int64)
        if Y.shape != (len(as_corpus(X)),) or (Y.size and (Y.min() < 0
                                                         or Y.max() >= self.n_classes)):
            raise InputError(f"Y must hold one class id in 0..{self.n_classes - 1} per example")
        out = self._pass(X, Y, w, gradient=True)
        return out.loss, out.grad

    def log_partition(self, x, w) -> float:
        """log Z(x) = log Σ_{y, h} exp(w·Φ(x, y, h)) of one example."""
        lz = self.class_log_partitions(x, w)[0]
        mx = float(lz.max())
        return mx + float(np.log(np.exp(lz - mx).sum()))

    def marginals(self, x, w) -> ChainMarginals:
        """Node marginals p(h_t = (k, j) | x) over the K·S hidden labels (label ``k·S + j``)
        of one example, as a ``ChainMarginals`` (``edge`` empty: not computed)."""
        out = self._pass(x, None, w, gradient=False, node=True)
        lz = out.class_log_z[0]
        mx = float(lz.max())
        L = self.n_hidden
        return ChainMarginals(mx + float(np.log(np.exp(lz - mx).sum())), out.node,
                              np.zeros((0, L, L)))

    def marginals_batch(self, X, w) -> list[np.ndarray]:
        """(T_i, K·S) node marginals of every example."""
        X = as_corpus(X)
        node = self._pass(X, None, w, gradient=False, node=True).node
        off = X.offsets - X.offsets[0]
        return [node[off[i]:off[i + 1]] for i in range(len(X))]

    def is_legal_chain(self, h) -> bool:
        """Whether the states ``h`` (0..S-1 within a block) form a chain the topology
        allows."""
        h = np.asarray(h, dtype=np.int64)
        S = self.n_states
        if h.ndim != 1 or (h.size and (h.min() < 0 or h.max() >= S)):
            return False
        trans, start = topology_masks(S, self.topology)
        if h.size and start[h[0]] == -np.inf:
            return False
        return bool(np.all(trans[h[:-1], h[1:]] > -np.inf))

    def class_feature(self, x, k, h) -> SparseVector:
        """Φ(x, k, h) of one example, class id ``k`` and hidden chain ``h`` (T states in
        0..S-1 of block k): what the enumeration checks score (``testing.check_task``)."""
        x = as_corpus(x)
        K, S = self.n_classes, self.n_states
        h = np.asarray(h, dtype=np.int64)
        T = x.n_tokens
        if not 0 <= int(k) < K or h.shape != (T,) or not self.is_legal_chain(h):
            raise InputError(f"class_feature needs a class id in 0..{K - 1} and a legal chain "
                             f"of {T} states in 0..{S - 1} (topology {self.topology!r}); got "
                             f"k={k!r}, h={h.tolist()}")
        lab = int(k) * S + h
        A = self.n_attributes
        ptr = x.attr_indptr - x.attr_indptr[0]
        ids = x.attr_ids[x.attr_indptr[0]:x.attr_indptr[-1]]
        emission = ids * (K * S) + np.repeat(lab, np.diff(ptr))
        trans = A * K * S + int(k) * S * S + h[:-1] * S + h[1:]
        ends = A * K * S + K * S * S + np.array([lab[0], K * S + lab[-1]]) if T else np.zeros(0)
        idx = np.concatenate([emission, trans, ends]).astype(np.int64)
        val = np.ones(idx.shape[0])
        if x.attr_values is not None:  # an attribute's value scales its emission feature
            val[:emission.shape[0]] = x.attr_values[x.attr_indptr[0]:x.attr_indptr[-1]]
        return SparseVector(idx, val)

    def expected_feature(self, x, w) -> np.ndarray:
        """E_{p(y, h | x)}[Φ(x, y, h)] as a dense (n_features,) vector."""
        return self._pass(x, None, w, gradient=True).grad
