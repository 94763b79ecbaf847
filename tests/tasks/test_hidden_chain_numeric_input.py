"""Numbers in the hidden-state CRF (``hcrf``, tasks/hidden_chain/numbers.py): a (tokens x d)
array per sentence alone, or ``(tokens, array)`` pairs adding the columns to the built-in
attributes, as the sequence tasks take them.

The CRF learns a class carried by the numbers only; dense and sparse give one model; the
pairs keep the words' attributes and add d; check_task holds; errors name the sentence and
position; the model file round-trips (and a sentence model's state is unchanged); a fitted
task refuses another form or width.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import latentstruct
from latentstruct.exceptions import InputError, ModelFormatError
from latentstruct.learners import CRF
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.hidden_chain import HiddenChainTask
from latentstruct.tasks.sequence.numeric import NumericSentence
from latentstruct.testing import all_sequences, check_task

D = 4
CLASSES = ("neg", "pos")


def toy(n=80, seed=0, shift=1.0):
    """Sentences whose class only moves column 0 up (pos) or down (neg), in noise; the
    words of a pair are the same for both classes, so they carry no signal."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        T = int(rng.integers(3, 8))
        k = int(rng.integers(0, 2))
        a = rng.normal(size=(T, D))
        a[:, 0] += shift if k else -shift
        X.append(a)
        y.append(CLASSES[k])
    return X, y


def words_of(X):
    return [[f"w{t % 3}" for t in range(len(a))] for a in X]


def fitted(X, y, **kw):
    task = HiddenChainTask(**{"n_states": 2, "min_count": 1, **kw})
    data = task.make_dataset(X, y)
    task.fit(data)
    return task, data


