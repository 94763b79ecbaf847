"""The online learners: one example at a time, each pass continuing from the last
(``partial_fit``).

==================  ===================================================================
``online``          what they share: ``OnlineState``, ``OnlineLearnerMixin``, the order
                    of visits
``perceptron``      ``StructuredPerceptron``: Collins' (averaged) structured perceptron
``online_steps``    the loop of CRFsuite's online learners: decode, and after a mistake
                    take one step
``structured_pa``   ``StructuredPA``: passive-aggressive steps (CRFsuite's ``pa``)
``arow``            ``AROW``: adaptive regularisation of weights (CRFsuite's ``arow``)
``latent_pa``       ``LatentPA``: online latent passive-aggressive learning of a binary
                    decision over a hidden structure
==================  ===================================================================

The mini-batch SGD structural SVM (``ssvm.sgd_ssvm``) is online too and shares
``online``'s state.  The classes are exported by :mod:`latentstruct.learners`.
"""

from ..moved import forward_names

# this package was the module online.py before issue 53: its names still resolve here,
# with a DeprecationWarning (pickles naming latentstruct.learners.online)
__getattr__ = forward_names(__name__, __path__)
