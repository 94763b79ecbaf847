"""PyStruct's ``pystruct.learners``: the structured SVM learners, each with PyStruct's
parameters and attributes (``w``, ``objective_curve_``, ``primal_objective_curve_``,
``loss_curve_``, ``timestamps_``).

==========================  ===============================================================
``OneSlackSSVM``            one-slack cutting planes (Joachims et al. 2009), the QP over the
                            working set solved exactly by HiGHS
``NSlackSSVM``              n-slack cutting planes (Tsochantaridis et al. 2005), exact QP
``FrankWolfeSSVM``          block-coordinate Frank-Wolfe (Lacoste-Julien et al. 2013), or
                            batch Frank-Wolfe, with line search and weighted averaging
``SubgradientSSVM``         stochastic subgradient descent with momentum and averaging
``StructuredPerceptron``    Collins' structured perceptron, online or batch, averaged
``LatentSSVM``              Yu and Joachims' CCCP over a base learner
``SubgradientLatentSSVM``   subgradient descent on the latent SSVM's objective
``PrimalDSStructuredSVM``   the primal objective minimised by Nelder-Mead's downhill simplex
==========================  ===============================================================

All of them minimise PyStruct's objective with linear slacks,
``1/2 ||w||^2 + C sum_i xi_i``.  latentstruct's own ``StructuredSVM`` (``latentstruct.learners``)
solves the squared-hinge variant ``1/2 ||w||^2 + C sum_i xi_i^2`` by dual coordinate descent:
a different problem (it punishes large violations more, small ones less), usually much
faster to solve.
"""

from latentstruct.pystruct.learners.base import BaseSSVM
from latentstruct.pystruct.learners.cutting_plane import NSlackSSVM
from latentstruct.pystruct.learners.frank_wolfe import FrankWolfeSSVM
from latentstruct.pystruct.learners.latent import LatentSSVM
from latentstruct.pystruct.learners.one_slack import OneSlackSSVM
from latentstruct.pystruct.learners.perceptron import StructuredPerceptron
from latentstruct.pystruct.learners.primal_ds import PrimalDSStructuredSVM
from latentstruct.pystruct.learners.subgradient import SubgradientLatentSSVM, SubgradientSSVM

__all__ = ["BaseSSVM", "NSlackSSVM", "OneSlackSSVM", "FrankWolfeSSVM", "SubgradientSSVM",
           "StructuredPerceptron", "LatentSSVM", "SubgradientLatentSSVM", "PrimalDSStructuredSVM"]
