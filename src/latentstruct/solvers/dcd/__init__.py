"""Grouped squared-hinge (L2-loss) dual coordinate descent: the shared QP engine.

Structured SVM, LCLR (Chang et al. 2010, Eq. 5) and J-LIS (Chang et al. 2010, Eq. 9) all reduce
to one quadratic program over a *pool* of linear constraints, each belonging to a slack group
(normally one group per example)::

    min_w,xi   1/2 ||w||^2 + sum_g C_g xi_g^2
    s.t.       w . d_k >= b_k - xi_{g(k)}        for every active constraint k

so that ``xi_g = max(0, max_{k in g} (b_k - w . d_k))``.  Its dual has only box constraints::

    max_{alpha >= 0}  sum_k alpha_k b_k - 1/2 ||sum_k alpha_k d_k||^2 - sum_g A_g^2 / (4 C_g),
    A_g = sum_{k in g} alpha_k,      w = sum_k alpha_k d_k,

which :func:`solve_grouped_dcd` maximises by coordinate descent (Hsieh et al. 2008, the L2-loss
dual CD of LIBLINEAR; J-LIS Algorithm 3) with LIBLINEAR's shrinking heuristic.

:class:`ConstraintPool` is the persistent working set: it stores the constraints in growable CSR
arrays together with their dual variables, so a solve after adding constraints starts from the
previous alpha ("working sets persist across outer iterations", LCLR footnote 2).

The modules, bottom up: :mod:`~latentstruct.solvers.dcd.kernels` (the numba kernels),
:mod:`~latentstruct.solvers.dcd.validation` (argument checks),
:mod:`~latentstruct.solvers.dcd.pool` (:class:`ConstraintPool`) and
:mod:`~latentstruct.solvers.dcd.solver` (:func:`solve_grouped_dcd`, :class:`DCDWorkspace`,
:func:`fit_binary_squared_hinge`).
"""

from latentstruct.solvers.dcd.pool import Constraint, ConstraintPool
from latentstruct.solvers.dcd.solver import (
    DCDKernelState,
    DCDResult,
    DCDWorkspace,
    fit_binary_squared_hinge,
    solve_grouped_dcd,
)

__all__ = [
    "Constraint",
    "ConstraintPool",
    "DCDResult",
    "solve_grouped_dcd",
    "fit_binary_squared_hinge",
    "DCDWorkspace",
    "DCDKernelState",
]
