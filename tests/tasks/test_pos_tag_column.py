"""``pos`` with a choice of tag column: UPOS, XPOS, or UPOS joined with the Case feature."""

from collections import Counter

import numpy as np
import pytest

from latentstruct.data.readers import read_conllu
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.options import parameter_docs
from latentstruct.tasks import PosTask
from latentstruct.tasks.sequence.pos import case_value, split_upos_case, upos_case_tags, with_case

# A multiword token (1-2), an empty node (3.1), FEATS with Case, a multi-valued Case, a
# layered Case[psor] (not the word's own case) and words without FEATS.
TAGGED = (
    "# sent_id = a\n"
    "# text = I'm here\n"
    "1-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1\t2\tnsubj\t_\t_\n"
    "2\t'm\tbe\tAUX\tVBP\tMood=Ind|Tense=Pres\t0\troot\t_\t_\n"
    "3\there\there\tADV\tRB\tPronType=Dem\t2\tadvmod\t_\t_\n"
    "3.1\tis\tbe\tVERB\tVBZ\t_\t_\t_\t2:orphan\t_\n"
    "\n"
    "# sent_id = b\n"
    "1\tEBk\tEB\tPROPN\tNNP\tCase=Erg|Definite=Def|Number=Sing\t2\tnsubj\t_\t_\n"
    "2\tzuen\t*edun\tAUX\tVBD\tMood=Ind\t0\troot\t_\t_\n"
    "3\tgizonak\tgizon\tNOUN\tNN\tCase=Abs,Erg|Number=Plur\t2\tobj\t_\t_\n"
    "4\tbere\tbera\tPRON\tPRP$\tCase[psor]=Gen|Number=Sing\t3\tnmod\t_\t_\n"
    "5\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_\n"
    "\n"
)


@pytest.fixture
def tagged(tmp_path):
    path = tmp_path / "tagged.conllu"
    path.write_text(TAGGED, encoding="utf-8")
    return path


@pytest.mark.parametrize("column, expected", [
    ("upos", [("PRON", "AUX", "ADV"), ("PROPN", "AUX", "NOUN", "PRON", "PUNCT")]),
    ("xpos", [("PRP", "VBP", "RB"), ("NNP", "VBD", "NN", "PRP$", ".")]),
    ("upos+case", [("PRON|Case=Nom", "AUX", "ADV"),
                   ("PROPN|Case=Erg", "AUX", "NOUN|Case=Abs,Erg", "PRON", "PUNCT")]),
])
def test_each_tag_column_reads_its_tags(tagged, column, expected):
    data = PosTask(tag_column=column).read(tagged)
    assert [tuple(t) for t in data.targets] == expected
    assert [r.words for r in data.records] == [("I", "'m", "here"),
                                               ("EBk", "zuen", "gizonak", "bere", ".")]


def test_default_is_upos():
    assert PosTask().tag_column == "upos"
    assert PosTask.param_defaults()["tag_column"] == "upos"


def test_composite_tag_helpers(tagged):
    assert case_value("_") is None
    assert case_value("Animacy=Inan|Case=Abs|Number=Sing") == "Abs"
    assert case_value("Case=Abs,Erg") == "Abs,Erg"
    assert case_value("Case[psor]=Gen|Number=Sing") is None
    assert split_upos_case("NOUN|Case=Abs,Erg") == ("NOUN", "Abs,Erg")
    assert split_upos_case("PUNCT") == ("PUNCT", None)
    # replaced in place, inserted in alphabetical order, removed, empty -> "_"
    assert with_case("Case=Erg|Definite=Def", "Abs") == "Case=Abs|Definite=Def"
    assert with_case("Animacy=Inan|Number=Sing", "Abs") == "Animacy=Inan|Case=Abs|Number=Sing"
    assert with_case("Mood=Ind", "Erg") == "Case=Erg|Mood=Ind"
    assert with_case("Animacy=Anim", "Erg") == "Animacy=Anim|Case=Erg"
    assert with_case("_", "Ine") == "Case=Ine"
    assert with_case("Case=Abs|Number=Plur", None) == "Number=Plur"
    assert with_case("Case=Abs", None) == "_"
    assert with_case("_", None) == "_"
    sent = read_conllu(tagged)[1]
    assert upos_case_tags(sent) == ("PROPN|Case=Erg", "AUX", "NOUN|Case=Abs,Erg", "PRON", "PUNCT")


