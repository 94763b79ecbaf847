"""Numbers in the sequence tasks (tasks/sequence/numeric.py): a (tokens x d) array per
sentence alone, or ``(tokens, array)`` pairs that add the columns to the templates.

A chain on arrays learns a separable toy problem with every learner; it is the dict form
``{"c0": v0, ...}`` with the same values (same predictions and objective); dense and sparse
give one model; pairs grow the attributes by d; check_task holds; the errors name the
sentence and position; the model file round-trips; a fitted task refuses other kinds.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import latentstruct
from latentstruct import Chunker, Estimator, Tagger
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks import ChunkTask, PosTask
from latentstruct.tasks.sequence.numeric import NumericSentence
from latentstruct.testing import all_sequences, check_task

LABELS = ("A", "B", "C")


def toy(n=40, d=5, seed=0, noise=0.3):
    """Sentences whose token t's label k is the column k that stands out (separable)."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        T = int(rng.integers(2, 7))
        lab = rng.integers(0, len(LABELS), T)
        a = rng.normal(size=(T, d)) * noise
        a[np.arange(T), lab] += 2.0
        X.append(a)
        y.append([LABELS[k] for k in lab])
    return X, y


def words_of(X):
    return [[f"w{t % 3}" for t in range(len(a))] for a in X]


def quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


# ------------------------------------------------------------------------------ learning
@pytest.mark.parametrize("learner", ["ssvm", "crf", "perceptron", "distro"])
def test_a_chain_on_arrays_learns_a_separable_problem(learner):
    X, y = toy()
    X_test, y_test = toy(seed=1)
    kw = {"max_iter": 30} if learner != "distro" else {}
    est = quiet(Tagger(learner=learner, **kw), X, y)
    assert est.task_.attributes_ == "arrays" and est.task_.n_columns_ == 5
    assert est.task_.n_attributes == 5  # no named attribute: the columns only
    assert est.score(X_test, y_test) >= 0.95
    pred = est.predict(X_test)
    assert [len(p) for p in pred] == [len(a) for a in X_test]
    assert set(t for p in pred for t in p) <= set(LABELS)


