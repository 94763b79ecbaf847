"""Tables and JSON of experiments/lclr_graph_alignment.py, built from its runs file alone.

:func:`build` turns the unit records (one per fitted system, see that script) and the tuning
summaries into the JSON payload and the markdown report; :func:`write` saves both.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.significance import sign_test

#: the paper's figures (accuracy %), for the markdown table
PAPER = {
    "MSRP": {"two_stage": 76.23, "lclr": 76.41, "data": "MSRP test"},
    "Extended": {"two_stage": 72.00, "lclr": 72.75, "data": "Extended (MSRP test doubled)"},
    "RTE": {"two_stage": 65.0, "lclr": 66.8, "data": "RTE-5 test"},
}
LABEL = {"two_stage": "Alignment + Learning", "lclr": "LCLR"}


def mean_std(values) -> dict:
    """Mean, sample standard deviation (None below two values) and the values."""
    a = np.asarray(values, dtype=float)
    return {"mean": float(a.mean()) if a.size else None,
            "std": float(a.std(ddof=1)) if a.size > 1 else None, "values": a.tolist()}


def _pct(v, signed=False) -> str:
    if v is None:
        return "n/a"
    return f"{100 * v:+.2f}" if signed else f"{100 * v:.2f}"


def _ms(d: dict) -> str:
    s = "" if d["std"] is None else f" ± {100 * d['std']:.2f}"
    return f"{_pct(d['mean'])}{s}"


def _correct(rec) -> np.ndarray:
    return np.frombuffer(rec["correct"].encode(), dtype=np.uint8) - ord("0")


def _by(units, phase) -> dict:
    out = defaultdict(dict)
    for r in units:
        if r["phase"] == phase:
            out[(r["dataset"], r["seed"], r["config_name"])][r["system"]] = r
    return out


def paired_rows(units, phase) -> list:
    """Per (dataset, seed, config) with both systems: accuracies, gap and a sign test."""
    rows = []
    for (ds, seed, cname), pair in sorted(_by(units, phase).items(), key=lambda kv: str(kv[0])):
        if set(pair) != {"two_stage", "lclr"}:
            continue
        a, b = pair["two_stage"], pair["lclr"]
        t = sign_test(_correct(b), _correct(a)) if a["test_ids_sha1"] == b["test_ids_sha1"] else None
        rows.append({"dataset": ds, "seed": seed, "config_name": cname, "config": b.get("config"),
                     "C_two_stage": a["C"], "C_lclr": b["C"], "n_train": b["n_train"],
                     "n_test": b["n_test"], "two_stage_accuracy": a["accuracy"],
                     "lclr_accuracy": b["accuracy"], "two_stage_f1": a["f1"], "lclr_f1": b["f1"],
                     "gap": b["accuracy"] - a["accuracy"],
                     "sign_test": t.to_json() if t else None,
                     "majority_accuracy": b["majority_accuracy"],
                     "two_stage_fit_s": a["fit_s"], "lclr_fit_s": b["fit_s"],
                     "lclr_outer_iterations": b["outer_iterations"], "lclr_stop": b["stop_reason"],
                     "lclr_objective": [b["objective_curve"][0], b["objective_curve"][-1]],
                     "lclr_train_decode": b["train_decode"], "lclr_test_decode": b["test_decode"],
                     "alignment_changed_rate": b["alignment_changed_rate"]})
    return rows


def summarise(rows) -> dict:
    """Per dataset: mean ± std of both systems' accuracies and of the gap, over seeds."""
    out = {}
    for ds in sorted({r["dataset"] for r in rows}):
        mine = [r for r in rows if r["dataset"] == ds]
        out[ds] = {k: mean_std([r[k] for r in mine])
                   for k in ("two_stage_accuracy", "lclr_accuracy", "two_stage_f1", "lclr_f1", "gap")}
        out[ds]["seeds"] = [r["seed"] for r in mine]
        out[ds]["n_lclr_ge_two_stage"] = sum(r["gap"] >= 0 for r in mine)
    return out


def extended_paired(rows) -> dict | None:
    """Extended gap - MSRP-500 gap per seed (same 500 pairs, same E_s), mean ± SE."""
    by_seed = defaultdict(dict)
    for r in rows:
        by_seed[r["seed"]][r["dataset"]] = r
    seeds = sorted(s for s, d in by_seed.items() if {"MSRP-500", "Extended"} <= set(d))
    if not seeds:
        return None
    d = np.array([by_seed[s]["Extended"]["gap"] - by_seed[s]["MSRP-500"]["gap"] for s in seeds])
    return {"seeds": seeds, "differences": d.tolist(), "difference_mean": float(d.mean()),
            "difference_se": float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else None,
            "n_larger": int((d > 0).sum()),
            "msrp500_gap": mean_std([by_seed[s]["MSRP-500"]["gap"] for s in seeds]),
            "extended_gap": mean_std([by_seed[s]["Extended"]["gap"] for s in seeds])}


