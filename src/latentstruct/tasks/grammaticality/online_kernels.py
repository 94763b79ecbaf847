"""One epoch of online latent passive-aggressive learning over chunking views, compiled.

``LatentPA`` (:mod:`latentstruct.learners.online.latent_pa`; Clifton, Whitney & Sarkar 2013,
Algorithm 1) visits the sentences one by one: it decodes the best chunking of every view
under the current weights (line 5), scores ``w . Phi(x, h*)`` (line 6) and makes the
passive-aggressive step ``w += tau y Phi(x, h*)`` (lines 7-9), re-decoding a negative until
it scores below 0 (line 10).  Run from Python, one step is a decode call, a feature map, two
checks and numpy expressions on small arrays; :func:`latent_pa_epoch` runs the whole pass in
one call, with the same decoder (``inference.viterbi``'s kernel under the views'
constraint masks), the same feature map (``latent_feature``'s coalesced Phi, emitted in
sorted order: :func:`_features`), the same dot products (``np.dot``, BLAS ``ddot`` as in
numpy) and the same step size (:func:`~latentstruct.solvers.online_rules.pa_tau`, the
function the Python loop calls): the same weights, bit for bit where numba's ``np.dot``
calls the BLAS numpy calls, and to rounding otherwise.

The weight layout is :class:`~latentstruct.tasks.grammaticality.decoding.ViewsStructure`'s:
view k's block starts at ``view_offsets[k]``,
``[emissions (n_attr x L_k) | transitions (L_k x L_k) | start (L_k) | end (L_k)]``, and the
bias is the last weight.  The masks are 0 / -inf per view, padded to the largest tag set.

A learner never trusts a decoder blindly, so the kernel checks every decode as the Python
loop does (``learners.inference_check``): the decoder's score against ``w . Phi(x, h*)``
recomputed from the feature map, and, for an exact argmax, against the score of the
structure the same example was last decoded to (``known``: 1, its tags in ``last_h``; 2, a
row of ``prior_*``, the features a checkpoint restored).  It counts the failures and reports
the first; with ``check`` it stops there, as the Python loop raises there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...data.sparse import SparseVector
from ...inference.viterbi import viterbi_batch_kernel
from ...solvers.online_rules import pa_tau
from ..sequence.corpus import SequenceCorpus
from ..sequence.kernels import emission_scores

__all__ = ["latent_pa_epoch", "attribute_order", "LatentPABatch", "PASS_STATS"]

#: the entries of ``latent_pa_epoch``'s ``out`` array, in order
PASS_STATS = ("steps", "n_updates", "cap_hits", "n_correct", "loss_sum", "loss_steps",
              "decodes", "n_inconsistent", "first_kind", "first_example", "first_score",
              "first_other")

#: ``first_kind``: no failure, a score that is not w . Phi, an argmax below a known structure
NO_FAILURE, INCONSISTENT, WORSE = 0, 1, 2


@njit(cache=True, nogil=True)
def _decode(attr_indptr, attr_ids, attr_values, t0, t1, w, view_offsets, view_labels,
            trans_masks, start_masks, end_masks, n_attr, pred):  # pragma: no cover - numba
    """Every view's Viterbi chunking of tokens t0..t1-1 under ``w`` (the masks added) into
    ``pred[k, :T]``; the sum of the views' scores (0 for an empty sentence)."""
    T = t1 - t0
    total = 0.0
    if T == 0:
        return total
    bounds = np.zeros(2, np.int64)
    bounds[1] = T
    scores = np.empty(1)
    for k in range(view_offsets.shape[0]):
        L = view_labels[k]
        o = view_offsets[k]
        e = o + n_attr * L
        trans = np.empty((L, L))
        start = np.empty(L)
        end = np.empty(L)
        for a in range(L):
            start[a] = w[e + L * L + a] + start_masks[k, a]
            end[a] = w[e + L * L + L + a] + end_masks[k, a]
            for b in range(L):
                trans[a, b] = w[e + a * L + b] + trans_masks[k, a, b]
        unary = emission_scores(attr_indptr, attr_ids, attr_values,
                                w[o:e].reshape((n_attr, L)), t0, t1)
        viterbi_batch_kernel(unary, bounds, trans, start, end, pred[k], scores)
        total += scores[0]
    return total


