"""The PyStruct-compatible models: joint features, decoding, loss augmentation, bad input.

Decoding is checked against enumeration of every labelling scored by ``w .
joint_feature(x, y)``, so the potentials, the joint feature and the decoder must agree.
``brute`` replaces the layer's ``inference_dispatch`` with exhaustive search over the
potentials (independent of the inference package); ``real`` uses the layer's own
dispatch when it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.pystruct.models import (BinaryClf, ChainCRF, DirectionalGridCRF,
                                          EdgeFeatureGraphCRF, GraphCRF, GridCRF,
                                          MultiClassClf, MultiLabelClf)
from model_checks import brute_dispatch, choose_dispatch, enumerate_best


@pytest.fixture(params=["brute", "real"])
def dispatch(request, monkeypatch):
    """Each test twice: brute-force decoding, then the layer's own dispatch."""
    return choose_dispatch(request.param, monkeypatch)


@pytest.fixture
def brute(monkeypatch):
    return choose_dispatch("brute", monkeypatch)


def random_graph(rng, n_nodes, n_features):
    features = rng.normal(size=(n_nodes, n_features))
    pairs = [(i, j) for i in range(n_nodes) for j in range(n_nodes) if i != j]
    chosen = rng.choice(len(pairs), size=min(len(pairs), n_nodes + 1), replace=False)
    return features, np.array([pairs[k] for k in chosen])


# -- joint features against hand-computed values ----------------------------------------
def test_graph_crf_joint_feature_by_hand():
    x = (np.array([[0, 1], [1, 0], [.4, .6]]), np.array([[0, 1], [1, 2], [0, 2]]))
    crf = GraphCRF(n_states=2, n_features=2)
    # state 0: node 1; state 1: nodes 0 and 2; edges (1,0), (0,1), (1,1)
    np.testing.assert_allclose(crf.joint_feature(x, [1, 0, 1]),
                               [1, 0, .4, 1.6, 0, 2, 1])
    directed = GraphCRF(n_states=2, n_features=2, directed=True)
    np.testing.assert_allclose(directed.joint_feature(x, [1, 0, 1]),
                               [1, 0, .4, 1.6, 0, 1, 1, 1])
    # relaxed y with summed pairwise marginals gives the same vector
    unary = np.eye(2)[[1, 0, 1]]
    counts = np.array([[0, 1], [1, 1]])
    np.testing.assert_allclose(crf.joint_feature(x, (unary, counts)),
                               crf.joint_feature(x, [1, 0, 1]))


def test_edge_feature_joint_feature_by_hand():
    x = (np.array([[1., 0], [0, 1], [1, 1]]), np.array([[0, 1], [2, 1]]),
         np.array([[1., 2], [3, 0]]))
    crf = EdgeFeatureGraphCRF(n_states=2, n_features=2, n_edge_features=2)
    jf = crf.joint_feature(x, [0, 1, 1])
    np.testing.assert_allclose(jf[:4], [1, 0, 1, 2])
    # feature 0: edge (0,1) labels (0,1) weight 1, edge (2,1) labels (1,1) weight 3
    np.testing.assert_allclose(jf[4:8], [0, 1, 0, 3])
    np.testing.assert_allclose(jf[8:], [0, 2, 0, 0])
    sym = EdgeFeatureGraphCRF(2, 2, 2, symmetric_edge_features=[0],
                              antisymmetric_edge_features=[1])
    jf = sym.joint_feature(x, [0, 1, 1])
    np.testing.assert_allclose(jf[4:8], [0, .5, .5, 3])
    np.testing.assert_allclose(jf[8:], [0, 1, -1, 0])


def test_chain_and_grid_joint_feature_by_hand():
    chain = ChainCRF(n_states=2, n_features=1)
    np.testing.assert_allclose(chain.joint_feature(np.array([[1.], [2], [3]]), [0, 1, 1]),
                               [1, 5, 0, 1, 0, 1])
    grid = GridCRF(n_states=2, n_features=1)
    x = np.arange(4, dtype=float).reshape(2, 2, 1)
    y = np.array([[0, 1], [1, 1]])
    # edges: (0,1) (2,3) horizontal, (0,2) (1,3) vertical: pairs 01, 11, 01, 11
    np.testing.assert_allclose(grid.joint_feature(x, y), [0, 6, 0, 2, 2])
    directional = DirectionalGridCRF(n_states=2, n_features=1)
    np.testing.assert_allclose(directional.joint_feature(x, y),
                               [0, 6, 0, 1, 0, 1, 0, 1, 0, 1])


