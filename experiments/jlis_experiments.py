"""J-LIS against StructuredSVM with few labelled structures (Chang et al. 2010, ICML).

Shapes of the paper's experiments, on data we have:
  * ``citations`` (Table 2): Cora references 1-300 for training, 301-400 as dev; B = 100
    training references (+ shuffled copies), S = 100, 400, 1600 tokens and all the other
    200 training references;
  * ``pos`` (Fig. 2): UD EWT UPOS, S = 200 ... 1600 tokens, for several |B|, evaluated on
    the first 500 sentences of EWT dev;
  * ``negatives`` (Fig. 3): POS at the smallest S with 1, 2 and 4 negatives per positive.
S and B are deterministic, disjoint samples (``sample_seed``).  Both learners use the same
features and C1; J-LIS adds the binary examples with cost C2.

Writes results/jlis_<name>.json, .md and a plot.

    python experiments/jlis_experiments.py citations
    python experiments/jlis_experiments.py pos
    python experiments/jlis_experiments.py negatives
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from latentstruct.data.atomic import atomic_write
from latentstruct.data.citations import read_cora, split_cora
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import JLIS, StructuredSVM
from latentstruct.tasks import CitationTask, PosTask
from latentstruct.tasks.base import Dataset
from latentstruct.testing import require_data

C1, C2 = 0.1, 1.0
# J-LIS at its defaults (the command line's): since the inexact cutting plane (inner_gap)
# they run in minutes, so nothing is loosened here to save time.
JLIS_KW = dict(random_state=0)


def run_pair(task, train: Dataset, dev: Dataset) -> dict:
    sample = task.training_sample(train)
    task.fit(sample)
    X, Y = task.featurize(sample), task.encode_targets(sample.targets)
    XB, yB = task.featurize(sample.binary), np.asarray(sample.binary.targets)
    Xd, Yd = task.featurize(dev), task.encode_targets(dev.targets)
    out = {"s_tokens": int(sum(len(y) for y in Y)), "s_sentences": len(Y),
           "b_pos": int((yB > 0).sum()), "b_neg": int((yB < 0).sum())}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        ssvm = StructuredSVM(task, C=C1, max_iter=30, random_state=0).fit(X, Y)
        out["ssvm_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        jlis = JLIS(task, C1=C1, C2=C2, **JLIS_KW).fit(X, Y, XB, yB)
        out["jlis_s"] = time.perf_counter() - t0
    out["ssvm_acc"] = task.evaluate(Yd, ssvm.predict(Xd))["accuracy"]
    out["jlis_acc"] = task.evaluate(Yd, jlis.predict(Xd))["accuracy"]
    out["jlis_objective_curve"] = jlis.objective_curve_
    print(f"  S={out['s_tokens']} tokens, B={out['b_pos']}+{out['b_neg']}: "
          f"SSVM {out['ssvm_acc']:.4f}  J-LIS {out['jlis_acc']:.4f}", file=sys.stderr)
    return out


def citations(args) -> list[dict]:
    split = split_cora(read_cora(require_data("cora_citations", "tagged_references.txt")))
    train = Dataset(split.train, [c.labels for c in split.train])
    dev = Dataset(split.dev, [c.labels for c in split.dev])
    runs = []
    for n_tokens in (100, 400, 1600, None):
        task = CitationTask(n_structured_tokens=n_tokens, n_binary=100, negatives_per_positive=1)
        runs.append({"experiment": "citations", "n_structured_tokens": n_tokens,
                     **run_pair(task, train, dev)})
    return runs


def _ewt():
    tr = PosTask().read(require_data("ud_english_ewt", "en_ewt-ud-train.conllu"))
    dv = PosTask().read(require_data("ud_english_ewt", "en_ewt-ud-dev.conllu"))
    return tr, Dataset(dv.records[:500], dv.targets[:500])


def pos(args) -> list[dict]:
    train, dev = _ewt()
    runs = []
    for n_binary in (1000, 2000):
        for n_tokens in (200, 400, 800, 1600):
            task = PosTask(n_structured_tokens=n_tokens, n_binary=n_binary)
            runs.append({"experiment": "pos", "n_structured_tokens": n_tokens,
                         **run_pair(task, train, dev)})
    return runs


def negatives(args) -> list[dict]:
    train, dev = _ewt()
    runs = []
    for per in (1, 2, 4):
        task = PosTask(n_structured_tokens=200, n_binary=1000, negatives_per_positive=per)
        runs.append({"experiment": "negatives", "negatives_per_positive": per,
                     **run_pair(task, train, dev)})
    return runs


def markdown(runs: list[dict]) -> str:
    lines = ["| S tokens | B+ | B- | StructuredSVM | J-LIS | gain (points) |", "|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['s_tokens']} | {r['b_pos']} | {r['b_neg']} | {100 * r['ssvm_acc']:.1f} "
                     f"| {100 * r['jlis_acc']:.1f} | {100 * (r['jlis_acc'] - r['ssvm_acc']):+.1f} |")
    return "\n".join(lines) + "\n"


def plot(runs: list[dict], path: Path, name: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if name == "negatives":
        x = [r["negatives_per_positive"] for r in runs]
        ax.plot(x, [100 * r["jlis_acc"] for r in runs], "o-", label="J-LIS")
        ax.plot(x, [100 * r["ssvm_acc"] for r in runs], "s--", label="StructuredSVM (S only)")
        ax.set_xlabel("negatives per positive binary example")
    else:
        for b in sorted({r["b_pos"] for r in runs}):
            rs = [r for r in runs if r["b_pos"] == b]
            ax.plot([r["s_tokens"] for r in rs], [100 * r["jlis_acc"] for r in rs], "o-",
                    label=f"J-LIS, |B+| = {b}")
        rs = [r for r in runs if r["b_pos"] == runs[0]["b_pos"]]
        ax.plot([r["s_tokens"] for r in rs], [100 * r["ssvm_acc"] for r in rs], "s--",
                color="black", label="StructuredSVM")
        ax.set_xscale("log")
        ticks = sorted({r["s_tokens"] for r in runs})
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("labelled tokens in S")
    ax.set_ylabel("token accuracy on dev (%)")
    ax.set_title(f"J-LIS vs StructuredSVM ({name})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=120, bbox_inches="tight")


EXPERIMENTS = {"citations": citations, "pos": pos, "negatives": negatives}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment", choices=sorted(EXPERIMENTS))
    ap.add_argument("--out", default="results")
    ap.add_argument("--replot", action="store_true", help="redraw the plot from the saved JSON")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.replot:
        saved = json.loads((out / f"jlis_{args.experiment}.json").read_text())
        plot(saved["runs"], out / f"jlis_{args.experiment}.png", args.experiment)
        return 0
    runs = EXPERIMENTS[args.experiment](args)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"jlis_{args.experiment}"
    with atomic_write(f"{stem}.json") as fh:
        json.dump({"C1": C1, "C2": C2, "jlis": JLIS_KW, "runs": runs}, fh, indent=1)
    table = markdown(runs)
    with atomic_write(f"{stem}.md") as fh:
        fh.write(table)
    plot(runs, Path(f"{stem}.png"), args.experiment)
    print(table)
    print(json.dumps({"experiment": args.experiment,
                      "gain_at_smallest_S": round(runs[0]["jlis_acc"] - runs[0]["ssvm_acc"], 4)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
