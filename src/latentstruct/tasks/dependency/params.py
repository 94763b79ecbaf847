"""The dependency task's ``distance_bins`` parameter: its parser, which the task's
``_parameter_constraints`` and ``fit`` share."""

from __future__ import annotations

import numpy as np

from ...exceptions import ConfigError

__all__ = ["parse_distance_bins"]


def parse_distance_bins(raw) -> np.ndarray:
    """``distance_bins`` as an int64 array: strictly increasing integers starting at 1, given
    as a sequence or a comma-separated string ("1,2,4,8"); ConfigError otherwise."""
    given = raw
    if isinstance(raw, str):
        try:
            raw = [int(t) for t in raw.split(",") if t.strip()]
        except ValueError:
            raw = None
    try:
        bins = [int(b) for b in raw if not isinstance(b, bool) and int(b) == b]
        complete = len(bins) == len(list(raw))
    except (TypeError, ValueError):
        bins, complete = [], False
    if (not bins or not complete or bins[0] != 1
            or any(a >= b for a, b in zip(bins, bins[1:]))):
        raise ConfigError(f"distance_bins must be strictly increasing integers starting at 1, "
                          f"such as (1, 2, 3, 4, 5, 10) or '1,2,4,8', got {given!r}")
    return np.asarray(bins, dtype=np.int64)
