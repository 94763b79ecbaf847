"""Hostile and malformed input through the command line (issue 13), one table row per case.

Each row names the case, writes its bad input into the test's folder, runs
``latentstruct.cli.main(argv)`` and checks the contract: the exit code, and a stderr of ONE
line ``latentstruct: error: ...`` holding the expected fragment; a refused command also
leaves the folder as it was (no model, no output, nothing half-written).

To add a case, add one ``Case(...)`` line to ``CASES``:

* ``write``: a function of the folder that writes the input (``file(name, content)`` makes
  one; ``none`` writes nothing);
* ``argv``: the command line as one string, split like a shell; ``{d}`` is the folder and
  ``{chunk}``, ``{pos}``, ``{dep}``, ``{translit}`` are small trained models (see
  ``models``) that are never modified;
* ``code`` and ``fragment``: the expected exit code and a piece of the error line;
* ``patch`` (optional): ``(("module.ATTR", value), ...)`` set for the run, e.g. to lower a
  size limit instead of writing a huge file.

argparse's usage errors (``--seed abc``) are rows too: they raise SystemExit(2) with the same
one line.  After the table: options bounded by what they cost (the same message from every
command that takes one), Ctrl-C, and progress bars on a terminal only (issue 27).
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import types
from dataclasses import dataclass
from typing import Callable

import pytest

from latentstruct.cli import main

NUL = "line contains a NUL byte; the file is binary or corrupt"
LONG = "characters long, over the limit of 100,000 characters per line"
OVER = "x" * 100_001  # one character over readers.MAX_LINE_CHARS

CHUNK = "He PRP B-NP\nreckons VBZ B-VP\n. . O\n\n"
CONLLU = ("1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n"
          "1\tCats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_\n\n")
ROW2 = "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n"
DP = "Dogs\tNNS\t2\nbark\tVBP\t0\n\n"
CORA = "<NEWREFERENCE>\n<author> A. Cau. </author> <title> Formal methods . </title>\n"
TRANSLIT = "italy\tא י ט ל י ה\t3\nrome\tר ו מ א\t2\n"
MSRP = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tThe cat sat.\tA cat sat.\n"
GLUE = "index\tsentence1\tsentence2\tlabel\n0\tA dog barks.\tA dog is loud.\tentailment\n"
XML = '<?xml version="1.0"?>\n<c>\n<pair id="1" entailment="YES">\n<t>A dog barks.</t>\n<h>A dog.</h>\n</pair>\n</c>\n'
DOCS = '{"id": "1", "label": "a", "text": "red apple"}\n{"id": "2", "label": "b", "text": "blue sky"}\n'
KBEST_HEAD = json.dumps({"format": "latentstruct-kbest", "version": 1, "parser_id": "p", "k": 2,
                         "single_root": True, "labelled": False, "pos": "gold", "folds": 1,
                         "source": "x", "n_sentences": 1}) + "\n"
SENTENCES = "Dogs bark .\nCats sleep .\n"
KBEST_SENT = json.dumps({"id": "s1", "words": ["Dogs", "bark"], "lemmas": ["dog", "bark"],
                         "upos": ["NOUN", "VERB"], "xpos": ["NNS", "VBP"], "scored": [True, True],
                         "gold_heads": [2, 0], "gold_deprels": None,
                         "candidates": [{"heads": [2, 0], "deprels": ["_", "_"], "score": 1.0}]}) + "\n"
KBEST_HEAD2 = KBEST_HEAD.replace('"n_sentences": 1', '"n_sentences": 2')
RANGE = "\tx\t_\t_\t_\t_\t_\t_\t_\t_\n"  # a multiword-token line after its ID
NJOBS = "must be an int in the range [-1024, 1024] other than 0 or None"
GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x07\x00\x86\xa6\x10\x36\x05\x00\x00\x00"


def file(name: str, content) -> Callable:
    """A ``write`` that puts ``content`` (str as UTF-8, or bytes) into ``folder/name``."""
    def write(folder):
        data = content.encode("utf-8") if isinstance(content, str) else content
        (folder / name).write_bytes(data)
    return write


def none(folder) -> None:
    """A ``write`` for cases whose bad input is on the command line."""


@dataclass(frozen=True)
class Case:
    name: str
    write: Callable
    argv: str
    code: int
    fragment: str
    patch: tuple = ()


def train(task: str, name: str, *options: str) -> str:
    """``train TASK --train {d}/NAME --model {d}/m.npz --quiet`` plus ``--option``s."""
    opts = "".join(f" --option {o}" for o in options)
    return f"train {task} --train {{d}}/{name} --model {{d}}/m.npz --quiet{opts}"


TAGGER = "tagger_model={pos}"

CASES = [
    # --- chunk: CoNLL-2000 -------------------------------------------------------------
    Case("chunk-nul", file("a.txt", CHUNK + "x\x00 NN O\n"), train("chunk", "a.txt"), 2, f"a.txt:5: {NUL}"),
    Case("chunk-long", file("a.txt", CHUNK + OVER + " NN O\n"), train("chunk", "a.txt"), 2, f"a.txt:5: line is 100,006 {LONG}"),
    Case("chunk-malformed", file("a.txt", "He PRP B-NP\nreckons VBZ\n"), train("chunk", "a.txt"), 2, "a.txt:2: expected 3 columns"),
    Case("chunk-bad-tag", file("a.txt", "He PRP X-NP\n"), train("chunk", "a.txt"), 2, "a.txt:1: invalid chunk tag 'X-NP'"),
    Case("chunk-wrong-format", file("a.txt", CONLLU), train("chunk", "a.txt"), 2, "a.txt:1: expected 3 columns"),
    Case("chunk-hash-bits", file("a.txt", CHUNK), train("chunk", "a.txt", "feature_index=hashing", "hash_bits=32"), 2, "The 'hash_bits' parameter of the 'chunk' task must be an int in the range [1, 26]. Got 32 instead: with feature hashing the model holds 2**hash_bits weights per label, 8 bytes each (32 GiB per label at hash_bits=32)"),
    # --- pos: CoNLL-U ---------------------------------------------------------------------
    Case("pos-nul", file("a.conllu", CONLLU + "1\tx\x00\t_\tX\t_\t_\t0\t_\t_\t_\n"), train("pos", "a.conllu"), 2, f"a.conllu:7: {NUL}"),
    Case("pos-long", file("a.conllu", CONLLU + "1\t" + OVER + "\t_\tX\t_\t_\t0\t_\t_\t_\n"), train("pos", "a.conllu"), 2, f"a.conllu:7: line is 100,019 {LONG}"),
    Case("pos-upos", file("a.conllu", CONLLU.replace("VERB", "NOTATAG", 1)), train("pos", "a.conllu"), 2, "a.conllu:2: UPOS (column 4) of word 2 is 'NOTATAG', not a Universal POS tag"),
    Case("pos-malformed", file("a.conllu", CONLLU + "1\tDogs\tdog\tNOUN\n"), train("pos", "a.conllu"), 2, "a.conllu:7: expected 10 tab-separated fields"),
    Case("pos-wrong-format", file("a.conllu", CHUNK), train("pos", "a.conllu"), 2, "a.conllu:1: the file is not CoNLL-U"),
    Case("pos-hash-bits", file("a.conllu", CONLLU), train("pos", "a.conllu", "feature_index=hashing", "hash_bits=40"), 2, "(8 TiB per label at hash_bits=40)"),
    # --- dep: CoNLL-U and .dp ---------------------------------------------------------------
    Case("dep-conllu-nul", file("a.conllu", CONLLU.replace("bark\tbark", "ba\x00rk\tbark", 1)), train("dep", "a.conllu"), 2, f"a.conllu:2: {NUL}"),
    Case("dep-conllu-long", file("a.conllu", CONLLU + "# " + OVER + "\n"), train("dep", "a.conllu"), 2, f"a.conllu:7: line is 100,003 {LONG}"),
    Case("dep-conllu-malformed", file("a.conllu", CONLLU.replace("\t2\tnsubj", "\t5\tnsubj", 1)), train("dep", "a.conllu"), 2, "a.conllu:1: HEAD 5 of word 1 points past the last word"),
    Case("dep-dp-nul", file("a.dp", DP + "x\x00\tNN\t0\n"), train("dep", "a.dp"), 2, f"a.dp:4: {NUL}"),
    Case("dep-dp-long", file("a.dp", DP + OVER + "\tNN\t0\n"), train("dep", "a.dp"), 2, f"a.dp:4: line is 100,006 {LONG}"),
    Case("dep-dp-malformed", file("a.dp", "Dogs\tNNS\tx\n"), train("dep", "a.dp"), 2, "a.dp:1: head 'x' of word 1 ('Dogs') is not a non-negative integer"),
    Case("dep-dp-wrong-format", file("a.dp", DOCS), train("dep", "a.dp"), 2, "a.dp:1: expected 3 tab-separated columns"),
    # --- citations: Cora --------------------------------------------------------------------
    Case("cora-nul", file("c.txt", CORA + "<NEWREFERENCE>\n<a> x\x00 </a>\n"), train("citations", "c.txt"), 2, f"c.txt:4: {NUL}"),
    Case("cora-long", file("c.txt", CORA + "<NEWREFERENCE>\n<a> " + OVER + " </a>\n"), train("citations", "c.txt"), 2, f"c.txt:4: line is 100,010 {LONG}"),
    Case("cora-malformed", file("c.txt", "<NEWREFERENCE>\n<author> A. Cau. </title>\n"), train("citations", "c.txt"), 2, "c.txt:2: closing tag </title> (word 4) does not match"),
    Case("cora-wrong-format", file("c.txt", CHUNK), train("citations", "c.txt"), 2, "c.txt:1: missing <NEWREFERENCE> marker"),
    # --- translit: TSV ----------------------------------------------------------------------
    Case("translit-nul", file("t.tsv", TRANSLIT + "pa\x00ris\tפ\t1\n"), train("translit", "t.tsv"), 2, f"t.tsv:3: {NUL}"),
    Case("translit-long", file("t.tsv", TRANSLIT + OVER + "\tפ\t1\n"), train("translit", "t.tsv"), 2, f"t.tsv:3: line is 100,005 {LONG}"),
    Case("translit-long-word", file("t.tsv", TRANSLIT + "a" * 101 + "\tפ\t1\n"), train("translit", "t.tsv"), 2, "t.tsv:3: the English word in column 1 is 101 characters long"),
    Case("translit-malformed", file("t.tsv", TRANSLIT + "paris\tפ\n"), train("translit", "t.tsv"), 2, "t.tsv:3: expected 3 TAB-separated columns"),
    Case("translit-wrong-format", file("t.tsv", MSRP), train("translit", "t.tsv"), 2, "t.tsv:1: expected 3 TAB-separated columns"),
    Case("translit-one-class", file("t.tsv", TRANSLIT), train("translit", "t.tsv", "neg_ratio=0"), 2, "training data has only positive examples (2)"),
    # --- paraphrase: MSRP TSV ---------------------------------------------------------------
    Case("msrp-nul", file("m.tsv", MSRP + "0\t3\t4\tA\x00\tB\n"), train("paraphrase", "m.tsv"), 2, f"m.tsv:3: {NUL}"),
    Case("msrp-long", file("m.tsv", MSRP + "0\t3\t4\t" + OVER + "\tB\n"), train("paraphrase", "m.tsv"), 2, f"m.tsv:3: line is 100,009 {LONG}"),
    Case("msrp-long-sentence", file("m.tsv", MSRP + "0\t3\t4\t" + "w" * 10_001 + "\tB\n"), train("paraphrase", "m.tsv"), 2, "m.tsv:3: the '#1 String' column is 10,001 characters long"),
    Case("msrp-malformed", file("m.tsv", MSRP + "0\t3\t4\tA\n"), train("paraphrase", "m.tsv"), 2, "m.tsv:3: expected 5 tab-separated columns"),
    Case("msrp-wrong-format", file("m.tsv", GLUE), train("paraphrase", "m.tsv"), 2, "m.tsv:1: the first line is not the MSRP header"),
    # --- rte: PASCAL XML and GLUE TSV -------------------------------------------------------
    Case("rte-xml-nul", file("r.xml", XML.replace("barks", "ba\x00rks")), train("rte", "r.xml"), 2, f"r.xml:4: {NUL}"),
    Case("rte-xml-long", file("r.xml", XML.replace("barks", "w" * 10_001)), train("rte", "r.xml"), 2, "r.xml:4: the <t> (text) of the pair that starts on line 3 is 10,008 characters long"),
    Case("rte-xml-malformed", file("r.xml", XML.replace("</h>", "")), train("rte", "r.xml"), 2, "r.xml:6: malformed XML: mismatched tag"),
    Case("rte-xml-attlist", file("r.xml", XML.replace('<c>', '<!DOCTYPE c [\n<!ATTLIST pair entailment CDATA "YES">\n]>\n<c>').replace(' entailment="YES"', "")), train("rte", "r.xml"), 2, "r.xml:3: the document declares default attributes"),
    Case("rte-xml-wrong-format", file("r.xml", DOCS), train("rte", "r.xml"), 2, "r.xml:1: malformed XML: not well-formed (invalid token)"),
    Case("rte-tsv-nul", file("r.tsv", GLUE + "1\tA\x00\tB\tentailment\n"), train("rte", "r.tsv"), 2, f"r.tsv:3: {NUL}"),
    Case("rte-tsv-long", file("r.tsv", GLUE + "1\t" + OVER + "\tB\tentailment\n"), train("rte", "r.tsv"), 2, f"r.tsv:3: line is 100,016 {LONG}"),
    Case("rte-tsv-malformed", file("r.tsv", GLUE + "1\tA\tB\tmaybe\n"), train("rte", "r.tsv"), 2, "r.tsv:3: label must be one of entailment, not_entailment, got 'maybe'"),
    Case("rte-tsv-wrong-format", file("r.tsv", MSRP), train("rte", "r.tsv"), 2, "r.tsv:1: the first line is not the GLUE RTE header"),
    Case("rte-one-class", file("r.tsv", GLUE + "1\tB c.\tB.\tentailment\n"), train("rte", "r.tsv"), 2, "training data has only positive examples (2); LCLR"),
    # --- doccls: JSON lines -----------------------------------------------------------------
    Case("doccls-nul", file("d.jsonl", DOCS + '{"label": "a", "text": "x\x00"}\n'), train("doccls", "d.jsonl"), 2, f"d.jsonl:3: {NUL}"),
    Case("doccls-long", file("d.jsonl", DOCS + '{"label": "a", "text": "' + "x" * 200 + '"}\n'), train("doccls", "d.jsonl"), 2, "d.jsonl:3: line is 226 characters long, over the limit of 100 characters", (("latentstruct.data.documents.MAX_DOCUMENT_LINE_CHARS", 100),)),
    Case("doccls-malformed", file("d.jsonl", DOCS + '{"label": "a", "text": \n'), train("doccls", "d.jsonl"), 2, "d.jsonl:3: not valid JSON (Expecting value"),
    Case("doccls-huge-number", file("d.jsonl", DOCS + '{"label": "a", "text": "t", "n": ' + "9" * 5000 + "}\n"), train("doccls", "d.jsonl"), 2, "d.jsonl:3: not valid JSON (Exceeds the limit (4300 digits)"),
    Case("doccls-wrong-format", file("d.jsonl", CHUNK), train("doccls", "d.jsonl"), 2, "d.jsonl:1: not valid JSON"),
    # --- rerank: k-best lists ---------------------------------------------------------------
    Case("kbest-nul", file("k.kbest", KBEST_HEAD + '{"id": "\x00"}\n'), train("rerank", "k.kbest"), 2, f"k.kbest:2: {NUL}"),
    Case("kbest-long", file("k.kbest", KBEST_HEAD + '{"id": "' + "x" * 300 + '"}\n'), train("rerank", "k.kbest"), 2, "k.kbest:2: line is 310 characters long, over the limit of 200 characters", (("latentstruct.data.dependency.kbest.MAX_LINE_CHARS", 200),)),
    Case("kbest-malformed", file("k.kbest", KBEST_HEAD + '{"id": "s1", "words": []}\n'), train("rerank", "k.kbest"), 2, "k.kbest:2: field 'words' must be a list of 1..1000 strings"),
    Case("kbest-deep", file("k.kbest", KBEST_HEAD + "[" * 100_000 + "]" * 100_000 + "\n"), train("rerank", "k.kbest"), 2, "nested too deeply", (("latentstruct.data.dependency.kbest.MAX_LINE_CHARS", 300_000),)),
    Case("kbest-wrong-format", file("k.kbest", DOCS), train("rerank", "k.kbest"), 2, "k.kbest:1: not a k-best file"),
    # --- grammaticality: one sentence per line (the tagger is a small pos model) ------------
    Case("sentences-nul", file("s.txt", SENTENCES + "a\x00b\n"), train("grammaticality", "s.txt", TAGGER), 2, f"s.txt:3: {NUL}"),
    Case("sentences-long", file("s.txt", SENTENCES + OVER + "\n"), train("grammaticality", "s.txt", TAGGER), 2, f"s.txt:3: line is 100,001 {LONG}"),
    Case("sentences-malformed", file("s.txt", SENTENCES + "\nMore .\n"), train("grammaticality", "s.txt", TAGGER), 2, "s.txt:3: empty sentence"),
    Case("sentences-wrong-format", file("s.txt", GZIP), train("grammaticality", "s.txt", TAGGER), 2, f"s.txt:1: {NUL}"),
    # --- train: usage ---------------------------------------------------------------------------
    Case("train-missing-file", none, train("chunk", "missing.txt"), 2, "no such file: {d}/missing.txt"),
    Case("train-unknown-task", none, "train nosuch --model {d}/m.npz", 2, "unknown task 'nosuch'"),
    Case("train-bad-option", file("a.txt", CHUNK), train("chunk", "a.txt", "window=-1"), 2, "The 'window' parameter of the 'chunk' task must be an int in the range [0, 10]. Got -1 instead."),
    # --- evaluate ---------------------------------------------------------------------------------
    Case("evaluate-missing-test", none, "evaluate --model {chunk} --test {d}/missing.txt", 2, "no such file: {d}/missing.txt"),
    Case("evaluate-not-a-model", file("m.npz", CHUNK), "evaluate --model {d}/m.npz --test {d}/m.npz", 2, "is truncated or not a latentstruct model"),
    Case("evaluate-bad-option", file("a.txt", CHUNK), "evaluate --model {chunk} --test {d}/a.txt --option input_scheme=bogus", 2, "The 'input_scheme' parameter of the 'chunk' task must be a str among {{'iob1', 'iob2'}} or None. Got 'bogus' instead."),
    Case("evaluate-nul", file("a.txt", CHUNK + "\x00\n"), "evaluate --model {chunk} --test {d}/a.txt", 2, f"a.txt:5: {NUL}"),
    # --- predict ----------------------------------------------------------------------------------
    Case("predict-missing-input", none, "predict --model {pos} --input {d}/missing.conllu --output {d}/o.conllu", 2, "no such file: {d}/missing.conllu"),
    Case("predict-not-a-model", file("m.npz", b"PK\x03\x04 truncated"), "predict --model {d}/m.npz --input {d}/m.npz --output {d}/o", 2, "is truncated or not a latentstruct model"),
    Case("predict-bad-option", file("a.conllu", CONLLU), "predict --model {pos} --input {d}/a.conllu --output {d}/o.conllu --option window=9", 2, "option 'window' cannot change at predict time"),
    Case("predict-upos", file("a.conllu", CONLLU.replace("VERB", "V")), "predict --model {pos} --input {d}/a.conllu --output {d}/o.conllu", 2, "a.conllu:2: UPOS (column 4) of word 2 is 'V'"),
    # --- explain ----------------------------------------------------------------------------------
    Case("explain-missing-model", none, "explain --model {d}/missing.npz --source a --target b --out {d}/x.png", 2, "no such file: {d}/missing.npz"),
    Case("explain-not-explainable", none, "explain --model {dep} --source a --target b --out {d}/x.png", 2, "task 'dep' cannot (it is not explainable). Tasks explain supports: paraphrase, rte, translit, the sequence models (chunk, citations, pos, sequence: "),
    Case("explain-sequence-pair", none, "explain --model {chunk} --source a --target b", 2, "is a 'chunk' model: give --input FILE"),
    Case("explain-sequence-png", none, "explain --model {chunk} --input {d}/x.txt --out {d}/x.png", 2, "a sequence model's explanation is text or HTML"),
    Case("explain-long-word", none, "explain --model {translit} --source " + "a" * 200 + " --target b --out {d}/x.png", 2, "the source word is 200 characters long"),
    Case("explain-not-a-model", file("m.npz", ""), "explain --model {d}/m.npz --source a --target b --out {d}/x.png", 2, "is truncated or not a latentstruct model"),
    # --- kbest ------------------------------------------------------------------------------------
    Case("kbest-k-zero", file("a.conllu", CONLLU), "kbest --model {dep} --input {d}/a.conllu --output {d}/o.kbest -k 0", 2, "-k must be an integer in [1, 1000], got 0"),
    Case("kbest-not-dep", file("a.conllu", CONLLU), "kbest --model {translit} --input {d}/a.conllu --output {d}/o.kbest", 2, "which writes no k-best lists"),
    Case("kbest-chunk-folds", file("a.txt", CHUNK), "kbest --model {chunk} --input {d}/a.txt --output {d}/o.jsonl --folds 2", 2, "--folds jackknifes a parser's k-best lists"),
    Case("kbest-chunk-wrong-format", file("a.conllu", CONLLU), "kbest --model {chunk} --input {d}/a.conllu --output {d}/o.jsonl", 2, "a.conllu:1: expected 3"),
    Case("kbest-not-a-model", file("m.npz", CONLLU), "kbest --model {d}/m.npz --input {d}/m.npz --output {d}/o.kbest", 2, "is truncated or not a latentstruct model"),
    Case("kbest-nul-input", file("a.conllu", CONLLU + "\x00"), "kbest --model {dep} --input {d}/a.conllu --output {d}/o.kbest --quiet", 2, f"a.conllu:7: {NUL}"),
    Case("kbest-missing-input", none, "kbest --model {dep} --input {d}/missing.conllu --output {d}/o.kbest --quiet", 2, "no such file or directory: {d}/missing.conllu"),
    # --- info -------------------------------------------------------------------------------------
    Case("info-missing", none, "info --model {d}/missing.npz", 2, "no such file: {d}/missing.npz"),
    Case("info-not-a-model", file("m.npz", GZIP), "info --model {d}/m.npz", 2, "is truncated or not a latentstruct model"),
    Case("info-empty", file("m.npz", b""), "info --model {d}/m.npz", 2, "is truncated or not a latentstruct model"),
    # --- demo -------------------------------------------------------------------------------------
    Case("demo-bad-lang", none, "demo --lang xx --out {d} --quiet", 2, "unknown language code 'xx'"),
    Case("demo-missing-out", none, "demo --out {d}/missing --quiet", 2, "--out {d}/missing"),
    # --- issue 27: options bounded by the memory or time they imply ---------------------------
    Case("kbest-k-huge", file("a.conllu", CONLLU), "kbest --model {dep} --input {d}/a.conllu --output {d}/o.kbest -k 100000000", 2, "-k must be an integer in [1, 1000], got 100,000,000: the parser holds the k trees of a sentence in memory"),
    Case("kbest-folds-huge", file("a.conllu", CONLLU), "kbest --model {dep} --input {d}/a.conllu --output {d}/o.kbest --folds 1000000", 2, "--folds must be an integer in [2, 100], got 1,000,000: jackknifing trains one parser per fold"),
    Case("inspect-top-huge", none, "inspect --model {chunk} --top 100000000", 2, "--top must be an integer in [1, 10000], got 100,000,000: it prints"),
    Case("chunk-max-iter-huge", file("a.txt", CHUNK), train("chunk", "a.txt", "max_iter=1000000000"), 2, "The 'max_iter' parameter of StructuredSVM must be an int in the range [1, 10000]. Got 1000000000 instead: each is a pass over the training data"),
    # an integer beyond any float: the cost message says "inf", never OverflowError
    Case("chunk-max-iter-400-digits", file("a.txt", CHUNK), train("chunk", "a.txt", "max_iter=" + "9" * 400), 2, "(inf years at max_iter="),
    Case("chunk-window-huge", file("a.txt", CHUNK), train("chunk", "a.txt", "window=1000000000"), 2, "The 'window' parameter of the 'chunk' task must be an int in the range [0, 10]. Got 1000000000 instead: every token gets 2*window+1 context-word attributes"),
    Case("chunk-affix-huge", file("a.txt", CHUNK), train("chunk", "a.txt", "affix_length=1000000000"), 2, "The 'affix_length' parameter of the 'chunk' task must be an int in the range [1, 30]. Got 1000000000 instead: a word gets a prefix and a suffix"),
    Case("pos-negatives-huge", file("a.conllu", CONLLU), train("pos", "a.conllu", "negatives_per_positive=1000000000"), 2, "The 'negatives_per_positive' parameter of the 'pos' task must be an int in the range [0, 100]. Got 1000000000 instead: every binary positive sentence"),
    Case("pos-distro-components-huge", file("a.conllu", CONLLU), train("pos", "a.conllu", "n_components=1000000") + " --learner distro", 2, "The 'n_components' parameter of DISTRO must be an int in the range [1, 4096] or None. Got 1000000 instead: the transition weights W_T"),
    Case("dep-hash-bits-huge", file("a.conllu", CONLLU), train("dep", "a.conllu", "hash_bits=40"), 2, "The 'hash_bits' parameter of the 'dep' task must be an int in the range [4, 30]. Got 40 instead: the parser holds 2**hash_bits arc weights of 8 bytes each (8.0 TiB at hash_bits=40)"),
    Case("rerank-n-hidden-huge", file("k.kbest", KBEST_HEAD + KBEST_SENT), train("rerank", "k.kbest", "n_hidden=5000"), 2, "The 'n_hidden' parameter of the 'rerank' task must be an int in the range [1, 1000] or None. Got 5000 instead: every word takes n_hidden hidden values"),
    Case("sentences-negative-sets-huge", file("s.txt", SENTENCES), train("grammaticality", "s.txt", TAGGER, "n_negative_sets=1000000"), 2, "The 'n_negative_sets' parameter of the 'grammaticality' task must be an int in the range [0, 100]. Got 1000000 instead: evaluation samples"),
    Case("train-n-jobs-huge", file("a.txt", CHUNK), train("chunk", "a.txt", "n_jobs=100000"), 2, f"The 'n_jobs' parameter of StructuredSVM {NJOBS}. Got 100000 instead: every worker is a thread"),
    Case("train-n-jobs-flag-huge", file("a.txt", CHUNK), train("chunk", "a.txt") + " --n-jobs 100000", 2, "--n-jobs must be a number of workers in [1, 1024] or -1 (all), got 100,000: every worker"),
    # evaluate/predict/kbest/explain check evaluation-time options as train does
    Case("evaluate-n-jobs-nan", file("a.txt", CHUNK), "evaluate --model {chunk} --test {d}/a.txt --option n_jobs=nan", 2, f"The 'n_jobs' parameter of StructuredSVM {NJOBS}. Got nan instead."),
    Case("evaluate-n-jobs-zero", file("a.txt", CHUNK), "evaluate --model {chunk} --test {d}/a.txt --option n_jobs=0", 2, f"The 'n_jobs' parameter of StructuredSVM {NJOBS}. Got 0 instead."),
    Case("evaluate-check-inference", file("a.txt", CHUNK), "evaluate --model {chunk} --test {d}/a.txt --option check_inference=maybe", 2, "The 'check_inference' parameter of StructuredSVM must be a bool. Got 'maybe' instead."),
    Case("predict-n-jobs-abc", file("a.conllu", CONLLU), "predict --model {pos} --input {d}/a.conllu --output {d}/o.conllu --option n_jobs=abc", 2, f"The 'n_jobs' parameter of StructuredSVM {NJOBS}. Got 'abc' instead."),
    Case("predict-n-jobs-float", file("a.conllu", CONLLU), "predict --model {pos} --input {d}/a.conllu --output {d}/o.conllu --option n_jobs=1.5", 2, f"The 'n_jobs' parameter of StructuredSVM {NJOBS}. Got 1.5 instead."),
    Case("kbest-n-jobs-zero", file("a.conllu", CONLLU), "kbest --model {dep} --input {d}/a.conllu --output {d}/o.kbest --option n_jobs=0", 2, f"The 'n_jobs' parameter of StructuredSVM {NJOBS}. Got 0 instead."),
    Case("explain-n-jobs-huge", none, "explain --model {translit} --source a --target b --out {d}/x.png --option n_jobs=100000", 2, f"The 'n_jobs' parameter of LCLR {NJOBS}. Got 100000 instead: every worker"),
    # --- counts in headers ------------------------------------------------------------------
    Case("kbest-cut-short", file("k.kbest", KBEST_HEAD2 + KBEST_SENT), train("rerank", "k.kbest"), 2, "k.kbest:2: the file ends after 1 of the 2 sentences its header (line 1) announces"),
    Case("kbest-extra-sentence", file("k.kbest", KBEST_HEAD + KBEST_SENT + KBEST_SENT), train("rerank", "k.kbest"), 2, "k.kbest:3: sentence 2 is past the header's n_sentences=1 (line 1)"),
    # --- the minor rows -------------------------------------------------------------------
    Case("train-config-dir", file("a.txt", CHUNK), "train chunk --train {d}/a.txt --model {d}/m.npz --config {d}", 2, "--config {d}: is a directory, expected a TOML or JSON file"),
    Case("explain-not-explainable-first", none, "explain --model {dep} --out {d}/x.png", 2, "task 'dep' cannot (it is not explainable)"),
    Case("explain-out-txt", none, "explain --model {translit} --source a --target b --out {d}/x.txt", 2, "--out {d}/x.txt: explain draws a PNG picture, so the file must end in .png; give --out {d}/x.png"),
    Case("pos-range-past-end", file("a.conllu", "1-99" + RANGE + CONLLU), train("pos", "a.conllu"), 2, "a.conllu:1: multiword-token range 1-99 goes past the last word of its sentence (2 words)"),
    Case("pos-range-not-covering", file("a.conllu", "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n3-4" + RANGE + ROW2 + "\n"), train("pos", "a.conllu"), 2, "a.conllu:2: multiword-token range 3-4 does not cover the words that follow it: the next word is 2"),
    Case("pos-range-reversed", file("a.conllu", "3-2" + RANGE + CONLLU), train("pos", "a.conllu"), 2, "a.conllu:1: bad multiword-token range '3-2': the first ID must be smaller than the second"),
    Case("doccls-one-class", file("d.jsonl", DOCS.replace('"label": "b"', '"label": "a"')), train("doccls", "d.jsonl"), 2, "d.jsonl: training data has only one label, 'a' (2 documents)"),
    Case("train-seed-abc", file("a.txt", CHUNK), train("chunk", "a.txt") + " --seed abc", 2, "argument --seed: invalid int value: 'abc' (see 'latentstruct train --help')"),
    Case("evaluate-format-xml", file("a.txt", CHUNK), "evaluate --model {chunk} --test {d}/a.txt --format xml", 2, "argument --format: invalid choice: 'xml'"),
    Case("info-without-model", none, "info", 2, "the following arguments are required: --model (see 'latentstruct info --help')"),
    Case("unknown-command", none, "frobnicate --model {d}/m.npz", 2, "argument COMMAND: invalid choice: 'frobnicate'"),
    Case("train-quiet-progress", file("a.txt", CHUNK), train("chunk", "a.txt") + " --progress", 2, "argument --progress: not allowed with argument --quiet"),
    Case("demo-n-jobs-zero", none, "demo --n-jobs 0 --out {d} --quiet", 2, "--n-jobs must be a number of workers in [1, 1024] or -1 (all), got 0"),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Small models for the commands that need one (trained once; never modified)."""
    folder = tmp_path_factory.mktemp("models")
    (folder / "chunk.txt").write_text(CHUNK, encoding="utf-8")
    (folder / "ud.conllu").write_text(CONLLU, encoding="utf-8")
    runs = {
        "chunk": "train chunk --train {f}/chunk.txt --model {f}/chunk.npz --quiet",
        "pos": "train pos --train {f}/ud.conllu --model {f}/pos.npz --quiet",
        "dep": "train dep --train {f}/ud.conllu --model {f}/dep.npz --quiet --option hash_bits=8 "
               "--option label_hash_bits=4",
        "translit": "train translit --model {f}/translit.npz --quiet --option n_train=20 "
                    "--option max_iter=2",
    }
    for name, argv in runs.items():
        assert main(shlex.split(argv.format(f=folder))) == 0, name
    return {name: str(folder / f"{name}.npz") for name in runs}


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case, tmp_path, models, capsys, monkeypatch):
    names = {"d": str(tmp_path), **models}
    case.write(tmp_path)
    before = _snapshot(tmp_path)
    for target, value in case.patch:
        module, attr = target.rsplit(".", 1)
        monkeypatch.setattr(importlib.import_module(module), attr, value)
    capsys.readouterr()
    try:
        code = main(shlex.split(case.argv.format(**names)))
    except SystemExit as exc:  # argparse's usage errors: the same one line, status 2
        code = exc.code
    out, err = capsys.readouterr()
    assert code == case.code, err
    assert err.startswith("latentstruct: error: ") and err.count("\n") == 1, err
    assert case.fragment.format(**names) in err
    if code != 0:
        assert _snapshot(tmp_path) == before  # nothing written, nothing half-written


