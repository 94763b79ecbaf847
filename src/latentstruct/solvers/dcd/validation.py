"""Argument checks shared by the constraint pool and the DCD solvers (``C``, ``tol``, counts,
``w``)."""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.params import POSITIVE, Interval, parameter_validation_skipped, validate_params


def as_weight_vector(w, n_features: int) -> np.ndarray:
    """``w`` as a C-contiguous float64 vector of length ``n_features``, or ValueError."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (n_features,):
        raise ValueError(f"w must have shape ({n_features},), got {w.shape}")
    return w


#: the DCD solvers' scalar arguments: each range declared once, checked by
#: :func:`check_arguments` (scikit-learn's wording, as a learner's parameters are)
DCD_CONSTRAINTS = {
    "n_features": [Interval(int, 1, None)],
    "n_groups": [Interval(int, 1, None)],
    "max_iter": [Interval(int, 1, None)],
    "tol": [POSITIVE],
    "gap_tol": [POSITIVE, None],
}


def check_arguments(owner: str, **values) -> None:
    """Raise ``ConfigError`` for the first of ``values`` outside :data:`DCD_CONSTRAINTS`.

    Skipped inside a learner's ``fit``: it checked the parameters these come from on
    entering it (``dcd_max_iter``, ``dcd_tol``, ...), and the sizes come from its structure,
    so a solver called once per outer iteration does not check them again.
    """
    if not parameter_validation_skipped():
        validate_params(owner, DCD_CONSTRAINTS, values)


def check_C(C, n_groups: int) -> np.ndarray:
    """C as a float64 array of shape (n_groups,), every entry finite and > 0."""
    try:
        arr = np.asarray(C, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(
            f"C must be a positive float or an array of {n_groups} positive floats (one per "
            f"slack group), got {C!r}"
        ) from None
    if arr.ndim == 0:
        value = float(arr)
        if not (np.isfinite(value) and value > 0.0):
            raise ConfigError(
                f"C must be a positive finite float (or one per slack group), got {value!r}; "
                "use a small positive C instead of 0"
            )
        return np.full(n_groups, value)
    if arr.shape != (n_groups,):
        raise ConfigError(
            f"C must be a scalar or have shape ({n_groups},) (one value per slack group), "
            f"got shape {arr.shape}"
        )
    bad = ~(np.isfinite(arr) & (arr > 0.0))
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        raise ConfigError(
            f"C must be positive and finite for every slack group, got C[{g}] = "
            f"{float(arr[g])!r} ({int(bad.sum())} bad value(s) of {n_groups}); "
            "use a small positive C instead of 0"
        )
    return np.ascontiguousarray(arr)
