"""latentstruct models as spaCy pipeline components: the must-show figures of issue 56.

(a) A tagger trained by ``latentstruct train pos`` on UD English EWT train (the task's
    default learner, ``--a-learner`` to choose), run as the ``latentstruct_tagger`` component
    on EWT dev: correct tokens counted by the pipeline against ``latentstruct evaluate`` on
    the same sentences, and again after ``nlp.to_disk`` + ``spacy.load``.
(b) ``python -m spacy train examples/spacy/tagger.cfg`` on EWT train converted by
    ``python -m spacy convert`` (dev: EWT dev, converted the same way), scored by
    ``python -m spacy evaluate --gold-preproc``, against ``latentstruct train pos --learner
    perceptron`` on the same ``.spacy`` file scored by ``latentstruct evaluate`` on dev;
    wall and CPU seconds of both trainings (CPU: the child processes' user + system time).
(c) Tagging throughput: the component's ``nlp.pipe`` over the dev Docs (made from the
    words, before timing) against the bare estimator's ``predict`` on the same word lists,
    best of ``--repeats`` (3) each, and their ratio.
(d) The ``latentstruct_chunker`` component on CoNLL-2000 (``$LATENTSTRUCT_DATA/conll2000/
    train.txt``: the first 7,936 sentences train ``latentstruct train chunk``, the last 1,000
    are the test set, as benchmarks/crfsuite_compat.py splits it; the official test portion
    is held back): ``doc.spans["chunks"]`` on Docs carrying the gold POS against the
    estimator's chunks on every test sentence, and chunk F1 (conlleval) both ways.

Intermediate files (converted corpora, models, the spaCy training output) go to ``--work``
(a temporary folder unless given; with ``--reuse`` a step whose output is already there is
not run again, and its recorded timings are reused).  Writes results/spacy_components.json
and results/spacy_components.md (``--out`` to choose the stem).

    nice -n 10 python experiments/spacy_components.py                       # the reported run
    python experiments/spacy_components.py --n-train 300 --n-dev 100 --n-chunk-train 300 \\
        --n-chunk-test 100 --out smoke_spacy                                # smoke
"""

from __future__ import annotations

import os

# One BLAS thread: on the shared 2-core machine OpenBLAS's spinning threads slow SciPy
# and numpy down; set before numpy is imported (children inherit it).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TAGGER_CFG = ROOT / "examples" / "spacy" / "tagger.cfg"


# ------------------------------------------------------------------------------ helpers
def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Steps:
    """Runs the command-line steps in the work folder, timing each (wall and the child's
    CPU seconds); with ``reuse``, a step whose output exists is not run again and its
    timings are read back from ``steps.json``."""

    def __init__(self, work: Path, reuse: bool):
        self.work = work
        self.reuse = reuse
        self.file = work / "steps.json"
        self.done = json.loads(self.file.read_text()) if reuse and self.file.exists() else {}
        self.commands: dict[str, str] = {}
        self.reused: list[str] = []

    def run(self, name: str, args: list[str], output: Path) -> dict:
        """Run ``args`` (``python -m ...`` or ``latentstruct ...``) in the work folder unless
        ``output`` exists and is reused; returns its record."""
        shown = " ".join(shlex.quote(a) for a in args).replace(f"{ROOT}/", "")
        self.commands[name] = shown
        if self.reuse and output.exists() and name in self.done:
            print(f"  [{name}] reused", flush=True)
            self.reused.append(name)
            return self.done[name]
        argv = [sys.executable, *args[1:]] if args[0] == "python" else args
        cpu, wall = _children_cpu(), time.perf_counter()
        done = subprocess.run(argv, cwd=self.work, capture_output=True, text=True)
        record = {"command": shown, "wall_s": round(time.perf_counter() - wall, 1),
                  "cpu_s": round(_children_cpu() - cpu, 1), "returncode": done.returncode,
                  "stdout": done.stdout[-20000:]}
        if done.returncode != 0:
            sys.exit(f"step {name} failed ({shown}):\n{done.stdout[-3000:]}\n"
                     f"{done.stderr[-3000:]}")
        self.done[name] = record
        self.file.write_text(json.dumps(self.done, indent=1))
        print(f"  [{name}] wall {record['wall_s']} s, CPU {record['cpu_s']} s", flush=True)
        return record


def _blocks(path: Path) -> list[str]:
    return [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]


def _write_blocks(blocks: list[str], dst: Path) -> None:
    dst.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")


