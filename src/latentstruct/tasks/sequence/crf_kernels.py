"""Compiled conditional log-likelihood of first-order sequence labelling, for the CRF learner.

For a corpus of sentences (the ``SequenceCorpus`` CSR arrays) with gold labels and weights laid
out as in :mod:`latentstruct.tasks.sequence.labelling`::

    [ emissions (n_attr x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

:func:`log_loss_gradient` returns the negative conditional log-likelihood

    N(w) = Σ_i [ log Z(x_i; w) − log Z(x_i, y_i; w) ]

and its gradient ``Σ_i (E_{p(y|x_i)}[Φ] − E_{p(y|x_i, y_i)}[Φ])``.  A fully labelled sentence has
``log Z(x_i, y_i) = w·Φ(x_i, y_i)`` and the second expectation is ``Φ(x_i, y_i)`` itself; a gold
label of −1 (a label unseen when the task was fitted) leaves its position free, and the
numerator then sums over every labelling that agrees with the known labels (a clamped
forward–backward), which is the likelihood of what was observed.

``attr_values`` (None: binary attributes) scales each attribute occurrence: its score
``v * w[a, y]`` and its gradient entry ``v * (marginal - target)`` (CRFsuite's semantics).

One call scores every token once (the gather over its attributes' label rows), runs the
forward–backward of :mod:`latentstruct.inference.chain_fb`, and scatters the marginals back:
O(Σ_t (|attrs(t)| L + L²)) time, no per-sentence Python.

**On the trained weights only.**  A CRF trained on CRFsuite's feature set (``support_``:
the (attribute, label) pairs of the training data and the transitions) leaves every other
weight at zero, and L-BFGS runs on the vector ``z = w[support]``.  :class:`TrainedLogLoss`
evaluates the same loss and the gradient's entries on the support from ``z``, through an
internal emission array of about the support's size (:func:`trained_layout`: per
attribute, its trained weights, or a whole row of L weights, zeros included, for an
attribute with at least a quarter of the labels trained, where a contiguous loop is
cheaper than an indirect one): each attribute occurrence reads and updates only its own
entries there, the small label block (transitions, start, end) is dense, and no vector of
every feature is built, zeroed or gathered.  Its values are :func:`log_loss_gradient`'s at ``w`` (``w[support] = z``, zero
elsewhere) with the gradient gathered on the support, bit for bit: the weights it skips are
zeros, which add nothing to a score, and each trained entry's gradient sums the same terms
in the same order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ...inference.chain_fb import chain_marginals_into, chain_work, transition_exp

__all__ = ["log_loss_gradient", "node_marginals_batch", "token_scores", "longest_sentence",
           "sgd_epoch", "log_loss_sgd_epoch", "TrainedLayout", "trained_layout",
           "trained_token_scores", "TrainedLogLoss"]


@njit(cache=True, nogil=True)
def longest_sentence(offsets):  # pragma: no cover - numba
    """The most tokens of one sentence of ``offsets`` (work buffers are sized by it)."""
    out = 0
    for k in range(offsets.shape[0] - 1):
        out = max(out, offsets[k + 1] - offsets[k])
    return out


@njit(cache=True, nogil=True)
def token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1, s):  # pragma: no cover - numba
    """Token scores of tokens t0..t1-1 (start and end folded in) into ``s[:T]``; each
    attribute's row scaled by its value (``attr_values``, None: all 1)."""
    L = emission.shape[1]
    T = t1 - t0
    s[:T] = 0.0
    for t in range(T):
        for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
            row = attr_ids[p]
            if attr_values is None:
                for j in range(L):
                    s[t, j] += emission[row, j]
            else:
                v = attr_values[p]
                for j in range(L):
                    s[t, j] += v * emission[row, j]
    for j in range(L):
        s[0, j] += start[j]
        s[T - 1, j] += end[j]
    return s[:T]


