"""Imports flow one way: cli -> learners -> tasks -> inference -> data (DESIGN.md)."""

import ast
from pathlib import Path

import pytest

import latentstruct
import latentstruct.learners
import latentstruct.tasks

PKG = Path(latentstruct.__file__).parent

# layer -> layers it must never import (anywhere in the module, functions included)
FORBIDDEN = {
    "data": {"inference", "tasks", "learners", "solvers", "cli", "pipelines", "io", "plotting",
             "plotting_graph", "demo", "inspection"},
    "inference": {"tasks", "learners", "cli", "pipelines", "io", "plotting", "plotting_graph",
                  "demo", "inspection"},
    "solvers": {"tasks", "learners", "cli", "pipelines", "io", "plotting", "plotting_graph", "demo",
                "inspection"},
    "tasks": {"learners", "cli", "pipelines", "io", "plotting", "plotting_graph", "demo",
              "inspection"},
    "learners": {"cli", "pipelines", "plotting", "plotting_graph", "demo", "inspection"},
}


def _imported_top_modules(path: Path) -> set[str]:
    """First component below ``latentstruct`` of every import in ``path``."""
    rel = path.relative_to(PKG).with_suffix("").parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = list(rel[:-1])[: len(rel) - node.level]
                names = [".".join(["latentstruct", *base, node.module or ""]).rstrip(".")]
                if not node.module:
                    names = [".".join(["latentstruct", *base, a.name]) for a in node.names]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "latentstruct" and len(parts) > 1:
                out.add(parts[1])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_flow_one_way(layer):
    bad = {}
    for path in sorted((PKG / layer).rglob("*.py")):
        hits = _imported_top_modules(path) & FORBIDDEN[layer]
        if hits:
            bad[str(path.relative_to(PKG))] = sorted(hits)
    assert bad == {}


def test_the_checker_sees_relative_and_absolute_imports(tmp_path):
    mod = PKG / "tasks" / "sequence" / "structure.py"
    assert {"data", "inference", "exceptions"} <= _imported_top_modules(mod)


@pytest.mark.parametrize("package", [latentstruct.learners, latentstruct.tasks])
def test_all_lists_every_public_class(package):
    public = {n for n, v in vars(package).items()
              if isinstance(v, type) and not n.startswith("_") and v.__module__.startswith("latentstruct")}
    assert public <= set(package.__all__)
    assert all(hasattr(package, n) for n in package.__all__)


# ----------------------------------------------------------------------- the module graph
# Every module of the package, and the modules each imports (at module level or inside a
# function: a lazy import is still an arrow).  ``from X import y`` is an arrow to X.y where
# that is a module, else to X (a package's __init__ counts as the package).

#: rank of each top-level component: a module may import only modules of its own component
#: or of components of a lower rank (docs/design.md draws these layers)
LAYER_RANK = {
    "exceptions": 0, "version": 0, "limits": 0, "registry": 0, "options": 0,
    "significance": 0, "calibration": 0,
    "params": 0,  # the one parameter-validation mechanism (learners, tasks, data.lm)
    "data": 1,
    "datasets": 1,  # the corpora, fetched (issue 52): data-level, like the readers
    "featurizers": 2,  # raw data to numbers (spaCy vectors); tasks may use them
    "parallel": 2, "io": 2, "inference": 2, "solvers": 2,
    "tasks": 3,
    "learners": 4,
    "plotting": 5, "testing": 5,
    "pipelines": 6,
    "estimators": 7,
    "crfsuite": 8,  # sklearn-crfsuite's API, over the estimators
    "spacy": 8,  # latentstruct models as spaCy pipeline components (issue 56)
    "pystruct": 8,  # PyStruct's API (models, learners, inference, utils, datasets), issue 44
    "cli": 8, "__main__": 8, "": 8,  # "": the package's public face (latentstruct/__init__)
}

# a ceiling for "read in one sitting", not a cap to split concepts by (issue 53: the old
# 650-line cap cut concepts such as the alternating learners into pieces)
MAX_LINES = 1000


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("latentstruct", *parts))


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


MODULES = _modules()


