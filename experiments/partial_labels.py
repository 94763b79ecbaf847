"""Issue 54's must-show "Partial labels": chunkers and taggers trained with a share of the
training tags hidden at random, the hidden tags treated as latent (the CRF sums over them,
the structural SVM completes them), against the same tags filled in as ``O`` (chunking) or
as the most frequent tag (UPOS: ``NOUN``), and against full labels.

Data (the official test files are held back):

* chunking: ``$LATENTSTRUCT_DATA/conll2000/train.txt``, its first 7,936 sentences train, its
  last 1,000 are held out (the split of ``experiments/chunk_constraints.py``); 50 % and 80 %
  of the training tags hidden;
* UPOS: ``ud_english_ewt/en_ewt-ud-train.conllu`` trains, ``en_ewt-ud-dev.conllu`` is held
  out; 50 % hidden.

Each token's tag is hidden independently with the given probability (numpy's generator,
``--seed``, default 0). Each run is ``Chunker(learner=...)`` / ``Tagger(learner=...)`` at its
defaults; one JSON line per run (held-out chunk F1 or token accuracy, the fit's wall and CPU
seconds, the structural SVM's completion rounds). The run of 2026-11-30 is
``results/partial_labels.jsonl``.

    python experiments/partial_labels.py [--tasks chunk pos] [--learners crf ssvm]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LATENTSTRUCT_DATA", ROOT.parent / "shared" / "data")).resolve()
DEV = 1000
FILL = {"chunk": "O", "pos": "NOUN"}


def hide(Y, fraction: float, seed: int, fill=None) -> list:
    """``Y`` with each tag hidden (None, or ``fill``) with probability ``fraction``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for tags in Y:
        gone = rng.random(len(tags)) < fraction
        out.append([fill if g else t for t, g in zip(tags, gone)])
    return out


def load(task: str):
    from latentstruct.data.readers import read_conll2000, read_conllu

    if task == "chunk":
        sentences = read_conll2000(DATA / "conll2000" / "train.txt")
        train, dev = sentences[:-DEV], sentences[-DEV:]
        as_x = lambda s: list(zip(s.words, s.pos))  # noqa: E731
        return ([as_x(s) for s in train], [list(s.tags) for s in train],
                [as_x(s) for s in dev], [list(s.tags) for s in dev])
    train = read_conllu(DATA / "ud_english_ewt" / "en_ewt-ud-train.conllu")
    dev = read_conllu(DATA / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    return ([list(s.words) for s in train], [list(s.upos) for s in train],
            [list(s.words) for s in dev], [list(s.upos) for s in dev])


def run(task: str, learner: str, X, Y, X_dev, Y_dev, setting: str, fraction: float) -> dict:
    from latentstruct import Chunker, Tagger

    cls = Chunker if task == "chunk" else Tagger
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence notes: every run at the defaults
        model = cls(learner=learner).fit(X, Y)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    score = model.score(X_dev, Y_dev)
    return {"task": task, "learner": learner, "setting": setting, "hidden": fraction,
            "metric": "f1" if task == "chunk" else "accuracy", "score": round(score, 4),
            "fit_wall_s": round(wall, 1), "fit_cpu_s": round(cpu, 1),
            "completions": getattr(model.learner_, "n_completions_", None),
            "train_sentences": len(X), "held_out_sentences": len(X_dev)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["chunk", "pos"], choices=["chunk", "pos"])
    ap.add_argument("--learners", nargs="+", default=["crf", "ssvm"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "results" / "partial_labels.jsonl"))
    args = ap.parse_args(argv)
    fractions = {"chunk": [0.5, 0.8], "pos": [0.5]}
    with open(args.out, "a", encoding="utf-8") as out:
        for task in args.tasks:
            try:
                X, Y, X_dev, Y_dev = load(task)
            except FileNotFoundError as exc:
                print(f"{exc}: set LATENTSTRUCT_DATA", file=sys.stderr)
                return 2
            for learner in args.learners:
                runs = [("full", 0.0, Y)]
                for f in fractions[task]:
                    runs.append(("latent", f, hide(Y, f, args.seed)))
                    runs.append((f"filled-{FILL[task]}", f, hide(Y, f, args.seed, FILL[task])))
                for setting, f, labels in runs:
                    line = run(task, learner, X, labels, X_dev, Y_dev, setting, f)
                    print(json.dumps(line), flush=True)
                    out.write(json.dumps(line) + "\n")
                    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
