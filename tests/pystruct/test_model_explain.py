"""``explain`` of the PyStruct layer's pairwise models (latentstruct's extension): the parts
sum to ``w · joint_feature`` and the runner-up is the second best labelling, against
enumeration."""

import itertools

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.pystruct.models import (ChainCRF, EdgeFeatureGraphCRF, GraphCRF, GridCRF,
                                          LatentNodeCRF)

rng = np.random.default_rng(0)
EDGES = np.array([[0, 1], [1, 2], [0, 2]])


def _models():
    f = rng.normal(size=(3, 2))
    yield GraphCRF(n_states=3, n_features=2), (f, EDGES)
    yield GraphCRF(n_states=2, n_features=2, directed=True), (f, EDGES)
    yield ChainCRF(n_states=3, n_features=2), f
    yield EdgeFeatureGraphCRF(n_states=2, n_features=2, n_edge_features=2,
                              symmetric_edge_features=[0]), (f, EDGES, rng.normal(size=(3, 2)))
    yield GridCRF(n_states=2, n_features=2), rng.normal(size=(2, 2, 2))


@pytest.mark.parametrize("trial", range(5))
def test_explain_matches_the_model_and_enumeration(trial):
    for model, x in _models():
        w = rng.normal(size=model.size_joint_feature)
        ex = model.explain(x, w)
        y = np.asarray(model.inference(x, w))
        assert np.array_equal(ex.labels, y.ravel())
        assert ex.score == pytest.approx(float(w @ model.joint_feature(x, y)), abs=1e-9)
        assert sum(c.value for c in ex.contributions) == pytest.approx(ex.score, abs=1e-9)
        n = y.size
        scores = sorted((float(w @ model.joint_feature(x, np.array(z).reshape(y.shape))), z)
                        for z in itertools.product(range(model.n_states), repeat=n))
        assert ex.score == pytest.approx(scores[-1][0], abs=1e-8)
        assert ex.score - ex.margin == pytest.approx(scores[-2][0], abs=1e-8)
        # a given labelling is explained as it is
        other = model.explain(x, w, y=np.zeros_like(y))
        assert other.score == pytest.approx(float(w @ model.joint_feature(x, np.zeros_like(y))))


def test_a_latent_node_model_is_refused():
    model = LatentNodeCRF(n_labels=2, n_features=2, n_hidden_states=2)
    with pytest.raises(ConfigError, match="explain covers models"):
        model.explain((rng.normal(size=(3, 2)), EDGES, 0),
                      rng.normal(size=model.size_joint_feature))
