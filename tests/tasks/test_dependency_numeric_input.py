"""The dependency parser on ``(tokens, vectors)`` sentences: per-token numbers reach the arc
features (tasks/dependency/vectors.py), the capabilities still hold (check_task), dense and
sparse vectors give one model, bad arrays and the other input kind are refused, and the
model file keeps the kind."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import latentstruct
from latentstruct import DependencyParser
from latentstruct.exceptions import InputError
from latentstruct.inference.brute_force import projective_trees
from latentstruct.tasks.dependency import DependencyTask
from latentstruct.testing import check_task

OPTIONS = dict(hash_bits=10, label_hash_bits=4, single_root=True, max_iter=15, C=1.0,
               n_jobs=1)


def toy(n_sentences, seed):
    """Sentences whose words and tags are all alike ("w"/"X"), so only the vectors tell the
    tree: a root word between two segments, each segment's words attached to its own
    sub-head, the sub-heads to the root.  Columns: is-root, is-sub-head, segment colour
    (two columns); the two segments take different colours."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        a, b = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        n = a + 1 + b
        r = a + 1  # the root word, 1-based
        subs = (int(rng.integers(1, a + 1)), int(rng.integers(r + 1, n + 1)))
        colours = rng.permutation(2)
        heads, vec = [], np.zeros((n, 4))
        for t in range(1, n + 1):
            if t == r:
                heads.append(0)
                vec[t - 1, 0] = 1.0
                continue
            side = 0 if t < r else 1
            vec[t - 1, 2 + colours[side]] = 1.0
            if t == subs[side]:
                heads.append(r)
                vec[t - 1, 1] = 1.0
            else:
                heads.append(subs[side])
        X.append(([("w", "X")] * n, vec))
        y.append(heads)
    return X, y


def quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_vectors_carry_the_signal_the_words_do_not():
    X, y = toy(40, 0)
    Xt, yt = toy(30, 1)
    with_numbers = quiet(DependencyParser(**OPTIONS), X, y)
    words_only = quiet(DependencyParser(**OPTIONS), [s for s, _ in X], y)
    uas = with_numbers.score(Xt, yt)
    base = words_only.score([s for s, _ in Xt], yt)
    assert with_numbers.task_.input_kind_ == "numbers" and with_numbers.task_.n_columns_ == 4
    assert words_only.task_.input_kind_ == "tokens" and words_only.task_.n_columns_ == 0
    assert uas > 0.95, uas
    assert base < 0.75, base
    assert uas > base + 0.25


def test_dense_and_sparse_vectors_give_the_same_model():
    X, y = toy(12, 2)
    sparse = [(s, sp.csr_matrix(v)) for s, v in X]
    coo = [(s, sp.coo_matrix(v)) for s, v in X]
    options = dict(OPTIONS, max_iter=4)
    a = quiet(DependencyParser(**options), X, y)
    b = quiet(DependencyParser(**options), sparse, y)
    c = quiet(DependencyParser(**options), coo, y)
    assert np.array_equal(a.learner_.coef_, b.learner_.coef_)
    assert np.array_equal(a.learner_.coef_, c.learner_.coef_)
    assert a.predict(sparse) == b.predict(X)


def test_nested_lists_are_vectors_too():
    X, y = toy(3, 3)
    task = DependencyTask(hash_bits=8)
    listed = task.make_dataset([(s, v.tolist()) for s, v in X], y)
    arrays = task.make_dataset(X, y)
    for r, q in zip(listed.records, arrays.records):
        assert (r.vectors != q.vectors).nnz == 0


def test_check_task_with_vectors():
    rng = np.random.default_rng(4)
    X, y = [], []
    for heads in [(0,), (2, 0), (0, 1), (2, 0, 2), (0, 3, 1), (2, 3, 0)]:
        n = len(heads)
        X.append(([("a", "NOUN"), ("b", "VERB"), ("c", "ADP")][:n],
                  rng.standard_normal((n, 3)) * (rng.random((n, 3)) < 0.7)))
        y.append([(h, lab) for h, lab in zip(heads, rng.choice(["nsubj", "obj", "root"], n))])
    task = DependencyTask(hash_bits=8, label_hash_bits=4, single_root=False)
    task.fit(task.make_dataset(X, y))
    check = task.make_dataset(X[1:4] + [([("a", "X")] * 4, rng.standard_normal((4, 3)))],
                              y[1:4] + [[(3, "obj"), (4, "nsubj"), (0, "root"), (3, "obj")]])

    def enumerate_trees(x):
        n = int(x.lengths()[0])
        for heads in projective_trees(n, single_root=False):
            for lab in itertools.product(range(task.n_labels), repeat=n):
                yield np.array([heads, lab], dtype=np.int64)

    report = check_task(task, check, enumerate=enumerate_trees, n_weights=3)
    assert {"argmax-maximum", "loss-augmented-maximum", "state-round-trip"} <= set(report.checks)
    assert report.max_abs_error < 1e-9


