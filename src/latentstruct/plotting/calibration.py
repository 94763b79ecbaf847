"""Reliability diagrams: accuracy against confidence per bin, one line per system."""

from __future__ import annotations

from collections.abc import Mapping

from .figures import agg_pyplot, save_pyplot_figure

__all__ = ["draw_reliability_diagram"]


def draw_reliability_diagram(curves: Mapping, path, *, title: str = "") -> None:
    """Write a reliability diagram of ``curves`` ({name: Reliability}) to ``path`` (PNG).

    Top: accuracy against mean confidence per bin (the diagonal is perfect calibration),
    the legend gives each system's ECE.  Bottom: the share of predictions per bin."""
    plt = agg_pyplot()
    fig, (ax, hist) = plt.subplots(2, 1, figsize=(5.5, 6.5), sharex=True,
                                   gridspec_kw={"height_ratios": [3, 1]})
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfectly calibrated")
    for name, r in curves.items():
        ax.plot(r.confidence, r.accuracy, marker="o", markersize=4,
                label=f"{name} (ECE {r.ece:.4f})")
        share = r.count / max(r.count.sum(), 1)
        hist.plot(r.confidence, share, marker="o", markersize=3, label=name)
    ax.set_ylabel("accuracy of the top label")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left", fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    hist.set_yscale("log")
    hist.set_xlabel("confidence (probability of the top label)")
    hist.set_ylabel("share of tokens")
    fig.tight_layout()
    save_pyplot_figure(plt, fig, path)