@njit(cache=True, nogil=True)
def _sentence_buffers(offsets, L):  # pragma: no cover - numba
    """The work space of a pass of :func:`_sentence_nll` over a corpus: the forward-backward's
    (``chain_work``), the token scores, node marginals and gold targets of the longest
    sentence (T, L), and the edge accumulator (L, L), zeroed."""
    longest = longest_sentence(offsets)
    work, c = chain_work(longest, L)
    rows = max(longest, 1)
    return (work, c, np.empty((rows, L)), np.empty((rows, L)), np.empty((rows, L)),
            np.zeros((L, L)))


@njit(cache=True, nogil=True)
def _sentence_nll(s, labels, t0, transition, M, m_trans, node, target, g_tr, edge_scaled,
                  work, c):  # pragma: no cover - numba
    """``(log Z, log Z − log Z(gold))`` of the sentence of tokens t0.. whose token scores
    (start and end folded in) are ``s`` (T, L), under ``transition`` (``M, m_trans``: its
    :func:`transition_exp`).  Writes the node marginals to ``node`` and the gold's (its
    indicators, or for a partial labelling the clamped marginals) to ``target``, both (T, L);
    adds the transition part of the gradient to ``g_tr`` and ``edge_scaled``: the model's
    edge marginals minus the gold's, the part in ``edge_scaled`` still to be multiplied
    elementwise by ``M`` (:func:`~latentstruct.inference.chain_fb.chain_marginals_into`)."""
    T, L = s.shape
    log_z = chain_marginals_into(s, transition, M, m_trans, node, g_tr, edge_scaled, 1.0,
                                 work, c)
    partial = False
    for t in range(T):
        if labels[t0 + t] < 0:
            partial = True
    target[:] = 0.0
    if partial:
        clamped = s.copy()
        for t in range(T):
            y = labels[t0 + t]
            if y >= 0:
                for j in range(L):
                    if j != y:
                        clamped[t, j] = -np.inf
        log_num = chain_marginals_into(clamped, transition, M, m_trans, target, g_tr,
                                       edge_scaled, -1.0, work, c)
    else:
        log_num = 0.0
        for t in range(T):
            y = labels[t0 + t]
            target[t, y] = 1.0
            log_num += s[t, y]
            if t > 0:
                yp = labels[t0 + t - 1]
                log_num += transition[yp, y]
                g_tr[yp, y] -= 1.0
    return log_z, log_z - log_num


@njit(cache=True, nogil=True)
def _loss_gradient(attr_indptr, attr_ids, attr_values, offsets, labels, emission, transition, start, end,
                   g_em, g_tr, g_start, g_end, log_z_out):  # pragma: no cover - numba
    L = emission.shape[1]
    M, m_trans = transition_exp(transition)
    work, c, s_buf, node_buf, target_buf, edge_scaled = _sentence_buffers(offsets, L)
    total = 0.0
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        T = t1 - t0
        if T == 0:
            log_z_out[k] = 0.0
            continue
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        node, target = node_buf[:T], target_buf[:T]
        log_z, loss = _sentence_nll(s, labels, t0, transition, M, m_trans, node, target, g_tr,
                                    edge_scaled, work, c)
        log_z_out[k] = log_z
        total += loss
        for t in range(T):
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                row = attr_ids[p]
                if attr_values is None:
                    for j in range(L):
                        g_em[row, j] += node[t, j] - target[t, j]
                else:
                    v = attr_values[p]
                    for j in range(L):
                        g_em[row, j] += v * (node[t, j] - target[t, j])
        for j in range(L):
            g_start[j] += node[0, j] - target[0, j]
            g_end[j] += node[T - 1, j] - target[T - 1, j]
    for i in range(L):
        for j in range(L):
            g_tr[i, j] += M[i, j] * edge_scaled[i, j]
    return total


