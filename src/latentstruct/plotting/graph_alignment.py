"""Pictures of graph alignments (LCLR §4): two sentences, their dependency edges, the mapped
word pairs, the mapped edges and the deletions (matplotlib, Agg canvas, no pyplot state).

:func:`plot_graph_alignment` draws the explanation dictionary returned by
:meth:`latentstruct.tasks.pairs.GraphPairTask.explain` (usually reached through
:func:`latentstruct.plotting.draw_explanation`).  The first sentence (G1) is the top row
and the second (G2) the bottom row, words in reading order.  Dependency edges are arcs
above the top row and below the bottom row, drawn from head to dependent (the arrow points
at the dependent): solid green when the edge is mapped to an edge of the other graph, with
the edge-mapping part score on the G1 arc; dashed grey otherwise (deleted), with the
edge-deletion part score in red where the task has edge-deletion variables.  A blue line
joins every mapped word pair, labelled with its part score; words without a mapping are
grey, with their word-deletion part score in red next to them.  So every part score of the
alignment is shown once, and the title adds them up with the bias to the total.

Layout: arcs are stacked by nesting (an arc is higher than every arc inside it) and raised
further while their label would overlap a label already placed on the same level; the
word-mapping labels slide along their lines to the first position that does not overlap
another label.  Vertical positions are in inches, so label sizes do not depend on the
sentence length.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..exceptions import InputError
from .figures import FONT_FAMILY, add_headings, estimate_width_inches, save_png, wrap_text
from .scores import score_heading

__all__ = ["plot_graph_alignment", "graph_alignment_figure"]

_REQUIRED = ("words1", "words2", "edges1", "edges2", "mapped_pairs", "mapped_edges")
_MAPPED = "tab:green"
_DELETED = "#aaaaaa"
_DELETION_SCORE = "#c0392b"
_WORD_FONT = 9.0
_ARC_FONT = 6.5
_PAIR_FONT = 7.0
_LINE = 1.25  # line height in font sizes


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


def _scored(rows, what: str, limit: int, arity: int) -> list[tuple]:
    """Rows ``(index..., score)`` with ``arity`` indices, each below ``limit[k]``."""
    out = []
    for k, row in enumerate(rows or ()):
        try:
            ids = tuple(int(v) for v in row[:arity])
            score = float(row[arity])
            ok = len(row) == arity + 1 and all(0 <= v < lim for v, lim in zip(ids, limit))
        except (TypeError, ValueError, IndexError):
            ok = False
        if not ok:
            names = ", ".join(["index"] * arity)
            raise InputError(f"{what}[{k}] = {row!r} must be ({names}, score) in range")
        out.append((*ids, score))
    return out


def _positions(words) -> tuple[np.ndarray, float]:
    """x centre of every word and the row's width: slots as wide as the word (at least 3
    characters) plus a gap, in character units."""
    widths = np.array([max(len(w), 3) for w in words], dtype=np.float64) + 1.5
    return np.cumsum(widths) - widths / 2.0, float(widths.sum())


def _text_height(text: str, fontsize: float) -> float:
    return (str(text).count("\n") + 1) * _LINE * fontsize / 72.0


def _overlaps(box, boxes) -> bool:
    x0, x1, y0, y1 = box
    return any(x0 < b1 and b0 < x1 and y0 < c1 and c0 < y1 for b0, b1, c0, c1 in boxes)


def _arc_levels(edges, xs, half_widths) -> list[int]:
    """Level (1, 2, ...) of every arc: above every arc nested inside it, and raised while its
    label (centred on the arc's top) would overlap a label already placed on that level."""
    order = sorted(range(len(edges)), key=lambda e: (abs(xs[edges[e][0]] - xs[edges[e][1]]),
                                                     min(xs[edges[e][0]], xs[edges[e][1]])))
    level = [0] * len(edges)
    placed: dict[int, list[tuple[float, float]]] = {}
    spans = []
    for e in order:
        h, d, _ = edges[e]
        lo, hi = sorted((xs[h], xs[d]))
        inner = [lev for (a, b, lev) in spans if lo <= a and b <= hi]
        lev = 1 + max(inner, default=0)
        mid, half = (lo + hi) / 2.0, half_widths[e]
        while any(mid - half < b and a < mid + half for a, b in placed.get(lev, ())):
            lev += 1
        placed.setdefault(lev, []).append((mid - half, mid + half))
        spans.append((lo, hi, lev))
        level[e] = lev
    return level


def plot_graph_alignment(explanation: Mapping, path, *, title=None) -> None:
    """Draw a graph alignment and save it as a PNG (written atomically).

    Parameters
    ----------
    explanation : mapping, the output of ``GraphPairTask.explain``
        Required: ``words1``, ``words2`` (lists of str), ``edges1``, ``edges2`` (lists of
        (head, dependent, label)), ``mapped_pairs`` (list of (i, j, score)) and
        ``mapped_edges`` (list of (G1 edge index, G2 edge index, score)).  Optional:
        ``word_deletions1``/``2`` (list of (word, score)), ``edge_deletions1``/``2`` (list of
        (edge, score)), ``score`` and ``bias`` (the title's total and its breakdown, see
        :func:`latentstruct.plotting.score_breakdown`).
    path : output file (.png)
    title : str, optional
    """
    save_png(graph_alignment_figure(explanation, title=title), path)


def graph_alignment_figure(explanation: Mapping, *, title=None):
    """The matplotlib ``Figure`` that :func:`plot_graph_alignment` saves (same checks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
    pairs = _scored(explanation["mapped_pairs"], "mapped_pairs", (n1, n2), 2)
    mapped_edges = _scored(explanation["mapped_edges"], "mapped_edges",
                           (len(edges1), len(edges2)), 2)
    wdel1 = dict(_scored(explanation.get("word_deletions1"), "word_deletions1", (n1,), 1))
    wdel2 = dict(_scored(explanation.get("word_deletions2"), "word_deletions2", (n2,), 1))
    edel1 = dict(_scored(explanation.get("edge_deletions1"), "edge_deletions1",
                         (len(edges1),), 1))
    edel2 = dict(_scored(explanation.get("edge_deletions2"), "edge_deletions2",
                         (len(edges2),), 1))
    emap1: dict[int, list[float]] = {}
    emap2: set[int] = set()
    for a, b, s in mapped_edges:
        emap1.setdefault(a, []).append(s)
        emap2.add(b)
    heading, breakdown = score_heading(explanation, title or "graph alignment")

    # ---- horizontal layout: x in character slots ----------------------------------------
    (x1, w1), (x2, w2) = _positions(words1), _positions(words2)
    total = max(w1, w2, 1.0)
    x1 = x1 + (total - w1) / 2.0  # centre the shorter row
    x2 = x2 + (total - w2) / 2.0
    x_lo, x_hi = -1.0, total + 1.0
    fig_w = min(max(7.0, 0.11 * (x_hi - x_lo) + 1.0,
                    estimate_width_inches(breakdown, 9.0) + 0.6), 60.0)
    inch_per_x = fig_w / (x_hi - x_lo)

    def half_width(text: str, fontsize: float) -> float:  # in x units, with padding
        return (estimate_width_inches(text, fontsize) / 2.0 + 0.07) / inch_per_x

    def edge_label(e, lab, mapped_scores, deletion) -> tuple[str, str]:
        if mapped_scores is not None:
            if mapped_scores:
                return lab + "\n" + " ".join(f"{s:+.2f}" for s in mapped_scores), _MAPPED
            return lab, _MAPPED
        if e in deletion:
            return f"{lab}\n{deletion[e]:+.2f}", _DELETION_SCORE
        return lab, "#888888"

    labels1 = [edge_label(e, lab, emap1.get(e), edel1) for e, (_, _, lab) in enumerate(edges1)]
    labels2 = [edge_label(e, lab, [] if e in emap2 else None, edel2)
               for e, (_, _, lab) in enumerate(edges2)]
    step = 2 * _LINE * _ARC_FONT / 72.0 + 0.09  # one level: a two-line label and a gap
    lev1 = _arc_levels(edges1, x1, [half_width(t, _ARC_FONT) for t, _ in labels1])
    lev2 = _arc_levels(edges2, x2, [half_width(t, _ARC_FONT) for t, _ in labels2])

    # ---- vertical layout: y in inches ----------------------------------------------------
    box_half = 0.13  # half the height of a word box
    band = 1.7  # between the rows: mapping lines, their labels and deletion scores
    legend = wrap_text("Top: sentence 1 (text), bottom: sentence 2 (hypothesis).  Blue: word "
                   "mappings (part score).  Green arcs: mapped edges (edge-mapping score on the "
                   "top arc).\nGrey: words and edges without a mapping; red numbers: their "
                   "deletion scores.  Arrows point from head to dependent.", fig_w - 0.4, 7.0)
    head = 0.45 + (0.3 if breakdown else 0.0) + 0.14 * (legend.count("\n") + 1) + 0.1
    arcs2 = (max(lev2, default=0) + 0.6) * step
    arcs1 = (max(lev1, default=0) + 0.6) * step
    y2 = 0.15 + arcs2 + box_half
    y1 = y2 + band
    top = y1 + box_half + arcs1
    fig_h = top + head
    fig = Figure(figsize=(fig_w, fig_h))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, top / fig_h))
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(0.0, top)
    ax.axis("off")

    # ---- dependency arcs -----------------------------------------------------------------
    t = np.linspace(0.0, 1.0, 121)
    shape = (1.0 - np.abs(2.0 * t - 1.0) ** 4) ** 0.25  # flat-topped arc with steep sides

    def arcs(edges, xs, levels, labels, mapped, y, up):
        sign = 1.0 if up else -1.0
        base = y + sign * box_half
        for e, (h, d, _) in enumerate(edges):
            on = e in mapped
            colour = _MAPPED if on else _DELETED
            height = levels[e] * step
            xs_arc = xs[h] + (xs[d] - xs[h]) * t
            ys_arc = base + sign * height * shape
            ax.plot(xs_arc, ys_arc, color=colour, lw=1.3 if on else 0.9,
                    linestyle="-" if on else (0, (3, 2)), solid_capstyle="butt")
            tip = min(0.1, 0.5 * height)
            ax.annotate("", xy=(xs[d], base), xytext=(xs[d], base + sign * tip),
                        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 0.9,
                                    "mutation_scale": 7, "shrinkA": 0, "shrinkB": 0})
            text, text_colour = labels[e]
            ax.text((xs[h] + xs[d]) / 2.0, base + sign * height, text, fontsize=_ARC_FONT,
                    ha="center", va="center", color=text_colour, family=FONT_FAMILY,
                    linespacing=1.0,
                    bbox={"boxstyle": "round,pad=0.12", "fc": "white", "ec": "none",
                          "alpha": 0.9})

    arcs(edges1, x1, lev1, labels1, set(emap1), y1, True)
    arcs(edges2, x2, lev2, labels2, emap2, y2, False)

    # ---- words and word-deletion scores --------------------------------------------------
    on1 = {i for i, _, _ in pairs}
    on2 = {j for _, j, _ in pairs}
    box = {"boxstyle": "round,pad=0.2", "fc": "#f4f4f4", "ec": "#999999"}
    placed = []  # boxes (x0, x1, y0, y1) of the labels between the rows
    del_y = 0.27
    for xs, y, words, on, dels, sign in ((x1, y1, words1, on1, wdel1, -1.0),
                                         (x2, y2, words2, on2, wdel2, 1.0)):
        for k, w in enumerate(words):
            ax.text(xs[k], y, w, fontsize=_WORD_FONT, ha="center", va="center",
                    family=FONT_FAMILY, color="black" if k in on else "#9a9a9a", bbox=box)
            if k in dels:
                text = f"{dels[k]:+.2f}"
                yy = y + sign * del_y
                ax.text(xs[k], yy, text, fontsize=_PAIR_FONT, ha="center", va="center",
                        family=FONT_FAMILY, color=_DELETION_SCORE,
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                              "alpha": 0.9})
                hw, hh = half_width(text, _PAIR_FONT), _text_height(text, _PAIR_FONT) / 2.0
                placed.append((xs[k] - hw, xs[k] + hw, yy - hh, yy + hh))

    # ---- word mappings: lines, labels slid along them to free places ---------------------
    ya, yb = y1 - box_half, y2 + box_half
    for i, j, _ in pairs:
        ax.plot([x1[i], x2[j]], [ya, yb], color="tab:blue", lw=1.3)
    lo_y, hi_y = y2 + del_y + 0.2, y1 - del_y - 0.2
    fractions = np.linspace(0.0, 1.0, 13)
    fractions = fractions[np.argsort(np.abs(fractions - 0.5), kind="stable")]  # middle first

    def line_x(i, j, yy):
        return x1[i] + (yy - ya) / (yb - ya) * (x2[j] - x1[i])

    for i, j, s in sorted(pairs, key=lambda p: (x1[p[0]] + x2[p[1]], p[0])):
        text = f"{s:+.2f}"
        hw, hh = half_width(text, _PAIR_FONT), _text_height(text, _PAIR_FONT) / 2.0 + 0.03
        best = None
        for f in fractions:
            yy = hi_y - f * (hi_y - lo_y)
            xx = line_x(i, j, yy)
            cand = (xx - hw, xx + hw, yy - hh, yy + hh)
            # never cover another label; rather not sit on another mapping line either
            # (the label would look like that line's)
            crossing = sum(abs(line_x(a, b, yy) - xx) < hw for a, b, _ in pairs
                           if (a, b) != (i, j))
            key = (_overlaps(cand, placed), crossing)
            if best is None or key < best[0]:
                best = (key, xx, yy, cand)
            if key == (False, 0):
                break
        _, xx, yy, cand = best
        placed.append(cand)
        ax.text(xx, yy, text, fontsize=_PAIR_FONT, ha="center", va="center", color="tab:blue",
                family=FONT_FAMILY,
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.9})

    # ---- title, breakdown, legend ---------------------------------------------------------
    add_headings(fig, fig_h, heading, breakdown, legend,
                 rows=(0.22, 0.5, head - 0.05), sizes=(11, 9))
    return fig
