"""HiddenVariableReranker: the gradient of Eq. 3, the no-hidden-variable reduction to a
conditional log-linear model, learning on synthetic k-best lists, persistence and the CLI."""

import json
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn.base import clone

from latentstruct.cli import main
from latentstruct.data.dependency.kbest import (KBestCandidate, KBestHeader, KBestSentence,
                                                write_kbest)
from latentstruct.data.dependency.kbest_synthetic import synthetic_kbest
from latentstruct.exceptions import ConfigError, ConvergenceWarning, NotFittedError
from latentstruct.inference.result import DecodeResult
from latentstruct.learners import HiddenVariableReranker, get_learner_class
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.learners.probabilistic.reranker import candidate_coefficients, candidate_loss
from latentstruct.tasks.rerank import RerankTask, kbest_dataset


def _sent(words, tags, cands, gold, rels):
    n = len(words)
    return KBestSentence("s", tuple(words), tuple(words), tuple(tags), ("_",) * n, (True,) * n,
                         tuple(gold), tuple(rels),
                         tuple(KBestCandidate(tuple(h), tuple(r), s) for h, r, s in cands), 2)


def tiny():
    a = _sent(["John", "saw", "Mary", "."], ["PROPN", "VERB", "PROPN", "PUNCT"],
              [([2, 0, 2, 2], ["nsubj", "root", "obj", "punct"], 2.0),
               ([3, 0, 2, 3], ["nsubj", "root", "obj", "punct"], 1.0),
               ([2, 0, 1, 2], ["nsubj", "root", "dep", "punct"], 0.5)],
              [2, 0, 2, 3], ["nsubj", "root", "obj", "punct"])  # oracle: a tie of 0 and 1
    b = _sent(["dogs", "bark", "loudly"], ["NOUN", "VERB", "ADV"],
              [([0, 1, 2], ["root", "dep", "dep"], -1.0), ([2, 0, 2], ["nsubj", "root", "advmod"], -1.5)],
              [2, 0, 2], ["nsubj", "root", "advmod"])
    return [a, b]


def prepared(sentences, header=None, **task_params):
    ds = kbest_dataset(header or KBestHeader("P", 4, False, True, "gold", "x"), sentences)
    task = RerankTask(**task_params).fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn()


@pytest.mark.parametrize("domain, graph", [("pos", "sibling"), ("relation", "head"), ("no-hidden", "head")])
def test_gradient_matches_finite_differences(domain, graph):
    task, X, Y = prepared(tiny(), domain=domain, graph=graph,
                          n_hidden=None if domain == "no-hidden" else 2, hash_bits=6)
    assert Y[0].oracle.tolist() == [0, 1]  # the tied set is the target
    learner = HiddenVariableReranker(task, alpha=0.1)
    w = np.random.default_rng(0).normal(size=task.n_features) * 0.5
    J, g = learner.objective(X, Y, w)
    # J by hand: the mean of −log Σ_{oracle} p plus the L2 term
    lz = [task.structure_.candidate_log_partitions(X[i], w) for i in range(2)]
    by_hand = np.mean([logsumexp(z) - logsumexp(z[y.oracle]) for z, y in zip(lz, Y)])
    assert J == pytest.approx(by_hand + 0.05 * w @ w, abs=1e-12)
    for idx in range(task.n_features):
        e = np.zeros_like(w)
        e[idx] = 1e-6
        fd = (learner.objective(X, Y, w + e)[0] - learner.objective(X, Y, w - e)[0]) / 2e-6
        assert fd == pytest.approx(g[idx], abs=2e-7), idx


def test_loss_and_coefficients():
    lz = np.array([1.0, 0.0, -1.0])
    o = np.array([1, 2])
    assert candidate_loss(lz, o) == pytest.approx(logsumexp(lz) - logsumexp(lz[1:]))
    c = candidate_coefficients(lz, o)
    p = np.exp(lz - logsumexp(lz))
    q = np.array([0.0, *np.exp(lz[1:] - logsumexp(lz[1:]))])
    np.testing.assert_allclose(c, p - q)
    assert c.sum() == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ConfigError, match="does not exist"):
        candidate_coefficients(lz, np.array([3]))


