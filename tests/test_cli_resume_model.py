"""``latentstruct train TASK --train NEW --model OUT --resume MODEL``: a model of an online
learner continues training on new data (``partial_fit`` passes), the same model Python's
``partial_fit`` gives; a checkpoint given to ``--resume`` still resumes its run; the errors
(a model that cannot continue, another task, another learner, options that would change
the model, an output over the input) exit 2 with one line and write nothing."""

import numpy as np
import pytest

from conftest import random_chunk_file
from latentstruct.cli import main
from latentstruct.learners.persistence import load_trained

TSV_A = ("italy\tא י ט ל י ה\t3\nrome\tר ו מ א\t2\nparis\tפ ר י ס\t4\n"
         "london\tל ו נ ד ו ן\t1\nberlin\tב ר ל י ן\t2\nmadrid\tמ ד ר י ד\t2\n")
TSV_B = ("vienna\tו י נ ה\t3\nprague\tפ ר א ג\t2\nathens\tא ת ו נ ה\t4\n"
         "lisbon\tל י ס ב ו ן\t1\noslo\tא ו ס ל ו\t2\n")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path):
    return {"a": random_chunk_file(tmp_path / "a.txt", 1, vocab=7),
            "b": random_chunk_file(tmp_path / "b.txt", 2, vocab=7)}


def train(capsys, tmp_path, name, learner, *options, data_file):
    model = tmp_path / name
    argv = ["train", "chunk", "--train", data_file, "--model", model, "--learner", learner,
            "--quiet"]
    for opt in options:
        argv += ["--option", opt]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    return model


def python_continuation(model, new_data, passes, **params):
    """What the CLI should give: the model loaded, its task featurising the new data, and
    ``passes`` partial_fit calls."""
    task, learner, _ = load_trained(model)
    learner.set_params(**params)
    ds = task.read(new_data, split="train")
    X, Y = task.featurize(ds), task.encode_targets(ds.targets)
    for _ in range(passes):
        learner.partial_fit(X, Y)
    return learner


@pytest.mark.parametrize("learner, first, passes", [
    ("perceptron", "max_iter=2", []),
    ("perceptron", "max_iter=2", ["max_iter=3", "shuffle=false"]),
    ("sgd-ssvm", "n_epochs=2", ["n_epochs=2"]),
    ("pa", "max_iter=2", ["max_iter=2"]),
    ("arow", "max_iter=2", []),
])
def test_a_model_continues_on_new_data_as_partial_fit_does(tmp_path, capsys, data, learner,
                                                           first, passes):
    m0 = train(capsys, tmp_path, "m0.npz", learner, first, data_file=data["a"])
    m1 = tmp_path / "m1.npz"
    argv = ["train", "chunk", "--train", data["b"], "--model", m1, "--resume", m0]
    for opt in passes:
        argv += ["--option", opt]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    n = int(passes[0].split("=")[1]) if passes else 1
    assert f"continued {learner} model {m0} on 12 chunk examples" in err
    assert f"({n} pass{'es' * (n != 1)}" in err and f"{2 + n} passes in all" in err
    _, cli, meta = load_trained(m1)
    params = {"shuffle": False} if "shuffle=false" in passes else {}
    expected = python_continuation(m0, data["b"], n, **params)
    np.testing.assert_array_equal(cli.coef_, expected.coef_)
    assert cli.n_iter_ == expected.n_iter_ == 2 + n
    assert cli.t_ == expected.t_ > load_trained(m0)[1].t_
    assert not np.array_equal(cli.coef_, load_trained(m0)[1].coef_)  # it learned
    assert meta["extra"]["resumed_from"] == {
        "model": str(m0), "n_iter": 2, "passes": n,
        "train_digest": load_trained(m0)[2]["extra"]["train_digest"]}
    assert meta["extra"]["n_train"] == 12
    # the continued model continues too, and evaluates
    m2 = tmp_path / "m2.npz"
    assert run(capsys, "train", "chunk", "--train", data["a"], "--model", m2, "--resume", m1,
               "--quiet")[0] == 0
    assert load_trained(m2)[1].n_iter_ == 3 + n
    code, out, _ = run(capsys, "evaluate", "--model", m2, "--test", data["a"])
    assert code == 0 and '"f1"' in out


