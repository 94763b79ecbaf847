"""The ``doccls`` task: features, decoding against enumeration, the label-factored capability,
persistence, and the structural SVM on it as a Crammer–Singer multiclass SVM (checked against
exact QP solutions and scikit-learn's LinearSVC)."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.svm import LinearSVC

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks.validation import UnseenLabelError
from latentstruct.learners import StructuredSVM
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks import TASKS, Dataset, DocumentClassificationTask, DocumentMatrix
from latentstruct.tasks.doccls import MulticlassStructure
from latentstruct.tasks.base import StructuredTask, Task
from latentstruct.tasks.contracts import (LABEL_FACTORED, MARGINALIZABLE, MAX_DECODABLE, SIZED,
                                         missing_methods)
from latentstruct.tasks.label_factored import LabelFactoredBatch
from latentstruct.tasks.sequence.capabilities import ChainPartScores, SequenceLabelCounts

WORDS = ["alpha", "beta", "gamma", "delta", "eps"]


def random_dataset(rng, n_docs=12, n_labels=3, words=WORDS, max_len=6):
    """Documents of 1..max_len random words (every word and label used at least once)."""
    texts, labels = [], []
    for k in range(n_docs):
        n = int(rng.integers(1, max_len + 1))
        chosen = list(rng.choice(words, size=n))
        if k < len(words):
            chosen.append(words[k])
        texts.append(" ".join(chosen))
        labels.append(f"c{k % n_labels}" if k < n_labels else f"c{int(rng.integers(n_labels))}")
    return Dataset(texts, labels)


def fitted(rng, features="tokens", **kw):
    task = DocumentClassificationTask(features=features)
    ds = random_dataset(rng, **kw)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


# --- declaration --------------------------------------------------------------------------
def test_registered_and_declares_what_it_implements():
    assert TASKS["doccls"] is DocumentClassificationTask
    assert DocumentClassificationTask.capabilities == {MAX_DECODABLE, LABEL_FACTORED, SIZED,
                                                       MARGINALIZABLE}
    assert missing_methods(DocumentClassificationTask, (Task, StructuredTask)) == {}
    assert DocumentClassificationTask.evaluation_params == {"split"}


# --- features -----------------------------------------------------------------------------
def test_binary_token_features_and_weight_layout():
    task = DocumentClassificationTask()
    ds = Dataset(["The cat sat. The CAT!", "a dog, 42 dogs", "cat dog"], ["x", "y", "x"])
    task.fit(ds)
    assert task.vocab_.names == ["42", "cat", "dog", "dogs", "sat", "the"]  # "a" is too short
    assert task.labels_ == ["x", "y"] and task.n_features == 6 * 2
    X = task.featurize(ds)
    dense = X.rows.toarray()
    np.testing.assert_array_equal(dense, [[0, 1, 0, 0, 1, 1], [1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 0]])
    assert X.rows.dtype == np.float64
    # Φ(x, y) = φ(x) ⊗ e_y: the dense vector reshaped (n_attr, L) has φ(x) in column y
    phi = task.structure_.joint_feature(X[0], np.array([1])).to_dense(task.n_features).reshape(6, 2)
    np.testing.assert_array_equal(phi[:, 1], dense[0])
    np.testing.assert_array_equal(phi[:, 0], 0)
    # words outside the vocabulary are dropped
    Xn = task.featurize(Dataset(["zebra cat"], ["x"]))
    np.testing.assert_array_equal(Xn.rows.toarray(), [[0, 1, 0, 0, 0, 0]])


def test_tfidf_matches_scikit_learn():
    rng = np.random.default_rng(0)
    ds = random_dataset(rng, n_docs=20, words=WORDS + ["zeta", "eta"])
    for min_count in (1, 4):
        task = DocumentClassificationTask(features="tfidf", min_count=min_count).fit(ds)
        ref = TfidfVectorizer(min_df=min_count)
        expected = ref.fit_transform(ds.records).toarray()
        assert task.vocab_.names == ref.get_feature_names_out().tolist()
        np.testing.assert_allclose(task.featurize(ds).rows.toarray(), expected, atol=1e-12)
        new = ["alpha alpha beta unknown", "unknown only"]
        np.testing.assert_allclose(task.featurize(Dataset(new, [None, None])).rows.toarray(),
                                   ref.transform(new).toarray(), atol=1e-12)
    counts = CountVectorizer(min_df=4).fit(ds.records).get_feature_names_out().tolist()
    assert DocumentClassificationTask(min_count=4).fit(ds).vocab_.names == counts


def test_lowercase_and_strip_headers():
    ds = Dataset(["From: Bob\nSubject: Hi\n\nHello World", "no blank line here"], ["a", "b"])
    t = DocumentClassificationTask(lowercase=False, strip_headers=True).fit(ds)
    assert t.vocab_.names == ["Hello", "World"]  # the second text has only a header block
    t = DocumentClassificationTask().fit(ds)
    assert t.vocab_.names == ["blank", "bob", "from", "hello", "here", "hi", "line", "no",
                              "subject", "world"]


@pytest.mark.parametrize("params, needle", [
    ({"features": "bogus"}, r"'features' parameter of the 'doccls' task must be a str among "
                           r"\{'tokens', 'tfidf'\}. Got 'bogus' instead"),
    ({"split": "test"}, r"'split' parameter .* must be a str among \{'all', 'train', 'eval'\}"),
    ({"min_count": 0}, r"'min_count' parameter .* must be an int in the range \[1, inf\). Got 0"),
    ({"min_count": 1.5}, "min_count"),
    ({"lowercase": "yes"}, "'lowercase' parameter .* must be a bool. Got 'yes'"),
    ({"eval_fraction": 1.0}, r"'eval_fraction' parameter .* must be a float in the range "
                              r"\(0.0, 1.0\). Got 1.0"),
])
def test_bad_parameters_are_config_errors(params, needle):
    with pytest.raises(ConfigError, match=needle):
        DocumentClassificationTask(**params).fit(Dataset(["some text"], ["a"]))


def test_no_usable_word_is_an_input_error():
    with pytest.raises(InputError, match="min_count=3"):
        DocumentClassificationTask(min_count=3).fit(Dataset(["aa bb", "cc"], ["a", "b"]))
    with pytest.raises(InputError, match="no documents"):
        DocumentClassificationTask().fit(Dataset([], []))


def test_only_split_may_change_after_fit():
    task = DocumentClassificationTask().fit(Dataset(["aa bb", "cc dd"], ["a", "b"]))
    task.set_params(split="eval")
    with pytest.raises(ConfigError, match="cannot change 'features'"):
        task.set_params(features="tfidf")


# --- reading and the split parameter --------------------------------------------------------
def write_docs(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_read_honours_split(tmp_path):
    rows = [{"id": str(i), "label": "a", "text": f"doc {i}"} for i in (3, 1, 10, 2, 5)]
    rows += [{"id": str(i), "label": "b", "text": f"doc {i}"} for i in (7, 8)]
    path = write_docs(tmp_path / "d.jsonl", rows)
    ids = {}
    for split in ("all", "train", "eval"):
        ds = DocumentClassificationTask(split=split).read(path)
        ids[split] = [(d.label, d.id) for d in ds.records]
        assert ds.targets == [d.label for d in ds.records] and ds.path == str(path)
    assert len(ids["all"]) == 7
    assert ids["eval"] == [("a", "10"), ("b", "8")]  # round(0.2 * 5) = 1, and 1 of 2
    assert ids["train"] == [("a", "3"), ("a", "1"), ("a", "2"), ("a", "5"), ("b", "7")]
    ids_40 = DocumentClassificationTask(split="eval", eval_fraction=0.4).read(path)
    assert [d.id for d in ids_40.records] == ["10", "5", "8"]


def test_read_for_testing_accepts_unlabelled_lines(tmp_path):
    path = write_docs(tmp_path / "d.jsonl", [{"label": "a", "text": "x y"}, {"text": "no label"}])
    task = DocumentClassificationTask()
    with pytest.raises(InputError, match=":2: missing 'label'"):
        task.read(path)  # training data needs labels
    ds = task.read(path, split="test")
    assert ds.targets == ["a", None]
    with pytest.raises(InputError, match=r":2: this document has no label, and split='eval'.*"
                                         r"--option split=all"):
        DocumentClassificationTask(split="eval").read(path, split="test")


@pytest.mark.slow
def test_real_split_sizes(require_data):
    path = require_data("20newsgroups", "train.jsonl")
    n = {s: len(DocumentClassificationTask(split=s).read(path)) for s in ("all", "train", "eval")}
    assert n == {"all": 11314, "train": 9050, "eval": 2264}


# --- the featurised batch -------------------------------------------------------------------
def test_document_matrix_indexing_subset_and_join():
    rng = np.random.default_rng(1)
    keep = sp.diags([1.0, 1, 1, 0, 1, 1, 1])  # document 3 is empty
    M = sp.csr_matrix(keep @ sp.random(7, 5, density=0.4, format="csr", random_state=2))
    M.eliminate_zeros()
    assert M[3].nnz == 0 and M.nnz > 5
    X = DocumentMatrix.from_csr(M)
    assert len(X) == 7 and X.shape == (7, 5)
    np.testing.assert_array_equal(X.rows.toarray(), M.toarray())
    for i in (0, 3, 6, -1):
        x = X[i]
        assert isinstance(x, DocumentMatrix) and len(x) == 1
        np.testing.assert_array_equal(x.rows.toarray(), M[i % 7].toarray())
    with pytest.raises(IndexError):
        X[7]
    idx = rng.permutation(7)[:5].tolist() + [2]
    np.testing.assert_array_equal(X.subset(idx).rows.toarray(), M[idx].toarray())
    np.testing.assert_array_equal(X[2:5].rows.toarray(), M[2:5].toarray())
    np.testing.assert_array_equal(X[::2].rows.toarray(), M[::2].toarray())
    np.testing.assert_array_equal(X[np.arange(7) % 2 == 1].rows.toarray(), M[1::2].toarray())
    # a slice of a slice keeps its offsets straight
    np.testing.assert_array_equal(X[2:6][1:3].rows.toarray(), M[3:5].toarray())
    task = MulticlassStructure(2, M.shape[1])  # the structure joins batches; no fit needed
    joined = task.as_batch([X[k] for k in (4, 0, 3)])
    np.testing.assert_array_equal(joined.rows.toarray(), M[[4, 0, 3]].toarray())
    assert task.as_batch(X) is X
    np.testing.assert_array_equal(task.as_batch(M).rows.toarray(), M.toarray())
    with pytest.raises(TypeError, match="DocumentMatrix"):
        task.as_batch([X[0], "text"])


# --- decoding against enumeration -----------------------------------------------------------
def brute_force(task, x, w, y_true=None):
    """(best class, its score) over every class, lowest class on ties."""
    scores = []
    for y in range(task.n_labels):
        s = task.structure_.joint_feature(x, np.array([y])).dot(w)
        if y_true is not None:
            s += task.structure_.loss(y_true, np.array([y]))
        scores.append(s)
    k = int(np.argmax(scores))
    return k, scores[k]


@pytest.mark.parametrize("seed", range(5))
def test_argmax_and_loss_augmented_argmax_match_enumeration(seed):
    rng = np.random.default_rng(seed)
    task, X, Y = fitted(rng, n_labels=4)
    for trial in range(30):
        w = rng.integers(-2, 3, size=task.n_features).astype(float)  # integers: many ties
        for i in range(len(X)):
            for y_true in (None, Y[i], np.array([-1])):
                res = task.structure_.argmax(X[i], w, y_true)
                k, best = brute_force(task, X[i], w, y_true)
                assert res.status == "exact" and res.structure.dtype == np.int64
                assert res.structure.tolist() == [k] and res.score == pytest.approx(best, abs=1e-12)
                # the score is w·Φ(x, y) (+ Δ): joint_feature agrees with the decoder
                plain = task.structure_.joint_feature(X[i], res.structure).dot(w)
                extra = 0.0 if y_true is None else task.structure_.loss(y_true, res.structure)
                assert res.score == pytest.approx(plain + extra, abs=1e-12)
        batch = task.structure_.argmax_batch(X, w)
        assert [b.tolist() for b in batch] == [task.structure_.argmax(X[i], w).structure.tolist()
                                               for i in range(len(X))]
        Yu = [y if i % 3 else np.array([-1]) for i, y in enumerate(Y)]
        batch = task.structure_.argmax_batch(X, w, Yu)
        assert [b.tolist() for b in batch] == [task.structure_.argmax(X[i], w, Yu[i]).structure.tolist()
                                               for i in range(len(X))]


def test_ties_go_to_the_lowest_class_and_unknown_gold_is_always_wrong():
    task, X, Y = fitted(np.random.default_rng(0))
    w = np.zeros(task.n_features)
    assert task.structure_.argmax(X[0], w).structure.tolist() == [0]
    assert task.structure_.argmax(X[0], w, np.array([0])).structure.tolist() == [1]  # +1 on classes 1, 2
    res = task.structure_.argmax(X[0], w, np.array([-1]))
    assert res.structure.tolist() == [0] and res.score == 1.0
    assert task.structure_.loss(np.array([-1]), np.array([0])) == 1.0
    assert task.structure_.loss(np.array([2]), np.array([2])) == 0.0 and task.structure_.loss(1, np.array([2])) == 1.0
    assert task.structure_.joint_feature(X[0], np.array([-1])).nnz == 0
    with pytest.raises(InputError, match="one document"):
        task.structure_.argmax(X[0:2], w)


def test_joint_feature_difference_is_the_difference():
    task, X, _ = fitted(np.random.default_rng(3), features="tfidf")
    n = task.n_features
    for i in range(len(X)):
        for a in (-1, 0, 1, 2):
            for b in (-1, 0, 1, 2):
                d = task.structure_.joint_feature_difference(X[i], np.array([a]), np.array([b])).to_dense(n)
                ref = (task.structure_.joint_feature(X[i], np.array([a])).to_dense(n)
                       - task.structure_.joint_feature(X[i], np.array([b])).to_dense(n))
                np.testing.assert_allclose(d, ref, atol=1e-15)


def test_targets_round_trip_and_evaluate():
    task, X, Y = fitted(np.random.default_rng(0))
    assert all(y.shape == (1,) and y.dtype == np.int64 for y in Y)
    with pytest.raises(UnseenLabelError, match=r"'never seen' at y\[2\] \(document 2\).*c0, c1, c2"):
        task.encode_targets(["c2", "c0", "never seen"])
    enc = task.encode_targets(["c2", "c0", "c1"])
    assert [e.tolist() for e in enc] == [[2], [0], [1]]
    assert task.decode_targets(enc + [np.array([-1])]) == ["c2", "c0", "c1", None]
    predictions = [np.array([2]), np.array([1]), np.array([0])]
    metrics = task.evaluate(enc, predictions)
    assert metrics == {"accuracy": pytest.approx(1 / 3), "n": 3}
    assert type(metrics["accuracy"]) is float and type(metrics["n"]) is int
    # raw gold labels: one the model never saw is always wrong
    raw = task.evaluate_raw(["c2", "c0", "never seen"], predictions)
    assert raw == {"accuracy": pytest.approx(1 / 3), "n": 3}
    assert task.evaluate_raw(["c2", "c1", "never seen"], predictions)["accuracy"] == \
        pytest.approx(2 / 3)
    assert task.structure_.example_size(X[0]) == 1
    with pytest.raises(ValueError):
        task.evaluate(enc, enc[:2])


# --- label-factored -------------------------------------------------------------------------
def test_label_factored_with_identity_reproduces_the_one_hot_scores():
    rng = np.random.default_rng(4)
    task, X, Y = fitted(rng, features="tfidf")
    L, F = task.n_labels, task.n_attributes
    w = rng.normal(size=task.n_features)
    W = w.reshape(F, L)
    for i in range(len(X)):
        parts = task.structure_.label_factored_parts(X[i])
        assert parts.n_labels == L and dict(parts.part_arity) == {"emission": 1}
        np.testing.assert_allclose(parts.rows.toarray(), X[i].rows.toarray())
        ps = task.structure_.part_scores_from_label_matrix(parts, W, np.eye(L))
        assert isinstance(ps, ChainPartScores) and ps.unary.shape == (1, L)
        expected = [task.structure_.joint_feature(X[i], np.array([y])).dot(w) for y in range(L)]
        np.testing.assert_allclose(ps.unary[0], expected, atol=1e-12)
        np.testing.assert_array_equal(ps.transition, np.zeros((L, L)))
        np.testing.assert_array_equal(ps.start, np.zeros(L))
        for y_true in (None, Y[i]):
            a = task.structure_.argmax_from_part_scores(X[i], *ps, y_true=y_true)
            b = task.structure_.argmax(X[i], w, y_true)
            assert a.structure.tolist() == b.structure.tolist() and a.score == pytest.approx(b.score)
        counts = task.structure_.label_counts(X[i], Y[i])
        assert isinstance(counts, SequenceLabelCounts)
        assert counts.token_labels.tolist() == Y[i].tolist() and counts.bigrams.shape == (0, 2)
        assert counts.first == counts.last == -1
        # the DISTRO score <Y, R W_E A> of the gold labelling is w·Φ(x, y_i)
        score = (counts.emission_indicator().multiply(ps.unary)).sum()
        assert score == pytest.approx(task.structure_.joint_feature(X[i], Y[i]).dot(w))
    with pytest.raises(InputError, match="shape"):
        task.structure_.label_counts(X[0], np.array([0, 1]))
    with pytest.raises(InputError, match=r"\[-1, 3\)"):
        task.structure_.label_counts(X[0], np.array([3]))


def test_label_factored_with_a_label_matrix_and_the_batch_form():
    rng = np.random.default_rng(5)
    task, X, Y = fitted(rng, n_docs=15, n_labels=3)
    L, F, d = task.n_labels, task.n_attributes, 2
    W_E, A = rng.normal(size=(F, d)), rng.normal(size=(d, L))
    batch = task.structure_.label_factored_batch(X)
    assert isinstance(batch, LabelFactoredBatch)
    assert batch.n_examples == len(X) and batch.n_labels == L and not batch.has_transitions
    np.testing.assert_array_equal(batch.offsets, np.arange(len(X) + 1))
    np.testing.assert_allclose(batch.rows.toarray(), X.rows.toarray())
    unary = np.asarray(batch.rows @ W_E) @ A
    for i in range(len(X)):
        ps = task.structure_.part_scores_from_label_matrix(task.structure_.label_factored_parts(X[i]), W_E, A,
                                                rng.normal(size=(d, d)), np.ones(d), np.ones(d))
        np.testing.assert_allclose(ps.unary[0], unary[i], atol=1e-12)
    plain = task.structure_.argmax_from_part_scores_batch(batch.offsets, unary, None, None, None)
    assert plain.dtype == np.int64 and plain.tolist() == np.argmax(unary, axis=1).tolist()
    Yu = [y if i % 4 else np.array([-1]) for i, y in enumerate(Y)]
    aug = unary + 1.0
    for i, y in enumerate(Yu):
        if y[0] >= 0:
            aug[i, y[0]] -= 1.0
    expected = np.argmax(aug, axis=1).tolist()
    assert task.structure_.argmax_from_part_scores_batch(batch.offsets, unary, None, None, None, Yu).tolist() == expected
    assert task.structure_.argmax_from_part_scores_batch(batch.offsets, unary, None, None, None,
                                              np.concatenate(Yu)).tolist() == expected
    assert [task.structure_.argmax_from_part_scores(X[i], unary[i : i + 1], None, None, None, Yu[i]).structure[0]
            for i in range(len(X))] == expected
    ties = np.zeros((len(X), L))
    assert task.structure_.argmax_from_part_scores_batch(batch.offsets, ties, None, None, None).tolist() == [0] * len(X)
    with pytest.raises(InputError, match="0, 1, ..., N"):
        task.structure_.argmax_from_part_scores_batch(np.array([0, 2, 3]), unary[:2], None, None, None)
    with pytest.raises(InputError, match="shape"):
        task.structure_.argmax_from_part_scores_batch(batch.offsets, unary[:, :2], None, None, None)
    with pytest.raises(InputError, match="A must have shape"):
        task.structure_.part_scores_from_label_matrix(task.structure_.label_factored_parts(X[0]), W_E, A[:, :2])


# --- persistence ----------------------------------------------------------------------------
@pytest.mark.parametrize("features", ["tokens", "tfidf"])
def test_model_file_round_trip(tmp_path, features):
    rng = np.random.default_rng(6)
    ds = random_dataset(rng, n_docs=20, words=WORDS + ["über", "naïve"])
    task = DocumentClassificationTask(features=features, min_count=2).fit(ds)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    learner = StructuredSVM(task, C=1.0).fit(X, Y)
    path = tmp_path / "m.npz"
    save_trained(path, task, learner)
    task2, learner2, meta = load_trained(path)
    assert meta["task_params"]["features"] == features
    assert task2.labels_ == task.labels_ and task2.vocab_.names == task.vocab_.names
    np.testing.assert_array_equal(task2.idf_, task.idf_)
    X2 = task2.featurize(ds)
    np.testing.assert_array_equal(X2.rows.toarray(), X.rows.toarray())
    assert [p.tolist() for p in learner2.predict(X2)] == [p.tolist() for p in learner.predict(X)]
    with np.load(path, allow_pickle=False) as npz:  # loads: arrays only, no pickled objects
        arrays = {k: npz[k] for k in npz.files if k.endswith(".npy") or "." not in k}
    assert {"doccls_vocab_names_utf8", "doccls_idf", "coef_"} <= set(arrays)
    assert arrays["doccls_idf"].shape == ((len(task.vocab_),) if features == "tfidf" else (0,))


# --- the structural SVM on this task is a Crammer–Singer multiclass SVM ------------------------
def crammer_singer_problem(seed=0, n_docs=12, n_labels=3):
    """A fitted task on 12 random documents over 5 words with real-valued (tf-idf) features."""
    rng = np.random.default_rng(seed)
    task, X, Y = fitted(rng, features="tfidf", n_docs=n_docs, n_labels=n_labels)
    assert task.n_attributes == 5 and task.n_labels == n_labels
    return task, X, Y


def margin_rows(R, y, L):
    """Constraint rows D[(i, c)] = Φ(x_i, y_i) − Φ(x_i, c) for c != y_i, built from the raw
    matrix R (n, F) alone (not from the task), in the w layout w[a * L + c]."""
    n, F = R.shape
    rows, groups = [], []
    for i in range(n):
        for c in range(L):
            if c == y[i]:
                continue
            D = np.zeros((F, L))
            D[:, y[i]] += R[i]
            D[:, c] -= R[i]
            rows.append(D.ravel())
            groups.append(i)
    return np.array(rows), np.array(groups)


def hinge(R, y, w, L):
    """ξ_i = max(0, max_c [1 − w·(Φ(x_i, y_i) − Φ(x_i, c))]), from the raw matrix."""
    S = R @ w.reshape(-1, L)
    aug = S + 1.0
    aug[np.arange(len(y)), y] -= 1.0
    return np.maximum(aug.max(axis=1) - S[np.arange(len(y)), y], 0.0)


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_ssvm_reaches_the_exact_squared_hinge_crammer_singer_optimum(C, exact_qp):
    """StructuredSVM minimises 1/2||w||² + C Σ ξ_i² s.t. w·(Φ(x_i, y_i) − Φ(x_i, c)) ≥ 1 − ξ_i
    (c != y_i); its solution must match the certified optimum of that QP, solved exactly over
    z = (w, ξ) by the reference solver of tests/conftest.py (``exact_qp``)."""
    task, X, Y = crammer_singer_problem()
    R, y, L = X.rows.toarray(), np.array([v[0] for v in Y]), task.n_labels
    D, g = margin_rows(R, y, L)
    n, m = task.n_features, len(y)
    A = np.hstack([D, np.eye(m)[g]])  # D w + ξ_g >= 1  (ξ >= 0 follows from the optimum)
    z, opt, _ = exact_qp(np.concatenate([np.ones(n), np.full(m, 2 * C)]), A, np.ones(len(g)))
    w_opt = z[:n]
    assert opt == pytest.approx(0.5 * w_opt @ w_opt + C * np.sum(hinge(R, y, w_opt, L) ** 2), rel=1e-9)
    svm = StructuredSVM(task, C=C, tol=1e-10, epsilon=0.0, max_iter=200, inner_tol=1e-10,
                        inner_max_iter=100000).fit(X, Y)
    w = svm.coef_
    own = 0.5 * w @ w + C * np.sum(hinge(R, y, w, L) ** 2)  # objective recomputed from scratch
    assert own == pytest.approx(opt, rel=1e-6)
    assert svm.objective_curve_[-1] == pytest.approx(opt, rel=1e-6)
    np.testing.assert_allclose(w, w_opt, atol=1e-4)
    assert svm.converged_


def l1_crammer_singer_exact(R, y, L, C):
    """Exact minimiser of the L1-hinge Crammer–Singer primal
    1/2||w||² + C Σ ξ_i  s.t. w·(Φ(x_i, y_i) − Φ(x_i, c)) ≥ 1 − ξ_i, ξ ≥ 0,
    by SLSQP on the constrained QP over z = (w, ξ), with its KKT conditions checked."""
    D, g = margin_rows(R, y, L)
    n, m = D.shape[1], len(y)
    G = np.vstack([np.hstack([D, np.eye(m)[g]]), np.hstack([np.zeros((m, n)), np.eye(m)])])
    b = np.concatenate([np.ones(len(g)), np.zeros(m)])
    c = np.concatenate([np.zeros(n), np.full(m, C)])

    def f(z):
        return 0.5 * z[:n] @ z[:n] + c @ z

    def grad(z):
        return np.concatenate([z[:n], np.zeros(m)]) + c

    res = minimize(f, np.concatenate([np.zeros(n), np.full(m, 1.0 + 2 * np.abs(R).sum())]),
                   jac=grad, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: G @ z - b, "jac": lambda z: G}],
                   options={"ftol": 1e-14, "maxiter": 2000})
    assert res.success, res.message
    z = res.x
    assert (G @ z - b).min() >= -1e-8
    # dual certificate: multipliers mu >= 0 with grad = G' mu (least squares on the active set)
    active = np.flatnonzero(G @ z - b <= 1e-7)
    mu = np.linalg.lstsq(G[active].T, grad(z), rcond=None)[0]
    assert mu.min() >= -1e-6 and np.abs(G[active].T @ mu - grad(z)).max() <= 1e-6
    return z[:n], float(f(z))


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_linear_svc_crammer_singer_agrees_with_the_exact_l1_optimum(C):
    """scikit-learn's LinearSVC(multi_class="crammer_singer", fit_intercept=False) solves the
    *L1*-hinge Crammer–Singer problem, min 1/2||w||² + C Σ ξ_i; StructuredSVM on doccls is
    its squared-hinge variant (C Σ ξ_i², checked above), so the two are not compared directly.
    Here LinearSVC's solution, mapped into doccls's weight layout, must reach the exact L1
    optimum, and the L1 objective evaluated through the task's own loss-augmented argmax and
    joint features (the quantities StructuredSVM trains on) must equal it."""
    task, X, Y = crammer_singer_problem()
    R, y, L = X.rows.toarray(), np.array([v[0] for v in Y]), task.n_labels
    w_exact, opt = l1_crammer_singer_exact(R, y, L, C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-10,
                        max_iter=1_000_000).fit(R, y)
    w_svc = svc.coef_.T.ravel()  # (L, F) -> our layout w[a * L + c]
    np.testing.assert_allclose(w_svc, w_exact, atol=1e-3)

    def l1_objective_via_task(w):
        xi = [task.structure_.argmax(X[i], w, Y[i]).score - task.structure_.joint_feature(X[i], Y[i]).dot(w)
              for i in range(len(X))]
        return 0.5 * w @ w + C * float(np.sum(xi))

    assert l1_objective_via_task(w_exact) == pytest.approx(opt, rel=1e-9)
    assert l1_objective_via_task(w_svc) == pytest.approx(opt, rel=1e-4)
    assert [p[0] for p in task.structure_.argmax_batch(X, w_svc)] == svc.predict(R).tolist()


def test_one_label_is_refused_as_scikit_learn_classifiers_do():
    # a one-label model would predict that label for every document: refused, with the
    # label and how to fix it (the CLI row is in tests/test_hostile_inputs.py)
    with pytest.raises(InputError, match=r"only one label, 'a' \(2 documents\).*another label"):
        DocumentClassificationTask().fit(Dataset(["aa bb", "cc"], ["a", "a"]))


def test_the_task_holds_an_immutable_multiclass_structure():
    import pickle

    ds = Dataset(["the cat sat", "dogs sat", "the dog"], ["x", "y", "x"])
    task = DocumentClassificationTask().fit(ds)
    s = task.structure_
    assert type(s) is MulticlassStructure and task.structure_object() is s
    assert (s.n_labels, s.n_attributes) == (task.n_labels, task.n_attributes) == (2, 5)
    with pytest.raises(AttributeError, match="immutable"):
        s.n_labels = 3
    with pytest.raises(ValueError, match="n_labels must be an int >= 0"):
        MulticlassStructure(-1, 2)
    X = task.featurize(ds)
    w = np.arange(s.n_features, dtype=float)
    copy = pickle.loads(pickle.dumps(s))
    assert [y.tolist() for y in copy.argmax_batch(X, w)] == \
        [y.tolist() for y in task.structure().argmax_batch(X, w)]
    again = DocumentClassificationTask.from_state(task.get_params(), *task.get_state())
    assert (again.structure_.n_labels, again.structure_.n_attributes) == (2, 5)
    with pytest.warns(DeprecationWarning, match="DocumentClassificationTask.argmax is "
                                                "deprecated"):
        assert task.argmax(X[0], w).structure.tolist() == s.argmax(X[0], w).structure.tolist()
