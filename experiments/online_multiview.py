"""Table 2 of Clifton, Whitney & Sarkar (2013) on held-out Reuters sentences, and held-out
accuracy against passes over the data for the online learners.

Grammaticality task (``tasks.grammaticality``): positives are real Reuters-21578 sentences
(``english_sentences``), negatives are samples of an interpolated Kneser-Ney trigram LM
fitted on the non-held-out sentences.  The held-out share (5%, by a hash of each sentence)
is used neither by the LM nor by the models; the evaluation takes its first ``--n-test``
sentences as positives and pairs them with ``--n-negative-sets`` LM-sample sets of the same
size (seeds 1000, 1001, ...), reporting the mean accuracy over the sets (the paper's §4
protocol).  POS tags come from the project's ``pos`` tagger (PosTask + StructuredSVM) trained
here on the first ``--tagger-sentences`` sentences of UD EWT train.

Systems (all from zero weights unless said):
  * online single-view      LatentPA (Alg. 1, PA step of line 8), views=iob2, 40 passes
  * + multi-view            LatentPA, views iob1,iob2,ioe1,ioe2,oc, features concatenated
  * + majority vote         LatentPA, the same five views, O+C majority vote
                            (both 10 passes: a pass costs 5-8 times a single-view pass)
  * LCLR                    batch LCLR (Chang et al. 2010), caches kept across outer iterations,
                            until converged (at most 40 outer iterations)
  * LCLR-variant            footnote 1: one cutting-plane round per outer iteration, 40 of them
Held-out metrics are recorded after every pass / outer iteration (the curves).  Other rows:
single-view and variant after 10 passes / iterations, single-view with order seeds 0-2, with
averaged weights, and initialised from a supervised perceptron chunker (CoNLL-2000) scaled to
the zero-initialised model's range (§4).

Writes results/online_multiview.{json,md,png}; the last line printed is a JSON summary.

    python experiments/online_multiview.py --skip-extra       # the reported run (~70 min)
    python experiments/online_multiview.py --n-train 5000 --out results/5k   # smaller, with extra rows (~15 min)
    python experiments/online_multiview.py --n-train 300 --n-test 200 --iterations 3 --multiview-passes 2  # smoke
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.data.paths import dataset_path
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import LCLR, LatentPA, LCLRVariant
from latentstruct.learners.online.latent_pa import scale_to_range
from latentstruct.pipelines import train_chunker, train_pos_tagger
from latentstruct.tasks import GrammaticalityTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.grammaticality import Sentence, ViewsStructure

ALL_VIEWS = "iob1,iob2,ioe1,ioe2,oc"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def tagged(task: GrammaticalityTask, data: Dataset) -> Dataset:
    """The dataset with every record's POS tags filled in by the task's tagger."""
    tags = task.tag([r.words for r in data.records])
    records = [Sentence(r.words, p, r.negative_set) for r, p in zip(data.records, tags)]
    return Dataset(records, data.targets, data.path)


def metrics_from_scores(scores, y, sets) -> dict:
    """The task's evaluation (``GrammaticalityTask.evaluate_model``) from decision scores:
    accuracy on the positives plus each negative set, mean and std over the sets."""
    correct = np.where(scores >= 0.0, 1, -1) == y
    pos = y > 0
    accs = [correct[pos | (sets == k)].mean() for k in np.unique(sets[~pos])]
    return {"accuracy": float(np.mean(accs)), "accuracy_std": float(np.std(accs)),
            "positive_accuracy": float(correct[pos].mean()),
            "negative_accuracy": float(correct[~pos].mean())}


#: ``(n, callback)`` while a batch learner fits: the watched structure calls ``callback(w)``
#: whenever the decisions of ``n`` examples (the whole training set) are computed
_WATCH = None


class WatchedStructure(ViewsStructure):
    """The grammaticality structure, calling ``_WATCH[1](w)`` whenever the decisions of the
    whole training set (``_WATCH[0]`` examples) are computed.  LCLR and its variant do that
    exactly once per outer iteration (and once for the initial weights), to record their
    objective, so this reads off the held-out accuracy after every outer iteration without
    changing the learners."""

    def decision_batch(self, X, w):
        global _WATCH
        watch = _WATCH
        if watch is not None and len(X) == watch[0]:
            _WATCH = None  # the callback decodes the held-out set with this structure
            try:
                watch[1](w)
            finally:
                _WATCH = watch
        return super().decision_batch(X, w)


class WatchedTask(GrammaticalityTask):
    """The grammaticality task holding a :class:`WatchedStructure`."""

    structure_class = WatchedStructure


class Setting:
    """One task configuration: the task fitted on the (tagged) training data, featurised."""

    def __init__(self, views, combine, train, test, min_count, tagger=None, **task_params):
        t0 = time.perf_counter()
        self.task = WatchedTask(views=views, combine=combine, min_count=min_count,
                                **task_params)
        if tagger is not None:  # needed by the chunker (CoNLL-2000 sentences are tagged by it)
            self.task.set_tagger(*tagger)
        self.task.fit(train)
        self.X, self.y = self.task.featurize(train), self.task.encode_targets(train.targets)
        self.test = test
        self.Xt, self.yt = self.task.featurize(test), self.task.encode_targets(test.targets)
        self.sets = np.array([r.negative_set for r in test.records])
        self.seconds = time.perf_counter() - t0

    def metrics(self, coef) -> dict:
        return metrics_from_scores(self.task.structure_.decision_batch(self.Xt, coef), self.yt,
                                   self.sets)

    def evaluate(self, learner) -> dict:
        return self.task.evaluate_model(self.test, learner.predict, learner.decision_function)


class _Clock:
    """Training seconds, not counting the held-out evaluations made along the way."""

    def __init__(self):
        self.start = time.perf_counter()
        self.excluded = 0.0

    def train_seconds(self) -> float:
        return time.perf_counter() - self.start - self.excluded

    def evaluate(self, fn, *args):
        t = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.excluded += time.perf_counter() - t


def run_online(setting: Setting, name: str, epochs: int, **kw) -> dict:
    """LatentPA for ``epochs`` passes; held-out metrics after every pass."""
    per_pass = []
    clock = _Clock()

    def callback(ev):
        if ev.kind == "epoch":
            seconds = clock.train_seconds()
            m = clock.evaluate(setting.metrics, ev.coef)
            per_pass.append({"pass": ev.epoch, **m, "train_seconds": round(seconds, 1),
                             "steps": ev.step})
            log(f"  {name}: pass {ev.epoch}: held-out accuracy {m['accuracy']:.4f}")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LatentPA(setting.task, variant="pa", max_iter=epochs, random_state=0,
                         callback=callback, **kw).fit(setting.X, setting.y)
    final = setting.evaluate(model)
    assert abs(final["accuracy"] - per_pass[-1]["accuracy"]) < 1e-12
    return {"system": name, "per_pass": per_pass, "model": model,
            "updates": model.n_updates_, "negative_cap_hits": model.n_negative_cap_hits_,
            "train_online_accuracy": [round(a, 4) for a in model.accuracy_curve_],
            "n_features": setting.task.n_features}


def online_row(run: dict, name: str, passes: int) -> dict:
    """A table row: the online run after ``passes`` passes (or its last pass)."""
    p = run["per_pass"][min(passes, len(run["per_pass"])) - 1]
    return {"system": name, **{k: p[k] for k in ("accuracy", "accuracy_std", "positive_accuracy",
                                                 "negative_accuracy", "train_seconds")},
            "passes": p["pass"], "steps": p["steps"], "n_features": run["n_features"]}


def run_batch(setting: Setting, name: str, cls, **kw) -> dict:
    """LCLR or LCLR-variant from zero weights; held-out metrics after every outer iteration."""
    per_iter = []
    clock = _Clock()

    def watch(w):
        seconds = clock.train_seconds()
        m = clock.evaluate(setting.metrics, w)
        per_iter.append({"outer_iteration": len(per_iter), **m, "train_seconds": round(seconds, 1)})
        log(f"  {name}: outer iteration {len(per_iter) - 1}: held-out accuracy {m['accuracy']:.4f}")

    global _WATCH
    _WATCH = (len(setting.X), watch)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            model = cls(setting.task, init="zeros", random_state=0, **kw).fit(setting.X, setting.y)
    finally:
        _WATCH = None
    final = setting.evaluate(model)
    assert abs(final["accuracy"] - per_iter[-1]["accuracy"]) < 1e-12
    return {"system": name, "per_iteration": per_iter, "outer_iterations": model.n_iter_,
            "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught),
            "objective_curve": [round(v, 3) for v in model.objective_curve_],
            "cache_size_curve": list(map(int, model.cache_size_curve_)),
            "train_accuracy": round(float(model.score(setting.X, setting.y)), 4),
            "n_features": setting.task.n_features}


def batch_row(run: dict, name: str, iterations: int | None = None) -> dict:
    p = run["per_iteration"][-1 if iterations is None else min(iterations, len(run["per_iteration"]) - 1)]
    return {"system": name, **{k: p[k] for k in ("accuracy", "accuracy_std", "positive_accuracy",
                                                 "negative_accuracy", "train_seconds")},
            "outer_iterations": p["outer_iteration"], "n_features": run["n_features"]}


def markdown(out: dict) -> str:
    s = out["sizes"]
    lines = [
        "# Online latent PA with multiple views: grammaticality (Clifton et al. 2013, Table 2)",
        "",
        f"Held-out Reuters sentences: {s['test_positives']} positives, each paired with "
        f"{s['negative_sets']} sets of {s['test_positives']} trigram-LM samples; accuracy is the "
        f"mean over the sets (± std over the sets; over the order seeds in the seeds row). "
        f"Training: {s['train_positives']} real sentences + {s['train_negatives']} LM samples; LM "
        f"fitted on {s['lm_sentences']} non-held-out sentences. POS tagger: PosTask + "
        f"StructuredSVM on {s['tagger_sentences']} EWT sentences (EWT dev accuracy "
        f"{out['tagger_dev_accuracy']:.3f}). Command: `{out['command']}` ({out['seconds'] / 60:.1f} "
        "min).",
        "",
    ]
    header = ["| Model | Accuracy % | ± | pos. acc. % | neg. acc. % | train s | passes / outer it. |",
              "|---|---|---|---|---|---|---|"]

    def row(r):
        pa, na = r.get("positive_accuracy"), r.get("negative_accuracy")
        it = r.get("passes", r.get("outer_iterations"))
        return (f"| {r['system']} | {100 * r['accuracy']:.2f} | {100 * r['accuracy_std']:.2f} | "
                f"{'-' if pa is None else f'{100 * pa:.1f}'} | "
                f"{'-' if na is None else f'{100 * na:.1f}'} | {r.get('train_seconds', '-')} | {it} |")

    lines += header + [row(r) for r in out["table"]]
    lines += ["", "Other runs:", ""] + header + [row(r) for r in out["extra"]]
    lines += ["", "Paper (Table 2, after 40 outer iterations, 50k + 50k training sentences): LCLR "
              "90.27, LCLR-variant 94.55, online single-view 98.75, + multi-view 98.70, + majority "
              "vote 98.78.", "", "## Held-out accuracy against passes (online learners)", ""]
    curves = out["online_curves"]
    lines += ["| pass | " + " | ".join(c["system"] for c in curves) + " |",
              "|---" * (len(curves) + 1) + "|"]
    for k in range(max(len(c["accuracy"]) for c in curves)):
        cells = [f"{100 * c['accuracy'][k]:.2f}" if k < len(c["accuracy"]) else "" for c in curves]
        lines.append(f"| {k + 1} | " + " | ".join(cells) + " |")
    curves = out["batch_curves"]
    lines += ["", "## Held-out accuracy after each outer iteration (batch learners)", "",
              "| outer iteration | " + " | ".join(c["system"] for c in curves) + " |",
              "|---" * (len(curves) + 1) + "|"]
    for k in range(max(len(c["accuracy"]) for c in curves)):
        cells = [f"{100 * c['accuracy'][k]:.2f}" if k < len(c["accuracy"]) else "" for c in curves]
        lines.append(f"| {k}{' (zero weights)' if k == 0 else ''} | " + " | ".join(cells) + " |")
    lines += ["", "## Notes", ""] + [f"- {n}" for n in out["notes"]] + [""]
    return "\n".join(lines)


def plot(out: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for c in out["online_curves"]:
        ax.plot(range(1, len(c["accuracy"]) + 1), [100 * a for a in c["accuracy"]], marker="o",
                ms=2.5, lw=1.2, label=f"{c['system']} (per pass)")
    for c, style in zip(out["batch_curves"], ("--", ":")):
        acc = c["accuracy"][1:]  # [0] is the zero weight vector
        ax.plot(range(1, len(acc) + 1), [100 * a for a in acc], ls=style, color="black",
                marker="s", ms=2, lw=1.2, label=f"{c['system']} (per outer iteration)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("passes over the data (online) / outer iterations (batch)")
    ax.set_ylabel("held-out accuracy % (mean over negative sets)")
    ax.set_title("Grammaticality: online latent PA vs batch LCLR (held-out Reuters)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)


def order_seed_check(single: Setting, seeds, passes, args, command, sizes) -> int:
    """Online single-view with other example orders: how much the Table 2 row moves."""
    rows = []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = LatentPA(single.task, variant="pa", max_iter=passes, random_state=seed)
            m.fit(single.X, single.y)
        r = {"order_seed": seed, "passes": passes, **single.evaluate(m)}
        rows.append(r)
        log(f"  online single-view, order seed {seed}, {passes} passes -> {r['accuracy']:.4f}")
    accs = np.array([r["accuracy"] for r in rows])
    out = {"command": command, "sizes": sizes, "rows": rows,
           "mean_accuracy": float(accs.mean()), "min_accuracy": float(accs.min())}
    lines = ["# Online single-view: other example orders", "",
             f"`{command}` — the Table 2 row of `online_multiview.md` (order seed 0) rerun with "
             f"other order seeds; {sizes['train_positives']} + {sizes['train_negatives']} "
             f"training sentences, {passes} passes, the same held-out sets.", "",
             "| order seed | accuracy % | ± over negative sets | pos. acc. % | neg. acc. % |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['order_seed']} | {100 * r['accuracy']:.2f} | {100 * r['accuracy_std']:.2f} | "
              f"{100 * r['positive_accuracy']:.1f} | {100 * r['negative_accuracy']:.1f} |"
              for r in rows]
    lines += ["", f"Mean {100 * accs.mean():.2f}, lowest {100 * accs.min():.2f}.", ""]
    out_dir = Path(args.out)
    with atomic_write(out_dir / "online_multiview_order_seeds.json") as fh:
        json.dump(out, fh, indent=2)
    with atomic_write(out_dir / "online_multiview_order_seeds.md") as fh:
        fh.write("\n".join(lines))
    print(json.dumps({"order_seeds": {r["order_seed"]: round(r["accuracy"], 4) for r in rows}}))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n-train", type=int, default=20000, help="training positives (and as many negatives)")
    p.add_argument("--n-test", type=int, default=3000, help="held-out positives")
    p.add_argument("--n-negative-sets", type=int, default=5)
    p.add_argument("--iterations", type=int, default=40,
                   help="passes of the online single-view learner, outer iterations of "
                        "LCLR-variant, cap of LCLR's (the paper's Table 2: 40)")
    p.add_argument("--multiview-passes", type=int, default=10,
                   help="passes of the five-view learners and of the extra online runs")
    p.add_argument("--C", type=float, default=1.0, help="C of LCLR and LCLR-variant (default: LCLR's)")
    p.add_argument("--tagger-sentences", type=int, default=3000)
    p.add_argument("--tagger-iter", type=int, default=5)
    p.add_argument("--min-count", type=int, default=2)
    p.add_argument("--skip-extra", action="store_true", help="no seeds / averaged / chunker rows")
    p.add_argument("--out", default="results")
    p.add_argument("--order-seeds", default="",
                   help="only the online single-view learner, once per listed order seed (e.g. "
                        "1,2), for --iterations passes; writes online_multiview_order_seeds.{json,md}")
    args = p.parse_args(argv)
    command = "python experiments/online_multiview.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    t_all = time.perf_counter()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    T, P = args.iterations, args.multiview_passes

    log(f"training the POS tagger on {args.tagger_sentences} EWT sentences")
    pos_task, pos_coef, tag_acc = train_pos_tagger(args.tagger_sentences, C=0.1,
                                                   max_iter=args.tagger_iter, random_state=0)
    log(f"  EWT dev accuracy {tag_acc:.4f}")

    reuters = dataset_path("english_sentences", "reuters21578_sentences.txt")
    base = GrammaticalityTask(n_train=args.n_train, n_test=args.n_test,
                              n_negative_sets=args.n_negative_sets, seed=0, test_seed=1000)
    base.set_tagger(pos_task, pos_coef)
    log("reading data, fitting the trigram LM, sampling negatives, tagging")
    train = tagged(base, base.read(reuters, split="train"))
    test = tagged(base, base.read(reuters, split="test"))
    lm = base.fit_lm()
    sizes = {"train_positives": int((train.targets > 0).sum()),
             "train_negatives": int((train.targets < 0).sum()),
             "test_positives": int((test.targets > 0).sum()),
             "test_negatives_per_set": int((test.targets > 0).sum()),
             "negative_sets": args.n_negative_sets, "lm_sentences": int(lm.n_sentences_),
             "lm_trigram_types": int(lm.n_trigram_types_), "tagger_sentences": args.tagger_sentences,
             "heldout_fraction": base.heldout_fraction}
    log(f"  sizes {sizes}")

    runs = {}
    single = Setting("iob2", "concat", train, test, args.min_count)
    log(f"single view: {single.task.n_features} features ({single.seconds:.0f}s to featurise)")
    if args.order_seeds:
        return order_seed_check(single, [int(v) for v in args.order_seeds.split(",")], T, args,
                                command, sizes)
    runs["single"] = run_online(single, "online single-view", T)
    for key, name, combine in (("multi", "+ multi-view", "concat"), ("vote", "+ majority vote", "vote")):
        s = Setting(ALL_VIEWS, combine, train, test, args.min_count)
        log(f"{name}: {s.task.n_features} features")
        runs[key] = run_online(s, name, P)
        runs[key].pop("model")
        del s
    # tol=None: the fixed schedule of T outer iterations that the reported results used
    # (the variant's default now stops earlier, once its objective stalls)
    runs["variant"] = run_batch(single, "LCLR-variant", LCLRVariant, C=args.C, max_iter=T,
                                tol=None, dcd_tol=0.1, dcd_max_iter=200)
    runs["lclr"] = run_batch(single, "LCLR", LCLR, C=args.C, max_iter=T, tol=1e-4,
                             dcd_tol=0.1, dcd_max_iter=200)
    table = [
        batch_row(runs["lclr"], "LCLR"),
        batch_row(runs["variant"], "LCLR-variant"),
        online_row(runs["single"], "online single-view", T),
        online_row(runs["multi"], "+ multi-view", P),
        online_row(runs["vote"], "+ majority vote", P),
    ]
    extra = [online_row(runs["single"], "online single-view", P),
             batch_row(runs["variant"], "LCLR-variant", P)]
    online_curves = [runs["single"], runs["multi"], runs["vote"]]

    if not args.skip_extra:
        accs = [online_row(runs["single"], "", P)["accuracy"]]
        for seed in (1, 2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                m = LatentPA(single.task, max_iter=P, random_state=seed).fit(single.X, single.y)
            accs.append(single.evaluate(m)["accuracy"])
            log(f"  online single-view, order seed {seed}, {P} passes -> {accs[-1]:.4f}")
        extra.append({"system": "online single-view, order seeds 0-2 (mean)",
                      "accuracy": float(np.mean(accs)), "accuracy_std": float(np.std(accs)),
                      "per_seed": [round(a, 4) for a in accs], "passes": P})
        runs["averaged"] = run_online(single, "online single-view, averaged", P, average=True)
        runs["averaged"].pop("model")
        extra.append(online_row(runs["averaged"], "online single-view, averaged", P))
        t0 = time.perf_counter()
        chunk = Setting("iob2", "concat", train, test, args.min_count, tagger=(pos_task, pos_coef),
                        chunker="perceptron", chunker_sentences=2000, chunker_epochs=3)
        train_chunker(chunk.task)  # the averaged-perceptron learner, outside the task
        chunker_seconds = time.perf_counter() - t0
        heur = chunk.task.structure_.heuristic_weights()
        zero = runs["single"]["model"]  # the zero-initialised single-view model, T passes
        w0 = scale_to_range(heur, zero.coef_)
        name = "online single-view, chunker init (§4)"
        runs["chunker"] = run_online(chunk, name, P, coef_init=w0)
        runs["chunker"].pop("model")
        runs["chunker"]["init_scale"] = float(np.max(np.abs(zero.coef_)) / np.max(np.abs(heur)))
        runs["chunker"]["chunker_and_featurise_seconds"] = round(chunker_seconds, 1)
        extra.append(online_row(runs["chunker"], name, P))
        online_curves += [runs["averaged"], runs["chunker"]]
    runs["single"].pop("model")

    acc = {r["system"]: r["accuracy"] for r in table}
    order_holds = acc["online single-view"] > acc["LCLR-variant"] > acc["LCLR"]
    same = {r["system"]: r["accuracy"] for r in extra[:2]}
    order_same = same["online single-view"] > same["LCLR-variant"]
    pairs = (("online single-view", "LCLR-variant"), ("LCLR-variant", "LCLR"),
             ("online single-view", "LCLR"))
    notes = [
        "Target of the issue, online single-view > LCLR-variant > LCLR on held-out sentences "
        f"(Table 2 rows, {T} passes / outer iterations): "
        + ("holds." if order_holds else "does NOT hold in this run.") + " Measured: "
        + ", ".join(f"{a} {'>' if acc[a] > acc[b] else '<='} {b}" for a, b in pairs)
        + f". After {P} passes / outer iterations: online single-view "
        + ("> " if order_same else "<= ") + "LCLR-variant.",
        f"Multi-view and vote are run for {P} passes (time budget); the same-length single-view "
        f"row is under 'Other runs'. + multi-view {'>' if acc['+ multi-view'] > same['online single-view'] else '<='} "
        f"single-view, + majority vote {'>' if acc['+ majority vote'] > same['online single-view'] else '<='} "
        f"single-view (at {P} passes).",
        "All models start from zero weights except the chunker-init row; no hyperparameter was "
        "tuned on the held-out sentences. LatentPA: PA step (Alg. 1 line 8), "
        "max_negative_updates=20, last weights (not averaged), order seed 0. LCLR and "
        f"LCLR-variant: C={args.C} (LCLR's default), squared hinge, DCD tol 0.1 / 200 epochs per "
        f"inner solve; LCLR stops when the objective improves by less than 1e-4 (relative) or "
        f"after {T} outer iterations. The paper's batch baselines use a PA classifier inside.",
        "Training accuracy at the end: " + ", ".join(
            f"{runs[k]['system']} {100 * runs[k]['train_accuracy']:.1f}%" for k in ("lclr", "variant"))
        + f", online single-view (online, pass {len(runs['single']['train_online_accuracy'])}) "
        f"{100 * runs['single']['train_online_accuracy'][-1]:.1f}%. Negative cap hits: "
        + ", ".join(f"{runs[k]['system']} {runs[k]['negative_cap_hits']}"
                    for k in ("single", "multi", "vote")) + ".",
        "Decoding: one constrained Viterbi per view (only well-formed tag sequences); features: "
        "1-, 2-, 3-grams of lowercased words and of POS tags around the token paired with its "
        f"chunk tag, chunk-tag bigrams, start/end tags, a bias; attributes seen >= {args.min_count} "
        "times in training.",
        "The averaged model's decision max_h w_avg.Phi is not the average of the iterates' "
        "decisions (max is convex, so it is lower), which shifts it towards 'negative'.",
        "Train seconds exclude the held-out evaluations made after every pass / outer iteration. "
        "Sizes were chosen for the shared 2-core machine's time budget (20,000 + 20,000 "
        "training sentences: about 70 minutes without the extra rows); the paper used "
        "50,000 + 50,000.",
    ]
    out = {"command": command, "sizes": sizes, "tagger_dev_accuracy": tag_acc, "table": table,
           "extra": extra,
           "online_curves": [{"system": r["system"], "accuracy": [p["accuracy"] for p in r["per_pass"]]}
                             for r in online_curves],
           "batch_curves": [{"system": runs[k]["system"],
                             "accuracy": [p["accuracy"] for p in runs[k]["per_iteration"]]}
                            for k in ("lclr", "variant")],
           "runs": runs, "order_online_gt_variant_gt_lclr": order_holds, "notes": notes,
           "args": vars(args), "seconds": round(time.perf_counter() - t_all, 1),
           "machine": platform.platform()}
    with atomic_write(out_dir / "online_multiview.json", "w") as fh:
        json.dump(out, fh, indent=1)
    with atomic_write(out_dir / "online_multiview.md", "w") as fh:
        fh.write(markdown(out))
    plot(out, out_dir / "online_multiview.png")
    summary = {"table2": {k: round(v, 4) for k, v in acc.items()},
               "other": {f"{r['system']} ({r.get('passes', r.get('outer_iterations'))})":
                         round(r["accuracy"], 4) for r in extra},
               "order_online_gt_variant_gt_lclr": order_holds, "sizes": sizes,
               "seconds": out["seconds"]}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
