"""In-memory data (``make_dataset`` / ``decode_predictions``) of doccls, grammaticality and
rerank.

make_dataset of Python lists gives the records, featurised examples and encoded targets that
``read`` gives for a file of the same data; a short fit with the task's default learner runs
on it; every bad input is an InputError naming ``X[i]`` / ``y[i]``."""

import json
import warnings

import numpy as np
import pytest

from latentstruct.data.dependency.kbest import read_kbest
from latentstruct.exceptions import ConvergenceWarning, InputError, NotFittedError
from latentstruct.learners import HiddenVariableReranker, LatentPA, StructuredSVM
from latentstruct.tasks import GrammaticalityTask, PosTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.doccls import DocumentClassificationTask
from latentstruct.tasks.grammaticality import Sentence
from latentstruct.tasks.rerank import RerankTask
from latentstruct.tasks.rerank.raw import IN_MEMORY_PARSER_ID


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn()


# ------------------------------------------------------------------------------- doccls
TEXTS = ["The striker scored twice and the match ended 2-1.",
         "The central bank raised interest rates again.",
         "Fans cheered as the team won the cup final.",
         "Bond yields fell after the rates decision.",
         "The goalkeeper saved a penalty in the second half.",
         "Markets rallied on the bank's inflation outlook."]
LABELS = ["sport", "finance", "sport", "finance", "sport", "finance"]


