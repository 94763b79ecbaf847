"""Fuzzing every reader of user files (issue 27): any bytes either parse or raise the project's
error, never another exception and never a hang.

The contract, checked with hypothesis on every reader of the package:

* data readers (``read_conll2000``, ``read_conllu``, ``read_dependencies``, ``read_cora``,
  ``read_msrp``, ``read_kbest``, ...) return or raise ``InputError``;
* the tasks' ``read`` (which add sniffing, sampling and checks of their own) return or raise
  ``InputError`` or ``ConfigError`` (the command line reports both as one line, exit 2);
* a run configuration (``--config x.toml`` / ``x.json``) returns or raises ``ConfigError``;
* ``latentstruct.io.load_model`` (any bytes, fuzzed zip archives, npy headers and metadata)
  and ``load_trained`` (a trained model's metadata mutated) return or raise
  ``ModelFormatError``.

Each reader gets raw ``st.binary()`` and inputs built from its format's own tokens: valid
lines of the format, the same lines with one field replaced, and a soup of the format's
keywords with tabs, newlines, ``\\r``, NUL, a BOM, odd Unicode, invalid UTF-8, huge numbers
and long tokens.  Every call runs under a ``signal`` timer (``TIME_LIMIT`` seconds), so a
hang fails the test instead of stalling CI.  Each crash the fuzzer found (another
exception type) is kept as a plain regression test at the end of the file, with the input
that raised it.

``LATENTSTRUCT_FUZZ_EXAMPLES`` sets the examples per test (default 200); the runs are
derandomized, so CI sees the same inputs every time.  Run more locally with e.g.
``LATENTSTRUCT_FUZZ_EXAMPLES=5000 pytest tests/test_reader_fuzz.py``.
"""

from __future__ import annotations

import copy
import io
import json
import os
import signal
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from latentstruct.cli.runconfig import load_run_config
from latentstruct.data.citations import read_cora
from latentstruct.data.dependency import read_dependencies
from latentstruct.data.documents import read_documents
from latentstruct.data.dependency.kbest import read_kbest
from latentstruct.data.sentences import read_sentences
from latentstruct.data.pairs import read_glue_rte, read_msrp, read_pairs, read_rte_xml
from latentstruct.data.readers import read_conll2000, read_conllu
from latentstruct.data.translit import read_translit_tsv
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError
from latentstruct.io import load_model, save_model
from latentstruct.tasks import get_task_class
from latentstruct.tasks.sequence.citations import read_plain_references
from latentstruct.tasks.sequence.chunk import read_words_pos
from latentstruct.tasks.sequence.pos import read_plain_sentences

EXAMPLES = int(os.environ.get("LATENTSTRUCT_FUZZ_EXAMPLES", "200"))
#: seconds one call may take; the inputs are a few KB, so a slow call is a hang
TIME_LIMIT = 5.0
MAX_BYTES = 4096

fuzz = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)


# --------------------------------------------------------------------------------------
# running a reader on bytes
# --------------------------------------------------------------------------------------
class ReaderHang(Exception):
    """A reader ran over TIME_LIMIT seconds on a small input."""


def _on_alarm(signum, frame):
    raise ReaderHang(f"the reader ran over {TIME_LIMIT} s on a small input")


