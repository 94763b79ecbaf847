"""The label-matrix side of DISTRO (Srikumar & Manning 2014, §4 and Algorithm 1, line 4).

With the weights fixed, DISTRO minimises over the label matrix A (d × L, unit columns)

    g(A) = λ2 ||A||_*  +  (1/N) Σ_i max_y [ Δ(y, y_i) + s(x_i, y; A) − s(x_i, y_i; A) ]

by proximal stochastic subgradient descent: after each mini-batch a subgradient step on the
hinge term, then the proximal operator of τ||·||_* (singular-value soft-thresholding), then
every column renormalised to unit length (the authors' release does exactly this, in this
order).  This module holds those pieces and the compiled scatter kernel that both SGD steps
use for sparse emission gradients; the loop itself lives in :mod:`latentstruct.learners.ssvm.distro`.

SVDs should run under single-threaded BLAS: multithreaded OpenBLAS took 50× longer on a
49 × 49 matrix here (the matrices are tiny; thread start-up dominates).  Entering
``threadpoolctl.threadpool_limits`` costs milliseconds (it scans the loaded libraries), so
the caller sets the limit once around a whole fit (:func:`single_threaded_blas`), not per SVD.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

from ..exceptions import ConfigError

__all__ = ["single_threaded_blas", "singular_value_threshold", "normalize_columns", "prox_label_matrix",
           "init_label_matrix", "scatter_rows", "effective_rank", "LABEL_INITS"]

LABEL_INITS = ("auto", "uniform", "onehot")


def single_threaded_blas():
    """Context manager: BLAS limited to one thread (wrap a whole fit in it)."""
    return threadpool_limits(limits=1, user_api="blas")


def singular_value_threshold(A: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """prox_{τ||·||_*}(A) = U diag(max(σ − τ, 0)) Vᵀ, and the thresholded singular values.

    The closed form of argmin_B ½||B − A||_F² + τ||B||_* (Cai, Candès & Shen 2010).
    """
    if tau < 0:
        raise ConfigError(f"the threshold must be >= 0; got {tau}")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    s = np.maximum(s - tau, 0.0)
    return (U * s) @ Vt, s


def normalize_columns(A: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """A with every column scaled to unit Euclidean length.

    A column the threshold shrank to (numerically) zero carries no direction; it takes the
    matching column of ``fallback`` (the matrix before the step) so that every label keeps a
    unit vector, as the model requires.
    """
    norms = np.linalg.norm(A, axis=0)
    out = A / np.where(norms > 1e-12, norms, 1.0)
    dead = norms <= 1e-12
    if dead.any():
        if fallback is None:
            raise ConfigError("a label vector has zero length and no fallback was given")
        fb = fallback[:, dead]
        out[:, dead] = fb / np.maximum(np.linalg.norm(fb, axis=0), 1e-300)
    return out


def prox_label_matrix(A: np.ndarray, tau: float, previous: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One DISTRO proximal step after a gradient step: soft-threshold the singular values of
    ``A`` by ``tau``, then renormalise the columns (``previous`` revives a zeroed column).

    A threshold above every singular value would leave no direction for any label; the top
    singular pair is then kept at a vanishing length, so A becomes rank one (every a_l = ±u_1)
    rather than being reset to ``previous``.

    Returns (A_new, singular values after thresholding, before renormalisation)."""
    if tau < 0:
        raise ConfigError(f"the threshold must be >= 0; got {tau}")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    kept = np.maximum(s - tau, 0.0)
    if kept.size and kept[0] == 0.0 and s[0] > 0:
        kept[0] = 1e-9 * s[0]
    B = (U * kept) @ Vt
    return normalize_columns(B, previous), kept


def init_label_matrix(d: int, n_labels: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """The initial label matrix A0 (d × L), unit columns.

    ``"uniform"``: entries uniform in [0, 1), columns normalised (the authors' release);
    ``"onehot"``: a_l = e_l (needs d >= L; rows beyond L stay zero), the one-hot SSVM's labels
    (§5.2's control); ``"auto"``: one-hot when d >= L, uniform when d < L.  (The release
    starts d = L from uniform vectors; on a tuning split of 20 Newsgroups one-hot starts
    reached a lower objective and higher accuracy at d = L: 0.312 / 89.5% against
    0.327 / 88.4%.)
    """
    if kind not in LABEL_INITS:
        raise ConfigError(f"label_init must be one of {', '.join(LABEL_INITS)}; got {kind!r}")
    if kind == "auto":
        kind = "onehot" if d >= n_labels else "uniform"
    if kind == "onehot":
        if d < n_labels:
            raise ConfigError(
                f"label_init='onehot' needs n_components >= the number of labels ({n_labels}); "
                f"got n_components={d}. Use label_init='uniform' or raise n_components")
        A = np.zeros((d, n_labels))
        A[np.arange(n_labels), np.arange(n_labels)] = 1.0
        return A
    A = rng.random((d, n_labels))
    return normalize_columns(A, np.ones((d, n_labels)))


def effective_rank(singular_values: np.ndarray, shape: tuple[int, int]) -> int:
    """Number of singular values above numpy's matrix_rank tolerance (σ_max · max(d, L) · eps)."""
    s = np.asarray(singular_values)
    if s.size == 0 or s[0] <= 0:
        return 0
    tol = s.max() * max(shape) * np.finfo(np.float64).eps
    return int(np.count_nonzero(s > tol))


@njit(cache=True, nogil=True)
def scatter_rows(V, indptr, indices, data, G, coef):  # pragma: no cover - compiled
    """V[f, :] += coef * x_rf * G[r, :] for every stored entry x_rf of the CSR rows.

    The sparse product V += coef · Rᵀ G without materialising a dense (F, d) gradient."""
    d = V.shape[1]
    for r in range(indptr.shape[0] - 1):
        for k in range(indptr[r], indptr[r + 1]):
            f = indices[k]
            c = coef * data[k]
            for j in range(d):
                V[f, j] += c * G[r, j]