@njit(cache=True, nogil=True)
def attribute_order(attr_indptr, attr_ids, offsets):  # pragma: no cover - numba
    """Every sentence's attribute occurrences in the order of their ids (stable: in
    position order within one id), as positions within the sentence: entry ``p`` of the
    result, for ``p`` in sentence s's range ``attr_indptr[offsets[s]]..``, is the local
    position of its ``(p - start)``-th occurrence by id.  Computed once per batch, it lets
    :func:`_features` emit Phi(x, h) in sorted order without sorting it per decode."""
    out = np.zeros(attr_indptr[offsets[-1]], np.int32)
    for s in range(offsets.shape[0] - 1):
        a = attr_indptr[offsets[s]]
        b = attr_indptr[offsets[s + 1]]
        order = np.argsort(attr_ids[a:b], kind="mergesort")
        for q in range(b - a):
            out[a + q] = order[q]
    return out


@njit(cache=True, nogil=True)
def _insert_sorted(labels, values, g, key, v):  # pragma: no cover - numba
    """Insert ``(key, v)`` among the first ``g`` entries of ``labels`` / ``values``, kept
    sorted by key; after the entries of an equal key (so their values keep the order they
    came in)."""
    j = g
    while j > 0 and labels[j - 1] > key:
        labels[j] = labels[j - 1]
        values[j] = values[j - 1]
        j -= 1
    labels[j] = key
    values[j] = v


@njit(cache=True, nogil=True)
def _append_runs(labels, values, g, base, idx, val, m):  # pragma: no cover - numba
    """Append to ``idx`` / ``val`` from position ``m`` each run of one key among the first
    ``g`` (sorted) entries: ``base + key`` and the run's values summed in order, a zero sum
    dropped; returns the new ``m``."""
    z = 0
    while z < g:
        key = labels[z]
        total = 0.0
        while z < g and labels[z] == key:
            total += values[z]
            z += 1
        if total != 0.0:
            idx[m] = base + key
            val[m] = total
            m += 1
    return m


@njit(cache=True, nogil=True)
def _features(attr_indptr, attr_ids, attr_values, by_attr, t0, t1, h, view_offsets,
              view_labels, n_attr, bias_index):  # pragma: no cover - numba
    """Phi(x, h) coalesced, exactly as ``ViewsStructure.latent_feature`` gives it: sorted
    indices (each view's block, then the bias), the values of one index summed in position
    order (as ``coalesce_arrays`` sums them), zero sums dropped.

    The emissions are read in the order of ``by_attr`` (:func:`attribute_order`), so only
    the labels of one repeated attribute, and the transitions, need sorting (by insertion:
    a few entries each; a transition's count is never 0, so none is dropped)."""
    T = t1 - t0
    V = view_offsets.shape[0]
    a0 = attr_indptr[t0]
    nnz = attr_indptr[t1] - a0
    token = np.empty(nnz, np.int64)
    for t in range(T):
        for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
            token[p - a0] = t
    size = V * (nnz + T + 1) + 1
    idx = np.empty(size, np.int64)
    val = np.empty(size)
    labels = np.empty(max(nnz, T), np.int64)
    values = np.empty(max(nnz, T))
    m = 0
    for k in range(V):
        L = view_labels[k]
        o = view_offsets[k]
        q = 0
        while q < nnz:  # emissions, attribute by attribute
            attr = attr_ids[a0 + by_attr[a0 + q]]
            g = 0
            while q < nnz and attr_ids[a0 + by_attr[a0 + q]] == attr:
                p = a0 + by_attr[a0 + q]
                _insert_sorted(labels, values, g, h[k, token[p - a0]],
                               1.0 if attr_values is None else attr_values[p])
                g += 1
                q += 1
            m = _append_runs(labels, values, g, o + attr * L, idx, val, m)
        trans = o + n_attr * L
        for t in range(1, T):  # transitions, sorted
            _insert_sorted(labels, values, t - 1, h[k, t - 1] * L + h[k, t], 1.0)
        m = _append_runs(labels, values, max(T - 1, 0), trans, idx, val, m)
        if T > 0:
            idx[m] = trans + L * L + h[k, 0]
            val[m] = 1.0
            idx[m + 1] = trans + L * L + L + h[k, T - 1]
            val[m + 1] = 1.0
            m += 2
    idx[m] = bias_index
    val[m] = 1.0
    return idx[:m + 1], val[:m + 1]


