"""§4.3 mixtures: weighted log-probabilities plus the base score, and grid tuning."""

import numpy as np
import pytest

from latentstruct.data.dependency.kbest_synthetic import synthetic_kbest
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.learners import HiddenVariableReranker
from latentstruct.learners.probabilistic.mixture import RerankerMixture, mixture_scores, tune_mixture_weights
from latentstruct.tasks.rerank import RerankTask, kbest_dataset


def test_mixture_scores_are_the_weighted_sum():
    lp1 = [np.log([0.5, 0.3, 0.2]), np.log([0.9, 0.1])]
    lp2 = [np.log([0.1, 0.1, 0.8]), np.log([0.4, 0.6])]
    base = [np.array([3.0, 1.0, 0.0]), np.array([0.0, -2.0])]
    out = mixture_scores([lp1, lp2], base, [2.0, 0.5, 0.1])
    for i in range(2):
        np.testing.assert_allclose(out[i], 2.0 * lp1[i] + 0.5 * lp2[i] + 0.1 * base[i])
    m = RerankerMixture((2.0, 0.5), 0.1)
    assert m.predict([lp1, lp2], base) == [int(np.argmax(s)) for s in out] == [0, 0]
    assert RerankerMixture((0.0, 1.0), 0.0).predict([lp1, lp2], base) == [2, 1]
    assert RerankerMixture.from_json(m.to_json()) == m
    with pytest.raises(ConfigError, match="3 finite numbers"):
        mixture_scores([lp1, lp2], base, [1.0, 1.0])
    with pytest.raises(InputError, match="same k-best list"):
        mixture_scores([lp1, [lp2[0], np.zeros(3)]], base, [1.0, 1.0, 0.0])
    with pytest.raises(InputError, match="2 components"):
        m.predict([lp1], base)


@pytest.fixture(scope="module")
def two_models():
    header, sents = synthetic_kbest(260, 6, random_state=11, base_signal=0.4)
    train, tune = kbest_dataset(header, sents[:160]), kbest_dataset(header, sents[160:])
    out = []
    for domain, graph in (("pos", "head"), ("relation", "sibling")):
        task = RerankTask(domain=domain, graph=graph, n_hidden=2, hash_bits=14).fit(train)
        m = HiddenVariableReranker(task, n_epochs=2, tol=None).fit(
            task.featurize(train), task.encode_targets(train.targets))
        Xt = task.featurize(tune)
        out.append((task, m, Xt))
    task = out[0][0]
    base = [np.array([c.score for c in s.candidates]) for s in tune.records]
    return out, base, task.encode_targets(tune.targets)


def test_one_component_of_weight_one_chooses_as_that_component(two_models):
    models, base, targets = two_models
    (_, m, Xt) = models[0]
    mix = RerankerMixture((1.0,), 0.0)
    assert mix.predict([m.predict_log_proba(Xt)], base) == m.predict(Xt)
    # a mixture of the base parser alone is the base parser's ranking (candidate 0)
    assert RerankerMixture((0.0,), 1.0).predict([m.predict_log_proba(Xt)], base) == [0] * len(base)


def test_tuning_never_loses_to_its_start_and_reports_its_score(two_models):
    models, base, targets = two_models
    task = models[0][0]
    lps = [m.predict_log_proba(Xt) for _, m, Xt in models]
    mix = tune_mixture_weights(lps, base, targets, task.evaluate, random_state=0)
    start = task.evaluate(targets, RerankerMixture((1.0, 1.0), 0.0).predict(lps, base))["uas"]
    got = task.evaluate(targets, mix.predict(lps, base))["uas"]
    assert got == mix.tuning_score >= start
    assert all(w in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0) for w in mix.all_weights)
    again = tune_mixture_weights(lps, base, targets, task.evaluate, random_state=0)
    assert again == mix


def test_tuning_finds_the_useful_component():
    # component 0 always prefers the right candidate, component 1 the wrong one
    rng = np.random.default_rng(0)
    targets, good, bad, base = [], [], [], []
    for _ in range(30):
        right = int(rng.integers(0, 3))
        g = np.full(3, -3.0)
        g[right] = -0.1
        b = np.full(3, -0.1)
        b[right] = -5.0
        good.append(g)
        bad.append(b)
        base.append(rng.normal(size=3))
        targets.append(right)

    def evaluate(t, p):
        return {"uas": float(np.mean(np.asarray(t) == np.asarray(p)))}

    mix = tune_mixture_weights([good, bad], base, targets, evaluate, grid=(0.0, 1.0, 4.0))
    assert mix.tuning_score == 1.0 and mix.weights[1] == 0.0 and mix.weights[0] > 0.0
    with pytest.raises(ConfigError, match="no 'f1'"):
        tune_mixture_weights([good], base, targets, evaluate, metric="f1")
    with pytest.raises(ConfigError, match="n_rounds"):
        tune_mixture_weights([good], base, targets, evaluate, n_rounds=0)
