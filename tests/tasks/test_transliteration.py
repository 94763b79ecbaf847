from latentstruct.testing import require_data
import json
import warnings

import numpy as np
import pytest

from latentstruct.exceptions import ConfigError, ConvergenceWarning, InputError, ModelFormatError
from latentstruct.inference import AlignmentILP
from latentstruct.learners import LCLR, TwoStage
from latentstruct.plotting import draw_explanation, plot_alignment
from latentstruct.data.translit import cldr_pairs
from latentstruct.tasks import Dataset, TransliterationTask, get_task_class
from latentstruct.tasks.translit import (
    TranslitCorpus,
    concat_translit,
    ranking_metrics,
    sample_negatives,
)
from latentstruct.testing import all_alignments, check_decoder


# ----------------------------------------------------------------------------- fixtures
def tiny_task(bigrams=True):
    """Source alphabet {a, b, c} (A = 4 with id 0), target {x, y} (B = 3)."""
    return TransliterationTask(bigrams=bigrams).fit(Dataset([("abc", "xy")], [1]))


def random_instance(task, rng, max_len=4, int_weights=None):
    m, n = int(rng.integers(0, max_len + 1)), int(rng.integers(0, max_len + 1))
    s = rng.integers(0, task.structure_.n_source_chars, size=m)  # id 0 (unknown/boundary) included
    t = rng.integers(0, task.structure_.n_target_chars, size=n)
    if int_weights is None:
        int_weights = bool(rng.integers(0, 2))
    if int_weights:  # many exact ties
        w = rng.integers(-2, 3, size=task.n_features).astype(np.float64)
    else:
        w = rng.normal(size=task.n_features)
    return TranslitCorpus.from_ids([(s, t)]), w


def sizes(x):
    return x.source_ids(0).shape[0], x.target_ids(0).shape[0]


@pytest.fixture(scope="module")
def he_task():
    task = TransliterationTask()
    train = task.read(None, split="train")
    test = task.read(None, split="test")
    task.fit(train)
    return task, train, test


def test_registered():
    assert get_task_class("translit") is TransliterationTask
    assert TransliterationTask.has_default_data and TransliterationTask.default_learner == "lclr"
    assert TransliterationTask().get_params() == {
        "lang": "he", "n_train": 250, "n_test": 300, "neg_ratio": 0.1, "seed": 0, "bigrams": True}


# ----------------------------------------------------------------------- decoder checks
@pytest.mark.parametrize("bigrams", [True, False])
def test_latent_argmax_matches_brute_force(bigrams):
    task = tiny_task(bigrams)
    report = check_decoder(
        decode=lambda inst: task.structure_.latent_argmax(*inst),
        candidates=lambda inst: all_alignments(*sizes(inst[0])),
        score=lambda inst, h: task.structure_.latent_feature(inst[0], h).dot(inst[1]),
        make_instance=lambda rng: random_instance(task, rng),
        n_instances=250,
        random_state=1,
    )
    assert report.n_instances == 250


def test_random_tie_breaking_and_batch_kernel_match_brute_force():
    task = tiny_task()
    rng_ties = np.random.default_rng(5)
    for decode in (
        lambda inst: task.structure_.latent_argmax(*inst, random_state=rng_ties),
        lambda inst: task.structure_.latent_argmax_batch([inst[0]], inst[1])[0],
    ):
        check_decoder(
            decode=decode,
            candidates=lambda inst: all_alignments(*sizes(inst[0])),
            score=lambda inst, h: task.structure_.latent_feature(inst[0], h).dot(inst[1]),
            make_instance=lambda rng: random_instance(task, rng, int_weights=True),
            n_instances=200,
            random_state=2,
        )


def test_score_includes_bias_and_can_be_negative():
    task = tiny_task()
    w = np.full(task.n_features, -1.0)
    w[0] = -3.0
    x = task.encode_pair("abc", "xy")
    res = task.structure_.latent_argmax(x, w)
    assert res.score == -3.0 and (res.structure == -1).all()  # every cell is negative
    assert task.structure_.decision_batch(x, w)[0] == -3.0
    assert task.structure_.latent_feature(x, res.structure).indices.tolist() == [0]


