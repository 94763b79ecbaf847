"""Hostile and malformed input to the readers (issue 13): NUL bytes, overlong lines and texts,
non-UD UPOS tags, huge numbers, DTD tricks in RTE XML, echo length; and the checks of
encoded targets before they reach a kernel (tasks.validation, hash_bits bounds).

Every refusal is asserted by error type, file:line and a message fragment."""

from __future__ import annotations

import json

import numpy as np
import pytest

from latentstruct.data import documents as documents_mod
from latentstruct.data.dependency import kbest as kbest_mod
from latentstruct.data.citations import read_cora
from latentstruct.data.dependency import read_dependencies
from latentstruct.data.documents import read_documents
from latentstruct.data.dependency.kbest import read_kbest
from latentstruct.data.sentences import read_sentences
from latentstruct.data.pairs import (
    MAX_SENTENCE_CHARS,
    check_sentence_length,
    read_glue_rte,
    read_msrp,
    read_pairs,
    read_rte_xml,
)
from latentstruct.data.readers import (
    MAX_LINE_CHARS,
    UPOS_TAGS,
    excerpt,
    parse_json_line,
    read_conll2000,
    read_conllu,
    read_lines,
)
from latentstruct.data.translit import MAX_WORD_CHARS, read_translit_tsv
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.validation import (
    check_binary_labels,
    check_binary_training_labels,
    check_heads,
    check_label_ids,
)

NUL = "line contains a NUL byte; the file is binary or corrupt"
MSRP_HEAD = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
GLUE_HEAD = "index\tsentence1\tsentence2\tlabel\n"
KBEST_HEAD = json.dumps({"format": "latentstruct-kbest", "version": 1, "parser_id": "p", "k": 2,
                         "single_root": True, "labelled": False, "pos": "gold", "folds": 1,
                         "source": "x", "n_sentences": 1}) + "\n"
CONLLU_ROW = "1\tDogs\tdog\tNOUN\tNNS\t_\t0\troot\t_\t_\n"


