"""The dependency task's parameter declaration (``latentstruct.params``) and relations."""

from __future__ import annotations

import numpy as np

from ...data.dependency import PTB_SPLITS
from ...exceptions import ConfigError
from ...limits import DEP_HASH_BITS, LABEL_HASH_BITS
from ...params import BOOL, STR, Interval, Options, Satisfies, bounded

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
    """``_parameter_constraints``, ``_check_param_relations`` and ``_bins`` of
    ``DependencyTask``."""

    _parameter_constraints = {
        "hash_bits": [bounded(DEP_HASH_BITS)],
        "label_hash_bits": [bounded(LABEL_HASH_BITS)],
        "single_root": [Options("auto"), BOOL],
        "labelled": [Options("auto"), BOOL],
        "pos": [Options("gold", "predicted")],
        "pos_column": [Options("auto", "upos", "xpos")],
        "ptb_split": [Options(*PTB_SPLITS, "auto")],
        "distance_bins": [Satisfies(lambda v: parse_distance_bins(v) is not None,
                                    "strictly increasing integers starting at 1, such as "
                                    "(1, 2, 3, 4, 5, 10) or '1,2,4,8'")],
        "tagger_model": [Satisfies(STR.accepts, "the path of a pos model file (a str)"), None],
        "tagger_sentences": [Interval(int, 1)],
    }

    def _check_param_relations(self) -> None:
        if self.pos == "predicted" and self.pos_column == "xpos":
            raise ConfigError("pos='predicted' tags words with the project's UPOS tagger, so "
                              "pos_column must be 'upos' or 'auto', not 'xpos'")

    def _bins(self) -> np.ndarray:
        return parse_distance_bins(self.distance_bins)
