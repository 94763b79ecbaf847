from collections import Counter

import pytest

from latentstruct.data.citations import (
    Citation,
    read_cora,
    split_cora,
    write_cora,
)
from latentstruct.exceptions import InputError

TWO = (
    "<NEWREFERENCE>\n"
    "<author> A. Cau, R. Kuiper. </author> <title> Formalising Dijkstra's strategy. </title> "
    "<date> 1992. </date>\n"
    "<NEWREFERENCE>\n"
    "<author> W. H. Enright. </author> <journal> ACM Trans., </journal> "
    "<volume> 4(2), </volume> <pages> 127-136, </pages> <date> June 1978. </date>\n"
)


def write(tmp_path, text, name="c.txt"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return p


def test_read_happy_path(tmp_path):
    cits = read_cora(write(tmp_path, TWO))
    assert len(cits) == 2
    a, b = cits
    assert a.tokens == ("A.", "Cau,", "R.", "Kuiper.", "Formalising", "Dijkstra's", "strategy.", "1992.")
    assert a.labels == ("author",) * 4 + ("title",) * 3 + ("date",)
    assert a.line == 2 and b.line == 4
    assert b.labels == ("author",) * 3 + ("journal",) * 2 + ("volume", "pages", "date", "date")
    assert a.fields()[1] == ("title", ("Formalising", "Dijkstra's", "strategy."))
    assert len(b) == 9


def test_read_tolerates_crlf_trailing_spaces_and_blank_lines(tmp_path):
    text = TWO.replace("\n", " \r\n") + "\r\n\r\n"
    cits = read_cora(write(tmp_path, text))
    assert [c.line for c in cits] == [2, 4]
    assert cits == read_cora(write(tmp_path, TWO, "b.txt"))


def check_error(tmp_path, text, line, *fragments):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        read_cora(p)
    err = info.value
    assert err.line == line
    assert err.path == str(p)
    msg = str(err)
    assert msg.startswith(f"{p}:{line}: ") if line is not None else msg.startswith(f"{p}: ")
    for frag in fragments:
        assert frag in msg, msg
    return msg


def test_unclosed_tag(tmp_path):
    text = TWO + "<NEWREFERENCE>\n<author> A. B. </author> <title> Open title\n"
    check_error(tmp_path, text, 6, "unbalanced tags", "<title>", "word 5", "</title>")


def test_mismatched_closing_tag(tmp_path):
    text = "<NEWREFERENCE>\n<author> A. B. </title>\n"
    check_error(tmp_path, text, 2, "</title>", "does not match", "<author>", "expected </author>")


def test_nested_tags(tmp_path):
    text = TWO + "<NEWREFERENCE>\n<booktitle> In <title> X </title> </booktitle>\n"
    check_error(tmp_path, text, 6, "nested tag <title>", "<booktitle>", "cannot nest")


def test_closing_tag_without_opening(tmp_path):
    text = "<NEWREFERENCE>\n<date> 1992. </date> </pages>\n"
    check_error(tmp_path, text, 2, "closing tag </pages>", "without a matching opening")


def test_token_outside_field(tmp_path):
    text = TWO + "<NEWREFERENCE>\n<author> A. B. </author> stray <date> 1990. </date>\n"
    check_error(tmp_path, text, 6, "'stray'", "outside any field", "word 5")


def test_empty_field(tmp_path):
    check_error(tmp_path, "<NEWREFERENCE>\n<author> </author>\n", 2, "contains no tokens")


def test_empty_citation_line(tmp_path):
    text = TWO + "<NEWREFERENCE>\n\n<NEWREFERENCE>\n<date> 1990. </date>\n"
    check_error(tmp_path, text, 6, "citation line after <NEWREFERENCE> is empty")


def test_marker_followed_by_marker(tmp_path):
    text = "<NEWREFERENCE>\n<NEWREFERENCE>\n<date> 1990. </date>\n"
    check_error(tmp_path, text, 2, "after the <NEWREFERENCE> on line 1")


def test_missing_marker(tmp_path):
    text = TWO + "<date> 1990. </date>\n"
    check_error(tmp_path, text, 5, "missing <NEWREFERENCE> marker", "line 4")
    check_error(tmp_path, "<date> 1990. </date>\n", 1, "missing <NEWREFERENCE>", "start with")


def test_marker_on_citation_line(tmp_path):
    check_error(tmp_path, "<NEWREFERENCE> <date> 1990. </date>\n", 1, "alone on its line")
    check_error(tmp_path, "<NEWREFERENCE>\n<date> 1990. <NEWREFERENCE> </date>\n", 2, "inside a citation line")


def test_trailing_marker(tmp_path):
    check_error(tmp_path, TWO + "<NEWREFERENCE>\n", 5, "last line of the file")


def test_empty_file(tmp_path):
    check_error(tmp_path, "", None, "contains no citations")
    check_error(tmp_path, "\n  \n", None, "contains no citations")


def test_non_utf8(tmp_path):
    data = TWO.encode() + b"<NEWREFERENCE>\n<author> M\xfcller </author>\n"
    check_error(tmp_path, data, 6, "invalid UTF-8", "0xfc")


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_cora(tmp_path / "nope.txt")


def test_citation_validates_lengths():
    with pytest.raises(InputError, match="one label per token"):
        Citation(("a", "b"), ("x",))
    assert Citation(["a"], ["x"]).tokens == ("a",)


def test_write_round_trip_and_span_merging(tmp_path):
    cits = read_cora(write(tmp_path, TWO))
    out = tmp_path / "out.txt"
    write_cora(out, cits)
    assert out.read_text() == TWO
    assert read_cora(out) == cits
    # predicted labels: consecutive equal labels form one span
    pred = [["author"] * 2 + ["title"] * 6, ["note"] * 9]
    write_cora(out, cits, pred)
    lines = out.read_text().splitlines()
    assert lines[1] == (
        "<author> A. Cau, </author> <title> R. Kuiper. Formalising Dijkstra's strategy. 1992. </title>"
    )
    assert lines[3] == "<note> W. H. Enright. ACM Trans., 4(2), 127-136, June 1978. </note>"
    back = read_cora(out)
    assert [list(c.labels) for c in back] == pred
    assert [c.tokens for c in back] == [c.tokens for c in cits]


def test_write_errors_leave_file_untouched(tmp_path):
    cits = read_cora(write(tmp_path, TWO))
    out = tmp_path / "out.txt"
    out.write_text("keep")
    with pytest.raises(InputError, match="2 citations but 1 predicted"):
        write_cora(out, cits, [cits[0].labels])
    with pytest.raises(InputError, match="8 tokens but 7 predicted"):
        write_cora(out, cits, [cits[0].labels[:-1], cits[1].labels])
    with pytest.raises(InputError, match="not a valid field name"):
        write_cora(out, cits, [("a b",) * 8, cits[1].labels])
    with pytest.raises(InputError, match="looks like a field tag"):
        write_cora(out, [Citation(("<x>",), ("title",))])
    assert out.read_text() == "keep"


def test_split_cora():
    cits = [Citation((f"w{i}",), ("title",), 2 * i + 2) for i in range(500)]
    sp = split_cora(cits)
    assert sp.train == cits[:300] and sp.dev == cits[300:400] and sp.rest == cits[400:]
    sp4 = split_cora(cits[:400])
    assert len(sp4.train) == 300 and len(sp4.dev) == 100 and sp4.rest == []
    with pytest.raises(InputError, match="at least 400 references"):
        split_cora(cits[:399])


# --- the real file -----------------------------------------------------------------------
README_LABEL_SET = {
    "author", "booktitle", "date", "editor", "institution", "journal", "location", "note",
    "pages", "publisher", "tech", "title", "volume",
}


def test_real_file_counts(require_data):
    path = require_data("cora_citations", "tagged_references.txt")
    cits = read_cora(path)
    assert len(cits) == 400
    assert sum(len(c) for c in cits) == 9405
    counts = Counter(lab for c in cits for lab in c.labels)
    assert set(counts) == README_LABEL_SET
    # every README per-label count is over all 500 references, so ours are at most those
    readme_500 = {"title": 3557, "author": 2831, "booktitle": 1862, "date": 642, "journal": 614,
                  "pages": 443, "institution": 306, "editor": 295, "location": 289,
                  "volume": 269, "publisher": 203, "tech": 176, "note": 122}
    assert all(0 < counts[k] <= readme_500[k] for k in readme_500)
    assert counts["title"] == 2830 and counts["author"] == 2284
    assert cits[0].tokens[:3] == ("A.", "Cau,", "R.") and cits[0].line == 2
    assert cits[-1].line == 800
    sp = split_cora(cits)
    assert (len(sp.train), len(sp.dev), len(sp.rest)) == (300, 100, 0)


def test_real_file_write_read_round_trip(require_data, tmp_path):
    cits = read_cora(require_data("cora_citations", "tagged_references.txt"))
    out = tmp_path / "gold.txt"
    write_cora(out, cits, [c.labels for c in cits])
    assert read_cora(out) == cits
