"""Dependency trees: CoNLL-U / .dp reading with file:line errors, the document split, the
CoNLL-U writer and the punctuation convention."""

import numpy as np
import pytest

from latentstruct.data.dependency import (
    DependencySentence,
    check_tree,
    dp_documents,
    punctuation_mask,
    read_dependencies,
    write_dependencies,
)
from latentstruct.exceptions import ConfigError, InputError


def _row(i, form, upos, head, deprel, xpos="_"):
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t{xpos}\t_\t{head}\t{deprel}\t_\t_"


CONLLU = "\n".join([
    "# sent_id = a",
    "# text = I'm home.",
    "1-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_",
    _row(1, "I", "PRON", 3, "nsubj", "PRP"),
    _row(2, "'m", "AUX", 3, "cop", "VBP"),
    _row(3, "home", "ADV", 0, "root", "RB"),
    "3.1\tgone\tgo\tVERB\t_\t_\t_\t_\t3:conj\t_",
    _row(4, ".", "PUNCT", 3, "punct", "."),
    "",
    "# sent_id = b",
    _row(1, "Go", "VERB", 0, "root", "VB"),
    _row(2, "!", "PUNCT", 1, "punct", "."),
    "",
]) + "\n"

DP = "Pierre\tNNP\t2\nVinken\tNNP\t3\nsleeps\tVBZ\t0\n.\t.\t3\n\nHi\tUH\t0\n"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- reading -----------------------------------------------------------------------------
def test_conllu_is_read_with_ranges_and_empty_nodes_skipped(tmp_path):
    path = _write(tmp_path, "t.conllu", CONLLU)
    a, b = read_dependencies(path)
    assert a.words == ("I", "'m", "home", ".")
    assert a.heads == (3, 3, 0, 3) and a.deprels == ("nsubj", "cop", "root", "punct")
    assert a.upos == ("PRON", "AUX", "ADV", "PUNCT") and a.xpos == ("PRP", "VBP", "RB", ".")
    assert a.lemmas[0] == "i" and a.line == 1 and a.path == str(path)
    assert a.conllu is not None and a.file_format == "conllu" and a.labelled
    assert b.line == 10 and b.heads == (0, 1) and len(b) == 2


def test_dp_is_read_with_pos_in_xpos(tmp_path):
    path = _write(tmp_path, "wsj_0001.dp", DP)
    a, b = read_dependencies(path)
    assert a.words == ("Pierre", "Vinken", "sleeps", ".") and a.heads == (2, 3, 0, 3)
    assert a.xpos == ("NNP", "NNP", "VBZ", ".") and a.upos == ("_",) * 4
    assert a.deprels == ("_",) * 4 and not a.labelled and a.conllu is None
    assert a.file_format == "dp" and a.pos == a.xpos and (a.line, b.line) == (1, 6)


def test_a_directory_is_read_in_name_order_and_split_by_document(tmp_path):
    d = tmp_path / "dep"
    d.mkdir()
    _write(d, "wsj_0120.dp", "Late\tJJ\t0\n")
    _write(d, "wsj_0002.dp", "Early\tJJ\t0\n")
    _write(d, "notes.txt", "not read\n")
    assert [s.words for s in read_dependencies(d)] == [("Early",), ("Late",)]
    assert [s.words for s in read_dependencies(d, split="train")] == [("Early",)]
    assert [s.words for s in read_dependencies(d, split="heldout")] == [("Late",)]
    assert [p.name for p in dp_documents(d, "all")] == ["wsj_0002.dp", "wsj_0120.dp"]
    with pytest.raises(ConfigError, match="unknown split"):
        read_dependencies(d, split="dev")
    with pytest.raises(ConfigError, match="not a directory"):
        read_dependencies(d / "wsj_0002.dp", split="train")


def test_an_error_in_a_directory_names_the_file_inside_it(tmp_path):
    d = tmp_path / "dep"
    d.mkdir()
    _write(d, "wsj_0001.dp", "Fine\tJJ\t0\n")
    bad = _write(d, "wsj_0002.dp", "A\tDT\t0\n\nB\tNN\tx\n")
    with pytest.raises(InputError) as err:
        read_dependencies(d)
    assert f"{bad}:3:" in str(err.value) and "not a non-negative integer" in str(err.value)


def test_two_roots_are_allowed_in_dp_files_by_default_and_refused_on_request(tmp_path):
    path = _write(tmp_path, "f.dp", "A\tDT\t0\nB\tNN\t0\n")
    assert read_dependencies(path)[0].heads == (0, 0)
    with pytest.raises(InputError, match=rf"{path}:2: word 2 \('B'\) is a second root"):
        read_dependencies(path, single_root=True)


BAD_CONLLU = {
    "cycle": ([_row(1, "a", "X", 2, "dep"), _row(2, "b", "X", 1, "dep"),
               _row(3, "c", "X", 0, "root")], 2,
              r"cycle .*1 'a' -> 2 'b' -> 1 'a'"),
    "two roots": ([_row(1, "a", "X", 0, "root"), _row(2, "b", "X", 1, "dep"),
                   _row(3, "c", "X", 0, "root")], 4, "second root"),
    "missing head": ([_row(1, "a", "X", 0, "root"), _row(2, "b", "X", "_", "dep")], 3,
                     r"HEAD of word 2 \('b'\) is missing"),
    "out of range": ([_row(1, "a", "X", 0, "root"), _row(2, "b", "X", 7, "dep")], 3,
                     "points past the last word"),
    "no root": ([_row(1, "a", "X", 2, "dep"), _row(2, "b", "X", 1, "dep")], 2, "no root"),
    "self loop": ([_row(1, "a", "X", 0, "root"), _row(2, "b", "X", 2, "dep")], 3,
                  r"cycle .*2 'b' -> 2 'b'"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONLLU))
