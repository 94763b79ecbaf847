"""Real-valued attributes of the sequence tasks (CRFsuite's semantics: an attribute with
value v scores ``v * w[a, y]``): python-crfsuite's attribute names and values, the kernels
and capabilities against brute-force enumeration, every learner family (a value-2
attribute trains exactly as the attribute given twice), the ``sequence`` task (check_task,
the estimator, CRFsuite's data format) and old models' naming."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from latentstruct.exceptions import InputError
from latentstruct.tasks import SequenceTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.sequence import ChunkTask, PosTask, SequenceCorpus, concat_corpora
from latentstruct.tasks.sequence.raw import feature_dict_attributes, feature_dict_items
from latentstruct.testing import all_sequences, check_task

pycrfsuite = pytest.importorskip("pycrfsuite")

L = 3
N_ATTR = 5
VALUES = (0.5, -1.5, 2.0, 0.0, 1.0, 3.25)


# ----------------------------------------------------------------------------------------
# python-crfsuite's names and values
# ----------------------------------------------------------------------------------------
ITEMS = [
    {"walk": 1, "shop": 0.5},  # sklearn-crfsuite's fixture
    {"солнце": "не светит".encode("utf8"), "clean": 1},  # sklearn-crfsuite's fixture
    {"a": False, "b": 0, "c": True, "d": 0.0, "e": -2, "f": np.float64(1.5),
     "g": np.int64(3), "h": np.bool_(False)},
    {"n": {"w": "the", "x": 2, "deep": {"k": "v", "on": True}}},
    {"l": ["a", "b"], "s": {"z", "y"}, "m": {"k": ["p", "q"]}},
    {"w": "a:b", "x:y": 1, "-1": {"w": "the"}},
    {b"key": b"val", "k2": "v", "lst": [b"x", "y"]},
    ["a", "b:2", "c"],  # an item given as a list of attribute names
    {"a:b": 1, "a": {"b": 2}},  # one attribute named twice: CRFsuite adds its two scores
]


def _crfsuite_items(item):
    """What CRFsuite scores for ``item``: python-crfsuite's attributes, repeats summed."""
    seq = pycrfsuite.ItemSequence([item])
    # items() builds a dict, which keeps the last of a repeated name: sum them from a
    # second item with each repeat (this fixture only repeats 'a:b')
    out = seq.items()[0]
    if item == ITEMS[-1]:
        out = {"a:b": 3.0}
    return out


@pytest.mark.parametrize("item", ITEMS)
def test_attribute_names_and_values_are_python_crfsuites(item):
    names, values = feature_dict_items(item)
    assert dict(zip(names, values)) == _crfsuite_items(item)
    assert len(set(names)) == len(names)
    assert feature_dict_attributes(item) == names


def test_fixture_dicts_give_exactly_the_expected_items():
    assert feature_dict_items({"walk": 1, "shop": 0.5}) == (("walk", "shop"), (1.0, 0.5))
    assert feature_dict_items({"солнце": "не светит".encode("utf8"), "clean": 1}) == (
        ("солнце:не светит", "clean"), (1.0, 1.0))
    # False and 0 stay, with the value 0 (python-crfsuite keeps them)
    assert pycrfsuite.ItemSequence([{"x": False}]).items() == [{"x": 0.0}]
    assert feature_dict_items({"x": False}) == (("x",), (0.0,))


@pytest.mark.parametrize("value, pattern", [
    (float("nan"), r"X\[0\]\[1\]: attribute 'k' has the value nan"),
    (float("inf"), r"X\[0\]\[1\]: attribute 'k' has the value inf"),
    (-float("inf"), r"X\[0\]\[1\]: attribute 'k' has the value -inf"),
    (1e6 + 1, r"X\[0\]\[1\]: attribute 'k' has the value 1000001.0; .*at most 1e\+06"),
    (-2e7, r"X\[0\]\[1\]: attribute 'k' has the value -20000000.0"),
    (None, r"X\[0\]\[1\]: feature 'k' has a value of type NoneType"),
    (b"\xff\xfe", r"X\[0\]\[1\]: value b'\\xff\\xfe' is bytes but not UTF-8"),
    (["a", 2], r"X\[0\]\[1\]: feature 'k' is a list holding int 2"),
])
def test_bad_values_are_refused_naming_the_token_and_key(value, pattern):
    with pytest.raises(InputError, match=pattern):
        SequenceTask().make_dataset([[{"ok": 1}, {"k": value}]], [["A", "B"]])