def _label_blocks(w, A: int, L: int, constraints):
    """The emission, transition, start and end blocks of ``w`` (views), the last three with
    the parts ``constraints`` forbid at ``-inf`` (copies) when there are constraints."""
    emission = w[: A * L].reshape(A, L)
    transition = w[A * L : A * L + L * L].reshape(L, L)
    start = w[A * L + L * L : A * L + L * L + L]
    end = w[A * L + L * L + L : A * L + L * L + 2 * L]
    if constraints is not None:
        transition, start, end = constraints.apply(transition, start, end)
    return emission, transition, start, end


def log_loss_gradient(attr_indptr, attr_ids, offsets, labels, w, n_attributes: int,
                      n_labels: int, out=None, attr_values=None, constraints=None):
    """(N(w), ∇N(w), log Z per sentence) of a corpus; ``labels`` are the gold label ids of all
    tokens concatenated (−1: unknown), ``w`` laid out as in the module docstring,
    ``attr_values`` the corpus's attribute values (None: binary).

    ``constraints`` (``inference.constraints.ChainConstraints``, or None): both sums run over
    the labellings they allow (a forbidden part scores ``-inf``, so its probability and its
    gradient are 0); a gold labelling they forbid has probability 0 and the loss is ``inf``.

    ``out`` (float64, the shape of ``w``), when given, is zeroed and receives the gradient:
    a caller that evaluates many times reuses one buffer instead of a fresh array whose pages
    the kernel would fault in on every call."""
    L, A = int(n_labels), int(n_attributes)
    w = np.ascontiguousarray(w, dtype=np.float64)
    emission, transition, start, end = _label_blocks(w, A, L, constraints)
    if out is None:
        grad = np.zeros_like(w)
    else:
        grad = out
        grad.fill(0.0)
    g_em = grad[: A * L].reshape(A, L)
    g_tr = grad[A * L : A * L + L * L].reshape(L, L)
    g_start = grad[A * L + L * L : A * L + L * L + L]
    g_end = grad[A * L + L * L + L : A * L + L * L + 2 * L]
    log_z = np.empty(len(offsets) - 1)
    total = _loss_gradient(attr_indptr, attr_ids, attr_values, np.ascontiguousarray(offsets, dtype=np.int64),
                           np.ascontiguousarray(labels, dtype=np.int64), emission, transition,
                           start, end, g_em, g_tr, g_start, g_end, log_z)
    return float(total), grad, log_z


#: an attribute with at least 1/_DENSE_SHARE of the labels trained keeps a whole row of L
#: weights in the internal layout (the untrained ones zero): a contiguous loop over a row
#: is cheaper than an indirect one over most of it, and such attributes are few but frequent
_DENSE_SHARE = 4


class TrainedLayout(NamedTuple):
    """Where the trained weights of a chain sit, in ``z = w[support]`` and in the internal
    emission array E that :class:`TrainedLogLoss` computes on (:func:`trained_layout`).

    ``z[:n_emission]`` are the trained emission weights (the support's order: attribute by
    attribute, labels increasing); ``z[q]`` sits at ``E[pos[q]]``.  Attribute a owns
    ``E[em_ptr[a] : em_ptr[a + 1]]``: a whole row of L weights (label j at ``em_ptr[a] +
    j``, the untrained ones zero) when that range holds L entries, else its trained weights
    only, for the labels ``em_label`` there.  ``z[n_emission:]`` are the trained weights of
    the label block ``[transitions (L x L) | start (L) | end (L)]``, at its positions
    ``label_block`` (increasing)."""

    em_ptr: np.ndarray       # (n_attributes + 1,) uint64, into E
    em_label: np.ndarray     # (n_internal,) uint32, the label of each entry of E
    pos: np.ndarray          # (n_emission,) uint64, E's entry of each z[q]
    label_block: np.ndarray  # (n_trained - n_emission,) int64
    n_attributes: int
    n_labels: int

    @property
    def n_emission(self) -> int:
        return int(self.pos.shape[0])

    @property
    def n_trained(self) -> int:
        return self.n_emission + int(self.label_block.shape[0])

    @property
    def n_internal(self) -> int:
        return int(self.em_label.shape[0])


