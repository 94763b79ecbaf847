"""Scoring kernels of the k-best reranker: log Z_j, marginals and expected features (numba).

For candidate t_j of sentence s with weights w = scale * theta (the scale lets SGD keep its
L2 shrinkage lazy), the score of a hidden assignment h is

    w . Phi(t_j, h) = sum_words U[w, h_w] + sum_{edges (p, c) of D(t_j)} E[c, h_p, h_c]
                      + w_base * base_j + w_num . a_j

(a_j: the per-candidate numbers given with the lists, if any; :func:`number_scores` and
:func:`number_features` add them in Python, outside the hidden-variable part), with U and
E gathered from the hashed weights (:mod:`.features`).  Unary and edge tables are computed
once per *deduplicated row* of the sentence and shared by its candidates; then
sum-product on D(t_j) (:func:`candidate_sum_product`, the two-pass algorithm of
:func:`latentstruct.inference.tree_bp.tree_sum_product` reading the shared tables in place and reusing its buffers) gives log Z_j and the node and edge marginals of each
candidate (Koo & Collins 2005, §3.2), and
:func:`latentstruct.inference.tree_bp.max_product_kernel` the best assignment.  Labels beyond a word's domain get unary
score -inf (the tree BP convention for domains of different sizes).

Every entry point handles one sentence in one call; the storage arrays are passed in the
order of :meth:`RerankStorage.kernel_args`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from ...inference.tree_bp import max_product_kernel
from .features import N_EDGE_TEMPLATES, N_NODE_TEMPLATES, combine, fmix

__all__ = ["sentence_forward", "sentence_scatter", "sentence_max_product", "tree_order",
           "candidate_sum_product", "number_scores", "number_features", "stack_numbers"]


def _number_range(storage, s: int):
    c0, c1 = int(storage.sent_cand_ptr[s]), int(storage.sent_cand_ptr[s + 1])
    A = storage.numbers
    return c0, c1, int(A.indptr[c0]), int(A.indptr[c1])


def number_scores(storage, s: int, w_num: np.ndarray) -> np.ndarray:
    """w_num . a_j of every candidate j of sentence ``s`` (k,): zeros without numbers.
    Constant in the hidden values, so it adds to log Z_j and to max_h alike."""
    k = int(storage.sent_cand_ptr[s + 1] - storage.sent_cand_ptr[s])
    if storage.numbers is None:
        return np.zeros(k)
    c0, _, lo, hi = _number_range(storage, s)
    A = storage.numbers
    return np.bincount(storage.numbers_row[lo:hi] - c0,
                       weights=A.data[lo:hi] * w_num[A.indices[lo:hi]], minlength=k)


def number_features(storage, s: int, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sum_j coef[j] a_j of sentence ``s`` as (columns, values), columns repeated; empty
    without numbers.  (F(t_j) holds a_j as it is: it does not depend on h.)"""
    if storage.numbers is None:
        return np.zeros(0, np.int64), np.zeros(0)
    c0, _, lo, hi = _number_range(storage, s)
    A = storage.numbers
    return (A.indices[lo:hi].astype(np.int64),
            A.data[lo:hi] * coef[storage.numbers_row[lo:hi] - c0])


def stack_numbers(matrices, n_columns: int):
    """The per-candidate numbers of every list, in candidate order: (CSR matrix, the row of
    each stored entry) for :class:`~.features.RerankStorage`."""
    A = sp.vstack(matrices, format="csr") if matrices else sp.csr_matrix((0, n_columns))
    A = sp.csr_matrix(A, dtype=np.float64)
    A.sort_indices()
    rows = np.repeat(np.arange(A.shape[0], dtype=np.int64), np.diff(A.indptr))
    return A, rows


