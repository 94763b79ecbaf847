"""Learners: optimisation over any task that offers the capabilities they need.

Each learner is registered by name for the command line (``LEARNERS``) and declares the
task capabilities it requires; ``check_compatible`` and ``valid_learners`` use those
declarations to refuse a mismatched (task, learner) pair before any data is read.  Each
also declares what its hyperparameters may be (``learners.params``), checked in ``fit`` and
in ``check_compatible``; and each iterative learner's ``fit`` takes ``checkpoint=`` and
``resume=`` (``learners.checkpoint``).
"""

from .alternating import StructuredPart, alternating_latent_fit, squared_hinge_objective
from .arow import AROW
from .base import (
    LEARNERS,
    LinearStructuredLearner,
    check_compatible,
    get_learner_class,
    register_learner,
    valid_learners,
)
from .checkpoint import Checkpoint
from .crf import CRF
from .distro import DISTRO
from .frank_wolfe import FrankWolfeSSVM
from .inference_check import InferenceMonitor
from .jlis import JLIS, NormalizedBinaryView
from .latent_pa import LatentPA, pa_step_size
from .lclr import LCLR, LatentBinaryLearner, TwoStage
from .lclr_variant import LCLRVariant
from .n_slack import NSlackSSVM
from .one_slack import OneSlackSSVM
from .mixture import RerankerMixture, mixture_scores, tune_mixture_weights
from .perceptron import StructuredPerceptron
from .reranker import HiddenVariableReranker
from .sgd_ssvm import SGDStructuredSVM
from .ssvm import StructuredSVM
from .structured_pa import StructuredPA
from .subgradient import SubgradientSSVM

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
