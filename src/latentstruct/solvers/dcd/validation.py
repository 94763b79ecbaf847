"""Argument checks shared by the constraint pool and the DCD solvers (``C``, ``tol``, counts,
``w``), and the coalescing of repeated CSR columns."""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import ConfigError
from latentstruct.solvers.dcd.kernels import csr_has_repeats


def without_repeated_columns(X):
    """X itself if no row repeats a column (order within a row does not matter), else a
    copy with the repeats summed."""
    if X.has_canonical_format or not csr_has_repeats(X.indptr, X.indices, X.shape[1]):
        return X
    X = X.copy()
    X.sum_duplicates()
    return X


def as_weight_vector(w, n_features: int) -> np.ndarray:
    """``w`` as a C-contiguous float64 vector of length ``n_features``, or ValueError."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (n_features,):
        raise ValueError(f"w must have shape ({n_features},), got {w.shape}")
    return w


def check_positive_int(value, name: str) -> int:
    """``value`` as an int >= 1, or ConfigError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
    if value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value}")
    return int(value)


def check_tol(tol) -> float:
    """``tol`` as a positive finite float, or ConfigError."""
    try:
        t = float(tol)
    except (TypeError, ValueError):
        raise ConfigError(f"tol must be a positive float, got {tol!r}") from None
    if not (np.isfinite(t) and t > 0.0):
        raise ConfigError(f"tol must be a positive finite float, got {tol!r}")
    return t


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
