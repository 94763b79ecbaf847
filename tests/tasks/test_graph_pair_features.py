"""The Table-2 feature resources of the graph-pair tasks as options (issue 15, item 3): the
pronoun resolver, predicate-argument edges, the exact features each option adds, ablation
of every option, persistence of the options, and argmax = brute force with the new edges.

Everything runs on hand-built parses with ``use_wordnet=False`` (no spaCy, no WordNet)."""

import pickle
import warnings

import numpy as np
import pytest

from latentstruct.data.nlp import ParsedSentence
from latentstruct.exceptions import ConfigError, ConvergenceWarning
from latentstruct.inference.graph_alignment import (
    alignment_score,
    check_alignment,
    enumerate_alignments,
)
from latentstruct.learners import TwoStage
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks import Dataset
from latentstruct.tasks.pairs.features import (
    add_edges,
    canonical_forms,
    coref_matrix,
    predicate_argument_arcs,
)
from latentstruct.tasks.pairs import (
    GraphPairTask,
    ParaphraseTask,
    RteTask,
    SentenceGraph,
)

FLAGS = GraphPairTask.FEATURE_FLAGS


def parsed(rows, heads):
    """A ParsedSentence from ``(token, lemma, pos, tag, ner, deprel)`` rows and heads;
    ``neg`` deprels mark negation."""
    tokens, lemmas, pos, tags, ner, deprels = (tuple(c) for c in zip(*rows))
    return ParsedSentence(" ".join(tokens), tokens, lemmas, pos, tags, ner, tuple(heads), deprels,
                          tuple(d == "neg" for d in deprels))


def simple(words, heads=None):
    """Tokens given as ``word/POS/TAG[/NER]`` (lemma = lower-cased word, or the text after
    ``=``: ``cats=cat/NOUN/NNS``); a flat tree under the first token unless ``heads``."""
    rows = []
    for w in words.split():
        parts = w.split("/")
        tok, _, lemma = parts[0].partition("=")
        rows.append((tok, lemma or tok.lower(), parts[1], parts[2], parts[3] if len(parts) > 3 else "",
                     "dep"))
    heads = heads or [-1] + [0] * (len(rows) - 1)
    rows = [r[:5] + ("ROOT" if h < 0 else "dep",) for r, h in zip(rows, heads)]
    return parsed(rows, heads)


# "Smith arrived . He left ." / "Smith left"
SMITH_TEXT = parsed([("Smith", "Smith", "PROPN", "NNP", "B-PERSON", "nsubj"),
                     ("arrived", "arrive", "VERB", "VBD", "", "ROOT"),
                     (".", ".", "PUNCT", ".", "", "punct"),
                     ("He", "he", "PRON", "PRP", "", "nsubj"),
                     ("left", "leave", "VERB", "VBD", "", "ROOT"),
                     (".", ".", "PUNCT", ".", "", "punct")], [1, -1, 1, 4, -1, 4])
SMITH_HYP = parsed([("Smith", "Smith", "PROPN", "NNP", "B-PERSON", "nsubj"),
                    ("left", "leave", "VERB", "VBD", "", "ROOT")], [1, -1])

# "John Smith did not sit on the mat . He slept ." / "Smith sat on a mat in Paris"
RICH1 = parsed([("John", "John", "PROPN", "NNP", "B-PERSON", "compound"),
                ("Smith", "Smith", "PROPN", "NNP", "I-PERSON", "nsubj"),
                ("did", "do", "AUX", "VBD", "", "aux"),
                ("not", "not", "PART", "RB", "", "neg"),
                ("sit", "sit", "VERB", "VB", "", "ROOT"),
                ("on", "on", "ADP", "IN", "", "prep"),
                ("the", "the", "DET", "DT", "", "det"),
                ("mat", "mat", "NOUN", "NN", "", "pobj"),
                (".", ".", "PUNCT", ".", "", "punct"),
                ("He", "he", "PRON", "PRP", "", "nsubj"),
                ("slept", "sleep", "VERB", "VBD", "", "ROOT"),
                (".", ".", "PUNCT", ".", "", "punct")],
               [1, 4, 4, 4, -1, 4, 7, 5, 4, 10, -1, 10])
