"""A GraphCRF on a synthetic grid: PyStruct's one-slack SSVM against our DCD, in one run.

The data is that of PyStruct's ``plot_grid_crf`` example: ``generate_crosses_explicit(
n_samples=50, noise=10)``, 50 square grids of 10 x 10 pixels, each with two plus-shaped
crosses (3 states: background, arm, centre) under multinomial evidence with Gaussian noise
(3 features per pixel).  PyStruct trains a ``GridCRF`` there; here each grid is given as a
general graph, ``x = (features (100, 3), make_grid_edges(x))`` (4-neighbourhood, 180 edges),
to ``latentstruct.pystruct``'s ``GraphCRF(n_states=3, n_features=3)`` with its default
inference (``ad3``: the exact ILP on HiGHS, LP first).  The test set is 50 more grids from
the same generator with another seed.

Two learners on the same structure, one after the other:

  * ``one_slack``: ``OneSlackSSVM(C=100, max_iter=1000, tol=0.1, inference_cache=100,
    inactive_window=50, check_constraints=True)``, PyStruct's example settings: PyStruct's
    problem, ``1/2 ||w||^2 + C sum_i xi_i`` (linear slacks), working-set QP solved exactly;
  * ``dcd``: ``SquaredHingeSSVM(C=100, tol=0.1)``, latentstruct's fast path: n-slack cutting
    planes over the grouped DCD, on ``1/2 ||w||^2 + C sum_i xi_i^2`` (squared slacks) -- a
    different problem, so the same C gives a different w.

Reported per learner: training wall and CPU seconds, its own final objective (primal and
dual, as its curves record them), and, to compare the two weight vectors on one scale, both
problems' primal objectives evaluated at BOTH weight vectors with exact loss-augmented
inference (``l1_primal``: PyStruct's n-slack objective, whose optimum the one-slack form
shares; ``squared_primal``: the DCD's), plus the test node accuracy (``score``).
``time_ratio`` is the DCD's training wall time over the one-slack's.  The last line printed
is one JSON object.

    python benchmarks/pystruct_graph_grid.py            # full size (about 40 s)
    python benchmarks/pystruct_graph_grid.py --quick    # 4 grids of 5 x 5, a smoke run
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def as_graphs(X, Y):
    """Grids ``(h, w, n_features)`` as GraphCRF examples ``(features, edges)`` and flat
    labels."""
    from latentstruct.pystruct.utils import make_grid_edges

    graphs = [(x.reshape(-1, x.shape[-1]), make_grid_edges(x)) for x in X]
    return graphs, [y.ravel() for y in Y]


def primals(model, w, X, Y, C):
    """``(l1, squared)``: ``1/2 ||w||^2 + C sum_i xi_i`` and ``... + C sum_i xi_i^2``, each
    slack ``xi_i`` from exact (not relaxed) loss-augmented inference, clipped at 0."""
    from latentstruct.pystruct.utils.objective import find_constraint

    w = np.asarray(w, dtype=float)
    slacks = np.array([find_constraint(model, x, y, w, relaxed=False)[2]
                       for x, y in zip(X, Y)])
    half_norm = 0.5 * float(w @ w)
    return half_norm + C * float(slacks.sum()), half_norm + C * float(slacks @ slacks)


def timed(fit):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fit()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 4 grids of 5 x 5")
    ap.add_argument("--n-samples", type=int, default=50, help="training grids (default 50)")
    ap.add_argument("--size", type=int, default=10, help="grid side (default 10)")
    ap.add_argument("--noise", type=float, default=10,
                    help="generate_crosses_explicit's noise, in tenths (default 10)")
    ap.add_argument("--C", type=float, default=100.0, help="both learners' C (default 100)")
    ap.add_argument("--tol", type=float, default=0.1,
                    help="both learners' stopping tolerance, in loss units (default 0.1)")
    args = ap.parse_args(argv)
    if args.quick:
        args.n_samples, args.size = 4, 5
    if args.n_samples < 1 or args.size < 3 or not args.C > 0 or not args.tol > 0:
        ap.error("need --n-samples >= 1, --size >= 3, --C > 0 and --tol > 0")

    from latentstruct.pystruct.datasets import generate_crosses_explicit
    from latentstruct.pystruct.learners import OneSlackSSVM, SquaredHingeSSVM
    from latentstruct.pystruct.models import GraphCRF

    def data(seed):
        return as_graphs(*generate_crosses_explicit(n_samples=args.n_samples, noise=args.noise,
                                                    size_x=args.size, seed=seed))

    X, Y = data(0)
    X_test, Y_test = data(1)
    n_features = X[0][0].shape[1]

    def model():
        return GraphCRF(n_states=3, n_features=n_features)

    def one_slack():
        return OneSlackSSVM(model(), C=args.C, max_iter=1000, tol=args.tol, inference_cache=100,
                            inactive_window=50, check_constraints=True).fit(X, Y)

    def dcd():
        return SquaredHingeSSVM(model(), C=args.C, tol=args.tol, max_iter=100).fit(X, Y)

    # compile the DCD's numba kernels (or load them from the cache) outside the timings
    t0 = time.perf_counter()
    SquaredHingeSSVM(model(), C=args.C, max_iter=1).fit(X[:1], Y[:1])
    warm_up_s = time.perf_counter() - t0

    learners = {}
    for name, fit in (("one_slack", one_slack), ("dcd", dcd)):
        learner, wall, cpu = timed(fit)
        learners[name] = {"learner": learner, "train_wall_s": wall, "train_cpu_s": cpu}
    reference = model()  # a fresh model for the evaluations: the learners' counters stay theirs
    reference.initialize(X, Y)
    results = {}
    for name, entry in learners.items():
        learner = entry.pop("learner")
        l1, squared = primals(reference, learner.w, X, Y, args.C)
        results[name] = {
            **entry,
            "own_objective": "l1 (one-slack)" if name == "one_slack" else "squared (n-slack)",
            "own_primal": float(learner.primal_objective_curve_[-1]),
            "own_dual": float(learner.objective_curve_[-1]) if learner.objective_curve_
            else None,
            "iterations": len(learner.objective_curve_),
            # SquaredHingeSSVM: "dcd", or "dcd+highs-qp" once a stalled DCD solve handed the
            # working set to HiGHS' exact QP
            "working_set_solver": getattr(learner, "solver_", "highs-qp"),
            "l1_primal": l1,
            "squared_primal": squared,
            "test_accuracy": float(learner.score(X_test, Y_test)),
            "train_accuracy": float(learner.score(X, Y)),
        }
    ratio = results["dcd"]["train_wall_s"] / results["one_slack"]["train_wall_s"]

    n_nodes, n_edges = X[0][0].shape[0], X[0][1].shape[0]
    print(f"GraphCRF on generate_crosses_explicit grids: {args.n_samples} train + "
          f"{args.n_samples} test, {args.size} x {args.size} ({n_nodes} nodes, {n_edges} "
          f"edges), noise {args.noise}, 3 states; C={args.C}, tol={args.tol}; warm-up "
          f"(untimed) {warm_up_s:.2f} s")
    print(f"{'learner':<11}{'wall s':>9}{'cpu s':>9}{'iters':>7}{'own primal':>14}"
          f"{'L1 primal':>14}{'sq. primal':>14}{'test acc':>10}")
    for name, r in results.items():
        print(f"{name:<11}{r['train_wall_s']:>9.2f}{r['train_cpu_s']:>9.2f}{r['iterations']:>7d}"
              f"{r['own_primal']:>14.6g}{r['l1_primal']:>14.6g}{r['squared_primal']:>14.6g}"
              f"{r['test_accuracy']:>10.4f}")
    print(f"time ratio dcd / one_slack: {ratio:.3f}")
    print(json.dumps({
        "benchmark": "pystruct_graph_grid",
        "quick": bool(args.quick),
        "data": f"generate_crosses_explicit(n_samples={args.n_samples}, noise={args.noise}, "
                f"size_x={args.size}); test seed 1",
        "n_nodes": int(n_nodes),
        "n_edges": int(n_edges),
        "C": args.C,
        "tol": args.tol,
        "time_ratio": ratio,
        "l1_primal_ratio_dcd_over_one_slack": results["dcd"]["l1_primal"]
        / results["one_slack"]["l1_primal"],
        "warm_up_s": warm_up_s,
        "learners": results,
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
