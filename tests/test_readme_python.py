"""The documentation's Python examples run as written, from a fresh install, on the data they
name, without a single warning (``python -W error``): the README's quick start (Tagger on UD
English EWT) and the lower-level chunking example of docs/guide/tasks.md (ChunkTask +
StructuredSVM on CoNLL-2000).  The GridSearchCV block (~1.5 min) is left to the guide's
walk-through to keep CI short."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TASKS_GUIDE = ROOT / "docs" / "guide" / "tasks.md"


def python_blocks(section: str, page: Path = README) -> list[str]:
    text = page.read_text(encoding="utf-8")
    body = text.split(f"### {section}\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def run_block(code: str, cwd: Path, data_home: Path | None = None) -> str:
    script = cwd / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if data_home is not None:  # the fetchers find the corpus there: nothing is downloaded
        env["LATENTSTRUCT_DATA"] = str(data_home)
    proc = subprocess.run([sys.executable, "-W", "error", str(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == "", proc.stderr[-3000:]  # no warning, no progress noise
    return proc.stdout


@pytest.mark.slow
def test_quick_start_runs_as_written(require_data, tmp_path):
    # the block fetches UD English EWT: from the data home, where it is already
    root = require_data("ud_english_ewt", "en_ewt-ud-train.conllu").parents[1]
    code = python_blocks("Quick start")[0]
    assert "fetch_ud(" in code and "../shared" not in code
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    out = run_block(code, tmp_path, data_home=root).splitlines()
    assert float(out[0]) > 0.95  # UPOS accuracy on 1,000 held-out sentences (0.963)
    assert out[1].startswith("[['DET', 'NOUN', 'VERB'")
    assert (tmp_path / "pos.npz").exists()


@pytest.mark.slow
def test_tasks_and_learners_example_runs_as_written(require_data, tmp_path):
    (tmp_path / "train.txt").symlink_to(require_data("conll2000", "train.txt"))
    code = python_blocks("Tasks and learners directly", TASKS_GUIDE)[0]
    code = code.replace("progress=True", "progress=False")  # the bar writes to stderr
    run_block(code + "\nprint(model.n_iter_, model.converged_)\n", tmp_path)


@pytest.mark.slow
def test_learning_from_a_stream_runs_as_written(require_data, tmp_path):
    root = require_data("conll2000", "train.txt").parents[1]
    (code,) = python_blocks("Learning from a stream")
    assert "fetch_conll2000()" in code and "../shared" not in code
    out = run_block(code, tmp_path, data_home=root).splitlines()
    assert float(out[0]) > 0.92  # chunk F1 of 8 one-pass batches (0.935)


def test_the_readme_figures_that_can_drift_match_the_repository():
    """Counts the README states, checked against what they count (times are CPU seconds,
    measured; counts are checked here)."""
    text = README.read_text(encoding="utf-8")
    examples = sorted((ROOT / "examples").glob("*.py"))
    (n,) = re.findall(r"runs the (\d+) examples", text)
    assert int(n) == len(examples)
    assert 'pip install -e ".[all]"' in text and "[distributed]" in text
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert "distributed" not in extras["all"][0]  # scale-out is its own extra (issue 52)
