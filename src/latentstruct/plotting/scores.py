"""The score of an explanation as the picture shows it: the explanation kinds, the
breakdown of the score into the drawn part groups and the bias, and the two title lines."""

from __future__ import annotations

from collections.abc import Mapping

from ..exceptions import InputError

__all__ = ["CHARACTER_ALIGNMENT", "GRAPH_ALIGNMENT", "score_breakdown", "score_heading"]

#: the ``kind`` of a transliteration explanation (``TransliterationTask.explain``)
CHARACTER_ALIGNMENT = "character-alignment"
#: the ``kind`` of a paraphrase / RTE explanation (``GraphPairTask.explain``)
GRAPH_ALIGNMENT = "graph-alignment"
_MINUS = "\u2212"
#: a breakdown may be off by rounding only; a larger gap is shown as "other parts"
_TOLERANCE = 1e-9


def check_explanation(explanation) -> Mapping:
    """``explanation`` itself if it is a mapping, else InputError."""
    if not isinstance(explanation, Mapping):
        raise InputError(f"an explanation must be a mapping (the dict of a structure's explain), got "
                         f"{type(explanation).__name__}")
    return explanation


def _part_sum(rows, what: str, score_at: int) -> tuple[int, float]:
    total = 0.0
    n = 0
    for k, row in enumerate(rows):
        try:
            value = float(row[score_at])
        except (TypeError, ValueError, IndexError):
            raise InputError(f"{what}[{k}] = {row!r} has no part score at position "
                             f"{score_at}") from None
        total += value
        n += 1
    return n, total


#: per kind: the groups of parts a picture shows, as (explanation keys, position of the
#: part score in a row, singular name, plural name)
_GROUPS = {
    CHARACTER_ALIGNMENT: ((("pairs",), 4, "aligned character", "aligned characters"),),
    GRAPH_ALIGNMENT: (
        (("mapped_pairs",), 2, "word mapping", "word mappings"),
        (("mapped_edges",), 2, "edge mapping", "edge mappings"),
        (("word_deletions1", "word_deletions2"), 1, "word deletion", "word deletions"),
        (("edge_deletions1", "edge_deletions2"), 1, "edge deletion", "edge deletions"),
    ),
}


def score_breakdown(explanation: Mapping) -> list[tuple[str, int, float]]:
    """The score of an explanation as ``[(group, number of parts, sum of part scores)]``.

    Groups are the part lists the picture shows (aligned characters; word and edge
    mappings and deletions, both sentences together), each listed when it has parts, then
    ``("bias", 1, bias)``.  When these do not add up to ``explanation["score"]`` (an
    explanation that omits some parts), a last ``("other parts", 0, gap)`` makes them; the
    task explanations of this package always add up.  Empty when the explanation has no
    ``score``.
    """
    explanation = check_explanation(explanation)
    if explanation.get("score") is None:
        return []
    out = []
    for keys, at, one, many in _GROUPS.get(explanation.get("kind"), ()):
        n, total = 0, 0.0
        for key in keys:
            k_n, k_total = _part_sum(explanation.get(key) or (), key, at)
            n, total = n + k_n, total + k_total
        if n:
            out.append((one if n == 1 else many, n, total))
    bias = explanation.get("bias")
    if bias is not None:
        out.append(("bias", 1, float(bias)))
    score = float(explanation["score"])
    gap = score - sum(v for _, _, v in out)
    if abs(gap) > _TOLERANCE * max(1.0, abs(score)):
        out.append(("other parts", 0, gap))
    return out


def signed_score(value: float, first: bool) -> str:
    """``value`` to three decimals with a true minus sign; a leading ``+`` unless ``first``."""
    if first:
        return f"{_MINUS if value < 0 else ''}{abs(value):.3f}"
    return f"{_MINUS if value < 0 else '+'} {abs(value):.3f}"


def score_heading(explanation: Mapping, title: str = "") -> tuple[str, str]:
    """Two title lines: ``title  score S`` and ``S = a (n group) + b (bias) ...``.

    The second line lists :func:`score_breakdown`, so the shown terms add up to the
    total (up to rounding to three decimals); it is empty without a score.
    """
    explanation = check_explanation(explanation)
    heading = title or str(explanation.get("kind") or "explanation").replace("-", " ")
    if explanation.get("score") is None:
        return heading, ""
    score = float(explanation["score"])
    heading = f"{heading}    score {signed_score(score, True)}"
    terms = []
    for k, (label, n, value) in enumerate(score_breakdown(explanation)):
        what = label if label in ("bias", "other parts") else f"{n} {label}"
        terms.append(f"{signed_score(value, k == 0)} ({what})")
    return heading, f"= {' '.join(terms)}" if terms else ""