def error_of(fn, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value


def write(tmp_path, name, content) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def assert_at(err: InputError, path: str, line: int, *fragments: str) -> None:
    assert err.path == path and err.line == line, str(err)
    assert str(err).startswith(f"{path}:{line}: ")
    for fragment in fragments:
        assert fragment in str(err)


# ---------------------------------------------------------------------------------------
# every text reader: (reader, file name, a good first line, a line template with {x})
# ---------------------------------------------------------------------------------------
READERS = {
    "conll2000": (read_conll2000, "a.txt", "He PRP B-NP\n", "{x} NN I-NP\n"),
    "conllu": (read_conllu, "a.conllu", CONLLU_ROW, "2\t{x}\t_\tNOUN\t_\t_\t1\tobj\t_\t_\n"),
    "dp": (read_dependencies, "a.dp", "Dogs\tNNS\t0\n", "{x}\tNN\t1\n"),
    "cora": (read_cora, "cora.txt", "<NEWREFERENCE>\n", "<author> {x} </author>\n"),
    "translit": (read_translit_tsv, "t.tsv", "italy\tא י\t3\n", "{x}\tא\t1\n"),
    "msrp": (read_msrp, "m.tsv", MSRP_HEAD, "1\t1\t2\t{x}\tb\n"),
    "glue": (read_glue_rte, "g.tsv", GLUE_HEAD, "0\t{x}\tb\tentailment\n"),
    "pairs": (read_pairs, "p.tsv", GLUE_HEAD, "0\t{x}\tb\tentailment\n"),
    "documents": (read_documents, "d.jsonl", '{"label": "a", "text": "t"}\n',
                  '{{"label": "a", "text": "{x}"}}\n'),
    "kbest": (read_kbest, "k.kbest", KBEST_HEAD, '{{"id": "{x}"}}\n'),
    "sentences": (read_sentences, "s.txt", "Dogs bark .\n", "{x} sleep .\n"),
}


@pytest.mark.parametrize("kind", sorted(READERS))
def test_nul_byte_is_refused_with_its_line(tmp_path, kind):
    reader, name, first, template = READERS[kind]
    path = write(tmp_path, name, first + template.format(x="ca\x00t"))
    err = error_of(reader, path)
    assert_at(err, path, 2, NUL, "first NUL at byte")


def test_nul_byte_in_rte_xml_names_its_line(tmp_path):
    text = ('<?xml version="1.0"?>\n<c>\n<pair id="1" entailment="YES">\n'
            '<t>a \x00 b</t><h>b</h></pair></c>\n')
    path = write(tmp_path, "r.xml", text)
    assert_at(error_of(read_rte_xml, path), path, 4, NUL)


def test_utf16_file_gets_a_re_encoding_hint(tmp_path):
    path = write(tmp_path, "u.txt", "He PRP B-NP\n".encode("utf-16"))
    err = error_of(read_conll2000, path)
    assert_at(err, path, 1, NUL, "UTF-16", "iconv")


@pytest.mark.parametrize("kind", sorted(set(READERS) - {"documents", "kbest"}))
def test_line_over_the_limit_is_refused_with_its_length(tmp_path, kind):
    reader, name, first, template = READERS[kind]
    long_line = template.format(x="w" * MAX_LINE_CHARS)
    path = write(tmp_path, name, first + long_line)
    err = error_of(reader, path)
    n = len(long_line) - 1  # without "\n"
    assert_at(err, path, 2, f"line is {n:,} characters long",
              f"limit of {MAX_LINE_CHARS:,} characters", "refused, not split")


@pytest.mark.parametrize("kind, module, constant", [
    ("documents", documents_mod, "MAX_DOCUMENT_LINE_CHARS"),
    ("kbest", kbest_mod, "MAX_LINE_CHARS"),
])
def test_json_line_readers_have_their_own_limit(tmp_path, monkeypatch, kind, module, constant):
    assert getattr(module, constant) > MAX_LINE_CHARS  # real documents are longer than tokens
    monkeypatch.setattr(module, constant, 200)  # the k-best header takes 172
    reader, name, first, template = READERS[kind]
    path = write(tmp_path, name, first + template.format(x="w" * 200))
    err = error_of(reader, path)
    assert_at(err, path, 2, "characters long", "limit of 200 characters")


def test_read_lines_counts_an_overlong_line_without_holding_it(tmp_path):
    # far beyond the 4 * max_chars + 2 bytes read at once: counted in chunks, exactly
    text = "ok\n" + "é" * 3_000_000 + "\r\nafter\n"
    path = write(tmp_path, "big.txt", text)
    err = error_of(lambda p: list(read_lines(p, max_chars=1000)), path)
    assert_at(err, path, 2, "line is 3,000,000 characters long", "limit of 1,000 characters")


def test_read_lines_accepts_a_line_at_the_limit_in_any_script(tmp_path):
    line = "א" * 50  # 2 bytes per character
    path = write(tmp_path, "ok.txt", f"{line}\r\n{'x' * 50}")
    assert list(read_lines(path, max_chars=50)) == [(1, line), (2, "x" * 50)]
    path = write(tmp_path, "no.txt", "x" * 51)
    assert_at(error_of(lambda p: list(read_lines(p, max_chars=50)), path), path, 1,
              "line is 51 characters long")


# ---------------------------------------------------------------------------------------
# echoes are capped
# ---------------------------------------------------------------------------------------
def test_excerpt_shortens_long_text_and_says_how_much_is_left():
    assert excerpt("abc") == "'abc'"
    assert excerpt("x" * 130, limit=4) == "'xxxx'… (126 more characters)"
    assert excerpt(list(range(100)), limit=10) == "[0, 1, 2, … (380 more characters)"
    assert excerpt(None) == "None"


@pytest.mark.parametrize("kind, content, line, fragment", [
    ("conll2000", "He PRP B-NP\n{x} NN\n", 2, "expected 3 columns"),
    ("conll2000", "He PRP {x}\n", 1, "invalid chunk tag"),
    ("dp", "{x}\tNN\n", 1, "expected 3 tab-separated columns"),
    ("dp", "a\tNN\t{x}\n", 1, "is not a non-negative integer"),
    ("conllu", "1\t_\t_\tNOUN\t_\t_\t{x}\t_\t_\t_\n", 1, "HEAD"),
    ("conllu", "1\t_\t_\t{x}\t_\t_\t0\t_\t_\t_\n", 1, "UPOS (column 4)"),
    ("cora", "<NEWREFERENCE>\n{x} <a> b </a>\n", 2, "lies outside any field"),
    ("translit", "a\tb\t{x}\n", 1, "count in column 3"),
    ("msrp", MSRP_HEAD + "{x}\t1\t2\ta\tb\n", 2, "label (column 'Quality')"),
    ("glue", "{x}\n", 1, "not the GLUE RTE header"),
])
def test_errors_quote_at_most_an_excerpt_of_the_input(tmp_path, kind, content, line, fragment):
    reader, name, _, _ = READERS[kind]
    path = write(tmp_path, name, content.format(x="z" * 90_000))
    err = error_of(reader, path)
    assert_at(err, path, line, fragment, "more characters)")
    assert len(str(err)) < 800


# ---------------------------------------------------------------------------------------
# CoNLL-U
# ---------------------------------------------------------------------------------------
def conllu_with_upos(tag: str) -> str:
    return f"1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\t{tag}\tVBP\t_\t0\troot\t_\t_\n"


def test_conllu_refuses_a_upos_that_is_not_a_ud_tag(tmp_path):
    path = write(tmp_path, "bad.conllu", conllu_with_upos("NOTATAG"))
    err = error_of(read_conllu, path)
    assert_at(err, path, 2, "UPOS (column 4) of word 2 is 'NOTATAG', not a Universal POS tag",
              "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X",
              "XPOS (column 5)")


def test_conllu_refuses_an_empty_upos_and_a_bad_one_on_an_empty_node(tmp_path):
    path = write(tmp_path, "empty.conllu", conllu_with_upos(""))
    assert_at(error_of(read_conllu, path), path, 2, "UPOS (column 4) of word 2 is empty")
    text = CONLLU_ROW + "1.1\tgone\t_\tVBX\t_\t_\t_\t_\t0:root\t_\n"
    path = write(tmp_path, "node.conllu", text)
    assert_at(error_of(read_conllu, path), path, 2, "of empty node 1.1 is 'VBX'")


@pytest.mark.parametrize("tag", sorted(UPOS_TAGS | {"CONJ", "_"}))
def test_conllu_accepts_every_ud_tag_ud1_conj_and_underscore(tmp_path, tag):
    path = write(tmp_path, "ok.conllu", conllu_with_upos(tag))
    assert read_conllu(path)[0].upos == ("NOUN", tag)


def test_xpos_stays_free(tmp_path):
    text = "1\tDogs\tdog\tNOUN\tany-thing:goes\t_\t0\troot\t_\t_\n"
    assert read_conllu(write(tmp_path, "x.conllu", text))[0].xpos == ("any-thing:goes",)


@pytest.mark.parametrize("column, value, fragment", [
    (0, "1" * 5000, "out of order"),
    (6, "1" * 5000, "more than 9 digits"),
    (0, "1-" + "2" * 5000, "bad ID"),
])
def test_conllu_numbers_of_thousands_of_digits_are_input_errors(tmp_path, column, value,
                                                                fragment):
    fields = CONLLU_ROW.rstrip("\n").split("\t")
    fields[column] = value
    path = write(tmp_path, "n.conllu", "\t".join(fields) + "\n")
    assert_at(error_of(read_conllu, path), path, 1, fragment)


def test_dp_head_of_thousands_of_digits_is_an_input_error(tmp_path):
    path = write(tmp_path, "n.dp", "Dogs\tNNS\t" + "1" * 5000 + "\n")
    assert_at(error_of(read_dependencies, path), path, 1, "at most 9 digits")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ud_english_ewt", "ud_basque_bdt"])
def test_the_shared_treebanks_still_read(require_data, name):
    folder = require_data(name)
    files = sorted(folder.rglob("*.conllu"))
    assert files
    for path in files:
        sentences = read_conllu(path)
        assert len(sentences) > 1000
        assert {t for s in sentences for t in s.upos} <= UPOS_TAGS | {"CONJ", "_"}


# ---------------------------------------------------------------------------------------
# JSON lines
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, fragment", [
    ('{"a": ' + "1" * 5000 + "}", "Exceeds the limit (4300 digits)"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a": ', "Expecting value at column 7"),
])
def test_parse_json_line_turns_every_failure_into_an_input_error(text, fragment):
    err = error_of(parse_json_line, text, "f.jsonl", 3, "expected one object")
    assert_at(err, "f.jsonl", 3, "not valid JSON (", fragment, "expected one object")


