import warnings

import numpy as np
import pytest

from latentstruct.data.citations import read_cora, split_cora
from latentstruct.tasks import CitationTask, get_task_class
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.sequence.citations import citation_attributes
from latentstruct.testing import all_sequences, check_decoder

TINY = (
    "<NEWREFERENCE>\n"
    "<author> A. Cau. </author> <title> Formal strategy. </title> <date> 1992. </date>\n"
    "<NEWREFERENCE>\n"
    "<author> Enright. </author> <date> 1978. </date>\n"
    "<NEWREFERENCE>\n"
    "<title> Strategy. </title> <pages> 127-136, </pages> <date> 1990. </date>\n"
)


@pytest.fixture
def tiny_file(tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text(TINY, encoding="utf-8")
    return p


def fitted(path, **params):
    task = CitationTask(**params)
    ds = task.read(path)
    task.fit(ds)
    return task, ds


def test_registered_and_reads(tiny_file):
    assert get_task_class("citations") is CitationTask
    task, ds = fitted(tiny_file)
    assert len(ds) == 3 and ds.path == str(tiny_file)
    assert ds.targets[1] == ("author", "date")
    assert task.labels_ == ["author", "date", "pages", "title"]
    assert task.read(tiny_file, split="test").targets == ds.targets  # no sampling by split


def test_citation_attributes():
    attrs = citation_attributes(["Cau,", "(1991a).", "pp.", "127-136,", "4(2),"], window=1, affix_length=2)
    a0, a1, a2, a3, a4 = (set(a) for a in attrs)
    assert {"b", "w=Cau,", "l=cau,", "c=cau", "sh=Xx,", "case=title", "dig=none", "last=,",
            "p2=ca", "s2=au", "pos=0", "first-token", "c[-1]=<s>", "c[1]=1991a", "last[1]=."} <= a0
    assert {"year", "first=(", "dig=some", "ndig=4", "c[-1]=cau", "last[-1]=,"} <= a1
    assert "year" not in a2 and "range" in a3 and "vol(num)" in a4
    assert {"last-token", "c[1]=</s>", "pos=8"} <= a4
    assert "initial" in citation_attributes(["W.-P."])[0]
    assert "dig=all" in citation_attributes(["1990"])[0]
    # window=0 has no neighbour attributes
    assert not any(a.startswith("c[") for a in citation_attributes(["a", "b"], window=0)[1])


def test_featurize_and_joint_feature_consistency(tiny_file):
    task, ds = fitted(tiny_file)
    X = task.featurize(ds)
    assert list(X.lengths()) == [5, 2, 3]
    Y = task.encode_targets(ds.targets)
    rng = np.random.default_rng(0)
    for _ in range(10):
        w = rng.normal(size=task.n_features)
        for i in range(len(X)):
            res = task.structure_.argmax(X[i], w)
            assert res.score == pytest.approx(task.structure_.joint_feature(X[i], res.structure).dot(w), abs=1e-9)
        batch = task.structure_.argmax_batch(X, w, Y)
        for i in range(len(X)):
            assert np.array_equal(batch[i], task.structure_.argmax(X[i], w, Y[i]).structure)


def test_loss_augmented_argmax_matches_brute_force(tiny_file):
    # 4 labels; keep only the citations of at most 3 tokens so every labelling is enumerable
    task, ds = fitted(tiny_file, window=1, affix_length=1)
    X = task.featurize(ds)
    Y = task.encode_targets(ds.targets)
    small = [i for i in range(len(X)) if len(Y[i]) <= 3]
    assert small == [1, 2]
    L = task.n_labels

    def make_instance(rng):
        i = small[int(rng.integers(len(small)))]
        w = rng.integers(-2, 3, size=task.n_features).astype(float)
        return i, w

    report = check_decoder(
        decode=lambda inst: task.structure_.argmax(X[inst[0]], inst[1], Y[inst[0]]),
        candidates=lambda inst: all_sequences(len(Y[inst[0]]), L),
        score=lambda inst, y: task.structure_.joint_feature(X[inst[0]], y).dot(inst[1]) + task.structure_.loss(Y[inst[0]], y),
        make_instance=make_instance,
        n_instances=150,
    )
    assert report.n_instances == 150 and report.n_infeasible == 0
    # and plain (not loss-augmented) argmax
    check_decoder(
        decode=lambda inst: task.structure_.argmax(X[inst[0]], inst[1]),
        candidates=lambda inst: all_sequences(len(Y[inst[0]]), L),
        score=lambda inst, y: task.structure_.joint_feature(X[inst[0]], y).dot(inst[1]),
        make_instance=make_instance,
        n_instances=100,
        random_state=1,
    )


def test_evaluate_is_token_accuracy(tiny_file):
    task, ds = fitted(tiny_file)
    Y = task.encode_targets(ds.targets)
    assert task.evaluate(Y, Y) == {"accuracy": 1.0}
    wrong = [np.zeros_like(y) for y in Y]  # all "author": right on 3 of the 10 tokens
    assert task.evaluate(Y, wrong)["accuracy"] == pytest.approx(3 / 10)


def test_write_predictions_round_trip(tiny_file, tmp_path):
    task, ds = fitted(tiny_file)
    Y = task.encode_targets(ds.targets)
    out = tmp_path / "pred.txt"
    task.write_predictions(out, ds, Y)
    assert read_cora(out) == read_cora(tiny_file)
    pred = [np.full(len(y), task.labels_.index("title")) for y in Y]
    task.write_predictions(out, ds, pred)
    assert out.read_text().splitlines()[3] == "<title> Enright. 1978. </title>"


def test_state_round_trip(tiny_file):
    task, ds = fitted(tiny_file)
    state, arrays = task.get_state()
    clone = CitationTask.from_state(task.get_params(), state, arrays)
    assert clone.labels_ == task.labels_ and clone.n_features == task.n_features
    assert np.array_equal(clone.featurize(ds).attr_ids, task.featurize(ds).attr_ids)


@pytest.mark.slow
def test_real_data_ssvm_dev_accuracy(require_data):
    """Train on references 1-300, evaluate on 301-400 (about 2 s)."""
    from latentstruct.learners import StructuredSVM

    sp = split_cora(read_cora(require_data("cora_citations", "tagged_references.txt")))
    task = CitationTask()
    train = Dataset(sp.train, [c.labels for c in sp.train])
    dev = Dataset(sp.dev, [c.labels for c in sp.dev])
    task.fit(train)
    assert len(task.labels_) == 13
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter=10 stops before tol
        model = StructuredSVM(task, C=0.1, max_iter=10, random_state=0).fit(
            task.featurize(train), task.encode_targets(train.targets)
        )
    acc = task.evaluate(task.encode_targets(dev.targets), model.predict(task.featurize(dev)))
    # measured 0.949 on 2,339 dev tokens; J-LIS reports ~90-92% with full supervision
    assert acc["accuracy"] > 0.90


def test_jlis_sample_shuffles_citations(tiny_file):
    task = CitationTask(n_structured_tokens=1, n_binary=1, negatives_per_positive=2, sample_seed=0)
    assert task.get_params()["n_binary"] == 1
    ds = task.training_sample(task.read(tiny_file))
    assert len(ds) == 1 and ds.labels == ("author", "date", "pages", "title")
    b = ds.binary
    assert list(b.targets) == [1, -1, -1]
    pos = b.records[0].tokens
    assert pos != ds.records[0].tokens  # B+ is disjoint from S
    for neg in b.records[1:]:
        assert sorted(neg.tokens) == sorted(pos) and neg.tokens != pos
    task.fit(ds)
    X = task.featurize(b)
    assert list(X.lengths()) == [len(pos)] * 3