RICH2 = parsed([("Smith", "Smith", "PROPN", "NNP", "B-PERSON", "nsubj"),
                ("sat", "sit", "VERB", "VBD", "", "ROOT"),
                ("on", "on", "ADP", "IN", "", "prep"),
                ("a", "a", "DET", "DT", "", "det"),
                ("mat", "mat", "NOUN", "NN", "", "pobj"),
                ("in", "in", "ADP", "IN", "", "prep"),
                ("Paris", "Paris", "PROPN", "NNP", "B-GPE", "pobj")],
               [1, -1, 1, 4, 2, 1, 5])

# "The dog chased the cat" / "The cat was chased by the dog" (spaCy's parse of the passive)
ACTIVE = parsed([("The", "the", "DET", "DT", "", "det"),
                 ("dog", "dog", "NOUN", "NN", "", "nsubj"),
                 ("chased", "chase", "VERB", "VBD", "", "ROOT"),
                 ("the", "the", "DET", "DT", "", "det"),
                 ("cat", "cat", "NOUN", "NN", "", "dobj")], [1, 2, -1, 4, 2])
PASSIVE = parsed([("The", "the", "DET", "DT", "", "det"),
                  ("cat", "cat", "NOUN", "NN", "", "nsubjpass"),
                  ("was", "be", "AUX", "VBD", "", "auxpass"),
                  ("chased", "chase", "VERB", "VBN", "", "ROOT"),
                  ("by", "by", "ADP", "IN", "", "agent"),
                  ("the", "the", "DET", "DT", "", "det"),
                  ("dog", "dog", "NOUN", "NN", "", "pobj")], [1, 3, 3, -1, 3, 6, 4])


def row_features(task, x, r):
    """{name: value} of variable r of example x."""
    row = x.features.getrow(r)
    return {task.feature_index_.names[c]: v for c, v in zip(row.indices.tolist(), row.data.tolist())}


def part_lists(task, first, second):
    """The (name, value) lists of every variable of one pair, and its problem."""
    raw = next(task.pair_featurizer().parts(Dataset([(first, second)], [1])))
    return raw[5], raw[4], raw[1], raw[2]


# --------------------------------------------------------------------------- parameters
def test_defaults_keep_the_old_features_and_flags_are_validated():
    p, r = ParaphraseTask().get_params(), RteTask().get_params()
    assert {k: p[k] for k in FLAGS} == {
        "ne_features": True, "edit_features": True, "negation_features": True,
        "coref_features": False, "dep_label_features": True, "pa_edges": False,
        "edge_sim_features": True, "edge_node_features": False}
    assert {k: r[k] for k in FLAGS} == {
        "ne_features": False, "edit_features": False, "negation_features": True,
        "coref_features": False, "dep_label_features": False, "pa_edges": False,
        "edge_sim_features": True, "edge_node_features": False}
    assert not set(FLAGS) & (ParaphraseTask.evaluation_params | RteTask.evaluation_params)
    for flag in FLAGS:
        with pytest.raises(ConfigError, match=flag):
            ParaphraseTask(use_wordnet=False, **{flag: 1}).fit(Dataset([(SMITH_TEXT, SMITH_HYP)], [1]))
    task = RteTask(use_wordnet=False).fit(Dataset([(SMITH_TEXT, SMITH_HYP)], [1]))
    with pytest.raises(ConfigError, match="cannot change 'coref_features'"):
        task.set_params(coref_features=True)


# --------------------------------------------------------------------------- the resolver
@pytest.mark.parametrize("words, expected", [
    # he -> the nearest PERSON entity (the common noun in between is incompatible)
    ("John/PROPN/NNP/B-PERSON saw/VERB/VBD the/DET/DT dog/NOUN/NN ./PUNCT/. He/PRON/PRP ran/VERB/VBD",
     {5: "john"}),
    # it -> the nearest singular non-person noun (Mary is a PERSON)
    ("Mary/PROPN/NNP/B-PERSON bought/VERB/VBD a/DET/DT car/NOUN/NN ./PUNCT/. It/PRON/PRP broke/VERB/VBD",
     {5: "car"}),
    # no antecedent: nothing before the pronoun
    ("He/PRON/PRP left/VERB/VBD", {}),
    # no compatible antecedent: "it" takes neither a PERSON nor a plural noun
    ("Mary/PROPN/NNP/B-PERSON cats=cat/NOUN/NNS it/PRON/PRP", {}),
    # they -> the plural noun (lemma), not the nearer singular noun; them (lemma "they")
    ("cats=cat/NOUN/NNS saw/VERB/VBD dog/NOUN/NN They/PRON/PRP ate/VERB/VBD them=they/PRON/PRP",
     {3: "cat", 5: "cat"}),
    # they -> any entity; a multi-word entity gives its last token; his (token "his")
    (("the/DET/DT Red/PROPN/NNP/B-ORG Cross/PROPN/NNP/I-ORG said/VERB/VBD they/PRON/PRP "
      "Bob/PROPN/NNP/B-PERSON Jones/PROPN/NNP/I-PERSON lost/VERB/VBD his/PRON/PRP$ hat/NOUN/NN"),
     {4: "cross", 8: "jones"}),
    # a proper noun outside any entity is a person; a pronoun is never an antecedent
    ("Smith/PROPN/NNP spoke/VERB/VBD she/PRON/PRP her/PRON/PRP", {2: "smith", 3: "smith"}),
    # "it" takes a non-person entity; words that are not PRON are not resolved
    ("Paris/PROPN/NNP/B-GPE is/AUX/VBZ big/ADJ/JJ it/PRON/PRP it/NOUN/NN", {3: "paris"}),
])
def test_canonical_forms(words, expected):
    s = simple(words)
    assert canonical_forms(s) == tuple(expected.get(i, "") for i in range(len(s)))


