"""Data helpers of the transliteration task: negative pairings, the default-data marker,
scripts, and the ranking metrics of evaluation.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from ...exceptions import ConfigError, InputError

__all__ = ["ranking_metrics", "sample_negatives", "dominant_script", "CldrRecords"]


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
