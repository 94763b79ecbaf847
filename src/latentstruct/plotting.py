"""Pictures of latent structures (matplotlib, Agg canvas; no global pyplot state).

Tasks describe the structure a model picks as plain data (``task.explain(x, w, h)``, a
JSON-able dict with a ``"kind"``); this module draws such a description:

:func:`draw_explanation`
    Dispatches on ``explanation["kind"]``: ``"character-alignment"`` (transliteration,
    drawn here) and ``"graph-alignment"`` (paraphrase / RTE, drawn by
    :func:`latentstruct.plotting_graph.plot_graph_alignment`).  The title shows the score
    and its breakdown, total = the sums of the drawn part scores + the bias
    (:func:`score_breakdown`).
:func:`plot_alignment`
    The character-alignment picture from raw words and an alignment.
:func:`explanation_figure`
    The matplotlib ``Figure`` of an explanation, unsaved (to inspect or embed it).

matplotlib is imported inside the drawing functions only, so importing this module (and
the command line) stays cheap.  Pictures are written atomically.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .data.atomic import atomic_write
from .exceptions import ConfigError, InputError

__all__ = [
    "CHARACTER_ALIGNMENT",
    "GRAPH_ALIGNMENT",
    "EXPLANATION_KINDS",
    "draw_explanation",
    "explanation_figure",
    "save_png",
    "score_breakdown",
    "score_heading",
    "plot_alignment",
]

#: covers Latin, Hebrew, Arabic and Cyrillic letters and ships with matplotlib
FONT_FAMILY = "DejaVu Sans"
CHARACTER_ALIGNMENT = "character-alignment"
GRAPH_ALIGNMENT = "graph-alignment"
#: the ``kind`` values :func:`draw_explanation` can draw
EXPLANATION_KINDS = (CHARACTER_ALIGNMENT, GRAPH_ALIGNMENT)
_MINUS = "\u2212"
#: a breakdown may be off by rounding only; a larger gap is shown as "other parts"
_TOLERANCE = 1e-9


# --------------------------------------------------------------------------------------
# dispatch and titles
# --------------------------------------------------------------------------------------
def _check_mapping(explanation) -> Mapping:
    if not isinstance(explanation, Mapping):
        raise InputError(f"an explanation must be a mapping (the dict of task.explain), got "
                         f"{type(explanation).__name__}")
    return explanation


def draw_explanation(explanation: Mapping, path, *, title: str = "") -> None:
    """Draw ``explanation`` (the dict returned by ``task.explain``) as a PNG at ``path``.

    The picture is chosen by ``explanation["kind"]`` (one of :data:`EXPLANATION_KINDS`);
    the title is ``title`` (or the kind) with the score and its breakdown.  The file is
    written atomically: on any error an existing file at ``path`` is left untouched.

    Raises
    ------
    ConfigError
        The kind is missing or not one this module can draw.
    InputError
        The explanation's data are malformed.
    """
    save_png(explanation_figure(explanation, title=title), path)


def explanation_figure(explanation: Mapping, *, title: str = ""):
    """The matplotlib ``Figure`` that :func:`draw_explanation` saves (same checks)."""
    explanation = _check_mapping(explanation)
    kind = explanation.get("kind")
    if kind == CHARACTER_ALIGNMENT:
        return _character_alignment_figure(explanation, title=title)
    if kind == GRAPH_ALIGNMENT:
        from .plotting_graph import graph_alignment_figure

        return graph_alignment_figure(explanation, title=title)
    raise ConfigError(
        f"cannot draw an explanation of kind {kind!r}; supported kinds: "
        f"{', '.join(EXPLANATION_KINDS)}"
    )


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
    explanation = _check_mapping(explanation)
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


def _signed(value: float, first: bool) -> str:
    if first:
        return f"{_MINUS if value < 0 else ''}{abs(value):.3f}"
    return f"{_MINUS if value < 0 else '+'} {abs(value):.3f}"


def score_heading(explanation: Mapping, title: str = "") -> tuple[str, str]:
    """Two title lines: ``title  score S`` and ``S = a (n group) + b (bias) ...``.

    The second line lists :func:`score_breakdown`, so the shown terms add up to the
    total (up to rounding to three decimals); it is empty without a score.
    """
    explanation = _check_mapping(explanation)
    heading = title or str(explanation.get("kind") or "explanation").replace("-", " ")
    if explanation.get("score") is None:
        return heading, ""
    score = float(explanation["score"])
    heading = f"{heading}    score {_signed(score, True)}"
    terms = []
    for k, (label, n, value) in enumerate(score_breakdown(explanation)):
        what = label if label in ("bias", "other parts") else f"{n} {label}"
        terms.append(f"{_signed(value, k == 0)} ({what})")
    return heading, f"= {' '.join(terms)}" if terms else ""


def _estimate_width_inches(text: str, fontsize: float) -> float:
    """Rough width of ``text`` in DejaVu Sans (about 0.6 em per character)."""
    longest = max((len(line) for line in str(text).split("\n")), default=0)
    return longest * 0.6 * fontsize / 72.0


def _wrap(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` (by :func:`_estimate_width_inches`)."""
    import textwrap

    chars = max(20, int(width_inches * 72.0 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(part, chars) for part in text.split("\n"))


# --------------------------------------------------------------------------------------
# character alignments (transliteration)
# --------------------------------------------------------------------------------------
def _check_alignment(alignment, m: int, n: int) -> np.ndarray:
    a = np.asarray(alignment)
    if a.shape != (m,) or (m and not np.issubdtype(a.dtype, np.integer)):
        raise InputError(
            f"alignment must be {m} integers (one per source character), got {alignment!r}"
        )
    a = a.astype(np.int64)
    if m and (a.min() < -1 or a.max() >= n):
        raise InputError(
            f"alignment entries must be -1 (unaligned) or a target position in [0, {n}), "
            f"got {a.tolist()}"
        )
    return a


def _chars(explanation: Mapping, chars_key: str, word_key: str) -> list[str]:
    chars = explanation.get(chars_key)
    if chars is None:
        chars = explanation.get(word_key)
    if chars is None:
        raise InputError(f"explanation lacks {chars_key} (or {word_key}); pass "
                         f"TransliterationTask.explain(...)")
    if isinstance(chars, str):
        return list(chars)
    chars = list(chars)
    if not all(isinstance(c, str) for c in chars):
        raise InputError(f"{chars_key} must be a list of strings, got {chars!r}")
    return chars


def _character_alignment_figure(explanation: Mapping, *, title: str = ""):
    src = _chars(explanation, "source_chars", "source")
    tgt = _chars(explanation, "target_chars", "target")
    if "alignment" not in explanation:
        raise InputError("explanation lacks alignment; pass TransliterationTask.explain(...)")
    a = _check_alignment(explanation["alignment"], len(src), len(tgt))
    labels = {}
    for k, row in enumerate(explanation.get("pairs") or ()):
        if len(row) < 5 or not (0 <= int(row[0]) < len(src)) or int(a[int(row[0])]) != int(row[1]):
            raise InputError(f"pairs[{k}] = {row!r} must be (i, j, source char, target char, "
                             f"score) of an aligned cell")
        labels[int(row[0])] = float(row[4])
    heading, breakdown = score_heading(explanation, title or "character alignment")
    return _character_picture(src, tgt, a, labels, heading, breakdown)


def _character_picture(src: list[str], tgt: list[str], a: np.ndarray, labels: dict,
                       heading: str, breakdown: str):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    m, n = len(src), len(tgt)
    width = max(m, n, 1)
    fig_w = max(6.0, 0.75 * width + 1.5, _estimate_width_inches(breakdown, 9.5) + 0.6)
    legend = _wrap("source (top) and target (bottom) in logical order, left to right; "
                   "right-to-left scripts are not mirrored.  Numbers: the part score of each "
                   "aligned pair; grey: unaligned characters (no score).", fig_w - 0.4, 7.0)
    head = 0.45 + (0.3 if breakdown else 0.0) + 0.14 * (legend.count("\n") + 1) + 0.1
    body = 2.3  # inches: two rows of characters and the lines between them
    fig_h = head + body
    fig = Figure(figsize=(fig_w, fig_h))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.0, 0.96, body / fig_h))
    ax.set_xlim(-0.8, width - 0.2)
    ax.set_ylim(-0.35, 1.35)
    ax.axis("off")

    def xs(k: int) -> np.ndarray:  # centre each row
        return np.arange(k) + (width - k) / 2.0

    x_src, x_tgt = xs(m), xs(n)
    aligned_tgt = set(a[a >= 0].tolist())
    for i, j in enumerate(a.tolist()):
        if j < 0:
            continue
        ax.plot([x_src[i], x_tgt[j]], [1.0 - 0.22, 0.0 + 0.22], color="tab:blue", lw=1.6)
        if i in labels:
            # alternate the height of neighbouring labels so close lines never share a row
            y = 0.5 + (0.09 if i % 2 else -0.09)
            t = (1.0 - 0.22 - y) / (1.0 - 0.44)
            ax.text(x_src[i] + t * (x_tgt[j] - x_src[i]), y, f"{labels[i]:+.2f}",
                    fontsize=8, ha="center", va="center", family=FONT_FAMILY,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                          "alpha": 0.85})
    box = {"boxstyle": "round,pad=0.25", "fc": "#f2f2f2", "ec": "#999999"}
    for i, ch in enumerate(src):
        ax.text(x_src[i], 1.0, ch, fontsize=18, ha="center", va="center", family=FONT_FAMILY,
                color="black" if a[i] >= 0 else "#999999", bbox=box)
    for j, ch in enumerate(tgt):
        ax.text(x_tgt[j], 0.0, ch, fontsize=18, ha="center", va="center", family=FONT_FAMILY,
                color="black" if j in aligned_tgt else "#999999", bbox=box)

    add_headings(fig, fig_h, heading, breakdown, legend,
                 rows=(0.25, 0.55, head - 0.1), sizes=(12, 9.5))
    return fig