def _evaluate(steps: Steps, name: str, model: Path, test: Path) -> dict:
    rec = steps.run(name, ["latentstruct", "evaluate", "--model", model.name, "--test",
                           test.name, "--quiet"], steps.work / f"{name}.json")
    out = json.loads(rec["stdout"])
    (steps.work / f"{name}.json").write_text(json.dumps(out))
    return out["counts"]


def _correct(docs, gold, attr: str) -> tuple[int, int]:
    pred = [getattr(t, attr) for d in docs for t in d]
    ref = [getattr(t, attr) for d in gold for t in d]
    assert len(pred) == len(ref)
    return sum(a == b for a, b in zip(pred, ref)), len(ref)


def _best_of(fn, repeats: int) -> tuple[float, float]:
    """(best wall, its CPU seconds) of ``repeats`` calls of ``fn``."""
    best = None
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        fn()
        row = (time.perf_counter() - wall, time.process_time() - cpu)
        best = row if best is None or row[0] < best[0] else best
    return best


# ------------------------------------------------------------------------------ parts
def ewt_parts(args, steps: Steps, log: dict) -> None:
    import spacy
    from spacy.tokens import Doc, DocBin

    from latentstruct import load
    from latentstruct.data.paths import dataset_path

    work = steps.work
    train_src = dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu")
    dev_src = dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu")
    train_blocks, dev_blocks = _blocks(train_src), _blocks(dev_src)
    if args.n_train:
        train_blocks = train_blocks[:args.n_train]
    if args.n_dev:
        dev_blocks = dev_blocks[:args.n_dev]
    _write_blocks(train_blocks, work / "train.conllu")
    _write_blocks(dev_blocks, work / "dev.conllu")
    for part in ("train", "dev"):
        steps.run(f"convert_{part}", ["python", "-m", "spacy", "convert", f"{part}.conllu", ".",
                                      "--converter", "conllu", "--n-sents", "1"],
                  work / f"{part}.spacy")
    log["ewt"] = {"train_sentences": len(train_blocks), "dev_sentences": len(dev_blocks)}

    # (a) a model of `latentstruct train pos`, as a component, counted to the token
    a_args = ["latentstruct", "train", "pos", "--train", "train.spacy", "--model", "pos_a.npz",
              "--quiet"]
    if args.a_learner:
        a_args[5:5] = ["--learner", args.a_learner]
    rec_a = steps.run("train_a", a_args, work / "pos_a.npz")
    counts = _evaluate(steps, "evaluate_a", work / "pos_a.npz", work / "dev.conllu")
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_tagger", config={"model": str(work / "pos_a.npz")})
    gold = list(DocBin().from_disk(work / "dev.spacy").get_docs(nlp.vocab))
    words = [[t.text for t in d] for d in gold]
    docs = list(nlp.pipe(Doc(nlp.vocab, words=w) for w in words))
    correct, tokens = _correct(docs, gold, "pos_")
    nlp.to_disk(work / "pipeline_a")
    loaded = spacy.load(work / "pipeline_a")
    docs2 = list(loaded.pipe(Doc(loaded.vocab, words=w) for w in words))
    correct2, tokens2 = _correct(docs2, gold, "pos_")
    est = load(work / "pos_a.npz")
    log["a"] = {
        "learner": est.learner_.registry_name, "train_wall_s": rec_a["wall_s"],
        "train_cpu_s": rec_a["cpu_s"],
        "evaluate": {"correct_tokens": counts["correct_tokens"], "tokens": counts["tokens"],
                     "accuracy": counts["correct_tokens"] / counts["tokens"]},
        "component": {"correct_tokens": correct, "tokens": tokens, "accuracy": correct / tokens},
        "after_to_disk_load": {"correct_tokens": correct2, "tokens": tokens2,
                               "accuracy": correct2 / tokens2},
        "equal_to_the_token": correct == correct2 == counts["correct_tokens"]
        and tokens == tokens2 == counts["tokens"],
    }
    print(f"(a) {log['a']}", flush=True)

    # (c) throughput: the component's pipe against the bare estimator's predict
    component = nlp.get_pipe("latentstruct_tagger")
    est = component.estimator_
    tok = sum(map(len, words))
    bare = _best_of(lambda: est.predict(words), args.repeats)

    def piped():
        batch = [Doc(nlp.vocab, words=w) for w in words]  # Docs as a tokenizer gives them
        return list(nlp.pipe(batch, batch_size=args.batch_size))

    made = _best_of(lambda: [Doc(nlp.vocab, words=w) for w in words], args.repeats)
    pipe = _best_of(piped, args.repeats)
    log["c"] = {"sentences": len(words), "tokens": tok, "repeats": args.repeats,
                "batch_size": args.batch_size,
                "estimator_predict": {"wall_s": round(bare[0], 3), "cpu_s": round(bare[1], 3),
                                      "tokens_per_s": round(tok / bare[0])},
                "nlp_pipe_incl_doc_making": {"wall_s": round(pipe[0], 3),
                                             "cpu_s": round(pipe[1], 3),
                                             "tokens_per_s": round(tok / pipe[0])},
                "doc_making_alone": {"wall_s": round(made[0], 3), "cpu_s": round(made[1], 3)},
                "ratio_pipe_over_predict": round(pipe[0] / bare[0], 3),
                "ratio_pipe_minus_doc_making_over_predict": round((pipe[0] - made[0]) / bare[0],
                                                                  3)}
    print(f"(c) {log['c']}", flush=True)

    # (b) spacy train on the converted corpus, against latentstruct train --learner perceptron
    if args.no_spacy_train:
        return
    rec_p = steps.run("train_perceptron", ["latentstruct", "train", "pos", "--train",
                                           "train.spacy", "--learner", "perceptron", "--model",
                                           "pos_perceptron.npz", "--quiet"],
                      work / "pos_perceptron.npz")
    counts_p = _evaluate(steps, "evaluate_perceptron", work / "pos_perceptron.npz",
                         work / "dev.conllu")
    cfg_args = ["python", "-m", "spacy", "train", str(TAGGER_CFG), "--paths.train", "train.spacy",
                "--paths.dev", "dev.spacy", "--output", "spacy_out"]
    if args.max_epochs:
        cfg_args += ["--training.max_epochs", str(args.max_epochs)]
    rec_s = steps.run("spacy_train", cfg_args, work / "spacy_out" / "model-last")
    rec_e = steps.run("spacy_evaluate", ["python", "-m", "spacy", "evaluate",
                                         "spacy_out/model-last", "dev.spacy", "--gold-preproc",
                                         "--output", "spacy_scores.json"],
                      work / "spacy_scores.json")
    scores = json.loads((work / "spacy_scores.json").read_text())
    trained = spacy.load(work / "spacy_out" / "model-last")
    docs3 = list(trained.pipe(Doc(trained.vocab, words=w) for w in words))
    correct3, tokens3 = _correct(docs3, gold, "pos_")
    epochs = [line for line in rec_s["stdout"].splitlines() if line.strip()[:1].isdigit()]
    log["b"] = {
        "spacy_train": {"wall_s": rec_s["wall_s"], "cpu_s": rec_s["cpu_s"],
                        "max_epochs": args.max_epochs or "10 (the cfg's)",
                        "log_last_line": epochs[-1] if epochs else None,
                        "spacy_evaluate_pos_acc": scores["pos_acc"],
                        "correct_tokens": correct3, "tokens": tokens3,
                        "evaluate_wall_s": rec_e["wall_s"]},
        "latentstruct_train_perceptron": {
            "wall_s": rec_p["wall_s"], "cpu_s": rec_p["cpu_s"],
            "correct_tokens": counts_p["correct_tokens"], "tokens": counts_p["tokens"],
            "accuracy": counts_p["correct_tokens"] / counts_p["tokens"]},
        "difference_points": round(100 * (scores["pos_acc"] - counts_p["correct_tokens"]
                                          / counts_p["tokens"]), 3),
    }
    print(f"(b) {log['b']}", flush=True)


