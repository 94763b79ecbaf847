"""CRFsuite's online algorithms (pa, arow, ap) against latentstruct's (pa, arow, perceptron).

Both systems get exactly the same attribute strings per token (the chunk task's built-in
templates, ``task.featurizer_.attribute_strings``: what ``latentstruct train chunk`` trains on), the
first ``--train`` sentences of CoNLL-2000's train.txt, and are scored with conlleval F1 on
its last ``--test`` sentences (the test portion is not shipped with the data here).  Each
algorithm runs ``--epochs`` epochs with its defaults otherwise: CRFsuite's ``pa``, ``arow``
and ``ap`` against ``StructuredPA()``, ``AROW()`` and ``StructuredPerceptron(epsilon=0)``.
The feature sets still differ: CRFsuite trains only the (attribute, label) pairs seen in
training and has no start and end transitions.  Training time counts learning only (wall
seconds, and CPU seconds of the process, which other jobs on the machine disturb less).

The last line printed is one JSON object with the figures.

    python benchmarks/online_vs_crfsuite.py                  # 2,000 / 2,000 sentences, 100 epochs
    python benchmarks/online_vs_crfsuite.py --epochs 10 --algorithms pa
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings

from latentstruct.data.paths import dataset_path, missing_data_message
from latentstruct.learners import AROW, StructuredPA, StructuredPerceptron
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.base import Dataset

OURS = {"pa": lambda task, n: StructuredPA(task, max_iter=n),
        "arow": lambda task, n: AROW(task, max_iter=n),
        "ap": lambda task, n: StructuredPerceptron(task, max_iter=n, epsilon=0.0)}


def attribute_strings(task, record) -> list[list[str]]:
    """The attribute strings of every token of ``record``: what the task's featurizer (fitted,
    or one of its parameters) makes of the sentence its reader gives (CRFsuite trains on these)."""
    featurizer = getattr(task, "featurizer_", None) or task.make_featurizer()
    return featurizer.attribute_strings(task.reader.sentences([record])[0])


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def crfsuite(task, train: Dataset, test: Dataset, algorithm: str, epochs: int):
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    for rec, tags in zip(train.records, train.targets):
        trainer.append(attribute_strings(task, rec), list(tags))
    trainer.select(algorithm)
    trainer.set_params({"max_iterations": epochs})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "m.crfsuite")
        _, seconds, cpu = timed(lambda: trainer.train(path))
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        pred = [tagger.tag(attribute_strings(task, rec)) for rec in test.records]
        tagger.close()
    return task.encode_targets(pred), seconds, cpu, len(trainer.logparser.iterations)


def ours(task, train: Dataset, test: Dataset, algorithm: str, epochs: int):
    X, Y = task.featurize(train), task.encode_targets(train.targets)
    Xt = task.featurize(test)
    model = OURS[algorithm](task, epochs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, seconds, cpu = timed(lambda: model.fit(X, Y))
    return model.predict(Xt), seconds, cpu, model.n_iter_


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=int, default=2000, help="first N sentences to train on")
    ap.add_argument("--test", type=int, default=2000, help="last N sentences to score")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--algorithms", default="pa,arow,ap")
    args = ap.parse_args(argv)
    path = dataset_path("conll2000", "train.txt")
    if not path.exists():
        sys.exit(missing_data_message("conll2000"))
    task = ChunkTask()
    data = task.read(path)
    n = len(data)
    if args.train + args.test > n:
        sys.exit(f"--train + --test must be at most {n} sentences")
    train = Dataset(data.records[:args.train], data.targets[:args.train])
    test = Dataset(data.records[n - args.test:], data.targets[n - args.test:])
    task.fit(train)
    warm = Dataset(train.records[:20], train.targets[:20])
    for algorithm in args.algorithms.split(","):  # compile each one's kernels outside the timing
        ours(task, warm, warm, algorithm, 1)
    figures = {"train_sentences": args.train, "test_sentences": args.test,
               "epochs": args.epochs}
    print(f"{'algorithm':9s} {'system':13s} {'F1':>7s} {'wall s':>8s} {'CPU s':>8s} {'epochs':>6s}")
    for algorithm in args.algorithms.split(","):
        for system, run in (("latentstruct", ours), ("crfsuite", crfsuite)):
            pred, seconds, cpu, epochs = run(task, train, test, algorithm, args.epochs)
            f1 = task.evaluate_raw(test.targets, pred)["f1"]
            print(f"{algorithm:9s} {system:13s} {f1:7.4f} {seconds:8.1f} {cpu:8.1f} {epochs:6d}",
                  flush=True)
            figures[f"{algorithm}_{system}"] = {"f1": round(f1, 4), "wall_s": round(seconds, 1),
                                               "cpu_s": round(cpu, 1), "epochs": epochs}
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
