from latentstruct.testing import require_data

import pytest

from latentstruct.data.readers import (
    ChunkSentence,
    ConlluSentence,
    read_conll2000,
    read_conllu,
    read_lines,
    write_conll2000,
    write_conllu,
)
from latentstruct.exceptions import InputError




def write(tmp_path, text, name="f.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def error_of(reader, path):
    with pytest.raises(InputError) as info:
        reader(path)
    return info.value


# ---------------------------------------------------------------------------- read_lines
def test_read_lines_numbers_strips_endings_and_bom(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbfa b\r\n\nc" + "\u2028".encode() + b"d\n")
    assert list(read_lines(path)) == [(1, "a b"), (2, ""), (3, "c\u2028d")]


def test_read_lines_bad_utf8_reports_line(tmp_path):
    path = write(tmp_path, b"ok\nfine\nbad \xff byte\nlater\n")
    err = error_of(lambda p: list(read_lines(p)), path)
    assert err.line == 3 and err.path == str(path)
    assert f"{path}:3:" in str(err)
    assert "0xff" in str(err) and "UTF-8" in str(err)


def test_missing_file_is_input_error(tmp_path):
    for reader in (read_conll2000, read_conllu, lambda p: list(read_lines(p))):
        err = error_of(reader, tmp_path / "nope.txt")
        assert "no such file: " in str(err) and "nope.txt" in str(err)


# ------------------------------------------------------------------------- CoNLL-2000
CHUNK_TEXT = (
    "He PRP B-NP\n"
    "reckons VBZ B-VP\n"
    "\n"
    "\n"
    "The  DT\tB-NP\n"  # runs of whitespace and tabs are tolerated
    "deficit NN I-NP\n"
    ". . O"  # no trailing newline, no blank line
)


def test_read_conll2000_happy_path(tmp_path):
    sents = read_conll2000(write(tmp_path, CHUNK_TEXT))
    assert sents == [
        ChunkSentence(("He", "reckons"), ("PRP", "VBZ"), ("B-NP", "B-VP"), 1),
        ChunkSentence(("The", "deficit", "."), ("DT", "NN", "."), ("B-NP", "I-NP", "O"), 5),
    ]
    assert len(sents[1]) == 3


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("a DT B-NP\nb NN\n", 2, ["expected 3 columns", "got 2 columns"]),
        ("a DT B-NP\n\nb NN I-NP extra\n", 3, ["got 4 columns"]),
        ("a DT B-NP\nb NN E-NP\n", 2, ["invalid chunk tag 'E-NP'", "'O'", "B-TYPE"]),
        ("a DT B-NP\nb NN NP\n", 2, ["invalid chunk tag 'NP'"]),
        ("a DT B-\n", 1, ["invalid chunk tag 'B-'"]),
    ],
)
def test_read_conll2000_errors_have_line(tmp_path, text, line, fragments):
    path = write(tmp_path, text)
    err = error_of(read_conll2000, path)
    assert err.line == line
    assert str(err).startswith(f"{path}:{line}: ")
    for fragment in fragments:
        assert fragment in str(err)


def test_read_conll2000_empty_and_blank_files(tmp_path):
    for text in ["", "\n\n   \n"]:
        path = write(tmp_path, text)
        err = error_of(read_conll2000, path)
        assert "contains no sentences" in str(err) and err.path == str(path)


def test_read_conll2000_non_utf8_line_3(tmp_path):
    path = write(tmp_path, b"a DT B-NP\n\ncaf\xe9 NN B-NP\n")
    err = error_of(read_conll2000, path)
    assert f"{path}:3:" in str(err)


def test_write_conll2000_puts_predictions_in_chunk_column(tmp_path):
    sents = read_conll2000(write(tmp_path, CHUNK_TEXT))
    out = tmp_path / "out.txt"
    write_conll2000(out, sents, [["O", "B-VP"], ["B-NP", "B-NP", "O"]])
    assert out.read_text() == (
        "He PRP O\nreckons VBZ B-VP\n\nThe DT B-NP\ndeficit NN B-NP\n. . O\n\n"
    )
    assert [s.tags for s in read_conll2000(out)] == [("O", "B-VP"), ("B-NP", "B-NP", "O")]
    with pytest.raises(InputError, match="2 words but 1 predicted"):
        write_conll2000(out, sents, [["O"], ["O", "O", "O"]])
    with pytest.raises(InputError, match="without whitespace"):
        write_conll2000(out, sents, [["O", "B NP"], ["O", "O", "O"]])
    assert out.read_text().startswith("He PRP O\n")  # failed writes left it untouched


# ----------------------------------------------------------------------------- CoNLL-U
CONLLU_TEXT = (
    "# sent_id = 1\n"
    "# text = Don't go.\n"
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t3:aux\t_\n"
    "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t3:advmod\t_\n"
    "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t0:root\tSpaceAfter=No\n"
    "3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\tCopyOf=3\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_\n"
    "\n"
    "1\tHi\thi\tINTJ\tUH\t_\t_\t_\t_\t_\n"
)


