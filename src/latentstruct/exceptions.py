"""Typed exceptions shared by every layer.

Errors say what was wrong, what was expected and how to fix it.  Input errors carry the
file and line where they apply, so the CLI can print ``file:line: message`` and exit 2.
"""

from __future__ import annotations

import os
import sys
import warnings


__all__ = [
    "LatentStructError",
    "InputError",
    "ModelFormatError",
    "ConfigError",
    "InferenceError",
    "ConvergenceWarning",  # noqa: F822 - provided lazily by __getattr__
    "InexactInferenceWarning",
    "ObjectiveIncreaseWarning",
    "NotFittedError",  # noqa: F822 - provided lazily by __getattr__
    "check_is_fitted",
    "is_fitted",
    "warn_convergence",
    "warn_user",
    "user_stacklevel",
]


class LatentStructError(Exception):
    """Base class of every error this library raises on purpose."""


class InputError(LatentStructError, ValueError):
    """A data file or in-memory input is malformed.

    ``path`` and ``line`` (1-based) locate the problem when it comes from a file.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


class ModelFormatError(LatentStructError, ValueError):
    """A model file is truncated, of another format version, or of another task."""


class ConfigError(LatentStructError, ValueError):
    """A hyperparameter, option or task name is invalid."""


class InferenceError(LatentStructError, RuntimeError):
    """A decoder failed or returned an inconsistent result."""


class InexactInferenceWarning(UserWarning):
    """Some decodes of a fit were not exact (time limits) or not consistent."""


class ObjectiveIncreaseWarning(UserWarning):
    """A latent learner's objective increased between outer iterations (Theorem 1 broken)."""


class PerformanceWarning(UserWarning):
    """A setting that works but runs far slower than another one would (with the fix)."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first frame outside this
    package: the user's own ``fit`` call (or scikit-learn's, under ``GridSearchCV``), not
    the learner line that raised it, however deep the library's own calls go."""
    frame = sys._getframe(1)  # the caller of user_stacklevel: level 1 of warnings.warn
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` attributed to the user's code (see
    :func:`user_stacklevel`)."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


def warn_convergence(message: str) -> None:
    """A ``ConvergenceWarning`` that points at the user's ``fit`` call."""
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(message, ConvergenceWarning, stacklevel=user_stacklevel())


#: the fix of an estimator that is not fitted (scikit-learn's sentence)
FIT_FIRST = "Call 'fit' with appropriate arguments before using this estimator."


def is_fitted(estimator, attributes=None) -> bool:
    """Whether ``estimator`` is fitted, by the one rule of :func:`check_is_fitted` (which
    raises where this answers False): each of ``attributes`` (a name or a list of names) is
    set and not None, when they are given; else the estimator's own query
    ``__sklearn_is_fitted__()``; else some attribute ending in ``_`` is set.  It answers
    for a task, a learner, a featurizer or an estimator alike, as scikit-learn's
    ``_is_fitted`` does."""
    if attributes is not None:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        return all(getattr(estimator, name, None) is not None for name in names)
    if hasattr(estimator, "__sklearn_is_fitted__"):
        return bool(estimator.__sklearn_is_fitted__())
    return any(k.endswith("_") and not k.startswith("__") for k in vars(estimator))


def check_is_fitted(estimator, attributes=None, fix: str | None = None, *,
                    what: str | None = None, why: str = "") -> None:
    """Raise scikit-learn's ``NotFittedError`` (a ``ValueError``) unless ``estimator`` is
    fitted: the one fitted check of the package (learners, tasks, featurizers, estimators).

    Fitted means, as in scikit-learn's ``check_is_fitted``: each of ``attributes`` (a name
    or a list of names) is set and not None, when they are given; else the estimator's own
    query ``__sklearn_is_fitted__()`` (every class of the package that can be unfitted has
    one); else some attribute ending in ``_`` is set.

    Every "not fitted" error has one shape: ``"{what} is not fitted yet[: {why}]. {fix}"``,
    e.g. "This LCLR instance is not fitted yet. Call 'fit' with appropriate arguments before
    using this estimator."  ``what`` defaults to ``"This {class} instance"``; ``why`` says
    what is missing where that helps; ``fix`` (a sentence ending in a full stop) defaults to
    the class's ``_fit_hint`` where it has one (a task: "Call fit(dataset) on training data
    first."), else scikit-learn's sentence.

    Code written against the earlier form, ``check_is_fitted(fitted, what, fix, why=...)``
    with the condition itself first (a bool), keeps working: the condition is the answer.
    """
    if isinstance(estimator, bool) or type(estimator).__name__ in ("bool", "bool_"):
        fitted, what = bool(estimator), what or attributes
        if fitted:
            return
        estimator = None
    else:
        fitted = is_fitted(estimator, attributes)
    if fitted:
        return
    from sklearn.exceptions import NotFittedError

    what = what or f"This {type(estimator).__name__} instance"
    fix = fix or getattr(estimator, "_fit_hint", FIT_FIRST)
    reason = f": {why}" if why else ""
    raise NotFittedError(f"{what} is not fitted yet{reason}. {fix}")


def __getattr__(name):
    # scikit-learn's warning and error classes, imported on first use: importing
    # scikit-learn takes about a second, and `latentstruct --help` must not pay for it.
    if name in ("ConvergenceWarning", "NotFittedError"):
        import sklearn.exceptions

        return getattr(sklearn.exceptions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
