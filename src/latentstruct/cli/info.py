"""``latentstruct demo``, ``latentstruct info`` and ``latentstruct options``."""

from __future__ import annotations

import json

__all__ = ["cmd_demo", "cmd_info", "cmd_options", "describe_crfsuite_model"]


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
    from .common import is_crfsuite_model

    if is_crfsuite_model(args.model):  # latentstruct.load reads it: so does info
        if getattr(args, "as_config", False):
            from ..exceptions import ConfigError

            raise ConfigError(
                f"--as-config: {args.model} is a CRFsuite model file (python-crfsuite, "
                f"sklearn-crfsuite or crfsuite learn), which records no latentstruct run "
                f"(no options, no training data); drop --as-config to see what it holds, or "
                f"train a latentstruct model with `latentstruct train sequence --learner crf "
                f"--train DATA` (DATA in CRFsuite's data format)")
        print(json.dumps(describe_crfsuite_model(args.model), indent=2, sort_keys=True,
                         ensure_ascii=False))
        return 0
    metadata = inspect_model(args.model)
    estimator_class(metadata, args.model)  # an estimator name latentstruct.load refuses
    if getattr(args, "as_config", False):
        from .runconfig import run_config_from_metadata

        # JSON is valid input for `latentstruct train --config FILE.json`
        print(json.dumps(run_config_from_metadata(metadata), indent=2, sort_keys=True))
    else:
        print(json.dumps(metadata, indent=2, sort_keys=True))
    return 0


def describe_crfsuite_model(path) -> dict:
    """What ``info`` prints for a CRFsuite model file: its format and what it holds (the
    file read and checked whole, as ``latentstruct.load`` reads it)."""
    import numpy as np

    from ..data import read_crfsuite_model

    model = read_crfsuite_model(path)
    n_transitions = int(np.count_nonzero(model.transitions))
    return {
        "format": "crfsuite",
        "description": "CRFsuite model file (written by python-crfsuite, sklearn-crfsuite or "
                       "crfsuite learn): a first-order linear-chain CRF. latentstruct reads "
                       "it as a 'sequence' model with the learner 'crf' (latentstruct.load, "
                       "CRF(model_filename=...), evaluate, predict, inspect); it records no "
                       "training options",
        "model_type": model.model_type,
        "format_version": model.version,
        "file_size": model.file_size,
        "task": "sequence",
        "learner": "crf",
        "n_labels": model.n_labels,
        "labels": list(model.labels),
        "n_attributes": model.n_attributes,
        "n_features": model.n_features,
        "n_state_features": int(model.state_weights.shape[0]),
        # CRFsuite stores only non-zero transition weights (module docstring of the reader)
        "n_transition_features": n_transitions,
    }


def cmd_options(args) -> int:
    from .help import describe_options

    print(describe_options(args.task, args.learner))
    return 0
