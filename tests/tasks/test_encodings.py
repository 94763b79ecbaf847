"""Chunk encodings (Clifton & Sarkar 2013, Table 1): exact conversions and majority vote."""

import itertools

import numpy as np
import pytest

from latentstruct.data.readers import read_conll2000
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks.sequence.chunk_metrics import extract_chunks
from latentstruct.tasks.sequence.encodings import (
    ENCODINGS,
    Span,
    convert,
    encoding_labels,
    get_encoding,
    is_well_formed,
    majority_vote,
    spans_from_tags,
    tags_from_spans,
)

VIEWS = ["iob1", "iob2", "ioe1", "ioe2", "oc"]

# Table 1 of the paper, with the chunk type NP written out.
TABLE1 = """\
In       O      O      O      O      O
early    I-NP   B-NP   I-NP   I-NP   B-NP
trading  I-NP   I-NP   I-NP   E-NP   E-NP
in       O      O      O      O      O
Hong     I-NP   B-NP   I-NP   I-NP   B-NP
Kong     I-NP   I-NP   E-NP   E-NP   E-NP
Monday   B-NP   B-NP   I-NP   E-NP   S-NP
,        O      O      O      O      O
gold     I-NP   B-NP   I-NP   E-NP   S-NP
was      O      O      O      O      O
quoted   O      O      O      O      O
at       O      O      O      O      O
$        I-NP   B-NP   I-NP   I-NP   B-NP
366.50   I-NP   I-NP   E-NP   E-NP   E-NP
an       B-NP   B-NP   I-NP   I-NP   B-NP
ounce    I-NP   I-NP   I-NP   E-NP   E-NP
.        O      O      O      O      O
"""
_rows = [line.split() for line in TABLE1.splitlines()]
TABLE1_TAGS = {view: [row[k + 1] for row in _rows] for k, view in enumerate(VIEWS)}
TABLE1_SPANS = [("NP", 1, 2), ("NP", 4, 5), ("NP", 6, 6), ("NP", 8, 8), ("NP", 12, 13),
                ("NP", 14, 15)]


def test_registry_names_and_unknown_view():
    assert list(ENCODINGS) == VIEWS
    assert get_encoding("oc").prefixes == ("B", "I", "E", "S")
    msg = "unknown view 'x'; expected one of: iob1, iob2, ioe1, ioe2, oc"
    for call in (
        lambda: get_encoding("x"),
        lambda: spans_from_tags(["O"], "x"),
        lambda: tags_from_spans([], 1, "x"),
        lambda: convert(["O"], "iob2", "x"),
        lambda: convert(["O"], "x", "iob2"),
        lambda: encoding_labels(["NP"], "x"),
        lambda: majority_vote({"x": ["O"]}),
        lambda: majority_vote({"iob2": ["O"]}, ["x"]),
    ):
        with pytest.raises(ConfigError) as info:
            call()
        assert str(info.value) == msg
    with pytest.raises(ConfigError, match="unknown view 'IOB2'"):
        get_encoding("IOB2")  # names are exact


@pytest.mark.parametrize("view", VIEWS)
def test_table1_worked_example(view):
    tags = TABLE1_TAGS[view]
    assert tags_from_spans(TABLE1_SPANS, 17, view) == tags
    assert spans_from_tags(tags, view) == TABLE1_SPANS
    assert all(isinstance(s, Span) for s in spans_from_tags(tags, view))
    assert is_well_formed(tags, view)
    for target in VIEWS:
        assert convert(tags, view, target) == TABLE1_TAGS[target]


