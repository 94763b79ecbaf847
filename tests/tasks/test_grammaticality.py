"""The grammaticality task: views, decoding against brute force, vote, LM negatives, tagger,
splits (held-out share of the training file, every sentence of another file), the chunking
view of the supervised chunker, bad input and the command line."""

import itertools
import json
import warnings

import numpy as np
import pytest

from latentstruct.cli import main
from latentstruct.exceptions import ConfigError, ConvergenceWarning, InputError
from latentstruct.learners import LatentPA, StructuredSVM
from latentstruct.learners.online.perceptron import StructuredPerceptron
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.pipelines import attach_tagger, train_chunker
from latentstruct.tasks import GrammaticalityTask, PosTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.sequence.encodings import (
    ENCODINGS,
    convert,
    encoding_labels,
    is_well_formed,
    tags_from_spans,
)
from latentstruct.tasks.grammaticality import (
    ChunkingView,
    Sentence,
    is_heldout,
    sentences_digest,
    view_constraints,
)
from latentstruct.testing import check_decoder

VOCAB = [("the", "DET"), ("a", "DET"), ("dog", "NOUN"), ("cat", "NOUN"), ("market", "NOUN"),
         ("saw", "VERB"), ("rose", "VERB"), ("sharply", "ADV"), ("in", "ADP"), (".", "PUNCT")]


def random_sentence(rng, n):
    idx = rng.integers(0, len(VOCAB), size=n)
    return Sentence(tuple(VOCAB[i][0] for i in idx), tuple(VOCAB[i][1] for i in idx))


def fitted_task(rng, **params):
    """A task fitted on random pre-tagged sentences (no tagger, no LM needed)."""
    task = GrammaticalityTask(min_count=1, **params)
    records = [random_sentence(rng, int(rng.integers(1, 6))) for _ in range(60)]
    return task.fit(Dataset(records, np.ones(len(records), dtype=int)))


def one(task, sentence):
    return task.featurize(Dataset([sentence], [1]))


def chain_ok(task, h):
    return all(is_well_formed(task.structure_.decode_structure(h)[v.name], v.name) for v in task.structure_.views_)


# ----------------------------------------------------------------------------------------
# views: constraints, decoding, vote
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_constraints_allow_exactly_the_well_formed_sequences(encoding):
    labels = encoding_labels(["NP", "VP"], encoding)
    trans, start, end = view_constraints(labels, encoding)
    for n in (1, 2, 3):
        for seq in itertools.product(range(len(labels)), repeat=n):
            finite = start[seq[0]] + end[seq[-1]] + sum(trans[a, b] for a, b in zip(seq, seq[1:]))
            assert np.isfinite(finite) == is_well_formed([labels[i] for i in seq], encoding), seq


@pytest.mark.parametrize("views, types, constrained", [
    ("iob2", "NP,VP", True), ("iob1", "NP,VP", True), ("ioe1", "NP,VP", True),
    ("ioe2", "NP,VP", True), ("oc", "NP,VP", True), ("iob1,oc", "NP", True),
    ("ioe2,iob2", "NP", False),
])
def test_views_decoding_equals_brute_force(views, types, constrained):
    rng = np.random.default_rng(0)
    task = fitted_task(rng, views=views, chunk_types=types, constrained=constrained)
    sizes = [v.n_labels for v in task.structure_.views_]

    def make_instance(r):
        x = one(task, random_sentence(r, int(r.integers(1, 4 if len(sizes) == 1 else 3))))
        w = r.normal(size=task.n_features) if r.random() < 0.5 else \
            r.integers(-1, 2, size=task.n_features).astype(float)  # many ties
        return x, w

    def candidates(inst):
        T = inst[0].n_tokens
        per_view = [list(itertools.product(range(L), repeat=T)) for L in sizes]
        for combo in itertools.product(*per_view):
            yield np.array(combo, dtype=np.int64).reshape(len(sizes), T)

    def score(inst, h):
        if constrained and not chain_ok(task, h):
            return -np.inf
        return task.structure_.latent_feature(inst[0], h).dot(inst[1])

    report = check_decoder(lambda inst: task.structure_.latent_argmax(inst[0], inst[1]), candidates, score,
                           make_instance=make_instance, n_instances=25, random_state=1)
    assert report.n_instances == 25


