"""DISTRO at the command line's defaults against the default one-hot SSVM (issue 30's check).

For seeds 0-4, through the command line exactly as a user types it:

* 20 Newsgroups: ``latentstruct train doccls --train 20newsgroups/train.jsonl --option
  split=train [--learner distro] --option random_state=S``, scored by ``latentstruct evaluate
  ... --option split=eval`` (the by-date-like evaluation part of the training file);
* EWT XPOS: ``latentstruct train pos --train en_ewt-ud-train.conllu --option tag_column=xpos
  [--learner distro] --option random_state=S``, scored on ``en_ewt-ud-dev.conllu``.

Resumable: each finished run is a line of results/distro_cli_defaults.jsonl and is not run
again.  Writes results/distro_cli_defaults.{json,md}: mean ± std per learner, the paired
differences and a sign test over the seeds.

    python experiments/distro_cli_defaults.py [--seeds 0 1 2 3 4] [--results DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from latentstruct.significance import sign_test

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LATENTSTRUCT_DATA", ROOT.parent / "shared" / "data")).resolve()
LEARNERS = ("distro", "ssvm")


def commands(corpus: str, learner: str, seed: int, model: str) -> tuple[list, list]:
    """(train argv, evaluate argv) of one run."""
    if corpus == "20ng":
        data = str(DATA / "20newsgroups" / "train.jsonl")
        train = ["train", "doccls", "--train", data, "--option", "split=train"]
        evaluate = ["evaluate", "--model", model, "--test", data, "--option", "split=eval"]
    else:
        train = ["train", "pos", "--train", str(DATA / "ud_english_ewt" / "en_ewt-ud-train.conllu"),
                 "--option", "tag_column=xpos"]
        evaluate = ["evaluate", "--model", model, "--test",
                    str(DATA / "ud_english_ewt" / "en_ewt-ud-dev.conllu")]
    train += ["--model", model, "--learner", learner, "--option", f"random_state={seed}"]
    return train, evaluate


def run_one(corpus: str, learner: str, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        model = str(Path(tmp) / "model.npz")
        train, evaluate = commands(corpus, learner, seed, model)
        t0 = time.perf_counter()
        subprocess.run(["latentstruct", *train], check=True, stderr=subprocess.DEVNULL)
        fit_s = time.perf_counter() - t0
        out = subprocess.run(["latentstruct", *evaluate], check=True, capture_output=True,
                             text=True).stdout
    return {"corpus": corpus, "learner": learner, "seed": seed,
            "accuracy": json.loads(out)["accuracy"], "fit_s": round(fit_s, 1),
            "command": "latentstruct " + " ".join(train)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--results", default=str(ROOT / "results"))
    args = p.parse_args()
    out = Path(args.results)
    out.mkdir(exist_ok=True)
    runs_path = out / "distro_cli_defaults.jsonl"
    runs = {}
    if runs_path.exists():
        for line in runs_path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            runs[(r["corpus"], r["learner"], r["seed"])] = r
    for corpus in ("20ng", "ewt-xpos"):
        for seed in args.seeds:
            for learner in LEARNERS:
                if (corpus, learner, seed) in runs:
                    continue
                print(f"[{corpus}] {learner} seed {seed}", file=sys.stderr, flush=True)
                r = runs[(corpus, learner, seed)] = run_one(corpus, learner, seed)
                with open(runs_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(r) + "\n")
    table, lines = {}, ["# DISTRO at the command line's defaults against the default `ssvm`", "",
                        "`python experiments/distro_cli_defaults.py` (runs in "
                        "`results/distro_cli_defaults.jsonl`); accuracy % on the evaluation "
                        "part, mean ± std over seeds " + ", ".join(map(str, args.seeds)) + "; fit s is wall "
                        "time, on 2 cores shared with other runs", "",
                        "| corpus | `ssvm` (default) | `distro` (default) | paired difference | "
                        "seeds distro ahead | sign test p | fit s (ssvm / distro) |",
                        "|---|---|---|---|---|---|---|"]
    for corpus in ("20ng", "ewt-xpos"):
        acc = {lr: np.array([runs[(corpus, lr, s)]["accuracy"] for s in args.seeds])
               for lr in LEARNERS}
        fit = {lr: float(np.mean([runs[(corpus, lr, s)]["fit_s"] for s in args.seeds]))
               for lr in LEARNERS}
        diff = acc["distro"] - acc["ssvm"]
        p_value = sign_test(acc["distro"], acc["ssvm"]).p_value
        table[corpus] = {lr: {"mean": float(acc[lr].mean()), "std": float(acc[lr].std()),
                              "accuracies": acc[lr].tolist(), "fit_s": fit[lr]} for lr in LEARNERS}
        table[corpus]["difference"] = {"mean": float(diff.mean()),
                                       "wins": int((diff > 0).sum()), "sign_test": p_value}
        lines.append(f"| {corpus} | {100 * acc['ssvm'].mean():.2f} ± {100 * acc['ssvm'].std():.2f} "
                     f"| {100 * acc['distro'].mean():.2f} ± {100 * acc['distro'].std():.2f} "
                     f"| {100 * diff.mean():+.2f} | {int((diff > 0).sum())} of {diff.size} "
                     f"| {p_value:.3g} | {fit['ssvm']:.0f} / {fit['distro']:.0f} |")
    (out / "distro_cli_defaults.json").write_text(json.dumps(table, indent=1) + "\n")
    (out / "distro_cli_defaults.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