def _imports(name: str, path: Path):
    """(target module, imported name or None, line) for every import of the package's own
    modules in ``path``."""
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.extend((a.name, None, node.lineno) for a in node.names
                       if a.name.split(".")[0] == "latentstruct")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "latentstruct":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub, None, node.lineno) if sub in MODULES
                           else (target, a.name, node.lineno))
    return out


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        for target, _, _ in _imports(name, path):
            if target in MODULES and target != name:
                edges[name].add(target)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _component(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.slow
def test_no_import_cycles_between_modules():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_belongs_to_a_layer():
    assert sorted({_component(m) for m in MODULES} - set(LAYER_RANK)) == []


@pytest.mark.slow
def test_no_import_runs_up_the_layers():
    """cli -> estimators -> pipelines -> plotting, testing -> learners -> tasks ->
    inference, solvers, parallel, io -> data -> exceptions and the small leaves."""
    upward = []
    for name, targets in _graph().items():
        here = _component(name)
        for target in targets:
            there = _component(target)
            if there != here and LAYER_RANK[there] > LAYER_RANK[here]:
                upward.append(f"{name} -> {target}")
    assert upward == []


@pytest.mark.slow
def test_no_private_name_is_imported_from_another_module():
    """A helper two modules need is public in the lower one (dunders such as __version__
    are not private)."""
    private = []
    for name, path in MODULES.items():
        for target, imported, line in _imports(name, path):
            if (imported and imported.startswith("_") and not imported.startswith("__")
                    and target != name):
                private.append(f"{path.relative_to(PKG)}:{line}: {imported} from {target}")
    assert private == []


def test_every_module_reads_in_one_sitting():
    sizes = sorted(((len(p.read_text(encoding="utf-8").splitlines()), m)
                    for m, p in MODULES.items()), reverse=True)
    print("largest modules:", ", ".join(f"{m} {n}" for n, m in sizes[:5]))
    assert [f"{m} ({n} lines)" for n, m in sizes if n > MAX_LINES] == []


# ------------------------------------------------------------- the structure contract
# A learner sees its task only through ``tasks.contracts`` (docs/design.md, 'The structure
# contract'): it imports nothing else from tasks/, and every member it touches on the task
# is a member of one of the contract's protocols.

LEARNERS_DIR = PKG / "learners"


def test_learners_import_only_the_structure_contract_from_tasks():
    """No exception: persistence finds a task class by name through the leaf
    ``latentstruct.registry``, and J-LIS's binary view is written against the protocols."""
    bad = []
    for name, path in MODULES.items():
        if not name.startswith("latentstruct.learners"):
            continue
        for target, _, line in _imports(name, path):
            if target.startswith("latentstruct.tasks") and target != "latentstruct.tasks.contracts":
                bad.append(f"{path.relative_to(PKG)}:{line}: {target}")
    assert bad == []


#: expressions by which learners hold their structure: ``structure``, ``s_structure``
#: (J-LIS's structured part), ``self.structure``, ``self._structure()``,
#: ``structured.structure``, ``data["structure"]``, ``type(structure)``, and ``self.base``
#: inside J-LIS's binary view (the structure it wraps)
_TASK_NAMES = {"structure", "s_structure"}


def _holds_task(node, in_view: bool) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _TASK_NAMES
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "_structure" and not node.args:  # self._structure()
        return True
    if isinstance(node, ast.Attribute):
        return node.attr == "structure" or (
            in_view and node.attr == "base" and isinstance(node.value, ast.Name)
            and node.value.id == "self")
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in _TASK_NAMES
    if isinstance(node, ast.Call):  # type(task)
        return (isinstance(node.func, ast.Name) and node.func.id == "type"
                and len(node.args) == 1 and _holds_task(node.args[0], in_view))
    return False


def task_members_touched(source: str) -> dict[str, int]:
    """Member name -> line of first use, for every ``<task>.X`` and ``getattr(<task>, "X")``
    in ``source`` (a learner module)."""
    found: dict[str, int] = {}
    tree = ast.parse(source)
    views = [n for n in ast.walk(tree)
             if isinstance(n, ast.ClassDef) and n.name == "NormalizedBinaryView"]
    in_view = {id(n) for v in views for n in ast.walk(v)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _holds_task(node.value, id(node) in in_view):
            found.setdefault(node.attr, node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
              and _holds_task(node.args[0], id(node) in in_view)
              and isinstance(node.args[1], ast.Constant)):
            found.setdefault(node.args[1].value, node.lineno)
    return found


def test_the_member_scan_sees_the_ways_learners_hold_a_structure():
    src = ("def f(self, structure, data, structured):\n"
           "    structure.a; self.structure.b; data['structure'].c; structured.structure.d\n"
           "    type(structure).e; getattr(structure, 'f', None); other.g; self.base.h\n"
           "    self._structure().i\n")
    assert set(task_members_touched(src)) == {"a", "b", "c", "d", "e", "f", "i"}


def test_learners_touch_only_the_contract_members():
    from latentstruct.tasks.contracts import learner_members

    allowed = learner_members()
    outside, touched = [], set()
    for path in sorted(LEARNERS_DIR.rglob("*.py")):  # the concept subpackages included
        for member, line in task_members_touched(path.read_text(encoding="utf-8")).items():
            if member.startswith("__"):  # the class's __name__ in an error: Python's, not the task's
                continue
            touched.add(member)
            if member not in allowed:
                outside.append(f"{path.relative_to(PKG)}:{line}: task.{member}")
    print(f"learners touch {len(touched)} of the contract's {len(allowed)} members")
    assert outside == []
    # the scan finds what the learners are known to use (it would pass vacuously otherwise)
    assert {"argmax_batch", "joint_feature_differences", "latent_argmax", "n_features",
            "as_batch", "label_factored_batch", "candidate_log_partitions"} <= touched


def test_the_capability_table_is_generated_from_the_protocols():
    from latentstruct.tasks import contracts

    for name, cap in contracts.CAPABILITIES.items():
        assert cap.protocol is not None and cap.protocol.__capability__ == name
        assert set(cap.methods) <= set(contracts.protocol_members(cap.protocol))
    assert contracts.CAPABILITIES["max-decodable"].methods == ("argmax", "joint_feature", "loss")
    with pytest.raises(TypeError, match="does not declare"):
        @contracts.capability_protocol("made-up", ("missing",), "a test")
        class MadeUp(contracts.Protocol):
            def present(self): ...
    assert "made-up" not in contracts.CAPABILITIES


def test_every_registered_task_gives_a_structure():
    """Every task hands its learners ``task.structure()``; a task itself is not a structure
    (it reads, featurises, evaluates and saves: a learner sees none of that)."""
    from latentstruct.tasks import TASKS, Task
    from latentstruct.tasks.base import StructureView
    from latentstruct.tasks.contracts import is_structure

    assert all(issubclass(cls, Task) and cls.structure is Task.structure
               for cls in TASKS.values())
    assert is_structure(StructureView.__new__(StructureView))
    assert not any(is_structure(cls()) for cls in TASKS.values())
    assert not is_structure(object())


# ------------------------------------------------ at most two parents
# docs/design.md, "Featurizer and structure": a task is its featurizer (held, ``featurizer_``)
# plus its structure; what a task needs beyond that is a component it holds, not a parent.

#: bases that add no behaviour of the package's own
_NEUTRAL_BASES = {"object", "Protocol", "Generic", "NamedTuple"}


def _parents(path: Path) -> list[tuple[str, int, list[str]]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            names = [ast.unparse(b) for b in node.bases]
            names = [n for n in names if n.rsplit(".", 1)[-1].split("[")[0] not in _NEUTRAL_BASES]
            out.append((node.name, node.lineno, names))
    return out


def test_no_task_featurizer_or_structure_class_has_more_than_two_parents():
    bad = [f"{path.relative_to(PKG)}:{line} {cls}({', '.join(bases)})"
           for name, path in MODULES.items()
           if name.startswith(("latentstruct.tasks", "latentstruct.featurizers"))
           for cls, line, bases in _parents(path) if len(bases) > 2]
    assert bad == []


def test_the_parent_scan_counts_bases(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("class A(B, C, typing.Protocol): pass\nclass D(E, F, G): pass\n")
    assert [(c, len(b)) for c, _, b in _parents(mod)] == [("A", 2), ("D", 3)]


# ------------------------------------------------ one parameter check, one fitted check
# docs/design.md, Conventions: a class declares what its parameters may be in
# ``_parameter_constraints`` (``latentstruct.params``), checked on entering ``fit``; what
# relates two values is ``_check_param_relations``.  "Not fitted" is raised by
# ``exceptions.check_is_fitted`` alone.



def _defined_functions(path: Path) -> list[tuple[str, int]]:
    return [(n.name, n.lineno) for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


@pytest.mark.slow
def test_parameters_are_checked_by_one_mechanism():
    """No hand-written ``_validate_params``: each class declares ``_parameter_constraints``."""
    bad = [f"{path.relative_to(PKG)}:{line}"
           for name, path in MODULES.items()
           for fn, line in _defined_functions(path) if fn == "_validate_params"]
    assert bad == []


def _not_fitted_constructions(path: Path) -> list[tuple[str, int]]:
    """(enclosing function, line) of every ``NotFittedError(...)`` call in ``path``."""
    out = []

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else func
            if isinstance(child, ast.Call):
                f = child.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                    else None
                if name == "NotFittedError":
                    out.append((func, child.lineno))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return out


@pytest.mark.slow
def test_not_fitted_is_raised_by_one_function():
    found = {f"{path.relative_to(PKG)}:{func}:{line}"
             for name, path in MODULES.items() for func, line in _not_fitted_constructions(path)}
    assert len(found) == 1 and next(iter(found)).startswith("exceptions.py:check_is_fitted:")


@pytest.mark.slow
def test_fitted_is_checked_under_one_name_and_ranges_declared_not_hand_written():
    """``exceptions.check_is_fitted(estimator)`` is the one fitted check (the classes give
    ``__sklearn_is_fitted__``; ``exceptions.is_fitted(estimator)`` is the same rule as a
    query), and no hand-written ``check_positive*`` helper repeats a range that
    ``_parameter_constraints`` declares."""
    gone = {"check_fitted", "_check_fitted", "_check_is_fitted", "check_positive",
            "check_positive_int", "check_nonnegative"}
    # the one query is the module function: no class of the package defines its own
    assert not [name for name, path in MODULES.items()
                if not name.startswith("latentstruct.pystruct")
                for fn, _ in _defined_functions(path)
                if fn == "is_fitted" and name != "latentstruct.exceptions"]
    bad = [f"{path.relative_to(PKG)}:{line} {fn}"
           for name, path in MODULES.items() if not name.startswith("latentstruct.pystruct")
           for fn, line in _defined_functions(path) if fn in gone]
    assert bad == []


def test_the_scans_see_what_they_look_for(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("class A:\n    def _validate_params(self):\n"
                   "        raise exceptions.NotFittedError('x')\n")
    assert _defined_functions(mod) == [("_validate_params", 2)]
    assert _not_fitted_constructions(mod) == [("_validate_params", 3)]
