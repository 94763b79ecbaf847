"""``latentstruct train``."""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from ..exceptions import ConfigError
from .common import route_options, task_and_learner_classes
from .compute import check_compute_args, compute_context, learner_n_jobs

__all__ = ["cmd_train"]


def cmd_train(args) -> int:
    train_given = args.train
    _check_paths(args)  # before the (long) training, not after; before the heavy imports
    if args.resume is not None:
        from .train_resume import check_resumable_file, cmd_train_from_model, is_model_file

        check_resumable_file(args.resume)  # a CRFsuite model file: said as what it is
        if is_model_file(args.resume):  # a model of an online learner continues on new data
            return cmd_train_from_model(args)
    from ..learners.persistence import save_trained
    from ..pipelines.training import plan_training, run_training

    from .classes import check_classes, declare_classes, parse_classes

    classes = parse_classes(args.classes)  # before the configuration: the command line wins
    options, recorded, config_classes = _options_with_config(args)
    if classes is None and config_classes is not None:
        classes = parse_classes(json.dumps(config_classes))
    task_cls, learner_cls = task_and_learner_classes(args.task, args.learner)
    if args.train != train_given:  # the --config file named the training data
        _check_paths(args)
    learner_name = learner_cls.registry_name
    task_opts, learner_opts = route_options(options, task_cls, learner_cls)
    seed = _apply_seed(args.seed, task_cls, learner_cls, task_opts, learner_opts)
    check_compute_args(args, learner_cls)
    if learner_n_jobs(args, learner_cls) is not None:  # --n-jobs wins over a --config file's
        learner_opts["n_jobs"] = learner_n_jobs(args, learner_cls)
    # Before any data is read: the values and the pair are checked, the task is built.
    plan = plan_training(task_cls, learner_cls, task_opts, learner_opts, task_name=args.task,
                         cli=True)
    task = plan.task
    if classes is not None:  # the list, the learner, the task's label rules: before the data
        check_classes(classes, task, learner_cls, plan.learner_opts)
    fit_kw = {k: v for k in ("checkpoint", "resume") if (v := getattr(args, k, None))}
    if fit_kw:  # before any data: a --resume checkpoint must match the command line
        from ..learners.checkpoint import check_cli_options

        check_cli_options(fit_kw.get("checkpoint"), fit_kw.get("resume"), task, learner_cls,
                          plan.learner_opts)
    if args.train is None and not task_cls.has_default_data:
        raise ConfigError(f"task {args.task!r} needs --train PATH")
    # the cluster first: an unreachable scheduler fails before the data is read
    with compute_context(args, quiet=args.quiet):
        def load(t):
            dataset = t.read(args.train, split="train")
            # every label of the data must be declared: checked before any training
            return dataset if classes is None else declare_classes(dataset, classes)

        result = run_training(plan, load, fit_kw=fit_kw, verbose=not args.quiet)
    dataset, learner, t0 = result.dataset, result.learner, result.started
    elapsed = time.perf_counter() - t0
    from ..pipelines.kbest import data_digest

    extra = {"train_path": str(args.train), "n_train": len(dataset),
             "train_seconds": round(elapsed, 3), "seed": seed}
    if args.train is not None:  # identifies the data (k-best lists name their parser by it)
        extra["train_digest"] = data_digest(args.train)
    if classes is not None:  # a replay (--config MODEL, info --as-config) declares them too
        extra["declared_classes"] = list(classes)
    _check_replayed_data(recorded, extra.get("train_digest"), args.train)
    save_trained(args.model, task, learner, extra=extra)
    if not args.quiet:
        if dataset.binary is None:
            what = f"{len(dataset)} {args.task} examples"
        else:  # J-LIS: say both kinds of supervision, and the binary split
            y = np.asarray(dataset.binary.targets)
            what = (f"{len(dataset)} labelled {args.task} examples and {len(y)} binary ones "
                    f"({int((y > 0).sum())} positive, {int((y <= 0).sum())} negative)")
        print(
            f"trained {learner_name} on {what} in {elapsed:.1f}s "
            f"({learner.n_iter_} iterations); model written to {args.model}",
            file=sys.stderr,
        )
    return 0


def _check_paths(args) -> None:
    """The path rule: no output over an input or another output, outputs writable, no
    FIFO or device read (``--resume`` may be the ``--checkpoint`` file: the run goes on
    writing the checkpoint it resumed from)."""
    from ..data.path_rule import check_paths

    config_is_model = args.config is not None and str(args.config).lower().endswith(".npz")
    check_paths({"--train": args.train, "--config": args.config, "--resume": args.resume},
                {"--model": args.model, "--checkpoint": args.checkpoint},
                stdin={"--train"}, regular={"--resume"} | ({"--config"} if config_is_model
                                                           else set()),
                same_ok={("--resume", "--checkpoint")})


def _options_with_config(args):
    """Fill ``args`` from ``--config`` (command-line values win); return the options to
    route, the metadata of the model the configuration came from, if it came from one, and
    the configuration's declared ``classes`` (None without)."""
    if args.config is None:
        if args.task is None:
            raise ConfigError("train needs a TASK (latentstruct train TASK ...) or --config FILE")
        return list(args.option or []), None, None
    from .runconfig import load_run_config, merge_options

    config, recorded = load_run_config(args.config)
    if args.task is None:
        args.task = config.get("task")
        if args.task is None:
            raise ConfigError(f"--config {args.config} names no task; add task = \"NAME\" or "
                              f"give it on the command line")
    elif config.get("task") not in (None, args.task):
        raise ConfigError(f"--config {args.config} is for task {config['task']!r}, but the "
                          f"command line says {args.task!r}")
    if args.learner is None:
        args.learner = config.get("learner")
    if args.seed is None:
        args.seed = config.get("seed")
    if args.train is None and recorded is None:  # a model file's paths are never used
        args.train = config.get("train")
    if args.train is None and recorded is not None and config.get("train"):
        raise ConfigError(f"--config {args.config} is a model file; it was trained on "
                          f"{config['train']!r}, but paths in a model file are not used: give "
                          f"--train PATH (its digest is checked against the model's)")
    return merge_options(config.get("options") or {}, args.option), recorded, \
        config.get("classes")


def _apply_seed(seed, task_cls, learner_cls, task_opts, learner_opts) -> int:
    """``--seed N`` seeds the learner (``random_state``) and the task's own sampling
    (``seed`` or ``sample_seed``) unless an ``--option`` sets them; returns the seed the
    run records (the learner's ``random_state``, 0 by default)."""
    task_seed_keys = [k for k in ("seed", "sample_seed") if k in task_cls.param_defaults()]
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
            raise ConfigError(f"--seed must be an integer in [0, 2**32 - 1], got {seed!r}")
        if "random_state" in learner_cls().get_params(deep=False):
            learner_opts.setdefault("random_state", seed)
        for key in task_seed_keys:
            task_opts.setdefault(key, seed)
    recorded = learner_opts.get("random_state",
                                learner_cls().get_params(deep=False).get("random_state"))
    return recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else seed


def _check_replayed_data(recorded, digest, train_path) -> None:
    """Replaying a model's run on other data is allowed, but said."""
    if recorded is None:
        return
    expected = (recorded.get("extra") or {}).get("train_digest")
    if expected and digest and expected != digest:
        import warnings

        warnings.warn(f"--train {train_path} is not the data the --config model was trained "
                      f"on (digests differ); the new model will differ from it", UserWarning,
                      stacklevel=2)

