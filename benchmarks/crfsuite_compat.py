"""sklearn-crfsuite against ``latentstruct.crfsuite``: the one-line switch, side by side.

The tutorial workflow of sklearn-crfsuite (per-token feature dicts of the word, its
suffixes, shape flags and POS tag and those of its neighbours, ``CRF(...).fit(X, y)``,
``metrics.flat_f1_score``) runs twice in one process, once with ``from sklearn_crfsuite
import CRF`` and once with ``from latentstruct.crfsuite import CRF``, on the same dicts,
for every algorithm, on two corpora:

* CoNLL-2000 chunking (``$LATENTSTRUCT_DATA/conll2000/train.txt``: its last ``--n-test``
  sentences are the test set, the training sentences come before them; the official test
  portion is held back);
* a UD treebank, UPOS (``ud_english_ewt``: train -> dev), ``--ud-train`` sentences, the
  "small data" case.

For each it reports flat weighted F1 and token accuracy on the test sentences, the training
time (wall and CPU seconds of ``fit``), the number of non-zero weights, and, on each
corpus, latentstruct's structural SVM (``Tagger()`` at its defaults, on the same feature
dicts) against sklearn-crfsuite's ``lbfgs`` time.  Each side is warmed up first (one fit
of every algorithm on 20 sentences: numba's cache loaded, CRFsuite's library paged in).
Tagging throughput is ``predict`` on the test sentences' dicts, in tokens per second (one
thread, after a warm-up predict).  With ``--memory`` each side also trains in a fresh
process at two training sizes and reports its peak resident memory and the growth per
training sentence.  With ``--threads`` latentstruct's L-BFGS CRF (``Tagger(learner="crf",
...)`` with the lbfgs settings) and structural SVM (``Tagger()``) train with ``n_jobs=1``
and ``n_jobs=2`` on the same dicts: the speed-up and the largest weight difference.  The
last line is one JSON object.

    python benchmarks/crfsuite_compat.py                       # every algorithm, both corpora
    python benchmarks/crfsuite_compat.py --memory --threads    # what docs/performance.md shows
    python benchmarks/crfsuite_compat.py --algorithms lbfgs --memory
    python benchmarks/crfsuite_compat.py --n-train 300 --n-test 100 --ud-train 200   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

#: the tutorial's settings for lbfgs; the other algorithms run at CRFsuite's defaults
#: (max_iterations 100; l2sgd's 1000 epochs capped to 100 here for time, on both sides)
SETTINGS = {
    "lbfgs": dict(c1=0.1, c2=0.1, max_iterations=100, all_possible_transitions=True),
    "l2sgd": dict(c2=0.1, max_iterations=100),
    "ap": dict(max_iterations=100),
    "pa": dict(max_iterations=100),
    "arow": dict(max_iterations=100),
}


def word2features(sent, i):
    """The tutorial's kind of token features: the word's form, suffixes and shape, its POS
    tag (where the corpus has one), and the same of its neighbours."""
    word, pos = sent[i]
    feats = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:],
             "word[-2:]": word[-2:], "word.isupper()": word.isupper(),
             "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit()}
    if pos is not None:
        feats.update({"postag": pos, "postag[:2]": pos[:2]})
    for offset, name in ((-1, "-1"), (1, "+1")):
        j = i + offset
        if 0 <= j < len(sent):
            w, p = sent[j]
            feats.update({f"{name}:word.lower()": w.lower(), f"{name}:word.istitle()": w.istitle(),
                          f"{name}:word.isupper()": w.isupper()})
            if p is not None:
                feats.update({f"{name}:postag": p, f"{name}:postag[:2]": p[:2]})
        else:
            feats["BOS" if offset < 0 else "EOS"] = True
    return feats


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def corpora(args) -> dict:
    """{name: (X_train, y_train, X_test, y_test)} of the corpora the data folder has."""
    from latentstruct.data.paths import dataset_path
    from latentstruct.data.readers import read_conll2000, read_conllu

    out = {}
    conll = dataset_path("conll2000", "train.txt")
    if conll.exists():
        sents = read_conll2000(conll)
        test, train = sents[-args.n_test:], sents[:-args.n_test][:args.n_train]
        def xy(part):
            return ([sent2features(list(zip(s.words, s.pos))) for s in part],
                    [list(s.tags) for s in part])
        out["conll2000"] = (*xy(train), *xy(test))
    ud = dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu")
    if ud.exists():
        train = read_conllu(ud)[:args.ud_train]
        dev = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu"))[:args.n_test]
        def xy_ud(part):  # words only: UPOS is the target, so no POS feature
            return ([sent2features([(w, None) for w in s.words]) for s in part],
                    [list(s.upos) for s in part])
        out["ud_english_ewt"] = (*xy_ud(train), *xy_ud(dev))
    if not out:
        sys.exit("no corpus found under $LATENTSTRUCT_DATA (conll2000, ud_english_ewt)")
    return out


def crf_class(side: str):
    if side == "sklearn-crfsuite":
        from sklearn_crfsuite import CRF
    else:
        from latentstruct.crfsuite import CRF
    return CRF


def nonzero_weights(crf) -> int:
    return sum(1 for v in crf.state_features_.values() if v != 0) + \
        sum(1 for v in crf.transition_features_.values() if v != 0)


def run_side(side, algorithm, data) -> dict:
    from latentstruct.crfsuite import metrics

    X, y, X_test, y_test = data
    crf = crf_class(side)(algorithm=algorithm, **SETTINGS[algorithm])
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crf.fit(X, y)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    pred, tok_s = tagged(crf, X_test)
    return {"f1_weighted": metrics.flat_f1_score(y_test, pred, average="weighted"),
            "accuracy": metrics.flat_accuracy_score(y_test, pred),
            "train_seconds": round(seconds, 3), "train_cpu_seconds": round(cpu, 3),
            "nonzero_weights": nonzero_weights(crf), "tag_tokens_per_second": tok_s}


def tagged(model, X_test) -> tuple[list, int]:
    """The predictions of ``X_test`` and the tokens per second of ``predict`` (best of
    three, after a warm-up on the first sentences)."""
    model.predict(X_test[:5])
    best, pred = float("inf"), None
    for _ in range(3):
        t0 = time.perf_counter()
        pred = model.predict(X_test)
        best = min(best, time.perf_counter() - t0)
    n_tokens = sum(len(x) for x in X_test)
    return [list(p) for p in pred], int(n_tokens / best)


def warm_up(algorithms, data) -> None:
    """One small fit of every algorithm on each side (and of the structural SVM), so that
    no side pays a one-time cost (numba's cache, the library's pages) in the timings."""
    X, y = data[0][:20], data[1][:20]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for algorithm in algorithms:
            for side in ("sklearn-crfsuite", "latentstruct"):
                crf_class(side)(algorithm=algorithm, max_iterations=2).fit(X, y)
        from latentstruct import Tagger
        Tagger(max_iter=2).fit(X, y)
        Tagger(learner="crf", max_iter=2).fit(X, y)


def threads(data, repeats: int = 3) -> dict:
    """latentstruct's L-BFGS CRF and structural SVM with n_jobs=1 and n_jobs=2 on the same
    dicts, ``repeats`` alternating pairs of fits (a shared machine's load comes and goes):
    each pair's seconds and speed-up, the median speed-up, and the largest difference
    between the two models' weights (the same model, up to the summation order)."""
    import numpy as np
    from latentstruct import Tagger

    X, y = data[0], data[1]
    lbfgs = SETTINGS["lbfgs"]
    makers = {"lbfgs": lambda n: Tagger(learner="crf", c1=lbfgs["c1"], c2=lbfgs["c2"],
                                        max_iter=lbfgs["max_iterations"], n_jobs=n),
              "ssvm": lambda n: Tagger(n_jobs=n)}
    out = {}
    for name, make in makers.items():
        pairs, diff = [], 0.0
        for _ in range(repeats):
            seconds, coefs = {}, {}
            for n in (1, 2):
                model = make(n)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X, y)
                seconds[n] = time.perf_counter() - t0
                coefs[n] = np.asarray(model.learner_.coef_)
            diff = max(diff, float(np.max(np.abs(coefs[1] - coefs[2]))))
            pairs.append(seconds)
        speedups = [p[1] / p[2] for p in pairs]
        out[name] = {"seconds_n_jobs_1": [round(p[1], 3) for p in pairs],
                     "seconds_n_jobs_2": [round(p[2], 3) for p in pairs],
                     "speedups": [round(v, 3) for v in speedups],
                     "speedup": round(float(np.median(speedups)), 3),
                     "max_abs_weight_difference": diff}
        print(f"  threads {name}: speed-ups {out[name]['speedups']} (median "
              f"{out[name]['speedup']}x), weights differ by at most {diff:.2g}", file=sys.stderr)
    return out