@njit(cache=True, nogil=True)
def _structure_score(attr_indptr, attr_ids, attr_values, t0, t1, w, h, view_offsets,
                     view_labels, n_attr, bias_index):  # pragma: no cover - numba
    """w . Phi(x, h) read straight from the weight layout (the score of a known structure)."""
    T = t1 - t0
    score = w[bias_index]
    if T == 0:
        return score
    for k in range(view_offsets.shape[0]):
        L = view_labels[k]
        o = view_offsets[k]
        trans = o + n_attr * L
        start = trans + L * L
        end = start + L
        for t in range(T):
            lab = h[k, t]
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                v = 1.0 if attr_values is None else attr_values[p]
                score += v * w[o + attr_ids[p] * L + lab]
            if t > 0:
                score += w[trans + h[k, t - 1] * L + lab]
        score += w[start + h[k, 0]] + w[end + h[k, T - 1]]
    return score


@njit(cache=True, nogil=True)
def _disagree(a, b, rtol):  # pragma: no cover - numba
    """Whether scores a and b differ beyond ``rtol`` relative (at least ``rtol``), as
    ``learners.inference_check`` compares them (NaN always disagrees)."""
    scale = 1.0
    if abs(a) > scale:
        scale = abs(a)
    if abs(b) > scale:
        scale = abs(b)
    return not abs(a - b) <= rtol * scale


@njit(cache=True, nogil=True)
def latent_pa_epoch(attr_indptr, attr_ids, attr_values, by_attr, offsets, y, order, w, u,
                    view_offsets, view_labels, trans_masks, start_masks, end_masks, n_attr,
                    pa_type, c, max_rounds, t, check, maximiser, rtol, last_h, known,
                    prior_ptr, prior_idx, prior_val, out):  # pragma: no cover - numba
    """Visit the sentences ``order`` once (Algorithm 1 lines 4-10 each; module docstring),
    updating ``w`` (and the averaging accumulator ``u``, empty without averaging) in place
    from step count ``t``.

    ``y``: the labels (+-1.0); ``pa_type``, ``c``: the step size of ``pa_tau``;
    ``max_rounds``: the decode-and-update rounds of a negative within one visit;
    ``maximiser``: the decode is an argmax (a known structure may not beat it); ``rtol``: the
    checks' tolerance.  ``last_h`` (n_views, n_tokens) and ``known`` (one byte per
    sentence) remember each sentence's last decoded structure across passes.  ``out``
    receives :data:`PASS_STATS`: the step count after the pass, the updates made, the visits
    stopped at ``max_rounds``, the examples right at their first decode, the summed hinge
    losses of those decodes, the steps with a positive loss, the decodes, the failed
    checks, and the first failure (its kind, example, and the two scores compared).
    """
    V = view_offsets.shape[0]
    base = offsets[0]
    bias_index = w.shape[0] - 1
    averaging = u.shape[0] > 0
    updates = 0
    cap_hits = 0
    n_correct = 0
    loss_sum = 0.0
    loss_steps = 0
    decodes = 0
    n_bad = 0
    first_kind = NO_FAILURE
    first_example = -1
    first_score = 0.0
    first_other = 0.0
    stop = False
    for k in range(order.shape[0]):
        i = order[k]
        t0 = offsets[i]
        t1 = offsets[i + 1]
        T = t1 - t0
        yi = y[i]
        rounds = 0
        while True:
            pred = np.empty((V, T), np.int64)  # line 5
            reported = _decode(attr_indptr, attr_ids, attr_values, t0, t1, w, view_offsets,
                               view_labels, trans_masks, start_masks, end_masks, n_attr,
                               pred) + w[bias_index]
            decodes += 1
            idx, val = _features(attr_indptr, attr_ids, attr_values, by_attr, t0, t1, pred,
                                 view_offsets, view_labels, n_attr, bias_index)
            score = np.dot(w[idx], val)  # line 6
            if _disagree(reported, score, rtol):
                n_bad += 1
                if first_kind == NO_FAILURE:
                    first_kind, first_example = INCONSISTENT, i
                    first_score, first_other = reported, score
                if check:
                    stop = True
                    break
            if maximiser and known[i] != 0:
                if known[i] == 1:
                    before = _structure_score(attr_indptr, attr_ids, attr_values, t0, t1, w,
                                              last_h[:, t0 - base:t1 - base], view_offsets,
                                              view_labels, n_attr, bias_index)
                else:
                    a = prior_ptr[i]
                    b = prior_ptr[i + 1]
                    before = np.dot(w[prior_idx[a:b]], prior_val[a:b])
                scale = 1.0
                if abs(score) > scale:
                    scale = abs(score)
                if abs(before) > scale:
                    scale = abs(before)
                if not score >= before - rtol * scale:
                    n_bad += 1
                    if first_kind == NO_FAILURE:
                        first_kind, first_example = WORSE, i
                        first_score, first_other = score, before
                    if check:
                        stop = True
                        break
            last_h[:, t0 - base:t1 - base] = pred
            known[i] = 1
            margin = 1.0 - yi * score
            loss = margin if margin > 0.0 else 0.0  # line 7
            tau = pa_tau(loss, np.dot(val, val), pa_type, c)  # line 8
            t += 1
            if rounds == 0:
                if (score >= 0.0) == (yi > 0):
                    n_correct += 1
                loss_sum += loss
            if loss > 0.0:
                loss_steps += 1
            if tau != 0.0:  # line 9
                step = tau * yi
                for q in range(idx.shape[0]):
                    delta = step * val[q]
                    w[idx[q]] += delta
                    if averaging:
                        u[idx[q]] += (t - 1) * delta
                updates += 1
            rounds += 1
            if yi > 0 or score < 0.0:  # line 10
                break
            if rounds >= max_rounds:
                cap_hits += 1
                break
        if stop:
            break
    out[0] = t
    out[1] = updates
    out[2] = cap_hits
    out[3] = n_correct
    out[4] = loss_sum
    out[5] = loss_steps
    out[6] = decodes
    out[7] = n_bad
    out[8] = first_kind
    out[9] = first_example
    out[10] = first_score
    out[11] = first_other


