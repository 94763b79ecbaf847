"""DISTRO against one-hot models as the training data grows: where do label vectors help?

Label vectors let related labels share statistical strength (Srikumar & Manning 2014, §1),
which should matter most where labels have few examples.  This measures it:

* corpora: 20 Newsgroups (20 labels; split=train -> split=eval, see experiments/distro.py),
  UD English EWT XPOS (49 labels; train -> dev) and UD Basque BDT UPOS+Case (124 labels,
  many rare; train -> dev);
* training sizes: 1, 3, 10, 30 and 100 % of the training part, a seeded random sample of
  its examples (documents or sentences); the task's feature index is fitted on the sample
  alone, as a user with that little data would;
* seeds 0-4 per point: the seed draws the sample and seeds the learner;
* systems, all at the library's defaults unless said:
  - ``DISTRO d=L``: ``DISTRO(task)`` (d = L, one-hot A0, λ1 chosen on a held-out 10 % of
    the sample);
  - ``DISTRO d<L``: the same with the d < L that scored best on a tuning part of the full
    training data (seed 0; candidates below), A0 uniform;
  - ``one-hot SGD``: the one-hot structural SVM by the same mini-batch SGD and the same
    budget of w-epochs (25) with λ1 chosen the same way (DISTRO with A fixed to I, which
    equals ``sgd-ssvm`` step for step);
  - ``DCD SSVM``: ``StructuredSVM(task)`` with the task's defaults (the command line's
    default learner for these tasks).

For each point: mean ± std of the evaluation accuracy over seeds; DISTRO d=L and d<L
against one-hot SGD, the mean paired difference, a sign test over the seeds and one over
evaluation examples (per-example accuracy, pooled over the seeds: documents, or
sentences' token accuracy).  At 100 %: per-label accuracy against the label's training
frequency.  Resumable: each finished run is one line of results/distro_learning_curve.jsonl.gz
and a run already there is not run again.

    python experiments/distro_learning_curve.py [--corpus 20ng ewt-xpos eu-case]
        [--sizes 0.01 0.03 0.1 0.3 1.0] [--seeds 0 1 2 3 4] [--n-jobs 2] [--results DIR]

Writes results/distro_learning_curve.{jsonl.gz,json,md,png} and
results/distro_label_frequency.png.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from distro import corpora, new_task, read  # noqa: E402 - the DISTRO experiment's corpora

from latentstruct.learners import DISTRO, StructuredSVM  # noqa: E402
from latentstruct.significance import sign_test  # noqa: E402
from latentstruct.tasks.base import learner_defaults_for  # noqa: E402
from latentstruct.tasks.base import Dataset  # noqa: E402
from latentstruct.tasks.label_factored import gold_labels  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
CORPORA = ("20ng", "ewt-xpos", "eu-case")
SIZES = (0.01, 0.03, 0.1, 0.3, 1.0)
SYSTEMS = ("DISTRO d=L", "DISTRO d<L", "one-hot SGD", "DCD SSVM")
#: the d < L tried on each corpus's tuning part
D_CANDIDATES = {"20ng": (5, 10, 15), "ewt-xpos": (10, 20, 35), "eu-case": (16, 32, 64)}
ONE_HOT_EPOCHS = 25  # DISTRO's w-epochs: 5, then 5 in each of the 4 later alternations


def subset(dataset: Dataset, idx) -> Dataset:
    return Dataset([dataset.records[i] for i in idx], [dataset.targets[i] for i in idx],
                   dataset.path)


def sample(dataset: Dataset, fraction: float, seed: int) -> Dataset:
    n = len(dataset)
    if fraction >= 1.0:
        return dataset
    k = max(2, int(round(fraction * n)))
    return subset(dataset, np.sort(np.random.default_rng([seed, 17]).choice(n, size=k,
                                                                            replace=False)))


def make_learner(system: str, task, seed: int, d_small: int | None):
    if system == "DISTRO d=L":
        return DISTRO(task, random_state=seed)
    if system == "DISTRO d<L":
        return DISTRO(task, n_components=d_small, random_state=seed)
    if system == "one-hot SGD":
        return DISTRO(task, n_components=task.n_labels, label_init="onehot", update_labels=False,
                      n_iter=0, weight_epochs=ONE_HOT_EPOCHS, random_state=seed)
    if system == "DCD SSVM":
        return StructuredSVM(task, random_state=seed,
                             **learner_defaults_for(task, StructuredSVM))
    raise ValueError(system)


def per_example_accuracy(task, Y, predicted) -> list[float]:
    return [round(float(np.mean(np.asarray(p).reshape(-1) == np.asarray(g).reshape(-1))), 4)
            for p, g in zip(predicted, Y)]


def run_one(corpus: str, size: float, seed: int, system: str, d_small: int | None) -> dict:
    spec = corpora()[corpus]
    _, train, ev = read(spec)
    part = sample(train, size, seed)
    task = new_task(spec)  # its feature index is fitted on the sample alone
    task.fit(part)
    X, Y = task.featurize(part), task.encode_targets(part.targets)
    Xe, Ye = task.featurize(ev), task.encode_targets(ev.targets)
    t0 = time.perf_counter()
    model = make_learner(system, task, seed, d_small).fit(X, Y)
    fit_s = time.perf_counter() - t0
    predicted = model.predict(Xe)
    out = {"corpus": corpus, "size": size, "seed": seed, "system": system,
           "n_train": len(part), "n_labels": int(task.n_labels),
           "accuracy": float(task.evaluate(Ye, predicted)["accuracy"]),
           "per_example": per_example_accuracy(task, Ye, predicted), "fit_s": round(fit_s, 1),
           "lambda1": getattr(model, "lambda1_", None), "d": getattr(model, "n_components_", None)}
    if size >= 1.0:  # per-label accuracy against the label's training frequency
        batch = task.structure().label_factored_batch(Xe)
        gold = gold_labels(Ye, int(batch.offsets[-1]), batch.n_labels)
        pred = np.concatenate([np.asarray(p).reshape(-1) for p in predicted])
        train_gold = gold_labels(Y, int(task.structure().label_factored_batch(X).offsets[-1]), task.n_labels)
        freq = np.bincount(train_gold[train_gold >= 0], minlength=task.n_labels)
        out["per_label"] = {str(task.labels_[l]): [int(freq[l]), int((gold == l).sum()),
                                                   int(((gold == l) & (pred == l)).sum())]
                            for l in range(task.n_labels)}
    return out


def choose_small_d(corpus: str) -> dict:
    """The d < L that scores best on a tuning part of the full training data: a seeded 10 %
    held out, DISTRO at its defaults otherwise, seed 0."""
    spec = corpora()[corpus]
    task, train, _ = read(spec)
    order = np.random.default_rng(0).permutation(len(train))
    cut = int(0.9 * len(train))
    fit_part, tune_part = subset(train, np.sort(order[:cut])), subset(train, np.sort(order[cut:]))
    task.fit(fit_part)
    X, Y = task.featurize(fit_part), task.encode_targets(fit_part.targets)
    Xt, Yt = task.featurize(tune_part), task.encode_targets(tune_part.targets)
    scores = {}
    for d in D_CANDIDATES[corpus]:
        m = DISTRO(task, n_components=d, random_state=0).fit(X, Y)
        scores[d] = float(task.evaluate(Yt, m.predict(Xt))["accuracy"])
        print(f"[{corpus}] tuning d={d}: {scores[d]:.4f}", file=sys.stderr, flush=True)
    return {"d": max(scores, key=lambda d: (scores[d], -d)), "scores": scores}


#: the runs, one JSON line each; gzip, because the per-example accuracies that the sign
#: tests need make it 3.8 MB as text (0.4 MB compressed)
RUNS_FILE = "distro_learning_curve.jsonl.gz"


def done_runs() -> dict:
    out = {}
    if (RESULTS / RUNS_FILE).exists():
        # a crash while appending leaves a truncated last member: the runs before it count
        with gzip.open(RESULTS / RUNS_FILE, "rt", encoding="utf-8") as f:
            try:
                for line in f:
                    if line.strip():
                        r = json.loads(line)
                        out[(r["corpus"], r["size"], r["seed"], r["system"])] = r
            except (EOFError, json.JSONDecodeError):
                pass
    return out


def record(run: dict) -> dict:
    # one gzip member per run, appended: a crash loses none of the earlier ones
    with gzip.open(RESULTS / RUNS_FILE, "at", encoding="utf-8") as f:
        f.write(json.dumps(run) + "\n")
    return run


def summarise(runs: dict, corpora_: list, sizes: list, seeds: list) -> dict:
    table: dict = {}
    for c in corpora_:
        for size in sizes:
            point = {}
            for system in SYSTEMS:
                rs = [runs.get((c, size, s, system)) for s in seeds]
                rs = [r for r in rs if r is not None]
                if not rs:
                    continue
                acc = np.array([r["accuracy"] for r in rs])
                point[system] = {"mean": float(acc.mean()),
                                 "std": float(acc.std(ddof=1)) if acc.size > 1 else 0.0,
                                 "n": int(acc.size), "n_train": rs[0]["n_train"],
                                 "fit_s": float(np.mean([r["fit_s"] for r in rs]))}
            for system in ("DISTRO d=L", "DISTRO d<L"):
                pairs = [(runs.get((c, size, s, system)), runs.get((c, size, s, "one-hot SGD")))
                         for s in seeds]
                pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
                if not pairs:
                    continue
                diff = np.array([a["accuracy"] - b["accuracy"] for a, b in pairs])
                by_example = sign_test(np.concatenate([a["per_example"] for a, _ in pairs]),
                                       np.concatenate([b["per_example"] for _, b in pairs]))
                point.setdefault("vs one-hot SGD", {})[system] = {
                    "mean_diff": float(diff.mean()),
                    "std_diff": float(diff.std(ddof=1)) if diff.size > 1 else 0.0,
                    "seeds": sign_test(diff, np.zeros_like(diff)).to_json(),
                    "examples": by_example.to_json()}
            table.setdefault(c, {})[str(size)] = point
    return table


def markdown(payload: dict) -> str:
    lines = ["# DISTRO against one-hot models as the training data grows", "",
             f"Command: `{payload['command']}` ({payload['seconds'] / 60:.0f} min of this run "
             "on 2 cores; runs already in the .jsonl.gz were not repeated). The "
             f"{payload['n_runs']} fits took {payload['fit_seconds'] / 3600:.1f} h of wall "
             "time in all (summed over runs, two or three at a time on 2 cores).", "",
             "Accuracy % on the evaluation data (mean ± std over seeds); Δ = DISTRO − one-hot "
             "SGD, paired by seed, with sign tests over the seeds (+/−) and over evaluation "
             "examples (better/worse, p).", ""]
    for c, points in payload["table"].items():
        lines += [f"## {payload['corpora'][c]['name']} ({payload['corpora'][c]['n_labels']} labels; "
                  f"d<L = {payload['small_d'][c]['d']})", "",
                  "| size | n | DISTRO d=L | DISTRO d<L | one-hot SGD | DCD SSVM | Δ d=L (seeds; examples) | Δ d<L (seeds; examples) |",
                  "|---|---|---|---|---|---|---|---|"]
        for size, point in points.items():
            cell = lambda s: (f"{100 * point[s]['mean']:.2f} ± {100 * point[s]['std']:.2f}"  # noqa: E731
                              if s in point else "")
            vs = point.get("vs one-hot SGD", {})

            def delta(s):
                if s not in vs:
                    return ""
                v = vs[s]
                return (f"{100 * v['mean_diff']:+.2f} ({v['seeds']['better']}+/{v['seeds']['worse']}−; "
                        f"{v['examples']['better']}/{v['examples']['worse']}, p={v['examples']['p_value']:.2g})")
            n = next((point[s]["n_train"] for s in SYSTEMS if s in point), "")
            lines.append(f"| {float(size):.0%} | {n} | {cell('DISTRO d=L')} | {cell('DISTRO d<L')} | "
                         f"{cell('one-hot SGD')} | {cell('DCD SSVM')} | {delta('DISTRO d=L')} | "
                         f"{delta('DISTRO d<L')} |")
        lines.append("")
    return "\n".join(lines)


def plots(payload: dict, runs: dict) -> None:
    from latentstruct.plotting.figures import agg_pyplot

    plt = agg_pyplot()
    corpora_ = list(payload["table"])
    fig, axes = plt.subplots(1, len(corpora_), figsize=(5.2 * len(corpora_), 4.2), squeeze=False)
    for ax, c in zip(axes[0], corpora_):
        points = payload["table"][c]
        for system in SYSTEMS:
            xs = [p[system]["n_train"] for p in points.values() if system in p]
            ys = [100 * p[system]["mean"] for p in points.values() if system in p]
            es = [100 * p[system]["std"] for p in points.values() if system in p]
            if xs:
                ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=system)
        ax.set_xscale("log")
        ax.set_xlabel("training examples")
        ax.set_ylabel("accuracy %")
        ax.set_title(payload["corpora"][c]["name"], fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "distro_learning_curve.png", dpi=110)
    plt.close(fig)
    # per-label accuracy difference against training frequency, at 100 %
    fig, axes = plt.subplots(1, len(corpora_), figsize=(5.2 * len(corpora_), 4.2), squeeze=False)
    for ax, c in zip(axes[0], corpora_):
        for system, colour in (("DISTRO d=L", "C0"), ("DISTRO d<L", "C1")):
            freq, diff = per_label_difference(runs, c, system)
            if freq.size:
                ax.scatter(freq, 100 * diff, s=12, color=colour, label=system, alpha=0.7)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("label's training frequency (parts)")
        ax.set_ylabel("accuracy on the label − one-hot SGD's (points)")
        ax.set_title(payload["corpora"][c]["name"], fontsize=10)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "distro_label_frequency.png", dpi=110)
    plt.close(fig)


def per_label_difference(runs: dict, corpus: str, system: str):
    """(training frequency, per-label accuracy of ``system`` − one-hot SGD's) over labels
    seen in the evaluation data, pooled over the seeds at 100 %."""
    acc: dict = {}
    for (c, size, _, s), r in runs.items():
        if c != corpus or size < 1.0 or s not in (system, "one-hot SGD") or "per_label" not in r:
            continue
        for label, (freq, n_gold, n_right) in r["per_label"].items():
            a = acc.setdefault(label, {"freq": freq, system: [0, 0], "one-hot SGD": [0, 0]})
            a[s][0] += n_right
            a[s][1] += n_gold
    rows = [(a["freq"], a[system][0] / a[system][1] - a["one-hot SGD"][0] / a["one-hot SGD"][1])
            for a in acc.values() if a[system][1] and a["one-hot SGD"][1]]
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])


def main():
    global RESULTS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", nargs="*", default=list(CORPORA))
    p.add_argument("--sizes", nargs="*", type=float, default=list(SIZES))
    p.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--results", default=None, help="folder of the outputs (default results/)")
    args = p.parse_args()
    if args.results:
        RESULTS = Path(args.results)
    t0 = time.perf_counter()
    RESULTS.mkdir(exist_ok=True)
    small_path = RESULTS / "distro_learning_curve_small_d.json"
    small = json.loads(small_path.read_text()) if small_path.exists() else {}
    todo = [c for c in args.corpus if c not in small]
    for c, chosen in zip(todo, Parallel(n_jobs=args.n_jobs)(delayed(choose_small_d)(c)
                                                            for c in todo)):
        small[c] = chosen
        small_path.write_text(json.dumps(small, indent=1) + "\n")
    runs = done_runs()
    jobs = [(c, size, seed, system, small[c]["d"]) for c in args.corpus for size in args.sizes
            for seed in args.seeds for system in SYSTEMS if (c, size, seed, system) not in runs]
    # the costliest first, so that two workers end together
    jobs.sort(key=lambda j: (-j[1], j[0] != "ewt-xpos"))
    print(f"{len(jobs)} runs to do ({len(runs)} already done)", file=sys.stderr, flush=True)
    for r in Parallel(n_jobs=args.n_jobs, verbose=10, return_as="generator")(
            delayed(run_one)(*j) for j in jobs):
        runs[(r["corpus"], r["size"], r["seed"], r["system"])] = record(r)
    specs = corpora()
    info = {}
    for c in args.corpus:
        # the labels of the whole training part (a 1 % sample sees fewer)
        n_labels = max((r["n_labels"] for k, r in runs.items() if k[0] == c), default=None)
        info[c] = {"name": specs[c]["name"], "n_labels": n_labels}
    payload = {"command": "python experiments/distro_learning_curve.py " + " ".join(sys.argv[1:]),
               "seconds": round(time.perf_counter() - t0, 1), "n_runs": len(runs),
               "fit_seconds": round(sum(r["fit_s"] for r in runs.values()), 1),
               "corpora": info, "small_d": small,
               "table": summarise(runs, args.corpus, args.sizes, args.seeds)}
    (RESULTS / "distro_learning_curve.json").write_text(json.dumps(payload, indent=1) + "\n")
    (RESULTS / "distro_learning_curve.md").write_text(markdown(payload) + "\n")
    plots(payload, runs)
    print(markdown(payload))


if __name__ == "__main__":
    main()
