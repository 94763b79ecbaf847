"""What a spaCy pipeline's token vectors add to the tagger and the chunker (issue 43).

Each comparison trains the same estimator, at its defaults, on the same sentences twice:
once on the raw tokens (the built-in feature templates) and once on ``(tokens, vectors)``
pairs, where ``vectors`` is ``SpacyVectors().transform(words)``: en_core_web_sm's
contextual token vectors (``doc.tensor``, 96 columns), added to the templates as
real-valued emission features.

* UPOS on UD English EWT: ``Tagger()``, the first ``--n-train`` sentences of the train file
  (4,000: the issue's measurement), scored on the whole dev file (the official test file is
  held back).  Also sklearn-crfsuite (``--no-crfsuite`` to skip) on its tutorial's
  ``word2features`` (form, suffixes, shape and the neighbours' forms; no input POS, which
  the UPOS task does not have), then the same plus ``tensor_j`` real-valued attributes;
  the tutorial's settings (L-BFGS, c1 = c2 = 0.1, 100 iterations, all possible
  transitions).
* Chunking on CoNLL-2000: ``Chunker()`` on ``(word, POS)`` pairs, train file minus its
  last ``--n-heldout`` sentences, scored (chunk F1, conlleval) on those; the README says the
  official test portion (WSJ section 20) is held back, so a part of train is held out.

Timings: ``fit`` CPU seconds (``time.process_time``: the whole process, all threads) and
the featurizer's wall and CPU seconds, with whether the vectors were computed by spaCy or
read from the on-disk cache (``$LATENTSTRUCT_CACHE/vectors``; ``--cache-dir`` to choose).
Writes results/token_vectors.{json,md}.

    nice -n 10 python experiments/token_vectors.py               # the reported run
    python experiments/token_vectors.py --n-train 300 --n-heldout 200 --n-chunk-train 500 \
        --n-dev 300 --out /tmp/tv                                # smoke
"""

from __future__ import annotations

import os

# One BLAS thread: on the shared 2-core machine OpenBLAS's spinning threads slow SciPy
# and numpy down; set before numpy is imported, the same for every system.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from latentstruct import Chunker, Tagger  # noqa: E402
from latentstruct.data.atomic import atomic_write  # noqa: E402
from latentstruct.data.paths import dataset_path  # noqa: E402
from latentstruct.data.readers import read_conll2000, read_conllu  # noqa: E402
from latentstruct.featurizers import SpacyVectors  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def featurize(vec: SpacyVectors, words: list[list[str]], name: str, log: dict):
    """The vectors of ``words``, timing the call and noting where they came from."""
    before = vec.stats_
    wall, cpu = time.perf_counter(), time.process_time()
    arrays = vec.transform(words)
    after = vec.stats_
    source = next(k for k in ("computed", "disk", "memory") if after[k] > before[k])
    log[name] = {"sentences": len(words), "tokens": sum(len(w) for w in words),
                 "wall_s": round(time.perf_counter() - wall, 2),
                 "cpu_s": round(time.process_time() - cpu, 2), "source": source}
    print(f"  vectors {name}: {log[name]}", flush=True)
    return arrays


def timed_fit(make, X, y, X_test, y_test, name: str) -> dict:
    est = make()
    cpu, wall = time.process_time(), time.perf_counter()
    est.fit(X, y)
    fit_cpu, fit_wall = time.process_time() - cpu, time.perf_counter() - wall
    score = est.score(X_test, y_test)
    row = {"system": name, "score": round(float(score), 4), "fit_cpu_s": round(fit_cpu, 1),
           "fit_wall_s": round(fit_wall, 1)}
    print(f"  {row}", flush=True)
    return row


