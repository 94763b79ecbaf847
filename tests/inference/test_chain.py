"""Chain sum-product against enumeration (tiny random chains, some scores -inf)."""

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference.chain import ChainMarginals, chain_sum_product
from latentstruct.testing import all_sequences, random_chain, sequence_score


def enumerate_chain(unary, transition, start, end):
    """(log Z, node (T, L), edge (T-1, L, L)) by enumerating all L**T labellings."""
    T, L = unary.shape
    ys = list(all_sequences(T, L))
    s = np.array([sequence_score(y, unary, transition, start, end) for y in ys])
    mx = s.max()
    if mx == -np.inf:
        return None
    p = np.exp(s - mx)
    log_z = float(mx + np.log(p.sum()))
    p /= p.sum()
    node = np.zeros((T, L))
    edge = np.zeros((max(T - 1, 0), L, L))
    for y, py in zip(ys, p):
        node[np.arange(T), y] += py
        for t in range(T - 1):
            edge[t, y[t], y[t + 1]] += py
    return log_z, node, edge


def test_matches_enumeration_with_forbidden_parts():
    rng = np.random.default_rng(7)
    checked = infeasible = 0
    for _ in range(600):
        unary, transition, start, end = random_chain(rng, max_T=4, max_L=3)
        T, L = unary.shape
        if T == 0:
            continue
        ref = enumerate_chain(unary, transition, start, end)
        if ref is None:
            infeasible += 1
            with pytest.raises(InputError, match="-inf"):
                chain_sum_product(unary, transition, start, end)
            continue
        got = chain_sum_product(unary, transition, start, end)
        assert isinstance(got, ChainMarginals)
        log_z, node, edge = ref
        assert abs(got.log_partition - log_z) <= 1e-9 * max(1.0, abs(log_z))
        assert got.node.shape == (T, L) and got.edge.shape == (T - 1, L, L)
        np.testing.assert_allclose(got.node, node, atol=1e-9)
        np.testing.assert_allclose(got.edge, edge, atol=1e-9)
        np.testing.assert_allclose(got.node.sum(axis=1), 1.0, atol=1e-12)
        for t in range(T - 1):
            assert abs(got.edge[t].sum() - 1.0) < 1e-12
            np.testing.assert_allclose(got.edge[t].sum(axis=1), got.node[t], atol=1e-12)
            np.testing.assert_allclose(got.edge[t].sum(axis=0), got.node[t + 1], atol=1e-12)
        # forbidden parts get probability exactly zero
        assert np.all(got.node[np.isneginf(unary)] == 0.0)
        if T > 1:
            assert np.all(got.edge[:, np.isneginf(transition)] == 0.0)
        checked += 1
    assert checked > 300 and infeasible > 0


def test_default_start_end_are_zero():
    rng = np.random.default_rng(8)
    unary, transition = rng.normal(size=(4, 3)), rng.normal(size=(3, 3))
    a = chain_sum_product(unary, transition)
    b = chain_sum_product(unary, transition, np.zeros(3), np.zeros(3))
    assert a.log_partition == b.log_partition
    np.testing.assert_array_equal(a.node, b.node)


def test_empty_and_single_position():
    empty = chain_sum_product(np.zeros((0, 3)), np.zeros((3, 3)))
    assert empty.log_partition == 0.0 and empty.node.shape == (0, 3) and empty.edge.shape == (0, 3, 3)
    one = chain_sum_product(np.array([[0.0, np.log(3.0)]]), np.zeros((2, 2)), [0.0, 0.0], [np.log(2.0), 0.0])
    assert one.log_partition == pytest.approx(np.log(5.0), abs=1e-12)
    np.testing.assert_allclose(one.node, [[0.4, 0.6]], atol=1e-12)
    assert one.edge.shape == (0, 2, 2)


def test_stable_for_large_scores():
    rng = np.random.default_rng(9)
    unary, transition = 1e4 * rng.normal(size=(4, 3)), 1e4 * rng.normal(size=(3, 3))
    got = chain_sum_product(unary, transition)
    log_z, node, edge = enumerate_chain(unary, transition, np.zeros(3), np.zeros(3))
    assert np.isfinite(got.log_partition)
    assert abs(got.log_partition - log_z) <= 1e-9 * abs(log_z)
    np.testing.assert_allclose(got.node, node, atol=1e-9)
    np.testing.assert_allclose(got.edge, edge, atol=1e-9)


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.zeros((3, 2)), np.zeros((3, 3))), "transition"),
        ((np.zeros((3, 2)), np.zeros((2, 2)), np.zeros(3)), "start"),
        ((np.array([[np.nan, 0.0]]), np.zeros((2, 2))), "NaN"),
        ((np.array([[np.inf, 0.0]]), np.zeros((2, 2))), r"\+inf"),
        ((np.zeros(3), np.zeros((3, 3))), "unary"),
    ],
)
def test_bad_inputs_raise(args, match):
    with pytest.raises(InputError, match=match):
        chain_sum_product(*args)
