"""What the chain's constraints, n-best lists and explanations cost (issue 54's "Cost").

A chunker is trained on CoNLL-2000 (``train.txt``'s first ``--train`` sentences, the
default structural SVM; the weights only need to be a real model's) and its weights decode
the last ``--decode`` sentences of ``train.txt`` (the official test file is held back) in
three ways, each timed as the best of ``--repeats`` runs:

* Viterbi over the well-formed IOB2 sequences (the chunker's default) against Viterbi
  decoding freely (the same weights; ``ChainStructure(constraints=None)``): the aim is a
  ratio of at most 1.2;
* ``predict_nbest(X, k=10)`` against ``predict(X)`` on the raw sentences (featurising
  included, as a user calls them): the aim is at most 3;
* ``explain_prediction`` of every sentence, per sentence, for scale.

The last line printed is one JSON object with the times and the ratios.

    python benchmarks/chain_constraints_cost.py             # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

from latentstruct import Chunker
from latentstruct.data.paths import dataset_path, missing_data_message
from latentstruct.data.readers import read_conll2000
from latentstruct.tasks.sequence.structure import ChainStructure


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", type=int, default=2000, help="training sentences (default 2000)")
    ap.add_argument("--decode", type=int, default=2000,
                    help="the last N sentences of train.txt to decode (default 2000)")
    ap.add_argument("--k", type=int, default=10, help="n-best list length (default 10)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs, best kept (default 3)")
    args = ap.parse_args(argv)
    try:
        sentences = read_conll2000(dataset_path("conll2000", "train.txt"))
    except FileNotFoundError as exc:
        print(f"{missing_data_message('conll2000')} ({exc})", file=sys.stderr)
        return 2
    train, test = sentences[: args.train], sentences[-args.decode:]
    as_x = lambda sents: [list(zip(s.words, s.pos)) for s in sents]  # noqa: E731
    X, y = as_x(train), [list(s.tags) for s in train]
    X_test = as_x(test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a time model, not a tuned one
        chunker = Chunker().fit(X, y)
    task, w = chunker.task_, chunker.learner_.structure_weights()
    kept = task.structure_
    free = ChainStructure(kept.n_labels, kept.n_attributes)
    Xf = task.featurize(task.make_dataset(X_test))
    kept.argmax_batch(Xf, w), free.argmax_batch(Xf, w)  # compiled before timing
    t_kept = best_of(lambda: kept.argmax_batch(Xf, w), args.repeats)
    t_free = best_of(lambda: free.argmax_batch(Xf, w), args.repeats)
    chunker.predict_nbest(X_test[:2], args.k)
    t_predict = best_of(lambda: chunker.predict(X_test), args.repeats)
    t_nbest = best_of(lambda: chunker.predict_nbest(X_test, args.k), args.repeats)
    t_explain = best_of(lambda: [chunker.explain_prediction(x) for x in X_test[:200]], 1)
    out = {"sentences": len(X_test), "tokens": int(Xf.n_tokens), "labels": kept.n_labels,
           "viterbi_constrained_s": round(t_kept, 4), "viterbi_free_s": round(t_free, 4),
           "constrained_ratio": round(t_kept / t_free, 3),
           "predict_s": round(t_predict, 3), f"predict_nbest_k{args.k}_s": round(t_nbest, 3),
           "nbest_ratio": round(t_nbest / t_predict, 3),
           "explain_ms_per_sentence": round(1000 * t_explain / 200, 2)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