def test_the_bound_itself_is_taken():
    data = SequenceTask().make_dataset([[{"k": 1e6}, {"k": -1e6}]], [["A", "B"]])
    assert data.records[0].values == ((1e6,), (-1e6,))


# ----------------------------------------------------------------------------------------
# a fitted task and random valued sentences
# ----------------------------------------------------------------------------------------
def _fitted(task_cls=SequenceTask):
    """A task whose index holds attributes a0..a4 and whose labels are l0..l2."""
    task = task_cls()
    X = [[{f"a{k}": 1 for k in range(N_ATTR)}] * L]
    data = task.make_dataset(X, [[f"l{j}" for j in range(L)]])
    task.fit(data)
    assert task.n_attributes == N_ATTR and task.n_labels == L
    return task


def _random_dicts(rng, n_sent, max_t=4):
    """Sentences of feature dicts: random attributes of a0..a4 with random values (an
    attribute given as a string value is a0:x, unknown to the task: dropped)."""
    X = []
    for _ in range(n_sent):
        sent = []
        for _ in range(int(rng.integers(1, max_t + 1))):
            k = int(rng.integers(0, N_ATTR + 1))
            chosen = rng.choice(N_ATTR, size=k, replace=False)
            tok = {f"a{a}": float(rng.choice(VALUES)) for a in chosen}
            tok["a0"] = tok.get("a0", "x") if rng.random() < 0.3 else tok.get("a0", 1.0)
            sent.append(tok)
        X.append(sent)
    return X


def _dense_phi(task, tokens, y):
    """Φ(x, y) straight from the raw dicts: value · indicator for every known attribute."""
    A, n = task.n_attributes, task.n_features
    phi = np.zeros(n)
    for t, tok in enumerate(tokens):
        names, values = feature_dict_items(tok)
        for name, v in zip(names, values):
            a = task.attr_index_.lookup(name)
            if a >= 0:
                phi[a * L + y[t]] += v
    base = A * L
    for t in range(1, len(y)):
        phi[base + y[t - 1] * L + y[t]] += 1
    phi[base + L * L + y[0]] += 1
    phi[base + L * L + L + y[-1]] += 1
    return phi


@pytest.fixture(scope="module")
def valued():
    rng = np.random.default_rng(7)
    task = _fitted()
    X_raw = _random_dicts(rng, 6)
    data = task.make_dataset(X_raw)
    X = task.featurize(data)
    assert X.attr_values is not None  # the corpus carries values
    return task, X_raw, X, rng


def test_joint_feature_and_scores_match_the_raw_dicts(valued):
    task, X_raw, X, rng = valued
    for i, tokens in enumerate(X_raw):
        x = X[i]
        w = rng.normal(size=task.n_features)
        for y in all_sequences(len(tokens), L):
            y = np.asarray(y)
            phi = _dense_phi(task, tokens, y)
            np.testing.assert_allclose(task.structure_.joint_feature(x, y).to_dense(task.n_features), phi,
                                       atol=1e-12)
        # argmax against the enumeration of w·Φ
        best = max(w @ _dense_phi(task, tokens, np.asarray(y))
                   for y in all_sequences(len(tokens), L))
        res = task.structure_.argmax(x, w)
        assert res.score == pytest.approx(best, abs=1e-9)
        assert w @ _dense_phi(task, tokens, res.structure) == pytest.approx(best, abs=1e-9)


