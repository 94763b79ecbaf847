"""``latentstruct train TASK --train NEW_DATA --model OUT --resume MODEL``: continue an
online learner's model on new data (streaming).

``--resume`` takes either a checkpoint (``--checkpoint``; the interrupted run continues on
the same data, :mod:`latentstruct.learners.checkpoint`) or a model file; the file's
metadata (``kind``) tells which.  A model of an online learner (one with ``partial_fit``:
perceptron, latent-pa, sgd-ssvm, pa, arow, and crf trained with ``solver=sgd``) continues from where
it stopped: its fitted task
featurises the new data in the model's feature space, and the learner makes
``partial_fit`` passes over it (one by default; ``--option max_iter=N``, or ``n_epochs=N``
for sgd-ssvm, asks for N), continuing its weights, averages, step counter and random
generator.  The new model keeps the old one's hyperparameters (the passes option is not
one of them) and records where it continued from.
"""

from __future__ import annotations

import sys
import time

from ..exceptions import ConfigError
from .common import parse_option
from .compute import check_compute_args, compute_context, learner_n_jobs
from .resumable import resumable_learners, resume_problem

__all__ = ["is_model_file", "check_resumable_file", "cmd_train_from_model",
           "resume_problem"]


def check_resumable_file(path) -> None:
    """Refuse a CRFsuite model file as ``--resume`` (before any data is read): it is a
    model, but of another library's format, with no optimiser state to continue."""
    from .common import is_crfsuite_model

    if is_crfsuite_model(path):
        raise ConfigError(
            f"--resume {path} is a CRFsuite model file (python-crfsuite, sklearn-crfsuite or "
            f"crfsuite learn), which cannot continue training: it holds CRFsuite's weights "
            f"but no training state, and CRFsuite's L-BFGS optimises the whole data at once. "
            f"Train afresh on all the data (latentstruct train sequence --learner crf "
            f"--train DATA --model OUT); evaluate and predict take the file as it is")


def is_model_file(path) -> bool:
    """Whether ``path`` is a model file rather than a checkpoint (read from its metadata;
    a damaged file raises ``ModelFormatError``)."""
    from ..io import inspect_model
    from ..learners.checkpoint import CHECKPOINT_KIND

    return inspect_model(path).get("kind") != CHECKPOINT_KIND


def _check_command_line(args, metadata) -> type:
    """The learner class of the model at ``--resume``, after checking that it can continue
    training on this command line (before any data or array is read)."""
    from ..learners import get_learner_class

    path, learner, task = args.resume, metadata.get("learner"), metadata.get("task")
    params = metadata.get("learner_params")
    problem = resume_problem(learner, params if isinstance(params, dict) else {})
    if problem is not None:  # before any data is read, in the command line's words
        raise ConfigError(
            f"--resume {path} is a model of {problem}; online learners: "
            f"{resumable_learners()}. To finish an interrupted run, give --resume the run's "
            f"--checkpoint file (this is a model file, not a checkpoint), or train afresh "
            f"without --resume")
    if args.task is None:
        raise ConfigError(f"train needs a TASK: latentstruct train {task} --resume {path} ...")
    if task != args.task:
        raise ConfigError(
            f"--resume {path} is a model of task {task!r}, not {args.task!r}; continue it with "
            f"latentstruct train {task} --resume {path} ..., or train a {args.task!r} model "
            f"afresh without --resume")
    if args.learner is not None and args.learner != learner:
        raise ConfigError(
            f"--resume {path} is a model of learner {learner!r}, but --learner says "
            f"{args.learner!r}; drop --learner (the model's learner continues) or train "
            f"afresh without --resume")
    for flag, value, why in (
            ("--config", args.config, "the model's own run configuration continues"),
            ("--checkpoint", args.checkpoint, "a model file is written at the end"),
            ("--seed", args.seed, "the model's random generator continues")):
        if value is not None:
            raise ConfigError(f"{flag} cannot be combined with --resume MODEL ({path}): {why}; "
                              f"drop {flag}")
    return get_learner_class(learner)


