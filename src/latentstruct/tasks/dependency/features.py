"""First-order arc and label features of the dependency task, as numba kernels.

Sentences come as per-position codes (:mod:`latentstruct.tasks.dependency.corpus`;
position 0 is ROOT).  A feature is a conjunction of a template id and some codes, hashed in
numba (FNV-style multiply-xor, then MurmurHash3's 64-bit finaliser) into
``[0, 2**hash_bits)``.  Nothing is hashed in Python per arc.

Arc templates for h -> m (McDonald, Crammer & Pereira 2005, Table 1), with w/x/p the word,
prefix-5 and POS and p-1/p+1 the neighbours' POS (``<S>``/``</S>`` beyond the sentence)::

    unigram     hw.hp  hw  hp  mw.mp  mw  mp   and the same with prefixes hx / mx
    bigram      hw.hp.mw.mp  hp.mw.mp  hw.mw.mp  hw.hp.mp  hw.hp.mw  hw.mw  hp.mp
                and the six word templates again with prefixes
    surrounding hp.hp+1.mp-1.mp  hp-1.hp.mp-1.mp  hp.hp+1.mp.mp+1  hp-1.hp.mp.mp+1
                and their four trigram back-offs (dropping the outer neighbour)
    word+POS    hw.mp.mp-1  hw.mp.mp+1  mw.hp.hp-1  mw.hp.hp+1
    in-between  hp.bp.mp for every *distinct* POS bp strictly between h and m
                (deduplicated: a binary feature, not a count)
    bias        the empty template

Every template fires twice: alone and conjoined with the direction (h < m or h > m) and
the binned distance |h - m| (``distance_bins``: bin i holds distances from bins[i] up to
the next bin's start; the last bin is open).

Label templates for the label l of h -> m (hashed into ``[0, 2**label_hash_bits)``, each
context owning a row of L weights, one per label), with dir the arc's direction::

    both ends   hp.mp.dir  hp.mp
    head        hw  hp  hw.hp  hw.dir  hp.dir
    modifier    mw  mp  mw.mp  mx  mp-1.mp.mp+1  mw.dir  mp.dir

One-ended contexts are summed once per position and direction, so an arc costs only the
two rows of its both-ends contexts.

The same function produces the features for scoring all arcs and for Phi(x, y), so the
decoded score always equals w . Phi.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...data.features import HashingIndex

__all__ = [
    "score_batch",
    "phi_difference",
    "is_projective",
    "tree_label_score",
    "tree_ids_in_range",
    "one_ended_tables",
    "START_CODE",
    "END_CODE",
]

_P = np.int64(0x100000001B3)
_M1 = np.int64(0xFF51AFD7ED558CCD - (1 << 64))
_M2 = np.int64(0xC4CEB9FE1A85EC53 - (1 << 64))
_SEED = np.int64(0x9E3779B97F4A7C15 - (1 << 64))
# codes of the positions outside the sentence (left of ROOT, right of the last word)
START_CODE = _START = np.int64(HashingIndex(32).lookup("b\x1f<S>"))
END_CODE = _END = np.int64(HashingIndex(32).lookup("b\x1f</S>"))
#: n_templates emitted per arc besides the in-between ones (each emits two features)
N_ARC_TEMPLATES = 36
N_LABEL_CONTEXTS = 14
_SETSIZE = 256  # open-addressing set of in-between POS codes (> any tag set)


# --------------------------------------------------------------------------------------
# hashing
# --------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _lsr(x, k):
    return (x >> k) & ((np.int64(1) << (64 - k)) - 1)


@njit(cache=True, nogil=True, inline="always")
def _fmix(x):
    x ^= _lsr(x, 33)
    x *= _M1
    x ^= _lsr(x, 33)
    x *= _M2
    x ^= _lsr(x, 33)
    return x


@njit(cache=True, nogil=True, inline="always")
def _c(state, v):
    return (state ^ v) * _P


@njit(cache=True, nogil=True, inline="always")
def _t(template):
    return (np.int64(template) + _SEED) * _P


@njit(cache=True, nogil=True, inline="always")
def _put(out, k, state, dd, mask):
    out[k] = _fmix(state) & mask
    out[k + 1] = _fmix(_c(state, dd)) & mask
    return k + 2


@njit(cache=True, nogil=True)
def _dirdist(h, m, bins):
    d = m - h if m > h else h - m
    b = 0
    for i in range(1, bins.shape[0]):
        if d >= bins[i]:
            b = i
    return np.int64(1 + b + (64 if h < m else 0))


@njit(cache=True, nogil=True, inline="always")
def _head_states(word, pre, pos, t0, h):
    """States of the templates that see the head only: hw.hp hw hp hx.hp hx."""
    hw, hx, hp = word[t0 + h], pre[t0 + h], pos[t0 + h]
    return (_c(_c(_t(1), hw), hp), _c(_t(2), hw), _c(_t(3), hp), _c(_c(_t(7), hx), hp),
            _c(_t(8), hx))


@njit(cache=True, nogil=True, inline="always")
def _mod_states(word, pre, pos, t0, m):
    """States of the templates that see the modifier only: mw.mp mw mp mx.mp mx."""
    mw, mx, mp = word[t0 + m], pre[t0 + m], pos[t0 + m]
    return (_c(_c(_t(4), mw), mp), _c(_t(5), mw), _c(_t(6), mp), _c(_c(_t(9), mx), mp),
            _c(_t(10), mx))


@njit(cache=True, nogil=True)
def one_ended_tables(word, pre, pos, t0, n1, w, mask, n_bins, head_tab, mod_tab):
    """Score of the one-ended arc features of every position of a sentence, as a head
    (``head_tab``) and as a modifier (``mod_tab``), for each direction-distance code:
    ``tab[t, dir, b]`` holds the direction-free features plus those conjoined with
    ``dd = 1 + b + 64 * (dir == 0)`` (dir 0: the head is left of the modifier), the code
    ``_dirdist`` gives.  They depend on one end only, so an n-word sentence needs
    ``2 (n + 1) n_bins`` of these sums instead of one per arc (``(n + 1)^2``; measured on
    EWT, scoring every arc spent about a sixth of its time on them)."""
    for t in range(n1):
        hs = _head_states(word, pre, pos, t0, t)
        ms = _mod_states(word, pre, pos, t0, t)
        h_alone = 0.0
        m_alone = 0.0
        for j in range(5):
            h_alone += w[_fmix(hs[j]) & mask]
            m_alone += w[_fmix(ms[j]) & mask]
        for di in range(2):
            for b in range(n_bins):
                dd = np.int64(1 + b + (64 if di == 0 else 0))
                sh = h_alone
                sm = m_alone
                for j in range(5):
                    sh += w[_fmix(_c(hs[j], dd)) & mask]
                    sm += w[_fmix(_c(ms[j], dd)) & mask]
                head_tab[t, di, b] = sh
                mod_tab[t, di, b] = sm


@njit(cache=True, nogil=True)
def _arc_feats(word, pre, pos, t0, n1, h, m, between, nb, dd, mask, one_ended, out):
    """Write the feature ids of arc h -> m into ``out``; return how many.

    With ``one_ended`` False the features of the templates that see only the head or only
    the modifier (alone and conjoined with ``dd``) are left out: a scorer sums them once
    per position and direction-distance (``one_ended_tables``) instead of once per arc.
    """
    hw, hx, hp = word[t0 + h], pre[t0 + h], pos[t0 + h]
    mw, mx, mp = word[t0 + m], pre[t0 + m], pos[t0 + m]
    hpl = pos[t0 + h - 1] if h > 0 else _START
    hpr = pos[t0 + h + 1] if h + 1 < n1 else _END
    mpl = pos[t0 + m - 1] if m > 0 else _START
    mpr = pos[t0 + m + 1] if m + 1 < n1 else _END
    k = 0
    k = _put(out, k, _t(0), dd, mask)
    # unigrams
    hs = _head_states(word, pre, pos, t0, h)
    ms = _mod_states(word, pre, pos, t0, m)
    if one_ended:
        for j in range(5):
            out[k] = _fmix(hs[j]) & mask
            out[k + 1] = _fmix(ms[j]) & mask
            out[k + 2] = _fmix(_c(hs[j], dd)) & mask
            out[k + 3] = _fmix(_c(ms[j], dd)) & mask
            k += 4
    # bigrams
    k = _put(out, k, _c(_c(_c(_c(_t(11), hw), hp), mw), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(12), hp), mw), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(13), hw), mw), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(14), hw), hp), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(15), hw), hp), mw), dd, mask)
    k = _put(out, k, _c(_c(_t(16), hw), mw), dd, mask)
    k = _put(out, k, _c(_c(_t(17), hp), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_c(_t(18), hx), hp), mx), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(19), hp), mx), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(20), hx), mx), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(21), hx), hp), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(22), hx), hp), mx), dd, mask)
    k = _put(out, k, _c(_c(_t(23), hx), mx), dd, mask)
    # surrounding POS four-grams and their trigram back-offs
    k = _put(out, k, _c(_c(_c(_c(_t(24), hp), hpr), mpl), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_c(_t(25), hpl), hp), mpl), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_c(_t(26), hp), hpr), mp), mpr), dd, mask)
    k = _put(out, k, _c(_c(_c(_c(_t(27), hpl), hp), mp), mpr), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(28), hp), hpr), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(29), hp), mpl), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(30), hpl), hp), mp), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(31), hp), mp), mpr), dd, mask)
    # word + neighbouring POS of the other end
    k = _put(out, k, _c(_c(_c(_t(32), hw), mp), mpl), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(33), hw), mp), mpr), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(34), mw), hp), hpl), dd, mask)
    k = _put(out, k, _c(_c(_c(_t(35), mw), hp), hpr), dd, mask)
    # in between
    for i in range(nb):
        k = _put(out, k, _c(_c(_c(_t(40), hp), between[i]), mp), dd, mask)
    return k


@njit(cache=True, nogil=True)
def _label_ctx_pair(word, pos, t0, h, m, lmask, out):
    """Label contexts that see both ends: hp.mp.dir and hp.mp (``out[0:2]``)."""
    hp, mp = pos[t0 + h], pos[t0 + m]
    d = np.int64(1 if h < m else 2)
    out[0] = _fmix(_c(_c(_c(_t(101), hp), mp), d)) & lmask
    out[1] = _fmix(_c(_c(_t(102), hp), mp)) & lmask


@njit(cache=True, nogil=True)
def _label_ctx_head(word, pre, pos, t0, h, d, lmask, out):
    """Label contexts of the head alone: hw hp hw.hp (``out[2:5]``) and, with the arc's
    direction d, hw.dir hp.dir (``out[5:7]``)."""
    hw, hp = word[t0 + h], pos[t0 + h]
    out[2] = _fmix(_c(_t(103), hw)) & lmask
    out[3] = _fmix(_c(_t(104), hp)) & lmask
    out[4] = _fmix(_c(_c(_t(105), hw), hp)) & lmask
    out[5] = _fmix(_c(_c(_t(106), hw), d)) & lmask
    out[6] = _fmix(_c(_c(_t(107), hp), d)) & lmask


@njit(cache=True, nogil=True)
def _label_ctx_mod(word, pre, pos, t0, n1, m, d, lmask, out):
    """Label contexts of the modifier alone: mw mp mw.mp mx mp-1.mp.mp+1 (``out[7:12]``)
    and, with the arc's direction d, mw.dir mp.dir (``out[12:14]``)."""
    mw, mx, mp = word[t0 + m], pre[t0 + m], pos[t0 + m]
    mpl = pos[t0 + m - 1] if m > 0 else _START
    mpr = pos[t0 + m + 1] if m + 1 < n1 else _END
    out[7] = _fmix(_c(_t(108), mw)) & lmask
    out[8] = _fmix(_c(_t(109), mp)) & lmask
    out[9] = _fmix(_c(_c(_t(110), mw), mp)) & lmask
    out[10] = _fmix(_c(_t(111), mx)) & lmask
    out[11] = _fmix(_c(_c(_c(_t(112), mpl), mp), mpr)) & lmask
    out[12] = _fmix(_c(_c(_t(113), mw), d)) & lmask
    out[13] = _fmix(_c(_c(_t(114), mp), d)) & lmask