def test_crf_loss_gradient_and_marginals_match_enumeration(valued):
    task, X_raw, X, rng = valued
    w = rng.normal(size=task.n_features)
    Y = [rng.integers(0, L, size=len(s)) for s in X_raw]
    loss, grad = 0.0, np.zeros(task.n_features)
    marg = []
    for tokens, y in zip(X_raw, Y):
        ys = [np.asarray(s) for s in all_sequences(len(tokens), L)]
        phis = np.array([_dense_phi(task, tokens, s) for s in ys])
        scores = phis @ w
        log_z = np.logaddexp.reduce(scores)
        p = np.exp(scores - log_z)
        gold = _dense_phi(task, tokens, y)
        loss += log_z - w @ gold
        grad += p @ phis - gold
        node = np.zeros((len(tokens), L))
        for s, ps in zip(ys, p):
            node[np.arange(len(tokens)), s] += ps
        marg.append(node)
    got_loss, got_grad = task.structure_.log_loss_batch(X, Y, w)
    assert got_loss == pytest.approx(loss, rel=1e-10)
    np.testing.assert_allclose(got_grad, grad, atol=1e-10)
    for got, want in zip(task.structure_.marginals_batch(X, w), marg):
        np.testing.assert_allclose(got, want, atol=1e-10)
    # per sentence: expected features and log Z
    for i, tokens in enumerate(X_raw):
        ys = [np.asarray(s) for s in all_sequences(len(tokens), L)]
        phis = np.array([_dense_phi(task, tokens, s) for s in ys])
        scores = phis @ w
        p = np.exp(scores - np.logaddexp.reduce(scores))
        np.testing.assert_allclose(task.structure_.expected_feature(X[i], w), p @ phis, atol=1e-10)
        assert task.structure_.log_partition(X[i], w) == pytest.approx(np.logaddexp.reduce(scores))


def test_label_factored_rows_carry_the_values(valued):
    task, X_raw, X, rng = valued
    w = rng.normal(size=task.n_features)
    emission, *_ = task.structure_.split_weights(w)
    eye = np.eye(L)
    for i in range(len(X)):
        parts = task.structure_.label_factored_parts(X[i])
        unary, *_ = task.structure_.part_scores_from_label_matrix(parts, emission, eye, np.zeros((L, L)),
                                                        np.zeros(L), np.zeros(L))
        np.testing.assert_allclose(unary, task.structure_.unary_scores(X[i], w), atol=1e-12)
    batch = task.structure_.label_factored_batch(X)
    np.testing.assert_allclose(batch.rows @ emission, task.structure_.unary_scores(X, w), atol=1e-12)


def test_subset_indexing_and_concat_keep_the_values(valued):
    task, X_raw, X, rng = valued
    w = rng.normal(size=task.n_features)
    sub = X.subset([3, 0, 5])
    for k, i in enumerate([3, 0, 5]):
        np.testing.assert_array_equal(sub[k].attr_values, X[i].attr_values)
        np.testing.assert_allclose(task.structure_.unary_scores(sub[k], w), task.structure_.unary_scores(X[i], w))
    np.testing.assert_array_equal(X[1:4][0].attr_values, X[1].attr_values)
    binary = SequenceCorpus(np.array([0, 2]), np.array([1, 1]), np.array([0, 1]))
    joined = concat_corpora([binary, X[2]])
    np.testing.assert_array_equal(joined.attr_values[:2], [1.0, 1.0])
    np.testing.assert_allclose(task.structure_.unary_scores(joined[0], w)[0],
                               2 * task.structure_.split_weights(w)[0][1])
    assert concat_corpora([binary, binary]).attr_values is None  # binary stays fast


