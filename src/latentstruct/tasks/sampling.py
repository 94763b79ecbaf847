"""Samples of labelled structures (S) and binary examples (B) for indirect supervision.

J-LIS (Chang et al. 2010, ICML §4) learns from a few labelled structures S and many binary
examples B: positives are inputs known to have a good structure (their labels unused), and
negatives are inputs with none, made by shuffling a positive's tokens.  Any structured task
whose records can be reduced to a token sequence can draw S and B from one training file
with :func:`indirect_supervision_sample`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..exceptions import ConfigError
from .base import Dataset
from .negatives import shuffled_negatives

__all__ = ["indirect_supervision_sample"]


def _check_count(name: str, value, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ConfigError(f"{name} must be a non-negative integer{' or None' if allow_none else ''}, "
                          f"got {value!r}")


def indirect_supervision_sample(
    dataset: Dataset,
    *,
    n_structured_tokens: int | None,
    n_binary: int,
    negatives_per_positive: int,
    seed: int,
    binary_record: Callable,
    size: Callable = len,
) -> Dataset:
    """Deterministic, disjoint S and B from the records of one labelled file.

    Records are shuffled with ``seed``; the first ``n_binary`` become B+ (their labels are
    unused; ``binary_record(record)`` turns each into an unlabelled input that has
    ``permuted(order)`` and a length) and each is shuffled ``negatives_per_positive`` times
    into B-; S takes the following records until it holds ``n_structured_tokens`` tokens
    (``size(target)`` per record; None: all remaining records).

    Returns a ``Dataset`` of S (records, targets) with ``binary`` = B (labels +1 / -1) and
    ``labels`` = every label of the file (so a small S still knows the whole label set).
    """
    _check_count("n_binary", n_binary)
    _check_count("negatives_per_positive", negatives_per_positive)
    _check_count("sample_seed", seed)
    _check_count("n_structured_tokens", n_structured_tokens, allow_none=True)
    n = len(dataset)
    if n_binary > n:
        raise ConfigError(f"n_binary={n_binary} but the file has only {n} sentences")
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    b_idx, rest = order[:n_binary], order[n_binary:]
    s_idx, tokens = [], 0
    for i in rest:
        if n_structured_tokens is not None and tokens >= n_structured_tokens:
            break
        s_idx.append(int(i))
        tokens += size(dataset.targets[i])
    positives = [binary_record(dataset.records[i]) for i in b_idx]
    orders = shuffled_negatives([list(range(len(r))) for r in positives],
                                negatives_per_positive, rng)
    per = negatives_per_positive
    negatives = [positives[k // per].permuted(o) for k, o in enumerate(orders)] if per else []
    binary = Dataset(positives + negatives,
                     np.array([1] * len(positives) + [-1] * len(negatives)), dataset.path)
    labels = tuple(sorted({t for tags in dataset.targets for t in tags}))
    return Dataset([dataset.records[i] for i in s_idx], [dataset.targets[i] for i in s_idx],
                   dataset.path, binary=binary, labels=labels)
