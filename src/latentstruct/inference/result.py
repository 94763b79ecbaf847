"""The small frozen result every decoder returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


__all__ = ["DecodeResult", "EXACT", "TIME_LIMIT", "INFEASIBLE", "ERROR"]

EXACT = "exact"
TIME_LIMIT = "time_limit"  # a feasible but possibly suboptimal structure
INFEASIBLE = "infeasible"
ERROR = "error"


@dataclass(frozen=True)
class DecodeResult:
    """Result of an argmax.

    structure : the decoded structure (its meaning is documented by each decoder)
    score : its score under the part scores given to the decoder
    status : ``"exact"``, ``"time_limit"``, ``"infeasible"`` or ``"error"``
    stats : solver statistics (time, nodes, ...) where the decoder has any
    """

    structure: Any
    score: float
    status: str = EXACT
    stats: dict = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return self.status == EXACT

    def __reduce__(self):
        # Rebuilt through the constructor: unpickling a frozen dataclass by its default
        # route took ~70 us per result against ~4 us this way (800 MSRP decodes: 58 ms
        # against 3.6 ms), and process and cluster workers send one back per example.
        return (DecodeResult, (self.structure, self.score, self.status, self.stats))
