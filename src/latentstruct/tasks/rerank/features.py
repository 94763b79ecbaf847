"""Feature templates and the hidden-variable graph of the k-best reranker (numba).

Koo & Collins (2005) restrict features to single hidden variables and to pairs of hidden
variables joined by an edge of a tree D(t) (§3.1, Eq. 4); the features may look at any part
of the candidate t itself (footnote 1).  Here t is a dependency tree and the templates are
the dependency analogues of Fig. 2 (the relation of a word to its head stands in for the
"highest nonterminal", its children for the rules it heads).

Everything is hashed: strings become 64-bit *atoms* (:func:`atom`, MurmurHash3 with seeds 0
and 1) once per vocabulary item, and templates are composed from atoms with
:func:`combine` inside numba, so no feature string is ever built per candidate.  A
feature is a template hash conjoined with the hidden value(s) it fires with:

    node feature (template t, value v)          -> combine(t, v) & (2**hash_bits - 1)
    edge feature (template t, values a, b)      -> combine(combine(t, a), b) & (2**hash_bits - 1)

**Single-variable templates** of word w (order = column of ``node_templates``): 0 h_w alone;
1 word; 2 POS; 3 word+POS; 4 relation; 5 word+relation; 6 POS+relation;
7 word+POS+relation; 8 up path (the relations from w towards the root, at most 4, then ROOT
if reached); 9 word+up path; 10 down path (w's children's relations as a sorted multiset);
11 word+down path; 12 head rule (w's relation -> its children's relations in surface order,
with w itself marked by its POS at its position, like ``NP -> CD CD NNS_head``); 13 word+head
rule; 14 mod rule (the head's relation -> the head's children in order, the head marked by
its POS and w marked as the modifier); 15 word+mod rule; 16 head grandparent rule (head
rule + the relation of w's head); 17 word+head gpar rule; 18 mod grandparent rule (mod rule
+ the relation of the grandparent); 19 word+mod gpar rule.  The word is lowercased.

**Pairwise templates** of an edge (p, c) of D(t), p the parent in D: when p is c's head,
0 (head POS, c's relation, side of c, adjacency: no other child of p between them,
coordination: a child between them is cc/conj or tagged CC/CCONJ), 1 the head rule of p,
2 the head grandparent rule of p.  When p and c are adjacent siblings (sibling graph, or
extra roots), 0 (common head's POS, both relations, side, string adjacency, either word is
a coordinator), 1 and 2 the common head's rule and grandparent rule.  The virtual root
(head 0) has POS and relation ROOT.

**Relations.** A labelled candidate uses its deprels (subtypes kept).  An unlabelled one
(every deprel ``"_"``, as in the PTB ``.dp`` lists) uses (POS of the head or ROOT, side of
the head) instead.

**The graph D(t)** (``graph``): ``"head"``: every word's parent is its head; the first root
word is the root of D and further root words (multi-root candidates) hang from it.
``"sibling"`` (§4.2, Fig. 2): the headwords of adjacent siblings are linked, the head counting
as a sibling at its own position: for a head with children l2 l1 [head] r1 r2 the edges are
head-l1, l1-l2, head-r1, r1-r2; the children of the virtual root form a chain c1-c2-...
rooted at c1.  Both are trees on the words.  For Fig. 2 (bought shares in yesterday, all
modifiers right of the head) this gives (bought, shares), (shares, in), (in, yesterday).

**Hidden values.** Each word has value classes (one POS, one word, its supersenses, ...)
each split into ``n_sub`` sub-values; value v of the domain is class v // n_sub, sub-value
v % n_sub, and its id is combine(class atom, v % n_sub).

:func:`build_storage` deduplicates per sentence: candidates share most of their words'
templates, so node rows (20 templates + value set), edge rows (3 templates + the two value
sets) and value sets are stored once per sentence and every (candidate, word) points to them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from numba import njit
from sklearn.utils import murmurhash3_32

__all__ = [
    "N_NODE_TEMPLATES",
    "N_EDGE_TEMPLATES",
    "NODE_TEMPLATE_NAMES",
    "EDGE_TEMPLATE_NAMES",
    "atom",
    "combine",
    "fmix",
    "node_feature_index",
    "edge_feature_index",
    "TAGS",
    "RerankStorage",
    "featurize_chunk",
    "build_storage",
]

NODE_TEMPLATE_NAMES = (
    "h", "word", "pos", "word+pos", "rel", "word+rel", "pos+rel", "word+pos+rel", "up",
    "word+up", "down", "word+down", "head-rule", "word+head-rule", "mod-rule", "word+mod-rule",
    "head-gpar-rule", "word+head-gpar-rule", "mod-gpar-rule", "word+mod-gpar-rule")
EDGE_TEMPLATE_NAMES = ("dependency", "rule", "gpar-rule")
N_NODE_TEMPLATES = len(NODE_TEMPLATE_NAMES)
N_EDGE_TEMPLATES = len(EDGE_TEMPLATE_NAMES)

_MARKERS = ("DEP", "SIB", "ERULE", "EGRULE", "ROOT", "NONE", "SELF", "HEAD", "MOD", "LEFT",
            "RIGHT", "ADJ", "NADJ", "CC", "NCC", "UREL", "VREL", "VSET", "HRSEQ", "DOWNSEQ",
            "MRSEQ", "UPSEQ", "GP")
(_DEP, _SIB, _ERULE, _EGRULE, _ROOT, _NONE, _SELF, _HEAD, _MOD, _LEFT, _RIGHT, _ADJ, _NADJ,
 _CC, _NCC, _UREL, _VREL, _VSET, _HRSEQ, _DOWNSEQ, _MRSEQ, _UPSEQ, _GP) = range(
    N_NODE_TEMPLATES, N_NODE_TEMPLATES + len(_MARKERS))


def atom(text: str) -> np.uint64:
    """64-bit hash of a string: MurmurHash3 with seed 0 (low half) and seed 1 (high half)."""
    data = text.encode("utf-8", "surrogatepass")
    lo = murmurhash3_32(data, seed=0, positive=True)
    hi = murmurhash3_32(data, seed=1, positive=True)
    return np.uint64(lo | (hi << 32))


#: atoms of the template and marker names (columns 0..19 are the node templates)
TAGS = np.array([atom("#" + n) for n in NODE_TEMPLATE_NAMES + _MARKERS], dtype=np.uint64)


@njit(cache=True, inline="always")
def fmix(z):  # pragma: no cover - numba
    """MurmurHash3's 64-bit finaliser (fmix64): every bit of ``z`` (uint64) mixed into all."""
    z ^= z >> np.uint64(33)
    z *= np.uint64(0xFF51AFD7ED558CCD)
    z ^= z >> np.uint64(33)
    z *= np.uint64(0xC4CEB9FE1A85EC53)
    z ^= z >> np.uint64(33)
    return z


