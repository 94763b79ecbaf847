from collections import Counter

import pytest

from latentstruct.data.pairs import (
    PAIR_FORMATS,
    SentencePair,
    read_glue_rte,
    read_msrp,
    read_pairs,
    read_rte_xml,
)
from latentstruct.exceptions import InputError
from latentstruct.testing import require_data

MSRP_HEAD = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
GLUE_HEAD = "index\tsentence1\tsentence2\tlabel\n"


def write(tmp_path, content, name="pairs.tsv"):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def error_of(reader, path):
    with pytest.raises(InputError) as info:
        reader(path)
    return info.value


# ------------------------------------------------------------------------------ MSRP
def test_msrp_reads_pairs_with_quotes_and_ids(tmp_path):
    path = write(tmp_path, "\ufeff" + MSRP_HEAD
                 + '1\t702876\t702977\tHe said "the witness.\tReferring to "him", yes.\n'
                 + "\n"
                 + "0\t2108705\t2108831\tYucaipa owned it.\tYucaipa bought it.\r\n")
    pairs = read_msrp(path)
    assert pairs == [
        SentencePair("702876_702977", 'He said "the witness.', 'Referring to "him", yes.', 1, 2),
        SentencePair("2108705_2108831", "Yucaipa owned it.", "Yucaipa bought it.", 0, 4),
    ]


@pytest.mark.parametrize(
    "body, line, fragment",
    [
        ("1\t1\t2\tonly four\n", 2, "expected 5 tab-separated columns"),
        ("1\t1\t2\ta\tb\n2\t3\t4\tc\td\n", 3, "must be 1 (paraphrase) or 0"),
        ("1\t1\t2\ta\tb\n0\t3\t4\t \td\n", 3, "'#1 String' column is empty"),
        ("1\t1\t2\ta\t\n", 2, "'#2 String' column is empty"),
        ("1\t\t2\ta\tb\n", 2, "'#1 ID' column is empty"),
        ("yes\t1\t2\ta\tb\n", 2, "must be 1 (paraphrase) or 0"),
    ],
)
def test_msrp_errors_carry_file_and_line(tmp_path, body, line, fragment):
    path = write(tmp_path, MSRP_HEAD + body)
    err = error_of(read_msrp, path)
    assert err.path == str(path) and err.line == line
    assert fragment in err.message
    assert str(err).startswith(f"{path}:{line}: ")


def test_msrp_non_utf8_line(tmp_path):
    path = write(tmp_path, MSRP_HEAD.encode() + b"1\t1\t2\ta\tb\n1\t3\t4\tcaf\xe9\tb\n")
    err = error_of(read_msrp, path)
    assert (err.path, err.line) == (str(path), 3)
    assert "invalid UTF-8" in err.message


def test_msrp_empty_file_header_only_and_wrong_header(tmp_path):
    err = error_of(read_msrp, write(tmp_path, b"", "empty.tsv"))
    assert err.line is None and "file is empty" in err.message
    err = error_of(read_msrp, write(tmp_path, MSRP_HEAD, "head.tsv"))
    assert "no pairs" in err.message
    err = error_of(read_msrp, write(tmp_path, "1\t1\t2\ta\tb\n", "nohead.tsv"))
    assert err.line == 1 and "not the MSRP header" in err.message


def test_missing_file_is_input_error(tmp_path):
    err = error_of(read_msrp, tmp_path / "nope.tsv")
    assert "no such file" in err.message


def test_sentence_pair_label_must_be_0_or_1():
    with pytest.raises(InputError, match="label must be the int 1 or 0"):
        SentencePair("a", "x", "y", 2)
    with pytest.raises(InputError):
        SentencePair("a", "x", "y", True)


# ------------------------------------------------------------------------------ GLUE
def test_glue_reads_labels(tmp_path):
    path = write(tmp_path, GLUE_HEAD + '0\tA "text.\tA hyp.\tentailment\n'
                 "1\tB text.\tB hyp.\tnot_entailment\n")
    assert read_glue_rte(path) == [
        SentencePair("0", 'A "text.', "A hyp.", 1, 2),
        SentencePair("1", "B text.", "B hyp.", 0, 3),
    ]


def test_glue_errors(tmp_path):
    err = error_of(read_glue_rte, write(tmp_path, GLUE_HEAD + "0\ta\tb\tneutral\n"))
    assert err.line == 2 and "entailment, not_entailment" in err.message
    err = error_of(read_glue_rte, write(tmp_path, "index\tsentence1\tsentence2\n0\ta\tb\n", "t.tsv"))
    assert err.line == 1 and "GLUE RTE header" in err.message
    err = error_of(read_glue_rte, write(tmp_path, GLUE_HEAD + "0\ta\tb\tentailment\textra\n", "x.tsv"))
    assert err.line == 2 and "expected 4 tab-separated columns" in err.message


