"""Paraphrase / RTE graph-alignment tasks: argmax vs brute force on hand-made parses, the
constraints (6)-(11), score = w . Phi, LCLR's monotone objective on real MSRP, bad input.

Tests that parse text or use WordNet similarity (``use_wordnet=True``, the tasks' default) take
the ``require_spacy`` / ``require_wordnet`` fixtures of tests/conftest.py: they skip when spaCy's
en_core_web_sm or the WordNet dictionary is missing, and fail under CI=true."""

import warnings

import numpy as np
import pytest

from latentstruct.data.nlp import ParsedSentence
from latentstruct.exceptions import ConfigError, ConvergenceWarning, InputError, NotFittedError
from latentstruct.inference.graph_alignment import (
    alignment_score,
    check_alignment,
    enumerate_alignments,
)
from latentstruct.learners import LCLR, TwoStage
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks import Dataset, get_task_class
from latentstruct.tasks.pairs import (
    GraphPair,
    ParaphraseTask,
    RteTask,
    SentenceGraph,
    binary_metrics,
    candidate_pairs,
    edit_similarity,
    pair_digest,
)
from latentstruct.testing import require_data

POS = ("NOUN", "VERB", "DET", "ADJ", "PROPN")
LEMMAS = ("cat", "dog", "run", "the", "big", "Paris")
LABELS = ("nsubj", "dobj", "det", "amod")


def sent(tokens, pos, heads, deprels=None, ner=None, neg=None, lemmas=None):
    """A hand-made ParsedSentence (no spaCy)."""
    n = len(tokens)
    return ParsedSentence(
        " ".join(tokens), tuple(tokens), tuple(lemmas or [t.lower() for t in tokens]), tuple(pos),
        tuple(pos), tuple(ner or [""] * n), tuple(heads),
        tuple(deprels or ["ROOT" if h < 0 else "dep" for h in heads]),
        tuple(neg or [False] * n))


def random_sentence(rng, n):
    tokens = [str(rng.choice(LEMMAS)) for _ in range(n)]
    pos = [str(rng.choice(POS)) for _ in range(n)]
    heads = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]  # a random tree rooted at 0
    deprels = ["ROOT"] + [str(rng.choice(LABELS)) for _ in range(1, n)]
    ner = [str(rng.choice(["", "", "B-GPE", "B-PERSON"])) for _ in range(n)]
    neg = [bool(rng.random() < 0.2) for _ in range(n)]
    return sent(tokens, pos, heads, deprels, ner, neg)


def fitted(cls, rng, n_pairs=6, max_len=4, **params):
    """A task fitted on random hand-made pairs (WordNet off: no dictionary needed)."""
    records = [(random_sentence(rng, int(rng.integers(1, max_len + 1))),
                random_sentence(rng, int(rng.integers(1, max_len + 1)))) for _ in range(n_pairs)]
    params.setdefault("use_wordnet", False)
    task = cls(**params).fit(Dataset(records, np.ones(n_pairs, dtype=np.int64)))
    return task, records


MSRP_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"


