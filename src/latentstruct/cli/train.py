"""``latentstruct train``."""

from __future__ import annotations

import sys
import time

import numpy as np

from ..exceptions import ConfigError
from .common import route_options, task_and_learner_classes

__all__ = ["cmd_train"]


def cmd_train(args) -> int:
    from ..learners import check_compatible
    from ..learners.persistence import save_trained

    task_cls, learner_cls = task_and_learner_classes(args.task, args.learner)
    learner_name = learner_cls.registry_name
    task_opts, learner_opts = route_options(args.option, task_cls, learner_cls)
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
    from ..pipelines import attach_chunker, attach_tagger

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
    from ..kbest_lists import data_digest

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