def test_binary_dicts_keep_the_fast_path():
    task = _fitted()
    X = task.featurize(task.make_dataset([[{"a1": 1, "a2": True, "a3": "x"}]]))
    assert X.attr_values is None
    # False is python-crfsuite's attribute with the value 0: in the record and the index,
    # but it scores nothing, so the corpus leaves it out and stays binary
    data = task.make_dataset([[{"a1": 1, "a2": False}, {"a3": 0, "a4": True}]])
    assert data.records[0].values == ((1.0, 0.0), (0.0, 1.0))
    X = task.featurize(data)
    assert X.attr_values is None
    assert [task.attr_index_.names[a] for a in X.attr_ids] == ["a1", "a4"]
    fresh = SequenceTask().fit(SequenceTask().make_dataset([[{"z": False, "o": 1}]], [["A"]]))
    assert set(fresh.attr_index_.names) == {"z", "o"}
    # mixed with a real value: the zero still drops, the others carry their values
    X = task.featurize(task.make_dataset([[{"a1": 0.5, "a2": False}, {"a3": 1}]]))
    np.testing.assert_array_equal(X.attr_values, [0.5, 1.0])


def test_check_task_passes_on_a_fitted_sequence_task_with_values(valued):
    task, X_raw, X, rng = valued
    data = task.make_dataset(X_raw, [[f"l{int(j)}" for j in rng.integers(0, L, len(s))]
                                     for s in X_raw])
    report = check_task(task, data, enumerate=lambda x: all_sequences(x.n_tokens, L),
                        n_weights=3)
    assert {"argmax-maximum", "log-partition-enumeration",
            "expected-feature-enumeration"} <= set(report.checks)


# ----------------------------------------------------------------------------------------
# the hidden-state CRF reads the values too
# ----------------------------------------------------------------------------------------
def test_hidden_chain_pass_with_values_equals_repeated_attributes():
    from latentstruct.tasks.hidden_chain import HiddenChainTask
    from latentstruct.tasks.hidden_chain.kernels import hidden_chain_pass

    task = HiddenChainTask(n_states=2, min_count=1, window=0, affix_length=1)
    ds = task.make_dataset([["the", "cat", "sat"], ["Dogs", "bark"]], [1, -1])
    task.fit(ds)
    X = task.featurize(ds)
    valued, repeated = _valued_and_repeated(X, np.random.default_rng(3))
    labels = task.encode_targets(ds.targets)
    w = np.random.default_rng(4).normal(size=task.n_features)
    args = (task.n_attributes, task.n_classes, task.n_states)
    a = hidden_chain_pass(valued, labels, w, *args, node=True)
    b = hidden_chain_pass(repeated, labels, w, *args, node=True)
    assert a.loss == pytest.approx(b.loss, rel=1e-12)
    np.testing.assert_allclose(a.grad, b.grad, atol=1e-10)
    np.testing.assert_allclose(a.class_log_z, b.class_log_z, atol=1e-10)
    h = np.zeros(valued[0].n_tokens, np.int64)
    np.testing.assert_allclose(task.structure_.class_feature(valued[0], 0, h).to_dense(task.n_features),
                               task.structure_.class_feature(repeated[0], 0, h).to_dense(task.n_features))


# ----------------------------------------------------------------------------------------
# every learner family: a value-2 attribute trains as the attribute given twice
# ----------------------------------------------------------------------------------------
def _valued_and_repeated(X: SequenceCorpus, rng):
    """``X`` with random integer values 1..3 per occurrence, and the same corpus with each
    occurrence repeated that many times (binary): the two have the same Φ."""
    counts = rng.integers(1, 4, size=X.attr_ids.shape[0])
    valued = SequenceCorpus(X.attr_indptr, X.attr_ids, X.offsets, counts.astype(float))
    total = np.concatenate([[0], np.cumsum(counts)])
    indptr = total[X.attr_indptr] - total[X.attr_indptr[0]]
    repeated = SequenceCorpus(indptr, np.repeat(X.attr_ids, counts), X.offsets)
    assert repeated.attr_values is None
    return valued, repeated