@njit(cache=True, nogil=True)
def _known_features(attr_indptr, attr_ids, attr_values, by_attr, offsets, rows, last_h,
                    view_offsets, view_labels, n_attr, bias_index):  # pragma: no cover - numba
    """Phi(x_i, last_h of i) of the sentences ``rows``, as CSR rows (indptr, idx, val)."""
    base = offsets[0]
    n = rows.shape[0]
    V = view_offsets.shape[0]
    cap = 0
    for r in range(n):
        i = rows[r]
        T = offsets[i + 1] - offsets[i]
        cap += V * (attr_indptr[offsets[i + 1]] - attr_indptr[offsets[i]] + T + 2) + 1
    indptr = np.zeros(n + 1, np.int64)
    idx = np.empty(cap, np.int64)
    val = np.empty(cap)
    m = 0
    for r in range(n):
        i = rows[r]
        t0 = offsets[i]
        t1 = offsets[i + 1]
        a, v = _features(attr_indptr, attr_ids, attr_values, by_attr, t0, t1,
                         np.ascontiguousarray(last_h[:, t0 - base:t1 - base]), view_offsets,
                         view_labels, n_attr, bias_index)
        idx[m:m + a.shape[0]] = a
        val[m:m + a.shape[0]] = v
        m += a.shape[0]
        indptr[r + 1] = m
    return indptr, idx[:m], val[:m]


