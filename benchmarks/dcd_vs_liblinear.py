"""Grouped DCD engine vs LIBLINEAR (scikit-learn's LinearSVC) on a binary 20 Newsgroups task.

Both solve the same problem -- min_w 1/2 ||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^2, no
intercept -- by L2-loss dual coordinate descent with shrinking and the same projected-gradient
tolerance.  Timed side by side in one run, best of ``--repeats``; our numba kernel is compiled
(or loaded from its cache) before timing and that time is printed separately.  The last line of
output is one JSON object.

    python benchmarks/dcd_vs_liblinear.py [--C 1.0] [--tol 1e-4] [--repeats 5]
        [--groups comp.graphics sci.space]

Data: ${LATENTSTRUCT_DATA:-../shared/data}/20newsgroups/train.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np


def data_file() -> Path:
    root = Path(os.environ.get("LATENTSTRUCT_DATA", "../shared/data"))
    return root / "20newsgroups" / "train.jsonl"


def load_two_groups(path: Path, groups: list[str]):
    if not path.is_file():
        sys.exit(
            f"error: data file not found: {path}\n"
            "Set LATENTSTRUCT_DATA to the folder that contains 20newsgroups/train.jsonl "
            "(default ../shared/data, relative to the current directory)."
        )
    texts, labels = [], []
    seen = set()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            seen.add(rec["label"])
            if rec["label"] in groups:
                texts.append(rec["text"])
                labels.append(1.0 if rec["label"] == groups[1] else -1.0)
    missing = [g for g in groups if g not in seen]
    if missing:
        sys.exit(f"error: unknown newsgroup(s) {missing}; available: {sorted(seen)}")
    return texts, np.asarray(labels)


def primal_objective(X, y, w, C) -> float:
    m = np.maximum(0.0, 1.0 - y * (X @ w))
    return float(0.5 * w @ w + C * m @ m)


def best_of(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--C", type=float, default=1.0, help="slack cost (default 1.0)")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="projected-gradient tolerance for both solvers (default 1e-4, "
                         "scikit-learn's default)")
    ap.add_argument("--groups", nargs=2, default=["comp.graphics", "sci.space"],
                    metavar=("NEG", "POS"), help="two newsgroup labels (negative, positive)")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats, best kept (default 5)")
    ap.add_argument("--max-iter", type=int, default=100_000, help="epoch limit for both")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    t0 = time.perf_counter()
    from latentstruct.solvers import fit_binary_squared_hinge

    import_s = time.perf_counter() - t0

    texts, y = load_two_groups(data_file(), args.groups)
    X = TfidfVectorizer().fit_transform(texts).tocsr()
    n_docs, n_features = X.shape

    # JIT warm-up on a tiny problem: compile (or load the numba cache) outside the timings
    t0 = time.perf_counter()
    fit_binary_squared_hinge(X[:20], y[:20], args.C, tol=args.tol, max_iter=3, random_state=0)
    compile_s = time.perf_counter() - t0

    def run_liblinear():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return LinearSVC(dual=True, loss="squared_hinge", fit_intercept=False, C=args.C,
                             tol=args.tol, max_iter=args.max_iter,
                             random_state=args.seed).fit(X, y)

    def run_ours():
        return fit_binary_squared_hinge(X, y, args.C, tol=args.tol, max_iter=args.max_iter,
                                        random_state=args.seed)

    # interleave the repeats so that load from other jobs hits both alike
    lib_times, our_times = [], []
    for _ in range(args.repeats):
        t, lib = best_of(run_liblinear, 1)
        lib_times.append(t)
        t, ours = best_of(run_ours, 1)
        our_times.append(t)
    lib_s, ours_s = min(lib_times), min(our_times)

    w_lib = lib.coef_.ravel()
    obj_lib = primal_objective(X, y, w_lib, args.C)
    obj_ours = primal_objective(X, y, ours.w, args.C)
    rel = abs(obj_ours - obj_lib) / abs(obj_lib)
    n_iter_lib = int(np.max(lib.n_iter_))

    print(f"20 Newsgroups: {args.groups[0]} (-1) vs {args.groups[1]} (+1), TF-IDF")
    print(f"n_docs={n_docs}  n_features={n_features}  nnz={X.nnz}  C={args.C}  tol={args.tol}")
    print(f"import latentstruct.solvers: {import_s:.3f} s;  numba compile/cache load "
          f"(untimed below): {compile_s:.3f} s")
    print()
    print(f"{'solver':<34}{'best s':>10}{'epochs':>9}{'primal objective':>22}")
    print(f"{'LIBLINEAR (sklearn LinearSVC)':<34}{lib_s:>10.4f}{n_iter_lib:>9d}{obj_lib:>22.12g}")
    print(f"{'latentstruct grouped DCD':<34}{ours_s:>10.4f}{ours.n_iter:>9d}{obj_ours:>22.12g}")
    print(f"time ratio ours/liblinear: {ours_s / lib_s:.3f}   (best of {args.repeats}; "
          f"objective rel. diff {rel:.2e}; our dual gap {ours.gap:.3e}, "
          f"converged={ours.converged})")
    print(json.dumps({
        "time_ratio": ours_s / lib_s,
        "ours_s": ours_s,
        "liblinear_s": lib_s,
        "objective_rel_diff": rel,
        "n_docs": int(n_docs),
        "n_features": int(n_features),
        "C": args.C,
        "tol": args.tol,
        "ours_epochs": int(ours.n_iter),
        "liblinear_epochs": n_iter_lib,
        "compile_s": compile_s,
        "repeats": args.repeats,
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