@njit(cache=True, nogil=True)
def _label_ctx(word, pre, pos, t0, n1, h, m, lmask, out):
    """The N_LABEL_CONTEXTS label contexts of arc h -> m (rows of the label block)."""
    d = np.int64(1 if h < m else 2)
    _label_ctx_pair(word, pos, t0, h, m, lmask, out)
    _label_ctx_head(word, pre, pos, t0, h, d, lmask, out)
    _label_ctx_mod(word, pre, pos, t0, n1, m, d, lmask, out)


@njit(cache=True, nogil=True)
def _add_rows(w, n_arc, n_labels, ctx, lo, hi, out):
    """out += the label rows of contexts ctx[lo:hi]."""
    for c in range(lo, hi):
        row = n_arc + ctx[c] * n_labels
        for lab in range(n_labels):
            out[lab] += w[row + lab]


@njit(cache=True, nogil=True, inline="always")
def _set_add(code, keys, stamps, cur):
    """Add ``code`` to the set stamped ``cur``; True when it was not in it yet."""
    slot = code & (_SETSIZE - 1)
    while stamps[slot] == cur:
        if keys[slot] == code:
            return False
        slot = (slot + 1) & (_SETSIZE - 1)
    stamps[slot] = cur
    keys[slot] = code
    return True