def check_reader(call, data: bytes, name: str, allowed=(InputError,)) -> None:
    """Write ``data`` to a fresh temporary folder as ``name`` and run ``call(path)``: it must
    return or raise one of ``allowed`` within ``TIME_LIMIT`` seconds.  Anything else
    propagates, and hypothesis reports it with the input."""
    with tempfile.TemporaryDirectory(prefix="latentstruct-fuzz-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        timed = hasattr(signal, "setitimer")
        if timed:
            previous = signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call(path)
        except allowed:
            pass
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------------------
# input strategies
# --------------------------------------------------------------------------------------
#: pieces every format gets: separators, line endings, NUL, BOM, odd Unicode (line
#: separators, right-to-left mark, non-ASCII digits, a dotted capital I that lowercases to
#: two characters), numbers at and past every limit, quotes and brackets
COMMON = [
    "\t", "\t", "\n", "\n", "\r\n", "\r", " ", "  ", "\x00", "\ufeff", "\u2028", "\x85",
    "\x0b", "\x0c", "\xa0", "\u3000", "é", "ß", "İ", "\U0001F600", "\u200f", "²", "٣", "𝟙",
    "-", "_", "#", "=", "|", "0", "1", "2", "3", "-1", "01", "1.5", "1e999", "-0", "NaN",
    "999999999", "1234567890", '"', "'", "<", ">", "&", "\\", "{", "}", "[", "]", ",", ":",
    "null", "true",
]
#: long tokens: a number past Python's 4,300-digit int() limit, a long word
LONG = st.sampled_from([("9", 4400), ("x", 3000), ("[", 1200)]).map(lambda t: t[0] * t[1])
#: bytes that are not UTF-8 (or are UTF-16/UTF-8 marks, a lone surrogate, a bare lead byte)
RAW = [b"\xff", b"\xfe\xff", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x80",
       b"\xf4\x90\x80\x80"]


def fragments(tokens) -> st.SearchStrategy[bytes]:
    """One piece of input: a format token, a common piece, a number, short text or bytes."""
    return st.one_of(
        st.sampled_from(list(tokens) + COMMON).map(lambda s: s.encode("utf-8")),
        st.integers(-10**12, 10**12).map(lambda k: str(k).encode()),
        st.text(max_size=6).map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.sampled_from(RAW),
        st.binary(max_size=6),
        LONG.map(lambda s: s.encode()),
    )


def soup(tokens, max_size: int = 60) -> st.SearchStrategy[bytes]:
    """A run of the format's tokens and common pieces."""
    return st.lists(fragments(tokens), max_size=max_size).map(b"".join)


@st.composite
def mutated(draw, line: str, sep: str, tokens):
    """``line`` with one of its ``sep``-separated fields replaced, dropped or doubled."""
    fields = line.split(sep)
    k = draw(st.integers(0, len(fields) - 1))
    how = draw(st.sampled_from(["replace", "replace", "replace", "drop", "double"]))
    if how == "drop":
        del fields[k]
    elif how == "double":
        fields.insert(k, fields[k])
    else:
        fields[k] = draw(fragments(tokens)).decode("utf-8", "surrogateescape")
    return sep.join(fields)


def _soup_line(tokens) -> st.SearchStrategy[str]:
    return soup(tokens, 8).map(lambda b: b.decode("utf-8", "surrogateescape"))


@st.composite
def near_valid(draw, blocks, sep: str, tokens, header=None, footer=None):
    """A valid file of the format (``header``, some of the valid ``blocks`` of lines,
    ``footer``) with at most a few changes: a field of a line replaced, dropped or doubled,
    a line replaced by a token soup, inserted, deleted or repeated; LF or CRLF endings, an
    optional BOM, a missing or doubled final line ending."""
    rows = [] if header is None else header.split("\n")
    block = blocks if isinstance(blocks, st.SearchStrategy) else st.sampled_from(blocks)
    for drawn in draw(st.lists(block, min_size=1, max_size=5)):
        rows.extend(drawn.split("\n"))
    if footer is not None:
        rows.extend(footer.split("\n"))
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
        k = draw(st.integers(0, len(rows)))
        how = draw(st.sampled_from(["field", "field", "field", "soup", "insert", "delete",
                                    "repeat"]))
        if how == "insert" or not rows:
            rows.insert(k, draw(_soup_line(tokens)))
            continue
        k = min(k, len(rows) - 1)
        if how == "field":
            rows[k] = draw(mutated(rows[k], sep, tokens))
        elif how == "soup":
            rows[k] = draw(_soup_line(tokens))
        elif how == "delete":
            del rows[k]
        else:
            rows.insert(k, rows[k])
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = eol.join(rows) + draw(st.sampled_from([eol, eol, "", eol + eol]))
    if draw(st.integers(0, 5)) == 0:
        text = "\ufeff" + text
    return text.encode("utf-8", "surrogateescape")


def inputs(blocks, sep: str, tokens, header=None, footer=None) -> st.SearchStrategy[bytes]:
    """Raw bytes, a token soup, or (half the time) a near-valid file of the format."""
    valid = near_valid(blocks, sep, tokens, header, footer)
    return st.one_of(st.binary(max_size=MAX_BYTES), soup(tokens), valid, valid)


# --- the formats --------------------------------------------------------------------------
CHUNK = ["He PRP B-NP\nreckons VBZ B-VP\nthe DT B-NP\ndeficit NN I-NP\n. . O\n",
         "Rockwell NNP B-NP\nsaid VBD B-VP\n", "Rockwell\tNNP  I-NP\n"]
CHUNK_TOKENS = ["B-NP", "I-NP", "O", "B-", "I-", "B", "PRP", "NN", " ", "He"]
WORDS_POS = ["He PRP\nreckons VBZ\n. .\n", "Rockwell NNP\n"]

CONLLU = [
    "# sent_id = 1\n# text = Dogs bark.\n"
    "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_\n"
    "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n"
    "3\t.\t.\tPUNCT\t.\tCase=Nom|Number=Sing\t2\tpunct\t_\t_\n",
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDo\tdo\tAUX\t_\tCase=Erg\t0\troot\t_\t_\n"
    "2\tn't\tnot\tPART\tRB\t_\t1\tadvmod\t_\t_\n"
    "2.1\tgone\tgo\tVERB\t_\t_\t_\t_\t0:root\t_\n",
    "1\tGo\t_\t_\t_\t_\t_\t_\t_\t_\n",
]
CONLLU_TOKENS = ["NOUN", "VERB", "PUNCT", "CONJ", "_", "root", "nsubj", "Case=Erg", "Case=",
                 "Case[psor]=Erg", "1-2", "2-1", "1-1", "1.1", "0.1", "1.0", "# text = ",
                 "\t_\t_\t_\t_"]
DP = ["Dogs\tNNS\t2\nbark\tVBP\t0\n.\t.\t2\n", "Pierre\tNNP\t0\n",
      "a\tDT\t0\nb\tNN\t 0 \n"]
DP_TOKENS = ["NNS", "VBP", "``", "''", ",", ".", ":", "0", "1", "2", "4"]

CORA = ["<NEWREFERENCE>\n<author> A. Cau, R. Kuiper. </author> <title> Formal methods . "
        "</title> <date> 1998. </date>",
        "<NEWREFERENCE>\n<title> Parsing . </title>\n"]
CORA_TOKENS = ["<NEWREFERENCE>", "<author>", "</author>", "<title>", "</title>", "<date>",
               "</date>", "<a-b.c_1>", "</>", "<>", "<1>", " A. ", " 1998. "]
PLAIN_REFS = ["A. Cau. Formal methods. 1998.", "\nJ. Smith. Parsing."]

TRANSLIT = ["italy\tא י ט ל י ה\t3", "rome\tר ו מ א\t2", "paris\tפ ר י ז\t0\n",
            "Italy \t\u200fא י ט ל י ה\t 3"]
TRANSLIT_TOKENS = ["italy", "א י ט", "ר", "\u200e", "\u202e", "\u061c", "0", "12"]

MSRP_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"
MSRP = ["1\t702876\t702977\tThe cat sat.\tA cat sat.",
        "0\t2108705\t2108831\tYucaipa owned Dominick's.\tIt sold it.", ""]
GLUE_HEADER = "index\tsentence1\tsentence2\tlabel"
GLUE = ["0\tA dog barks.\tA dog is loud.\tentailment",
        "1\tNo cats.\tCats exist.\tnot_entailment", ""]
PAIR_TOKENS = ["Quality", "#1 ID", "#1 String", "index", "sentence1", "label", "entailment",
               "not_entailment", "0", "1", "2"]

XML_HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n'
              '<!DOCTYPE entailment-corpus SYSTEM "rte.dtd">\n<entailment-corpus>')