@njit(cache=True)
def combine(h, x):  # pragma: no cover - numba
    """Order-sensitive 64-bit hash of the pair (h, x) (both uint64)."""
    return fmix(fmix(h) ^ x)


@njit(cache=True)
def node_feature_index(template, value, mask):  # pragma: no cover - numba
    """Weight index of single-variable template ``template`` with hidden value ``value``."""
    return np.int64(combine(template, value) & mask)


@njit(cache=True)
def edge_feature_index(template, a, b, mask):  # pragma: no cover - numba
    """Weight index of pairwise template ``template`` with parent value a, child value b."""
    return np.int64(combine(combine(template, a), b) & mask)


@njit(cache=True)
def _c(h, x):  # pragma: no cover - numba
    return combine(h, x)


@njit(cache=True)
def featurize_chunk(sent_cand_ptr, sent_word_ptr, cand_node_ptr, word_atom, pos_atom, pos_cc,
                    word_ncls, word_nsub, word_cls, heads, rel_idx, rel_atom_tab, rel_cc_tab,
                    cand_labelled, graph, rel_domain, rel_nsub, tags, node_tmpl, edge_tmpl,
                    bp_parent, node_key, edge_key, vs_key, vs_ncls, vs_nsub,
                    vs_cls):  # pragma: no cover - numba
    """Templates, graph D(t), value sets and row keys of every (candidate, word) of a chunk.

    ``heads`` are 0-based, -1 for the root.  Fills the output arrays (one row per node);
    ``edge_tmpl``/``edge_key`` of the root of D(t) are left at 0 (``bp_parent`` = -1).
    """
    maxc = word_cls.shape[1]
    ROOT = tags[_ROOT]
    NONE = tags[_NONE]
    for s in range(sent_cand_ptr.shape[0] - 1):
        w0 = sent_word_ptr[s]
        n = sent_word_ptr[s + 1] - w0
        R = np.empty(n, np.uint64)
        cc = np.empty(n, np.bool_)
        hd = np.empty(n, np.int64)
        ptr = np.zeros(n + 2, np.int64)
        fill = np.empty(n + 1, np.int64)
        kids = np.empty(max(n, 1), np.int64)
        HR = np.empty(n + 1, np.uint64)
        HGR = np.empty(n + 1, np.uint64)
        DOWN = np.empty(n + 1, np.uint64)
        tmp = np.empty(max(n, 1), np.uint64)
        par = np.empty(n, np.int64)
        for c in range(sent_cand_ptr[s], sent_cand_ptr[s + 1]):
            g0 = cand_node_ptr[c]
            for w in range(n):
                hd[w] = heads[g0 + w]
            for w in range(n):
                ri = rel_idx[g0 + w]
                h = hd[w]
                if cand_labelled[c]:
                    R[w] = rel_atom_tab[ri]
                else:
                    hp = pos_atom[w0 + h] if h >= 0 else ROOT
                    side = tags[_LEFT] if (h >= 0 and h < w) else tags[_RIGHT]
                    R[w] = _c(_c(tags[_UREL], hp), side)
                cc[w] = rel_cc_tab[ri] or pos_cc[w0 + w]
            # children of every word (and of the virtual root n), in surface order
            ptr[:] = 0
            for w in range(n):
                x = hd[w] if hd[w] >= 0 else n
                ptr[x + 1] += 1
            for x in range(n + 1):
                ptr[x + 1] += ptr[x]
            for x in range(n + 1):
                fill[x] = ptr[x]
            for w in range(n):
                x = hd[w] if hd[w] >= 0 else n
                kids[fill[x]] = w
                fill[x] += 1
            # head rules, down paths, head grandparent rules of every word and of the root
            for x in range(n + 1):
                lhs = R[x] if x < n else ROOT
                selfv = _c(tags[_SELF], pos_atom[w0 + x] if x < n else ROOT)
                h = _c(tags[_HRSEQ], lhs)
                done = x == n
                if done:
                    h = _c(h, selfv)
                m = ptr[x + 1] - ptr[x]
                for q in range(ptr[x], ptr[x + 1]):
                    ch = kids[q]
                    if not done and ch > x:
                        h = _c(h, selfv)
                        done = True
                    h = _c(h, R[ch])
                    tmp[q - ptr[x]] = R[ch]
                if not done:
                    h = _c(h, selfv)
                HR[x] = h
                d = _c(tags[_DOWNSEQ], np.uint64(m))
                srt = np.sort(tmp[:m])
                for q in range(m):
                    d = _c(d, srt[q])
                DOWN[x] = d
                if x == n:
                    HGR[x] = _c(_c(tags[_GP], NONE), h)
                else:
                    rh = R[hd[x]] if hd[x] >= 0 else ROOT
                    HGR[x] = _c(_c(tags[_GP], rh), h)
            for w in range(n):
                W = word_atom[w0 + w]
                P = pos_atom[w0 + w]
                x = hd[w] if hd[w] >= 0 else n
                # mod rule and its grandparent variant
                mr = _c(tags[_MRSEQ], R[x] if x < n else ROOT)
                headv = _c(tags[_HEAD], pos_atom[w0 + x] if x < n else ROOT)
                done = x == n
                if done:
                    mr = _c(mr, headv)
                for q in range(ptr[x], ptr[x + 1]):
                    ch = kids[q]
                    if not done and ch > x:
                        mr = _c(mr, headv)
                        done = True
                    mr = _c(mr, _c(tags[_MOD], R[ch]) if ch == w else R[ch])
                if not done:
                    mr = _c(mr, headv)
                if x == n:
                    rhh = NONE
                elif hd[x] < 0:
                    rhh = ROOT
                else:
                    rhh = R[hd[x]]
                mgr = _c(_c(tags[_GP], rhh), mr)
                # up path
                up = _c(tags[_UPSEQ], R[w])
                y = hd[w]
                steps = 1
                while steps < 4:
                    if y < 0:
                        up = _c(up, ROOT)
                        break
                    up = _c(up, R[y])
                    y = hd[y]
                    steps += 1
                t = node_tmpl[g0 + w]
                t[0] = tags[0]
                t[1] = _c(tags[1], W)
                t[2] = _c(tags[2], P)
                t[3] = _c(_c(tags[3], W), P)
                t[4] = _c(tags[4], R[w])
                t[5] = _c(_c(tags[5], W), R[w])
                t[6] = _c(_c(tags[6], P), R[w])
                t[7] = _c(_c(_c(tags[7], W), P), R[w])
                t[8] = _c(tags[8], up)
                t[9] = _c(_c(tags[9], W), up)
                t[10] = _c(tags[10], DOWN[w])
                t[11] = _c(_c(tags[11], W), DOWN[w])
                t[12] = _c(tags[12], HR[w])
                t[13] = _c(_c(tags[13], W), HR[w])
                t[14] = _c(tags[14], mr)
                t[15] = _c(_c(tags[15], W), mr)
                t[16] = _c(tags[16], HGR[w])
                t[17] = _c(_c(tags[17], W), HGR[w])
                t[18] = _c(tags[18], mgr)
                t[19] = _c(_c(tags[19], W), mgr)
                # value set
                g = g0 + w
                if rel_domain:
                    vs_ncls[g] = 1
                    vs_nsub[g] = rel_nsub
                    vs_cls[g, 0] = _c(tags[_VREL], R[w])
                    for q in range(1, maxc):
                        vs_cls[g, q] = 0
                else:
                    vs_ncls[g] = word_ncls[w0 + w]
                    vs_nsub[g] = word_nsub[w0 + w]
                    for q in range(maxc):
                        vs_cls[g, q] = word_cls[w0 + w, q]
                key = _c(_c(tags[_VSET], np.uint64(vs_nsub[g])), np.uint64(vs_ncls[g]))
                for q in range(vs_ncls[g]):
                    key = _c(key, vs_cls[g, q])
                vs_key[g] = key
                k2 = key
                for q in range(t.shape[0]):
                    k2 = _c(k2, t[q])
                node_key[g] = k2
            # the graph D(t)
            if graph == 0:
                first = -1
                for w in range(n):
                    if hd[w] >= 0:
                        par[w] = hd[w]
                    elif first < 0:
                        first = w
                        par[w] = -1
                    else:
                        par[w] = first
            else:
                for x in range(n + 1):
                    a, b = ptr[x], ptr[x + 1]
                    if x == n:
                        prev = -1
                        for q in range(a, b):
                            par[kids[q]] = prev
                            prev = kids[q]
                    else:
                        prev = x
                        for q in range(b - 1, a - 1, -1):
                            if kids[q] < x:
                                par[kids[q]] = prev
                                prev = kids[q]
                        prev = x
                        for q in range(a, b):
                            if kids[q] > x:
                                par[kids[q]] = prev
                                prev = kids[q]
            for w in range(n):
                g = g0 + w
                p = par[w]
                bp_parent[g] = p
                e = edge_tmpl[g]
                if p < 0:
                    e[:] = 0
                    edge_key[g] = 0
                    continue
                if hd[w] == p:  # head -> modifier
                    between = 0
                    coord = False
                    for q in range(ptr[p], ptr[p + 1]):
                        k = kids[q]
                        if (w < k and k < p) or (p < k and k < w):
                            between += 1
                            coord = coord or cc[k]
                    e0 = _c(_c(tags[_DEP], pos_atom[w0 + p]), R[w])
                    e0 = _c(e0, tags[_LEFT] if w < p else tags[_RIGHT])
                    e0 = _c(e0, tags[_ADJ] if between == 0 else tags[_NADJ])
                    e[0] = _c(e0, tags[_CC] if coord else tags[_NCC])
                    x = p
                else:  # adjacent siblings under the head x
                    x = hd[w] if hd[w] >= 0 else n
                    e0 = _c(_c(tags[_SIB], pos_atom[w0 + x] if x < n else ROOT), R[p])
                    e0 = _c(_c(e0, R[w]), tags[_LEFT] if (x < n and w < x) else tags[_RIGHT])
                    e0 = _c(e0, tags[_ADJ] if abs(p - w) == 1 else tags[_NADJ])
                    e[0] = _c(e0, tags[_CC] if (cc[p] or cc[w]) else tags[_NCC])
                e[1] = _c(tags[_ERULE], HR[x])
                e[2] = _c(tags[_EGRULE], HGR[x])
                edge_key[g] = _c(_c(_c(_c(_c(e[0], e[1]), e[2]), vs_key[g0 + p]), vs_key[g]),
                                 tags[_DEP])


