"""The two-file extension path: a contributor adds a task module under ``tasks/`` and its
decoder under ``inference/``, and ``latentstruct train`` finds the task by name through the
registry, with no other file of the package touched (no table of task names to edit)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import latentstruct

PKG = Path(latentstruct.__file__).resolve().parent
TOY = Path(__file__).resolve().parent / "extension_toy"


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


def _run(args, src: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(cwd / "numba-cache"))
    return subprocess.run([sys.executable, "-m", "latentstruct", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_new_task_and_its_decoder_train_from_the_command_line(tmp_path):
    src = tmp_path / "src"
    copy = src / "latentstruct"
    shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    before = _tree_digest(copy)
    # the contributor's two files
    shutil.copy(TOY / "toy_bags.py", copy / "tasks" / "toy_bags.py")
    shutil.copy(TOY / "toy_best.py", copy / "inference" / "toy_best.py")
    after = _tree_digest(copy)
    assert set(after) - set(before) == {"tasks/toy_bags.py", "inference/toy_best.py"}
    assert {k: v for k, v in after.items() if k in before} == before  # nothing else touched

    # bags of words, positive when one of them is a trigger word
    rng = np.random.default_rng(0)
    triggers, fillers = ["alarm", "fire", "smoke"], [f"w{k}" for k in range(30)]
    lines = []
    for i in range(120):
        words = list(rng.choice(fillers, size=4))
        label = 1 if i % 2 == 0 else -1
        if label > 0:
            words[rng.integers(4)] = str(rng.choice(triggers))
        lines.append(f"{label}\t{' '.join(words)}\n")
    data = tmp_path / "bags.tsv"
    data.write_text("".join(lines), encoding="utf-8")

    listed = _run(["train", "--help"], src, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "toy-bags" in listed.stdout
    options = _run(["options", "toy-bags"], src, tmp_path)
    assert options.returncode == 0, options.stderr
    assert "min_count" in options.stdout and "lclr" in options.stdout

    model = tmp_path / "toy.npz"
    trained = _run(["train", "toy-bags", "--train", str(data), "--model", str(model),
                    "--learner", "lclr"], src, tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert model.exists()
    scored = _run(["evaluate", "--model", str(model), "--test", str(data)], src, tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["accuracy"] >= 0.95  # the trigger words are learnt
    info = json.loads(_run(["info", "--model", str(model)], src, tmp_path).stdout)
    assert info["task"] == "toy-bags"


@pytest.mark.slow
def test_a_new_learner_is_one_file(tmp_path):
    src = tmp_path / "src"
    copy = src / "latentstruct"
    shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    # into its concept's subpackage: the registry scans learners/ recursively
    shutil.copy(TOY / "toy_learner.py", copy / "learners" / "latent" / "toy_learner.py")
    listed = _run(["options", "translit", "--learner", "two-stage-c10"], src, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "C=10.0" in listed.stdout
    assert "learners valid for 'translit': latent-pa, lclr, lclr-variant, two-stage, two-stage-c10" in listed.stdout
    # a task it does not fit is refused before any data is read, naming what is missing
    refused = _run(["train", "pos", "--train", str(tmp_path / "none.conllu"), "--model",
                    str(tmp_path / "m.npz"), "--learner", "two-stage-c10"], src, tmp_path)
    assert refused.returncode == 2 and "latent-binary" in refused.stderr
    model = tmp_path / "he.npz"
    trained = _run(["train", "translit", "--model", str(model), "--learner", "two-stage-c10",
                    "--option", "n_train=40", "--option", "n_test=40"], src, tmp_path)
    assert trained.returncode == 0, trained.stderr
    info = json.loads(_run(["info", "--model", str(model)], src, tmp_path).stdout)
    assert info["learner"] == "two-stage-c10" and info["learner_params"]["C"] == 10.0
