"""doccls on a numeric matrix (issue 43): ``make_dataset(X, y)`` and ``DocumentClassifier``
take a dense numpy array or a scipy.sparse matrix whose columns are the input features.

A matrix equal to what the text featuriser makes gives the model the texts give; dense and
sparse copies give the same model; every learner the task offers uses the real values (toy
problems that indicator features cannot solve); bad matrices are InputErrors naming the
position; the input kind and column count survive a model file and are enforced."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import latentstruct
from latentstruct import DocumentClassifier
from latentstruct.exceptions import ConfigError, ConvergenceWarning, InputError, ModelFormatError
from latentstruct.learners import check_compatible, get_learner_class, valid_learners
from latentstruct.learners.persistence import load_trained
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.doccls import DocumentClassificationTask, DocumentMatrix
from latentstruct.tasks.doccls.task import TOKEN_PATTERN
from latentstruct.testing import check_task

TEXTS = ["The striker scored twice and the match ended 2-1.",
         "The central bank raised interest rates again.",
         "Fans cheered as the team won the cup final.",
         "Bond yields fell after the rates decision.",
         "The goalkeeper saved a penalty in the second half.",
         "Markets rallied on the bank's inflation outlook.",
         "A late goal sent the home team into the final.",
         "Inflation figures pushed bond yields higher."]
LABELS = ["sport", "finance"] * 4


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn()


def separable(seed=0, n=90, d=6, n_labels=3):
    """Real-valued rows whose class is the column (of the first n_labels) holding the largest
    value; every row has every column non-zero, so indicator features carry no signal."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.5, 1.5, size=(n, d))
    y = rng.integers(0, n_labels, n)
    X[np.arange(n), y] += 1.0
    return X, np.array([f"c{k}" for k in range(n_labels)], dtype=object)[y]