class LatentPABatch:
    """Sentences, their labels and the views' layout, prepared once for
    ``ViewsStructure.latent_pa_pass`` (every pass of a run reuses them), and what the passes
    remember: the structure each sentence was last decoded to (``last_h`` where ``known`` is
    1), or the features a checkpoint restored for it (``known`` 2, rows of ``prior_*``)."""

    __slots__ = ("corpus", "by_attr", "y", "view_offsets", "view_labels", "trans_masks",
                 "start_masks", "end_masks", "n_attributes", "last_h", "known", "prior_ptr",
                 "prior_idx", "prior_val")

    def __init__(self, corpus: SequenceCorpus, y: np.ndarray, views, n_attributes: int,
                 known: dict | None = None):
        self.corpus = corpus
        self.by_attr = attribute_order(corpus.attr_indptr, corpus.attr_ids, corpus.offsets)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        V = len(views)
        Lmax = max(v.n_labels for v in views)
        self.view_offsets = np.array([v.offset for v in views], dtype=np.int64)
        self.view_labels = np.array([v.n_labels for v in views], dtype=np.int64)
        self.trans_masks = np.zeros((V, Lmax, Lmax))
        self.start_masks = np.zeros((V, Lmax))
        self.end_masks = np.zeros((V, Lmax))
        for k, v in enumerate(views):
            L = v.n_labels
            self.trans_masks[k, :L, :L] = v.trans_mask
            self.start_masks[k, :L] = v.start_mask
            self.end_masks[k, :L] = v.end_mask
        self.n_attributes = int(n_attributes)
        n = len(corpus)
        self.last_h = np.zeros((V, corpus.n_tokens), dtype=np.int64)
        self.known = np.zeros(n, dtype=np.int8)
        self.prior_ptr = np.zeros(n + 1, dtype=np.int64)
        self.prior_idx, self.prior_val = np.zeros(0, np.int64), np.zeros(0)
        if known:
            lengths = np.zeros(n, dtype=np.int64)
            for i, phi in known.items():
                if not 0 <= int(i) < n:
                    raise ValueError(f"a known structure for sentence {i}, but the batch has {n}")
                lengths[int(i)] = phi.indices.shape[0]
                self.known[int(i)] = 2
            np.cumsum(lengths, out=self.prior_ptr[1:])
            self.prior_idx = np.zeros(self.prior_ptr[-1], np.int64)
            self.prior_val = np.zeros(self.prior_ptr[-1])
            for i, phi in known.items():
                a = self.prior_ptr[int(i)]
                self.prior_idx[a:a + lengths[int(i)]] = phi.indices
                self.prior_val[a:a + lengths[int(i)]] = phi.values

    def __len__(self) -> int:
        return len(self.corpus)

    def run(self, w, u, order, pa_type, c, max_rounds, t, check, maximiser, rtol) -> dict:
        """One compiled pass (:func:`latent_pa_epoch`); its :data:`PASS_STATS`."""
        X = self.corpus
        out = np.zeros(len(PASS_STATS))
        latent_pa_epoch(X.attr_indptr, X.attr_ids, X.attr_values, self.by_attr, X.offsets,
                        self.y, np.ascontiguousarray(order, dtype=np.int64), w, u,
                        self.view_offsets, self.view_labels, self.trans_masks,
                        self.start_masks, self.end_masks,
                        self.n_attributes, int(pa_type), float(c), int(max_rounds), int(t),
                        bool(check), bool(maximiser), float(rtol), self.last_h, self.known,
                        self.prior_ptr, self.prior_idx, self.prior_val, out)
        stats = dict(zip(PASS_STATS, out.tolist()))
        for name in ("steps", "n_updates", "cap_hits", "n_correct", "loss_steps", "decodes",
                     "n_inconsistent", "first_kind", "first_example"):
            stats[name] = int(stats[name])
        return stats

    def known_features(self, bias_index: int) -> dict:
        """{sentence: Phi(x, h)} of every sentence's last decoded structure (or the
        features restored for it), in sentence order: what a checkpoint records."""
        X = self.corpus
        decoded = np.flatnonzero(self.known == 1).astype(np.int64)
        indptr, idx, val = _known_features(X.attr_indptr, X.attr_ids, X.attr_values,
                                           self.by_attr, X.offsets, decoded, self.last_h,
                                           self.view_offsets, self.view_labels,
                                           self.n_attributes, int(bias_index))
        out = {}
        rows = {int(i): r for r, i in enumerate(decoded)}
        for i in np.flatnonzero(self.known).tolist():
            if i in rows:
                r = rows[i]
                a, b = indptr[r], indptr[r + 1]
                out[i] = SparseVector(idx[a:b].copy(), val[a:b].copy())
            else:
                a, b = self.prior_ptr[i], self.prior_ptr[i + 1]
                out[i] = SparseVector(self.prior_idx[a:b].copy(), self.prior_val[a:b].copy())
        return out
