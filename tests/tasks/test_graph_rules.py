"""Rules on a graph task's labellings (counts, at least one, if-then): kept exactly in
training and prediction, refused where they cannot be."""

import numpy as np
import pytest

from latentstruct import Estimator, load
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks import get_task_class
from latentstruct.tasks.contracts import MARGINALIZABLE


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        f = rng.normal(size=(5, 3))
        X.append((f, np.array([[i, i + 1] for i in range(4)])))
        Y.append((f[:, 0] > 0).astype(int))
    return X, Y


def test_predictions_keep_the_rules_and_training_data_must():
    X, Y = _data()
    keep = [i for i, y in enumerate(Y) if y.sum() <= 2 and (y == 0).any()]
    Xk, Yk = [X[i] for i in keep], [Y[i] for i in keep]
    free = Estimator(task="graph").fit(Xk, Yk)
    ruled = Estimator(task="graph", rules="count 1 <= 2; at least one 0").fit(Xk, Yk)
    assert max(int(p.sum()) for p in free.predict(X)) > 2  # the rule changes something
    for p in ruled.predict(X):
        assert p.sum() <= 2 and (p == 0).any()
    bad = next(i for i, y in enumerate(Y) if y.sum() > 2)
    with pytest.raises(InputError, match=f"training graph y\\[{bad}\\] breaks the rules"):
        Estimator(task="graph", rules="count 1 <= 2").fit(X, Y)


def test_graph_rules_are_counts_and_if_thens_and_no_crf():
    graph = get_task_class("graph")
    assert MARGINALIZABLE not in graph.offered_capabilities({"rules": "count 1 <= 2"})
    assert MARGINALIZABLE in graph.offered_capabilities({"rules": None})
    X, Y = _data()
    for rule in ("first 1", "contiguous 0", "forbid 0 -> 1"):
        with pytest.raises(ConfigError, match="a rule of chains"):
            Estimator(task="graph", rules=rule).fit(X, Y)
    with pytest.raises(ConfigError, match="marginalizable"):
        Estimator(task="graph", learner="crf", rules="if 1 then 0").fit(X, Y)


def test_a_saved_graph_model_keeps_its_rules(tmp_path):
    X, Y = _data()
    keep = [i for i, y in enumerate(Y) if y.sum() <= 2]
    est = Estimator(task="graph", rules="count 1 <= 2").fit([X[i] for i in keep],
                                                           [Y[i] for i in keep])
    est.save(tmp_path / "g.json")
    back = load(tmp_path / "g.json")
    assert back.task_.structure_.global_constraints == est.task_.structure_.global_constraints
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(X), est.predict(X)))