def test_graph_canonical_forms_follow_dropped_punctuation():
    g = SentenceGraph.from_parsed(SMITH_TEXT, coref=True)
    assert g.tokens == ("Smith", "arrived", "He", "left")
    assert g.canonical == ("", "", "smith", "")
    assert SentenceGraph.from_parsed(SMITH_TEXT).canonical == ("",) * 4  # option off
    assert g.doubled().canonical == g.canonical * 2
    h = SentenceGraph.from_parsed(SMITH_HYP, coref=True)
    # He ~ Smith (canonical form = lemma); Smith ~ Smith is a lemma match, not coreference
    assert coref_matrix(g, h).tolist() == [[False, False], [False, False], [True, False],
                                           [False, False]]
    # both canonical forms equal: "He" and "his" both resolve to Smith
    other = SentenceGraph.from_parsed(simple("Smith/PROPN/NNP lost/VERB/VBD his/PRON/PRP$ hat/NOUN/NN"),
                                      coref=True)
    assert other.canonical == ("", "", "smith", "")
    assert coref_matrix(g, other)[2].tolist() == [True, False, True, False]


# --------------------------------------------------------------------------- predicate-argument edges
def test_predicate_argument_arcs_and_graph_edges():
    sat = parsed([("The", "the", "DET", "DT", "", "det"), ("cat", "cat", "NOUN", "NN", "", "nsubj"),
                  ("sat", "sit", "VERB", "VBD", "", "ROOT"), ("On", "on", "ADP", "IN", "", "prep"),
                  ("the", "the", "DET", "DT", "", "det"), ("mat", "mat", "NOUN", "NN", "", "pobj"),
                  (".", ".", "PUNCT", ".", "", "punct")], [1, 2, -1, 2, 5, 3, 2])
    assert predicate_argument_arcs(sat) == [(2, 5, "pa:on")]
    plain = SentenceGraph.from_parsed(sat)
    g = SentenceGraph.from_parsed(sat, pa_edges=True)
    n = len(plain.labels)
    # the dependency edges first, unchanged, then sat -> mat
    assert g.edges[:n].tolist() == plain.edges.tolist() and g.labels[:n] == plain.labels
    assert g.edges[n:].tolist() == [[2, 5]] and g.labels[n:] == ("pa:on",)
    # passive: the agent's object becomes the subject; nsubjpass is already an edge
    assert predicate_argument_arcs(PASSIVE) == [(3, 1, "pa:obj"), (3, 6, "pa:subj")]
    gp = SentenceGraph.from_parsed(PASSIVE, pa_edges=True)
    new = dict(zip(map(tuple, gp.edges.tolist()), gp.labels))
    assert new[(3, 1)] == "nsubjpass" and new[(3, 6)] == "pa:subj"
    assert len(gp.labels) == len(SentenceGraph.from_parsed(PASSIVE).labels) + 1
    # an ADP-headed pobj under a non-verb gives nothing
    assert predicate_argument_arcs(simple("mat/NOUN/NN on/ADP/IN floor/NOUN/NN", [-1, 0, 1])) == []
    assert add_edges([(0, 1)], ["x"], [(0, 1, "pa:a"), (2, 2, "pa:b"), (1, 2, "pa:c"), (1, 2, "pa:d")]) \
        == ([(0, 1), (1, 2)], ["x", "pa:c"])