def test_ilp_agrees_with_dp():
    task = tiny_task()
    rng = np.random.default_rng(3)
    checked = 0
    while checked < 60:
        x, w = random_instance(task, rng, max_len=5)
        m, n = sizes(x)
        if m == 0 or n == 0:
            continue
        ilp = AlignmentILP(m, n, monotone=True).solve(task.structure_.cell_scores(x, w))
        assert ilp.status == "exact"
        assert ilp.score + w[0] == pytest.approx(task.structure_.latent_argmax(x, w).score, abs=1e-7)
        assert task.structure_.latent_feature(x, ilp.structure).dot(w) == pytest.approx(ilp.score + w[0], abs=1e-7)
        checked += 1


def test_decision_batch_equals_per_pair_argmax(he_task):
    task, _, test = he_task
    rng = np.random.default_rng(0)
    w = rng.normal(size=task.n_features)
    cross = task.cross_corpus(test)
    idx = rng.choice(len(cross), size=400, replace=False)
    sub = cross.subset(idx)
    d = task.structure_.decision_batch(sub, w)
    batch = task.structure_.latent_argmax_batch(sub, w)
    for k in range(len(sub)):
        ref = task.structure_.latent_argmax(sub[k], w)
        assert d[k] == pytest.approx(ref.score, rel=1e-12, abs=1e-9)
        assert batch[k].score == pytest.approx(ref.score, rel=1e-12, abs=1e-9)
        assert task.structure_.latent_feature(sub[k], batch[k].structure).dot(w) == pytest.approx(ref.score, abs=1e-9)
    # a list of one-pair views (the learners' form) and merged pools give the same values
    assert np.array_equal(task.structure_.decision_batch([sub[k] for k in range(5)], w), d[:5])
    pairs = [test.records[0], (test.records[1][0], test.records[2][1])]
    merged = concat_translit([task.encode_pair(*p) for p in pairs])
    assert len(merged) == 2 and merged.source(1) == test.records[1][0]
    assert task.structure_.decision_batch(merged, w).tolist() == [
        task.structure_.latent_argmax(p, w).score for p in pairs]


def test_decision_batch_on_the_full_cross_corpus(he_task):
    """The whole 300 x 300 cross corpus in one call: one finite value per pair, each the
    per-pair argmax score (no timing assertion: tests do not measure wall-clock time)."""
    task, _, test = he_task
    rng = np.random.default_rng(1)
    w = rng.normal(size=task.n_features)
    cross = task.cross_corpus(test)
    assert len(cross) == 90_000
    d = task.structure_.decision_batch(cross, w)
    assert d.shape == (90_000,) and np.isfinite(d).all()
    idx = np.concatenate([[0, len(cross) - 1], rng.choice(len(cross), size=200, replace=False)])
    for k in idx:
        assert d[k] == pytest.approx(task.structure_.latent_argmax(cross[int(k)], w).score, rel=1e-12, abs=1e-9)


# ------------------------------------------------------------------------ features layout
def test_weight_layout():
    task = tiny_task(bigrams=False)
    A, B = task.structure_.n_source_chars, task.structure_.n_target_chars
    assert (A, B) == (4, 3) and task.n_features == 2 + A * B
    x = task.encode_pair("ca", "yx")  # c=3, a=1; y=2, x=1
    assert task.structure_.latent_feature(x, [0, -1]).indices.tolist() == [0, 1, 2 + 3 * B + 2]
    phi2 = task.structure_.latent_feature(x, [0, 1])
    assert phi2.values[phi2.indices.tolist().index(1)] == 2.0  # the cell feature counts edges
    task = tiny_task()
    assert task.n_features == 2 + A * B + 2 * A * A * B * B
    phi = task.structure_.latent_feature(x, [-1, 1])  # a -> x; prev (c, y), next (boundary 0, boundary 0)
    bp = 2 + A * B + ((3 * A + 1) * B + 2) * B + 1
    bn = 2 + A * B + A * A * B * B + ((1 * A + 0) * B + 1) * B + 0
    assert phi.indices.tolist() == [0, 1, 2 + 1 * B + 1, bp, bn]
    assert phi.values.tolist() == [1.0, 1.0, 1.0, 1.0, 1.0]
    w = np.zeros(task.n_features)
    blocks = task.structure_.split_weights(w)
    blocks["bigram_prev"][3, 1, 2, 1] = 2.0
    blocks["unigram"][1, 1] = 0.5
    blocks["cell"][0] = 0.25
    assert w[bp] == 2.0 and task.structure_.cell_scores(x, w)[1, 1] == 2.75


