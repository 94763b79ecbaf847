"""JSON-lines documents: reading, the file:line error contract, the by-date split, writing."""

import json

import numpy as np
import pytest

from latentstruct.data.documents import Document, read_documents, split_by_date, write_documents
from latentstruct.exceptions import InputError


def write(tmp_path, text, name="docs.jsonl"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def line(**obj):
    return json.dumps(obj) + "\n"


def test_reads_documents_with_lines_and_extra_keys(tmp_path):
    path = write(tmp_path, line(id="7", label="a", text="Hello\nworld", date="1993")
                 + "\n" + line(label="b", text="x y"))
    docs = read_documents(path)
    assert docs == [Document("7", "a", "Hello\nworld", 1), Document(None, "b", "x y", 3)]
    assert docs[0].extra == {"date": "1993"} and docs[1].extra == {}


@pytest.mark.parametrize("content, lineno, needle", [
    ('{"label": "a", "text": "t"}\n{"label": "a", "text": "t"\n', 2, "not valid JSON"),
    ('{"label": "a", "text": "t"}\n["a", "t"]\n', 2, "not a JSON object"),
    ('"just a string"\n', 1, "not a JSON object"),
    ('{"label": "a", "text": "t"}\n{"text": "t"}\n', 2, "missing 'label'"),
    ('{"label": "a"}\n', 1, "missing 'text'"),
    ('{"label": "", "text": "t"}\n', 1, "'label' is empty"),
    ('{"label": "a", "text": "   "}\n', 1, "'text' is blank"),
    ('{"label": 3, "text": "t"}\n', 1, "'label' is a number (3); expected a string"),
    ('{"label": "a", "text": ["t"]}\n', 1, "'text' is a list"),
    ('{"id": 49960, "label": "a", "text": "t"}\n', 1, "'id' is a number (49960)"),
    ('{"label": null, "text": "t"}\n', 1, "'label' is null"),
    ('{"id": "1", "label": "a", "text": "t"}\n{"id": "1", "label": "b", "text": "u"}\n'
     '{"id": "1", "label": "a", "text": "v"}\n', 3, "id '1' of label 'a' was already used on line 1"),
])
def test_malformed_lines_name_file_and_line(tmp_path, content, lineno, needle):
    path = write(tmp_path, content)
    with pytest.raises(InputError) as err:
        read_documents(path)
    assert err.value.path == str(path) and err.value.line == lineno
    assert str(err.value).startswith(f"{path}:{lineno}: ")
    assert needle in str(err.value)


def test_undecodable_bytes_name_the_line(tmp_path):
    path = write(tmp_path, b'{"label": "a", "text": "ok"}\n{"label": "a", "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_documents(path)
    assert err.value.line == 2 and f"{path}:2:" in str(err.value)


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_a_file_without_documents_is_an_error(tmp_path, content):
    path = write(tmp_path, content)
    with pytest.raises(InputError, match="holds no documents") as err:
        read_documents(path)
    assert err.value.path == str(path) and err.value.line is None


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_documents(tmp_path / "nope.jsonl")


def test_unlabelled_lines_only_when_allowed(tmp_path):
    path = write(tmp_path, line(id="1", text="t") + line(label="a", text="u"))
    with pytest.raises(InputError, match="missing 'label'"):
        read_documents(path)
    docs = read_documents(path, allow_unlabelled=True)
    assert [d.label for d in docs] == [None, "a"]
    bad = write(tmp_path, line(label="", text="u"), "bad.jsonl")
    with pytest.raises(InputError, match="'label' is empty"):  # a present label is still checked
        read_documents(bad, allow_unlabelled=True)


def test_same_id_under_two_labels_is_fine(tmp_path):
    path = write(tmp_path, line(id="1", label="a", text="t") + line(id="1", label="b", text="u"))
    assert [d.label for d in read_documents(path)] == ["a", "b"]


def docs_of(spec):
    """Documents from (id, label) pairs, in the given (file) order."""
    return [Document(i, lab, "t", k + 1) for k, (i, lab) in enumerate(spec)]


def test_split_by_date_takes_the_latest_ids_of_each_label():
    # label a: 10 posts in scrambled file order (numeric ids, "10" > "9" numerically);
    # label b: 3 posts; label c: a single post (stays in train); label d: two posts
    ids_a = ["5", "10", "1", "9", "2", "8", "3", "7", "4", "6"]
    spec = [(i, "a") for i in ids_a] + [("100", "b"), ("20", "b"), ("3", "b"), ("1", "c"),
                                        ("x2", "d"), ("x1", "d")]
    docs = docs_of(spec)
    train, ev = split_by_date(docs, 0.2)
    got_eval = {(docs[k].label, docs[k].id) for k in ev}
    # a: round(2.0) = 2 -> ids 9, 10; b: round(0.6) = 1 -> id 100; c: none; d: 1 -> "x2"
    assert got_eval == {("a", "9"), ("a", "10"), ("b", "100"), ("d", "x2")}
    assert train.tolist() == sorted(set(range(len(docs))) - set(ev.tolist()))
    assert ev.tolist() == sorted(ev.tolist()) and train.dtype == ev.dtype == np.int64


@pytest.mark.parametrize("n, fraction, n_eval", [
    (2, 0.2, 1),   # at least one
    (2, 0.9, 1),   # and at most n - 1
    (5, 0.5, 3),   # 2.5: half rounds up
    (7, 0.2, 1),   # round(1.4)
    (8, 0.2, 2),   # round(1.6)
    (1, 0.5, 0),   # a single post stays in train
])
def test_split_sizes(n, fraction, n_eval):
    docs = docs_of([(str(i), "a") for i in range(n)])
    train, ev = split_by_date(docs, fraction)
    assert len(ev) == n_eval and len(train) == n - n_eval
    assert all(int(docs[k].id) >= n - n_eval for k in ev)


def test_split_needs_labels(tmp_path):
    docs = [Document("1", "a", "t", 1), Document("2", None, "t", 2)]
    with pytest.raises(InputError, match="no label") as err:
        split_by_date(docs, 0.2, path=tmp_path / "f.jsonl")
    assert str(err.value).startswith(f"{tmp_path / 'f.jsonl'}:2: ")
    with pytest.raises(ValueError, match="eval_fraction"):
        split_by_date(docs[:1], 1.0)


def test_split_of_the_20newsgroups_training_file(require_data):
    path = require_data("20newsgroups", "train.jsonl")
    docs = read_documents(path)
    assert len(docs) == 11314
    train, ev = split_by_date(docs, 0.2)
    assert (len(train), len(ev)) == (9050, 2264)
    for label in {d.label for d in docs}:
        tr = [int(docs[k].id) for k in train if docs[k].label == label]
        te = [int(docs[k].id) for k in ev if docs[k].label == label]
        assert te and tr and min(te) > max(tr), label
        assert len(te) == int(np.floor(0.2 * (len(tr) + len(te)) + 0.5))


def test_write_documents_round_trips_with_predictions(tmp_path):
    src = write(tmp_path, line(id="1", label="a", text="Ünïcode\u2028line", date="x")
                + line(text="no label", predicted="old"))
    docs = read_documents(src, allow_unlabelled=True)
    out = tmp_path / "out.jsonl"
    write_documents(out, docs, ["b", "a"])
    rows = [json.loads(s) for s in out.read_text(encoding="utf-8").rstrip("\n").split("\n")]
    assert rows == [{"id": "1", "label": "a", "text": "Ünïcode\u2028line", "date": "x", "predicted": "b"},
                    {"text": "no label", "predicted": "a"}]
    assert "Ünïcode" in out.read_text(encoding="utf-8")  # UTF-8, not \\u escapes
    assert read_documents(out, allow_unlabelled=True)[0].extra == {"date": "x", "predicted": "b"}
    write_documents(out, docs)  # without predictions: the documents as read
    assert [json.loads(s) for s in out.read_text(encoding="utf-8").rstrip("\n").split("\n")][1] == \
        {"text": "no label", "predicted": "old"}


def test_write_documents_is_atomic_and_checks_counts(tmp_path):
    docs = [Document("1", "a", "t", 1)]
    out = tmp_path / "out.jsonl"
    out.write_text("previous\n")
    with pytest.raises(InputError, match="1 documents but 2 predicted labels"):
        write_documents(out, docs, ["a", "b"])
    with pytest.raises(InputError, match="not a string"):
        write_documents(out, docs, [None])
    assert out.read_text() == "previous\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