def test_decision_batch_matches_single_decodes():
    rng = np.random.default_rng(3)
    for combine in ("concat", "vote"):
        task = fitted_task(rng, views="iob1,iob2,ioe1,ioe2,oc", combine=combine)
        records = [random_sentence(rng, int(rng.integers(1, 8))) for _ in range(12)]
        X = task.featurize(Dataset(records, [1] * 12))
        w = rng.normal(size=task.n_features)
        batch = task.structure_.decision_batch(X, w)
        for i in range(12):
            res = task.structure_.latent_argmax(X[i], w)
            assert batch[i] == pytest.approx(res.score)
            assert res.score == pytest.approx(task.structure_.latent_feature(X[i], res.structure).dot(w))
            assert chain_ok(task, res.structure)


def random_chunking(rng, n):
    spans, t = [], 0
    while t < n:
        if rng.random() < 0.3:
            t += 1
            continue
        end = min(n - 1, t + int(rng.integers(0, 3)))
        spans.append((str(rng.choice(["NP", "VP"])), t, end))
        t = end + 1
    return spans


def test_vote_on_identical_views_returns_that_view():
    rng = np.random.default_rng(4)
    task = fitted_task(rng, views="iob1,iob2,ioe1,ioe2,oc", combine="vote", chunk_types="NP,VP")
    for _ in range(30):
        n = int(rng.integers(1, 9))
        spans = random_chunking(rng, n)
        h = np.array([[task.structure_._label_ids[k][t] for t in tags_from_spans(spans, n, v.name)]
                      for k, v in enumerate(task.structure_.views_)])
        np.testing.assert_array_equal(task.structure_.vote(h), h)
        # three views agree on chunking A, two on B: A wins everywhere
        other = random_chunking(rng, n)
        mixed = h.copy()
        for k, v in enumerate(task.structure_.views_):
            if v.name in ("ioe2", "oc"):
                mixed[k] = [task.structure_._label_ids[k][t] for t in tags_from_spans(other, n, v.name)]
        np.testing.assert_array_equal(task.structure_.vote(mixed), h)


def test_vote_of_a_single_view_is_the_view_itself():
    rng = np.random.default_rng(5)
    concat = fitted_task(np.random.default_rng(9), views="ioe1", combine="concat")
    vote = fitted_task(np.random.default_rng(9), views="ioe1", combine="vote")
    for _ in range(10):
        x = one(concat, random_sentence(rng, int(rng.integers(1, 9))))
        w = rng.normal(size=concat.n_features)
        a, b = concat.structure_.latent_argmax(x, w), vote.structure_.latent_argmax(x, w)
        np.testing.assert_array_equal(a.structure, b.structure)
        assert a.score == pytest.approx(b.score)


def test_feature_layout_views_are_disjoint():
    rng = np.random.default_rng(6)
    task = fitted_task(rng, views="iob2,oc")
    A = task.structure_.n_attributes
    assert [v.n_labels for v in task.structure_.views_] == [23, 45]  # CoNLL-2000's 11 chunk types
    assert task.n_features == sum(A * L + L * L + 2 * L for L in (23, 45)) + 1
    x = one(task, random_sentence(rng, 4))
    h = np.zeros((2, 4), dtype=np.int64)  # "O" in both views
    phi = task.structure_.latent_feature(x, h)
    first = phi.indices[phi.indices < task.structure_.views_[1].offset]
    second = phi.indices[(phi.indices >= task.structure_.views_[1].offset) & (phi.indices < task.n_features - 1)]
    assert first.size and second.size and phi.indices[-1] == task.n_features - 1
    with pytest.raises(InputError, match="shape"):
        task.structure_.latent_feature(x, np.zeros((1, 4), dtype=np.int64))


# ----------------------------------------------------------------------------------------
# the chunking view (the supervised chunker's problem)
# ----------------------------------------------------------------------------------------
def test_chunking_view_features_are_the_latent_features_without_bias():
    rng = np.random.default_rng(7)
    task = fitted_task(rng, views="iob2,oc", chunk_types="NP,VP")
    view = task.chunking_task()
    assert isinstance(view, ChunkingView) and view.n_features == task.n_features
    for _ in range(10):
        n = int(rng.integers(1, 7))
        x = one(task, random_sentence(rng, n))
        h = np.stack([rng.integers(0, v.n_labels, size=n) for v in task.structure_.views_])
        g = np.stack([rng.integers(0, v.n_labels, size=n) for v in task.structure_.views_])
        w = rng.normal(size=task.n_features)
        phi, lat = view.joint_feature(x, h), task.structure_.latent_feature(x, h)
        dense = phi.to_dense(task.n_features)
        dense[-1] += 1.0  # the bias, which every latent structure has
        np.testing.assert_array_equal(dense, lat.to_dense(task.n_features))
        assert phi.dot(w) == pytest.approx(lat.dot(w) - w[-1])
        diff = view.joint_feature_difference(x, h, g)
        assert diff.dot(w) == pytest.approx(phi.dot(w) - view.joint_feature(x, g).dot(w))
        assert view.loss(h, g) == float(np.sum(h != g))
    with pytest.raises(InputError, match="shape"):
        view.loss(np.zeros((2, 3), np.int64), np.zeros((1, 3), np.int64))