def test_adjacent_chunks_of_different_types_need_no_marker():
    # In/PP early/NP trading/NP in/PP Hong/NP Kong/NP Monday/NP
    spans = [("PP", 0, 0), ("NP", 1, 2), ("PP", 3, 3), ("NP", 4, 5), ("NP", 6, 6)]
    assert tags_from_spans(spans, 7, "iob1") == [
        "I-PP", "I-NP", "I-NP", "I-PP", "I-NP", "I-NP", "B-NP"]
    assert tags_from_spans(spans, 7, "ioe1") == [
        "I-PP", "I-NP", "I-NP", "I-PP", "I-NP", "E-NP", "I-NP"]
    assert tags_from_spans(spans, 7, "oc") == [
        "S-PP", "B-NP", "E-NP", "S-PP", "B-NP", "E-NP", "S-NP"]
    # an O+C chunk of three tokens has I in the middle
    assert tags_from_spans([("VP", 0, 2)], 3, "oc") == ["B-VP", "I-VP", "E-VP"]


def test_tags_from_spans_accepts_any_order_and_rejects_bad_spans():
    assert tags_from_spans([("NP", 2, 2), ("VP", 0, 1)], 3, "iob2") == ["B-VP", "I-VP", "B-NP"]
    assert tags_from_spans([], 0, "oc") == []
    assert tags_from_spans([], 2, "ioe2") == ["O", "O"]
    with pytest.raises(InputError, match="overlap"):
        tags_from_spans([("NP", 0, 1), ("VP", 1, 2)], 3, "iob2")
    with pytest.raises(InputError, match="0 <= start <= end < n = 3"):
        tags_from_spans([("NP", 2, 3)], 3, "iob2")
    with pytest.raises(InputError, match="0 <= start <= end"):
        tags_from_spans([("NP", 2, 1)], 3, "iob2")
    with pytest.raises(InputError, match="chunk type"):
        tags_from_spans([("", 0, 0)], 3, "iob2")
    with pytest.raises(InputError, match="triple"):
        tags_from_spans([("NP", 0)], 3, "iob2")
    with pytest.raises(InputError, match="n \\(the number of tokens\\)"):
        tags_from_spans([], -1, "iob2")


def test_tags_outside_the_view_are_rejected():
    with pytest.raises(InputError, match=r"tag 1 'E-NP' is not a iob2 tag"):
        spans_from_tags(["B-NP", "E-NP"], "iob2")
    with pytest.raises(InputError, match="not a ioe1 tag"):
        convert(["B-NP"], "ioe1", "iob2")
    with pytest.raises(InputError, match="not a oc tag"):
        spans_from_tags(["B"], "oc")  # untyped
    with pytest.raises(InputError, match="not a iob1 tag"):
        spans_from_tags(["I-NP", None], "iob1")
    with pytest.raises(InputError, match="sequence of tag strings"):
        spans_from_tags("B-NP", "iob2")


def test_ill_formed_sequences_are_read_as_documented():
    # IOB: I after O or after another type opens a chunk (conlleval)
    assert spans_from_tags(["O", "I-NP", "I-NP"], "iob2") == [("NP", 1, 2)]
    assert spans_from_tags(["B-NP", "I-VP"], "iob2") == [("NP", 0, 0), ("VP", 1, 1)]
    assert spans_from_tags(["O", "B-NP"], "iob1") == [("NP", 1, 1)]
    assert convert(["O", "I-NP", "I-NP"], "iob2", "iob2") == ["O", "B-NP", "I-NP"]
    assert not is_well_formed(["O", "I-NP", "I-NP"], "iob2")
    assert is_well_formed(["O", "I-NP", "I-NP"], "iob1")
    # IOE: the mirror image
    assert spans_from_tags(["I-NP", "I-NP", "O"], "ioe2") == [("NP", 0, 1)]
    assert spans_from_tags(["O", "E-NP"], "ioe2") == [("NP", 1, 1)]
    assert spans_from_tags(["I-NP", "I-NP"], "ioe2") == [("NP", 0, 1)]
    assert convert(["I-NP", "I-NP", "O"], "ioe2", "ioe2") == ["I-NP", "E-NP", "O"]
    # O+C
    assert spans_from_tags(["B-NP", "O"], "oc") == [("NP", 0, 0)]
    assert spans_from_tags(["O", "I-NP", "E-NP"], "oc") == [("NP", 1, 2)]
    assert spans_from_tags(["E-NP", "E-NP"], "oc") == [("NP", 0, 0), ("NP", 1, 1)]
    assert spans_from_tags(["B-NP", "I-NP", "B-NP"], "oc") == [("NP", 0, 1), ("NP", 2, 2)]
    assert spans_from_tags(["B-NP", "I-VP", "E-VP"], "oc") == [("NP", 0, 0), ("VP", 1, 2)]