def _passes_and_options(options, learner_cls, task_params, path) -> tuple[int, str, dict]:
    """(passes, the option that gave them, the learner options to set) from ``--option``s:
    the passes and options that never change what is learned; anything else is refused."""
    params = learner_cls().get_params(deep=False)
    key = "n_epochs" if "n_epochs" in params else "max_iter"
    allowed = set(learner_cls.resume_may_change | learner_cls.evaluation_params) & set(params)
    allowed.add("shuffle")
    passes, learner_opts = 1, {}
    for text in options or []:
        name, value = parse_option(text)
        if name == key:
            learner_cls.validate_params({key: value})  # its declared range, as any option's
            passes = int(value)
        elif name in allowed:
            learner_opts[name] = value
        elif name not in params and name not in task_params:
            raise ConfigError(
                f"unknown option {name!r} for a {learner_cls.registry_name!r} model; options "
                f"accepted with --resume {path}: {key}=N (passes over the new data, default "
                f"1), {', '.join(sorted(allowed))}")
        else:
            raise ConfigError(
                f"option {name!r} cannot change when --resume {path} continues a model: the "
                f"task and the learner keep the model's parameters. Options accepted here: "
                f"{key}=N (passes over the new data, default 1), "
                f"{', '.join(sorted(allowed))}; train afresh without --resume to change others")
    learner_cls.validate_params(learner_opts)
    return passes, key, learner_opts


def encode_new_targets(task, dataset):
    """The new data's gold targets, encoded; a label the model does not have is refused
    (``UnseenLabelError``) at the line of the example holding it, before any weight
    changes: a model's label set is fixed when it is first trained."""
    from ..tasks.validation import UnseenLabelError

    try:
        return task.training_targets(dataset)
    except UnseenLabelError as exc:
        k = exc.example
        record = dataset.records[k] if k is not None and k < len(dataset.records) else None
        line = getattr(record, "line", None) or None
        # in the command line's words (the encoder speaks of y[i][t] and partial_fit)
        target = dataset.targets[k] if k is not None and k < len(dataset.targets) else None
        if isinstance(target, (list, tuple)) and exc.label in target:
            where = f"sentence {k + 1}, token {list(target).index(exc.label) + 1}: "
        else:
            where = "" if k is None or line is not None else f"example {k + 1}: "
        labels = list(exc.labels)
        shown = ", ".join(map(str, labels[:30])) + (
            f", ... ({len(labels)} in all)" if len(labels) > 30 else f" ({len(labels)})")
        raise UnseenLabelError(
            f"{where}the label {exc.label!r} is not one of the model's labels: {shown}. A "
            f"model's labels are fixed when it is first trained: declare a "
            f"stream's full label set on its first run (latentstruct train ... --classes "
            f"LABEL,LABEL,...), or correct the label", exc.label, exc.labels,
            getattr(record, "path", None) or dataset.path, line, k) from None


def cmd_train_from_model(args) -> int:
    """Continue the model at ``args.resume`` on ``args.train``; write ``args.model``."""
    from ..io import inspect_model

    path = args.resume
    metadata = inspect_model(path)
    learner_cls = _check_command_line(args, metadata)
    passes, key, learner_opts = _passes_and_options(args.option, learner_cls,
                                                    metadata.get("task_params") or {}, path)
    check_compute_args(args, learner_cls)
    if learner_n_jobs(args, learner_cls) is not None:
        learner_opts["n_jobs"] = learner_n_jobs(args, learner_cls)
    from ..learners.persistence import load_trained, save_trained

    task, learner, metadata = load_trained(path, expected_task=args.task)
    from .classes import check_same_classes, parse_classes

    check_same_classes(parse_classes(getattr(args, "classes", None)), task, path)
    learner.set_params(**learner_opts)
    if "progress" in learner.get_params(deep=False) and "progress" not in learner_opts:
        learner.set_params(progress=not args.quiet)  # bars as a first training draws them
    if args.train is None and not task.has_default_data:
        raise ConfigError(f"task {args.task!r} needs --train PATH (the new data to continue on)")
    n_iter_before = int(learner.n_iter_)
    with compute_context(args, quiet=args.quiet):
        t0 = time.perf_counter()
        dataset = task.read(args.train, split="train")
        Y = encode_new_targets(task, dataset)
        X = task.featurize(dataset)
        for _ in range(passes):
            learner.partial_fit(X, Y)
    elapsed = time.perf_counter() - t0
    from ..pipelines.training import settle_progress

    settle_progress(learner, learner_opts)  # the file records the progress asked for
    from ..pipelines.kbest import data_digest

    old = metadata.get("extra") or {}
    extra = {"train_path": str(args.train), "n_train": len(dataset),
             "train_seconds": round(elapsed, 3), "seed": old.get("seed"),
             "resumed_from": {"model": str(path), "n_iter": n_iter_before, "passes": passes,
                              "train_digest": old.get("train_digest")}}
    if args.train is not None:
        extra["train_digest"] = data_digest(args.train)
    save_trained(args.model, task, learner, extra=extra)
    if not args.quiet:
        print(f"continued {learner_cls.registry_name} model {path} on {len(dataset)} "
              f"{args.task} examples in {elapsed:.1f}s ({passes} pass{'es' * (passes != 1)}, "
              f"{key}={passes}; {learner.n_iter_} passes in all); model written to {args.model}",
              file=sys.stderr)
    return 0