# ------------------------------------------------------------------------------ RTE XML
RTE1 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE entailment-corpus SYSTEM "rte.dtd">
<entailment-corpus challenge="1">
<pair id="8" value="FALSE" task="IR">
\t<t>Crude oil traded at $37.80 a barrel,
down 28 cents</t>
\t<h>Oil prices don&apos;t rise</h>
</pair>
<pair id="13" value="TRUE" task="IR">
\t<t>iTunes sold well.</t>
\t<h>Strong sales &amp; more.</h>
</pair>
</entailment-corpus>
"""

RTE3 = """<?xml version="1.0" encoding="UTF-8" ?>
<entailment-corpus challenge="3">
\t<pair id="1" entailment="YES" task="IE" length="short" >
\t\t<t>The sale was made.</t>
\t\t<h>A sale.</h>
\t</pair>
\t<pair id="2" entailment="NO" task="IE" length="short" >
\t\t<t>Other text.</t>
\t\t<h>Other hypothesis.</h>
\t</pair>
</entailment-corpus>
"""


def test_rte1_and_rte3_xml(tmp_path):
    pairs = read_rte_xml(write(tmp_path, RTE1, "rte1.xml"))
    assert pairs == [
        SentencePair("8", "Crude oil traded at $37.80 a barrel, down 28 cents",
                     "Oil prices don't rise", 0, 4),
        SentencePair("13", "iTunes sold well.", "Strong sales & more.", 1, 9),
    ]
    pairs = read_rte_xml(write(tmp_path, RTE3, "rte3.xml"))
    assert [(p.id, p.label, p.line) for p in pairs] == [("1", 1, 3), ("2", 0, 7)]


def test_rte_pair_without_label_reports_its_line(tmp_path):
    text = RTE3.replace('entailment="NO" ', "")
    err = error_of(read_rte_xml, write(tmp_path, text, "bad.xml"))
    assert (err.path, err.line) == (str(tmp_path / "bad.xml"), 7)
    assert "pair '2' has no label" in err.message


@pytest.mark.parametrize(
    "old, new, line, fragment",
    [
        ("<t>Other text.</t>", "<t>  </t>", 8, "empty <t> (text)"),
        ("<h>A sale.</h>", "<h></h>", 5, "empty <h> (hypothesis)"),
        ("\t\t<h>Other hypothesis.</h>\n", "", 7, "has no <h>"),
        ('entailment="NO"', 'entailment="UNKNOWN"', 7, "not a 2-way label"),
        ('entailment="NO"', 'entailment="NO" value="FALSE"', 7, "both value= and entailment="),
        ('id="2"', 'id="1"', 7, "duplicate pair id '1'"),
        ("<h>A sale.</h>", "<h>A sale.</h><h>again</h>", 5, "second <h>"),
        ("<h>A sale.</h>", "<h>A sale.</t>", 5, "malformed XML"),
    ],
)
def test_rte_xml_errors(tmp_path, old, new, line, fragment):
    assert old in RTE3
    err = error_of(read_rte_xml, write(tmp_path, RTE3.replace(old, new, 1), "bad.xml"))
    assert err.line == line, str(err)
    assert fragment in err.message


def test_rte_xml_non_utf8_empty_and_entities(tmp_path):
    data = RTE3.encode().replace(b"Other text.", b"Caf\xe9 text.")
    err = error_of(read_rte_xml, write(tmp_path, data, "latin.xml"))
    assert err.line == 8 and "malformed XML" in err.message
    err = error_of(read_rte_xml, write(tmp_path, b"", "empty.xml"))
    assert "empty" in err.message
    err = error_of(read_rte_xml, write(tmp_path, "<entailment-corpus/>\n", "nopairs.xml"))
    assert "no <pair> elements" in err.message
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE c [\n<!ENTITY a "aaaa">\n]>\n'
            '<c><pair id="1" value="TRUE"><t>&a;</t><h>x</h></pair></c>\n')
    err = error_of(read_rte_xml, write(tmp_path, bomb, "bomb.xml"))
    assert "entity" in err.message and err.line == 3


# ------------------------------------------------------------------------------ dispatch
def test_read_pairs_dispatch(tmp_path):
    assert read_pairs(write(tmp_path, MSRP_HEAD + "1\t1\t2\ta\tb\n", "m.txt"))[0].id == "1_2"
    assert read_pairs(write(tmp_path, GLUE_HEAD + "7\ta\tb\tentailment\n", "g.tsv"))[0].id == "7"
    assert read_pairs(write(tmp_path, RTE3, "r.XML"))[1].id == "2"
    err = error_of(read_pairs, write(tmp_path, "a\tb\n", "u.tsv"))
    assert err.line == 1
    for fmt in PAIR_FORMATS:
        assert fmt.name in err.message
    err = error_of(read_pairs, write(tmp_path, b"", "e.tsv"))
    assert "empty" in err.message


# ------------------------------------------------------------------------------ real data
def test_real_msrp_train_counts():
    pairs = read_msrp(require_data("msrp", "train.tsv"))
    assert len(pairs) == 4076
    assert Counter(p.label for p in pairs) == {1: 2753, 0: 1323}
    assert pairs[0].id == "702876_702977" and pairs[0].line == 2
    assert pairs[0].first.startswith('Amrozi accused his brother, whom he called "the witness"')


@pytest.mark.parametrize(
    "name, n, n_pos",
    [("rte1_dev.xml", 567, 283), ("rte2_dev.xml", 400, 210), ("rte3_dev.xml", 800, 412)],
)
def test_real_rte_xml_counts(name, n, n_pos):
    pairs = read_pairs(require_data("rte", name))
    assert len(pairs) == n
    assert sum(p.label for p in pairs) == n_pos
    assert len({p.id for p in pairs}) == n
    assert all(p.first and p.second and "\n" not in p.first for p in pairs)


@pytest.mark.parametrize(
    "name, n, n_pos", [("glue_rte_train.tsv", 2490, 1249), ("glue_rte_dev.tsv", 277, 146)]
)
def test_real_glue_counts(name, n, n_pos):
    pairs = read_glue_rte(require_data("rte", name))
    assert len(pairs) == n
    assert sum(p.label for p in pairs) == n_pos