def targets(summary, paired) -> dict:
    """The issue's checks on the means over seeds (None: not measured)."""
    t = {}
    if "MSRP" in summary:
        m = summary["MSRP"]
        t["msrp_lclr_at_least_0.76"] = m["lclr_accuracy"]["mean"] >= 0.76
        t["msrp_lclr_ge_two_stage"] = m["gap"]["mean"] >= 0
    if "RTE" in summary:
        t["rte_lclr_above_two_stage_by_1_point"] = summary["RTE"]["gap"]["mean"] >= 0.01 - 1e-12
    if paired:
        t["extended_gap_larger_paired_mean"] = paired["difference_mean"] > 0
    return t


def tuning_json(t: dict) -> dict:
    """A tuning summary with every candidate reduced to its tune accuracy."""
    def grid(g):
        return {s: {f"{C:g}": (r["accuracy"] if r else None) for C, r in by_c.items()}
                for s, by_c in (g or {}).items()}

    keep = {k: v for k, v in t.items() if not k.startswith("grid_")}
    keep["grid_default"], keep["grid_final"] = grid(t.get("grid_default")), grid(t.get("grid_final"))
    return keep


def timing(units, feats) -> dict:
    out = defaultdict(lambda: {"units": 0, "fit_s": 0.0, "train_decodes": 0, "train_decode_s": 0.0,
                               "train_non_exact": 0})
    for r in units:
        o = out[f"{r['dataset']} {r['phase']} {r['system']}"]
        o["units"] += 1
        o["fit_s"] += r["fit_s"] + r.get("init_fit_s", 0.0)
        for k in ("train_decode", "init_train_decode"):
            if k in r:
                o["train_decodes"] += r[k]["n"]
                o["train_decode_s"] += r[k]["total_s"]
                o["train_non_exact"] += sum(v for s, v in r[k]["status"].items() if s != "exact")
    out["featurising"] = {"n": len(feats), "seconds": sum(f["seconds"] for f in feats)}
    return dict(out)


def build(args, fp, pools, tuning, units, feats) -> tuple[dict, str]:
    """The JSON payload and the markdown report."""
    evals = paired_rows(units, "eval")
    summary = summarise(evals)
    ext = paired_rows(units, "extended")
    paired = extended_paired(ext)
    ablations = paired_rows(units, "ablation")
    payload = {"settings": {k: getattr(args, k) for k in (
                   "quick", "tuning_seed", "grid", "seed_list", "wanted", "top_k", "tol",
                   "max_iter", "extended_n", "accept_inexact", "n_jobs", "argv")},
               "fingerprint": fp, "pools": pools,
               "tuning": {ds: tuning_json(t) for ds, t in tuning.items()},
               "evaluation": {"per_seed": evals, "summary": summary},
               "extended_check": {"per_seed": ext, "paired": paired},
               "ablations": ablations, "targets": targets(summary, paired),
               "timing": timing(units, feats),
               "runs": [{k: v for k, v in r.items() if k != "correct"} for r in units]}
    return payload, markdown(payload)


def _tuning_md(ds, t) -> list:
    lines = [f"**{ds}**: grid of C on the default features (CV accuracy on T, %):", "",
             "| C | " + " | ".join(LABEL[s] for s in ("two_stage", "lclr")) + " |", "|---|---|---|"]
    g = t["grid_default"]
    for C in g.get("lclr", {}):
        lines.append(f"| {C} | {_pct(g['two_stage'][C])} | {_pct(g['lclr'][C])} |")
    if t["greedy"]:
        lines += ["", "Greedy feature pass (LCLR, CV accuracy %; kept when ≥ best + 0.5):", "",
                  "| option | toggled to | C | CV acc | best before | kept |", "|---|---|---|---|---|---|"]
        lines += [f"| {s['flag']} | {s['value']} | {s['C']:g} | {_pct(s['accuracy'])} | "
                  f"{_pct(s['best_before'])} | {'yes' if s['kept'] else 'no'} |" for s in t["greedy"]]
    if t.get("complete"):
        g = t["grid_final"]
        lines += ["", f"Final configuration `{t['config_name']}`; C on it: "
                  + "; ".join(f"C={C}: two-stage {_pct(g['two_stage'][C])}, LCLR {_pct(g['lclr'][C])}"
                              for C in g["lclr"])
                  + f" → chosen C two-stage {t['C_two_stage']:g}, LCLR {t['C_lclr']:g}."]
    return lines + [""]


