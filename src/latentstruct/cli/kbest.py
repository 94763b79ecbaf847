"""``latentstruct kbest``."""

from __future__ import annotations

import sys
import time

from ..exceptions import ConfigError
from .common import load_for

__all__ = ["cmd_kbest"]


def cmd_kbest(args) -> int:
    from ..io import inspect_model
    from ..pipelines.kbest import jackknife_kbest, write_model_kbest

    from ..limits import FOLDS, KBEST_K, check_bounded

    check_bounded("-k", args.k, KBEST_K, default=16)  # before the model is even loaded
    if args.folds is not None:
        check_bounded("--folds", args.folds, FOLDS)
    from .compute import check_compute_args

    check_compute_args(args, None)  # the --n-jobs rule of every command: [1, 1024] or -1
    from ..data.path_rule import check_paths

    # before the (long) parsing, not after it; --output may not be --input or --model
    check_paths({"--model": args.model, "--input": args.input}, {"--output": args.output},
                regular={"--model"}, stdin={"--input"})
    task, learner = load_for(args.model, args.option, "kbest")
    from ..tasks import TASKS
    from ..tasks.contracts import KBEST

    if KBEST in task.offered_capabilities() and \
            KBEST not in task.offered_capabilities(task.get_params()):
        raise ConfigError(f"{args.model} is a {task.name!r} model with global rules "
                          f"({task.get_params().get('rules')!r}), under which only the best "
                          f"labelling can be found (an ILP), not a k-best list; use "
                          f"`latentstruct predict`, or train without the global rules")
    if KBEST not in task.offered_capabilities(task.get_params()):
        listing = sorted(n for n, c in TASKS.items() if KBEST in c.offered_capabilities())
        raise ConfigError(f"{args.model} is a {task.name!r} model, which writes no k-best lists; "
                          f"tasks that do: {', '.join(listing)} (train one with "
                          f"`latentstruct train dep` or `latentstruct train chunk`)")
    from ..tasks.sequence import SequenceLabellingTask

    if isinstance(task, SequenceLabellingTask):
        return _sequence_nbest(args, task, learner)
    # after the task's check: a CRFsuite model file (a 'sequence' model) has no metadata
    meta = inspect_model(args.model)
    t0 = time.perf_counter()
    if args.folds is None:
        n = write_model_kbest(task, learner, meta, args.input, args.output, args.k,
                              verbose=not args.quiet)
    else:
        n = jackknife_kbest(task, learner, meta, args.input, args.output, args.k, args.folds,
                            n_jobs=args.n_jobs, verbose=not args.quiet)
    if not args.quiet:
        how = "" if args.folds is None else f" ({args.folds}-fold jackknife)"
        print(f"wrote the {args.k} best trees of {n} sentences{how} to {args.output} in "
              f"{time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return 0


def _sequence_nbest(args, task, learner) -> int:
    """A sequence model's n best tag sequences of every sentence of ``--input``, as JSON
    lines: ``{"sentence": i, "nbest": [{"tags": [...], "score": s, "probability": p}]}``,
    best first (``probability`` null unless the model is a CRF)."""
    import json

    from ..data.atomic import atomic_write
    from .compute import compute_context

    if args.folds is not None:
        raise ConfigError(f"--folds jackknifes a parser's k-best lists for reranking; "
                          f"{args.model} is a {task.name!r} model: drop --folds")
    t0 = time.perf_counter()
    with compute_context(args, quiet=args.quiet):
        dataset = task.read(args.input, split="test")
        lists = learner.predict_nbest(task.featurize(dataset), args.k)
    with atomic_write(args.output, "w") as fh:
        for i, best in enumerate(lists):
            tags = task.decode_targets([y for y, _, _ in best])
            fh.write(json.dumps({"sentence": i, "nbest": [
                {"tags": list(t), "score": score, "probability": p}
                for t, (_, score, p) in zip(tags, best)]}) + "\n")
    if not args.quiet:
        print(f"wrote the {args.k} best tag sequences of {len(lists)} sentences to "
              f"{args.output} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return 0
