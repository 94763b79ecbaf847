"""The ``rerank`` task: hidden-variable sums against enumeration, the graphs D(t), templates,
domains, targets, metrics, parser identity and persistence."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from latentstruct.data.dependency.kbest import (KBestCandidate, KBestHeader, KBestSentence,
                                                write_kbest)
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.tree_bp import tree_sum_product
from latentstruct.tasks import TASKS
from latentstruct.tasks.rerank import RerankTask, kbest_dataset
from latentstruct.tasks.rerank.features import NODE_TEMPLATE_NAMES
from latentstruct.tasks.rerank.scoring import candidate_sum_product, tree_order

COL = {name: i for i, name in enumerate(NODE_TEMPLATE_NAMES)}


def header(parser_id="P1", k=4, single_root=False):
    return KBestHeader(parser_id, k, single_root, True, "gold", "test.conllu")


def sentence(words, tags, cands, gold=None, gold_rels=None, scored=None, xpos=None, sid="s"):
    n = len(words)
    return KBestSentence(
        sid, tuple(words), tuple(w.lower() for w in words), tuple(tags),
        tuple(xpos or ("_",) * n), tuple(scored or (True,) * n),
        None if gold is None else tuple(gold), None if gold_rels is None else tuple(gold_rels),
        tuple(KBestCandidate(tuple(h), tuple(r), float(s)) for h, r, s in cands), 2)


# Fig. 2: "bought 1.5m shares in heavy trading yesterday"
FIG2_WORDS = ["bought", "1.5m", "shares", "in", "heavy", "trading", "yesterday"]
FIG2_TAGS = ["VERB", "NUM", "NOUN", "ADP", "ADJ", "NOUN", "NOUN"]
FIG2_HEADS = [0, 3, 1, 1, 6, 4, 1]
FIG2_RELS = ["root", "nummod", "obj", "prep", "amod", "pobj", "obl"]
# candidate 1: "in" attached to "shares" instead of "bought"
ALT_HEADS = [0, 3, 1, 3, 6, 4, 1]
ALT_RELS = ["root", "nummod", "obj", "nmod", "amod", "pobj", "obl"]


def fig2(**task_params):
    s = sentence(FIG2_WORDS, FIG2_TAGS, [(FIG2_HEADS, FIG2_RELS, 5.0), (ALT_HEADS, ALT_RELS, 4.0)],
                 FIG2_HEADS, FIG2_RELS)
    return featurized([s], **task_params)


def featurized(sents, parser_id="P1", **task_params):
    ds = kbest_dataset(header(parser_id), sents, "lists.kbest")
    task = RerankTask(**task_params).fit(ds)
    return task, task.featurize(ds), ds


def tiny_sentences():
    """Two 3–4-word sentences with 3 and 2 candidates (one multi-root, one unlabelled)."""
    a = sentence(["John", "saw", "Mary", "."], ["PROPN", "VERB", "PROPN", "PUNCT"],
                 [([2, 0, 2, 2], ["nsubj", "root", "obj", "punct"], 2.0),
                  ([2, 0, 2, 3], ["nsubj", "root", "obj", "punct"], 1.2),
                  ([0, 1, 2, 0], ["root", "dep", "obj", "root"], 0.5)],
                 [2, 0, 2, 2], ["nsubj", "root", "obj", "punct"], scored=[True, True, True, False])
    b = sentence(["dogs", "bark", "loudly"], ["NOUN", "VERB", "ADV"],
                 [([2, 0, 2], ["_", "_", "_"], -1.0), ([0, 1, 2], ["_", "_", "_"], -1.5)],
                 [2, 0, 2], ["nsubj", "root", "advmod"])
    return [a, b]


def enumerate_candidate(task, x, j, w):
    """Scores and features of every hidden assignment of candidate j, by brute force."""
    sizes = task.structure_.hidden_domain_sizes(x, j)
    feats = [task.structure_.candidate_feature(x, j, h) for h in itertools.product(*map(range, sizes))]
    return np.array([f.dot(w) for f in feats]), feats, list(itertools.product(*map(range, sizes)))


# --- the graphs D(t) -----------------------------------------------------------------------
def test_sibling_graph_of_figure_2():
    task, X, _ = fig2(graph="sibling")
    # bought -> shares -> in -> yesterday links the adjacent siblings under "bought" (§4.2);
    # 1.5m hangs from shares, trading from in, heavy from trading (their own heads)
    np.testing.assert_array_equal(task.structure_.graph_parents(X[0], 0), [-1, 2, 0, 2, 5, 3, 3])
    task, X, _ = fig2(graph="head")
    np.testing.assert_array_equal(task.structure_.graph_parents(X[0], 0), [-1, 2, 0, 0, 5, 3, 0])


def test_sibling_chain_passes_through_the_head_and_joins_roots():
    # children of word 3 (1-based): 1, 2 on the left and 4, 5 on the right; 6 is a second root
    s = sentence(list("abcdef"), ["X"] * 6,
                 [([3, 3, 0, 3, 3, 0], ["r"] * 6, 0.0)])
    task, X, _ = featurized([s], graph="sibling")
    # chains c -> b -> a and c -> d -> e; the root words c and f form the chain c -> f
    np.testing.assert_array_equal(task.structure_.graph_parents(X[0], 0), [1, 2, -1, 2, 3, 2])
    task, X, _ = featurized([s], graph="head")
    np.testing.assert_array_equal(task.structure_.graph_parents(X[0], 0), [2, 2, -1, 2, 2, 2])


# --- templates ------------------------------------------------------------------------------
def test_templates_follow_the_tree():
    task, X, _ = fig2(hash_bits=20)
    t0, t1 = task.structure_.node_templates(X[0], 0), task.structure_.node_templates(X[0], 1)
    assert len(set(t0[:, COL["h"]])) == 1 and np.all(t0[:, COL["h"]] == t1[:, COL["h"]])
    for name in ("word", "pos", "word+pos"):
        np.testing.assert_array_equal(t0[:, COL[name]], t1[:, COL[name]])
    assert len(set(t0[:, COL["word"]])) == 7
    assert t0[2, COL["pos"]] == t0[5, COL["pos"]] == t0[6, COL["pos"]]  # all NOUN
    changed = lambda name: (t0[:, COL[name]] != t1[:, COL[name]]).nonzero()[0].tolist()
    assert changed("rel") == [3]  # prep -> nmod
    assert changed("head-rule") == [0, 2, 3]  # bought and shares change children; in its relation
    assert changed("down") == [0, 2]
    # the siblings of 1.5m (under shares), of shares/in/yesterday (under bought) and the
    # relation of trading's head change
    assert changed("mod-rule") == [1, 2, 3, 5, 6]
    assert changed("up") == [3, 4, 5]  # paths through in's relation
    assert changed("head-gpar-rule") == [0, 2, 3, 5]
    # edge templates exist below the root of D only
    e = task.structure_.edge_templates(X[0], 0)
    assert np.all(e[0] == 0) and np.all(e[1:] != 0)


def test_unlabelled_candidates_get_head_pos_relations():
    task, X, _ = featurized(tiny_sentences())
    t0, t1 = task.structure_.node_templates(X[1], 0), task.structure_.node_templates(X[1], 1)
    # "dogs" -> bark (a VERB to its right) vs root: the derived relation differs;
    # "loudly" -> bark in both candidates: the same derived relation
    assert t0[0, COL["rel"]] != t1[0, COL["rel"]] and t0[2, COL["rel"]] == t1[2, COL["rel"]]


def test_feature_vector_has_one_entry_per_template():
    task, X, _ = fig2(hash_bits=24)
    assert task.base_scale_ == pytest.approx(np.sqrt(0.5))  # s_j - s_1 = 0, -1
    for j, base in ((0, 0.0), (1, -1.0 / np.sqrt(0.5))):
        phi = task.structure_.candidate_feature(X[0], j, np.zeros(7, int))
        vals = dict(zip(phi.indices.tolist(), phi.values.tolist()))
        assert vals.pop(task.structure_.base_index, 0.0) == pytest.approx(base)
        assert sum(vals.values()) == 7 * 20 + 6 * 3
    task, X, _ = fig2(hash_bits=24, base_score=False)
    assert task.structure_.base_index not in task.structure_.candidate_feature(X[0], 1, np.zeros(7, int)).indices


# --- sums over hidden values against enumeration ------------------------------------------------
CASES = [("no-hidden", "head", None), ("pos", "head", 2), ("pos", "sibling", 3), ("relation", "head", 2),
         ("lexical", "sibling", 2), ("relation", "sibling", 1)]


@pytest.mark.parametrize("domain, graph, n_hidden", CASES)
def test_log_partitions_and_expectations_match_enumeration(domain, graph, n_hidden):
    task, X, _ = featurized(tiny_sentences(), domain=domain, graph=graph, n_hidden=n_hidden,
                            hash_bits=6)
    rng = np.random.default_rng(0)
    w = rng.normal(size=task.n_features)
    for i in range(len(X)):
        x = X[i]
        k = x.n_candidates()
        scale = 0.7
        lz = task.structure_.candidate_log_partitions(x, w / scale, scale=scale)
        coef = rng.normal(size=k)
        expected = np.zeros(task.n_features)
        brute_lz, best = [], []
        for j in range(k):
            scores, feats, assignments = enumerate_candidate(task, x, j, w)
            brute_lz.append(logsumexp(scores))
            p = np.exp(scores - brute_lz[-1])
            for pj, f in zip(p, feats):
                expected[f.indices] += coef[j] * pj * f.values
            best.append((scores.max(), assignments))
        np.testing.assert_allclose(lz, brute_lz, rtol=1e-12, atol=1e-12)
        res = task.structure_.candidate_expected_features(x, w, coef)
        np.testing.assert_allclose(res.features, expected, atol=1e-12)
        sparse = task.structure_.candidate_expected_features(x, w, lambda lz_: coef, sparse=True).features
        np.testing.assert_allclose(sparse.coalesce().to_dense(task.n_features), expected,
                                   atol=1e-12)
        for j, r in enumerate(task.structure_.candidate_max_product(x, w)):
            assert r.score == pytest.approx(best[j][0], abs=1e-12)
            assert task.structure_.candidate_feature(x, j, r.structure).dot(w) == pytest.approx(r.score)


def test_marginalizable_capability_is_consistent():
    task, X, _ = featurized(tiny_sentences(), domain="pos", graph="sibling", n_hidden=2,
                            hash_bits=6)
    w = np.random.default_rng(1).normal(size=task.n_features)
    x = X[0]
    m = task.structure_.marginals(x, w)
    lz = task.structure_.candidate_log_partitions(x, w)
    assert m.log_partition == pytest.approx(logsumexp(lz)) == task.structure_.log_partition(x, w)
    np.testing.assert_allclose(m.candidate_probabilities, np.exp(lz - logsumexp(lz)))
    np.testing.assert_allclose(m.node_marginals.sum(axis=2), 1.0)
    for j in range(3):
        has_edge = m.parents[j] >= 0
        np.testing.assert_allclose(m.edge_marginals[j][has_edge].sum(axis=(1, 2)), 1.0)
        # an edge marginal sums over the parent's value to the child's node marginal
        np.testing.assert_allclose(m.edge_marginals[j][has_edge].sum(axis=1),
                                   m.node_marginals[j][has_edge])
    # the expected feature is the gradient of the log-partition
    ef = task.structure_.expected_feature(x, w)
    for idx in list(np.flatnonzero(ef)[:6]) + [task.structure_.base_index]:
        e = np.zeros_like(w)
        e[idx] = 1e-6
        fd = (task.structure_.log_partition(x, w + e) - task.structure_.log_partition(x, w - e)) / 2e-6
        assert fd == pytest.approx(ef[idx], abs=1e-6)


def test_sum_product_kernel_equals_tree_bp_with_padded_domains():
    rng = np.random.default_rng(2)
    for n in (1, 2, 5, 8):
        K = 4
        parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
        dom = rng.integers(1, K + 1, size=n)
        U = rng.normal(size=(n, K))
        for i in range(n):
            U[i, dom[i]:] = -np.inf
        E = rng.normal(size=(n, K, K))
        order, ptr, kids = np.empty(n, np.int64), np.empty(n + 1, np.int64), np.empty(n, np.int64)
        tree_order(parents, order, ptr, kids)
        nm, em = np.zeros((n, K)), np.zeros((n, K, K))
        lz = candidate_sum_product(U, E, np.arange(n), np.where(parents >= 0, np.arange(n), -1),
                                   parents, order, True, nm, em, np.empty((n, K)),
                                   np.empty((n, K)), np.empty(K), np.empty(K))
        ref = tree_sum_product(U, parents, E)
        assert lz == pytest.approx(ref.log_partition, abs=1e-12)
        np.testing.assert_allclose(nm, ref.node_marginals, atol=1e-12)
        np.testing.assert_allclose(em[1:] if n > 1 else em[:0], ref.edge_marginals[1:], atol=1e-12)


# --- domains ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("domain, n_hidden, size", [
    ("pos", None, 5), ("lexical", None, 3), ("relation", None, 5), ("no-hidden", None, 1),
    ("pos", 2, 2), ("lexical", 4, 4)])
def test_domain_sizes(domain, n_hidden, size):
    task, X, _ = fig2(domain=domain, n_hidden=n_hidden)
    assert task.structure_.hidden_domain_sizes(X[0], 1).tolist() == [size] * 7


@pytest.mark.slow
def test_supersense_domain_falls_back_to_pos(require_wordnet):
    task, X, _ = fig2(domain="supersense")
    # bought: 3 verb supersenses x 3; 1.5m, in, heavy?: adj.all x 3; in (ADP): POS x 5
    sizes = task.structure_.hidden_domain_sizes(X[0], 0).tolist()
    assert sizes[0] == 9 and sizes[2] == 9  # shares: possession, act, artifact (§4.1)
    assert sizes[3] == 5 and sizes[1] == 5  # in, 1.5m: no supersense -> POS x 5
    assert sizes[4] == 3  # heavy: adj.all only
    task, X, _ = fig2(domain="supersense", max_supersenses=1, n_hidden=2)
    assert task.structure_.hidden_domain_sizes(X[0], 0).tolist()[:4] == [2, 2, 2, 2]
    # PTB tags (xpos) are mapped to WordNet's POS too
    s = sentence(["shares", "in"], ["_", "_"], [([0, 1], ["_", "_"], 0.0)], xpos=["NNS", "IN"])
    task, X, _ = featurized([s], domain="supersense")
    assert task.pos_column_ == "xpos" and task.structure_.hidden_domain_sizes(X[0], 0).tolist() == [9, 5]
    # and the sums stay exact with supersense domains
    task, X, _ = fig2(domain="supersense", max_supersenses=2, n_hidden=1, hash_bits=6)
    w = np.random.default_rng(3).normal(size=task.n_features)
    brute = [logsumexp(enumerate_candidate(task, X[0], j, w)[0]) for j in range(2)]
    np.testing.assert_allclose(task.structure_.candidate_log_partitions(X[0], w), brute, rtol=1e-12)


# --- targets and metrics ------------------------------------------------------------------------
def test_oracle_ties_keep_the_whole_tied_set():
    s = sentence(["a", "b", "c"], ["X"] * 3,
                 [([0, 1, 1], ["r"] * 3, 3.0), ([0, 1, 2], ["r"] * 3, 2.0),
                  ([0, 3, 1], ["r"] * 3, 1.0), ([2, 0, 2], ["r"] * 3, 0.0)],
                 gold=[0, 3, 2], gold_rels=["r"] * 3)
    (t,) = RerankTask().encode_targets([s])
    assert t.correct_heads.tolist() == [1, 2, 2, 1]
    assert t.oracle.tolist() == [1, 2] and t.n_scored == 3


def test_evaluate_counts_scored_tokens():
    task, X, ds = featurized(tiny_sentences())
    Y = task.encode_targets(ds.targets)
    # candidate 1 differs from the gold tree only on the unscored "."
    assert Y[0].correct_heads.tolist() == [3, 3, 1] and Y[0].n_scored == 3
    assert Y[0].oracle.tolist() == [0, 1] and Y[0].correct_labels.tolist() == [3, 3, 1]
    assert Y[1].correct_heads.tolist() == [3, 1]
    assert Y[1].correct_labels is None  # the candidates carry no relations
    m = task.evaluate(Y, [2, 1])
    assert m == {"uas": 2 / 6, "las": None, "n_tokens_scored": 6, "oracle_uas": 1.0,
                 "base_uas": 1.0}
    assert task.evaluate(Y[:1], [2]) == {"uas": 1 / 3, "las": 1 / 3, "n_tokens_scored": 3,
                                         "oracle_uas": 1.0, "base_uas": 1.0}
    with pytest.raises(InputError, match="one chosen candidate per sentence"):
        task.evaluate(Y, [0])
    with pytest.raises(InputError, match="not a candidate index"):
        task.evaluate(Y, [0, 2])


def test_sentences_without_gold_cannot_be_targets():
    s = sentence(["a", "b"], ["X", "X"], [([0, 1], ["r", "r"], 0.0)])
    with pytest.raises(InputError, match="has no gold tree"):
        RerankTask().encode_targets([s])


def test_write_predictions_as_conllu(tmp_path):
    task, X, ds = featurized(tiny_sentences())
    out = tmp_path / "pred.conllu"
    task.write_predictions(out, ds, [2, 0])
    text = out.read_text().split("\n")
    assert text[0] == "# sent_id = s"
    assert text[1] == "1\tJohn\tjohn\tPROPN\t_\t_\t0\troot\t_\t_"
    assert text[4] == "4\t.\t.\tPUNCT\t_\t_\t0\troot\t_\t_"
    assert text[5] == "" and text[7] == "1\tdogs\tdogs\tNOUN\t_\t_\t2\t_\t_\t_"


# --- parser identity, state, parameters --------------------------------------------------------
def test_lists_of_another_parser_are_refused_at_line_1(tmp_path):
    train, other = tmp_path / "train.kbest", tmp_path / "other.kbest"
    write_kbest(train, header("parser-A"), tiny_sentences())
    write_kbest(other, header("parser-B"), tiny_sentences())
    task = RerankTask()
    data = task.read(train)
    task.fit(data)
    task.featurize(task.read(train))
    with pytest.raises(InputError) as err:
        task.read(other)
    msg = str(err.value)
    assert msg.startswith(f"{other}:1: k-best lists of parser parser-B, but this reranker was "
                          f"trained on lists of parser parser-A")
    stale = RerankTask().read(other)  # read by an unfitted task: no check yet
    with pytest.raises(InputError, match=r":1: k-best lists of parser parser-B"):
        task.featurize(stale)


def test_state_round_trip_gives_the_same_scores():
    task, X, ds = featurized(tiny_sentences(), domain="relation", graph="sibling", n_hidden=2,
                             hash_bits=8)
    state, arrays = task.get_state()
    assert state == {"parser_id": "P1", "pos_column": "upos",
                     "base_scale": pytest.approx(np.sqrt((0.8**2 + 1.5**2 + 0.5**2) / 5))}
    assert arrays == {}
    again = RerankTask.from_state(task.get_params(), state, arrays)
    w = np.random.default_rng(4).normal(size=task.n_features)
    X2 = again.featurize(ds)
    for i in range(2):
        np.testing.assert_array_equal(again.structure_.candidate_log_partitions(X2[i], w),
                                      task.structure_.candidate_log_partitions(X[i], w))


def test_parameters_are_validated_at_fit():
    ds = kbest_dataset(header(), tiny_sentences())
    for params, match in [(dict(domain="cluster"), "'domain' parameter of the 'rerank' task must be a str among"),
                          (dict(graph="chain"), "'graph' parameter of the 'rerank' task must be a str among"),
                          (dict(domain="no-hidden", n_hidden=3), "domain 'no-hidden' has one value"),
                          (dict(n_hidden=0), "n_hidden"), (dict(hash_bits=40), "hash_bits"),
                          (dict(pos_column="tag"), "pos_column"), (dict(base_score=1), "base_score")]:
        with pytest.raises(ConfigError, match=match):
            RerankTask(**params).fit(ds)
    with pytest.raises(InputError, match="with their header"):
        RerankTask().fit(ds.__class__(list(ds.records), ds.targets))


def test_registration_and_batches():
    assert TASKS["rerank"] is RerankTask
    assert RerankTask.default_learner == "hidden-reranker" and RerankTask.score_metric == "uas"
    task, X, ds = featurized(tiny_sentences())
    joined = task.structure_.as_batch([X[1], X[0]])
    assert joined.ids.tolist() == [1, 0] and task.structure_.subset(X, [1]).ids.tolist() == [1]
    _, other, _ = featurized(tiny_sentences())
    with pytest.raises(InputError, match="different featurize calls"):
        task.structure_.as_batch([X[0], other[0]])
    with pytest.raises(InputError, match="one sentence"):
        task.structure_.candidate_log_partitions(X, np.zeros(task.n_features))
    with pytest.raises(InputError, match="float64 array of shape"):
        task.structure_.candidate_log_partitions(X[0], np.zeros(3))


def test_the_task_holds_an_immutable_rerank_structure():
    import pickle

    from latentstruct.tasks.rerank import RerankStructure

    task, X, _ = featurized(tiny_sentences(), hash_bits=6)
    s = task.structure_
    assert isinstance(s, RerankStructure) and s.input_kind == "tokens"
    assert s.n_features == (1 << 6) + 1 == task.n_features and s.base_index == 1 << 6
    with pytest.raises(AttributeError, match="immutable"):
        s.hash_bits = 8
    with pytest.raises(ValueError, match="input_kind must be one of"):
        RerankStructure(6, "trees")
    w = np.random.default_rng(2).normal(size=s.n_features)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(s)).candidate_log_partitions(X[0], w),
                                  s.candidate_log_partitions(X[0], w))
    with pytest.warns(DeprecationWarning, match=r"task.structure_.base_index"):
        assert task.base_index == s.base_index
