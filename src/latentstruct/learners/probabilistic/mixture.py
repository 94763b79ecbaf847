"""Mixtures of rerankers and the base parser (Koo & Collins 2005, §4.3).

The paper combines M trained models by a weighted average of their log-probabilities,

    log p(t_j | s) = Σ_m λ_m log p_m(t_j | s, Θ_m) − Z(s),

where Z(s) does not change the ranking, and tunes the λ_m for parsing accuracy on a
development set; its final MIX also includes the base parser (C99).  Here the base parser
enters through its own score: the mixture score of candidate j is

    score_j = Σ_m λ_m log p_m(t_j | s) + λ_base · base_j

with ``base_j`` the base parser's score of candidate j (e.g. ``candidate.score`` of the k-best
file).  The mixture picks argmax_j score_j (ties: the lower index, i.e. the base order).

:func:`tune_mixture_weights` chooses the weights by coordinate ascent over a grid on a tuning
split (see its docstring); mixtures only need each component's ``predict_log_proba`` on the
same k-best lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ...exceptions import ConfigError, InputError

__all__ = ["mixture_scores", "tune_mixture_weights", "RerankerMixture", "DEFAULT_GRID"]

#: the weights each coordinate may take during tuning
DEFAULT_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def _check_inputs(log_probas, base_scores) -> tuple[int, int]:
    """(M components, n sentences) after checking that every list is aligned."""
    M = len(log_probas)
    n = len(base_scores)
    for m, comp in enumerate(log_probas):
        if len(comp) != n:
            raise InputError(f"component {m} has log-probabilities for {len(comp)} sentences; "
                             f"the base scores cover {n}")
        for i, (lp, b) in enumerate(zip(comp, base_scores)):
            if np.shape(lp) != np.shape(b):
                raise InputError(f"sentence {i}: component {m} scores {np.shape(lp)} candidates, "
                                 f"the base parser {np.shape(b)}; expected the same k-best list")
    return M, n


def mixture_scores(log_probas: Sequence[Sequence[np.ndarray]], base_scores: Sequence[np.ndarray],
                   weights) -> list[np.ndarray]:
    """Σ_m λ_m log p_m(t_j | s) + λ_base · base_j for every candidate of every sentence.

    Parameters
    ----------
    log_probas : M lists (one per component) of n arrays (k_i,), e.g. each component's
        ``predict_log_proba(X)``
    base_scores : n arrays (k_i,), the base parser's candidate scores
    weights : M + 1 floats, (λ_1, …, λ_M, λ_base)

    Returns
    -------
    list of n float arrays (k_i,)
    """
    M, n = _check_inputs(log_probas, base_scores)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (M + 1,) or not np.isfinite(weights).all():
        raise ConfigError(f"weights must be {M + 1} finite numbers (one per component, then the "
                          f"base parser's); got {weights.tolist()}")
    out = []
    for i in range(n):
        s = weights[M] * np.asarray(base_scores[i], dtype=np.float64)
        for m in range(M):
            if weights[m] != 0.0:
                s = s + weights[m] * np.asarray(log_probas[m][i], dtype=np.float64)
        out.append(s)
    return out


def _choose(scores: list[np.ndarray]) -> list[int]:
    return [int(np.argmax(s)) for s in scores]


@dataclass(frozen=True)
class RerankerMixture:
    """Weights of a §4.3 mixture: one per component and one for the base parser's score.

    ``tuning_score`` is the metric the weights reached on the tuning split (None if set by
    hand).
    """

    weights: tuple[float, ...]
    base_weight: float = 0.0
    tuning_score: float | None = None

    @property
    def all_weights(self) -> np.ndarray:
        return np.array([*self.weights, self.base_weight], dtype=np.float64)

    def scores(self, log_probas, base_scores) -> list[np.ndarray]:
        """Mixture score of every candidate (:func:`mixture_scores`)."""
        if len(log_probas) != len(self.weights):
            raise InputError(f"this mixture has {len(self.weights)} components; got "
                             f"log-probabilities of {len(log_probas)}")
        return mixture_scores(log_probas, base_scores, self.all_weights)

    def predict(self, log_probas, base_scores) -> list[int]:
        """Index of the best candidate of every sentence (ties: the lower index)."""
        return _choose(self.scores(log_probas, base_scores))

    def to_json(self) -> dict:
        return {"weights": list(self.weights), "base_weight": self.base_weight,
                "tuning_score": self.tuning_score}

    @classmethod
    def from_json(cls, obj: dict) -> "RerankerMixture":
        return cls(tuple(float(v) for v in obj["weights"]), float(obj["base_weight"]),
                   obj.get("tuning_score"))


def tune_mixture_weights(log_probas, base_scores, targets, evaluate: Callable, *,
                         grid=DEFAULT_GRID, metric: str = "uas", n_rounds: int = 5,
                         random_state=0) -> RerankerMixture:
    """Weights maximising ``evaluate(targets, predictions)[metric]`` on a tuning split.

    Coordinate ascent over a grid: start from λ_m = 1 for every component and λ_base = 0;
    in each round visit the M + 1 coordinates in the order ``rng.permutation(M + 1)``
    (``rng = np.random.default_rng(random_state)``, one permutation per round) and set each
    to the grid value with the best metric, the others fixed (a tie keeps the current value,
    so a round that finds nothing better changes nothing; among new values the first in grid
    order wins).  Stop after a round without change or after ``n_rounds``.  The metric never
    decreases, so the result is at least as good as the start on the tuning split; being a
    grid search it can stop at a coordinate-wise optimum.

    Parameters
    ----------
    log_probas, base_scores : as for :func:`mixture_scores`
    targets : the tuning split's encoded targets (what ``evaluate`` takes)
    evaluate : callable ``(targets, predictions) -> dict`` (the task's ``evaluate``)
    grid : values each weight may take
    metric : key of the metric to maximise
    n_rounds : int >= 1
    random_state : seeds the coordinate order

    Returns
    -------
    RerankerMixture with ``tuning_score`` set.
    """
    M, n = _check_inputs(log_probas, base_scores)
    if M == 0:
        raise ConfigError("a mixture needs at least one component")
    grid = [float(g) for g in grid]
    if not grid or not all(np.isfinite(grid)):
        raise ConfigError(f"grid must be a non-empty list of finite numbers; got {grid}")
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, int) or n_rounds < 1:
        raise ConfigError(f"n_rounds must be an int >= 1; got {n_rounds!r}")

    def value(w) -> float:
        result = evaluate(targets, _choose(mixture_scores(log_probas, base_scores, w)))
        if metric not in result or result[metric] is None:
            raise ConfigError(f"evaluate returned no {metric!r}; it gave {sorted(result)}")
        return float(result[metric])

    weights = np.ones(M + 1)
    weights[M] = 0.0
    best = value(weights)
    rng = np.random.default_rng(random_state)
    for _ in range(n_rounds):
        changed = False
        for d in rng.permutation(M + 1):
            current = weights[d]
            for g in grid:
                if g == current:
                    continue
                trial = weights.copy()
                trial[d] = g
                v = value(trial)
                if v > best:
                    best, weights, changed = v, trial, True
        if not changed:
            break
    return RerankerMixture(tuple(float(v) for v in weights[:M]), float(weights[M]), best)
