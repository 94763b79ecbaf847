"""Where the registered tasks and learners live, known without importing them.

A task is registered by decorating its class (``@register_task``, with its ``name`` class
attribute); a learner by ``@register_learner("name")``.  Importing every task and learner
pulls in scikit-learn, numba and spaCy (over a second), which ``latentstruct --help`` and
``latentstruct train --help`` should not pay.  So the names are read from the source:

* the modules of ``latentstruct/tasks/`` (any depth) that mention ``register_task``, and of
  ``latentstruct/learners/`` that mention ``register_learner``, are parsed (not imported)
  for decorated classes; a task's name is the string its class body assigns to ``name``;
* packages installed beside latentstruct add theirs through the entry-point groups
  ``latentstruct.tasks`` and ``latentstruct.learners`` (``name = "package.module"`` or
  ``"package.module:Class"`` in their ``pyproject.toml``), as spaCy's factories do.

:class:`Registry` is the mapping the decorators fill (``TASKS``, ``LEARNERS``): looking a
name up imports the one module that defines it, and listing the registry imports them
all.  So a new task is its own module in ``tasks/`` (and its decoder in ``inference/``),
and a new learner its own module in ``learners/``: no table elsewhere names them.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["Registry", "TASKS", "get_task_class", "learner_modules", "task_modules",
           "model_task_class"]

PACKAGE = Path(__file__).resolve().parent
ENTRY_POINT_GROUPS = {"task": "latentstruct.tasks", "learner": "latentstruct.learners"}


def _decorator_name(node) -> str | None:
    """``register_task`` for ``@register_task``, ``@base.register_task`` and
    ``@register_learner("x")`` alike."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _class_name_attribute(cls: ast.ClassDef) -> str | None:
    for stmt in cls.body:
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        value = getattr(stmt, "value", None)
        if (any(isinstance(t, ast.Name) and t.id == "name" for t in targets)
                and isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return value.value
    return None


def _registered_in(path: Path, decorator: str) -> list[str]:
    """The names the classes of one source file register with ``decorator``."""
    text = path.read_text(encoding="utf-8")
    if decorator not in text:
        return []
    names = []
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if not isinstance(node, ast.ClassDef):
            continue
        for dec in node.decorator_list:
            if _decorator_name(dec) != decorator:
                continue
            if isinstance(dec, ast.Call):  # register_learner("name")
                if dec.args and isinstance(dec.args[0], ast.Constant):
                    names.append(str(dec.args[0].value))
            else:  # register_task: the class says its name
                name = _class_name_attribute(node)
                if name:
                    names.append(name)
    return names


def _scan(subpackage: str, decorator: str) -> dict[str, str]:
    root = PACKAGE / subpackage
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("").parts
        if rel[-1] == "__init__":
            rel = rel[:-1]
        for name in _registered_in(path, decorator):
            found.setdefault(name, ".".join(("latentstruct", *rel)))
    return found


def _entry_points(kind: str) -> dict[str, str]:
    from importlib.metadata import entry_points

    return {ep.name: ep.value.split(":")[0].strip()
            for ep in entry_points(group=ENTRY_POINT_GROUPS[kind])}


@lru_cache(maxsize=None)
def task_modules() -> dict[str, str]:
    """Registered task name -> the module that registers it (not imported)."""
    return {**_entry_points("task"), **_scan("tasks", "register_task")}


@lru_cache(maxsize=None)
def learner_modules() -> dict[str, str]:
    """Registered learner name -> the module that registers it (not imported)."""
    return {**_entry_points("learner"), **_scan("learners", "register_learner")}


class Registry(dict):
    """A name -> class mapping filled by a registration decorator, whose modules are
    imported when they are asked for: a missing name imports the module that
    ``index()`` says defines it, and listing the mapping (iteration, ``len``, ``in``,
    ``keys``/``values``/``items``) first imports every module of the index."""

    def __init__(self, kind: str, index):
        super().__init__()
        self.kind, self._index, self._complete = kind, index, False

    def load_all(self) -> None:
        if self._complete:
            return
        self._complete = True  # before the imports: their registrations come back here
        for name, module in self._index().items():
            if not dict.__contains__(self, name):
                importlib.import_module(module)

    def __missing__(self, name):
        module = self._index().get(name)
        if module is not None:
            importlib.import_module(module)
            if dict.__contains__(self, name):
                return dict.__getitem__(self, name)
        raise KeyError(name)

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name) -> bool:
        return self.get(name) is not None

    def __iter__(self):
        self.load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self.load_all()
        return dict.__len__(self)

    def keys(self):
        self.load_all()
        return dict.keys(self)

    def values(self):
        self.load_all()
        return dict.values(self)

    def items(self):
        self.load_all()
        return dict.items(self)


#: registered tasks by name (``tasks.base.register_task`` fills it); a name not imported
#: yet is found through :func:`task_modules`.  It lives here, not in ``tasks/``, so that
#: what rebuilds a task from a model file by name (``learners.persistence``) needs nothing
#: of ``tasks/`` but the structure contract.
TASKS: Registry = Registry("task", task_modules)


def get_task_class(name: str) -> type:
    """The task class registered as ``name``, or a ``ConfigError`` listing the known ones."""
    from .exceptions import ConfigError

    try:
        return TASKS[name]
    except KeyError:
        raise ConfigError(
            f"unknown task {name!r}; expected one of: {', '.join(sorted(TASKS))}"
        ) from None


# a dotted Python module name, as a model file may record it (anything else is not repeated)
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def model_task_class(metadata: dict, path) -> type:
    """The task class a model file's metadata names, or a ``ConfigError`` saying how to make
    it known to this process (a ``ModelFormatError`` when the file names no task, or a task
    of latentstruct's own modules that this version does not have).

    A task defined outside ``latentstruct/tasks/`` is registered when its module is imported
    (or found through an entry point), so a process that has not imported it cannot rebuild
    the model.  The file records the module the task was saved from (``task_module``); the
    message names it, as data only: a model file is never a reason to import anything.
    """
    from .exceptions import ConfigError, ModelFormatError
    from .version import __version__ as version

    name = metadata["task"]
    if not isinstance(name, str) or not name.strip():  # no task: a damaged file, not a setup
        raise ModelFormatError(f"{path}: the model file names no task (task={name!r}); the "
                               f"file is damaged or edited: retrain the model")
    try:
        return TASKS[name]
    except KeyError:
        pass
    module = metadata.get("task_module")
    known = f"Registered tasks: {', '.join(sorted(TASKS))}"
    if not (isinstance(module, str) and len(module) <= 200 and _MODULE_NAME.fullmatch(module)):
        module = None  # not recorded (an older file), or not a module name: not repeated
    if module is not None and module.split(".")[0] == "latentstruct":
        # not a setup the user can fix by importing: a file of another version, or damaged
        raise ModelFormatError(
            f"{path}: the model names task {name!r}, which is not registered in this process: "
            f"it was saved from latentstruct's own module {module!r}, which this version "
            f"({version}) does not have; load it with the latentstruct version that wrote it "
            f"({str(metadata.get('library_version', 'unknown'))[:40]}). {known}")
    where = (f"import {module!r} (the module the model was saved from)" if module
             else "import the module that defines it")
    raise ConfigError(
        f"{path}: the model names task {name!r}, which is not registered in this process; "
        f"{where} before loading the model, or declare that module as an entry point in "
        f"group 'latentstruct.tasks' of its package (docs/subclassing.md, 'Registration'). "
        f"{known}")
