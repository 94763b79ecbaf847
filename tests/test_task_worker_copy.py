"""A task class the user defines in a script or notebook (``__main__``) reaches a process
worker: cloudpickle copies such a class by value, with the globals its methods name, so
the ``fit`` wrapper that checks parameters first must name nothing unpicklable (it once
named a ``threading.local``, and ``examples/custom_latent_task.py`` failed ``check_task``;
the skip flag of ``latentstruct.params`` is a context variable, reached by functions)."""

from __future__ import annotations

from latentstruct.parallel.blocks import worker_copy
from latentstruct.tasks import Dataset
from latentstruct.testing import BagTask, make_bag_problem


def _script_task_class():
    """A BagTask subclass with a ``fit`` of its own, as if defined in ``__main__``."""

    class ScriptBags(BagTask):
        name = "script-bags"

        def _check_param_values(self):  # what check_params runs when it checks
            self.checks = getattr(self, "checks", 0) + 1
            return super()._check_param_values()

        def fit(self, dataset=None):
            self.fits = getattr(self, "fits", 0) + 1
            return super().fit(dataset)

    ScriptBags.__module__ = "__main__"  # cloudpickle then copies the class by value
    ScriptBags.__qualname__ = "ScriptBags"
    return ScriptBags


def test_task_defined_in_main_survives_worker_copy():
    _, X, y = make_bag_problem(n_examples=6)
    task = _script_task_class()(n_features=5)
    dataset = Dataset(X, list(y))
    task.fit(dataset)
    assert (task.fits, task.checks) == (1, 1)  # the wrapper checked once, outermost call

    copy = worker_copy(task)
    assert type(copy).__name__ == "ScriptBags"
    assert (copy.fits, copy.checks, copy.n_features) == (1, 1, 5)
    copy.fit(dataset)  # the copied class's fit still checks its parameters first, once
    assert (copy.fits, copy.checks) == (2, 2)
