"""``make_dataset`` / ``decode_predictions`` of the sequence tasks (chunk, pos, citations):
the in-memory path agrees with the file readers, trains end to end, takes sklearn-crfsuite
feature dicts, and refuses bad input with its location."""

import dataclasses
import json
import warnings

import numpy as np
import pytest

from latentstruct.data.readers import ChunkSentence, ConlluSentence
from latentstruct.data.citations import Citation
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError
from latentstruct.learners import StructuredSVM
from latentstruct.tasks import ChunkTask, CitationTask, PosTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.sequence import check_tagger
from latentstruct.tasks.sequence.raw import (DictSentence, feature_dict_attributes,
                                             feature_dict_items)

CHUNK_X = [
    [("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("current", "JJ"), ("deficit", "NN")],
    [("Rockwell", "NNP"), ("said", "VBD"), ("the", "DT"), ("agreement", "NN")],
    [("It", "PRP"), ("will", "MD"), ("narrow", "VB"), ("sharply", "RB"), (".", ".")],
]
CHUNK_Y = [
    ["B-NP", "B-VP", "B-NP", "I-NP", "I-NP"],
    ["B-NP", "B-VP", "B-NP", "I-NP"],
    ["B-NP", "B-VP", "I-VP", "B-ADVP", "O"],
]
POS_X = [["The", "dog", "barks", "."], ["Cats", "sleep", "all", "day"], ["A", "cat", "sleeps"]]
POS_Y = [["DET", "NOUN", "VERB", "PUNCT"], ["NOUN", "VERB", "DET", "NOUN"],
         ["DET", "NOUN", "VERB"]]
CIT_X = [["A.", "Cau.", "Formal", "strategy.", "1992."], ["Enright.", "1978."],
         ["Strategy.", "127-136,", "1990."]]
CIT_Y = [["author", "author", "title", "title", "date"], ["author", "date"],
         ["title", "pages", "date"]]


def _chunk_file(tmp_path, X, Y=None):
    lines = []
    for k, sent in enumerate(X):
        for t, (w, p) in enumerate(sent):
            lines.append(f"{w} {p}" + ("" if Y is None else f" {Y[k][t]}"))
        lines.append("")
    path = tmp_path / "chunk.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _conllu_file(tmp_path, X, Y):
    out = []
    for sent, tags in zip(X, Y):
        out.append("# text = " + " ".join(sent))
        for k, (w, t) in enumerate(zip(sent, tags), 1):
            out.append("\t".join([str(k), w, w.lower(), t, "_", "_", "0" if k == 1 else "1",
                                  "dep", "_", "_"]))
        out.append("")
    path = tmp_path / "pos.conllu"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _cora_file(tmp_path, X, Y):
    lines = []
    for toks, labs in zip(X, Y):
        parts, start = [], 0
        for t in range(1, len(toks) + 1):
            if t == len(toks) or labs[t] != labs[start]:
                parts.append(f"<{labs[start]}> {' '.join(toks[start:t])} </{labs[start]}>")
                start = t
        lines += ["<NEWREFERENCE>", " ".join(parts)]
    path = tmp_path / "cora.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _same_corpus(a, b):
    assert np.array_equal(a.attr_indptr, b.attr_indptr)
    assert np.array_equal(a.attr_ids, b.attr_ids)
    assert np.array_equal(a.offsets, b.offsets)


def _same_targets(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.dtype == v.dtype == np.int64 and np.array_equal(u, v)


# --------------------------------------------------------------------------------------
# the in-memory path agrees with the readers
# --------------------------------------------------------------------------------------
def test_chunk_make_dataset_matches_read(tmp_path):
    path = _chunk_file(tmp_path, CHUNK_X, CHUNK_Y)
    from_file, from_lists = ChunkTask(), ChunkTask()
    read = from_file.read(path)
    made = from_lists.make_dataset(CHUNK_X, CHUNK_Y)
    assert [dataclasses.replace(r, line=0) for r in read.records] == list(made.records)
    assert made.records[0] == ChunkSentence(("He", "reckons", "the", "current", "deficit"),
                                            ("PRP", "VBZ", "DT", "JJ", "NN"),
                                            ("B-NP", "B-VP", "B-NP", "I-NP", "I-NP"), 0)
    assert list(made.targets) == [tuple(t) for t in CHUNK_Y] == list(read.targets)
    from_file.fit(read)
    from_lists.fit(made)
    assert from_lists.labels_ == from_file.labels_ == ["B-ADVP", "B-NP", "B-VP", "I-NP",
                                                       "I-VP", "O"]
    assert from_lists.tag_scheme_ == from_file.tag_scheme_ == "iob2"
    assert from_lists.attributes_ == "templates"
    _same_corpus(from_lists.featurize(made), from_file.featurize(read))
    _same_targets(from_lists.encode_targets(made.targets), from_file.encode_targets(read.targets))
    # one fitted task featurises both the same way
    _same_corpus(from_file.featurize(made), from_file.featurize(read))


def test_chunk_unlabelled_matches_word_pos_file(tmp_path):
    task = ChunkTask()
    read = task.read(_chunk_file(tmp_path, CHUNK_X), split="test")
    made = task.make_dataset(CHUNK_X)
    assert list(made.targets) == [None, None, None] == list(read.targets)
    assert [dataclasses.replace(r, line=0) for r in read.records] == list(made.records)
    assert made.records[1].tags == ("_",) * 4


def test_chunk_input_scheme_converts_like_read(tmp_path):
    task = ChunkTask().fit(ChunkTask().make_dataset(CHUNK_X, CHUNK_Y))
    assert task.tag_scheme_ == "iob2"
    iob1 = [["I-NP", "I-VP", "I-NP", "I-NP", "I-NP"]]
    task.set_params(input_scheme="iob1")
    made = task.make_dataset(CHUNK_X[:1], iob1)
    read = task.read(_chunk_file(tmp_path, CHUNK_X[:1], iob1), split="test")
    assert made.targets[0] == read.targets[0] == ("B-NP", "B-VP", "B-NP", "I-NP", "I-NP")
    assert made.records[0].tags == made.targets[0]


def test_pos_make_dataset_matches_read(tmp_path):
    path = _conllu_file(tmp_path, POS_X, POS_Y)
    from_file, from_lists = PosTask(), PosTask()
    read = from_file.read(path)
    made = from_lists.make_dataset(POS_X, POS_Y)
    assert made.records[0] == ConlluSentence.from_words(["The", "dog", "barks", "."])
    assert made.records[0].rows[1] == ("2", "dog", "_", "_", "_", "_", "_", "_", "_", "_")
    assert list(made.targets) == [tuple(t) for t in POS_Y] == list(read.targets)
    from_file.fit(read)
    from_lists.fit(made)
    assert from_lists.labels_ == from_file.labels_ == ["DET", "NOUN", "PUNCT", "VERB"]
    _same_corpus(from_lists.featurize(made), from_file.featurize(read))
    _same_targets(from_lists.encode_targets(made.targets), from_file.encode_targets(read.targets))


def test_pos_unlabelled_matches_plain_text(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("\n".join(" ".join(s) for s in POS_X) + "\n", encoding="utf-8")
    task = PosTask()
    read = task.read(path, split="test")
    made = task.make_dataset(POS_X)
    assert [dataclasses.replace(r, line=0) for r in read.records] == list(made.records)
    assert list(made.targets) == [None] * 3
    task.fit(task.make_dataset(POS_X, POS_Y))
    _same_corpus(task.featurize(made), task.featurize(read))


def test_pos_upos_case_tags_are_checked_and_kept():
    task = PosTask(tag_column="upos+case")
    data = task.make_dataset([["Gizonak", "ikusi", "du"]],
                             [["NOUN|Case=Erg", "VERB", "AUX"]])
    assert data.targets == [("NOUN|Case=Erg", "VERB", "AUX")]
    with pytest.raises(InputError, match=r"y\[0\]\[0\]: tag 'NOUN\|Case=' has an empty case"):
        task.make_dataset([["a"]], [["NOUN|Case="]])
    with pytest.raises(InputError, match=r"y\[0\]\[0\]: tag 'NN\|Case=Erg' is not UPOS"):
        task.make_dataset([["a"]], [["NN|Case=Erg"]])
    # xpos tags are free
    assert PosTask(tag_column="xpos").make_dataset([["a"]], [["NN"]]).targets == [("NN",)]


def test_citations_make_dataset_matches_read(tmp_path):
    path = _cora_file(tmp_path, CIT_X, CIT_Y)
    from_file, from_lists = CitationTask(), CitationTask()
    read = from_file.read(path)
    made = from_lists.make_dataset(CIT_X, CIT_Y)
    assert [dataclasses.replace(r, line=0) for r in read.records] == list(made.records)
    assert made.records[1] == Citation(("Enright.", "1978."), ("author", "date"), 0)
    from_file.fit(read)
    from_lists.fit(made)
    assert from_lists.labels_ == ["author", "date", "pages", "title"]
    _same_corpus(from_lists.featurize(made), from_file.featurize(read))
    _same_targets(from_lists.encode_targets(made.targets), from_file.encode_targets(read.targets))
    plain = tmp_path / "plain.txt"
    plain.write_text("\n".join(" ".join(t) for t in CIT_X) + "\n", encoding="utf-8")
    unlabelled = from_lists.make_dataset(CIT_X)
    assert [dataclasses.replace(r, line=0) for r in from_file.read(plain, split="test").records] \
        == list(unlabelled.records)
    assert unlabelled.records[1].labels == ("_", "_")


# --------------------------------------------------------------------------------------
# training end to end
# --------------------------------------------------------------------------------------
def _train(task, X, y, **kw):
    data = task.make_dataset(X, y)
    task.fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StructuredSVM(task, C=10.0, max_iter=30, random_state=0, **kw).fit(
            task.featurize(data), task.encode_targets(data.targets))
    return model


@pytest.mark.parametrize("task_cls, X, y", [
    (ChunkTask, CHUNK_X, CHUNK_Y), (PosTask, POS_X, POS_Y), (CitationTask, CIT_X, CIT_Y)])
def test_ssvm_end_to_end_on_lists(task_cls, X, y):
    task = task_cls()
    model = _train(task, X, y)
    unlabelled = task.make_dataset(X)
    predicted = task.decode_predictions(model.predict(task.featurize(unlabelled)))
    assert [len(p) for p in predicted] == [len(s) for s in X]
    assert all(isinstance(t, str) for p in predicted for t in p)
    assert predicted == [list(t) for t in y]  # the tiny training set is fitted exactly
    labelled = task.make_dataset(X, y)
    score = task.evaluate_model(labelled, model.predict)
    assert score[task.score_metric] == 1.0


def test_fit_and_evaluate_refuse_unlabelled_lists():
    task = ChunkTask()
    with pytest.raises(InputError, match="no gold chunk tags .* pass y"):
        task.fit(task.make_dataset(CHUNK_X))
    model = _train(task, CHUNK_X, CHUNK_Y)
    with pytest.raises(InputError, match="no gold chunk labels"):
        task.evaluate_model(task.make_dataset(CHUNK_X), model.predict)
    pos = PosTask()
    pos_model = _train(pos, POS_X, POS_Y)
    with pytest.raises(InputError, match="no gold pos labels"):
        pos.evaluate_model(pos.make_dataset(POS_X), pos_model.predict)


def test_write_predictions_of_list_data(tmp_path):
    task = PosTask()
    model = _train(task, POS_X, POS_Y)
    data = task.make_dataset(POS_X)
    task.write_predictions(tmp_path / "out.conllu", data, model.predict(task.featurize(data)))
    back = PosTask().read(tmp_path / "out.conllu", split="test")
    assert [list(t) for t in back.targets] == POS_Y


# --------------------------------------------------------------------------------------
# sklearn-crfsuite feature dicts
# --------------------------------------------------------------------------------------
def word2features(sent, i):
    """sklearn-crfsuite's CoNLL tutorial feature function (shortened), on (word, POS)."""
    word, postag = sent[i]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "postag": postag,
    }
    if i > 0:
        features["-1"] = {"word.lower()": sent[i - 1][0].lower(),
                          "word.istitle()": sent[i - 1][0].istitle()}
    else:
        features["BOS"] = True
    if i == len(sent) - 1:
        features["EOS"] = 1
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


DICT_X = [sent2features(s) for s in CHUNK_X]


def test_feature_dict_attributes_follow_crfsuite_semantics():
    token = {"bias": 1.0, "w": "Dogs", "up": False, "title": True, "zero": 0, "one": 1,
             "np_true": np.bool_(True), "np_one": np.float64(1.0), "np_zero": np.int64(0),
             "suffix": ["s", "gs"], "shape": ("Xx",), "set": {"b", "a"},
             "-1": {"w": "the", "title": 1, "deeper": {"x": "y", "on": True, "off": False}}}
    # python-crfsuite's names (``key:value``); False and 0 are kept with the value 0
    assert feature_dict_attributes(token) == (
        "bias", "w:Dogs", "up", "title", "zero", "one", "np_true", "np_one", "np_zero",
        "suffix:s", "suffix:gs", "shape:Xx", "set:a", "set:b", "-1:w:the", "-1:title",
        "-1:deeper:x:y", "-1:deeper:on", "-1:deeper:off")
    # a repeat is one attribute with the summed value (the scores of CRFsuite's two copies)
    assert feature_dict_items({"a": ["x", "x"], "b": "1"}) == (("a:x", "b:1"), (2.0, 1.0))
    assert feature_dict_items({"none": False}) == (("none",), (0.0,))
    # the rule of models saved before (binary, ``key=value``) is kept for them
    assert feature_dict_attributes(token, naming="legacy") == (
        "bias", "w=Dogs", "title", "one", "np_true", "np_one", "suffix=s", "suffix=gs",
        "shape=Xx", "set=a", "set=b", "-1:w=the", "-1:title", "-1:deeper:x=y", "-1:deeper:on")
    assert feature_dict_attributes({"a": ["x", "x"], "b": "1"}, naming="legacy") == (
        "a=x", "b=1")
    assert feature_dict_attributes({"none": False}, naming="legacy") == ()


def test_dict_sentences_featurize_to_exactly_their_attributes():
    task = ChunkTask()
    data = task.make_dataset(DICT_X, CHUNK_Y)
    assert all(isinstance(r, DictSentence) for r in data.records)
    assert data.records[0].attributes[0] == (
        "bias", "word.lower():he", "word[-3:]:He", "word.isupper()", "word.istitle()",
        "postag:PRP", "BOS")
    assert data.records[0].attributes[1] == (
        "bias", "word.lower():reckons", "word[-3:]:ons", "word.isupper()", "word.istitle()",
        "postag:VBZ", "-1:word.lower():he", "-1:word.istitle()")
    # False is kept with the value 0 (python-crfsuite's item), so the sentence has values
    assert data.records[0].values[0] == (1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0)
    assert data.records[2].attributes[4][-1] == "EOS"
    task.fit(data)
    assert task.attributes_ == "dicts" and task.tag_scheme_ == "iob2"
    every = {a for r in data.records for tok in r.attributes for a in tok}
    assert set(task.attr_index_.names) == every  # no built-in template
    X = task.featurize(data)
    assert X.n_tokens == sum(len(s) for s in CHUNK_X)
    first = [task.attr_index_.names[k] for k in X.attr_ids[X.attr_indptr[0]:X.attr_indptr[1]]]
    # every attribute but the ones whose value is 0 (False): they score nothing
    rec = data.records[0]
    assert first == [a for a, v in zip(rec.attributes[0], rec.values[0]) if v != 0]


@pytest.mark.parametrize("task_cls, X, y", [
    (ChunkTask, CHUNK_X, CHUNK_Y), (PosTask, [[(w, "_") for w in s] for s in POS_X], POS_Y),
    (CitationTask, [[(w, "_") for w in s] for s in CIT_X], CIT_Y)])
def test_ssvm_end_to_end_on_feature_dicts(task_cls, X, y):
    task = task_cls()
    dicts = [sent2features(s) for s in X]
    model = _train(task, dicts, y)
    predicted = task.decode_predictions(model.predict(task.featurize(task.make_dataset(dicts))))
    assert [len(p) for p in predicted] == [len(s) for s in X]
    assert predicted == [list(t) for t in y]


def test_dict_model_state_round_trip_and_kind_checks(tmp_path):
    task = ChunkTask()
    _train(task, DICT_X, CHUNK_Y)
    params, (state, arrays) = task.get_params(), task.get_state()
    assert state["attributes"] == "dicts"
    state = json.loads(json.dumps(state))
    params = json.loads(json.dumps(params))
    loaded = ChunkTask.from_state(params, state, arrays)
    assert loaded.attributes_ == "dicts" and loaded.labels_ == task.labels_
    data = loaded.make_dataset(DICT_X, CHUNK_Y)
    _same_corpus(loaded.featurize(data), task.featurize(data))
    # a dict model refuses sentences of words, from a file (the CLI) or from lists
    read = loaded.read(_chunk_file(tmp_path, CHUNK_X, CHUNK_Y), split="test")
    for words in (read, loaded.make_dataset(CHUNK_X)):
        with pytest.raises(InputError, match=r"trained on per-token feature dicts \(sklearn-"
                                             r"crfsuite format\).*command line cannot compute "
                                             r"them; predict from Python with the same feature "
                                             r"function"):
            loaded.featurize(words)
    # a template model refuses dicts
    words_task = ChunkTask().fit(ChunkTask().make_dataset(CHUNK_X, CHUNK_Y))
    with pytest.raises(InputError, match="built-in attribute templates .* sentence 0 is given "
                                         "as per-token feature dicts"):
        words_task.featurize(data)
    # and survives its own round trip as a template model
    w_state = json.loads(json.dumps(words_task.get_state()[0]))
    assert ChunkTask.from_state(words_task.get_params(), w_state,
                                words_task.get_state()[1]).attributes_ == "templates"


def test_older_model_state_means_templates_and_bad_kind_is_refused():
    task = PosTask().fit(PosTask().make_dataset(POS_X, POS_Y))
    state, arrays = task.get_state()
    old = {k: v for k, v in state.items() if k != "attributes"}
    assert PosTask.from_state(task.get_params(), old, arrays).attributes_ == "templates"
    with pytest.raises(ModelFormatError, match="unknown attribute kind 'words'"):
        PosTask.from_state(task.get_params(), {**state, "attributes": "words"}, arrays)


def test_dict_sentences_refuse_jlis_shuffles_writing_and_tagger_use(tmp_path):
    data = ChunkTask().make_dataset(DICT_X, CHUNK_Y)
    with pytest.raises(ConfigError, match="n_binary=1 .* per-token feature dicts .* shuffled"):
        ChunkTask(n_binary=1).training_sample(data)
    # S-only sampling does not shuffle, so it is fine
    assert len(ChunkTask(n_structured_tokens=5).training_sample(data)) >= 1
    task = ChunkTask()
    model = _train(task, DICT_X, CHUNK_Y)
    with pytest.raises(InputError, match="hold no words, so .*task.decode_predictions"):
        task.write_predictions(tmp_path / "o.txt", data, model.predict(task.featurize(data)))
    pos = PosTask()
    pos_model = _train(pos, [sent2features([(w, "_") for w in s]) for s in POS_X], POS_Y)
    with pytest.raises(ConfigError, match="tagger was trained on per-token feature dicts"):
        check_tagger(pos, pos_model.coef_)


def test_fit_refuses_a_dataset_mixing_kinds():
    words = ChunkTask().make_dataset(CHUNK_X[:1], CHUNK_Y[:1])
    dicts = ChunkTask().make_dataset(DICT_X[1:2], CHUNK_Y[1:2])
    mixed = Dataset(list(words.records) + list(dicts.records),
                    list(words.targets) + list(dicts.targets))
    with pytest.raises(InputError, match="mixes sentences given as per-token feature dicts"):
        ChunkTask().fit(mixed)


# --------------------------------------------------------------------------------------
# bad input: an InputError naming the location
# --------------------------------------------------------------------------------------
GOOD_PAIR = [("a", "DT")]
BAD_CASES = [
    # (task, X, y, pattern)
    ("chunk", [GOOD_PAIR, GOOD_PAIR], [["O"]], r"X has 2 examples but y has 1"),
    ("chunk", "He PRP B-NP", None, r"X is a str"),
    ("chunk", [[]], None, r"X\[0\]: is an empty sentence"),
    ("chunk", ["He reckons"], None, r"X\[0\]: is a string"),
    ("chunk", [GOOD_PAIR, ["He"]], None, r"X\[1\]\[0\]: is the string 'He'; the chunker needs "
                                         r"\(word, POS\) pairs"),
    ("chunk", [[("a", "DT", "O")]], None, r"X\[0\]\[0\]: is \('a', 'DT', 'O'\); expected a "
                                          r"\(word, POS\) pair"),
    ("chunk", [[("a b", "DT")]], None, r"X\[0\]\[0\]: word 'a b' holds white space"),
    ("chunk", [[("", "DT")]], None, r"X\[0\]\[0\]: word is empty"),
    ("chunk", [[("a", 3)]], None, r"X\[0\]\[0\]: POS tag must be a string, got int"),
    ("chunk", [[("a", "D T")]], None, r"X\[0\]\[0\]: POS tag 'D T' holds white space"),
    ("chunk", [[("x" * 100_001, "NN")]], None, r"X\[0\]\[0\]: word has 100001 characters, "
                                               r"more than the limit of 100000"),
    ("chunk", [GOOD_PAIR], [["B-NP", "I-NP"]], r"y\[0\]: has 2 tags but X\[0\] has 1 tokens"),
    ("chunk", [GOOD_PAIR], [["NP"]], r"y\[0\]\[0\]: chunk tag 'NP' is not 'O' or an IOB tag"),
    ("chunk", [GOOD_PAIR], [[""]], r"y\[0\]\[0\]: tag is empty"),
    ("chunk", [GOOD_PAIR], [[3]], r"y\[0\]\[0\]: tag must be a string, got int"),
    ("chunk", [GOOD_PAIR], ["O"], r"y\[0\]: is a str \('O'\); expected a list of tags"),
    ("chunk", [GOOD_PAIR], [["_"]], r"y\[0\]\[0\]: '_' marks a missing tag"),
    ("pos", [["dogs", ("bark", "VBP")]], None, r"X\[0\]\[1\]: is a tuple .* takes words"),
    ("pos", [["new york"]], None, r"X\[0\]\[0\]: word 'new york' holds white space"),
    ("pos", [["dogs"]], [["NNS"]], r"y\[0\]\[0\]: tag 'NNS' is not UPOS: expected one of the "
                                   r"17 UD tags .* tag_column='xpos'"),
    ("pos", [["a", "b"], ["c"]], [["DET", "NOUN"], ["NOUN", "VERB"]],
     r"y\[1\]: has 2 tags but X\[1\] has 1 tokens"),
    ("citations", [["A.", 7]], None, r"X\[0\]\[1\]: token must be a string, got int"),
    ("citations", [["A."]], [["1st field"]], r"y\[0\]\[0\]: tag '1st field' holds white space"),
    ("citations", [["A."]], [["1st"]], r"y\[0\]\[0\]: field label '1st' is not a letter "
                                       r"followed by"),
    # feature dicts
    ("chunk", [[{"bias": 1.0}, {"w": 2e6}]], None,
     r"X\[0\]\[1\]: attribute 'w' has the value 2000000.0; .* magnitude at most 1e\+06"),
    ("chunk", [[{"a": {"b": float("inf")}}]], None,
     r"X\[0\]\[0\]: attribute 'a:b' has the value inf"),
    ("chunk", [[{"a": 10 ** 400}]], None, r"X\[0\]\[0\]: attribute 'a' has the value inf"),
    ("chunk", [[{"a": b"\xff"}]], None, r"X\[0\]\[0\]: value b'\\xff' is bytes but not UTF-8"),
    ("chunk", [[{"a": 1j}]], None, r"X\[0\]\[0\]: feature 'a' has a value of type complex"),
    ("chunk", [[{"": 1}]], None, r"X\[0\]\[0\]: .* attribute with an empty name"),
    ("chunk", [[{"a": None}]], None, r"X\[0\]\[0\]: feature 'a' has a value of type NoneType"),
    ("chunk", [[{"a": object()}]], None, r"X\[0\]\[0\]: feature 'a' has a value of type object"),
    ("chunk", [[{"a": ["x", 1]}]], None, r"X\[0\]\[0\]: feature 'a' is a list holding int 1"),
    ("chunk", [[{1: "x"}]], None, r"X\[0\]\[0\]: feature dict key 1 must be a string"),
    ("chunk", [[{"a": "x"}, "b"]], None, r"X\[0\]\[1\]: expected a feature dict, got str"),
    ("chunk", [[{"a": "x"}], GOOD_PAIR], None,
     r"X\[1\]: is given as \(word, POS\) pairs but X\[0\] as per-token feature dicts "
     r"\(sklearn-crfsuite format\); all sentences of X must be of one kind"),
    ("pos", [["a"], [{"a": "x"}]], None,
     r"X\[1\]: is given as per-token feature dicts .* but X\[0\] as words"),
    ("pos", [["a", {"a": "x"}]], None, r"X\[0\]\[1\]: is a feature dict but X\[0\]\[0\] is not"),
    ("citations", [[{"a": float("nan")}]], None, r"X\[0\]\[0\]: attribute 'a' has the value nan"),
]


@pytest.mark.parametrize("name, X, y, pattern", BAD_CASES)
def test_bad_input_names_its_location(name, X, y, pattern):
    task = {"chunk": ChunkTask, "pos": PosTask, "citations": CitationTask}[name]()
    with pytest.raises(InputError, match=pattern):
        task.make_dataset(X, y)


def test_empty_x_is_refused():
    with pytest.raises(InputError, match="X holds no sentences"):
        PosTask().make_dataset([])


def test_pos_feature_dicts_take_any_tag_set_words_keep_the_upos_check():
    """A dict-trained pos model never writes a CoNLL-U UPOS column (the command line refuses
    it), so its tags may be NER or chunk tags; word input keeps the reader's UPOS check."""
    from latentstruct.exceptions import InputError
    from latentstruct.tasks import PosTask

    data = PosTask().make_dataset([[{"w": "He"}, {"w": "ran"}]], [["B-NP", "B-VP"]])
    assert data.targets == [("B-NP", "B-VP")]
    with pytest.raises(InputError, match=r"y\[0\]\[0\]: tag 'B-NP' is not UPOS"):
        PosTask().make_dataset([["He", "ran"]], [["B-NP", "B-VP"]])
