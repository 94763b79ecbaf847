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


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_flow_one_way(layer):
    bad = {}
    for path in sorted((PKG / layer).rglob("*.py")):
        hits = _imported_top_modules(path) & FORBIDDEN[layer]
        if hits:
            bad[str(path.relative_to(PKG))] = sorted(hits)
    assert bad == {}


def test_the_checker_sees_relative_and_absolute_imports(tmp_path):
    mod = PKG / "tasks" / "sequence" / "labelling.py"
    assert {"data", "inference", "exceptions"} <= _imported_top_modules(mod)


@pytest.mark.parametrize("package", [latentstruct.learners, latentstruct.tasks])
def test_all_lists_every_public_class(package):
    public = {n for n, v in vars(package).items()
              if isinstance(v, type) and not n.startswith("_") and v.__module__.startswith("latentstruct")}
    assert public <= set(package.__all__)
    assert all(hasattr(package, n) for n in package.__all__)