def _toggle(row, chosen) -> str:
    """The option an ablation row flips relative to the chosen configuration."""
    a, b = row.get("config"), (chosen or {}).get("config")
    if not a or not b:
        return "?"
    return ", ".join(("+" if a[k] else "-") + k for k in a if a[k] != b.get(k)) or "none"


def _decode(d) -> str:
    bad = sum(v for s, v in d["status"].items() if s != "exact")
    return f"{d['n']} solves, {bad} non-exact, {d['total_s']:.1f}s"


def markdown(p: dict) -> str:
    s, summ = p["settings"], p["evaluation"]["summary"]
    L = ["# LCLR over graph alignments: paraphrase identification and RTE (Tables 3-4)", "",
         "`python experiments/lclr_graph_alignment.py " + " ".join(s["argv"]) + "`"
         f" (settings fingerprint {p['fingerprint']}; {'QUICK SMOKE RUN, ' if s['quick'] else ''}"
         f"seeds {s['seed_list']}, max_iter {s['max_iter']}, tol {s['tol']}, top-k {s['top_k']}).", "",
         "## Accuracy on the held-out evaluation sets (mean ± std over seeds)", "",
         "| Data | System | C | Acc % | per seed | F1 % | train / test pairs | paper Acc % (paper data) |",
         "|---|---|---|---|---|---|---|---|"]
    for ds, m in summ.items():
        r0 = next(r for r in p["evaluation"]["per_seed"] if r["dataset"] == ds)
        for k in ("two_stage", "lclr"):
            per = ", ".join(_pct(v) for v in m[k + "_accuracy"]["values"])
            L.append(f"| {ds} | {LABEL[k]} | {r0['C_' + k]:g} | {_ms(m[k + '_accuracy'])} | {per} | "
                     f"{_ms(m[k + '_f1'])} | {r0['n_train']} / {r0['n_test']} | "
                     f"{PAPER[ds][k]:.2f} ({PAPER[ds]['data']}) |")
    L += ["", "Targets: " + (", ".join(f"{k} = **{v}**" for k, v in p["targets"].items()) or "none measured"),
          "", "## Per seed", "",
          ("| Data | seed | two-stage % | LCLR % | gap | sign test LCLR vs two-stage (better/worse, p) | "
           "LCLR iters (stop) | objective first → last | fit s two-stage / LCLR | LCLR training ILP "
           "(summed over threads) | test decode (LCLR) | alignments changed |"),
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in p["evaluation"]["per_seed"]:
        t, d = r["sign_test"], r["lclr_test_decode"]
        st = f"{t['better']}/{t['worse']}, p={t['p_value']:.2f}" if t else "n/a (test sets differ)"
        L.append(f"| {r['dataset']} | {r['seed']} | {_pct(r['two_stage_accuracy'])} | "
                 f"{_pct(r['lclr_accuracy'])} | {_pct(r['gap'], True)} | "
                 f"{st} | {r['lclr_outer_iterations']} "
                 f"({r['lclr_stop']}) | {r['lclr_objective'][0]:.2f} → {r['lclr_objective'][1]:.2f} | "
                 f"{r['two_stage_fit_s']:.0f} / {r['lclr_fit_s']:.0f} | {_decode(r['lclr_train_decode'])} | "
                 f"{', '.join(f'{k} {v}' for k, v in sorted(d['solver'].items()))}; {d['mean_ms']:.1f} ms mean | "
                 f"{100 * r['alignment_changed_rate']:.0f}% |")
    pe = p["extended_check"]["paired"]
    if pe:
        L += ["", "## Extended check (§5.3): MSRP-500 vs Extended on the same training pairs", "",
              "| seed | MSRP-500 two-stage | LCLR | gap | Extended two-stage | LCLR | gap | Extended gap larger? |",
              "|---|---|---|---|---|---|---|---|"]
        rows = {(r["seed"], r["dataset"]): r for r in p["extended_check"]["per_seed"]}
        for seed in pe["seeds"]:
            a, b = rows[(seed, "MSRP-500")], rows[(seed, "Extended")]
            L.append(f"| {seed} | {_pct(a['two_stage_accuracy'])} | {_pct(a['lclr_accuracy'])} | "
                     f"{_pct(a['gap'], True)} | {_pct(b['two_stage_accuracy'])} | "
                     f"{_pct(b['lclr_accuracy'])} | {_pct(b['gap'], True)} | "
                     f"{'yes' if b['gap'] > a['gap'] else 'no'} |")
        se = "n/a" if pe["difference_se"] is None else f"{100 * pe['difference_se']:.2f}"
        L += ["", (f"Extended gap − MSRP-500 gap = {_pct(pe['difference_mean'], True)} ± {se} points "
                   f"(mean ± SE over {len(pe['seeds'])} seeds); larger in {pe['n_larger']} of "
                   f"{len(pe['seeds'])}.")]
    if p["ablations"]:
        L += ["", "## Ablations (seed " + str(p["ablations"][0]["seed"]) + ", one option toggled from "
              "the chosen configuration; reported, never used for choosing)", "",
              "| Data | toggled | configuration | two-stage % | LCLR % | gap | vs chosen LCLR |",
              "|---|---|---|---|---|---|---|"]
        base = {(r["dataset"], r["seed"]): r for r in p["evaluation"]["per_seed"]}
        for r in p["ablations"]:
            b = base.get((r["dataset"], r["seed"]))
            L.append(f"| {r['dataset']} | {_toggle(r, b)} | {r['config_name']} | {_pct(r['two_stage_accuracy'])} | "
                     f"{_pct(r['lclr_accuracy'])} | {_pct(r['gap'], True)} | "
                     f"{_pct(r['lclr_accuracy'] - b['lclr_accuracy'], True) if b else 'n/a'} |")
    L += ["", "## Tuning (on the fixed tuning part T only)", ""]
    for ds, t in p["tuning"].items():
        L += _tuning_md(ds, t)
    L += ["## Data", ""]
    for ds, f in p["pools"].items():
        extra = (f"; {f['n_read']} read, {f['n_duplicates_removed']} duplicates removed, "
                 f"{f['n_conflicting_groups_dropped']} label-conflicting groups "
                 f"({f['n_conflicting_pairs_dropped']} pairs) dropped" if "n_read" in f else "")
        L.append(f"- {ds}: pool {f['n_pool']} pairs ({f['n_positive']} positive){extra}; tuning part "
                 f"{f['n_tuning']} ({f['cv_folds']}-fold CV x {f['cv_repeats']}, {f['n_fold_train']} / "
                 f"{f['n_fold_test']} pairs per fold); evaluation sets "
                 f"{f['n_eval']}, training sets {f['n_train']}.")
    L += ["", "## Time", "", ("| unit group | units | fit s (incl. LCLR's two-stage start) | "
                              "training ILP solves | their time s (summed over threads) | non-exact |"),
          "|---|---|---|---|---|---|"]
    for k, v in p["timing"].items():
        if k != "featurising":
            L.append(f"| {k} | {v['units']} | {v['fit_s']:.0f} | {v['train_decodes']} | "
                     f"{v['train_decode_s']:.0f} | {v['train_non_exact']} |")
    f = p["timing"]["featurising"]
    L += ["", f"Featurising: {f['n']} passes, {f['seconds']:.0f}s.", "", PROTOCOL]
    return "\n".join(L) + "\n"


PROTOCOL = """## Protocol

Pool = all pairs (MSRP: msrp/train.tsv; RTE: RTE-1/2/3 dev XML + GLUE RTE train + dev,
de-duplicated by normalised (text, hypothesis), label-conflicting duplicates dropped). A fixed
tuning part T (stratified 20% of the pool, `--tuning-seed`) takes every tuning decision on a
repeated stratified k-fold cross-validation over T (mean accuracy): C per system on the default
features, one greedy pass over the feature options (LCLR; a toggle is kept when it gains >= 0.5
points), C again per system on the final features (ties: first C of the grid). For each seed s
the evaluation set E_s is a stratified 20%-of-pool sample of pool \\ T; both systems train on pool \\ E_s (T included), LCLR
starting from the two-stage weights at its own C. Ablations toggle one option of the chosen
configuration (first seed; reported only). The Extended check trains MSRP-500 and Extended on the
same 500 pairs of pool \\ E_s and scores both on E_s. Accuracies are on our held-out splits, not
the paper's test sets. The sign test compares the two systems pair by pair on E_s (two-sided,
ties dropped). Training ILP counts are every decode during the fit (threads backend).
"""


def write(out: Path, payload: dict, md: str) -> None:
    """Save ``lclr_graph_alignment.json`` and ``.md`` atomically under ``out``."""
    with atomic_write(Path(out) / "lclr_graph_alignment.json") as fh:
        json.dump(payload, fh, indent=2, default=str)
    with atomic_write(Path(out) / "lclr_graph_alignment.md") as fh:
        fh.write(md)