XML_FOOTER = "</entailment-corpus>"
XML = st.tuples(st.integers(0, 10**6), st.sampled_from([
    '<pair id="{}" entailment="YES" task="IE">\n<t>A dog barks &amp; bites.</t>\n'
    '<h>A dog.</h>\n</pair>',
    '<pair id="{}" value="FALSE">\n<t>Cats\n  sleep.</t>\n<h>Cats run.</h>\n</pair>',
    '<pair id="{}" entailment="no"><t>x</t><h>y</h></pair>',
])).map(lambda nt: nt[1].format(nt[0]))
XML_TOKENS = [
    "<pair", "<pair>", "</pair>", "<t>", "</t>", "<h>", "</h>", " id=\"1\"", " id=\"\"",
    " entailment=\"YES\"", " entailment=\"no\"", " value=\"TRUE\"", " value=\"UNKNOWN\"", ">",
    "/>", "<x>", "</x>", "<!DOCTYPE x [", "<!DOCTYPE x SYSTEM \"y.dtd\">", "]>",
    "<!ENTITY e \"ee\">", "<!ENTITY % p \"x\">", "<!ATTLIST pair entailment CDATA \"YES\">",
    "<!ELEMENT pair ANY>", "&e;", "&amp;", "&lt;", "&#0;", "&#65;", "&#x110000;",
    "<?xml version=\"1.0\" encoding=\"latin-1\"?>", "<?xml version=\"1.0\" encoding=\"utf-16\"?>",
    "<?xml version=\"1.0\" encoding=\"bogus\"?>", "<?xml version=\"1.1\" standalone=\"no\"?>",
    "<![CDATA[", "]]>", "<!--", "-->", "<?pi x?>", "<entailment-corpus>",
]
SENTENCES = ["Dogs bark .", "U.S. exports rose 5.93 pct (mid-1987).", "<s> </s> <unk>",
             "Ça va ? 1/2 don't"]

DOC_KEYS = ["id", "label", "text", "extra", "date"]
KBEST_KEYS = ["format", "version", "parser_id", "k", "single_root", "labelled", "pos", "folds",
              "source", "n_sentences", "id", "words", "lemmas", "upos", "xpos", "scored",
              "gold_heads", "gold_deprels", "candidates", "heads", "deprels", "score"]
TOML = ['task = "chunk"\nlearner = "ssvm"\ntrain = "train.txt"\nseed = 0',
        '[options]\nC = 0.1\nmax_iter = 15\nfeature_index = "hash"', "seed = 3", ""]
TOML_TOKENS = ["[options]", "[[options]]", "[options.x]", "task", "seed", "options", " = ",
               "=", '"', "'''", '"""', "inf", "nan", "0x1F", "1979-05-27T07:32:00Z", "{", "}",
               "[", "]", "[" * 50, "x = ["]


def json_scalars(words=()) -> st.SearchStrategy:
    return st.one_of(
        st.none(), st.booleans(),
        st.integers(-2**70, 2**70), st.just(10**400), st.just(-(10**400)),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8), st.sampled_from(list(words) or ["x"]), LONG,
    )


