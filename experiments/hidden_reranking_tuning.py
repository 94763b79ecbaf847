"""Choose the reranker's SGD settings on the tuning split only (never the evaluation data).

Uses the jackknifed EWT training lists written by ``experiments/hidden_reranking.py``
(``--work-dir``): the first 85% train, the last 15% (the mixtures' tuning split) score.
For the pos/head model it tries (init_noise, eta0) pairs with 15 SGD epochs and prints one
JSON line per setting; results/hidden_reranking_tuning.jsonl holds the run behind the
defaults of hidden_reranking.py (init_noise 0.1, eta0 0.2).

    python experiments/hidden_reranking_tuning.py --work-dir /tmp/hidden_reranking
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

from latentstruct.data.dependency.kbest import read_kbest
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners.probabilistic.reranker import HiddenVariableReranker
from latentstruct.tasks.rerank import RerankTask, kbest_dataset

GRID = {("pos", "head"): [(0.01, 0.05), (0.1, 0.05), (0.3, 0.05), (0.1, 0.2), (0.01, 0.2)],
        ("no-hidden", "head"): [(0.01, 0.05), (0.01, 0.2)]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work-dir", default=os.environ.get("TMPDIR", "/tmp") + "/hidden_reranking")
    p.add_argument("--lists", default="ewt_train_k16_f4.kbest")
    p.add_argument("--epochs", type=int, default=15)
    args = p.parse_args()
    header, sents = read_kbest(os.path.join(args.work_dir, args.lists))
    n_tune = int(round(len(sents) * 0.15))
    train = kbest_dataset(header, sents[: len(sents) - n_tune])
    tune = kbest_dataset(header, sents[len(sents) - n_tune:])
    warnings.simplefilter("ignore", ConvergenceWarning)
    for (domain, graph), grid in GRID.items():
        task = RerankTask(domain=domain, graph=graph).fit(train)
        X, Y = task.featurize(train), task.encode_targets(train.targets)
        TX, TY = task.featurize(tune), task.encode_targets(tune.targets)
        for noise, eta0 in grid:
            t0 = time.perf_counter()
            model = HiddenVariableReranker(structure=task, n_epochs=args.epochs, eta0=eta0,
                                           init_noise=noise).fit(X, Y)
            r = task.evaluate(TY, model.predict(TX))
            print(json.dumps({"domain": domain, "init_noise": noise, "eta0": eta0,
                              "tune_uas": r["uas"], "base": r["base_uas"],
                              "s": round(time.perf_counter() - t0)}), flush=True)


if __name__ == "__main__":
    main()
