"""``latentstruct evaluate`` and ``latentstruct predict``."""

from __future__ import annotations

import json

from ..exceptions import ConfigError
from .common import load_for, metric_value

__all__ = ["cmd_evaluate", "cmd_predict"]


def cmd_evaluate(args) -> int:
    task, learner = load_for(args.model, args.option, "evaluate")
    from ..learners import LatentBinaryLearner

    if args.test is None and not task.has_default_data:
        raise ConfigError(f"evaluating a {task.name!r} model needs --test PATH")
    dataset = task.read(args.test, split="test")
    decision = learner.decision_function if isinstance(learner, LatentBinaryLearner) else None
    metrics = task.evaluate_model(dataset, learner.predict, decision)
    print(json.dumps({k: metric_value(v) for k, v in metrics.items()}))
    return 0


def cmd_predict(args) -> int:
    task, learner = load_for(args.model, args.option, "predict")
    dataset = task.read(args.input, split="test")
    X = task.featurize(dataset)
    task.write_predictions(args.output, dataset, learner.predict(X))
    return 0