def test_pa_edges_let_active_and_passive_edges_align():
    """chase -nsubj-> dog (active) can map to chase -pa:subj-> dog (passive) only with pa_edges."""
    for on in (False, True):
        task = ParaphraseTask(use_wordnet=False, pa_edges=on, top_k=7, normalize=False)
        task.fit(Dataset([(ACTIVE, PASSIVE)], [1]))
        x = task.make_example(ACTIVE, PASSIVE)
        e1 = {tuple(e): k for k, e in enumerate(x.g1.edges.tolist())}
        e2 = {tuple(e): k for k, e in enumerate(x.g2.edges.tolist())}
        assert ((2, 1) in e1) and (((3, 6) in e2) is on)
        pairs = {tuple(p): q for q, p in enumerate(x.problem.edge_pairs.tolist())}
        if not on:
            assert "emap:dep_same=pa:subj" not in task.feature_index_.names
            assert not any("pa:" in name for name in task.feature_index_.names)
            continue
        q = pairs[(e1[(2, 1)], e2[(3, 6)])]
        f = row_features(task, x, x.problem.variable_layout()["edge_map"].start + q)
        assert f == {"emap:const": 1.0, "emap:h:wn=same": 1.0, "emap:d:wn=same": 1.0,
                     "emap:wnsim": 1.0, "emap:dep=diff": 1.0}
        assert "edel:dep=pa:subj" in task.feature_index_.names


# --------------------------------------------------------------------------- coref in the tasks
@pytest.mark.parametrize("cls", [RteTask, ParaphraseTask])
def test_coref_makes_the_pronoun_a_candidate_with_its_feature(cls):
    """He (text word 2) becomes a candidate for Smith (hypothesis word 0) with map:coref=same."""
    # RTE: Smith's 2 best text words; paraphrase: He's best hypothesis word (without coref:
    # "left", edit similarity 0.25 against 0 for "smith")
    top_k = 2 if cls is RteTask else 1
    for on in (False, True):
        task = cls(use_wordnet=False, top_k=top_k, normalize=False, coref_features=on)
        task.fit(Dataset([(SMITH_TEXT, SMITH_HYP)], [1]))
        x = task.make_example(SMITH_TEXT, SMITH_HYP)
        assert ((2, 0) in x.pair_index) is on
        assert ("map:coref=same" in task.feature_index_.names) is on
        if on:
            f = row_features(task, x, x.pair_index[(2, 0)])
            extra = ({"map:ne=one": 1.0, "map:ed=none": 1.0} if cls is ParaphraseTask else {})
            pos = "PRON|PROPN"
            assert f == {"map:const": 1.0, "map:wn=0": 1.0, f"map:pos={pos}": 1.0,
                         "map:sp=x&wn=0": 1.0, "map:coref=same": 1.0, **extra}
            # the lemma match Smith ~ Smith is not a coreference feature
            assert "map:coref=same" not in row_features(task, x, x.pair_index[(0, 0)])


def test_rte_can_use_the_paraphrase_resources():
    base = RteTask(use_wordnet=False).fit(Dataset([(RICH1, RICH2)], [1]))
    full = RteTask(use_wordnet=False, ne_features=True, edit_features=True,
                   dep_label_features=True).fit(Dataset([(RICH1, RICH2)], [1]))
    added = set(full.feature_index_.names) - set(base.feature_index_.names)
    assert set(base.feature_index_.names) <= set(full.feature_index_.names)
    assert {"map:ne=same", "map:ne=one", "del:ne=PERSON", "del:ne=GPE", "map:ed=eq",
            "emap:dep=same", "emap:dep_same=pobj"} <= added
    assert all(n.startswith(("map:ne=", "del:ne=", "map:ed=", "emap:dep")) for n in added)
    assert not any(n.startswith("edel:") and n != "edel:const" for n in full.feature_index_.names)