def _learner_data():
    rng = np.random.default_rng(11)
    task = _fitted()
    X_raw = _random_dicts(rng, 8, max_t=5)
    data = task.make_dataset(X_raw, [[f"l{int(j)}" for j in rng.integers(0, L, len(s))]
                                     for s in X_raw])
    X = task.featurize(task.make_dataset([[{k: 1 for k in feature_dict_items(t)[0]}
                                           for t in s] for s in X_raw]))
    Y = task.encode_targets(data.targets)
    valued, repeated = _valued_and_repeated(X, rng)
    return task, valued, repeated, Y


LEARNERS = {
    "ssvm": dict(C=1.0, max_iter=5),
    "sgd-ssvm": dict(max_iter=3),
    "perceptron": dict(max_iter=3),
    "crf": dict(max_iter=15),
    "distro": dict(max_iter=2),
}


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_learner_family_trains_values_as_repeated_attributes(name):
    from latentstruct.learners import LEARNERS as REGISTRY

    task, valued, repeated, Y = _learner_data()
    cls = REGISTRY[name]
    params = {k: v for k, v in LEARNERS[name].items() if k in cls().get_params()}
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cls(task, **params).fit(valued, Y)
        b = cls(task, **params).fit(repeated, Y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)
    assert np.abs(a.coef_).max() > 0
    pa, pb = a.predict(valued), b.predict(repeated)
    assert all(np.array_equal(p, q) for p, q in zip(pa, pb))


def test_jlis_trains_values_as_repeated_attributes():
    from latentstruct.learners import JLIS

    task, valued, repeated, Y = _learner_data()
    kw = dict(max_iter=2, random_state=0, random_tie_break=False)
    y_bin = np.array([1, -1, 1, -1, 1, -1, 1, -1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = JLIS(task, **kw).fit(valued[:4], Y[:4], valued, y_bin)
        b = JLIS(task, **kw).fit(repeated[:4], Y[:4], repeated, y_bin)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)


# ----------------------------------------------------------------------------------------
# the sequence task: estimators, files, state
# ----------------------------------------------------------------------------------------
SEQ_X = [[{"w": "He", "cap": True, "len": 2.0}, {"w": "reckons", "len": 7.0}],
         [{"w": "It", "cap": True, "len": 2.0}, {"w": "will", "len": 4.0},
          {"w": "narrow", "len": 0.5}]]
SEQ_Y = [["PER", "verb phrase"], ["PER", "verb phrase", "_"]]


@pytest.mark.parametrize("learner", ["crf", "ssvm", "perceptron"])
def test_the_estimator_trains_the_sequence_task(learner, tmp_path):
    import latentstruct

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = latentstruct.Estimator(task="sequence", learner=learner).fit(SEQ_X, SEQ_Y)
    predicted = est.predict(SEQ_X)
    assert [len(p) for p in predicted] == [2, 3]
    assert {t for p in predicted for t in p} <= {"PER", "verb phrase", "_"}
    assert set(est.task_.labels_) == {"PER", "verb phrase", "_"}  # any label string
    if learner == "crf":
        assert predicted == SEQ_Y
    est.save(tmp_path / "m.json")
    again = latentstruct.load(tmp_path / "m.json")
    assert again.predict(SEQ_X) == predicted
    assert again.task_.attribute_names_ == "crfsuite"


def test_crfsuite_data_format_reads_writes_and_trains(tmp_path):
    from latentstruct.cli import main

    text = ("PER\tw\\:He\tcap\tlen:2\n"
            "VP\tw\\:reckons\tlen:7.0\ta\\\\b\n"
            "\n"
            "PER\tw\\:It\tcap\tlen:2\n"
            "VP\tw\\:will\tlen:4\n")
    path = tmp_path / "train.txt"
    path.write_text(text, encoding="utf-8")
    task = SequenceTask()
    ds = task.read(path)
    assert ds.targets == [("PER", "VP"), ("PER", "VP")]
    assert ds.records[0].attributes[1] == ("w:reckons", "len", "a\\b")
    assert ds.records[0].values[1] == (1.0, 7.0, 1.0)
    # the same names as python-crfsuite gives the dicts
    same = task.make_dataset([[{"w": "He", "cap": True, "len": 2}]])
    assert same.records[0].attributes[0] == ds.records[0].attributes[0]
    task.fit(ds)
    X = task.featurize(ds)
    out = tmp_path / "pred.txt"
    task.write_predictions(out, ds, task.encode_targets(ds.targets))
    assert task.read(out).records == ds.records
    model = tmp_path / "model.json"
    assert main(["train", "sequence", "--train", str(path), "--model", str(model),
                 "--quiet"]) == 0
    assert X.attr_values is not None


@pytest.mark.parametrize("text, pattern", [
    ("A\tx:abc\n", r"bad.txt:1: attribute 'x' has the value 'abc', which is no number"),
    ("A\tx:nan\n", r"bad.txt:1: attribute 'x' has the value nan"),
    ("A\tx:1e9\n", r"bad.txt:1: attribute 'x' has the value 1000000000.0"),
    ("A\t:2\n", r"bad.txt:1: .*empty name"),
    ("A\tx\n\tx\n", r"mixes labelled items with items whose label field is empty"),
    ("\tx\n", r"sequence 1 has no labels"),
])
def test_crfsuite_data_errors_name_the_line(tmp_path, text, pattern):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=pattern):
        SequenceTask().read(path)