def test_latent_pa_model_continues_on_new_translit_pairs(tmp_path, capsys):
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text(TSV_A, encoding="utf-8")
    b.write_text(TSV_B, encoding="utf-8")
    m0, m1 = tmp_path / "p0.npz", tmp_path / "p1.npz"
    assert run(capsys, "train", "translit", "--train", a, "--model", m0, "--learner",
               "latent-pa", "--option", "neg_ratio=0.5", "--option", "average=true",
               "--quiet")[0] == 0
    code, _, err = run(capsys, "train", "translit", "--train", b, "--model", m1, "--resume", m0,
                       "--option", "max_iter=2")
    assert code == 0, err
    _, cli, _ = load_trained(m1)
    expected = python_continuation(m0, b, 2)
    np.testing.assert_array_equal(cli.coef_, expected.coef_)
    assert cli.n_steps_ == cli.t_ == expected.t_
    assert len(cli.accuracy_curve_) == cli.n_iter_ == load_trained(m0)[1].n_iter_ + 2


def test_a_checkpoint_still_resumes_its_run(tmp_path, capsys, data):
    full, ck, again = tmp_path / "full.npz", tmp_path / "run.ckpt.npz", tmp_path / "again.npz"
    assert run(capsys, "train", "chunk", "--train", data["a"], "--model", full, "--learner",
               "perceptron", "--option", "max_iter=3", "--checkpoint", ck, "--quiet")[0] == 0
    code, _, err = run(capsys, "train", "chunk", "--train", data["a"], "--model", again,
                       "--learner", "perceptron", "--option", "max_iter=3", "--resume", ck,
                       "--quiet")
    assert code == 0, err
    np.testing.assert_array_equal(load_trained(again)[1].coef_, load_trained(full)[1].coef_)


@pytest.mark.parametrize("extra, needle", [
    (["--learner", "sgd-ssvm"], "is a model of learner 'perceptron', but --learner says "
                                "'sgd-ssvm'; drop --learner"),
    (["--option", "max_iter=0"], "The 'max_iter' parameter of StructuredPerceptron must be an "
                                  "int in the range [1, "),
    (["--option", "average=false"], "option 'average' cannot change when --resume"),
    (["--option", "window=2"], "option 'window' cannot change when --resume"),
    (["--option", "C=2"], "unknown option 'C' for a 'perceptron' model"),
    (["--seed", "3"], "--seed cannot be combined with --resume MODEL"),
])
def test_refused_command_lines_exit_2_and_write_nothing(tmp_path, capsys, data, extra, needle):
    m0 = train(capsys, tmp_path, "m0.npz", "perceptron", data_file=data["a"])
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run(capsys, "train", "chunk", "--train", data["b"], "--model",
                       tmp_path / "out.npz", "--resume", m0, *extra)
    assert code == 2 and needle in err, err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_models_that_cannot_continue(tmp_path, capsys, data):
    ssvm = train(capsys, tmp_path, "s.npz", "ssvm", data_file=data["a"])
    out = tmp_path / "out.npz"
    code, _, err = run(capsys, "train", "chunk", "--train", data["b"], "--model", out,
                       "--resume", ssvm)
    assert code == 2
    assert (f"--resume {ssvm} is a model of learner 'ssvm', which cannot continue training; "
            f"online learners: arow, crf with --option solver=sgd, latent-pa, pa, perceptron, "
            f"sgd-ssvm") in err
    perc = train(capsys, tmp_path, "p.npz", "perceptron", data_file=data["a"])
    code, _, err = run(capsys, "train", "pos", "--train", data["b"], "--model", out,
                       "--resume", perc)
    assert code == 2 and f"--resume {perc} is a model of task 'chunk', not 'pos'" in err
    # the path rule: --model may not replace the --resume file it reads
    code, _, err = run(capsys, "train", "chunk", "--train", data["b"], "--model", perc,
                       "--resume", perc)
    assert code == 2 and "is the same file as --resume" in err
    bad = tmp_path / "bad.npz"
    bad.write_bytes(perc.read_bytes()[:200])
    code, _, err = run(capsys, "train", "chunk", "--train", data["b"], "--model", out,
                       "--resume", bad)
    assert code == 2 and str(bad) in err
    assert not out.exists()
