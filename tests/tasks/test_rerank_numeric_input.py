"""The reranker on ``(words, pos, candidates, numbers)`` lists: per-candidate numbers add to
each candidate's score outside the hidden-variable part, through the candidate-list
capability (so the learner is unchanged), check_task holds, dense and sparse numbers give
one model, bad arrays and the other input kind are refused, and the model file keeps them."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import latentstruct
from latentstruct import Estimator
from latentstruct.exceptions import InputError
from latentstruct.tasks.rerank import RerankTask
from latentstruct.testing import check_task

OPTIONS = dict(domain="no-hidden", hash_bits=10, n_epochs=15, eta0=0.2, tol=None)


def random_tree(n, rng):
    """Heads (1-based, 0 = root) of a random tree: words placed in a random order, each
    attached to one already placed (the first to ROOT)."""
    order = rng.permutation(n) + 1
    heads = [0] * n
    for k, m in enumerate(order[1:], start=1):
        heads[m - 1] = int(order[rng.integers(0, k)])
    return heads


def toy(n_lists, seed, k=5):
    """k random trees per sentence of identical words ("w"/"X"), the gold tree one of them
    at a random rank, base scores random: only the numbers tell the gold tree.  Column 0
    is another model's score (1 for the gold tree, 0 otherwise, plus noise); column 1 noise."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_lists):
        n = int(rng.integers(4, 7))
        trees = [random_tree(n, rng) for _ in range(k)]
        g = int(rng.integers(0, k))
        scores = np.sort(rng.standard_normal(k))[::-1]
        cands = [(t, None, float(s)) for t, s in zip(trees, scores)]
        numbers = np.column_stack([
            [1.0 if j == g or trees[j] == trees[g] else 0.0 for j in range(k)]
            + 0.2 * rng.standard_normal(k), rng.standard_normal(k)])
        X.append((["w"] * n, ["X"] * n, cands, numbers))
        y.append(trees[g])
    return X, y


def plain(X):
    return [x[:3] for x in X]


def quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_numbers_carry_the_signal_the_trees_do_not():
    X, y = toy(60, 0)
    Xt, yt = toy(40, 1)
    with_numbers = quiet(Estimator(task="rerank", **OPTIONS), X, y)
    without = quiet(Estimator(task="rerank", **OPTIONS), plain(X), y)
    assert with_numbers.task_.input_kind_ == "numbers"
    assert with_numbers.task_.n_candidate_columns_ == 2
    assert without.task_.n_candidate_columns_ == 0
    uas = with_numbers.score(Xt, yt)
    base = without.score(plain(Xt), yt)
    assert uas > 0.95, uas
    assert base < 0.7, base
    w = with_numbers.learner_.coef_
    at = with_numbers.task_.structure_.base_index + 1
    assert w[at] > 1.0 and abs(w[at + 1]) < 0.5 * w[at]  # the informative column wins


def test_dense_and_sparse_numbers_give_the_same_model():
    X, y = toy(10, 2)
    sparse = [(*x[:3], sp.csr_matrix(x[3])) for x in X]
    options = dict(OPTIONS, n_epochs=3)
    a = quiet(Estimator(task="rerank", **options), X, y)
    b = quiet(Estimator(task="rerank", **options), sparse, y)
    assert np.array_equal(a.learner_.coef_, b.learner_.coef_)
    assert a.predict(sparse) == b.predict(X)


def test_check_task_with_numbers():
    rng = np.random.default_rng(3)
    X = [(["John", "saw", "Mary"], ["PROPN", "VERB", "PROPN"],
          [([2, 0, 2], ["nsubj", "root", "obj"], 2.0), ([2, 0, 1], ["nsubj", "root", "dep"], 1.2),
           ([0, 1, 2], ["root", "dep", "obj"], 0.5)], rng.standard_normal((3, 2))),
         (["dogs", "bark"], ["NOUN", "VERB"], [([2, 0], None, -1.0), ([0, 1], None, -1.5)],
          sp.csr_matrix(np.array([[0.0, 1.5], [-2.0, 0.0]])))]
    y = [[(2, "nsubj"), (0, "root"), (2, "obj")], [2, 0]]
    task = RerankTask(domain="pos", graph="sibling", n_hidden=2, hash_bits=6)
    ds = task.make_dataset(X, y)
    task.fit(ds)

    def enumerate_candidates(x):
        for j in range(x.n_candidates()):
            for h in itertools.product(*map(range, task.structure_.hidden_domain_sizes(x, j))):
                yield j, np.array(h, dtype=np.int64)

    report = check_task(task, ds, enumerate=enumerate_candidates, n_weights=3)
    assert {"candidate-log-partitions-enumeration", "candidate-max-product-maximum",
            "candidate-expected-features", "state-round-trip"} <= set(report.checks)
    assert report.max_abs_error < 1e-9