def chunk_part(args, steps: Steps, log: dict) -> None:
    import spacy
    from spacy.tokens import Doc

    from latentstruct import load
    from latentstruct.data.paths import dataset_path
    from latentstruct.data.readers import read_conll2000
    from latentstruct.tasks.sequence.chunk_metrics import extract_chunks

    work = steps.work
    blocks = _blocks(dataset_path("conll2000", "train.txt"))
    test_blocks = blocks[-args.n_chunk_test:]
    train_blocks = blocks[:-args.n_chunk_test][:args.n_chunk_train]
    _write_blocks(train_blocks, work / "chunk_train.txt")
    _write_blocks(test_blocks, work / "chunk_test.txt")
    rec = steps.run("train_chunk", ["latentstruct", "train", "chunk", "--train",
                                    "chunk_train.txt", "--learner", args.chunk_learner,
                                    "--model", "chunk.npz", "--quiet"], work / "chunk.npz")
    counts = _evaluate(steps, "evaluate_chunk", work / "chunk.npz", work / "chunk_test.txt")
    est = load(work / "chunk.npz")
    test = read_conll2000(work / "chunk_test.txt")
    pairs = [list(zip(s.words, s.pos)) for s in test]
    expected = [sorted(extract_chunks(t), key=lambda c: c[1]) for t in est.predict(pairs)]
    nlp = spacy.blank("en")
    nlp.add_pipe("latentstruct_chunker", config={"model": str(work / "chunk.npz")})
    docs = list(nlp.pipe(Doc(nlp.vocab, words=list(s.words), tags=list(s.pos)) for s in test))
    got = [[(s.label_, s.start, s.end - 1) for s in d.spans["chunks"]] for d in docs]
    equal = sum(g == e for g, e in zip(got, expected))
    gold = [set(extract_chunks(list(s.tags))) for s in test]
    hits = sum(len(g & set(p)) for g, p in zip(gold, got))
    n_gold, n_pred = sum(map(len, gold)), sum(map(len, got))
    f1 = 2 * hits / (n_gold + n_pred)
    log["d"] = {"train_sentences": len(train_blocks), "test_sentences": len(test),
                "learner": args.chunk_learner, "train_wall_s": rec["wall_s"],
                "train_cpu_s": rec["cpu_s"],
                "sentences_with_equal_chunks": equal, "all_equal": equal == len(test),
                "component_chunk_f1": round(f1, 6),
                "latentstruct_evaluate_chunk_f1": round(
                    2 * counts["correct_chunks"] / (counts["gold_chunks"]
                                                    + counts["predicted_chunks"]), 6),
                "latentstruct_evaluate": {k: counts[k] for k in counts if not isinstance(
                    counts[k], (dict, list))}}
    print(f"(d) {log['d']}", flush=True)


