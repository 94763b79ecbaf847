"""Transliteration discovery (LCLR §5.1): is a target-script word a transliteration of an
English word?

An example ``x`` is a word pair (source, target); its label is +1 for a transliteration
and -1 for a random pairing.  The hidden structure ``h`` is a character alignment, an int64
array ``a`` of the source's length with ``a[i] = j`` (source character i aligned to target
character j) or ``-1`` (unaligned).  Alignments are one-to-one and non-crossing (Chang et
al. 2009), so the best one is found exactly by the monotone alignment DP
(:func:`~latentstruct.inference.monotone_alignment`) on per-cell scores.

Features (LCLR §5.1: unigram and bigram character mappings).  Characters are ids of
alphabets fitted on the training words; id 0 is shared by characters never seen in
training and by the word boundary.  For an aligned cell (i, j), with ``s`` the source ids,
``t`` the target ids and ``s[-1] = s[m] = t[-1] = t[n] = 0``:

* ``U[s_i, t_j]``                          unigram mapping;
* ``BP[s_{i-1}, s_i, t_{j-1}, t_j]``        bigram mapping with the previous characters;
* ``BN[s_i, s_{i+1}, t_j, t_{j+1}]``        bigram mapping with the next characters;

and one bias feature that every structure has, so f(x) = max_h w . Phi(x, h) can be
negative.  With ``A`` and ``B`` the source and target alphabet sizes (including id 0) the
weight vector is laid out as dense blocks (row-major)::

    [ bias (1) | U (A x B) | BP (A x A x B x B) | BN (A x A x B x B) ]

``w[1]`` is the weight of one aligned cell (a feature every aligned pair fires, so the
model learns how much an alignment edge is worth by itself); ``U[s, t]`` is
``w[2 + s*B + t]``; ``BP[a, b, c, d]`` is ``w[2 + A*B + ((a*A + b)*B + c)*B + d]``; BN follows BP.  With ``bigrams=False`` the two
bigram blocks are absent.  The cell score is ``U + BP + BN`` of the cell, and
``w . Phi(x, a) = w[0] + sum of the aligned cells' scores``.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Sequence

import numpy as np
from numba import njit

from ..data.atomic import atomic_write
from ..data.sparse import SparseVector, coalesce_arrays
from ..data.readers import excerpt
from ..data.translit import check_language, check_word_length, cldr_pairs, read_translit_tsv
from ..exceptions import ConfigError, InputError, ModelFormatError
from ..inference.alignment import monotone_alignment
from ..inference.result import EXACT, DecodeResult
from .base import Dataset, LatentBinaryTask, register_task
from .contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY, RANDOM_TIES
from .raw_pairs import binary_predictions, translit_dataset

__all__ = [
    "TransliterationTask",
    "CldrRecords",
    "TranslitCorpus",
    "concat_translit",
    "ranking_metrics",
    "sample_negatives",
]

_SPLITS = ("train", "test")
#: refuse to build more negative pairs than this in ``read`` (memory)
MAX_NEGATIVES = 10_000_000


# --------------------------------------------------------------------------------------
# featurised word pairs
# --------------------------------------------------------------------------------------
def _gather(chars: np.ndarray, offsets: np.ndarray, idx: np.ndarray):
    """Concatenate the segments ``chars[offsets[k]:offsets[k+1]]`` for k in idx."""
    starts = offsets[idx]
    lengths = offsets[idx + 1] - starts
    new_off = np.zeros(idx.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=new_off[1:])
    total = int(new_off[-1])
    pos = np.repeat(starts - new_off[:-1], lengths) + np.arange(total, dtype=np.int64)
    return chars[pos], new_off


class TranslitCorpus(Sequence):
    """Featurised word pairs: pools of encoded words plus (source, target) index pairs.

    ``src_chars[src_offsets[p]:src_offsets[p+1]]`` are the character ids of source word p
    (likewise ``tgt_*`` for target words); pair k is (source word ``pair_src[k]``, target
    word ``pair_tgt[k]``).  Sharing the pools makes the n x n cross pairs of a ranking
    evaluation cost only two index arrays.  ``sources``/``targets`` keep the pool words as
    strings (for explanations and pictures).  Indexing returns a one-pair view, slicing and
    :meth:`subset` return views that share the pools.
    """

    def __init__(self, src_chars, src_offsets, tgt_chars, tgt_offsets, pair_src, pair_tgt,
                 sources=None, targets=None):
        self.src_chars = np.ascontiguousarray(src_chars, dtype=np.int64)
        self.src_offsets = np.ascontiguousarray(src_offsets, dtype=np.int64)
        self.tgt_chars = np.ascontiguousarray(tgt_chars, dtype=np.int64)
        self.tgt_offsets = np.ascontiguousarray(tgt_offsets, dtype=np.int64)
        self.pair_src = np.ascontiguousarray(pair_src, dtype=np.int64)
        self.pair_tgt = np.ascontiguousarray(pair_tgt, dtype=np.int64)
        if self.pair_src.shape != self.pair_tgt.shape or self.pair_src.ndim != 1:
            raise InputError(
                f"pair_src and pair_tgt must be 1-d arrays of equal length, got shapes "
                f"{self.pair_src.shape} and {self.pair_tgt.shape}"
            )
        self.sources = None if sources is None else tuple(sources)
        self.targets = None if targets is None else tuple(targets)

    @classmethod
    def from_ids(cls, pairs, sources=None, targets=None) -> "TranslitCorpus":
        """A corpus of ``[(source_ids, target_ids), ...]`` (one pool entry per pair)."""
        pairs = list(pairs)
        s = [np.asarray(a, dtype=np.int64).ravel() for a, _ in pairs]
        t = [np.asarray(b, dtype=np.int64).ravel() for _, b in pairs]

        def pool(words):
            off = np.zeros(len(words) + 1, np.int64)
            np.cumsum([w.shape[0] for w in words], out=off[1:])
            chars = np.concatenate(words) if words else np.zeros(0, np.int64)
            return chars, off

        sc, so = pool(s)
        tc, to = pool(t)
        k = np.arange(len(pairs), dtype=np.int64)
        return cls(sc, so, tc, to, k, k, sources, targets)

    def __len__(self) -> int:
        return int(self.pair_src.shape[0])

    @property
    def n_source_words(self) -> int:
        return int(self.src_offsets.shape[0] - 1)

    @property
    def n_target_words(self) -> int:
        return int(self.tgt_offsets.shape[0] - 1)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.subset(np.arange(len(self))[i])
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (numbers.Integral, np.integer)):
            raise TypeError(f"pair index must be an integer or a slice, got {type(i).__name__}")
        n = len(self)
        k = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= k < n:
            raise IndexError(f"pair index {i} out of range for {n} pairs")
        return self.subset(np.array([k], dtype=np.int64))

    def subset(self, indices) -> "TranslitCorpus":
        """The pairs ``indices`` (a view sharing the word pools)."""
        idx = np.asarray(indices, dtype=np.int64).ravel()
        return TranslitCorpus(self.src_chars, self.src_offsets, self.tgt_chars, self.tgt_offsets,
                              self.pair_src[idx], self.pair_tgt[idx], self.sources, self.targets)

    def source_ids(self, k: int) -> np.ndarray:
        p = self.pair_src[k]
        return self.src_chars[self.src_offsets[p]:self.src_offsets[p + 1]]

    def target_ids(self, k: int) -> np.ndarray:
        p = self.pair_tgt[k]
        return self.tgt_chars[self.tgt_offsets[p]:self.tgt_offsets[p + 1]]

    def source(self, k: int) -> str | None:
        return None if self.sources is None else self.sources[self.pair_src[k]]

    def target(self, k: int) -> str | None:
        return None if self.targets is None else self.targets[self.pair_tgt[k]]

    def compact(self) -> "TranslitCorpus":
        """A copy whose pools hold only the words its pairs use."""
        us, inv_s = np.unique(self.pair_src, return_inverse=True)
        ut, inv_t = np.unique(self.pair_tgt, return_inverse=True)
        sc, so = _gather(self.src_chars, self.src_offsets, us)
        tc, to = _gather(self.tgt_chars, self.tgt_offsets, ut)
        sources = None if self.sources is None else [self.sources[p] for p in us]
        targets = None if self.targets is None else [self.targets[p] for p in ut]
        return TranslitCorpus(sc, so, tc, to, inv_s.ravel(), inv_t.ravel(), sources, targets)


def concat_translit(parts) -> TranslitCorpus:
    """One corpus holding the pairs of ``parts`` in order (pools are merged when they differ)."""
    parts = list(parts)
    for p in parts:
        if not isinstance(p, TranslitCorpus):
            raise InputError(
                f"expected featurised pairs (TranslitCorpus, from featurize or encode_pair), "
                f"got {type(p).__name__}"
            )
    if not parts:
        z = np.zeros(0, np.int64)
        return TranslitCorpus(z, np.zeros(1, np.int64), z, np.zeros(1, np.int64), z, z, (), ())
    first = parts[0]
    if all(p.src_chars is first.src_chars and p.tgt_chars is first.tgt_chars
           and p.src_offsets is first.src_offsets and p.tgt_offsets is first.tgt_offsets
           for p in parts):
        if len(parts) == 1:
            return first
        return TranslitCorpus(first.src_chars, first.src_offsets, first.tgt_chars,
                              first.tgt_offsets, np.concatenate([p.pair_src for p in parts]),
                              np.concatenate([p.pair_tgt for p in parts]), first.sources,
                              first.targets)
    parts = [p.compact() for p in parts]
    keep_strings = all(p.sources is not None and p.targets is not None for p in parts)
    s_base = t_base = 0
    sc, so, tc, to, ps, pt = [], [np.zeros(1, np.int64)], [], [np.zeros(1, np.int64)], [], []
    sources, targets = [], []
    for p in parts:
        sc.append(p.src_chars)
        tc.append(p.tgt_chars)
        so.append(p.src_offsets[1:] + so[-1][-1])
        to.append(p.tgt_offsets[1:] + to[-1][-1])
        ps.append(p.pair_src + s_base)
        pt.append(p.pair_tgt + t_base)
        s_base += p.n_source_words
        t_base += p.n_target_words
        if keep_strings:
            sources.extend(p.sources)
            targets.extend(p.targets)
    return TranslitCorpus(np.concatenate(sc), np.concatenate(so), np.concatenate(tc),
                          np.concatenate(to), np.concatenate(ps), np.concatenate(pt),
                          sources if keep_strings else None, targets if keep_strings else None)


# --------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _cell_score(s, t, i, j, w, A, B, bigrams):  # pragma: no cover - numba
    m = s.shape[0]
    n = t.shape[0]
    si = s[i]
    tj = t[j]
    v = w[1] + w[2 + si * B + tj]
    if bigrams:
        sp = s[i - 1] if i > 0 else 0
        sn = s[i + 1] if i + 1 < m else 0
        tp = t[j - 1] if j > 0 else 0
        tn = t[j + 1] if j + 1 < n else 0
        base = 2 + A * B
        v += w[base + ((sp * A + si) * B + tp) * B + tj]
        v += w[base + A * A * B * B + ((si * A + sn) * B + tj) * B + tn]
    return v


@njit(cache=True, nogil=True)
def _cell_scores_kernel(s, t, w, A, B, bigrams):  # pragma: no cover - numba
    m = s.shape[0]
    n = t.shape[0]
    out = np.empty((m, n))
    for i in range(m):
        for j in range(n):
            out[i, j] = _cell_score(s, t, i, j, w, A, B, bigrams)
    return out


@njit(cache=True, nogil=True)
def _max_len(offsets, which):  # pragma: no cover - numba
    best = 0
    for k in range(which.shape[0]):
        p = which[k]
        d = offsets[p + 1] - offsets[p]
        if d > best:
            best = d
    return best


@njit(cache=True, nogil=True)
def _decision_kernel(src_chars, src_off, tgt_chars, tgt_off, pair_src, pair_tgt,
                     w, A, B, bigrams):  # pragma: no cover - numba
    """f(x) = w[0] + best monotone alignment score, for every pair.

    D[i, j] (best alignment of the first i sources and j targets) =
    max(D[i-1, j], D[i, j-1], D[i-1, j-1] + cell(i-1, j-1)); two rolling rows.
    """
    P = pair_src.shape[0]
    out = np.empty(P)
    nmax = _max_len(tgt_off, pair_tgt)
    prev = np.zeros(nmax + 1)
    cur = np.zeros(nmax + 1)
    for k in range(P):
        ps = pair_src[k]
        pt = pair_tgt[k]
        s = src_chars[src_off[ps]:src_off[ps + 1]]
        t = tgt_chars[tgt_off[pt]:tgt_off[pt + 1]]
        m = s.shape[0]
        n = t.shape[0]
        for j in range(n + 1):
            prev[j] = 0.0
        for i in range(m):
            cur[0] = 0.0
            for j in range(n):
                best = prev[j] + _cell_score(s, t, i, j, w, A, B, bigrams)
                if prev[j + 1] > best:
                    best = prev[j + 1]
                if cur[j] > best:
                    best = cur[j]
                cur[j + 1] = best
            prev, cur = cur, prev
        out[k] = w[0] + prev[n]
    return out


@njit(cache=True, nogil=True)
def _argmax_kernel(src_chars, src_off, tgt_chars, tgt_off, pair_src, pair_tgt,
                   w, A, B, bigrams, out_offsets, out_align, out_score):  # pragma: no cover
    """Best alignment of every pair (deterministic ties: leave a source unaligned first).

    ``out_align[out_offsets[k]:out_offsets[k+1]]`` receives pair k's alignment and
    ``out_score[k]`` w[0] plus its aligned cells' scores, summed in source order.
    """
    P = pair_src.shape[0]
    mmax = _max_len(src_off, pair_src)
    nmax = _max_len(tgt_off, pair_tgt)
    D = np.zeros((mmax + 1, nmax + 1))
    C = np.zeros((mmax, nmax))
    for k in range(P):
        ps = pair_src[k]
        pt = pair_tgt[k]
        s = src_chars[src_off[ps]:src_off[ps + 1]]
        t = tgt_chars[tgt_off[pt]:tgt_off[pt + 1]]
        m = s.shape[0]
        n = t.shape[0]
        for j in range(n + 1):
            D[0, j] = 0.0
        for i in range(1, m + 1):
            D[i, 0] = 0.0
            for j in range(1, n + 1):
                c = _cell_score(s, t, i - 1, j - 1, w, A, B, bigrams)
                C[i - 1, j - 1] = c
                best = D[i - 1, j - 1] + c
                if D[i - 1, j] > best:
                    best = D[i - 1, j]
                if D[i, j - 1] > best:
                    best = D[i, j - 1]
                D[i, j] = best
        base = out_offsets[k]
        i = m
        j = n
        while i > 0:
            if j == 0 or D[i, j] == D[i - 1, j]:
                out_align[base + i - 1] = -1
                i -= 1
            elif D[i, j] == D[i, j - 1]:
                j -= 1
            else:
                out_align[base + i - 1] = j - 1
                i -= 1
                j -= 1
        total = w[0]
        for i in range(m):
            if out_align[base + i] >= 0:
                total += C[i, out_align[base + i]]
        out_score[k] = total


# --------------------------------------------------------------------------------------
# evaluation helpers
# --------------------------------------------------------------------------------------
def ranking_metrics(scores, same=None) -> dict:
    """MRR and accuracy of ranking candidates: row i's correct candidate is column i.

    ``scores[i, j]`` scores source i with candidate j.  Rank of source i =
    1 + #{j != i : scores[i, j] > scores[i, i]} + #{j != i : scores[i, j] == scores[i, i]}
    (ties count against the correct candidate, so they never inflate the result).  Columns
    with ``same[i, j]`` true (a candidate identical to the correct one, e.g. the same
    target word) are not competitors.  Returns ``{"mrr": mean(1/rank), "accuracy":
    fraction with rank 1}``.
    """
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] == 0:
        raise InputError(f"scores must be a non-empty square (n, n) matrix, got shape {S.shape}")
    if np.isnan(S).any():
        raise InputError("scores contain NaN; expected finite numbers (or +-inf)")
    n = S.shape[0]
    gold = np.diag(S)[:, None]
    competitor = ~np.eye(n, dtype=bool)
    if same is not None:
        same = np.asarray(same, dtype=bool)
        if same.shape != S.shape:
            raise InputError(f"same must have the shape of scores {S.shape}, got {same.shape}")
        competitor &= ~same
    ranks = 1 + np.count_nonzero((S >= gold) & competitor, axis=1)
    return {"mrr": float(np.mean(1.0 / ranks)), "accuracy": float(np.mean(ranks == 1))}


def sample_negatives(positives, n_negatives: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    """``n_negatives`` distinct wrong pairings (a source of ``positives`` with a target of
    ``positives``) that are not themselves positive pairs.

    Sources and targets are taken once each, in order of first appearance, so a word that
    appears in two positive pairs (two sources may share a target word) never yields the
    same negative twice.  Pairings are drawn uniformly without replacement and returned
    ordered by (source, target) position.  When every source and every target is distinct
    this is exactly the wrong pairings (source i, target j != i).  Raises ``ConfigError``
    when fewer wrong pairings exist than requested.
    """
    n = len(positives)
    sources = list(dict.fromkeys(s for s, _ in positives))
    targets = list(dict.fromkeys(t for _, t in positives))
    m = len(targets)
    source_id = {w: a for a, w in enumerate(sources)}
    target_id = {w: b for b, w in enumerate(targets)}
    # pairing q <-> (source a, target b): q = a * m + b; the positive pairs are excluded
    excluded = sorted({source_id[s] * m + target_id[t] for s, t in positives})
    available = len(sources) * m - len(excluded)
    if n_negatives > available:
        raise ConfigError(
            f"asked for {n_negatives} negative pairs but {n} positives give only {available} "
            f"wrong pairings; lower neg_ratio"
        )
    if n_negatives == 0:
        return []
    ranks = rng.choice(available, size=n_negatives, replace=False).astype(np.int64)
    ex = np.array(excluded, dtype=np.int64)
    q = ranks + np.searchsorted(ex - np.arange(ex.shape[0]), ranks, side="right")
    q.sort()
    return [(sources[a], targets[b]) for a, b in zip((q // m).tolist(), (q % m).tolist())]


def _is_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def _lower_char(ch: str) -> str:
    low = ch.lower()
    return low if len(low) == 1 else ch


#: the language of the default (CLDR) data written in each script
_SCRIPT_LANG = {"HEBREW": "he", "CYRILLIC": "ru", "ARABIC": "ar"}


def dominant_script(chars) -> str | None:
    """The commonest Unicode script among the letters of ``chars`` (the first word of the
    character's Unicode name: ``"CYRILLIC"``, ``"HEBREW"``, ``"LATIN"``...), None without
    letters."""
    counts: dict[str, int] = {}
    for c in chars:
        if unicodedata.category(c).startswith("L"):
            script = unicodedata.name(c, "UNKNOWN").split(" ", 1)[0]
            counts[script] = counts.get(script, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None


class CldrRecords(list):
    """The pairs of ``read(None)``: the default (CLDR) data of the task's ``lang``, which
    ``evaluate_model`` checks against the script of the training targets."""


# --------------------------------------------------------------------------------------
# the task
# --------------------------------------------------------------------------------------
@register_task
class TransliterationTask(LatentBinaryTask):
    """Transliteration discovery over latent monotone character alignments (LCLR §5.1).

    Parameters
    ----------
    lang : {"he", "ru", "ar"}, default "he"
        Target language of the default (CLDR) data.  May change at evaluation; evaluating
        on default data written in another script than the training targets (see
        :meth:`target_script`) is refused.
    n_train : int or None, default 250
        Positive training pairs.  With the CLDR data (``read(None)``) the train split is the
        first ``n_train`` pairs of a seeded permutation; with a TSV file a seeded sample of
        ``n_train`` pairs.  0 or None: all (with CLDR, all pairs not in the test split).
    n_test : int or None, default 300
        Test pairs: the last ``n_test`` of the same CLDR permutation (disjoint from the
        train split), or a seeded sample of a TSV file.  0 or None: all.
    neg_ratio : float in [0, 1], default 0.1
        Training negatives: ``round(neg_ratio * n_pos * (n_pos - 1))`` wrong pairings of a
        source with another positive's target, drawn without replacement (the paper samples
        10%).
    seed : int, default 0
        Seed of the permutation, the samples and the negatives.
    bigrams : bool, default True
        Add the two bigram-mapping blocks to the unigram mappings.

    Notes
    -----
    Characters are lowercased one by one (when that keeps one character) before lookup.

    Data in memory (:meth:`make_dataset`): ``X`` is a list of ``(source, target)`` word
    pairs (strings), ``y`` their labels (+1/-1, 1/0 or True/False; 1 = a transliteration)
    or None; ``decode_predictions`` gives +1/-1 ints::

        task = TransliterationTask()
        data = task.make_dataset([("paris", "פריז"), ("london", "לונדון"),
                                  ("paris", "לונדון")], [1, 1, -1])
    """

    name = "translit"
    has_default_data = True
    default_learner = "lclr"
    capabilities = frozenset({LATENT_BINARY, HEURISTIC, RANDOM_TIES, EXPLAINABLE})
    #: the test split's size and language (of the default data) may change at evaluation;
    #: everything else fed training
    evaluation_params = frozenset({"n_test", "lang"})

    def __init__(self, lang="he", n_train=250, n_test=300, neg_ratio=0.1, seed=0, bigrams=True):
        self.lang = lang
        self.n_train = n_train
        self.n_test = n_test
        self.neg_ratio = neg_ratio
        self.seed = seed
        self.bigrams = bigrams

    # --- parameters -----------------------------------------------------------------------
    def _validate_params(self) -> None:
        check_language(self.lang)
        for name in ("n_train", "n_test"):
            v = getattr(self, name)
            if v is not None and (not _is_int(v) or v < 0):
                raise ConfigError(f"{name} must be a non-negative integer or None (all), got {v!r}")
        r = self.neg_ratio
        if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Real) or not 0 <= r <= 1:
            raise ConfigError(f"neg_ratio must be a number in [0, 1], got {r!r}")
        if not _is_int(self.seed) or self.seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.bigrams, (bool, np.bool_)):
            raise ConfigError(f"bigrams must be True or False, got {self.bigrams!r}")

    # --- reading --------------------------------------------------------------------------
    def read(self, path, *, split: str = "train") -> Dataset:
        """Word pairs with labels +-1.

        ``path=None`` reads the CLDR pairs of ``lang`` (:func:`~latentstruct.data.translit.
        cldr_pairs`), otherwise a Wikidata TSV file.  ``split="train"`` adds the sampled
        negatives after the positives; ``split="test"`` gives positives only (evaluation
        ranks every source against every test target).  Deterministic given ``seed``.
        """
        self._validate_params()
        if split not in _SPLITS:
            raise ConfigError(f"split must be one of: {', '.join(_SPLITS)}; got {split!r}")
        if path is None:
            positives = self._cldr_split(split)
        else:
            pairs = read_translit_tsv(path)
            n = self.n_train if split == "train" else self.n_test
            if not n or n >= len(pairs):
                positives = pairs
            else:
                rng = np.random.default_rng([self.seed, _SPLITS.index(split)])
                idx = np.sort(rng.choice(len(pairs), size=n, replace=False))
                positives = [pairs[i] for i in idx.tolist()]
        records = list(positives) if path is not None else CldrRecords(positives)
        if split == "train":
            n = len(positives)
            k = round(self.neg_ratio * n * (n - 1))
            if k > MAX_NEGATIVES:
                raise ConfigError(
                    f"neg_ratio={self.neg_ratio} with {n} positive pairs asks for {k} negatives, "
                    f"more than {MAX_NEGATIVES}; lower n_train or neg_ratio"
                )
            rng = np.random.default_rng([self.seed, 2])
            records += sample_negatives(positives, k, rng)
        targets = np.ones(len(records), dtype=np.int64)
        targets[len(positives):] = -1
        return Dataset(records, targets, None if path is None else str(path))

    def make_dataset(self, X, y=None) -> Dataset:
        """Word pairs from memory: the in-memory twin of :meth:`read`.

        ``X``: a list of ``(source, target)`` pairs of strings, one name per side (no white
        space inside a word: split multi-word names into one pair per word); ``y``: one
        binary label per pair (+1/-1, 1/0 or True/False, 1 = a transliteration), or None
        for pairs to predict.  Each word goes through the TSV reader's check
        (:func:`~latentstruct.data.translit.clean_word`: direction marks removed, the source
        lowercased, at most ``MAX_WORD_CHARS`` characters), so the records equal those
        ``read`` gives for a file of the same pairs.

        Unlike ``read``, nothing is sampled: ``n_train``, ``n_test``, ``neg_ratio`` and
        ``seed`` do not apply, and the negatives are the pairs labelled -1 (give both
        classes to train).  ``evaluate`` of the labels gives the accuracy of +-1
        predictions; ``evaluate_model`` ranks every positive pair's target among the
        positive targets (MRR), as it does for a test file.  A bad pair is an
        ``InputError`` naming ``X[i]`` (``X[i][0]`` the source, ``X[i][1]`` the target) or
        ``y[i]``.
        """
        return translit_dataset(X, y)

    def decode_predictions(self, predictions) -> list:
        """``predict``'s +-1 labels as a list of Python ints +1 / -1."""
        return binary_predictions(predictions)

    def _cldr_split(self, split: str) -> list[tuple[str, str]]:
        pairs = cldr_pairs(self.lang)
        N = len(pairs)
        n_tr, n_te = self.n_train or None, self.n_test or None
        if n_tr is None and n_te is None:
            raise ConfigError(
                "with the CLDR data n_train and n_test cannot both be 0/None: train takes the "
                "first n_train and test the last n_test pairs of one permutation"
            )
        n_tr = N - n_te if n_tr is None else int(n_tr)
        n_te = N - n_tr if n_te is None else int(n_te)
        if n_tr + n_te > N:
            raise ConfigError(
                f"CLDR gives {N} English-{self.lang} pairs, fewer than n_train + n_test = "
                f"{n_tr} + {n_te} = {n_tr + n_te}; lower n_train or n_test"
            )
        perm = np.random.default_rng(self.seed).permutation(N)
        idx = perm[:n_tr] if split == "train" else perm[N - n_te:]
        return [pairs[i] for i in idx.tolist()]

    # --- fitting ----------------------------------------------------------------------------
    @staticmethod
    def _check_records(records, where) -> None:
        for k, rec in enumerate(records):
            if (not isinstance(rec, tuple) or len(rec) != 2
                    or not isinstance(rec[0], str) or not isinstance(rec[1], str)):
                raise InputError(f"record {k} must be a (source, target) pair of strings, got {excerpt(rec)}",
                                 where)

    def fit(self, dataset: Dataset) -> "TransliterationTask":
        """Build the source and target alphabets from the training words."""
        self._validate_params()
        if len(dataset) == 0:
            raise InputError("training data contains no pairs", dataset.path)
        self._check_records(dataset.records, dataset.path)
        src = sorted({_lower_char(c) for s, _ in dataset.records for c in s})
        tgt = sorted({_lower_char(c) for _, t in dataset.records for c in t})
        self._set_alphabets(src, tgt)
        self.fitted_ = True
        return self

    def _set_alphabets(self, src, tgt) -> None:
        self.source_alphabet_ = list(src)
        self.target_alphabet_ = list(tgt)
        self._src_id = {c: k + 1 for k, c in enumerate(self.source_alphabet_)}
        self._tgt_id = {c: k + 1 for k, c in enumerate(self.target_alphabet_)}

    @property
    def n_source_chars(self) -> int:
        """A: source alphabet size including id 0 (unknown / boundary)."""
        self.check_fitted()
        return len(self.source_alphabet_) + 1

    @property
    def n_target_chars(self) -> int:
        """B: target alphabet size including id 0 (unknown / boundary)."""
        self.check_fitted()
        return len(self.target_alphabet_) + 1

    @property
    def n_features(self) -> int:
        A, B = self.n_source_chars, self.n_target_chars
        return 2 + A * B + (2 * A * A * B * B if self.bigrams else 0)

    def feature_blocks(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """``{block: (offset into w, shape)}`` for "bias", "unigram", and the bigram blocks."""
        A, B = self.n_source_chars, self.n_target_chars
        blocks = {"bias": (0, (1,)), "cell": (1, (1,)), "unigram": (2, (A, B))}
        if self.bigrams:
            blocks["bigram_prev"] = (2 + A * B, (A, A, B, B))
            blocks["bigram_next"] = (2 + A * B + A * A * B * B, (A, A, B, B))
        return blocks

    def split_weights(self, w) -> dict[str, np.ndarray]:
        """Views of ``w`` per block (see :meth:`feature_blocks`)."""
        w = self._check_w(w)
        return {name: w[off:off + math.prod(shape)].reshape(shape)
                for name, (off, shape) in self.feature_blocks().items()}

    # --- featurising ----------------------------------------------------------------------
    def _encode(self, word: str, table: dict) -> np.ndarray:
        return np.fromiter((table.get(_lower_char(c), 0) for c in word), np.int64, len(word))

    def make_pairs(self, sources, targets, pairs=None) -> TranslitCorpus:
        """Encode word lists once; pair k is (sources[pair_src[k]], targets[pair_tgt[k]]).

        ``pairs=None`` builds all ``len(sources) * len(targets)`` cross pairs, (i, j) at
        position ``i * len(targets) + j``; otherwise ``pairs = (pair_src, pair_tgt)``.
        """
        self.check_fitted()
        sources, targets = list(sources), list(targets)
        for what, words in (("source", sources), ("target", targets)):
            for w in words:
                if not isinstance(w, str):
                    raise InputError(f"{what} words must be strings, got {excerpt(w)}")
        s = [self._encode(x, self._src_id) for x in sources]
        t = [self._encode(x, self._tgt_id) for x in targets]

        def pool(words):
            off = np.zeros(len(words) + 1, np.int64)
            np.cumsum([w.shape[0] for w in words], out=off[1:])
            return (np.concatenate(words) if words else np.zeros(0, np.int64)), off

        sc, so = pool(s)
        tc, to = pool(t)
        if pairs is None:
            ps = np.repeat(np.arange(len(sources), dtype=np.int64), len(targets))
            pt = np.tile(np.arange(len(targets), dtype=np.int64), len(sources))
        else:
            ps, pt = (np.asarray(a, dtype=np.int64) for a in pairs)
        return TranslitCorpus(sc, so, tc, to, ps, pt, sources, targets)

    def featurize(self, dataset: Dataset) -> TranslitCorpus:
        """The dataset's pairs, each distinct source and target word encoded once."""
        self.check_fitted()
        self._check_records(dataset.records, dataset.path)
        src_index: dict[str, int] = {}
        tgt_index: dict[str, int] = {}
        ps = np.fromiter((src_index.setdefault(s, len(src_index)) for s, _ in dataset.records),
                         np.int64, len(dataset.records))
        pt = np.fromiter((tgt_index.setdefault(t, len(tgt_index)) for _, t in dataset.records),
                         np.int64, len(dataset.records))
        return self.make_pairs(list(src_index), list(tgt_index), (ps, pt))

    def cross_corpus(self, dataset: Dataset) -> TranslitCorpus:
        """All n x n pairs (source i, target j) of the dataset's records, (i, j) at i*n + j."""
        self._check_records(dataset.records, dataset.path)
        return self.make_pairs([s for s, _ in dataset.records], [t for _, t in dataset.records])

    def encode_pair(self, source: str, target: str) -> TranslitCorpus:
        """One raw word pair, featurised (characters unseen in training get id 0)."""
        for what, word in (("source", source), ("target", target)):
            if not isinstance(word, str) or not word:
                raise InputError(f"{what} word must be a non-empty string, got {excerpt(word)}")
            check_word_length(word, f"the {what} word")
        return self.make_pairs([source], [target])

    def encode_targets(self, targets) -> np.ndarray:
        y = np.asarray(targets)
        if y.ndim != 1 or (y.size and not np.isin(y, (-1, 1)).all()):
            raise InputError("targets must be a 1-d sequence of labels -1 or +1")
        return y.astype(np.int64)

    def subset(self, X, indices):
        return self._as_corpus(X).subset(indices)

    def as_batch(self, X) -> TranslitCorpus:
        return self._as_corpus(X)

    # --- model interface ------------------------------------------------------------------
    def _check_w(self, w) -> np.ndarray:
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise InputError(
                f"weight vector must have shape ({self.n_features},) for this task's alphabets "
                f"(A={self.n_source_chars}, B={self.n_target_chars}, bigrams={self.bigrams}), "
                f"got {w.shape}"
            )
        return w

    def _as_corpus(self, X) -> TranslitCorpus:
        if isinstance(X, TranslitCorpus):
            return X
        if isinstance(X, tuple) and len(X) == 2 and all(isinstance(v, str) for v in X):
            return self.encode_pair(*X)
        return concat_translit(list(X))

    def _pair(self, x):
        x = self._as_corpus(x)
        if len(x) != 1:
            raise InputError(f"expected one word pair, got {len(x)}; use the batch methods")
        return x, x.source_ids(0), x.target_ids(0)

    def cell_scores(self, x, w) -> np.ndarray:
        """(m, n) scores w . phi_ij of aligning source character i with target character j."""
        self.check_fitted()
        w = self._check_w(w)
        _, s, t = self._pair(x)
        return _cell_scores_kernel(s, t, w, self.n_source_chars, self.n_target_chars,
                                   bool(self.bigrams))

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        """Best alignment by :func:`monotone_alignment`; score w . Phi(x, a) (with the bias)."""
        w = self._check_w(w)
        res = monotone_alignment(self.cell_scores(x, w), random_state=random_state)
        return DecodeResult(res.structure, float(w[0] + res.score), res.status)

    def latent_feature(self, x, h) -> SparseVector:
        """Phi(x, a): the bias plus the unigram (and bigram) mappings of every aligned cell."""
        self.check_fitted()
        _, s, t = self._pair(x)
        a = self._check_alignment(h, s.shape[0], t.shape[0])
        A, B = self.n_source_chars, self.n_target_chars
        rows = np.flatnonzero(a >= 0)
        cols = a[rows]
        si, tj = s[rows], t[cols]
        parts = [np.zeros(1, np.int64), np.ones(rows.shape[0], np.int64), 2 + si * B + tj]
        if self.bigrams:
            s_pad = np.concatenate([[0], s, [0]])
            t_pad = np.concatenate([[0], t, [0]])
            sp, sn = s_pad[rows], s_pad[rows + 2]
            tp, tn = t_pad[cols], t_pad[cols + 2]
            base = 2 + A * B
            parts.append(base + ((sp * A + si) * B + tp) * B + tj)
            parts.append(base + A * A * B * B + ((si * A + sn) * B + tj) * B + tn)
        idx = np.concatenate(parts)
        return SparseVector(*coalesce_arrays(idx, np.ones(idx.shape[0])))

    @staticmethod
    def _check_alignment(h, m, n) -> np.ndarray:
        a = np.asarray(h)
        if a.shape != (m,) or (m and not np.issubdtype(a.dtype, np.integer)):
            raise InputError(f"alignment must be an integer array of shape ({m},), got {a!r}")
        a = a.astype(np.int64)
        if m and (a.min() < -1 or a.max() >= n):
            raise InputError(f"alignment entries must be -1 or in [0, {n}), got {a.tolist()}")
        aligned = a[a >= 0]
        if aligned.size > 1 and not (np.diff(aligned) > 0).all():
            raise InputError(
                f"alignment {a.tolist()} is not one-to-one and non-crossing (aligned targets "
                f"must increase strictly)"
            )
        return a

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        """Best alignment of every pair; one numba kernel unless ties are to be randomised."""
        self.check_fitted()
        w = self._check_w(w)
        X = self._as_corpus(X)
        if random_state is not None:
            rng = np.random.default_rng(random_state)
            return [self.latent_argmax(X[k], w, random_state=rng) for k in range(len(X))]
        lengths = X.src_offsets[X.pair_src + 1] - X.src_offsets[X.pair_src]
        offsets = np.zeros(len(X) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        align = np.empty(int(offsets[-1]), np.int64)
        scores = np.empty(len(X))
        _argmax_kernel(X.src_chars, X.src_offsets, X.tgt_chars, X.tgt_offsets, X.pair_src,
                       X.pair_tgt, w, self.n_source_chars, self.n_target_chars,
                       bool(self.bigrams), offsets, align, scores)
        return [DecodeResult(align[offsets[k]:offsets[k + 1]].copy(), float(scores[k]), EXACT)
                for k in range(len(X))]

    def decision_batch(self, X, w) -> np.ndarray:
        """f(x) = w[0] + best alignment score for every pair (one numba kernel)."""
        self.check_fitted()
        w = self._check_w(w)
        X = self._as_corpus(X)
        return _decision_kernel(X.src_chars, X.src_offsets, X.tgt_chars, X.tgt_offsets,
                                X.pair_src, X.pair_tgt, w, self.n_source_chars,
                                self.n_target_chars, bool(self.bigrams))

    def heuristic_weights(self) -> np.ndarray:
        """Two-stage weights from a romanisation table (Chang et al. 2009 style).

        ``U[s, t] = 1`` when the romanisation of source character s,
        ``anyascii(s).lower()`` (letters only, non-empty; ``é`` -> ``e``), occurs in
        ``anyascii(t).lower()`` for target character t (Hebrew ``צ`` -> ``ts`` maps from
        t and s; Russian ``я`` -> ``ya`` from y and a); every other weight, the bias and
        both bigram blocks are 0.  So the fixed alignment maximises the number of aligned
        romanisation matches.  anyascii reads Hebrew vav as ``v`` and yod as ``y`` and alef
        and ayin as apostrophes, so English vowels map to few Hebrew letters.
        """
        from anyascii import anyascii

        self.check_fitted()
        w = np.zeros(self.n_features)
        U = w[2:2 + self.n_source_chars * self.n_target_chars].reshape(
            self.n_source_chars, self.n_target_chars)
        tgt_roman = [anyascii(t).lower() for t in self.target_alphabet_]
        for a, s in enumerate(self.source_alphabet_, 1):
            rs = "".join(c for c in anyascii(s).lower() if c.isalpha())
            if not rs:
                continue
            for b, rt in enumerate(tgt_roman, 1):
                if rs in rt:
                    U[a, b] = 1.0
        return w

    def explain(self, x, w, h=None) -> dict:
        """The alignment ``h`` of one pair with its part scores, as JSON-able data.

        ``h`` (int (m,), entries -1 or a target position) defaults to the best alignment
        under ``w`` (:meth:`latent_argmax`); pass the learner's own choice (a two-stage
        model keeps its heuristic alignment) to describe what that model scores.  Drawn by
        :func:`latentstruct.plotting.draw_explanation`.

        Returns a dict of plain Python values (``json.dumps`` works):

        ``kind``
            ``"character-alignment"``.
        ``source``, ``target``
            The words (``None`` when ``x`` was built from character ids only).
        ``source_chars``, ``target_chars``
            One string per character (``"?"`` for an id unseen in training when the word
            is unknown).
        ``alignment``
            ``h`` as a list of ints.
        ``cell_scores``
            (m, n) nested lists: w . phi_ij of aligning source i with target j.
        ``pairs``
            ``[i, j, source char, target char, part score]`` for every aligned cell.
        ``bias``
            w[0], the score every alignment shares.
        ``score``
            w . Phi(x, h) = bias + the sum of the pairs' part scores (unaligned characters
            score nothing); for the model's own alignment this is its decision value.
        """
        x, s_ids, t_ids = self._pair(x)
        w = self._check_w(w)
        cells = self.cell_scores(x, w)
        m, n = cells.shape
        if h is None:
            h = self.latent_argmax(x, w).structure
        a = self._check_alignment(h, m, n)
        source, target = x.source(0), x.target(0)

        def chars(word, ids, alphabet):
            if word is not None:
                return list(word)
            return [alphabet[k - 1] if k > 0 else "?" for k in ids.tolist()]

        src_chars = chars(source, s_ids, self.source_alphabet_)
        tgt_chars = chars(target, t_ids, self.target_alphabet_)
        pairs = [[i, j, src_chars[i], tgt_chars[j], float(cells[i, j])]
                 for i, j in enumerate(a.tolist()) if j >= 0]
        return {
            "kind": "character-alignment",
            "source": source, "target": target,
            "source_chars": src_chars, "target_chars": tgt_chars,
            "alignment": [int(j) for j in a.tolist()],
            "cell_scores": cells.tolist(),
            "pairs": pairs,
            "bias": float(w[0]),
            "score": float(self.latent_feature(x, a).dot(w)),
        }

    # --- evaluation -----------------------------------------------------------------------
    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Rank every positive test target for every positive test source (LCLR §5.1).

        ``decision_function`` scores the n x n cross pairs (:meth:`cross_corpus`); see
        :func:`ranking_metrics` for the pessimistic tie rule.  A candidate whose target word
        equals the correct one is not a competitor.  Returns ``{"mrr", "accuracy"}``.
        """
        if decision_function is None:
            raise ConfigError(
                "transliteration discovery is evaluated by ranking candidates; evaluate_model "
                "needs decision_function (real-valued scores), not only predict"
            )
        if self._is_default_data(dataset):  # chosen by lang rather than by the user
            self._check_script(dataset)
        y = self.encode_targets(dataset.targets)
        if y.shape[0] != len(dataset.records):
            raise InputError(f"{len(dataset.records)} records but {y.shape[0]} targets", dataset.path)
        pos = [rec for rec, label in zip(dataset.records, y.tolist()) if label > 0]
        if not pos:
            raise InputError("no positive pairs to rank", dataset.path)
        n = len(pos)
        scores = np.asarray(decision_function(self.cross_corpus(Dataset(pos, [1] * n))),
                            dtype=np.float64)
        if scores.shape != (n * n,):
            raise InputError(f"decision_function returned shape {scores.shape}, expected ({n * n},)")
        tgt = np.array([t for _, t in pos], dtype=object)
        same = tgt[:, None] == tgt[None, :]
        return ranking_metrics(scores.reshape(n, n), same)

    def target_script(self) -> str | None:
        """The Unicode script of the training targets (``"CYRILLIC"``, ``"HEBREW"``, ...):
        the commonest among the letters of the target alphabet."""
        self.check_fitted()
        return dominant_script(self.target_alphabet_)

    @staticmethod
    def _is_default_data(dataset: Dataset) -> bool:
        """Whether ``dataset`` is the default (CLDR) data, chosen by ``lang`` rather than
        by the user (``read(None)`` marks its records); a file or pairs given in memory
        (``make_dataset``) are the user's own choice."""
        return isinstance(dataset.records, CldrRecords)

    def _check_script(self, dataset: Dataset) -> None:
        """InputError when the targets of ``dataset`` are in another script than the
        model's (scores across scripts rank by chance)."""
        trained = self.target_script()
        found = dominant_script(c for _, t in dataset.records for c in t)
        if trained is None or found is None or trained == found:
            return
        lang = _SCRIPT_LANG.get(trained)
        fix = (f"pass --option lang={lang} to evaluate on the CLDR English-{lang} names"
               if lang else "pass --test FILE with pairs in that script")
        raise InputError(
            f"this model was trained on {trained.title()} targets but the default test data "
            f"(CLDR English-{self.lang} names, lang={self.lang!r}) is {found.title()}, so its "
            f"ranking would be chance; {fix}, or --test FILE")

    def evaluate(self, targets, predictions) -> dict:
        """Binary accuracy of +-1 label predictions."""
        y = self.encode_targets(targets)
        p = np.asarray(predictions)
        if p.shape != y.shape:
            raise InputError(f"{y.shape[0]} targets but predictions have shape {p.shape}")
        return {"accuracy": float(np.mean(y == p)) if y.size else 0.0}

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """Write ``source<TAB>target<TAB>label`` lines (label 1 or -1), atomically."""
        p = np.asarray(predictions)
        if p.shape != (len(dataset.records),):
            raise InputError(
                f"{len(dataset.records)} pairs but predictions have shape {p.shape}")
        if p.size and not np.isin(p, (-1, 1)).all():
            raise InputError("predictions must be labels -1 or +1")
        self._check_records(dataset.records, dataset.path)
        with atomic_write(path) as fh:
            for (s, t), label in zip(dataset.records, p.tolist()):
                fh.write(f"{s}\t{t}\t{int(label)}\n")

    # --- persistence ----------------------------------------------------------------------
    def get_state(self):
        self.check_fitted()
        return {"source_alphabet": list(self.source_alphabet_),
                "target_alphabet": list(self.target_alphabet_)}, {}

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        alphabets = []
        for key in ("source_alphabet", "target_alphabet"):
            chars = state.get(key) if isinstance(state, dict) else None
            if (not isinstance(chars, list) or not all(isinstance(c, str) and len(c) == 1 for c in chars)
                    or len(set(chars)) != len(chars)):
                raise ModelFormatError(
                    f"task state {key!r} must be a list of distinct single characters, got "
                    f"{chars!r}"
                )
            alphabets.append(chars)
        task._set_alphabets(*alphabets)
        task.fitted_ = True
        return task

