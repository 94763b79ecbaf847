"""Validation of the dependency task's parameters (shared by ``fit``, ``read`` and loading)."""

from __future__ import annotations

import numpy as np

from ...data.dependency import PTB_SPLITS
from ...exceptions import ConfigError
from ...limits import DEP_HASH_BITS, LABEL_HASH_BITS, check_bounded

__all__ = ["DependencyParams", "parse_distance_bins"]


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


class DependencyParams:
    """``_validate_params`` and ``_bins`` of ``DependencyTask``."""

    def _validate_params(self) -> None:
        defaults = self.param_defaults()
        for name, bound in (("hash_bits", DEP_HASH_BITS), ("label_hash_bits", LABEL_HASH_BITS)):
            check_bounded(name, getattr(self, name), bound, default=defaults[name])
        for name, allowed in (("single_root", ("auto", True, False)),
                              ("labelled", ("auto", True, False)),
                              ("pos", ("gold", "predicted")),
                              ("pos_column", ("auto", "upos", "xpos")),
                              ("ptb_split", (*PTB_SPLITS, "auto"))):
            v = getattr(self, name)
            if not any(v is a or (isinstance(a, str) and v == a) for a in allowed):
                raise ConfigError(f"{name} must be one of {', '.join(map(repr, allowed))}, "
                                  f"got {v!r}")
        if self.pos == "predicted" and self.pos_column == "xpos":
            raise ConfigError("pos='predicted' tags words with the project's UPOS tagger, so "
                              "pos_column must be 'upos' or 'auto', not 'xpos'")
        self._bins()
        self._validate_tagger_params()

    def _bins(self) -> np.ndarray:
        return parse_distance_bins(self.distance_bins)