def write_msrp(path, rows):
    path.write_text(MSRP_HEADER + "".join("\t".join(map(str, r)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


# --------------------------------------------------------------------------- registry, params
def test_registered_and_parameters():
    assert get_task_class("paraphrase") is ParaphraseTask
    assert get_task_class("rte") is RteTask
    assert ParaphraseTask.default_learner == "lclr"
    p = ParaphraseTask().get_params()
    assert p["top_k"] == 3 and p["dev_fraction"] == 0.2 and p["extended"] is False
    assert "dev_fraction" not in RteTask().get_params()
    with pytest.raises(ConfigError, match="top_k"):
        ParaphraseTask(top_k=0).fit(Dataset([("a", "b")], [1]))
    with pytest.raises(ConfigError, match="dev_fraction"):
        ParaphraseTask(dev_fraction=1.0).read("x.tsv")
    with pytest.raises(ConfigError, match="split"):
        ParaphraseTask().read("x.tsv", split="dev")
    with pytest.raises(NotFittedError):
        ParaphraseTask().heuristic_weights()


# --------------------------------------------------------------------------- graphs, pruning
def test_graph_drops_punctuation_reattaches_and_marks_negation():
    s = sent(["He", "did", "not", "go", ",", "sadly", "."],
             ["PRON", "AUX", "PART", "VERB", "PUNCT", "ADV", "PUNCT"],
             [3, 3, 3, -1, 3, 4, 3], ["nsubj", "aux", "neg", "ROOT", "punct", "advmod", "punct"],
             neg=[False, False, True, False, False, False, False])
    g = SentenceGraph.from_parsed(s)
    assert g.tokens == ("He", "did", "not", "go", "sadly")
    # "sadly" hung from the comma: re-attached to the comma's head "go", keeping its label
    assert sorted(map(tuple, g.edges.tolist())) == [(3, 0), (3, 1), (3, 2), (3, 4)]
    assert dict(zip(map(tuple, g.edges.tolist()), g.labels))[(3, 4)] == "advmod"
    assert g.negated == (False, False, True, True, False)  # the marker and its head
    d = g.doubled()
    assert len(d) == 10 and d.tokens[5:] == g.tokens
    assert sorted(map(tuple, d.edges.tolist()))[-1] == (8, 9)
    only_punct = SentenceGraph.from_parsed(sent(["!", "?"], ["PUNCT", "PUNCT"], [-1, 0]))
    assert only_punct.tokens == ("!", "?")  # kept when nothing else is left


def test_candidate_pairs_top_k_both_sides_and_one_side():
    A = np.array([[0.9, 0.1, 0.0],
                  [0.2, 0.8, 0.7],
                  [0.0, 0.0, 0.1]])
    one = candidate_pairs(A, 1, both_sides=False)  # best row of every column
    assert one.tolist() == [[0, 0], [1, 1], [1, 2]]
    both = candidate_pairs(A, 1)  # ... united with the best column of every row
    assert both.tolist() == [[0, 0], [1, 1], [1, 2], [2, 2]]
    assert candidate_pairs(A, 5).shape == (9, 2)
    assert candidate_pairs(A, 5, min_affinity=0.5).tolist() == [[0, 0], [1, 1], [1, 2]]
    assert candidate_pairs(np.zeros((0, 3)), 2).shape == (0, 2)


def test_edit_similarity_and_metrics():
    assert edit_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert edit_similarity("", "") == 1.0 and edit_similarity("a", "") == 0.0
    m = binary_metrics(np.array([1, 1, -1, -1, 1]), np.array([1, -1, 1, -1, 1]))
    assert m == pytest.approx({"accuracy": 0.6, "f1": 2 * 2 / (2 * 2 + 1 + 1)})
    assert binary_metrics(np.array([-1]), np.array([-1]))["f1"] == 0.0


# --------------------------------------------------------------------------- argmax vs brute force
@pytest.mark.slow
@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_latent_argmax_equals_brute_force(cls):
    rng = np.random.default_rng(0 if cls is ParaphraseTask else 1)
    n_checked = 0
    for trial in range(12):
        task, records = fitted(cls, rng, top_k=int(rng.integers(1, 4)),
                               normalize=bool(rng.integers(0, 2)))
        X = task.featurize(Dataset(records, np.ones(len(records), dtype=np.int64)))
        for x in X:
            assert isinstance(x, GraphPair)
            assert x.problem.delete_nodes1 is (cls is ParaphraseTask)
            assert x.problem.edge_deletion is (cls is ParaphraseTask)
            for kind in ("normal", "integer"):
                w = (rng.normal(size=task.n_features) if kind == "normal"
                     else rng.integers(-2, 3, size=task.n_features).astype(np.float64))
                res = task.structure_.latent_argmax(x, w)
                raw = task.structure_.decode(x, w)
                assert check_alignment(x.problem, raw.structure) == []
                assert check_alignment(x.problem, task.structure_.alignment(x, res.structure)) == []
                phi = task.structure_.latent_feature(x, res.structure)
                assert res.score == pytest.approx(phi.dot(w), abs=1e-9)
                scores = task.structure_.part_scores(x, w)
                best = max(alignment_score(a, scores) for a in enumerate_alignments(x.problem))
                assert res.score == pytest.approx(w[0] + best, abs=1e-9)
                # and every enumerated alignment's score is w . Phi of its word mappings
                for a in list(enumerate_alignments(x.problem))[:5]:
                    mp = a.mapped_pairs
                    h = np.full(x.n1, -1, dtype=np.int64)
                    h[mp[:, 0]] = mp[:, 1]
                    assert task.structure_.latent_feature(x, h).dot(w) == pytest.approx(
                        w[0] + alignment_score(a, scores), abs=1e-9)
                n_checked += 1
        d = task.structure_.decision_batch(X, w)
        assert d.shape == (len(X),)
    assert n_checked >= 100


def test_rte_prunes_from_the_hypothesis_only_and_has_no_text_deletions():
    rng = np.random.default_rng(5)
    task, _ = fitted(RteTask, rng, top_k=1)
    text = sent(["the", "big", "cat", "saw", "the", "dog"], ["DET", "ADJ", "NOUN", "VERB", "DET", "NOUN"],
                [2, 2, 3, -1, 5, 3])
    hyp = sent(["cat", "saw", "Paris"], ["NOUN", "VERB", "PROPN"], [1, -1, 1])
    x = task.make_example(text, hyp)
    assert x.problem.sizes()["del1"] == 0 and x.problem.sizes()["del2"] == 3
    assert x.problem.n_node_pairs == 3  # one text word per hypothesis word
    assert sorted(x.problem.node_pairs[:, 1].tolist()) == [0, 1, 2]
    assert task.featurizer_.kappa(x.g1, x.g2) == 3.0


def test_features_and_heuristic():
    a = sent(["the", "cat", "sat"], ["DET", "NOUN", "VERB"], [1, 2, -1], ["det", "nsubj", "ROOT"])
    b = sent(["the", "cat", "slept"], ["DET", "NOUN", "VERB"], [1, 2, -1], ["det", "nsubj", "ROOT"])
    task = ParaphraseTask(use_wordnet=False).fit(Dataset([(a, b)], [1]))
    names = task.feature_index_.names
    assert names[:6] == ["bias", "map:const", "map:wnsim", "del:const", "emap:const", "edel:const"]
    for name in ("map:wn=same", "map:pos=DET|DET", "map:ed=eq", "del:pos=VERB", "emap:dep=same",
                 "emap:dep_same=det", "edel:dep=nsubj"):
        assert name in names
    x = task.make_example(a, b)
    assert x.kappa == 3.0
    # the heuristic maps exactly the pairs whose WNSim (here: lemma equality) exceeds 0.5
    res = task.structure_.latent_argmax(x, task.structure_.heuristic_weights())
    assert res.structure.tolist() == [0, 1, -1]
    assert res.stats["solver"] == "matching"
    e = task.structure_.explain(x, task.structure_.heuristic_weights(), res.structure)
    assert e["deleted1"] == [2] and e["deleted2"] == [2]
    assert e["mapped_edges"] and e["score"] == pytest.approx(res.score)
    cells = task.structure_.cell_scores(x, task.structure_.heuristic_weights())
    assert cells.shape == (3, 3) and np.isneginf(cells).sum() == 9 - x.problem.n_node_pairs
    # the task holds an immutable structure, rebuilt from a model file's state
    import pickle

    from latentstruct.tasks.pairs import GraphPairStructure

    s = task.structure_
    assert type(s) is GraphPairStructure and task.structure_object() is s
    assert s.n_features == task.n_features == len(task.feature_index_)
    with pytest.raises(AttributeError, match="immutable"):
        s.heuristic_threshold = 0.9
    assert pickle.loads(pickle.dumps(s)).heuristic_weights().tolist() == \
        s.heuristic_weights().tolist()
    const = task.feature_index_.lookup("map:const")
    assert s.heuristic_weights()[const] == pytest.approx(-0.5 - 0.2)
    state, arrays = task.get_state()
    again = ParaphraseTask.from_state(task.get_params(), state, arrays)
    assert again.structure_ is not s and again.structure().heuristic_weights().tolist() == \
        s.heuristic_weights().tolist()
    assert ParaphraseTask(heuristic_threshold=0.9, use_wordnet=False).fit(
        Dataset([(a, b)], [1])).structure_.heuristic_weights()[const] == pytest.approx(-1.1)
    with pytest.warns(DeprecationWarning, match=r"ParaphraseTask.heuristic_weights is "
                                                r"deprecated: .* use task.structure_"):
        assert task.heuristic_weights()[const] == pytest.approx(-0.5 - 0.2)
    narrow = ParaphraseTask(use_wordnet=False, top_k=1).fit(Dataset([(a, b)], [1]))
    x1 = narrow.make_example(a, b)
    assert x1.problem.n_node_pairs < 9 and (0, 1) not in x1.pair_index
    with pytest.raises(InputError, match="pruned"):
        narrow.structure_.latent_feature(x1, np.array([1, -1, -1]))
    with pytest.raises(InputError, match="shape"):
        narrow.structure_.latent_feature(x1, np.array([0, 1]))


@pytest.mark.slow
def test_plot_graph_alignment(tmp_path):
    from latentstruct.plotting import draw_explanation
    from latentstruct.plotting import plot_graph_alignment

    a = sent(["the", "cat", "sat"], ["DET", "NOUN", "VERB"], [1, 2, -1], ["det", "nsubj", "ROOT"])
    b = sent(["a", "cat", "slept"], ["DET", "NOUN", "VERB"], [1, 2, -1], ["det", "nsubj", "ROOT"])
    task = ParaphraseTask(use_wordnet=False).fit(Dataset([(a, b)], [1]))
    x = task.make_example(a, b)
    out = tmp_path / "g.png"
    e = task.structure_.explain(x, task.structure_.heuristic_weights())
    assert e["kind"] == "graph-alignment"
    draw_explanation(e, out, title="t")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot_graph_alignment(e, tmp_path / "g2.png")
    assert (tmp_path / "g2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InputError, match="lacks"):
        plot_graph_alignment({"words1": []}, tmp_path / "bad.png")
    with pytest.raises(InputError, match="lacks"):
        draw_explanation({"kind": "graph-alignment", "words1": []}, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_explain_adds_up_to_the_learners_decision_value(cls):
    """explain(x, coef_, h) is JSON; every active part is listed once, so bias + parts is
    its score; with the learner's own alignment that is the learner's decision value."""
    import json

    rng = np.random.default_rng(11)
    task, records = fitted(cls, rng, n_pairs=10, max_len=5)
    X = task.featurize(Dataset(records, np.ones(10, dtype=np.int64)))
    y = np.array([1, -1] * 5)
    two = TwoStage(task, C=1.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lclr = LCLR(task, C=1.0, coef_init=two.coef_, max_iter=3, progress=False).fit(X, y)
    for learner in (two, lclr):
        decisions = learner.decision_function(X)
        for x, h, f in zip(X, learner.latent_argmax(X), decisions):
            e = task.structure_.explain(x, learner.coef_, h)
            assert json.loads(json.dumps(e)) == e
            parts = (sum(p[-1] for p in e["mapped_pairs"] + e["mapped_edges"])
                     + sum(p[1] for k in ("word_deletions1", "word_deletions2",
                                          "edge_deletions1", "edge_deletions2") for p in e[k]))
            assert e["bias"] == learner.coef_[0]
            assert e["bias"] + parts == pytest.approx(e["score"], abs=1e-9)
            assert e["score"] == pytest.approx(f, abs=1e-9)
            # every word is mapped or deleted exactly once (G1 of RTE: no deletion variables)
            assert sorted([i for i, _, _ in e["mapped_pairs"]] + [i for i, _ in e["word_deletions1"]]) \
                == (list(range(x.n1)) if cls.delete_nodes1 else sorted(i for i, _, _ in e["mapped_pairs"]))
            assert sorted([j for _, j, _ in e["mapped_pairs"]] + [j for j, _ in e["word_deletions2"]]) \
                == list(range(x.n2))
            if not cls.edge_deletion:
                assert e["edge_deletions1"] == [] and e["edge_deletions2"] == []
    x = X[0]
    assert task.structure_.explain(x, lclr.coef_)["score"] == pytest.approx(lclr.decision_function([x])[0])


def test_state_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    task, records = fitted(ParaphraseTask, rng, n_pairs=8)
    X = task.featurize(Dataset(records, np.ones(8, dtype=np.int64)))
    y = np.array([1, -1] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = TwoStage(task, random_state=0).fit(X, y)
    path = tmp_path / "m.npz"
    save_trained(path, task, model)
    task2, model2, _ = load_trained(path)
    assert isinstance(task2, ParaphraseTask) and task2.n_features == task.n_features
    X2 = task2.featurize(Dataset(records, np.ones(8, dtype=np.int64)))
    np.testing.assert_allclose(model2.decision_function(X2), model.decision_function(X), atol=1e-12)


# --------------------------------------------------------------------------- reading and bad input
def test_msrp_dev_split_is_deterministic_and_disjoint(tmp_path):
    rows = [(i % 2, 100 + i, 200 + i, f"first sentence {i}", f"second sentence {i}") for i in range(50)]
    path = write_msrp(tmp_path / "m.tsv", rows)
    task = ParaphraseTask(seed=4)
    train, dev = task.read(path, split="train"), task.read(path, split="test")
    assert len(train) == 40 and len(dev) == 10
    ids_tr, ids_dev = {r.id for r in train.records}, {r.id for r in dev.records}
    assert not ids_tr & ids_dev and len(ids_tr | ids_dev) == 50
    again = ParaphraseTask(seed=4).read(path, split="test")
    assert [r.id for r in again.records] == [r.id for r in dev.records]
    assert set(np.unique(train.targets)) <= {-1, 1}
    assert len(ParaphraseTask(dev_fraction=0).read(path, split="test")) == 50
    assert len(ParaphraseTask(n_train=7).read(path, split="train")) == 7
    big = write_msrp(tmp_path / "big.tsv", [(1, i, i, "a b", "c d") for i in range(700)])
    assert len(ParaphraseTask(extended=True).read(big, split="train")) == 500  # §5.3
    assert len(ParaphraseTask(extended=True, n_train=20).read(big, split="train")) == 20


@pytest.mark.parametrize("content, message, line", [
    ("1\t1\t2\tonly four columns\n", "expected 5 tab-separated columns", 2),
    ("1\t1\t2\t \tsecond\n", "empty", 2),
    ("1\t1\t2\tgood\tgood\n7\t1\t2\ta\tb\n", "must be 1", 3),
])
def test_bad_msrp_input_surfaces_with_file_and_line(tmp_path, content, message, line):
    path = tmp_path / "bad.tsv"
    path.write_text(MSRP_HEADER + content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        ParaphraseTask(dev_fraction=0).read(path)
    assert err.value.path == str(path) and err.value.line == line


def test_non_utf8_and_bad_rte_xml(tmp_path):
    path = tmp_path / "latin1.tsv"
    path.write_bytes(MSRP_HEADER.encode() + "1\t1\t2\tcaf\u00e9\tb\n".encode("latin-1"))
    with pytest.raises(InputError) as err:
        ParaphraseTask(dev_fraction=0).read(path)
    assert err.value.path == str(path) and err.value.line == 2
    xml = tmp_path / "rte.xml"
    xml.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<entailment-corpus>\n'
                   '<pair id="1" entailment="YES"><t>A cat sat.</t><h>A cat sat.</h></pair>\n'
                   '<pair id="2"><t>A dog ran.</t><h>A dog.</h></pair>\n</entailment-corpus>\n',
                   encoding="utf-8")
    with pytest.raises(InputError, match="no label") as err:
        RteTask().read(xml)
    assert err.value.path == str(xml) and err.value.line == 4
    with pytest.raises(ConfigError, match="one MSRP"):
        ParaphraseTask().read([path, path])
    task, _ = fitted(ParaphraseTask, np.random.default_rng(0), n_pairs=1)
    with pytest.raises(InputError, match="record 1"):
        task.featurize(Dataset([("a", "b"), ("a", "")], [1, 1]))
    with pytest.raises(InputError, match="record 0 must be"):
        task.featurize(Dataset([("a", "b", "c")], [1]))
    with pytest.raises(InputError, match="non-empty"):
        task.encode_pair("", "x")


@pytest.mark.slow
def test_rte_test_split_excludes_training_pairs(tmp_path, require_spacy, require_wordnet):
    xml = tmp_path / "train.xml"
    xml.write_text('<entailment-corpus>\n'
                   '<pair id="1" entailment="YES"><t>A cat sat on the mat.</t><h>A cat sat.</h></pair>\n'
                   '<pair id="2" entailment="NO"><t>A dog ran home.</t><h>A cat ran.</h></pair>\n'
                   '</entailment-corpus>\n', encoding="utf-8")
    glue = tmp_path / "dev.tsv"
    glue.write_text("index\tsentence1\tsentence2\tlabel\n"
                    "0\ta  CAT sat on the mat.\tA cat sat.\tentailment\n"
                    "1\tBirds fly south.\tBirds fly.\tentailment\n", encoding="utf-8")
    task = RteTask(cache_dir=tmp_path / "parses")
    assert len(task.read(glue, split="test")) == 2  # not fitted: nothing to exclude
    task.fit(task.read(xml, split="train"))
    test = task.read(glue, split="test")
    assert [r.id for r in test.records] == ["1"]  # pair 0 equals training pair 1 (case, spaces)
    assert pair_digest("a  CAT sat on the mat.", "A cat sat.") == pair_digest(
        "A cat sat on the mat.", "A cat sat.")
    with pytest.raises(InputError, match="no pairs left"):
        task.read(xml, split="test")
    X = task.featurize(test)
    assert X[0].problem.delete_nodes1 is False


@pytest.mark.slow
def test_cli_train_and_evaluate_paraphrase(tmp_path, capsys, require_spacy, require_wordnet):
    from latentstruct.cli import main

    rows = [(1, 1, 2, "The cat sat on the mat.", "A cat was sitting on the mat."),
            (0, 3, 4, "Stocks fell sharply on Monday.", "The weather was sunny in Paris."),
            (1, 5, 6, "He did not win the race.", "He lost the race."),
            (0, 7, 8, "The company reported a profit.", "Dogs bark at night."),
            (1, 9, 10, "Prices rose by 5 percent.", "Prices increased 5 percent."),
            (0, 11, 12, "She plays the piano.", "The bridge was closed for repairs.")]
    path = write_msrp(tmp_path / "tiny.tsv", rows)
    model = tmp_path / "p.npz"
    opts = ["--option", "dev_fraction=0", "--option", f"cache_dir={tmp_path / 'parses'}"]
    assert main(["train", "paraphrase", "--train", str(path), "--model", str(model), "--quiet",
                 "--option", "max_iter=3", *opts]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(path), *opts]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    import json

    metrics = json.loads(out)
    assert set(metrics) == {"accuracy", "f1", "confusion"} and 0.0 <= metrics["accuracy"] <= 1.0
    c = metrics["confusion"]  # the breakdown behind the totals
    assert c["tp"] + c["fp"] + c["fn"] + c["tn"] == 6
    assert metrics["accuracy"] == pytest.approx((c["tp"] + c["tn"]) / 6)
    pic = tmp_path / "graph.png"
    assert main(["explain", "--model", str(model), "--source", "The cat sat on the mat.",
                 "--target", "A cat was sitting on the mat.", "--out", str(pic), *opts]) == 0
    info = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert pic.read_bytes()[:4] == b"\x89PNG" and len(info["alignment"]) >= 5


# --------------------------------------------------------------------------- LCLR on real MSRP
@pytest.mark.slow
def test_lclr_objective_never_increases_on_real_msrp(require_spacy, require_wordnet):
    path = require_data("msrp", "train.tsv")
    task = ParaphraseTask(n_train=60)
    train = task.read(path, split="train")
    assert len(train) == 60
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        two = TwoStage(task, C=1.0, tol=1e-8, max_iter=20000, random_state=0).fit(X, y)
        model = LCLR(task, C=1.0, coef_init=two.coef_, dcd_tol=1e-8, dcd_max_iter=20000,
                     max_iter=6, random_state=0).fit(X, y)
    curve = np.array(model.objective_curve_)
    assert len(curve) >= 2
    assert np.all(np.diff(curve) <= 1e-6 * np.abs(curve[:-1])), curve
    assert curve[-1] < curve[0]
    # the learned structures are legal and scored consistently
    for x, r in zip(X[:10], task.structure_.latent_argmax_batch(X[:10], model.coef_)):
        assert check_alignment(x.problem, task.structure_.alignment(x, r.structure)) == []
        assert task.structure_.latent_feature(x, r.structure).dot(model.coef_) == pytest.approx(r.score, abs=1e-9)


# --------------------------------------------------------------------------- pickling
def _roundtrips():
    import pickle

    import cloudpickle

    return [("pickle", pickle.dumps), ("cloudpickle", cloudpickle.dumps)]


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_task_and_examples_pickle_and_decode_identically(cls):
    """Tasks and examples travel to process workers: the HiGHS models of the examples are
    dropped (rebuilt lazily in the worker) and decoding is identical, also for integer
    weights (tied optima) after the original models have solved other objectives."""
    import pickle

    rng = np.random.default_rng(31)
    task, records = fitted(cls, rng, n_pairs=8, max_len=5, top_k=2)
    X = task.featurize(Dataset(records, np.ones(len(records), dtype=np.int64)))
    ws = [rng.integers(-2, 3, size=task.n_features).astype(np.float64) for _ in range(4)]
    for w in ws[1:]:  # history on the original models
        task.structure_.decision_batch(X, w)
    for name, dumps in _roundtrips():
        task2, X2 = pickle.loads(dumps((task, X)))
        assert all(x._ilp is None for x in X2), name
        for w in ws:
            for x, x2 in zip(X, X2):
                a, b = task.structure_.latent_argmax(x, w), task2.structure_.latent_argmax(x2, w)
                np.testing.assert_array_equal(a.structure, b.structure)
                assert a.score == b.score
        assert all(x._ilp is not None for x in X2 if x.problem.n_edge_pairs)


@pytest.mark.slow
def test_task_with_parser_and_wordnet_pickles(require_spacy, require_wordnet):
    """The spaCy parser and the WordNet reader are dropped by pickling and reopened on use:
    the copy featurises and decodes the same pair identically."""
    import pickle

    train = Dataset([("A cat sat on the mat.", "The cat was sitting on a mat."),
                     ("Stocks fell sharply today.", "Shares dropped steeply on Monday.")], [1, 1])
    task = ParaphraseTask().fit(train)
    x = task.encode_pair("The big dog runs home.", "A large dog is running home.")
    # the featurizer holds them (the task's featurizer_)
    assert task.featurizer_._wordnet_obj is not None and task.featurizer_._parser_obj is not None
    w = np.random.default_rng(0).normal(size=task.n_features)
    for name, dumps in _roundtrips():
        copy = pickle.loads(dumps(task))
        for attr in ("_parser_obj", "_wordnet_obj", "_ed_memo"):
            assert attr not in copy.featurizer_.__dict__, (name, attr)
            assert attr not in copy.__dict__, (name, attr)
        y = copy.encode_pair("The big dog runs home.", "A large dog is running home.")
        assert copy.featurizer_._wordnet_obj is not None and copy.featurizer_._parser_obj is not None
        assert (x.features != y.features).nnz == 0
        np.testing.assert_array_equal(x.problem.node_pairs, y.problem.node_pairs)
        a, b = task.structure_.latent_argmax(x, w), copy.structure_.latent_argmax(y, w)
        np.testing.assert_array_equal(a.structure, b.structure)
        assert a.score == b.score
