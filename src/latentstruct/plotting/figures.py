"""Drawing helpers shared by the figure modules of :mod:`latentstruct.plotting`: the font,
text width estimates and wrapping, the title block of explanation pictures, atomic PNG
output, and the pyplot access of the chart figures.  matplotlib is imported inside the
functions only."""

from __future__ import annotations

from ..data.atomic import atomic_write

#: covers Latin, Hebrew, Arabic and Cyrillic letters and ships with matplotlib
FONT_FAMILY = "DejaVu Sans"


def estimate_width_inches(text: str, fontsize: float) -> float:
    """Rough width of ``text`` in DejaVu Sans (about 0.6 em per character)."""
    longest = max((len(line) for line in str(text).split("\n")), default=0)
    return longest * 0.6 * fontsize / 72.0


def wrap_text(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` (by :func:`estimate_width_inches`)."""
    import textwrap

    chars = max(20, int(width_inches * 72.0 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(part, chars) for part in text.split("\n"))


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


def agg_pyplot():
    """matplotlib's pyplot on the Agg backend (no window), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_pyplot_figure(plt, fig, path) -> None:
    """Lay out, write as PNG atomically, and free the figure."""
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)
