"""Pictures of latent structures (matplotlib, Agg canvas; no global pyplot state).

A task's structure describes the structure a model picks as plain data
(``task.structure_object().explain(x, w, h)``, a JSON-able dict with a ``"kind"``); this
package draws such a description:

:func:`draw_explanation`
    Dispatches on ``explanation["kind"]``: ``"character-alignment"`` (transliteration,
    :mod:`~latentstruct.plotting.character_alignment`) and ``"graph-alignment"``
    (paraphrase / RTE, :func:`plot_graph_alignment` in
    :mod:`~latentstruct.plotting.graph_alignment`).  The title shows the score and its
    breakdown, total = the sums of the drawn part scores + the bias (:func:`score_breakdown`).
:func:`plot_alignment`
    The character-alignment picture from raw words and an alignment.
:func:`explanation_figure`
    The matplotlib ``Figure`` of an explanation, unsaved (to inspect or embed it).
:func:`draw_dependency_tree`, :func:`draw_system_scores`
    Dependency parsing and reranking (:mod:`~latentstruct.plotting.dependency`).
:func:`draw_label_matrix`, :func:`label_order`
    A DISTRO label matrix (:mod:`~latentstruct.plotting.label_matrix`).
:func:`draw_reliability_diagram`
    Accuracy against confidence of probabilities such as a CRF's marginals
    (:mod:`~latentstruct.plotting.calibration`).

One module per figure family; :mod:`~latentstruct.plotting.figures` (drawing helpers) and
:mod:`~latentstruct.plotting.scores` (score breakdowns and titles) are shared by them, and
:mod:`~latentstruct.plotting.explanations` (the dispatcher) sits above them.  matplotlib is
imported inside the drawing functions only, so importing this package (and the command
line) stays cheap.  Pictures are written atomically.
"""

from .calibration import draw_reliability_diagram
from .character_alignment import plot_alignment
from .dependency import draw_dependency_tree, draw_system_scores
from .explanations import EXPLANATION_KINDS, draw_explanation, explanation_figure
from .figures import save_png
from .graph_alignment import graph_alignment_figure, plot_graph_alignment
from .label_matrix import draw_label_matrix, label_order
from .scores import CHARACTER_ALIGNMENT, GRAPH_ALIGNMENT, score_breakdown, score_heading

__all__ = [
    "draw_reliability_diagram",
    "CHARACTER_ALIGNMENT",
    "GRAPH_ALIGNMENT",
    "EXPLANATION_KINDS",
    "draw_explanation",
    "explanation_figure",
    "save_png",
    "score_breakdown",
    "score_heading",
    "plot_alignment",
    "plot_graph_alignment",
    "graph_alignment_figure",
    "draw_dependency_tree",
    "draw_system_scores",
    "draw_label_matrix",
    "label_order",
]
