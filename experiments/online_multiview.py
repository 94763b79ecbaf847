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
  * online single-view      LatentPA (Alg. 1, PA step of line 8), views=iob2
  * + multi-view            LatentPA, views iob1,iob2,ioe1,ioe2,oc, features concatenated
  * + majority vote         LatentPA, the same five views, O+C majority vote
  * LCLR                    batch LCLR (Chang et al. 2010), caches kept across outer iterations
  * LCLR-variant            footnote 1: one cutting-plane round per outer iteration
Extra rows: the online single-view model with averaged weights, and initialised from a
supervised perceptron chunker (CoNLL-2000) scaled to the zero-initialised model's range (§4).

Writes results/online_multiview.{json,md,png}; the last line printed is a JSON summary.

    python experiments/online_multiview.py                    # the reported run
    python experiments/online_multiview.py --n-train 300 --n-test 200 --epochs 2   # smoke test
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
from latentstruct.learners import LCLR, LatentPA, LCLRVariant, StructuredSVM
from latentstruct.learners.latent_pa import scale_to_range
from latentstruct.tasks import GrammaticalityTask, PosTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.grammaticality import Sentence

ALL_VIEWS = "iob1,iob2,ioe1,ioe2,oc"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def train_tagger(n_sentences: int, max_iter: int):
    """PosTask + StructuredSVM on the first sentences of UD EWT train; dev accuracy."""
    pos = PosTask(min_count=2)
    data = pos.read(dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu"))
    sub = Dataset(data.records[:n_sentences], data.targets[:n_sentences])
    pos.fit(sub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(pos, C=0.1, max_iter=max_iter, random_state=0)
        svm.fit(pos.featurize(sub), pos.encode_targets(sub.targets))
    dev = pos.read(dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu"))
    acc = pos.evaluate(pos.encode_targets(dev.targets), svm.predict(pos.featurize(dev)))["accuracy"]
    return pos, svm.coef_, float(acc)


def tagged(task: GrammaticalityTask, data: Dataset) -> Dataset:
    """The dataset with every record's POS tags filled in by the task's tagger."""
    tags = task.tag([r.words for r in data.records])
    records = [Sentence(r.words, p, r.negative_set) for r, p in zip(data.records, tags)]
    return Dataset(records, data.targets, data.path)


def heldout_accuracy(scores, y, sets) -> float:
    """Mean over the negative sets of the accuracy on the positives plus that set."""
    correct = np.where(scores >= 0.0, 1, -1) == y
    pos = y > 0
    return float(np.mean([correct[pos | (sets == k)].mean() for k in np.unique(sets[~pos])]))


class Setting:
    """One task configuration: the task fitted on the (tagged) training data, featurised."""

    def __init__(self, views, combine, train, test, min_count, tagger=None, **task_params):
        t0 = time.perf_counter()
        self.task = GrammaticalityTask(views=views, combine=combine, min_count=min_count,
                                       **task_params)
        if tagger is not None:  # needed by the chunker (CoNLL-2000 sentences are tagged by it)
            self.task.set_tagger(*tagger)
        self.task.fit(train)
        self.X, self.y = self.task.featurize(train), self.task.encode_targets(train.targets)
        self.test = test
        self.Xt, self.yt = self.task.featurize(test), self.task.encode_targets(test.targets)
        self.sets = np.array([r.negative_set for r in test.records])
        self.seconds = time.perf_counter() - t0

    def accuracy(self, coef) -> float:
        return heldout_accuracy(self.task.decision_batch(self.Xt, coef), self.yt, self.sets)

    def evaluate(self, learner) -> dict:
        return self.task.evaluate_model(self.test, learner.predict, learner.decision_function)


def run_online(setting: Setting, name: str, epochs: int, **kw) -> dict:
    curve = []

    def callback(ev):
        if ev.kind == "epoch":
            curve.append(setting.accuracy(ev.coef))
            log(f"  {name}: pass {ev.epoch}: held-out accuracy {curve[-1]:.4f}")

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = LatentPA(setting.task, variant="pa", max_iter=epochs, random_state=0,
                     callback=callback, **kw).fit(setting.X, setting.y)
    seconds = time.perf_counter() - t0
    metrics = setting.evaluate(m)
    return {"system": name, **metrics, "train_seconds": round(m.fit_time_, 1),
            "wall_seconds_with_curve": round(seconds, 1), "passes": m.n_passes_,
            "updates": m.n_updates_, "steps": m.n_steps_,
            "negative_cap_hits": m.n_negative_cap_hits_,
            "train_online_accuracy": [round(a, 4) for a in m.accuracy_curve_],
            "heldout_curve": [round(a, 4) for a in curve], "n_features": setting.task.n_features,
            "_model": m}


def run_batch(setting: Setting, name: str, cls, **kw) -> dict:
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        m = cls(setting.task, init="zeros", random_state=0, **kw).fit(setting.X, setting.y)
    seconds = time.perf_counter() - t0
    metrics = setting.evaluate(m)
    return {"system": name, **metrics, "train_seconds": round(seconds, 1),
            "outer_iterations": m.n_iter_, "converged": not any(
                issubclass(w.category, ConvergenceWarning) for w in caught),
            "objective_curve": [round(v, 3) for v in m.objective_curve_],
            "cache_size_curve": list(map(int, m.cache_size_curve_)),
            "train_accuracy": round(float(m.score(setting.X, setting.y)), 4),
            "n_features": setting.task.n_features}


def markdown(out: dict) -> str:
    s = out["sizes"]
    lines = [
        "# Online latent PA with multiple views: grammaticality (Clifton et al. 2013, Table 2)",
        "",
        f"Held-out Reuters sentences: {s['test_positives']} positives, each paired with "
        f"{s['negative_sets']} sets of {s['test_positives']} trigram-LM samples; accuracy is the "
        f"mean over the sets (± std over the sets). Training: {s['train_positives']} real "
        f"sentences + {s['train_negatives']} LM samples; LM fitted on {s['lm_sentences']} "
        f"non-held-out sentences. POS tagger: PosTask + StructuredSVM on {s['tagger_sentences']} "
        f"EWT sentences (EWT dev accuracy {out['tagger_dev_accuracy']:.3f}).",
        "",
        "| Model | Accuracy % | ± | pos. acc. % | neg. acc. % | train s | passes / outer it. | updates |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in out["table"] + out["extra"]:
        it = r.get("passes", r.get("outer_iterations"))
        lines.append(
            f"| {r['system']} | {100 * r['accuracy']:.2f} | {100 * r['accuracy_std']:.2f} | "
            f"{100 * r['positive_accuracy']:.1f} | {100 * r['negative_accuracy']:.1f} | "
            f"{r['train_seconds']} | {it} | {r.get('updates', '-')} |")
    lines += ["", "Paper (Table 2, 40 outer iterations, 50k+50k training sentences): LCLR 90.27, "
              "LCLR-variant 94.55, online single-view 98.75, + multi-view 98.70, "
              "+ majority vote 98.78.", "", "## Held-out accuracy against passes (online)", "",
              "| pass | " + " | ".join(r["system"] for r in out["curves"]) + " |",
              "|---" * (len(out["curves"]) + 1) + "|"]
    n = max(len(r["heldout_curve"]) for r in out["curves"])
    for p in range(n):
        cells = [f"{100 * r['heldout_curve'][p]:.2f}" if p < len(r["heldout_curve"]) else ""
                 for r in out["curves"]]
        lines.append(f"| {p + 1} | " + " | ".join(cells) + " |")
    lines += ["", "## Notes", ""] + [f"- {n}" for n in out["notes"]] + [""]
    return "\n".join(lines)


def plot(out: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in out["curves"]:
        c = r["heldout_curve"]
        ax.plot(range(1, len(c) + 1), [100 * a for a in c], marker="o", ms=3, label=r["system"])
    for r, style in zip([r for r in out["table"] if "outer_iterations" in r], ("--", ":")):
        ax.axhline(100 * r["accuracy"], ls=style, color="grey",
                   label=f"{r['system']} ({r['outer_iterations']} outer it.)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("passes over the training data")
    ax.set_ylabel("held-out accuracy % (mean over negative sets)")
    ax.set_title("Grammaticality: online latent PA vs batch LCLR")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n-train", type=int, default=5000, help="training positives (and as many negatives)")
    p.add_argument("--n-test", type=int, default=3000, help="held-out positives")
    p.add_argument("--n-negative-sets", type=int, default=5)
    p.add_argument("--epochs", type=int, default=10, help="passes of the online learners")
    p.add_argument("--lclr-iter", type=int, default=10, help="max outer iterations of LCLR")
    p.add_argument("--variant-iter", type=int, default=20, help="outer iterations of LCLR-variant")
    p.add_argument("--C", type=float, default=1.0, help="C of LCLR and LCLR-variant (default: LCLR's)")
    p.add_argument("--tagger-sentences", type=int, default=3000)
    p.add_argument("--tagger-iter", type=int, default=5)
    p.add_argument("--min-count", type=int, default=2)
    p.add_argument("--skip-extra", action="store_true", help="only the five rows of Table 2")
    p.add_argument("--out", default="results")
    args = p.parse_args(argv)
    t_all = time.perf_counter()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    log(f"training the POS tagger on {args.tagger_sentences} EWT sentences")
    pos_task, pos_coef, tag_acc = train_tagger(args.tagger_sentences, args.tagger_iter)
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

    table, extra, curves = [], [], []
    single = Setting("iob2", "concat", train, test, args.min_count)
    log(f"single view: {single.task.n_features} features ({single.seconds:.0f}s to featurise)")
    r = run_online(single, "online single-view", args.epochs)
    zero_model = r.pop("_model")
    table.append(r)
    curves.append(r)
    log(f"  -> {r['accuracy']:.4f}")

    for name, combine in (("+ multi-view", "concat"), ("+ majority vote", "vote")):
        s = Setting(ALL_VIEWS, combine, train, test, args.min_count)
        log(f"{name}: {s.task.n_features} features")
        r = run_online(s, name, args.epochs)
        r.pop("_model")
        table.append(r)
        curves.append(r)
        log(f"  -> {r['accuracy']:.4f}")
        del s

    log("LCLR-variant")
    r = run_batch(single, "LCLR-variant", LCLRVariant, C=args.C, max_iter=args.variant_iter,
                  dcd_tol=0.1, dcd_max_iter=200)
    table.insert(0, r)
    log(f"  -> {r['accuracy']:.4f} ({r['train_seconds']}s)")
    log("LCLR")
    r = run_batch(single, "LCLR", LCLR, C=args.C, max_iter=args.lclr_iter, tol=1e-4,
                  dcd_tol=0.1, dcd_max_iter=200)
    table.insert(0, r)
    log(f"  -> {r['accuracy']:.4f} ({r['train_seconds']}s)")

    if not args.skip_extra:
        r = run_online(single, "online single-view, averaged", args.epochs, average=True)
        r.pop("_model")
        extra.append(r)
        curves.append(r)
        log(f"  averaged -> {r['accuracy']:.4f}")
        t0 = time.perf_counter()
        chunk = Setting("iob2", "concat", train, test, args.min_count, tagger=(pos_task, pos_coef),
                        chunker="perceptron", chunker_sentences=2000, chunker_epochs=3)
        heur = chunk.task.heuristic_weights()
        w0 = scale_to_range(heur, zero_model.coef_)
        r = run_online(chunk, "online single-view, chunker init (§4)", args.epochs, coef_init=w0)
        r.pop("_model")
        r["init_scale"] = float(np.max(np.abs(zero_model.coef_)) / np.max(np.abs(heur)))
        r["chunker_seconds"] = round(time.perf_counter() - t0 - r["wall_seconds_with_curve"], 1)
        extra.append(r)
        curves.append(r)
        log(f"  chunker init -> {r['accuracy']:.4f}")

    acc = {r["system"]: r["accuracy"] for r in table}
    order_holds = acc["online single-view"] > acc["LCLR-variant"] > acc["LCLR"]
    notes = [
        "Target of the issue: online single-view > LCLR-variant > LCLR on held-out sentences: "
        + ("holds." if order_holds else "does NOT hold in this run (see the table)."),
        "All models start from zero weights except the chunker-init row; no hyperparameter was "
        f"tuned on the held-out sentences. LatentPA: PA step (Alg. 1 line 8), {args.epochs} passes, "
        "max_negative_updates=20, last weights (not averaged). LCLR and LCLR-variant: C="
        f"{args.C} (LCLR's default), squared hinge, DCD tol 0.1 / 200 epochs per inner solve; "
        f"LCLR max {args.lclr_iter} outer iterations (tol 1e-4), the variant "
        f"{args.variant_iter}. The paper's batch baselines use a PA classifier inside.",
        "Decoding: one constrained Viterbi per view (only well-formed tag sequences); features: "
        "1-, 2-, 3-grams of lowercased words and of POS tags around the token paired with its "
        f"chunk tag, chunk-tag bigrams, start/end tags, a bias; attributes seen >= {args.min_count} "
        "times in training.",
        "The averaged model's decision max_h w_avg.Phi is not the average of the iterates' "
        "decisions (max is convex, so it is lower), which shifts it towards 'negative'.",
        "Sizes were chosen so that the whole script runs in about 20 minutes on the shared "
        "2-core machine; the paper used 50,000 + 50,000 training sentences.",
    ]
    out = {"sizes": sizes, "tagger_dev_accuracy": tag_acc, "table": table, "extra": extra,
           "curves": [{"system": r["system"], "heldout_curve": r["heldout_curve"]} for r in curves],
           "order_online_gt_variant_gt_lclr": order_holds, "notes": notes,
           "args": vars(args), "seconds": round(time.perf_counter() - t_all, 1),
           "machine": platform.platform()}
    with atomic_write(out_dir / "online_multiview.json", "w") as fh:
        json.dump(out, fh, indent=1)
    with atomic_write(out_dir / "online_multiview.md", "w") as fh:
        fh.write(markdown(out))
    plot(out, out_dir / "online_multiview.png")
    summary = {"accuracy": {k: round(v, 4) for k, v in acc.items()},
               **{r["system"]: round(r["accuracy"], 4) for r in extra},
               "order_online_gt_variant_gt_lclr": order_holds, "sizes": sizes,
               "seconds": out["seconds"]}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
