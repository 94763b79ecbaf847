"""Graph alignment (LCLR §4): word / edge mapping and deletion variables tied by (6)–(11).

The intermediate representation of paraphrase identification and RTE (Chang et al. 2010,
§4) aligns two graphs (vertices = words, directed edges = dependency relations).  This is
the numeric layer only; tasks turn words into part scores.  The modules, bottom up:

* :mod:`~latentstruct.inference.graph_alignment.problem`: the variables, the constraints and
  how they are read, :class:`GraphAlignmentProblem`;
* :mod:`~latentstruct.inference.graph_alignment.alignments`: :class:`GraphPartScores`,
  :class:`GraphAlignment`, and the brute-force reference (:func:`enumerate_alignments`,
  :func:`alignment_score`, :func:`check_alignment`);
* :mod:`~latentstruct.inference.graph_alignment.constraints`: the sparse constraint matrix
  (and the strengthening rows);
* :mod:`~latentstruct.inference.graph_alignment.branch_and_bound`: the LP relaxation and an
  exact branch-and-bound over it (arrays only, no alignment classes);
* :mod:`~latentstruct.inference.graph_alignment.solver`: :class:`GraphAlignmentILP`, the
  exact argmax, cheapest exact stage first.
"""

from latentstruct.inference.graph_alignment.alignments import (
    GraphAlignment,
    GraphPartScores,
    alignment_score,
    alignment_vector,
    check_alignment,
    enumerate_alignments,
)
from latentstruct.inference.graph_alignment.problem import VARIABLE_TYPES, GraphAlignmentProblem
from latentstruct.inference.graph_alignment.solver import GraphAlignmentILP

__all__ = [
    "VARIABLE_TYPES",
    "GraphAlignmentProblem",
    "GraphPartScores",
    "GraphAlignment",
    "GraphAlignmentILP",
    "check_alignment",
    "enumerate_alignments",
    "alignment_score",
    "alignment_vector",
]