# --------------------------------------------------------------------------- ablation
OWN = {
    "ne_features": ("map:ne=", "del:ne="),
    "edit_features": ("map:ed=",),
    "negation_features": ("map:neg_mismatch",),
    "coref_features": ("map:coref=",),
    "dep_label_features": ("emap:dep=", "emap:dep_same=", "edel:dep="),
    "edge_sim_features": ("emap:wnsim",),
    "edge_node_features": ("emap:hs:", "emap:ds:"),
}


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_edge_node_features_are_the_endpoints_word_features_scaled(cls):
    # §5.2: an edge mapping carries its head's and dependent's word-mapping features, times
    # the product of the two WNSim values (use_wordnet=False: 1 for equal lemmas, else 0)
    task = cls(use_wordnet=False, top_k=20, edge_node_features=True, edge_sim_features=True)
    _, g1, g2, lex, problem, parts = next(task.pair_featurizer().parts(Dataset([(RICH1, RICH2)], [1])))
    pairs = problem.node_pairs.tolist()
    first_edge = (len(pairs) + (len(g1) if problem.delete_nodes1 else 0)
                  + (len(g2) if problem.delete_nodes2 else 0))
    n_edges, n_map = len(problem.edge_pairs), len(pairs)
    scaled = unscaled = 0
    for k, (ph, pd) in enumerate(problem.edge_pair_nodes.tolist()):
        feats = dict(parts[first_edge + k])
        (hi, hj), (di, dj) = pairs[ph], pairs[pd]
        scale = float(lex.sim[hi, hj] * lex.sim[di, dj])
        assert feats["emap:wnsim"] == pytest.approx(scale)
        want = {}
        if scale > 0:
            for side, m in (("hs", ph), ("ds", pd)):
                for name, v in parts[m]:
                    want[f"emap:{side}:{name[4:]}"] = v * scale
        got = {n: v for n, v in parts[first_edge + k] if n.startswith(("emap:hs:", "emap:ds:"))}
        assert got == pytest.approx(want)
        scaled += scale > 0
        unscaled += scale == 0
        assert k < n_edges and ph < n_map and pd < n_map
    assert scaled > 0 and unscaled > 0  # the pair has both kinds of edge mapping


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
@pytest.mark.parametrize("flag", sorted(OWN))
def test_each_flag_off_removes_exactly_its_features(cls, flag):
    # top_k above both lengths: every word pair is a candidate, so pruning does not move
    all_on = dict.fromkeys(FLAGS, True)
    on = cls(use_wordnet=False, top_k=20, **all_on)
    off = cls(use_wordnet=False, top_k=20, **{**all_on, flag: False})
    parts_on, prob_on, _, _ = part_lists(on, RICH1, RICH2)
    parts_off, prob_off, _, _ = part_lists(off, RICH1, RICH2)
    np.testing.assert_array_equal(prob_on.node_pairs, prob_off.node_pairs)
    np.testing.assert_array_equal(prob_on.edge_pairs, prob_off.edge_pairs)
    # a word-mapping resource also leaves the edges' copies of it (edge_node_features)
    own = OWN[flag] + tuple(f"emap:{side}:{q[4:]}" for q in OWN[flag] if q.startswith("map:")
                            for side in ("hs", "ds"))
    removed = 0
    for a, b in zip(parts_on, parts_off, strict=True):
        kept = [(n, v) for n, v in a if not n.startswith(own)]
        removed += len(a) - len(kept)
        assert b == kept
    assert removed > 0  # the pair exercises every resource


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_pa_edges_off_removes_exactly_the_added_edges(cls):
    all_on = dict.fromkeys(FLAGS, True)
    _, prob_on, g1, g2 = part_lists(cls(use_wordnet=False, top_k=20, **all_on), RICH1, RICH2)
    no_pa = cls(use_wordnet=False, top_k=20, **{**all_on, "pa_edges": False})
    parts_off, prob_off, h1, h2 = part_lists(no_pa, RICH1, RICH2)
    assert [lab for lab in g1.labels if lab.startswith("pa:")] == ["pa:on"]
    assert [lab for lab in g2.labels if lab.startswith("pa:")] == ["pa:on", "pa:in"]
    for g, h in ((g1, h1), (g2, h2)):
        n = len(h.labels)
        assert g.edges[:n].tolist() == h.edges.tolist() and g.labels[:n] == h.labels
        assert all(lab.startswith("pa:") for lab in g.labels[n:])
    np.testing.assert_array_equal(prob_on.node_pairs, prob_off.node_pairs)
    assert prob_on.n_edge_pairs > prob_off.n_edge_pairs
    assert not any("pa:" in n for part in parts_off for n, _ in part)