def test_latent_feature_rejects_illegal_alignments():
    task = tiny_task()
    x = task.encode_pair("abc", "xy")
    for bad in ([1, 0, -1], [0, 0, -1], [0, 2, -1], [0, -1]):
        with pytest.raises(InputError):
            task.structure_.latent_feature(x, np.array(bad))


def test_unseen_characters_get_a_finite_score(he_task):
    task, _, _ = he_task
    x = task.encode_pair("x9ø", "ツ☃")
    assert x.source_ids(0).tolist()[1:] == [0, 0] and x.target_ids(0).tolist() == [0, 0]
    w = np.random.default_rng(2).normal(size=task.n_features)
    res = task.structure_.latent_argmax(x, w)
    assert np.isfinite(res.score)
    assert res.score == pytest.approx(task.structure_.decision_batch(x, w)[0])
    assert task.structure_.cell_scores(x, w).shape == (3, 2)


def test_heuristic_weights_align_italy(he_task):
    task, _, _ = he_task
    w = task.structure_.heuristic_weights()
    assert w[0] == 0.0 and set(np.unique(w)) == {0.0, 1.0}
    A, B = task.structure_.n_source_chars, task.structure_.n_target_chars
    assert not w[1 + A * B:].any()  # bigram blocks are zero
    res = task.structure_.latent_argmax(task.encode_pair("italy", "איטליה"), w)
    # t -> ט, l -> ל, y -> י; i and a have no romanisation match (alef reads as ')
    assert res.structure.tolist() == [-1, 2, -1, 3, 4]
    assert res.score == 3.0
    ex = task.structure_.explain(("italy", "איטליה"), w)
    assert [(p[2], p[3]) for p in ex["pairs"]] == [("t", "ט"), ("l", "ל"), ("y", "י")]
    assert ex["score"] == 3.0 and np.shape(ex["cell_scores"]) == (5, 6)
    assert ex["kind"] == "character-alignment" and ex["alignment"] == [-1, 2, -1, 3, 4]


def test_heuristic_weights_russian():
    task = TransliterationTask(lang="ru")
    task.fit(task.read(None))
    res = task.structure_.latent_argmax(("moscow", "москва"), task.structure_.heuristic_weights())
    assert res.structure.tolist()[:3] == [0, 1, 2]  # m->м, o->о, s->с


# ------------------------------------------------------------------------------- reading
def test_cldr_read_splits_and_negatives(he_task):
    task, train, test = he_task
    y = np.asarray(train.targets)
    pos = [r for r, l in zip(train.records, y) if l == 1]
    neg = [r for r, l in zip(train.records, y) if l == -1]
    assert len(pos) == 250 and len(test) == 300 and (np.asarray(test.targets) == 1).all()
    assert len(neg) == round(0.1 * 250 * 249) == 6225
    assert len(set(neg)) == len(neg)
    assert not set(neg) & set(pos)
    pos_src, pos_tgt = {s for s, _ in pos}, {t for _, t in pos}
    assert all(s in pos_src and t in pos_tgt for s, t in neg)
    # train and test are disjoint
    assert not {s for s, _ in pos} & {s for s, _ in test.records}
    # deterministic under the seed, different under another
    again = TransliterationTask().read(None, split="train")
    assert again.records == train.records
    other = TransliterationTask(seed=1).read(None, split="train")
    assert other.records[:250] != train.records[:250]
    # n_test=None: all pairs not in the train split
    rest = TransliterationTask(n_test=None).read(None, split="test")
    assert len(rest) == len(cldr_pairs("he")) - 250 and set(test.records) <= set(rest.records)


