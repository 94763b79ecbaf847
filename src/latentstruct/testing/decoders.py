"""Decoders against brute force: :func:`check_decoder`, and random tiny instances
(chains, alignments, trees) to run it on.  The brute-force enumerators and score helpers
live in :mod:`latentstruct.inference.brute_force`."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from latentstruct.inference.brute_force import (
    brute_force,
)
from latentstruct.inference.result import EXACT, INFEASIBLE, DecodeResult

__all__ = [
    "check_decoder", "DecoderCheckReport", "scores_close", "random_scores", "random_chain",
    "random_alignment_scores", "random_tree", "random_tree_instance",
]


@dataclass(frozen=True)
class DecoderCheckReport:
    """Summary of a passing :func:`check_decoder` run.

    Attributes
    ----------
    n_instances : int
        Instances checked.
    n_infeasible : int
        Of which had no finite-score structure.
    max_abs_error : float
        Largest ``|decoded score - brute-force maximum|`` seen.
    """

    n_instances: int
    n_infeasible: int
    max_abs_error: float


def scores_close(a: float, b: float, atol: float = 1e-9, rtol: float = 1e-9) -> bool:
    """``|a - b| <= atol + rtol * max(|a|, |b|)``; equal infinities are close, NaN never is."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return False
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def _same_structure(a: Any, b: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):  # pragma: no cover - exotic structures
        return a == b


def check_decoder(
    decode: Callable[[Any], DecodeResult],
    candidates: Callable[[Any], Iterable],
    score: Callable[[Any, Any], float],
    *,
    make_instance: Callable[[np.random.Generator], Any],
    n_instances: int = 200,
    random_state: int | np.random.Generator = 0,
    atol: float = 1e-9,
    rtol: float = 1e-9,
    check_membership: bool = True,
) -> DecoderCheckReport:
    """Assert that ``decode`` is an exact argmax on random tiny instances.

    For each of ``n_instances`` instances ``inst = make_instance(rng)`` (one seeded
    generator feeds them all), with ``best`` the brute-force maximum of
    ``score(inst, s)`` over ``s in candidates(inst)``:

    1. ``decode(inst)`` returns a :class:`~latentstruct.inference.result.DecodeResult`;
    2. if ``best`` is ``-inf`` (or there is no candidate) the result is ``"infeasible"`` or
       scores ``-inf``; otherwise its status is ``"exact"``;
    3. its score equals ``best`` (``atol``/``rtol``, see :func:`scores_close`) — scores are
       compared, not structures, so ties never fail;
    4. ``score(inst, result.structure)`` equals the reported score (the structure attains it);
    5. with ``check_membership``, the structure is one of the candidates (it is legal).

    Parameters
    ----------
    decode : instance -> DecodeResult
    candidates : instance -> iterable of every legal structure (keep instances tiny)
    score : (instance, structure) -> float, the true score (e.g. ``w · Φ(x, h)``)
    make_instance : numpy Generator -> instance; use small integers to create ties
    n_instances, random_state : how many instances, and the seed (int or Generator)
    atol, rtol : tolerance of the score comparisons

    Returns
    -------
    DecoderCheckReport

    Raises
    ------
    AssertionError
        naming the instance index, the seed, the decoded structure and score and the
        brute-force optimum.
    """
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    n_infeasible = 0
    max_err = 0.0
    for k in range(int(n_instances)):
        inst = make_instance(rng)

        def fail(msg: str, res=None, ref=None):
            lines = [f"check_decoder: instance {k} (random_state={random_state!r}): {msg}"]
            if res is not None:
                lines.append(f"  decoded: structure={res.structure!r} score={res.score!r} status={res.status!r}")
            if ref is not None:
                lines.append(f"  brute force: structure={ref.structure!r} score={ref.score!r}")
            lines.append(f"  instance: {inst!r}")
            raise AssertionError("\n".join(lines))

        cands = list(candidates(inst))
        ref = brute_force(lambda s: score(inst, s), cands)
        res = decode(inst)
        if not isinstance(res, DecodeResult):
            fail(f"decode returned {type(res).__name__}, expected a DecodeResult")
        if ref.status == INFEASIBLE:
            n_infeasible += 1
            if not (res.status == INFEASIBLE or res.score == -math.inf):
                fail("no candidate has a finite score, but the decoder did not report 'infeasible'", res, ref)
            continue
        if res.status != EXACT:
            fail(f"status is {res.status!r}, expected 'exact'", res, ref)
        if res.structure is None:
            fail("the decoder returned no structure", res, ref)
        if not scores_close(res.score, ref.score, atol, rtol):
            fail(f"decoded score {res.score!r} differs from the brute-force maximum {ref.score!r}", res, ref)
        attained = float(score(inst, res.structure))
        if not scores_close(attained, res.score, atol, rtol):
            fail(f"the returned structure scores {attained!r}, not the reported {res.score!r}", res, ref)
        if check_membership and not any(_same_structure(res.structure, c) for c in cands):
            fail("the returned structure is not one of the legal candidates", res, ref)
        max_err = max(max_err, abs(res.score - ref.score))
    return DecoderCheckReport(int(n_instances), n_infeasible, max_err)