# ---------------------------------------------------------------- sklearn-crfsuite tutorial
def word2features(sent, i):
    """sklearn-crfsuite's tutorial features without the POS ones (UPOS has no input POS)."""
    word = sent[i]
    feats = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:],
             "word[-2:]": word[-2:], "word.isupper()": word.isupper(),
             "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit()}
    if i > 0:
        w = sent[i - 1]
        feats.update({"-1:word.lower()": w.lower(), "-1:word.istitle()": w.istitle(),
                      "-1:word.isupper()": w.isupper()})
    else:
        feats["BOS"] = True
    if i < len(sent) - 1:
        w = sent[i + 1]
        feats.update({"+1:word.lower()": w.lower(), "+1:word.istitle()": w.istitle(),
                      "+1:word.isupper()": w.isupper()})
    else:
        feats["EOS"] = True
    return feats


def sent2features(sent, vectors=None):
    out = [word2features(sent, i) for i in range(len(sent))]
    if vectors is not None:
        for feats, row in zip(out, vectors):
            feats.update({f"tensor_{j}": float(v) for j, v in enumerate(row)})
    return out


def crfsuite_rows(words_tr, y_tr, vec_tr, words_dev, y_dev, vec_dev) -> list[dict]:
    import sklearn_crfsuite
    from sklearn_crfsuite import metrics

    def make():
        return sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100,
                                    all_possible_transitions=True)

    rows = []
    for name, (vtr, vdev) in (("sklearn-crfsuite, tutorial features", (None, None)),
                              ("sklearn-crfsuite, + tensor_j", (vec_tr, vec_dev))):
        Xtr = [sent2features(s, v) for s, v in zip(words_tr, vtr or [None] * len(words_tr))]
        Xdev = [sent2features(s, v) for s, v in zip(words_dev, vdev or [None] * len(words_dev))]
        crf = make()
        cpu, wall = time.process_time(), time.perf_counter()
        crf.fit(Xtr, y_tr)
        fit_cpu, fit_wall = time.process_time() - cpu, time.perf_counter() - wall
        acc = metrics.flat_accuracy_score(y_dev, crf.predict(Xdev))
        rows.append({"system": name, "score": round(float(acc), 4),
                     "fit_cpu_s": round(fit_cpu, 1), "fit_wall_s": round(fit_wall, 1)})
        print(f"  {rows[-1]}", flush=True)
    return rows


