"""Which weights a learner trains: every feature of its structure, or CRFsuite's set.

CRFsuite fixes its feature set before training: a state feature for each (attribute, label)
pair of the training data (every pair with ``feature.possible_states``) and a transition
for each label bigram of the gold sequences (every bigram with
``feature.possible_transitions``).  The other weights stay zero, so a model is smaller and
each update touches fewer weights.  The CRF and the online learners offer that choice with
the same three parameters (:data:`FEATURE_SET_CONSTRAINTS`); this module computes the set
once, at the start of ``fit`` (or of the first ``partial_fit``), as ``support_`` (sorted
weight indices, or None for every weight), and saves and checks it in model files.

A structure that knows its feature layout offers ``observed_feature_support(X, Y,
possible_states=..., possible_transitions=...)`` (a chain does); for any other the set is
the union of the gold structures' joint features.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..exceptions import ConfigError, ModelFormatError
from ..params import BOOL, Options

__all__ = ["FEATURE_SET_CONSTRAINTS", "feature_support", "support_mask", "save_support",
           "restore_support"]

#: the parameters of the choice, as ``_parameter_constraints`` entries
FEATURE_SET_CONSTRAINTS = {"feature_set": [Options("observed", "all")],
                           "possible_states": [BOOL], "possible_transitions": [BOOL]}


def feature_support(structure, X, Y, feature_set: str, possible_states: bool = False,
                    possible_transitions: bool = True) -> np.ndarray | None:
    """The indices of the weights to train on examples ``X`` with gold structures ``Y``
    (None: all of them).  ``feature_set="observed"`` is CRFsuite's set (see the module
    docstring); ``possible_states``/``possible_transitions`` other than False/True need a
    structure whose ``observed_feature_support`` takes them, else a ConfigError."""
    if feature_set == "all":
        return None
    observed = getattr(structure, "observed_feature_support", None)
    choice = {}
    if possible_states or not possible_transitions:
        choice = {"possible_states": bool(possible_states),
                  "possible_transitions": bool(possible_transitions)}
        if observed is None or "possible_states" not in inspect.signature(observed).parameters:
            raise ConfigError(
                f"possible_states={possible_states!r} / possible_transitions="
                f"{possible_transitions!r}: structure {structure.identity.name!r} has no such "
                f"choice of feature set; leave them at False / True, or use feature_set='all'")
    if observed is not None:
        return np.asarray(observed(X, Y, **choice), dtype=np.int64)
    idx = [structure.joint_feature(X[i], Y[i]).indices for i in range(len(X))]
    return np.unique(np.concatenate(idx)).astype(np.int64) if idx else np.zeros(0, np.int64)


def support_mask(support: np.ndarray | None, n: int) -> np.ndarray:
    """``support`` as one byte per weight (1: trained), or an empty array for every weight
    (what a compiled loop tests with one comparison)."""
    if support is None:
        return np.zeros(0, np.uint8)
    mask = np.zeros(n, np.uint8)
    mask[support] = 1
    return mask


def save_support(meta: dict, arrays: dict, support: np.ndarray | None) -> None:
    """Record ``support`` in a model file's metadata and arrays (``all_features``,
    ``support_``)."""
    meta["all_features"] = support is None
    if support is not None:
        arrays["support_"] = support


def restore_support(meta: dict, arrays: dict, n: int) -> np.ndarray | None:
    """The support a model file records (None: every weight), checked: increasing indices
    below ``n``; a damaged record is a ModelFormatError."""
    if meta.get("all_features", True):
        return None
    support = arrays.get("support_")
    if support is None:
        raise ModelFormatError("the model trains a subset of its features but the file lacks "
                               "'support_'; the file is damaged. Retrain the model.")
    s = np.asarray(support)
    if s.dtype.kind not in "iu" or s.ndim != 1 or (s.size and (s.min() < 0 or s.max() >= n
                                                             or np.any(np.diff(s) <= 0))):
        raise ModelFormatError(f"the model's 'support_' must be increasing feature indices "
                               f"below {n}; the file is damaged. Retrain the model.")
    return s.astype(np.int64)
