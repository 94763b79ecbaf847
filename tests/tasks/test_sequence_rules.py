"""Declarative rules of the sequence tasks (``rules=``): their syntax, their compilation to
local and global constraints, exact decoding under them (against enumeration), what they
take from a task's capabilities, and the checks of training data and model files."""

import itertools
import warnings

import numpy as np
import pytest

from latentstruct import Chunker, Estimator, Tagger, load
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.global_constraints import Contiguous, CountBound, Implication
from latentstruct.tasks import CitationTask, SequenceTask
from latentstruct.tasks.contracts import KBEST, MARGINALIZABLE, PARTIAL_LABELS
from latentstruct.tasks.sequence.rules import compile_rules, first_broken_rule, parse_rules

LABELS = ["author", "date", "editor", "title"]

X = [["A.", "Cau.", "Formal", "strategy.", "1992."],
     ["B.", "Enright.", "Parsing", "things.", "1978."],
     ["C.", "Smith,", "editors.", "Some", "book.", "1990."],
     ["D.", "Jones.", "Title", "here.", "1991."]]
Y = [["author", "author", "title", "title", "date"],
     ["author", "author", "title", "title", "date"],
     ["editor", "editor", "editor", "title", "title", "date"],
     ["author", "author", "title", "title", "date"]]


# --- syntax ------------------------------------------------------------------------------
def test_every_form_parses():
    rules = parse_rules("first author|editor; last date\nforbid title -> author;"
                        "require editor -> editor|title; count date <= 2; count title >= 1;"
                        "count date == 1; at least one  title ; if editor then title;"
                        "contiguous *")
    kinds = [(r.kind, r.left, r.right, r.low, r.high) for r in rules]
    assert kinds == [
        ("first", ("author", "editor"), (), 0, None), ("last", ("date",), (), 0, None),
        ("forbid", ("title",), ("author",), 0, None),
        ("require", ("editor",), ("editor", "title"), 0, None),
        ("count", ("date",), (), 0, 2), ("count", ("title",), (), 1, None),
        ("count", ("date",), (), 1, 1), ("count", ("title",), (), 1, None),
        ("if", ("editor",), ("title",), 0, None), ("contiguous", ("*",), (), 0, None)]
    assert [r.is_global for r in rules] == [False] * 4 + [True] * 6
    assert rules[7].text == "at least one title"  # spacing normalised
    assert parse_rules(["first author", "", "last date"]) == parse_rules("first author;last date")
    assert parse_rules(None) == () and parse_rules("  ;\n ") == ()
    commented = parse_rules("""
        first author|editor   # opens with its authors; or editors
        # a line of comment alone
        contiguous *""")
    assert [r.text for r in commented] == ["first author|editor", "contiguous *"]


@pytest.mark.parametrize("bad, match", [
    ("firstauthor", "is not one of the forms"),
    ("count date < 2", "is not one of the forms"),
    ("forbid a -> ", "is not one of the forms"),
    ("first a||b", "is not a label set"),
    ("contiguous *|a", "is not a label set"),
    ("count a <= 10000000", "at most 1,000,000"),
])
def test_a_malformed_rule_is_named(bad, match):
    with pytest.raises(ConfigError, match=match) as err:
        parse_rules(bad)
    assert repr(" ".join(bad.split())) in str(err.value)


def test_rules_of_the_wrong_type_are_refused():
    for bad in (3, ["first a", 2], {"first": "a"}):
        with pytest.raises(ConfigError, match="rules must be None, a string"):
            parse_rules(bad)
    with pytest.raises(ConfigError, match="got a list holding 2 \\(int\\)"):
        parse_rules(["first a", 2])


# --- compilation -------------------------------------------------------------------------
def test_local_rules_become_chain_constraints():
    local, global_ = compile_rules("first author|editor; last date; forbid title -> author; "
                                   "require editor -> editor|title", LABELS)
    assert global_ is None
    assert local.start.tolist() == [True, False, True, False]
    assert local.end.tolist() == [False, True, False, False]
    a, d, e, t = range(4)
    assert not local.transitions[t, a] and local.transitions[t, d]
    assert local.transitions[e].tolist() == [False, False, True, True]
    assert int((~local.transitions).sum()) == 3


def test_global_rules_become_global_constraints():
    local, global_ = compile_rules("count date <= 1; at least one title; "
                                   "if editor then title|date; contiguous author|title", LABELS)
    assert local is None
    assert global_.constraints == (CountBound((1,), 0, 1), CountBound((3,), 1, None),
                                   Implication((2,), (1, 3)), Contiguous(0), Contiguous(3))
    assert compile_rules("contiguous *", LABELS)[1].constraints == tuple(
        Contiguous(i) for i in range(4))
    assert compile_rules(None, LABELS) == (None, None)


