"""What a new user met writing their own task (issue 43, item 6), each friction pinned by a
test: loading a model of a task this process has not imported, ``check_task`` without
``enumerate``, a wrong-length ``heuristic_weights``, the tool an ``InferenceError`` names,
``MAX_ENUMERATED``, ``latentstruct.cli.main`` after ``import latentstruct``, the help
``latentstruct options`` gives a custom task's parameters, and what ``x`` and ``h`` may be."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError
from latentstruct.registry import TASKS
from latentstruct.testing import BagTask, make_bag_problem

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "latentstruct"


class PluginBags(BagTask):
    """A task of the user's own (never registered by this module: each test that needs it
    by name puts it in ``TASKS`` through monkeypatch, so the registry is left as found).

    Parameters
    ----------
    n_features : int, default 5
        Length of each vector of a bag, the bias included.
    """

    name = "plugin-bags"


def trained_bag_model(tmp_path):
    from latentstruct.learners import TwoStage
    from latentstruct.learners.persistence import save_trained

    _, X, y = make_bag_problem(n_examples=12, bag_size=2)
    task = PluginBags(5).fit()
    learner = TwoStage(task, max_iter=50).fit(X, y)
    path = tmp_path / "plugin.npz"
    save_trained(path, task, learner)
    return path


# ---------------------------------------------------------------------------------- 6a
def test_loading_a_model_of_an_unimported_task_says_how_to_register_it(tmp_path):
    from latentstruct.learners.persistence import load_trained

    path = trained_bag_model(tmp_path)
    assert "plugin-bags" not in TASKS  # this process never imported a module registering it
    with pytest.raises(ConfigError) as err:
        load_trained(path)
    message = str(err.value)
    assert "incompatible version" not in message and "edited by hand" not in message
    assert "'plugin-bags'" in message and "not registered in this process" in message
    # the file records the module the task came from, and the message names it as data
    assert f"'{__name__}'" in message
    assert "latentstruct.tasks" in message and "entry point" in message


def test_a_registered_custom_task_loads(tmp_path, monkeypatch):
    from latentstruct.learners.persistence import load_trained

    path = trained_bag_model(tmp_path)
    monkeypatch.setitem(TASKS, "plugin-bags", PluginBags)
    task, learner, meta = load_trained(path)
    assert isinstance(task, PluginBags) and meta["task_module"] == __name__
    assert learner.coef_.shape == (5,)


def test_a_hostile_module_name_is_not_repeated(tmp_path):
    import json
    import zipfile

    from latentstruct.learners.persistence import load_trained

    path = trained_bag_model(tmp_path)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    meta["task_module"] = "os; rm -rf /"
    members["metadata.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(ConfigError) as err:
        load_trained(path)
    assert "rm -rf" not in str(err.value) and "not registered in this process" in str(err.value)


# ---------------------------------------------------------------------------------- 6b
def test_check_task_without_enumerate_reports_and_warns_what_it_skipped():
    from latentstruct.testing import ChecksSkippedWarning, check_task

    task, X, y = make_bag_problem(n_examples=4, bag_size=3)
    with pytest.warns(ChecksSkippedWarning, match="latent-argmax-maximum") as caught:
        report = check_task(task, list(zip(X, y)), n_weights=2)
    assert report.skipped == ("latent-argmax-maximum",)
    assert "latent-argmax-maximum" not in report.checks
    assert "too small" in str(caught[0].message) and "enumerate" in str(caught[0].message)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # with enumerate, nothing is skipped and nothing warns
        full = check_task(task, list(zip(X, y)), enumerate=lambda x: range(len(x)), n_weights=2)
    assert full.skipped == () and "latent-argmax-maximum" in full.checks


# ---------------------------------------------------------------------------------- 6c
class ShortHeuristic(BagTask):
    def heuristic_weights(self):
        return np.ones(self.n_features - 2)


def test_a_wrong_length_heuristic_is_named_before_any_matmul():
    from latentstruct.learners import LCLR, TwoStage

    _, X, y = make_bag_problem(n_examples=8, bag_size=2)
    for learner in (TwoStage(ShortHeuristic(5).fit()), LCLR(ShortHeuristic(5).fit())):
        with pytest.raises(ConfigError) as err:
            learner.fit(X, y)
        message = str(err.value)
        assert "heuristic_weights()" in message and "ShortHeuristic" in message
        assert "3" in message and "n_features = 5" in message


def test_the_heuristic_checker_accepts_a_right_vector_and_refuses_a_matrix():
    from latentstruct.tasks.contracts import checked_heuristic_weights

    task = BagTask(4).fit()
    np.testing.assert_array_equal(checked_heuristic_weights(task), [1.0, 0, 0, 0])

    class Matrix(BagTask):
        def heuristic_weights(self):
            return np.zeros((2, 2))

    with pytest.raises(ConfigError, match=r"Matrix.*shape \(2, 2\)"):
        checked_heuristic_weights(Matrix(4).fit())


# ---------------------------------------------------------------------------------- 6d
def test_no_message_points_to_check_decoder_for_a_task():
    """check_decoder checks a bare decoder; a learner's InferenceError is about a task, which
    check_task checks (its decoder against an enumeration included)."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if "testing" in path.parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "testing.check_decoder" in line and ('"' in line or "'" in line):
                offenders.append(f"{path.relative_to(SRC)}:{n}")
    assert not offenders, offenders


