"""In-memory data (``make_dataset`` / ``decode_predictions``) of the pair tasks: translit,
paraphrase and rte.

make_dataset of Python pairs gives the records, featurised examples and encoded targets that
``read`` gives for a file of the same pairs; a short fit with the task's default learner runs
on it; every bad input is an InputError naming ``X[i]`` / ``y[i]``.

Paraphrase / RTE featurisation parses with spaCy (and, with ``use_wordnet=True``, the tasks'
default, scores words with WordNet): those tests take the ``require_spacy`` /
``require_wordnet`` fixtures of tests/conftest.py, as tests/tasks/test_graph_pairs.py does,
so they skip when en_core_web_sm or the WordNet dictionary is missing, and fail under
CI=true."""

import warnings

import numpy as np
import pytest

from latentstruct.data.pairs import SentencePair
from latentstruct.data.translit import cldr_pairs
from latentstruct.exceptions import ConvergenceWarning, InputError
from latentstruct.learners import LCLR
from latentstruct.tasks import get_task_class
from latentstruct.tasks.pairs import ParaphraseTask, RteTask
from latentstruct.tasks.translit import TransliterationTask

# raw pairs as a user holds them: capitals, a right-to-left mark, spaces around words
RAW_TRANSLIT = [("Paris\u200f", "פריז"), (" london", "לונדון "), ("berlin", "ברלין"),
                ("roma", "רומא"), ("madrid", "\u200fמדריד")]
CLEAN_TRANSLIT = [("paris", "פריז"), ("london", "לונדון"), ("berlin", "ברלין"),
                  ("roma", "רומא"), ("madrid", "מדריד")]


def write_translit_tsv(path, pairs):
    """The Wikidata TSV layout: english<TAB>t a r g e t<TAB>count."""
    lines = [f"{s}\t{' '.join(t.strip())}\t1\n" for s, t in pairs]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def corpus_arrays(X):
    return [X.src_chars, X.src_offsets, X.tgt_chars, X.tgt_offsets, X.pair_src, X.pair_tgt]


# ------------------------------------------------------------------------------- translit
def test_translit_records_and_features_equal_the_tsv_reader(tmp_path):
    path = write_translit_tsv(tmp_path / "pairs.tsv", RAW_TRANSLIT)
    read = TransliterationTask(n_test=None).read(path, split="test")
    made = TransliterationTask().make_dataset(RAW_TRANSLIT, [1, 1, True, 1.0, 1])
    assert read.records == CLEAN_TRANSLIT
    assert made.records == CLEAN_TRANSLIT
    assert made.path is None
    np.testing.assert_array_equal(made.targets, [1, 1, 1, 1, 1])
    assert made.targets.dtype == np.int64
    task_a = TransliterationTask().fit(read)
    task_b = TransliterationTask().fit(made)
    letters = sorted(set("".join(s for s, _ in CLEAN_TRANSLIT)))
    assert task_a.source_alphabet_ == task_b.source_alphabet_ == letters
    assert task_a.target_alphabet_ == task_b.target_alphabet_
    for a, b in zip(corpus_arrays(task_a.featurize(read)), corpus_arrays(task_a.featurize(made))):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(task_a.encode_targets(made.targets),
                                  task_a.encode_targets(read.targets))


def test_translit_labels_are_taken_as_given_and_unlabelled_pairs_have_no_targets():
    task = TransliterationTask(neg_ratio=1.0)  # read would sample negatives; make_dataset never
    data = task.make_dataset([("paris", "פריז"), ("paris", "ברלין")], [True, 0])
    assert data.records == [("paris", "פריז"), ("paris", "ברלין")]
    np.testing.assert_array_equal(data.targets, [1, -1])
    unlabelled = task.make_dataset([("Roma", "רומא")])
    assert unlabelled.records == [("roma", "רומא")] and unlabelled.targets == [None]
    assert task.make_dataset([]).records == []


def cldr_training_data(n=20):
    """n CLDR English-Hebrew pairs (+1) and n wrong pairings of them (-1)."""
    pos = cldr_pairs("he")[:n]
    neg = [(pos[i][0], pos[(i + 7) % n][1]) for i in range(n)]
    return pos + neg, [1] * n + [-1] * n