def test_unstructured_joint_features_by_hand():
    np.testing.assert_allclose(BinaryClf(2).joint_feature([2., -4], -1), [-1, 2])
    np.testing.assert_allclose(MultiClassClf(2, 3).joint_feature([2., -4], 1),
                               [0, 0, 2, -4, 0, 0])
    model = MultiLabelClf(n_labels=3, n_features=2, edges=np.array([[0, 2]]))
    np.testing.assert_allclose(model.joint_feature(np.array([1., 2]), [1, 0, 1]),
                               [1, 2, 0, 0, 1, 2, 0, 0, 0, 1])


# -- decoding against enumeration ------------------------------------------------------
def test_graph_crfs_decode_the_best_labelling(dispatch):
    rng = np.random.RandomState(0)
    for trial in range(12):
        n_states = 2 + trial % 2
        features, edges = random_graph(rng, 4, 2)
        if trial % 3 == 2:
            crf = EdgeFeatureGraphCRF(n_states, 2, 2, symmetric_edge_features=[1],
                                      inference_method="ad3")
            x = (features, edges, rng.normal(size=(len(edges), 2)))
        else:
            crf = GraphCRF(n_states, 2, directed=bool(trial % 2), inference_method="ad3")
            x = (features, edges)
        w = rng.normal(size=crf.size_joint_feature)
        y_hat, energy = crf.inference(x, w, return_energy=True)
        best = enumerate_best(crf, x, w, 4, n_states)
        np.testing.assert_allclose(w @ crf.joint_feature(x, y_hat), best, atol=1e-6)
        np.testing.assert_allclose(-energy, best, atol=1e-6)


def test_loss_augmented_inference_maximises_score_plus_loss(dispatch):
    rng = np.random.RandomState(1)
    for trial in range(10):
        features, edges = random_graph(rng, 4, 2)
        crf = GraphCRF(3, 2, class_weight=[1., .5, 2.], inference_method="ad3")
        x = (features, edges)
        y = rng.randint(3, size=4)
        w = rng.normal(size=crf.size_joint_feature)
        y_hat, energy = crf.loss_augmented_inference(x, y, w, return_energy=True)
        best = enumerate_best(crf, x, w, 4, 3, y_true=y)
        value = w @ crf.joint_feature(x, y_hat) + crf.loss(y, y_hat)
        np.testing.assert_allclose(value, best, atol=1e-6)
        np.testing.assert_allclose(-energy, best, atol=1e-6)


def test_grid_models_decode_in_grid_shape(dispatch):
    rng = np.random.RandomState(2)
    for crf in (GridCRF(2, 2, inference_method="ad3"),
                GridCRF(2, 2, neighborhood=8, inference_method="ad3"),
                DirectionalGridCRF(2, 2, inference_method="ad3")):
        x = rng.normal(size=(2, 3, 2))
        w = rng.normal(size=crf.size_joint_feature)
        y_hat = crf.inference(x, w)
        assert y_hat.shape == (2, 3)
        best = enumerate_best(crf, x, w, 6, 2, shape=(2, 3))
        np.testing.assert_allclose(w @ crf.joint_feature(x, y_hat), best, atol=1e-6)
        y = rng.randint(2, size=(2, 3))
        y_hat = crf.loss_augmented_inference(x, y, w)
        best = enumerate_best(crf, x, w, 6, 2, y_true=y, shape=(2, 3))
        np.testing.assert_allclose(w @ crf.joint_feature(x, y_hat) + crf.loss(y, y_hat),
                                   best, atol=1e-6)


def test_chain_crf_is_directed(brute):
    # PyStruct's directed-chain check: evidence only in the middle, order 0 -> 1 -> 2
    x = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    w = np.array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(ChainCRF(3, 3).inference(x, w), [0, 1, 2])


