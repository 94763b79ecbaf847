"""Declarative parameter checks for learners and tasks (scikit-learn's message style).

This is the one parameter-validation mechanism of the package, a leaf every layer may
import.  Each learner and each task class lists, in ``_parameter_constraints``, what every
parameter may be::

    _parameter_constraints = {"C": [Interval(float, 0, None, closed="neither")],
                              "n_jobs": [NJOBS, None], "init": [Options("two-stage", "zeros")]}

and :func:`validate_params` checks a dict of values against it, raising ``ConfigError`` with
scikit-learn's wording ("The 'n_jobs' parameter of LCLR must be an int other than 0 or
None. Got 'abc' instead.").  What relates two values (``eta0 * lambda1 < 1``,
``pos='predicted'`` with ``pos_column='xpos'``) is checked after the table, by the owner's
``_check_param_relations`` method, from the same entry point.

Checked once per fit, on entering it, as scikit-learn's ``_fit_context`` does: the
``fit`` (and ``partial_fit``) of a task, a learner or a featurizer is wrapped by
:func:`fit_context`, which runs the owner's ``check_params`` and then the fit's body with
validation skipped (:func:`skip_parameter_validation`): the nested fits it drives (a task's
featurizer, J-LIS's initial structural SVM) were built from values checked already, so they
do not check again.  An estimator's ``fit`` checks every value of the task and the learner
up front (``pipelines.training.plan_training``, through ``check_compatible``, the check
``latentstruct train`` runs before any data is read) and trains under the same skip.  An
object used on its own (``StructuredSVM(structure).fit(X, Y)``, ``ChunkTask().fit(data)``)
still checks on entering its own ``fit``.  Values read from a model file are checked
whatever the context (``skip_parameter_validation(False)``).

Why not ``sklearn.utils._param_validation``: it is private (its names and messages have
changed between releases), it raises its own ``InvalidParameterError`` rather than our
``ConfigError``, and it has no notion of a message that depends on where the value came
from (``coef_init`` given as a string on the command line).  The table below is small and
only checks each value on its own.

A count that sizes memory or time has an upper bound (``Interval(int, 1, bound=passes())``,
with the :class:`~latentstruct.limits.Bound` of ``latentstruct.limits``); a value over it
gets scikit-learn's message followed by what it would cost ("... Got 100000000 instead:
each is a pass over the training data ... (3.2 years at max_iter=100,000,000); 10,000
already takes 2.8 hours, the default 50 takes 50 seconds").
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import numbers
from abc import ABC, abstractmethod

import numpy as np

from .exceptions import ConfigError
from .limits import N_JOBS, Bound, passes, solver_epochs

__all__ = ["Constraint", "Interval", "Options", "Satisfies", "BOOL", "STR", "bounded", "NJOBS", "SEED", "GENERATOR", "CALLABLE",
           "COEF_INIT", "validate_params", "check_coef_init", "RANDOM_STATE", "PASSES",
           "SOLVER_EPOCHS", "POSITIVE", "NONNEGATIVE", "skip_parameter_validation",
           "parameter_validation_skipped", "fit_context", "CheckedParams", "store_init_args"]

_SEED_MAX = 2 ** 32 - 1


class Constraint(ABC):
    """One kind of value a hyperparameter may take; ``description`` names it in messages."""

    description = ""

    @abstractmethod
    def accepts(self, value) -> bool:
        """Whether ``value`` is of this kind."""


class Interval(Constraint):
    """A real (``kind=float``) or integer (``kind=int``) number in a range; ``None`` bounds
    are infinite.  Floats must be finite; booleans are never numbers here.  ``bound`` (a
    :class:`~latentstruct.limits.Bound`) sets ``high`` to its limit and says what a value
    over it would cost."""

    def __init__(self, kind, low, high=None, *, closed="both", bound: Bound | None = None):
        if bound is not None:
            high = bound.high
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self.bound = bound
        left = "[" if closed in ("left", "both") and low is not None else "("
        right = "]" if closed in ("right", "both") and high is not None else ")"
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        noun = "an int" if kind is int else "a float"
        self.description = f"{noun} in the range {left}{lo}, {hi}{right}"

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is int:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real) or not np.isfinite(value):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True


class Options(Constraint):
    """One of the given strings."""

    def __init__(self, *values: str):
        self.values = values
        self.description = "a str among {" + ", ".join(repr(v) for v in values) + "}"

    def accepts(self, value) -> bool:
        return isinstance(value, str) and value in self.values


class Satisfies(Constraint):
    """A value ``predicate`` accepts (a check the other kinds cannot say, such as
    "strictly increasing integers starting at 1"); ``description`` names it."""

    def __init__(self, predicate, description: str):
        self.predicate, self.description = predicate, description

    def accepts(self, value) -> bool:
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False

    def why(self, value) -> str:
        """The message of the ``ConfigError`` the predicate raised on ``value`` (a parser
        that names the bad part, such as the unknown view), or ``""``."""
        try:
            self.predicate(value)
        except ConfigError as exc:
            return str(exc)
        except (TypeError, ValueError):
            pass
        return ""


class _Str(Constraint):
    description = "a str"

    def accepts(self, value) -> bool:
        return isinstance(value, str)


class _Bool(Constraint):
    description = "a bool"

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))


class _NJobs(Constraint):
    # joblib's convention: 1 serial, -1 all cores, -2 all but one; 0 means nothing.  Each
    # worker is a thread or a process: past N_JOBS.high they would exhaust memory.
    description = f"an int in the range [-{N_JOBS.high}, {N_JOBS.high}] other than 0"
    bound = N_JOBS

    def accepts(self, value) -> bool:
        return (isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
                and value != 0 and abs(value) <= N_JOBS.high)


class _Generator(Constraint):
    description = "a numpy Generator"

    def accepts(self, value) -> bool:
        return isinstance(value, (np.random.Generator, np.random.RandomState))


class _Callable(Constraint):
    description = "a callable"

    def accepts(self, value) -> bool:
        return callable(value)


class _CoefInit(Constraint):
    """A 1-d array of finite floats (its length is checked in ``fit``, against the task)."""

    description = "an array of n_features floats"

    def accepts(self, value) -> bool:
        if isinstance(value, (str, bytes)) or np.isscalar(value):
            return False
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        return a.ndim == 1 and bool(np.isfinite(a).all())


class _NoneValue(Constraint):
    description = "None"

    def accepts(self, value) -> bool:
        return value is None


BOOL = _Bool()
STR = _Str()
NJOBS = _NJobs()
SEED = Interval(int, 0, _SEED_MAX)
GENERATOR = _Generator()
CALLABLE = _Callable()
COEF_INIT = _CoefInit()
#: what ``random_state`` may be for learners that hand it to ``np.random.default_rng``
RANDOM_STATE = [SEED, GENERATOR, None]
#: a count of training passes over the data (``max_iter``, ``n_epochs``), each decoding
#: every example: at least 1, at most ``limits.MAX_PASSES``
PASSES = Interval(int, 1, closed="both", bound=passes())
#: a count of inner solver epochs (DCD over cached constraints, no decoding)
SOLVER_EPOCHS = Interval(int, 1, closed="both", bound=solver_epochs())
#: a real number above 0 (a regularisation constant, a tolerance, a step size)
POSITIVE = Interval(float, 0, None, closed="neither")
#: a real number at least 0 (a margin, a penalty that may be off)
NONNEGATIVE = Interval(float, 0, None, closed="left")


def bounded(bound: Bound) -> Interval:
    """An integer in ``[bound.low, bound.high]`` whose refusal over the limit says what the
    value would cost (a task's ``hash_bits``, ``window``, ...)."""
    return Interval(int, bound.low, closed="both", bound=bound)


def _join(descriptions: list[str]) -> str:
    if len(descriptions) == 1:
        return descriptions[0]
    return ", ".join(descriptions[:-1]) + " or " + descriptions[-1]


def _as_constraint(c) -> Constraint:
    if c is None:
        return _NoneValue()
    if isinstance(c, Constraint):
        return c
    raise TypeError(f"not a parameter constraint: {c!r}")  # pragma: no cover - a coding error


def _over_bound(allowed, value):
    """The Bound of the constraint among ``allowed`` whose limit ``value`` exceeds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    for c in allowed:
        bound = getattr(c, "bound", None)
        if bound is not None and abs(value) > bound.high:
            return bound
    return None


def validate_params(owner: str, constraints: dict, params: dict, *,
                    n_features: int | None = None, defaults: dict | None = None) -> None:
    """Raise ``ConfigError`` for the first value in ``params`` that none of its
    ``constraints[name]`` accepts; names without constraints (``task``) are skipped.

    ``owner`` names the learner or the task in the message; ``n_features`` (the length ``coef_init``
    must have, when the task is known) makes the ``coef_init`` message exact; ``defaults``
    (the learner's default values) lets the message of a value over a bound say what the
    default costs.
    """
    for name, value in params.items():
        allowed = constraints.get(name)
        if allowed is None:
            continue
        allowed = [_as_constraint(c) for c in allowed]
        if any(c.accepts(value) for c in allowed):
            continue
        if any(c is COEF_INIT for c in allowed) and isinstance(value, (str, bytes)):
            size = "n_features" if n_features is None else str(n_features)
            raise ConfigError(
                f"coef_init must be an array of {size} floats; it cannot be given on the "
                f"command line (got {value!r}). Pass it from Python, e.g. "
                f"{owner}(task, coef_init=w), or leave it unset to start from init")
        message = (f"The {name!r} parameter of {owner} must be "
                   f"{_join([c.description for c in allowed])}. Got {value!r} instead")
        detail = next((w for c in allowed if isinstance(c, Satisfies) for w in [c.why(value)]
                       if w), "")
        if detail:
            raise ConfigError(f"{message}: {detail}")
        bound = _over_bound(allowed, value)
        if bound is not None:
            raise ConfigError(f"{message}: {bound.why(name, value, (defaults or {}).get(name))}")
        raise ConfigError(f"{message}.")


def check_coef_init(coef_init, n_features: int, what: str = "") -> np.ndarray:
    """A float64 copy of ``coef_init`` after checking it has ``n_features`` entries."""
    if isinstance(coef_init, (str, bytes)):
        raise ConfigError(f"coef_init must be an array of {n_features} floats; it cannot be "
                          f"given on the command line (got {coef_init!r})")
    try:
        w0 = np.array(coef_init, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"coef_init must be an array of {n_features} floats{what}, got "
                          f"{type(coef_init).__name__}") from None
    if w0.shape != (n_features,):
        raise ConfigError(f"coef_init must have shape ({n_features},){what}, got {w0.shape}")
    return w0


# --- checked once per fit ----------------------------------------------------------------
# Whether parameter validation is skipped here: True inside a fit that checked its values on
# entry (scikit-learn's ``skip_parameter_validation``).  A context variable, so that each
# thread (and each asyncio task) has its own; a worker thread starts with it off.
_SKIP = contextvars.ContextVar("latentstruct_skip_parameter_validation", default=False)


def parameter_validation_skipped() -> bool:
    """Whether ``check_params`` is skipped here (inside a fit that checked on entry)."""
    return _SKIP.get()


@contextlib.contextmanager
def skip_parameter_validation(skip: bool = True):
    """Within the block, ``check_params`` (and so the entry check of every ``fit`` wrapped
    by :func:`fit_context`) does nothing when ``skip`` is true, and always checks when it is
    false (values read from a model file are checked whatever the caller's context)."""
    token = _SKIP.set(bool(skip))
    try:
        yield
    finally:
        _SKIP.reset(token)


def fit_context(fit):
    """``fit`` (or ``partial_fit``) that checks the owner's parameters on entry and runs
    with validation skipped, as scikit-learn's ``_fit_context(
    prefer_skip_nested_validation=True)``: ``self.check_params()`` first (it does nothing
    inside another fit that checked already), then the body, where the nested fits it
    drives (built from values just checked) do not check again."""
    if getattr(fit, "__fit_context__", False):
        return fit

    @functools.wraps(fit)
    def fit_checked_once(self, *args, **kwargs):
        self.check_params()
        with skip_parameter_validation():
            return fit(self, *args, **kwargs)

    fit_checked_once.__fit_context__ = True
    return fit_checked_once


def store_init_args(owner, args: dict) -> None:
    """Store an ``__init__``'s arguments on ``owner`` under their own names, unchanged, as
    scikit-learn's estimator contract asks (``get_params`` reads them back; checks wait for
    ``fit``).  ``args`` is the ``__init__``'s ``locals()``, taken before anything else."""
    for name, value in args.items():
        if name not in ("self", "__class__"):
            setattr(owner, name, value)


class CheckedParams:
    """Mixin of an object with ``get_params`` whose ``fit`` checks its parameters once.

    ``_parameter_constraints`` declares what each parameter may be; ``check_params``
    checks ``get_params(deep=False)`` against it (then ``_check_param_relations``) unless
    validation is skipped; every subclass's own ``fit`` and ``partial_fit`` are wrapped by
    :func:`fit_context`.  Featurizers and the trigram LM use it as it is; tasks override
    ``validate_params`` (their messages name the task), learners ``_check_param_values`` too
    (it knows the number of weights ``coef_init`` must have).
    """

    _parameter_constraints: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("fit", "partial_fit"):
            if name in cls.__dict__:
                setattr(cls, name, fit_context(cls.__dict__[name]))

    def check_params(self) -> None:
        """Raise ``ConfigError`` (scikit-learn's wording) for a parameter value outside
        ``_parameter_constraints``, then for values that cannot go together
        (``_check_param_relations``); nothing while validation is skipped."""
        if parameter_validation_skipped():
            return
        self._check_param_values()
        self._check_param_relations()

    @classmethod
    def validate_params(cls, params: dict) -> None:
        """Raise ``ConfigError`` (scikit-learn's wording) for the first value in ``params``
        that ``_parameter_constraints`` does not allow; needs no instance or data."""
        validate_params(cls.__name__, cls._parameter_constraints, params)

    def _check_param_values(self) -> None:
        type(self).validate_params(self.get_params(deep=False))

    def _check_param_relations(self) -> None:
        """Raise ``ConfigError`` where two values that are each valid cannot go together."""