@pytest.mark.parametrize("views, constrained", [("iob2,oc", True), ("ioe1", True),
                                                ("iob1,ioe2", False)])
@pytest.mark.slow
def test_chunking_view_argmax_equals_brute_force(views, constrained):
    rng = np.random.default_rng(8)
    task = fitted_task(rng, views=views, chunk_types="NP", constrained=constrained)
    view = task.chunking_task()
    sizes = [v.n_labels for v in task.structure_.views_]

    def make_instance(r):
        x = one(task, random_sentence(r, int(r.integers(1, 4))))
        w = r.normal(size=task.n_features) if r.random() < 0.5 else \
            r.integers(-1, 2, size=task.n_features).astype(float)  # many ties
        gold = None
        if r.random() < 0.5:  # loss-augmented
            gold = np.stack([r.integers(0, L, size=x.n_tokens) for L in sizes])
        return x, w, gold

    def candidates(inst):
        T = inst[0].n_tokens
        per_view = [list(itertools.product(range(L), repeat=T)) for L in sizes]
        for combo in itertools.product(*per_view):
            yield np.array(combo, dtype=np.int64).reshape(len(sizes), T)

    def score(inst, h):
        x, w, gold = inst
        if constrained and not chain_ok(task, h):
            return -np.inf
        return view.joint_feature(x, h).dot(w) + (0.0 if gold is None else view.loss(gold, h))

    report = check_decoder(lambda inst: view.argmax(inst[0], inst[1], inst[2]), candidates, score,
                           make_instance=make_instance, n_instances=30, random_state=2)
    assert report.n_instances == 30


def test_chunking_view_batch_matches_single_decodes():
    rng = np.random.default_rng(9)
    task = fitted_task(rng, views="iob1,iob2,ioe1,ioe2,oc", combine="vote")
    view = task.chunking_task()
    records = [random_sentence(rng, int(rng.integers(1, 8))) for _ in range(12)]
    X = task.featurize(Dataset(records, [1] * 12))
    w = rng.normal(size=task.n_features)
    Y = [np.stack([rng.integers(0, v.n_labels, size=len(r.words)) for v in task.structure_.views_])
         for r in records]
    for gold in (None, Y):
        batch = view.argmax_batch(X, w, gold)
        for i in range(12):
            res = view.argmax(X[i], w, None if gold is None else gold[i])
            np.testing.assert_array_equal(batch[i], res.structure)
            assert res.exact and chain_ok(task, res.structure)
            if gold is None:  # every view decoded on its own, the vote plays no part
                assert res.score == pytest.approx(view.joint_feature(X[i], res.structure).dot(w))
    np.testing.assert_array_equal(view.subset(X, [3, 1]).lengths(), X.lengths()[[3, 1]])


def test_perceptron_learns_chunks_through_the_view():
    """The chunking view is an ordinary max-decodable task: a perceptron on it fits
    chunkings that follow the POS tags, and its weights are valid heuristic weights."""
    rng = np.random.default_rng(10)
    task = fitted_task(rng, views="iob2,ioe2", chunk_types="NP,VP")
    view = task.chunking_task()
    records = [random_sentence(rng, int(rng.integers(2, 8))) for _ in range(40)]
    X = task.featurize(Dataset(records, [1] * 40))
    Y = []
    for r in records:
        spans = [("NP" if p in ("DET", "NOUN") else "VP", t, t) for t, p in enumerate(r.pos)
                 if p in ("NOUN", "VERB")]
        Y.append(np.array([[task.structure_._label_ids[k][t] for t in tags_from_spans(spans, len(r.words),
                                                                           v.name)]
                           for k, v in enumerate(task.structure_.views_)]))
    m = StructuredPerceptron(view, max_iter=30, random_state=0).fit(X, Y)
    assert m.objective_curve_[-1] == 0
    assert view.evaluate(Y, m.predict(X))["accuracy"] == 1.0
    assert not task.heuristic_ready()
    task.set_chunker_weights(m.coef_)
    assert task.heuristic_ready() and m.coef_[-1] == 0.0
    np.testing.assert_array_equal(task.structure_.heuristic_weights(), m.coef_)
    with pytest.raises(ConfigError, match="shape"):
        task.set_chunker_weights(m.coef_[:-1])
    task.fit(Dataset(records, [1] * 40))  # a new feature space drops the weights
    assert not task.heuristic_ready()


