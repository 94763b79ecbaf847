"""A label the model has never seen is refused wherever it would be trained on, and scored
as what it is (issue 41): ``encode_targets`` of every task with a label set, a learner's
``partial_fit`` (perceptron with the default index and with hashing, the CRF by SGD), the
estimators' ``partial_fit(X, y, classes=None)``, ``latentstruct train --resume`` (exit 2,
before any weight changes), and ``score`` / ``evaluate`` on raw gold labels (chunk F1 equal
to conlleval's)."""

import numpy as np
import pytest

from conftest import random_chunk_file
from latentstruct import Chunker, DocumentClassifier, Tagger
from latentstruct.cli import main
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.learners import StructuredPerceptron
from latentstruct.learners.persistence import load_trained
from latentstruct.tasks import ChunkTask, DependencyTask
from latentstruct.tasks.sequence.chunk_metrics import chunk_f1
from latentstruct.tasks.validation import UnseenLabelError

SENTS = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
         [("The", "DT"), ("pound", "NN"), ("fell", "VBD")],
         [("Prices", "NNS"), ("rose", "VBD"), ("sharply", "RB")],
         [("She", "PRP"), ("sold", "VBD"), ("the", "DT"), ("shares", "NNS")],
         [("A", "DT"), ("bank", "NN"), ("failed", "VBD"), ("today", "NN")],
         [("Rates", "NNS"), ("fell", "VBD"), ("again", "RB")]]
TAGS = [["B-NP", "B-VP", "B-NP", "I-NP"], ["B-NP", "I-NP", "B-VP"],
        ["B-NP", "B-VP", "B-ADVP"], ["B-NP", "B-VP", "B-NP", "I-NP"],
        ["B-NP", "I-NP", "B-VP", "B-NP"], ["B-NP", "B-VP", "B-ADVP"]]
CLASSES = sorted({t for tags in TAGS for t in tags})
NEW = [["B-NP", "B-VP", "B-NP", "B-ZZZ"]]  # SENTS[0] with a tag no model has


# --- encode_targets ---------------------------------------------------------------------
@pytest.mark.parametrize("feature_index", ["index", "hashing"])
def test_perceptron_partial_fit_with_an_unseen_tag_is_refused(feature_index):
    task = ChunkTask(feature_index=feature_index, hash_bits=10)
    task.fit(task.make_dataset(SENTS, TAGS))
    model = StructuredPerceptron(task, random_state=0)
    first = task.make_dataset(SENTS[1:], TAGS[1:])
    model.partial_fit(task.featurize(first), task.encode_targets(first.targets))
    before = model.coef_.copy()
    batch = task.make_dataset(SENTS[:1], NEW)
    with pytest.raises(UnseenLabelError) as err:
        model.partial_fit(task.featurize(batch), task.encode_targets(batch.targets))
    msg = str(err.value)
    assert "'B-ZZZ' at y[0][3] (sentence 0, token 3)" in msg
    assert "B-ADVP, B-NP, B-VP, I-NP (4)" in msg  # the model's label set
    assert err.value.label == "B-ZZZ" and err.value.example == 0
    assert isinstance(err.value, InputError)
    np.testing.assert_array_equal(model.coef_, before)


def test_encode_targets_never_gives_minus_one():
    task = ChunkTask().fit(ChunkTask().make_dataset(SENTS, TAGS))
    Y = task.encode_targets(TAGS)
    assert min(int(y.min()) for y in Y) >= 0
    with pytest.raises(UnseenLabelError, match="'B-ZZZ'"):
        task.encode_targets(NEW)


