"""The hidden-state CRF task (``hcrf``): sums against brute-force enumeration over every
(class, hidden chain), the log-loss gradient against finite differences, the ``crf`` learner
on it, the capability pairing and the model file."""


import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.learners import CRF, StructuredSVM, check_compatible, valid_learners
from latentstruct.tasks import TASKS
from latentstruct.tasks.base import LatentBinaryTask, StructuredTask, Task
from latentstruct.tasks.contracts import missing_methods
from latentstruct.tasks.hidden_chain import HiddenChainTask
from latentstruct.tasks.hidden_chain.kernels import split_weights
from latentstruct.testing import all_sequences, check_task, sequence_score

K, S = 2, 2

SENTENCES = [["the", "cat", "sat"], ["Dogs", "bark"], ["a", "b", "c", "d"], ["cat"],
             ["sat", "the", "cat", "the"], ["bark", "Dogs", "a"]]
LABELS = [1, -1, 1, -1, -1, 1]


def chains(task, T):
    """Every legal hidden chain of T states of one block."""
    return [np.asarray(h) for h in all_sequences(T, task.n_states) if task.structure_.is_legal_chain(h)]


def tiny_task(n_states=S, **kw):
    task = HiddenChainTask(n_states=n_states, min_count=1, window=0, affix_length=1, **kw)
    ds = task.make_dataset(SENTENCES, LABELS)
    task.fit(ds)
    return task, ds, task.featurize(ds), task.encode_targets(ds.targets)


def token_scores(task, x, w):
    """(T, K·S) emission scores of one featurised sentence, and the weight blocks."""
    em, tr, st, en = split_weights(w, task.n_attributes, task.n_classes, task.n_states)
    T = x.n_tokens
    s = np.zeros((T, task.structure_.n_hidden))
    for t in range(T):
        for a in x.attr_ids[x.attr_indptr[t]:x.attr_indptr[t + 1]]:
            s[t] += em[a]
    return s, tr, st, en


def brute_class_log_z(task, x, w):
    """log Z(x, k) by enumerating every hidden chain of every class."""
    s, tr, st, en = token_scores(task, x, w)
    T, Sn = x.n_tokens, task.n_states
    out = []
    for k in range(task.n_classes):
        blk = slice(k * Sn, (k + 1) * Sn)
        scores = [sequence_score(h, s[:, blk], tr[k], st[blk], en[blk])
                  for h in chains(task, T)]
        out.append(np.logaddexp.reduce(scores))
    return np.array(out)


def brute_node_marginals(task, x, w):
    s, tr, st, en = token_scores(task, x, w)
    T, Sn = x.n_tokens, task.n_states
    joint = []
    for k in range(task.n_classes):
        blk = slice(k * Sn, (k + 1) * Sn)
        for h in chains(task, T):
            joint.append((k, h, sequence_score(h, s[:, blk], tr[k], st[blk], en[blk])))
    lz = np.logaddexp.reduce([j[2] for j in joint])
    node = np.zeros((T, task.structure_.n_hidden))
    for k, h, sc in joint:
        node[np.arange(T), k * Sn + h] += np.exp(sc - lz)
    return node


@pytest.fixture(scope="module", params=["left-to-right", "ergodic"])
def tiny(request):
    return tiny_task(topology=request.param)


def weights(task, seed, scale=1.0):
    return np.random.default_rng(seed).normal(scale=scale, size=task.n_features)


def test_declaration_and_pairing():
    assert TASKS["hcrf"] is HiddenChainTask
    assert missing_methods(HiddenChainTask, (Task, StructuredTask, LatentBinaryTask)) == {}
    assert valid_learners(HiddenChainTask) == ["crf"]
    check_compatible(HiddenChainTask, {}, CRF, {})
    with pytest.raises(ConfigError, match="max-decodable"):
        check_compatible(HiddenChainTask, {}, StructuredSVM, {})


