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
    both = task_keys & learner_keys
    if both:  # pragma: no cover - a registry invariant, checked by the test suite
        raise ConfigError(f"options {sorted(both)} belong to both the task and the learner")
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


def _task_and_learner_classes(task_name, learner_name):
    from .learners import get_learner_class
    from .tasks import get_task_class

    task_cls = get_task_class(task_name)
    return task_cls, get_learner_class(learner_name or task_cls.default_learner)


def _cmd_train(args) -> int:
    from .learners import check_compatible
    from .learners.persistence import save_trained

    task_cls, learner_cls = _task_and_learner_classes(args.task, args.learner)
    learner_name = learner_cls.registry_name
    task_opts, learner_opts = _route_options(args.option, task_cls, learner_cls)
    # Before any data is read: the pair must fit, and the learner's needs must be met.
    check_compatible(task_cls, {**task_cls.param_defaults(), **task_opts}, learner_cls, learner_opts)
    task = task_cls(**task_opts)
    if args.train is None and not task_cls.has_default_data:
        raise ConfigError(f"task {args.task!r} needs --train PATH")
    if learner_cls.uses_binary_examples and not task.draws_binary_examples():
        raise ConfigError(
            f"learner {learner_name!r} learns from binary examples as well as labelled "
            f"structures, and task {args.task!r} draws none with these options; give "
            f"--option n_binary=N (N training sentences become positive binary examples, each "
            f"with negatives_per_positive shuffled negatives), or use --learner ssvm"
        )
    from .pipelines import attach_chunker, attach_tagger

    t0 = time.perf_counter()
    attach_tagger(task, verbose=not args.quiet)  # tasks that read POS tags from a tagger
    dataset = task.training_sample(task.read(args.train, split="train"))
    task.fit(dataset)
    X = task.featurize(dataset)
    Y = task.encode_targets(dataset.targets)
    learner = learner_cls(task=task, **learner_opts)
    if "progress" in learner.get_params() and "progress" not in learner_opts:
        learner.set_params(progress=not args.quiet)
    # a supervised chunker for the heuristic weights the learner starts from, if it needs one
    attach_chunker(task, learner, verbose=not args.quiet)
    if learner.uses_binary_examples:
        binary = dataset.binary
        learner.fit(X, Y, task.featurize(binary), np.asarray(binary.targets))
    else:
        learner.fit(X, Y)
    elapsed = time.perf_counter() - t0
    from .kbest_lists import data_digest

    extra = {"train_path": str(args.train), "n_train": len(dataset),
             "train_seconds": round(elapsed, 3)}
    if args.train is not None:  # identifies the data (k-best lists name their parser by it)
        extra["train_digest"] = data_digest(args.train)
    save_trained(args.model, task, learner, extra=extra)
    if not args.quiet:
        n_binary = "" if dataset.binary is None else f" and {len(dataset.binary)} binary"
        print(
            f"trained {learner_name} on {len(dataset)}{n_binary} {args.task} examples in {elapsed:.1f}s "
            f"({learner.n_iter_} iterations); model written to {args.model}",
            file=sys.stderr,
        )
    return 0


def _load(model_path, options, command):
    """Load a model and apply ``--option``s: only parameters declared as evaluation-time
    (they choose evaluation data or inference resources); anything that fed the features or
    the training is refused, since changing it would silently change the model."""
    from .learners.persistence import load_trained

    task, learner, meta = load_trained(model_path)
    task_ok, learner_ok = set(task.evaluation_params), set(learner.evaluation_params)
    allowed = ", ".join(sorted(task_ok | learner_ok)) or "none"
    for text in options or []:
        key, value = parse_option(text)
        if key in task_ok:
            task.set_params(**{key: value})
        elif key in learner_ok:
            learner.set_params(**{key: value})
        elif key in task._param_names() or key in learner.get_params(deep=False):
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
    return task, learner


def _cmd_evaluate(args) -> int:
    task, learner = _load(args.model, args.option, "evaluate")
    from .learners import LatentBinaryLearner

    if args.test is None and not task.has_default_data:
        raise ConfigError(f"evaluating a {task.name!r} model needs --test PATH")
    dataset = task.read(args.test, split="test")
    decision = learner.decision_function if isinstance(learner, LatentBinaryLearner) else None
    metrics = task.evaluate_model(dataset, learner.predict, decision)
    print(json.dumps({k: _metric_value(v) for k, v in metrics.items()}))
    return 0