def test_dependency_relation_unseen_is_refused_and_scored_as_wrong():
    X = [[("The", "DT"), ("cat", "NN"), ("sat", "VBD")], [("Dogs", "NNS"), ("bark", "VBP")]]
    y = [[(2, "det"), (3, "nsubj"), (0, "root")], [(2, "nsubj"), (0, "root")]]
    task = DependencyTask()
    task.fit(task.make_dataset(X, y))
    gold = [[(2, "det"), (3, "nsubj:pass"), (0, "root")]]
    ds = task.make_dataset(X[:1], gold)
    with pytest.raises(UnseenLabelError, match=r"'nsubj:pass' at sentence 0, word 2.*det, nsubj, root"):
        task.encode_targets(ds.targets)
    pred = task.encode_targets(task.make_dataset(X[:1], y[:1]).targets)  # the right tree
    m = task.evaluate_raw(ds.targets, pred)
    assert m["uas"] == 1.0 and m["las"] == pytest.approx(2 / 3)


# --- the CRF by SGD ---------------------------------------------------------------------
def test_crf_sgd_partial_fit_with_a_new_tag_is_refused():
    upos = {"PRP": "PRON", "VBZ": "VERB", "DT": "DET", "NN": "NOUN", "VBD": "VERB",
            "NNS": "NOUN", "RB": "ADV"}
    words = [[w for w, _ in s] for s in SENTS]
    tags = [[upos[p] for _, p in s] for s in SENTS]
    tagger = Tagger(learner="crf", solver="sgd", max_iter=2).fit(words, tags)
    before = tagger.learner_.coef_.copy()
    task = tagger.task_
    batch = task.make_dataset([["The", "new", "thing"]], [["DET", "ADJ", "NOUN"]])
    with pytest.raises(UnseenLabelError, match=r"'ADJ' at y\[0\]\[1\]"):
        tagger.learner_.partial_fit(task.featurize(batch), task.encode_targets(batch.targets))
    with pytest.raises(UnseenLabelError, match="'ADJ'"):  # the estimator's own partial_fit
        tagger.partial_fit([["The", "new", "thing"]], [["DET", "ADJ", "NOUN"]])
    np.testing.assert_array_equal(tagger.learner_.coef_, before)
    tagger.partial_fit([["The", "old", "thing"]], [["DET", "NOUN", "NOUN"]])  # known: learns
    assert tagger.learner_.n_iter_ == 3


# --- the estimators' partial_fit ----------------------------------------------------------
def test_chunker_partial_fit_over_batches_equals_one_pass_over_their_concatenation():
    params = dict(learner="perceptron", feature_index="hashing", hash_bits=12, shuffle=False)
    stream = Chunker(**params)
    for lo, hi in ((0, 2), (2, 3), (3, 6)):
        assert stream.partial_fit(SENTS[lo:hi], TAGS[lo:hi], classes=CLASSES) is stream
    one_pass = Chunker(max_iter=1, **params).fit(SENTS, TAGS)
    assert np.max(np.abs(stream.learner_.coef_ - one_pass.learner_.coef_)) <= 1e-12
    assert np.any(stream.learner_.coef_ != 0)
    assert stream.learner_.n_iter_ == 3 and stream.learner_.t_ == 6
    assert stream.classes_ == one_pass.classes_ == CLASSES
    assert stream.predict(SENTS[:2]) == one_pass.predict(SENTS[:2])


def test_declared_classes_give_the_model_of_full_label_data():
    """A label declared in classes but absent from the first batches has its weights from
    the start: the model equals the one whose first batch showed every label."""
    params = dict(learner="perceptron", feature_index="hashing", hash_bits=12, shuffle=False)
    late = Chunker(**params)
    late.partial_fit(SENTS[:2], TAGS[:2], classes=CLASSES)  # no B-ADVP in this batch
    late.partial_fit(SENTS[2:], TAGS[2:])                   # B-ADVP arrives
    assert late.task_.labels_ == CLASSES
    reference = Chunker(max_iter=1, **params).fit(SENTS, TAGS)
    np.testing.assert_array_equal(late.learner_.coef_, reference.learner_.coef_)