def json_values(keys=(), words=()) -> st.SearchStrategy:
    key = st.one_of(st.sampled_from(list(keys) or ["k"]), st.text(max_size=4))
    return st.recursive(
        json_scalars(words),
        lambda inner: st.one_of(st.lists(inner, max_size=4),
                                st.dictionaries(key, inner, max_size=5)),
        max_leaves=12,
    )


#: values that sit at the edge of what the JSON readers check: an integer no float can
#: hold, NaN and infinities, booleans where integers are expected, empty containers
SPECIAL = st.sampled_from([0, 1, -1, 2, 10**400, -(10**400), float("nan"), float("inf"),
                           float("-inf"), True, False, None, "", "_", "0", [], {}, [0], ["x"],
                           1.5, -0.0])


def _json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, path + (key,))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _json_paths(item, path + (k,))


@st.composite
def json_mutated(draw, valid, keys, changes=(0, 1, 1, 1, 2)):
    """A valid JSON object of the format with a few changes (a number drawn from
    ``changes``) anywhere inside it: a value replaced, an entry deleted or one added."""
    obj = copy.deepcopy(draw(valid))
    for _ in range(draw(st.sampled_from(changes))):
        path = draw(st.sampled_from(list(_json_paths(obj))))
        new = copy.deepcopy(draw(st.one_of(SPECIAL, SPECIAL, json_scalars(), json_values(keys))))
        if not path:
            obj = new
            continue
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        how = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if how == "replace":
            parent[path[-1]] = new
        elif how == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.one_of(st.sampled_from(keys), st.text(max_size=3)))] = new
        else:
            parent.insert(path[-1], new)
    return obj


def dumps(value) -> str:
    """JSON text of ``value`` (NaN and Infinity as Python's json writes them)."""
    return json.dumps(value, ensure_ascii=False)


def json_files(objects, keys, header=None) -> st.SearchStrategy[bytes]:
    """Raw bytes, a soup of JSON tokens, or JSON-lines files of (mutated) objects of the
    format, after a (mutated) ``header(n_objects)`` object when given, sometimes with a soup
    or blank line among them."""
    tokens = ['{"', '":', '"', ",", "{", "}", "[", "]"] + list(keys)
    objects = json_mutated(objects, keys, (0, 0, 1, 1, 2))

    @st.composite
    def build(draw):
        body = [dumps(o) for o in draw(st.lists(objects, min_size=1, max_size=4))]
        rows = [] if header is None else [
            dumps(draw(json_mutated(header(len(body)), keys, (0, 0, 0, 1))))]
        rows += body
        if draw(st.integers(0, 7)) == 0:
            rows.insert(draw(st.integers(0 if header is None else 1, len(rows))),
                        draw(st.one_of(_soup_line(tokens), st.just(""))))
        return ("\n".join(rows) + "\n").encode("utf-8", "surrogatepass")

    return st.one_of(st.binary(max_size=MAX_BYTES), soup(tokens), build(), build())


DOC_IDS = st.one_of(st.sampled_from(["1", "2", "49960", "٣", " 7 ", "a"]),
                    st.integers(0, 99).map(str), LONG)


@st.composite
def documents(draw):
    obj = {"id": draw(DOC_IDS), "label": draw(st.sampled_from(["alt.atheism", "sci.space"])),
           "text": draw(st.sampled_from(["From: x\nSubject: y\n\nbody", "red apple"]))}
    if draw(st.integers(0, 3)) == 0:
        obj["extra"] = draw(json_values(DOC_KEYS))
    return obj


KBEST_HEADER = {"format": "latentstruct-kbest", "version": 1, "parser_id": "p", "k": 3,
                "single_root": True, "labelled": False, "pos": "gold", "folds": 1,
                "source": "x", "n_sentences": 1}


@st.composite
def kbest_sentence(draw):
    """A valid k-best sentence: n words, trees rooted at word 1, decreasing scores."""
    n = draw(st.integers(1, 4))

    def tree():
        return [0] + [draw(st.integers(1, m)) for m in range(1, n)]

    words = [draw(st.sampled_from(["Dogs", "bark", ".", "é"])) for _ in range(n)]
    scores = sorted(draw(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=3)), reverse=True)
    return {"id": draw(st.sampled_from(["s1", "weblog-0001"])), "words": words,
            "lemmas": words, "upos": ["NOUN"] * n, "xpos": ["NN"] * n,
            "scored": [draw(st.booleans()) for _ in range(n)],
            "gold_heads": draw(st.one_of(st.none(), st.just(tree()))),
            "gold_deprels": draw(st.one_of(st.none(), st.just(["dep"] * n))),
            "candidates": [{"heads": tree(), "deprels": ["_"] * n, "score": s} for s in scores]}


def kbest_files() -> st.SearchStrategy[bytes]:
    return json_files(kbest_sentence(), KBEST_KEYS,
                      lambda n: st.just({**KBEST_HEADER, "n_sentences": n}))


# --------------------------------------------------------------------------------------
# the data readers
# --------------------------------------------------------------------------------------
def _dp_directory(path):
    return read_dependencies(path.parent)


def _dp_directory_train(path):
    return read_dependencies(path.parent, split="train")


