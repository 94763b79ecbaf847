"""Run configurations: what ``latentstruct train`` was asked to do, as a file that replays it.

A run configuration is a TOML or JSON object with these keys (all optional)::

    task = "chunk"            # the task's registry name
    learner = "ssvm"          # the learner's registry name (default: the task's)
    train = "train.txt"       # training data
    seed = 0                  # --seed
    classes = ["B-NP", "O"]   # --classes: an online stream's full label set
    [options]                 # --option KEY=VALUE, routed to the task or the learner
    C = 0.1
    max_iter = 15

``latentstruct train --config FILE`` reads one; anything also given on the command line
wins.  A trained model records its whole run, so ``latentstruct info --model M --as-config``
prints the configuration that retrains it, and ``--config M.npz`` reads it straight from
the model.  A model file is data, not instructions: from it, the training-data path is
shown but never used (give ``--train`` yourself; the model's recorded digest of its
training data is compared with yours), and parameters that name places on the machine
(a task's ``local_params``, such as cache folders) are left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..exceptions import ConfigError, InputError

__all__ = ["load_run_config", "run_config_from_metadata", "merge_options"]

_KEYS = {"task": str, "learner": str, "train": str, "seed": int, "classes": list,
         "options": dict}
_SCALARS = (str, int, float, bool, type(None))
#: Largest run configuration (bytes) read.  One written by ``info --as-config`` is about a
#: kilobyte; Python's TOML parser takes time and memory quadratic in the depth of a dotted
#: key (``a.a.a...``: 8,000 levels, 16 KiB, cost 1.3 s and 250 MB), so a larger file is
#: refused before it is parsed.
MAX_CONFIG_BYTES = 16_384


def _check(config, path) -> dict:
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: a run configuration is a TOML/JSON object (table), got "
                          f"{type(config).__name__}")
    unknown = sorted(set(config) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(map(repr, unknown))}; a run "
                          f"configuration has {', '.join(_KEYS)}")
    for key, kind in _KEYS.items():
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"{path}: {key!r} must be a {kind.__name__}, got "
                              f"{type(value).__name__} {value!r}")
    classes = config.get("classes")
    if classes is not None and not all(isinstance(c, str) for c in classes):
        raise ConfigError(f"{path}: 'classes' must be a list of label strings, got "
                          f"{classes!r}")
    for key, value in (config.get("options") or {}).items():
        if not isinstance(value, _SCALARS):
            raise ConfigError(f"{path}: option {key!r} must be a string, number, boolean or "
                              f"null, got {type(value).__name__}")
    return config


def run_config_from_metadata(metadata: dict) -> dict:
    """The run configuration that retrains the model whose metadata this is."""
    from ..learners import get_learner_class
    from ..tasks import get_task_class

    task_cls = get_task_class(metadata["task"])
    learner_cls = get_learner_class(metadata["learner"])
    # left out: places on the machine, and what does not change the model (evaluation
    # data, progress bars, n_jobs), so a replay runs with the replaying user's resources
    skip = (set(getattr(task_cls, "local_params", ())) | set(task_cls.evaluation_params)
            | set(learner_cls.evaluation_params))
    options = {k: v for k, v in metadata["task_params"].items() if k not in skip}
    learner_keys = set(learner_cls().get_params(deep=False)) - {"structure"} - skip
    for key, value in metadata["learner_params"].items():
        # "<ndarray>" marks an array given in Python (coef_init); it cannot be replayed
        if key in learner_keys and not (isinstance(value, str) and value.startswith("<")):
            options[key] = value
    extra = metadata.get("extra") or {}
    config = {"task": metadata["task"], "learner": metadata["learner"], "options": options}
    if isinstance(extra.get("seed"), int):
        config["seed"] = extra["seed"]
    if isinstance(extra.get("train_path"), str) and extra["train_path"] != "None":
        config["train"] = extra["train_path"]
    declared = extra.get("declared_classes")  # train --classes (checked by _check)
    if isinstance(declared, list):
        config["classes"] = declared
    return config


def load_run_config(path) -> tuple[dict, dict | None]:
    """``(config, model_metadata)``: a TOML/JSON run configuration, or the run recorded in a
    model file (then ``model_metadata`` is its metadata, else ``None``)."""
    from ..data.path_rule import open_input, stream_descriptor

    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"--config {path}: is a directory, expected a TOML or JSON file (a "
                          f".toml or .json run configuration, or a model .npz file)")
    if stream_descriptor(path) is None and not path.is_file():
        raise ConfigError(f"--config {path}: no such file; give a .toml or .json run "
                          f"configuration, or a model file")
    from .common import is_crfsuite_model

    if stream_descriptor(path) is None and is_crfsuite_model(path):
        raise ConfigError(f"--config {path}: is a CRFsuite model file (python-crfsuite, "
                          f"sklearn-crfsuite or crfsuite learn), which records no run "
                          f"configuration (no options, no training data); give a .toml or "
                          f".json run configuration, or a latentstruct model file")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        from ..io import inspect_model

        metadata = inspect_model(path)
        return _check(run_config_from_metadata(metadata), path), metadata
    try:
        if suffix in (".toml", ".json"):
            # read like any input: standard input and pipes once, FIFOs refused
            with open_input(path) as fh:
                raw = fh.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                raise ConfigError(f"--config {path}: the file is over {MAX_CONFIG_BYTES:,} "
                                  f"bytes, the limit of a run configuration (a few task, "
                                  f"learner and option keys); expected a .toml or .json run "
                                  f"configuration")
            if suffix == ".toml":
                import tomllib

                return _check(tomllib.loads(raw.decode("utf-8")), path), None
            return _check(json.loads(raw.decode("utf-8")), path), None
    except (ConfigError, InputError):  # ours, already one line (InputError is a ValueError)
        raise
    except (ValueError, UnicodeDecodeError) as exc:  # TOMLDecodeError and JSONDecodeError
        raise ConfigError(f"--config {path}: not valid {suffix[1:].upper()}: {exc}") from None
    except RecursionError:  # the parsers recurse per level of nesting
        raise ConfigError(f"--config {path}: not valid {suffix[1:].upper()}: arrays or tables "
                          f"nested too deeply; expected a table of task, learner, train, seed "
                          f"and a flat [options] table") from None
    raise ConfigError(f"--config {path}: expected a .toml or .json run configuration or a "
                      f".npz model file, got a {suffix or 'suffix-less'} file")


def merge_options(config_options: dict, cli_options: list[str] | None) -> list:
    """Options to route: the configuration's ``(key, value)`` pairs (values kept as typed
    in the file), then the command line's ``KEY=VALUE`` strings, which win."""
    from .common import parse_option

    given = {parse_option(text)[0] for text in cli_options or []}
    return [(k, v) for k, v in config_options.items() if k not in given] + list(cli_options or [])