@njit(cache=True, nogil=True)
def tree_ids_in_range(heads, labels, n_words, n_labels):
    """True when every head is in ``0..n_words`` and, for ``n_labels > 0``, every label id in
    ``-1..n_labels-1``: the common case, checked in one compiled loop (the decoders call this
    for every gold and predicted tree of every pass; the readable errors come from
    ``validation.check_heads``/``check_label_ids`` when it is False)."""
    for j in range(heads.shape[0]):
        if heads[j] < 0 or heads[j] > n_words:
            return False
        if n_labels > 0 and (labels[j] < -1 or labels[j] >= n_labels):
            return False
    return True


# --------------------------------------------------------------------------------------
# scoring every arc
# --------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def score_batch(word, pre, pos, offsets, w, mask, n_arc, lmask, n_labels, bins,
                gold_h, gold_l, augment):
    """Folded arc scores of every sentence, flat: ``(S, best_label, sq_offsets)``.

    Sentence i's (n+1, n+1) matrix is ``S[sq_offsets[i]:sq_offsets[i+1]]`` row-major,
    ``S[h, m]`` = arc(h, m) + max_l label(h, m, l) (-inf on the diagonal and column 0), and
    ``best_label`` holds the maximising label (-1 when unlabelled).  With ``augment`` the
    scores are loss-augmented against ``gold_h``/``gold_l`` (flat over words): +1 on the
    arc when h is not the gold head, and +1 inside the max for every label when h is not
    the gold head or l is not the gold label.
    """
    n_sent = offsets.shape[0] - 1
    sq = np.zeros(n_sent + 1, np.int64)
    longest = 1
    for i in range(n_sent):
        n1 = offsets[i + 1] - offsets[i]
        sq[i + 1] = sq[i] + n1 * n1
        longest = max(longest, n1)
    S = np.empty(sq[n_sent])
    B = np.full(sq[n_sent], -1, np.int32)
    buf = np.empty(2 * (N_ARC_TEMPLATES + longest), np.int64)
    between = np.empty(longest, np.int64)
    keys = np.zeros(_SETSIZE, np.int64)
    stamps = np.zeros(_SETSIZE, np.int64)
    ctx = np.empty(N_LABEL_CONTEXTS, np.int64)
    L1 = max(n_labels, 1)
    lscore = np.empty(L1)
    # label scores of the contexts that see one end only, per position and direction
    # (0: the head is left of the modifier, 1: right): as head, as modifier
    head_lab = np.zeros((longest, 2, L1))
    mod_lab = np.zeros((longest, 2, L1))
    # one-ended arc features, per position, direction and distance bin: as head, as modifier
    n_bins = bins.shape[0]
    head_one = np.zeros((longest, 2, n_bins))
    mod_one = np.zeros((longest, 2, n_bins))
    cur = 0
    for i in range(n_sent):
        t0 = offsets[i]
        n1 = offsets[i + 1] - t0
        base = sq[i]
        g0 = t0 - i  # first word of sentence i in the flat gold arrays
        one_ended_tables(word, pre, pos, t0, n1, w, mask, n_bins, head_one, mod_one)
        if n_labels > 0:
            for t in range(n1):
                for di in range(2):
                    _label_ctx_head(word, pre, pos, t0, t, np.int64(di + 1), lmask, ctx)
                    _label_ctx_mod(word, pre, pos, t0, n1, t, np.int64(di + 1), lmask, ctx)
                    head_lab[t, di, :n_labels] = 0.0
                    mod_lab[t, di, :n_labels] = 0.0
                    _add_rows(w, n_arc, n_labels, ctx, 2, 7, head_lab[t, di])
                    _add_rows(w, n_arc, n_labels, ctx, 7, 14, mod_lab[t, di])
        for h in range(n1):
            S[base + h * n1] = -np.inf
            S[base + h * n1 + h] = -np.inf
            for direction in range(2):
                if direction == 0:
                    start, stop, step = h + 1, n1, 1
                else:
                    start, stop, step = h - 1, 0, -1
                cur += 1
                nb = 0
                for m in range(start, stop, step):
                    dd = _dirdist(h, m, bins)
                    k = _arc_feats(word, pre, pos, t0, n1, h, m, between, nb, dd, mask, False,
                                   buf)
                    b = dd - 1 - (64 if direction == 0 else 0)
                    s = head_one[h, direction, b] + mod_one[m, direction, b]
                    for j in range(k):
                        s += w[buf[j]]
                    wrong_head = augment and gold_h[g0 + m - 1] != h
                    if wrong_head:
                        s += 1.0
                    if n_labels > 0:
                        _label_ctx_pair(word, pos, t0, h, m, lmask, ctx)
                        r0 = n_arc + ctx[0] * n_labels
                        r1 = n_arc + ctx[1] * n_labels
                        di = 0 if h < m else 1
                        for lab in range(n_labels):
                            lscore[lab] = (head_lab[h, di, lab] + mod_lab[m, di, lab])\
                                + (w[r0 + lab] + w[r1 + lab])
                        gl = gold_l[g0 + m - 1] if augment else -2
                        best = -np.inf
                        bl = 0
                        for lab in range(n_labels):
                            v = lscore[lab]
                            if augment and (wrong_head or lab != gl):
                                v += 1.0
                            if v > best:
                                best = v
                                bl = lab
                        s += best
                        B[base + h * n1 + m] = bl
                    S[base + h * n1 + m] = s
                    if _set_add(pos[t0 + m], keys, stamps, cur):
                        between[nb] = pos[t0 + m]
                        nb += 1
    return S, B, sq