def test_bad_conllu_trees_name_the_row(tmp_path, case):
    rows, line, pattern = BAD_CONLLU[case]
    path = _write(tmp_path, "bad.conllu", "# sent_id = x\n" + "\n".join(rows) + "\n\n")
    with pytest.raises(InputError, match=pattern) as err:
        read_dependencies(path)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_two_roots_in_conllu_are_accepted_when_single_root_is_off(tmp_path):
    rows = BAD_CONLLU["two roots"][0]
    path = _write(tmp_path, "two.conllu", "\n".join(rows) + "\n\n")
    assert read_dependencies(path, single_root=False)[0].heads == (0, 1, 0)


BAD_DP = {
    "two columns": ("A\tDT\t2\nB\tNN\n", 2, "expected 3 tab-separated columns"),
    "four columns": ("A\tDT\t0\tx\n", 1, "expected 3 tab-separated columns"),
    "non-integer head": ("A\tDT\t0\nB\tNN\t-1\n", 2, "not a non-negative integer"),
    "head out of range": ("A\tDT\t0\nB\tNN\t3\n", 2, "out of range"),
    "cycle": ("A\tDT\t0\nB\tNN\t3\nC\tNN\t2\n", 2, "cycle"),
    "no root": ("A\tDT\t2\nB\tNN\t1\n", 1, "no root"),
    "empty word": ("\tDT\t0\n", 1, "empty word"),
}


@pytest.mark.parametrize("case", sorted(BAD_DP))
def test_bad_dp_rows_name_the_line(tmp_path, case):
    text, line, pattern = BAD_DP[case]
    path = _write(tmp_path, "bad.dp", "Ok\tUH\t0\n\n" + text)
    with pytest.raises(InputError, match=pattern) as err:
        read_dependencies(path)
    assert str(err.value).startswith(f"{path}:{line + 2}: ")


def test_check_tree_in_memory_has_no_location():
    with pytest.raises(InputError, match="cycle") as err:
        check_tree([0, 3, 2], ["a", "b", "c"], single_root=False)
    assert err.value.path is None and err.value.line is None
    check_tree([], [], single_root=True)


def test_a_sentence_needs_equal_columns():
    with pytest.raises(InputError, match="2 words but 1 heads"):
        DependencySentence(("a", "b"), ("_", "_"), ("X", "X"), ("_", "_"), (0,), ("_", "_"))


# --- writing -------------------------------------------------------------------------------
def test_writing_conllu_replaces_only_head_and_deprel(tmp_path):
    src = _write(tmp_path, "t.conllu", CONLLU)
    sents = read_dependencies(src)
    out = tmp_path / "out.conllu"
    write_dependencies(out, sents, [[3, 1, 0, 3], [0, 1]],
                       [["nsubj", "aux", "root", "punct"], ["root", "discourse"]])
    lines = out.read_text(encoding="utf-8").splitlines()
    orig = CONLLU.splitlines()
    assert lines[:3] == orig[:3] and lines[6] == orig[6]  # comments, range, empty node
    assert lines[4] == _row(2, "'m", "AUX", 1, "aux", "VBP")
    back = read_dependencies(out)
    assert back[0].heads == (3, 1, 0, 3) and back[1].deprels == ("root", "discourse")
    assert back[0].upos == sents[0].upos and back[0].xpos == sents[0].xpos
    write_dependencies(tmp_path / "same.conllu", sents, [s.heads for s in sents],
                       [s.deprels for s in sents])
    assert (tmp_path / "same.conllu").read_text(encoding="utf-8") == CONLLU


def test_writing_dp_sentences_builds_conllu_rows(tmp_path):
    sents = read_dependencies(_write(tmp_path, "x.dp", DP))
    out = tmp_path / "out.conllu"
    write_dependencies(out, sents, [[2, 3, 0, 3], [0]])
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "1\tPierre\t_\t_\tNNP\t_\t2\t_\t_\t_"
    back = read_dependencies(out)
    assert back[0].heads == (2, 3, 0, 3) and back[0].xpos == sents[0].xpos
    assert back[1].words == ("Hi",)


def test_the_writer_checks_one_prediction_per_sentence(tmp_path):
    sents = read_dependencies(_write(tmp_path, "x.dp", DP))
    out = tmp_path / "out.conllu"
    with pytest.raises(InputError, match="2 sentences but 1 predicted head sequences"):
        write_dependencies(out, sents, [[2, 3, 0, 3]])
    with pytest.raises(InputError, match="4 words but 3 predicted heads"):
        write_dependencies(out, sents, [[2, 3, 0], [0]])
    with pytest.raises(InputError, match="outside 0..1"):
        write_dependencies(out, sents, [[2, 3, 0, 3], [5]])
    with pytest.raises(InputError, match="DEPREL 'a b'"):
        write_dependencies(out, sents, [[2, 3, 0, 3], [0]], [["x"] * 4, ["a b"]])
    assert not out.exists()


# --- punctuation ---------------------------------------------------------------------------
def test_punctuation_mask_follows_each_format(tmp_path):
    ud = read_dependencies(_write(tmp_path, "t.conllu", CONLLU))[0]
    assert punctuation_mask(ud).tolist() == [True, True, True, False]
    ptb = DependencySentence(("``", "a", "''", ",", ".", ":", "-LRB-", "$", "#"), ("_",) * 9,
                             ("_",) * 9, ("``", "DT", "''", ",", ".", ":", "-LRB-", "$", "#"),
                             (0,) + (1,) * 8, ("_",) * 9, file_format="dp")
    mask = punctuation_mask(ptb)
    assert mask.dtype == np.bool_
    assert mask.tolist() == [False, True, False, False, False, False, True, True, True]
