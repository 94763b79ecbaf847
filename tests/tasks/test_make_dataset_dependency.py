"""``make_dataset`` / ``decode_predictions`` of the dependency task: the in-memory path agrees
with the CoNLL-U and ``.dp`` readers, trains end to end, and refuses bad trees with their
location."""

import warnings

import numpy as np
import pytest

from latentstruct.data.dependency import DependencySentence, read_dependencies
from latentstruct.exceptions import InputError
from latentstruct.learners import StructuredSVM
from latentstruct.tasks.dependency import DependencyTask, DepTarget

UD_X = [[("Dogs", "NOUN"), ("bark", "VERB"), (".", "PUNCT")],
        [("The", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
        [("Birds", "NOUN"), ("sing", "VERB"), ("loudly", "ADV"), ("!", "PUNCT")]]
UD_Y = [[(2, "nsubj"), (0, "root"), (2, "punct")],
        [(2, "det"), (3, "nsubj"), (0, "root")],
        [(2, "nsubj"), (0, "root"), (2, "advmod"), (2, "punct")]]
PTB_X = [[("Dogs", "NNS"), ("bark", "VBP"), (".", ".")],
         [("The", "DT"), ("cat", "NN"), ("sleeps", "VBZ"), (",", ","), ("then", "RB")]]
PTB_Y = [[2, 0, 2], [2, 3, 0, 3, 3]]


def _conllu(tmp_path, X, Y):
    out = []
    for sent, tree in zip(X, Y):
        for k, ((w, p), (h, d)) in enumerate(zip(sent, tree), 1):
            out.append("\t".join([str(k), w, "_", p, "_", "_", str(h), d, "_", "_"]))
        out.append("")
    path = tmp_path / "dep.conllu"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _dp(tmp_path, X, Y):
    out = []
    for sent, heads in zip(X, Y):
        out += [f"{w}\t{p}\t{h}" for (w, p), h in zip(sent, heads)] + [""]
    path = tmp_path / "dep.dp"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _same_corpus(a, b):
    for name in ("word", "prefix", "pos", "scored", "offsets"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def _same_targets(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert np.array_equal(u, v)


def test_ud_make_dataset_matches_conllu_read(tmp_path):
    from_file = DependencyTask(hash_bits=10, label_hash_bits=5)
    from_lists = DependencyTask(hash_bits=10, label_hash_bits=5)
    read = from_file.read(_conllu(tmp_path, UD_X, UD_Y))
    made = from_lists.make_dataset(UD_X, UD_Y)
    assert list(made.targets) == list(read.targets)
    assert made.targets[0] == DepTarget((2, 0, 2), ("nsubj", "root", "punct"),
                                        (True, True, False))
    rec = made.records[0]
    assert isinstance(rec, DependencySentence) and rec.file_format == "conllu"
    assert (rec.upos, rec.xpos, rec.line, rec.path) == \
        (("NOUN", "VERB", "PUNCT"), ("_",) * 3, 0, "")
    for r, m in zip(read.records, made.records):
        assert (r.words, r.upos, r.heads, r.deprels) == (m.words, m.upos, m.heads, m.deprels)
    from_file.fit(read)
    from_lists.fit(made)
    for attr in ("labels_", "labelled_", "single_root_", "pos_column_", "data_format_"):
        assert getattr(from_lists, attr) == getattr(from_file, attr), attr
    assert from_lists.labels_ == ["advmod", "det", "nsubj", "punct", "root"]
    assert (from_lists.pos_column_, from_lists.single_root_) == ("upos", True)
    _same_corpus(from_lists.featurize(made), from_file.featurize(read))
    _same_targets(from_lists.encode_targets(made.targets), from_file.encode_targets(read.targets))


def test_ptb_make_dataset_matches_dp_read(tmp_path):
    from_file, from_lists = DependencyTask(hash_bits=10), DependencyTask(hash_bits=10)
    read = from_file.read(_dp(tmp_path, PTB_X, PTB_Y))
    made = from_lists.make_dataset(PTB_X, PTB_Y)
    assert list(made.targets) == list(read.targets)
    # PTB punctuation ("," and ".") is not scored
    assert made.targets[1] == DepTarget((2, 3, 0, 3, 3), ("_",) * 5,
                                        (True, True, True, False, True))
    assert made.records[1].file_format == "dp" and made.records[1].upos == ("_",) * 5
    from_file.fit(read)
    from_lists.fit(made)
    resolved = (from_lists.pos_column_, from_lists.single_root_, from_lists.labelled_)
    assert resolved == (from_file.pos_column_, from_file.single_root_, from_file.labelled_)
    assert resolved == ("xpos", False, False)
    _same_corpus(from_lists.featurize(made), from_file.featurize(read))
    _same_targets(from_lists.encode_targets(made.targets), from_file.encode_targets(read.targets))
    # a forest is a valid .dp tree, as the reader allows it
    forest = from_lists.make_dataset([[("a", "DT"), ("b", "NN")]], [[0, 0]])
    assert forest.targets[0].heads == (0, 0)


def _train(task, X, y):
    data = task.make_dataset(X, y)
    task.fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StructuredSVM(task, C=10.0, max_iter=30, random_state=0).fit(
            task.featurize(data), task.encode_targets(data.targets))


def test_labelled_parser_end_to_end_gives_head_deprel_pairs():
    task = DependencyTask(hash_bits=12, label_hash_bits=6)
    model = _train(task, UD_X, UD_Y)
    unlabelled = task.make_dataset(UD_X)
    assert list(unlabelled.targets) == [None] * 3
    assert unlabelled.records[0].heads == (-1, -1, -1)
    predicted = task.decode_predictions(model.predict(task.featurize(unlabelled)))
    assert [len(p) for p in predicted] == [3, 3, 4]
    assert predicted == UD_Y  # fitted exactly; same form as y, so it round-trips
    assert all(type(h) is int for tree in predicted for h, _ in tree)
    assert task.make_dataset(UD_X, predicted).targets == task.make_dataset(UD_X, UD_Y).targets
    metrics = task.evaluate_model(task.make_dataset(UD_X, UD_Y), model.predict)
    assert metrics["uas"] == metrics["las"] == 1.0 and metrics["n_tokens_scored"] == 8


def test_unlabelled_parser_end_to_end_gives_heads(tmp_path):
    task = DependencyTask(hash_bits=12)
    model = _train(task, PTB_X, PTB_Y)
    data = task.make_dataset(PTB_X)
    predicted = task.decode_predictions(model.predict(task.featurize(data)))
    assert predicted == PTB_Y
    task.write_predictions(tmp_path / "out.conllu", data, model.predict(task.featurize(data)))
    back = read_dependencies(tmp_path / "out.conllu", single_root=False)
    assert [list(r.heads) for r in back] == PTB_Y and back[0].xpos == ("NNS", "VBP", ".")


def test_fit_and_evaluate_refuse_sentences_without_trees():
    task = DependencyTask(hash_bits=10)
    with pytest.raises(InputError, match="training data has no gold trees .* give y"):
        task.fit(task.make_dataset(PTB_X))
    model = _train(task, PTB_X, PTB_Y)
    with pytest.raises(InputError, match="evaluation data has no gold trees"):
        task.evaluate_model(task.make_dataset(PTB_X), model.predict)


def test_pos_column_follows_the_fitted_task():
    task = DependencyTask(hash_bits=10, label_hash_bits=5)
    task.fit(task.make_dataset(UD_X, UD_Y))
    with pytest.raises(InputError, match=r"X\[0\]\[0\]: POS tag 'NNS' is not a UPOS tag, but "
                                         r"this parser reads UPOS \(it was trained on UPOS"):
        task.make_dataset(PTB_X[:1])
    ptb = DependencyTask(hash_bits=10).fit(DependencyTask(hash_bits=10).make_dataset(PTB_X, PTB_Y))
    # a PTB model reads every tag as PTB, even one that happens to be UPOS-like
    assert ptb.make_dataset([[("x", "SYM")]]).records[0].file_format == "dp"
    with pytest.raises(InputError, match=r"X\[0\]\[0\]: POS tag 'NNS' is not a UPOS tag.*its "
                                         r"tagger predicts UPOS, and the gold UPOS mark"):
        DependencyTask(pos="predicted").make_dataset(PTB_X[:1])
    with pytest.raises(InputError, match=r"y\[0\]\[1\]: word 2 \('b'\) is a second root"):
        DependencyTask(single_root=True).make_dataset([[("a", "DT"), ("b", "NN")]], [[0, 0]])


BAD = [
    (UD_X[:1], [[2, 0, 2], [0]], r"X has 1 examples but y has 2"),
    ([[]], None, r"X\[0\]: is an empty sentence"),
    (["Dogs bark"], None, r"X\[0\]: is a string"),
    ([{"w": "x"}], None, r"X\[0\]: is a dict; expected a list of \(word, POS\) pairs"),
    ([["Dogs"]], None, r"X\[0\]\[0\]: is the string 'Dogs'; the parser needs \(word, POS\)"),
    ([[{"w": "Dogs"}]], None, r"X\[0\]\[0\]: is \{'w': 'Dogs'\}; expected a \(word, POS\) "
                             r"pair"),
    ([[("Dogs", "NOUN", 2)]], None, r"X\[0\]\[0\]: is \('Dogs', 'NOUN', 2\); expected a "
                                    r"\(word, POS\) pair"),
    ([[("New York", "PROPN")]], None, r"X\[0\]\[0\]: word 'New York' holds white space"),
    ([[("x", "")]], None, r"X\[0\]\[0\]: POS tag is empty"),
    (UD_X[:1], [[2, 0]], r"y\[0\]: has 2 heads but X\[0\] has 3 words"),
    (UD_X[:1], [[2, 0, 4]], r"y\[0\]\[2\]: head 4 of word 3 is outside 0..3"),
    (UD_X[:1], [[2, 0, -1]], r"y\[0\]\[2\]: head -1 of word 3 is outside 0..3"),
    (UD_X[:1], [[2, 0, 2.0]], r"y\[0\]\[2\]: head 2.0 of word 3 is not an integer"),
    (UD_X[:1], [[2, 0, True]], r"y\[0\]\[2\]: head True of word 3 is not an integer"),
    (UD_X[:1], [[2, 0, "2"]], r"y\[0\]\[2\]: head '2' of word 3 is not an integer"),
    (UD_X[:1], [[2, 0, 0]], r"y\[0\]\[2\]: word 3 \('\.'\) is a second root"),
    (UD_X[:1], [[2, 3, 2]], r"y\[0\]\[0\]: the sentence has no root"),
    ([UD_X[2]], [[2, 0, 4, 3]], r"y\[0\]\[2\]: the heads form a cycle .* 3 'loudly' -> "
                                r"4 '!' -> 3 'loudly'"),
    (UD_X[:2], [[2, 0, 2], [(2, "det"), (3, "nsubj"), (0, "root")]],
     r"y\[1\]: gives \(head, deprel\) pairs but y\[0\] gives heads only"),
    (UD_X[:1], [[(2, "nsubj"), (0, "root"), 2]], r"y\[0\]\[2\]: is 2; expected a \(head, "
                                                 r"deprel\) pair"),
    (UD_X[:1], [[(2, "nsubj"), (0, "root"), (2, "_")]], r"y\[0\]\[2\]: deprel '_' marks a "
                                                        r"missing label"),
    (UD_X[:1], [[(2, "nsubj"), (0, "root"), (2, "")]], r"y\[0\]\[2\]: deprel is empty"),
    (UD_X[:1], [[(2, "nsubj"), (0, "ro ot"), (2, "punct")]], r"y\[0\]\[1\]: deprel 'ro ot' "
                                                             r"holds white space"),
    (UD_X[:1], ["2 0 2"], r"y\[0\]: is a str"),
]


@pytest.mark.parametrize("X, y, pattern", BAD)
def test_bad_input_names_its_location(X, y, pattern):
    with pytest.raises(InputError, match=pattern):
        DependencyTask().make_dataset(X, y)


def test_empty_x_is_refused():
    with pytest.raises(InputError, match=r"X holds no sentences"):
        DependencyTask().make_dataset([])