# ------------------------------------------------------------------------------ report
def markdown(log: dict, commands: dict) -> str:
    a, b, c, d = (log.get(k) for k in "abcd")
    lines = ["# latentstruct models as spaCy pipeline components (issue 56)", "",
             f"Date: {log['date']}. Machine: {log['machine']}. Load average at start "
             f"{log['load_start']}, at end {log['load_end']} (a shared 2-core machine). "
             f"Whole run: {log['seconds']} s.", "", f"Command: `{log['command']}`", "",
             f"spaCy {log['spacy']}. EWT: {log['ewt']['train_sentences']} train sentences, "
             f"{log['ewt']['dev_sentences']} dev sentences." if "ewt" in log else "", ""]
    if a:
        lines += ["## (a) A `latentstruct train pos` tagger as a component, counted to the token",
                  "", f"Learner: `{a['learner']}` (trained in {a['train_wall_s']} s wall, "
                  f"{a['train_cpu_s']} s CPU).", "",
                  "| scored by | correct tokens | tokens | UPOS accuracy |", "|---|---|---|---|"]
        for label, key in [("`latentstruct evaluate`", "evaluate"),
                           ("the component (`nlp.pipe`)", "component"),
                           ("after `nlp.to_disk` + `spacy.load`", "after_to_disk_load")]:
            r = a[key]
            lines.append(f"| {label} | {r['correct_tokens']} | {r['tokens']} | "
                         f"{r['accuracy']:.4f} |")
        lines += ["", f"Equal to the token: **{a['equal_to_the_token']}**.", ""]
    if b:
        s, p = b["spacy_train"], b["latentstruct_train_perceptron"]
        lines += ["## (b) `spacy train examples/spacy/tagger.cfg` against `latentstruct train "
                  "pos --learner perceptron`", "",
                  "| system | dev UPOS | train wall s | train CPU s |", "|---|---|---|---|",
                  f"| spacy train (max_epochs {s['max_epochs']}), spacy evaluate | "
                  f"{s['spacy_evaluate_pos_acc']:.4f} ({s['correct_tokens']}/{s['tokens']}) | "
                  f"{s['wall_s']} | {s['cpu_s']} |",
                  f"| latentstruct train --learner perceptron, latentstruct evaluate | "
                  f"{p['accuracy']:.4f} ({p['correct_tokens']}/{p['tokens']}) | {p['wall_s']} | "
                  f"{p['cpu_s']} |", "",
                  f"Difference: {b['difference_points']} points. spaCy's last log line: "
                  f"`{s['log_last_line']}`. The spacy train times include spaCy's loop: "
                  f"reading the corpus every epoch, an evaluation on dev every 50 steps, and "
                  f"each batch featurized by its partial_fit; latentstruct train featurizes "
                  f"once.", ""]
    if c:
        lines += ["## (c) Tagging throughput, best of " f"{c['repeats']}", "",
                  f"{c['sentences']} dev sentences, {c['tokens']} tokens; `nlp.pipe` batch size "
                  f"{c['batch_size']}.", "", "| | wall s | CPU s | tokens/s |", "|---|---|---|---|",
                  f"| estimator `predict` | {c['estimator_predict']['wall_s']} | "
                  f"{c['estimator_predict']['cpu_s']} | {c['estimator_predict']['tokens_per_s']} |",
                  f"| component `nlp.pipe` (Docs made from the words inside the timing) | "
                  f"{c['nlp_pipe_incl_doc_making']['wall_s']} | "
                  f"{c['nlp_pipe_incl_doc_making']['cpu_s']} | "
                  f"{c['nlp_pipe_incl_doc_making']['tokens_per_s']} |",
                  f"| making the Docs alone | {c['doc_making_alone']['wall_s']} | "
                  f"{c['doc_making_alone']['cpu_s']} | |", "",
                  f"Ratio pipe / predict: **{c['ratio_pipe_over_predict']}** "
                  f"({c['ratio_pipe_minus_doc_making_over_predict']} without making the Docs).",
                  ""]
    if d:
        ev = d["latentstruct_evaluate"]
        lines += ["## (d) The chunker component on CoNLL-2000", "",
                  f"`latentstruct train chunk --learner {d['learner']}` on the first "
                  f"{d['train_sentences']} sentences of train.txt ({d['train_wall_s']} s wall, "
                  f"{d['train_cpu_s']} s CPU); the last {d['test_sentences']} are the test set, "
                  f"as Docs carrying the gold POS (`token.tag_`).", "",
                  f"Sentences whose `doc.spans[\"chunks\"]` equal the estimator's chunks: "
                  f"**{d['sentences_with_equal_chunks']} / {d['test_sentences']}**. Chunk F1 "
                  f"of the component's spans: {d['component_chunk_f1']:.4f}; of "
                  f"`latentstruct evaluate`'s counts: {d['latentstruct_evaluate_chunk_f1']:.4f} "
                  f"({json.dumps(ev)}).", ""]
    lines += ["## Commands run (in the work folder)", ""]
    lines += [f"- {name}: `{cmd}`" for name, cmd in commands.items()]
    if log.get("reused_steps"):
        lines += ["", f"Reused from an earlier run in the same work folder (`--reuse`), with the "
                      f"timings recorded when they ran: {', '.join(log['reused_steps'])}. The "
                      f"scoring in this process, (a) to (d), ran again."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, default=0, help="EWT train sentences (0: all)")
    parser.add_argument("--n-dev", type=int, default=0, help="EWT dev sentences (0: all)")
    parser.add_argument("--a-learner", default="",
                        help="learner of the (a) tagger ('': the pos task's default)")
    parser.add_argument("--max-epochs", type=int, default=0,
                        help="spacy train's max_epochs (0: the cfg's)")
    parser.add_argument("--no-spacy-train", action="store_true", help="skip (b)")
    parser.add_argument("--no-chunk", action="store_true", help="skip (d)")
    parser.add_argument("--n-chunk-train", type=int, default=7936)
    parser.add_argument("--n-chunk-test", type=int, default=1000)
    parser.add_argument("--chunk-learner", default="perceptron")
    parser.add_argument("--repeats", type=int, default=3, help="throughput repeats (best of)")
    parser.add_argument("--batch-size", type=int, default=1000, help="nlp.pipe batch size")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the intermediate files (default: a temporary one)")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the steps whose output is in --work")
    parser.add_argument("--out", default=str(ROOT / "results" / "spacy_components"),
                        help="output stem (.json and .md are added)")
    args = parser.parse_args(argv)

    import spacy

    start = time.perf_counter()
    log = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                      f"{platform.python_version()}, one BLAS thread",
           "spacy": spacy.__version__, "load_start": [round(x, 2) for x in os.getloadavg()],
           # a folder of this machine is shown as DIR (no machine paths in the results)
           "command": " ".join(["python experiments/spacy_components.py"] + [
               "DIR" if os.path.isabs(a) else shlex.quote(a)
               for a in (argv if argv is not None else sys.argv[1:])])}
    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory()
        work = Path(tmp.name)
    else:
        work = args.work
        work.mkdir(parents=True, exist_ok=True)
    steps = Steps(work.resolve(), args.reuse)
    try:
        ewt_parts(args, steps, log)
        if not args.no_chunk:
            chunk_part(args, steps, log)
    finally:
        log["seconds"] = round(time.perf_counter() - start)
        log["load_end"] = [round(x, 2) for x in os.getloadavg()]
        log["commands"] = steps.commands
        log["reused_steps"] = steps.reused
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(log, indent=1) + "\n")
        out.with_suffix(".md").write_text(markdown(log, steps.commands))
        print(f"wrote {out}.json and .md", flush=True)
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