@njit(cache=True)
def _value_table(ncls, nsub, cls, kmax):  # pragma: no cover - numba
    V = ncls.shape[0]
    dom = np.empty(V, np.int64)
    vals = np.zeros((V, kmax), np.uint64)
    for v in range(V):
        d = 0
        for q in range(ncls[v]):
            for k in range(nsub[v]):
                vals[v, d] = combine(cls[v, q], np.uint64(k))
                d += 1
        dom[v] = d
    return dom, vals


@dataclass
class RerankStorage:
    """The featurised k-best lists of a file (see the module docstring).

    Per sentence s: candidates ``sent_cand_ptr[s]:sent_cand_ptr[s+1]``, node rows
    ``row_ptr[s]:row_ptr[s+1]``, edge rows ``erow_ptr[s]:erow_ptr[s+1]``, domain size
    bound ``sent_K[s]``.  Per candidate c: nodes ``cand_node_ptr[c]:cand_node_ptr[c+1]`` (one
    per word) and the base-score feature ``base_val[c]``.  Per node g: its node row, its edge
    row (-1 at the root of D(t)) and its parent in D(t) (local word index, -1 at the root).
    Node rows hold 20 template hashes and a value set; edge rows 3 template hashes and the
    value sets of the parent and the child; value sets their domain size and value ids.

    ``numbers`` (an attribute, not a field nor a kernel argument) is None, or the
    per-candidate numbers of lists given with them: a float64 CSR matrix with one row per
    candidate c (``numbers_row`` the row of each stored entry), added to the candidates'
    scores by the task.
    """

    sent_cand_ptr: np.ndarray
    cand_node_ptr: np.ndarray
    base_val: np.ndarray
    node_row: np.ndarray
    edge_row: np.ndarray
    bp_parent: np.ndarray
    row_ptr: np.ndarray
    erow_ptr: np.ndarray
    sent_K: np.ndarray
    nrow_tmpl: np.ndarray
    nrow_vs: np.ndarray
    erow_tmpl: np.ndarray
    erow_vsp: np.ndarray
    erow_vsc: np.ndarray
    vs_dom: np.ndarray
    vs_vals: np.ndarray
    # not fields (no annotation): the kernels take the fields, in order, and nothing else
    numbers = None
    numbers_row = None

    @property
    def n_sentences(self) -> int:
        return int(self.sent_cand_ptr.shape[0] - 1)

    def __post_init__(self):
        self._args = tuple(getattr(self, f.name) for f in fields(self))

    def kernel_args(self) -> tuple:
        """The arrays in the order the scoring kernels take them."""
        return self._args