# --------------------------------------------------------------------------------------
# Phi
# --------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _emit_part(word, pre, pos, t0, n1, h, m, lab, sign, with_arc, mask, n_arc, lmask,
               n_labels, bins, buf, between, keys, stamps, cur, ctx, idx, val, k):
    if with_arc:
        lo, hi = (h, m) if h < m else (m, h)
        nb = 0
        for t in range(lo + 1, hi):
            if _set_add(pos[t0 + t], keys, stamps, cur):
                between[nb] = pos[t0 + t]
                nb += 1
        c = _arc_feats(word, pre, pos, t0, n1, h, m, between, nb, _dirdist(h, m, bins),
                       mask, True, buf)
        for j in range(c):
            idx[k] = buf[j]
            val[k] = sign
            k += 1
    if n_labels > 0 and lab >= 0:
        _label_ctx(word, pre, pos, t0, n1, h, m, lmask, ctx)
        for c in range(N_LABEL_CONTEXTS):
            idx[k] = n_arc + ctx[c] * n_labels + lab
            val[k] = sign
            k += 1
    return k


@njit(cache=True, nogil=True)
def phi_difference(word, pre, pos, t0, n1, ha, la, hb, lb, mask, n_arc, lmask, n_labels,
                   bins):
    """Phi(y_a) - Phi(y_b) of one sentence as coalesced ``(indices, values)`` (unique
    indices, not sorted).

    ``ha``/``la`` (heads, label ids) of y_a; ``hb``/``lb`` of y_b, or heads of -1 for "no
    structure" (then the result is Phi(y_a)).  Words whose head and label agree cancel and
    are skipped; a word whose head agrees but label differs contributes label features only.
    """
    n = n1 - 1
    size = 2 * n * (2 * (N_ARC_TEMPLATES + n1) + N_LABEL_CONTEXTS) + 1
    idx = np.empty(size, np.int64)
    val = np.empty(size, np.float64)
    buf = np.empty(2 * (N_ARC_TEMPLATES + n1), np.int64)
    between = np.empty(n1, np.int64)
    keys = np.zeros(_SETSIZE, np.int64)
    stamps = np.zeros(_SETSIZE, np.int64)
    ctx = np.empty(N_LABEL_CONTEXTS, np.int64)
    k = 0
    cur = 0
    for m in range(1, n1):
        a_h, a_l, b_h, b_l = ha[m - 1], la[m - 1], hb[m - 1], lb[m - 1]
        if a_h == b_h and a_l == b_l:
            continue
        same_head = a_h == b_h
        if a_h >= 0:
            cur += 1
            k = _emit_part(word, pre, pos, t0, n1, a_h, m, a_l, 1.0, not same_head, mask,
                           n_arc, lmask, n_labels, bins, buf, between, keys, stamps, cur, ctx,
                           idx, val, k)
        if b_h >= 0:
            cur += 1
            k = _emit_part(word, pre, pos, t0, n1, b_h, m, b_l, -1.0, not same_head, mask,
                           n_arc, lmask, n_labels, bins, buf, between, keys, stamps, cur, ctx,
                           idx, val, k)
    return _coalesce(idx[:k], val[:k])