def test_tag_column_is_documented_in_the_option_table():
    doc = parameter_docs(PosTask)["tag_column"]
    assert doc.startswith("The tags to learn and predict: UPOS (column 4), XPOS (column 5)")
    assert doc.endswith(".")


def test_unknown_tag_column_is_refused_before_the_file_is_opened(tmp_path):
    task = PosTask(tag_column="XPOS")
    with pytest.raises(ConfigError, match=r"'tag_column' parameter of the 'pos' task must be a "
                                          r"str among \{'upos', 'xpos', 'upos\+case'\}\. Got "
                                          r"'XPOS' instead: upos: universal tags"):
        task.read(tmp_path / "does-not-exist.conllu")


def test_xpos_on_a_file_without_xpos(tmp_path):
    path = tmp_path / "eu.conllu"
    path.write_text("1\tEBk\tEB\tPROPN\t_\tCase=Erg\t0\troot\t_\t_\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="tag_column=upos.*upos\\+case") as info:
        PosTask(tag_column="xpos").read(path)
    assert info.value.path == str(path) and info.value.line is None
    # as evaluation / prediction input it is unlabelled text: read, but not scored
    task = PosTask(tag_column="xpos")
    data = task.read(path, split="test")
    assert list(data.targets) == [("_",)]
    with pytest.raises(InputError, match=r"XPOS \(column 5\) is '_' for every word"):
        task.evaluate_model(data, lambda X: [np.zeros(1, np.int64)])


def test_xpos_missing_on_some_words_names_the_first_line(tmp_path):
    path = tmp_path / "mixed.conllu"
    path.write_text(TAGGED.replace("\tADV\tRB\t", "\tADV\t_\t")
                    .replace("\tAUX\tVBD\t", "\tAUX\t_\t"), encoding="utf-8")
    with pytest.raises(InputError, match=r"XPOS \(column 5\) of word 3 \('here'\) is '_'") as info:
        PosTask(tag_column="xpos").read(path, split="test")
    assert (info.value.path, info.value.line) == (str(path), 6)


def test_upos_case_predictions_go_to_upos_and_the_case_feature(tagged, tmp_path):
    task = PosTask(tag_column="upos+case")
    data = task.read(tagged)
    task.fit(data)
    pred_tags = [("PROPN|Case=Erg", "AUX", "ADV"),
                 ("ADV", "PRON|Case=Nom", "NOUN|Case=Abs,Erg", "PRON", "PUNCT")]
    out = tmp_path / "out.conllu"
    task.write_predictions(out, data, task.encode_targets(pred_tags))
    back = read_conllu(out)
    assert [s.upos for s in back] == [("PROPN", "AUX", "ADV"),
                                      ("ADV", "PRON", "NOUN", "PRON", "PUNCT")]
    assert [s.feats for s in back] == [
        ("Case=Erg|Number=Sing|Person=1", "Mood=Ind|Tense=Pres", "PronType=Dem"),
        ("Definite=Def|Number=Sing", "Case=Nom|Mood=Ind", "Case=Abs,Erg|Number=Plur",
         "Case[psor]=Gen|Number=Sing", "_"),
    ]
    # reading the output with the same column gives the predictions back
    assert [tuple(t) for t in task.read(out).targets] == pred_tags
    # XPOS, the multiword token, the empty node and the comments are untouched
    assert [s.xpos for s in back] == [s.xpos for s in data.records]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == TAGGED.splitlines()[:3] and lines[6] == TAGGED.splitlines()[6]


def test_xpos_predictions_go_to_the_xpos_column(tagged, tmp_path):
    task = PosTask(tag_column="xpos")
    data = task.read(tagged)
    task.fit(data)
    pred = [("RB", "RB", "RB"), ("NN", "NN", "NN", "NN", "NN")]
    out = tmp_path / "out.conllu"
    task.write_predictions(out, data, task.encode_targets(pred))
    back = read_conllu(out)
    assert [s.xpos for s in back] == pred
    assert [s.upos for s in back] == [s.upos for s in data.records]
    assert [s.feats for s in back] == [s.feats for s in data.records]


def test_tag_column_round_trips_through_the_model_state(tagged):
    task = PosTask(tag_column="xpos")
    task.fit(task.read(tagged))
    params = task.get_params()
    assert params["tag_column"] == "xpos"
    state, arrays = task.get_state()
    again = PosTask.from_state(params, state, arrays)
    assert again.tag_column == "xpos" and again.labels_ == task.labels_
    # a model saved before the option existed has no tag_column: it reads UPOS
    old = {k: v for k, v in params.items() if k != "tag_column"}
    assert PosTask.from_state(old, state, arrays).tag_column == "upos"
    with pytest.raises(ConfigError, match="'tag_column' parameter of the 'pos' task must be"):
        PosTask.from_state({**params, "tag_column": "feats"}, state, arrays)
    with pytest.raises(ConfigError, match="cannot change 'tag_column' of a fitted 'pos' task"):
        task.set_params(tag_column="upos")


# --- real data ----------------------------------------------------------------------------
@pytest.mark.slow
def test_ewt_xpos_has_49_ptb_tags(require_data):
    path = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    data = PosTask(tag_column="xpos").read(path)
    tags = Counter(t for tags in data.targets for t in tags)
    assert len(tags) == 49
    assert {"NN", "NNP", "VBZ", "PRP$", "-LRB-", "HYPH", "ADD", "NFP", "GW", "AFX"} <= set(tags)
    assert "_" not in tags


@pytest.mark.slow
def test_basque_upos_case_tagset(require_data):
    train = require_data("ud_basque_bdt", "eu-ud-train.conllu")
    dev = require_data("ud_basque_bdt", "eu-ud-dev.conllu")
    task = PosTask(tag_column="upos+case")
    train_tags = Counter(t for tags in task.read(train).targets for t in tags)
    dev_tags = Counter(t for tags in task.read(dev, split="test").targets for t in tags)
    assert (len(train_tags), len(dev_tags), len(set(train_tags) | set(dev_tags))) == (124, 115, 132)
    assert len({t.split("|")[0] for t in train_tags}) == 16
    assert train_tags["NOUN|Case=Abs"] == 5745 and train_tags["NOUN"] == 4905
    unseen = set(dev_tags) - set(train_tags)
    assert len(unseen) == 8 and sum(dev_tags[t] for t in unseen) == 8
    # and Basque has no XPOS to learn
    with pytest.raises(InputError, match="tag_column=upos"):
        PosTask(tag_column="xpos").read(train)


def test_write_conllu_column(tagged, tmp_path):
    from latentstruct.data.readers import write_conllu

    sents = read_conllu(tagged)
    out = tmp_path / "x.conllu"
    write_conllu(out, sents, [["A"] * 3, ["B"] * 5], column="XPOS")
    back = read_conllu(out)
    assert [s.xpos for s in back] == [("A",) * 3, ("B",) * 5]
    assert [s.upos for s in back] == [s.upos for s in sents]
    with pytest.raises(ValueError, match="'UPOS' or 'XPOS'"):
        write_conllu(out, sents, None, column="FEATS")
    with pytest.raises(InputError, match="predicted XPOS 'a b'"):
        write_conllu(out, sents, [["a b"] * 3, ["B"] * 5], column="XPOS")
    # word_line: comments and rows are contiguous lines
    assert [sents[0].word_line(k) for k in range(3)] == [4, 5, 6]
    assert [sents[1].word_line(k) for k in range(5)] == [10, 11, 12, 13, 14]