def test_the_numbers_add_to_each_candidates_score():
    """Raising a number column's weight moves log Z_j and max_h by exactly w * a_j."""
    X, y = toy(1, 4, k=3)
    task = RerankTask(domain="pos", n_hidden=2, hash_bits=6)
    ds = task.make_dataset(X, y)
    task.fit(ds)
    x = task.featurize(ds)[0]
    w = np.random.default_rng(0).standard_normal(task.n_features)
    lz0 = task.structure_.candidate_log_partitions(x, w)
    mp0 = [r.score for r in task.structure_.candidate_max_product(x, w)]
    w2 = w.copy()
    w2[task.structure_.base_index + 1] += 0.5
    a = X[0][3][:, 0]
    np.testing.assert_allclose(task.structure_.candidate_log_partitions(x, w2) - lz0, 0.5 * a, atol=1e-12)
    mp2 = [r.score for r in task.structure_.candidate_max_product(x, w2)]
    np.testing.assert_allclose(np.subtract(mp2, mp0), 0.5 * a, atol=1e-12)
    coef = np.array([1.0, -2.0, 0.5])
    F = task.structure_.candidate_expected_features(x, w, coef).features
    np.testing.assert_allclose(F[task.structure_.base_index + 1:], coef @ X[0][3], atol=1e-12)


@pytest.mark.parametrize("numbers, message", [
    (np.array([[1.0], [np.nan]]), r"X\[0\]\[3\]: example 0, candidate 1, column 0 is nan"),
    (sp.csr_matrix(np.array([[0.0, -np.inf], [1.0, 0.0]])),
     r"X\[0\]\[3\]: example 0, candidate 0, column 1 is -inf"),
    (np.ones((3, 1)), r"X\[0\]\[3\]: 3 rows but example 0 has 2 candidates"),
    (np.ones(2), r"X\[0\]\[3\]: an array of shape \(2,\)"),
])
def test_bad_numbers_are_refused(numbers, message):
    x = (["a", "b"], ["X", "X"], [([2, 0], None, 1.0), ([0, 1], None, 0.0)], numbers)
    with pytest.raises(InputError, match=message):
        RerankTask().make_dataset([x])


def test_inconsistent_examples_are_refused():
    cands = [([2, 0], None, 1.0), ([0, 1], None, 0.0)]
    a = (["a", "b"], ["X", "X"], cands, np.ones((2, 2)))
    with pytest.raises(InputError, match=r"X\[1\]\[3\]: 3 columns but X\[0\]\[3\] has 2"):
        RerankTask().make_dataset([a, (*a[:3], np.ones((2, 3)))])
    with pytest.raises(InputError, match=r"X\[1\]: has none \(3 elements\) but X\[0\] has "
                                         r"numbers"):
        RerankTask().make_dataset([a, a[:3]])


def test_the_other_kind_and_width_are_refused():
    X, y = toy(6, 5)
    options = dict(OPTIONS, n_epochs=1)
    model = quiet(Estimator(task="rerank", **options), X, y)
    with pytest.raises(InputError, match=r"trained with per-candidate numbers \(2 columns\), "
                                         r"but the lists have none"):
        model.predict(plain(X))
    with pytest.raises(InputError, match=r"X\[0\]\[3\]: 3 columns, but this model was "
                                         r"trained with 2"):
        model.predict([(*x[:3], np.hstack([x[3], x[3][:, :1]])) for x in X])
    bare = quiet(Estimator(task="rerank", **options), plain(X), y)
    with pytest.raises(InputError, match="trained without per-candidate numbers, but the "
                                         "lists come with them \\(2 columns\\)"):
        bare.predict(X)


def test_save_and_load_keep_the_numbers(tmp_path):
    X, y = toy(8, 6)
    model = quiet(Estimator(task="rerank", **dict(OPTIONS, n_epochs=2)), X, y)
    path = tmp_path / "rerank.model"
    model.save(path)
    loaded = latentstruct.load(path)
    assert loaded.task_.input_kind_ == "numbers" and loaded.task_.n_candidate_columns_ == 2
    assert loaded.predict(X) == model.predict(X)
    assert np.array_equal(loaded.learner_.coef_, model.learner_.coef_)
    with pytest.raises(InputError, match="trained with per-candidate numbers"):
        loaded.predict(plain(X))


def test_a_model_state_without_the_kind_loads_without_numbers():
    X, y = toy(2, 7)
    task = RerankTask(hash_bits=6)
    task.fit(task.make_dataset(plain(X), y))
    state, arrays = task.get_state()
    # a model without numbers is saved as before they existed: what old files hold
    assert "input_kind" not in state and "n_candidate_columns" not in state
    old = RerankTask.from_state(task.get_params(), state, arrays)
    assert old.input_kind_ == "tokens" and old.n_candidate_columns_ == 0
    assert old.n_features == task.n_features == (1 << 6) + 1


def test_the_guide_example_runs_as_written():
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guide" / "reranking.md"
    section = guide.read_text(encoding="utf-8").split("## Numbers in\n", 1)[1].split(
        "\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, str(guide), "exec"), scope)
    reranker = scope["reranker"]
    assert reranker.task_.n_candidate_columns_ == 1
    assert reranker.predict(scope["X"]) == [0]
