"""The learners' name for :mod:`latentstruct.params` (the one parameter-validation
mechanism, a leaf module so that tasks use it too); kept so that learner modules and user
code importing ``latentstruct.learners.params`` keep working."""

from ..params import *  # noqa: F401,F403
from ..params import __all__  # noqa: F401
