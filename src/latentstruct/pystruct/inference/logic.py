"""``ad3+``'s logic constraints as ILP rows: :mod:`latentstruct.inference.graph.logic`."""

from latentstruct.inference.graph.logic import OPERATORS, constraint_rows

__all__ = ["OPERATORS", "constraint_rows"]
