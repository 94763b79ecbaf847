"""Learners: optimisation over any task that offers the capabilities they need.

Each learner is registered by name for the command line (``LEARNERS``) and declares the
task capabilities it requires; ``check_compatible`` and ``valid_learners`` use those
declarations to refuse a mismatched (task, learner) pair before any data is read.  Each
also declares what its hyperparameters may be (``learners.params``), checked in ``fit`` and
in ``check_compatible``; and each iterative learner's ``fit`` takes ``checkpoint=`` and
``resume=`` (``learners.checkpoint``).

The learners are grouped by concept: ``ssvm`` (the structured SVMs, DISTRO among them),
``latent`` (LCLR, J-LIS, the LCLR-variant and their alternating loop), ``online`` (the
perceptron, PA, AROW, latent PA and the state ``partial_fit`` continues) and
``probabilistic`` (the CRF, the hidden-variable reranker and its mixtures); what all of
them share (``base``, ``params``, ``checkpoint*``, ``persistence``, ``inference_check``) is
here.  Import the classes from ``latentstruct.learners``; the old module paths
(``latentstruct.learners.lclr``, ...) still import, with a ``DeprecationWarning``
(``learners.moved``).
"""

from . import moved
from .base import (
    LEARNERS,
    LinearStructuredLearner,
    check_compatible,
    get_learner_class,
    register_learner,
    valid_learners,
)
from .checkpoint import Checkpoint
from .inference_check import InferenceMonitor
from .latent.alternating import StructuredPart, alternating_latent_fit, squared_hinge_objective
from .latent.jlis import JLIS, NormalizedBinaryView
from .latent.lclr import LCLR, LatentBinaryLearner, TwoStage
from .latent.lclr_variant import LCLRVariant
from .online.arow import AROW
from .online.latent_pa import LatentPA, pa_step_size
from .online.perceptron import StructuredPerceptron
from .online.structured_pa import StructuredPA
from .probabilistic.crf import CRF
from .probabilistic.mixture import RerankerMixture, mixture_scores, tune_mixture_weights
from .probabilistic.reranker import HiddenVariableReranker
from .ssvm.distro import DISTRO
from .ssvm.frank_wolfe import FrankWolfeSSVM
from .ssvm.n_slack import NSlackSSVM
from .ssvm.one_slack import OneSlackSSVM
from .ssvm.sgd_ssvm import SGDStructuredSVM
from .ssvm.ssvm import StructuredSVM
from .ssvm.subgradient import SubgradientSSVM

# the module paths before the learners were grouped by concept (issue 53) keep importing
moved.install()

__all__ = [
    "LEARNERS",
    "LinearStructuredLearner",
    "LatentBinaryLearner",
    "get_learner_class",
    "register_learner",
    "check_compatible",
    "valid_learners",
    "Checkpoint",
    "InferenceMonitor",
    "StructuredPart",
    "alternating_latent_fit",
    "squared_hinge_objective",
    "StructuredSVM",
    "StructuredPerceptron",
    "LCLR",
    "TwoStage",
    "JLIS",
    "NormalizedBinaryView",
    "LatentPA",
    "LCLRVariant",
    "pa_step_size",
    "HiddenVariableReranker",
    "RerankerMixture",
    "mixture_scores",
    "tune_mixture_weights",
    "DISTRO",
    "SGDStructuredSVM",
    "CRF",
    "StructuredPA",
    "AROW",
    "OneSlackSSVM",
    "NSlackSSVM",
    "FrankWolfeSSVM",
    "SubgradientSSVM",
]
