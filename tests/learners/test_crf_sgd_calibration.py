"""The CRF's per-example SGD as CRFsuite's ``l2sgd``: the compiled epoch against a plain
Python reference (its loss and gradient by enumeration), CRFsuite's calibration of eta0
against a brute force over the same candidates, the trained feature set, the stopping
rule, and ``latentstruct.crfsuite``'s mapping of the ``calibration_*`` parameters."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from conftest import random_chunk_file
from latentstruct.crfsuite import CRF as CrfsuiteCRF
from latentstruct.crfsuite.mapping import learner_options
from latentstruct.exceptions import ConfigError
from latentstruct.inference.constraints import ChainConstraints
from latentstruct.learners import CRF
from latentstruct.solvers.structured_sgd import calibrate_eta0, step_size
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.sequence import SequenceCorpus
from latentstruct.tasks.sequence.crf_kernels import log_loss_sgd_epoch


# --- a plain reference: every labelling enumerated, dense updates ---------------------------
def features(corpus, k, y, A, L):
    """Φ(x_k, y) as a dense vector in the layout [emissions | transitions | start | end]."""
    phi = np.zeros(A * L + L * L + 2 * L)
    t0 = int(corpus.offsets[k])
    for t, label in enumerate(y):
        for p in range(corpus.attr_indptr[t0 + t], corpus.attr_indptr[t0 + t + 1]):
            v = 1.0 if corpus.attr_values is None else corpus.attr_values[p]
            phi[corpus.attr_ids[p] * L + label] += v
        if t > 0:
            phi[A * L + y[t - 1] * L + label] += 1.0
    phi[A * L + L * L + y[0]] += 1.0
    phi[A * L + L * L + L + y[-1]] += 1.0
    return phi


def allowed(y, constraints):
    if constraints is None:
        return True
    return (constraints.start[y[0]] and constraints.end[y[-1]]
            and all(constraints.transitions[a, b] for a, b in zip(y, y[1:])))


def reference_loss_grad(corpus, k, gold, w, A, L, constraints=None):
    """log Z − log Z(gold) of sentence k and its gradient, by enumerating its labellings
    (a gold label −1: that token free in the numerator)."""
    T = int(corpus.offsets[k + 1] - corpus.offsets[k])
    ys = [y for y in itertools.product(range(L), repeat=T) if allowed(y, constraints)]
    phis = np.array([features(corpus, k, y, A, L) for y in ys])
    scores = phis @ w
    agree = np.array([all(g < 0 or g == v for g, v in zip(gold, y)) for y in ys])
    p = np.exp(scores - logsumexp(scores))
    q = np.exp(scores[agree] - logsumexp(scores[agree]))
    loss = logsumexp(scores) - logsumexp(scores[agree])
    return loss, p @ phis - q @ phis[agree]


def reference_epoch(corpus, labels, order, w, A, L, eta0, lam, t, trained, constraints=None):
    """CRFsuite's l2sgd steps one by one: η_t, the decay of the trained weights, then the
    gradient step at the decayed weights; returns (Σ loss, t)."""
    total = 0.0
    for k in order:
        a, b = int(corpus.offsets[k]), int(corpus.offsets[k + 1])
        eta = step_size(eta0, lam, t)
        w[trained] *= 1.0 - eta * lam
        loss, grad = reference_loss_grad(corpus, k, labels[a:b], w, A, L, constraints)
        w[trained] -= eta * grad[trained]
        total += loss
        t += 1
    return total, t


def random_corpus(rng, n, A, L, *, values=False, partial=False):
    lengths = rng.integers(1, 5, size=n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    per_token = rng.integers(0, 4, size=int(offsets[-1]))
    indptr = np.concatenate([[0], np.cumsum(per_token)]).astype(np.int64)
    ids = rng.integers(0, A, size=int(indptr[-1])).astype(np.int64)
    vals = rng.uniform(-1.5, 2.0, size=ids.size) if values else None
    labels = rng.integers(0, L, size=int(offsets[-1])).astype(np.int64)
    if partial:
        labels[rng.random(labels.size) < 0.2] = -1
    return SequenceCorpus(indptr, ids, offsets, vals), labels


@pytest.mark.parametrize("seed, values, partial, constrained, masked", [
    (0, False, False, False, False),
    (1, True, False, False, False),
    (2, False, True, False, True),
    (3, True, True, True, True),
    (4, False, False, True, False),
])
def test_compiled_epoch_equals_the_python_reference(seed, values, partial, constrained, masked):
    rng = np.random.default_rng(seed)
    A, L = 5, 3
    corpus, labels = random_corpus(rng, 12, A, L, values=values, partial=partial)
    n_features = A * L + L * L + 2 * L
    constraints = None
    if constrained:  # label 2 never follows label 0 and never starts a chain
        tr = np.ones((L, L), bool)
        tr[0, 2] = False
        start = np.array([True, True, False])
        constraints = ChainConstraints(tr, start, np.ones(L, bool))
        for k in range(len(corpus)):  # gold labellings the constraints allow
            a, b = corpus.offsets[k], corpus.offsets[k + 1]
            y = labels[a:b]
            if y[0] == 2:
                y[0] = 1
            for t in range(1, y.size):
                if y[t - 1] == 0 and y[t] == 2:
                    y[t] = 1
    trained = (rng.random(n_features) < 0.7) if masked else np.ones(n_features, bool)
    w0 = np.where(trained, rng.normal(scale=0.3, size=n_features), 0.0)
    eta0, lam = 0.3, 0.05
    w_fast, w_ref = w0.copy(), w0.copy()
    t_fast = t_ref = 7
    for epoch in range(3):  # the decay is folded in at the end of each call
        order = rng.permutation(len(corpus))
        f_fast, t_fast = log_loss_sgd_epoch(
            corpus.attr_indptr, corpus.attr_ids, corpus.offsets, labels, order, w_fast, A, L,
            eta0=eta0, lam=lam, t=t_fast, trained=trained.astype(np.uint8) if masked else None,
            attr_values=corpus.attr_values, constraints=constraints)
        f_ref, t_ref = reference_epoch(corpus, labels, order, w_ref, A, L, eta0, lam, t_ref,
                                       trained, constraints)
        assert t_fast == t_ref == 7 + 12 * (epoch + 1)
        assert f_fast == pytest.approx(f_ref, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(w_fast, w_ref, rtol=1e-9, atol=1e-9)
    assert np.all(w_fast[~trained] == 0.0)
    assert np.abs(w_fast - w0).max() > 0.05  # it did move


def test_epoch_refuses_a_step_that_would_flip_the_weights():
    corpus, labels = random_corpus(np.random.default_rng(0), 3, 4, 2)
    w = np.zeros(4 * 2 + 4 + 4)
    with pytest.raises(ValueError, match="eta0 \\* lam < 1"):
        log_loss_sgd_epoch(corpus.attr_indptr, corpus.attr_ids, corpus.offsets, labels,
                           np.arange(3), w, 4, 2, eta0=10.0, lam=0.1)


# --- the learner on a chunk task -----------------------------------------------------------
@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    path = random_chunk_file(tmp_path_factory.mktemp("sgd") / "train.txt", seed=5, n_sent=30)
    task = ChunkTask(constrained=False)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


class WithoutCompiledEpoch:
    """The task's structure without its compiled SGD epoch: the learner's Python loop."""

    def __init__(self, structure):
        self._structure = structure

    def __getattr__(self, name):
        if name == "log_loss_sgd":
            raise AttributeError(name)
        return getattr(self._structure, name)


def test_learner_compiled_and_python_loops_agree(chunk):
    task, X, Y = chunk
    kw = dict(solver="sgd", batch_size=1, eta0="calibrate", calibration_samples=12,
              max_iter=4, c2=0.5, possible_transitions=False)
    fast = CRF(task, **kw).fit(X, Y)
    slow = CRF(WithoutCompiledEpoch(task.structure()), **kw).fit(X, Y)
    assert [e for e, _ in fast.eta0_trials_] == [e for e, _ in slow.eta0_trials_]
    np.testing.assert_allclose([v for _, v in fast.eta0_trials_],
                               [v for _, v in slow.eta0_trials_], rtol=1e-9)
    assert fast.eta0_ == slow.eta0_
    np.testing.assert_allclose(fast.coef_, slow.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(fast.objective_curve_, slow.objective_curve_, rtol=1e-9)
    assert fast.t_ == slow.t_ == 4 * len(X)


@pytest.mark.parametrize("kw", [dict(), dict(possible_transitions=False),
                                dict(feature_set="all")])
def test_weights_outside_the_support_stay_exactly_zero(chunk, kw):
    task, X, Y = chunk
    model = CRF(task, solver="sgd", batch_size=1, eta0="calibrate", max_iter=3, **kw).fit(X, Y)
    if model.support_ is None:  # every weight trained: the start and end ones move too
        assert np.count_nonzero(model.coef_) > 0.9 * model.coef_.size
        return
    outside = np.ones(model.coef_.size, bool)
    outside[model.support_] = False
    assert outside.sum() > 0
    assert np.all(model.coef_[outside] == 0.0)
    assert np.count_nonzero(model.coef_[model.support_]) > 0.9 * model.support_.size


# --- calibration -------------------------------------------------------------------------
def crfsuite_candidates(eta, rate, candidates, max_trials, ok):
    """The candidates CRFsuite's calibration tries, written out from its rules: up from
    eta while ``ok`` and fewer than ``candidates`` ok ones, then down from eta / rate until
    ``candidates`` ok ones, the trial counter (from 1) stopping at ``max_trials``."""
    tried, e, n_ok = [], eta, 0
    while len(tried) + 1 < max_trials:
        tried.append(e)
        if not ok(e):
            break
        n_ok += 1
        if n_ok == candidates:
            break
        e *= rate
    e, n_ok = eta / rate, 0
    while n_ok < candidates and len(tried) + 1 < max_trials:
        tried.append(e)
        n_ok += ok(e)
        e /= rate
    return tried


@pytest.mark.parametrize("eta, rate, candidates, max_trials", [
    (0.1, 2.0, 10, 20), (0.1, 2.0, 3, 20), (1.0, 3.0, 10, 6), (0.02, 1.5, 2, 20)])
def test_calibration_picks_the_lowest_objective_of_crfsuites_candidates(chunk, eta, rate,
                                                                         candidates, max_trials):
    task, X, Y = chunk
    structure = task.structure_
    L, A = structure.n_labels, structure.n_attributes
    from latentstruct.tasks.label_factored import gold_labels
    labels = gold_labels(Y, int(X.offsets[-1]), L)
    sample = np.random.default_rng(1).permutation(len(X))[:15]
    lam = 2 * 1.0 / len(X)
    initial = sum(reference_loss_grad(X, k, labels[X.offsets[k]:X.offsets[k + 1]],
                                      np.zeros(structure.n_features), A, L)[0] for k in sample)
    epoch = structure.log_loss_sgd(X, Y)

    def objective(e):  # one epoch from w = 0 on the sample: CRFsuite's epoch objective
        w = np.zeros(structure.n_features)
        total, _ = epoch(w, sample, e, lam)
        return total + 0.5 * lam * sample.size * float(w @ w)

    best, tried = calibrate_eta0(objective, initial, lam, calibration_eta=eta,
                                 calibration_rate=rate, calibration_candidates=candidates,
                                 calibration_max_trials=max_trials)
    values = {e: objective(e) for e in crfsuite_candidates(
        eta, rate, candidates, max_trials, lambda e: e * lam < 1 and objective(e) < initial)}
    assert [e for e, _ in tried] == pytest.approx(list(values))
    finite = {e: v for e, v in values.items() if e * lam < 1 and np.isfinite(v)}
    assert best == pytest.approx(min(finite, key=finite.get))
    assert dict(tried)[best] == pytest.approx(min(finite.values()), rel=1e-12)


def test_calibration_skips_candidates_that_would_flip_the_weights():
    seen = []

    def trial(e):
        seen.append(e)
        return 10.0 - e

    best, tried = calibrate_eta0(trial, 100.0, lam=0.3, calibration_eta=1.0,
                                 calibration_candidates=3)
    # 1, 2 (ok), 4 has η λ ≥ 1: not run, the search turns down: 0.5, 0.25, 0.125
    assert seen == [1.0, 2.0, 0.5, 0.25, 0.125]
    assert [e for e, _ in tried] == [1.0, 2.0, 4.0, 0.5, 0.25, 0.125]
    assert dict(tried)[4.0] == np.inf and best == 2.0


def test_learner_calibration_is_the_brute_force_minimum_on_its_sample(chunk):
    task, X, Y = chunk
    model = CRF(task, solver="sgd", batch_size=1, eta0="calibrate", calibration_samples=10,
                calibration_candidates=3, max_iter=1, c2=0.3).fit(X, Y)
    structure = task.structure_
    L, A = structure.n_labels, structure.n_attributes
    from latentstruct.tasks.label_factored import gold_labels
    labels = gold_labels(Y, int(X.offsets[-1]), L)
    # the learner's sample: the first calibration_samples of its calibration shuffle
    sample = np.random.default_rng([0, 2]).permutation(len(X))[:10]
    lam = 2 * 0.3 / len(X)
    support = np.zeros(structure.n_features, bool)
    support[model.support_] = True
    for e, value in model.eta0_trials_:
        w = np.zeros(structure.n_features)
        total, _ = reference_epoch(X, labels, sample, w, A, L, e, lam, 0, support)
        assert value == pytest.approx(total + 0.5 * lam * 10 * float(w @ w), rel=1e-9)
    assert model.eta0_ == min(model.eta0_trials_, key=lambda ev: ev[1])[0]
    assert model.lambda_ == pytest.approx(lam)


# --- stopping, parameters, mapping -------------------------------------------------------
def test_delta_stopping_ends_early_and_keeps_the_best_epoch(chunk):
    task, X, Y = chunk
    kw = dict(solver="sgd", batch_size=1, eta0=0.5, period=1)
    stopped = CRF(task, sgd_stopping="delta", delta=10.0, max_iter=20, **kw).fit(X, Y)
    assert stopped.n_iter_ == 2 and stopped.converged_  # any change is below delta=10
    runs = [CRF(task, max_iter=m, **kw).fit(X, Y) for m in (1, 2)]
    best = min(runs, key=lambda r: r.objective_curve_[-1])
    np.testing.assert_array_equal(stopped.coef_, best.coef_)
    assert stopped.objective_curve_ == runs[1].objective_curve_
    endless = CRF(task, sgd_stopping="max_iter", delta=10.0, max_iter=4, **kw).fit(X, Y)
    assert endless.n_iter_ == 4 and not endless.converged_


@pytest.mark.parametrize("kw, match", [
    (dict(calibration_rate=1.0), r"'calibration_rate' parameter of CRF must be a float in "
                                 r"the range \(1, inf\)\. Got 1\.0"),
    (dict(calibration_eta=-0.1), r"'calibration_eta' parameter of CRF must be a float in the "
                                 r"range \(0, inf\)\. Got -0\.1"),
    (dict(calibration_samples=0), r"'calibration_samples' parameter of CRF must be an int in "
                                  r"the range \[1, inf\)\. Got 0"),
    (dict(calibration_candidates=2.5), r"'calibration_candidates' parameter of CRF must be an "
                                       r"int"),
    (dict(calibration_max_trials=0), r"'calibration_max_trials' parameter of CRF must be an "
                                     r"int in the range \[1, "),
    (dict(eta0="calibrated"), r"'eta0' parameter of CRF must be a str among \{'auto', "
                              r"'calibrate'\} or a float"),
    (dict(sgd_stopping="early"), r"'sgd_stopping' parameter of CRF must be a str among "
                                 r"\{'max_iter', 'delta'\}"),
])
def test_a_bad_calibration_value_is_a_config_error(chunk, kw, match):
    task, X, Y = chunk
    with pytest.raises(ConfigError, match=match):
        CRF(task, solver="sgd", batch_size=1, eta0="calibrate").set_params(**kw).fit(X, Y)


def test_partial_fit_needs_a_number_for_a_calibrated_eta0(chunk):
    task, X, Y = chunk
    with pytest.raises(ConfigError, match="'calibrate' tunes it on the training set"):
        CRF(task, solver="sgd", eta0="calibrate", alpha=0.1).partial_fit(X, Y)


def test_crfsuite_l2sgd_maps_onto_crfsuites_schedule_and_passes_calibration_through():
    name, opts, _ = learner_options("l2sgd", {"calibration_eta": 0.4, "calibration_rate": 3,
                                              "calibration_samples": 50,
                                              "calibration_candidates": 4,
                                              "calibration_max_trials": 7})
    assert name == "crf"
    assert opts["solver"] == "sgd" and opts["batch_size"] == 1 and opts["eta0"] == "calibrate"
    assert opts["sgd_stopping"] == "delta" and opts["delta"] == 1e-6 and opts["period"] == 10
    assert (opts["calibration_eta"], opts["calibration_rate"], opts["calibration_samples"],
            opts["calibration_candidates"], opts["calibration_max_trials"]) == (0.4, 3, 50, 4, 7)
    _, defaults, _ = learner_options("l2sgd", {})
    assert (defaults["calibration_eta"], defaults["calibration_rate"],
            defaults["calibration_samples"], defaults["calibration_candidates"],
            defaults["calibration_max_trials"]) == (0.1, 2.0, 1000, 10, 20)
    assert learner_options("lbfgs", {})[1]["delta"] == 1e-5


XSEQ = [{"walk": 1, "shop": 0.5}, {"walk": 1}, {"walk": 1, "clean": 0.5},
        {"shop": 0.5, "clean": 0.5}, {"walk": 0.5, "clean": 1}, {"clean": 1, "shop": 0.1}]
YSEQ = ["sunny", "sunny", "sunny", "rainy", "rainy", "rainy"]


def test_crfsuite_crf_calibrates_with_the_parameters_given():
    crf = CrfsuiteCRF(algorithm="l2sgd", c2=0.5, calibration_eta=0.05, calibration_rate=4.0,
                      calibration_candidates=2, calibration_max_trials=5, max_iterations=3)
    crf.fit([XSEQ] * 4, [YSEQ] * 4)
    learner = crf._model.learner_
    tried = [e for e, _ in learner.eta0_trials_]
    assert tried[0] == 0.05 and len(tried) <= 4  # max_trials=5: at most 4 trials
    powers = np.log(np.array(tried) / 0.05) / np.log(4.0)  # candidates 0.05 * 4^k
    np.testing.assert_allclose(powers, np.round(powers), atol=1e-12)
    assert learner.eta0_ in tried and learner.batch_size == 1
    assert crf.predict([XSEQ]) == [YSEQ]


def test_crfsuite_crf_refuses_a_bad_calibration_value():
    with pytest.raises(ConfigError, match=r"'calibration_rate' parameter of CRF must be a "
                                          r"float in the range \(1, inf\)"):
        CrfsuiteCRF(algorithm="l2sgd", calibration_rate=0.5).fit([XSEQ], [YSEQ])


def test_a_delta_stopped_run_resumes_to_the_same_model(chunk, tmp_path):
    from latentstruct.learners.checkpoint import Checkpoint

    task, X, Y = chunk
    make = lambda: CRF(task, solver="sgd", batch_size=1, eta0="calibrate", max_iter=30,  # noqa: E731
                       sgd_stopping="delta", period=2, delta=0.02)
    plain = make().fit(X, Y)
    assert plain.converged_ and 3 <= plain.n_iter_ < 30
    path = tmp_path / "run.ckpt.npz"

    class Interrupt(Exception):
        pass

    def stop(it, _):
        if it == 2:
            raise Interrupt

    with pytest.raises(Interrupt):
        make().fit(X, Y, checkpoint=Checkpoint(path, on_save=stop))
    resumed = make().fit(X, Y, resume=path, checkpoint=path)
    np.testing.assert_array_equal(resumed.coef_, plain.coef_)
    assert resumed.objective_curve_ == plain.objective_curve_
    assert (resumed.n_iter_, resumed.converged_) == (plain.n_iter_, True)
    again = make().fit(X, Y, resume=path)  # the stopped run's last checkpoint: nothing to add
    np.testing.assert_array_equal(again.coef_, plain.coef_)
    assert again.n_iter_ == plain.n_iter_
