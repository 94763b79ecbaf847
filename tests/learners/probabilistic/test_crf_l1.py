"""The CRF's L1 penalty (``c1``, trained by OWL-QN): its optimum on a tiny chain CRF against a
long FISTA run and the L1 optimality conditions, its objective against CRFsuite's on the
same attributes (python-crfsuite's weights evaluated under our objective), sparsity,
c1 = 0 being exactly the L2 path, and the parameter's contract (refused with SGD, listed,
saved)."""

import os
import tempfile
import warnings

import numpy as np
import pytest

from conftest import fista
from latentstruct.exceptions import ConfigError
from latentstruct.learners import CRF
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.base import Dataset


def fit_task(dataset):
    task = ChunkTask(constrained=False)  # CRFsuite's chain: every labelling
    task.fit(dataset)
    return task, task.featurize(dataset), task.encode_targets(dataset.targets)


@pytest.fixture
def chunk(tiny_chunk_file):
    task = ChunkTask()
    return fit_task(task.read(tiny_chunk_file)) + (task.read(tiny_chunk_file),)


def smooth_on_support(task, X, Y, c2, support):
    def fun(z):
        w = np.zeros(task.n_features)
        w[support] = z
        loss, g = task.structure_object().log_loss_batch(X, Y, w)
        return loss + c2 * float(z @ z), g[support] + 2 * c2 * z
    return fun


@pytest.mark.slow
@pytest.mark.parametrize("c1", [0.05, 0.4])
def test_owlqn_crf_matches_fista_and_is_l1_optimal(chunk, c1):
    task, X, Y, _ = chunk
    c2 = 0.05
    model = CRF(task, c1=c1, c2=c2, max_iter=3000, delta=0.0, epsilon=1e-7).fit(X, Y)
    assert model.converged_ and model.stop_reason_ == "epsilon"
    support = model.support_
    fun = smooth_on_support(task, X, Y, c2, support)
    ref = fista(fun, np.zeros(support.size), c1)
    F_ref = fun(ref)[0] + c1 * np.abs(ref).sum()
    assert model.objective(X, Y) == pytest.approx(F_ref, rel=1e-9)
    assert model.objective_curve_[-1] == pytest.approx(model.objective(X, Y), rel=1e-12)
    z = model.coef_[support]
    np.testing.assert_allclose(z, ref, atol=1e-5)
    g = fun(z)[1]
    zero = z == 0
    assert zero.any() and (~zero).any()
    assert np.all(np.abs(g[zero]) <= c1 + 1e-6)
    np.testing.assert_allclose(g[~zero], -c1 * np.sign(z[~zero]), atol=1e-6, rtol=0)
    off = np.setdiff1d(np.arange(task.n_features), support)
    assert np.all(model.coef_[off] == 0.0)  # untrained weights stay zero
    assert model.n_nonzero_ == np.count_nonzero(model.coef_)


