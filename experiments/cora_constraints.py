"""Issue 54's must-show "Constraints and scarce data": Cora citation field extraction with 5,
20 and 100 labelled training citations, held-out token accuracy with and without the
declarative rules, with the same learner.

Data: ``$LATENTSTRUCT_DATA/cora_citations/tagged_references.txt`` (references 1-400; 401-500
are held back).  As the data README suggests, references 1-300 are the training pool and
301-400 the held-out set.  For each size n and each draw (``--draws``, seeds 0..), n
citations are drawn at random from the pool without replacement; every setting of one draw
trains on the same citations.

The rules (chosen on the training pool alone: each holds on all but a few of its 300
citations)::

    first author|editor            a citation opens with its authors or editors (299/300)
    forbid title|date -> author    no author after the title or the date (300/300)
    contiguous *                   each field is one segment (286/300)
    if volume then journal|booktitle   (299/300)
    count date <= 4                (300/300)

``first`` and ``forbid`` are local: every decoder keeps them, training included, so a
training citation that breaks one is refused; the one pool citation that does (reference
47, which opens with its institution) is left out of the pool, for every setting alike.  The
other three are global: by default (``train_global_rules=False``) training keeps the local
rules alone and prediction all of them (an ILP where the best labellings break a rule, the
constrained conditional models' "learning plus inference"); the setting
``rules-in-training`` trains the structural SVM under all of them (its loss-augmented argmax
an ILP; the CRF cannot, and is skipped).  Training under a rule needs training labellings
that keep it, so that setting trains on the drawn citations that keep every rule
(``n_used``; 14 of the pool's 300 split a field).

Settings per learner (``--learners``, default ``ssvm crf``: the citations task's default
and the CRF), each at the learner's defaults (``--settings``, default ``none rules``):
``none`` (no rules), ``rules`` and ``rules-in-training``.  One JSON line per run
(token accuracy on the held-out 100, fit and predict seconds, how many held-out citations
needed the ILP); ``--summary`` writes the markdown table of the means.  The run of
2026-11-30 is ``results/cora_constraints.jsonl`` and ``.md``.

    python experiments/cora_constraints.py [--sizes 5 20 100] [--draws 5]
    python experiments/cora_constraints.py --sizes 5 20 --learners ssvm --settings rules-in-training
    python experiments/cora_constraints.py --summary results/cora_constraints.md
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
RULES = ("first author|editor; forbid title|date -> author; contiguous *; "
         "if volume then journal|booktitle; count date <= 4")
POOL, HELD_OUT = 300, 100


def load():
    from latentstruct.data.citations import read_cora

    citations = read_cora(DATA / "cora_citations" / "tagged_references.txt")
    pool, held = citations[:POOL], citations[POOL:POOL + HELD_OUT]
    return ([list(c.tokens) for c in pool], [list(c.labels) for c in pool],
            [list(c.tokens) for c in held], [list(c.labels) for c in held])


def keeps_local_rules(tags) -> bool:
    """Whether a training citation keeps the local rules (the pool's filter)."""
    return tags[0] in ("author", "editor") and not any(
        a in ("title", "date") and b == "author" for a, b in zip(tags, tags[1:]))


def ilp_count(model, X) -> int:
    """How many citations of ``X`` the ILP decoded (the others: a k-best labelling)."""
    import latentstruct.inference.global_constraints as gc

    count = 0
    solve = gc.constrained_argmax

    def counted(*args):
        nonlocal count
        result = solve(*args)
        count += bool(result.stats.get("ilp"))
        return result

    from latentstruct.tasks.sequence import structure

    structure.constrained_argmax = counted
    try:
        model.predict(X)
    finally:
        structure.constrained_argmax = solve
    return count


def keeps_every_rule(X, Y) -> tuple[list, list]:
    """The citations of ``X``, ``Y`` whose labelling keeps every rule (global ones too)."""
    from latentstruct.tasks.sequence.rules import first_broken_rule

    labels = sorted({t for tags in Y for t in tags})
    ids = {t: i for i, t in enumerate(labels)}
    keep = []
    for x, tags in zip(X, Y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rules naming labels this draw lacks
            broken = first_broken_rule(RULES, labels, [[ids[t] for t in tags]],
                                       include_global=True)
        if broken is None:
            keep.append((x, tags))
    return [x for x, _ in keep], [t for _, t in keep]


def run(learner: str, setting: str, X, Y, X_dev, Y_dev, n: int, draw: int) -> dict:
    from latentstruct import Tagger

    options = {"none": {}, "rules": {"rules": RULES},
               "rules-in-training": {"rules": RULES, "train_global_rules": True}}[setting]
    if setting == "rules-in-training":
        X, Y = keeps_every_rule(X, Y)
    wall = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence notes: every run at the defaults
        model = Tagger(task="citations", learner=learner, **options).fit(X, Y)
    fit_s = time.perf_counter() - wall
    wall = time.perf_counter()
    predicted = model.predict(X_dev)
    predict_s = time.perf_counter() - wall
    right = sum(p == g for P, G in zip(predicted, Y_dev) for p, g in zip(P, G))
    total = sum(len(G) for G in Y_dev)
    return {"learner": learner, "setting": setting, "n_train": n, "n_used": len(X), "draw": draw,
            "accuracy": round(right / total, 4), "fit_s": round(fit_s, 1),
            "predict_s": round(predict_s, 2),
            "ilp_citations": ilp_count(model, X_dev) if setting != "none" else 0,
            "held_out_citations": len(X_dev), "held_out_tokens": total}


def summary(lines: list[dict]) -> str:
    from statistics import mean

    key = lambda r: (r["learner"], r["n_train"])  # noqa: E731
    groups: dict = {}
    for r in lines:
        groups.setdefault(key(r), {}).setdefault(r["setting"], []).append(r)
    out = ["| learner | n train | draws | no rules | rules | difference | rules in training"
           " (citations used) | fit s: rules / in training |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (learner, n), by in sorted(groups.items()):
        none = mean(r["accuracy"] for r in by.get("none", []))
        ruled = mean(r["accuracy"] for r in by.get("rules", []))
        ibt = by.get("rules-in-training")
        fit = f"{mean(r['fit_s'] for r in by.get('rules', [])):.1f}"
        if ibt:
            used = mean(r["n_used"] for r in ibt)
            in_training = f"{100 * mean(r['accuracy'] for r in ibt):.1f} ({used:g})"
            fit += f" / {mean(r['fit_s'] for r in ibt):.1f}"
        else:
            in_training = "-"
        out.append(f"| {learner} | {n} | {len(by.get('rules', []))} | {100 * none:.1f} | "
                   f"{100 * ruled:.1f} | {100 * (ruled - none):+.1f} | {in_training} | "
                   f"{fit} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[5, 20, 100])
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--learners", nargs="+", default=["ssvm", "crf"])
    ap.add_argument("--settings", nargs="+", default=["none", "rules"],
                    choices=["none", "rules", "rules-in-training"])
    ap.add_argument("--out", default=str(ROOT / "results" / "cora_constraints.jsonl"))
    ap.add_argument("--summary", default=None, help="write the markdown table of --out here")
    args = ap.parse_args(argv)
    if args.summary:
        lines = [json.loads(s) for s in Path(args.out).read_text(encoding="utf-8").splitlines()
                 if s.strip()]
        Path(args.summary).write_text(summary(lines), encoding="utf-8")
        return 0
    try:
        X, Y, X_dev, Y_dev = load()
    except FileNotFoundError as exc:
        print(f"{exc}: set LATENTSTRUCT_DATA", file=sys.stderr)
        return 2
    pool = [i for i in range(len(X)) if keeps_local_rules(Y[i])]
    with open(args.out, "a", encoding="utf-8") as out:
        for n in args.sizes:
            for draw in range(args.draws):
                rng = np.random.default_rng(draw)
                chosen = sorted(rng.choice(pool, size=n, replace=False).tolist())
                Xn, Yn = [X[i] for i in chosen], [Y[i] for i in chosen]
                for learner in args.learners:
                    for setting in args.settings:
                        if setting == "rules-in-training" and learner == "crf":
                            continue  # its likelihood cannot keep global rules
                        line = run(learner, setting, Xn, Yn, X_dev, Y_dev, n, draw)
                        print(json.dumps(line), flush=True)
                        out.write(json.dumps(line) + "\n")
                        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