def test_documents_and_kbest_refuse_unparsable_numbers(tmp_path):
    path = write(tmp_path, "d.jsonl", '{"label": "a", "text": "t", "n": ' + "9" * 5000 + "}\n")
    assert_at(error_of(read_documents, path), path, 1, "not valid JSON", "digits")
    path = write(tmp_path, "k.kbest", KBEST_HEAD + "[" * 50_000 + "]" * 50_000 + "\n")
    assert_at(error_of(read_kbest, path), path, 2, "nested too deeply")


# ---------------------------------------------------------------------------------------
# sentence pairs
# ---------------------------------------------------------------------------------------
RTE_BODY = '<c>\n<pair id="1">\n<t>A dog barks.</t><h>A dog makes noise.</h></pair>\n</c>\n'


def test_rte_xml_refuses_attribute_defaults_that_would_label_pairs(tmp_path):
    text = ('<?xml version="1.0"?>\n<!DOCTYPE c [\n<!ATTLIST pair entailment CDATA "YES">\n]>\n'
            + RTE_BODY)
    path = write(tmp_path, "attlist.xml", text)
    assert_at(error_of(read_rte_xml, path), path, 3, "declares default attributes",
              "<!ATTLIST 'pair' 'entailment'", "label pairs the file leaves unlabelled")


