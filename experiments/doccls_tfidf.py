"""Numbers in (issue 43): DocumentClassifier on a TfidfVectorizer matrix, beside LinearSVC.

Data: 20 Newsgroups (``$LATENTSTRUCT_DATA/20newsgroups/train.jsonl``, the bydate training
file; the official test split is held back and not used).  The project's own by-date-like
split of that file: ``doccls`` ``split=train`` (9,050 posts) to train, ``split=eval``
(2,264 posts, the last 20% of article ids of each newsgroup) as the dev set scored here.

One ``sklearn.feature_extraction.text.TfidfVectorizer()`` (defaults: lower-case, tokens of
two or more word characters, smoothed idf, L2 rows; headers kept, as the task keeps them)
is fitted on the training texts; the training and dev matrices go, side by side in one run:

* ``DocumentClassifier()`` (default learner: the structural SVM, Crammer-Singer with squared
  slacks, no intercept) on the matrix;
* ``DocumentClassifier(learner="distro")`` on the matrix (its defaults: d = L, lambda1
  chosen on a held-out 10% of the training rows);
* ``sklearn.svm.LinearSVC`` on the same matrix (one-vs-rest squared hinge, intercept);
* for reference, ``DocumentClassifier`` on the raw texts as before (``features="tokens"``,
  the task's default, and ``features="tfidf"``, whose features equal the vectorizer's:
  it must give the matrix model's accuracy).

C of the two SVMs: both at their defaults (DocumentClassifier C=0.1, LinearSVC C=1.0), and
both chosen the same way: from ``--grid`` by accuracy on a seeded random 10% of the
training posts after fitting on the other 90% (vectorizer refitted on the 90%), then refit
on all training posts.  The dev set is never used for a choice.

Writes results/doccls_tfidf.{json,md}.  Fit times are wall and process CPU seconds of
``fit`` alone (the vectorizer's time is listed apart; the text models featurise inside fit).

    python experiments/doccls_tfidf.py [--grid 0.01 0.1 1 10] [--no-distro] [--results DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LATENTSTRUCT_DATA", ROOT.parent / "shared" / "data")).resolve()


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load_split(path: Path, split: str) -> tuple[list[str], list[str]]:
    from latentstruct.tasks.doccls import DocumentClassificationTask

    data = DocumentClassificationTask(split=split).read(path)
    return [d.text for d in data.records], list(data.targets)


def timed_fit(make, X, y) -> tuple[object, float, float, list[str]]:
    """(fitted model, wall s, CPU s, warning messages) of ``make().fit(X, y)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make()
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(X, y)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return model, wall, cpu, sorted({f"{w.category.__name__}: {str(w.message)[:160]}"
                                     for w in caught})


def accuracy(model, X, y) -> float:
    return float(np.mean(np.asarray(model.predict(X), dtype=object) == np.asarray(y, dtype=object)))


