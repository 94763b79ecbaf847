"""Issue 53's must-show "Nothing lost": the refactor of the core (learners receive a narrow
structure, parameters checked once per fit, new learners) leaves every built-in model
bit-identical, and old model files load and predict the same.

Three modes:

``--out DIR --results FILE`` (run)
    For each built-in task of the command line and its default learner, plus the other
    learners a task offers (the paper systems' and the online ones), train a SMALL model
    through the CLI (``python -m latentstruct train TASK --train FILE --model DIR/NAME.npz
    --option ... --quiet``) on small files cut from ``$LATENTSTRUCT_DATA`` into a temporary
    folder, then ``predict`` and ``evaluate`` it on a small held-out slice.  One JSON line per
    (task, learner) goes to stdout and to ``--results``: the SHA-256 of every array of the
    model file, its learner/task parameters and learner state as saved, the SHA-256 of the
    prediction file and the evaluation figures.  The code under test is whatever
    ``latentstruct`` the interpreter imports: run it once with ``PYTHONPATH=OLD/src`` and once
    with ``PYTHONPATH=NEW/src`` (each subprocess inherits it).

``--compare OLD.json NEW.json``
    Per model: identical (every array's digest equal) or differs (the largest absolute
    difference of the coefficients, read from both model folders), and the figure both ways.

``--cross-load OLD_MODELS_DIR [--old-results OLD.json] --results FILE``
    The code this interpreter imports (the new one) loads each model file the old code wrote
    and predicts/evaluates the same held-out slice; its predictions are compared with the old
    code's predictions of the same file (recorded in OLD.json, default
    ``OLD_MODELS_DIR/results.json``).

    PYTHONPATH=<checkout of fdb6cc9>/src python experiments/core_identity.py --out ident/old \\
        --results ident/old/results.json
    PYTHONPATH=src python experiments/core_identity.py --out ident/new \\
        --results ident/new/results.json
    python experiments/core_identity.py --compare ident/old/results.json \\
        ident/new/results.json
    PYTHONPATH=src python experiments/core_identity.py \\
        --cross-load ident/old --results ident/cross.json

The training files are cut deterministically (the first N records of each corpus; the
held-out slice from its end or its dev file), so both runs see the same bytes.  Learners a
version lacks (the old code has no one-slack, n-slack, frank-wolfe, subgradient-ssvm) are
recorded as errors and left out of the comparison.  Every fit is sized to take seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LATENTSTRUCT_DATA", ROOT.parent / "shared" / "data")).resolve()
TIMEOUT = 150

# ---------------------------------------------------------------- data slices


def _sentences(path: Path, start: int, stop: int) -> str:
    """Blank-line separated records start..stop-1 of a file, as text."""
    out, block, k = [], [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                block.append(line)
                continue
            if block:
                if start <= k < stop:
                    out.append("".join(block) + "\n")
                k += 1
                block = []
                if k >= stop:
                    break
    if block and start <= k < stop:
        out.append("".join(block) + "\n")
    return "".join(out)


def _lines(path: Path, start: int, stop: int, skip_header: bool = False) -> str:
    with open(path, encoding="utf-8") as f:
        rows = f.readlines()
    header = rows[:1] if skip_header else []
    body = rows[1:] if skip_header else rows
    return "".join(header + body[start:stop])


def prepare(tmp: Path) -> dict:
    """Cut the small training and held-out files; returns name -> path."""
    files = {}

    def write(name, text):
        path = tmp / name
        path.write_text(text, encoding="utf-8")
        files[name] = str(path)

    conll = DATA / "conll2000" / "train.txt"
    write("chunk_train.txt", _sentences(conll, 0, 120))
    write("chunk_test.txt", _sentences(conll, 8900, 8936))
    ewt = DATA / "ud_english_ewt"
    write("pos_train.conllu", _sentences(ewt / "en_ewt-ud-train.conllu", 0, 150))
    write("pos_test.conllu", _sentences(ewt / "en_ewt-ud-dev.conllu", 0, 40))
    write("dep_train.conllu", _sentences(ewt / "en_ewt-ud-train.conllu", 0, 60))
    write("dep_test.conllu", _sentences(ewt / "en_ewt-ud-dev.conllu", 40, 80))
    cora = (DATA / "cora_citations" / "tagged_references.txt").read_text(encoding="utf-8")
    refs = cora.splitlines(keepends=True)
    write("cit_train.txt", "".join(refs[:160]))
    write("cit_test.txt", "".join(refs[760:800]))
    he = DATA / "translit" / "he"
    write("translit_train.tsv", _lines(he / "train.tsv", 0, 40))
    write("translit_test.tsv", _lines(he / "dev.tsv", 0, 30))
    msrp = DATA / "msrp" / "train.tsv"
    write("msrp_train.tsv", _lines(msrp, 0, 40, skip_header=True))
    write("msrp_test.tsv", _lines(msrp, 4000, 4030, skip_header=True))
    glue = DATA / "rte" / "glue_rte_train.tsv"
    write("rte_train.tsv", _lines(glue, 0, 40, skip_header=True))
    write("rte_test.tsv", _lines(glue, 2000, 2030, skip_header=True))
    sents = DATA / "english_sentences" / "reuters21578_sentences.txt"
    write("gram_sentences.txt", _lines(sents, 0, 3000))
    # doccls: 25 documents of each of 4 newsgroups train, the next 8 of each are held out
    wanted = ["comp.graphics", "rec.autos", "sci.space", "talk.politics.guns"]
    seen = {label: 0 for label in wanted}
    train, test = [], []
    with open(DATA / "20newsgroups" / "train.jsonl", encoding="utf-8") as f:
        for line in f:
            label = json.loads(line)["label"]
            if label in seen:
                k = seen[label]
                seen[label] += 1
                (train if k < 25 else test if k < 33 else []).append(line)
    write("doccls_train.jsonl", "".join(train))
    write("doccls_test.jsonl", "".join(test))
    return files


# ---------------------------------------------------------------- the cases

# (task, learner, train file, options, held-out file, extra evaluate/predict options)
# Learner options are kept small so that each fit takes seconds.
SEQ_LEARNERS = {
    "ssvm": ["max_iter=5"],
    "perceptron": ["max_iter=3"],
    "pa": ["max_iter=3"],
    "arow": ["max_iter=3"],
    "sgd-ssvm": ["n_epochs=3"],
    "crf": ["max_iter=10"],
    "distro": ["n_iter=1", "n_restarts=1", "label_epochs=1", "weight_epochs=1"],
    "jlis": ["max_iter=2", "init_max_iter=3", "n_binary=10"],
    "one-slack": ["max_iter=5"],
    "n-slack": ["max_iter=3"],
    "frank-wolfe": ["max_iter=3"],
    "subgradient-ssvm": ["max_iter=3"],
}
LATENT_BINARY = {
    "lclr": ["max_iter=3"],
    "two-stage": [],
    "lclr-variant": ["max_iter=3"],
    "latent-pa": ["max_iter=3"],
}
GRAMM = ["n_train=60", "tagger_model={pos_model}", "chunker_sentences=100",
         "chunker_epochs=1", "lm_corpus={gram_sentences.txt}", "n_test=30",
         "n_negative_sets=1"]


def cases() -> list[dict]:
    out = []

    def add(task, learner, train, options, test, eval_options=(), predict=True, name=None):
        out.append({"name": name or f"{task}-{learner}", "task": task, "learner": learner,
                    "train": train, "options": list(options), "test": test,
                    "eval_options": list(eval_options), "predict": predict})

    for learner, opts in SEQ_LEARNERS.items():
        if learner == "jlis":
            continue                    # J-LIS is run on citations (on chunk it takes ~50 s)
        add("chunk", learner, "chunk_train.txt", opts, "chunk_test.txt")
    for learner in ("ssvm", "crf", "distro"):
        add("pos", learner, "pos_train.conllu", SEQ_LEARNERS[learner], "pos_test.conllu")
    for learner in ("ssvm", "jlis"):
        add("citations", learner, "cit_train.txt", SEQ_LEARNERS[learner], "cit_test.txt")
    for learner in ("ssvm", "perceptron"):
        add("dep", learner, "dep_train.conllu",
            (["max_iter=2", "n_jobs=1"] if learner == "ssvm" else SEQ_LEARNERS[learner])
            + ["hash_bits=18", "labelled=False"],
            "dep_test.conllu")
    for learner in ("ssvm", "perceptron", "crf", "distro"):
        add("doccls", learner, "doccls_train.jsonl", SEQ_LEARNERS[learner],
            "doccls_test.jsonl")
    # doccls's crf default c2 went from 1.0 to 0.01 (13f6004, a deliberate change of default):
    # with c2 given, old and new must agree
    add("doccls", "crf", "doccls_train.jsonl", SEQ_LEARNERS["crf"] + ["c2=1.0"],
        "doccls_test.jsonl", name="doccls-crf-c2=1")
    for learner, opts in LATENT_BINARY.items():
        add("translit", learner, "translit_train.tsv", opts + ["n_train=30"],
            "translit_test.tsv", ["n_test=30"])
    for learner, opts in LATENT_BINARY.items():
        add("paraphrase", learner, "msrp_train.tsv", opts + ["dev_fraction=0"],
            "msrp_test.tsv", ["n_test=30"])
        add("rte", learner, "rte_train.tsv", opts, "rte_test.tsv", ["n_test=30"])
    for learner, opts in LATENT_BINARY.items():
        add("grammaticality", learner, "gram_sentences.txt", opts + GRAMM,
            "gram_sentences.txt", ["n_test=30", "n_negative_sets=1"], predict=False)
    add("rerank", "hidden-reranker", "rerank_train.kbest", ["n_epochs=2", "hash_bits=16"],
        "rerank_test.kbest")
    return out


# ---------------------------------------------------------------- running


def cli(args: list[str], timeout: int = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "latentstruct", *args], capture_output=True,
                          text=True, timeout=timeout, env=os.environ.copy())


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def model_digest(path: Path) -> dict:
    """SHA-256 of every array of a model file, plus what the metadata says of the fit."""
    arrays = {}
    with np.load(path, allow_pickle=False) as npz:
        for key in sorted(npz.files):
            if key.endswith(".json"):
                continue
            a = np.ascontiguousarray(npz[key])
            arrays[key] = {"sha256": sha(a.tobytes()), "dtype": str(a.dtype),
                           "shape": list(a.shape)}
    with zipfile.ZipFile(path) as z:
        meta = json.loads(z.read("metadata.json"))
    return {"arrays": arrays, "learner_params": meta.get("learner_params"),
            "task_params": meta.get("task_params"),
            "learner_state": meta.get("learner_state")}


_EVAL_PREDICT = """
import json, sys
from latentstruct.cli import main
out = {}
for key, argv in json.loads(sys.argv[1]).items():
    try:
        out[key] = main(argv)
    except SystemExit as e:
        out[key] = e.code if isinstance(e.code, int) else 2
    sys.stdout.flush()