@njit(cache=True, nogil=True)
def _coalesce(idx, val):
    """Unique indices (in first-seen order) with their summed values, zero sums dropped.

    An open-addressing table, O(len(idx)): sorting would cost more than building Phi.
    """
    n = idx.shape[0]
    size = 16
    while size < 2 * n:
        size *= 2
    slots = np.full(size, -1, np.int64)  # position in the output of the index held
    out_i = np.empty(n, np.int64)
    out_v = np.empty(n, np.float64)
    k = 0
    for j in range(n):
        key = idx[j]
        slot = _fmix(key) & (size - 1)
        while slots[slot] >= 0 and out_i[slots[slot]] != key:
            slot = (slot + 1) & (size - 1)
        if slots[slot] < 0:
            slots[slot] = k
            out_i[k] = key
            out_v[k] = val[j]
            k += 1
        else:
            out_v[slots[slot]] += val[j]
    kept = 0
    for j in range(k):
        if out_v[j] != 0.0:
            out_i[kept] = out_i[j]
            out_v[kept] = out_v[j]
            kept += 1
    return out_i[:kept], out_v[:kept]


@njit(cache=True, nogil=True)
def tree_label_score(S, B, heads):
    """Sum of ``S[heads[m-1], m]`` over the words, and the labels ``B`` picks on those arcs."""
    n = heads.shape[0]
    n1 = n + 1
    total = 0.0
    labels = np.empty(n, np.int64)
    for m in range(1, n1):
        h = heads[m - 1]
        total += S[h * n1 + m]
        labels[m - 1] = B[h * n1 + m]
    return total, labels


@njit(cache=True, nogil=True)
def is_projective(heads):
    """Whether the tree ``heads`` (1-based, 0 = root) has no crossing arcs (ROOT included)."""
    n = heads.shape[0]
    for a in range(1, n + 1):
        h1 = heads[a - 1]
        lo1, hi1 = (h1, a) if h1 < a else (a, h1)
        for b in range(a + 1, n + 1):
            h2 = heads[b - 1]
            lo2, hi2 = (h2, b) if h2 < b else (b, h2)
            if lo1 < lo2 < hi1 < hi2 or lo2 < lo1 < hi2 < hi1:
                return False
    return True
