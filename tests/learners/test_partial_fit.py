"""Incremental learning: ``partial_fit`` of the online learners (perceptron, latent PA, SGD
structural SVM).

The must-show property: ``partial_fit`` over batches B1, ..., Bk (``shuffle=False``) equals
one online pass over their concatenation, i.e. ``fit(B1 + ... + Bk)`` with one epoch and
``shuffle=False`` (the same updates in the same order), to 1e-12.  For the SGD structural
SVM the mini-batches of a call never straddle two calls, so the batch lengths are multiples
of ``batch_size`` (the last one excepted).  Also: the counters continue, ``partial_fit``
after ``fit`` continues ``fit``'s run, a model file continues exactly, ``clone`` works, and
bad input is refused with a clear message.
"""

import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.learners import LatentPA, SGDStructuredSVM, StructuredPerceptron
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks import ChunkTask
from latentstruct.testing import make_bag_problem
from conftest import random_chunk_file

TOL = 1e-12


@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    path = random_chunk_file(tmp_path_factory.mktemp("chunk") / "train.txt", 3,
                             n_sent=24, vocab=7)
    task = ChunkTask(window=1, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), list(task.encode_targets(ds.targets))


@pytest.fixture(scope="module")
def bags():
    return make_bag_problem(n_examples=40, bag_size=4, random_state=11)


# case -> (problem fixture, factory, batch lengths (they add up to the problem's size))
CASES = {
    "perceptron": ("chunk", lambda t, **kw: StructuredPerceptron(t, **kw), (5, 8, 3, 8)),
    "perceptron-last": ("chunk", lambda t, **kw: StructuredPerceptron(t, average=False, **kw),
                        (10, 1, 13)),
    "latent-pa": ("bags", lambda t, **kw: LatentPA(t, average=True, **kw), (7, 13, 20)),
    "latent-pa-ii": ("bags", lambda t, **kw: LatentPA(t, variant="pa-ii", C=0.5, **kw),
                     (1, 19, 4, 16)),
    # batch_size 4 divides every batch length but the last
    "sgd-ssvm": ("chunk", lambda t, **kw: SGDStructuredSVM(t, batch_size=4, eta0=0.2,
                                                           lambda1=0.05, **kw), (8, 4, 12)),
    "sgd-ssvm-bs1": ("chunk", lambda t, **kw: SGDStructuredSVM(t, batch_size=1, eta0=0.1,
                                                               lambda1=0.01, **kw), (3, 11, 10)),
}


def passes_kw(learner, k):
    """The hyperparameter that makes ``fit`` run ``k`` passes."""
    return {"n_epochs": k} if isinstance(learner, SGDStructuredSVM) else {"max_iter": k}


def problem(request, case):
    fixture, make, lengths = CASES[case]
    task, X, Y = request.getfixturevalue(fixture)
    assert sum(lengths) == len(X)
    return task, X, Y, (lambda **kw: make(task, **kw)), lengths


