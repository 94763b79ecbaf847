"""Tree max-product and sum-product against enumeration."""

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.inference import (
    all_labelings,
    brute_force_log_partition,
    tree_max_product,
    tree_score,
    tree_sum_product,
)
from latentstruct.testing import check_decoder, random_tree, random_tree_instance


def make_tree(rng):
    return random_tree_instance(rng, max_n=5, max_K=3)


@pytest.mark.slow
def test_max_product_matches_brute_force():
    rep = check_decoder(
        lambda inst: tree_max_product(*inst),
        lambda inst: all_labelings(*inst[0].shape),
        lambda inst, y: tree_score(y, *inst),
        make_instance=make_tree, n_instances=400, random_state=20,
    )
    assert rep.n_infeasible > 0


@pytest.mark.slow
def test_sum_product_matches_enumeration():
    rng = np.random.default_rng(21)
    checked = 0
    for _ in range(300):
        unary, parents, edges = make_tree(rng)
        try:
            ref = brute_force_log_partition(unary, parents, edges)
        except InputError:  # every labelling forbidden
            with pytest.raises(InputError, match="-inf"):
                tree_sum_product(unary, parents, edges)
            continue
        got = tree_sum_product(unary, parents, edges)
        checked += 1
        assert abs(got.log_partition - ref.log_partition) <= 1e-9 * max(1.0, abs(ref.log_partition))
        np.testing.assert_allclose(got.node_marginals, ref.node_marginals, atol=1e-9)
        np.testing.assert_allclose(got.edge_marginals, ref.edge_marginals, atol=1e-9)
        np.testing.assert_allclose(got.node_marginals.sum(axis=1), 1.0, atol=1e-12)
        root = int(np.flatnonzero(parents == -1)[0])
        assert np.all(got.edge_marginals[root] == 0.0)
        for i in np.flatnonzero(parents >= 0):
            assert abs(got.edge_marginals[i].sum() - 1.0) < 1e-12
            # edge marginals are consistent with node marginals
            np.testing.assert_allclose(got.edge_marginals[i].sum(axis=0), got.node_marginals[i], atol=1e-12)
            np.testing.assert_allclose(got.edge_marginals[i].sum(axis=1), got.node_marginals[parents[i]], atol=1e-12)
    assert checked > 200


def test_sum_product_is_stable_for_large_scores():
    rng = np.random.default_rng(22)
    parents = random_tree(rng, 5)
    unary = 1000.0 * rng.normal(size=(5, 3))
    edges = 1000.0 * rng.normal(size=(5, 3, 3))
    got = tree_sum_product(unary, parents, edges)
    ref = brute_force_log_partition(unary, parents, edges)
    assert np.isfinite(got.log_partition)
    assert abs(got.log_partition - ref.log_partition) < 1e-9 * abs(ref.log_partition)
    np.testing.assert_allclose(got.node_marginals, ref.node_marginals, atol=1e-9)


def test_single_node_and_chain():
    r = tree_max_product([[1.0, 3.0]], [-1], np.zeros((1, 2, 2)))
    assert r.structure.tolist() == [1] and r.score == 3.0
    m = tree_sum_product([[0.0, 0.0]], [-1], np.zeros((1, 2, 2)))
    assert abs(m.log_partition - np.log(2)) < 1e-12
    # root slice of edge_scores is ignored, even if it holds NaN
    edges = np.zeros((2, 2, 2))
    edges[0] = np.nan
    assert tree_max_product(np.zeros((2, 2)), [-1, 0], edges).score == 0.0


def test_tree_validation():
    u, e = np.zeros((3, 2)), np.zeros((3, 2, 2))
    with pytest.raises(InputError, match="exactly one tree"):
        tree_max_product(u, [-1, -1, 0], e)  # forest
    with pytest.raises(InputError, match="exactly one tree"):
        tree_max_product(u, [1, 2, 0], e)  # no root
    with pytest.raises(InputError, match="cycle"):
        tree_max_product(u, [-1, 2, 1], e)
    with pytest.raises(InputError, match="out of range"):
        tree_max_product(u, [-1, 0, 5], e)
    msg = r"edge_scores must have shape \(n, K, K\) = \(3, 2, 2\); got shape \(3, 2, 3\)"
    with pytest.raises(ValueError, match=msg):
        tree_max_product(u, [-1, 0, 0], np.zeros((3, 2, 3)))
    with pytest.raises(ValueError, match=r"got shape \(2, 2\)"):
        tree_sum_product(np.zeros((2, 2)), [-1, 0, 0], e)
    with pytest.raises(ValueError, match="NaN"):
        tree_sum_product(np.full((3, 2), np.nan), [-1, 0, 0], e)