print("\\n@@RC@@" + json.dumps(out))
"""


def evaluate_and_predict(case: dict, model: Path, files: dict, preds: Path) -> dict:
    """The model's figures on the held-out slice and the SHA-256 of its predictions: the
    command line's ``evaluate`` and ``predict``, run by its ``main`` in one process."""
    row = {}
    test = files.get(case["test"], case["test"])
    opts = [x for o in case["eval_options"] for x in ("--option", o)]
    calls = {"evaluate": ["evaluate", "--model", str(model), "--test", test, "--quiet", *opts]}
    if case["predict"]:
        calls["predict"] = ["predict", "--model", str(model), "--input", test, "--output",
                            str(preds), "--quiet", *opts]
    try:
        res = subprocess.run([sys.executable, "-c", _EVAL_PREDICT, json.dumps(calls)],
                             capture_output=True, text=True, timeout=TIMEOUT,
                             env=os.environ.copy())
        text, _, codes = res.stdout.rpartition("@@RC@@")
        codes = json.loads(codes) if codes else {}
    except subprocess.TimeoutExpired:
        text, codes, res = "", {}, None
    err = (res.stderr.strip().splitlines()[-1:] if res else ["timed out"]) or ["?"]
    if codes.get("evaluate") == 0:
        lines = [x for x in text.strip().splitlines() if x.startswith("{")]
        row["figures"] = json.loads(lines[-1]) if lines else None
    else:
        row["evaluate_error"] = err
    if case["predict"]:
        if codes.get("predict") == 0 and preds.is_file():
            data = preds.read_bytes()
            row["predictions_sha256"] = sha(data)
            row["predictions_lines"] = data.count(b"\n")
        else:
            row["predict_error"] = err
    return row