def add_headings(fig, fig_h: float, heading: str, breakdown: str, legend: str, *,
                 rows: tuple[float, float, float], sizes: tuple[float, float]) -> None:
    """Write the title (score), its breakdown and the legend at ``rows`` (inches from the
    top): the part shared by every explanation picture."""
    def at(inches_from_top: float) -> float:
        return 1.0 - inches_from_top / fig_h

    fig.text(0.5, at(rows[0]), heading, ha="center", va="center", fontsize=sizes[0],
             family=FONT_FAMILY)
    if breakdown:
        fig.text(0.5, at(rows[1]), breakdown, ha="center", va="center", fontsize=sizes[1],
                 family=FONT_FAMILY)
    fig.text(0.5, at(rows[2]), legend, ha="center", va="bottom", fontsize=7,
             color="#555555", family=FONT_FAMILY, linespacing=1.3)


def save_png(fig, path) -> None:
    """Save ``fig`` as a PNG at ``path``, atomically."""
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)


def plot_alignment(source: str, target: str, alignment, path, *, score=None,
                   cell_scores=None, title=None, bias=None) -> None:
    """Draw the alignment of ``source`` and ``target`` characters and save it as a PNG.

    Source characters form the top row and target characters the bottom row, both in
    logical order from left to right (right-to-left scripts are not mirrored, as the
    subtitle says).  A line joins each aligned pair ``(i, alignment[i])``, labelled with
    ``cell_scores[i, alignment[i]]`` when ``cell_scores`` ((m, n)) is given; unaligned
    characters are grey.  ``score`` (the total) goes into the title; with ``cell_scores``
    a second line breaks it down into the shown cell scores, the ``bias`` and, if these do
    not add up to ``score`` (no bias given), the rest as "other parts", so the terms shown
    always sum to the score.  The file is written atomically.  With a task at hand prefer
    ``draw_explanation(task.explain(x, w, h), path)``.

    Parameters
    ----------
    source, target : str
    alignment : int array (len(source),), entries -1 or a target position
    path : output file (.png)
    score : float, optional
    cell_scores : array (len(source), len(target)), optional
    title : str, optional
    bias : float, optional
        The score every alignment gets (the model's bias weight).
    """
    if not isinstance(source, str) or not isinstance(target, str):
        raise InputError(f"source and target must be strings, got {source!r} and {target!r}")
    m, n = len(source), len(target)
    a = _check_alignment(alignment, m, n)
    labels = {}
    if cell_scores is not None:
        cells = np.asarray(cell_scores, dtype=np.float64)
        if cells.shape != (m, n):
            raise InputError(f"cell_scores must have shape ({m}, {n}), got {cells.shape}")
        labels = {i: float(cells[i, j]) for i, j in enumerate(a.tolist()) if j >= 0}
    heading = title if title else "alignment"
    breakdown = ""
    if score is not None and cell_scores is not None:
        parts = {"kind": CHARACTER_ALIGNMENT, "score": float(score), "bias": bias,
                 "pairs": [[i, int(a[i]), "", "", s] for i, s in labels.items()]}
        heading, breakdown = score_heading(parts, heading)
    elif score is not None:
        heading = f"{heading}    score {_signed(float(score), True)}"
    save_png(_character_picture(list(source), list(target), a, labels, heading, breakdown),
             path)