CHUNK_IN = inputs(CHUNK, " ", CHUNK_TOKENS)
WORDS_POS_IN = inputs(WORDS_POS, " ", CHUNK_TOKENS)
CONLLU_IN = inputs(CONLLU, "\t", CONLLU_TOKENS)
DP_IN = inputs(DP, "\t", DP_TOKENS)
SENTENCES_IN = inputs(SENTENCES, " ", [])
CORA_IN = inputs(CORA, " ", CORA_TOKENS)
PLAIN_REFS_IN = inputs(PLAIN_REFS, " ", CORA_TOKENS)
TRANSLIT_IN = inputs(TRANSLIT, "\t", TRANSLIT_TOKENS)
MSRP_IN = inputs(MSRP, "\t", PAIR_TOKENS, MSRP_HEADER)
GLUE_IN = inputs(GLUE, "\t", PAIR_TOKENS, GLUE_HEADER)
XML_IN = inputs(XML, " ", XML_TOKENS, XML_HEADER, XML_FOOTER)
DOCS_IN = json_files(documents(), DOC_KEYS)
KBEST_IN = kbest_files()

READERS = [
    # id, reader, file name, strategy
    ("conll2000", read_conll2000, "train.txt", CHUNK_IN),
    ("words_pos", read_words_pos, "test.txt", WORDS_POS_IN),
    ("conllu", read_conllu, "x.conllu", CONLLU_IN),
    ("plain_sentences", read_plain_sentences, "x.txt", SENTENCES_IN),
    ("dependencies_conllu", read_dependencies, "x.conllu", CONLLU_IN),
    ("dependencies_sniffed", read_dependencies, "x.data", st.one_of(CONLLU_IN, DP_IN)),
    ("dependencies_dp", read_dependencies, "wsj_0001.dp", DP_IN),
    ("dependencies_dp_directory", _dp_directory, "wsj_0001.dp", DP_IN),
    ("dependencies_dp_directory_split", _dp_directory_train, "wsj_0001.dp", DP_IN),
    ("cora", read_cora, "cora.txt", CORA_IN),
    ("plain_references", read_plain_references, "refs.txt", PLAIN_REFS_IN),
    ("translit", read_translit_tsv, "he.tsv", TRANSLIT_IN),
    ("msrp", read_msrp, "msrp.txt", MSRP_IN),
    ("glue_rte", read_glue_rte, "dev.tsv", GLUE_IN),
    ("pairs_tsv", read_pairs, "pairs.tsv", st.one_of(MSRP_IN, GLUE_IN)),
    ("rte_xml", read_rte_xml, "rte.xml", XML_IN),
    ("pairs_xml", read_pairs, "rte.xml", XML_IN),
    ("lm_sentences", read_sentences, "sentences.txt", SENTENCES_IN),
    ("documents", read_documents, "docs.jsonl", DOCS_IN),
    ("documents_unlabelled", lambda p: read_documents(p, allow_unlabelled=True), "docs.jsonl",
     DOCS_IN),
    ("kbest", read_kbest, "lists.kbest", KBEST_IN),
]


@pytest.mark.parametrize("reader,name,strategy", [r[1:] for r in READERS],
                         ids=[r[0] for r in READERS])
@pytest.mark.slow
def test_reader_parses_or_raises_input_error(reader, name, strategy):
    @fuzz
    @given(data=strategy)
    def run(data):
        check_reader(reader, data, name)

    run()


# --------------------------------------------------------------------------------------
# the tasks' read
# --------------------------------------------------------------------------------------
def _task(name, **params):
    return get_task_class(name)(**params)


TASK_READS = [
    # id, task name, task params, split, file name, strategy
    ("chunk-train", "chunk", {}, "train", "train.txt", CHUNK_IN),
    ("chunk-test", "chunk", {}, "test", "test.txt", st.one_of(CHUNK_IN, WORDS_POS_IN)),
    ("pos-train", "pos", {}, "train", "x.conllu", CONLLU_IN),
    ("pos-test", "pos", {}, "test", "x.conllu", st.one_of(CONLLU_IN, SENTENCES_IN)),
    ("pos-xpos", "pos", {"tag_column": "xpos"}, "test", "x.conllu", CONLLU_IN),
    ("pos-upos+case", "pos", {"tag_column": "upos+case"}, "train", "x.conllu", CONLLU_IN),
    ("citations-train", "citations", {}, "train", "cora.txt", CORA_IN),
    ("citations-test", "citations", {}, "test", "refs.txt", st.one_of(CORA_IN, PLAIN_REFS_IN)),
    ("dep", "dep", {}, "train", "x.conllu", CONLLU_IN),
    ("dep-dp", "dep", {}, "train", "wsj_0001.dp", DP_IN),
    ("doccls-by-date", "doccls", {"split": "train"}, "train", "docs.jsonl", DOCS_IN),
    ("doccls-unlabelled", "doccls", {"split": "eval"}, "test", "docs.jsonl", DOCS_IN),
    ("grammaticality", "grammaticality", {"test_sentences": "all", "n_negative_sets": 0}, "test",
     "sentences.txt", SENTENCES_IN),
    ("paraphrase", "paraphrase", {}, "train", "msrp.txt", MSRP_IN),
    ("rte-xml", "rte", {}, "train", "rte.xml", XML_IN),
    ("rte-tsv", "rte", {}, "test", "dev.tsv", GLUE_IN),
    ("rerank", "rerank", {}, "train", "lists.kbest", KBEST_IN),
    ("translit-train", "translit", {}, "train", "he.tsv", TRANSLIT_IN),
    ("translit-test", "translit", {"n_test": 2}, "test", "he.tsv", TRANSLIT_IN),
]


