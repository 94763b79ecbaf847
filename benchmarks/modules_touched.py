"""How many of the library's own modules one ``fit`` runs through, against scikit-learn.

A learner should see a task only through the structure contract (``tasks.contracts``), and
a short path through the package is one sign that the layers are narrow.  This script
counts the distinct ``latentstruct`` modules whose Python code runs during one
``latentstruct.Tagger().fit(X, y)`` on a small UD English EWT sample
(``$LATENTSTRUCT_DATA/ud_english_ewt/en_ewt-ud-train.conllu``, its first ``--n-sentences``
sentences; a tiny in-memory corpus when the data is absent), and the same count of
``sklearn`` modules for scikit-learn's ``LogisticRegression().fit`` on the iris data that
ships with scikit-learn.

How it counts: ``sys.setprofile`` (and ``threading.setprofile``) records every Python frame
that starts while ``fit`` runs; a frame's module is ``frame.f_globals["__name__"]``.  Both
fits run twice in one process: ``cold`` is the first fit (it includes modules that ``fit``
imports lazily, whose top-level code runs then), ``warm`` a second fit on the same data (the
code ``fit`` itself runs).  Code compiled by numba runs without Python frames, so a numba
kernel's module counts only through its Python callers; worker processes are not followed
(both fits run with one job).

    python benchmarks/modules_touched.py
    python benchmarks/modules_touched.py --n-sentences 50

Prints one JSON line: {"latentstruct": {"cold": n, "warm": n, "modules": [...]}, "sklearn":
{...}, "sample": {...}}.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import warnings

#: a tiny corpus for when the UD data is absent (UPOS tags)
TINY = [
    (["The", "cat", "sat", "on", "the", "mat", "."],
     ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]),
    (["A", "dog", "barked", "loudly", "."], ["DET", "NOUN", "VERB", "ADV", "PUNCT"]),
    (["She", "reads", "books", "."], ["PRON", "VERB", "NOUN", "PUNCT"]),
    (["They", "walked", "to", "the", "park", "."],
     ["PRON", "VERB", "ADP", "DET", "NOUN", "PUNCT"]),
]


def modules_run(fn, prefix: str) -> list[str]:
    """The sorted names of the modules starting with ``prefix`` whose Python code starts a
    frame while ``fn()`` runs."""
    seen: set[str] = set()

    def profile(frame, event, arg):
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name == prefix or name.startswith(prefix + "."):
                seen.add(name)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return sorted(seen)


def ud_sample(n: int):
    """(X, y, source): the first ``n`` sentences of UD EWT's training file, or TINY."""
    from latentstruct.data.paths import dataset_path
    from latentstruct.data.readers import read_conllu

    path = dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu")
    if not path.exists():
        return [x for x, _ in TINY], [y for _, y in TINY], "tiny in-memory corpus"
    sents = read_conllu(path)[:n]
    return ([list(s.words) for s in sents], [list(s.upos) for s in sents],
            f"{path.name}, first {len(sents)} sentences")


def count(fit, prefix: str) -> dict:
    cold = modules_run(fit, prefix)
    warm = modules_run(fit, prefix)
    return {"cold": len(cold), "warm": len(warm), "modules": cold,
            "cold_only": sorted(set(cold) - set(warm))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-sentences", type=int, default=100,
                        help="UD EWT training sentences to fit on (default 100)")
    args = parser.parse_args()
    if args.n_sentences < 1:
        parser.error(f"--n-sentences must be at least 1, got {args.n_sentences}")

    from latentstruct import Tagger  # imported here, so the counts hold what fit runs
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    X, y, source = ud_sample(args.n_sentences)
    Xi, yi = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning is not what is measured
        ours = count(lambda: Tagger().fit(X, y), "latentstruct")
        theirs = count(lambda: LogisticRegression().fit(Xi, yi), "sklearn")
    print(json.dumps({"latentstruct": ours, "sklearn": theirs,
                      "sample": {"tagger": source, "logistic_regression": "iris (150 x 4)"}}))


if __name__ == "__main__":
    main()