def fill(option: str, files: dict, models: Path) -> str:
    option = option.replace("{pos_model}", str(models / "pos-ssvm.npz"))
    for name, path in files.items():
        option = option.replace("{" + name + "}", path)
    return option


def make_kbest(files: dict, tmp: Path, models: Path) -> str | None:
    """The reranker's k-best lists, made by the code under test: a small dep parser's lists."""
    parser = models / "dep-perceptron.npz"
    if not parser.is_file():
        return "no dep-perceptron model to make k-best lists with"
    for part, src in (("train", "dep_train.conllu"), ("test", "dep_test.conllu")):
        out = tmp / f"rerank_{part}.kbest"
        res = cli(["kbest", "--model", str(parser), "--input", files[src], "--output", str(out),
                   "-k", "8", "--quiet"])
        if res.returncode != 0:
            return (res.stderr.strip().splitlines() or [f"rc {res.returncode}"])[-1]
        files[out.name] = str(out)
    return None


def run_all(out: Path, results: Path, only: list[str] | None) -> int:
    import latentstruct

    out.mkdir(parents=True, exist_ok=True)
    print(f"code under test: {latentstruct.__file__}", file=sys.stderr)
    rows = []
    previous = _read(results) if only and results.is_file() else {}
    with tempfile.TemporaryDirectory(prefix="core_identity_") as tmpname:
        tmp = Path(tmpname)
        files = prepare(tmp)
        for case in cases():
            if only and case["name"] not in only and case["task"] not in only:
                continue
            row = {"name": case["name"], "task": case["task"], "learner": case["learner"],
                   "code": str(Path(latentstruct.__file__).parent.parent.parent)}
            if case["task"] == "rerank" and case["train"] not in files:
                problem = make_kbest(files, tmp, out)
                if problem:
                    row["train_error"] = problem
            model = out / f"{case['name']}.npz"
            options = [fill(o, files, out) for o in case["options"]]
            if "train_error" not in row:
                args = ["train", case["task"], "--train", files[case["train"]], "--model",
                        str(model), "--learner", case["learner"], "--quiet"]
                for o in options:
                    args += ["--option", o]
                t0 = time.perf_counter()
                try:
                    res = cli(args)
                    rc, err = res.returncode, res.stderr
                except subprocess.TimeoutExpired:
                    rc, err = -1, f"timed out after {TIMEOUT} s"
                row["train_s"] = round(time.perf_counter() - t0, 1)
                if rc != 0 or not model.is_file():
                    row["train_error"] = (err.strip().splitlines() or [f"rc {rc}"])[-1][:300]
            row["options"] = options
            if "train_error" not in row:
                row["model"] = model.name
                row.update(model_digest(model))
                case = dict(case, eval_options=[fill(o, files, out)
                                                for o in case["eval_options"]])
                row.update(evaluate_and_predict(case, model, files,
                                                out / f"{case['name']}.pred"))
            rows.append(row)
            print(json.dumps(row), flush=True)
            _update(results, rows, previous)
            shutil.copytree(tmp, out / "data", dirs_exist_ok=True)
    return 0