def _dedup(sent_of: np.ndarray, keys: np.ndarray):
    """Unique (sentence, key) pairs, ordered by sentence: (inverse, representatives, sentence
    of each unique pair)."""
    order = np.lexsort((keys, sent_of))
    s_sorted, k_sorted = sent_of[order], keys[order]
    new = np.ones(order.shape[0], dtype=bool)
    new[1:] = (s_sorted[1:] != s_sorted[:-1]) | (k_sorted[1:] != k_sorted[:-1])
    uid = np.cumsum(new) - 1
    inverse = np.empty_like(uid)
    inverse[order] = uid
    return inverse, order[new], s_sorted[new]


def build_storage(chunk_outputs, kmax: int) -> RerankStorage:
    """Deduplicate the per-node outputs of :func:`featurize_chunk` (an iterable of one dict
    per chunk, with the chunk's pointer arrays; a generator keeps one chunk in memory at a
    time) and join the chunks into one :class:`RerankStorage`."""
    parts: dict[str, list] = {f.name: [] for f in fields(RerankStorage)}
    n_sent = n_cand = n_node = n_row = n_erow = n_vs = 0
    for ch in chunk_outputs:
        S = ch["sent_cand_ptr"].shape[0] - 1
        cand_sent = np.repeat(np.arange(S), np.diff(ch["sent_cand_ptr"]))
        node_sent = np.repeat(cand_sent, np.diff(ch["cand_node_ptr"]))
        node_cand = np.repeat(np.arange(cand_sent.shape[0]), np.diff(ch["cand_node_ptr"]))
        vs_inv, vs_rep, _ = _dedup(node_sent, ch["vs_key"])
        row_inv, row_rep, row_sent = _dedup(node_sent, ch["node_key"])
        has_edge = ch["bp_parent"] >= 0
        enodes = np.flatnonzero(has_edge)
        e_inv, e_rep, e_sent = _dedup(node_sent[enodes], ch["edge_key"][enodes])
        edge_row = np.full(node_sent.shape[0], -1, np.int64)
        edge_row[enodes] = e_inv + n_erow
        parent_global = ch["cand_node_ptr"][node_cand] + ch["bp_parent"]
        dom, vals = _value_table(ch["vs_ncls"][vs_rep], ch["vs_nsub"][vs_rep],
                                 ch["vs_cls"][vs_rep], kmax)
        row_dom = dom[vs_inv[row_rep]]
        sent_K = np.ones(S, np.int64)
        np.maximum.at(sent_K, row_sent, row_dom)
        parts["sent_cand_ptr"].append(ch["sent_cand_ptr"][1:] + n_cand)
        parts["cand_node_ptr"].append(ch["cand_node_ptr"][1:] + n_node)
        parts["base_val"].append(ch["base_val"])
        parts["node_row"].append(row_inv + n_row)
        parts["edge_row"].append(edge_row)
        parts["bp_parent"].append(ch["bp_parent"])
        parts["row_ptr"].append(np.searchsorted(row_sent, np.arange(1, S + 1)) + n_row)
        parts["erow_ptr"].append(np.searchsorted(e_sent, np.arange(1, S + 1)) + n_erow)
        parts["sent_K"].append(sent_K)
        parts["nrow_tmpl"].append(ch["node_tmpl"][row_rep])
        parts["nrow_vs"].append(vs_inv[row_rep] + n_vs)
        parts["erow_tmpl"].append(ch["edge_tmpl"][enodes[e_rep]])
        parts["erow_vsp"].append(vs_inv[parent_global[enodes[e_rep]]] + n_vs)
        parts["erow_vsc"].append(vs_inv[enodes[e_rep]] + n_vs)
        parts["vs_dom"].append(dom)
        parts["vs_vals"].append(vals)
        n_sent += S
        n_cand += cand_sent.shape[0]
        n_node += node_sent.shape[0]
        n_row += row_rep.shape[0]
        n_erow += e_rep.shape[0]
        n_vs += vs_rep.shape[0]
    zero = np.zeros(1, np.int64)
    out = {}
    for name, arrs in parts.items():
        if name in ("sent_cand_ptr", "cand_node_ptr", "row_ptr", "erow_ptr"):
            out[name] = np.concatenate([zero, *arrs]).astype(np.int64)
        elif not arrs:
            out[name] = _empty(name, kmax)
        else:
            out[name] = np.ascontiguousarray(np.concatenate(arrs))
    return RerankStorage(**out)


def _empty(name: str, kmax: int) -> np.ndarray:
    if name in ("nrow_tmpl",):
        return np.zeros((0, N_NODE_TEMPLATES), np.uint64)
    if name == "erow_tmpl":
        return np.zeros((0, N_EDGE_TEMPLATES), np.uint64)
    if name == "vs_vals":
        return np.zeros((0, kmax), np.uint64)
    if name == "base_val":
        return np.zeros(0, np.float64)
    return np.zeros(0, np.int64)
