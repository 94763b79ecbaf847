"""Pictures of graph alignments (LCLR §4): two sentences, their dependency edges, the mapped
word pairs, the mapped edges and the deletions (matplotlib, Agg canvas, no pyplot state).

:func:`plot_graph_alignment` draws the explanation dictionary returned by
:meth:`latentstruct.tasks.graph_pairs.GraphPairTask.explain`: the first sentence (G1) is the
top row and the second (G2) the bottom row, words in reading order.  Dependency edges are
arcs above the top row and below the bottom row, drawn from head to dependent: solid green
when the edge is mapped to an edge of the other graph, dashed grey otherwise (deleted).  A
blue line joins every mapped word pair, labelled with its part score; words without a
mapping are grey (deleted).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .data.atomic import atomic_write
from .exceptions import InputError

__all__ = ["plot_graph_alignment"]

FONT_FAMILY = "DejaVu Sans"
_REQUIRED = ("words1", "words2", "edges1", "edges2", "mapped_pairs", "mapped_edges")


def _check_edges(edges, n: int, what: str) -> list[tuple[int, int, str]]:
    out = []
    for k, e in enumerate(edges):
        if len(e) != 3 or not all(isinstance(v, (int, np.integer)) for v in e[:2]):
            raise InputError(f"{what}[{k}] must be (head, dependent, label), got {e!r}")
        h, d, lab = int(e[0]), int(e[1]), str(e[2])
        if not (0 <= h < n and 0 <= d < n):
            raise InputError(f"{what}[{k}] = {e!r} refers to a word outside [0, {n})")
        out.append((h, d, lab))
    return out


def _positions(words) -> np.ndarray:
    """x centre of every word: slots as wide as the word (at least 3 characters) + a gap."""
    widths = np.array([max(len(w), 3) for w in words], dtype=np.float64) + 1.5
    return np.cumsum(widths) - widths / 2.0


def plot_graph_alignment(explanation: Mapping, path, *, title=None) -> None:
    """Draw a graph alignment and save it as a PNG (written atomically).

    Parameters
    ----------
    explanation : mapping with ``words1``, ``words2`` (lists of str), ``edges1``, ``edges2``
        (lists of (head, dependent, label)), ``mapped_pairs`` (list of (i, j, score)),
        ``mapped_edges`` (list of (G1 edge index, G2 edge index, score)) and optionally
        ``score`` (the total, shown in the title) — the output of ``GraphPairTask.explain``.
    path : output file (.png)
    title : str, optional
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch

    if not isinstance(explanation, Mapping):
        raise InputError(f"explanation must be a mapping (GraphPairTask.explain), got "
                         f"{type(explanation).__name__}")
    missing = [k for k in _REQUIRED if k not in explanation]
    if missing:
        raise InputError(f"explanation lacks {', '.join(missing)}; pass GraphPairTask.explain(...)")
    words1 = [str(w) for w in explanation["words1"]]
    words2 = [str(w) for w in explanation["words2"]]
    n1, n2 = len(words1), len(words2)
    edges1 = _check_edges(explanation["edges1"], n1, "edges1")
    edges2 = _check_edges(explanation["edges2"], n2, "edges2")
    pairs = []
    for k, p in enumerate(explanation["mapped_pairs"]):
        if len(p) != 3 or not (0 <= int(p[0]) < n1 and 0 <= int(p[1]) < n2):
            raise InputError(f"mapped_pairs[{k}] = {p!r} must be (G1 word, G2 word, score) in range")
        pairs.append((int(p[0]), int(p[1]), float(p[2])))
    mapped_e1, mapped_e2 = set(), set()
    for k, q in enumerate(explanation["mapped_edges"]):
        if len(q) != 3 or not (0 <= int(q[0]) < len(edges1) and 0 <= int(q[1]) < len(edges2)):
            raise InputError(f"mapped_edges[{k}] = {q!r} must be (G1 edge, G2 edge, score) in range")
        mapped_e1.add(int(q[0]))
        mapped_e2.add(int(q[1]))

    x1, x2 = _positions(words1), _positions(words2)
    total = max(x1[-1] if n1 else 0.0, x2[-1] if n2 else 0.0, 1.0)
    x1 = x1 + (total - (x1[-1] if n1 else 0.0)) / 2.0  # centre the shorter row
    x2 = x2 + (total - (x2[-1] if n2 else 0.0)) / 2.0
    fig = Figure(figsize=(min(max(6.0, 0.11 * total + 1.5), 60.0), 5.2))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.84))
    ax.set_xlim(-1.0, total + 2.0)
    ax.set_ylim(-1.5, 2.5)
    ax.axis("off")
    y1, y2 = 1.0, 0.0

    def arcs(edges, xs, y, mapped, up):
        for e, (h, d, lab) in enumerate(edges):
            span = abs(xs[h] - xs[d])
            rad = (-0.35 if up else 0.35) * (1 if xs[d] > xs[h] else -1)
            base = y + (0.16 if up else -0.16)
            on = e in mapped
            arrow = FancyArrowPatch((xs[h], base), (xs[d], base), arrowstyle="-|>", mutation_scale=8,
                                    connectionstyle=f"arc3,rad={rad}", lw=1.4 if on else 0.8,
                                    color="tab:green" if on else "#aaaaaa",
                                    linestyle="-" if on else (0, (3, 2)))
            ax.add_patch(arrow)
            height = min(0.35 * span / max(total, 1.0) * 6.0, 0.85) * (1 if up else -1)
            ax.text((xs[h] + xs[d]) / 2.0, base + height * 0.55, lab, fontsize=6, ha="center",
                    va="center", color="tab:green" if on else "#888888", family=FONT_FAMILY)

    arcs(edges1, x1, y1, mapped_e1, True)
    arcs(edges2, x2, y2, mapped_e2, False)
    for i, j, s in pairs:
        ax.plot([x1[i], x2[j]], [y1 - 0.14, y2 + 0.14], color="tab:blue", lw=1.4)
        ax.text(0.5 * (x1[i] + x2[j]), 0.5, f"{s:+.2f}", fontsize=6.5, ha="center", va="center",
                family=FONT_FAMILY,
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    on1 = {i for i, _, _ in pairs}
    on2 = {j for _, j, _ in pairs}
    box = {"boxstyle": "round,pad=0.2", "fc": "#f4f4f4", "ec": "#999999"}
    for xs, y, words, on in ((x1, y1, words1, on1), (x2, y2, words2, on2)):
        for k, w in enumerate(words):
            ax.text(xs[k], y, w, fontsize=9, ha="center", va="center", family=FONT_FAMILY,
                    color="black" if k in on else "#9a9a9a", bbox=box)
    heading = title if title else "graph alignment"
    if explanation.get("score") is not None:
        heading = f"{heading}   score = {float(explanation['score']):.3f}"
    fig.suptitle(heading, y=0.97, fontsize=11, family=FONT_FAMILY)
    fig.text(0.5, 0.875, "top: sentence 1 (text), bottom: sentence 2 (hypothesis)\nblue: mapped "
             "words (part score); green arcs: mapped edges; grey: deleted words and edges",
             ha="center", fontsize=7, color="#555555", family=FONT_FAMILY)
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