# ----------------------------------------------------------------------------------------
# data: LM negatives, splits, bad input
# ----------------------------------------------------------------------------------------
NOUNS = ["market", "company", "bank", "dollar", "price", "index", "share", "output", "loan"]
VERBS = ["rose", "fell", "said", "expects", "reported", "cut", "raised", "sold"]
ADJS = ["strong", "weak", "new", "higher", "lower", "annual", "net"]


def synthetic_corpus(n, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        c = rng.choice
        lines.append(f"The {c(ADJS)} {c(NOUNS)} {c(VERBS)} the {c(NOUNS)} in {c(NOUNS)} .")
    return lines


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "sentences.txt"
    path.write_text("\n".join(synthetic_corpus(300)) + "\n", encoding="utf-8")
    return path


def test_lm_negatives_reproducible_under_seed(corpus):
    a = GrammaticalityTask(lm_corpus=str(corpus))
    b = GrammaticalityTask(lm_corpus=str(corpus))
    s1, s2 = a.sample_negatives(40, 3), b.sample_negatives(40, 3)
    assert s1 == s2
    assert s1 != a.sample_negatives(40, 4)
    assert all(4 <= len(s) <= 60 for s in s1)
    r1, r2 = a.read(corpus, split="train"), b.read(corpus, split="train")
    assert r1.records == r2.records and np.array_equal(r1.targets, r2.targets)
    t1 = a.set_params(n_negative_sets=3, test_sentences="all").read(corpus, split="test")
    t2 = b.set_params(n_negative_sets=3, test_sentences="all").read(corpus, split="test")
    assert t1.records == t2.records
    n_pos = int((t1.targets > 0).sum())
    sets = [r.negative_set for r in t1.records]
    assert [sets.count(k) for k in range(3)] == [n_pos] * 3


def test_heldout_split_is_deterministic_and_disjoint(corpus):
    task = GrammaticalityTask(lm_corpus=str(corpus), heldout_fraction=0.2, negative_ratio=0.5)
    train = task.read(corpus, split="train")
    test = task.read(corpus, split="test")
    pos_train = {r.words for r, t in zip(train.records, train.targets) if t > 0}
    pos_test = {r.words for r, t in zip(test.records, test.targets) if t > 0}
    assert pos_train and pos_test and not pos_train & pos_test
    assert all(is_heldout(w, 0.2) for w in pos_test)
    assert int((train.targets < 0).sum()) == round(0.5 * int((train.targets > 0).sum()))
    # the LM never saw a held-out sentence: its trigram count is the training sentences'
    lm = task.lm_
    assert lm.n_sentences_ == sum(not is_heldout(s.split(), 0.2) for s in synthetic_corpus(300))
    sample = task.set_params(n_train=10).read(corpus, split="train")
    assert int((sample.targets > 0).sum()) == 10


def test_test_sentences_auto_holds_out_only_on_the_training_file(tmp_path, corpus):
    task = GrammaticalityTask(lm_corpus=str(corpus), heldout_fraction=0.2, n_negative_sets=1,
                              n_test=None)
    assert task.test_sentences == "auto"
    all_lines = [tuple(s.split()) for s in synthetic_corpus(300)]
    heldout = [s for s in all_lines if is_heldout(s, 0.2)]

    def positives(ds):
        return [r.words for r, t in zip(ds.records, ds.targets) if t > 0]

    # no training file read yet: held out (the behaviour of models without a digest)
    assert positives(task.read(corpus, split="test")) == heldout
    task.read(corpus, split="train")
    assert task.train_digest_ == sentences_digest(all_lines)
    assert positives(task.read(corpus, split="test")) == heldout
    # the same sentences with other line endings and spacing are the same file
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(("\r\n".join("  " + s + " " for s in synthetic_corpus(300)) + "\r\n")
                     .encode("utf-8"))
    assert positives(task.read(crlf, split="test")) == heldout
    # a file of new sentences is scored in full (at most n_test)
    new_lines = synthetic_corpus(40, seed=5)
    other = tmp_path / "new.txt"
    other.write_text("\n".join(new_lines) + "\n", encoding="utf-8")
    test = task.read(other, split="test")
    assert positives(test) == [tuple(s.split()) for s in new_lines]
    assert int((test.targets < 0).sum()) == 40
    assert len(positives(task.set_params(n_test=25).read(other, split="test"))) == 25
    # explicit choices
    task.set_params(n_test=None, test_sentences="heldout")
    assert positives(task.read(other, split="test")) == [
        tuple(s.split()) for s in new_lines if is_heldout(s.split(), 0.2)]
    task.set_params(test_sentences="all")
    assert positives(task.read(corpus, split="test")) == all_lines
    # a different training file changes the digest
    task.set_params(test_sentences="auto").read(other, split="train")
    assert positives(task.read(corpus, split="test")) == all_lines
    assert positives(task.read(other, split="test")) == [
        tuple(s.split()) for s in new_lines if is_heldout(s.split(), 0.2)]


def test_bad_input(tmp_path, corpus):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="contains no sentences"):
        GrammaticalityTask(lm_corpus=str(corpus)).read(empty)
    blank = tmp_path / "blank.txt"
    blank.write_text("A real sentence is here .\n\nAnother one follows .\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"blank.txt:2: empty sentence"):
        GrammaticalityTask(lm_corpus=str(corpus)).read(blank)
    with pytest.raises(InputError, match="empty sentence"):
        Sentence(())
    with pytest.raises(ConfigError, match="unknown view 'iob3'"):
        GrammaticalityTask(views="iob2,iob3").read(corpus)
    with pytest.raises(ConfigError, match="distinct"):
        GrammaticalityTask(views="iob2,iob2").view_names()
    with pytest.raises(ConfigError, match="combine"):
        GrammaticalityTask(combine="sum").read(corpus)
    with pytest.raises(ConfigError, match="split"):
        GrammaticalityTask(lm_corpus=str(corpus)).read(corpus, split="dev")
    with pytest.raises(InputError, match="training data contains no sentences"):
        GrammaticalityTask().fit(Dataset([], []))
    untagged = Dataset([Sentence(("a", "b"))], [1])
    with pytest.raises(ConfigError, match="needs a POS tagger"):
        GrammaticalityTask().fit(untagged)
    with pytest.raises(InputError, match="held-out share"):
        GrammaticalityTask(lm_corpus=str(corpus), heldout_fraction=0.0).read(corpus, split="test")
    with pytest.raises(ConfigError, match="no supervised chunker.*train_chunker"):
        fitted_task(np.random.default_rng(0)).structure_.heuristic_weights()
    with pytest.raises(ConfigError, match=r"'chunker' parameter of the 'grammaticality' task must be a str among "
                       r"\{'auto', 'perceptron'\} or None. Got 'crf' instead"):
        GrammaticalityTask(chunker="crf").read(corpus)
    with pytest.raises(ConfigError, match="test_sentences"):
        GrammaticalityTask(test_sentences="some").read(corpus)
    # tagger_model is loaded by the pipeline, never by the task itself
    with pytest.raises(ConfigError, match="attach_tagger"):
        GrammaticalityTask(tagger_model="pos.npz").fit(untagged)


# ----------------------------------------------------------------------------------------
# the POS tagger, persistence and the command line
# ----------------------------------------------------------------------------------------
TAGS = {"The": "DET", "the": "DET", "in": "ADP", ".": "PUNCT", **{w: "NOUN" for w in NOUNS},
        **{w: "VERB" for w in VERBS}, **{w: "ADJ" for w in ADJS}}


def train_tagger(records, targets, seed=0):
    pos = PosTask(min_count=1)
    data = Dataset(records, targets)
    pos.fit(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(pos, C=0.1, max_iter=3, random_state=seed)
        svm.fit(pos.featurize(data), pos.encode_targets(targets))
    return pos, svm


def synthetic_tagger():
    lines = synthetic_corpus(80, seed=1)
    records = [Sentence(tuple(s.split())) for s in lines]
    return train_tagger(records, [tuple(TAGS[w] for w in r.words) for r in records])


@pytest.fixture
def tagger_file(tmp_path):
    pos, svm = synthetic_tagger()
    path = tmp_path / "pos.npz"
    save_trained(path, pos, svm)
    return path


@pytest.mark.slow
def test_tagger_reproducible_under_seed_on_ud(require_data):
    path = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    data = PosTask().read(path)
    records, targets = data.records[:150], data.targets[:150]
    (p1, s1), (p2, s2) = train_tagger(records, targets), train_tagger(records, targets)
    np.testing.assert_array_equal(s1.coef_, s2.coef_)
    sentences = [r.words for r in data.records[200:240]]
    tags1 = GrammaticalityTask().set_tagger(p1, s1.coef_).tag(sentences)
    tags2 = GrammaticalityTask().set_tagger(p2, s2.coef_).tag(sentences)
    assert tags1 == tags2
    gold = [t for r in data.records[200:240] for t in r.upos]
    assert np.mean(np.array([t for s in tags1 for t in s]) == np.array(gold)) > 0.6


def test_model_round_trip_and_tags(tmp_path, corpus, tagger_file):
    task = GrammaticalityTask(views="iob2,oc", lm_corpus=str(corpus), tagger_model=str(tagger_file),
                              n_negative_sets=2, test_sentences="all", n_test=20)
    pos_task, coef = attach_tagger(task)  # the task never reads tagger_model itself
    assert task.has_tagger() and isinstance(pos_task, PosTask)
    assert attach_tagger(task) is None  # already attached
    train = task.read(corpus)
    task.fit(train)
    X, y = task.featurize(train), task.encode_targets(train.targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = LatentPA(task, max_iter=2, random_state=0).fit(X, y)
    path = tmp_path / "g.npz"
    save_trained(path, task, m)
    task2, m2, _ = load_trained(path)
    sentences = [r.words for r in train.records[:30]]
    assert task2.tag(sentences) == task.tag(sentences)
    assert task2.tag(sentences)[0][:2] == ("DET", "ADJ")
    np.testing.assert_array_equal(m2.coef_, m.coef_)
    assert task2.train_digest_ == task.train_digest_ == sentences_digest(
        [s.split() for s in synthetic_corpus(300)])
    test1, test2 = task.read(corpus, split="test"), task2.read(corpus, split="test")
    assert test1.records == test2.records  # the stored LM samples the same negatives
    e1 = task.evaluate_model(test1, m.predict, m.decision_function)
    e2 = task2.evaluate_model(test2, m2.predict, m2.decision_function)
    assert e1 == e2 and e1["n_negative_sets"] == 2 and e1["n_positives"] == 20


@pytest.mark.parametrize("learner, extra", [
    # decode-then-vote is not a maximisation (module docstring): the task says so
    # (argmax_is_maximum), and the learners' "never below a known structure" check is skipped
    ("latent-pa", ["views=iob1,iob2,ioe1,ioe2,oc", "combine=vote", "max_iter=2"]),
    ("lclr", ["views=iob2", "combine=concat", "max_iter=2", "init=zeros"]),
    ("lclr-variant", ["views=iob2,ioe2", "max_iter=2", "init=zeros"]),
])
@pytest.mark.slow
def test_cli_train_and_evaluate(tmp_path, corpus, tagger_file, capsys, learner, extra):
    model = tmp_path / "m.npz"
    opts = [f"tagger_model={tagger_file}", f"lm_corpus={corpus}", "n_train=60", *extra]
    argv = ["train", "grammaticality", "--train", str(corpus), "--model", str(model),
            "--learner", learner, "--quiet"]
    for o in opts:
        argv += ["--option", o]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert main(argv) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(corpus), "--option",
                 "n_negative_sets=3", "--option", "n_test=30"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0.0 <= out["accuracy"] <= 1.0 and out["n_negative_sets"] == 3
    pred = tmp_path / "pred.txt"
    assert main(["predict", "--model", str(model), "--input", str(corpus), "--output", str(pred),
                 "--option", "test_sentences=all", "--option", "n_negative_sets=0",
                 "--option", "n_test=null"]) == 0
    lines = pred.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 300 and all(line[:2] in ("+1", "-1") for line in lines)
    # a file of new sentences is scored in full, with no option (test_sentences="auto")
    new = tmp_path / "new.txt"
    new.write_text("\n".join(synthetic_corpus(40, seed=9)) + "\n", encoding="utf-8")
    assert main(["evaluate", "--model", str(model), "--test", str(new), "--option",
                 "n_negative_sets=1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["n_positives"] == 40
    assert main(["predict", "--model", str(model), "--input", str(new), "--output", str(pred),
                 "--option", "n_negative_sets=0"]) == 0
    assert len(pred.read_text(encoding="utf-8").splitlines()) == 40


@pytest.mark.slow
def test_cli_two_stage_init_trains_the_chunker(tmp_path, corpus, tagger_file, capsys,
                                               require_data):
    """chunker="auto" (default): `train` trains the supervised chunker because LCLR-variant
    starts from the two-stage model; with chunker=None that pair is refused up front."""
    conll = require_data("conll2000", "train.txt")
    model = tmp_path / "m.npz"
    argv = ["train", "grammaticality", "--train", str(corpus), "--model", str(model),
            "--learner", "lclr-variant"]
    for o in (f"tagger_model={tagger_file}", f"lm_corpus={corpus}", f"chunker_corpus={conll}",
              "n_train=60", "chunker_sentences=50", "chunker_epochs=1", "max_iter=2"):
        argv += ["--option", o]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert main(argv) == 0
    assert "training the supervised chunker" in capsys.readouterr().err
    task, learner, _ = load_trained(model)
    assert learner.init == "two-stage" and task.chunker == "auto"
    assert main(argv + ["--option", "chunker=null", "--quiet"]) == 2
    assert "lacks: heuristic" in capsys.readouterr().err


def test_cli_errors(tmp_path, corpus, capsys):
    model = tmp_path / "m.npz"
    assert main(["train", "grammaticality", "--train", str(corpus), "--model", str(model),
                 "--option", "views=iob2,bogus", "--quiet"]) == 2
    assert "unknown view 'bogus'" in capsys.readouterr().err
    assert not model.exists()


CONLL_TINY = """\
The DT B-NP
market NN I-NP
rose VBD B-VP
sharply RB B-ADVP
. . O

The DT B-NP
bank NN I-NP
cut VBD B-VP
the DT B-NP
loan NN I-NP
. . O
"""


def test_chunk_training_data_converts_gold_to_every_view(tmp_path, corpus, tagger_file):
    conll = tmp_path / "chunks.txt"
    conll.write_text(CONLL_TINY, encoding="utf-8")
    task = GrammaticalityTask(views="iob1,ioe2,oc", lm_corpus=str(corpus),
                              chunker_corpus=str(conll), tagger_model=str(tagger_file), n_train=40)
    attach_tagger(task)
    task.fit(task.read(corpus))
    X, Y = task.chunk_training_data()
    assert len(X) == 2 and [y.shape for y in Y] == [(3, 5), (3, 6)]
    gold = [["B-NP", "I-NP", "B-VP", "B-ADVP", "O"],
            ["B-NP", "I-NP", "B-VP", "B-NP", "I-NP", "O"]]
    for y, g in zip(Y, gold):
        for view, tags in task.structure_.decode_structure(y).items():
            assert tags == convert(g, "iob2", view)
    # a chunk type outside chunk_types is an input error at its line
    narrow = GrammaticalityTask(chunk_types="NP,VP", lm_corpus=str(corpus),
                                chunker_corpus=str(conll), tagger_model=str(tagger_file),
                                n_train=40)
    attach_tagger(narrow)
    narrow.fit(narrow.read(corpus))
    with pytest.raises(InputError, match=r"chunks.txt:1: chunk types \['ADVP'\]"):
        narrow.chunk_training_data()


@pytest.mark.slow
def test_chunker_initialisation(tmp_path, corpus, tagger_file, require_data):
    conll = require_data("conll2000", "train.txt")
    task = GrammaticalityTask(views="iob2,ioe2", lm_corpus=str(corpus), tagger_model=str(tagger_file),
                              chunker="perceptron", chunker_corpus=str(conll), chunker_sentences=60,
                              chunker_epochs=2, n_train=60)
    attach_tagger(task)
    train = task.read(corpus)
    task.fit(train)
    assert not task.heuristic_ready()  # fit trains nothing
    w = train_chunker(task)
    assert task.heuristic_ready()
    np.testing.assert_array_equal(task.structure_.heuristic_weights(), w)
    assert w.shape == (task.n_features,) and np.any(w != 0) and w[-1] == 0.0
    X, y = task.featurize(train), task.encode_targets(train.targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = LatentPA(task, init="heuristic", heuristic_scale=0.5, max_iter=1, random_state=0).fit(X, y)
    assert m.init_scale_ == 0.5


@pytest.mark.slow
def test_cli_trains_default_tagger_when_none_given(tmp_path, corpus, capsys, require_data):
    """Without tagger_model, `train grammaticality` trains the default UD EWT tagger and
    stores it in the model: the saved tagger tags like one trained directly."""
    from latentstruct.pipelines import train_pos_tagger

    require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    model = tmp_path / "m.npz"
    argv = ["train", "grammaticality", "--train", str(corpus), "--model", str(model),
            "--option", f"lm_corpus={corpus}", "--option", "n_train=40",
            "--option", "tagger_sentences=120", "--option", "max_iter=1"]
    assert main(argv) == 0
    assert "training the POS tagger on 120 sentences" in capsys.readouterr().err
    task, _, _ = load_trained(model)
    pos, coef, acc = train_pos_tagger(120)
    assert acc is not None and 0.6 < acc < 1.0
    np.testing.assert_array_equal(task.tagger_coef_, coef)
    sentences = [("The", "market", "fell", "sharply", "."), ("Stocks", "rose", "today", ".")]
    assert task.tag(sentences) == GrammaticalityTask().set_tagger(pos, coef).tag(sentences)


def test_cli_default_tagger_errors(tmp_path, corpus, capsys, monkeypatch):
    model = tmp_path / "m.npz"
    base = ["train", "grammaticality", "--train", str(corpus), "--model", str(model),
            "--option", f"lm_corpus={corpus}", "--quiet"]
    assert main(base + ["--option", "tagger_sentences=0"]) == 2
    assert "'tagger_sentences' parameter of the 'grammaticality' task must be an int in the range [1, inf)" in capsys.readouterr().err
    monkeypatch.setenv("LATENTSTRUCT_DATA", str(tmp_path / "nowhere"))
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "default training data is missing" in err and "tagger_model=pos.npz" in err
    assert not model.exists()


def test_cli_explain_on_a_grammaticality_model_exits_2(tmp_path, corpus, tagger_file, capsys):
    model = tmp_path / "m.npz"
    argv = ["train", "grammaticality", "--train", str(corpus), "--model", str(model),
            "--learner", "latent-pa", "--quiet", "--option", f"tagger_model={tagger_file}",
            "--option", f"lm_corpus={corpus}", "--option", "n_train=40", "--option", "max_iter=1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv) == 0
    capsys.readouterr()
    code = main(["explain", "--model", str(model), "--source", "a", "--target", "b",
                 "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "task 'grammaticality' cannot" in err and "paraphrase, rte, translit" in err
    assert not (tmp_path / "x.png").exists()


# ----------------------------------------------------------------------------------------
# the structure the task holds
# ----------------------------------------------------------------------------------------
def test_the_task_holds_an_immutable_views_structure():
    import pickle

    from latentstruct.learners import LCLR
    from latentstruct.tasks.grammaticality import ViewsStructure

    rng = np.random.default_rng(11)
    task = fitted_task(rng, views="iob2,oc", chunk_types="NP,VP")
    s = task.structure_
    assert isinstance(s, ViewsStructure) and s.n_features == task.n_features
    assert [v.name for v in s.views_] == ["iob2", "oc"] and s.chunk_types_ == ("NP", "VP")
    with pytest.raises(AttributeError, match="immutable"):
        s.combine = "vote"
    x = one(task, random_sentence(rng, 4))
    w = rng.normal(size=s.n_features)
    again = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(again.latent_argmax(x, w).structure,
                                  s.latent_argmax(x, w).structure)
    # a learner built before the chunker is attached sees it: the view reads the task live
    learner = LCLR(task, init="two-stage")
    assert not s.has_chunker and not task.heuristic_ready()
    coef = rng.normal(size=s.n_features)
    task.set_chunker_weights(coef)
    assert task.structure_ is not s and not s.has_chunker  # a new structure, the old kept
    np.testing.assert_array_equal(learner._structure().heuristic_weights(), coef)
    assert again.__reduce__()[1][-1] is None  # the pickled one had no chunker either
    with pytest.warns(DeprecationWarning, match=r"task.structure_.decode_structure"):
        task.decode_structure(s.latent_argmax(x, w).structure)
    task.fit(Dataset([random_sentence(rng, 3) for _ in range(20)], [1] * 20))
    assert not task.heuristic_ready()  # a refit builds a new structure, without a chunker
