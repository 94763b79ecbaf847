"""``benchmarks/crfsuite_compat.py`` runs and prints every figure issue 55 asks for (a
small run: two algorithms, tagging speed, threads)."""

import json
import sys

import pytest


@pytest.mark.slow
def test_the_compat_benchmark_prints_times_tagging_and_threads(require_data, capsys,
                                                               monkeypatch, benchmark_script):
    require_data("conll2000", "train.txt")
    pytest.importorskip("sklearn_crfsuite", reason="the benchmark's other side")
    module = benchmark_script("crfsuite_compat")
    monkeypatch.setattr(sys, "argv", ["crfsuite_compat.py", "--n-train", "80", "--n-test",
                                      "20", "--ud-train", "30", "--algorithms", "lbfgs,ap",
                                      "--threads", "--thread-repeats", "2"])
    module.main()
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    conll = out["results"]["conll2000"]
    assert conll["n_train"] == 80 and conll["n_test"] == 20
    for algorithm in ("lbfgs", "ap"):
        row = conll[algorithm]
        for side in ("sklearn-crfsuite", "latentstruct"):
            assert row[side]["tag_tokens_per_second"] > 0
            assert 0.5 < row[side]["f1_weighted"] <= 1.0 and row[side]["nonzero_weights"] > 0
        assert row["time_ratio"] > 0 and row["tag_speed_ratio"] > 0
    for learner in ("lbfgs", "ssvm"):
        threads = conll["threads"][learner]
        assert threads["speedup"] > 0 and threads["max_abs_weight_difference"] < 1e-6
        assert len(threads["speedups"]) == len(threads["seconds_n_jobs_2"]) == 2