@pytest.mark.parametrize("task,params,split,name,strategy", [r[1:] for r in TASK_READS],
                         ids=[r[0] for r in TASK_READS])
@pytest.mark.slow
def test_task_read_parses_or_raises_input_error(task, params, split, name, strategy):
    @fuzz
    @given(data=strategy)
    def run(data):
        check_reader(lambda p: _task(task, **params).read(p, split=split), data, name,
                     allowed=(InputError, ConfigError))

    run()


# --------------------------------------------------------------------------------------
# run configurations and model files
# --------------------------------------------------------------------------------------
RUN_CONFIG = {"task": "chunk", "learner": "ssvm", "train": "train.txt", "seed": 0,
              "options": {"C": 0.1, "max_iter": 15, "feature_index": "hash", "x": None}}
RUN_CONFIG_KEYS = ["task", "learner", "train", "seed", "options", "C", "max_iter"]


@fuzz
@given(data=st.one_of(inputs(TOML, " = ", TOML_TOKENS),
                      json_files(st.just(RUN_CONFIG), RUN_CONFIG_KEYS).map(
                          lambda b: b.rstrip(b"\n"))),
       suffix=st.sampled_from([".toml", ".json"]))
@pytest.mark.slow
def test_run_config_parses_or_raises_config_error(data, suffix):
    check_reader(load_run_config, data, "run" + suffix, allowed=(ConfigError,))


