"""Pictures of latent structures (matplotlib, Agg canvas; no global pyplot state).

:func:`plot_alignment` draws a character alignment between two words, the latent
structure of the transliteration task.
"""

from __future__ import annotations

import numpy as np

from .data.atomic import atomic_write
from .exceptions import InputError

__all__ = ["plot_alignment"]

#: covers Latin, Hebrew, Arabic and Cyrillic letters and ships with matplotlib
FONT_FAMILY = "DejaVu Sans"


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


def plot_alignment(source: str, target: str, alignment, path, *, score=None,
                   cell_scores=None, title=None) -> None:
    """Draw the alignment of ``source`` and ``target`` characters and save it as a PNG.

    Source characters form the top row and target characters the bottom row, both in
    logical order from left to right (right-to-left scripts are not mirrored, as the
    subtitle says).  A line joins each aligned pair ``(i, alignment[i])``, labelled with
    ``cell_scores[i, alignment[i]]`` when ``cell_scores`` ((m, n)) is given; unaligned
    characters are grey.  ``score`` (the total) goes into the title.  The file is written
    atomically.

    Parameters
    ----------
    source, target : str
    alignment : int array (len(source),), entries -1 or a target position
    path : output file (.png)
    score : float, optional
    cell_scores : array (len(source), len(target)), optional
    title : str, optional
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not isinstance(source, str) or not isinstance(target, str):
        raise InputError(f"source and target must be strings, got {source!r} and {target!r}")
    m, n = len(source), len(target)
    a = _check_alignment(alignment, m, n)
    cells = None
    if cell_scores is not None:
        cells = np.asarray(cell_scores, dtype=np.float64)
        if cells.shape != (m, n):
            raise InputError(f"cell_scores must have shape ({m}, {n}), got {cells.shape}")

    width = max(m, n, 1)
    fig = Figure(figsize=(max(4.0, 0.75 * width + 1.5), 3.4))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.72))
    ax.set_xlim(-0.8, width - 0.2)
    ax.set_ylim(-0.5, 1.5)
    ax.axis("off")

    def xs(k: int) -> np.ndarray:  # centre each row
        return np.arange(k) + (width - k) / 2.0

    x_src, x_tgt = xs(m), xs(n)
    aligned_tgt = set(a[a >= 0].tolist())
    for i, j in enumerate(a.tolist()):
        if j < 0:
            continue
        ax.plot([x_src[i], x_tgt[j]], [1.0 - 0.22, 0.0 + 0.22], color="tab:blue", lw=1.6)
        if cells is not None:
            ax.text((x_src[i] + x_tgt[j]) / 2.0, 0.5, f"{cells[i, j]:+.2f}", fontsize=8,
                    ha="center", va="center", family=FONT_FAMILY,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
    box = {"boxstyle": "round,pad=0.25", "fc": "#f2f2f2", "ec": "#999999"}
    for i, ch in enumerate(source):
        ax.text(x_src[i], 1.0, ch, fontsize=18, ha="center", va="center", family=FONT_FAMILY,
                color="black" if a[i] >= 0 else "#999999", bbox=box)
    for j, ch in enumerate(target):
        ax.text(x_tgt[j], 0.0, ch, fontsize=18, ha="center", va="center", family=FONT_FAMILY,
                color="black" if j in aligned_tgt else "#999999", bbox=box)

    heading = title if title else "alignment"
    if score is not None:
        heading = f"{heading}   score = {float(score):.3f}"
    fig.suptitle(heading, y=0.96, fontsize=12, family=FONT_FAMILY)
    fig.text(0.5, 0.80, "source (top) and target (bottom) in logical order, left to right; "
             "right-to-left scripts are not mirrored", ha="center", fontsize=7.5,
             color="#555555", family=FONT_FAMILY)
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