def test_sample_negatives_excludes_positive_pairings():
    positives = [("a", "X"), ("b", "X"), ("c", "Y")]
    rng = np.random.default_rng(0)
    neg = sample_negatives(positives, 3, rng)  # 3 sources x 2 targets, 3 of them positive
    assert sorted(neg) == [("a", "Y"), ("b", "Y"), ("c", "X")]  # ("c", "X") once, not twice
    with pytest.raises(ConfigError, match="only 3 wrong pairings"):
        sample_negatives(positives, 4, rng)
    many = [(f"s{i}", f"t{i}") for i in range(30)]
    neg = sample_negatives(many, 200, np.random.default_rng(1))
    assert len(set(neg)) == 200 and not set(neg) & set(many)


def test_tsv_read_samples_deterministically(tmp_path):
    lines = [f"word{i}\t{' '.join('אבגדה'[:1 + i % 5])}{i % 7}\t1" for i in range(40)]
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = TransliterationTask(n_train=10, n_test=5, neg_ratio=0.5, seed=3)
    a = task.read(path, split="train")
    assert a.records == task.read(path, split="train").records
    assert len(a) == 10 + round(0.5 * 10 * 9) and a.path == str(path)
    assert (np.asarray(a.targets)[:10] == 1).all() and (np.asarray(a.targets)[10:] == -1).all()
    b = task.read(path, split="test")
    assert len(b) == 5 and (np.asarray(b.targets) == 1).all()
    assert len(TransliterationTask(n_train=0, neg_ratio=0.0).read(path)) == 40
    assert len(TransliterationTask(n_test=None).read(path, split="test")) == 40


def test_bad_parameters_and_input(tmp_path):
    with pytest.raises(ConfigError, match="unknown language code 'xx'; expected one of: ar, he, ru"):
        TransliterationTask(lang="xx").read(None)
    with pytest.raises(ConfigError, match="split must be one of"):
        TransliterationTask().read(None, split="dev")
    with pytest.raises(ConfigError, match="The .n_train. parameter of the .translit. task must be"):
        TransliterationTask(n_train=-1).read(None)
    with pytest.raises(ConfigError, match="neg_ratio"):
        TransliterationTask(neg_ratio=1.5).read(None)
    with pytest.raises(ConfigError, match=f"CLDR gives {len(cldr_pairs('he'))} English-he pairs"):
        TransliterationTask(n_train=400).read(None)
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="contains no pairs"):
        TransliterationTask().read(empty)
    with pytest.raises(InputError, match="training data contains no pairs"):
        TransliterationTask().fit(Dataset([], []))