def test_arrays_equal_the_dict_form_with_the_same_values():
    X, y = toy(n=25, seed=2)
    dicts = [[{f"c{j}": float(v) for j, v in enumerate(row)} for row in a] for a in X]
    a = quiet(Tagger(C=1.0, max_iter=20), X, y)
    b = quiet(Tagger(C=1.0, max_iter=20), dicts, y)
    X_test, _ = toy(n=15, seed=3)
    d_test = [[{f"c{j}": float(v) for j, v in enumerate(row)} for row in s] for s in X_test]
    assert a.predict(X_test) == b.predict(d_test)
    np.testing.assert_allclose(a.learner_.objective_curve_, b.learner_.objective_curve_,
                               rtol=1e-8)
    # the same weights, rows in the index's order for the dicts
    ea = a.task_.structure_.split_weights(a.learner_.coef_)[0]
    eb = b.task_.structure_.split_weights(b.learner_.coef_)[0]
    rows = [b.task_.attr_index_.lookup(f"c{j}") for j in range(5)]
    np.testing.assert_allclose(ea, eb[rows], rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil"])
def test_dense_and_sparse_give_identical_models(fmt):
    X, y = toy(n=20, seed=4)
    X[0][0, 1] = 0.0  # a zero: dropped in both forms
    sparse = [sp.csr_matrix(a).asformat(fmt) for a in X]
    dense_task, sparse_task = PosTask(), PosTask()
    d_data, s_data = dense_task.make_dataset(X, y), sparse_task.make_dataset(sparse, y)
    assert d_data.records == s_data.records
    a = quiet(Tagger(max_iter=10), X, y)
    b = quiet(Tagger(max_iter=10), sparse, y)
    np.testing.assert_array_equal(a.learner_.coef_, b.learner_.coef_)
    corpus = dense_task.fit(d_data).featurize(d_data)
    assert corpus.n_tokens == sum(len(s) for s in X)
    assert corpus.attr_ids.shape[0] == sum(int(np.count_nonzero(s)) for s in X)


def test_binary_arrays_keep_the_binary_fast_path():
    X = [np.array([[1, 0], [0, 1]], dtype=np.uint8), np.array([[0, 1]], dtype=bool)]
    task = PosTask()
    data = task.make_dataset(X, [["A", "B"], ["B"]])
    corpus = task.fit(data).featurize(data)
    assert corpus.attr_values is None
    np.testing.assert_array_equal(corpus.attr_ids, [0, 1, 1])


def test_pairs_add_the_columns_to_the_templates():
    X, y = toy(n=20, seed=5)
    words = words_of(X)
    tags = [(["NOUN", "VERB"] * 4)[:len(w)] for w in words]
    plain = PosTask().fit(PosTask().make_dataset(words, tags))
    task = PosTask()
    data = task.make_dataset(list(zip(words, X)), y)
    task.fit(data)
    assert task.attributes_ == "tokens+arrays" and task.n_columns_ == 5
    assert len(task.attr_index_) == len(plain.attr_index_)
    assert task.n_attributes == len(plain.attr_index_) + 5
    corpus = task.featurize(data)
    base = plain.featurize(plain.make_dataset(words))
    tok0 = corpus.attr_ids[corpus.attr_indptr[0]:corpus.attr_indptr[1]]
    templ0 = base.attr_ids[base.attr_indptr[0]:base.attr_indptr[1]]
    np.testing.assert_array_equal(np.sort(tok0[:templ0.size]), np.sort(templ0))
    np.testing.assert_array_equal(tok0[templ0.size:], len(task.attr_index_) + np.arange(5))
    np.testing.assert_allclose(corpus.attr_values[templ0.size:tok0.size], X[0][0])
    est = quiet(Tagger(max_iter=20), list(zip(words, X)), y)
    X_test, y_test = toy(seed=6)
    assert est.score(list(zip(words_of(X_test), X_test)), y_test) >= 0.95


def test_chunker_and_citations_take_arrays_and_pairs():
    X, _ = toy(n=20, seed=7)
    tags = ["B-NP", "I-NP", "O"]
    y = [[tags[int(np.argmax(r[:3]))] for r in a] for a in X]
    y = [["B-NP" if t == "I-NP" and (k == 0 or s[k - 1] == "O") else t
          for k, t in enumerate(s)] for s in y]
    pairs = [([(w, "NN") for w in ws], a) for ws, a in zip(words_of(X), X)]
    ch = quiet(Chunker(max_iter=15), pairs, y)
    assert ch.task_.attributes_ == "tokens+arrays"
    assert ch.score(pairs, y) > 0.9
    cit_y = [[("author", "title", "date")[int(np.argmax(r[:3]))] for r in a] for a in X]
    cit = quiet(Estimator(task="citations", max_iter=15), X, cit_y)
    assert cit.task_.attributes_ == "arrays"
    assert cit.score(X, cit_y) > 0.9


# ------------------------------------------------------------------------------ check_task
@pytest.mark.parametrize("form", ["arrays", "pairs"])
def test_check_task_passes_on_numbers(form):
    rng = np.random.default_rng(8)
    X = [rng.normal(size=(n, 3)) for n in (3, 2, 4)]
    X[1][0, 2] = 0.0
    if form == "pairs":
        X = list(zip(words_of(X), X))
    y = [["A", "B", "A"], ["B", "B"], ["A", "C", "B", "A"]]
    task = PosTask(window=0, affix_length=1)
    data = task.make_dataset(X, y)
    task.fit(data)
    report = check_task(task, data, enumerate=lambda x: all_sequences(x.n_tokens, 3),
                        n_weights=3)
    assert {"argmax-maximum", "log-partition-enumeration"} <= set(report.checks)


# ------------------------------------------------------------------------------ errors
def _refused(X, y=None, match="", task=None):
    with pytest.raises(InputError, match=match):
        (task or PosTask()).make_dataset(X, y)


def test_errors_name_the_example_and_position():
    good = np.ones((2, 3))
    bad = good.copy()
    bad[1, 2] = np.nan
    _refused([good, bad], match=r"X\[1\]: row 1 column 2 .* is nan")
    inf = sp.csr_matrix(good)
    inf[0, 1] = np.inf
    _refused([inf], match=r"X\[0\]: row 0 column 1 .* is inf")
    _refused([good, (["a", "b"], good)], match=r"X\[1\]: is given as a \(list of words, array\)")
    _refused([(["a", "b"], bad)], match=r"X\[0\]\[1\]: row 1 column 2")
    _refused([good, np.ones(3)], match=r"X\[1\]: is a 1-D array .*reshape\(-1, 1\)")
    _refused([np.ones((2, 3, 1))], match=r"X\[0\]: is a 3-D array")
    _refused([(["a", "b", "c"], good)], match=r"X\[0\]: the array X\[0\]\[1\] has 2 rows but "
                                              r"the tokens X\[0\]\[0\] are 3")
    _refused([good], [["A", "B", "C"]], match=r"y\[0\]: has 3 tags but X\[0\] has 2 tokens")
    _refused([good, np.ones((2, 3)), np.ones((1, 4))],
             match=r"X\[2\]: has 4 feature columns but X\[0\] has 3.*expected 3")
    _refused([(["a", 7], good)], match=r"X\[0\]\[0\]\[1\]: word must be a string, got int")
    _refused([([("a", "DT"), 5], good)], match=r"X\[0\]\[0\]\[1\]: is 5; expected a \(word, "
                                               r"POS\) pair", task=ChunkTask())
    _refused([np.ones((0, 3))], match=r"X\[0\]: is an empty sentence")
    _refused([([], np.ones((0, 3)))], match=r"X\[0\]\[0\]: is an empty sentence")
    _refused([np.ones((2, 0))], match=r"X\[0\]: is an array with 0 columns")
    _refused([good.astype(complex)], match=r"X\[0\]: is an array of dtype complex128")
    _refused([good, ["a", "b"]], match=r"X\[1\]: is given as words but X\[0\] as a numeric")


def test_a_fitted_task_refuses_another_kind_or_width():
    X, y = toy(n=10)
    arrays = PosTask()
    arrays.fit(arrays.make_dataset(X, y))
    words = words_of(X)
    for other, what in (([words[0]], "words"), ([(words[0], X[0])], r"\(tokens, array\) pairs"),
                        ([[{"c0": 1.0}] * 2], "per-token feature dicts")):
        with pytest.raises(InputError, match=rf"trained on numeric arrays alone .* sentence 0 "
                                             rf"is given as {what}"):
            arrays.featurize(arrays.make_dataset(other))
    with pytest.raises(InputError, match=r"sentence 1 has 4 feature columns but this 'pos' "
                                         r"model was trained on arrays of 5 columns"):
        arrays.featurize(_two_widths(arrays, X))
    templ = PosTask()
    templ.fit(templ.make_dataset(words, [(["NOUN", "VERB"] * 4)[:len(w)] for w in words]))
    with pytest.raises(InputError, match=r"trained on .*templates.*sentence 0|trained on words"):
        templ.featurize(templ.make_dataset(X))


def _two_widths(task, X):
    from latentstruct.tasks.base import Dataset

    a, b = task.make_dataset([X[0]]), task.make_dataset([X[1][:, :4]])
    return Dataset(list(a.records) + list(b.records), [None, None])


def test_jlis_binary_examples_are_refused_with_arrays():
    X, y = toy(n=10)
    data = PosTask().make_dataset(X, y)
    with pytest.raises(ConfigError, match=r"n_binary=2 .*numeric arrays alone.*n_binary=0"):
        PosTask(n_binary=2).training_sample(data)
    assert len(PosTask(n_structured_tokens=5).training_sample(data)) >= 1


def test_writing_and_using_as_a_tagger_are_refused(tmp_path):
    from latentstruct.tasks.sequence import check_tagger

    X, y = toy(n=10)
    task = PosTask()
    data = task.make_dataset(X, y)
    task.fit(data)
    with pytest.raises(InputError, match="numbers a 'pos' file cannot carry"):
        task.write_predictions(tmp_path / "o.conllu", data, [np.zeros(len(a), int) for a in X])
    with pytest.raises(ConfigError, match="trained on arrays"):
        check_tagger(task, np.zeros(task.n_features))


# ------------------------------------------------------------------------------ model files
@pytest.mark.parametrize("form", ["arrays", "pairs"])
def test_save_load_round_trip(form, tmp_path):
    X, y = toy(n=20, seed=9)
    if form == "pairs":
        X = list(zip(words_of(X), X))
    est = quiet(Tagger(max_iter=10), X, y)
    path = tmp_path / "m.npz"
    est.save(path)
    back = latentstruct.load(path)
    assert back.task_.attributes_ == est.task_.attributes_
    assert back.task_.n_columns_ == 5
    assert back.predict(X) == est.predict(X)
    state, _ = est.task_.get_state()
    assert state["n_columns"] == 5


def test_a_state_without_n_columns_loads_as_before():
    task = PosTask().fit(PosTask().make_dataset([["a", "b"]], [["NOUN", "VERB"]]))
    state, arrays = task.get_state()
    assert "n_columns" not in state  # template models' files are unchanged
    back = PosTask.from_state(task.get_params(), state, arrays)
    assert back.n_columns_ == 0 and back.n_attributes == task.n_attributes


def test_records_are_numeric_sentences():
    X, y = toy(n=3)
    data = PosTask().make_dataset(X, y)
    rec = data.records[0]
    assert isinstance(rec, NumericSentence) and rec.base is None and len(rec) == len(X[0])
    np.testing.assert_array_equal(rec.toarray(), X[0])


def test_inspection_names_the_columns():
    from latentstruct.pipelines.inspection import inspect_model

    X, y = toy(n=20)
    est = quiet(Tagger(max_iter=10), list(zip(words_of(X), X)), y)
    out = inspect_model(est.task_, est.learner_, top=200)
    names = {e["feature"] for lab in out["features"].values() for e in lab["positive"]}
    assert {f"column {j}" for j in range(5)} <= names
    assert "w=w0" in names or any(n.startswith("w=") for n in names)