def ssvm_side(data) -> dict:
    from latentstruct import Tagger
    from latentstruct.crfsuite import metrics

    X, y, X_test, y_test = data
    model = Tagger()  # the structural SVM, at its defaults, on the same feature dicts
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    pred, tok_s = tagged(model, X_test)
    return {"f1_weighted": metrics.flat_f1_score(y_test, pred, average="weighted"),
            "accuracy": metrics.flat_accuracy_score(y_test, pred),
            "train_seconds": round(seconds, 3), "train_cpu_seconds": round(cpu, 3),
            "tag_tokens_per_second": tok_s}


def peak_memory(side, algorithm, corpus, n, args) -> float:
    """Peak resident MB of a fresh process that reads the corpus and fits ``n`` sentences."""
    cmd = [sys.executable, __file__, "--child", side, algorithm, corpus, str(n),
           "--n-test", str(args.n_test), "--n-train", str(args.n_train),
           "--ud-train", str(args.ud_train)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def child(args) -> None:
    side, algorithm, corpus, n = args.child
    X, y, X_test, y_test = corpora(args)[corpus]
    part = (X[:int(n)], y[:int(n)], X_test[:1], y_test[:1])
    if side == "ssvm":
        ssvm_side(part)
    else:
        run_side(side, algorithm, part)
    # VmHWM, this process's own peak: ru_maxrss would carry the parent's peak over the
    # fork and exec that started it (Linux keeps the high-water mark across execve)
    with open("/proc/self/status") as fh:
        hwm = next(line for line in fh if line.startswith("VmHWM:"))
    print(int(hwm.split()[1]) / 1024.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algorithms", default=",".join(SETTINGS))
    parser.add_argument("--n-train", type=int, default=7936, help="CoNLL-2000 training sentences")
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--ud-train", type=int, default=1349,
                        help="UD English EWT training sentences (the small-data case)")
    parser.add_argument("--memory", action="store_true",
                        help="peak memory at half and all the training sentences, per side")
    parser.add_argument("--no-ssvm", dest="ssvm", action="store_false",
                        help="skip latentstruct's structural SVM (Tagger()) on each corpus")
    parser.add_argument("--threads", action="store_true",
                        help="n_jobs=1 against n_jobs=2 for the L-BFGS CRF and the structural "
                             "SVM (CoNLL-2000)")
    parser.add_argument("--thread-repeats", type=int, default=3,
                        help="alternating n_jobs=1 / n_jobs=2 pairs of fits (default 3)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    data = corpora(args)
    algorithms = [a for a in args.algorithms.split(",") if a]
    results = {}
    warm_up(algorithms, next(iter(data.values())))
    for corpus, part in data.items():
        rows = results[corpus] = {"n_train": len(part[0]), "n_test": len(part[2])}
        for algorithm in algorithms:
            row = {side: run_side(side, algorithm, part)
                   for side in ("sklearn-crfsuite", "latentstruct")}
            ours, theirs = row["latentstruct"], row["sklearn-crfsuite"]
            row["time_ratio"] = round(ours["train_seconds"] / theirs["train_seconds"], 3)
            row["f1_difference_points"] = round(100 * (ours["f1_weighted"] -
                                                       theirs["f1_weighted"]), 3)
            if args.memory:
                n1, n2 = len(part[0]) // 2, len(part[0])
                for side in ("sklearn-crfsuite", "latentstruct"):
                    m1, m2 = (peak_memory(side, algorithm, corpus, n, args) for n in (n1, n2))
                    row[side].update(peak_mb=round(m2, 1),
                                     kb_per_sentence=round(1024 * (m2 - m1) / (n2 - n1), 2))
            rows[algorithm] = row
            row["tag_speed_ratio"] = round(ours["tag_tokens_per_second"] /
                                           theirs["tag_tokens_per_second"], 3)
            print(f"{corpus} {algorithm}: F1 {theirs['f1_weighted']:.4f} (sklearn-crfsuite) "
                  f"{ours['f1_weighted']:.4f} (latentstruct), time ratio {row['time_ratio']}, "
                  f"tagging {theirs['tag_tokens_per_second']} -> {ours['tag_tokens_per_second']} "
                  f"tokens/s", file=sys.stderr)
        if args.ssvm:
            ssvm = ssvm_side(part)
            lbfgs = rows.get("lbfgs", {}).get("sklearn-crfsuite")
            if lbfgs:
                ssvm["time_ratio_to_crfsuite_lbfgs"] = round(
                    ssvm["train_seconds"] / lbfgs["train_seconds"], 3)
                ssvm["f1_difference_points_to_crfsuite_lbfgs"] = round(
                    100 * (ssvm["f1_weighted"] - lbfgs["f1_weighted"]), 3)
            if args.memory:
                n1, n2 = len(part[0]) // 2, len(part[0])
                m1, m2 = (peak_memory("ssvm", "ssvm", corpus, n, args) for n in (n1, n2))
                ssvm.update(peak_mb=round(m2, 1),
                            kb_per_sentence=round(1024 * (m2 - m1) / (n2 - n1), 2))
            rows["ssvm"] = ssvm
            print(f"{corpus} Tagger() (structural SVM): F1 {ssvm['f1_weighted']:.4f}, time "
                  f"ratio to CRFsuite lbfgs {ssvm.get('time_ratio_to_crfsuite_lbfgs')}",
                  file=sys.stderr)
        if args.threads and corpus == "conll2000":
            rows["threads"] = threads(part, args.thread_repeats)
    print(json.dumps({"benchmark": "crfsuite_compat", "results": results}))


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