def test_a_label_the_model_lacks_is_left_out_of_its_rule_with_a_warning():
    with pytest.warns(UserWarning, match="names labels 'publisher', 'pages'.*author, date"):
        assert compile_rules("count publisher|pages <= 1", LABELS) == (None, None)
    with pytest.warns(UserWarning, match="'volume'"):
        local, global_ = compile_rules("first author|volume; if volume then date; "
                                       "if title then volume; forbid volume -> date", LABELS)
    assert local.start.tolist() == [True, False, False, False] and local.transitions.all()
    # "if title then volume", volume unknown: title never appears
    assert global_.constraints == (CountBound((3,), 0, 0),)
    for never in ("first volume", "last volume|pages", "at least one volume"):
        with pytest.raises(InputError, match="can never hold"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile_rules(never, LABELS)


def test_first_broken_rule_names_the_sentence_rule_and_place():
    idx = {label: i for i, label in enumerate(LABELS)}
    targets = [np.array([idx[t] for t in y]) for y in Y]
    assert first_broken_rule("first author|editor", LABELS, targets, include_global=True) is None
    i, rule, where = first_broken_rule("forbid editor -> title", LABELS, targets,
                                       include_global=False)
    assert (i, rule.text, where) == (2, "forbid editor -> title",
                                     "'title' after 'editor' at token 3")
    # a global rule only when asked, and named by what breaks it
    assert first_broken_rule("count title <= 1", LABELS, targets, include_global=False) is None
    assert first_broken_rule("count title <= 1", LABELS, targets,
                             include_global=True)[2] == "2 tokens labelled title"
    assert first_broken_rule("if title then editor", LABELS, targets,
                             include_global=True)[2] == "title without editor"
    split = [np.array([0, 3, 0])]
    assert first_broken_rule("contiguous author", LABELS, split,
                             include_global=True)[2] == "'author' in more than one segment"
    # an unknown tag (-1) breaks no local rule, and its sentence is not checked globally
    assert first_broken_rule("first date; count date >= 2", LABELS, [np.array([-1, 1])],
                             include_global=True) is None


# --- exact decoding through the task -----------------------------------------------------
def _brute_best(structure, x, w, keep):
    best, best_y = -np.inf, None
    L, T = structure.n_labels, len(x.offsets) and int(x.offsets[-1] - x.offsets[0])
    for y in itertools.product(range(L), repeat=T):
        y = np.array(y)
        if not keep(y):
            continue
        s = float(structure.joint_feature(x, y).dot(w))
        if s > best:
            best, best_y = s, y
    return best, best_y


@pytest.mark.parametrize("rules", ["contiguous *; first author|editor",
                                   "count title <= 1; if editor then date",
                                   "at least one editor; forbid author -> title",
                                   "count author == 2; last date"])
def test_the_argmax_under_rules_is_the_best_allowed_labelling(rules):
    task = CitationTask(rules=rules)
    task.fit(task.make_dataset(X, Y))
    structure = task.structure_
    local, global_ = compile_rules(rules, task.labels_)
    rng = np.random.default_rng(3)
    corpus = structure.as_batch(task.featurize(task.make_dataset(X, Y)))
    for trial in range(8):
        w = rng.normal(size=structure.n_features)
        for i in range(len(X)):
            x = corpus[i]
            def keep(y):
                return ((local is None or local.allows(y))
                        and (global_ is None or global_.allows(y)))
            best, _ = _brute_best(structure, x, w, keep)
            got = structure.argmax(x, w)
            assert keep(got.structure)
            assert float(structure.joint_feature(x, got.structure).dot(w)) == \
                pytest.approx(best, abs=1e-9)
            # the batch form decodes the same labellings
            assert np.array_equal(structure.argmax_batch(corpus[i:i + 1], w)[0],
                                  got.structure)


def test_training_keeps_local_rules_and_by_default_predicts_alone_under_global_ones():
    task = CitationTask(rules="contiguous *")
    task.fit(task.make_dataset(X, Y))
    structure = task.structure_
    corpus = structure.as_batch(task.featurize(task.make_dataset(X, Y)))
    rng = np.random.default_rng(0)
    w = rng.normal(size=structure.n_features) * 3
    x, y = corpus[2], np.array([task.labels_.index(t) for t in Y[2]])
    # the loss-augmented argmax of training: the free chain's (no ILP) ...
    aug = structure.argmax(x, w, y)
    loss = float(np.sum(aug.structure != y))
    assert aug.score == pytest.approx(
        _brute_best_aug(structure, x, w, y, lambda z: True), abs=1e-9)
    assert aug.score == pytest.approx(float(structure.joint_feature(x, aug.structure).dot(w))
                                      + loss, abs=1e-9)
    # ... and with train_global_rules, the best augmented labelling that keeps the rules
    strict = CitationTask(rules="contiguous *", train_global_rules=True)
    strict.fit(strict.make_dataset(X, Y))
    g = compile_rules("contiguous *", strict.labels_)[1]
    aug = strict.structure_.argmax(x, w, y)
    assert g.allows(aug.structure)
    assert aug.score == pytest.approx(_brute_best_aug(structure, x, w, y, g.allows), abs=1e-9)


def _brute_best_aug(structure, x, w, y_true, keep):
    T = len(y_true)
    return max(float(structure.joint_feature(x, np.array(y)).dot(w))
               + float(np.sum(np.array(y) != y_true))
               for y in itertools.product(range(structure.n_labels), repeat=T)
               if keep(np.array(y)))


def test_no_labelling_that_keeps_the_rules_is_an_input_error_naming_the_sentence():
    task = CitationTask(rules="count date >= 2")
    task.fit(task.make_dataset(X, Y))
    corpus = task.structure_.as_batch(task.featurize(task.make_dataset([["One"]], None)))
    w = np.zeros(task.structure_.n_features)
    with pytest.raises(InputError, match="sentence 0: no labelling of the sentence keeps the "
                                         "rules"):
        task.structure_.argmax_batch(corpus, w)


# --- capabilities, estimators and the learners they admit ----------------------------------
def test_global_rules_take_the_dynamic_programmes_capabilities():
    every = CitationTask.offered_capabilities({})
    assert {KBEST, MARGINALIZABLE, PARTIAL_LABELS} <= every
    assert CitationTask.offered_capabilities({"rules": "first author"}) == every
    predicting = CitationTask.offered_capabilities({"rules": "contiguous *"})
    assert KBEST not in predicting and {MARGINALIZABLE, PARTIAL_LABELS} <= predicting
    training = CitationTask.offered_capabilities({"rules": "contiguous *",
                                                  "train_global_rules": True})
    assert MARGINALIZABLE not in training and PARTIAL_LABELS not in training


def test_estimators_predict_under_rules_and_refuse_what_they_cannot_keep():
    est = Tagger(task="citations", rules="contiguous *; first author|editor").fit(X, Y)
    g = compile_rules("contiguous *", est.task_.labels_)[1]
    index = {t: i for i, t in enumerate(est.task_.labels_)}
    for tags in est.predict(X + [["Z.", "Q.", "Title", "1999.", "x", "y."]]):
        assert tags[0] in ("author", "editor") and g.allows([index[t] for t in tags])
    with pytest.raises(ConfigError, match="k-best"):
        est.predict_nbest(X[:1], 2)
    crf = Estimator(task="citations", learner="crf", rules="contiguous *").fit(X, Y)
    assert len(crf.predict(X)) == len(X)
    with pytest.raises(InputError, match="marginals: not available with global rules"):
        crf.predict_marginals(X[:1])
    with pytest.raises(ConfigError, match="marginalizable"):
        Estimator(task="citations", learner="crf", rules="contiguous *",
                  train_global_rules=True).fit(X, Y)


def test_a_malformed_rule_fails_fit_before_any_data_is_read():
    with pytest.raises(ConfigError, match="'first' is not one of the forms"):
        Tagger(task="citations", rules="first").fit(None, None)
    with pytest.raises(ConfigError, match="train_global_rules"):
        Tagger(task="citations", train_global_rules="yes").fit(X, Y)


def test_training_data_that_breaks_a_kept_rule_is_refused_with_its_line(tmp_path):
    path = tmp_path / "cora.txt"
    path.write_text("<NEWREFERENCE>\n<author> A. </author> <title> T. </title>\n"
                    "<NEWREFERENCE>\n<title> T. </title> <author> A. </author>\n",
                    encoding="utf-8")
    task = CitationTask(rules="first author")
    with pytest.raises(InputError, match="training sentence 1 breaks rule 'first author' "
                                         "\\('title' first at token 0\\)") as err:
        task.fit(task.read(path))
        task.training_targets(task.read(path))
    assert err.value.path == str(path) and err.value.line == 4
    # a global rule is kept at prediction alone by default: training data may break it
    task = CitationTask(rules="count title <= 0")
    task.fit(task.read(path))
    task.training_targets(task.read(path))
    strict = CitationTask(rules="count title <= 0", train_global_rules=True)
    strict.fit(strict.read(path))
    with pytest.raises(InputError, match="1 token labelled title"):
        strict.training_targets(strict.read(path))


def test_a_rule_naming_a_label_the_data_lacks_warns_on_fit():
    with pytest.warns(UserWarning, match="names label 'publisher'"):
        Tagger(task="citations", rules="contiguous publisher|title").fit(X, Y)
    with pytest.raises(InputError, match="'first publisher' can never hold"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Tagger(task="citations", rules="first publisher").fit(X, Y)


def test_a_saved_model_keeps_its_rules(tmp_path):
    rules = "contiguous *; first author|editor; count date <= 1"
    est = Tagger(task="citations", rules=rules).fit(X, Y)
    est.save(tmp_path / "m.json")
    back = load(tmp_path / "m.json")
    assert back.task_.rules == rules
    assert back.task_.structure_.global_constraints == est.task_.structure_.global_constraints
    test = X + [["Z.", "Q.", "Title", "1999.", "x", "y."]]
    assert back.predict(test) == est.predict(test)


def test_chunker_rules_join_the_well_formed_sequences():
    X_chunk = [[("He", "PRP"), ("runs", "VBZ"), ("fast", "RB")],
               [("The", "DT"), ("dog", "NN"), ("runs", "VBZ")]]
    y_chunk = [["B-NP", "B-VP", "O"], ["B-NP", "I-NP", "B-VP"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Chunker(rules="forbid O -> B-VP", max_iter=5).fit(X_chunk, y_chunk)
    c = est.task_.structure_.constraints
    labels = list(est.task_.labels_)
    assert not c.transitions[labels.index("O"), labels.index("B-VP")]  # the rule
    assert not c.transitions[labels.index("O"), labels.index("I-NP")]  # well-formedness


def test_the_generic_sequence_task_takes_rules():
    Xd = [[{"w": "a"}, {"w": "b"}], [{"w": "c"}, {"w": "d"}, {"w": "e"}]]
    yd = [["B-PER", "I-PER"], ["O", "B-LOC", "I-LOC"]]
    est = Estimator(task="sequence", rules="forbid O -> I-PER|I-LOC; forbid B-PER -> I-LOC; "
                                          "forbid B-LOC -> I-PER").fit(Xd, yd)
    assert SequenceTask().get_params()["rules"] is None
    assert est.predict([[{"w": "zzz"}, {"w": "e"}]])[0][0] != "I-LOC"


def test_an_explanation_under_global_rules_has_no_runner_up():
    est = Tagger(task="citations", rules="contiguous *").fit(X, Y)
    explained = est.explain_prediction(X[2])
    assert explained.labels == est.predict([X[2]])[0]
    assert sum(c.value for c in explained.contributions) == pytest.approx(explained.score,
                                                                          abs=1e-9)
    assert explained.runner_up is None and np.isnan(explained.margin)
    assert "no runner-up under the model's global rules" in str(explained)


def test_the_command_line_trains_with_rules_and_refuses_kbest_under_global_ones(tmp_path):
    from latentstruct.cli import main

    path = tmp_path / "cora.txt"
    path.write_text("".join(
        "<NEWREFERENCE>\n" + " ".join(f"<{label}> {token} </{label}>"
                                      for token, label in zip(x, y)) + "\n"
        for x, y in zip(X, Y)), encoding="utf-8")
    model = tmp_path / "m.npz"
    assert main(["train", "citations", "--train", str(path), "--model", str(model), "--quiet",
                 "--option", "rules=first author|editor; contiguous *"]) == 0
    assert load(model).task_.rules == "first author|editor; contiguous *"
    assert main(["kbest", "--model", str(model), "--input", str(path),
                 "--output", str(tmp_path / "k.jsonl")]) == 2
    assert not (tmp_path / "k.jsonl").exists()
    assert main(["train", "citations", "--train", str(path), "--model",
                 str(tmp_path / "bad.npz"), "--option", "rules=frist author"]) == 2


@pytest.mark.parametrize("bad", [123, "frist author", "count author >= 5000000",
                                 ["contiguous *", 5]])
def test_a_model_file_with_tampered_rules_is_refused(tmp_path, bad):
    import json
    import zipfile

    from latentstruct.exceptions import ModelFormatError

    Tagger(task="citations", rules="contiguous *").fit(X, Y).save(tmp_path / "m.npz")
    with zipfile.ZipFile(tmp_path / "m.npz") as src:
        meta = json.loads(src.read("metadata.json"))
        meta["task_params"]["rules"] = bad
        with zipfile.ZipFile(tmp_path / "bad.npz", "w") as out:
            for name in src.namelist():
                out.writestr(name, json.dumps(meta) if name == "metadata.json"
                             else src.read(name))
    with pytest.raises(ModelFormatError, match="rule"):
        load(tmp_path / "bad.npz")