def trained_layout(support, n_attributes: int, n_labels: int) -> TrainedLayout:
    """The :class:`TrainedLayout` of ``support``: the sorted, distinct indices of the
    trained weights in the layout of the module docstring (any subset: emissions,
    transitions, start and end)."""
    A, L = int(n_attributes), int(n_labels)
    n_features = A * L + L * L + 2 * L
    support = np.asarray(support)
    if support.ndim != 1 or (support.size and support.dtype.kind not in "iu"):
        raise ValueError(f"support must be a 1-d array of weight indices, got {support.dtype} "
                         f"values of shape {support.shape}")
    support = support.astype(np.int64, copy=False)
    if support.size and (support[0] < 0 or support[-1] >= n_features
                         or np.any(support[1:] <= support[:-1])):
        raise ValueError(f"support must hold increasing weight indices in 0..{n_features - 1}")
    n_em = int(np.searchsorted(support, A * L))
    attr, label = np.divmod(support[:n_em], L)
    count = np.bincount(attr, minlength=A)
    dense = count * _DENSE_SHARE >= L
    size = np.where(dense, L, count)
    em_ptr = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(size, out=em_ptr[1:])
    # z[q]'s rank among its attribute's trained labels, or its label in a whole row
    first = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(count, out=first[1:])
    rank = np.arange(n_em, dtype=np.int64) - first[attr]
    pos = em_ptr[attr] + np.where(dense[attr], label, rank)
    em_label = np.empty(int(em_ptr[-1]), dtype=np.uint32)
    em_label[pos] = label
    rows = np.flatnonzero(dense)
    em_label[(em_ptr[rows][:, None] + np.arange(L)).ravel()] = np.tile(np.arange(L), rows.size)
    return TrainedLayout(em_ptr.astype(np.uint64), em_label, pos.astype(np.uint64),
                         support[n_em:] - A * L, A, L)


@njit(cache=True, nogil=True)
def trained_token_scores(attr_indptr, attr_ids, attr_values, E, em_ptr, em_label, start, end,
                         t0, t1, s):  # pragma: no cover - numba
    """:func:`token_scores` from the internal emission array ``E`` of a
    :class:`TrainedLayout` (``em_ptr``, ``em_label``; the weights it leaves out are zero):
    tokens t0..t1-1 into ``s[:T]``, start and end folded in.  Indices are unsigned, so
    numba adds no wrap-around test to the inner loops."""
    L = s.shape[1]
    row_len = np.uint64(L)
    T = t1 - t0
    s[:T] = 0.0
    for t in range(T):
        srow = s[t]
        for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
            b, e = em_ptr[attr_ids[p]], em_ptr[attr_ids[p] + 1]
            v = 1.0 if attr_values is None else attr_values[p]
            if e - b == row_len:  # a whole row: contiguous
                if attr_values is None:
                    for q in range(b, e):
                        srow[q - b] += E[q]
                else:
                    for q in range(b, e):
                        srow[q - b] += v * E[q]
            elif attr_values is None:
                for q in range(b, e):
                    srow[em_label[q]] += E[q]
            else:
                for q in range(b, e):
                    srow[em_label[q]] += v * E[q]
    for j in range(L):
        s[0, j] += start[j]
        s[T - 1, j] += end[j]
    return s[:T]


@njit(cache=True, nogil=True)
def _place(z_em, pos, E):  # pragma: no cover - numba
    """``E[pos[q]] = z_em[q]``: the trained emission weights into the internal array."""
    for q in range(pos.shape[0]):
        E[pos[q]] = z_em[q]


