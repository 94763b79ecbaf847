"""``benchmarks/tagging_throughput.py`` runs and prints its figures (a small run)."""

import json

import pytest


@pytest.mark.slow
def test_the_throughput_benchmark_prints_its_ratios(require_data, capsys, monkeypatch,
                                                    benchmark_script):
    require_data("conll2000", "train.txt")
    pytest.importorskip("sklearn_crfsuite", reason="the benchmark's other side")
    for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "1")  # what the script sets, restored after the test
    module = benchmark_script("tagging_throughput")
    assert module.main(["--n-train", "150", "--n-test", "40", "--repeats", "1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["n_test"] == 40 and out["test_tokens"] > 500
    assert out["labels_agree"] > 0.9  # the two sides trained the same model
    assert out["ratio_dicts"] > 0 and all(v > 0 for v in out["tokens_per_s"].values())
