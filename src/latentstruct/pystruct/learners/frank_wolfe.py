"""``FrankWolfeSSVM``: the structured SVM's dual by (block-coordinate) Frank-Wolfe, an
adaptor onto ``latentstruct.learners.FrankWolfeSSVM``."""

from __future__ import annotations

from latentstruct.exceptions import ConfigError
from latentstruct.learners.ssvm import frank_wolfe
from latentstruct.params import BOOL, RANDOM_STATE, Interval, Options
from latentstruct.pystruct.learners.base import BaseSSVM, COMMON_CONSTRAINTS
from latentstruct.pystruct.learners.structure import ModelStructure

__all__ = ["FrankWolfeSSVM"]


class FrankWolfeSSVM(BaseSSVM):
    """Structured SVM trained on its dual by the block-coordinate Frank-Wolfe algorithm
    (Lacoste-Julien, Jaggi, Schmidt and Pletscher 2013, Algorithm 3 with line search,
    Algorithm 4's weighted averaging), or by batch Frank-Wolfe (their Algorithm 2):
    ``latentstruct.learners.FrankWolfeSSVM`` (whose docstring states the problem and the
    algorithm) on this model, under PyStruct's parameters.

    Parameters (beyond BaseSSVM's): ``batch_mode``, ``line_search``, ``check_dual_every``,
    ``tol``, ``do_averaging``, ``sample_method`` (``'perm'``, ``'rnd'``, ``'seq'``),
    ``random_state``.

    Attributes: ``w``; ``objective_curve_`` (the dual after each epoch, of the averaged
    point when averaging); ``primal_objective_curve_`` (the primal at each gap check, last
    at the final ``w``); ``duality_gaps_`` (each exact gap computed).
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "batch_mode": [BOOL],
        "line_search": [BOOL],
        "check_dual_every": [Interval(int, 1, None)],
        "tol": [Interval(float, 0, None)],
        "do_averaging": [BOOL],
        "sample_method": [Options("perm", "rnd", "seq")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, model, max_iter=1000, C=1.0, verbose=0, n_jobs=1, show_loss_every=0,
                 logger=None, batch_mode=False, line_search=True, check_dual_every=10,
                 tol=.001, do_averaging=True, sample_method="perm", random_state=None):
        super().__init__(model, max_iter, C, verbose, n_jobs, show_loss_every, logger)
        self.batch_mode = batch_mode
        self.line_search = line_search
        self.check_dual_every = check_dual_every
        self.tol = tol
        self.do_averaging = do_averaging
        self.sample_method = sample_method
        self.random_state = random_state

    def fit(self, X, Y, constraints=None, initialize=True):
        """Train on inputs ``X`` and labellings ``Y`` (``constraints`` must be None: the
        Frank-Wolfe learner keeps no working set)."""
        if constraints is not None:
            raise ConfigError("FrankWolfeSSVM.fit: constraints=... is not supported (Frank-Wolfe "
                              "keeps no working set); pass constraints=None")
        Y = self._start(X, Y, initialize)
        learner = frank_wolfe.FrankWolfeSSVM(
            ModelStructure(self.model, relaxed=False), C=self.C, max_iter=self.max_iter,
            tol=self.tol, batch_mode=self.batch_mode, line_search=self.line_search,
            check_dual_every=min(self.check_dual_every, frank_wolfe.PASSES.high),
            do_averaging=self.do_averaging, sample_method=self.sample_method,
            random_state=self.random_state, n_jobs=self.n_jobs, check_inference=False)
        learner.fit(X, Y, callback=self._callback(X, Y))
        self._take(learner)
        self.duality_gaps_ = learner.duality_gaps_
        self._finish()
        return self