@njit(cache=True, nogil=True)
def _trained_loss_gradient(attr_indptr, attr_ids, attr_values, offsets, labels, pos, E,
                           em_ptr, em_label, transition, start, end, G, g_em, g_tr, g_start,
                           g_end):  # pragma: no cover - numba
    """:func:`_loss_gradient` on the trained weights, placed in ``E`` (:func:`_place`):
    the token scores come from :func:`trained_token_scores`, the same
    :func:`_sentence_nll` runs, each occurrence's gradient goes to its attribute's entries
    of ``G`` (zeroed here), and ``g_em`` receives ``G`` at ``pos``."""
    L = transition.shape[0]
    row_len = np.uint64(L)
    G[:] = 0.0
    M, m_trans = transition_exp(transition)
    work, c, s_buf, node_buf, target_buf, edge_scaled = _sentence_buffers(offsets, L)
    total = 0.0
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        T = t1 - t0
        if T == 0:
            continue
        s = trained_token_scores(attr_indptr, attr_ids, attr_values, E, em_ptr, em_label,
                                 start, end, t0, t1, s_buf)
        node, target = node_buf[:T], target_buf[:T]
        _, loss = _sentence_nll(s, labels, t0, transition, M, m_trans, node, target, g_tr,
                                edge_scaled, work, c)
        total += loss
        for t in range(T):  # target becomes the gradient of the token's scores
            for j in range(L):
                target[t, j] = node[t, j] - target[t, j]
        for t in range(T):
            d = target[t]
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                b, e = em_ptr[attr_ids[p]], em_ptr[attr_ids[p] + 1]
                v = 1.0 if attr_values is None else attr_values[p]
                if e - b == row_len:
                    if attr_values is None:
                        for q in range(b, e):
                            G[q] += d[q - b]
                    else:
                        for q in range(b, e):
                            G[q] += v * d[q - b]
                elif attr_values is None:
                    for q in range(b, e):
                        G[q] += d[em_label[q]]
                else:
                    for q in range(b, e):
                        G[q] += v * d[em_label[q]]
        for j in range(L):
            g_start[j] += target[0, j]
            g_end[j] += target[T - 1, j]
    for i in range(L):
        for j in range(L):
            g_tr[i, j] += M[i, j] * edge_scaled[i, j]
    for q in range(pos.shape[0]):
        g_em[q] = G[pos[q]]
    return total