def write_jsonl(path, texts, labels):
    lines = [json.dumps({"id": str(k), "label": lab, "text": t})
             for k, (t, lab) in enumerate(zip(texts, labels))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def matrix(X):
    return X.indptr.tolist(), X.indices.tolist(), X.data.tolist()


@pytest.mark.parametrize("features", ["tokens", "tfidf"])
def test_doccls_records_and_features_equal_the_jsonl_reader(tmp_path, features):
    read = DocumentClassificationTask().read(write_jsonl(tmp_path / "d.jsonl", TEXTS, LABELS))
    made = DocumentClassificationTask().make_dataset(TEXTS, LABELS)
    assert [(d.id, d.label, d.text) for d in made.records] == \
        [(d.id, d.label, d.text) for d in read.records]
    assert [d.line for d in made.records] == [0] * 6 and made.path is None
    assert made.targets == read.targets == LABELS
    task_a = DocumentClassificationTask(features=features).fit(read)
    task_b = DocumentClassificationTask(features=features).fit(made)
    assert task_a.vocab_.names == task_b.vocab_.names and task_a.labels_ == ["finance", "sport"]
    np.testing.assert_array_equal(task_a.idf_, task_b.idf_)
    assert matrix(task_a.featurize(made)) == matrix(task_a.featurize(read))
    assert [y.tolist() for y in task_a.encode_targets(made.targets)] == [[1], [0]] * 3


def test_doccls_uses_every_document_whatever_the_split_parameter():
    data = DocumentClassificationTask(split="eval").make_dataset(TEXTS, LABELS)
    assert len(data) == 6
    unlabelled = DocumentClassificationTask().make_dataset(TEXTS[:2])
    assert unlabelled.targets == [None, None]
    assert [d.id for d in unlabelled.records] == ["0", "1"]


def test_doccls_end_to_end_ssvm():
    task = DocumentClassificationTask()
    data = task.make_dataset(TEXTS, LABELS)
    task.fit(data)
    X, Y = task.featurize(data), task.encode_targets(data.targets)
    svm = quiet(lambda: StructuredSVM(task, C=1.0, max_iter=5).fit(X, Y))
    test = task.make_dataset(["The team scored in the final.", "The bank cut rates."])
    predictions = task.decode_predictions(svm.predict(task.featurize(test)))
    assert len(predictions) == 2 and all(isinstance(p, str) for p in predictions)
    assert set(predictions) <= {"finance", "sport"}
    accuracy = svm.score(X, Y)
    assert accuracy == task.evaluate(Y, svm.predict(X))["accuracy"] == 1.0
    with pytest.raises(NotFittedError):
        DocumentClassificationTask().decode_predictions(svm.predict(X))


BAD_DOCCLS = [
    ("one text", None, "X is a str", "task.read"),
    (["a text"], ["x", "y"], "X has 1 examples but y has 2", "one target per example"),
    (["a text", 7], None, "X[1]:", "must be a string"),
    (["a text", "  \n"], None, "X[1]:", "empty or blank"),
    (["a text", "a\0b"], None, "X[1]:", "NUL"),
    (["a text", "b"], ["x", 3], "y[1]:", "expected a string, the class name"),
    (["a text", "b"], ["x", None], "y[1]:", "y=None for documents to predict"),
    (["a text", "b"], ["x", " "], "y[1]:", "empty or blank"),
]


@pytest.mark.parametrize("X, y, where, what", BAD_DOCCLS)
def test_doccls_bad_input_names_the_location(X, y, where, what):
    with pytest.raises(InputError) as info:
        DocumentClassificationTask().make_dataset(X, y)
    assert str(info.value).startswith(where) and what in str(info.value)


def test_doccls_text_length_limit(monkeypatch):
    import latentstruct.tasks.doccls.raw as raw

    monkeypatch.setattr(raw, "MAX_DOCUMENT_CHARS", 10)
    with pytest.raises(InputError, match=r"^X\[1\]: the document text has 11 characters, more "
                                         r"than the limit of 10"):
        DocumentClassificationTask().make_dataset(["short", "x" * 11])


# ------------------------------------------------------------------------------- grammaticality
WORDS = {"The": "DET", "the": "DET", "in": "ADP", ".": "PUNCT", "market": "NOUN",
         "bank": "NOUN", "price": "NOUN", "index": "NOUN", "rose": "VERB", "fell": "VERB",
         "said": "VERB", "cut": "VERB", "new": "ADJ", "weak": "ADJ", "strong": "ADJ"}
NOUNS = ["market", "bank", "price", "index"]
VERBS = ["rose", "fell", "said", "cut"]
ADJS = ["new", "weak", "strong"]


def corpus(n, seed):
    rng = np.random.default_rng(seed)
    c = rng.choice
    return [f"The {c(ADJS)} {c(NOUNS)} {c(VERBS)} the {c(NOUNS)} in {c(NOUNS)} ." for _ in range(n)]


@pytest.fixture(scope="module")
def tagger():
    """A small POS tagger (a PosTask and its weights) trained on synthetic sentences."""
    records = [Sentence(tuple(s.split())) for s in corpus(40, 1)]
    tags = [tuple(WORDS[w] for w in r.words) for r in records]
    pos = PosTask(min_count=1)
    data = Dataset(records, tags)
    pos.fit(data)
    svm = quiet(lambda: StructuredSVM(pos, C=0.1, max_iter=3).fit(pos.featurize(data),
                                                                      pos.encode_targets(tags)))
    return pos, svm.coef_


def scrambled(lines, seed):
    rng = np.random.default_rng(seed)
    return [[str(t) for t in np.array(line.split())[rng.permutation(len(line.split()))]]
            for line in lines]


def test_grammaticality_records_and_features_equal_the_sentence_reader(tmp_path, tagger):
    lines = corpus(12, 2) + ["U.S. output rose 5.93 pct (mid-1987)."]
    path = tmp_path / "sentences.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reader = GrammaticalityTask(test_sentences="all", n_negative_sets=0, n_test=None,
                                chunk_types="NP,VP", min_count=1).set_tagger(*tagger)
    read = reader.read(path, split="test")
    made = reader.make_dataset(lines, [1] * 13)
    assert made.records == read.records
    assert made.records[-1].words == ("U.S.", "output", "rose", "5.93", "pct", "(",
                                      "mid-1987", ")", ".")
    assert made.records[0].pos is None  # the tagger tags in fit / featurize
    np.testing.assert_array_equal(made.targets, read.targets)
    as_tokens = reader.make_dataset([list(r.words) for r in read.records], [True] * 13)
    assert as_tokens.records == read.records
    task = GrammaticalityTask(chunk_types="NP,VP", min_count=1).set_tagger(*tagger)
    task.fit(read)
    a, b = task.featurize(read), task.featurize(made)
    for name in ("attr_indptr", "attr_ids", "offsets"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(task.encode_targets(made.targets), [1] * 13)


def test_grammaticality_end_to_end_latent_pa(tagger):
    good = corpus(20, 3)
    X = good + scrambled(good, 4)
    y = [1] * 20 + [0] * 20
    task = GrammaticalityTask(chunk_types="NP,VP", min_count=1).set_tagger(*tagger)
    data = task.make_dataset(X, y)
    np.testing.assert_array_equal(data.targets, [1] * 20 + [-1] * 20)
    task.fit(data)
    Xf, yf = task.featurize(data), task.encode_targets(data.targets)
    pa = quiet(lambda: LatentPA(task, max_iter=3).fit(Xf, yf))
    test = task.make_dataset(corpus(3, 5) + scrambled(corpus(3, 5), 6))
    predictions = task.decode_predictions(pa.predict(task.featurize(test)))
    assert len(predictions) == 6 and all(type(p) is int and p in (-1, 1) for p in predictions)
    accuracy = pa.score(Xf, yf)
    assert accuracy == task.evaluate(yf, pa.predict(Xf))["accuracy"]
    metrics = task.evaluate_model(data, pa.predict)  # the -1 sentences: one negative set
    assert metrics["accuracy"] == pytest.approx(accuracy)
    assert (metrics["n_positives"], metrics["n_negative_sets"]) == (20, 1)


BAD_GRAMMATICALITY = [
    ({"a": 1}, None, "X is a dict", "sentence (a string or a list of tokens)"),
    (["a b"], [1, 1], "X has 1 examples but y has 2", "one target per example"),
    (["a b", 3], None, "X[1]:", "a string or a list of tokens, got int"),
    (["a b", "   "], None, "X[1]:", "empty or blank"),
    (["a b", []], None, "X[1]:", "no tokens"),
    (["a b", ["a", "b c"]], None, "X[1][1]:", "white space"),
    (["a b", ["a", ""]], None, "X[1][1]:", "empty or blank"),
    (["a b", ["a", 5]], None, "X[1][1]:", "must be a string"),
    (["a b", ["</s>"]], None, "X[1][0]:", "sentence-boundary symbol"),
    (["a b", "a\0b"], None, "X[1]:", "NUL"),
    (["a b", "x" * 100_001], None, "X[1]:", "more than the limit of 100000"),
    (["a b", "c"], [1, "no"], "y[1]:", "not binary"),
]


@pytest.mark.parametrize("X, y, where, what", BAD_GRAMMATICALITY)
def test_grammaticality_bad_input_names_the_location(X, y, where, what):
    with pytest.raises(InputError) as info:
        GrammaticalityTask().make_dataset(X, y)
    assert str(info.value).startswith(where) and what in str(info.value)


# ------------------------------------------------------------------------------- rerank
def random_tree(rng, n):
    """1-based heads of a random tree over n words with one root."""
    order = rng.permutation(n) + 1
    heads = [0] * n
    for k, m in enumerate(order[1:], 1):
        heads[m - 1] = int(order[rng.integers(0, k)])
    return heads


TAGS = ["NOUN", "VERB", "ADJ", "DET", "PUNCT"]
RELS = ["nsubj", "obj", "amod", "det", "punct"]


def plain_kbest(n_sentences, seed, k=4):
    """X in make_dataset's form and y as (head, deprel) pairs."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n_sentences):
        n = int(rng.integers(2, 7))
        words = [f"w{int(v)}" for v in rng.integers(0, 12, size=n)]
        pos = [TAGS[int(v)] for v in rng.integers(0, len(TAGS), size=n)]
        gold = random_tree(rng, n)
        rels = [RELS[int(v)] for v in rng.integers(0, len(RELS), size=n)]
        trees = [gold] + [random_tree(rng, n) for _ in range(k - 1)]
        order = rng.permutation(k)
        scores = sorted(rng.normal(size=k).tolist(), reverse=True)
        cands = [(trees[j], rels, s) for j, s in zip(order, scores)]
        X.append((words, pos, cands))
        y.append(list(zip(gold, rels)))
    return X, y


def write_plain_kbest(path, X, y, parser_id):
    """The k-best file of the same lists, written field by field (not from the records)."""
    header = {"format": "latentstruct-kbest", "version": 1, "parser_id": parser_id, "k": 4,
              "single_root": True, "labelled": True, "pos": "gold", "folds": 1,
              "source": "t.conllu", "n_sentences": len(X)}
    lines = [json.dumps(header)]
    for i, ((words, pos, cands), gold) in enumerate(zip(X, y)):
        lines.append(json.dumps({
            "id": str(i), "words": words, "lemmas": ["_"] * len(words), "upos": pos,
            "xpos": pos, "scored": [t != "PUNCT" for t in pos],
            "gold_heads": [h for h, _ in gold], "gold_deprels": [d for _, d in gold],
            "candidates": [{"heads": h, "deprels": r, "score": s} for h, r, s in cands]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def storage_arrays(X):
    st = X.storage
    return {name: getattr(st, name).tolist() for name in st.__dataclass_fields__}


def test_rerank_records_and_features_equal_the_kbest_reader(tmp_path):
    X, y = plain_kbest(6, 0)
    path = write_plain_kbest(tmp_path / "l.kbest", X, y, "P1")
    read = RerankTask().read(path)
    made = RerankTask().make_dataset(X, y, parser_id="P1")
    assert [s.to_json() for s in made.records] == [s.to_json() for s in read.records]
    assert made.records.header.parser_id == "P1" and made.records.header.k == 4
    assert made.records.header.single_root and made.records.header.labelled
    task = RerankTask(hash_bits=12).fit(read)
    assert storage_arrays(task.featurize(made)) == storage_arrays(task.featurize(read))
    a, b = task.encode_targets(made.targets), task.encode_targets(read.targets)
    assert [t.oracle.tolist() for t in a] == [t.oracle.tolist() for t in b]
    assert [t.correct_labels.tolist() for t in a] == [t.correct_labels.tolist() for t in b]
    # lists of the default in-memory parser are not the file's parser's
    with pytest.raises(InputError, match="parser in-memory"):
        task.featurize(RerankTask().make_dataset(X, y))


def test_rerank_plain_forms_heads_only_unlabelled_and_unannotated():
    words, pos = ["Dogs", "bark", "."], ["NOUN", "VERB", "PUNCT"]
    X = [(words, pos, [([2, 0, 2], None, 0.5), ((0, 1, 1), None, 0.5)])]
    data = RerankTask().make_dataset(X, [[2, 0, 2]])
    sent = data.records[0]
    assert sent.gold_heads == (2, 0, 2) and sent.gold_deprels is None
    assert sent.candidates[1].heads == (0, 1, 1) and sent.candidates[1].deprels == ("_",) * 3
    assert sent.scored == (True, True, False) and sent.lemmas == ("_",) * 3
    assert data.records.header.parser_id == IN_MEMORY_PARSER_ID
    assert not data.records.header.labelled
    ptb = RerankTask().make_dataset([(["a", ","], ["NN", ","], [([0, 1], None, 0.0)])])
    assert ptb.records[0].scored == (True, False)  # the PTB comma is punctuation too
    assert ptb.records[0].gold_heads is None and ptb.targets == list(ptb.records)
    mixed = RerankTask().make_dataset(X * 2, [[2, 0, 2], None])
    assert mixed.records[1].gold_heads is None


def test_rerank_end_to_end_hidden_reranker():
    X, y = plain_kbest(30, 1)
    task = RerankTask(hash_bits=12)
    data = task.make_dataset(X, y)
    task.fit(data)
    Xf, Y = task.featurize(data), task.encode_targets(data.targets)
    learner = quiet(lambda: HiddenVariableReranker(task, n_epochs=2).fit(Xf, Y))
    test_X, _ = plain_kbest(5, 2)
    predictions = task.decode_predictions(learner.predict(task.featurize(
        task.make_dataset(test_X))))
    assert len(predictions) == 5
    assert all(type(p) is int and 0 <= p < len(x[2]) for p, x in zip(predictions, test_X))
    uas = learner.score(Xf, Y)
    assert uas == task.evaluate(Y, learner.predict(Xf))["uas"]
    # the gold tree is a candidate of every list, so the oracle is perfect
    assert task.evaluate(Y, learner.predict(Xf))["oracle_uas"] == 1.0


GOOD = (["a", "b"], ["X", "Y"], [([2, 0], ["r", "root"], 1.0)])
BAD_RERANK = [
    ("lists", None, "X is a str", "task.read"),
    ([GOOD], [[2, 0], [2, 0]], "X has 1 examples but y has 2", "one target per example"),
    ([GOOD, (["a"], ["X"])], None, "X[1]:", "(words, pos, candidates), got 2 elements"),
    ([GOOD, "a b"], None, "X[1]:", "must be a tuple (words, pos, candidates)"),
    ([GOOD, ([], [], [])], None, "X[1][0]:", "1..1000 strings, got 0"),
    ([GOOD, (["a", ""], ["X", "Y"], [([2, 0], None, 0.0)])], None, "X[1][0][1]:", "empty"),
    ([GOOD, (["a", "b"], ["X"], [([2, 0], None, 0.0)])], None, "X[1][1]:",
     "pos must be a list of 2 non-empty strings"),
    ([GOOD, (["a", "b"], ["X", "Y"], [])], None, "X[1][2]:", "1..1000 trees, got 0"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 0], None)])], None, "X[1][2][0]:",
     "(heads, deprels, score), got 2 elements"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 3], None, 0.0)])], None, "X[1][2][0]:",
     "head 3 of word 2 is out of range"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 1], None, 0.0)])], None, "X[1][2][0]:",
     "0 words attached to the root"),
    ([GOOD, (["a", "b", "c"], ["X", "Y", "Z"], [([0, 3, 2], None, 0.0)])], None,
     "X[1][2][0]:", "cycle"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 0], None, 0.0), ([0, 1], None, 0.0),
                                       ([2, 0, 1], None, -1.0)])], None, "X[1][2][2]:",
     "heads must be a list of 2 integers"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 0], ["r"], 0.0)])], None, "X[1][2][0]:",
     "deprels must be a list of 2 non-empty strings"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 0], None, "high")])], None, "X[1][2]:",
     "candidate 0: score must be a finite number"),
    ([GOOD, (["a", "b"], ["X", "Y"], [([2, 0], None, 0.0), ([0, 1], None, 1.0)])], None,
     "X[1][2]:", "candidate 1: candidates must be sorted best first"),
    ([GOOD, GOOD], [[2, 0], [2, 5]], "y[1]:", "gold heads must be None or 2 integers in 0..2"),
    ([GOOD, GOOD], [[2, 0], [(2, "r"), 0]], "y[1]:", "2 heads or 2 (head, deprel) pairs"),
    ([GOOD, GOOD], [[2, 0], [(2, "r"), (0, "")]], "y[1]:",
     "gold deprels must be a list of 2 non-empty strings"),
    ([GOOD, GOOD], [[2, 0], "2 0"], "y[1]:", "the gold tree must be a list of 2 heads"),
]


@pytest.mark.parametrize("X, y, where, what", BAD_RERANK)
def test_rerank_bad_input_names_the_location(X, y, where, what):
    with pytest.raises(InputError) as info:
        RerankTask().make_dataset(X, y)
    assert str(info.value).startswith(where) and what in str(info.value)


def test_rerank_parser_id_and_predictions_are_checked():
    with pytest.raises(InputError, match="parser_id must be a non-empty string"):
        RerankTask().make_dataset([GOOD], parser_id="")
    assert RerankTask().decode_predictions(np.array([0, 3])) == [0, 3]
    with pytest.raises(InputError, match=r"predictions\[1\] is -1"):
        RerankTask().decode_predictions([0, -1])


def test_kbest_reader_keeps_its_file_locations(tmp_path):
    """The reader shares the per-field checks with make_dataset and keeps file:line."""
    X = [(["a", "b"], ["X", "Y"], [([0, 0], ["r", "r"], 0.0)])]  # two roots
    path = write_plain_kbest(tmp_path / "bad.kbest", X, [[(2, "r"), (0, "r")]], "P")
    with pytest.raises(InputError, match="candidate 0 has 2 words attached to the root; "
                                         "expected exactly one") as info:
        read_kbest(path)
    assert (info.value.path, info.value.line) == (str(path), 2)
    # in memory the header is built from the lists: several roots are a tree too
    assert not RerankTask().make_dataset(X).records.header.single_root
