"""``latentstruct evaluate`` and ``latentstruct predict``."""

from __future__ import annotations

import json
import sys

from ..exceptions import ConfigError, InputError
from .common import load_for, metric_value
from .compute import check_compute_args, compute_context, learner_n_jobs

__all__ = ["cmd_evaluate", "cmd_predict"]


def _load(args, command):
    """The model with ``--option``s and ``--n-jobs`` applied (checked before any data)."""
    check_compute_args(args, None)
    task, learner = load_for(args.model, args.option, command)
    check_compute_args(args, type(learner))
    if learner_n_jobs(args, type(learner)) is not None:
        learner.set_params(n_jobs=learner_n_jobs(args, type(learner)))
    return task, learner


def cmd_evaluate(args) -> int:
    from ..data.path_rule import check_paths

    # before the model is loaded: no FIFO or device is opened ("-" is standard input)
    check_paths({"--model": args.model, "--test": args.test}, regular={"--model"},
                stdin={"--test"})
    task, learner = _load(args, "evaluate")
    from ..learners import LatentBinaryLearner
    from ..tasks.reports import evaluate_with_report

    if args.test is None and not task.has_default_data:
        raise ConfigError(f"evaluating a {task.name!r} model needs --test PATH")
    decision = learner.decision_function if isinstance(learner, LatentBinaryLearner) else None
    with compute_context(args, quiet=args.quiet):  # a bad scheduler fails before reading
        dataset = task.read(args.test, split="test")
        metrics = metric_value(evaluate_with_report(task, dataset, learner.predict, decision))
    if getattr(args, "format", "json") == "table":
        from ..tasks.reports import format_table

        print(format_table(metrics))
    else:
        print(json.dumps(metrics))
    return 0


def cmd_predict(args) -> int:
    from ..data.path_rule import check_paths
    from ..data.readers.docbin import is_docbin_path

    # before the model is loaded or anything is read: a bad --output fails at once, and
    # --output may not be --input or --model ("-" is standard input / standard output)
    check_paths({"--model": args.model, "--input": args.input}, {"--output": args.output},
                regular={"--model"}, stdin={"--input"}, stdout={"--output"})
    if is_docbin_path(args.output):
        raise InputError(f"--output {args.output}: predictions are written as text (CoNLL-U, "
                         "CoNLL-2000 lines, ...), not as a spaCy DocBin; name the output by "
                         "its format (e.g. pred.conllu), or tag a pipeline's Docs with the "
                         "latentstruct spaCy components")
    to_stdout = args.output == "-"
    task, learner = _load(args, "predict")
    with compute_context(args, quiet=args.quiet):
        dataset = task.read(args.input, split="test")
        predictions = learner.predict(task.featurize(dataset))
    if not to_stdout:
        task.write_predictions(args.output, dataset, predictions)
        return 0
    # the task writers write files (atomically); stdout gets a finished file's text
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="latentstruct-predict-") as tmp:
        out = Path(tmp) / "predictions"
        task.write_predictions(out, dataset, predictions)
        data = out.read_bytes()
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is not None:  # the bytes as written (UTF-8), whatever the terminal's encoding
        binary.write(data)
        binary.flush()
    else:
        sys.stdout.write(data.decode("utf-8"))
    return 0
