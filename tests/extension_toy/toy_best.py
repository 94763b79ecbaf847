"""A contributor's decoder (the second of the two files of a new task): the best item of a
bag, exact by enumeration of its items.  Copied to ``latentstruct/inference/toy_best.py``
in a copy of the package by tests/test_extension_path.py."""

import numpy as np

from latentstruct.inference.result import EXACT, DecodeResult


def best_item(scores) -> DecodeResult:
    """The item with the highest score (the first of ties), and that score."""
    scores = np.asarray(scores, dtype=np.float64)
    k = int(np.argmax(scores))
    return DecodeResult(np.array([k]), float(scores[k]), EXACT)
