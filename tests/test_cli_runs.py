"""The command line as a user meets it: option listings, run configurations that replay a
run, seeds, duplicate options, one-line warnings and OS errors, and a light `--help`."""

import json
import subprocess
import sys

import numpy as np
import pytest

from latentstruct.cli import main
from latentstruct.learners import LEARNERS


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def arrays(path):
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files if not k.startswith("metadata")}


def assert_same_model(a, b):
    A, B = arrays(a), arrays(b)
    assert sorted(A) == sorted(B)
    for k in A:
        np.testing.assert_array_equal(A[k], B[k], err_msg=k)


# ------------------------------------------------------------------------------ options
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_options_lists_every_learner_option_with_default_and_meaning(capsys, learner):
    from latentstruct.learners import get_learner_class
    from latentstruct.options import parameter_docs

    cls = get_learner_class(learner)
    task = "translit" if "latent-binary" in str(cls.required_capabilities(cls().get_params())) \
        else "chunk"
    if learner == "hidden-reranker":
        task = "rerank"
    code, out, err = run(capsys, "options", task, "--learner", learner)
    if code != 0:  # the pair is incompatible: the listing says which learners fit instead
        pytest.skip(f"{learner} does not train {task}: {err}")
    docs = parameter_docs(cls)
    from latentstruct.tasks import get_task_class
    from latentstruct.tasks.base import learner_defaults_for

    # the listing shows the task's own defaults for this learner where it has some
    own = learner_defaults_for(get_task_class(task), cls)
    for name, default in {**cls().get_params(deep=False), **own}.items():
        if name in ("task", "structure"):
            continue
        shown = "None" if default is None else (default if isinstance(default, str) else repr(default))
        line = next((ln for ln in out.splitlines() if ln.strip().startswith(f"{name}=")), None)
        assert line is not None, f"{name} missing from `options {task} --learner {learner}`"
        assert line.strip().startswith(f"{name}={shown}")
        assert docs.get(name), f"{learner}.{name} has no docstring entry"


def test_options_without_task_lists_tasks_and_learners(capsys):
    code, out, _ = run(capsys, "options")
    assert code == 0
    assert "chunk" in out and "default learner ssvm" in out and "learners:" in out


def test_options_shows_types(capsys):
    code, out, _ = run(capsys, "options", "dep")
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("hash_bits="))
    assert "hash_bits=22" in line and "(int)" in line


def test_unknown_task_in_options_exits_2(capsys):
    code, _, err = run(capsys, "options", "nosuchtask")
    assert code == 2 and "nosuchtask" in err