def _update(results: Path, rows: list[dict], previous: dict) -> None:
    """Write the rows so far; a partial run (--only) keeps the other rows of the file."""
    merged = dict(previous)
    merged.update({r["name"]: r for r in rows})
    order = [c["name"] for c in cases()]
    _write(results, sorted(merged.values(), key=lambda r: order.index(r["name"])
                           if r["name"] in order else len(order)))


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _read(path: Path) -> dict:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {r["name"]: r for r in rows}


# ---------------------------------------------------------------- compare


def headline(row: dict) -> str:
    """The figure of a row: its evaluation's first number (f1, accuracy, uas, mrr ...)."""
    figures = row.get("figures") or {}
    for key in ("f1", "accuracy", "uas", "mrr"):
        if isinstance(figures.get(key), (int, float)):
            return f"{key} {figures[key]:g}"
    for key, value in figures.items():
        if isinstance(value, (int, float)):
            return f"{key} {value:g}"
    return "-"


def max_abs_diff(old: Path, new: Path) -> dict:
    diffs = {}
    with np.load(old, allow_pickle=False) as a, np.load(new, allow_pickle=False) as b:
        for key in sorted(set(a.files) & set(b.files)):
            if key.endswith(".json"):
                continue
            x, y = a[key], b[key]
            if x.shape != y.shape:
                diffs[key] = f"shape {x.shape} vs {y.shape}"
            elif x.dtype.kind in "fiub" and y.dtype.kind in "fiub":
                d = np.abs(x.astype(np.float64) - y.astype(np.float64))
                if d.size and d.max() > 0:
                    diffs[key] = float(d.max())
            elif not np.array_equal(x, y):
                diffs[key] = "differs"
        for key in sorted(set(a.files) ^ set(b.files)):
            diffs[key] = "only in " + ("old" if key in a.files else "new")
    return diffs


