"""The one training path: how a task and a learner become a trained model.

``latentstruct train`` and the estimators (``Estimator.fit``, the first
``Estimator.partial_fit``) run the same sequence, written here once:

1. :func:`plan_training`, before any data is read: the task's defaults for the learner
   (``Task.learner_defaults``) under the given options; every parameter value checked, and
   the pair's capabilities (``learners.check_compatible``, from classes and values alone);
   the task built and the relations between its values checked; a learner that also learns
   from binary examples (J-LIS) refused for a task that draws none
   (:func:`check_binary_examples`).  This is the one parameter check of a training run.
2. :func:`run_training`, with parameter validation skipped (``params.
   skip_parameter_validation``: the task's ``fit``, its featurizer's and the learner's
   do not check the values :func:`plan_training` checked): the pretrained helpers the task declares
   (``Task.pretrained_helpers``) that must exist before its data is read (a POS tagger);
   the data loaded (a file, or Python lists); then :func:`fit_on_dataset`: the task's
   training sample (``training_sample``: J-LIS's S and B), ``task.fit``, featurising, the
   learner built, the helpers a learner needs after ``task.fit`` (a supervised chunker whose
   weights are the task's heuristic), the learner's ``fit``, and the result checked
   (:func:`check_trained`: weights of the task's length, all finite).

:func:`start_online` is the first ``partial_fit`` call's share of the same steps (no
training sample, no learner ``fit``).  The steps are public so that an experiment can run
one of them on its own data (``fit_on_dataset`` on a dataset already read), but nothing
else decides the order.

A task says which pretrained helpers it needs in its class attribute
``pretrained_helpers`` (:data:`HELPERS` lists the known ones and the protocols they ask of
the task); the pipeline never guesses them from the methods a task happens to have.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..exceptions import ConfigError, check_is_fitted
from ..learners import check_compatible
from ..params import skip_parameter_validation
from ..tasks.base import Dataset, learner_defaults_for
from ..tasks.contracts import protocol_members
from .tagging import (POS_TAGGER, SUPERVISED_CHUNKER, PosTagged, SupervisedChunking,
                      attach_chunker, attach_tagger)

__all__ = ["TrainingPlan", "TrainingResult", "HELPERS", "plan_training", "run_training",
           "fit_on_dataset", "start_online", "build_learner", "settle_progress",
           "check_binary_examples", "check_helpers", "check_trained"]

#: pretrained helper -> the protocol a task declaring it implements (``pipelines.tagging``)
HELPERS: dict[str, type] = {POS_TAGGER: PosTagged, SUPERVISED_CHUNKER: SupervisedChunking}


@dataclass(frozen=True)
class TrainingPlan:
    """What is decided before any data is read: the task (built, not fitted), the learner
    class and its options (the task's defaults for it under the given ones)."""

    task: Any
    learner_cls: type
    learner_opts: dict


@dataclass(frozen=True)
class TrainingResult:
    """A trained model: the fitted task and learner, the training sample actually used
    (J-LIS's binary examples in ``dataset.binary``), and when training started
    (``time.perf_counter()``, before the helpers and the data)."""

    task: Any
    learner: Any
    dataset: Dataset
    started: float


def check_binary_examples(task, learner_cls, task_name: str, *, cli: bool = False) -> None:
    """A learner that also learns from binary examples (J-LIS) needs a task that draws
    them; refused before any data is read (``cli``: the fix in command-line words)."""
    if learner_cls.uses_binary_examples and not task.draws_binary_examples():
        give, other = (("--option n_binary=N", "--learner ssvm") if cli
                       else ("n_binary=N", "learner='ssvm'"))
        raise ConfigError(
            f"learner {learner_cls.registry_name!r} learns from binary examples as well as "
            f"labelled structures, and task {task_name!r} draws none with these options; give "
            f"{give} (N training sentences become positive binary examples, each with "
            f"negatives_per_positive shuffled negatives), or use {other}")


def check_helpers(task_cls) -> frozenset:
    """The pretrained helpers ``task_cls`` declares, each known and each protocol's members
    present on the class; ``ConfigError`` naming the task, the helper and what is missing."""
    declared = frozenset(task_cls.pretrained_helpers)
    name = task_cls.name or task_cls.__name__
    unknown = sorted(declared - set(HELPERS))
    if unknown:
        raise ConfigError(f"task {name!r} declares pretrained_helpers {unknown}, which the "
                          f"training pipeline does not know; known: {', '.join(sorted(HELPERS))}")
    for helper in sorted(declared):
        missing = [m for m in protocol_members(HELPERS[helper]) if not hasattr(task_cls, m)
                   and m not in task_cls.param_defaults()]
        if missing:
            raise ConfigError(
                f"task {name!r} declares the pretrained helper {helper!r} but lacks "
                f"{', '.join(missing)} ({HELPERS[helper].__name__} in "
                f"latentstruct.pipelines.tagging lists what it asks); add them or drop "
                f"{helper!r} from pretrained_helpers")
    return declared


def plan_training(task_cls, learner_cls, task_opts: dict, learner_opts: dict, *,
                  task_name: str | None = None, cli: bool = False) -> TrainingPlan:
    """Step 1, before any data: every value checked once, the pair checked, the task
    built.  ``task_opts`` and ``learner_opts`` are the options given (routed by name);
    ``cli`` words the binary-examples fix for the command line."""
    # the task's defaults for this learner (e.g. the parser's C), unless given
    learner_opts = {**learner_defaults_for(task_cls, learner_cls), **learner_opts}
    check_compatible(task_cls, {**task_cls.param_defaults(), **task_opts}, learner_cls,
                     learner_opts)
    check_helpers(task_cls)
    task = task_cls(**task_opts)
    task._check_param_relations()  # each value alone: check_compatible, just above
    check_binary_examples(task, learner_cls, task_name or task_cls.name, cli=cli)
    return TrainingPlan(task, learner_cls, learner_opts)


def _attach_before_data(task, verbose: bool) -> None:
    """The helpers a task needs before it reads its data (its POS tagger)."""
    if POS_TAGGER in type(task).pretrained_helpers:
        attach_tagger(task, verbose=verbose)


def _attach_after_fit(task, learner, verbose: bool) -> None:
    """The helpers a learner needs once the task is fitted (the supervised chunker)."""
    if SUPERVISED_CHUNKER in type(task).pretrained_helpers:
        attach_chunker(task, learner, verbose=verbose)


def build_learner(task, learner_cls, learner_opts: dict, *, verbose: bool = False):
    """``learner_cls(structure=task.structure(), **learner_opts)``, showing progress when ``verbose`` and
    the options leave it unset (:func:`settle_progress` takes that back after the fit)."""
    learner = learner_cls(structure=task.structure(), **learner_opts)
    if "progress" in learner.get_params() and "progress" not in learner_opts:
        learner.set_params(progress=verbose)
    return learner


def settle_progress(learner, learner_opts: dict) -> None:
    """After a fit: the ``progress`` the options gave, or the learner's default where they
    gave none.  Bars a run drew because it was verbose (the command line without
    ``--quiet``) were that run's display, not a setting of the model: the model file
    records, and ``latentstruct info`` shows, what the user asked for, as listed by
    ``latentstruct options``."""
    params = learner.get_params(deep=False)
    if "progress" in params and "progress" not in learner_opts:
        import inspect

        default = inspect.signature(type(learner)).parameters["progress"].default
        learner.set_params(progress=default)


def check_trained(task, learner) -> None:
    """The result of a fit: the learner is fitted (``coef_``) and every weight is finite.

    A NaN or infinite weight is refused here, when the options that caused it are at hand,
    rather than when the saved model file is loaded (it would be refused then as damaged).
    """
    check_is_fitted(learner, "coef_", what=f"The {type(learner).__name__} trained on task "
                    f"{task.name!r}", why="its fit returned without weights (coef_)",
                    fix="The learner's fit must set coef_; report this as a bug.")
    w = np.asarray(learner.coef_, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise ConfigError(
            f"training {type(learner).__name__} on task {task.name!r} ended with {bad.size} "
            f"non-finite weights (NaN or infinity; the first at index {int(bad[0])}): the "
            f"optimisation diverged. Lower the step size or C, or scale the features")


def fit_on_dataset(task, dataset: Dataset, learner_cls, learner_opts: dict, *,
                   fit_kw: dict | None = None, verbose: bool = False):
    """Fit ``task`` on ``dataset``, featurise it and train a ``learner_cls``; returns
    ``(dataset, learner)``, the dataset being the training sample actually used.

    The data half of :func:`run_training` (which calls it after the helpers and the data):
    the training sample, ``task.fit``, featurising, the learner, the helpers it needs
    after ``task.fit``, its ``fit`` (with binary examples when it takes them) and
    :func:`check_trained`.  ``learner_opts`` are used as given (:func:`plan_training` adds
    the task's defaults).
    """
    dataset = task.training_sample(dataset)
    task.fit(dataset)
    X = task.featurize(dataset)
    Y = task.training_targets(dataset)
    learner = build_learner(task, learner_cls, learner_opts, verbose=verbose)
    _attach_after_fit(task, learner, verbose)
    if learner.uses_binary_examples:
        binary = dataset.binary
        learner.fit(X, Y, task.featurize(binary), np.asarray(binary.targets), **(fit_kw or {}))
    else:
        learner.fit(X, Y, **(fit_kw or {}))
    settle_progress(learner, learner_opts)
    check_trained(task, learner)
    return dataset, learner


def run_training(plan: TrainingPlan, load: Callable[[Any], Dataset], *,
                 fit_kw: dict | None = None, verbose: bool = False) -> TrainingResult:
    """Step 2: the helpers the task needs before its data, ``load(task)`` (``task.read``
    of a file, or ``task.make_dataset`` of Python lists), then :func:`fit_on_dataset`.
    ``fit_kw`` go to the learner's ``fit`` (``checkpoint=``, ``resume=``)."""
    started = time.perf_counter()
    task = plan.task
    with skip_parameter_validation():  # plan_training checked every value
        _attach_before_data(task, verbose)
        dataset, learner = fit_on_dataset(task, load(task), plan.learner_cls,
                                          plan.learner_opts, fit_kw=fit_kw, verbose=verbose)
    return TrainingResult(task, learner, dataset, started)


def start_online(plan: TrainingPlan, load: Callable[[Any], Dataset], *,
                 verbose: bool = False) -> TrainingResult:
    """The first ``partial_fit`` call's share of the path: the helpers before the data,
    ``load(task)`` (the first batch, its labels declared), ``task.fit`` on it (the whole
    batch: no training sample), the learner built and the helpers it needs.  The learner
    is not updated: the caller's ``partial_fit`` pass over ``result.dataset`` does that."""
    started = time.perf_counter()
    task = plan.task
    with skip_parameter_validation():  # plan_training checked every value
        _attach_before_data(task, verbose)
        dataset = load(task)
        task.fit(dataset)
        learner = build_learner(task, plan.learner_cls, plan.learner_opts, verbose=verbose)
        _attach_after_fit(task, learner, verbose)
    return TrainingResult(task, learner, dataset, started)
