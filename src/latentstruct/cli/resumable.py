"""Which models can continue training (``train --resume MODEL``, and the label set
``train --classes`` declares for later runs), in the command line's words."""

from __future__ import annotations

__all__ = ["resumable_learners", "resume_problem"]


#: online learners that can continue only under one value of a parameter: (name, value,
#: why the others cannot).  The crf learner's partial_fit is SGD; its L-BFGS has no steps
#: to continue.
_RESUME_NEEDS = {"crf": ("solver", "sgd", "L-BFGS optimises the whole training set at once, "
                                         "so it has no passes to continue")}


def resumable_learners() -> str:
    """The learners a model of which ``--resume`` continues, in command-line words."""
    from ..learners.online.online import online_learner_names

    names = []
    for name in online_learner_names():
        need = _RESUME_NEEDS.get(name)
        names.append(name if need is None else f"{name} with --option {need[0]}={need[1]}")
    return ", ".join(names)


def resume_problem(learner: str, params: dict) -> str | None:
    """Why a model of ``learner`` with the parameters ``params`` cannot continue training
    (``--resume``, or the label set ``--classes`` declares for later runs), or None."""
    from ..learners.online.online import online_learner_names

    if learner not in online_learner_names():
        return f"learner {learner!r}, which cannot continue training"
    need = _RESUME_NEEDS.get(learner)
    if need is not None and params.get(need[0]) != need[1]:
        return (f"learner {learner!r} with {need[0]}={params.get(need[0])!r}, which cannot "
                f"continue training ({need[2]})")
    return None
