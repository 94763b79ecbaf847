"""Dependency parsing speed: 1-best vs k-best Eisner decoding, and reranker training throughput.

A base parser (task ``dep``, StructuredSVM) is trained on the first ``--train-sentences``
sentences of UD EWT train (decoding speed does not depend on how well it is trained, only
on the sentences).  Then, on all of EWT dev, in one run:

- 1-best: arc scoring + Eisner (+ labels) for every sentence, ``task.argmax_results``;
- k-best: arc scoring + exact k-best Eisner (k = 16) for every sentence, ``task.structure().kbest``;
- reranker: one SGD epoch of the hidden-variable reranker (domain pos, head graph) over the
  dev lists, in candidates per second (features are built before the clock starts).

Each timing is the best of ``--repeat`` runs after a warm-up (numba compilation excluded).
The last line printed is one JSON object; ``kbest_over_1best`` is the time ratio (target ≤ 8).

    python benchmarks/dependency_parsing.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

from latentstruct.data.dependency.kbest import KBestHeader
from latentstruct.data.paths import dataset_available, dataset_path, missing_data_message
from latentstruct.exceptions import ConvergenceWarning
from latentstruct.pipelines.kbest import kbest_sentences
from latentstruct.learners import StructuredSVM
from latentstruct.learners.probabilistic.reranker import HiddenVariableReranker
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.dependency import DependencyTask
from latentstruct.tasks.rerank import RerankTask, kbest_dataset


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train-sentences", type=int, default=2000)
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    if not dataset_available("ud_english_ewt"):
        sys.exit(missing_data_message("ud_english_ewt"))
    ewt = dataset_path("ud_english_ewt")
    task = DependencyTask()
    train = task.read(ewt / "en_ewt-ud-train.conllu")
    train = Dataset(train.records[: args.train_sentences], train.targets[: args.train_sentences],
                    train.path)
    task.fit(train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(structure=task, max_iter=3).fit(task.featurize(train),
                                                       task.encode_targets(train.targets))
    w = svm.coef_
    dev = task.read(ewt / "en_ewt-ud-dev.conllu", split="test")
    X = task.featurize(dev)
    n = len(dev)
    parser = task.structure()  # the structure the parser decodes over

    def one_best():
        parser.argmax_results(X, w)

    def k_best():
        for i in range(n):
            parser.kbest(X[i], w, args.k)

    parser.argmax_results(X[:5], w)  # compile
    parser.kbest(X[0], w, args.k)
    t1 = best_of(one_best, args.repeat)
    tk = best_of(k_best, args.repeat)

    header = KBestHeader(parser_id="benchmark", k=args.k, single_root=True, labelled=True,
                         pos="gold", source="en_ewt-ud-dev.conllu")
    lists = kbest_dataset(header, kbest_sentences(task, w, dev.records, args.k), None)
    rtask = RerankTask(domain="pos", graph="head").fit(lists)
    RX = rtask.featurize(lists)
    RY = rtask.encode_targets(lists.targets)
    n_cand = sum(len(s.candidates) for s in lists.records)
    HiddenVariableReranker(task=rtask, n_epochs=1, tol=None).fit(RX[:20], RY[:20])  # compile

    def rerank_epoch():
        HiddenVariableReranker(task=rtask, n_epochs=1, tol=None).fit(RX, RY)

    tr = best_of(rerank_epoch, args.repeat)
    print(json.dumps({
        "benchmark": "dependency_parsing", "sentences": n, "k": args.k,
        "one_best_sentences_per_s": round(n / t1, 1),
        "kbest_sentences_per_s": round(n / tk, 1),
        "kbest_over_1best": round(tk / t1, 2),
        "reranker_candidates_per_s": round(n_cand / tr, 1),
        "reranker_candidates": n_cand,
    }))


if __name__ == "__main__":
    main()