def test_help_does_not_import_the_heavy_stack():
    # `latentstruct --help` must stay fast: building the parser imports neither numpy's
    # consumers nor scikit-learn, numba or the task registry
    code = ("import sys; from latentstruct.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('sklearn', 'numba', 'scipy', 'latentstruct.tasks', "
            "'latentstruct.learners') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_task_names_read_from_source_match_the_registry(capsys):
    """``train --help`` names the tasks without importing them (their names are read from
    the source: latentstruct.registry); the list is the registry's."""
    from latentstruct.cli.help import task_names
    from latentstruct.tasks import TASKS

    TASK_NAMES = task_names()
    assert TASK_NAMES == sorted(TASKS)
    try:
        main(["train", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in TASK_NAMES) and "latentstruct options" in out


# ------------------------------------------------------------------------- duplicates
def test_duplicate_option_is_an_error(tmp_path, tiny_chunk_file, capsys):
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "chunk", "--train", tiny_chunk_file, "--model", model,
                       "--option", "C=0.1", "--option", "C=1")
    assert code == 2 and "'C' is given twice" in err and not model.exists()


def test_duplicate_option_at_evaluate_is_an_error(tiny_chunk_file, chunk_model, capsys):
    code, _, err = run(capsys, "evaluate", "--model", chunk_model, "--test", tiny_chunk_file,
                       "--option", "n_jobs=1", "--option", "n_jobs=2")
    assert code == 2 and "given twice" in err


# ------------------------------------------------------------- seeds and reproducibility
def _train(capsys, tmp_path, name, data, *extra):
    model = tmp_path / name
    code, _, err = run(capsys, "train", "chunk", "--train", data, "--model", model,
                       "--learner", "perceptron", "--option", "max_iter=3", "--quiet", *extra)
    assert code == 0, err
    return model


def test_identical_commands_give_identical_models(tmp_path, tiny_chunk_file, capsys):
    # the perceptron shuffles the examples every epoch: only a recorded seed makes it repeat
    a = _train(capsys, tmp_path, "a.npz", tiny_chunk_file)
    b = _train(capsys, tmp_path, "b.npz", tiny_chunk_file)
    assert_same_model(a, b)
    meta = json.loads(run(capsys, "info", "--model", a)[1])
    assert meta["extra"]["seed"] == 0 and meta["learner_params"]["random_state"] == 0


def test_seed_is_used_and_recorded(tmp_path, tiny_chunk_file, capsys):
    a = _train(capsys, tmp_path, "a.npz", tiny_chunk_file, "--seed", "7")
    b = _train(capsys, tmp_path, "b.npz", tiny_chunk_file, "--seed", "7")
    assert_same_model(a, b)
    meta = json.loads(run(capsys, "info", "--model", a)[1])
    assert meta["extra"]["seed"] == 7 and meta["learner_params"]["random_state"] == 7
    assert meta["task_params"]["sample_seed"] == 7
    # an explicit --option wins over --seed
    c = _train(capsys, tmp_path, "c.npz", tiny_chunk_file, "--seed", "7",
               "--option", "random_state=1")
    meta = json.loads(run(capsys, "info", "--model", c)[1])
    assert meta["learner_params"]["random_state"] == 1 and meta["extra"]["seed"] == 1


def test_seed_changes_a_seeded_learner(tmp_path, capsys):
    # enough examples that the epoch order matters to the averaged perceptron
    rows = []
    words = ["dogs", "cats", "birds", "fish", "cows", "owls", "rats", "bees"]
    verbs = ["bark", "sleep", "sing", "swim", "moo", "hoot", "run", "buzz"]
    for k in range(40):
        w, v = words[k % 8], verbs[(3 * k) % 8]
        rows.append(f"the DT B-NP\n{w} NNS I-NP\n{v} VBP B-VP\n. . O\n\n")
    data = tmp_path / "d.txt"
    data.write_text("".join(rows), encoding="utf-8")
    a = _train(capsys, tmp_path, "a.npz", data, "--seed", "1")
    b = _train(capsys, tmp_path, "b.npz", data, "--seed", "2")
    A, B = arrays(a), arrays(b)
    assert not np.array_equal(A["coef_"], B["coef_"])


@pytest.mark.parametrize("bad", ["-1", "abc", "1.5"])
def test_bad_seed_exits_2(tmp_path, tiny_chunk_file, capsys, bad):
    try:
        code, _, err = run(capsys, "train", "chunk", "--train", tiny_chunk_file,
                           "--model", tmp_path / "m.npz", "--seed", bad)
    except SystemExit as exc:  # argparse refuses non-integers
        code, err = exc.code, capsys.readouterr().err
    assert code == 2 and "seed" in err


# ------------------------------------------------------------------- run configurations
def test_config_replays_a_model_run(tmp_path, tiny_chunk_file, capsys):
    a = _train(capsys, tmp_path, "a.npz", tiny_chunk_file, "--seed", "5")
    code, out, _ = run(capsys, "info", "--model", a, "--as-config")
    config = json.loads(out)
    assert config["task"] == "chunk" and config["learner"] == "perceptron" and config["seed"] == 5
    assert config["options"]["max_iter"] == 3 and "progress" not in config["options"]
    path = tmp_path / "run.json"
    path.write_text(out, encoding="utf-8")
    b = tmp_path / "b.npz"
    code, _, err = run(capsys, "train", "--config", path, "--model", b, "--quiet")
    assert code == 0, err
    assert_same_model(a, b)
    # straight from the model file: its training path is never used, --train is required
    c = tmp_path / "c.npz"
    code, _, err = run(capsys, "train", "--config", a, "--model", c, "--quiet")
    assert code == 2 and "--train" in err and not c.exists()
    code, _, err = run(capsys, "train", "--config", a, "--train", tiny_chunk_file,
                       "--model", c, "--quiet")
    assert code == 0, err
    assert_same_model(a, c)


def test_toml_config_and_command_line_precedence(tmp_path, tiny_chunk_file, capsys):
    path = tmp_path / "run.toml"
    path.write_text(f'task = "chunk"\nlearner = "perceptron"\ntrain = "{tiny_chunk_file}"\n'
                    f'seed = 3\n[options]\nmax_iter = 2\n', encoding="utf-8")
    a = tmp_path / "a.npz"
    code, _, err = run(capsys, "train", "--config", path, "--model", a, "--quiet",
                       "--option", "max_iter=4")
    assert code == 0, err
    meta = json.loads(run(capsys, "info", "--model", a)[1])
    assert meta["learner"] == "perceptron" and meta["learner_params"]["max_iter"] == 4
    assert meta["extra"]["seed"] == 3


@pytest.mark.parametrize("text,needle", [
    ('task = "chunk"\nbogus = 1\n', "unknown key"),
    ('task = 3\n', "'task' must be a str"),
    ('task = "chunk"\n[options]\nC = [1, 2]\n', "option 'C'"),
    ('task = "chunk\n', "not valid TOML"),
])
def test_bad_config_files_exit_2(tmp_path, capsys, text, needle):
    path = tmp_path / "run.toml"
    path.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "train", "--config", path, "--model", tmp_path / "m.npz")
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_config_task_conflict(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text('{"task": "pos"}', encoding="utf-8")
    code, _, err = run(capsys, "train", "chunk", "--config", path, "--model", tmp_path / "m.npz")
    assert code == 2 and "'pos'" in err


def test_train_without_task_or_config(tmp_path, capsys):
    code, _, err = run(capsys, "train", "--model", tmp_path / "m.npz")
    assert code == 2 and "TASK" in err


# ---------------------------------------------------------------- warnings and OS errors
def test_warnings_are_one_clean_line_and_quiet_silences_them(tmp_path, tiny_chunk_file, capsys):
    args = ["train", "chunk", "--train", tiny_chunk_file, "--model", tmp_path / "m.npz",
            "--option", "max_iter=1", "--option", "tol=1e-12"]
    code, _, err = run(capsys, *args)
    assert code == 0
    warning_lines = [ln for ln in err.splitlines() if "Warning" in ln or "warning:" in ln]
    assert warning_lines and all(ln.startswith("latentstruct: warning: ") for ln in warning_lines)
    assert ".py:" not in err  # no internal source location
    code, _, err = run(capsys, *args, "--quiet")
    assert code == 0 and err == ""


def test_os_error_is_one_line_exit_2(tmp_path, tiny_chunk_file, capsys, monkeypatch):
    import errno

    import latentstruct.io

    def full_disk(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "m.npz"))

    monkeypatch.setattr(latentstruct.io, "save_model", full_disk)
    monkeypatch.setattr("latentstruct.learners.persistence.save_model", full_disk)
    code, _, err = run(capsys, "train", "chunk", "--train", tiny_chunk_file,
                       "--model", tmp_path / "m.npz", "--quiet")
    assert code == 2 and "No space left on device" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_closed_stdout_is_quiet(tmp_path, tiny_chunk_file, chunk_model):
    # `latentstruct predict ... --output - | head -1`: the reader leaves; no error, no traceback
    big = tmp_path / "big.txt"
    big.write_text(tiny_chunk_file.read_text(encoding="utf-8") * 3000, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "latentstruct.cli", "predict", "--model",
                             str(chunk_model), "--input", str(big), "--output", "-", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert first.strip() and code in (0, 141)
    assert "Traceback" not in err and "error" not in err


def test_every_task_and_learner_option_has_a_meaning_not_just_a_type():
    """`latentstruct options` shows each parameter's meaning: a docstring entry that only
    restates the type ("a, b : bool, default True") must not hide the base class's text."""
    import inspect

    from latentstruct.learners import LEARNERS, get_learner_class
    from latentstruct.options import parameter_docs, parameter_types
    from latentstruct.tasks import TASKS

    classes = [(n, TASKS[n]) for n in TASKS] + [(n, get_learner_class(n)) for n in LEARNERS]
    missing = []
    for label, cls in classes:
        docs, types = parameter_docs(cls), parameter_types(cls)
        # a task's parameters are param_defaults(): its featurizer's ones, then its own
        names = (cls.param_defaults() if hasattr(cls, "param_defaults")
                 else inspect.signature(cls.__init__).parameters)
        for name in names:
            if name in ("self", "task", "structure", "kwargs"):
                continue
            meaning = docs.get(name, "")
            if len(meaning) < 12 or meaning.startswith(types.get(name, "\0")):
                missing.append(f"{label}.{name}: {meaning!r}")
    assert not missing, missing


def test_subclass_type_only_entry_keeps_the_base_meaning():
    from latentstruct.options import parameter_docs, parameter_types

    class Base:
        """Parameters
        ----------
        flag : bool — turns the widget on.
        """

    class Child(Base):
        """Parameters
        ----------
        flag, other : bool, default True

        Notes
        -----
        other is not a parameter of Base.
        """

    assert parameter_docs(Child)["flag"] == "turns the widget on."
    assert parameter_types(Child)["flag"] == "bool"
    assert parameter_docs(Child)["other"] == "bool, default True"


def test_run_config_opening_error_is_not_reported_as_bad_toml(tmp_path, monkeypatch):
    """open_input's own InputError (a ValueError) keeps its message: it is not re-wrapped
    as "not valid TOML"."""
    from latentstruct.cli import runconfig
    from latentstruct.exceptions import InputError

    path = tmp_path / "run.toml"
    path.write_text('task = "chunk"\n', encoding="utf-8")

    def refuse(p):
        raise InputError("-: more than 10 bytes were read from this stream")

    monkeypatch.setattr("latentstruct.data.path_rule.open_input", refuse)
    with pytest.raises(InputError, match="more than 10 bytes"):
        runconfig.load_run_config(str(path))