def sign_problem(seed=1, n=60):
    """One column whose sign is the class: negative values must be used as they are."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(0.2, 2.0, n) * rng.choice([-1.0, 1.0], n)
    return v.reshape(-1, 1), np.where(v > 0, "pos", "neg").astype(object)


def predicted(est, X):
    return list(est.predict(X))


def coef(est):
    return np.asarray(est.learner_.coef_)


# ----------------------------------------------------------------- the text correspondence
def test_the_text_featurisers_matrix_gives_the_text_model():
    text = quiet(lambda: DocumentClassifier(C=1.0).fit(TEXTS, LABELS))
    rows = text.task_.featurize(text.task_.make_dataset(TEXTS)).rows
    assert rows.shape == (8, text.task_.n_attributes)
    numeric = quiet(lambda: DocumentClassifier(C=1.0).fit(rows, LABELS))
    assert numeric.task_.input_kind_ == "matrix" and numeric.task_.n_columns_ == rows.shape[1]
    assert text.task_.input_kind_ == "text" and text.task_.n_columns_ is None
    np.testing.assert_array_equal(coef(numeric), coef(text))
    assert predicted(numeric, rows) == predicted(text, TEXTS)


def test_a_tfidf_vectorizer_matrix_gives_the_tfidf_text_model():
    from sklearn.feature_extraction.text import TfidfVectorizer

    M = TfidfVectorizer(token_pattern=TOKEN_PATTERN).fit_transform(TEXTS)
    text = quiet(lambda: DocumentClassifier(features="tfidf", C=1.0).fit(TEXTS, LABELS))
    numeric = quiet(lambda: DocumentClassifier(C=1.0).fit(M, LABELS))
    np.testing.assert_allclose(coef(numeric), coef(text), rtol=1e-9, atol=1e-12)
    assert predicted(numeric, M) == predicted(text, TEXTS) == LABELS
    np.testing.assert_allclose(numeric.decision_function(M), text.decision_function(TEXTS),
                               rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------- dense and sparse
@pytest.mark.slow
@pytest.mark.parametrize("learner", ["ssvm", "distro", "crf"])
def test_dense_and_every_sparse_format_give_identical_models(learner):
    X, y = separable(seed=2, n=40)
    X[X < 0.9] = 0.0  # some zeros, so the sparse copies differ from a full matrix
    coo = sp.coo_matrix(X)
    # the same matrix with an explicit zero and a value split into two duplicate entries
    r, c, v = coo.row, coo.col, coo.data
    messy = sp.coo_matrix((np.r_[v[:-1], v[-1] / 2, v[-1] / 2, 0.0], (np.r_[r, r[-1], 0],
                          np.r_[c, c[-1], int(np.flatnonzero(X[0] == 0)[0])])), shape=X.shape)
    forms = [X, sp.csr_matrix(X), sp.csc_matrix(X), coo, sp.csr_array(X), messy]
    models = [quiet(lambda F=F: DocumentClassifier(learner=learner).fit(F, y)) for F in forms]
    for m in models[1:]:
        np.testing.assert_array_equal(coef(m), coef(models[0]))
    assert predicted(models[0], X) == predicted(models[1], sp.csr_matrix(X))


def test_integer_and_bool_matrices_are_read_as_floats():
    X, y = separable(seed=3, n=30)
    counts = np.rint(X * 3).astype(np.int32)
    a = quiet(lambda: DocumentClassifier().fit(counts, y))
    b = quiet(lambda: DocumentClassifier().fit(counts.astype(np.float64), y))
    np.testing.assert_array_equal(coef(a), coef(b))
    records = DocumentClassificationTask().make_dataset(counts > 3, list(y)).records
    assert isinstance(records, DocumentMatrix) and set(records.data.tolist()) == {1.0}


# --------------------------------------------------- every learner uses the real values
def offered_learners():
    return sorted(valid_learners(DocumentClassificationTask))


def test_the_learners_offered_are_the_ones_checked_here():
    assert offered_learners() == ["arow", "crf", "distro", "frank-wolfe", "n-slack",
                                  "one-slack", "pa", "perceptron", "sgd-ssvm", "ssvm",
                                  "subgradient-ssvm"]


@pytest.mark.parametrize("learner", offered_learners())
def test_every_offered_learner_learns_from_the_values(learner):
    # indicator features (every entry non-zero) would give one constant prediction
    X, y = separable(seed=4)
    est = quiet(lambda: DocumentClassifier(learner=learner).fit(X[:60], y[:60]))
    assert est.score(X[60:], y[60:]) >= 0.9
    assert est.score(X[:60], y[:60]) >= 0.95
    Xs, ys = sign_problem()
    est = quiet(lambda: DocumentClassifier(learner=learner).fit(Xs[:40], ys[:40]))
    assert est.score(Xs[40:], ys[40:]) == 1.0


def test_distro_trains_on_a_sparse_tfidf_matrix():
    from sklearn.feature_extraction.text import TfidfVectorizer

    X, y = separable(seed=5, n=120, d=8, n_labels=4)
    est = quiet(lambda: DocumentClassifier(learner="distro").fit(sp.csr_matrix(X[:90]), y[:90]))
    assert est.learner_.registry_name == "distro"
    assert est.learner_.label_matrix_.shape[1] == 4 and est.n_features_in_ == 8
    assert est.score(X[90:], y[90:]) >= 0.9
    # and on a real TfidfVectorizer matrix of texts: it separates the training documents
    M = TfidfVectorizer().fit_transform(TEXTS)
    est = quiet(lambda: DocumentClassifier(learner="distro").fit(M, LABELS))
    assert predicted(est, M) == LABELS


def test_decision_function_ranks_like_predict():
    X, y = separable(seed=6)
    for learner in ("ssvm", "distro"):
        est = quiet(lambda: DocumentClassifier(learner=learner).fit(X, y))
        scores = est.decision_function(X)
        assert scores.shape == (len(X), 3)
        assert list(est.classes_[np.argmax(scores, axis=1)]) == predicted(est, X)
    Xs, ys = sign_problem()
    est = quiet(lambda: DocumentClassifier().fit(Xs, ys))  # two classes: one score per row
    d = est.decision_function(Xs)
    assert d.shape == (len(Xs),) and list(est.classes_) == ["neg", "pos"]
    assert list(np.where(d > 0, "pos", "neg")) == predicted(est, Xs)


# ------------------------------------------------------------------------------------ errors
def test_non_finite_values_name_their_row_and_column():
    X, y = separable(seed=7, n=10)
    X[2, 3] = np.nan
    with pytest.raises(InputError, match=r"X\[2\]\[3\] \(document 2, column 3\) is nan"):
        DocumentClassifier().fit(X, y)
    X[2, 3] = 1.0
    S = sp.lil_matrix(X)
    S[6, 1] = -np.inf
    with pytest.raises(InputError, match=r"X\[6\]\[1\] \(document 6, column 1\) is -inf"):
        DocumentClassifier().fit(S.tocsr(), y)
    est = quiet(lambda: DocumentClassifier().fit(X, y))
    X[9, 5] = np.inf
    with pytest.raises(InputError, match=r"X\[9\]\[5\]"):
        predicted(est, X)
    X[9, 5] = -2e6  # the sequence tasks' bound on a real-valued feature
    with pytest.raises(InputError, match=r"X\[9\]\[5\] .* is -2000000.0, larger in magnitude "
                                         r"than 1e\+06"):
        predicted(est, sp.csr_matrix(X))
    X[9, 5] = -1e6  # the bound itself is accepted
    assert len(predicted(est, X)) == 10


@pytest.mark.parametrize("shape, needle", [((5,), r"1-D array of 5 numbers.*reshape\(1, -1\)"),
                                           ((5, 2, 2), r"3 dimensions \(shape \(5, 2, 2\)\)")])
def test_a_matrix_must_be_two_dimensional(shape, needle):
    with pytest.raises(InputError, match=needle):
        DocumentClassificationTask().make_dataset(np.ones(shape), ["a"] * 5)


def test_row_count_must_match_y():
    X, y = separable(seed=8, n=10)
    with pytest.raises(InputError, match=r"X has 10 rows \(documents\) but y has 9 labels"):
        DocumentClassifier().fit(X, y[:9])
    with pytest.raises(InputError, match=r"X has 10 rows \(documents\) but y has 11 labels"):
        DocumentClassificationTask().make_dataset(sp.csr_matrix(X), list(y) + ["c0"])


def test_other_bad_matrices_and_labels():
    task = DocumentClassificationTask()
    with pytest.raises(InputError, match="complex"):
        task.make_dataset(np.ones((2, 2), dtype=complex), ["a", "b"])
    with pytest.raises(InputError, match="does not convert to numbers"):
        task.make_dataset(np.array([["a", "b"], ["c", "d"]], dtype=object), ["a", "b"])
    with pytest.raises(InputError, match=r"y\[1\]: the label is int 3"):
        task.make_dataset(np.ones((2, 2)), ["a", 3])
    with pytest.raises(InputError, match="no column"):
        task.fit(task.make_dataset(np.ones((3, 0)), ["a", "b", "a"]))
    too_wide = sp.csr_matrix((2, 2**30 + 1), dtype=np.float64)  # 2 labels: 2**31 + 2 weights
    with pytest.raises(InputError, match=r"X has 1,073,741,825 columns and y 2 labels"):
        task.fit(task.make_dataset(too_wide, ["a", "b"]))
    with pytest.raises(InputError, match="contains no documents"):
        task.fit(task.make_dataset(np.ones((0, 4)), []))


def test_a_matrix_of_another_width_is_refused_at_predict():
    X, y = separable(seed=9, n=20)
    est = quiet(lambda: DocumentClassifier().fit(X, y))
    assert est.n_features_in_ == 6
    for bad in (X[:, :5], sp.csr_matrix(np.hstack([X, X]))):
        with pytest.raises(InputError, match=rf"X has {bad.shape[1]} features, but \w+ is "
                                             r"expecting 6 features as input"):
            predicted(est, bad)
    with pytest.raises(InputError, match="expecting 6 features"):
        est.score(X[:, :5], y)


def test_text_options_with_a_matrix_are_config_errors():
    X, y = separable(seed=10, n=20)
    for opts in ({"features": "tfidf"}, {"min_count": 2}, {"strip_headers": True},
                 {"lowercase": False}):
        key = next(iter(opts))
        with pytest.raises(ConfigError, match=rf"{key}=.*X is a numeric matrix whose columns "
                                              r"are the features"):
            DocumentClassifier(**opts).fit(X, y)


def test_the_input_kind_is_enforced_both_ways():
    X, y = separable(seed=11, n=20)
    numeric = quiet(lambda: DocumentClassifier().fit(X, y))
    with pytest.raises(InputError, match="fitted on a numeric matrix of 6 columns.*got "
                                         "document texts"):
        predicted(numeric, ["some text"])
    text = quiet(lambda: DocumentClassifier().fit(TEXTS, LABELS))
    with pytest.raises(InputError, match=r"fitted on document texts.*got a numeric matrix of "
                                         r"shape \(2, 6\)"):
        predicted(text, X[:2])
    assert not hasattr(text, "n_features_in_")
    assert not hasattr(DocumentClassifier(), "n_features_in_")
    # a 1-D array of texts stays texts
    assert predicted(text, np.array(TEXTS[:2])) == LABELS[:2]


# ----------------------------------------------------------------------------- persistence
@pytest.mark.parametrize("learner", ["ssvm", "distro"])
def test_save_and_load_round_trip(tmp_path, learner):
    X, y = separable(seed=12, n=40)
    S = sp.csr_matrix(X)
    est = quiet(lambda: DocumentClassifier(learner=learner).fit(S, y))
    path = tmp_path / "m.npz"
    est.save(path)
    back = latentstruct.load(path)
    assert type(back) is DocumentClassifier and back.n_features_in_ == 6
    assert back.task_.input_kind_ == "matrix" and back.task_.vocab_ is None
    assert predicted(back, X) == predicted(est, S)
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    assert back.score(X, y) == est.score(X, y)
    with pytest.raises(InputError, match="got document texts"):
        predicted(back, ["a text"])
    with pytest.raises(InputError, match="X has 5 features"):
        predicted(back, X[:, :5])
    _, _, meta = load_trained(path)
    assert meta["task_state"]["input"] == "matrix" and meta["task_state"]["n_columns"] == 6
    with np.load(path, allow_pickle=False) as npz:  # arrays only, no vocabulary
        assert not any("vocab" in k for k in npz.files)


def test_state_without_the_new_keys_loads_as_a_text_model():
    task = DocumentClassificationTask().fit(Dataset(TEXTS, LABELS))
    state, arrays = task.get_state()
    assert state["input"] == "text" and state["n_columns"] is None
    old = {k: v for k, v in state.items() if k not in ("input", "n_columns")}
    back = DocumentClassificationTask.from_state(task.get_params(), json.loads(json.dumps(old)),
                                                 arrays)
    assert back.input_kind_ == "text" and back.n_columns_ is None
    assert back.vocab_.names == task.vocab_.names
    np.testing.assert_array_equal(back.featurize(Dataset(TEXTS, LABELS)).rows.toarray(),
                                  task.featurize(Dataset(TEXTS, LABELS)).rows.toarray())


@pytest.mark.parametrize("kind, n_columns, needle", [("matrix", 0, "n_columns is 0"),
                                                      ("matrix", None, "n_columns is None"),
                                                      ("table", 3, "input kind is 'table'")])
def test_a_damaged_state_is_a_model_format_error(kind, n_columns, needle):
    X, y = separable(seed=13, n=12)
    task = DocumentClassificationTask()
    task.fit(task.make_dataset(X, list(y)))
    state, arrays = task.get_state()
    state.update(input=kind, n_columns=n_columns)
    with pytest.raises(ModelFormatError, match=needle):
        DocumentClassificationTask.from_state(task.get_params(), state, arrays)


# ------------------------------------------------------------------------------ check_task
def test_check_task_passes_on_a_task_fitted_on_a_matrix():
    X, y = separable(seed=14, n=8, d=4)
    X[0, 1] = -0.7  # a negative value and a zero
    X[1, 2] = 0.0
    task = DocumentClassificationTask()
    data = task.make_dataset(sp.csr_matrix(X), list(y))
    task.fit(data)
    report = check_task(task, data, lambda x: [np.array([c]) for c in range(task.n_labels)])
    assert {"argmax-maximum", "loss-augmented-maximum", "state-round-trip",
            "pickle-round-trip"} <= set(report.checks)
    assert report.max_abs_error < 1e-9


def test_every_offered_learner_is_compatible_with_a_matrix_fitted_task():
    for name in offered_learners():
        check_compatible(DocumentClassificationTask, DocumentClassificationTask.param_defaults(),
                         get_learner_class(name), {})
