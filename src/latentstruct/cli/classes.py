"""``latentstruct train --classes LABELS``: the full label set of an online learner's stream,
declared on its first training, as Python's first ``partial_fit(X, y, classes=[...])``
declares it.

A model's label set is fixed when it is first trained: a later ``--resume MODEL`` run refuses
a label the model does not have.  So a stream whose first file lacks some labels declares
them all up front: ``latentstruct train chunk --learner perceptron --train day1.txt --classes
B-NP,I-NP,B-VP,I-VP,O ...``.  Everything that can be checked is checked before any data is
read: the list itself (no empty, doubled or space-padded label), that the learner can
continue training (an online learner; the crf learner with ``solver=sgd``), that the task
takes a declared label set, and every label with the task's own label checks (the checks
``make_dataset`` gives ``y``: IOB for chunk, UPOS for pos, Cora field names for citations,
any label for sequence; doccls's label rules).  Once the data is read, a label of it that
the list lacks is refused at its line, before any training.  ``--resume MODEL`` takes
``--classes`` only when it repeats the model's label set (as a later ``partial_fit`` may
repeat ``classes``).
"""

from __future__ import annotations

import json
from dataclasses import replace

from ..exceptions import ConfigError, InputError

__all__ = ["parse_classes", "check_classes", "declare_classes", "check_same_classes",
           "TASKS_WITH_CLASSES"]

#: the tasks whose label set --classes declares (their own checks apply to it)
TASKS_WITH_CLASSES = ("chunk", "citations", "doccls", "pos", "sequence")
_FORM = ("give --classes LABEL,LABEL,... (e.g. --classes B-NP,I-NP,O), or a JSON list of "
         "strings for labels holding a comma (--classes '[\"A,B\", \"C\"]')")


def parse_classes(text: str | None) -> list[str] | None:
    """The labels of ``--classes`` (None when not given): comma-separated, or a JSON list of
    strings; an empty, doubled or space-padded label is refused (ConfigError)."""
    if text is None:
        return None
    if text.lstrip().startswith("["):
        try:
            labels = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"--classes {text!r} is not a valid JSON list ({exc}); "
                              f"{_FORM}") from None
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise ConfigError(f"--classes {text!r} is not a JSON list of strings; {_FORM}")
    else:
        labels = text.split(",")
    if not labels or any(label == "" for label in labels):
        raise ConfigError(f"--classes {text!r} holds an empty label (an empty list, two commas "
                          f"in a row or one at an end); {_FORM}")
    for label in labels:
        if label.strip() != label:
            raise ConfigError(f"--classes label {label!r} has white space at its ends (no "
                              f"spaces after the commas); {_FORM}")
    seen = set()
    for label in labels:
        if label in seen:
            raise ConfigError(f"--classes lists {label!r} twice; give each label once")
        seen.add(label)
    return labels


def check_classes(classes: list[str], task, learner_cls, learner_opts: dict) -> None:
    """Before any data is read: the learner can continue training (else declaring the
    stream's labels is pointless), the task takes a declared label set, and each label
    passes the task's own checks (ConfigError, naming the label)."""
    from .resumable import resumable_learners, resume_problem

    params = {**learner_cls().get_params(deep=False), **learner_opts}
    problem = resume_problem(learner_cls.registry_name, params)
    if problem is not None:
        raise ConfigError(
            f"--classes declares the full label set of a stream that later runs continue with "
            f"--resume, but this run trains {problem}; online learners: "
            f"{resumable_learners()}. Drop --classes (the label set is then the training "
            f"data's), or choose an online learner")
    check = _label_check(task)
    if check is None:
        raise ConfigError(
            f"--classes declares a label set, and task {task.name!r} takes none from the "
            f"command line (its labels come from its data); tasks that take --classes: "
            f"{', '.join(TASKS_WITH_CLASSES)}")
    for k, label in enumerate(classes):
        try:
            check(label)
        except InputError as exc:  # located classes[k] in Python's words
            why = exc.message.split(": ", 1)[1] if exc.message.startswith("classes[") \
                else exc.message
            raise ConfigError(f"--classes label {k + 1} ({label!r}) is not a label of task "
                              f"{task.name!r}: {why}") from None


def _label_check(task):
    """``check(label)`` raising the task's InputError for a label it refuses, or None for a
    task without a declared label set."""
    reader = getattr(task, "reader", None)
    if hasattr(reader, "tag_checks"):  # the sequence-labelling tasks
        from ..tasks.sequence.kinds import TEMPLATES
        from ..tasks.sequence.raw import check_declared_tags

        check_tag, check_dict_tag, any_label = reader.tag_checks()
        # the command line reads the task's own file format: sentences of tokens, checked
        # as templates are (the 'sequence' task takes any label, whatever the kind)
        return lambda label: check_declared_tags([label], TEMPLATES, check_tag,
                                                 check_dict_tag, any_label=any_label)
    from ..tasks.doccls.task import DocumentClassificationTask

    if isinstance(task, DocumentClassificationTask):
        from ..tasks.doccls.raw import check_declared_labels

        return lambda label: check_declared_labels([label])
    return None


def declare_classes(dataset, classes: list[str]):
    """``dataset`` (just read) with ``classes`` as its declared label set, after checking
    that each of its labels is one of them: a label the list lacks is refused at the line
    (or sequence) that holds it, before any training."""
    known = set(classes)
    for k, target in enumerate(dataset.targets):
        single = isinstance(target, str)
        labels = [target] if single else list(target or ())
        t = next((t for t, label in enumerate(labels) if str(label) not in known), None)
        if t is None:
            continue
        record = dataset.records[k] if k < len(dataset.records) else None
        line = getattr(record, "line", None) or None  # the example's first line, if known
        where = (f"sentence {k + 1}, token {t + 1}: " if not single
                 else "" if line is not None else f"example {k + 1}: ")
        raise InputError(f"{where}the label {labels[t]!r} is not one of --classes "
                         f"({', '.join(classes)}); --classes must list every label of the "
                         f"stream", getattr(record, "path", None) or dataset.path, line)
    return replace(dataset, labels=tuple(classes))


def check_same_classes(classes: list[str] | None, task, path) -> None:
    """``--classes`` with ``--resume MODEL``: only the model's own label set (it is fixed)."""
    if classes is None:
        return
    mine = [str(label) for label in getattr(task, "labels_", None) or []]
    if sorted(classes) != sorted(mine):
        raise ConfigError(
            f"--classes ({', '.join(classes)}) differs from the label set of the model "
            f"--resume {path} continues ({', '.join(mine)}): a model's labels are fixed when "
            f"it is first trained. Drop --classes, or train afresh with the full label set")
