"""DISTRO's label-side settings (λ2 and the A-step's initial step size) chosen on a tuning
part of the training data, never on evaluation data.

For each corpus, the same tuning part as ``experiments/distro.py`` uses for λ1 (POS: the last
10% of the training sentences; 20ng: a seeded random 10% of the split=train posts), λ1 as
that script chose it, and DISTRO at d = L (one-hot A0).  Appends one JSON line per setting to
results/distro_tuning.jsonl.

    python experiments/distro_tuning.py --corpus 20ng --lambda1 0.01
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from distro import RESULTS, corpora  # noqa: E402

from latentstruct.learners import DISTRO  # noqa: E402
from latentstruct.tasks import get_task_class  # noqa: E402
from latentstruct.tasks.base import Dataset  # noqa: E402


def tuning_data(corpus):
    spec = corpora()[corpus]
    cls = get_task_class(spec["task"])
    task = cls(**spec["params"], **spec.get("train_params", {}))
    full = task.read(spec["train"], split="train")
    order = np.arange(len(full)) if spec["task"] == "pos" else \
        np.random.default_rng(0).permutation(len(full))
    cut = int(len(full) * 0.9)
    pick = lambda idx: Dataset([full.records[i] for i in idx], [full.targets[i] for i in idx],  # noqa: E731
                               full.path)
    fit_part, tune_part = pick(order[:cut]), pick(order[cut:])
    task.fit(fit_part)
    return (task, task.featurize(fit_part), task.encode_targets(fit_part.targets),
            task.featurize(tune_part), task.encode_targets(tune_part.targets))


def one(corpus, lambda1, lambda2, label_eta0, d):
    task, X, Y, Xt, Yt = tuning_data(corpus)
    t0 = time.perf_counter()
    m = DISTRO(task, n_components=d or task.n_labels, lambda1=lambda1, lambda2=lambda2,
               label_eta0=label_eta0).fit(X, Y)
    return {"corpus": corpus, "lambda1": lambda1, "lambda2": lambda2, "label_eta0": label_eta0,
            "d": int(m.n_components), "eta0": m.eta0_, "objective": m.objective_curve_[-1],
            "rank": int(m.effective_rank_), "tuning_accuracy": task.evaluate(Yt, m.predict(Xt))["accuracy"],
            "fit_s": round(time.perf_counter() - t0, 1)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--lambda1", type=float, required=True)
    p.add_argument("--lambda2", type=float, nargs="*", default=[0.004, 0.04, 0.4])
    p.add_argument("--label-eta0", type=float, nargs="*", default=[0.0, 2.0, 8.0],
                   help="0 means the w-steps' eta0")
    p.add_argument("--d", type=int, default=0, help="0 means d = L")
    p.add_argument("--n-jobs", type=int, default=2)
    args = p.parse_args()
    grid = list(itertools.product(args.lambda2, args.label_eta0))
    rows = Parallel(n_jobs=args.n_jobs)(delayed(one)(args.corpus, args.lambda1, l2, e or None, args.d or None)
                                        for l2, e in grid)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "distro_tuning.jsonl", "a", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
            print(json.dumps(r))


if __name__ == "__main__":
    main()
