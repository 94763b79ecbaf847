"""Issue 53, item 3's must-show: the chunker trained by the L1-slack algorithms that moved
from the PyStruct layer into the core (one-slack cutting planes, block-coordinate
Frank-Wolfe, stochastic subgradient) against its default structural SVM, on CoNLL-2000.

Data: ``$LATENTSTRUCT_DATA/conll2000/train.txt`` (the official test file is held back):
its first 7,936 sentences train, its last 1,000 are the dev set scored here (chunk F1,
conlleval's, through ``Chunker.score``).  Every run is ``Chunker(learner=..., ...)`` with
the task's defaults (window 2, affixes up to 3, the exact feature index), so the features
are the same for every learner.

How each learner's settings were picked (nothing is tuned on the dev set):

* ``ssvm`` (the default): the chunker's defaults (squared slacks, C=0.1, tol=0.05, at most
  50 passes).
* the L1-slack learners minimise ``1/2 ||w||^2 + C sum_i xi_i`` (linear slacks, another
  problem than the default's squared slacks), with the same C=0.1, each learner's own
  defaults otherwise, and a fixed budget of iterations (``--budget``) sized so that a fit
  takes minutes on two cores:

  - ``one-slack``: cutting-plane iterations, with PyStruct's inference cache of 10
    structures per sentence;
  - ``frank-wolfe``: epochs of block-coordinate steps with line search and averaging;
  - ``subgradient-ssvm``: epochs of mini-batches of 64 sentences (an update shrinks every
    weight, so one-sentence steps would spend an epoch on that), Pegasos's step size, and
    the linearly weighted average of the iterates.

  Within these budgets their ``tol`` is not reached (each stops at its budget with a
  ConvergenceWarning); ``converged`` says so.

One JSON line per learner is printed (and all of them written to
``results/chunk_ssvm_algorithms.json``): dev F1, the whole ``fit`` in wall and process-CPU
seconds, ``n_iter_`` and ``converged_``.  ``n_jobs=1`` throughout.

    python experiments/chunk_ssvm_algorithms.py [--learners ssvm one-slack ...]
        [--budget one-slack=60 frank-wolfe=10 subgradient-ssvm=10] [--train N]
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
C = 0.1
BUDGET = {"one-slack": 60, "frank-wolfe": 10, "subgradient-ssvm": 10}
LEARNERS = ("ssvm", "one-slack", "frank-wolfe", "subgradient-ssvm")


def settings(name: str, budget: dict) -> dict:
    """The options a learner runs with (see the module's docstring)."""
    if name == "ssvm":
        return {}
    common = {"C": C, "max_iter": budget[name]}
    if name == "one-slack":
        return {**common, "inference_cache": 10}
    if name == "subgradient-ssvm":
        return {**common, "batch_size": 64, "averaging": "linear"}
    return common


def load(n_train: int | None):
    from latentstruct.data.readers.conll2000 import read_conll2000

    path = DATA / "conll2000" / "train.txt"
    if not path.is_file():
        sys.exit(f"chunk_ssvm_algorithms: {path} is missing; set LATENTSTRUCT_DATA to the "
                 "folder holding conll2000/train.txt")
    sentences = read_conll2000(path)
    X = [list(zip(s.words, s.pos)) for s in sentences]
    y = [list(s.tags) for s in sentences]
    train_end = len(X) - DEV if n_train is None else min(n_train, len(X) - DEV)
    return X[:train_end], y[:train_end], X[-DEV:], y[-DEV:]


def run(name: str, budget: dict, data) -> dict:
    from latentstruct import Chunker

    X_train, y_train, X_dev, y_dev = data
    options = settings(name, budget)
    model = Chunker(learner=name, n_jobs=1, **options)
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X_train, y_train)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    learner = model.learner_
    return {
        "learner": name, "options": options, "n_train": len(X_train), "n_dev": len(X_dev),
        "dev_f1": round(float(model.score(X_dev, y_dev)), 4),
        "fit_wall_s": round(wall, 1), "fit_cpu_s": round(cpu, 1),
        "n_iter": getattr(learner, "n_iter_", None),
        "converged": getattr(learner, "converged_", None),
        "warnings": sorted({str(w.message).split(";")[0] for w in caught})[:3],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=LEARNERS)
    parser.add_argument("--budget", nargs="*", default=[], metavar="LEARNER=N",
                        help="iterations for an L1-slack learner (default: "
                             + ", ".join(f"{k}={v}" for k, v in BUDGET.items()) + ")")
    parser.add_argument("--train", type=int, default=None,
                        help="train on the first N sentences only (default: all but the dev)")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    budget = dict(BUDGET)
    for item in args.budget:
        key, _, value = item.partition("=")
        if key not in BUDGET or not value.isdigit() or int(value) < 1:
            parser.error(f"--budget {item!r}: expected LEARNER=N with LEARNER one of "
                         f"{', '.join(BUDGET)} and N a positive integer")
        budget[key] = int(value)
    data = load(args.train)
    rows = []
    for name in args.learners:
        print(f"[{time.strftime('%H:%M:%S')}] training {name} ...", file=sys.stderr, flush=True)
        rows.append(run(name, budget, data))
        print(json.dumps(rows[-1]), flush=True)
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / "chunk_ssvm_algorithms.json"
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
