"""What the commands share: ``--option KEY=VALUE`` parsing and routing, loading a model
with evaluation-time options, and JSON-ready metric values."""

from __future__ import annotations

from ..exceptions import ConfigError

__all__ = ["parse_option", "route_options", "task_and_learner_classes", "load_for",
           "load_model_pair", "is_crfsuite_model", "metric_value"]


def parse_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` to (key, value); values are JSON-ish: ints, floats, true/false, null, str."""
    if "=" not in text:
        raise ConfigError(f"option {text!r} is not KEY=VALUE (example: --option C=0.1)")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key.isidentifier():
        raise ConfigError(f"option name {key!r} is not a valid name (example: --option C=0.1)")
    low = raw.strip().lower()
    if low in ("true", "false"):
        return key, low == "true"
    if low in ("none", "null"):
        return key, None
    for conv in (int, float):
        try:
            return key, conv(raw)
        except ValueError:
            pass
    return key, raw


def route_options(options: list[str], task_cls, learner_cls) -> tuple[dict, dict]:
    """Send each ``--option`` to the task or the learner by parameter name."""
    task_keys = set(task_cls.param_defaults())
    learner_keys = set(learner_cls().get_params(deep=False)) - {"structure"}
    both = task_keys & learner_keys
    if both:  # pragma: no cover - a registry invariant, checked by the test suite
        raise ConfigError(f"options {sorted(both)} belong to both the task and the learner")
    task_opts, learner_opts = {}, {}
    seen = set()
    for text in options or []:
        # a (key, value) pair comes from a run configuration, a string from --option
        key, value = text if isinstance(text, tuple) else parse_option(text)
        if key in seen:
            raise ConfigError(f"option {key!r} is given twice; give each --option once")
        seen.add(key)
        if key in task_keys:
            task_opts[key] = value
        elif key in learner_keys:
            learner_opts[key] = value
        else:
            raise ConfigError(
                f"unknown option {key!r} for task {task_cls.name!r} with learner "
                f"{learner_cls.registry_name!r}; task options: {', '.join(sorted(task_keys)) or '-'}; "
                f"learner options: {', '.join(sorted(learner_keys))}"
            )
    return task_opts, learner_opts


def task_and_learner_classes(task_name, learner_name):
    from ..learners import get_learner_class
    from ..tasks import get_task_class

    task_cls = get_task_class(task_name)
    return task_cls, get_learner_class(learner_name or task_cls.default_learner)


def is_crfsuite_model(path) -> bool:
    """Whether ``path`` is a CRFsuite model file (python-crfsuite, sklearn-crfsuite,
    ``crfsuite learn``: it starts with ``lCRF``), which ``latentstruct.load`` reads as a
    ``sequence`` model; the commands tell it apart by the same first bytes."""
    from ..estimators.crfsuite_file import is_crfsuite_file

    return is_crfsuite_file(path)


def load_model_pair(model_path):
    """(task, learner) of a latentstruct model file, or of a CRFsuite model file (the task
    ``sequence`` and a ``crf`` learner with CRFsuite's weights, as ``latentstruct.load``
    reads it)."""
    if is_crfsuite_model(model_path):
        from ..estimators.crfsuite_file import estimator_from_crfsuite_file

        est = estimator_from_crfsuite_file(model_path)
        return est.task_, est.learner_
    from ..learners.persistence import load_trained

    task, learner, _ = load_trained(model_path)
    return task, learner


def load_for(model_path, options, command):
    """Load a model (latentstruct's, or a CRFsuite model file: :func:`load_model_pair`) and
    apply ``--option``s: only parameters declared as evaluation-time
    (they choose evaluation data or inference resources); anything that fed the features or
    the training is refused, since changing it would silently change the model.

    The values are checked as ``train`` checks them, before any data is read: learner
    options with the learner class's ``validate_params`` (``n_jobs=0`` gets the same
    message from every command), task options with the task's own ``check_params``."""
    task, learner = load_model_pair(model_path)
    task_ok, learner_ok = set(task.evaluation_params), set(learner.evaluation_params)
    allowed = ", ".join(sorted(task_ok | learner_ok)) or "none"
    seen = set()
    task_opts, learner_opts = {}, {}
    for text in options or []:
        key, value = parse_option(text)
        if key in seen:
            raise ConfigError(f"option {key!r} is given twice; give each --option once")
        seen.add(key)
        if key in task_ok:
            task_opts[key] = value
        elif key in learner_ok:
            learner_opts[key] = value
        elif key in task.param_defaults() or key in learner.get_params(deep=False):
            raise ConfigError(
                f"option {key!r} cannot change at {command} time: it fed the model's features or "
                f"its training ({key}={task.get_params().get(key, learner.get_params(deep=False).get(key))!r} "
                f"in {model_path}); retrain with --option {key}=... instead. Options {command} "
                f"accepts for this {task.name!r} model: {allowed}"
            )
        else:
            raise ConfigError(
                f"unknown option {key!r} for a {task.name!r} model; options {command} accepts: "
                f"{allowed}"
            )
    type(learner).validate_params(learner_opts)  # the check `train` runs (check_compatible)
    learner.set_params(**learner_opts)
    if task_opts:
        task.set_params(**task_opts)
        task.check_params()  # the task's own checks, which `train` runs in read and fit
    return task, learner


def metric_value(v):
    """A metric for JSON: counts stay integers, rates are rounded to 6 decimals, and
    nested reports (dicts of metrics) are converted throughout."""
    if isinstance(v, dict):
        return {str(k): metric_value(x) for k, x in v.items()}
    if v is None:
        return None
    import numpy as np  # here, not at import: `latentstruct --help` loads no numpy

    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return round(float(v), 6)