def test_the_vector_block_is_what_the_docstring_says():
    """Phi of one arc, read back from the weight layout: head, dependent, product, root."""
    v = np.array([[1.0, 2.0], [0.0, 3.0], [5.0, 0.0]])
    task = DependencyTask(hash_bits=6, labelled=False)
    ds = task.make_dataset([([("a", "X"), ("b", "X"), ("c", "X")], v)], [[0, 1, 2]])
    task.fit(ds)
    x = task.featurize(ds)[0]
    off, d = task.structure_.vector_offset, 2
    phi = task.structure_.joint_feature(x, np.array([[0, 1, 2], [-1, -1, -1]]))
    got = dict(zip(phi.indices.tolist(), phi.values.tolist()))
    vec = {k - off: val for k, val in got.items() if k >= off}
    # arcs 0->1 (root), 1->2 and 2->3 (both to the right)
    expected = {}
    for col, val in [(2 * d + 0, 1.0), (2 * d + 1, 2.0), (5 * d + 0, 1.0), (5 * d + 1, 2.0),
                     (0 + 0, 1.0), (0 + 1, 2.0), (2 * d + 1, 3.0), (4 * d + 1, 6.0),
                     (0 + 1, 3.0), (2 * d + 0, 5.0)]:
        expected[col] = expected.get(col, 0.0) + val
    assert vec == expected
    assert task.n_features == off + 6 * d


@pytest.mark.parametrize("vectors, message", [
    (np.array([[1.0, np.nan], [0.0, 1.0]]), r"X\[0\]\[1\]: sentence 0, token 0, column 1 is nan"),
    (sp.csr_matrix(np.array([[1.0, 0.0], [0.0, np.inf]])),
     r"X\[0\]\[1\]: sentence 0, token 1, column 1 is inf"),
    (np.ones((3, 2)), r"X\[0\]\[1\]: 3 rows but sentence 0 has 2 tokens"),
    (np.ones(2), r"X\[0\]\[1\]: an array of shape \(2,\); expected a 2-d array"),
    (np.array([["a", "b"], ["c", "d"]]), r"dtype <U1; expected real numbers"),
    (np.array([[0.0, 0.0], [-2e6, 0.0]]), r"sentence 0, token 1, column 0 is -2000000.0; "
                                          r"expected finite numbers at most 1e\+06"),
    (np.ones((2, 0)), r"X\[0\]\[1\]: an array of no columns"),
    (sp.csr_matrix((2, 2 ** 29)), r"536,870,912 columns, 6 weights each, is more than"),
])
def test_bad_vectors_are_refused(vectors, message):
    with pytest.raises(InputError, match=message):
        DependencyTask().make_dataset([([("a", "X"), ("b", "X")], vectors)], [[0, 1]])


def test_inconsistent_examples_are_refused():
    s = [("a", "X"), ("b", "X")]
    with pytest.raises(InputError, match=r"X\[1\]\[1\]: 3 columns but X\[0\]\[1\] has 2"):
        DependencyTask().make_dataset([(s, np.ones((2, 2))), (s, np.ones((2, 3)))])
    with pytest.raises(InputError, match=r"X\[1\]: is a plain sentence but X\[0\] is "
                                         r"\(tokens, vectors\)"):
        DependencyTask().make_dataset([(s, np.ones((2, 2))), s])


def test_the_other_kind_and_column_count_are_refused():
    X, y = toy(6, 5)
    parser = quiet(DependencyParser(**dict(OPTIONS, max_iter=2)), X, y)
    with pytest.raises(InputError, match="trained with per-token vectors \\(4 columns\\), but "
                                         "the sentences have none"):
        parser.predict([s for s, _ in X])
    with pytest.raises(InputError, match=r"X\[0\]\[1\]: 5 columns, but this model was trained "
                                         r"with 4"):
        parser.predict([(s, np.hstack([v, v[:, :1]])) for s, v in X])
    plain = quiet(DependencyParser(**dict(OPTIONS, max_iter=2)), [s for s, _ in X], y)
    with pytest.raises(InputError, match="trained on tokens only, but the sentences come "
                                         "with vectors \\(4 columns\\)"):
        plain.predict(X)


def test_save_and_load_keep_the_vectors(tmp_path):
    X, y = toy(10, 6)
    parser = quiet(DependencyParser(**dict(OPTIONS, max_iter=3)), X, y)
    path = tmp_path / "dep.model"
    parser.save(path)
    loaded = latentstruct.load(path)
    assert loaded.task_.input_kind_ == "numbers" and loaded.task_.n_columns_ == 4
    assert loaded.predict(X) == parser.predict(X)
    assert np.array_equal(loaded.learner_.coef_, parser.learner_.coef_)
    with pytest.raises(InputError, match="trained with per-token vectors"):
        loaded.predict([s for s, _ in X])


def test_a_model_state_without_the_kind_loads_as_tokens():
    X, y = toy(2, 7)
    task = DependencyTask(hash_bits=8)
    plain = task.make_dataset([s for s, _ in X], y)
    task.fit(plain)
    state, arrays = task.get_state()
    # a model without numbers is saved as before they existed: what old files hold
    assert "input_kind" not in state and "n_columns" not in state
    old = DependencyTask.from_state(task.get_params(), state, arrays)
    assert old.input_kind_ == "tokens" and old.n_columns_ == 0
    assert old.n_features == task.n_features


def test_the_guide_example_runs_as_written():
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guide" / "tasks.md"
    section = guide.read_text(encoding="utf-8").split(
        "### Numbers in: the dependency parser\n", 1)[1].split("\n### ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, str(guide), "exec"), scope)
    parser = scope["parser"]
    assert (parser.task_.input_kind_, parser.task_.n_columns_) == ("numbers", 2)
    assert parser.predict(scope["X"]) == [[2, 0, 2], [0]]
