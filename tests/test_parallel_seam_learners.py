"""The hidden-variable reranker's gradient and DISTRO's decodes go through the parallel seam
(``latentstruct.parallel``): with 2 jobs on threads, loky processes, a loopback Dask
``LocalCluster`` and a local Ray instance they learn the serial model (to 1e-8), and the
data a fit keeps constant reaches the workers once per fit.

Dask and Ray come with the ``[distributed]`` extra; their tests skip where it is not
installed, and fail instead under ``CI=true``.  The servers listen on 127.0.0.1 only.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from joblib import parallel_config

from latentstruct.parallel import blocks
from latentstruct.data.dependency.kbest_synthetic import synthetic_kbest
from latentstruct.data.progress import show_progress
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import DISTRO, HiddenVariableReranker
from latentstruct.learners.checkpoint import Checkpoint
from latentstruct.learners.ssvm.distro_data import argmax_chunk as _argmax_chunk, PartScores as _PartScores
from latentstruct.parallel import fit_session
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.rerank import RerankTask, kbest_dataset

LABELS = ["B-A", "I-A", "O", "B-B", "I-B"]


@pytest.fixture
def writes(monkeypatch):
    """Paths of the shared-data files written (loky: one per shared block)."""
    paths = []
    real = blocks.write_payload
    monkeypatch.setattr(blocks, "write_payload",
                        lambda path, payload: (paths.append(path), real(path, payload)))
    return paths


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn()


# ------------------------------------------------------------------------------- problems
@pytest.fixture(scope="module")
def rerank():
    """40 synthetic k-best lists (3 gradient blocks) with 2 hidden values per class."""
    header, sents = synthetic_kbest(40, 4, random_state=5)
    ds = kbest_dataset(header, sents)
    task = RerankTask(domain="pos", n_hidden=2, hash_bits=10).fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def make_reranker(task, solver, n_jobs):
    if solver == "lbfgs":
        return HiddenVariableReranker(task, solver="lbfgs", max_iter=5, alpha=1e-3,
                                      random_state=3, n_jobs=n_jobs)
    return HiddenVariableReranker(task, solver="sgd", n_epochs=2, tol=None, random_state=3,
                                  n_jobs=n_jobs)


@pytest.fixture(scope="module")
def serial_rerankers(rerank):
    task, X, Y = rerank
    return {s: quiet(lambda s=s: make_reranker(task, s, 1).fit(X, Y)) for s in ("lbfgs", "sgd")}


def chunk_file(path, seed, n_sent=14, max_len=5, vocab=7):
    """Random sentences whose labels follow the words (so that learning has signal)."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_sent):
        for _ in range(int(rng.integers(1, max_len + 1))):
            k = int(rng.integers(vocab))
            label = LABELS[k % len(LABELS)] if rng.random() < 0.8 else LABELS[rng.integers(5)]
            lines.append(f"w{k} P{k % 3} {label}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    path = chunk_file(tmp_path_factory.mktemp("seam") / "train.txt", 4)
    task = ChunkTask(window=1, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def make_distro(task, n_jobs):
    # d < L: random label matrices, so two restarts; fixed step sizes keep the fit short
    return DISTRO(task, n_components=2, n_iter=2, weight_epochs=1, label_epochs=1,
                  batch_size=4, eta0=0.1, label_eta0=0.05, n_restarts=2, random_state=1,
                  n_jobs=n_jobs)


@pytest.fixture(scope="module")
def serial_distro(chunk):
    task, X, Y = chunk
    return make_distro(task, 1).fit(X, Y)


def assert_same_reranker(serial, other):
    np.testing.assert_allclose(other.coef_, serial.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(other.loss_curve_, serial.loss_curve_, rtol=0, atol=1e-8)
    assert other.n_iter_ == serial.n_iter_ and other.converged_ == serial.converged_


def assert_same_distro(serial, other):
    np.testing.assert_allclose(other.coef_, serial.coef_, rtol=0, atol=1e-8)
    for name in ("objective_curve_", "restart_objectives_"):
        a, b = np.asarray(getattr(serial, name)), np.asarray(getattr(other, name))
        assert a.shape == b.shape, name
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-8, err_msg=name)
    assert other.restart_ == serial.restart_
    assert other.n_reverted_phases_ == serial.n_reverted_phases_
    assert other.n_inexact_decodes_ == serial.n_inexact_decodes_


# ---------------------------------------------------------------------- the reranker
@pytest.mark.slow
@pytest.mark.parametrize("solver", ["lbfgs", "sgd"])
def test_reranker_learns_the_serial_model_on_each_backend(backend, solver, rerank,
                                                          serial_rerankers, writes):
    """L-BFGS: every objective pass runs on the backend, the sentences sent once per fit;
    SGD updates after every sentence and stays serial whatever n_jobs and the backend.
    Predictions run on the backend too (in the fit's session: one pool, as Ray starts a
    pool's processes anew for each)."""
    task, X, Y = rerank
    serial = serial_rerankers[solver]
    with parallel_config(backend=backend), fit_session():
        other = quiet(lambda: make_reranker(task, solver, 2).fit(X, Y))
        assert len(writes) == (1 if backend == "loky" and solver == "lbfgs" else 0)
        if solver == "lbfgs":
            log_proba = other.predict_log_proba(X)
            hidden = other.decode_hidden(X)  # predicts, then decodes
    assert serial.n_iter_ >= 2
    assert_same_reranker(serial, other)
    if solver == "sgd":
        return
    for a, b in zip(serial.predict_log_proba(X), log_proba, strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-8)
    for a, b in zip(serial.decode_hidden(X), hidden, strict=True):
        np.testing.assert_array_equal(b.structure, a.structure)
        assert b.score == pytest.approx(a.score, abs=1e-8)


def test_reranker_gradient_does_not_depend_on_the_chunks(rerank):
    """Blocks of 16 sentences fix the order of the sums: 1 job, 3 threads and the many small
    chunks of a pass with progress bars give the same J and gradient bit for bit, and the
    blocks add up to the sum over the sentences one by one."""
    task, X, Y = rerank
    w = np.random.default_rng(0).normal(size=task.n_features) * 0.3
    J1, g1 = HiddenVariableReranker(task, alpha=0.01).objective(X, Y, w)
    J3, g3 = HiddenVariableReranker(task, alpha=0.01, n_jobs=3).objective(X, Y, w)
    with show_progress():
        Jp, gp = HiddenVariableReranker(task, alpha=0.01, n_jobs=2).objective(X, Y, w)
    assert J1 == J3 == Jp
    np.testing.assert_array_equal(g3, g1)
    np.testing.assert_array_equal(gp, g1)
    # the same objective, one sentence at a time
    parts = [HiddenVariableReranker(task, alpha=0.0).objective(task.structure_.subset(X, [i]), [Y[i]], w)
             for i in range(len(Y))]
    assert J1 == pytest.approx(np.mean([p[0] for p in parts]) + 0.005 * w @ w, abs=1e-12)
    np.testing.assert_allclose(g1, np.mean([p[1] for p in parts], axis=0) + 0.01 * w,
                               rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------ DISTRO
@pytest.mark.slow
def test_distro_learns_the_serial_model_on_each_backend(backend, chunk, serial_distro, writes):
    task, X, Y = chunk
    with parallel_config(backend=backend), fit_session():  # fit and predict: one pool
        other = make_distro(task, 2).fit(X, Y)
        predicted = other.predict(X)
    assert len(writes) == (1 if backend == "loky" else 0)  # the task, once
    assert len(serial_distro.objective_curve_) >= 3
    assert_same_distro(serial_distro, other)
    for a, b in zip(serial_distro.predict(X), predicted, strict=True):
        np.testing.assert_array_equal(b, a)


def test_distro_chunks_carry_only_their_own_part_scores(chunk):
    task, X, _ = chunk
    batch = task.structure_.label_factored_batch(X)
    offsets = np.asarray(batch.offsets, dtype=np.int64)
    rng = np.random.default_rng(2)
    unary = rng.normal(size=(int(offsets[-1]), task.n_labels))
    y = rng.integers(task.n_labels, size=int(offsets[-1]))
    scores = _PartScores(offsets, unary, y)
    n = len(scores)
    a, b = 3, 7
    part = scores[a:b]
    assert len(part) == b - a and part.offsets[0] == 0
    np.testing.assert_array_equal(part.unary, unary[offsets[a]:offsets[b]])
    np.testing.assert_array_equal(part.y, y[offsets[a]:offsets[b]])
    assert len(pickle.dumps(part)) < 0.6 * len(pickle.dumps(scores))
    # chunks of any size decode to the whole batch's labelling
    L = task.n_labels
    chain = (rng.normal(size=(L, L)), rng.normal(size=L), rng.normal(size=L))
    whole = task.structure_.argmax_from_part_scores_batch(offsets, unary, *chain, Y=y)
    pieces = [_argmax_chunk(s, min(n, s + 4), task.structure_, scores, *chain)[0] for s in range(0, n, 4)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)


def test_distro_n_jobs_may_change_on_resume(chunk, serial_distro, tmp_path):
    task, X, Y = chunk

    class Interrupt(Exception):
        pass

    def stop(iteration, _):
        if iteration == 2:
            raise Interrupt

    path = tmp_path / "distro.ckpt.npz"
    with pytest.raises(Interrupt):
        make_distro(task, 1).fit(X, Y, checkpoint=Checkpoint(path, on_save=stop))
    resumed = make_distro(task, 2).fit(X, Y, resume=path)
    assert_same_distro(serial_distro, resumed)


@pytest.mark.slow
def test_reranker_n_jobs_may_change_on_resume(rerank, serial_rerankers, tmp_path):
    task, X, Y = rerank

    class Interrupt(Exception):
        pass

    def stop(iteration, _):
        if iteration == 1:
            raise Interrupt

    path = tmp_path / "rerank.ckpt.npz"
    with pytest.raises(Interrupt):
        quiet(lambda: make_reranker(task, "sgd", 1).fit(X, Y, checkpoint=Checkpoint(
            path, on_save=stop)))
    resumed = quiet(lambda: make_reranker(task, "sgd", 2).fit(X, Y, resume=path))
    assert_same_reranker(serial_rerankers["sgd"], resumed)