def _boundary_rule_spans(tags):
    """The module docstring's reading rule, written independently of conlleval: a chunk is a
    maximal run of non-O tokens of one type, cut before every B/S and after every E/S."""
    spans, start = [], None
    for i, tag in enumerate(tags):
        cut = (start is not None and (
            tag == "O" or tag[2:] != tags[i - 1][2:] or tag[0] in "BS" or tags[i - 1][0] in "ES"
        ))
        if cut:
            spans.append((tags[i - 1][2:], start, i - 1))
            start = None
        if tag != "O" and start is None:
            start = i
    if start is not None:
        spans.append((tags[-1][2:], start, len(tags) - 1))
    return spans


@pytest.mark.parametrize("view", VIEWS)
def test_random_ill_formed_sequences(view):
    rng = np.random.default_rng(0)
    prefixes = ENCODINGS[view].prefixes
    alphabet = ["O"] + [f"{p}-{t}" for p in prefixes for t in ("NP", "VP")]
    for _ in range(2000):
        tags = [alphabet[k] for k in rng.integers(0, len(alphabet), size=rng.integers(0, 8))]
        spans = spans_from_tags(tags, view)
        assert spans == _boundary_rule_spans(tags)
        assert spans == sorted(extract_chunks(tags), key=lambda s: s[1])
        for target in VIEWS:
            out = convert(tags, view, target)
            assert is_well_formed(out, target)
            assert spans_from_tags(out, target) == spans
            assert convert(out, target, view) == tags_from_spans(spans, len(tags), view)


@pytest.mark.slow
def test_every_encoding_round_trips_on_all_of_conll2000_train(require_data):
    sentences = read_conll2000(require_data("conll2000", "train.txt"))
    assert len(sentences) == 8936
    n_chunks = 0
    for sent in sentences:
        original = list(sent.tags)
        n = len(original)
        spans = spans_from_tags(original, "iob2")
        n_chunks += len(spans)
        assert tags_from_spans(spans, n, "iob2") == original  # gold data is well-formed
        by_view = {v: tags_from_spans(spans, n, v) for v in VIEWS}
        for a, tags_a in by_view.items():
            assert spans_from_tags(tags_a, a) == spans
            for b in VIEWS:  # iob2 -> a -> b
                assert convert(tags_a, a, b) == by_view[b]
        for b, tags_b in by_view.items():  # ... -> b -> iob2
            assert convert(tags_b, b, "iob2") == original
    assert n_chunks == sum(t.startswith("B-") for s in sentences for t in s.tags)


def test_encoding_labels():
    assert encoding_labels(["VP", "NP", "NP"], "iob2") == ["O", "B-NP", "I-NP", "B-VP", "I-VP"]
    assert encoding_labels({"NP"}, "ioe1") == ["O", "I-NP", "E-NP"]
    assert encoding_labels(["NP"], "oc") == ["O", "B-NP", "I-NP", "E-NP", "S-NP"]
    conll_types = ["ADJP", "ADVP", "CONJP", "INTJ", "LST", "NP", "PP", "PRT", "SBAR", "UCP",
                   "VP"]
    sizes = {v: len(encoding_labels(conll_types, v)) for v in VIEWS}
    assert sizes == {"iob1": 23, "iob2": 23, "ioe1": 23, "ioe2": 23, "oc": 45}
    # every tag that a view writes is in its label set
    labels = set(encoding_labels(["NP"], "ioe1"))
    assert set(TABLE1_TAGS["ioe1"]) <= labels
    with pytest.raises(InputError, match="got the string"):
        encoding_labels("NP", "iob2")
    with pytest.raises(InputError, match="non-empty string"):
        encoding_labels(["N P"], "iob2")