def test_larger_c1_gives_sparser_models_with_exact_zeros(chunk):
    task, X, Y, _ = chunk
    sizes = []
    for c1 in (0.0, 0.1, 0.5, 2.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = CRF(task, c1=c1, c2=0.01, max_iter=500).fit(X, Y)
        sizes.append(m.n_nonzero_)
        assert m.n_nonzero_ == np.count_nonzero(m.coef_)
    assert sizes[0] == m.support_.size  # L2 alone leaves every trained weight non-zero
    assert sizes[0] > sizes[1] > sizes[2] > sizes[3]
    assert sizes[2] < 0.5 * sizes[0]


def test_c1_zero_is_exactly_the_l2_lbfgs_path(chunk, monkeypatch):
    """c1 = 0 never reaches OWL-QN and gives the model SciPy's L-BFGS-B gives, bit for bit."""
    import latentstruct.learners.probabilistic.crf as crf_module
    from latentstruct.solvers.sgd import lbfgs

    task, X, Y, _ = chunk
    default = CRF(task, c2=0.1, max_iter=60).fit(X, Y)

    def refuse(*args, **kwargs):
        raise AssertionError("OWL-QN ran with c1 = 0")

    monkeypatch.setattr(crf_module, "owlqn", refuse)
    explicit = CRF(task, c1=0.0, c2=0.1, max_iter=60).fit(X, Y)
    np.testing.assert_array_equal(explicit.coef_, default.coef_)
    assert explicit.objective_curve_ == default.objective_curve_
    # the L2 path written out: L-BFGS-B on the trained weights with CRFsuite's rule, the
    # loss summed over the fit's fixed blocks of sentences in order (whatever n_jobs)
    from latentstruct.learners.probabilistic.crf import TRAINED_BLOCKS
    from latentstruct.parallel.schedule import balanced_bounds

    support, curve = default.support_, []
    blocks = balanced_bounds(X.lengths(), TRAINED_BLOCKS)

    def loss_grad(z):
        w = np.zeros(task.n_features)
        w[support] = z
        f, g = 0.0, None
        for a, b in blocks:
            fb, gb = task.structure_.log_loss_batch(task.structure_.subset(X, np.arange(a, b)),
                                                    Y[a:b], w)
            f += fb
            g = gb[support] if g is None else g + gb[support]
        return f, g

    def stop(k, value, w):
        curve.append(value)
        return len(curve) > 10 and (curve[-11] - curve[-1]) < 1e-5 * abs(curve[-1])

    res = lbfgs(loss_grad, np.zeros(support.size), alpha=0.2, max_iter=60, tol=1e-10, stop=stop,
                memory=6)
    np.testing.assert_array_equal(default.coef_[support], res.w)
    assert default.n_nonzero_ == support.size


def test_c1_needs_lbfgs_and_is_a_validated_parameter(chunk):
    task, X, Y, _ = chunk
    with pytest.raises(ConfigError, match="c1=0.5.*solver='lbfgs'.*l2sgd"):
        CRF(task, c1=0.5, solver="sgd", eta0=0.1).fit(X, Y)
    with pytest.raises(ConfigError, match="c1=0.5.*solver='lbfgs'"):
        CRF(task, c1=0.5, solver="sgd", eta0=0.1, alpha=0.01).partial_fit(X, Y)
    with pytest.raises(ConfigError, match="'c1' parameter of CRF"):
        CRF(task, c1=-1.0).fit(X, Y)
    with pytest.raises(ConfigError, match="'epsilon' parameter of CRF"):
        CRF(task, c1=1.0, epsilon=-1.0).fit(X, Y)
    params = CRF(task, c1=0.3).get_params()
    assert params["c1"] == 0.3 and params["epsilon"] == 1e-5
    CRF(task, c1=0.0, solver="sgd", eta0=0.1, max_iter=1).fit(X, Y)  # c1 = 0 is fine with SGD


def test_options_list_c1(capsys):
    from latentstruct.cli import main

    assert main(["options", "chunk", "--learner", "crf"]) == 0
    out = capsys.readouterr().out
    assert "c1=0.0" in out and "L1 coefficient" in out and "epsilon=1e-05" in out


def test_model_file_keeps_c1_and_the_sparse_weights(chunk, tmp_path):
    from latentstruct.learners.persistence import load_trained, save_trained

    task, X, Y, _ = chunk
    model = CRF(task, c1=0.3, c2=0.01, max_iter=300).fit(X, Y)
    path = tmp_path / "crf_l1.npz"
    save_trained(path, task, model)
    loaded = load_trained(path)
    learner = loaded[1] if isinstance(loaded, tuple) else loaded
    assert learner.c1 == 0.3 and learner.epsilon == 1e-5
    np.testing.assert_array_equal(learner.coef_, model.coef_)
    assert learner.n_nonzero_ == model.n_nonzero_ < model.support_.size


# ------------------------------------------------------------------ against CRFsuite
def crfsuite_weights(task, dataset, params):
    """Train python-crfsuite on the task's attribute strings; its weights in our layout,
    CRFsuite's final loss (its objective, log-likelihood with both penalties) and its
    iterations (the training times are benchmarks/' business)."""
    pycrfsuite = pytest.importorskip("pycrfsuite", reason="python-crfsuite is a test dependency")
    trainer = pycrfsuite.Trainer(verbose=False)
    for rec, tags in zip(dataset.records, dataset.targets):
        trainer.append(task.featurizer_.attribute_strings(task.reader.sentences([rec])[0]), list(tags))
    trainer.set_params({"feature.possible_transitions": True, **params})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "crf.crfsuite")
        trainer.train(path)
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        info = tagger.info()
        tagger.close()
    w = np.zeros(task.n_features)
    emission, transition, _, _ = task.structure_.split_weights(w)  # views: filled in place
    label = {t: i for i, t in enumerate(task.labels_)}
    for (attr, tag), value in info.state_features.items():
        assert attr in task.attr_index_  # the same attribute strings on both sides
        emission[task.attr_index_.lookup(attr), label[tag]] = value
    for (prev, nxt), value in info.transitions.items():
        transition[label[prev], label[nxt]] = value
    last = trainer.logparser.iterations[-1]
    return w, float(last["loss"]), len(trainer.logparser.iterations)