@pytest.fixture(scope="module")
def model_bytes():
    """A small valid model file's bytes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.npz"
        save_model(path, {"task": "chunk", "learner": "ssvm", "task_params": {"min_count": 1},
                          "learner_params": {"C": 0.1}},
                   {"coef_": np.arange(4, dtype=np.float64),
                    "labels_": np.array(["B-NP", "O"])})
        return path.read_bytes()


def _npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


NPY_VALID = _npy(np.arange(3, dtype=np.float64))
NPY_HEADERS = [
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
    "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (0, -3), }",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999999,), }",
    "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }",
    "{'descr': '<U99999999', 'fortran_order': False, 'shape': (1,), }",
    "{'descr': '<M8[s]', 'fortran_order': True, 'shape': (3,), }",
    "{'descr': 5, 'fortran_order': 'x', 'shape': 3}",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}",
    "(", "{}", "[" * 200,
]


@st.composite
def npy_members(draw) -> bytes:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return NPY_VALID
    if kind == 1:
        header = draw(st.sampled_from(NPY_HEADERS)).encode("latin1")
        major = draw(st.sampled_from([1, 2, 3]))
        length = (len(header).to_bytes(2, "little") if major == 1
                  else len(header).to_bytes(4, "little"))
        return b"\x93NUMPY" + bytes([major, 0]) + length + header + draw(st.binary(max_size=32))
    if kind == 2:
        cut = draw(st.integers(0, len(NPY_VALID)))
        return NPY_VALID[:cut]
    return draw(st.binary(max_size=64))


@st.composite
def metadata_members(draw) -> bytes:
    meta = {"format_version": 1, "library_version": "0", "task": "chunk", "learner": "ssvm",
            "task_params": {}, "learner_params": {}, "array_names": ["coef_"]}
    for key in list(meta):
        choice = draw(st.integers(0, 7))
        if choice == 0:
            del meta[key]
        elif choice == 1:
            meta[key] = draw(json_values(list(meta)))
    if draw(st.integers(0, 3)) == 0:
        meta["array_names"] = draw(st.lists(st.sampled_from(["coef_", "x", "", "../y",
                                                             "metadata.json"]), max_size=3))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.binary(max_size=64))
    if kind == 1:
        return draw(json_values(list(meta))).__repr__().encode()
    return dumps(meta).encode("utf-8", "surrogatepass")


@st.composite
def zip_models(draw) -> bytes:
    """Zip archives holding fuzzed metadata and npy members, with odd flags and methods."""
    buf = io.BytesIO()
    members = [("metadata.json", draw(metadata_members())), ("coef_.npy", draw(npy_members()))]
    for _ in range(draw(st.integers(0, 2))):
        members.append((draw(st.sampled_from(["coef_.npy", "x.npy", "metadata.json", "a/b",
                                              "labels_.npy"])),
                        draw(st.one_of(npy_members(), metadata_members()))))
    members = draw(st.permutations(members))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names
        with zipfile.ZipFile(buf, "w") as zf:
            for name, content in members:
                info = zipfile.ZipInfo(name)
                info.compress_type = draw(st.sampled_from([zipfile.ZIP_DEFLATED,
                                                           zipfile.ZIP_DEFLATED,
                                                           zipfile.ZIP_STORED,
                                                           zipfile.ZIP_BZIP2,
                                                           zipfile.ZIP_LZMA]))
                info.flag_bits |= draw(st.sampled_from([0, 0, 0, 0x1, 0x8, 0x800, 0x40]))
                zf.writestr(info, content)
    data = bytearray(buf.getvalue())
    # header fields of a member changed in place: its flags (encryption 0x1, data
    # descriptor 0x8, strong encryption 0x40, UTF-8 names 0x800), compression method,
    # CRC, sizes or name length, in the central directory, the local header or both
    for _ in range(draw(st.integers(0, 2))):
        starts = [k for k in range(len(data) - 4)
                  if data[k:k + 4] in (b"PK\x01\x02", b"PK\x03\x04")]
        if not starts:
            break
        k = draw(st.sampled_from(starts))
        central = data[k + 2] == 1
        field, width = draw(st.sampled_from([(8, 2), (8, 2), (10, 2), (16, 4), (20, 4),
                                             (24, 4), (28, 2)] if central else
                                            [(6, 2), (6, 2), (8, 2), (14, 4), (18, 4),
                                             (22, 4), (26, 2)]))
        value = draw(st.one_of(st.sampled_from([0x1, 0x8, 0x40, 0x800, 0, 12, 14, 99,
                                                0xFFFF, 0xFFFFFFFF]),
                               st.integers(0, 256**width - 1)))
        if field in (6, 8) and width == 2 and draw(st.booleans()):  # set a flag bit
            value |= int.from_bytes(data[k + field:k + field + 2], "little")
        data[k + field:k + field + width] = (value % 256**width).to_bytes(width, "little")
    data = bytes(data)
    # a few byte changes anywhere (sizes, offsets, CRCs, flags of the central directory)
    for pos, value in draw(st.lists(st.tuples(st.integers(0, max(len(data) - 1, 0)),
                                              st.integers(0, 255)), max_size=3)):
        if data:
            data = data[:pos] + bytes([value]) + data[pos + 1:]
    if draw(st.integers(0, 4)) == 0:
        data = data[:draw(st.integers(0, len(data)))]
    return data


@st.composite
def mutated_models(draw, valid: bytes) -> bytes:
    data = bytearray(valid)
    for pos, value in draw(st.lists(st.tuples(st.integers(0, len(data) - 1),
                                              st.integers(0, 255)), min_size=1, max_size=6)):
        data[pos] = value
    return bytes(data)


@pytest.mark.slow
def test_load_model_parses_or_raises_model_format_error(model_bytes):
    @fuzz
    @given(data=st.one_of(st.binary(max_size=MAX_BYTES), zip_models(), zip_models(),
                          mutated_models(model_bytes), st.just(model_bytes)))
    def run(data):
        check_reader(load_model, data, "m.npz", allowed=(ModelFormatError,))

    run()


# --------------------------------------------------------------------------------------
# crashes the fuzzer found, kept as plain regression tests (each was another exception)
# --------------------------------------------------------------------------------------
def _error_of(call, data: bytes, name: str, error=InputError):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        with pytest.raises(error) as info:
            call(path)
    return str(info.value).replace(str(path), name)


def test_kbest_score_too_large_for_a_float_is_an_input_error():
    # was OverflowError from math.isfinite: JSON integers have any number of digits
    sentence = {"id": "s", "words": ["a"], "lemmas": ["a"], "upos": ["X"], "xpos": ["X"],
                "scored": [True], "gold_heads": None, "gold_deprels": None,
                "candidates": [{"heads": [0], "deprels": ["_"], "score": 10**400}]}
    data = f"{dumps(KBEST_HEADER)}\n{dumps(sentence)}\n".encode()
    message = _error_of(read_kbest, data, "lists.kbest")
    assert message.startswith("lists.kbest:2: candidate 0: score must be a finite number, got 1000")


@pytest.mark.parametrize("encoding,why", [
    ("b", "no such encoding"),  # was LookupError
    ("shift_jis", "multi-byte encodings are not supported"),  # was ValueError
    ("rot13", "'rot13' is not a text encoding"),  # was LookupError
    ("undefined", "decoding with 'undefined' codec failed"),  # was UnicodeError
])
def test_rte_xml_encoding_python_cannot_read_is_an_input_error(encoding, why):
    data = f'<?xml version="" encoding="{encoding}"?>'.encode()
    for reader in (read_rte_xml, read_pairs):
        message = _error_of(reader, data, "rte.xml")
        assert message.startswith(f"rte.xml:1: the XML declaration names the encoding "
                                  f"'{encoding}', which cannot be read ({why}")
        assert "expected a UTF-8 RTE document" in message


def test_rte_xml_single_byte_encodings_are_still_read():
    data = ('<?xml version="1.0" encoding="ISO-8859-8"?>\n<c><pair id="1" entailment="YES">'
            '<t>\u05d0 b</t><h>c</h></pair></c>').encode("iso-8859-8")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rte.xml"
        path.write_bytes(data)
        assert read_rte_xml(path)[0].first == "\u05d0 b"


def test_doccls_by_date_split_orders_ids_of_any_length():
    # was ValueError from int() of a 4,400-digit id (Python's limit is 4,300 digits)
    from latentstruct.data.documents import Document, split_by_date

    ids = ["10", "9" * 4400, "9", "007", "x"]
    docs = [Document(i, "a", "text", k + 1) for k, i in enumerate(ids)]
    train, ev = split_by_date(docs, 0.4)
    # numeric order 007 < 9 < 10 < 99..9, then non-numeric ids: the last two are held out
    assert sorted(ids[k] for k in ev) == sorted(["9" * 4400, "x"])
    assert sorted(ids[k] for k in train) == sorted(["007", "9", "10"])
    lines = "".join(dumps({"id": i, "label": "a", "text": "t"}) + "\n" for i in ids)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "docs.jsonl"
        path.write_text(lines, encoding="utf-8")
        data = get_task_class("doccls")(split="train", eval_fraction=0.4).read(path)
    assert [d.id for d in data.records] == ["10", "9", "007"]


@pytest.mark.parametrize("name,data", [
    ("run.json", b"[" * 100_000),  # was RecursionError
    ("run.toml", b"x = " + b"[" * 10_000),  # was RecursionError
    ("run.toml", b"x = " + b"{a=" * 5_000),  # was RecursionError
])
def test_run_config_nested_too_deeply_is_a_config_error(name, data):
    if len(data) > 16_384:
        data = data[:16_384]
    message = _error_of(load_run_config, data, name, ConfigError)
    assert "nested too deeply" in message


@pytest.mark.slow
def test_run_config_over_the_size_limit_is_refused_before_parsing():
    # Python's TOML parser is quadratic in the depth of a dotted key: 100,000 levels
    # (200 KB) took more memory than the machine had
    from latentstruct.cli.runconfig import MAX_CONFIG_BYTES

    data = b"a" + b".a" * 100_000 + b" = 1\n"
    message = _error_of(load_run_config, data, "run.toml", ConfigError)
    assert f"over {MAX_CONFIG_BYTES:,} bytes" in message
    # at the limit the worst case is bounded (about a second, a few hundred MB)
    depth = (MAX_CONFIG_BYTES - 8) // 2
    message = _error_of(load_run_config, b"a" + b".a" * depth + b" = 1\n", "run.toml",
                        ConfigError)
    assert "unknown key(s) 'a'" in message


def test_load_model_encrypted_member_is_a_model_format_error(model_bytes):
    # was RuntimeError ("password required for extraction") from zipfile
    data = bytearray(model_bytes)
    k = data.find(b"PK\x01\x02")
    data[k + 8] |= 0x1  # the central directory's flags of the first member
    message = _error_of(load_model, bytes(data), "m.npz", ModelFormatError)
    assert "is encrypted; model files are not" in message


# --------------------------------------------------------------------------------------
# trained models: load_trained rebuilds the task and learner from the metadata
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained_model():
    """``(metadata, members)`` of a small trained chunk model: its metadata as a dict and
    every zip member's bytes."""
    from latentstruct.cli import main

    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "train.txt"
        data.write_text("\n".join(CHUNK) + "\n", encoding="utf-8")
        model = Path(folder) / "m.npz"
        assert main(["train", "chunk", "--train", str(data), "--model", str(model),
                     "--quiet", "--option", "max_iter=3"]) in (0, None)
        with zipfile.ZipFile(model) as zf:
            members = {info.filename: zf.read(info) for info in zf.infolist()}
    return json.loads(members["metadata.json"]), members