def test_majority_vote_of_identical_views_returns_each_view():
    votes = majority_vote(TABLE1_TAGS, VIEWS)
    assert votes == TABLE1_TAGS
    assert list(votes) == VIEWS
    # a single view, and a subset of target views
    assert majority_vote({"ioe1": TABLE1_TAGS["ioe1"]}) == {"ioe1": TABLE1_TAGS["ioe1"]}
    assert majority_vote({"iob2": TABLE1_TAGS["iob2"], "oc": TABLE1_TAGS["oc"]},
                         ["ioe2"]) == {"ioe2": TABLE1_TAGS["ioe2"]}


def test_majority_vote_two_against_one():
    # iob2 and ioe2 say one NP over tokens 0-1; oc says two one-token NPs
    views = {
        "iob2": ["B-NP", "I-NP", "O"],
        "ioe2": ["I-NP", "E-NP", "O"],
        "oc": ["S-NP", "S-NP", "O"],
    }
    out = majority_vote(views, VIEWS)
    assert out["oc"] == ["B-NP", "E-NP", "O"]
    assert out["iob2"] == ["B-NP", "I-NP", "O"]
    assert out["iob1"] == ["I-NP", "I-NP", "O"]
    assert out["ioe1"] == ["I-NP", "I-NP", "O"]
    # with the majority on the other side
    views["iob1"] = ["I-NP", "B-NP", "O"]
    views["ioe1"] = ["E-NP", "I-NP", "O"]
    assert majority_vote(views, ["oc"]) == {"oc": ["S-NP", "S-NP", "O"]}


def test_majority_vote_tie_break_and_repair():
    # in O+C: iob1 -> S O O, iob2 -> B E O, ioe1 -> B I E
    views = {
        "ioe1": ["I-NP", "I-NP", "I-NP"],
        "iob2": ["B-NP", "I-NP", "O"],
        "iob1": ["I-NP", "O", "O"],
    }
    # token 0: B wins 2-1; token 1: E / I / O tie, iob1 comes first -> O; token 2: O 2-1.
    # The voted O+C sequence B-NP O O is ill-formed and is read as the NP (0, 0).
    expected = {"oc": ["S-NP", "O", "O"], "iob2": ["B-NP", "O", "O"]}
    assert majority_vote(views, ["oc", "iob2"]) == expected
    reordered = dict(reversed(list(views.items())))
    assert majority_vote(reordered, ["oc", "iob2"]) == expected  # input order is irrelevant


def test_majority_vote_validation():
    with pytest.raises(InputError, match="one length"):
        majority_vote({"iob2": ["O"], "oc": ["O", "O"]})
    with pytest.raises(InputError, match="non-empty mapping"):
        majority_vote({})
    with pytest.raises(ConfigError, match=r"use \['iob2'\]"):
        majority_vote({"iob2": ["O"]}, "iob2")
    with pytest.raises(InputError, match="not a oc tag"):
        majority_vote({"oc": ["O", "X"], "iob2": ["O", "O"]})
    assert majority_vote({"iob2": [], "oc": []}) == {"iob2": [], "oc": []}


def test_all_view_pairs_on_a_multi_type_sentence():
    spans = [("NP", 0, 0), ("VP", 1, 2), ("NP", 3, 3), ("NP", 4, 6), ("PP", 7, 7),
             ("NP", 8, 8), ("NP", 9, 9)]
    n = 11
    for a, b in itertools.product(VIEWS, VIEWS):
        tags_a = tags_from_spans(spans, n, a)
        assert spans_from_tags(convert(tags_a, a, b), b) == spans
    assert tags_from_spans(spans, n, "iob1") == [
        "I-NP", "I-VP", "I-VP", "I-NP", "B-NP", "I-NP", "I-NP", "I-PP", "I-NP", "B-NP", "O"]
    assert tags_from_spans(spans, n, "ioe1") == [
        "I-NP", "I-VP", "I-VP", "E-NP", "I-NP", "I-NP", "I-NP", "I-PP", "E-NP", "I-NP", "O"]
