"""First-order projective dependency parsing: Eisner's algorithm, exact k-best, loss augmentation.

A dependency tree over the words ``1..n`` of a sentence is given by ``heads`` (int64, shape
(n,)): ``heads[m - 1]`` is the head of word ``m``, and ``0`` is the artificial ROOT.  It is
scored arc by arc,

    score(heads) = sum_{m=1..n} scores[heads[m - 1], m],

from a matrix ``scores`` of shape (n + 1, n + 1) where ``scores[h, m]`` scores the arc
``h -> m``.  Column 0 (arcs into ROOT) and the diagonal (self-loops) are never read, so they
may hold anything.  Other entries may be ``-inf`` to forbid an arc; ``+inf`` and NaN are
rejected.

Every function here maximises that score over *projective* trees: trees rooted at position 0
whose arcs (those from ROOT included, drawn from position 0) do not cross.  With
``single_root=True`` exactly one word hangs from ROOT (the Universal Dependencies
convention); with ``single_root=False`` any number >= 1 of words may.

The chart and its recurrences are described in :mod:`latentstruct.inference.eisner_chart`;
the compiled kernels that read trees out of it are in
:mod:`latentstruct.inference.eisner_derivations`.

**Ties** are broken deterministically, item by item: among the equally scoring splits of an
item the smallest split point ``r`` is kept (candidates tie only when their float scores are
exactly equal); with all scores equal this gives the right-branching chain
``0 -> 1 -> 2 -> ... -> n``.  :func:`eisner_kbest` orders the derivations of every item by
(score descending, split point, rank of the left part, rank of the right part), which makes
its first tree the tree :func:`eisner` returns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from latentstruct.exceptions import InputError
from latentstruct.inference.checks import as_int_array, check_dependency_scores, decode_status, shape_str
from latentstruct.inference.eisner_derivations import eisner_kbest_kernel, eisner_kernel
from latentstruct.inference.result import DecodeResult

__all__ = ["eisner", "eisner_kbest", "eisner_batch", "head_hamming_augmented", "KBestTrees"]


@dataclass(frozen=True)
class KBestTrees:
    """The k best projective trees of a sentence, best first.

    ``k' = min(k, number of projective trees of finite score)``; ``k' = 0`` when no tree has a
    finite score.

    Attributes
    ----------
    heads : int64 (k', n)
        ``heads[q, m - 1]`` is the head of word ``m`` in the q-th best tree (0 = ROOT).  The
        k' trees are distinct.
    scores : float64 (k',)
        Non-increasing; ``scores[q]`` is the score of ``heads[q]``.
    """

    heads: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.scores.shape[0])


# ----------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------
def _check_k(k) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1; got {k!r}")
    return int(k)


def _check_single_root(single_root) -> bool:
    if not isinstance(single_root, (bool, np.bool_)):
        raise InputError(f"single_root must be True or False; got {single_root!r}")
    return bool(single_root)


def _n_projective_trees(n: int, single_root: bool) -> int:
    """Number of projective trees over n >= 1 words (ROOT at position 0)."""
    if single_root:
        return math.comb(3 * n - 2, n - 1) // n  # 1, 2, 7, 30, 143, 728, ...
    return math.comb(3 * n, n) // (2 * n + 1)  # 1, 3, 12, 55, 273, 1428, ...


# ----------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------
def _decode(S: np.ndarray, single_root: bool) -> DecodeResult:
    heads = np.empty(S.shape[0] - 1, dtype=np.int64)
    score = float(eisner_kernel(S, single_root, heads))
    return DecodeResult(heads, score, decode_status(score))


def _kbest_size(n: int, single_root: bool, k: int) -> int:
    """Rows to allocate for the k best trees of n words: min(k, number of projective trees)."""
    kk = min(k, _n_projective_trees(n, single_root))
    if (n + 1) * (kk + 1) ** 2 >= 2**62:  # the packed heap keys (split, rank, rank) must fit int64
        limit = math.isqrt(2**62 // (n + 1)) - 1
        raise InputError(f"k = {k} is too large for a sentence of {n} words; expected k < {limit}")
    return kk


def _decode_kbest(S: np.ndarray, single_root: bool, kk: int) -> KBestTrees:
    n = S.shape[0] - 1
    out_heads = np.zeros((kk, n), dtype=np.int64)
    out_scores = np.zeros(kk, dtype=np.float64)
    got = int(eisner_kbest_kernel(S, single_root, kk, out_heads, out_scores))
    if got < kk:
        out_heads = out_heads[:got].copy()
        out_scores = out_scores[:got].copy()
    return KBestTrees(out_heads, out_scores)


def eisner(scores, *, single_root: bool = True) -> DecodeResult:
    """Best projective dependency tree (Eisner's algorithm, first order).

    Maximises ``sum_m scores[heads[m - 1], m]`` over projective trees rooted at position 0.

    Parameters
    ----------
    scores : array (n + 1, n + 1)
        ``scores[h, m]`` scores the arc ``h -> m``; index 0 is ROOT, words are ``1..n``,
        ``n >= 1``.  Column 0 and the diagonal are ignored; ``-inf`` forbids an arc.
    single_root : bool
        ``True``: exactly one word attaches to ROOT.  ``False``: any number >= 1 may.

    Returns
    -------
    DecodeResult
        ``structure``: int64 heads (n,), ``heads[m - 1]`` = head of word ``m`` (0 = ROOT);
        ``score``: its score; status ``"exact"``, or ``"infeasible"`` with score ``-inf``
        when every projective tree contains a forbidden arc (the structure is then some
        well-formed projective tree, of score ``-inf``).

    Ties are broken deterministically: at every chart item the smallest split point among
    equally scoring ones (see the module docstring).

    Complexity: O(n^3) time, O(n^2) memory.
    """
    S = check_dependency_scores(scores)
    return _decode(S, _check_single_root(single_root))


def eisner_kbest(scores, k: int, *, single_root: bool = True) -> KBestTrees:
    """The ``k`` best projective dependency trees, best first (exact).

    Huang & Chiang's (2005) lazy k-best algorithm on Eisner's chart: after the 1-best chart,
    the sorted list of derivations of an item is extended only when a parent item needs
    it, each item merging its splits with a heap of candidates.  First-order Eisner
    derivations are unambiguous, so the trees are distinct.  Trees of score ``-inf`` are
    never returned.  ``eisner_kbest(S, 1)`` returns the tree and score of ``eisner(S)``.

    Parameters
    ----------
    scores : array (n + 1, n + 1)
        As in :func:`eisner`.
    k : int >= 1
        Number of trees wanted; fewer are returned when fewer projective trees have a
        finite score.
    single_root : bool
        As in :func:`eisner`.

    Returns
    -------
    KBestTrees
        ``heads`` int64 (k', n) and ``scores`` float64 (k',) non-increasing.  Equal scores are
        ordered deterministically (by split point, then the ranks of the parts, item by item).

    Complexity: O(n^3 + k n log(n + k)) time (the chart, then O(n) heap operations per tree),
    within the O(n^3 k log k) of the eager algorithm that merges k-best lists at every item;
    memory O(n^3 + k n) at worst (a heap over the splits of every item visited).
    """
    S = check_dependency_scores(scores)
    single_root = _check_single_root(single_root)
    kk = _kbest_size(S.shape[0] - 1, single_root, _check_k(k))
    return _decode_kbest(S, single_root, kk)


def eisner_batch(score_list, *, single_root: bool = True, k: int = 1) -> list:
    """Decode many sentences: :func:`eisner` (``k == 1``) or :func:`eisner_kbest` (``k > 1``).

    All inputs are validated once, up front; the compiled kernels are then called for each
    sentence without further checks.

    Parameters
    ----------
    score_list : sequence of arrays (n_i + 1, n_i + 1)
        One score matrix per sentence, as in :func:`eisner`; lengths may differ.
    single_root : bool
    k : int >= 1

    Returns
    -------
    list[DecodeResult] when ``k == 1`` (exactly what :func:`eisner` returns per sentence),
    list[KBestTrees] when ``k > 1`` (what :func:`eisner_kbest` returns).

    Complexity: the sum of the per-sentence costs.
    """
    if isinstance(score_list, np.ndarray) and score_list.ndim == 2:
        raise InputError("score_list must be a sequence of score matrices; got a single 2-d array")
    try:
        items = list(score_list)
    except TypeError:
        raise InputError(
            f"score_list must be a sequence of (n + 1, n + 1) score matrices; got {type(score_list).__name__}"
        ) from None
    single_root = _check_single_root(single_root)
    k = _check_k(k)
    mats = [check_dependency_scores(S, f"score_list[{i}]") for i, S in enumerate(items)]
    if k == 1:
        return [_decode(S, single_root) for S in mats]
    sizes = [_kbest_size(S.shape[0] - 1, single_root, k) for S in mats]
    return [_decode_kbest(S, single_root, kk) for S, kk in zip(mats, sizes)]


def head_hamming_augmented(scores, gold_heads) -> np.ndarray:
    """Scores augmented with the Hamming loss on heads (for loss-augmented decoding).

    Returns a float64 copy of ``scores`` with +1.0 added to every arc ``h -> m`` (``m >= 1``,
    ``h != m``) such that ``h != gold_heads[m - 1]``; so the score of any tree under the
    result is its score under ``scores`` plus the number of words whose head differs from
    the gold one, and ``eisner(head_hamming_augmented(S, g))`` is the loss-augmented argmax.
    A gold head of ``-1`` means unknown: every arc into that word gets +1.  Column 0 and the
    diagonal are copied unchanged.

    Parameters
    ----------
    scores : array (n + 1, n + 1), as in :func:`eisner`.
    gold_heads : int array (n,)
        ``gold_heads[m - 1]`` in ``0..n`` (0 = ROOT, not ``m`` itself), or ``-1``.  The gold
        tree need not be projective.

    Complexity: O(n^2).
    """
    check_dependency_scores(scores)
    out = np.array(scores, dtype=np.float64, copy=True)
    N = out.shape[0]
    n = N - 1
    g = as_int_array(gold_heads, "gold_heads", "(n,)")
    if g.shape[0] != n:
        raise InputError(
            f"gold_heads must have shape (n,) = ({n},) to match scores of shape {shape_str(out.shape)}; "
            f"got shape {shape_str(g.shape)}"
        )
    words = np.arange(1, N)
    bad = (g < -1) | (g > n) | (g == words)
    if bad.any():
        m = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(
            f"gold_heads[{m - 1}] = {g[m - 1]} is not a valid head of word {m}; expected -1 (unknown), "
            f"0 (ROOT) or a word index in 1..{n} other than {m}"
        )
    add = np.ones((N, N), dtype=np.float64)
    add[:, 0] = 0.0
    np.fill_diagonal(add, 0.0)
    known = g >= 0
    add[g[known], words[known]] = 0.0
    out += add
    return out