class TrainedLogLoss:
    """The CRF's negative log-likelihood N and its gradient on the trained weights only,
    for a corpus prepared once (the corpus arrays are kept, not copied).

    ``loss(z, out=None) -> (N(w), ∇N(w)[support])`` at the ``w`` whose trained weights
    (``layout``, from :func:`trained_layout` of the support) are ``z`` and whose other
    weights are zero; :func:`log_loss_gradient`'s values (see the module docstring), the
    ``labels`` (by absolute token position, −1 unknown), ``attr_values`` and
    ``constraints`` read as there.  ``out`` (float64, ``(n_trained,)``), when given,
    receives the gradient.

    In two steps, for blocks of sentences evaluated apart (the CRF's thread blocks):
    :meth:`load` places ``z`` once, then :meth:`evaluate` gives the loss of sentences
    a..b-1 and writes their gradient to its ``out``, using a work array of its own
    (:meth:`work`); calls with distinct ``out`` and work arrays may run at once (they only
    read what :meth:`load` wrote)."""

    def __init__(self, attr_indptr, attr_ids, offsets, labels, layout: TrainedLayout,
                 attr_values=None, constraints=None):
        self.attr_indptr, self.attr_ids, self.attr_values = attr_indptr, attr_ids, attr_values
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.labels = np.ascontiguousarray(labels, dtype=np.int64)
        if self.labels.shape[0] < int(self.offsets[-1]):
            raise ValueError(f"labels must cover the tokens up to {int(self.offsets[-1])} (by "
                             f"absolute position); got {self.labels.shape[0]}")
        self.layout, self.constraints = layout, constraints
        self._E = np.zeros(layout.n_internal)  # zero where no trained weight sits
        self._G = self.work()
        self._blocks = None  # transition, start, end of the loaded weights

    @property
    def n_trained(self) -> int:
        return self.layout.n_trained

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def n_tokens(self, a: int = 0, b: int | None = None) -> int:
        """The tokens of sentences a..b-1 (default: all)."""
        b = len(self) if b is None else b
        return int(self.offsets[b] - self.offsets[a])

    def sizes(self) -> np.ndarray:
        """The tokens of each sentence (the cost of its share of an evaluation)."""
        return np.diff(self.offsets)

    def work(self) -> np.ndarray:
        """A work array for :meth:`evaluate`."""
        return np.empty(self.layout.n_internal)

    def load(self, z) -> None:
        """Place the trained weights ``z`` for the next :meth:`evaluate` calls."""
        layout = self.layout
        L, n_em = layout.n_labels, layout.n_emission
        z = np.ascontiguousarray(z, dtype=np.float64)
        if z.shape != (layout.n_trained,):
            raise ValueError(f"z must hold the {layout.n_trained} trained weights; got shape "
                             f"{z.shape}")
        _place(z[:n_em], layout.pos, self._E)
        # the label block [transitions | start | end] as a weight vector of no attributes
        block = np.zeros(L * L + 2 * L)
        block[layout.label_block] = z[n_em:]
        self._blocks = _label_blocks(block, 0, L, self.constraints)[1:]

    def evaluate(self, a: int, b: int, out, work) -> float:
        """N of sentences a..b-1 at the loaded weights; their gradient on the trained
        weights is written to ``out`` (float64, ``(n_trained,)``); ``work``: from
        :meth:`work`."""
        if self._blocks is None:
            raise ValueError("no weights loaded: call load(z) first")
        if not 0 <= a <= b <= len(self):
            raise ValueError(f"sentences {a}..{b} are not a range of 0..{len(self)}")
        layout = self.layout
        L, n_em = layout.n_labels, layout.n_emission
        if out.shape != (layout.n_trained,) or work.shape != (layout.n_internal,):
            raise ValueError(f"out must have shape ({layout.n_trained},) and work "
                             f"({layout.n_internal},)")
        transition, start, end = self._blocks
        g_block = np.zeros(L * L + 2 * L)
        _, g_tr, g_start, g_end = _label_blocks(g_block, 0, L, None)
        total = _trained_loss_gradient(self.attr_indptr, self.attr_ids, self.attr_values,
                                       self.offsets[a : b + 1], self.labels, layout.pos,
                                       self._E, layout.em_ptr, layout.em_label, transition,
                                       start, end, work, out[:n_em], g_tr, g_start, g_end)
        out[n_em:] = g_block[layout.label_block]
        return float(total)

    def __call__(self, z, out=None) -> tuple[float, np.ndarray]:
        self.load(z)
        grad = np.empty(self.layout.n_trained) if out is None else out
        return self.evaluate(0, len(self), grad, self._G), grad


@njit(cache=True, nogil=True)
def _node_batch(attr_indptr, attr_ids, attr_values, offsets, emission, transition, start, end,
                node_all, log_z_out):  # pragma: no cover - numba
    L = emission.shape[1]
    M, m_trans = transition_exp(transition)
    sink = np.zeros((L, L))
    base = offsets[0]
    longest = longest_sentence(offsets)
    work, c = chain_work(longest, L)
    s_buf = np.empty((max(longest, 1), L))
    for k in range(offsets.shape[0] - 1):
        t0, t1 = offsets[k], offsets[k + 1]
        if t1 == t0:
            log_z_out[k] = 0.0
            continue
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        log_z_out[k] = chain_marginals_into(s, transition, M, m_trans,
                                            node_all[t0 - base : t1 - base], sink, sink, 0.0,
                                            work, c)