def test_unlabelled_crfsuite_data_is_input_to_tag(tmp_path):
    path = tmp_path / "test.txt"
    path.write_text("\tx\ty:2\n\tz\n", encoding="utf-8")
    ds = SequenceTask().read(path, split="test")
    assert ds.targets == [None]


def test_an_old_state_keeps_its_legacy_names():
    """A model file written before python-crfsuite's names has no attribute_names: its
    task featurises dicts under the old rule (key=value), so its weights keep their
    attributes."""
    task = ChunkTask()
    old = task.make_dataset([[{"w": "dogs", "cap": True, "-1": {"w": "the"}}, {"w": "."}]],
                            [["B-NP", "O"]])
    state, arrays = task.fit(old).get_state()
    assert state["attribute_names"] == "crfsuite"
    from latentstruct.data.features import FeatureIndex

    legacy_index = FeatureIndex()
    for name in ("w=dogs", "cap", "-1:w=the"):
        legacy_index.add(name)
    legacy_index.freeze()
    old_state = {"labels": ["B-NP", "O"], "attributes": "dicts"}  # no attribute_names
    loaded = ChunkTask.from_state(task.get_params(), old_state,
                                  legacy_index.to_arrays(prefix="attr_"))
    assert loaded.attribute_names_ == "legacy"
    data = loaded.make_dataset([[{"w": "dogs", "cap": True, "-1": {"w": "the"}, "x": False}]])
    X = loaded.featurize(data)
    assert [loaded.attr_index_.names[a] for a in X.attr_ids] == ["w=dogs", "cap", "-1:w=the"]
    assert X.attr_values is None
    with pytest.raises(InputError, match="feature 'v' has the value 0.5"):
        loaded.make_dataset([[{"v": 0.5}]])
    # records named under the new rule are refused by the old model, and the other way
    with pytest.raises(InputError, match="legacy attribute names .* python-crfsuite"):
        loaded.featurize(task.make_dataset([[{"w": "dogs"}]]))
    with pytest.raises(InputError, match="python-crfsuite's attribute names .* legacy"):
        task.featurize(data)
    # and its state says so when saved again
    assert loaded.get_state()[0]["attribute_names"] == "legacy"


def test_pos_task_takes_values_too():
    task = PosTask()
    X = [[{"w": "dogs", "n": 0.5}, {"w": "bark", "n": 2.0}]]
    data = task.make_dataset(X, [["NOUN", "VERB"]])
    task.fit(data)
    assert task.featurize(data).attr_values is not None
    assert isinstance(data, Dataset)


def test_brute_force_all_sequences_is_small():
    assert len(list(itertools.islice(all_sequences(4, L), 100))) == L ** 4