def test_unstructured_decoders_against_enumeration(dispatch):
    rng = np.random.RandomState(3)
    mc = MultiClassClf(n_features=3, n_classes=4, class_weight=[1, 2, 1, .5])
    edges = np.array([[0, 1], [1, 2], [0, 2]])
    ml = MultiLabelClf(n_labels=3, n_features=3, edges=edges, inference_method="ad3")
    for _ in range(10):
        x = rng.normal(size=3)
        w = rng.normal(size=mc.size_joint_feature)
        y, energy = mc.inference(x, w, return_energy=True)
        scores = [w @ mc.joint_feature(x, k) for k in range(4)]
        assert y == int(np.argmax(scores)) and np.isclose(energy, max(scores))
        y_true = rng.randint(4)
        y_hat = mc.loss_augmented_inference(x, y_true, w)
        totals = [scores[k] + mc.loss(y_true, k) for k in range(4)]
        assert np.isclose(totals[y_hat], max(totals))
        w = rng.normal(size=ml.size_joint_feature)
        y_hat = ml.inference(x, w)
        best = enumerate_best(ml, x, w, 3, 2)
        np.testing.assert_allclose(w @ ml.joint_feature(x, y_hat), best, atol=1e-6)
        y_true = rng.randint(2, size=3)
        y_hat = ml.loss_augmented_inference(x, y_true, w)
        best = enumerate_best(ml, x, w, 3, 2, y_true=y_true)
        np.testing.assert_allclose(w @ ml.joint_feature(x, y_hat) + ml.loss(y_true, y_hat),
                                   best, atol=1e-6)


def test_binary_clf_signs_and_ties():
    model = BinaryClf(n_features=2)
    assert model.inference([1., 1.], [1., -1.]) == 1          # tie goes to +1
    assert model.inference([1., 0.], [-1., 5.]) == -1
    # score -0.5 for +1 vs 0.5 for -1; y = -1: +1 gains the loss, 0.5 vs 0.5 -> +1
    assert model.loss_augmented_inference([1., 0.], -1, [-1., 0.]) == 1
    assert model.loss_augmented_inference([3., 0.], -1, [-1., 0.]) == -1


def test_class_weight_changes_loss_augmented_choice(brute):
    w = np.array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    x = (np.array([[1, 1.5, 1.1]]), np.empty((0, 2)))
    assert GraphCRF(3, 3).loss_augmented_inference(x, [1], w)[0] == 2
    weighted = GraphCRF(3, 3, class_weight=[1, .1, 1])
    assert weighted.loss_augmented_inference(x, [1], w)[0] == 1
    assert weighted.loss([1], [2]) == pytest.approx(.1)
    assert weighted.continuous_loss([1], np.array([[.2, .5, .3]])) == pytest.approx(.05)


# -- initialize and bad input -----------------------------------------------------------
def test_initialize_infers_and_refuses_mismatches():
    x = (np.ones((3, 2)), np.array([[0, 1], [1, 2]]))
    crf = GraphCRF()
    crf.initialize([x], [np.array([0, 1, 1])])
    assert (crf.n_states, crf.n_features, crf.size_joint_feature) == (2, 2, 7)
    with pytest.raises(ConfigError, match="n_states=3 was given but the labels Y imply n_states=2"):
        GraphCRF(n_states=3).initialize([x], [np.array([0, 1, 1])])
    with pytest.raises(ConfigError, match="n_features=4"):
        GraphCRF(n_features=4).initialize([x], [np.array([0, 1, 1])])
    ef = EdgeFeatureGraphCRF()
    ef.initialize([x + (np.ones((2, 5)),)], [np.array([0, 1, 1])])
    assert (ef.n_edge_features, ef.size_joint_feature) == (5, 4 + 20)


