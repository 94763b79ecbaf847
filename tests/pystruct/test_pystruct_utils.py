"""latentstruct.pystruct.utils: grid edges against hand counts, edge features, the
triangle form of pairwise weights, constraints and the primal objective on a tiny model
whose answers are worked out here, and exhaustive inference (SaveLogger: test_save_logger.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.pystruct.utils import (compress_sym, edge_list_to_features,
                                         exhaustive_inference,
                                         exhaustive_loss_augmented_inference,
                                         expand_sym, find_constraint, make_grid_edges,
                                         objective_primal)


# ---------------------------------------------------------------- grid edges
def test_grid_edges_of_3_by_4_match_a_hand_count():
    x = np.zeros((3, 4, 2))
    edges = make_grid_edges(x)
    # 3 rows of 3 horizontal edges, 2 rows of 4 vertical ones
    assert edges.shape == (9 + 8, 2) and edges.dtype == np.int64
    assert edges[:3].tolist() == [[0, 1], [1, 2], [2, 3]]
    assert edges[9:13].tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    eight = make_grid_edges(x, neighborhood=8, return_lists=True)
    # and 2 x 3 of each diagonal
    assert [len(e) for e in eight] == [9, 8, 6, 6]
    assert eight[2][0].tolist() == [4, 1] and eight[3][0].tolist() == [0, 5]
    assert np.array_equal(np.vstack(eight[:2]), edges)


@pytest.mark.parametrize("shape", [(1, 1), (1, 5), (4, 1), (2, 2), (5, 7)])
@pytest.mark.parametrize("neighborhood", [4, 8])
def test_grid_edges_join_each_pair_of_neighbours_once(shape, neighborhood):
    edges = make_grid_edges(np.zeros(shape), neighborhood)
    rows, cols = shape
    expected = set()
    for r, c in itertools.product(range(rows), range(cols)):
        steps = [(0, 1), (1, 0)] + ([(1, 1), (-1, 1)] if neighborhood == 8 else [])
        for dr, dc in steps:
            if 0 <= r + dr < rows and 0 <= c + dc < cols:
                expected.add(frozenset({r * cols + c, (r + dr) * cols + c + dc}))
    found = [frozenset(e) for e in edges.tolist()]
    assert len(found) == len(set(found)) and set(found) == expected


def test_grid_edges_refuse_bad_arguments():
    with pytest.raises(ConfigError, match="neighborhood=6"):
        make_grid_edges(np.zeros((3, 3)), neighborhood=6)
    with pytest.raises(InputError, match=r"shape \(5,\)"):
        make_grid_edges(np.zeros(5))


def test_edge_list_to_features_marks_each_edges_kind():
    lists = make_grid_edges(np.zeros((2, 3)), return_lists=True)  # 4 horizontal, 3 vertical
    features = edge_list_to_features(lists)
    assert features.shape == (7, 2)
    assert features.tolist() == [[1, 0]] * 4 + [[0, 1]] * 3
    three = edge_list_to_features([np.zeros((2, 2)), np.zeros((0, 2)), np.zeros((1, 2))])
    assert three.tolist() == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    with pytest.raises(InputError, match="one edge array"):
        edge_list_to_features(np.zeros((3, 2)))
    with pytest.raises(InputError, match=r"edge_list\[1\] has shape \(3,\)"):
        edge_list_to_features([np.zeros((1, 2)), np.zeros(3)])


# ---------------------------------------------------------------- symmetric weights
def test_compress_sym_reads_the_lower_triangle_row_by_row():
    matrix = np.array([[1., 2., 4.], [2., 3., 5.], [4., 5., 6.]])
    assert compress_sym(matrix, make_symmetric=False).tolist() == [1, 2, 3, 4, 5, 6]
    assert np.array_equal(expand_sym(np.array([1., 2., 3., 4., 5., 6.])), matrix)
    upper = np.triu(matrix)
    assert compress_sym(upper).tolist() == [1, 2, 3, 4, 5, 6]


def test_compress_and_expand_round_trip():
    rnd = np.random.RandomState(0)
    for n in (1, 2, 5, 9):
        m = rnd.normal(size=(n, n))
        m = m + m.T
        flat = compress_sym(m, make_symmetric=False)
        assert flat.shape == (n * (n + 1) // 2,)
        assert np.array_equal(expand_sym(flat), m)


def test_sym_tools_refuse_bad_shapes():
    with pytest.raises(InputError, match="square"):
        compress_sym(np.zeros((2, 3)))
    with pytest.raises(InputError, match="4 numbers are no triangle"):
        expand_sym(np.zeros(4))


# ---------------------------------------------------------------- constraints, objective
class TinyGraph:
    """Two nodes joined by one edge, 2 states, 1 feature per node: joint_feature is the
    unary block (state x feature) then the 2 x 2 pairwise indicator; Hamming loss.  Its
    loss-augmented inference is the labelling ``forced`` when set (to make a negative
    slack), else enumeration."""

    n_states = 2
    size_joint_feature = 2 + 4

    def __init__(self, forced=None):
        self.forced = forced

    def joint_feature(self, x, y):
        features, _ = x
        out = np.zeros(self.size_joint_feature)
        for node, state in enumerate(y):
            out[state] += features[node, 0]
        out[2 + 2 * y[0] + y[1]] += 1
        return out

    def loss(self, y, y_hat):
        return float(np.sum(np.asarray(y) != np.asarray(y_hat)))

    def loss_augmented_inference(self, x, y, w, relaxed=False):
        if self.forced is not None:
            return np.array(self.forced)
        candidates = [np.array(c) for c in itertools.product(range(2), repeat=2)]
        return max(candidates, key=lambda c: self.loss(y, c) + w @ self.joint_feature(x, c))


X_TINY = [(np.array([[1.0], [-2.0]]), np.array([[0, 1]])),
          (np.array([[0.5], [0.5]]), np.array([[0, 1]]))]
Y_TINY = [np.array([1, 0]), np.array([1, 1])]
W_TINY = np.array([0.3, -0.2, 0.1, 0.0, 0.4, -0.5])


def test_find_constraint_by_hand():
    model = TinyGraph(forced=[0, 0])
    y_hat, delta, slack, loss = find_constraint(model, X_TINY[0], Y_TINY[0], W_TINY)
    # joint_feature(y=[1,0]) = [-2, 1, 0, 0, 1, 0]; joint_feature([0,0]) = [-1, 0, 1, 0, 0, 0]
    assert y_hat.tolist() == [0, 0] and loss == 1
    assert delta.tolist() == [-1, 1, -1, 0, 1, 0]
    assert slack == pytest.approx(max(1 - W_TINY @ delta, 0))  # 1 - 0.1 = 0.9
    _, only_hat, _, _ = find_constraint(model, X_TINY[0], Y_TINY[0], W_TINY,
                                        compute_difference=False)
    assert only_hat.tolist() == [1, 0, -1, 0, 0, 0]


def test_objective_primal_clips_each_slack_or_only_their_sum():
    # forcing y_hat = [1, 1] makes example 1's constraint its own label: slack 0; example
    # 0's slack is 1 - w.(phi(y) - phi(y_hat)); make w give it a negative slack
    model = TinyGraph(forced=[1, 1])
    w = np.array([0.0, 0.0, 0.0, 0.0, 3.0, 0.0])  # phi(y0) has pair (1,0): slack 1 - 3 = -2
    regulariser = w @ w / 2
    assert objective_primal(model, w, X_TINY, Y_TINY, C=2.0) == pytest.approx(regulariser)
    slack_0 = 1 - w @ (model.joint_feature(X_TINY[0], Y_TINY[0])
                       - model.joint_feature(X_TINY[0], np.array([1, 1])))
    assert slack_0 == pytest.approx(-2.0)
    assert objective_primal(model, w, X_TINY, Y_TINY, C=2.0, variant="one_slack") == \
        pytest.approx(regulariser)
    # with exact loss-augmented inference every slack is >= 0 and both variants agree
    exact = TinyGraph()
    n_slack = objective_primal(exact, W_TINY, X_TINY, Y_TINY, C=2.0)
    one_slack = objective_primal(exact, W_TINY, X_TINY, Y_TINY, C=2.0, variant="one_slack")
    slacks = [find_constraint(exact, x, y, W_TINY)[2] for x, y in zip(X_TINY, Y_TINY)]
    assert n_slack == pytest.approx(one_slack) == pytest.approx(W_TINY @ W_TINY / 2
                                                                + 2.0 * sum(slacks))
    assert sum(slacks) > 0
    with pytest.raises(ConfigError, match="variant='two_slack'"):
        objective_primal(exact, W_TINY, X_TINY, Y_TINY, 1.0, variant="two_slack")
    with pytest.raises(InputError, match="2 inputs X but 1 labels"):
        objective_primal(exact, W_TINY, X_TINY, Y_TINY[:1], 1.0)


def test_exhaustive_inference_on_the_tiny_graph():
    model = TinyGraph()
    rnd = np.random.RandomState(3)
    for _ in range(20):
        w = rnd.normal(size=6)
        x = (rnd.normal(size=(2, 1)), np.array([[0, 1]]))
        y = rnd.randint(2, size=2)
        scores = {c: w @ model.joint_feature(x, np.array(c))
                  for c in itertools.product(range(2), repeat=2)}
        assert tuple(exhaustive_inference(model, x, w)) == max(scores, key=scores.get)
        augmented = {c: s + model.loss(y, np.array(c)) for c, s in scores.items()}
        assert tuple(exhaustive_loss_augmented_inference(model, x, y, w)) == \
            max(augmented, key=augmented.get)


def test_exhaustive_inference_keeps_a_grids_shape_and_refuses_big_problems():
    class Grid:
        n_states = 2

        def joint_feature(self, x, y):
            return np.array([np.sum(x[..., 0] * y)])

    x = np.array([[[1.0], [-1.0]], [[2.0], [-3.0]]])
    assert exhaustive_inference(Grid(), x, [1.0]).tolist() == [[1, 0], [1, 0]]
    with pytest.raises(ConfigError, match="2\\^30 labellings"):
        exhaustive_inference(Grid(), np.zeros((5, 6, 1)), [1.0])
