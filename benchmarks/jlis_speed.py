"""J-LIS speed: the inexact cutting plane (``inner_gap``, the default) against the exact one.

J-LIS on UPOS tagging (UD EWT train; S = a deterministic sample of at least 200 labelled
tokens, |B+| = 2,000 unlabelled sentences and one shuffled copy of each in B-, C1 = 0.1,
C2 = 1, every other option at its command-line default) is trained twice in one run, on the
same data, one after the other:

  * old: ``inner_gap=None`` -- every restricted problem (Eq. 9) solved by the DCD to
    ``dcd_tol`` and the cutting plane run until no working set grows: the behaviour of
    the code before ``inner_gap`` existed;
  * new: the defaults (restricted problems solved loosely while the working sets grow, the
    rounds stopped by a duality-gap certificate tied to the outer progress).

Both minimise the same objective Q (J-LIS Eq. 4 with squared slacks) with the same outer
loop (``max_iter`` = 20, ``tol`` = 1e-5).  "Same objective" means: the new run's final Q
(at the weights it returns) is at most the old run's final Q times (1 + 1e-4); the
relative difference (Q_new - Q_old) / Q_old is printed either way.  Times are wall
seconds of ``fit`` (featurising excluded) and CPU seconds of the process, which other
jobs on the machine disturb less.  The numba kernels are compiled (or loaded from their
cache) before timing.  The last line printed is one JSON object; ``speed_ratio`` is the
old wall time over the new one.

    python benchmarks/jlis_speed.py                       # ~65 min here: old ~58, new ~5
    python benchmarks/jlis_speed.py --n-binary 1000 --max-iter 3   # a quick look

Data: ${LATENTSTRUCT_DATA:-../shared/data}/ud_english_ewt/en_ewt-ud-train.conllu.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

from latentstruct.data.paths import dataset_path, missing_data_message
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import JLIS
from latentstruct.tasks import PosTask

SAME_OBJECTIVE_RTOL = 1e-4


def load(n_tokens: int, n_binary: int):
    path = dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu")
    if not path.is_file():
        sys.exit(missing_data_message("ud_english_ewt"))
    task = PosTask(n_structured_tokens=n_tokens, n_binary=n_binary)
    sample = task.training_sample(task.read(path))
    task.fit(sample)
    X, Y = task.featurize(sample), task.encode_targets(sample.targets)
    XB, yB = task.featurize(sample.binary), np.asarray(sample.binary.targets)
    return task, X, Y, XB, yB


def train(task, data, **options) -> dict:
    """Fit J-LIS with ``options`` and return its timings and final objective."""
    X, Y, XB, yB = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        wall, cpu = time.perf_counter(), time.process_time()
        model = JLIS(task, **options).fit(X, Y, XB, yB)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "objective": float(model.objective_curve_[-1]), "n_iter": int(model.n_iter_),
            "stop_reason": model.stop_reason_,
            "objective_curve": [round(float(q), 6) for q in model.objective_curve_]}


def warm_up(task, data) -> float:
    """Compile (or load) the numba kernels on a few examples, outside the timed runs."""
    X, Y, XB, yB = data
    t0 = time.perf_counter()
    k = min(len(XB), 20)
    idx = np.concatenate([np.flatnonzero(yB > 0)[:k // 2], np.flatnonzero(yB < 0)[:k // 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        JLIS(task, max_iter=1, init_max_iter=1).fit(X, Y, task.structure().subset(XB, idx), yB[idx])
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-structured-tokens", type=int, default=200,
                    help="labelled tokens in S (default 200)")
    ap.add_argument("--n-binary", type=int, default=2000, help="|B+| (default 2000)")
    ap.add_argument("--C2", type=float, default=1.0, help="binary slack cost (default 1.0)")
    ap.add_argument("--max-iter", type=int, default=None,
                    help="outer iterations for both runs (default: J-LIS's own, 20)")
    ap.add_argument("--only", choices=("old", "new"), default=None,
                    help="run one side only (no ratio is printed then)")
    args = ap.parse_args()

    task, X, Y, XB, yB = load(args.n_structured_tokens, args.n_binary)
    data = (X, Y, XB, yB)
    common = {"C1": 0.1, "C2": args.C2}
    if args.max_iter is not None:
        common["max_iter"] = args.max_iter
    print(f"J-LIS POS: |S| = {sum(len(y) for y in Y)} tokens ({len(Y)} sentences), "
          f"|B+| = {int((yB > 0).sum())}, |B-| = {int((yB < 0).sum())}, "
          f"{task.n_features} features, options {common}")
    print(f"numba compile/cache load and a warm-up fit: {warm_up(task, data):.1f} s")
    runs = {}
    for name, extra in (("old", {"inner_gap": None}), ("new", {})):
        if args.only not in (None, name):
            continue
        runs[name] = train(task, data, **common, **extra)
        r = runs[name]
        print(f"{name}: {r['wall_s']:9.1f} s wall {r['cpu_s']:9.1f} s CPU  "
              f"Q = {r['objective']:.10g}  ({r['n_iter']} outer iterations, "
              f"stop: {r['stop_reason']})", flush=True)
    out = {"benchmark": "jlis_speed", "n_structured_tokens": args.n_structured_tokens,
           "n_binary": args.n_binary, **common, "runs": runs}
    if len(runs) == 2:
        old, new = runs["old"], runs["new"]
        rel = (new["objective"] - old["objective"]) / old["objective"]
        out.update(speed_ratio=round(old["wall_s"] / new["wall_s"], 2),
                   cpu_ratio=round(old["cpu_s"] / new["cpu_s"], 2),
                   objective_rel_diff=rel,
                   same_objective=bool(rel <= SAME_OBJECTIVE_RTOL))
        print(f"speed ratio old/new: {out['speed_ratio']:.2f} (wall), "
              f"{out['cpu_ratio']:.2f} (CPU); (Q_new - Q_old) / Q_old = {rel:.2e} "
              f"(same objective: {out['same_objective']}, tolerance {SAME_OBJECTIVE_RTOL})")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