def test_translit_end_to_end_lclr_on_cldr_pairs():
    X, y = cldr_training_data(20)
    task = TransliterationTask()
    data = task.make_dataset(X, y)
    task.fit(data)
    Xf, yf = task.featurize(data), task.encode_targets(data.targets)
    lclr = LCLR(task, C=1.0, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lclr.fit(Xf, yf)
    predictions = task.decode_predictions(lclr.predict(Xf))
    assert len(predictions) == 40
    assert all(type(p) is int and p in (-1, 1) for p in predictions)
    # evaluate on in-memory binary data: accuracy of the +-1 predictions, which the
    # learner's score (task.score_metric) reports too
    accuracy = float(np.mean(np.array(predictions) == np.array(y)))
    assert task.evaluate(data.targets, lclr.predict(Xf)) == {"accuracy": accuracy}
    assert lclr.score(Xf, yf) == accuracy
    assert task.score_metric == "accuracy"
    assert accuracy >= 0.75  # the training pairs, with two-stage initialisation
    # evaluate_model ranks the positives' targets (MRR), as for a test file
    metrics = task.evaluate_model(task.make_dataset(X[:20], y[:20]), lclr.predict,
                                  lclr.decision_function)
    assert set(metrics) == {"mrr", "accuracy"} and 0.0 < metrics["mrr"] <= 1.0


def test_translit_pairs_in_another_script_are_the_users_choice():
    """The default (CLDR) data of another script is refused (its ranking is chance), but
    pairs the user gives in memory are evaluated as given."""
    X, y = cldr_training_data(12)
    task = TransliterationTask(lang="ru", n_train=12, n_test=12)
    data = TransliterationTask().make_dataset(X, y)
    task.fit(data)
    w = np.zeros(task.n_features)
    w[0] = 1.0
    russian = task.make_dataset(cldr_pairs("ru")[:6], [1] * 6)
    metrics = task.evaluate_model(russian, None, lambda Z: task.structure_.decision_batch(Z, w))
    # every score ties (bias only), and ties count against the correct target: rank 6
    assert metrics == {"mrr": pytest.approx(1 / 6), "accuracy": 0.0}
    with pytest.raises(InputError, match="default test data"):
        task.evaluate_model(task.read(None, split="test"), None,
                            lambda Z: task.decision_batch(Z, w))


# ------------------------------------------------------------------------------- paraphrase, rte
MSRP_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
GLUE_HEADER = "index\tsentence1\tsentence2\tlabel\n"
PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    ("Shares of the company rose sharply on Monday.", "The company's shares fell on Monday."),
    ("He bought a new car last week.", "Last week he purchased a new car."),
    ("The meeting was cancelled because of the storm.", "The storm did not stop the meeting."),
]
LABELS = [1, 0, 1, 0]


def write_msrp(path, pairs, labels):
    rows = [f"{lab}\t{2 * k + 1}\t{2 * k + 2}\t{a}\t{b}\n"
            for k, ((a, b), lab) in enumerate(zip(pairs, labels))]
    path.write_text(MSRP_HEADER + "".join(rows), encoding="utf-8")
    return path