def choose_c(name: str, make, texts, y, grid, seed: int) -> tuple[float, dict]:
    """C from ``grid`` by accuracy on a seeded random 10% of the training posts (model fitted
    on the other 90%, the vectorizer refitted on those 90%); ties go to the smaller C."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    held = order[: len(texts) // 10]
    keep = np.sort(order[len(texts) // 10 :])
    held = np.sort(held)
    vec = TfidfVectorizer().fit([texts[i] for i in keep])
    Xa, Xb = vec.transform([texts[i] for i in keep]), vec.transform([texts[i] for i in held])
    ya, yb = [y[i] for i in keep], [y[i] for i in held]
    scores = {}
    for C in grid:
        model, wall, _, _ = timed_fit(lambda C=C: make(C), Xa, ya)
        scores[float(C)] = accuracy(model, Xb, yb)
        log(f"  {name} C={C}: tuning accuracy {scores[float(C)]:.4f} ({wall:.1f} s)")
    best = max(scores.values())
    return min(C for C, s in scores.items() if s == best), scores


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", type=float, nargs="+", default=[0.01, 0.1, 1.0, 10.0])
    ap.add_argument("--no-distro", action="store_true", help="leave DISTRO out")
    ap.add_argument("--seed", type=int, default=0, help="the tuning part's seed")
    ap.add_argument("--results", type=Path, default=ROOT / "results")
    args = ap.parse_args(argv)

    import sklearn
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    import latentstruct
    from latentstruct import DocumentClassifier

    path = DATA / "20newsgroups" / "train.jsonl"
    if not path.is_file():
        print(f"no 20 Newsgroups file at {path}; set LATENTSTRUCT_DATA", file=sys.stderr)
        return 2
    train_texts, y_train = load_split(path, "train")
    dev_texts, y_dev = load_split(path, "eval")
    log(f"{len(train_texts)} training posts, {len(dev_texts)} dev posts")

    w0, c0 = time.perf_counter(), time.process_time()
    vec = TfidfVectorizer()
    X_train = vec.fit_transform(train_texts)
    vec_fit = (time.perf_counter() - w0, time.process_time() - c0)
    w0 = time.perf_counter()
    X_dev = vec.transform(dev_texts)
    vec_dev_s = time.perf_counter() - w0
    log(f"tf-idf matrix {X_train.shape}, {X_train.nnz} stored values ({vec_fit[0]:.1f} s)")

    def ours(C):
        return DocumentClassifier(C=C)

    def svc(C):
        return LinearSVC(C=C, random_state=0)

    runs, predictions = [], {}

    def run(system, input_, make, Xtr, Xdv, c_rule, C=None, note=""):
        log(f"fitting {system} on {input_} ({c_rule}{'' if C is None else f', C={C}'})")
        model, wall, cpu, warns = timed_fit(make, Xtr, y_train)
        acc = accuracy(model, Xdv, y_dev)
        predictions[(system, input_, c_rule)] = list(model.predict(Xdv))
        row = {"system": system, "input": input_, "C_rule": c_rule, "C": C,
               "dev_accuracy": acc, "fit_wall_s": round(wall, 2), "fit_cpu_s": round(cpu, 2),
               "warnings": warns, "note": note}
        for attr in ("n_iter_",):
            inner = getattr(model, "learner_", model)
            if hasattr(inner, attr):
                row[attr] = int(np.max(getattr(inner, attr)))
        if getattr(model, "learner_", None) is not None and model.learner_.registry_name == "distro":
            row["lambda1_"] = float(model.learner_.lambda1_)
            row["effective_rank_"] = int(model.learner_.effective_rank_)
        log(f"  dev accuracy {acc:.4f}, fit {wall:.1f} s wall / {cpu:.1f} s CPU"
            + (f"; warnings: {warns}" if warns else ""))
        runs.append(row)
        return model

    # --- both at their defaults ---------------------------------------------------------
    run("DocumentClassifier (ssvm)", "tf-idf matrix", lambda: DocumentClassifier(), X_train,
        X_dev, "default", 0.1)
    if not args.no_distro:
        run("DocumentClassifier (distro)", "tf-idf matrix",
            lambda: DocumentClassifier(learner="distro"), X_train, X_dev, "default",
            note="DISTRO's own defaults (lambda1 chosen inside fit)")
    run("LinearSVC", "tf-idf matrix", lambda: svc(1.0), X_train, X_dev, "default", 1.0)

    # --- C chosen the same way for both SVMs --------------------------------------------
    tuning = {}
    for name, make in (("DocumentClassifier (ssvm)", ours), ("LinearSVC", svc)):
        log(f"choosing C of {name} on a held-out 10% of the training posts")
        C, scores = choose_c(name, make, train_texts, y_train, args.grid, args.seed)
        tuning[name] = {"chosen": C, "tuning_accuracy": scores}
        run(name, "tf-idf matrix", lambda make=make, C=C: make(C), X_train, X_dev, "tuned", C)

    # --- the text path, for reference -----------------------------------------------------
    run("DocumentClassifier (ssvm)", "raw text, features=tokens", lambda: DocumentClassifier(),
        train_texts, dev_texts, "default", 0.1, note="the task's default features")
    run("DocumentClassifier (ssvm)", "raw text, features=tfidf",
        lambda: DocumentClassifier(features="tfidf"), train_texts, dev_texts, "default", 0.1,
        note="the same features as the tf-idf matrix")
    same = predictions[("DocumentClassifier (ssvm)", "raw text, features=tfidf", "default")] \
        == predictions[("DocumentClassifier (ssvm)", "tf-idf matrix", "default")]
    runs[-1]["note"] += (": dev predictions identical to the matrix model's" if same else
                         ": dev predictions DIFFER from the matrix model's")

    out = {
        "data": {"file": "20newsgroups/train.jsonl", "train": "doccls split=train",
                 "dev": "doccls split=eval", "n_train": len(train_texts),
                 "n_dev": len(dev_texts), "n_labels": len(set(y_train))},
        "vectorizer": {"class": "TfidfVectorizer()", "shape": list(X_train.shape),
                       "nnz": int(X_train.nnz), "fit_transform_wall_s": round(vec_fit[0], 2),
                       "transform_dev_wall_s": round(vec_dev_s, 2)},
        "grid": args.grid, "tuning_seed": args.seed, "tuning": tuning, "runs": runs,
        "versions": {"latentstruct": latentstruct.__version__, "sklearn": sklearn.__version__,
                     "python": platform.python_version()},
        "machine": f"{os.cpu_count()} cores, shared with other jobs (times are indicative)",
        "command": "python experiments/doccls_tfidf.py " + " ".join(argv or sys.argv[1:]),
    }
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "doccls_tfidf.json").write_text(json.dumps(out, indent=2) + "\n")
    (args.results / "doccls_tfidf.md").write_text(markdown(out))
    log(f"wrote {args.results / 'doccls_tfidf.json'} and .md")
    return 0


def markdown(out: dict) -> str:
    d, v = out["data"], out["vectorizer"]
    lines = [
        "# DocumentClassifier on a TfidfVectorizer matrix (20 Newsgroups)", "",
        f"`{out['command'].strip()}`; train: {d['train']} ({d['n_train']} posts), "
        f"scored on {d['dev']} ({d['n_dev']} posts, the dev part; the official test split is "
        f"held back). One `TfidfVectorizer()` fitted on the training texts: "
        f"{v['shape'][0]} x {v['shape'][1]}, {v['nnz']} stored values, "
        f"{v['fit_transform_wall_s']} s. Fit times: `fit` alone, wall / process CPU seconds, "
        f"on {out['machine']}.", "",
        "| system | input | C | dev accuracy | fit s (wall / CPU) | notes |",
        "|---|---|---|---|---|---|"]
    for r in out["runs"]:
        c = "-" if r["C"] is None else f"{r['C']:g} ({r['C_rule']})"
        notes = [r["note"]] if r["note"] else []
        if "lambda1_" in r:
            notes.append(f"lambda1 = {r['lambda1_']:g}, effective rank {r['effective_rank_']}")
        if r.get("n_iter_") is not None:
            notes.append(f"n_iter_ {r['n_iter_']}")
        if r["warnings"]:
            notes.append("warned: " + "; ".join(w.split(":")[0] for w in r["warnings"]))
        lines.append(f"| {r['system']} | {r['input']} | {c} | {r['dev_accuracy']:.4f} | "
                     f"{r['fit_wall_s']:.1f} / {r['fit_cpu_s']:.1f} | {'; '.join(notes)} |")
    lines += ["", "C chosen on a seeded random 10% of the training posts (fit on the other "
              "90%, vectorizer refitted there; ties to the smaller C):", ""]
    for name, t in out["tuning"].items():
        scores = ", ".join(f"C={c:g}: {s:.4f}" for c, s in t["tuning_accuracy"].items())
        lines.append(f"- {name}: {scores} -> C = {t['chosen']:g}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
