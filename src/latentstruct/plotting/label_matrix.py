"""Pictures of a DISTRO label matrix: label similarities AᵀA as a heatmap whose rows and
columns follow a hierarchical clustering of the label vectors, beside the singular-value
spectrum of A (the nuclear norm's effect: how many directions the labels use)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..exceptions import InputError
from .figures import agg_pyplot, save_pyplot_figure

__all__ = ["label_order", "draw_label_matrix"]


def label_order(A: np.ndarray) -> np.ndarray:
    """Leaf order of an average-linkage clustering of A's columns by cosine distance
    (similar labels end up adjacent); the identity order for fewer than 3 labels."""
    L = A.shape[1]
    if L < 3:
        return np.arange(L)
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    sim = np.clip(A.T @ A, -1.0, 1.0)
    dist = 1.0 - sim
    np.fill_diagonal(dist, 0.0)
    dist = np.clip((dist + dist.T) / 2, 0.0, None)
    return leaves_list(linkage(squareform(dist, checks=False), method="average"))


def draw_label_matrix(A, labels: Sequence[str], path, *, singular_values=None,
                      title: str = "") -> list[str]:
    """Draw the similarity heatmap of label matrix ``A`` (d × L, unit columns) with the
    label names, and its singular values; write a PNG to ``path`` atomically.

    Returns the label names in the order drawn.
    """
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != len(labels):
        raise InputError(f"A must have one column per label ({len(labels)}); got shape {A.shape}")
    if singular_values is None:
        singular_values = np.linalg.svd(A, compute_uv=False)
    order = label_order(A)
    names = [str(labels[i]) for i in order]
    sim = (A.T @ A)[np.ix_(order, order)]
    L = len(names)
    plt = agg_pyplot()
    side = min(16.0, max(5.0, 0.22 * L + 2.5))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(side + 4.0, side),
                                  gridspec_kw={"width_ratios": [side, 3.2]})
    im = ax.imshow(sim, cmap="RdBu_r", vmin=-1, vmax=1)
    fontsize = 9 if L <= 25 else 7 if L <= 50 else 5
    ax.set_xticks(range(L), names, rotation=90, fontsize=fontsize)
    ax.set_yticks(range(L), names, fontsize=fontsize)
    ax.set_title("label similarity aᵢ·aⱼ (clustered order)")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    s = np.asarray(singular_values, dtype=np.float64)
    ax2.bar(np.arange(1, s.size + 1), s, color="#4477aa")
    ax2.set_xlabel("index")
    ax2.set_ylabel("singular value of A")
    rank = int(np.count_nonzero(s > s.max() * max(A.shape) * np.finfo(float).eps)) if s.size else 0
    ax2.set_title(f"spectrum (d = {A.shape[0]}, rank {rank})")
    if title:
        fig.suptitle(title)
    save_pyplot_figure(plt, fig, path)
    return names
