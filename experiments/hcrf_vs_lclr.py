"""The hidden-state CRF (``hcrf`` task, ``crf`` learner) against LCLR (``grammaticality``
task, ``lclr`` learner) on the same grammaticality data.

Data: real Reuters-21578 sentences (+1) against trigram-LM samples (-1), read by the
grammaticality task's ``LanguageModelData`` for both systems with the same ``n_train``,
``negative_ratio=1`` and ``seed``, so both train on the same sentences (checked here, token
for token); both are scored on the same held-out test split: the first ``--n-test`` held-out
sentences and ``--n-negative-sets`` LM-sample sets of the same size (seeds 1000, 1001, ...),
accuracy averaged over the sets (the grammaticality task's protocol).

Systems:
  * hcrf    the hidden-state CRF (left-to-right states): token attributes (word, window words, affixes,
            shape) crossed with K·S hidden labels (S states per class, chosen with the L2
            coefficient c2 on a 20 % validation split of the training sample), L-BFGS
  * lclr    LCLR (Chang et al. 2010) on latent chunkings (view iob2, n-gram word and POS
            features, POS tags from the project's tagger trained once on UD EWT), its
            default two-stage initialisation from the supervised chunker: what
            ``latentstruct train grammaticality --learner lclr`` does
  * lclr-variant (``--variant``): LCLR's footnote-1 variant, one cutting-plane round per
            outer iteration, early stopping on a validation split (the task's default)

Train seconds are the learner's fit on the featurised sample, with the task's fit
(featurising) and, for LCLR, the supervised chunker it needs; the POS tagger, shared by the
LCLR rows, is trained once and reported apart.  Writes results/hcrf_vs_lclr.{json,md}.

    python experiments/hcrf_vs_lclr.py --variant                # the reported run (~13 min)
    python experiments/hcrf_vs_lclr.py --n-train 200 --n-test 300 --seeds 0   # smoke
    python experiments/hcrf_vs_lclr.py --seeds 0 --scale 2000 5000   # hcrf alone, more data
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine, OpenBLAS's spinning threads made SciPy's
# L-BFGS-B (the CRF's solver) 10-40x slower (28 s instead of 0.8 s for one hcrf fit at
# load ~3).  Set before numpy is imported; the same for every system.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from latentstruct.data.atomic import atomic_write  # noqa: E402
from latentstruct.data.paths import dataset_path  # noqa: E402
from latentstruct.estimators import fit_on_dataset  # noqa: E402
from latentstruct.exceptions import ConvergenceWarning  # noqa: E402
from latentstruct.learners import CRF, LCLR, LCLRVariant  # noqa: E402
from latentstruct.pipelines import train_pos_tagger  # noqa: E402
from latentstruct.tasks import TASKS  # noqa: E402
from latentstruct.tasks.base import learner_defaults_for  # noqa: E402

SENTENCES = dataset_path("english_sentences", "reuters21578_sentences.txt")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def words(dataset) -> list[tuple]:
    return [tuple(r.words) for r in dataset.records]


def scored(task, learner, test, decision=None) -> dict:
    t0 = time.perf_counter()
    m = task.evaluate_model(test, learner.predict, decision)
    return {"accuracy": m["accuracy"], "accuracy_std_over_sets": m.get("accuracy_std"),
            "real_accuracy": m["positive_accuracy"], "lm_accuracy": m["negative_accuracy"],
            "eval_seconds": round(time.perf_counter() - t0, 2)}


def select_hcrf(params, train, grid_states, grid_c2, seed) -> tuple[dict, list]:
    """(n_states, c2) of best accuracy on a seeded 20 % validation split of ``train``."""
    from latentstruct.tasks.base import Dataset

    rng = np.random.default_rng([seed, 7])
    n = len(train)
    dev = np.zeros(n, dtype=bool)
    dev[rng.choice(n, n // 5, replace=False)] = True
    fit_part = Dataset([r for r, d in zip(train.records, dev) if not d],
                       [t for t, d in zip(train.targets, dev) if not d])
    dev_part = Dataset([r for r, d in zip(train.records, dev) if d],
                       [t for t, d in zip(train.targets, dev) if d])
    rows = []
    for S in grid_states:
        task = TASKS["hcrf"](**params, n_states=S).fit(fit_part)
        X, Y = task.featurize(fit_part), task.encode_targets(fit_part.targets)
        Xd, Yd = task.featurize(dev_part), task.encode_targets(dev_part.targets)
        for c2 in grid_c2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                crf = CRF(task, c2=c2, max_iter=200).fit(X, Y)
            acc = float(np.mean(np.asarray(crf.predict(Xd)) == Yd))
            rows.append({"n_states": S, "c2": c2, "dev_accuracy": acc})
            log(f"  hcrf dev: n_states={S} c2={c2}: {acc:.4f}")
    best = max(rows, key=lambda r: (r["dev_accuracy"], -r["n_states"], r["c2"]))
    return {"n_states": best["n_states"], "c2": best["c2"]}, rows


def run_seed(seed, args, tagger) -> dict:
    common = {"n_train": args.n_train, "negative_ratio": 1.0, "seed": seed,
              "n_test": args.n_test, "n_negative_sets": args.n_negative_sets}
    out = {"seed": seed, "systems": {}}

    # --- the hidden-state CRF -------------------------------------------------------------
    probe = TASKS["hcrf"](**common)
    train_h = probe.read(SENTENCES, split="train")
    log(f"seed {seed}: {len(train_h)} training sentences; choosing hcrf's n_states and c2")
    t0 = time.perf_counter()
    best, grid = select_hcrf(common, train_h, args.states, args.c2, seed)
    select_s = time.perf_counter() - t0
    task = TASKS["hcrf"](**common, n_states=best["n_states"])
    task.lm_ = probe.lm_  # the same LM (refitting it gives the same one, only slower)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, crf = fit_on_dataset(task, train_h, CRF, {"c2": best["c2"], "max_iter": 200})
    train_s = time.perf_counter() - t0
    test = task.read(SENTENCES, split="test")
    row = scored(task, crf, test)
    row.update(train_seconds=round(train_s, 2), selection_seconds=round(select_s, 2),
               n_iter=int(crf.n_iter_), n_features=int(task.n_features), **best)
    out["systems"]["hcrf"] = row
    out["hcrf_grid"] = grid
    log(f"seed {seed}: hcrf {row}")

    # --- LCLR (and the variant) on the grammaticality task ------------------------------------
    learners = [("lclr", LCLR)] + ([("lclr-variant", LCLRVariant)] if args.variant else [])
    for name, cls in learners:
        gtask = TASKS["grammaticality"](**common)
        gtask.set_tagger(*tagger)
        gtask.lm_ = probe.lm_
        train_g = gtask.read(SENTENCES, split="train")
        if words(train_g) != words(train_h) or list(train_g.targets) != list(train_h.targets):
            raise SystemExit("the two tasks read different training samples")
        test_g = gtask.read(SENTENCES, split="test")
        if words(test_g) != words(test):
            raise SystemExit("the two tasks read different test splits")
        opts = learner_defaults_for(gtask, cls)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            _, learner = fit_on_dataset(gtask, train_g, cls, opts)
        train_s = time.perf_counter() - t0
        row = scored(gtask, learner, test_g, learner.decision_function)
        row.update(train_seconds=round(train_s, 2), n_iter=int(learner.n_iter_),
                   n_features=int(gtask.n_features), options=opts)
        out["systems"][name] = row
        log(f"seed {seed}: {name} {row}")
    out["same_training_sample"] = True
    out["n_train_sentences"] = len(train_h)
    out["n_test_sentences"] = len(test)
    return out


def summary(runs) -> dict:
    names = list(runs[0]["systems"])
    out = {}
    for name in names:
        rows = [r["systems"][name] for r in runs]
        out[name] = {k: {"mean": float(np.mean([r[k] for r in rows])),
                         "std": float(np.std([r[k] for r in rows]))}
                     for k in ("accuracy", "real_accuracy", "lm_accuracy", "train_seconds")}
    return out


def markdown(res) -> str:
    s = res["summary"]
    seeds = res["seeds"]
    pm = len(seeds) > 1
    lines = [
        "# Hidden-state CRF against LCLR on grammaticality (real vs. LM sentences)",
        "",
        f"Date: {res['date']}. Machine: {res['machine']}, load average at start "
        f"{res['load_start']}, at end {res['load_end']} (1, 5, 15 min; the machine was shared), "
        f"one BLAS thread. Whole run: {res['total_seconds']:.0f} s.",
        "",
        f"Command: `{res['command']}`",
        "",
        f"Training sample: {res['n_train']} real sentences + as many LM samples (seed(s) "
        f"{', '.join(map(str, seeds))}), the same sentences for every system (checked). Test: "
        f"{res['n_test']} held-out real sentences and {res['n_negative_sets']} LM-sample sets "
        "of the same size; accuracy = mean over the sets of the accuracy on positives + set. "
        + ("Mean ± std over the seeds." if pm else ""),
        "",
        "| system | accuracy on real sentences | on LM samples | overall | train seconds |",
        "|---|---|---|---|---|",
    ]

    def cell(d, scale=100.0, digits=1):
        if pm:
            return f"{scale * d['mean']:.{digits}f} ± {scale * d['std']:.{digits}f}"
        return f"{scale * d['mean']:.{digits}f}"

    labels = {"hcrf": "hidden-state CRF (`hcrf` + `crf`)",
              "lclr": "LCLR (`grammaticality` + `lclr`, iob2 view)",
              "lclr-variant": "LCLR-variant (`grammaticality` + `lclr-variant`)"}
    for name, d in s.items():
        lines.append(f"| {labels.get(name, name)} | {cell(d['real_accuracy'])} % | "
                     f"{cell(d['lm_accuracy'])} % | {cell(d['accuracy'])} % | "
                     f"{cell(d['train_seconds'], 1.0, 1)} |")
    lines += ["", f"POS tagger of the LCLR rows (trained once, not in their train seconds): "
              f"{res['tagger_seconds']:.1f} s.", ""]
    for run in res["runs"]:
        h = run["systems"]["hcrf"]
        lines.append(f"Seed {run['seed']}: hcrf chose n_states={h['n_states']}, c2={h['c2']} "
                     f"on a 20 % validation split ({h['selection_seconds']:.0f} s, not in its "
                     f"train seconds); {h['n_features']:,} weights.")
    lines += ["", "Per seed, overall accuracy:", "",
              "| seed | " + " | ".join(names for names in s) + " |",
              "|---|" + "---|" * len(s)]
    for run in res["runs"]:
        lines.append(f"| {run['seed']} | " + " | ".join(
            f"{100 * run['systems'][n]['accuracy']:.1f} %" for n in s) + " |")
    lines += ["", res["verdict"], ""]
    return "\n".join(lines)


def verdict(res) -> str:
    s = res["summary"]
    h, l = s["hcrf"]["accuracy"], s["lclr"]["accuracy"]
    diff = 100 * (h["mean"] - l["mean"])
    who = "the hidden-state CRF" if diff > 0 else "LCLR"
    wins = sum(r["systems"]["hcrf"]["accuracy"] > r["systems"]["lclr"]["accuracy"]
               for r in res["runs"])
    spread = 100 * max(h["std"], l["std"])
    close = (f", a difference within the seed-to-seed spread (up to ±{spread:.1f})"
             if abs(diff) <= spread else "")
    def better(key, what):
        a, b = 100 * s["hcrf"][key]["mean"], 100 * s["lclr"][key]["mean"]
        name = "The hidden-state CRF" if a > b else "LCLR"
        return f"{name} is better on {what} ({max(a, b):.1f} % vs {min(a, b):.1f} %)."

    variant = ""
    if "lclr-variant" in s:
        v = s["lclr-variant"]
        variant = (f"The LCLR-variant reaches {100 * v['accuracy']['mean']:.1f} % in "
                   f"{v['train_seconds']['mean']:.0f} s. ")
    t_h = s["hcrf"]["train_seconds"]["mean"]
    t_sel = float(np.mean([r["systems"]["hcrf"]["selection_seconds"] for r in res["runs"]]))
    t_l = s["lclr"]["train_seconds"]["mean"]
    return (f"Verdict: {who} is more accurate on average by {abs(diff):.1f} points "
            f"({100 * h['mean']:.1f} % vs {100 * l['mean']:.1f} % for the hidden-state CRF "
            f"and LCLR){close}; the hidden-state CRF wins {wins} of {len(res['runs'])} seeds. "
            f"{better('lm_accuracy', 'LM samples')} {better('real_accuracy', 'real sentences')} "
            f"{variant}LCLR's training took {t_l / max(t_h, 1e-9):.0f}x the "
            f"hidden-state CRF's ({t_l / (t_h + t_sel):.0f}x counting the CRF's choice of "
            f"n_states and c2), and LCLR also needs the POS tagger and the supervised chunker.")


def scale_rows(args) -> dict:
    """The hidden-state CRF alone on larger samples (seed of ``--seeds[0]``), scored on the
    same test split: what its training cost buys when it is given more data."""
    seed, rows = args.seeds[0], []
    for n in args.scale:
        common = {"n_train": n, "negative_ratio": 1.0, "seed": seed, "n_test": args.n_test,
                  "n_negative_sets": args.n_negative_sets}
        probe = TASKS["hcrf"](**common)
        t0 = time.perf_counter()
        train = probe.read(SENTENCES, split="train")
        read_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        best, _ = select_hcrf(common, train, args.states, args.c2, seed)
        select_s = time.perf_counter() - t0
        task = TASKS["hcrf"](**common, n_states=best["n_states"])
        task.lm_ = probe.lm_
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            _, crf = fit_on_dataset(task, train, CRF, {"c2": best["c2"], "max_iter": 200})
        row = {"n_train": n, "train_seconds": round(time.perf_counter() - t0, 2),
               "selection_seconds": round(select_s, 2), "read_seconds": round(read_s, 2),
               **best, **scored(task, crf, task.read(SENTENCES, split="test"))}
        rows.append(row)
        log(f"scale: {row}")
    return {"seed": seed, "rows": rows}


def scale_markdown(res) -> str:
    lines = ["# Hidden-state CRF on larger samples of the grammaticality data", "",
             f"Date: {res['date']}. Machine: {res['machine']}, load average at start "
             f"{res['load_start']}, at end {res['load_end']}, one BLAS thread.", "",
             f"Command: `{res['command']}`", "",
             f"Seed {res['scale']['seed']}; n_train real sentences + as many LM samples; the "
             f"same test split as results/hcrf_vs_lclr.md ({res['n_test']} held-out real "
             f"sentences, {res['n_negative_sets']} LM-sample sets). n_states and c2 chosen on "
             "a 20 % validation split (selection seconds not in train seconds).", "",
             "| n_train | n_states | c2 | real sentences | LM samples | overall | train s | "
             "selection s |", "|---|---|---|---|---|---|---|---|"]
    for r in res["scale"]["rows"]:
        lines.append(f"| {r['n_train']} | {r['n_states']} | {r['c2']} | "
                     f"{100 * r['real_accuracy']:.1f} % | {100 * r['lm_accuracy']:.1f} % | "
                     f"{100 * r['accuracy']:.1f} % | {r['train_seconds']:.1f} | "
                     f"{r['selection_seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=3000)
    ap.add_argument("--n-negative-sets", type=int, default=5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--states", type=int, nargs="+", default=[1, 2, 3, 5])
    ap.add_argument("--c2", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    ap.add_argument("--variant", action="store_true", help="also train the LCLR-variant")
    ap.add_argument("--out", default="results/hcrf_vs_lclr")
    ap.add_argument("--remake-md", action="store_true",
                    help="rewrite OUT.md (and the verdict in OUT.json) from OUT.json; trains nothing")
    ap.add_argument("--scale", type=int, nargs="+", default=None,
                    help="only train the hidden-state CRF on these n_train (first seed); "
                         "writes OUT_scale.{json,md}")
    args = ap.parse_args(argv)
    load_start = [round(v, 2) for v in os.getloadavg()]
    t_all = time.perf_counter()
    command = "python " + " ".join(["experiments/hcrf_vs_lclr.py"]
                                   + list(sys.argv[1:] if argv is None else argv))
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    if args.remake_md:
        with open(args.out + ".json", encoding="utf-8") as fh:
            res = json.load(fh)
        res["verdict"] = verdict(res)
        with atomic_write(args.out + ".json", "w") as fh:
            json.dump(res, fh, indent=1)
        with atomic_write(args.out + ".md", "w") as fh:
            fh.write(markdown(res))
        return 0
    if args.scale:
        res = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
               "command": command, "machine": machine, "load_start": load_start,
               "n_test": args.n_test, "n_negative_sets": args.n_negative_sets,
               "scale": scale_rows(args)}
        res["load_end"] = [round(v, 2) for v in os.getloadavg()]
        res["total_seconds"] = round(time.perf_counter() - t_all, 1)
        with atomic_write(args.out + "_scale.json", "w") as fh:
            json.dump(res, fh, indent=1)
        with atomic_write(args.out + "_scale.md", "w") as fh:
            fh.write(scale_markdown(res))
        print(json.dumps(res["scale"]))
        return 0
    log("training the POS tagger of the grammaticality task (UD EWT, 3000 sentences)")
    t0 = time.perf_counter()
    pos_task, coef, _ = train_pos_tagger()
    tagger_s = time.perf_counter() - t0
    runs = [run_seed(seed, args, (pos_task, coef)) for seed in args.seeds]
    s = summary(runs)
    res = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": command, "machine": machine,
        "load_start": load_start, "load_end": [round(v, 2) for v in os.getloadavg()],
        "n_train": args.n_train, "n_test": args.n_test, "n_negative_sets": args.n_negative_sets,
        "seeds": args.seeds, "tagger_seconds": round(tagger_s, 2), "runs": runs, "summary": s,
        "total_seconds": round(time.perf_counter() - t_all, 1),
    }
    res["verdict"] = verdict(res)
    with atomic_write(args.out + ".json", "w") as fh:
        json.dump(res, fh, indent=1)
    with atomic_write(args.out + ".md", "w") as fh:
        fh.write(markdown(res))
    print(json.dumps({"summary": s, "total_seconds": res["total_seconds"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