# --------------------------------------------------------------------------- persistence
def _toggled(cls):
    defaults = cls().get_params()
    return {flag: not defaults[flag] for flag in FLAGS}


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_toggled_flags_pickle_and_round_trip_through_a_model_file(cls, tmp_path):
    flags = _toggled(cls)
    records = [(RICH1, RICH2), (SMITH_TEXT, SMITH_HYP), (ACTIVE, PASSIVE), (PASSIVE, ACTIVE)]
    data = Dataset(records, np.array([1, 1, -1, -1]))
    task = cls(use_wordnet=False, **flags).fit(data)
    X = task.featurize(data)
    copy = pickle.loads(pickle.dumps(task))
    assert {f: copy.get_params()[f] for f in FLAGS} == flags
    assert all((a.features != b.features).nnz == 0 for a, b in zip(X, copy.featurize(data)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = TwoStage(task, random_state=0).fit(X, task.encode_targets(data.targets))
    path = tmp_path / "m.npz"
    save_trained(path, task, model)
    task2, model2, _ = load_trained(path)
    assert type(task2) is cls and {f: task2.get_params()[f] for f in FLAGS} == flags
    assert task2.feature_index_.names == task.feature_index_.names
    X2 = task2.featurize(data)
    np.testing.assert_allclose(model2.decision_function(X2), model.decision_function(X), atol=1e-12)
    # a model file written before the options existed loads with the default features
    params = {k: v for k, v in task.get_params().items() if k not in FLAGS}
    old = cls.from_state(params, *task.get_state())
    assert {f: old.get_params()[f] for f in FLAGS} == {f: not v for f, v in flags.items()}


# --------------------------------------------------------------------------- argmax vs brute force
WORDS = {"NOUN": ("cat", "mat"), "VERB": ("sat", "ran"), "ADP": ("on", "by"),
         "PRON": ("he", "it", "they"), "PROPN": ("Smith", "Paris")}
POS = ("NOUN", "VERB", "ADP", "PRON", "PROPN")
TAGS = {"NOUN": ("NN", "NNS"), "VERB": ("VBD",), "ADP": ("IN",), "PRON": ("PRP",), "PROPN": ("NNP",)}
LABELS = ("prep", "pobj", "agent", "nsubjpass", "nsubj")


def random_sentence(rng, n):
    """A verb with a prepositional (or agent) argument, then n - 3 random words."""
    pos = ["VERB", "ADP", str(rng.choice(POS))] + [str(rng.choice(POS)) for _ in range(n - 3)]
    heads = [-1, 0, 1] + [int(rng.integers(0, i)) for i in range(3, n)]
    labels = ["ROOT", str(rng.choice(["prep", "agent"])), "pobj"] + [str(rng.choice(LABELS))
                                                                       for _ in range(n - 3)]
    rows = [(str(rng.choice(WORDS[p])),) * 2 + (p, str(rng.choice(TAGS[p])),
             str(rng.choice(["", "B-PERSON", "B-GPE"])), lab)
            for p, lab in zip(pos, labels)]
    return parsed(rows, heads)


@pytest.mark.parametrize("cls", [ParaphraseTask, RteTask])
def test_latent_argmax_equals_brute_force_with_pa_edges_and_coref(cls):
    rng = np.random.default_rng(7)
    n_pa = n_pa_pairs = n_coref = n_checked = 0
    for _ in range(4):
        records = [(random_sentence(rng, int(rng.integers(3, 6))),
                    random_sentence(rng, int(rng.integers(3, 5)))) for _ in range(5)]
        task = cls(use_wordnet=False, top_k=int(rng.integers(1, 4)), pa_edges=True, coref_features=True,
                   dep_label_features=True)
        data = Dataset(records, np.ones(len(records), dtype=np.int64))
        X = task.fit(data).featurize(data)
        coref = task.feature_index_.lookup("map:coref=same")  # -1 when never seen
        for x in X:
            n_pa += sum(lab.startswith("pa:") for lab in x.g1.labels + x.g2.labels)
            n_coref += int(x.features[:, coref].nnz) if coref >= 0 else 0
            n_pa_pairs += sum(x.g1.labels[a].startswith("pa:") or x.g2.labels[b].startswith("pa:")
                              for a, b in x.problem.edge_pairs.tolist())
            w = rng.normal(size=task.n_features)
            res = task.structure_.latent_argmax(x, w)
            assert check_alignment(x.problem, task.structure_.alignment(x, res.structure)) == []
            assert res.score == pytest.approx(task.structure_.latent_feature(x, res.structure).dot(w), abs=1e-9)
            scores = task.structure_.part_scores(x, w)
            best = max(alignment_score(a, scores) for a in enumerate_alignments(x.problem))
            assert res.score == pytest.approx(w[0] + best, abs=1e-9)
            n_checked += 1
    assert n_checked == 20 and n_pa >= 40 and n_pa_pairs >= 5 and n_coref >= 3  # all exercised
