"""The ``latentstruct`` command line: train, evaluate, predict, explain, demo, info.

Exit codes: 0 success, 2 usage or input errors (malformed files, unknown task or option,
bad hyperparameters, incompatible model files), 1 anything unexpected.
Outputs (model files, predictions) are written atomically: a failed run never leaves a
half-written file behind.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from . import __version__
from .exceptions import ConfigError, InputError, LatentStructError, ModelFormatError

__all__ = ["main", "parse_option"]


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


def _route_options(options: list[str], task_cls, learner_cls) -> tuple[dict, dict]:
    """Send each ``--option`` to the task or the learner by parameter name."""
    task_keys = set(task_cls._param_names())
    learner_keys = set(learner_cls().get_params(deep=False)) - {"task"}
    task_opts, learner_opts = {}, {}
    for text in options or []:
        key, value = parse_option(text)
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


def _cmd_train(args) -> int:
    from .learners import get_learner_class
    from .learners.persistence import save_trained
    from .tasks import get_task_class

    task_cls = get_task_class(args.task)
    learner_name = args.learner or task_cls.default_learner
    learner_cls = get_learner_class(learner_name)
    task_opts, learner_opts = _route_options(args.option, task_cls, learner_cls)
    task = task_cls(**task_opts)
    if args.train is None and not task_cls.has_default_data:
        raise ConfigError(f"task {args.task!r} needs --train PATH")
    t0 = time.perf_counter()
    if getattr(task, "needs_tagger", False):
        from .pipelines import train_pos_tagger

        pos_task, pos_coef, _ = train_pos_tagger(task.tagger_sentences, verbose=not args.quiet)
        task.set_tagger(pos_task, pos_coef)
    dataset = task.training_sample(task.read(args.train, split="train"))
    task.fit(dataset)
    X = task.featurize(dataset)
    Y = task.encode_targets(dataset.targets)
    learner = learner_cls(task=task, **learner_opts)
    if "progress" in learner.get_params() and "progress" not in learner_opts:
        learner.set_params(progress=not args.quiet)
    if learner.uses_binary_examples:
        binary = dataset.binary
        if binary is None:
            learner.fit(X, Y)
        else:
            learner.fit(X, Y, task.featurize(binary), np.asarray(binary.targets))
    else:
        learner.fit(X, Y)
    elapsed = time.perf_counter() - t0
    save_trained(args.model, task, learner,
                 extra={"train_path": str(args.train), "n_train": len(dataset),
                        "train_seconds": round(elapsed, 3)})
    if not args.quiet:
        print(
            f"trained {learner_name} on {len(dataset)} {args.task} examples in {elapsed:.1f}s "
            f"({learner.n_iter_} iterations); model written to {args.model}",
            file=sys.stderr,
        )
    return 0


def _load(model_path, options):
    from .learners.persistence import load_trained

    task, learner, meta = load_trained(model_path)
    for text in options or []:
        key, value = parse_option(text)
        if key in task._param_names():
            task.set_params(**{key: value})
        elif key in learner.get_params(deep=False):
            learner.set_params(**{key: value})
        else:
            raise ConfigError(
                f"unknown option {key!r} for evaluating a {task.name!r} model; valid: "
                f"{', '.join(sorted(set(task._param_names()) | set(learner.get_params(deep=False)) - {'task'}))}"
            )
    return task, learner


def _cmd_evaluate(args) -> int:
    task, learner = _load(args.model, args.option)
    from .learners import LatentBinaryLearner

    if args.test is None and not task.has_default_data:
        raise ConfigError(f"evaluating a {task.name!r} model needs --test PATH")
    dataset = task.read(args.test, split="test")
    decision = learner.decision_function if isinstance(learner, LatentBinaryLearner) else None
    metrics = task.evaluate_model(dataset, learner.predict, decision)
    print(json.dumps({k: round(float(v), 6) for k, v in metrics.items()}))
    return 0


def _cmd_predict(args) -> int:
    task, learner = _load(args.model, args.option)
    dataset = task.read(args.input, split="test")
    X = task.featurize(dataset)
    task.write_predictions(args.output, dataset, learner.predict(X))
    return 0


def _cmd_explain(args) -> int:
    from .learners import LatentBinaryLearner

    task, learner = _load(args.model, args.option)
    if not isinstance(learner, LatentBinaryLearner):
        raise ConfigError(
            f"explain draws a latent structure; this is a {task.name!r} model trained with "
            f"{learner.registry_name!r}, which has none"
        )
    x = task.encode_pair(args.source, args.target)
    h = learner.latent_argmax([x])[0]
    score = float(learner.decision_function([x])[0])
    task.draw_explanation(x, learner.coef_, h, score, args.out,
                          title=f"{task.name} / {learner.registry_name}")
    print(json.dumps({"score": round(score, 6), "decision": 1 if score >= 0 else -1,
                      "alignment": [int(j) for j in h], "picture": str(args.out)}))
    return 0


def _cmd_demo(args) -> int:
    from .demo import run_demo

    run_demo(lang=args.lang, out_dir=args.out, n_jobs=args.n_jobs, quiet=args.quiet)
    return 0


def _cmd_info(args) -> int:
    from .io import inspect_model

    print(json.dumps(inspect_model(args.model), indent=2, sort_keys=True))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="latentstruct",
        description="Discriminative learning over constrained latent structures.",
    )
    p.add_argument("--version", action="version", version=f"latentstruct {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("train", help="train a model on a task")
    t.add_argument("task", help="task name (chunk, pos, ...)")
    t.add_argument("--train", help="training data file")
    t.add_argument("--model", required=True, help="output model file (.npz)")
    t.add_argument("--learner", help="learner name (default: the task's)")
    t.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="task or learner parameter, routed by name (repeatable)")
    t.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    t.set_defaults(func=_cmd_train)

    e = sub.add_parser("evaluate", help="print metrics of a model on labelled data as JSON")
    e.add_argument("--model", required=True)
    e.add_argument("--test", help="labelled data file (optional for tasks with shipped data)")
    e.add_argument("--option", action="append", metavar="KEY=VALUE")
    e.set_defaults(func=_cmd_evaluate)

    r = sub.add_parser("predict", help="write the input back with predicted structures")
    r.add_argument("--model", required=True)
    r.add_argument("--input", required=True)
    r.add_argument("--output", required=True)
    r.add_argument("--option", action="append", metavar="KEY=VALUE")
    r.set_defaults(func=_cmd_predict)

    x = sub.add_parser("explain", help="draw the latent structure a model picks for one input")
    x.add_argument("--model", required=True)
    x.add_argument("--source", required=True, help="first input (e.g. an English name)")
    x.add_argument("--target", required=True, help="second input (e.g. its transliteration)")
    x.add_argument("--out", required=True, help="output picture (.png)")
    x.add_argument("--option", action="append", metavar="KEY=VALUE")
    x.set_defaults(func=_cmd_explain)

    d = sub.add_parser("demo", help="transliteration discovery on CLDR names: two-stage vs LCLR")
    d.add_argument("--lang", default="he", help="he, ru or ar (default he)")
    d.add_argument("--out", default=".", help="folder for the alignment picture")
    d.add_argument("--n-jobs", type=int, default=1, dest="n_jobs")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=_cmd_demo)

    i = sub.add_parser("info", help="print a model file's metadata")
    i.add_argument("--model", required=True)
    i.set_defaults(func=_cmd_info)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (InputError, ConfigError, ModelFormatError) as exc:
        print(f"latentstruct: error: {exc}", file=sys.stderr)
        return 2
    except LatentStructError as exc:
        print(f"latentstruct: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("latentstruct: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