def _cmd_predict(args) -> int:
    task, learner = _load(args.model, args.option, "predict")
    dataset = task.read(args.input, split="test")
    X = task.featurize(dataset)
    task.write_predictions(args.output, dataset, learner.predict(X))
    return 0


def _cmd_explain(args) -> int:
    from .learners import LatentBinaryLearner

    from .tasks import TASKS
    from .tasks.contracts import EXPLAINABLE

    task, learner = _load(args.model, args.option, "explain")
    if getattr(learner, "registry_name", "") == "distro":
        return _explain_label_matrix(task, learner, args.out)
    if args.source is None or args.target is None:
        raise ConfigError("explain draws the structure a model picks for one input pair; give "
                          "--source TEXT and --target TEXT")
    explainable = sorted(n for n, c in TASKS.items() if EXPLAINABLE in c.offered_capabilities())
    if EXPLAINABLE not in task.offered_capabilities(task.get_params()):
        raise ConfigError(
            f"explain draws the latent structure of one input pair; task {task.name!r} cannot "
            f"(it is not explainable). Tasks explain supports: {', '.join(explainable)}"
        )
    if not isinstance(learner, LatentBinaryLearner):
        raise ConfigError(
            f"explain draws a latent structure; this {task.name!r} model was trained with "
            f"{learner.registry_name!r}, which has none. Train it with one of: "
            f"lclr, two-stage, lclr-variant, latent-pa"
        )
    x = task.encode_pair(args.source, args.target)
    h = learner.latent_argmax([x])[0]
    score = float(learner.decision_function([x])[0])
    from .plotting import draw_explanation  # lazy: matplotlib is imported only when drawing

    draw_explanation(task.explain(x, learner.coef_, h), args.out,
                     title=f"{task.name} / {learner.registry_name}")
    print(json.dumps({"score": round(score, 6), "decision": 1 if score >= 0 else -1,
                      "alignment": [int(j) for j in h], "picture": str(args.out)}))
    return 0


