"""Docstring entries that several learners share word for word, written once.

A class docstring names a shared entry by a line holding only ``%(name)s``; the
:func:`fill_doc` decorator replaces that line by the entry of :data:`PARAMETER_DOCS`,
indented as the line was.  The composed text is the class's ``__doc__``, so ``help()``,
numpydoc, the API reference and ``latentstruct options`` (which read ``__doc__``) see the
full entries.  An unknown name fails at import.
"""

from __future__ import annotations

import re

__all__ = ["PARAMETER_DOCS", "fill_doc"]

#: numpydoc "Parameters" entries, by the name a docstring uses for them
PARAMETER_DOCS = {
    "structure_C": """\
structure : a max-decodable structure or a fitted task
    What is learned (its argmax, joint feature and loss).
C : float, default 1.0
    Weight of the slacks against ``1/2 ||w||^2``.""",
    "inactive_constraints": """\
inactive_threshold : float, default 1e-5
    A constraint whose dual variable is below this times C counts as inactive.
inactive_window : int, default 50
    Remove constraints inactive for more than this many solves (0 keeps them all).""",
    "check_inference_working_set": """\
check_inference : bool, default True
    Raise ``InferenceError`` when a decode is not exact or loses to a structure it must
    beat (the gold one, the working set's); with False they are counted and warned about.""",
    "check_inference_gold": """\
check_inference : bool, default True
    Raise ``InferenceError`` when a decode is not exact or loses to the gold structure;
    with False they are counted and warned about.""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def _indented(name: str, indent: str) -> str:
    return "\n".join(indent + line if line else line
                     for line in PARAMETER_DOCS[name].splitlines())


def fill_doc(obj):
    """Replace each ``%(name)s`` line of ``obj.__doc__`` by ``PARAMETER_DOCS[name]``."""
    obj.__doc__ = _PLACEHOLDER.sub(lambda m: _indented(m.group(2), m.group(1)), obj.__doc__)
    return obj
