"""From sklearn-crfsuite's parameters to a latentstruct learner and its options, and model
files for ``CRF(model_filename=...)``.

Each CRFsuite parameter maps onto a learner option with the same meaning, or, where
latentstruct has no exact counterpart, a value other than CRFsuite's default is refused
with one line that says what is missing; nothing is silently ignored.  ``None`` always
means CRFsuite's default for the algorithm.
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import ConfigError

__all__ = ["learner_options", "load_model_file", "CRFSUITE_DEFAULTS", "UNLIMITED_ITERATIONS"]

#: CRFsuite's defaults (its manual, ``crfsuite -H -a ALGORITHM``), by parameter
CRFSUITE_DEFAULTS = {
    "min_freq": 0.0, "all_possible_states": False, "all_possible_transitions": False,
    "c1": 0.0, "c2": 1.0, "num_memories": 6, "period": 10, "delta": 1e-5,
    "linesearch": "MoreThuente", "max_linesearch": 20, "calibration_eta": 0.1,
    "calibration_rate": 2.0, "calibration_samples": 1000, "calibration_candidates": 10,
    "calibration_max_trials": 20, "pa_type": 1, "c": 1.0, "error_sensitive": True,
    "averaging": True, "variance": 1.0, "gamma": 1.0,
}
#: CRFsuite's default max_iterations per algorithm (lbfgs: unlimited, the stopping rule ends it)
MAX_ITERATIONS = {"lbfgs": None, "l2sgd": 1000, "ap": 100, "pa": 100, "arow": 100}
#: what "unlimited" L-BFGS iterations become: the largest the learner takes (the
#: delta/period rule stops far earlier)
UNLIMITED_ITERATIONS = 10_000


#: CRFsuite's default delta per algorithm (``train_lbfgs.c``: 1e-5, ``train_l2sgd.c``: 1e-6)
DELTA = {"lbfgs": 1e-5, "l2sgd": 1e-6}

#: l2sgd's calibration parameters, passed to the crf learner under the same names
CALIBRATION = ("calibration_eta", "calibration_rate", "calibration_samples",
               "calibration_candidates", "calibration_max_trials")


#: CRFsuite's default epsilon per algorithm: L-BFGS's gradient test, and the online
#: algorithms' mean-cost stop, which is off (0) unless asked for
EPSILON = {"lbfgs": 1e-5, "l2sgd": None, "ap": 0.0, "pa": 0.0, "arow": 0.0}


#: CRFsuite's parameter types (its manual): python-crfsuite hands every value to CRFsuite as
#: text, which C's atoi/atof read, so 2.5 iterations become 2 and "abc" becomes 0 there
_INTEGERS = ("max_iterations", "num_memories", "period", "max_linesearch",
             "calibration_samples", "calibration_candidates", "calibration_max_trials",
             "pa_type")
_REALS = ("min_freq", "c1", "c2", "epsilon", "delta", "calibration_eta", "calibration_rate",
          "c", "variance", "gamma")
_FLAGS = ("all_possible_states", "all_possible_transitions", "error_sensitive", "averaging")


def _integer(name: str, value) -> int:
    """An integer parameter: an int, a float with no fractional part or an integer's text
    (what python-crfsuite passes on unchanged); anything else refused, never cut."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise ConfigError(f"{name}={value!r}: CRFsuite's {name} is an integer; give an int")
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ConfigError(f"{name}={value!r} is not an integer; CRFsuite's {name} is one "
                              f"(python-crfsuite would read this text as "
                              f"{_atoi(value)}): give an int") from None
    if isinstance(value, numbers.Integral):
        return int(value)
    value = float(value)
    if not value.is_integer():  # NaN and infinities too
        cut = (f", and python-crfsuite would cut it to {int(value)} (C's atoi), which "
               f"latentstruct does not do silently" if math.isfinite(value) else "")
        raise ConfigError(f"{name}={value!r} is not a whole number; CRFsuite's {name} is an "
                          f"integer{cut}: give an int")
    return int(value)


def _atoi(text: str) -> int:
    """What C's atoi makes of ``text``: its leading integer, or 0."""
    import re

    found = re.match(r"\s*([+-]?\d+)", text)
    return int(found.group(1)) if found else 0