def node_marginals_batch(attr_indptr, attr_ids, offsets, w, n_attributes: int, n_labels: int,
                         attr_values=None, constraints=None):
    """(log Z per sentence, node marginals (N, L) of all tokens) of a corpus under ``w``
    (``attr_values``: the corpus's attribute values, None: binary), over the labellings
    ``constraints`` allow (None: all)."""
    L, A = int(n_labels), int(n_attributes)
    w = np.ascontiguousarray(w, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    node = np.zeros((int(offsets[-1] - offsets[0]), L))
    log_z = np.empty(offsets.size - 1)
    _node_batch(attr_indptr, attr_ids, attr_values, offsets,
                *_label_blocks(w, A, L, constraints), node, log_z)
    return log_z, node


@njit(cache=True, nogil=True)
def _rescale(emission, transition, start, end, factor):  # pragma: no cover - numba
    """Every weight times ``factor`` (the lazily kept L2 decay folded into the weights)."""
    emission *= factor
    transition *= factor
    start *= factor
    end *= factor


@njit(cache=True, nogil=True)
def sgd_epoch(attr_indptr, attr_ids, attr_values, offsets, labels, order, emission, transition,
              start, end, tr_mask, start_mask, end_mask, trained, eta0, lam, t):  # pragma: no cover - numba
    """One epoch of per-example SGD on the L2-regularised negative log-likelihood, CRFsuite's
    ``l2sgd`` step (``train_l2sgd.c``), over the sentences ``order`` (indices into
    ``offsets``), updating the weight blocks in place; returns ``(Σ loss, t)``.

    For the k-th example visited (``t`` counting examples over the whole run)::

        η = η0 / (1 + η0 λ t)                       (= 1 / (λ (t0 + t)), t0 = 1 / (λ η0))
        w <- (1 − η λ) w                            (the decay comes first, as in CRFsuite)
        w <- w − η ∇ℓ_i(w)                          (ℓ_i: the example's NLL, at the decayed w)

    on the weights ``trained`` marks (a 0/1 byte per weight; empty: every weight).  The
    decay is kept lazily, ``w = decay · v`` with only ``v`` stored (CRFsuite's scale factor),
    so a step touches only the example's emission rows, the transitions and start/end: the
    scores are those of ``v`` times ``decay``, the update ``v −= (η / decay) ∇ℓ_i``.  The
    decay is folded back into the weights at the end of the epoch (and, should it fall below
    1e-150, at once).  The loss summed is each example's at the weights its step saw (before
    its gradient step), CRFsuite's epoch loss.  ``tr_mask``, ``start_mask``, ``end_mask``:
    0, or ``-inf`` where chain constraints forbid the part.  The forward–backward and the
    gradient are :func:`_sentence_nll`'s, the batch loss's own."""
    L = emission.shape[1]
    work, c, s_buf, node_buf, target_buf, edge_scaled = _sentence_buffers(offsets, L)
    g_tr = np.empty((L, L))
    tr_eff = np.empty((L, L))
    all_trained = trained.shape[0] == 0
    A = emission.shape[0]
    tr_base = A * L
    start_base = tr_base + L * L
    end_base = start_base + L
    decay = 1.0
    total = 0.0
    for i in range(order.shape[0]):
        k = order[i]
        t0, t1 = offsets[k], offsets[k + 1]
        T = t1 - t0
        eta = eta0 / (1.0 + eta0 * lam * t)
        decay *= 1.0 - eta * lam
        t += 1
        if T == 0:
            continue
        gain = eta / decay
        for a in range(L):
            for b in range(L):
                tr_eff[a, b] = decay * transition[a, b] + tr_mask[a, b]
        M, m_trans = transition_exp(tr_eff)
        s = token_scores(attr_indptr, attr_ids, attr_values, emission, start, end, t0, t1,
                         s_buf)
        for u in range(T):
            for j in range(L):
                s[u, j] *= decay
        for j in range(L):
            s[0, j] += start_mask[j]
            s[T - 1, j] += end_mask[j]
        node, target = node_buf[:T], target_buf[:T]
        edge_scaled[:] = 0.0
        g_tr[:] = 0.0
        _, loss = _sentence_nll(s, labels, t0, tr_eff, M, m_trans, node, target, g_tr,
                                edge_scaled, work, c)
        total += loss
        if not np.isfinite(loss):
            continue  # no labelling allowed, or the weights overflowed: no usable gradient
        for u in range(T):
            for p in range(attr_indptr[t0 + u], attr_indptr[t0 + u + 1]):
                row = attr_ids[p]
                step = gain if attr_values is None else gain * attr_values[p]
                base = row * L
                for j in range(L):
                    if all_trained or trained[base + j]:
                        emission[row, j] -= step * (node[u, j] - target[u, j])
        for a in range(L):
            for b in range(L):
                if all_trained or trained[tr_base + a * L + b]:
                    transition[a, b] -= gain * (g_tr[a, b] + M[a, b] * edge_scaled[a, b])
        for j in range(L):
            if all_trained or trained[start_base + j]:
                start[j] -= gain * (node[0, j] - target[0, j])
            if all_trained or trained[end_base + j]:
                end[j] -= gain * (node[T - 1, j] - target[T - 1, j])
        if decay < 1e-150:
            _rescale(emission, transition, start, end, decay)
            decay = 1.0
    _rescale(emission, transition, start, end, decay)
    return total, t


def log_loss_sgd_epoch(attr_indptr, attr_ids, offsets, labels, order, w, n_attributes: int,
                       n_labels: int, *, eta0: float, lam: float, t: int = 0, trained=None,
                       attr_values=None, constraints=None) -> tuple[float, int]:
    """One epoch of :func:`sgd_epoch` over the sentences ``order`` of a corpus (``labels``:
    the gold label ids of all its tokens, by absolute position, −1 unknown), updating ``w``
    (contiguous float64, laid out as in the module docstring) in place from example count
    ``t``; ``trained``: a 0/1 byte per weight (None: every weight trained).  Returns
    ``(Σ of the examples' losses, each at the weights its step saw, t + len(order))``."""
    L, A = int(n_labels), int(n_attributes)
    if w.dtype != np.float64 or not w.flags.c_contiguous or w.shape != (A * L + L * L + 2 * L,):
        raise ValueError(f"the SGD epoch updates w in place: it needs a contiguous float64 "
                         f"array of {A * L + L * L + 2 * L} weights, got {w.dtype} {w.shape}")
    if lam < 0 or eta0 <= 0 or eta0 * lam >= 1:
        raise ValueError(f"the SGD epoch needs eta0 > 0, lam >= 0 and eta0 * lam < 1 (the first "
                         f"decay factor is 1 - eta0 * lam); got eta0={eta0}, lam={lam}")
    emission, transition, start, end = _label_blocks(w, A, L, None)
    if constraints is None:
        tr_mask, start_mask, end_mask = np.zeros((L, L)), np.zeros(L), np.zeros(L)
    else:
        tr_mask, start_mask, end_mask = (np.ascontiguousarray(m, dtype=np.float64)
                                         for m in constraints.masks())
    trained = np.zeros(0, np.uint8) if trained is None else np.ascontiguousarray(trained, np.uint8)
    total, t = sgd_epoch(attr_indptr, attr_ids, attr_values,
                         np.ascontiguousarray(offsets, dtype=np.int64),
                         np.ascontiguousarray(labels, dtype=np.int64),
                         np.ascontiguousarray(order, dtype=np.int64), emission, transition,
                         start, end, tr_mask, start_mask, end_mask, trained, float(eta0),
                         float(lam), int(t))
    return float(total), int(t)
