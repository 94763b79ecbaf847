"""``benchmarks/chain_constraints_cost.py`` runs and prints its figures (a small run)."""

import json


def test_the_cost_benchmark_prints_its_ratios(require_data, capsys, benchmark_script):
    require_data("conll2000", "train.txt")
    module = benchmark_script("chain_constraints_cost")
    assert module.main(["--train", "150", "--decode", "60", "--repeats", "1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["sentences"] == 60 and out["labels"] > 3
    assert out["constrained_ratio"] > 0 and out["nbest_ratio"] > 0