@njit(cache=True)
def tree_order(parents, order, ptr, kids):  # pragma: no cover - numba
    """Root-first BFS order and children CSR of a tree given by ``parents`` (one -1)."""
    n = parents.shape[0]
    ptr[:] = 0
    root = 0
    for i in range(n):
        p = parents[i]
        if p < 0:
            root = i
        else:
            ptr[p + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    fill = ptr[:n].copy()
    for i in range(n):
        p = parents[i]
        if p >= 0:
            kids[fill[p]] = i
            fill[p] += 1
    order[0] = root
    head, tail = 0, 1
    while head < tail:
        v = order[head]
        head += 1
        for q in range(ptr[v], ptr[v + 1]):
            order[tail] = kids[q]
            tail += 1


@njit(cache=True)
def _tables(theta, scale, mask, s, row_ptr, erow_ptr, sent_K, nrow_tmpl, nrow_vs, erow_tmpl,
            erow_vsp, erow_vsc, vs_dom, vs_vals):  # pragma: no cover - numba
    K = sent_K[s]
    r0, r1 = row_ptr[s], row_ptr[s + 1]
    e0, e1 = erow_ptr[s], erow_ptr[s + 1]
    # combine(t, v) = fmix(fmix(t) ^ v): fmix(t) is computed once per template
    U = np.full((r1 - r0, K), -np.inf)
    ft = np.empty(N_NODE_TEMPLATES, np.uint64)
    for r in range(r0, r1):
        vs = nrow_vs[r]
        for t in range(N_NODE_TEMPLATES):
            ft[t] = fmix(nrow_tmpl[r, t])
        for v in range(vs_dom[vs]):
            val = vs_vals[vs, v]
            acc = 0.0
            for t in range(N_NODE_TEMPLATES):
                acc += theta[np.int64(fmix(ft[t] ^ val) & mask)]
            U[r - r0, v] = scale * acc
    E = np.zeros((e1 - e0, K, K))
    ta = np.empty(N_EDGE_TEMPLATES, np.uint64)
    for e in range(e0, e1):
        vp, vc = erow_vsp[e], erow_vsc[e]
        for a in range(vs_dom[vp]):
            for t in range(N_EDGE_TEMPLATES):
                ta[t] = fmix(combine(erow_tmpl[e, t], vs_vals[vp, a]))
            for b in range(vs_dom[vc]):
                vb = vs_vals[vc, b]
                acc = 0.0
                for t in range(N_EDGE_TEMPLATES):
                    acc += theta[np.int64(fmix(ta[t] ^ vb) & mask)]
                E[e - e0, a, b] = scale * acc
    return U, E


@njit(cache=True)
def candidate_sum_product(U, E, nrow, erow, parents, order, want_marginals, node_marg,
                          edge_marg, up, msg, excl, tmp):  # pragma: no cover - numba
    """log Z (and marginals) of one candidate whose unary rows are ``U[nrow[i]]`` and edge
    tables ``E[erow[i]]`` (``[parent label, own label]``; ``erow`` -1 at the root).

    Leaves-to-root messages msg[i, a] = logsumexp_b(E[i, a, b] + up[i, b]), then root-to-leaves
    outside scores through excl[a] = out[p, a] + up[p, a] - msg[i, a] (the parent's belief
    without the child's own message); p(h_p = a, h_i = b) = exp(excl[a] + E[i, a, b] + up[i, b]
    - log Z), p(h_i = b) their sum over a, and out[i, b] = log p(h_i = b) - up[i, b] + log Z
    (-inf where the marginal underflows to 0, the correct limit).  The subtraction is safe: msg is finite whenever the
    child has a label of finite score (always, here), and a padded parent label has
    up = -inf, so excl = -inf as it should.  ``node_marg`` (n, K) receives p(h_i = b),
    ``edge_marg`` (n, K, K) p(h_parent = a, h_i = b) (root slice untouched); the work
    buffers ``up``, ``msg``, ``excl`` hold at least n x K, K and ``tmp`` K values.
    """
    n = nrow.shape[0]
    K = U.shape[1]
    for i in range(n):
        for a in range(K):
            up[i, a] = U[nrow[i], a]
    for q in range(n - 1, 0, -1):
        i = order[q]
        p = parents[i]
        e = erow[i]
        for a in range(K):
            m = -np.inf
            for b in range(K):
                v = E[e, a, b] + up[i, b]
                tmp[b] = v
                if v > m:
                    m = v
            if m == -np.inf:
                msg[i, a] = -np.inf
            else:
                acc = 0.0
                for b in range(K):
                    acc += np.exp(tmp[b] - m)
                msg[i, a] = m + np.log(acc)
            up[p, a] += msg[i, a]
    root = order[0]
    m = -np.inf
    for a in range(K):
        if up[root, a] > m:
            m = up[root, a]
    if m == -np.inf:
        return m
    acc = 0.0
    for a in range(K):
        acc += np.exp(up[root, a] - m)
    log_z = m + np.log(acc)
    if not want_marginals:
        return log_z
    # root to leaves: the edge marginals of i from its parent's outside score (stored in
    # msg[p], free once the upward pass is done), node marginals as their sums, and i's own
    # outside score out[i, b] = log p(h_i = b) - up[i, b] + log Z for its children
    for a in range(K):
        node_marg[root, a] = np.exp(up[root, a] - log_z)
        msg[root, a] = 0.0
    for q in range(1, n):
        i = order[q]
        p = parents[i]
        e = erow[i]
        for a in range(K):
            excl[a] = -np.inf if msg[i, a] == -np.inf else msg[p, a] + up[p, a] - msg[i, a]
        for b in range(K):
            acc = 0.0
            for a in range(K):
                v = np.exp(excl[a] + E[e, a, b] + up[i, b] - log_z)
                edge_marg[i, a, b] = v
                acc += v
            node_marg[i, b] = acc
        for b in range(K):
            msg[i, b] = np.log(node_marg[i, b]) - up[i, b] + log_z if node_marg[i, b] > 0.0 \
                else -np.inf
    return log_z


@njit(cache=True)
def _fill(c, n, K, U, E, r0, e0, cand_node_ptr, node_row, edge_row, bp_parent, unary, edge,
          parents):  # pragma: no cover - numba
    g0 = cand_node_ptr[c]
    for w in range(n):
        g = g0 + w
        r = node_row[g] - r0
        for a in range(K):
            unary[w, a] = U[r, a]
        parents[w] = bp_parent[g]
        er = edge_row[g]
        if er >= 0:
            edge[w] = E[er - e0]
        else:
            edge[w] = 0.0


@njit(cache=True)
def sentence_forward(theta, scale, mask, base_index, want_marginals, s, sent_cand_ptr,
                     cand_node_ptr, base_val, node_row, edge_row, bp_parent, row_ptr, erow_ptr,
                     sent_K, nrow_tmpl, nrow_vs, erow_tmpl, erow_vsp, erow_vsc, vs_dom,
                     vs_vals):  # pragma: no cover - numba
    """log Z_j of every candidate of sentence ``s`` (and their marginals if asked).

    Returns (log_z (k,), node marginals (k, n, K), edge marginals (k, n, K, K)); the
    marginal arrays have a leading size 0 when ``want_marginals`` is False.
    """
    U, E = _tables(theta, scale, mask, s, row_ptr, erow_ptr, sent_K, nrow_tmpl, nrow_vs,
                   erow_tmpl, erow_vsp, erow_vsc, vs_dom, vs_vals)
    c0, c1 = sent_cand_ptr[s], sent_cand_ptr[s + 1]
    k = c1 - c0
    n = cand_node_ptr[c0 + 1] - cand_node_ptr[c0]
    K = sent_K[s]
    kk = k if want_marginals else 1
    NM = np.zeros((kk, n, K))
    EM = np.zeros((kk, n, K, K))
    nrow = np.empty(n, np.int64)
    erow = np.empty(n, np.int64)
    parents = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    ptr = np.empty(n + 1, np.int64)
    kids = np.empty(n, np.int64)
    up = np.empty((n, K))
    msg = np.empty((n, K))
    excl = np.empty(K)
    tmp = np.empty(K)
    log_z = np.empty(k)
    wb = scale * theta[base_index]
    r0, e0 = row_ptr[s], erow_ptr[s]
    for j in range(k):
        c = c0 + j
        g0 = cand_node_ptr[c]
        for w in range(n):
            nrow[w] = node_row[g0 + w] - r0
            erow[w] = edge_row[g0 + w] - e0 if edge_row[g0 + w] >= 0 else -1
            parents[w] = bp_parent[g0 + w]
        tree_order(parents, order, ptr, kids)
        jj = j if want_marginals else 0
        lz = candidate_sum_product(U, E, nrow, erow, parents, order, want_marginals, NM[jj],
                                   EM[jj], up, msg, excl, tmp)
        log_z[j] = lz + wb * base_val[c]
    if not want_marginals:
        return log_z, NM[:0], EM[:0]
    return log_z, NM, EM


@njit(cache=True)
def _emit(out, idx, val, m, i, gv, dense):  # pragma: no cover - numba
    """Add gv at feature i: into the dense ``out``, or as entry m of (idx, val); returns the
    next free entry."""
    if dense:
        out[i] += gv
        return m
    idx[m] = i
    val[m] = gv
    return m + 1


@njit(cache=True)
def sentence_scatter(coef, NM, EM, mask, base_index, dense, out, s, sent_cand_ptr,
                     cand_node_ptr, base_val, node_row, edge_row, bp_parent, row_ptr, erow_ptr,
                     sent_K, nrow_tmpl, nrow_vs, erow_tmpl, erow_vsp, erow_vsc, vs_dom,
                     vs_vals):  # pragma: no cover - numba
    """sum_j coef[j] F(t_j) from the marginals of :func:`sentence_forward`.

    With ``dense`` the result is added into ``out`` (length n_features) and empty arrays are
    returned; otherwise (indices, values) with repeated indices (uncoalesced).
    """
    c0, c1 = sent_cand_ptr[s], sent_cand_ptr[s + 1]
    n = cand_node_ptr[c0 + 1] - cand_node_ptr[c0]
    K = sent_K[s]
    r0, r1 = row_ptr[s], row_ptr[s + 1]
    e0, e1 = erow_ptr[s], erow_ptr[s + 1]
    GU = np.zeros((r1 - r0, K))
    GE = np.zeros((e1 - e0, K, K))
    gbase = 0.0
    for j in range(c1 - c0):
        cj = coef[j]
        if cj == 0.0:
            continue
        c = c0 + j
        g0 = cand_node_ptr[c]
        gbase += cj * base_val[c]
        for w in range(n):
            g = g0 + w
            r = node_row[g] - r0
            for a in range(K):
                GU[r, a] += cj * NM[j, w, a]
            er = edge_row[g]
            if er >= 0:
                for a in range(K):
                    for b in range(K):
                        GE[er - e0, a, b] += cj * EM[j, w, a, b]
    size = 0 if dense else (r1 - r0) * K * N_NODE_TEMPLATES + (e1 - e0) * K * K * N_EDGE_TEMPLATES + 1
    idx = np.empty(size, np.int64)
    val = np.empty(size)
    m = 0
    ft = np.empty(N_NODE_TEMPLATES, np.uint64)
    for r in range(r0, r1):
        vs = nrow_vs[r]
        for t in range(N_NODE_TEMPLATES):
            ft[t] = fmix(nrow_tmpl[r, t])
        for v in range(vs_dom[vs]):
            gv = GU[r - r0, v]
            if gv == 0.0:
                continue
            value = vs_vals[vs, v]
            for t in range(N_NODE_TEMPLATES):
                m = _emit(out, idx, val, m, np.int64(fmix(ft[t] ^ value) & mask), gv, dense)
    ta = np.empty(N_EDGE_TEMPLATES, np.uint64)
    for e in range(e0, e1):
        vp, vc = erow_vsp[e], erow_vsc[e]
        for a in range(vs_dom[vp]):
            for t in range(N_EDGE_TEMPLATES):
                ta[t] = fmix(combine(erow_tmpl[e, t], vs_vals[vp, a]))
            for b in range(vs_dom[vc]):
                gv = GE[e - e0, a, b]
                if gv == 0.0:
                    continue
                vb = vs_vals[vc, b]
                for t in range(N_EDGE_TEMPLATES):
                    m = _emit(out, idx, val, m, np.int64(fmix(ta[t] ^ vb) & mask), gv, dense)
    if gbase != 0.0:
        m = _emit(out, idx, val, m, base_index, gbase, dense)
    return idx[:m], val[:m]


@njit(cache=True)
def sentence_max_product(theta, scale, mask, base_index, s, sent_cand_ptr, cand_node_ptr,
                         base_val, node_row, edge_row, bp_parent, row_ptr, erow_ptr, sent_K,
                         nrow_tmpl, nrow_vs, erow_tmpl, erow_vsp, erow_vsc, vs_dom,
                         vs_vals):  # pragma: no cover - numba
    """max_h w . Phi(t_j, h) and its argmax (labels (k, n)) for every candidate of ``s``."""
    U, E = _tables(theta, scale, mask, s, row_ptr, erow_ptr, sent_K, nrow_tmpl, nrow_vs,
                   erow_tmpl, erow_vsp, erow_vsc, vs_dom, vs_vals)
    c0, c1 = sent_cand_ptr[s], sent_cand_ptr[s + 1]
    k = c1 - c0
    n = cand_node_ptr[c0 + 1] - cand_node_ptr[c0]
    K = sent_K[s]
    unary = np.empty((n, K))
    edge = np.zeros((n, K, K))
    parents = np.empty(n, np.int64)
    order = np.empty(n, np.int64)
    ptr = np.empty(n + 1, np.int64)
    kids = np.empty(n, np.int64)
    labels = np.zeros((k, n), np.int64)
    scores = np.empty(k)
    wb = scale * theta[base_index]
    for j in range(k):
        c = c0 + j
        _fill(c, n, K, U, E, row_ptr[s], erow_ptr[s], cand_node_ptr, node_row, edge_row,
              bp_parent, unary, edge, parents)
        tree_order(parents, order, ptr, kids)
        scores[j] = max_product_kernel(unary, parents, edge, order, labels[j]) + wb * base_val[c]
    return scores, labels
