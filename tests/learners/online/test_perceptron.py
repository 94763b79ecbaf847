"""The averaged structured perceptron (Collins 2002): training to zero mistakes, the
averaging trick against an explicit average, reproducibility, parameter checks and the
inference checks."""

import numpy as np
import pytest
from sklearn.base import clone

from latentstruct.exceptions import ConfigError, InexactInferenceWarning, InferenceError
from latentstruct.inference.result import TIME_LIMIT, DecodeResult
from latentstruct.learners.base import LEARNERS, valid_learners
from latentstruct.learners.online.perceptron import StructuredPerceptron
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks import ChainStructure, ChunkTask, GrammaticalityTask, TransliterationTask


@pytest.fixture
def tiny(tiny_chunk_file):
    task = ChunkTask()
    ds = task.read(tiny_chunk_file)
    task.fit(ds)
    return task, task.featurize(ds), task.encode_targets(ds.targets)


def explicit_average(task, X, Y, max_iter, random_state):
    """The perceptron written out naively: dense updates, every step's weights stored."""
    task = task.structure()
    rng = np.random.default_rng(random_state)
    w = np.zeros(task.n_features)
    after_each_step = []
    for _ in range(max_iter):
        mistakes = 0
        for i in rng.permutation(len(X)):
            y_hat = task.argmax(X[int(i)], w).structure
            if task.loss(Y[int(i)], y_hat) > 0:
                mistakes += 1
                w = w + (task.joint_feature(X[int(i)], Y[int(i)]).to_dense(task.n_features)
                         - task.joint_feature(X[int(i)], y_hat).to_dense(task.n_features))
            after_each_step.append(w.copy())
        if mistakes == 0:
            break
    return np.mean(after_each_step, axis=0), w, len(after_each_step)


def test_registered_and_sklearn_params():
    assert LEARNERS["perceptron"] is StructuredPerceptron
    p = StructuredPerceptron(max_iter=3, average=False, random_state=5)
    assert p.get_params()["max_iter"] == 3 and p.get_params()["average"] is False
    assert clone(p).get_params() == p.get_params()
    # it needs labelled structures: valid for chunking, not for latent binary tasks
    assert "perceptron" in valid_learners(ChunkTask)
    assert "perceptron" not in valid_learners(GrammaticalityTask)
    assert "perceptron" not in valid_learners(TransliterationTask)


def test_reaches_zero_training_mistakes(tiny):
    task, X, Y = tiny
    m = StructuredPerceptron(task, max_iter=50)
    assert m.fit(X, Y) is m
    assert m.objective_curve_[-1] == 0 and m.objective_curve_[0] > 0
    assert all(v > 0 for v in m.objective_curve_[:-1])  # stops after the first clean epoch
    assert m.n_iter_ == len(m.objective_curve_) < 50
    assert m.n_updates_ >= 1 and m.fit_time_ >= 0 and m.converged_
    assert m.n_inexact_decodes_ == 0
    assert m.coef_.shape == (task.n_features,)
    last = StructuredPerceptron(task, max_iter=50, average=False).fit(X, Y)
    for y, p in zip(Y, last.predict(X)):
        np.testing.assert_array_equal(y, p)
    assert m.score(X, Y) == 1.0


@pytest.mark.parametrize("max_iter, random_state", [(1, 0), (2, 3), (50, 7)])
def test_average_equals_explicit_average_of_every_step(tiny, max_iter, random_state):
    task, X, Y = tiny
    avg, last, n_steps = explicit_average(task, X, Y, max_iter, random_state)
    m = StructuredPerceptron(task, max_iter=max_iter, random_state=random_state).fit(X, Y)
    assert m.n_iter_ * len(X) == n_steps
    np.testing.assert_allclose(m.coef_, avg, rtol=0, atol=1e-12)
    m_last = StructuredPerceptron(task, max_iter=max_iter, average=False,
                                  random_state=random_state).fit(X, Y)
    np.testing.assert_allclose(m_last.coef_, last, rtol=0, atol=1e-12)


def test_same_random_state_same_weights(tiny):
    task, X, Y = tiny
    a = StructuredPerceptron(task, max_iter=2, random_state=11).fit(X, Y)
    b = StructuredPerceptron(task, max_iter=2, random_state=11).fit(X, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.objective_curve_ == b.objective_curve_


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True])
def test_bad_max_iter(tiny, bad):
    task, X, Y = tiny
    with pytest.raises(ConfigError, match="max_iter"):
        StructuredPerceptron(task, max_iter=bad).fit(X, Y)


def test_bad_inputs(tiny):
    task, X, Y = tiny
    with pytest.raises(ConfigError, match="average"):
        StructuredPerceptron(task, average="yes").fit(X, Y)
    with pytest.raises(ConfigError, match="examples"):
        StructuredPerceptron(task).fit(X, Y[:-1])
    with pytest.raises(ConfigError, match=r"needs a structure \(or a fitted task\) to train; got None"):
        StructuredPerceptron(None).fit(X, Y)


class WrongScoreChain(ChainStructure):
    """Reports a score that is not w . Phi(x, y_hat)."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        res = super().argmax(x, w, y_true, random_state=random_state)
        return DecodeResult(res.structure, res.score + 0.5, res.status)


class InexactChain(ChainStructure):
    """Returns the Viterbi structure, but says the search stopped at a time limit."""

    def argmax(self, x, w, y_true=None, *, random_state=None):
        res = super().argmax(x, w, y_true, random_state=random_state)
        return DecodeResult(res.structure, res.score, TIME_LIMIT)


class WrongScoreChunkTask(ChunkTask):
    structure_class = WrongScoreChain


class InexactChunkTask(ChunkTask):
    structure_class = InexactChain


@pytest.mark.parametrize("cls, message", [(WrongScoreChunkTask, "reports the score"),
                                          (InexactChunkTask, "not 'exact'")])
def test_wrong_decoder_raises_inference_error(tiny_chunk_file, cls, message):
    task = cls()
    ds = task.read(tiny_chunk_file)
    task.fit(ds)
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    with pytest.raises(InferenceError, match=message):
        StructuredPerceptron(task, max_iter=5).fit(X, Y)
    # the check can be switched off: training runs as usual, non-exact decodes are counted
    # and warned about once
    if cls is InexactChunkTask:
        with pytest.warns(InexactInferenceWarning, match="not exact"):
            m = StructuredPerceptron(task, max_iter=50, check_inference=False).fit(X, Y)
        assert m.n_inexact_decodes_ == m.n_iter_ * len(X)
    else:
        m = StructuredPerceptron(task, max_iter=50, check_inference=False).fit(X, Y)
    assert m.objective_curve_[-1] == 0


def test_model_file_round_trip(tiny, tiny_chunk_file, tmp_path):
    task, X, Y = tiny
    m = StructuredPerceptron(task, max_iter=3, random_state=1).fit(X, Y)
    path = tmp_path / "p.npz"
    save_trained(path, task, m)
    task2, m2, meta = load_trained(path)
    assert meta["learner"] == "perceptron" and isinstance(m2, StructuredPerceptron)
    np.testing.assert_array_equal(m2.coef_, m.coef_)
    assert m2.objective_curve_ == m.objective_curve_ and m2.n_iter_ == m.n_iter_
    X2 = task2.featurize(task2.read(tiny_chunk_file))
    for a, b in zip(m.predict(X), m2.predict(X2)):
        np.testing.assert_array_equal(a, b)
