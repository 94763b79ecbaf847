"""n-best lists, their probabilities and allowed labels per token on a chain
(``ChainStructure.kbest``, ``argmax``/``argmax_batch``/``marginals`` with ``allowed=``, a
learner's ``predict_nbest`` and an estimator's ``predict(X, allowed=...)``), checked against
brute-force enumeration of every labelling on many tiny random instances."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from latentstruct import Chunker, Tagger
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.brute_force import all_sequences
from latentstruct.inference.constraints import ChainConstraints
from latentstruct.learners import CRF
from latentstruct.tasks.sequence.corpus import SequenceCorpus
from latentstruct.tasks.sequence.structure import ChainStructure


def _instance(seed, *, ties=False):
    """A random chain (maybe constrained), one sentence, weights and a random restriction."""
    rng = np.random.default_rng(seed)
    T, L, A = int(rng.integers(1, 5)), int(rng.integers(1, 4)), 4
    constraints = None
    if rng.random() < 0.5:
        trans = rng.random((L, L)) < 0.6
        start, end = rng.random(L) < 0.6, rng.random(L) < 0.6
        trans[0, 0] = start[0] = end[0] = True
        constraints = ChainConstraints(trans, start, end)
    s = ChainStructure(L, A, constraints)
    ids = rng.integers(0, A, size=2 * T)
    x = SequenceCorpus(np.arange(0, 2 * T + 1, 2), ids, np.array([0, T]),
                       attr_values=rng.uniform(0.5, 2.0, size=2 * T))
    w = rng.integers(-2, 3, size=s.n_features).astype(float) if ties else rng.normal(size=s.n_features)
    allowed = [None if rng.random() < 0.5 else
               sorted({0} | set(rng.choice(L, size=int(rng.integers(1, L + 1)), replace=False).tolist()))
               for _ in range(T)]
    return s, x, w, allowed


def _ranked(s, x, w, allowed=None):
    """Every labelling the structure's constraints and ``allowed`` keep, with its score
    w·Φ(x, y), best first."""
    out = []
    for y in all_sequences(x.n_tokens, s.n_labels):
        if s.constraints is not None and not s.constraints.allows(y):
            continue
        if allowed is not None and any(a is not None and y[t] not in a for t, a in enumerate(allowed)):
            continue
        out.append((s.joint_feature(x, np.asarray(y)).dot(w), tuple(y)))
    return sorted(out, key=lambda p: -p[0])


@pytest.mark.parametrize("seed", range(60))
def test_kbest_is_the_k_best_labellings_the_constraints_and_allowed_labels_keep(seed):
    s, x, w, allowed = _instance(seed)
    for restriction in (None, allowed):
        ranked = _ranked(s, x, w, restriction)
        k = int(np.random.default_rng(seed).integers(1, len(ranked) + 3))
        got = s.kbest(x, w, k, allowed=restriction)
        assert len(got) == min(k, len(ranked))
        assert [r.score for r in got] == pytest.approx([sc for sc, _ in ranked[:k]])
        assert len({tuple(r.structure) for r in got}) == len(got)  # distinct
        for r in got:  # each is kept, and its score is its own
            assert tuple(r.structure) in {y for _, y in ranked}
            assert s.joint_feature(x, r.structure).dot(w) == pytest.approx(r.score)
        best = s.argmax(x, w, allowed=restriction)
        assert best.score == pytest.approx(ranked[0][0])
        batch = s.argmax_batch(x, w, allowed=None if restriction is None else [restriction])
        assert s.joint_feature(x, batch[0]).dot(w) == pytest.approx(ranked[0][0])


@pytest.mark.parametrize("seed", range(40))
def test_the_first_of_kbest_is_the_argmax_even_among_ties(seed):
    s, x, w, allowed = _instance(seed, ties=True)
    for restriction in (None, allowed):
        first = s.kbest(x, w, 5, allowed=restriction)[0].structure
        np.testing.assert_array_equal(first, s.argmax(x, w, allowed=restriction).structure)
        np.testing.assert_array_equal(
            first, s.argmax_batch(x, w, allowed=None if restriction is None else [restriction])[0])


@pytest.mark.parametrize("seed", range(40))
def test_restricted_marginals_and_log_partition_are_the_sums_over_what_is_kept(seed):
    s, x, w, allowed = _instance(seed)
    ranked = _ranked(s, x, w, allowed)
    log_z = logsumexp([sc for sc, _ in ranked])
    assert s.log_partition(x, w, allowed=allowed) == pytest.approx(log_z)
    node = np.zeros((x.n_tokens, s.n_labels))
    for sc, y in ranked:
        node[np.arange(x.n_tokens), y] += np.exp(sc - log_z)
    np.testing.assert_allclose(s.marginals(x, w, allowed=allowed).node, node, atol=1e-10)


def test_a_restriction_no_labelling_keeps_is_an_input_error():
    c = ChainConstraints(np.array([[True, False], [True, True]]), np.ones(2, bool), np.ones(2, bool))
    s = ChainStructure(2, 4, c)
    x = SequenceCorpus(np.array([0, 1, 2]), np.array([0, 1]), np.array([0, 2]))
    w = np.zeros(s.n_features)
    for call in (lambda: s.argmax(x, w, allowed=[[0], [1]]),
                 lambda: s.argmax_batch(x, w, allowed=[[[0], [1]]]),
                 lambda: s.kbest(x, w, 3, allowed=[[0], [1]]),
                 lambda: s.log_partition(x, w, allowed=[[0], [1]])):
        with pytest.raises(InputError):
            call()
    with pytest.raises(InputError, match="2 entries for 1 sentence;"):
        s.argmax_batch(x, w, allowed=[None, None])
    with pytest.raises(InputError, match="token 1"):
        s.kbest(x, w, 2, allowed=[None, []])


X = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
     [("Rockwell", "NNP"), ("said", "VBD"), ("the", "DT"), ("agreement", "NN")],
     [("In", "IN"), ("Britain", "NNP"), (",", ","), ("it", "PRP"), ("rose", "VBD")]]
Y = [["B-NP", "B-VP", "B-NP", "I-NP"], ["B-NP", "B-VP", "B-NP", "I-NP"],
     ["B-PP", "B-NP", "O", "B-NP", "B-VP"]]


def _chunker(learner):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few iterations on three sentences
        return Chunker(learner=learner, max_iter=5).fit(X, Y)


@pytest.mark.parametrize("learner", ["crf", "ssvm", "perceptron"])
def test_an_estimators_nbest_starts_with_its_prediction_and_crf_probabilities_sum_to_one(learner):
    chunker = _chunker(learner)
    nbest = chunker.predict_nbest(X, k=10000)
    assert [best[0][0] for best in nbest] == chunker.predict(X)
    structure, w = chunker.task_.structure_, chunker.learner_.structure_weights()
    Xf = chunker.task_.featurize(chunker.task_.make_dataset(X))
    for i, best in enumerate(nbest):
        ranked = _ranked(structure, Xf[i], w)
        assert len(best) == len(ranked)  # every well-formed labelling, once
        assert [s for _, s, _ in best] == pytest.approx([s for s, _ in ranked])
        probs = [p for _, _, p in best]
        if learner == "crf":
            assert sum(probs) == pytest.approx(1.0, abs=1e-9)
            assert probs == sorted(probs, reverse=True)
        else:
            assert probs == [None] * len(best)


def test_allowed_labels_force_and_restrict_every_prediction_and_probability():
    chunker = _chunker("crf")
    allowed = [[None, "B-NP", None, {"I-NP", "O"}], None, None]
    pred = chunker.predict(X, allowed=allowed)
    assert pred[0][1] == "B-NP" and pred[0][3] in ("I-NP", "O") and pred[1:] == chunker.predict(X[1:])
    nbest = chunker.predict_nbest(X[:1], k=1000, allowed=allowed[:1])[0]
    assert nbest[0][0] == pred[0]
    assert all(y[1] == "B-NP" and y[3] in ("I-NP", "O") for y, _, _ in nbest)
    assert sum(p for _, _, p in nbest) == pytest.approx(1.0, abs=1e-9)
    marginals = chunker.predict_marginals(X[:1], allowed=allowed[:1])[0]
    assert marginals[1]["B-NP"] == pytest.approx(1.0)
    assert marginals[3]["I-NP"] + marginals[3]["O"] == pytest.approx(1.0)
    # the marginals are the n-best probabilities summed per token
    assert marginals[0]["B-NP"] == pytest.approx(sum(p for y, _, p in nbest if y[0] == "B-NP"))


def test_bad_allowed_labels_are_refused_naming_the_sentence_and_token():
    chunker = _chunker("ssvm")
    with pytest.raises(InputError, match=r"allowed\[0\]\[1\]: 'B-XX' is not a label"):
        chunker.predict(X[:1], allowed=[[None, "B-XX", None, None]])
    with pytest.raises(InputError, match="sentence 0: .*2 entries for 4 tokens"):
        chunker.predict(X[:1], allowed=[[None, None]])
    with pytest.raises(InputError, match="no labelling keeps"):
        chunker.predict(X[:1], allowed=[["I-NP", None, None, None]])  # I-NP cannot start
    with pytest.raises(InputError, match="2 entries for 1 sentence;"):
        chunker.predict(X[:1], allowed=[None, None])
    with pytest.raises(ConfigError, match="k must be an integer >= 1"):
        chunker.predict_nbest(X, k=0)


def test_nbest_and_allowed_reach_every_learner_that_scores_parts_and_distro_refuses():
    tagger = Tagger(learner="perceptron", max_iter=2)
    sents = [[w for w, _ in s] for s in X]
    upos = {"PRP": "PRON", "VBZ": "VERB", "DT": "DET", "NN": "NOUN", "NNP": "PROPN",
            "VBD": "VERB", "IN": "ADP", ",": "PUNCT"}
    tags = [[upos[p] for _, p in s] for s in X]
    tagger.fit(sents, tags)
    assert tagger.predict_nbest(sents[:1], 2)[0][0][0] == tagger.predict(sents[:1])[0]
    assert tagger.predict(sents[:1], allowed=[["NOUN", None, None, None]])[0][0] == "NOUN"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        distro = Chunker(learner="distro", n_iter=1).fit(X, Y)
    with pytest.raises(ConfigError, match="label matrix"):
        distro.predict_nbest(X, 2)
    with pytest.raises(ConfigError, match="label matrix"):
        distro.predict(X, allowed=[None, None, None])


def test_learners_predict_nbest_on_a_featurised_corpus():
    chunker = _chunker("crf")
    Xf = chunker.task_.featurize(chunker.task_.make_dataset(X))
    crf = chunker.learner_
    assert isinstance(crf, CRF)
    lists = crf.predict_nbest(Xf, 3)
    assert [len(b) for b in lists] == [3, 3, 3]
    np.testing.assert_array_equal(lists[0][0][0], crf.predict(Xf)[0])
    assert all(p is not None and 0 < p < 1 for best in lists for _, _, p in best)


@pytest.mark.parametrize("algorithm", ["lbfgs", "ap"])
def test_the_crfsuite_layer_offers_nbest_allowed_labels_and_explanations(algorithm):
    from latentstruct.crfsuite import CRF as CrfsuiteCRF

    feats = [[{"w": w, "p": p} for w, p in s] for s in X]
    crf = CrfsuiteCRF(algorithm=algorithm, max_iterations=20).fit(feats, Y)
    nbest = crf.predict_nbest(feats, k=3)
    assert [b[0][0] for b in nbest] == crf.predict(feats)
    probs = [p for b in nbest for _, _, p in b]
    assert all(p is not None for p in probs) if algorithm == "lbfgs" else probs == [None] * 9
    assert crf.predict(feats[:1], allowed=[[None, "B-NP", None, None]])[0][1] == "B-NP"
    e = crf.explain_prediction(feats[0])
    assert e.labels == crf.predict_single(feats[0]) and e.tokens is None
    assert abs(sum(c.value for c in e.contributions) - e.score) <= 1e-9
    assert "w:He" in {c.feature for c in e.contributions}  # python-crfsuite's attribute names
    assert set(crf.explain_weights(2).labels) == set(crf.classes_)
