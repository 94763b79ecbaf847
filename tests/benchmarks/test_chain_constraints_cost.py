"""``benchmarks/chain_constraints_cost.py`` runs and prints its figures (a small run)."""

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "chain_constraints_cost.py"


def test_the_cost_benchmark_prints_its_ratios(require_data, capsys):
    require_data("conll2000", "train.txt")
    spec = importlib.util.spec_from_file_location("chain_constraints_cost", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--train", "150", "--decode", "60", "--repeats", "1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["sentences"] == 60 and out["labels"] > 3
    assert out["constrained_ratio"] > 0 and out["nbest_ratio"] > 0
