"""Option listings for ``train TASK --help``, drawn from the registries and docstrings."""

from __future__ import annotations

import argparse
import sys

from ..exceptions import ConfigError
from .common import task_and_learner_classes

__all__ = ["describe_options", "TrainHelp", "task_names"]


def task_names() -> list[str]:
    """The registered tasks, named without importing them (the task modules pull in
    scikit-learn and numba: over a second), so ``latentstruct train --help`` stays fast:
    read from their source by :func:`latentstruct.registry.task_modules`."""
    from ..registry import task_modules

    return sorted(task_modules())


def describe_options(task_name: str | None, learner_name: str | None) -> str:
    """The options of a task and a learner with their defaults and meanings, and the
    learners valid for the task (what ``latentstruct train TASK --help`` adds)."""
    from ..learners import LEARNERS, valid_learners
    from ..options import option_table
    from ..tasks import TASKS
    from ..tasks.base import learner_defaults_for

    if task_name is None:
        lines = ["tasks (latentstruct train TASK --help lists a task's options):"]
        for name, cls in sorted(TASKS.items()):
            lines.append(f"  {name:<16}default learner {cls.default_learner}; learners: "
                         f"{', '.join(valid_learners(cls))}")
        lines.append("learners: " + ", ".join(sorted(LEARNERS)))
        return "\n".join(lines)
    task_cls, learner_cls = task_and_learner_classes(task_name, learner_name)
    lname = learner_cls.registry_name
    default = " (the task's default)" if learner_name is None else ""
    own = learner_defaults_for(task_cls, learner_cls)
    if own:  # say which defaults are the task's, not the learner's
        default += (f"; task {task_name!r} sets "
                    f"{', '.join(f'{k}={v!r}' for k, v in own.items())} by default")
    return "\n".join([
        f"options of task {task_name!r} (--option KEY=VALUE):",
        option_table(task_cls, task_cls.param_defaults()),
        "",
        f"options of learner {lname!r}{default} (--option KEY=VALUE; --learner NAME to change):",
        option_table(learner_cls, {**learner_cls().get_params(deep=False), **own}),
        "",
        f"learners valid for {task_name!r}: {', '.join(valid_learners(task_cls))}",
        f"evaluate/predict accept only: "
        f"{', '.join(sorted(set(task_cls.evaluation_params) | set(learner_cls.evaluation_params)))}",
    ])


class TrainHelp(argparse.Action):
    """``train --help`` that also lists the options of the task (and learner) named so far."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.print_help()
        print()
        task = getattr(namespace, "task", None)
        if task is None:  # no imports: the names, and where the full listing is
            print(f"tasks: {', '.join(task_names())}\n'latentstruct train TASK --help' or "
                  f"'latentstruct options TASK' lists a task's options; 'latentstruct "
                  f"options' lists each task's learners")
            parser.exit(0)
        try:
            print(describe_options(task, getattr(namespace, "learner", None)))
        except ConfigError as exc:
            print(f"latentstruct: error: {exc}", file=sys.stderr)
            parser.exit(2)
        parser.exit(0)
