import numpy as np
import pytest

from latentstruct.tasks import ChunkTask, PosTask
from latentstruct.tasks.sequence import SequenceCorpus, token_attributes, word_shape
from latentstruct.testing import all_sequences, check_decoder


def fitted_chunk(path):
    task = ChunkTask()
    ds = task.read(path)
    task.fit(ds)
    return task, ds


def test_word_shape():
    assert word_shape("Hello") == "Xx"
    assert word_shape("3.14") == "d.d"
    assert word_shape("U.S.") == "X.X."


def test_token_attributes_window_and_pos():
    attrs = token_attributes(["The", "cat"], ["DT", "NN"], window=1, affix_length=2)
    assert "w=The" in attrs[0] and "l[1]=cat" in attrs[0] and "l[-1]=<s>" in attrs[0]
    assert "p[0]|p[1]=DT|NN" in attrs[0]
    assert "s2=at" in attrs[1] and "p[1]=</s>" in attrs[1]
    assert not any(a.startswith("p[") for a in token_attributes(["x"], None)[0] if "|" in a)


def test_featurize_layout_and_indexing(tiny_chunk_file):
    task, ds = fitted_chunk(tiny_chunk_file)
    X = task.featurize(ds)
    assert isinstance(X, SequenceCorpus)
    assert len(X) == 3 and X.n_tokens == 9 + 8 + 8
    assert list(X.lengths()) == [9, 8, 8]
    sub = X[1]
    assert len(sub) == 1 and sub.n_tokens == 8
    assert task.n_features == task.n_attributes * task.n_labels + task.n_labels**2 + 2 * task.n_labels


def test_joint_feature_scores_match_viterbi_and_differences(tiny_chunk_file):
    task, ds = fitted_chunk(tiny_chunk_file)
    X = task.featurize(ds)
    Y = task.encode_targets(ds.targets)
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.normal(size=task.n_features)
        for i in range(len(X)):
            res = task.structure_.argmax(X[i], w)
            assert res.score == pytest.approx(task.structure_.joint_feature(X[i], res.structure).dot(w), abs=1e-9)
            d = task.structure_.joint_feature_difference(X[i], Y[i], res.structure)
            ref = task.structure_.joint_feature(X[i], Y[i]) - task.structure_.joint_feature(X[i], res.structure)
            assert np.array_equal(d.indices, ref.indices) and np.allclose(d.values, ref.values)
        batch = task.structure_.argmax_batch(X, w)
        for i in range(len(X)):
            assert np.array_equal(batch[i], task.structure_.argmax(X[i], w).structure)


def test_loss_augmented_argmax_matches_brute_force():
    # Tiny task: 3 labels, sentences of at most 4 tokens, so every labelling can be enumerated.
    text = "a X A\nb Y B\n\nb Y B\nc Z C\na X A\n\nc Z C\n"
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "t.txt")
        with open(p, "w") as f:
            f.write(text.replace(" A", " B-A").replace(" B\n", " B-B\n").replace(" C", " O"))
        task = ChunkTask(window=1, affix_length=1)
        ds = task.read(p)
        task.fit(ds)
        X = task.featurize(ds)
        Y = task.encode_targets(ds.targets)

    def make_instance(rng):
        i = int(rng.integers(len(X)))
        w = rng.integers(-2, 3, size=task.n_features).astype(float)
        return i, w

    L = task.n_labels
    check_decoder(
        decode=lambda inst: task.structure_.argmax(X[inst[0]], inst[1], Y[inst[0]]),
        candidates=lambda inst: all_sequences(len(Y[inst[0]]), L),
        score=lambda inst, y: task.structure_.joint_feature(X[inst[0]], y).dot(inst[1]) + task.structure_.loss(Y[inst[0]], y),
        make_instance=make_instance,
        n_instances=150,
    )


def test_unseen_attributes_are_ignored(tiny_chunk_file, tmp_path):
    task, _ = fitted_chunk(tiny_chunk_file)
    p = tmp_path / "new.txt"
    p.write_text("Zyzzyva NNP B-NP\nflies VBZ B-VP\n", encoding="utf-8")
    ds = task.read(p)
    X = task.featurize(ds)
    assert "w=Zyzzyva" not in task.attr_index_
    assert X.attr_ids.max() < task.n_attributes
    Y = task.encode_targets(ds.targets)
    assert [int(v) for v in Y[0]] == [task.labels_.index("B-NP"), task.labels_.index("B-VP")]


def test_state_round_trip(tiny_chunk_file):
    task, ds = fitted_chunk(tiny_chunk_file)
    state, arrays = task.get_state()
    clone = ChunkTask.from_state(task.get_params(), state, arrays)
    assert clone.labels_ == task.labels_ and clone.n_features == task.n_features
    assert np.array_equal(clone.featurize(ds).attr_ids, task.featurize(ds).attr_ids)


def test_pos_task_reads_conllu(tmp_path):
    rows = ["1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_", "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_"]
    p = tmp_path / "a.conllu"
    p.write_text("# text = Dogs bark\n" + "\n".join(rows) + "\n\n", encoding="utf-8")
    task = PosTask()
    ds = task.read(p)
    task.fit(ds)
    assert task.labels_ == ["NOUN", "VERB"]
    task.featurize(ds)
    Y = task.encode_targets(ds.targets)
    assert task.evaluate(Y, Y) == {"accuracy": 1.0}
    assert task.evaluate(Y, [np.array([1, 1])])["accuracy"] == 0.5


def test_bad_params_raise(tiny_chunk_file):
    from latentstruct.exceptions import ConfigError

    task = ChunkTask(min_count=0)
    with pytest.raises(ConfigError, match="min_count"):
        task.fit(task.read(tiny_chunk_file))
