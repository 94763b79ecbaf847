"""latentstruct.pystruct.datasets: shapes, dtypes, seeds, the labels each generator
promises, and the properties PyStruct's own tests rely on (noise-free evidence gives the
labels; with the tests' fixed weights the exact MAP labelling of the blocks is the truth,
checked here by an exact MILP)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from latentstruct.exceptions import ConfigError
from latentstruct.pystruct import datasets as D
from latentstruct.pystruct.utils import expand_sym, make_grid_edges

GENERATORS = D.binary + D.multinomial + [D.generate_crosses]


@pytest.mark.parametrize("generate", GENERATORS, ids=lambda f: f.__name__)
def test_shapes_dtypes_and_seeds(generate):
    X, Y = generate(n_samples=3, seed=4)
    assert X.dtype == np.float64 and Y.dtype == np.int64
    assert X.shape[:3] == Y.shape and Y.shape[0] == 3
    n_states = 2 if generate in D.binary or generate is D.generate_crosses else 3
    assert X.shape[3] == n_states and set(np.unique(Y)) == set(range(n_states))
    again_X, again_Y = generate(n_samples=3, seed=4)
    assert np.array_equal(X, again_X) and np.array_equal(Y, again_Y)
    other_X, _ = generate(n_samples=3, seed=5)
    assert not np.allclose(X, other_X)


@pytest.mark.parametrize("generate", GENERATORS, ids=lambda f: f.__name__)
def test_generators_leave_the_global_random_state_alone(generate):
    np.random.seed(11)
    before = np.random.get_state()[1].copy()
    generate(n_samples=2)
    assert np.array_equal(np.random.get_state()[1], before)


@pytest.mark.parametrize("generate", D.binary, ids=lambda f: f.__name__)
def test_binary_evidence(generate):
    X, Y = generate(n_samples=2, noise=0)
    assert np.array_equal(np.argmax(X, axis=-1), Y)
    assert np.array_equal(X[..., 0], 1 - 2.0 * Y)
    if generate is D.generate_checker:
        assert not X[..., 1].any()  # PyStruct's checker: evidence in channel 0 only
    else:
        assert np.array_equal(X[..., 1], 2.0 * Y - 1)
    X, Y = generate(n_samples=2)
    assert 0.5 < np.mean(np.argmax(X, axis=-1) == Y) < 1


@pytest.mark.parametrize("generate", D.multinomial, ids=lambda f: f.__name__)
def test_multinomial_evidence_and_size_x(generate):
    X, Y = generate(n_samples=1, noise=0, size_x=9)
    assert Y.shape[2] == 9 and set(np.unique(Y)) == {0, 1, 2}
    assert np.array_equal(X[0], 2 * np.eye(3)[Y[0]] - 1)
    X, Y = generate(n_samples=1, size_x=9)
    assert np.mean(np.argmax(X, axis=-1) == Y) > 0.5


def test_label_patterns():
    _, blocks = D.generate_blocks(n_samples=2)
    assert (blocks[:, :, :6] == 0).all() and (blocks[:, :, 6:] == 1).all()
    for size_x in (3, 8, 12):
        _, stripes = D.generate_blocks_multinomial(n_samples=1, size_x=size_x)
        column = stripes[0, 0]
        assert (stripes[0] == column).all() and (np.diff(column) >= 0).all()
    _, checker = D.generate_checker()
    assert checker.shape == (10, 11, 13)
    assert (checker[0, :, 1:] != checker[0, :, :-1]).all()
    assert (checker[0, 1:] != checker[0, :-1]).all()
    _, big = D.generate_big_checker()
    assert big[0, :3, :3].sum() == 0 and big[0, :3, 3:6].sum() == 9
    _, diagonals = D.generate_checker_multinomial(n_samples=1)
    assert (diagonals[0, :, 1:] == (diagonals[0, :, :-1] + 1) % 3).all()


def test_crosses_and_boxes():
    _, Y = D.generate_crosses(n_samples=6, n_crosses=1, total_size=8)
    assert Y.shape == (6, 8, 8) and (Y.sum(axis=(1, 2)) == 5).all()
    for y in Y:  # a plus: the centre has its four neighbours in the cross
        r, c = np.argwhere(y)[2]
        assert y[r - 1:r + 2, c].sum() == 3 and y[r, c - 1:c + 2].sum() == 3
    _, parts = D.generate_crosses_explicit(n_samples=4, n_crosses=1, size_x=7)
    assert ((parts == 2).sum(axis=(1, 2)) == 1).all() and ((parts == 1).sum(axis=(1, 2)) == 4).all()
    _, boxes = D.generate_easy(n_samples=5, box_size=2, total_size=6)
    assert boxes.shape == (5, 6, 6) and (boxes.sum(axis=(1, 2)) == 4).all()
    X, _ = D.generate_easy(n_samples=400, noise=5, seed=0)
    # noise in tenths of the signal: noise=5 is a standard deviation of 0.5
    assert np.std(X[..., 1] - (2.0 * D.generate_easy(n_samples=400, noise=0)[1] - 1)) == \
        pytest.approx(0.5, rel=0.05)


def test_make_simple_2x2():
    X, Y = D.make_simple_2x2(seed=1, n_samples=30, n_flips=3)
    wrong = []
    assert X.shape == Y.shape == (30, 4, 4) and X.dtype == np.float64
    for x, y in zip(X, Y):
        quarters = y[::2, ::2]
        assert quarters.sum() == 1
        r, c = 2 * np.argwhere(quarters)[0]
        assert y[r:r + 2, c:c + 2].sum() == 4 and y.sum() == 4
        assert set(np.unique(x)) <= {-1.0, 1.0} and ((x > 0) != y).sum() <= 3
        wrong.append(((x > 0) != y).sum())
    # a reset draws its label at random: on average half of the 3 resets change a pixel
    assert 1.0 < np.mean(wrong) < 2.0 and max(wrong) <= 3
    assert np.array_equal(D.make_simple_2x2(seed=1, n_samples=30, n_flips=3)[0], X)


def test_generators_refuse_bad_arguments():
    with pytest.raises(ConfigError, match="n_samples=0"):
        D.generate_blocks(n_samples=0)
    with pytest.raises(ConfigError, match="noise=-1"):
        D.generate_checker(noise=-1)
    with pytest.raises(ConfigError, match="size_x=2"):
        D.generate_blocks_multinomial(size_x=2)
    with pytest.raises(ConfigError, match="box_size=7 is larger than total_size=6"):
        D.generate_easy(box_size=7, total_size=6)
    with pytest.raises(ConfigError, match="n_flips=-1"):
        D.make_simple_2x2(n_flips=-1)


# ------------------------------------------------ exact MAP of the grids PyStruct tests use
def exact_map(unary, edges, pairwise):
    """argmax of sum unary[i, y_i] + sum pairwise[e, y_i, y_j] by a MILP over the
    local-polytope variables (exact with integrality)."""
    n, S = unary.shape
    n_node = n * S
    rows, cols, b = [], [], []
    for i in range(n):
        rows += [len(b)] * S
        cols += list(range(i * S, i * S + S))
        b.append(1)
    vals = [1.0] * len(rows)
    for e, (i, j) in enumerate(edges):
        base = n_node + e * S * S
        for s in range(S):  # sum_t m[s, t] = z_i[s] and sum_t m[t, s] = z_j[s]
            for node, pairs in ((i, [base + s * S + t for t in range(S)]),
                                (j, [base + t * S + s for t in range(S)])):
                rows += [len(b)] * (S + 1)
                cols += pairs + [node * S + s]
                vals += [1.0] * S + [-1.0]
                b.append(0)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(b), n_node + len(edges) * S * S))
    c = -np.concatenate([unary.ravel(), np.asarray(pairwise).ravel()])
    res = milp(c, constraints=LinearConstraint(A, b, b), integrality=np.ones(len(c)),
               bounds=Bounds(0, 1))
    return res.x[:n_node].reshape(n, S).argmax(axis=1)


def grid_map(x, pairwise_by_kind, neighborhood=4):
    kinds = make_grid_edges(x, neighborhood, return_lists=True)
    pairwise = np.vstack([np.repeat(p[None], len(e), axis=0)
                          for p, e in zip(pairwise_by_kind, kinds)])
    return exact_map(x.reshape(-1, x.shape[-1]), np.vstack(kinds), pairwise
                     ).reshape(x.shape[:2])


@pytest.mark.slow
def test_blocks_are_the_map_labelling_under_pystructs_test_weights():
    X, Y = D.generate_blocks(n_samples=1)
    attract = expand_sym(np.array([0, -4, 0.]))
    assert np.array_equal(grid_map(X[0], [attract] * 2), Y[0])
    X, Y = D.generate_blocks(n_samples=1, noise=1)
    eight = expand_sym(np.array([1, -1.4, 1.]))
    assert np.array_equal(grid_map(X[0], [eight] * 4, neighborhood=8), Y[0])
    weak = expand_sym(np.array([.4, -.3, .3, -.5, -.1, .3]))
    for kwargs in ({"size_x": 9, "seed": 0}, {}):
        X, Y = D.generate_blocks_multinomial(n_samples=1, **kwargs)
        assert np.array_equal(grid_map(X[0], [weak] * 2), Y[0])
    # the directional weights: labels never fall to the right, columns hold one label
    rows, cols = np.indices((3, 3))
    right = np.where(rows > cols, -1.0, 0.0) + np.eye(3)
    down = np.where(rows != cols, -10.0, 10.0)
    for size_x in (12, 8):
        X, Y = D.generate_blocks_multinomial(noise=2, n_samples=1, seed=1, size_x=size_x)
        assert np.array_equal(grid_map(X[0], [right, down]), Y[0])


def test_load_letters(require_data):
    require_data("ocr_letters", "letters.npz")
    letters = D.load_letters()
    data, labels, folds = letters["data"], letters["labels"], letters["folds"]
    assert len(data) == len(labels) == len(folds) == len(letters["words"]) == 6877
    assert sum(len(x) for x in data) == 52152
    assert all(x.shape == (len(y), 128) and x.dtype == np.float64 for x, y in zip(data, labels))
    assert set(np.unique(np.concatenate(data))) <= {0.0, 1.0}
    assert np.concatenate(labels).max() == 25 and np.sum(folds == 1) == 704
    # the labels spell each word (as stored: without its first, capital, letter)
    for i in (0, 1000, 6876):
        assert "".join(chr(ord("a") + k) for k in labels[i]) == letters["words"][i]


def test_scene_and_snakes_say_they_are_not_shipped():
    for load in (D.load_scene, D.load_snakes):
        with pytest.raises(ConfigError, match="not in latentstruct's shared data"):
            load()