def test_an_inconsistent_decoder_is_told_to_run_check_task():
    from latentstruct.exceptions import InferenceError
    from latentstruct.inference.result import DecodeResult
    from latentstruct.learners import LCLR

    class Liar(BagTask):
        def latent_argmax(self, x, w, *, random_state=None):
            r = super().latent_argmax(x, w)
            return DecodeResult(r.structure, r.score + 1.0)

    _, X, y = make_bag_problem(n_examples=6, bag_size=2)
    with pytest.raises(InferenceError, match=r"latentstruct\.testing\.check_task"):
        LCLR(Liar(5).fit(), init="zeros").fit(X, y)


# ---------------------------------------------------------------------------------- 6e
def test_max_enumerated_is_exported_and_stated():
    from latentstruct import testing
    from latentstruct.testing import MAX_ENUMERATED, check_task

    assert "MAX_ENUMERATED" in testing.__all__
    assert MAX_ENUMERATED == 100_000
    assert "100,000" in inspect.getdoc(check_task)
    assert "100,000" in (ROOT / "docs" / "guide" / "own_task.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------- 6f
def test_cli_main_is_reachable_after_import_latentstruct():
    # a fresh process: this one has long imported latentstruct.cli
    code = ("import latentstruct, sys; main = latentstruct.cli.main; "
            "sys.exit(0 if callable(main) else 1)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr


# ---------------------------------------------------------------------------------- 6g
def test_options_gives_a_custom_task_help_from_its_docstring(monkeypatch, capsys):
    from latentstruct.cli import main

    monkeypatch.setitem(TASKS, "plugin-bags", PluginBags)
    assert main(["options", "plugin-bags", "--learner", "two-stage"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.strip().startswith("n_features=5"))
    assert "Length of each vector of a bag" in line


def test_options_reads_parameters_documented_on_init_and_flags_undocumented_ones(monkeypatch,
                                                                                   capsys):
    from latentstruct.cli import main

    class InitDocumented(BagTask):
        name = "init-documented"

        def __init__(self, n_features=5, margin=1.0):
            """Parameters
            ----------
            n_features : int, default 5
                Vectors' length.
            """
            self.n_features_in = n_features
            self.margin = margin

    monkeypatch.setitem(TASKS, "init-documented", InitDocumented)
    assert main(["options", "init-documented", "--learner", "two-stage"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"n_features=5 +\(int\) Vectors' length\.", out)
    margin = next(ln for ln in out.splitlines() if ln.strip().startswith("margin=1.0"))
    assert "undocumented" in margin and "Parameters" in margin


# ---------------------------------------------------------------------------------- 6h
def test_what_x_and_h_may_be_is_stated():
    from latentstruct.tasks.contracts import LatentBinary, MaxDecodable

    guide = (ROOT / "docs" / "subclassing.md").read_text(encoding="utf-8")
    assert "picklable" in guide and "every legal" in guide
    assert "picklable" in inspect.getdoc(LatentBinary.latent_argmax)
    assert "every legal" in inspect.getdoc(LatentBinary.latent_feature)
    assert "every legal" in inspect.getdoc(MaxDecodable.joint_feature)
