"""MSRP with a user's own word-pair scores (issue 43): LCLR and the two-stage "Alignment +
Learning" baseline, each with and without a vector-similarity feature, side by side.

The similarity is the cosine of spaCy's contextual token vectors (``doc.tensor`` of
``en_core_web_sm``, :class:`latentstruct.featurizers.SpacyVectors`) over the task's own
tokens (:meth:`~latentstruct.tasks.pairs.GraphPairTask.pair_tokens`); it enters as the
word-mapping feature ``map:score:0`` and adds its top-k pairs to the candidates
(:mod:`latentstruct.tasks.pairs.scores`).

Split: the one of experiments/lclr_graph_alignment.py for seed 0 — pool = msrp/train.tsv,
the tuning part T is a stratified 20% drawn with seed 12345, the evaluation set E_0 a
stratified 20% of the rest drawn with seed 0, training = pool minus E_0.  The C values are
that experiment's choices (two-stage 0.3, LCLR 1, LCLR started from the two-stage weights
fitted with C=1, as there), max_iter 10, tol 1e-3, top_k 3, default features.
``--n-train N`` trains on a stratified seeded sample of N training pairs (the time this
session had; the test set is always the whole E_0).

    nice -n 10 python experiments/msrp_vector_similarity.py --n-train 800
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from latentstruct.data.pairs import read_msrp
from latentstruct.data.paths import dataset_path, missing_data_message
from latentstruct.featurizers import SpacyVectors
from latentstruct.learners import LCLR, TwoStage
from latentstruct.tasks.pairs import ParaphraseTask


def stratified(idx, y, size, seed):
    rest, part = train_test_split(np.asarray(idx), test_size=int(size), stratify=y[idx],
                                  random_state=seed)
    return np.sort(rest), np.sort(part)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-train", type=int, default=0, help="training sample (0: all)")
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--out", default="results")
    args = p.parse_args(argv)
    try:
        path = dataset_path("msrp", "train.tsv")
        pairs = read_msrp(path)
    except (FileNotFoundError, OSError):
        sys.exit(missing_data_message("msrp"))
    y = np.array([1 if q.label == 1 else -1 for q in pairs], dtype=np.int64)
    n = len(y)
    everything = np.arange(n)
    rest, _ = stratified(everything, y, round(0.2 * n), 12345)
    test = stratified(rest, y, round(0.2 * n), 0)[1]
    train = np.setdiff1d(everything, test)
    if args.n_train and args.n_train < len(train):
        train = stratified(train, y, args.n_train, 1)[1]
    X = [(q.first, q.second) for q in pairs]
    t0 = time.perf_counter()
    tokens = ParaphraseTask().pair_tokens(X)
    sims = SpacyVectors(pipeline="en_core_web_sm").pair_similarities(
        [(list(a), list(b)) for a, b in tokens])
    log(f"tokens and similarities of {n} pairs: {time.perf_counter() - t0:.0f}s")
    Xs = [(a, b, S) for (a, b), S in zip(X, sims)]
    rows = []
    for scored in (False, True):
        data = Xs if scored else X
        task = ParaphraseTask(top_k=3)
        t0 = time.perf_counter()
        task.fit(task.make_dataset([data[i] for i in train], y[train]))
        Xtr = task.featurize(task.make_dataset([data[i] for i in train], y[train]))
        Xte = task.featurize(task.make_dataset([data[i] for i in test], y[test]))
        log(f"featurised (scores={scored}): {task.n_features} features, "
            f"{time.perf_counter() - t0:.0f}s")
        kw = {"n_jobs": args.n_jobs, "random_state": 0}
        t0 = time.perf_counter()
        two = TwoStage(task, C=0.3, **kw).fit(Xtr, y[train])
        secs = time.perf_counter() - t0
        acc = float(np.mean(two.predict(Xte) == y[test]))
        rows.append({"system": "two-stage", "C": 0.3, "vector_similarity": scored,
                     "accuracy": acc, "fit_s": secs})
        log(f"two-stage scores={scored}: {acc:.4f} ({secs:.0f}s)")
        init = TwoStage(task, C=1.0, **kw).fit(Xtr, y[train]).coef_
        t0 = time.perf_counter()
        lclr = LCLR(task, C=1.0, coef_init=init, tol=1e-3, max_iter=10, **kw).fit(Xtr, y[train])
        secs = time.perf_counter() - t0
        acc = float(np.mean(lclr.predict(Xte) == y[test]))
        rows.append({"system": "LCLR", "C": 1.0, "vector_similarity": scored,
                     "accuracy": acc, "fit_s": secs, "outer_iterations": int(lclr.n_iter_)})
        if scored:
            w = lclr.coef_
            rows[-1]["weight_map_score_0"] = float(w[task.feature_index_.lookup("map:score:0")])
        log(f"LCLR scores={scored}: {acc:.4f} ({secs:.0f}s)")
    out = Path(args.out)
    cmd = "python experiments/msrp_vector_similarity.py" + "".join(f" {a}" for a in (argv or sys.argv[1:]))
    result = {"command": cmd, "n_pool": n, "n_train": len(train), "n_test": len(test),
              "test_positive_rate": float(np.mean(y[test] > 0)), "rows": rows}
    (out / "msrp_vector_similarity.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["# MSRP with a vector-similarity word-pair score (issue 43)", "",
             f"`{cmd}`: {len(train)} training pairs, {len(test)} test pairs (E_0 of "
             f"experiments/lclr_graph_alignment.py; positive rate "
             f"{result['test_positive_rate']:.3f}).", "",
             "| system | C | vector similarity | accuracy % | fit s |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['system']} | {r['C']:g} | {'yes' if r['vector_similarity'] else 'no'} "
                     f"| {100 * r['accuracy']:.2f} | {r['fit_s']:.0f} |")
    (out / "msrp_vector_similarity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
