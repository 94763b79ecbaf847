"""``latentstruct demo``, ``latentstruct info`` and ``latentstruct options``."""

from __future__ import annotations

import json

__all__ = ["cmd_demo", "cmd_info", "cmd_options"]


def cmd_demo(args) -> int:
    from pathlib import Path

    from ..data.atomic import check_output_path
    from ..pipelines.demo import run_demo
    from .compute import check_compute_args

    check_compute_args(args, None)  # --n-jobs: the check train, evaluate and predict run
    # the picture's path is checked before the demo's training, not after it
    check_output_path(Path(args.out) / f"demo_alignment_{args.lang}.png", what="--out")
    run_demo(lang=args.lang, out_dir=args.out, n_jobs=args.n_jobs, quiet=args.quiet)
    return 0


def cmd_info(args) -> int:
    from ..data.path_rule import check_paths
    from ..estimators import estimator_class
    from ..io import inspect_model

    check_paths({"--model": args.model}, regular={"--model"})  # a FIFO is never opened
    metadata = inspect_model(args.model)
    estimator_class(metadata, args.model)  # an estimator name latentstruct.load refuses
    if getattr(args, "as_config", False):
        from .runconfig import run_config_from_metadata

        # JSON is valid input for `latentstruct train --config FILE.json`
        print(json.dumps(run_config_from_metadata(metadata), indent=2, sort_keys=True))
    else:
        print(json.dumps(metadata, indent=2, sort_keys=True))
    return 0


def cmd_options(args) -> int:
    from .help import describe_options

    print(describe_options(args.task, args.learner))
    return 0
