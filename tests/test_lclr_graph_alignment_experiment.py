"""The tuning protocol of experiments/lclr_graph_alignment.py: splits, RTE de-duplication,
the greedy tuning pass and the report's paired checks (no parsing, no fitting)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
exp = pytest.importorskip("lclr_graph_alignment")
report = pytest.importorskip("lclr_graph_alignment_report")

from latentstruct.data.pairs import SentencePair


def _args(**kw):
    base = {"pool_cap": None, "tuning_seed": 12345, "extended_n": 50, "grid": [1.0, 0.3, 3.0],
            "cv_folds": 5, "cv_repeats": {"MSRP": 2, "RTE": 3}}
    return argparse.Namespace(**{**base, **kw})


def _pool(n=200, pos=0.66, **kw):
    rng = np.random.default_rng(0)
    y = np.where(rng.random(n) < pos, 1, -1)
    pairs = [SentencePair(str(i), "a", "b", int(v > 0)) for i, v in enumerate(y)]
    return exp.Pool("MSRP", pairs, y, {}, _args(**kw))


def test_evaluation_sets_never_touch_the_tuning_part():
    p = _pool()
    assert len(p.T) == 40 and len(p.folds) == 10  # 5 folds x 2 repeats (MSRP)
    for r in range(2):  # each repeat's test folds partition T
        tests = [p.indices("tune", k)[1] for k in range(5 * r, 5 * r + 5)]
        assert np.array_equal(np.sort(np.concatenate(tests)), p.T)
    for k in range(10):
        train, test = p.indices("tune", k)
        assert len(test) == 8 and np.intersect1d(train, test).size == 0
        assert np.array_equal(np.union1d(train, test), p.T)
    assert not np.array_equal(p.folds[0][1], p.folds[5][1])  # repeats reshuffle
    seen = []
    for seed in range(5):
        train, test = p.indices("eval", seed)
        assert len(test) == 40 and np.intersect1d(test, p.T).size == 0
        assert np.array_equal(np.union1d(train, test), p.all) and np.intersect1d(train, test).size == 0
        assert np.isin(p.T, train).all()  # tuning data may train the final model
        # stratified: the positive rate of E_s is the pool's to within one pair
        assert abs((p.y[test] > 0).sum() - 40 * (p.y > 0).mean()) <= 1
        ext_train, ext_test = p.indices("extended", seed)
        assert np.array_equal(ext_test, test) and len(ext_train) == 50
        assert np.intersect1d(ext_train, test).size == 0
        seen.append(test)
    assert not all(np.array_equal(seen[0], t) for t in seen[1:])  # seeds differ
    # the same tuning seed gives the same T; another gives another
    assert np.array_equal(_pool().T, p.T)
    assert not np.array_equal(_pool(tuning_seed=1).T, p.T)


def test_quick_cap_is_stratified_and_seeded():
    p, full = _pool(pool_cap=60), _pool()
    assert len(p.y) == 60 and abs((p.y > 0).sum() - 60 * (full.y > 0).mean()) <= 1
    assert [r.id for r in p.records] == [r.id for r in _pool(pool_cap=60).records]


def test_rte_pool_drops_duplicates_and_label_conflicts(monkeypatch):
    files = {
        "rte1_dev.xml": [SentencePair("1", "T one.", "H one.", 1), SentencePair("2", "T two", "H two", 0)],
        "rte2_dev.xml": [SentencePair("3", "t  ONE.", "h one.", 1)],  # duplicate of 1
        "rte3_dev.xml": [SentencePair("4", "T two", "h TWO", 1)],  # conflicts with 2
        "glue_rte_train.tsv": [SentencePair("5", "T five", "H five", 0)],
        "glue_rte_dev.tsv": [],
    }
    monkeypatch.setattr(exp, "dataset_path", lambda name, f: f)
    monkeypatch.setattr(exp.RteTask, "read_file", staticmethod(lambda f: files[f]))
    pairs, y, facts = exp.load_pool("RTE")
    assert [p.id for p in pairs] == ["1", "5"] and y.tolist() == [1, -1]
    assert facts["n_read"] == 5 and facts["n_unique"] == 3
    assert facts["n_duplicates_removed"] == 2
    assert facts["n_conflicting_groups_dropped"] == 1 and facts["n_conflicting_pairs_dropped"] == 2


class _FakeCtx:
    """Scripted CV accuracies (mean over two folds that differ by +-0.02): LCLR gains 1
    point with +pa_edges, 0.4 with -ne_features."""

    def __init__(self):
        self.args = _args()
        self.calls = []
        self._pool = argparse.Namespace(folds=[None, None])

    def pool(self, ds):
        return self._pool

    def run(self, ds, phase, seed, system, C, config):
        assert phase == "tune" and seed in (0, 1)
        self.calls.append((system, C, exp.config_name(ds, config), seed))
        acc = 0.70 + (0.01 if C == 0.3 and system == "two_stage" else 0.0)
        if system == "lclr":
            acc = 0.72 + 0.01 * config["pa_edges"] + 0.004 * (not config["ne_features"])
            acc += 0.002 * (C == 3.0)
        return {"accuracy": acc + (0.02 if seed else -0.02), "fit_s": 1.0}


def test_greedy_tuning_keeps_only_toggles_worth_half_a_point():
    ctx = _FakeCtx()
    t = exp.tune(ctx, "MSRP")
    assert t["complete"] and t["config_name"] == "+pa_edges"
    kept = {s["flag"]: s["kept"] for s in t["greedy"]}
    assert kept["pa_edges"] and not kept["ne_features"] and sum(kept.values()) == 1
    assert t["C_two_stage"] == 0.3 and t["C_lclr"] == 3.0
    # the greedy pass ran LCLR at the C chosen on the defaults, one toggle per option
    greedy = [c for c in ctx.calls if c[2] != "default" and c[0] == "lclr" and c[1] == 3.0]
    assert len({c[2] for c in greedy}) == len(exp.FLAGS)
    assert {c[3] for c in greedy} == {0, 1}  # every candidate on every fold
    pa = next(s for s in t["greedy"] if s["flag"] == "pa_edges")
    assert pa["accuracy"] == pytest.approx(0.732)  # the folds' mean
    assert t["grid_final"]["lclr"][3.0]["fold_accuracies"] == pytest.approx([0.712, 0.752])


def test_cv_summary_waits_for_every_fold():
    assert exp.cv_summary([{"accuracy": 0.5, "fit_s": 1.0}, None]) is None
    got = exp.cv_summary([{"accuracy": 0.5, "fit_s": 1.0}, {"accuracy": 0.7, "fit_s": 2.0, "init_fit_s": 1.0}])
    assert got["accuracy"] == pytest.approx(0.6) and got["fit_s"] == pytest.approx(4.0)


def test_best_c_ties_go_to_the_first_grid_value():
    recs = {1.0: {"accuracy": 0.7}, 0.3: {"accuracy": 0.7}, 3.0: {"accuracy": 0.6}}
    assert exp.best_C(recs) == 1.0
    assert exp.best_C({1.0: {"accuracy": 0.7}, 0.3: None}) is None


def _unit(ds, phase, seed, system, correct, **kw):
    c = np.array(correct, dtype=bool)
    rec = {"dataset": ds, "phase": phase, "seed": seed, "system": system, "C": 1.0,
           "config_name": "default", "n_train": 10, "n_test": len(c), "accuracy": float(c.mean()),
           "f1": 0.5, "majority_accuracy": 0.5, "fit_s": 1.0, "test_ids_sha1": f"s{seed}",
           "correct": "".join("1" if v else "0" for v in c),
           "train_decode": {"n": 3, "status": {"exact": 3}, "solver": {"lp": 3}, "total_s": 0.1,
                            "max_ms": 1.0}}
    if system == "lclr":
        rec.update(outer_iterations=2, stop_reason="tol", objective_curve=[3.0, 2.0],
                   test_decode={"n": len(c), "solver": {"lp": len(c)}, "status": {"exact": len(c)},
                                "mean_ms": 1.0, "max_ms": 1.0, "mean_nodes": 0.0},
                   alignment_changed_rate=0.5)
    return {**rec, **kw}


def test_report_pairs_systems_and_checks_targets():
    units = []
    for seed in (0, 1):
        units += [_unit("RTE", "eval", seed, "two_stage", [1, 0, 0, 1, 1, 0, 1, 0, 1, 1]),
                  _unit("RTE", "eval", seed, "lclr", [1, 1, 0, 1, 1, 0, 1, 0, 1, 1]),
                  _unit("MSRP-500", "extended", seed, "two_stage", [1, 1, 0, 0]),
                  _unit("MSRP-500", "extended", seed, "lclr", [1, 0, 0, 0]),
                  _unit("Extended", "extended", seed, "two_stage", [1, 0, 0, 0]),
                  _unit("Extended", "extended", seed, "lclr", [1, 1, 0, 0])]
    rows = report.paired_rows(units, "eval")
    assert [r["seed"] for r in rows] == [0, 1]
    assert rows[0]["gap"] == pytest.approx(0.1)
    assert rows[0]["sign_test"]["better"] == 1 and rows[0]["sign_test"]["worse"] == 0
    summary = report.summarise(rows)
    assert summary["RTE"]["gap"]["mean"] == pytest.approx(0.1)
    assert summary["RTE"]["gap"]["std"] == pytest.approx(0.0)
    paired = report.extended_paired(report.paired_rows(units, "extended"))
    assert paired["difference_mean"] == pytest.approx(0.5) and paired["n_larger"] == 2
    t = report.targets(summary, paired)
    assert t == {"rte_lclr_above_two_stage_by_1_point": True, "extended_gap_larger_paired_mean": True}


@pytest.mark.parametrize("argv, says", [
    (["--n-jobs", "0"], "--n-jobs must be"),
    (["--n-jobs", "-3"], "--n-jobs must be"),
    (["--top-k", "0"], "--top-k must be positive"),
    (["--max-iter", "0"], "--max-iter must be positive"),
    (["--tol", "-1"], "--tol must be positive"),
    (["--C-grid", "1,-0.3"], "--C-grid values must be positive"),
    (["--C-grid", "1,x"], "--C-grid takes numbers"),
    (["--seeds", "0,a"], "--seeds integers"),
    (["--cv-folds", "1"], "--cv-folds must be at least 2"),
    (["--cv-repeats", "RTE=0"], "--cv-repeats takes"),
    (["--only", "MSRP,FOO"], "unknown setting(s) ['FOO']"),
])
def test_bad_arguments_get_one_line_and_exit_2(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        exp.parse_args(argv)
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys):
    f = tmp_path / "results.txt"
    f.write_text("keep me\n")
    with pytest.raises(SystemExit) as e:
        exp.parse_args(["--out", str(f), "--report"])
    assert e.value.code == 2
    assert "is not a folder" in capsys.readouterr().err
    assert f.read_text() == "keep me\n"
    assert exp.parse_args(["--out", str(tmp_path), "--n-jobs", "-1"]).n_jobs == -1