def test_read_conllu_happy_path(tmp_path):
    first, second = read_conllu(write(tmp_path, CONLLU_TEXT, "a.conllu"))
    assert first.comments == ("# sent_id = 1", "# text = Don't go.")
    assert first.line == 1 and second.line == 10
    assert len(first.rows) == 6 and all(len(r) == 10 for r in first.rows)
    assert first.word_row_indices == (1, 2, 3, 5)
    assert first.words == ("Do", "n't", "go", ".")
    assert first.lemmas == ("do", "not", "go", ".")
    assert first.upos == ("AUX", "PART", "VERB", "PUNCT")
    assert first.xpos == ("VBP", "RB", "VB", ".")
    assert first.heads == (3, 3, 0, 3)
    assert first.deprels == ("aux", "advmod", "root", "punct")
    assert second.words == ("Hi",) and second.heads == (-1,) and second.comments == ()
    assert len(first) == 4


W = "\t_\t_\tX\t_\t_\t0\t_\t_\t_\n"  # the rest of a valid word row after its ID


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("1" + W + "2\tb\tb\tX\t_\t_\t0\t_\t_\n", 2, ["expected 10 tab-separated fields", "got 9"]),
        ("1 a a X _ _ 0 _ _ _\n", 1, ["got 1;", "single tab"]),
        ("# c\n1" + W + "x" + W, 3, ["bad ID 'x'"]),
        ("1" + W + "3" + W, 2, ["word ID 3 out of order: expected 2"]),
        ("2" + W, 1, ["expected 1"]),
        ("1" + W + "\n1" + W + "1" + W, 4, ["word ID 1 out of order: expected 2"]),
        ("1\ta\ta\tX\t_\t_\thead\t_\t_\t_\n", 1, ["HEAD 'head'", "not an integer or '_'"]),
        ("1\ta\ta\t\t_\t_\t0\t_\t_\t_\n", 1, ["UPOS (column 4) of word 1 is empty"]),
        ("1" + W + "2\ta\ta\tX\t_\t_\t7\t_\t_\t_\n", 2, ["HEAD 7", "2 words"]),
        ("2-1" + W + "1" + W, 1, ["bad multiword-token range '2-1'"]),
        ("1" + W + "# late comment\n", 2, ["comment line inside a sentence"]),
        ("1" + W + "\n# dangling\n", 3, ["comment lines but no word lines"]),
    ],
)
def test_read_conllu_errors_have_line(tmp_path, text, line, fragments):
    path = write(tmp_path, text, "bad.conllu")
    err = error_of(read_conllu, path)
    assert err.line == line, str(err)
    assert str(err).startswith(f"{path}:{line}: ")
    for fragment in fragments:
        assert fragment in str(err)


def test_read_conllu_empty_and_non_utf8(tmp_path):
    err = error_of(read_conllu, write(tmp_path, "", "e.conllu"))
    assert "contains no sentences" in str(err)
    path = write(tmp_path, ("# c\n1" + W).encode() + b"2\t\xc3(\t_\tX\t_\t_\t0\t_\t_\t_\n", "u.conllu")
    err = error_of(read_conllu, path)
    assert err.line == 3 and f"{path}:3:" in str(err)


def test_write_conllu_replaces_upos_only(tmp_path):
    src = write(tmp_path, CONLLU_TEXT, "a.conllu")
    sents = read_conllu(src)
    out = tmp_path / "out.conllu"
    write_conllu(out, sents)
    assert out.read_bytes() == (CONLLU_TEXT + "\n").encode()
    write_conllu(out, sents, [["NOUN", "NOUN", "NOUN", "NOUN"], ["SYM"]])
    back = read_conllu(out)
    assert back[0].upos == ("NOUN",) * 4 and back[1].upos == ("SYM",)
    assert back[0].rows[0] == sents[0].rows[0]  # range row untouched
    assert back[0].rows[4] == sents[0].rows[4]  # empty node untouched
    assert back[0].comments == sents[0].comments
    assert [r[:3] + r[4:] for r in back[0].rows] == [r[:3] + r[4:] for r in sents[0].rows]
    with pytest.raises(InputError, match="4 words but 3 predicted"):
        write_conllu(out, sents, [["X"] * 3, ["X"]])
    with pytest.raises(InputError, match="1 sentences|2 sentences"):
        write_conllu(out, sents, [["X"] * 4])


def test_conllu_sentence_validates_rows():
    with pytest.raises(InputError, match="expected 10"):
        ConlluSentence(rows=(("1", "a"),))


# --------------------------------------------------------------------------- real data
@pytest.mark.data
def test_real_conll2000_train_counts():
    sents = read_conll2000(require_data("conll2000", "train.txt"))
    assert len(sents) == 8936
    assert sum(len(s) for s in sents) == 211727
    assert len({t for s in sents for t in s.tags}) == 22


@pytest.mark.data
def test_real_conll2000_round_trip(tmp_path):
    path = require_data("conll2000", "train.txt")
    out = tmp_path / "train.txt"
    write_conll2000(out, read_conll2000(path))
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.data
def test_real_ud_ewt_dev_counts_and_byte_round_trip(tmp_path):
    path = require_data("ud_english_ewt", "en_ewt-ud-dev.conllu")
    sents = read_conllu(path)
    assert len(sents) == 2001
    assert sum(len(s) for s in sents) == 25147
    n_ranges = sum(1 for s in sents for r in s.rows if "-" in r[0])
    n_empty = sum(1 for s in sents for r in s.rows if "." in r[0])
    assert (n_ranges, n_empty) == (359, 4)
    out = tmp_path / "dev.conllu"
    write_conllu(out, sents, [s.upos for s in sents])
    assert out.read_bytes() == path.read_bytes()