# ---------------------------------------------------------------------------- evaluation
def test_ranking_metrics_ties_are_pessimistic():
    S = np.array([[3.0, 1.0, 3.0],    # tie with a competitor: rank 2
                  [5.0, 2.0, 1.0],    # one higher: rank 2
                  [0.0, 1.0, 4.0]])   # rank 1
    m = ranking_metrics(S)
    assert m["mrr"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert m["accuracy"] == pytest.approx(1 / 3)
    same = np.zeros((3, 3), bool)
    same[0, 2] = True  # the tied candidate is the same word: not a competitor
    assert ranking_metrics(S, same)["mrr"] == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert ranking_metrics(np.zeros((4, 4)))["mrr"] == pytest.approx(0.25)  # all tied: last


def test_evaluate_model_ranks_cross_pairs(he_task):
    task, _, _ = he_task
    records = [("rome", "רומא"), ("paris", "פריז"), ("oslo", "אוסלו")]
    data = Dataset(records + [("rome", "פריז")], np.array([1, 1, 1, -1]))
    S = np.array([[3.0, 1.0, 3.0], [5.0, 2.0, 1.0], [0.0, 1.0, 4.0]])
    src = {s: i for i, (s, _) in enumerate(records)}
    tgt = {t: j for j, (_, t) in enumerate(records)}

    def decision(X):
        return np.array([S[src[X.source(k)], tgt[X.target(k)]] for k in range(len(X))])

    m = task.evaluate_model(data, None, decision)
    assert m == pytest.approx({"mrr": 2 / 3, "accuracy": 1 / 3})
    with pytest.raises(ConfigError, match="decision_function"):
        task.evaluate_model(data, lambda X: np.ones(len(X)))


def test_evaluate_and_write_predictions(tmp_path, he_task):
    task, _, _ = he_task
    data = Dataset([("rome", "רומא"), ("rome", "פריז")], np.array([1, -1]))
    assert task.evaluate(data.targets, np.array([1, 1])) == {"accuracy": 0.5}
    out = tmp_path / "pred.tsv"
    task.write_predictions(out, data, np.array([1, -1]))
    assert out.read_text(encoding="utf-8") == "rome\tרומא\t1\nrome\tפריז\t-1\n"
    with pytest.raises(InputError):
        task.write_predictions(out, data, np.array([1, 0]))
    assert out.read_text(encoding="utf-8") == "rome\tרומא\t1\nrome\tפריז\t-1\n"


# --------------------------------------------------------------------------- persistence
def test_state_round_trip(he_task):
    task, _, test = he_task
    state, arrays = task.get_state()
    state = json.loads(json.dumps(state))
    params = json.loads(json.dumps(task.get_params()))
    restored = TransliterationTask.from_state(params, state, arrays)
    assert restored.n_features == task.n_features
    w = np.random.default_rng(4).normal(size=task.n_features)
    a = task.structure_.decision_batch(task.cross_corpus(test), w)
    b = restored.structure_.decision_batch(restored.cross_corpus(test), w)
    assert np.array_equal(a, b)
    with pytest.raises(ModelFormatError):
        TransliterationTask.from_state(params, {"source_alphabet": ["ab"], "target_alphabet": []}, {})


# ------------------------------------------------------------------------------ picture
def test_plot_alignment_writes_png(tmp_path, he_task):
    task, _, _ = he_task
    w = task.structure_.heuristic_weights()
    ex = task.structure_.explain(("italy", "איטליה"), w)
    out = tmp_path / "a.png"
    plot_alignment("italy", "איטליה", ex["alignment"], out, score=ex["score"],
                   cell_scores=ex["cell_scores"], title="heuristic")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InputError):
        plot_alignment("italy", "איטליה", [0, 9, -1, -1, -1], tmp_path / "b.png")
    assert not (tmp_path / "b.png").exists()
    draw_explanation(ex, tmp_path / "e.png", title="heuristic")
    assert (tmp_path / "e.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_explain_adds_up_to_the_learners_decision_value(he_task):
    """explain(x, coef_, h) is JSON, its parts plus bias are its score, and with the
    learner's own alignment that score is the learner's decision value (for a two-stage
    model too, whose alignment is not the argmax under coef_)."""
    task, train, test = he_task
    X, y = task.featurize(train), task.encode_targets(train.targets)
    idx = np.flatnonzero(y > 0)[:30].tolist() + np.flatnonzero(y < 0)[:30].tolist()
    X, y = task.structure_.subset(X, idx), y[idx]
    two = TwoStage(task, C=0.1).fit(X, y)
    lclr = LCLR(task, C=0.1, coef_init=two.coef_, max_iter=3, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lclr.fit(X, y)
    pairs = [task.encode_pair(s, t) for s, t in test.records[:8]]
    pairs.append(task.encode_pair("a!b", "\u05d0?"))  # '!' and '?': unseen characters
    for learner in (two, lclr):
        for x in pairs:
            h = learner.latent_argmax([x])[0]
            ex = task.structure_.explain(x, learner.coef_, h)
            assert json.loads(json.dumps(ex)) == ex
            parts = sum(p[4] for p in ex["pairs"])
            assert ex["bias"] == learner.coef_[0]
            assert ex["bias"] + parts == pytest.approx(ex["score"], abs=1e-9)
            assert ex["score"] == pytest.approx(learner.decision_function([x])[0], abs=1e-9)
            assert ex["alignment"] == h.tolist()
            assert len(ex["pairs"]) == int((h >= 0).sum())
    # without h: an argmax under w (LCLR's choice up to ties), so LCLR's decision value
    for x in pairs:
        ex = task.structure_.explain(x, lclr.coef_)
        assert ex["score"] == pytest.approx(lclr.decision_function([x])[0], abs=1e-9)
    with pytest.raises(InputError, match="alignment"):
        task.structure_.explain(x, lclr.coef_, h=[0] * 99)


# ----------------------------------------------------------------------------- real data


def test_real_wikidata_sample():
    path = require_data("translit", "he", "dev.tsv")
    task = TransliterationTask(n_train=50, n_test=40)
    train = task.read(path)
    assert len(train) == 50 + round(0.1 * 50 * 49)
    task.fit(train)
    test = task.read(path, split="test")
    w = task.structure_.heuristic_weights()
    m = task.evaluate_model(test, None, lambda X: task.structure_.decision_batch(X, w))
    assert 0.0 < m["accuracy"] <= m["mrr"] <= 1.0


# ------------------------------------------------------------------- the task holds its structure
def test_the_task_holds_an_immutable_translit_structure():
    import pickle

    from latentstruct.tasks.translit import TranslitStructure

    task = tiny_task()
    s = task.structure_
    assert type(s) is TranslitStructure and task.structure_object() is s
    assert (s.source_alphabet_, s.target_alphabet_) == (("a", "b", "c"), ("x", "y"))
    assert (s.n_source_chars, s.n_target_chars, s.n_features) == (4, 3, 2 + 12 + 2 * 144)
    assert TranslitStructure.from_featurizer(task.featurizer_, False).n_features == 2 + 12
    with pytest.raises(AttributeError, match="immutable"):
        s.bigrams = False
    with pytest.raises(ValueError, match="n_pair_scores must be an int >= 0"):
        TranslitStructure(["a"], ["x"], -1)
    copy = pickle.loads(pickle.dumps(s))
    w = np.random.default_rng(0).normal(size=s.n_features)
    x = task.encode_pair("cab", "yx")
    assert copy.latent_argmax(x, w).score == s.latent_argmax(x, w).score
    # the learner's view delegates to it; a refit builds a new structure
    assert task.structure().decision_batch(x, w)[0] == s.decision_batch(x, w)[0]
    task.fit(Dataset([("abcd", "xyz")], [1]))
    assert task.structure_ is not s and task.structure_.n_source_chars == 5
    # its members on the task: still there, deprecated
    with pytest.warns(DeprecationWarning, match=r"TransliterationTask.latent_argmax is "
                                                r"deprecated: .* use task.structure_.latent_argmax"):
        old = task.latent_argmax(task.encode_pair("ab", "x"), np.zeros(task.n_features))
    assert old.structure.tolist() in ([0, -1], [-1, 0], [-1, -1])
    # a bad word is refused before the task is asked to be fitted
    with pytest.raises(InputError, match="source word must be a non-empty string"):
        TransliterationTask().encode_pair("", "x")
    # a task pickled before it held its structure (no structure_) builds it on first use
    del task.__dict__["structure_"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert task.structure_object().n_source_chars == 5


def test_a_model_file_round_trip_rebuilds_the_structure(tmp_path):
    from latentstruct.learners.persistence import load_trained, save_trained

    task = tiny_task()
    data = Dataset([("abc", "xy"), ("abc", "yx"), ("cab", "xy")], [1, -1, -1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # three pairs: it stays put
        learner = LCLR(task, C=1.0, max_iter=2, init="two-stage", progress=False).fit(
            task.featurize(data), task.encode_targets(data.targets))
    assert np.count_nonzero(learner.coef_) > 0
    save_trained(tmp_path / "m.json", task, learner)
    task2, learner2 = load_trained(tmp_path / "m.json")[:2]
    assert task2.structure_.source_alphabet_ == task.structure_.source_alphabet_
    X = task.featurize(data)
    np.testing.assert_array_equal(learner2.decision_function(task2.featurize(data)),
                                  learner.decision_function(X))