def write_glue_rte(path, pairs, labels):
    names = {1: "entailment", 0: "not_entailment"}
    rows = [f"{k}\t{a}\t{b}\t{names[lab]}\n" for k, ((a, b), lab) in enumerate(zip(pairs, labels))]
    path.write_text(GLUE_HEADER + "".join(rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_sentence_pair_records_without_parsing(cls):
    data = cls().make_dataset([("  A cat.  ", "A dog."), ("x", "y")], [True, -1])
    assert data.records == [SentencePair("0", "A cat.", "A dog.", 1, 0),
                            SentencePair("1", "x", "y", 0, 0)]
    np.testing.assert_array_equal(data.targets, [1, -1])
    unlabelled = cls().make_dataset([("a b", "c d")])
    assert unlabelled.records == [SentencePair("0", "a b", "c d", None, 0)]
    assert unlabelled.targets == [None]


def graph_arrays(x):
    """What a featurised pair holds apart from its id: sizes, variables, features."""
    p = x.problem
    return (x.n1, x.n2, p.node_pairs.tolist(), x.kappa, x.features.toarray().tolist())


@pytest.mark.parametrize("name, write, params", [
    ("paraphrase", write_msrp, {"dev_fraction": 0.0}),
    ("rte", write_glue_rte, {}),
])
def test_sentence_pair_features_equal_the_readers(tmp_path, require_spacy, name, write, params):
    path = write(tmp_path / "pairs.tsv", PAIRS, LABELS)
    cls = get_task_class(name)
    kw = dict(params, use_wordnet=False, cache_dir=str(tmp_path / "parses"))
    read = cls(**kw).read(path)
    made = cls(**kw).make_dataset(PAIRS, LABELS)
    assert [(r.first, r.second, r.label) for r in read.records] == \
        [(r.first, r.second, r.label) for r in made.records]
    task_a, task_b = cls(**kw).fit(read), cls(**kw).fit(made)
    assert task_a.feature_index_.names == task_b.feature_index_.names
    np.testing.assert_array_equal(task_a.train_digests_, task_b.train_digests_)
    a, b = task_a.featurize(read), task_a.featurize(made)
    assert [graph_arrays(x) for x in a] == [graph_arrays(x) for x in b]
    assert [x.pair_id for x in b] == ["0", "1", "2", "3"]
    np.testing.assert_array_equal(task_a.encode_targets(made.targets), [1, -1, 1, -1])
    np.testing.assert_array_equal(task_a.encode_targets(made.targets),
                                  task_a.encode_targets(read.targets))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paraphrase", "rte"])
def test_sentence_pair_features_with_wordnet(tmp_path, require_spacy, require_wordnet, name):
    """The tasks' default (WordNet similarity) featurises in-memory pairs as file pairs."""
    cls = get_task_class(name)
    write = write_msrp if name == "paraphrase" else write_glue_rte
    path = write(tmp_path / "pairs.tsv", PAIRS, LABELS)
    params = {"dev_fraction": 0.0} if name == "paraphrase" else {}
    read = cls(cache_dir=str(tmp_path / "parses"), **params).read(path)
    task = cls(cache_dir=str(tmp_path / "parses"), **params).fit(read)
    made = task.make_dataset(PAIRS, LABELS)
    assert [graph_arrays(x) for x in task.featurize(read)] == \
        [graph_arrays(x) for x in task.featurize(made)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paraphrase", "rte"])
def test_sentence_pair_end_to_end_lclr(tmp_path, require_spacy, name):
    cls = get_task_class(name)
    task = cls(use_wordnet=False, cache_dir=str(tmp_path / "parses"), time_limit=None)
    data = task.make_dataset(PAIRS, LABELS)
    task.fit(data)
    X, y = task.featurize(data), task.encode_targets(data.targets)
    lclr = LCLR(task, C=1.0, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lclr.fit(X, y)
    unlabelled = task.make_dataset(PAIRS[:3])
    predictions = task.decode_predictions(lclr.predict(task.featurize(unlabelled)))
    assert len(predictions) == 3 and all(type(p) is int and p in (-1, 1) for p in predictions)
    metrics = task.evaluate_model(data, lclr.predict)
    assert set(metrics) == {"accuracy", "f1"}
    assert metrics["accuracy"] == lclr.score(X, y)


# ------------------------------------------------------------------------------- bad input
BAD_TRANSLIT = [
    ("paris", None, "X is a str", "task.read"),
    ([("paris", "פריז")], [1, -1], "X has 1 examples but y has 2", "one target per example"),
    (["paris"], None, "X[0]:", "(source, target) word pair"),
    # a third element is the character-pair scores (issue 43): it must be numbers
    ([("a", "b"), ("a", "b", "c")], None, "X[1][2]:", "character-pair scores"),
    ([("a", "b"), ("a", "b", "c", "d")], None, "X[1]:", "tuple of 4 elements"),
    ([("a", "b"), (3, "b")], None, "X[1][0]:", "must be a string"),
    ([("a", "b"), ("a", "")], None, "X[1][1]:", "empty or blank"),
    ([("a", "b"), ("new york", "b")], None, "X[1][0]:", "white space"),
    ([("a", "b"), ("a", "b\0")], None, "X[1][1]:", "NUL"),
    ([("a", "b"), ("a", "\u200e\u200f")], None, "X[1][1]:", "empty target word"),
    ([("a", "b"), ("a" * 101, "b")], None, "X[1][0]:", "over the limit of 100"),
    ([("a", "b"), ("a", "b")], [1, 2], "y[1]:", "not binary"),
]


@pytest.mark.parametrize("X, y, where, what", BAD_TRANSLIT)
def test_translit_bad_input_names_the_location(X, y, where, what):
    with pytest.raises(InputError) as info:
        TransliterationTask().make_dataset(X, y)
    assert str(info.value).startswith(where) and what in str(info.value)


BAD_SENTENCE_PAIRS = [
    ({"a": "b"}, None, "X is a dict", "one (text_a, text_b) pair per example"),
    ([("a", "b")], [1, 0], "X has 1 examples but y has 2", "one target per example"),
    ([("a", "b"), "a b"], None, "X[1]:", "got a str"),
    ([("a", "b"), ("a",)], None, "X[1]:", "tuple of 1 element;"),
    ([("a", "b"), ("a", None)], None, "X[1][1]:", "must be a string"),
    ([("a", "b"), (" \t", "b")], None, "X[1][0]:", "empty or blank"),
    ([("a", "b"), ("a", "b\0c")], None, "X[1][1]:", "NUL"),
    ([("a", "b"), ("a" * 10_001, "b")], None, "X[1][0]:", "over the limit of 10,000"),
    ([("a", "b"), ("a", "b")], [1, "yes"], "y[1]:", "not binary"),
]


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
@pytest.mark.parametrize("X, y, where, what", BAD_SENTENCE_PAIRS)
def test_sentence_pair_bad_input_names_the_location(cls, X, y, where, what):
    if cls is RteTask:  # RTE names the two sentences text and hypothesis
        what = what.replace("(text_a, text_b)", "(text, hypothesis)")
    with pytest.raises(InputError) as info:
        cls().make_dataset(X, y)
    assert str(info.value).startswith(where) and what in str(info.value)


def test_sentence_pair_messages_name_the_sentence():
    with pytest.raises(InputError, match=r"^X\[0\]\[1\]: the hypothesis is empty"):
        RteTask().make_dataset([("a", " ")])
    with pytest.raises(InputError, match=r"^X\[0\]\[0\]: the text_a is empty"):
        ParaphraseTask().make_dataset([(" ", "a")])


@pytest.mark.parametrize("cls", [TransliterationTask, ParaphraseTask, RteTask])
def test_decode_predictions_refuses_non_binary_labels(cls):
    assert cls().decode_predictions(np.array([1, -1, 1])) == [1, -1, 1]
    with pytest.raises(InputError, match="predictions"):
        cls().decode_predictions([1, 0])
