"""Pictures of character alignments (transliteration): the source word above the target
word, a line per aligned pair labelled with its part score (matplotlib, Agg canvas, no
pyplot state)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..exceptions import InputError
from .figures import FONT_FAMILY, add_headings, estimate_width_inches, save_png, wrap_text
from .scores import CHARACTER_ALIGNMENT, score_heading, signed_score

__all__ = ["plot_alignment", "character_alignment_figure"]


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


def character_alignment_figure(explanation: Mapping, *, title: str = ""):
    """The ``Figure`` of a ``"character-alignment"`` explanation (``TransliterationTask.explain``)."""
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
    fig_w = max(6.0, 0.75 * width + 1.5, estimate_width_inches(breakdown, 9.5) + 0.6)
    legend = wrap_text("source (top) and target (bottom) in logical order, left to right; "
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
    ``draw_explanation(task.structure_object().explain(x, w, h), path)``.

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
        heading = f"{heading}    score {signed_score(float(score), True)}"
    save_png(_character_picture(list(source), list(target), a, labels, heading, breakdown),
             path)
