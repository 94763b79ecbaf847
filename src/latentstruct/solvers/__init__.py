"""Pure numeric kernels shared by the learners.

``dcd``: grouped squared-hinge (L2-loss) dual coordinate descent over a persistent
:class:`ConstraintPool` -- the one QP engine of StructuredSVM, LCLR and J-LIS.
``sgd``: stochastic gradient descent (lazy L2) and L-BFGS over a loss given as a callable --
the optimisers of the log-linear hidden-variable reranker.
``owlqn``: OWL-QN (Andrew & Gao 2007), L-BFGS for an L1-regularised smooth objective, as
libLBFGS and CRFsuite run it -- the CRF's optimiser when ``c1 > 0``.
"""

from latentstruct.solvers.dcd import (
    Constraint,
    ConstraintPool,
    DCDResult,
    DCDWorkspace,
    fit_binary_squared_hinge,
    solve_grouped_dcd,
)
from latentstruct.solvers.owlqn import OWLQNResult, owlqn
from latentstruct.solvers.sgd import LBFGSResult, SGDResult, lbfgs, scatter_add, sgd

__all__ = [
    "Constraint",
    "ConstraintPool",
    "DCDResult",
    "DCDWorkspace",
    "fit_binary_squared_hinge",
    "solve_grouped_dcd",
    "SGDResult",
    "LBFGSResult",
    "sgd",
    "lbfgs",
    "scatter_add",
    "OWLQNResult",
    "owlqn",
]