def train(X, y, c2=0.1, **kw):
    task, data = fitted(X, y, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crf = CRF(task, c2=c2, max_iter=100).fit(task.featurize(data),
                                                  task.encode_targets(data.targets))
    return task, crf


def accuracy(task, crf, X, y):
    pred = task.decode_predictions(crf.predict(task.featurize(task.make_dataset(X))))
    return float(np.mean(np.array(pred) == np.array(y)))


# ------------------------------------------------------------------------------ learning
@pytest.mark.parametrize("form", ["arrays", "pairs"])
def test_the_crf_learns_a_class_the_numbers_alone_carry(form):
    X, y = toy()
    X_test, y_test = toy(seed=1)
    words, words_test = words_of(X), words_of(X_test)
    if form == "pairs":
        X, X_test = list(zip(words_of(X), X)), list(zip(words_of(X_test), X_test))
    task, crf = train(X, y)
    assert task.attributes_ == ("arrays" if form == "arrays" else "tokens+arrays")
    assert task.n_columns_ == D
    assert task.n_attributes == len(task.attr_index_) + D
    assert accuracy(task, crf, X, y) >= 0.85
    assert accuracy(task, crf, X_test, y_test) >= 0.85
    # the words alone (the same for both classes) leave the model at chance
    words_task, words_crf = train(words, y)
    assert accuracy(words_task, words_crf, words_test, y_test) <= 0.7


def test_the_estimator_takes_arrays_and_pairs():
    X, y = toy(n=60, seed=2)
    est = latentstruct.Estimator(task="hcrf", learner="crf", n_states=2, min_count=1, c2=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.task_.attributes_ == "arrays"
    assert est.score(X, y) >= 0.85
    assert set(est.predict(X)) <= set(CLASSES)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_dense_and_sparse_give_identical_models(fmt):
    X, y = toy(n=40, seed=3)
    X[0][1, 2] = 0.0  # an explicit zero: no attribute either way
    task_d, crf_d = train(X, y)
    task_s, crf_s = train([sp.csr_matrix(a).asformat(fmt) for a in X], y)
    Fd = task_d.featurize(task_d.make_dataset(X))
    Fs = task_s.featurize(task_s.make_dataset([sp.csr_matrix(a).asformat(fmt) for a in X]))
    np.testing.assert_array_equal(Fd.attr_ids, Fs.attr_ids)
    np.testing.assert_array_equal(Fd.attr_values, Fs.attr_values)
    np.testing.assert_array_equal(crf_d.coef_, crf_s.coef_)
    np.testing.assert_array_equal(crf_d.predict_proba(Fd), crf_s.predict_proba(Fs))


def test_binary_arrays_keep_the_binary_fast_path_and_pairs_keep_the_words():
    X, y = toy(n=10, seed=4)
    binary = [(a > 0).astype(np.int8) for a in X]
    task, data = fitted(binary, y)
    corpus = task.featurize(data)
    assert corpus.attr_values is None
    assert len(task.attr_index_) == 0  # an array alone names no attribute
    # token t's ids are its nonzero columns
    np.testing.assert_array_equal(
        corpus.attr_ids[corpus.attr_indptr[0]:corpus.attr_indptr[1]], np.flatnonzero(binary[0][0]))
    words = words_of(X)
    pairs_task, pairs_data = fitted(list(zip(words, X)), y)
    words_task, _ = fitted(words, y)
    assert list(pairs_task.attr_index_.names) == list(words_task.attr_index_.names)
    c = pairs_task.featurize(pairs_data)
    ids = c.attr_ids[c.attr_indptr[0]:c.attr_indptr[1]]
    vals = c.attr_values[c.attr_indptr[0]:c.attr_indptr[1]]
    n_named = len(pairs_task.attr_index_)
    # token 0: its word attributes (value 1) then the D columns after the index
    np.testing.assert_array_equal(ids[ids >= n_named], n_named + np.arange(D))
    np.testing.assert_allclose(vals[ids >= n_named], X[0][0])
    assert np.all(vals[ids < n_named] == 1.0) and (ids < n_named).sum() >= 2


# ------------------------------------------------------------------------------ check_task
@pytest.mark.parametrize("form", ["arrays", "pairs"])
def test_check_task_passes_on_numbers(form):
    rng = np.random.default_rng(8)
    X = [rng.normal(size=(n, 3)) for n in (3, 2, 4, 1)]
    X[1][0, 2] = 0.0
    if form == "pairs":
        X = list(zip(words_of(X), X))
    task, data = fitted(X, [1, -1, 1, -1], window=0, affix_length=1)

    def classes_and_chains(x):
        for k in range(task.n_classes):
            for h in all_sequences(x.n_tokens, task.n_states):
                if task.structure_.is_legal_chain(h):
                    yield k, np.asarray(h)

    report = check_task(task, data, enumerate=classes_and_chains, n_weights=3)
    assert {"log-partition-enumeration", "class-log-partitions-enumeration",
            "log-loss-gradient-enumeration", "state-round-trip",
            "pickle-round-trip"} <= set(report.checks)
    assert report.max_abs_error < 1e-9


# ------------------------------------------------------------------------------ errors
def _refused(X, y=None, match=""):
    with pytest.raises(InputError, match=match):
        HiddenChainTask().make_dataset(X, y)


def test_errors_name_the_example_token_and_column():
    good = np.ones((2, 3))
    bad = good.copy()
    bad[1, 2] = np.nan
    _refused([good, bad], match=r"X\[1\]: row 1 column 2 \(token 1, feature 2\) is nan")
    inf = sp.lil_matrix(good)
    inf[0, 1] = np.inf
    _refused([inf.tocsr()], match=r"X\[0\]: row 0 column 1 .* is inf")
    _refused([np.full((2, 3), 1e9)], match=r"X\[0\]: row 0 column 0 .* \(5 more such values\)")
    _refused([(["a", "b"], bad)], match=r"X\[0\]\[1\]: row 1 column 2")
    _refused([good, np.ones(3)], match=r"X\[1\]: is a 1-D array .*reshape\(-1, 1\)")
    _refused([np.ones((2, 3, 1))], match=r"X\[0\]: is a 3-D array")
    _refused([(["a", "b", "c"], good)],
             match=r"X\[0\]: the array X\[0\]\[1\] has 2 rows but the tokens X\[0\]\[0\] are 3")
    _refused([good, np.ones((2, 3)), np.ones((1, 4))],
             match=r"X\[2\]: has 4 feature columns but X\[0\] has 3.*expected 3")
    _refused([(["a", 7], good)], match=r"X\[0\]\[0\]\[1\]: token 1 must be a string, got int")
    _refused([([], np.ones((0, 3)))], match=r"X\[0\]\[0\]: the sentence has no tokens")
    _refused([np.ones((0, 3))], match=r"X\[0\]: is an empty sentence")
    _refused([np.ones((2, 0))], match=r"X\[0\]: is an array with 0 columns")
    _refused([good.astype(complex)], match=r"X\[0\]: is an array of dtype complex128")
    _refused([good, ["a", "b"]], match=r"X\[1\]: is given as a sentence .* but X\[0\] as a "
                                       r"numeric array")
    _refused([["a", "b"], good], match=r"X\[1\]: is given as a numeric array but X\[0\] as a "
                                       r"sentence")
    _refused([good, (["a", "b"], good)], match=r"X\[1\]: is given as a \(tokens, array\) pair")
    _refused([good, good], ["pos"], match=r"X has 2 sentences but y has 1 labels")
    _refused([good], [1.5], match=r"y\[0\]: label 1.5 is not an int or a string")


def test_a_fitted_task_refuses_another_form_or_width():
    X, y = toy(n=10)
    words = words_of(X)
    arrays, _ = fitted(X, y)
    for other, what in (([words[0]], "words"), ([(words[0], X[0])], r"\(tokens, array\) pairs")):
        with pytest.raises(InputError, match=rf"this 'hcrf' model was trained on numeric arrays "
                                             rf"alone .* sentence 0 is given as {what}"):
            arrays.featurize(arrays.make_dataset(other))
    two = Dataset(list(arrays.make_dataset([X[0]]).records)
                  + list(arrays.make_dataset([X[1][:, :3]]).records), [None, None])
    with pytest.raises(InputError, match=r"sentence 1 has 3 feature columns but this 'hcrf' "
                                         r"model was trained on arrays of 4 columns"):
        arrays.featurize(two)
    with pytest.raises(InputError, match=r"sentence 1 has 3 feature columns but sentence 0 "
                                         r"has 4"):
        HiddenChainTask().fit(Dataset(two.records, ["pos", "neg"]))
    templ, _ = fitted(words, y)
    assert templ.attributes_ == "templates" and templ.n_columns_ == 0
    with pytest.raises(InputError, match=r"trained on words, but sentence 0 is given as "
                                         r"numeric arrays alone"):
        templ.featurize(templ.make_dataset(X))


def test_write_predictions_writes_a_pairs_tokens_and_refuses_arrays_alone(tmp_path):
    X, y = toy(n=4)
    pairs = list(zip(words_of(X), X))
    task, data = fitted(pairs, y)
    task.write_predictions(tmp_path / "p.txt", data, task.encode_targets(y))
    lines = (tmp_path / "p.txt").read_text().splitlines()
    assert lines == [f"{lab}\t{' '.join(w)}" for lab, w in zip(y, words_of(X))]
    task, data = fitted(X, y)
    with pytest.raises(InputError, match="numeric arrays alone have no tokens"):
        task.write_predictions(tmp_path / "a.txt", data, task.encode_targets(y))


# ------------------------------------------------------------------------------ model files
@pytest.mark.parametrize("form", ["arrays", "pairs"])
def test_save_load_round_trip(form, tmp_path):
    X, y = toy(n=30, seed=9)
    if form == "pairs":
        X = list(zip(words_of(X), X))
    est = latentstruct.Estimator(task="hcrf", learner="crf", n_states=2, min_count=1, c2=0.1,
                                 max_iter=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    path = tmp_path / "m.npz"
    est.save(path)
    back = latentstruct.load(path)
    assert back.task_.attributes_ == est.task_.attributes_
    assert back.task_.n_columns_ == D and back.task_.n_attributes == est.task_.n_attributes
    assert back.predict(X) == est.predict(X)
    F = est.task_.featurize(est.task_.make_dataset(X))
    np.testing.assert_array_equal(back.learner_.predict_proba(back.task_.featurize(
        back.task_.make_dataset(X))), est.learner_.predict_proba(F))
    state, _ = est.task_.get_state()
    assert state["n_columns"] == D and state["attributes"] == est.task_.attributes_


def test_a_sentence_models_state_is_unchanged_and_damaged_states_are_refused():
    task, _ = fitted([["a", "b"], ["b", "a"]], ["pos", "neg"])
    state, arrays = task.get_state()
    assert "n_columns" not in state and "attributes" not in state
    back = HiddenChainTask.from_state(task.get_params(), state, arrays)
    assert back.attributes_ == "templates" and back.n_columns_ == 0
    assert back.n_attributes == task.n_attributes
    X, y = toy(n=6)
    numeric, _ = fitted(X, y)
    state, arrays = numeric.get_state()
    for damage in ({"n_columns": -1}, {"n_columns": True}, {"attributes": "dicts"},
                   {"attributes": "templates"}):
        with pytest.raises(ModelFormatError, match="hcrf model state: attributes"):
            HiddenChainTask.from_state(numeric.get_params(), {**state, **damage}, arrays)
    no_width = {k: v for k, v in state.items() if k != "n_columns"}
    with pytest.raises(ModelFormatError, match="damaged or edited"):
        HiddenChainTask.from_state(numeric.get_params(), no_width, arrays)


def test_records_are_the_sequence_tasks_numeric_sentences():
    X, y = toy(n=3)
    data = HiddenChainTask().make_dataset(list(zip(words_of(X), X)), y)
    rec = data.records[0]
    assert isinstance(rec, NumericSentence) and rec.kind == "tokens+arrays"
    assert rec.base.words == tuple(words_of(X)[0])
    np.testing.assert_array_equal(rec.toarray(), X[0])
    assert data.targets == y