@pytest.mark.slow
def test_load_trained_parses_or_raises_model_format_error(trained_model):
    from latentstruct.learners.persistence import load_trained

    metadata, members = trained_model
    keys = sorted({k for path in _json_paths(metadata) for k in path if isinstance(k, str)})

    def build(meta) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, content in members.items():
                if name == "metadata.json":
                    content = dumps(meta).encode("utf-8", "surrogatepass")
                zf.writestr(name, content)
        return buf.getvalue()

    @fuzz
    @given(meta=json_mutated(st.just(metadata), keys, (1, 1, 1, 2, 3)))
    def run(meta):
        check_reader(load_trained, build(meta), "m.npz", allowed=(ModelFormatError,))

    run()


@pytest.mark.parametrize("key,value", [
    ("task_state", None),  # was AttributeError in the task's from_state
    ("learner_state", 3),  # was AttributeError in the learner's _restore
])
def test_load_trained_state_of_the_wrong_type_is_a_model_format_error(trained_model, key,
                                                                        value):
    from latentstruct.learners.persistence import load_trained

    metadata, members = trained_model
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in members.items():
            if name == "metadata.json":
                content = dumps({**metadata, key: value}).encode()
            zf.writestr(name, content)
    message = _error_of(load_trained, buf.getvalue(), "m.npz", ModelFormatError)
    assert message.startswith("m.npz: model file is inconsistent (AttributeError: ")
