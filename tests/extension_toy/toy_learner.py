"""A contributor's learner (one file): the two-stage baseline with a larger C by default.
It declares what it needs of a task by inheriting ``requires`` (latent-binary and
heuristic).  Copied to ``latentstruct/learners/latent/toy_learner.py`` (the subpackage of
its concept) in a copy of the package by tests/test_extension_path.py."""

from latentstruct.learners.base import register_learner
from latentstruct.learners.latent.lclr import TwoStage


@register_learner("two-stage-c10")
class TwoStageC10(TwoStage):
    """The two-stage system at ``C=10``."""

    def __init__(self, structure=None, C=10.0, tol=1e-3, max_iter=1000, n_jobs=1, random_state=0,
                 check_inference=True, progress=False):
        super().__init__(structure=structure, C=C, tol=tol, max_iter=max_iter, n_jobs=n_jobs,
                         random_state=random_state, check_inference=check_inference,
                         progress=progress)
