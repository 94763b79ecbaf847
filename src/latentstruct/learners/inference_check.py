"""A learner never trusts a decoder blindly.

:class:`InferenceMonitor` is what a learner uses around every decode: it counts results whose
``DecodeResult.status`` is not ``exact`` (an ILP that hit its time limit, an infeasible
model), checks that the score a decoder reports is the score of the structure it returns
(w . Phi(x, h) from the task's own feature map), and that an argmax is no worse than a
structure the learner already knows (the previous latent completion, a cached structure, the
gold structure).  With ``check=True`` the first failure raises ``InferenceError`` naming the
example and the fix; with ``check=False`` failures are counted and summarised in one
``InexactInferenceWarning`` at the end of ``fit``.
"""

from __future__ import annotations

import warnings
from collections import Counter

from ..exceptions import InexactInferenceWarning, InferenceError, user_stacklevel
from ..inference.result import EXACT

__all__ = ["InferenceMonitor", "SCORE_RTOL"]

#: relative tolerance of score comparisons (float rounding and LP/MIP feasibility tolerances)
SCORE_RTOL = 1e-6


def score_tolerance(*values: float) -> float:
    """Absolute tolerance of a comparison between these scores: SCORE_RTOL relative, at least SCORE_RTOL."""
    return SCORE_RTOL * max(1.0, *(abs(v) for v in values))


class InferenceMonitor:
    """Counts and checks the decodes of one ``fit``.

    Parameters
    ----------
    learner : str
        Name used in messages.
    check : bool
        Raise ``InferenceError`` at the first non-exact or inconsistent decode.
    """

    def __init__(self, learner: str, check: bool):
        self.learner = learner
        self.check = bool(check)
        self.statuses: Counter = Counter()
        self.n_decodes = 0
        self.n_inconsistent = 0
        self.per_iteration: list[int] = []
        self._iteration = 0

    # --- recording -------------------------------------------------------------------
    def observe(self, results, what: str, indices=None) -> None:
        """Record the statuses of ``results`` (DecodeResults) of the examples ``indices``."""
        for k, res in enumerate(results):
            self.n_decodes += 1
            status = getattr(res, "status", EXACT)
            if status == EXACT:
                continue
            self.statuses[status] += 1
            self._iteration += 1
            if self.check:
                example = k if indices is None else int(indices[k])
                raise InferenceError(
                    f"{self.learner}: the {what} of example {example} returned status "
                    f"{status!r}, not 'exact' ({getattr(res, 'stats', {})}); the objective's "
                    "guarantee (Theorem 1) needs exact inference. Give the decoder more time "
                    "(e.g. --option time_limit=...) or pass check_inference=False to accept "
                    "inexact decodes (they are then counted in n_inexact_decodes_ and warned about)."
                )

    def consistent(self, reported: float, recomputed: float, what: str, example: int) -> bool:
        """Whether a reported score equals the score recomputed from the structure."""
        if abs(reported - recomputed) <= score_tolerance(reported, recomputed):
            return True
        self._fail(
            f"the {what} of example {example} reports the score {reported:.10g} but "
            f"w . Phi(x, h) of the structure it returns is {recomputed:.10g}; the task's "
            "argmax and its feature map disagree"
        )
        return False

    def not_worse(self, score: float, known: float, what: str, example: int) -> bool:
        """Whether an argmax scores at least as high as a structure already known."""
        if score >= known - score_tolerance(score, known):
            return True
        self._fail(
            f"the {what} of example {example} scores {score:.10g}, below {known:.10g}, the "
            "score of a structure the decoder must have considered; the argmax is not a maximum"
        )
        return False

    def report(self, message: str) -> None:
        """Count (or, checking, raise for) an inconsistency a learner found itself (an
        argmax less violated than a constraint its working set already holds)."""
        self._fail(message)

    def _fail(self, message: str) -> None:
        self.n_inconsistent += 1
        if self.check:
            raise InferenceError(
                f"{self.learner}: {message}. Check the task (its decoder against every "
                "legal structure) with latentstruct.testing.check_task(task, examples, "
                "enumerate=...), or pass check_inference=False to skip this check."
            )

    def end_iteration(self) -> None:
        """Close one outer iteration: record its count of non-exact decodes."""
        self.per_iteration.append(self._iteration)
        self._iteration = 0

    # --- summary ---------------------------------------------------------------------
    @property
    def n_inexact(self) -> int:
        return sum(self.statuses.values())

    def warn(self) -> None:
        """One warning summarising every non-exact or inconsistent decode of the fit."""
        if not self.n_inexact and not self.n_inconsistent:
            return
        parts = []
        if self.n_inexact:
            kinds = ", ".join(f"{n} {s}" for s, n in sorted(self.statuses.items()))
            parts.append(f"{self.n_inexact} of {self.n_decodes} decodes were not exact ({kinds})")
        if self.n_inconsistent:
            parts.append(f"{self.n_inconsistent} decodes were inconsistent (a reported score "
                         "did not match its structure, or an argmax was beaten by a known "
                         "structure)")
        warnings.warn(
            f"{self.learner}: {'; '.join(parts)}. The objective may not decrease monotonically "
            "and the model may be worse than with exact inference.",
            InexactInferenceWarning, stacklevel=user_stacklevel())