@pytest.mark.slow
def test_without_hidden_values_it_is_a_conditional_log_linear_model():
    header, sents = synthetic_kbest(40, 5, random_state=3)
    task, X, Y = prepared(sents, header, domain="no-hidden", hash_bits=8)
    keep = [i for i, y in enumerate(Y) if y.oracle.size == 1]  # convex: one oracle each
    X, Y = task.structure_.subset(X, keep), [Y[i] for i in keep]
    assert len(Y) > 25
    # the dense feature matrix of every sentence, from the task's joint features
    phis = []
    for i in range(len(X)):
        n = task.structure_.hidden_domain_sizes(X[i], 0).shape[0]
        phis.append(np.array([task.structure_.candidate_feature(X[i], j, np.zeros(n, int)).to_dense(
            task.n_features) for j in range(X[i].n_candidates())]))
    alpha = 0.05

    def J(w):
        total, grad = 0.0, alpha * w
        for P, y in zip(phis, Y):
            s = P @ w
            p = np.exp(s - logsumexp(s))
            o = int(y.oracle[0])
            total += logsumexp(s) - s[o]
            grad = grad + (p @ P - P[o]) / len(Y)
        return total / len(Y) + 0.5 * alpha * w @ w, grad

    ref = minimize(J, np.zeros(task.n_features), jac=True, method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 5000}).x
    m = HiddenVariableReranker(task, solver="lbfgs", alpha=alpha, init_noise=0.0, tol=1e-10,
                               max_iter=5000).fit(X, Y)
    assert m.converged_
    np.testing.assert_allclose(m.coef_, ref, atol=1e-5)
    for lp, P in zip(m.predict_log_proba(X), phis):
        s = P @ m.coef_  # the model is exactly the softmax over the candidates' features
        np.testing.assert_allclose(lp, s - logsumexp(s), atol=1e-10)
        s = P @ ref  # and its optimum the reference's
        np.testing.assert_allclose(lp, s - logsumexp(s), atol=1e-4)
    # one assignment per word: log Z_j is the candidate's own score
    np.testing.assert_allclose(task.structure_.candidate_log_partitions(X[0], m.coef_), phis[0] @ m.coef_)


@pytest.fixture(scope="module")
def synthetic():
    header, sents = synthetic_kbest(320, 6, p_gold=0.95, base_signal=0.4, base_noise=1.0,
                                    random_state=0)
    train = kbest_dataset(header, sents[:200])
    test = kbest_dataset(header, sents[200:])
    task = RerankTask(domain="pos", n_hidden=2, hash_bits=14).fit(train)
    return (task, task.featurize(train), task.encode_targets(train.targets),
            task.featurize(test), task.encode_targets(test.targets))


def test_the_reranker_beats_the_base_parser(synthetic):
    task, X, Y, Xt, Yt = synthetic
    m = HiddenVariableReranker(task, n_epochs=4, tol=None).fit(X, Y)
    assert m.n_iter_ == 4 and len(m.loss_curve_) == 4
    assert m.loss_curve_[-1] < 0.5 * m.loss_curve_[0]
    scores = task.evaluate(Yt, m.predict(Xt))
    assert scores["uas"] > scores["base_uas"] + 0.03
    assert scores["uas"] <= scores["oracle_uas"]
    assert m.score(Xt, Yt) == scores["uas"]
    # reproducible under its seed
    again = clone(m).fit(X, Y)
    np.testing.assert_array_equal(again.coef_, m.coef_)


def test_predictions_probabilities_and_hidden_values(synthetic):
    task, X, Y, Xt, Yt = synthetic
    m = HiddenVariableReranker(task, n_epochs=1, tol=None).fit(X[:40], Y[:40])
    lps = m.predict_log_proba(Xt[:10])
    chosen = m.predict(Xt[:10])
    for lp, j in zip(lps, chosen):
        assert np.exp(lp).sum() == pytest.approx(1.0) and j == int(np.argmax(lp))
    hidden = m.decode_hidden(Xt[:10])
    for i, (r, j) in enumerate(zip(hidden, chosen)):
        assert isinstance(r, DecodeResult) and r.status == "exact"
        assert np.all(r.structure < task.structure_.hidden_domain_sizes(Xt[i], j))
        assert task.structure_.candidate_feature(Xt[i], j, r.structure).dot(m.coef_) == pytest.approx(r.score)
        # the max-product score bounds log Z from below and within log |H|
        lz = task.structure_.candidate_log_partitions(Xt[i], m.coef_)[j]
        assert r.score <= lz <= r.score + np.log(2.0) * r.structure.shape[0] + 1e-9