def _metric_value(v):
    """A metric for JSON: counts stay integers, rates are rounded to 6 decimals."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return round(float(v), 6)


def _explain_label_matrix(task, learner, out) -> int:
    """A DISTRO model: draw its label similarities and singular values; print a summary."""
    from pathlib import Path

    out = Path(out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file path such as {out}/labels.png")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: folder {out.parent} does not exist; create it first")
    from .plotting_labels import draw_label_matrix  # lazy: matplotlib only when drawing

    A = learner.label_matrix_
    labels = list(task.labels_)
    order = draw_label_matrix(A, labels, out, singular_values=learner.singular_values_,
                              title=f"{task.name} / distro (d = {A.shape[0]})")
    sim = A.T @ A
    np.fill_diagonal(sim, -np.inf)
    pairs = np.dstack(np.unravel_index(np.argsort(-sim, axis=None), sim.shape))[0]
    closest = [[labels[i], labels[j], round(float(sim[i, j]), 4)] for i, j in pairs if i < j][:10]
    print(json.dumps({"n_components": int(A.shape[0]), "n_labels": len(labels),
                      "rank": int(learner.effective_rank_),
                      "singular_values": [round(float(v), 6) for v in learner.singular_values_],
                      "closest_labels": closest, "order": order, "picture": str(out)}))
    return 0


def _cmd_kbest(args) -> int:
    from .io import inspect_model
    from .kbest_lists import jackknife_kbest, write_model_kbest

    if args.k < 1:
        raise ConfigError(f"-k must be a positive integer, got {args.k}")
    from pathlib import Path

    out = Path(args.output)  # checked before the (long) parsing, not after it
    if out.is_dir():
        raise ConfigError(f"--output {out} is a directory; give a file path such as {out}/lists.kbest")
    if not out.parent.is_dir():
        raise ConfigError(f"--output {out}: folder {out.parent} does not exist; create it first")
    task, learner = _load(args.model, args.option, "kbest")
    meta = inspect_model(args.model)
    from .tasks import TASKS
    from .tasks.contracts import KBEST

    if KBEST not in task.offered_capabilities(task.get_params()):
        listing = sorted(n for n, c in TASKS.items() if KBEST in c.offered_capabilities())
        raise ConfigError(f"{args.model} is a {task.name!r} model, which writes no k-best lists; "
                          f"tasks that do: {', '.join(listing)} (train one with "
                          f"`latentstruct train dep`)")
    t0 = time.perf_counter()
    if args.folds is None:
        n = write_model_kbest(task, learner, meta, args.input, args.output, args.k,
                              verbose=not args.quiet)
    else:
        n = jackknife_kbest(task, learner, meta, args.input, args.output, args.k, args.folds,
                            verbose=not args.quiet)
    if not args.quiet:
        how = "" if args.folds is None else f" ({args.folds}-fold jackknife)"
        print(f"wrote the {args.k} best trees of {n} sentences{how} to {args.output} in "
              f"{time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return 0


def _cmd_demo(args) -> int:
    from .demo import run_demo

    run_demo(lang=args.lang, out_dir=args.out, n_jobs=args.n_jobs, quiet=args.quiet)
    return 0


def _cmd_info(args) -> int:
    from .io import inspect_model

    print(json.dumps(inspect_model(args.model), indent=2, sort_keys=True))
    return 0


def describe_options(task_name: str | None, learner_name: str | None) -> str:
    """The options of a task and a learner with their defaults and meanings, and the
    learners valid for the task (what ``latentstruct train TASK --help`` adds)."""
    from .learners import LEARNERS, valid_learners
    from .options import option_table
    from .tasks import TASKS

    if task_name is None:
        lines = ["tasks (latentstruct train TASK --help lists a task's options):"]
        for name, cls in sorted(TASKS.items()):
            lines.append(f"  {name:<16}default learner {cls.default_learner}; learners: "
                         f"{', '.join(valid_learners(cls))}")
        lines.append("learners: " + ", ".join(sorted(LEARNERS)))
        return "\n".join(lines)
    task_cls, learner_cls = _task_and_learner_classes(task_name, learner_name)
    lname = learner_cls.registry_name
    default = " (the task's default)" if learner_name is None else ""
    return "\n".join([
        f"options of task {task_name!r} (--option KEY=VALUE):",
        option_table(task_cls, task_cls.param_defaults()),
        "",
        f"options of learner {lname!r}{default} (--option KEY=VALUE; --learner NAME to change):",
        option_table(learner_cls, learner_cls().get_params(deep=False)),
        "",
        f"learners valid for {task_name!r}: {', '.join(valid_learners(task_cls))}",
        f"evaluate/predict accept only: "
        f"{', '.join(sorted(set(task_cls.evaluation_params) | set(learner_cls.evaluation_params)))}",
    ])


class _TrainHelp(argparse.Action):
    """``train --help`` that also lists the options of the task (and learner) named so far."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.print_help()
        print()
        try:
            print(describe_options(getattr(namespace, "task", None),
                                   getattr(namespace, "learner", None)))
        except ConfigError as exc:
            print(f"latentstruct: error: {exc}", file=sys.stderr)
            parser.exit(2)
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="latentstruct",
        description="Discriminative learning over constrained latent structures.",
    )
    p.add_argument("--version", action="version", version=f"latentstruct {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("train", help="train a model on a task", add_help=False,
                       description="Train a model. 'latentstruct train TASK [--learner NAME] "
                                   "--help' lists the task's and the learner's options.")
    t.add_argument("-h", "--help", action=_TrainHelp,
                   help="show this help and the options of TASK (and --learner) if given")
    t.add_argument("task", help="task name (chunk, pos, dep, rerank, citations, translit, "
                                "paraphrase, rte, grammaticality)")
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

    x = sub.add_parser("explain", help="draw the latent structure a model picks for one input, "
                                       "or a DISTRO model's label similarities")
    x.add_argument("--model", required=True)
    x.add_argument("--source", help="first input (e.g. an English name); not for distro models")
    x.add_argument("--target", help="second input (e.g. its transliteration); not for distro models")
    x.add_argument("--out", required=True, help="output picture (.png)")
    x.add_argument("--option", action="append", metavar="KEY=VALUE")
    x.set_defaults(func=_cmd_explain)

    k = sub.add_parser("kbest", help="write each sentence's k best parses (for reranking)",
                       description="Write the k best trees of every sentence under a 'dep' "
                                   "model as a k-best file (JSON lines; see README). With "
                                   "--folds N, INPUT must be the model's training data: each "
                                   "fold is parsed by a parser trained on the other folds.")
    k.add_argument("--model", required=True, help="a 'dep' model file")
    k.add_argument("--input", required=True, help="CoNLL-U file, .dp file or .dp directory")
    k.add_argument("--output", required=True, help="output k-best file")
    k.add_argument("-k", type=int, default=16, help="trees per sentence (default 16)")
    k.add_argument("--folds", type=int, default=None,
                   help="jackknife: parse the model's training data in N folds")
    k.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="evaluation-time task option, e.g. ptb_split=heldout (repeatable)")
    k.add_argument("--quiet", action="store_true")
    k.set_defaults(func=_cmd_kbest)

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
