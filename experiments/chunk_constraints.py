"""Issue 54's must-show "Validity": the default chunker decodes only well-formed IOB2 tag
sequences (``ChunkTask(constrained="auto")``, trained and decoded under the scheme's
constraints), against the same chunker decoding freely (``constrained=False``), on CoNLL-2000.

Data: ``$LATENTSTRUCT_DATA/conll2000/train.txt`` (the official test file is held back): its
first 7,936 sentences train, its last 1,000 are the held-out set scored here (the split of
``experiments/chunk_ssvm_algorithms.py``).  Each run is ``Chunker(learner=...)`` at its
defaults but ``constrained``.  Per learner and setting, one JSON line: held-out chunk F1
(conlleval's), the predicted sentences that are not well-formed IOB2 and their invalid
transitions (an ``I-X`` first, after ``O`` or after a tag of another type), and the ``fit``
time in wall and process-CPU seconds (the run of 2026-11-30 is ``results/chunk_constraints.jsonl``).

    python experiments/chunk_constraints.py [--learners ssvm crf perceptron] [--train N]
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


def invalid_transitions(tags) -> int:
    """IOB2 transitions no chunking writes: an I-X first, after O, or after another type."""
    bad, prev = 0, "O"
    for t in tags:
        if t.startswith("I-") and (prev == "O" or prev[2:] != t[2:]):
            bad += 1
        prev = t
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", nargs="+", default=["ssvm", "crf", "perceptron"])
    ap.add_argument("--train", type=int, default=None,
                    help="train on the first N sentences (default: all but the held-out 1,000)")
    args = ap.parse_args(argv)

    from latentstruct import Chunker
    from latentstruct.data.readers import read_conll2000
    from latentstruct.tasks.sequence.encodings import is_well_formed

    path = DATA / "conll2000" / "train.txt"
    if not path.is_file():
        print(f"{path} not found: set LATENTSTRUCT_DATA", file=sys.stderr)
        return 2
    sentences = read_conll2000(path)
    train, dev = sentences[:-DEV], sentences[-DEV:]
    if args.train:
        train = train[:args.train]
    X = [list(zip(s.words, s.pos)) for s in train]
    Y = [list(s.tags) for s in train]
    X_dev = [list(zip(s.words, s.pos)) for s in dev]
    Y_dev = [list(s.tags) for s in dev]
    assert all(is_well_formed(t, "iob2") for t in Y + Y_dev)  # the gold is well-formed
    for learner in args.learners:
        for constrained in ("auto", False):
            chunker = Chunker(learner=learner, constrained=constrained)
            wall, cpu = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                chunker.fit(X, Y)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            pred = chunker.predict(X_dev)
            row = {"learner": learner, "constrained": constrained,
                   "constrained_": chunker.task_.constrained_,
                   "f1": round(chunker.score(X_dev, Y_dev), 4),
                   "ill_formed_sentences": sum(not is_well_formed(t, "iob2") for t in pred),
                   "invalid_transitions": sum(invalid_transitions(t) for t in pred),
                   "fit_wall_s": round(wall, 1), "fit_cpu_s": round(cpu, 1),
                   "train_sentences": len(X), "dev_sentences": len(X_dev)}
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
