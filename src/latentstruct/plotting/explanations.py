"""Drawing an explanation, whatever its kind: :func:`draw_explanation` and
:func:`explanation_figure` dispatch on ``explanation["kind"]`` to the figure modules
(character alignments, graph alignments), which know nothing of each other."""

from __future__ import annotations

from collections.abc import Mapping

from ..exceptions import ConfigError
from .character_alignment import character_alignment_figure
from .figures import save_png
from .graph_alignment import graph_alignment_figure
from .scores import CHARACTER_ALIGNMENT, GRAPH_ALIGNMENT, check_explanation

__all__ = ["EXPLANATION_KINDS", "draw_explanation", "explanation_figure"]

#: the ``kind`` values :func:`draw_explanation` can draw
EXPLANATION_KINDS = (CHARACTER_ALIGNMENT, GRAPH_ALIGNMENT)


def draw_explanation(explanation: Mapping, path, *, title: str = "") -> None:
    """Draw ``explanation`` (the dict a structure's ``explain`` returns) as a PNG at ``path``.

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
    explanation = check_explanation(explanation)
    kind = explanation.get("kind")
    if kind == CHARACTER_ALIGNMENT:
        return character_alignment_figure(explanation, title=title)
    if kind == GRAPH_ALIGNMENT:
        return graph_alignment_figure(explanation, title=title)
    raise ConfigError(
        f"cannot draw an explanation of kind {kind!r}; supported kinds: "
        f"{', '.join(EXPLANATION_KINDS)}"
    )
