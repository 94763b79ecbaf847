"""Pictures for dependency parsing and reranking: a tree with its hidden values, and a bar
chart of systems' attachment scores.  Files are written atomically as PNG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..exceptions import InputError
from .figures import agg_pyplot, save_pyplot_figure

__all__ = ["draw_dependency_tree", "draw_system_scores"]


def draw_dependency_tree(words: Sequence[str], heads: Sequence[int], path, *,
                         node_labels: Sequence[str] | None = None,
                         arc_labels: Sequence[str] | None = None, title: str = "") -> None:
    """Draw a dependency tree as arcs above the words, and a label under each word.

    ``heads[m-1]`` is the head of word m (0 = root); ``node_labels`` (e.g. each word's
    decoded hidden value ``NN_3``) go under the words, ``arc_labels`` (relations) on the arcs.
    """
    n = len(words)
    if len(heads) != n or any(not 0 <= int(h) <= n for h in heads):
        raise InputError(f"heads must hold one head in 0..{n} per word; got {list(heads)}")
    for name, labels in (("node_labels", node_labels), ("arc_labels", arc_labels)):
        if labels is not None and len(labels) != n:
            raise InputError(f"{name} must hold one label per word ({n}); got {len(labels)}")
    plt = agg_pyplot()
    from matplotlib.patches import Arc

    width = max(6.0, 0.95 * n + 1.0)
    span = max((abs(int(h) - m) for m, h in enumerate(heads, 1) if h), default=1)
    fig, ax = plt.subplots(figsize=(width, 1.6 + 0.35 * min(span, 12)))
    ax.set_xlim(-0.5, n + 0.5)
    ax.set_ylim(-1.3, 0.55 * min(span, 12) + 0.9)
    ax.axis("off")
    ax.text(0, 0, "ROOT", ha="center", va="center", fontsize=9, color="#555555")
    for m, word in enumerate(words, 1):
        ax.text(m, 0, word, ha="center", va="center", fontsize=10)
        if node_labels is not None:
            ax.text(m, -0.6, node_labels[m - 1], ha="center", va="center", fontsize=8,
                    color="#1f5fa8", family="monospace")
    for m, h in enumerate(heads, 1):
        h = int(h)
        d = abs(m - h)
        height = 0.55 * min(d, 12)
        centre = (m + h) / 2
        ax.add_patch(Arc((centre, 0.25), d, 2 * height, theta1=0, theta2=180,
                         color="#333333", lw=1.0))
        ax.annotate("", xy=(m, 0.22), xytext=(m, 0.32),
                    arrowprops={"arrowstyle": "-|>", "color": "#333333", "lw": 0.8})
        if arc_labels is not None and arc_labels[m - 1] != "_":
            ax.text(centre, 0.25 + height, arc_labels[m - 1], ha="center", va="bottom",
                    fontsize=7, color="#8a3b12",
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
    if title:
        ax.set_title(title, fontsize=10)
    save_pyplot_figure(plt, fig, path)


def draw_system_scores(panels: Mapping[str, Mapping[str, float]], path, *,
                       metric: str = "UAS", title: str = "") -> None:
    """One bar chart per panel (corpus): ``{panel: {system: score in %}}``, the lowest and the
    highest bar labelled, the y axis zoomed to the scores' range."""
    plt = agg_pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 3.8), squeeze=False)
    for ax, (panel, scores) in zip(axes[0], panels.items()):
        names, values = list(scores), [float(v) for v in scores.values()]
        colours = ["#999999" if n in ("base", "oracle") else
                   "#1f5fa8" if n.startswith("MIX") else "#6a9fd4" for n in names]
        ax.bar(range(len(names)), values, color=colours)
        lo, hi = min(values), max(values)
        ax.set_ylim(lo - 0.15 * (hi - lo + 0.5), hi + 0.15 * (hi - lo + 0.5))
        for i, v in enumerate(values):
            ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel(f"{metric} %")
        ax.set_title(panel, fontsize=10)
    if title:
        fig.suptitle(title, fontsize=11)
    save_pyplot_figure(plt, fig, path)
