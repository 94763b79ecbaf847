"""The compiled forward–backward (scaled, with a log-space fallback) against enumeration and
against the tree kernel, on many tiny random chains."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from latentstruct.exceptions import InputError
from latentstruct.inference.chain import chain_sum_product
from latentstruct.inference.chain_fb import chain_marginals_batch


def brute(unary, transition, start, end):
    T, L = unary.shape
    ys = list(itertools.product(range(L), repeat=T))
    scores = np.array([start[y[0]] + end[y[-1]] + sum(unary[t, y[t]] for t in range(T))
                       + sum(transition[y[t - 1], y[t]] for t in range(1, T)) for y in ys])
    log_z = logsumexp(scores)
    p = np.exp(scores - log_z)
    node = np.zeros((T, L))
    for y, pr in zip(ys, p):
        for t in range(T):
            node[t, y[t]] += pr
    return log_z, node


@pytest.mark.parametrize("scale", [1.0, 30.0, 2000.0])
def test_batch_matches_enumeration_on_random_chains(scale):
    """scale 2000 makes the scaled pass underflow, so the log-space fallback must answer."""
    rng = np.random.default_rng(int(scale))
    for trial in range(40):
        L = int(rng.integers(1, 4))
        lengths = rng.integers(0, 5, size=int(rng.integers(1, 4)))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        unary = rng.normal(scale=scale, size=(int(offsets[-1]), L))
        if trial % 3 == 0 and unary.size and L > 1:  # a few ruled-out labels
            mask = rng.random(unary.shape) < 0.3
            mask[np.arange(unary.shape[0]), rng.integers(0, L, size=unary.shape[0])] = False
            unary[mask] = -np.inf
        transition = rng.normal(scale=scale, size=(L, L))
        start, end = rng.normal(size=L), rng.normal(size=L)
        log_z, node = chain_marginals_batch(unary, offsets, transition, start, end)
        for k in range(len(lengths)):
            u = unary[offsets[k]:offsets[k + 1]]
            if u.shape[0] == 0:
                assert log_z[k] == 0.0
                continue
            ref_z, ref_node = brute(u, transition, start, end)
            assert log_z[k] == pytest.approx(ref_z, rel=1e-10, abs=1e-9)
            np.testing.assert_allclose(node[offsets[k]:offsets[k + 1]], ref_node, atol=1e-9)
            np.testing.assert_allclose(node[offsets[k]:offsets[k + 1]].sum(1), 1.0, atol=1e-9)


def test_batch_matches_tree_kernel_on_longer_chains():
    rng = np.random.default_rng(5)
    L = 9
    offsets = np.array([0, 40, 41, 90])
    unary = rng.normal(scale=3, size=(90, L))
    transition = rng.normal(scale=3, size=(L, L))
    start, end = rng.normal(size=L), rng.normal(size=L)
    log_z, node = chain_marginals_batch(unary, offsets, transition, start, end)
    for k in range(3):
        ref = chain_sum_product(unary[offsets[k]:offsets[k + 1]], transition, start, end)
        assert log_z[k] == pytest.approx(ref.log_partition, rel=1e-12)
        np.testing.assert_allclose(node[offsets[k]:offsets[k + 1]], ref.node, atol=1e-12)


def test_batch_rejects_impossible_chains_and_bad_input():
    with pytest.raises(InputError, match="scores -inf"):
        chain_marginals_batch(np.full((2, 2), -np.inf), [0, 2], np.zeros((2, 2)))
    with pytest.raises(InputError, match="offsets"):
        chain_marginals_batch(np.zeros((3, 2)), [0, 2], np.zeros((2, 2)))
    with pytest.raises(InputError, match="transition"):
        chain_marginals_batch(np.zeros((2, 2)), [0, 2], np.full((2, 2), np.inf))
    with pytest.raises(InputError, match="NaN"):
        chain_marginals_batch(np.full((2, 2), np.nan), [0, 2], np.zeros((2, 2)))