# --------------------------------------------------------------------------- experiments
def upos(args, vec, featurizing) -> dict:
    train = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu"))
    dev = read_conllu(dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu"))
    train, dev = train[:args.n_train], dev[:args.n_dev] if args.n_dev else dev
    w_tr, y_tr = [list(s.words) for s in train], [list(s.upos) for s in train]
    w_dev, y_dev = [list(s.words) for s in dev], [list(s.upos) for s in dev]
    v_tr = featurize(vec, w_tr, "ewt_train", featurizing)
    v_dev = featurize(vec, w_dev, "ewt_dev", featurizing)
    rows = [
        timed_fit(Tagger, w_tr, y_tr, w_dev, y_dev, "Tagger(), templates"),
        timed_fit(Tagger, list(zip(w_tr, v_tr)), y_tr, list(zip(w_dev, v_dev)), y_dev,
                  "Tagger(), templates + vectors"),
    ]
    if args.crfsuite:
        rows += crfsuite_rows(w_tr, y_tr, v_tr, w_dev, y_dev, v_dev)
    return {"data": f"UD English EWT: first {len(train)} train sentences -> dev "
                    f"({len(dev)} sentences, {sum(map(len, w_dev))} words)",
            "metric": "token accuracy", "rows": rows}


def chunking(args, vec, featurizing) -> dict:
    sents = read_conll2000(dataset_path("conll2000", "train.txt"))
    test, train = sents[-args.n_heldout:], sents[:-args.n_heldout]
    if args.n_chunk_train:
        train = train[:args.n_chunk_train]
    X_tr = [list(zip(s.words, s.pos)) for s in train]
    X_te = [list(zip(s.words, s.pos)) for s in test]
    y_tr, y_te = [list(s.tags) for s in train], [list(s.tags) for s in test]
    v_tr = featurize(vec, [list(s.words) for s in train], "conll2000_train", featurizing)
    v_te = featurize(vec, [list(s.words) for s in test], "conll2000_heldout", featurizing)
    rows = [
        timed_fit(Chunker, X_tr, y_tr, X_te, y_te, "Chunker(), templates"),
        timed_fit(Chunker, list(zip(X_tr, v_tr)), y_tr, list(zip(X_te, v_te)), y_te,
                  "Chunker(), templates + vectors"),
    ]
    return {"data": f"CoNLL-2000 train: first {len(train)} sentences -> last {len(test)} "
                    f"({sum(map(len, y_te))} tokens)",
            "metric": "chunk F1 (conlleval)", "rows": rows}


def markdown(result: dict) -> str:
    lines = ["# Token vectors from a spaCy pipeline: what they add (issue 43)", "",
             f"Date: {result['date']}. Machine: {result['machine']}. Load average at start "
             f"{result['load_start']}, at end {result['load_end']} (a shared 2-core machine). "
             f"Whole run: {result['total_s']:.0f} s.", "",
             f"Command: `{result['command']}`", "",
             f"Vectors: `SpacyVectors()` = {result['pipeline']}, `doc.tensor` "
             f"({result['n_columns']} columns) on the given tokens.", ""]
    for key in ("upos", "chunking"):
        if key not in result:
            continue
        part = result[key]
        lines += [f"## {part['data']}", "", f"| system | {part['metric']} | fit CPU s |",
                  "|---|---|---|"]
        lines += [f"| {r['system']} | {r['score']:.4f} | {r['fit_cpu_s']:.1f} |"
                  for r in part["rows"]]
        lines.append("")
    lines += ["## Featurizing", "", "| corpus | sentences | tokens | wall s | CPU s | source |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {k} | {v['sentences']} | {v['tokens']} | {v['wall_s']} | {v['cpu_s']} | "
              f"{v['source']} |" for k, v in result["featurizing"].items()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=4000, help="EWT train sentences")
    parser.add_argument("--n-dev", type=int, default=0, help="EWT dev sentences (0: all)")
    parser.add_argument("--n-heldout", type=int, default=1000,
                        help="CoNLL-2000 train sentences held out (the last ones)")
    parser.add_argument("--n-chunk-train", type=int, default=0,
                        help="CoNLL-2000 training sentences (0: all but the held-out)")
    parser.add_argument("--no-crfsuite", dest="crfsuite", action="store_false")
    parser.add_argument("--no-chunking", dest="chunking", action="store_false")
    parser.add_argument("--cache-dir", default=None, help="vector cache (default: "
                        "$LATENTSTRUCT_CACHE/vectors)")
    parser.add_argument("--out", default=str(ROOT / "results" / "token_vectors"),
                        help="output path without extension (.json and .md are written)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    result = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}, one BLAS thread",
              "load_start": [round(x, 2) for x in os.getloadavg()],
              "command": ("python experiments/token_vectors.py " + " ".join(
                  sys.argv[1:] if argv is None else argv)).strip()}
    vec = SpacyVectors(cache_dir=args.cache_dir).fit([["."]])
    result["pipeline"] = (f"{vec.pipeline_.package} {vec.pipeline_.version}, spaCy "
                          f"{vec.pipeline_.spacy_version}")
    result["n_columns"] = vec.n_features_out_
    featurizing: dict = {}
    print("UPOS (UD English EWT)", flush=True)
    result["upos"] = upos(args, vec, featurizing)
    if args.chunking:
        print("Chunking (CoNLL-2000)", flush=True)
        result["chunking"] = chunking(args, vec, featurizing)
    result["featurizing"] = featurizing
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    result["total_s"] = round(time.perf_counter() - start, 1)
    out = Path(args.out)
    with atomic_write(out.with_suffix(".json")) as fh:
        json.dump(result, fh, indent=2)
        fh.write("\n")
    with atomic_write(out.with_suffix(".md")) as fh:
        fh.write(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