def batches(task, X, Y, lengths):
    out, a = [], 0
    for n in lengths:
        idx = np.arange(a, a + n)
        out.append((task.structure_object().subset(X, idx), Y[a : a + n] if isinstance(Y, np.ndarray)
                    else [Y[i] for i in idx]))
        a += n
    return out


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def max_delta(a, b):
    return float(np.max(np.abs(a.coef_ - b.coef_)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_batches_equal_one_pass_over_their_concatenation(request, case):
    task, X, Y, make, lengths = problem(request, case)
    stream = make(shuffle=False)
    for k, (Xb, Yb) in enumerate(batches(task, X, Y, lengths), start=1):
        assert quiet(lambda: stream.partial_fit(Xb, Yb)) is stream
        assert stream.n_iter_ == k  # one pass per call
        assert stream.coef_.shape == (task.n_features,)  # valid after every call
    one_pass = make(shuffle=False)
    quiet(lambda: one_pass.set_params(**passes_kw(one_pass, 1)).fit(X, Y))
    delta = max_delta(stream, one_pass)
    print(f"{case}: max |coef(partial_fit over {len(lengths)} batches) - coef(one pass)| = "
          f"{delta:.3g}")
    assert delta <= TOL
    assert np.max(np.abs(one_pass.coef_)) > 0.1  # the pass learned something
    assert stream.t_ == one_pass.t_
    for name in ("n_updates_", "n_steps_", "n_negative_cap_hits_"):
        if hasattr(one_pass, name):
            assert getattr(stream, name) == getattr(one_pass, name), name
    # the same concatenation in one call is the same pass
    whole = quiet(lambda: make(shuffle=False).partial_fit(X, Y))
    assert max_delta(whole, one_pass) <= TOL and whole.t_ == one_pass.t_


@pytest.mark.parametrize("case", sorted(CASES))
def test_counters_continue_and_a_second_round_of_batches_is_a_second_epoch(request, case):
    task, X, Y, make, lengths = problem(request, case)
    stream = make(shuffle=False)
    parts = batches(task, X, Y, lengths)
    for _ in range(2):
        for Xb, Yb in parts:
            quiet(lambda Xb=Xb, Yb=Yb: stream.partial_fit(Xb, Yb))
    assert stream.n_iter_ == 2 * len(lengths)
    two = make(shuffle=False)
    quiet(lambda: two.set_params(**passes_kw(two, 2)).fit(X, Y))
    assert two.n_iter_ == 2  # no early stop: the comparison is of two whole epochs
    assert max_delta(stream, two) <= TOL
    assert stream.t_ == two.t_
    if isinstance(stream, SGDStructuredSVM):  # mini-batches: ceil(len / batch_size) per batch
        bs = stream.batch_size
        assert stream.t_ == 2 * sum(-(-n // bs) for n in lengths)
        assert len(stream.objective_curve_) == 2 * len(lengths)
    elif isinstance(stream, StructuredPerceptron):  # one step per example
        assert stream.t_ == 2 * len(X) and len(stream.objective_curve_) == 2 * len(lengths)
    else:  # a step per decode: at least one per example, repeats for negatives
        assert stream.t_ == stream.n_steps_ >= 2 * len(X)
        assert len(stream.accuracy_curve_) == len(stream.loss_curve_) == 2 * len(lengths)


@pytest.mark.parametrize("case", ["perceptron", "latent-pa", "sgd-ssvm"])
def test_partial_fit_after_fit_continues_fits_run(request, case):
    """fit for two epochs, then one call on the same data, is fit for three epochs (the
    generator carries over, so the default shuffled order matches too)."""
    _, X, Y, make, _ = problem(request, case)
    a = make()
    quiet(lambda: a.set_params(**passes_kw(a, 2)).fit(X, Y))
    assert a.n_iter_ == 2
    quiet(lambda: a.partial_fit(X, Y))
    b = make()
    quiet(lambda: b.set_params(**passes_kw(b, 3)).fit(X, Y))
    assert b.n_iter_ == 3 == a.n_iter_
    assert max_delta(a, b) <= TOL and a.t_ == b.t_
    # and one call from scratch on the whole data is fit's first epoch, same permutation
    c = quiet(lambda: make().partial_fit(X, Y))
    d = make()
    quiet(lambda: d.set_params(**passes_kw(d, 1)).fit(X, Y))
    assert max_delta(c, d) <= TOL and c.t_ == d.t_


def test_sgd_auto_eta0_is_searched_on_the_first_batch(chunk):
    task, X, Y = chunk
    a = quiet(lambda: SGDStructuredSVM(task, batch_size=4).partial_fit(X, Y))
    b = quiet(lambda: SGDStructuredSVM(task, batch_size=4, n_epochs=1).fit(X, Y))
    assert a.eta0_ == b.eta0_ and a.eta0_trials_ == b.eta0_trials_
    assert max_delta(a, b) <= TOL
    first = task.structure_object().subset(X, np.arange(12))
    c = quiet(lambda: SGDStructuredSVM(task, batch_size=4).partial_fit(first, Y[:12]))
    eta0 = c.eta0_
    quiet(lambda: c.partial_fit(X, Y))
    assert c.eta0_ == eta0  # fixed by the first call


def test_sgd_minibatches_do_not_straddle_calls(chunk):
    """Batches of 5 and 19 with batch_size 4: the calls make 2 + 5 mini-batches where one
    pass over the 24 examples makes 6, so the equivalence needs batch_size to divide."""
    task, X, Y = chunk
    stream = SGDStructuredSVM(task, batch_size=4, eta0=0.2, shuffle=False)
    for Xb, Yb in batches(task, X, Y, (5, 19)):
        stream.partial_fit(Xb, Yb)
    one = SGDStructuredSVM(task, batch_size=4, eta0=0.2, shuffle=False, n_epochs=1).fit(X, Y)
    assert (stream.t_, one.t_) == (7, 6)
    assert max_delta(stream, one) > 1e-6


@pytest.mark.parametrize("case", ["perceptron", "latent-pa", "sgd-ssvm"])
def test_clone_gives_an_unfitted_copy_that_replays_the_stream(request, case):
    task, X, Y, make, lengths = problem(request, case)
    parts = batches(task, X, Y, lengths)
    a = make(random_state=4)
    for Xb, Yb in parts:
        quiet(lambda Xb=Xb, Yb=Yb: a.partial_fit(Xb, Yb))
    b = clone(a)
    params = {k: v for k, v in a.get_params(deep=False).items() if k != "structure"}
    assert {k: v for k, v in b.get_params(deep=False).items() if k != "structure"} == params
    assert params["shuffle"] is True and params["random_state"] == 4
    assert b.structure.n_features == task.n_features  # a fitted task clones with its index
    assert not hasattr(b, "coef_") and not hasattr(b, "t_")
    for Xb, Yb in parts:
        quiet(lambda Xb=Xb, Yb=Yb: b.partial_fit(Xb, Yb))
    assert max_delta(a, b) == 0.0 and a.t_ == b.t_ and a.n_iter_ == b.n_iter_


def reload(task, learner, path):
    """``learner`` through a model file; the bag task is not registered, so for it the
    learner's own state goes through JSON and back (what a model file holds of it)."""
    if task.name == "chunk":
        save_trained(path, task, learner)
        return load_trained(path)[1]
    meta, arrays = learner._learned_state()
    other = type(learner)(**learner.get_params(deep=False))
    other._restore(json.loads(json.dumps(meta)), {k: v.copy() for k, v in arrays.items()})
    return other


@pytest.mark.parametrize("case", ["perceptron", "perceptron-last", "latent-pa",
                                  "latent-pa-ii", "sgd-ssvm"])
def test_a_saved_model_continues_exactly(request, tmp_path, case):
    task, X, Y, make, lengths = problem(request, case)
    (X1, Y1), (X2, Y2) = batches(task, X, Y, (lengths[0], len(X) - lengths[0]))
    live = make()
    quiet(lambda: live.partial_fit(X1, Y1))
    loaded = reload(task, live, tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.coef_, live.coef_)
    assert loaded.t_ == live.t_ and loaded.n_iter_ == 1
    quiet(lambda: live.partial_fit(X2, Y2))
    quiet(lambda: loaded.partial_fit(loaded.structure.subset(X2, np.arange(len(X2))), Y2))
    assert max_delta(live, loaded) == 0.0  # the same state: weights, sums, generator
    assert loaded.t_ == live.t_ and loaded.n_iter_ == live.n_iter_ == 2


def test_a_model_without_online_state_is_refused(chunk, tmp_path):
    task, X, Y = chunk
    m = StructuredPerceptron(task, max_iter=1).fit(X, Y)
    m._online = None  # as a model file written before partial_fit existed loads
    with pytest.raises(ConfigError, match="no online training state.*retrain it"):
        m.partial_fit(X, Y)


def test_latent_pa_classes(bags):
    task, X, y = bags
    a = quiet(lambda: LatentPA(task, shuffle=False).partial_fit(X, y, classes=[1, -1]))
    b = quiet(lambda: LatentPA(task, shuffle=False).partial_fit(X, y))
    assert max_delta(a, b) == 0.0
    np.testing.assert_array_equal(np.unique(y), [-1, 1])
    # one class in a batch is fine: the classes are known
    pos = np.flatnonzero(y > 0)
    quiet(lambda: a.partial_fit(task.subset(X, pos), y[pos], classes=np.array([-1, 1])))
    assert a.n_iter_ == 2
    with pytest.raises(ConfigError, match=r"classes must be \[-1, 1\].*got \[0, 1\]"):
        LatentPA(task).partial_fit(X, np.where(y > 0, 1, 0), classes=[0, 1])
    with pytest.raises(ConfigError, match=r"classes must be \[-1, 1\].*got \[1\]"):
        LatentPA(task).partial_fit(X, y, classes=[1])
    bad = y.copy()
    bad[3] = 2
    with pytest.raises(InputError, match=r"y\[3\] = 2 is not among the classes \[-1, 1\]"):
        a.partial_fit(X, bad)
    assert a.n_iter_ == 2  # a refused batch changes nothing


def test_unfitted_or_refitted_task_and_bad_batches(chunk, tmp_path):
    task, X, Y = chunk
    with pytest.raises(ConfigError, match="partial_fit needs a fitted task.*task.fit"):
        StructuredPerceptron(ChunkTask()).partial_fit(X, Y)
    with pytest.raises(ConfigError, match=r"needs a structure \(a fitted task\) as its 'structure' parameter"):
        SGDStructuredSVM().partial_fit(X, Y)
    # the task fitted again on other data has another feature space
    other = ChunkTask(window=1, affix_length=1)
    path = random_chunk_file(tmp_path / "other.txt", 9, n_sent=5, vocab=3)
    ds = other.read(path)
    other.fit(ds)
    assert other.n_features != task.n_features
    for m in (StructuredPerceptron(task), SGDStructuredSVM(task, eta0=0.1)):
        quiet(lambda m=m: m.partial_fit(X, Y))
        m.set_params(structure=other)
        with pytest.raises(ConfigError, match=rf"model has {task.n_features} weights but the "
                                              rf"task now defines {other.n_features} features"):
            m.partial_fit(other.featurize(ds), other.encode_targets(ds.targets))
        assert m.n_iter_ == 1
    with pytest.raises(ConfigError, match="X has 24 examples but Y has 23"):
        StructuredPerceptron(task).partial_fit(X, Y[:-1])
    with pytest.raises(InputError, match="X has 24 examples but Y has 23 structures"):
        SGDStructuredSVM(task).partial_fit(X, Y[:-1])


def test_the_guides_example_runs(capsys):
    """docs/guide/incremental.md's Python example, as written (it asserts the equivalence)."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "guide" / "incremental.md"
    (code,) = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    exec(compile(code, str(page), "exec"), {})
    assert capsys.readouterr().out.split() == ["1", "2", "2", "4"] * 2