def test_estimator_partial_fit_refusals():
    c = Chunker(learner="perceptron")
    with pytest.raises(ConfigError, match=r"needs classes=\[\.\.\.\] on its first call"):
        c.partial_fit(SENTS, TAGS)
    assert not hasattr(c, "learner_") or c.learner_ is None
    with pytest.raises(UnseenLabelError, match="the first batch holds the label 'B-ADVP'"):
        Chunker(learner="perceptron").partial_fit(SENTS, TAGS, classes=["B-NP", "B-VP", "I-NP"])
    with pytest.raises(ConfigError, match="lists a label twice"):
        Chunker(learner="perceptron").partial_fit(SENTS, TAGS, classes=["O", "O"])
    c = Chunker(learner="perceptron").partial_fit(SENTS, TAGS, classes=CLASSES)
    with pytest.raises(ConfigError, match="differs from the classes of the model"):
        c.partial_fit(SENTS, TAGS, classes=CLASSES + ["B-PP"])
    c.partial_fit(SENTS, TAGS, classes=list(reversed(CLASSES)))  # the same set: accepted
    with pytest.raises(UnseenLabelError, match="'B-ZZZ'"):
        c.partial_fit(SENTS[:1], NEW)


def test_partial_fit_is_absent_on_batch_learners_and_names_the_online_ones():
    for est in (Chunker(), Tagger(learner="ssvm"), DocumentClassifier()):
        assert not hasattr(est, "partial_fit")
        with pytest.raises(AttributeError, match=r"has no partial_fit.*online learners learn "
                                                 r"incrementally: arow, crf, latent-pa, pa, "
                                                 r"perceptron, sgd-ssvm"):
            est.partial_fit(SENTS, TAGS)
    assert hasattr(Chunker(learner="perceptron"), "partial_fit")
    assert hasattr(Tagger(learner="crf"), "partial_fit")


def test_partial_fit_after_fit_continues_fits_model():
    params = dict(learner="perceptron", shuffle=False)
    a = Chunker(max_iter=1, **params).fit(SENTS, TAGS)
    a.partial_fit(SENTS, TAGS)
    b = Chunker(max_iter=2, **params).fit(SENTS, TAGS)
    np.testing.assert_array_equal(a.learner_.coef_, b.learner_.coef_)


def test_document_classifier_partial_fit_and_score_with_unseen_labels():
    texts = ["cheap pills now", "meeting at noon", "win money now", "lunch at noon",
             "pills and money", "noon meeting moved"]
    y = ["spam", "ham", "spam", "ham", "spam", "ham"]
    clf = DocumentClassifier(learner="perceptron", random_state=0)
    clf.partial_fit(texts[:2], y[:2], classes=["ham", "spam", "other"])
    clf.partial_fit(texts[2:], y[2:])
    assert list(clf.classes_) == ["ham", "other", "spam"]
    with pytest.raises(UnseenLabelError, match="'eggs'"):
        clf.partial_fit(texts[:1], ["eggs"])
    pred = clf.predict(texts)
    # scored on raw labels: a label the model never saw is always wrong
    gold = list(y[:5]) + ["eggs"]
    expected = np.mean([p == g for p, g in zip(pred, gold)])
    assert clf.score(texts, gold) == pytest.approx(expected)


# --- scores on raw labels ------------------------------------------------------------------
def _np_np_vp_model():
    """A chunker that tags 'a b c' as B-NP I-NP B-VP (a perceptron on copies of it)."""
    X = [[("a", "DT"), ("b", "NN"), ("c", "VBD")]] * 3 + [[("d", "RB")]]
    y = [["B-NP", "I-NP", "B-VP"]] * 3 + [["O"]]
    return Chunker(learner="perceptron", random_state=0).fit(X, y)