def compare(old_path: Path, new_path: Path, models: tuple[Path, Path] | None,
            results: Path | None) -> int:
    old, new = _read(old_path), _read(new_path)
    old_dir = models[0] if models else old_path.parent
    new_dir = models[1] if models else new_path.parent
    rows = []
    print(f"{'model':30} {'verdict':10} {'old figure':22} {'new figure':22} detail")
    for name in list(new) + [n for n in old if n not in new]:
        a, b = old.get(name), new.get(name)
        row = {"name": name}
        if a is None or "arrays" not in a or b is None or "arrays" not in b:
            side = []
            for label, r in (("old", a), ("new", b)):
                if r is None:
                    side.append(f"{label}: absent")
                elif "arrays" not in r:
                    side.append(f"{label}: {r.get('train_error', '?')[:80]}")
            row.update(verdict="n/a", detail="; ".join(side))
        else:
            same_arrays = a["arrays"] == b["arrays"]
            same_preds = a.get("predictions_sha256") == b.get("predictions_sha256")
            details = []
            if not same_arrays:
                diffs = max_abs_diff(old_dir / a["model"], new_dir / b["model"])
                details.append("max |diff| " + json.dumps(diffs))
            for key in ("learner_params", "task_params"):
                if a.get(key) != b.get(key):
                    ka, kb = a.get(key) or {}, b.get(key) or {}
                    changed = {k: [ka.get(k), kb.get(k)] for k in sorted(set(ka) | set(kb))
                               if ka.get(k) != kb.get(k)}
                    details.append(f"{key} {json.dumps(changed)}")
            if not same_preds:
                details.append("predictions differ")
            row.update(verdict="identical" if same_arrays and same_preds else "differs",
                       detail="; ".join(details))
            row.update(old_figure=headline(a), new_figure=headline(b),
                       figures_equal=a.get("figures") == b.get("figures"))
        rows.append(row)
        print(f"{name:30} {row['verdict']:10} {row.get('old_figure', ''):22} "
              f"{row.get('new_figure', ''):22} {row.get('detail', '')}")
    if results:
        _write(results, rows)
    n_same = sum(r["verdict"] == "identical" for r in rows)
    n_diff = sum(r["verdict"] == "differs" for r in rows)
    print(f"{n_same} identical, {n_diff} differ, {len(rows) - n_same - n_diff} not comparable")
    return 1 if n_diff else 0


# ---------------------------------------------------------------- cross-load


def cross_load(old_dir: Path, old_results: Path, results: Path) -> int:
    import latentstruct

    print(f"loading with: {latentstruct.__file__}", file=sys.stderr)
    old = _read(old_results)
    files = {p.name: str(p) for p in (old_dir / "data").iterdir()}
    rows = []
    for case in cases():
        a = old.get(case["name"])
        if a is None or "model" not in a:
            continue
        case = dict(case, eval_options=[fill(o, files, old_dir) for o in case["eval_options"]])
        with tempfile.TemporaryDirectory(prefix="core_identity_x_") as t:
            got = evaluate_and_predict(case, old_dir / a["model"], files, Path(t) / "pred")
        same_preds = got.get("predictions_sha256") == a.get("predictions_sha256")
        same_figs = got.get("figures") == a.get("figures")
        row = {"name": case["name"], "verdict": "same" if same_preds and same_figs else "differs",
               "old_code_figure": headline(a), "new_code_figure": headline(got),
               "predictions_equal": same_preds, "figures_equal": same_figs,
               **{k: v for k, v in got.items() if k.endswith("error")}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    _write(results, rows)
    n_same = sum(r["verdict"] == "same" for r in rows)
    print(f"{n_same} of {len(rows)} old model files predict the same with the new code",
          file=sys.stderr)
    return 0 if n_same == len(rows) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder for the model files (run mode)")
    parser.add_argument("--results", type=Path, help="JSON-lines results file")
    parser.add_argument("--only", nargs="*", help="case names or tasks to run (default: all)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD.json", "NEW.json"))
    parser.add_argument("--models", nargs=2, type=Path, metavar=("OLD_DIR", "NEW_DIR"),
                        help="with --compare: the model folders (default: each JSON's folder)")
    parser.add_argument("--cross-load", type=Path, metavar="OLD_MODELS_DIR")
    parser.add_argument("--old-results", type=Path,
                        help="with --cross-load: the old run's results (default: "
                             "OLD_MODELS_DIR/results.json)")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare, args.models, args.results)
    if args.cross_load:
        if not args.results:
            parser.error("--cross-load needs --results")
        return cross_load(args.cross_load, args.old_results or args.cross_load / "results.json",
                          args.results)
    if not args.out or not args.results:
        parser.error("a run needs --out and --results (or use --compare / --cross-load)")
    return run_all(args.out, args.results, args.only)


if __name__ == "__main__":
    sys.exit(main())