def test_every_reader_and_command_is_covered():
    argv = [c.argv for c in CASES]
    for command in ("train", "evaluate", "predict", "explain", "kbest", "info", "demo"):
        assert any(a.startswith(command + " ") for a in argv), command
    for task in ("chunk", "pos", "dep", "citations", "translit", "paraphrase", "rte", "doccls",
                 "rerank", "grammaticality"):
        kinds = {c.name.rsplit("-", 1)[-1] for c in CASES if c.argv.startswith(f"train {task} ")}
        assert len(kinds) >= 3, (task, kinds)
        assert any(c.fragment.endswith(NUL) for c in CASES if c.argv.startswith(f"train {task} "))
    assert len({c.name for c in CASES}) == len(CASES)


# --- one validation path: a bounded option gets the same message from every command ---------
def _error_line(argv: str, capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = main(shlex.split(argv))
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return code, err


@pytest.fixture(scope="module")
def grammaticality_model(models, tmp_path_factory):
    """A small grammaticality model (its task has a bounded evaluation-time option)."""
    folder = tmp_path_factory.mktemp("grammaticality")
    (folder / "s.txt").write_text("Dogs bark .\nCats sleep .\nBirds sing loudly .\n",
                                  encoding="utf-8")
    argv = (f"train grammaticality --train {folder}/s.txt --model {folder}/g.npz --quiet "
            f"--option tagger_model={models['pos']} --option lm_corpus={folder}/s.txt "
            f"--option chunker=None --option max_iter=2 --option heldout_fraction=0")
    assert main(shlex.split(argv)) == 0
    return str(folder / "g.npz")


# every command that takes a learner's evaluation-time option, and the learner it loads
LEARNER_COMMANDS = {
    "train": ("train pos --train {d}/a.conllu --model {d}/m.npz --quiet --option {o}", "ssvm"),
    "evaluate": ("evaluate --model {pos} --test {d}/a.conllu --quiet --option {o}", "ssvm"),
    "predict": ("predict --model {pos} --input {d}/a.conllu --output {d}/o.conllu --quiet "
                "--option {o}", "ssvm"),
    "kbest": ("kbest --model {dep} --input {d}/a.conllu --output {d}/o.kbest --quiet "
              "--option {o}", "ssvm"),
    "explain": ("explain --model {translit} --source a --target b --out {d}/x.png --option {o}",
                "lclr"),
}
LEARNER_VALUES = ["n_jobs=100000", "n_jobs=-5000", "n_jobs=0", "n_jobs=nan", "n_jobs=abc",
                  "n_jobs=1.5", "check_inference=maybe", "progress=3"]


@pytest.mark.parametrize("option", LEARNER_VALUES)
@pytest.mark.parametrize("command", sorted(LEARNER_COMMANDS))
def test_learner_option_has_one_check_in_every_command(command, option, tmp_path, models,
                                                       capsys):
    from latentstruct.cli.common import parse_option
    from latentstruct.exceptions import ConfigError
    from latentstruct.learners import get_learner_class

    (tmp_path / "a.conllu").write_text(CONLLU, encoding="utf-8")
    argv, learner = LEARNER_COMMANDS[command]
    code, err = _error_line(argv.format(d=tmp_path, o=option, **models), capsys)
    with pytest.raises(ConfigError) as expected:  # the learner class's own check
        get_learner_class(learner).validate_params(dict([parse_option(option)]))
    assert code == 2 and err == f"latentstruct: error: {expected.value}\n"
    assert not any(p.name != "a.conllu" for p in tmp_path.iterdir())


GRAMMATICALITY_COMMANDS = {
    "train": "train grammaticality --train {d}/s.txt --model {d}/m.npz --quiet --option "
             "tagger_model={pos} --option {o}",
    "evaluate": "evaluate --model {g} --test {d}/s.txt --quiet --option {o}",
    "predict": "predict --model {g} --input {d}/s.txt --output {d}/o.txt --quiet --option {o}",
    "kbest": "kbest --model {g} --input {d}/s.txt --output {d}/o.kbest --quiet --option {o}",
    "explain": "explain --model {g} --source a --target b --out {d}/x.png --option {o}",
}


@pytest.mark.parametrize("value", [1_000_000, 101, -1])
@pytest.mark.parametrize("command", sorted(GRAMMATICALITY_COMMANDS))
def test_task_option_has_one_check_in_every_command(command, value, tmp_path, models,
                                                    grammaticality_model, capsys):
    from latentstruct.exceptions import ConfigError
    from latentstruct.tasks import get_task_class

    (tmp_path / "s.txt").write_text(SENTENCES, encoding="utf-8")
    argv = GRAMMATICALITY_COMMANDS[command].format(d=tmp_path, o=f"n_negative_sets={value}",
                                                  g=grammaticality_model, **models)
    code, err = _error_line(argv, capsys)
    with pytest.raises(ConfigError) as expected:  # the task's own check
        get_task_class("grammaticality")(n_negative_sets=value).check_params()
    assert code == 2 and err == f"latentstruct: error: {expected.value}\n"
    if value > 100:
        assert "evaluation samples and decodes that many negative sets" in err


@pytest.mark.parametrize("value", ["100000", "0", "-2"])
@pytest.mark.parametrize("command", ["train", "evaluate", "predict", "demo"])
def test_n_jobs_flag_has_one_check_in_every_command(command, value, tmp_path, models, capsys):
    argv = {"train": "train chunk --train {d}/a.txt --model {d}/m.npz --quiet",
            "evaluate": "evaluate --model {chunk} --test {d}/a.txt --quiet",
            "predict": "predict --model {chunk} --input {d}/a.txt --output {d}/o.txt --quiet",
            "demo": "demo --out {d} --quiet"}[command]
    (tmp_path / "a.txt").write_text(CHUNK, encoding="utf-8")
    code, err = _error_line(f"{argv} --n-jobs {value}".format(d=tmp_path, **models), capsys)
    from latentstruct.cli.compute import check_compute_args
    from latentstruct.exceptions import ConfigError

    with pytest.raises(ConfigError) as expected:
        check_compute_args(type("Args", (), {"n_jobs": int(value)})(), None)
    assert code == 2 and err == f"latentstruct: error: {expected.value}\n"


# --- Ctrl-C and progress bars, in a real process --------------------------------------------
def _chunk_corpus(path, n_sentences: int, seed: int = 0) -> None:
    """A CoNLL-2000-like file of random sentences (NP/VP chunks over a small vocabulary)."""
    import random

    rng = random.Random(seed)
    words = [("the", "DT"), ("a", "DT"), ("dog", "NN"), ("cat", "NN"), ("market", "NN"),
             ("prices", "NNS"), ("rose", "VBD"), ("fell", "VBD"), ("sees", "VBZ"),
             ("quickly", "RB"), ("in", "IN"), ("London", "NNP"), (".", ".")]
    lines = []
    for _ in range(n_sentences):
        for _ in range(rng.randint(8, 25)):
            w, p = rng.choice(words)
            tag = rng.choice(["B-NP", "I-NP", "B-VP", "O", "B-PP"])
            lines.append(f"{w}{rng.randint(0, 300)} {p} {tag}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _latentstruct(*args, interruptible: bool = False) -> subprocess.Popen:
    """The program in a child process.  ``interruptible``: SIGINT at its default in the
    child, as in a terminal, even when this test run was started with SIGINT ignored (a
    background job, e.g. ``nohup … &``), which the child would inherit and keep."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    reset = (lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) if interruptible else None
    return subprocess.Popen([sys.executable, "-m", "latentstruct", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=reset)


def _read_until(stream, needle: bytes, timeout: float) -> bytes:
    """Bytes of ``stream`` up to and including ``needle`` (or all there were after at most
    ``timeout`` seconds of waiting: a hang guard, counted in 0.2 s polls)."""
    import select

    got = b""
    for _ in range(int(timeout / 0.2)):
        if needle in got:
            break
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            got += chunk
    return got


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_ctrl_c_mid_training_says_interrupted_and_exits_130(tmp_path):
    data = tmp_path / "train.txt"
    _chunk_corpus(data, 1500)
    proc = _latentstruct("train", "chunk", "--train", data, "--model", tmp_path / "m.npz",
                         "--progress", "--option", "tol=1e-12", "--option", "max_iter=10000",
                         interruptible=True)
    try:
        seen = _read_until(proc.stderr, b"ssvm:", timeout=120)  # the learner's bar: training
        assert b"ssvm:" in seen, seen[-2000:]
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    err = (seen + rest).decode("utf-8", "replace")
    assert proc.returncode == 130, err[-2000:]
    assert err.splitlines()[-1] == "latentstruct: interrupted", err[-2000:]
    assert "Traceback" not in err
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.slow
@pytest.mark.parametrize("flag", [None, "--progress"])
def test_progress_bars_only_on_a_terminal_unless_forced(flag, tmp_path):
    data = tmp_path / "train.txt"
    _chunk_corpus(data, 60)
    args = ["train", "chunk", "--train", data, "--model", tmp_path / "m.npz", "--option",
            "max_iter=3"] + ([flag] if flag else [])
    proc = _latentstruct(*args)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert (b"\r" in err) == (flag == "--progress"), err[-2000:]  # stderr is a pipe here
    assert b"trained ssvm on 60 chunk examples" in err  # the summary line stays


def test_a_swallowed_ctrl_c_is_raised_again_until_the_command_ends(monkeypatch, capsys):
    """A KeyboardInterrupt raised inside a callback from C code (llvmlite's object-cache
    notification while numba compiles, on a fresh install) is printed as "Exception
    ignored" and lost; the command's handler raises it again until the command ends."""
    import _thread

    from latentstruct import cli

    monkeypatch.setattr(cli, "RETRY_INTERRUPT_S", 0.05)
    # as in a terminal, even when this test run was started with SIGINT ignored
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupts = cli._Interrupts()
    interrupts.start()
    try:
        assert signal.getsignal(signal.SIGINT) == interrupts._handler
        try:
            _thread.interrupt_main()  # the user's Ctrl-C ...
            time.sleep(1.0)
        except KeyboardInterrupt:
            pass  # ... swallowed, as by the callback
        assert interrupts.seen
        # Python would print the lost one as "Exception ignored ... Traceback": not here
        hook = sys.unraisablehook
        hook(types.SimpleNamespace(exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(),
                                   exc_traceback=None, err_msg=None, object=None))
        again = False
        try:
            for _ in range(100):  # at most ~1 s of "training" goes on
                time.sleep(0.01)
        except KeyboardInterrupt:
            again = True
        assert again
        interrupts._end()
        time.sleep(0.2)  # no further interruption once the command has ended
    finally:
        interrupts.restore()
        back = signal.signal(signal.SIGINT, outer)
    assert back is signal.default_int_handler
    assert sys.unraisablehook is not hook  # the caller's hook is back
    assert "KeyboardInterrupt" not in capsys.readouterr().err
