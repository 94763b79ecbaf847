"""Option tables for the command line: each parameter of a task or learner with its default
and the first sentence of its docstring entry.

The tables are generated from the classes themselves (``__init__``'s signature and the
numpy-style "Parameters" section of the class docstring, or of ``__init__``'s docstring, as
numpydoc allows both; for the parameters a task takes from its featurizer, the
featurizer's), so they cannot drift from the code.  A task or learner of your own
gets its help the same way; a parameter documented nowhere is listed as undocumented.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parameter_docs", "parameter_types", "option_table"]

_ENTRY = re.compile(r"^(?P<names>[A-Za-z_][\w, ]*?)\s*:\s*(?P<rest>.*)$")


def parameter_docs(cls) -> dict[str, str]:
    """name -> one-line meaning, from the "Parameters" sections of ``cls`` and its bases."""
    return {k: meaning for k, (meaning, _) in _entries(cls).items()}


def parameter_types(cls) -> dict[str, str]:
    """name -> the type its docstring declares ("int", "float", "{'step', 'constant'}"...),
    without the ", default ..." part."""
    out = {}
    for name, (_, kind) in _entries(cls).items():
        kind = re.split(r",\s*(default|optional)\b", kind)[0].strip()
        if kind:
            out[name] = kind
    return out


def _entries(cls) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    # a composed task takes its featurizer's parameters by name: their entries are the
    # featurizer's, unless the task's own docstring says more
    featurizer = getattr(cls, "featurizer_class", None)
    bases = [*reversed(featurizer.__mro__)] if isinstance(featurizer, type) else []
    for klass in bases + [*reversed(cls.__mro__)]:
        init = vars(klass).get("__init__")
        init_doc = getattr(init, "__doc__", None)  # its own, not an inherited one
        docs = [inspect.cleandoc(init_doc) if isinstance(init_doc, str) else None,
                # then the class docstring, whose entries win
                inspect.getdoc(klass) if "__doc__" in vars(klass) else None]
        for doc in filter(None, docs):
            for name, (meaning, kind) in _parse(doc).items():
                # a subclass entry that only restates the type ("a, b : bool, default True")
                # keeps the base class's meaning: subclasses document their own defaults
                if meaning == _first_sentence(kind) and name in out:
                    meaning = out[name][0]
                out[name] = (meaning, kind)
    return out


def _parse(doc: str) -> dict[str, tuple[str, str]]:
    lines = doc.splitlines()
    out: dict[str, tuple[str, str]] = {}
    in_params = False
    current: list[str] = []
    text: list[str] = []

    kind = ""

    def flush():
        if current:
            meaning = " ".join(t.strip() for t in text).strip() or kind
            for name in current:
                out.setdefault(name, (meaning, kind))

    for k, line in enumerate(lines):
        stripped = line.strip()
        if stripped in ("Parameters", "Common parameters") and k + 1 < len(lines) \
                and set(lines[k + 1].strip()) <= {"-"} and lines[k + 1].strip():
            in_params = True
            continue
        if not in_params:
            continue
        if set(stripped) <= {"-"} and stripped:
            continue
        if stripped in ("Attributes", "Returns", "Notes", "Examples", "Raises", "See Also"):
            flush()
            current, text = [], []
            in_params = False
            continue
        m = _ENTRY.match(line) if line and not line[0].isspace() else None
        if m:
            flush()
            current = [n.strip() for n in m.group("names").split(",") if n.strip()]
            rest = m.group("rest")
            # "name : type -- meaning" (a compact form some docstrings use)
            text = [rest.split("--", 1)[1]] if "--" in rest else []
            if "—" in rest:
                text = [rest.split("—", 1)[1]]
            kind = rest.split("--", 1)[0].split("—", 1)[0].strip()
        elif current and stripped:
            text.append(stripped)
        elif current and not stripped and text:
            flush()
            current, text = [], []
    flush()
    return {k: (_first_sentence(v), kind) for k, (v, kind) in out.items()}


def _first_sentence(text: str) -> str:
    m = re.match(r"(.+?[.;])(\s+[A-Z`]|$)", text)
    return (m.group(1) if m else text).rstrip(";")


def option_table(cls, params: dict, *, skip=("task", "structure"), width: int = 100) -> str:
    """Lines ``  name=default  meaning`` for each parameter of ``cls``."""
    docs, types = parameter_docs(cls), parameter_types(cls)
    rows = []
    for name, default in params.items():
        if name in skip:
            continue
        shown = "None" if default is None else (default if isinstance(default, str) else repr(default))
        kind = types.get(name) or (type(default).__name__ if default is not None else "")
        meaning = docs.get(name) or ("undocumented: describe it under 'Parameters' in the "
                                     f"docstring of {cls.__name__}")
        if kind and kind != meaning:
            meaning = f"({kind}) {meaning}".rstrip()
        rows.append((f"{name}={shown}", meaning))
    if not rows:
        return "  (none)"
    pad = min(max(len(a) for a, _ in rows) + 2, 34)
    out = []
    for a, b in rows:
        line = f"  {a:<{pad}}{b}" if len(a) < pad else f"  {a}\n  {'':<{pad}}{b}"
        out.append(line[:width * 3])
    return "\n".join(out)