@pytest.mark.parametrize("seed", range(4))
def test_log_partitions_equal_enumeration(tiny, seed):
    task, _, X, _ = tiny
    w = weights(task, seed)
    clz = task.structure_.class_log_partitions(X, w)
    assert clz.shape == (len(X), K)
    for i in range(len(X)):
        ref = brute_class_log_z(task, X[i], w)
        np.testing.assert_allclose(clz[i], ref, rtol=1e-10, atol=1e-10)
        assert task.structure_.log_partition(X[i], w) == pytest.approx(np.logaddexp.reduce(ref), abs=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_log_loss_equals_enumeration_and_gradient_finite_differences(tiny, seed):
    task, _, X, Y = tiny
    w = weights(task, seed, 0.5)
    f, g = task.structure_.log_loss_batch(X, Y, w)
    ref = sum(np.logaddexp.reduce(brute_class_log_z(task, X[i], w))
              - brute_class_log_z(task, X[i], w)[Y[i]] for i in range(len(X)))
    assert f == pytest.approx(ref, rel=1e-10)
    eps = 1e-5
    num = np.empty_like(w)
    for j in range(w.size):
        e = np.zeros_like(w)
        e[j] = eps
        num[j] = (task.structure_.log_loss_batch(X, Y, w + e)[0] - task.structure_.log_loss_batch(X, Y, w - e)[0]) / (2 * eps)
    assert np.linalg.norm(g - num) <= 1e-6 * np.linalg.norm(num)
    np.testing.assert_allclose(g, num, atol=1e-7)


def test_expected_feature_is_the_gradient_of_log_z(tiny):
    task, _, X, _ = tiny
    w = weights(task, 7, 0.5)
    x = X[2]
    ef = task.structure_.expected_feature(x, w)
    eps = 1e-5
    for j in np.random.default_rng(0).choice(w.size, 25, replace=False):
        e = np.zeros_like(w)
        e[j] = eps
        num = (task.structure_.log_partition(x, w + e) - task.structure_.log_partition(x, w - e)) / (2 * eps)
        assert ef[j] == pytest.approx(num, abs=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_marginals_sum_to_one_and_equal_enumeration(tiny, seed):
    task, _, X, _ = tiny
    w = weights(task, seed)
    batch = task.structure_.marginals_batch(X, w)
    for i in range(len(X)):
        m = task.structure_.marginals(X[i], w)
        assert m.node.shape == (X[i].n_tokens, K * S)
        np.testing.assert_allclose(m.node.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(m.node, brute_node_marginals(task, X[i], w), atol=1e-10)
        np.testing.assert_allclose(batch[i], m.node, atol=1e-12)
        assert m.log_partition == pytest.approx(task.structure_.log_partition(X[i], w))


def test_crf_learns_a_separable_problem_and_predict_proba_is_the_class_softmax():
    pos = [["good", "x", "y"], ["x", "good"], ["good"], ["y", "good", "y"]]
    neg = [["bad", "x", "y"], ["x", "bad"], ["bad"], ["y", "bad", "x"]]
    task = HiddenChainTask(n_states=2, min_count=1, window=0, affix_length=0)
    ds = task.make_dataset(pos + neg, ["pos"] * 4 + ["neg"] * 4)
    task.fit(ds)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    crf = CRF(task, c2=0.01).fit(X, Y)
    pred = crf.predict(X)
    assert np.mean(np.asarray(pred) == Y) == 1.0
    assert task.decode_predictions(pred) == ["pos"] * 4 + ["neg"] * 4
    proba = crf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    clz = task.structure_.class_log_partitions(X, crf.coef_)
    soft = np.exp(clz - clz.max(axis=1, keepdims=True))
    np.testing.assert_allclose(proba, soft / soft.sum(axis=1, keepdims=True), atol=1e-12)
    assert task.evaluate_model(ds, crf.predict)["accuracy"] == 1.0


def test_model_file_round_trip(tmp_path):
    from latentstruct.learners.persistence import load_trained, save_trained

    task, ds, X, Y = tiny_task()
    crf = CRF(task, c2=0.1).fit(X, Y)
    path = tmp_path / "m.npz"
    save_trained(path, task, crf)
    task2, crf2, _ = load_trained(path)
    assert isinstance(task2, HiddenChainTask) and task2.classes_ == task.classes_
    X2 = task2.featurize(ds)
    np.testing.assert_array_equal(crf2.predict_proba(X2), crf.predict_proba(X))


def test_check_task_passes(tiny):
    task, ds, _, _ = tiny

    def enumerate_classes_and_chains(x):
        for k in range(task.n_classes):
            for h in chains(task, x.n_tokens):
                yield k, h

    report = check_task(task, ds, enumerate=enumerate_classes_and_chains, n_weights=3)
    assert {"log-partition", "expected-feature", "log-partition-enumeration",
            "expected-feature-enumeration", "class-log-partitions-enumeration",
            "log-loss-gradient-enumeration", "class-posterior-batch", "state-round-trip",
            "pickle-round-trip"} <= set(report.checks)
    assert report.max_abs_error < 1e-9
    # without the enumeration the sums are still checked against each other
    assert "log-loss-batch" in check_task(task, ds, n_weights=2).checks


def test_class_feature_scores_what_the_sums_add_up(tiny):
    task, _, X, _ = tiny
    w = weights(task, 3)
    x = X[0]
    s, tr, st, en = token_scores(task, x, w)
    h = np.array([0, 1, 1])
    ref = sequence_score(h, s[:, 2:4], tr[1], st[2:4], en[2:4])
    phi = task.structure_.class_feature(x, 1, h)
    assert float(phi.values @ w[phi.indices]) == pytest.approx(ref, abs=1e-12)


def test_multiclass_and_bad_labels():
    task = HiddenChainTask(n_states=1, min_count=1)
    ds = task.make_dataset(["a b", "c d", "e f"], ["x", "y", "z"])
    task.fit(ds)
    assert task.n_classes == 3 and task.structure_.n_hidden == 3
    w = weights(task, 0)
    X = task.featurize(ds)
    assert task.structure_.class_log_partitions(X, w).shape == (3, 3)
    with pytest.raises(Exception, match="not one of the classes"):
        task.encode_targets(["w"])
    with pytest.raises(ConfigError, match="n_states"):
        HiddenChainTask(n_states=0).fit(ds)


def test_cli_trains_on_the_default_data_and_evaluates_on_its_heldout_split(tmp_path, capsys):
    import json

    from latentstruct.cli import main
    from latentstruct.tasks import GrammaticalityTask
    from latentstruct.testing import require_data

    path = require_data("english_sentences", "reuters21578_sentences.txt")
    small = tmp_path / "sentences.txt"
    small.write_text("".join(path.open(encoding="utf-8").readlines()[:600]), encoding="utf-8")
    opts = ["--option", f"lm_corpus={small}", "--option", "n_train=60"]
    model = tmp_path / "m.npz"
    assert main(["train", "hcrf", "--learner", "crf", "--train", str(small), "--model",
                 str(model), "--option", "n_states=2", "--quiet", *opts]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(small), "--option",
                 "n_negative_sets=2"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["n_negative_sets"] == 2
    assert {"accuracy", "positive_accuracy", "negative_accuracy"} <= set(metrics)
    # the same sample as the grammaticality task reads with the same parameters
    params = dict(lm_corpus=str(small), n_train=60, seed=0)
    a = HiddenChainTask(**params).read(small)
    b = GrammaticalityTask(**params).read(small)
    assert [r.words for r in a.records] == [r.words for r in b.records]
    assert list(a.targets) == list(b.targets)
    assert HiddenChainTask.has_default_data


def test_left_to_right_topology_separates_the_states_and_ergodic_ties_them():
    task, _, X, Y = tiny_task(n_states=3, topology="left-to-right")
    assert task.structure_.is_legal_chain([0, 0, 1, 2]) and not task.structure_.is_legal_chain([0, 2])
    assert not task.structure_.is_legal_chain([1, 1])  # chains start in state 0
    crf = CRF(task, c2=0.1).fit(X, Y)
    em = split_weights(crf.coef_, task.n_attributes, task.n_classes, 3)[0]
    assert np.ptp(em[:, 3:6], axis=1).max() > 1e-3  # the states of a class differ
    task_e, _, X, Y = tiny_task(n_states=3, topology="ergodic")
    crf = CRF(task_e, c2=0.1).fit(X, Y)
    em = split_weights(crf.coef_, task_e.n_attributes, task_e.n_classes, 3)[0]
    assert np.ptp(em[:, 3:6], axis=1).max() < 1e-8  # from w = 0 they stay tied
    with pytest.raises(ConfigError, match="topology"):
        HiddenChainTask(topology="full").fit(tiny_task()[1])


def test_estimator_on_raw_sentences(tmp_path):
    import latentstruct

    X = [["good", "x"], ["x", "good"], "good good", ["bad", "x"], ["x", "bad"], "bad bad"]
    y = ["pos", "pos", "pos", "neg", "neg", "neg"]
    est = latentstruct.Estimator(task="hcrf", learner="crf", n_states=2, min_count=1, c2=0.01)
    assert est.fit(X, y).predict(X) == y
    est.save(tmp_path / "e.npz")
    assert latentstruct.load(tmp_path / "e.npz").predict(X) == y


def test_the_task_holds_an_immutable_hidden_chain_structure(tmp_path):
    import pickle

    from latentstruct.tasks.hidden_chain import HiddenChainStructure

    task, _, X, Y = tiny_task()
    s = task.structure_
    assert isinstance(s, HiddenChainStructure)
    assert (s.n_classes, s.n_states, s.topology) == (task.n_classes, S, "left-to-right")
    assert s.n_attributes == task.n_attributes and s.n_features == task.n_features
    with pytest.raises(AttributeError, match="immutable"):
        s.n_states = 5
    with pytest.raises(ValueError, match="topology must be one of"):
        HiddenChainStructure(2, 2, "circular", 3)
    w = weights(task, 1)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(s)).class_log_partitions(X, w),
                                  s.class_log_partitions(X, w))
    with pytest.warns(DeprecationWarning, match=r"task.structure_.class_log_partitions"):
        task.class_log_partitions(X, w)
    task.fit(task.make_dataset(SENTENCES, LABELS))  # a refit builds a new structure
    assert task.structure_ is not s and task.structure_.n_states == S
