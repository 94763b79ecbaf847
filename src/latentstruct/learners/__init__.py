"""Learners: optimisation over any task (registered by name for the CLI)."""

from .base import LEARNERS, LinearStructuredLearner, get_learner_class, register_learner
from .jlis import JLIS
from .lclr import LCLR, LatentBinaryLearner, TwoStage
from .latent_pa import LatentPA, LCLRVariant
from .ssvm import StructuredSVM

__all__ = [
    "LEARNERS",
    "LinearStructuredLearner",
    "LatentBinaryLearner",
    "get_learner_class",
    "register_learner",
    "StructuredSVM",
    "LCLR",
    "TwoStage",
    "JLIS",
]