def compare_with_crfsuite(dataset, c1, c2, delta, epsilon, max_iter):
    task, X, Y = fit_task(dataset)
    theirs, their_loss, their_iter = crfsuite_weights(
        task, dataset, {"c1": c1, "c2": c2, "max_iterations": max_iter, "delta": delta,
                        "epsilon": epsilon, "period": 10})
    model = CRF(task, c1=c1, c2=c2, max_iter=max_iter, delta=delta, epsilon=epsilon).fit(X, Y)
    ours_f, theirs_f = model.objective(X, Y), model.objective(X, Y, theirs)
    return dict(ours=ours_f, theirs=theirs_f, rel=(theirs_f - ours_f) / ours_f,
                their_loss=their_loss, our_iter=model.n_iter_, their_iter=their_iter,
                our_nnz=model.n_nonzero_,
                their_nnz=int(np.count_nonzero(theirs)), model=model)


def test_objective_matches_crfsuites_on_the_tiny_file(chunk):
    _, _, _, dataset = chunk
    r = compare_with_crfsuite(dataset, c1=0.2, c2=0.05, delta=1e-9, epsilon=1e-9, max_iter=2000)
    assert abs(r["rel"]) < 1e-6, r
    assert r["their_loss"] == pytest.approx(r["theirs"], rel=1e-6)  # the same F on both sides
    assert r["our_nnz"] == r["their_nnz"] < r["model"].support_.size


@pytest.mark.slow
@pytest.mark.data
def test_objective_matches_crfsuites_on_conll2000(require_data, capsys):
    """300 CoNLL-2000 sentences, the task's attribute templates, c1 = 0.5, c2 = 0.1, both
    run to tight convergence: CRFsuite's weights and ours within 1e-4 under one objective."""
    path = require_data("conll2000", "train.txt")
    task = ChunkTask(constrained=False)  # CRFsuite's chain: every labelling
    full = task.read(path)
    dataset = Dataset(full.records[:300], full.targets[:300])
    r = compare_with_crfsuite(dataset, c1=0.5, c2=0.1, delta=1e-8, epsilon=1e-8, max_iter=5000)
    with capsys.disabled():
        print(f"\nCRF c1=0.5 c2=0.1 on 300 CoNLL-2000 sentences: objective ours {r['ours']:.6f} "
              f"({r['our_iter']} OWL-QN iterations, {r['our_nnz']} "
              f"non-zero), CRFsuite's weights {r['theirs']:.6f} (CRFsuite's own loss "
              f"{r['their_loss']:.6f}, {r['their_iter']} iterations, "
              f"{r['their_nnz']} non-zero); relative difference {r['rel']:.2e}")
    assert abs(r["rel"]) < 1e-4, r
    assert r["their_loss"] == pytest.approx(r["theirs"], rel=1e-6)
    assert abs(r["our_nnz"] - r["their_nnz"]) <= 0.01 * r["their_nnz"]
    assert r["our_nnz"] < 0.2 * r["model"].support_.size  # c1 = 0.5 keeps few weights
