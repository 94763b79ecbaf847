"""Pure numeric kernels shared by the learners.

``dcd``: grouped squared-hinge (L2-loss) dual coordinate descent over a persistent
:class:`ConstraintPool` -- the one QP engine of StructuredSVM, LCLR and J-LIS.
"""

from latentstruct.solvers.dcd import (
    Constraint,
    ConstraintPool,
    DCDResult,
    DCDWorkspace,
    fit_binary_squared_hinge,
    solve_grouped_dcd,
)

__all__ = [
    "Constraint",
    "ConstraintPool",
    "DCDResult",
    "DCDWorkspace",
    "fit_binary_squared_hinge",
    "solve_grouped_dcd",
]
