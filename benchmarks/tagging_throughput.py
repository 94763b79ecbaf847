"""Tagging throughput: python-crfsuite's tagger against latentstruct's, side by side, on one
thread (issue 55, item 4).

The sklearn-crfsuite tutorial's kind of feature dicts (``crfsuite_compat.word2features``) on
CoNLL-2000 (``$LATENTSTRUCT_DATA/conll2000/train.txt``: the sentences before its last
``--n-test`` train, those are tagged).  Both sides train the same model (``lbfgs``, c1 = c2 =
0.1, ``all_possible_transitions``, 100 iterations; latentstruct with ``constrained=False``,
CRFsuite's model), then tag the test sentences ``--repeats`` times, the paths taking turns
within each repeat (a load that comes and goes falls on all of them); the best time counts.
Measured, in tokens per second:

* ``crfsuite``: ``sklearn_crfsuite.CRF.predict`` (dicts to python-crfsuite's
  ``ItemSequence``, then its C tagger);
* ``ours_dicts``: ``latentstruct.crfsuite.CRF.predict`` on the same dicts;
* ``crfsuite_tokens`` and ``ours_dicts_tokens``: the same two from the raw ``(word, POS)``
  pairs, the tutorial's feature function (``sent2features``) run inside the timing;
* ``ours_tokens``: ``Chunker(learner="crf")`` on the raw ``(word, POS)`` pairs (its own
  templates, a model of about the same size);
* ``ours_viterbi``: the bare compiled Viterbi over the test set's part scores, computed once
  (the decoder alone).

The last line is one JSON object with those figures, ``ratio_dicts`` (latentstruct's
time over CRFsuite's on the dicts: below 1 is faster), ``ratio_from_tokens`` (the same from
the raw pairs through the feature function), ``ratio_tokens`` (the chunker's time over
CRFsuite's on the dicts) and the load average before and after the timings
(``os.getloadavg``: another job on the machine shows there).  Threads are pinned to one
(``NUMBA_NUM_THREADS``, ``OMP_NUM_THREADS`` and the like, set before anything is imported).

    python benchmarks/tagging_throughput.py [--n-train 7936] [--n-test 1000] [--repeats 5]
"""

from __future__ import annotations

import os

for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crfsuite_compat import sent2features  # noqa: E402  (the tutorial's features, one copy)

SETTINGS = dict(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100,
                all_possible_transitions=True)


def best_times(fns: dict, repeats: int) -> dict:
    """The best time of each of ``fns`` over ``repeats`` rounds, the functions taking turns
    within each round."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=7936)
    ap.add_argument("--n-test", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)

    import numpy as np
    from sklearn_crfsuite import CRF as CrfsuiteCRF

    from latentstruct import Chunker
    from latentstruct.crfsuite import CRF
    from latentstruct.data.paths import dataset_path
    from latentstruct.data.readers import read_conll2000
    from latentstruct.inference.viterbi import viterbi_batch

    path = dataset_path("conll2000", "train.txt")
    if not path.exists():
        print(f"{path}: no CoNLL-2000 (set LATENTSTRUCT_DATA)", file=sys.stderr)
        return 2
    sentences = read_conll2000(path)
    test, train = sentences[-args.n_test:], sentences[:-args.n_test][:args.n_train]
    pairs = [list(zip(s.words, s.pos)) for s in train]
    test_pairs = [list(zip(s.words, s.pos)) for s in test]
    X, y = [sent2features(p) for p in pairs], [list(s.tags) for s in train]
    X_test = [sent2features(p) for p in test_pairs]
    n_tokens = sum(len(s) for s in X_test)
    print(f"{len(X)} training sentences, {len(X_test)} test sentences ({n_tokens} tokens)",
          file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = CrfsuiteCRF(**SETTINGS).fit(X, y)
        ours = CRF(**SETTINGS, constrained=False).fit(X, y)
        chunker = Chunker(learner="crf", constrained=False, c1=0.1, c2=0.1,
                          max_iter=100).fit(pairs, y)
    # warm: the compiled kernels and the caches, outside the timing
    theirs.predict(X_test[:10])
    ours.predict(X_test[:10])
    chunker.predict(test_pairs[:10])
    agree = float(np.mean([a == b for p, q in zip(theirs.predict(X_test), ours.predict(X_test))
                           for a, b in zip(p, q)]))

    load_before = [round(v, 2) for v in os.getloadavg()]
    times = best_times({
        "crfsuite": lambda: theirs.predict(X_test),
        "ours_dicts": lambda: ours.predict(X_test),
        "crfsuite_tokens": lambda: theirs.predict([sent2features(p) for p in test_pairs]),
        "ours_dicts_tokens": lambda: ours.predict([sent2features(p) for p in test_pairs]),
        "ours_tokens": lambda: chunker.predict(test_pairs),
    }, args.repeats)
    t_theirs, t_dicts, t_tokens = times["crfsuite"], times["ours_dicts"], times["ours_tokens"]
    model = ours._fitted()
    task, learner = model.task_, model.learner_
    corpus = task.structure_.as_batch(task.featurize(task.make_dataset(X_test)))
    unary = task.structure_.unary_scores(corpus, learner.coef_)
    trans, start, end = task.structure_.label_scores(learner.coef_)
    offsets = corpus.offsets - corpus.offsets[0]
    viterbi_batch(unary, offsets, trans, start, end)
    t_viterbi = best_times({"v": lambda: viterbi_batch(unary, offsets, trans, start, end)},
                           args.repeats)["v"]
    load_after = [round(v, 2) for v in os.getloadavg()]

    line = {"benchmark": "tagging_throughput", "n_train": len(X), "n_test": len(X_test),
            "test_tokens": n_tokens, "threads": 1, "repeats": args.repeats, "labels_agree": round(agree, 5),
            "tokens_per_s": {**{name: round(n_tokens / t) for name, t in times.items()},
                             "ours_viterbi": round(n_tokens / t_viterbi)},
            "seconds": {**{name: round(t, 4) for name, t in times.items()},
                        "ours_viterbi": round(t_viterbi, 5)},
            "ratio_dicts": round(t_dicts / t_theirs, 3),
            "ratio_from_tokens": round(times["ours_dicts_tokens"] / times["crfsuite_tokens"], 3),
            "ratio_tokens": round(t_tokens / t_theirs, 3),
            "load_average": {"before": load_before, "after": load_after}}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
