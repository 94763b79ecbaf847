"""``StructuredPerceptron(epsilon=...)``: CRFsuite's averaged perceptron (``ap``) stop.

CRFsuite's ``ap`` is ``StructuredPerceptron(average=True, max_iter=100, epsilon=0.0)`` (the
perceptron's docstring says what differs: the average's scale S / (S + 1) and the
generator).  Its stop is ``loss / N < epsilon`` with loss the summed ratio of wrong labels
per sequence; the default ``epsilon=None`` keeps the perceptron's own stop after a
mistake-free epoch."""

import warnings

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.learners import StructuredPerceptron
from latentstruct.tasks import ChunkTask
from conftest import random_chunk_file


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def fitted(path, **params):
    task = ChunkTask(**params)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), list(task.encode_targets(ds.targets))


@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    path = random_chunk_file(tmp_path_factory.mktemp("ap") / "t.txt", 3, n_sent=24, vocab=7)
    return fitted(path, window=1, affix_length=1)


@pytest.fixture(scope="module")
def separable(tmp_path_factory):
    labels = ["B-A", "I-A", "B-B", "O"]
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(30):
        for _ in range(int(rng.integers(1, 6))):
            k = int(rng.integers(6))
            lines.append(f"w{k} P{k % 3} {labels[k % 4]}")
        lines.append("")
    path = tmp_path_factory.mktemp("sep") / "t.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return fitted(path, window=0, affix_length=1)


def test_epsilon_zero_never_stops_early_and_none_keeps_todays_stop(separable):
    task, X, Y = separable
    today = quiet(lambda: StructuredPerceptron(task, max_iter=12).fit(X, Y))
    assert today.get_params()["epsilon"] is None
    assert today.n_iter_ < 12 and today.objective_curve_[-1] == 0
    ap = quiet(lambda: StructuredPerceptron(task, max_iter=12, epsilon=0.0).fit(X, Y))
    assert ap.n_iter_ == 12 and ap.converged_ and ap.t_ == 12 * len(X)
    np.testing.assert_array_equal(ap.objective_curve_[:today.n_iter_], today.objective_curve_)
    # the later epochs change no weight, but move the average towards them
    assert np.abs(ap.coef_ - today.coef_).max() > 1e-6
    assert ap.score(X, Y) == 1.0


def test_epsilon_is_compared_with_the_mean_ratio_of_wrong_labels(chunk):
    task, X, Y = chunk
    # the first epoch's mistakes, example by example (one call each, in the given order)
    one = StructuredPerceptron(task, shuffle=False)
    for i in range(len(X)):
        quiet(lambda i=i: one.partial_fit(task.subset(X, [i]), Y[i:i + 1]))
    losses = np.array(one.objective_curve_)
    sizes = np.array([len(y) for y in Y])
    rate = float(np.mean(losses / sizes))
    assert 0 < rate < float(np.mean(losses))  # per token, not per sentence
    stops = quiet(lambda: StructuredPerceptron(task, shuffle=False, max_iter=5,
                                               epsilon=rate + 1e-9).fit(X, Y))
    assert stops.n_iter_ == 1
    goes_on = quiet(lambda: StructuredPerceptron(task, shuffle=False, max_iter=5,
                                                 epsilon=rate - 1e-9).fit(X, Y))
    assert goes_on.n_iter_ > 1


def test_a_negative_epsilon_is_refused(chunk):
    task, X, Y = chunk
    with pytest.raises(ConfigError, match="'epsilon' parameter of StructuredPerceptron"):
        StructuredPerceptron(task, epsilon=-0.1).fit(X, Y)