def test_rte_xml_refuses_parameter_entities_and_undeclared_entities(tmp_path):
    text = '<?xml version="1.0"?>\n<!DOCTYPE c [\n<!ENTITY % p "x">\n]>\n<c/>\n'
    path = write(tmp_path, "pe.xml", text)
    assert_at(error_of(read_rte_xml, path), path, 3, "declares the entity 'p'")
    text = ('<?xml version="1.0"?>\n<!DOCTYPE c SYSTEM "rte.dtd">\n<c>\n'
            '<pair id="1" entailment="YES"><t>a &ext; b</t><h>b</h></pair></c>\n')
    path = write(tmp_path, "skipped.xml", text)
    assert_at(error_of(read_rte_xml, path), path, 4, "undeclared entity 'ext'")


def test_rte_xml_still_reads_an_external_doctype(tmp_path):
    text = ('<?xml version="1.0"?>\n<!DOCTYPE c SYSTEM "rte.dtd">\n<c>\n'
            '<pair id="7" entailment="NO"><t>a &amp; b</t><h>b</h></pair></c>\n')
    [pair] = read_rte_xml(write(tmp_path, "ok.xml", text))
    assert (pair.id, pair.first, pair.second, pair.label, pair.line) == ("7", "a & b", "b", 0, 4)


