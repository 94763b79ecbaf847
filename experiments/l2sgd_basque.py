"""sklearn-crfsuite's ``l2sgd`` against ``latentstruct.crfsuite``'s, on UD Basque UPOS.

The reproduction of issue 55 (item 2b): ``$LATENTSTRUCT_DATA/ud_basque_bdt/eu-ud-dev.conllu``,
the first three quarters of its sentences for training and the last quarter for testing,
the sklearn-crfsuite tutorial's token features (``word2features`` of
``benchmarks/crfsuite_compat.py``, words only: UPOS is the target, so no POS feature),
``CRF(algorithm="l2sgd", c2=C2, max_iterations=E)`` for E in 50 and 200, once with
``sklearn_crfsuite.CRF`` and once with ``latentstruct.crfsuite.CRF`` on the same dicts.
C2 is 0.1 by default: the issue's figures (CRFsuite 0.8630, latentstruct 0.8526 at 50
epochs) are those of c2=0.1, the l2sgd setting of ``benchmarks/crfsuite_compat.py``; at
CRFsuite's default c2=1.0 both sides score near 0.82 (``--c2 1``).

Each side is warmed up first (one short fit: python-crfsuite's import, numba's compiled
kernels loaded from their cache), then trained ``--repeats`` times per setting.  SGD's
result depends on the visiting order, and each CRFsuite run in a process shuffles
differently (its ``rand()`` goes on), so latentstruct's runs use seeds 0, 1, ... of its
shuffle (``random_state`` of the learner that ``latentstruct.crfsuite.CRF`` maps l2sgd to;
run 0 is what ``latentstruct.crfsuite.CRF`` gives).  Kept: the token accuracy of every
run, their mean, the fastest training time (wall seconds of ``fit``) and the epochs each
run took (both stop early by CRFsuite's delta/period rule when it is met).  The last line
printed is one JSON object.

    python experiments/l2sgd_basque.py                 # c2=0.1, 50 and 200 epochs, 5 runs each
    python experiments/l2sgd_basque.py --epochs 50 --repeats 1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import warnings
from pathlib import Path


def _compat_module():
    """``benchmarks/crfsuite_compat.py`` (the tutorial's features), loaded by its path."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "crfsuite_compat.py"
    spec = importlib.util.spec_from_file_location("crfsuite_compat", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def data():
    """(X_train, y_train, X_test, y_test): the dev file cut 3/4 : 1/4, words-only features."""
    from latentstruct.data.paths import dataset_path
    from latentstruct.data.readers import read_conllu

    path = dataset_path("ud_basque_bdt", "eu-ud-dev.conllu")
    if not path.exists():
        sys.exit(f"{path} not found: set $LATENTSTRUCT_DATA to the data folder")
    sents = read_conllu(path)
    cut = 3 * len(sents) // 4
    features = _compat_module().sent2features

    def xy(part):  # as xy_ud of benchmarks/crfsuite_compat.py
        return ([features([(w, None) for w in s.words]) for s in part],
                [list(s.upos) for s in part])

    return (*xy(sents[:cut]), *xy(sents[cut:]))


def crf(side: str, seed: int, **params):
    """sklearn-crfsuite's CRF, or latentstruct.crfsuite's with its SGD's shuffle seeded
    (``seed`` 0: the learner's default, exactly ``latentstruct.crfsuite.CRF``)."""
    if side == "sklearn-crfsuite":
        from sklearn_crfsuite import CRF

        return CRF(**params)
    from latentstruct.crfsuite import CRF

    class Seeded(CRF):
        def _learner_and_options(self):
            name, opts, task_opts = super()._learner_and_options()
            return name, {**opts, "random_state": seed}, task_opts

    model = Seeded(**params)
    return model


def run(side: str, parts, c2: float, epochs: int, seed: int = 0) -> dict:
    from latentstruct.crfsuite import metrics

    X, y, X_test, y_test = parts
    crf_ = crf(side, seed, algorithm="l2sgd", c2=c2, max_iterations=epochs)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crf_.fit(X, y)
    seconds = time.perf_counter() - t0
    pred = [list(p) for p in crf_.predict(X_test)]
    return {"accuracy": metrics.flat_accuracy_score(y_test, pred), "seconds": seconds,
            "epochs": len(crf_.training_log_.iterations)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--c2", type=float, default=0.1,
                        help="the issue's setting, 0.1 (CRFsuite's default: 1.0)")
    parser.add_argument("--epochs", default="50,200")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    parts = data()
    sides = ("sklearn-crfsuite", "latentstruct")
    small = tuple(p[:100] for p in parts)
    for side in sides:  # warm-up: imports, compiled kernels
        run(side, small, args.c2, 2)
    results = {}
    for epochs in (int(e) for e in args.epochs.split(",") if e):
        row = {}
        for side in sides:
            runs = [run(side, parts, args.c2, epochs, seed) for seed in range(args.repeats)]
            accuracy = [r["accuracy"] for r in runs]
            row[side] = {"accuracy": [round(a, 4) for a in accuracy],
                         "mean_accuracy": round(sum(accuracy) / len(accuracy), 4),
                         "seconds": round(min(r["seconds"] for r in runs), 3),
                         "epochs_run": [r["epochs"] for r in runs]}
        ours, theirs = row["latentstruct"], row["sklearn-crfsuite"]
        row["accuracy_difference_points"] = round(
            100 * (ours["mean_accuracy"] - theirs["mean_accuracy"]), 2)
        row["first_run_difference_points"] = round(
            100 * (ours["accuracy"][0] - theirs["accuracy"][0]), 2)
        row["time_ratio"] = round(ours["seconds"] / theirs["seconds"], 3)
        results[str(epochs)] = row
        print(f"{epochs} epochs: accuracy {theirs['accuracy']} (sklearn-crfsuite) "
              f"{ours['accuracy']} (latentstruct); mean difference "
              f"{row['accuracy_difference_points']} points; seconds {theirs['seconds']} / "
              f"{ours['seconds']} (ratio {row['time_ratio']})", file=sys.stderr)
    print(json.dumps({"experiment": "l2sgd_basque", "c2": args.c2, "repeats": args.repeats,
                      "n_train": len(parts[0]), "n_test": len(parts[2]),
                      "results": results}))


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