def _real(name: str, value):
    """A real parameter: a number (kept as given, so messages show it so) or a number's
    text; anything else refused (CRFsuite's atof would read it as 0)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise ConfigError(f"{name}={value!r}: CRFsuite's {name} is a number; give a float")
    if not isinstance(value, str):
        return value
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a number; CRFsuite's {name} is one "
                          f"(python-crfsuite would read this text as 0): give a float") from None


def _flag(name: str, value) -> bool:
    """A flag: True/False, or CRFsuite's 1/0 (an int, or its text); anything else refused
    (Python's bool() would call "False" and 0.5 true, CRFsuite's atoi would call them 0)."""
    import numbers

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (numbers.Real, str)):
        text = value.strip() if isinstance(value, str) else value
        if text in (0, 1, "0", "1"):
            return bool(int(text))
    raise ConfigError(f"{name}={value!r}: CRFsuite's {name} is a flag; give True or False "
                      f"(or 1/0)")


def _checked(given: dict) -> dict:
    """``given`` with every value of a known type checked and converted (module rule: a
    value CRFsuite would silently turn into another is refused)."""
    out = dict(given)
    for name, value in given.items():
        if name in _INTEGERS:
            out[name] = _integer(name, value)
        elif name in _REALS:
            out[name] = _real(name, value)
        elif name in _FLAGS:
            out[name] = _flag(name, value)
    return out


def _value(given: dict, name: str):
    return given.get(name, CRFSUITE_DEFAULTS.get(name))


def _epsilon(given: dict, algorithm: str) -> float:
    return float(given.get("epsilon", EPSILON[algorithm]))


def _refuse_unless_default(given: dict, names, why: str) -> None:
    for name in names:
        if name in given and given[name] != CRFSUITE_DEFAULTS[name]:
            raise ConfigError(f"{name}={given[name]!r}: {why}; leave {name} at CRFsuite's "
                              f"default ({CRFSUITE_DEFAULTS[name]!r})")


def _learner_accepts(name: str, option: str) -> bool:
    from ..learners import get_learner_class

    return option in get_learner_class(name)().get_params(deep=False)


def learner_options(algorithm: str, given: dict, *, verbose: bool = False):
    """``(learner name, learner options, task options)`` for CRFsuite's ``algorithm`` with
    the parameters ``given`` (the non-None ones, already checked to be the algorithm's).
    Integer parameters take only whole numbers (``max_iterations=2.5`` is refused, where
    python-crfsuite's C conversion would cut it to 2), real ones numbers, flags
    True/False or 1/0."""
    given = _checked(given)
    if given.get("min_freq", 0) not in (0, 0.0, None):
        raise ConfigError(
            f"min_freq={given['min_freq']!r}: CRFsuite drops (attribute, label) features seen "
            f"at most min_freq times, and latentstruct has no such cut-off yet (its tasks' "
            f"min_count drops rare attributes, which is another model); leave min_freq at 0")
    states = bool(_value(given, "all_possible_states"))
    transitions = bool(_value(given, "all_possible_transitions"))
    iterations = given.get("max_iterations", MAX_ITERATIONS[algorithm])
    # CRFsuite numbers attributes as the training data first shows them: attributes_ follows
    task_opts = {"attribute_order": "first_seen"}
    if algorithm in ("lbfgs", "l2sgd"):
        opts = {"c2": float(_value(given, "c2")),
                "period": int(_value(given, "period")),
                "delta": float(given.get("delta", DELTA[algorithm])), "progress": verbose}
        _check_feature_generation("crf", states, transitions, opts)
        if algorithm == "lbfgs":
            opts.update(solver="lbfgs", memory=int(_value(given, "num_memories")),
                        max_iter=UNLIMITED_ITERATIONS if iterations is None else int(iterations))
            c1 = float(_value(given, "c1"))
            if c1 != 0.0:
                opts["c1"] = c1
            opts["epsilon"] = _epsilon(given, algorithm)
            linesearch = _value(given, "linesearch")
            if linesearch not in ("MoreThuente", "Backtracking", "StrongBacktracking"):
                raise ConfigError(f"linesearch={linesearch!r} is not a CRFsuite line search; "
                                  f"use 'MoreThuente', 'Backtracking' or 'StrongBacktracking'")
            if c1 == 0.0:
                _refuse_unless_default(given, ["linesearch"], "latentstruct's L-BFGS (SciPy's "
                                       "L-BFGS-B) searches by More and Thuente's method only")
            _refuse_unless_default(given, ["max_linesearch"], "SciPy's L-BFGS-B takes its "
                                   "own maximum of 20 line-search steps")
        else:
            # CRFsuite's l2sgd: per-example steps, eta0 by its calibration, its stopping rule
            # (delta over period epochs, the best epoch's weights kept)
            opts.update(solver="sgd", max_iter=int(iterations), batch_size=1,
                        eta0="calibrate", sgd_stopping="delta",
                        **{name: _value(given, name) for name in CALIBRATION})
        return "crf", opts, task_opts
    if algorithm == "ap":
        opts = {"average": True, "max_iter": int(iterations), "epsilon": _epsilon(given, "ap")}
        _check_feature_generation("perceptron", states, transitions, opts)
        return "perceptron", opts, task_opts
    if algorithm == "pa":
        opts = {"pa_type": int(_value(given, "pa_type")), "c": float(_value(given, "c")),
                "error_sensitive": bool(_value(given, "error_sensitive")),
                "averaging": bool(_value(given, "averaging")),
                "epsilon": _epsilon(given, "pa"), "max_iter": int(iterations)}
        _check_feature_generation("pa", states, transitions, opts)
        return "pa", opts, task_opts
    opts = {"variance": float(_value(given, "variance")), "gamma": float(_value(given, "gamma")),
            "epsilon": _epsilon(given, "arow"), "max_iter": int(iterations)}
    _check_feature_generation("arow", states, transitions, opts)
    return "arow", opts, task_opts


def _check_feature_generation(learner: str, states: bool, transitions: bool, opts: dict) -> None:
    """CRFsuite trains only the features it generated: the (attribute, label) pairs and the
    label bigrams of the training data, or every pair / every bigram with
    all_possible_states / all_possible_transitions.  Every learner an algorithm maps onto
    takes that choice exactly (``feature_set="observed"``, ``possible_states``,
    ``possible_transitions``); one that could not would refuse a choice other than the
    default here."""
    if _learner_accepts(learner, "possible_states"):
        opts.update(feature_set="observed", possible_states=states,
                    possible_transitions=transitions)
        return
    if states:
        raise ConfigError(
            f"all_possible_states=True: latentstruct's {learner!r} updates the features of the "
            f"structures it decodes, not a fixed generated set, so the choice has no exact "
            f"counterpart there; leave all_possible_states at False (or use algorithm='lbfgs')")


def load_model_file(path):
    """The fitted estimator in the model file at ``path``: latentstruct's own (what
    ``fit`` writes with ``model_filename``) or a CRFsuite file written by python-crfsuite
    (``latentstruct.load`` tells them apart by their first bytes)."""
    from ..estimators import load

    return load(path)