# ----------------------------------------------------------------------------------------
# random tiny instances
# ----------------------------------------------------------------------------------------
_KINDS = ("float", "int", "inf")


def random_scores(rng: np.random.Generator, shape, kind: str = "float", p_inf: float = 0.25) -> np.ndarray:
    """Random float64 scores of ``shape``.

    kind ``"float"``: standard normal (ties have probability 0); ``"int"``: integers in
    [-2, 2] (many exact ties, negative and zero scores); ``"inf"``: like ``"int"`` with a
    fraction ``p_inf`` of entries set to ``-inf`` (forbidden parts).
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}; got {kind!r}")
    if kind == "float":
        return rng.normal(size=shape)
    out = rng.integers(-2, 3, size=shape).astype(np.float64)
    if kind == "inf":
        out[rng.random(shape) < p_inf] = -np.inf
    return out


def _kind(rng, kind):
    return _KINDS[int(rng.integers(0, 3))] if kind is None else kind


def random_chain(rng: np.random.Generator, max_T: int = 4, max_L: int = 3, kind: str | None = None):
    """Random chain instance ``(unary (T, L), transition (L, L), start (L,), end (L,))``.

    T in [0, max_T], L in [1, max_L]; ``kind`` as in :func:`random_scores` (None: random).
    """
    T = int(rng.integers(0, max_T + 1))
    L = int(rng.integers(1, max_L + 1))
    kind = _kind(rng, kind)
    return (random_scores(rng, (T, L), kind, 0.2), random_scores(rng, (L, L), kind, 0.3),
            random_scores(rng, (L,), kind, 0.1), random_scores(rng, (L,), kind, 0.1))


def random_alignment_scores(rng: np.random.Generator, max_m: int = 4, max_n: int = 4, kind: str | None = None):
    """Random alignment scores (m, n), m in [0, max_m], n in [0, max_n]."""
    m = int(rng.integers(0, max_m + 1))
    n = int(rng.integers(0, max_n + 1))
    return random_scores(rng, (m, n), _kind(rng, kind), 0.3)


def random_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random rooted tree on ``n >= 1`` nodes as a parents array (root -1, at a random node)."""
    parents = np.full(n, -1, dtype=np.int64)
    for i in range(1, n):
        parents[i] = rng.integers(0, i)
    perm = rng.permutation(n)  # node i is renamed perm[i]
    out = np.full(n, -1, dtype=np.int64)
    for i in range(1, n):
        out[perm[i]] = perm[parents[i]]
    return out


def random_tree_instance(rng: np.random.Generator, max_n: int = 5, max_K: int = 3, kind: str | None = None):
    """Random tree instance ``(unary (n, K), parents (n,), edge_scores (n, K, K))``."""
    n = int(rng.integers(1, max_n + 1))
    K = int(rng.integers(1, max_K + 1))
    kind = _kind(rng, kind)
    return random_scores(rng, (n, K), kind, 0.2), random_tree(rng, n), random_scores(rng, (n, K, K), kind, 0.3)