@pytest.mark.slow
def test_init_noise_lets_sub_values_separate():
    # 2**24 weights for a few hundred features: no hash collision breaks the symmetry
    task, X, Y = prepared(tiny(), domain="pos", n_hidden=2, hash_bits=24)
    spread = {}
    for noise in (0.0, 0.01):
        m = HiddenVariableReranker(task, n_epochs=30, tol=None, eta0=0.5,
                                   init_noise=noise).fit(X, Y)
        spread[noise] = max(np.abs(task.structure_.marginals(X[i], m.coef_).node_marginals - 0.5).max()
                            for i in range(2))
    assert spread[0.0] < 1e-12 and spread[0.01] > 1e-2  # without noise: uniform forever


def test_validation_and_contract():
    task, X, Y = prepared(tiny(), hash_bits=6)
    assert get_learner_class("hidden-reranker") is HiddenVariableReranker
    assert HiddenVariableReranker.required_capabilities() == {"marginalizable": "",
                                                            "candidate-list": ""}
    with pytest.raises(NotFittedError):
        HiddenVariableReranker(task).predict(X)
    for params, match in [(dict(solver="adam"), "'solver'"), (dict(eta0=0), "'eta0'"),
                          (dict(n_epochs=0), "'n_epochs'"), (dict(alpha=-1.0), "'alpha'"),
                          (dict(schedule="cosine"), "'schedule'"), (dict(progress=1), "'progress'")]:
        with pytest.raises(ConfigError, match=match):
            HiddenVariableReranker(task, **params).fit(X, Y)
    with pytest.raises(ConfigError, match="no 'oracle'"):
        HiddenVariableReranker(task).fit(X, [np.array([0]), np.array([1])])
    with pytest.raises(ConfigError, match="X has 2 examples but Y has 1"):
        HiddenVariableReranker(task).fit(X, Y[:1])
    with pytest.warns(ConvergenceWarning, match="n_epochs=1"):
        HiddenVariableReranker(task, n_epochs=1, tol=1e-12).fit(X, Y)
    m = quiet(lambda: HiddenVariableReranker(task, solver="lbfgs", max_iter=3).fit(X, Y))
    assert m.n_iter_ <= 3 and m.coef_.shape == (task.n_features,)


def test_model_file_round_trip(tmp_path, synthetic):
    task, X, Y, Xt, Yt = synthetic
    m = HiddenVariableReranker(task, n_epochs=1, tol=None).fit(X[:50], Y[:50])
    path = tmp_path / "m.npz"
    save_trained(path, task, m)
    task2, m2, meta = load_trained(path)
    assert meta["task"] == "rerank" and meta["learner"] == "hidden-reranker"
    assert task2.parser_id_ == task.parser_id_ and m2.loss_curve_ == m.loss_curve_
    np.testing.assert_array_equal(m2.coef_, m.coef_)
    assert m2.predict(Xt) == m.predict(Xt)


def test_cli_train_and_evaluate(tmp_path, capsys):
    header, sents = synthetic_kbest(160, 5, random_state=7, parser_id="parser-A")
    train, dev, other = (tmp_path / f for f in ("train.kbest", "dev.kbest", "other.kbest"))
    write_kbest(train, header, sents[:100])
    write_kbest(dev, header, sents[100:])
    write_kbest(other, KBestHeader("parser-B", 5, True, True, "gold", "x"), sents[100:])
    model = tmp_path / "m.npz"
    args = ["train", "rerank", "--train", str(train), "--model", str(model), "--quiet",
            "--option", "domain=pos", "--option", "graph=head", "--option", "n_hidden=2",
            "--option", "hash_bits=14", "--option", "n_epochs=3", "--option", "tol=null"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(dev)]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert set(scores) == {"uas", "las", "n_tokens_scored", "oracle_uas", "base_uas"}
    assert scores["uas"] > scores["base_uas"]
    assert main(["evaluate", "--model", str(model), "--test", str(other)]) == 2
    err = capsys.readouterr().err
    assert f"{other}:1: k-best lists of parser parser-B, but this reranker was trained on " \
           f"lists of parser parser-A" in err
    out = tmp_path / "pred.conllu"
    assert main(["predict", "--model", str(model), "--input", str(dev), "--output", str(out)]) == 0
    assert out.read_text().count("# sent_id = ") == 60