@pytest.mark.parametrize("x, y, message", [
    (np.ones((3, 2)), [0, 1, 0], r"X\[1\]: expected a tuple \(features, edges\)"),
    ((np.ones((3, 2)), np.array([[0, 1], [2, 9]])), [0, 1, 0],
     r"X\[1\]: edges\[1\] = \(2, 9\) is out of range for 3 nodes"),
    ((np.array([[1., np.nan], [0, 0], [1, 1]]), np.zeros((0, 2))), [0, 1, 0],
     r"X\[1\]: features\[0, 1\] = nan is not finite"),
    ((np.ones((3, 2)), np.array([[0.5, 1]])), [0, 1, 0], r"X\[1\]: edges must hold integer"),
    ((np.ones((3, 2)), np.zeros((0, 2))), [0, 1], r"X\[1\]: y has 2 labels but the example "
                                                   r"has 3 nodes"),
    ((np.ones((3, 3)), np.zeros((0, 2))), [0, 1, 0], r"X\[1\]: feature width 3 differs"),
])
def test_bad_input_is_named_in_one_line(x, y, message):
    good = (np.ones((3, 2)), np.array([[0, 1]]))
    with pytest.raises(InputError, match=message) as info:
        GraphCRF().initialize([good, x], [np.array([0, 1, 1]), np.array(y)])
    assert "\n" not in str(info.value)


def test_bad_input_at_inference_and_bad_options():
    crf = GraphCRF(n_states=2, n_features=2)
    with pytest.raises(InputError, match="w has 3 entries but size_joint_feature is 7"):
        crf.inference((np.ones((2, 2)), np.zeros((0, 2))), np.ones(3))
    with pytest.raises(InputError, match=r"x: y\[1\] = 5 is not a state"):
        crf.loss_augmented_inference((np.ones((2, 2)), np.zeros((0, 2))), [0, 5], np.ones(7))
    with pytest.raises(ConfigError, match="class_weight has 3 entries"):
        GraphCRF(n_states=2, n_features=2, class_weight=[1, 1, 1])
    with pytest.raises(ConfigError, match="neighborhood"):
        GridCRF(neighborhood=6)
    with pytest.raises(ConfigError, match="both symmetric and antisymmetric"):
        EdgeFeatureGraphCRF(2, 2, 2, symmetric_edge_features=[0],
                            antisymmetric_edge_features=[0])
    with pytest.raises(InputError, match="grid example must be a"):
        GridCRF(2, 2).inference(np.ones((4, 2)), np.ones(7))
    with pytest.raises(InputError, match="labels are -1 and \\+1"):
        BinaryClf().initialize(np.ones((2, 2)), [0, 1])


def test_without_pairwise_scores_ties_go_to_the_lowest_state_whatever_came_before():
    # a warm solver picks among tied optima by its history; with no pairwise scores the
    # nodes are independent and the decoder answers per node, lowest state on ties
    pytest.importorskip("latentstruct.pystruct.inference")
    from latentstruct.pystruct.models.base import run_inference

    rng = np.random.RandomState(0)
    crf = GridCRF(n_states=3, n_features=3, inference_method="qpbo")
    x = rng.normal(size=(4, 5, 3))
    y = rng.randint(3, size=(4, 5))
    zero = np.zeros(crf.size_joint_feature)
    first = crf.loss_augmented_inference(x, y, zero)
    # at w = 0 every wrong label ties: the lowest wrong one is taken
    np.testing.assert_array_equal(first, np.where(y == 0, 1, 0))
    for _ in range(3):
        crf.loss_augmented_inference(x, y, rng.normal(size=crf.size_joint_feature))
        np.testing.assert_array_equal(crf.loss_augmented_inference(x, y, zero), first)
    unary = rng.normal(size=(6, 4))
    edges = np.array([[0, 1], [1, 2], [2, 0], [3, 4]])
    for pairwise in (np.zeros((4, 4)), np.zeros((4, 4, 4))):
        np.testing.assert_array_equal(run_inference(unary, pairwise, edges, "lp"),
                                      np.argmax(unary, axis=1))
    # with pairwise scores the real decoder runs: the best labelling by enumeration
    pairwise = rng.normal(size=(4, 4))
    np.testing.assert_array_equal(run_inference(unary, pairwise, edges, "ad3"),
                                  brute_dispatch(unary, pairwise, edges, "ad3"))
