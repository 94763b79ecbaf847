"""The PyStruct benchmarks' ``--quick`` modes run and end with one parseable JSON line.

Each script runs in a fresh interpreter (as a reader runs it), from the repository root,
with ``LATENTSTRUCT_DATA`` set to the absolute data folder this process sees.  The letters
benchmark needs the shared OCR data and is skipped without it (failed under ``CI=true``);
the grid benchmark makes its own data.  The timings are not tested, only that they are there
and the numbers are consistent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from latentstruct.data.paths import data_root

# each runs a subprocess that imports scikit-learn and trains: seconds
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 300


def run_quick(script: str) -> dict:
    """Run ``benchmarks/<script> --quick``; return its last output line as JSON."""
    env = dict(os.environ, LATENTSTRUCT_DATA=str(data_root()))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--quick"],
                          cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr[-3000:]
    return json.loads(lines[-1])


@pytest.mark.data
def test_letters_quick(require_data):
    require_data("ocr_letters", "letters.npz")
    out = run_quick("pystruct_letters.py")
    assert out["benchmark"] == "pystruct_letters" and out["quick"] is True
    assert out["n_train_words"] == 40 and out["n_test_words"] == 120
    systems = out["systems"]
    assert set(systems) == {"frank_wolfe", "linear_svc", "dcd_ssvm", "crf"}
    for name, r in systems.items():
        # 26 letters: chance is under 0.04, and every system learns something from 40 words
        assert 0.2 < r["accuracy"] <= 1.0, (name, r)
        assert r["train_wall_s"] > 0 and r["train_cpu_s"] >= 0, (name, r)
        assert r["time_ratio_vs_frank_wolfe"] == pytest.approx(
            r["train_wall_s"] / systems["frank_wolfe"]["train_wall_s"])
        assert r["time_ratio_vs_linear_svc"] == pytest.approx(
            r["train_wall_s"] / systems["linear_svc"]["train_wall_s"])
    # ChainCRF's weights: 26 x 128 unary, 26 x 26 transitions, nothing appended
    assert systems["frank_wolfe"]["n_weights"] == 26 * 128 + 26 * 26
    assert systems["frank_wolfe"]["time_ratio_vs_frank_wolfe"] == 1.0


def test_graph_grid_quick():
    out = run_quick("pystruct_graph_grid.py")
    assert out["benchmark"] == "pystruct_graph_grid" and out["quick"] is True
    assert out["n_nodes"] == 25 and out["n_edges"] == 2 * 5 * 4
    one, dcd = out["learners"]["one_slack"], out["learners"]["dcd"]
    assert out["time_ratio"] == pytest.approx(dcd["train_wall_s"] / one["train_wall_s"])
    assert out["l1_primal_ratio_dcd_over_one_slack"] == pytest.approx(
        dcd["l1_primal"] / one["l1_primal"])
    for r in (one, dcd):
        assert 1.0 / 3 < r["test_accuracy"] <= 1.0
        assert r["iterations"] >= 1 and r["own_dual"] is not None
        assert r["l1_primal"] > 0 and r["squared_primal"] > 0
    # the DCD's own primal is the squared objective at its w, which the benchmark recomputes
    # with exact inference: the two must agree
    assert dcd["own_primal"] == pytest.approx(dcd["squared_primal"], rel=1e-6)
    # each learner (near) minimises its own problem: it is not beaten there by the other
    assert one["l1_primal"] <= dcd["l1_primal"] * 1.05
    assert dcd["squared_primal"] <= one["squared_primal"] * 1.05
