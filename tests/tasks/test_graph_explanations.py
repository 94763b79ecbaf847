"""Explanations of graph models (per node and per edge): the parts sum to the score, the
runner-up is the second best labelling and a CRF's probability is ``p(y | x)``, each
against enumeration on many tiny random graphs."""

import itertools

import numpy as np
import pytest

from latentstruct import Estimator
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks.graph.featurizer import GraphExample
from latentstruct.tasks.graph.layout import GraphLayout
from latentstruct.tasks.graph.structure import GraphStructure


def _graphs(seed, n):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        nodes, K, d, f = (int(rng.integers(1, 5)), int(rng.integers(1, 4)), 3,
                          int(rng.integers(0, 3)))
        edges = np.array([(i, j) for i in range(nodes) for j in range(nodes)
                          if i < j and rng.random() < 0.6], dtype=np.int64).reshape(-1, 2)
        ef = rng.normal(size=(len(edges), f)) if f else None
        x = GraphExample(rng.normal(size=(nodes, d)) * (rng.random((nodes, d)) < 0.7), edges, ef)
        layout = GraphLayout(K, d, f, symmetric=bool(f == 0 and rng.random() < 0.5),
                             symmetric_edge_columns=(0,) if f == 2 else ())
        yield x, GraphStructure(layout), rng.normal(size=layout.size)


def test_contributions_and_runner_up_match_enumeration():
    for x, structure, w in _graphs(0, 120):
        K, n = structure.n_labels, x.n_nodes
        scores = {y: float(structure.layout.joint_feature(x, np.array(y)) @ w)
                  for y in itertools.product(range(K), repeat=n)}
        y = np.asarray(structure.argmax(x, w).structure)
        assert scores[tuple(y)] == pytest.approx(max(scores.values()), abs=1e-8)
        parts = structure.contributions(x, w, y)
        assert sum(p[-1] for p in parts) == pytest.approx(scores[tuple(y)], abs=1e-9)
        assert sum(p[1] == "edge" for p in parts) >= (len(x.edges) if x.edge_features is None
                                                      else 0)
        other = structure.runner_up(x, w, y)
        if len(scores) == 1:
            assert other is None
            continue
        second = max(v for k, v in scores.items() if k != tuple(y))
        assert other.score == pytest.approx(second, abs=1e-8)
        assert tuple(other.structure) != tuple(y)
        assert scores[tuple(other.structure)] == pytest.approx(other.score, abs=1e-9)


def _data(seed=0, n=20):
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        f = rng.normal(size=(4, 3))
        X.append((f, np.array([[0, 1], [1, 2], [2, 3], [0, 3]])))
        Y.append((f[:, 0] > 0).astype(int))
    return X, Y


@pytest.mark.parametrize("learner", ["ssvm", "crf"])
def test_an_estimator_explains_a_graph(learner):
    X, Y = _data()
    est = Estimator(task="graph", learner=learner).fit(X, Y)
    ex = est.explain_prediction(X[3])
    assert np.array_equal(ex.labels, est.predict([X[3]])[0])
    assert sum(c.value for c in ex.contributions) == pytest.approx(ex.score, abs=1e-9)
    assert ex.node_totals().sum() + sum(ex.edge_totals().values()) == pytest.approx(ex.score)
    assert set(ex.edge_totals()) == {(0, 1), (1, 2), (2, 3), (0, 3)}
    assert ex.margin >= 0 and ex.differences == [
        int(i) for i in np.flatnonzero(ex.runner_up != ex.labels)]
    assert "margin" in str(ex) and "<table>" in ex._repr_html_()
    if learner == "crf":
        # p(y | x) against the enumerated partition function of the learned weights
        structure, w = est.task_.structure_, est.learner_.coef_
        x = est.task_.featurize(est.task_.make_dataset([X[3]]))[0]
        scores = [float(structure.layout.joint_feature(x, np.array(y)) @ w)
                  for y in itertools.product(range(2), repeat=4)]
        z = np.log(np.sum(np.exp(scores)))
        assert ex.probability == pytest.approx(np.exp(ex.score - z), rel=1e-9)
        assert np.allclose(ex.marginals.sum(axis=1), 1.0)
    else:
        assert ex.probability is None and ex.marginals is None


def test_a_graph_explanation_refuses_what_it_cannot_take():
    X, Y = _data()
    est = Estimator(task="graph").fit(X, Y)
    with pytest.raises(InputError, match="explains one graph"):
        est.explain_prediction(X)
    with pytest.raises(InputError, match="explains one graph"):
        est.explain_prediction(X[:2])
    with pytest.raises(ConfigError, match="allowed= restricts a sequence"):
        est.explain_prediction(X[0], allowed=[None] * 4)