def test_chunker_score_with_an_unseen_gold_type_equals_conlleval():
    model = _np_np_vp_model()
    X = [[("a", "DT"), ("b", "NN"), ("c", "VBD")]]
    assert model.predict(X) == [["B-NP", "I-NP", "B-VP"]]
    gold = [["B-NP", "B-ZZZ", "B-VP"]]
    # conlleval: gold chunks NP, ZZZ, VP; predicted NP(0-1), VP: 1 correct of 2 predicted
    # and 3 gold, F1 = 2 * (1/2 * 1/3) / (1/2 + 1/3) = 0.4 (scoring ZZZ as O gave 0.5)
    assert model.score(X, gold) == pytest.approx(0.4)
    assert chunk_f1(gold, model.predict(X))["f1"] == pytest.approx(0.4)


def test_cli_evaluate_scores_raw_gold_chunks(tmp_path, capsys):
    train = tmp_path / "train.txt"
    train.write_text("a DT B-NP\nb NN I-NP\nc VBD B-VP\n\n" * 3 + "d RB O\n", encoding="utf-8")
    test = tmp_path / "test.txt"
    test.write_text("a DT B-NP\nb NN B-ZZZ\nc VBD B-VP\n", encoding="utf-8")
    model = tmp_path / "m.npz"
    assert main(["train", "chunk", "--train", str(train), "--model", str(model), "--learner",
                 "perceptron", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(test)]) == 0
    out = capsys.readouterr().out
    import json

    metrics = json.loads(out.strip().splitlines()[-1]) if out.strip().startswith("{") else None
    assert metrics is not None, out
    assert metrics["f1"] == pytest.approx(0.4)


# --- the command line -----------------------------------------------------------------------
def test_cli_resume_with_an_unseen_tag_exits_2_before_any_weight_changes(tmp_path, capsys):
    first = random_chunk_file(tmp_path / "a.txt", 1, vocab=7)
    model = tmp_path / "m0.npz"
    assert main(["train", "chunk", "--train", str(first), "--model", str(model),
                 "--learner", "perceptron", "--quiet"]) == 0
    new = random_chunk_file(tmp_path / "b.txt", 2, vocab=7)
    lines = new.read_text(encoding="utf-8").splitlines()
    k = next(i for i, line in enumerate(lines) if line)  # its first token: B-ZZZ
    lines[k] = " ".join(lines[k].split()[:2] + ["B-ZZZ"])
    new.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    out = tmp_path / "m1.npz"
    code = main(["train", "chunk", "--train", str(new), "--model", str(out), "--resume",
                 str(model)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert f"{new}:{k + 1}:" in err and "'B-ZZZ'" in err
    assert "B-A, B-B, I-A, O (4)" in err
    assert not out.exists()
    _, learner, _ = load_trained(model)  # the input model is untouched
    assert learner.n_iter_ >= 1


def test_a_tagger_trained_on_one_tag_warns():
    with pytest.warns(UserWarning, match=r"one pos tag only \('NOUN'\).*at least two"):
        Tagger().fit([["cats", "dogs"]], [["NOUN", "NOUN"]])


def test_a_binary_estimator_streams_with_declared_classes():
    from latentstruct import PairClassifier

    X = [("london", "לונדון"), ("paris", "פריס"), ("rome", "רומא"), ("berlin", "ברלין"),
         ("london", "פריס"), ("paris", "רומא")]
    y = ["yes", "yes", "yes", "yes", "no", "no"]
    params = dict(task="translit", learner="latent-pa", pos_label="yes", random_state=0)
    with pytest.raises(ConfigError, match=r"needs classes=\[\.\.\.\] on its first call"):
        PairClassifier(**params).partial_fit(X, y)
    clf = PairClassifier(**params)
    clf.partial_fit(X[:4], y[:4], classes=["no", "yes"])  # a batch of one class
    clf.partial_fit(X[4:], y[4:])
    assert list(clf.classes_) == ["no", "yes"] and clf.learner_.n_iter_ == 2
    with pytest.raises(UnseenLabelError, match=r"y\[0\] is 'maybe', not one of the model's "
                                               r"classes \('no', 'yes'\)"):
        clf.partial_fit(X[:1], ["maybe"])