def test_rte_xml_refuses_a_text_over_the_sentence_limit(tmp_path):
    words = "word " * (MAX_SENTENCE_CHARS // 5 + 1)
    text = f'<c>\n<pair id="1" entailment="YES">\n<t>{words}</t><h>b</h></pair></c>\n'
    path = write(tmp_path, "long.xml", text)
    n = len(words.strip())
    assert_at(error_of(read_rte_xml, path), path, 3, f"the <t> (text) of the pair that starts "
              f"on line 2 is {n:,} characters long", "refused, not split")
    # far over: refused while reading, before the text is complete
    text = f'<c>\n<pair id="1" entailment="YES">\n<t>{"w" * 30 * MAX_SENTENCE_CHARS}</t></pair></c>'
    path = write(tmp_path, "huge.xml", text)
    assert_at(error_of(read_rte_xml, path), path, 3, "at least", "characters long")


@pytest.mark.parametrize("reader, header, row", [
    (read_msrp, MSRP_HEAD, "1\t1\t2\t{x}\tb\n"),
    (read_glue_rte, GLUE_HEAD, "0\ta\t{x}\tnot_entailment\n"),
])
def test_tsv_pairs_refuse_a_sentence_over_the_limit(tmp_path, reader, header, row):
    long = "w" * (MAX_SENTENCE_CHARS + 1)
    path = write(tmp_path, "long.tsv", header + row.format(x=long))
    assert_at(error_of(reader, path), path, 2, f"{MAX_SENTENCE_CHARS + 1:,} characters long",
              f"limit of {MAX_SENTENCE_CHARS:,} characters per sentence")


def test_check_sentence_length_and_explain_inputs():
    check_sentence_length("w" * MAX_SENTENCE_CHARS, "text")
    err = error_of(check_sentence_length, "w" * (MAX_SENTENCE_CHARS + 1), "text", "f", 2)
    assert_at(err, "f", 2, "text is 10,001 characters long")
    from latentstruct.tasks import ParaphraseTask, RteTask

    for task in (ParaphraseTask(), RteTask()):  # checked before any parsing
        err = error_of(task.encode_pair, "w" * 2_000_000, "b")
        assert "the first sentence is 2,000,000 characters long" in str(err)


def test_the_shared_pair_corpora_still_read(require_data):
    rte = require_data("rte")
    counts = {p.name: len(read_pairs(p)) for p in sorted(rte.iterdir()) if p.suffix != ".md"}
    assert counts == {"glue_rte_dev.tsv": 277, "glue_rte_train.tsv": 2490, "rte1_dev.xml": 567,
                      "rte2_dev.xml": 400, "rte3_dev.xml": 800}
    assert len(read_msrp(require_data("msrp", "train.tsv"))) == 4076


# ---------------------------------------------------------------------------------------
# transliteration words
# ---------------------------------------------------------------------------------------
def test_translit_refuses_a_word_over_the_limit(tmp_path):
    path = write(tmp_path, "t.tsv", "italy\tא י\t3\n" + "a" * (MAX_WORD_CHARS + 1) + "\tא\t1\n")
    assert_at(error_of(read_translit_tsv, path), path, 2, "the English word in column 1 is 101 "
              "characters long", f"limit of {MAX_WORD_CHARS} characters per word")
    from latentstruct.tasks import TransliterationTask

    err = error_of(TransliterationTask().encode_pair, "italy", "א" * 5000)
    assert "the target word is 5,000 characters long" in str(err)


# ---------------------------------------------------------------------------------------
# targets before kernels
# ---------------------------------------------------------------------------------------
def test_check_label_ids():
    assert check_label_ids([0, 2, -1], 3).tolist() == [0, 2, -1]
    assert check_label_ids(np.array([1.0, 2.0]), 3).dtype == np.int64
    with pytest.raises(InputError, match="label id 3 at position 1 is outside 0..2"):
        check_label_ids([0, 3], 3)
    with pytest.raises(InputError, match="label id -2 at position 0"):
        check_label_ids([-2], 3)
    with pytest.raises(InputError, match=r"position 0 holds -1 \(a token whose gold label is "
                                         r"left free\), which this use does not take"):
        check_label_ids([-1], 3, allow_unseen=False)
    with pytest.raises(InputError, match="must be integer label ids, got float64"):
        check_label_ids([0.5], 3)
    with pytest.raises(InputError, match="head 4 of word 2 is outside 0..3"):
        check_heads([0, 4, 1], 3)


def test_sequence_task_checks_label_ids_before_its_kernels(tmp_path):
    from latentstruct.tasks import ChunkTask

    path = write(tmp_path, "c.txt", "He PRP B-NP\nruns VBZ B-VP\n. . O\n")
    task = ChunkTask()
    data = task.read(path)
    task.fit(data)
    X = task.featurize(data)
    y = task.encode_targets(data.targets)[0]
    w = np.zeros(task.n_features)
    bad = y.copy()
    bad[1] = 99
    with pytest.raises(InputError, match="label id 99 at position 1 is outside 0..2"):
        task.structure_.joint_feature(X, bad)
    with pytest.raises(InputError, match="label id 99"):
        task.structure_.argmax(X, w, bad)
    with pytest.raises(InputError, match="one label id per token"):
        task.structure_.joint_feature(X, y[:2])
    # encode_targets refuses an unseen gold label; a -1 put there on purpose (a token left
    # free) stays valid for the kernels: it is always wrong
    with pytest.raises(InputError, match="'B-ZZ' at y\\[0\\]\\[1\\]"):
        task.encode_targets([["B-NP", "B-ZZ", "O"]])
    assert task.structure_.argmax(X, w, np.array([0, -1, 2])).score == 3.0


def test_doccls_and_dependency_check_ids_too(tmp_path):
    from latentstruct.tasks import DependencyTask, DocumentClassificationTask

    path = write(tmp_path, "d.jsonl", '{"label": "a", "text": "red apple"}\n'
                                      '{"label": "b", "text": "blue sky"}\n')
    task = DocumentClassificationTask()
    data = task.read(path)
    task.fit(data)
    X = task.featurize(data)
    with pytest.raises(InputError, match="label id 5 at position 0 is outside 0..1"):
        task.structure_object().joint_feature(X[0], np.array([5]))
    with pytest.raises(InputError, match="label id 2"):
        task.structure_object().argmax_batch(X, np.zeros(task.n_features), [np.array([0]), np.array([2])])

    path = write(tmp_path, "t.conllu", CONLLU_ROW + "\n" + CONLLU_ROW)
    dep = DependencyTask(hash_bits=8, label_hash_bits=4)
    data = dep.read(path)
    dep.fit(data)
    X = dep.featurize(data)
    y = dep.encode_targets(data.targets)[0]
    bad = y.copy()
    bad[0, 0] = 7
    with pytest.raises(InputError, match="head 7 of word 1 is outside 0..1"):
        dep.structure_.joint_feature(X[0], bad)
    bad = y.copy()
    bad[1, 0] = 9
    with pytest.raises(InputError, match="labels: label id 9"):
        dep.structure_.argmax(X[0], np.zeros(dep.n_features), bad)


def test_binary_labels():
    assert check_binary_labels([1, -1]).tolist() == [1, -1]
    with pytest.raises(InputError, match="labels -1 or \\+1, got shape \\(2,\\) with values"):
        check_binary_labels([1, 0])


@pytest.mark.parametrize("targets, fragment", [
    ([1, 1, 1], "training data has only positive examples (3); LCLR and the other latent"),
    ([-1, -1], "training data has only negative examples (2)"),
    ([], "training data holds no examples"),
])
def test_one_class_training_data_is_refused(targets, fragment):
    err = error_of(check_binary_training_labels, Dataset([None] * len(targets), targets, "f"))
    assert err.path == "f" and fragment in str(err)


def test_binary_tasks_refuse_one_class_training_files(tmp_path):
    from latentstruct.tasks import RteTask, TransliterationTask

    path = write(tmp_path, "t.tsv", "italy\tא י ט ל י ה\t3\nrome\tר ו מ א\t2\n")
    task = TransliterationTask(neg_ratio=0.0)
    err = error_of(task.training_sample, task.read(path))
    assert err.path == path
    assert "only positive examples (2)" in str(err) and "raise neg_ratio" in str(err)
    task = TransliterationTask(neg_ratio=1.0)
    assert len(task.training_sample(task.read(path))) == 4  # 2 positives, 2 negatives
    task = TransliterationTask()  # neg_ratio=0.1 of 2 * 1 cross pairs rounds to none
    assert "neg_ratio=0.1 with 2 positives draws none" in str(
        error_of(task.training_sample, task.read(path)))

    path = write(tmp_path, "r.tsv", GLUE_HEAD + "0\ta b\tc\tentailment\n1\td\te\tentailment\n")
    task = RteTask()
    err = error_of(task.training_sample, task.read(path))
    assert "only positive examples (2)" in str(err)
    assert "Add negative examples to the training file" in str(err)


@pytest.mark.parametrize("task_name", ["chunk", "pos", "citations", "sequence"])
def test_sequence_tasks_bound_hash_bits(task_name):
    from latentstruct.tasks import get_task_class

    cls = get_task_class(task_name)
    with pytest.raises(ConfigError, match=r"'hash_bits' parameter .* must be an int in the range "
                                          r"\[1, 26\]\. Got 32 instead: .*\(32 GiB per label at "
                                          r"hash_bits=32\); 26 already takes 512 MiB per label"):
        cls(hash_bits=32).check_params()
    with pytest.raises(ConfigError, match=r"in the range \[1, 26\]\. Got 0 instead"):
        cls(hash_bits=0).check_params()
    cls(hash_bits=26).check_params()
