"""``--n-jobs``, ``--backend`` and ``--scheduler``: every backend trains the serial model from
the command line, and bad combinations are one line and exit 2 before any data is read.

Dask and Ray come with the ``[distributed]`` extra; their tests skip where it is not
installed and fail instead under ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from latentstruct.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def coef(path):
    with np.load(path) as npz:
        return npz["coef_"].copy()


def need(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        message = f"{', '.join(missing)} not installed (pip install 'latentstruct[distributed]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


TRAIN = ("train", "chunk", "--option", "C=1.0", "--option", "max_iter=6", "--quiet")


@pytest.fixture
def serial_model(tmp_path, tiny_chunk_file, capsys):
    path = tmp_path / "serial.npz"
    assert run(capsys, *TRAIN, "--train", tiny_chunk_file, "--model", path)[0] == 0
    return path


@pytest.mark.parametrize("flags", [
    ("--n-jobs", "2"),
    ("--backend", "threads"),
    ("--backend", "processes", "--n-jobs", "2"),
    ("--backend", "dask", "--n-jobs", "2"),
    ("--backend", "ray", "--n-jobs", "2"),
], ids=["threads-2", "threads-all", "processes", "dask-local", "ray-local"])
@pytest.mark.slow
def test_each_backend_trains_the_serial_model(flags, serial_model, tmp_path, tiny_chunk_file,
                                              capsys):
    if "dask" in flags:
        need("dask", "distributed")
    if "ray" in flags:
        need("ray")
    path = tmp_path / "other.npz"
    code, _, err = run(capsys, *TRAIN, "--train", tiny_chunk_file, "--model", path, *flags)
    assert code == 0, err
    np.testing.assert_allclose(coef(path), coef(serial_model), rtol=0, atol=1e-8)


@pytest.mark.slow
def test_evaluate_and_predict_take_the_same_flags(serial_model, tiny_chunk_file, tmp_path,
                                                  capsys):
    code, out1, _ = run(capsys, "evaluate", "--model", serial_model, "--test", tiny_chunk_file)
    assert code == 0
    code, out2, err = run(capsys, "evaluate", "--model", serial_model, "--test",
                          tiny_chunk_file, "--backend", "processes", "--n-jobs", "2")
    assert code == 0, err
    assert out1 == out2
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    assert run(capsys, "predict", "--model", serial_model, "--input", tiny_chunk_file,
               "--output", a)[0] == 0
    assert run(capsys, "predict", "--model", serial_model, "--input", tiny_chunk_file,
               "--output", b, "--n-jobs", "2")[0] == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("flags, fragment", [
    (("--n-jobs", "0"), "--n-jobs must be a number of workers in [1, 1024] or -1"),
    (("--n-jobs", "-3"), "--n-jobs must be a number of workers in [1, 1024] or -1"),
    (("--scheduler", "tcp://127.0.0.1:8786"), "needs --backend dask or --backend ray"),
    (("--backend", "processes", "--scheduler", "local"), "needs --backend dask or --backend ray"),
    (("--n-jobs", "2", "--option", "n_jobs=2"), "give --n-jobs only"),
    (("--learner", "sgd-ssvm", "--n-jobs", "2"), "cannot run in parallel"),
])
def test_bad_combinations_exit_2_before_reading_data(flags, fragment, tmp_path, capsys):
    missing = tmp_path / "never-read.txt"  # reading it would be a different error
    code, out, err = run(capsys, "train", "chunk", "--train", missing, "--model",
                         tmp_path / "m.npz", *flags)
    assert code == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.npz").exists()


def test_a_backend_without_its_extra_names_the_extra(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("ray", "distributed") else real(name, *a))
    for backend in ("dask", "ray"):
        code, _, err = run(capsys, "train", "chunk", "--train", tmp_path / "x.txt", "--model",
                           tmp_path / "m.npz", "--backend", backend)
        assert code == 2
        assert "pip install 'latentstruct[distributed]'" in err


@pytest.mark.slow
def test_an_unreachable_dask_scheduler_is_one_line_before_reading_data(tmp_path, capsys):
    need("dask", "distributed")
    code, _, err = run(capsys, *TRAIN, "--train", tmp_path / "never-read.txt", "--model",
                       tmp_path / "m.npz", "--backend", "dask", "--scheduler",
                       "tcp://127.0.0.1:9")  # the discard port: nothing listens
    assert code == 2
    assert "cannot reach a Dask scheduler" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.npz").exists()


def test_n_jobs_1_is_what_a_serial_learner_does(tmp_path, tiny_chunk_file, capsys):
    """``--n-jobs 1`` with a learner that has no ``n_jobs`` (it updates after every
    example) trains it as it is: the model equals the one trained without the flag (it
    raised a TypeError from the learner's constructor)."""
    args = ("train", "chunk", "--learner", "sgd-ssvm", "--option", "n_epochs=2", "--quiet",
            "--train", tiny_chunk_file)
    assert run(capsys, *args, "--model", tmp_path / "a.npz")[0] == 0
    code, _, err = run(capsys, *args, "--model", tmp_path / "b.npz", "--n-jobs", "1")
    assert code == 0, err
    np.testing.assert_array_equal(coef(tmp_path / "a.npz"), coef(tmp_path / "b.npz"))
    code, _, err = run(capsys, "evaluate", "--model", tmp_path / "b.npz", "--test",
                       tiny_chunk_file, "--n-jobs", "1")
    assert code == 0, err
