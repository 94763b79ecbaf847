"""The dependency task ``dep``: Phi and the decoders against brute force, loss, evaluation,
writing, persistence, k-best lists, and small real-data training runs."""

import itertools
import json
import warnings

import numpy as np
import pytest

from latentstruct.data.dependency import DependencySentence, punctuation_mask, read_dependencies
from latentstruct.exceptions import ConfigError, ConvergenceWarning, InputError
from latentstruct.inference.brute_force import projective_trees
from latentstruct.learners import StructuredSVM
from latentstruct.tasks import TASKS
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.contracts import KBEST, MAX_DECODABLE, SIZED
from latentstruct.tasks.dependency import DependencyTask, DepTarget
from latentstruct.tasks.dependency.corpus import token_codes

WORDS = ["the", "dog", "barks", "at", "a", "cat", "Loudly"]
UPOS = ["DET", "NOUN", "VERB", "ADP", "PUNCT"]
LABELS = ["nsubj", "obj", "root"]


def _sentence(rng, n, *, fmt="conllu", heads=None):
    trees = list(projective_trees(n, single_root=fmt == "conllu"))
    if heads is None:
        heads = trees[rng.integers(len(trees))]
    words = tuple(rng.choice(WORDS, n))
    tags = tuple(rng.choice(UPOS, n))
    if fmt == "conllu":
        return DependencySentence(words, ("_",) * n, tags, ("_",) * n, tuple(int(h) for h in heads),
                                  tuple(rng.choice(LABELS, n)), file_format="conllu")
    return DependencySentence(words, ("_",) * n, ("_",) * n, tags, tuple(int(h) for h in heads),
                              ("_",) * n, file_format="dp")


def _dataset(sentences):
    targets = [DepTarget(s.heads, s.deprels, tuple(punctuation_mask(s).tolist()))
               for s in sentences]
    return Dataset(sentences, targets)


def _tiny_task(fmt="conllu", seed=0, n_sent=12, **params):
    rng = np.random.default_rng(seed)
    sents = [_sentence(rng, int(rng.integers(1, 5)), fmt=fmt) for _ in range(n_sent)]
    data = _dataset(sents)
    task = DependencyTask(hash_bits=10, label_hash_bits=5, **params).fit(data)
    return task, data, rng


def _brute_force(task, x, w, gold=None, extra=()):
    """max over projective trees x label assignments (and ``extra`` trees) of
    w.Phi(x, y) (+ Delta(gold, y))."""
    n = int(x.lengths()[0])
    label_sets = (itertools.product(range(task.n_labels), repeat=n) if task.is_labelled()
                  else [(-1,) * n])
    label_sets = list(label_sets)
    best = -np.inf
    trees = list(projective_trees(n, single_root=task.resolved_single_root())) + list(extra)
    for heads in trees:
        for labels in label_sets:
            y = np.array([heads, labels], dtype=np.int64)
            s = task.structure_.joint_feature(x, y).dot(w)
            if gold is not None:
                s += task.structure_.loss(gold, y)
            best = max(best, s)
    return best


# --- registry and contract ------------------------------------------------------------
def test_the_task_is_registered_with_its_capabilities():
    assert TASKS["dep"] is DependencyTask
    assert DependencyTask.capabilities == {MAX_DECODABLE, SIZED, KBEST}
    assert DependencyTask.score_metric == "uas" and DependencyTask.default_learner == "ssvm"


@pytest.mark.parametrize("bad", [
    {"hash_bits": 0}, {"hash_bits": 2.5}, {"label_hash_bits": True}, {"single_root": "yes"},
    {"labelled": "auto-ish"}, {"pos": "silver"}, {"pos_column": "feats"},
    {"distance_bins": (2, 3)}, {"distance_bins": "1,3,2"}, {"distance_bins": "a,b"},
    {"ptb_split": "dev"}, {"tagger_sentences": 0},
    {"pos": "predicted", "pos_column": "xpos"},
])
def test_bad_parameters_are_config_errors(bad):
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError):
        DependencyTask(**bad).fit(_dataset([_sentence(rng, 3)]))


def test_distance_bins_accept_a_comma_separated_string():
    task, _, _ = _tiny_task(distance_bins="1,2,4,8")
    assert task.bins_.tolist() == [1, 2, 4, 8]


def test_fit_resolves_the_auto_parameters():
    task, _, _ = _tiny_task("conllu")
    assert task.is_labelled() and task.resolved_single_root() and task.pos_column_ == "upos"
    assert task.labels_ == sorted(LABELS)
    assert task.n_features == 2**10 + len(LABELS) * 2**5
    dp, _, _ = _tiny_task("dp")
    assert not dp.is_labelled() and not dp.resolved_single_root() and dp.pos_column_ == "xpos"
    assert dp.n_features == 2**10


def test_a_labelled_task_needs_every_deprel():
    rng = np.random.default_rng(0)
    s = _sentence(rng, 3, fmt="dp")
    with pytest.raises(InputError, match="no DEPREL"):
        DependencyTask(labelled=True).fit(_dataset([s]))


# --- Phi, loss and the decoders against brute force --------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["conllu", "dp"])
def test_argmax_is_the_brute_force_maximum_plain_and_loss_augmented(fmt):
    task, data, rng = _tiny_task(fmt, seed=1)
    X, Y = task.featurize(data), task.encode_targets(data.targets)
    for _ in range(3):
        w = rng.normal(size=task.n_features)
        for i in range(len(X)):
            x, gold = X[i], Y[i]
            plain = task.structure_.argmax(x, w)
            aug = task.structure_.argmax(x, w, gold)
            assert plain.score == pytest.approx(_brute_force(task, x, w), abs=1e-9)
            assert aug.score == pytest.approx(_brute_force(task, x, w, gold), abs=1e-9)
            # the reported scores are w.Phi (+ Delta) of the returned trees
            assert plain.score == pytest.approx(task.structure_.joint_feature(x, plain.structure).dot(w))
            assert aug.score == pytest.approx(task.structure_.joint_feature(x, aug.structure).dot(w)
                                              + task.structure_.loss(gold, aug.structure))
            assert np.array_equal(plain.structure[2], gold[2])
        batch = task.structure_.argmax_batch(X, w, Y)
        assert all(np.array_equal(b, task.structure_.argmax(X[i], w, Y[i]).structure)
                   for i, b in enumerate(batch))


def test_phi_of_the_decoded_tree_matches_its_score_on_longer_sentences():
    rng = np.random.default_rng(5)
    sents = [_sentence(rng, 6) for _ in range(3)]
    # longer sentences: chain trees of 30 words
    for n in (17, 30):
        words = tuple(rng.choice(WORDS, n))
        sents.append(DependencySentence(words, ("_",) * n, tuple(rng.choice(UPOS, n)), ("_",) * n,
                                        (0,) + tuple(range(1, n)), tuple(rng.choice(LABELS, n))))
    data = _dataset(sents)
    task = DependencyTask().fit(data)
    X, Y = task.featurize(data), task.encode_targets(data.targets)
    w = rng.normal(size=task.n_features)
    for res, x, y in zip(task.structure_.argmax_results(X, w, Y), X, Y):
        assert res.score == pytest.approx(task.structure_.joint_feature(x, res.structure).dot(w)
                                          + task.structure_.loss(y, res.structure), rel=1e-10)
        d = task.structure_.joint_feature_difference(x, y, res.structure)
        assert np.unique(d.indices).size == d.nnz and np.all(d.values != 0)  # coalesced
        phi_diff = task.structure_.joint_feature(x, y) - task.structure_.joint_feature(x, res.structure)
        d = d.coalesce()  # sorted
        assert np.array_equal(d.indices, phi_diff.indices)
        assert np.allclose(d.values, phi_diff.values)
    for res, x in zip(task.structure_.argmax_results(X, w), X):
        assert res.score == pytest.approx(task.structure_.joint_feature(x, res.structure).dot(w), rel=1e-10)


def test_a_non_projective_gold_tree_is_returned_when_it_wins():
    rng = np.random.default_rng(2)
    gold_heads = (3, 4, 0, 1)  # arcs 3->1 and 4->2 cross
    sent = _sentence(rng, 4, heads=gold_heads)
    task = DependencyTask(hash_bits=10, label_hash_bits=5).fit(
        _dataset([sent, _sentence(rng, 3)]))
    x = task.featurize(_dataset([sent]))
    gold = task.encode_targets([DepTarget(sent.heads, sent.deprels, (1,) * 4)])[0]
    strong = 10 * task.structure_.joint_feature(x, gold).to_dense(task.n_features)
    res = task.structure_.argmax(x, strong, gold)
    assert np.array_equal(res.structure[:2], gold[:2]) and task.structure_.loss(gold, res.structure) == 0
    assert res.score == pytest.approx(task.structure_.joint_feature(x, gold).dot(strong))
    # the plain argmax stays projective
    assert task.structure_.loss(gold, task.structure_.argmax(x, strong).structure) > 0
    for _ in range(5):
        w = rng.normal(size=task.n_features)
        best = _brute_force(task, x, w, gold, extra=[gold[0]])
        assert task.structure_.argmax(x, w, gold).score == pytest.approx(best, abs=1e-9)


def test_loss_counts_head_errors_and_wrong_head_or_label():
    task, _, _ = _tiny_task()
    gold = np.array([[2, 0, 2], [0, 2, 1], [1, 1, 1]])
    pred = np.array([[2, 0, 1], [1, 2, 1], [1, 1, 1]])
    assert task.structure_.loss(gold, pred) == 1 + 2
    unlabelled, _, _ = _tiny_task("dp")
    assert unlabelled.structure_.loss(gold, pred) == 1


def test_arc_scores_fold_in_the_best_label():
    task, data, rng = _tiny_task(seed=3)
    X = task.featurize(data)
    w = rng.normal(size=task.n_features)
    i = int(np.argmax(X.lengths()))
    x = X[i]
    S, B = task.structure_.arc_scores(x, w, with_labels=True)
    n = S.shape[0] - 1
    assert np.all(np.isneginf(np.diag(S))) and np.all(np.isneginf(S[:, 0]))
    for h in range(n + 1):
        for m in range(1, n + 1):
            if h == m:
                continue
            scores = [_single_arc_score(task, x, w, h, m, lab) for lab in range(task.n_labels)]
            assert S[h, m] == pytest.approx(max(scores))
            assert B[h, m] == int(np.argmax(scores))


def _single_arc_score(task, x, w, h, m, lab):
    """arc(h, m) + label(h, m, lab): w . Phi of the one part (the other words have no head)."""
    from latentstruct.tasks.dependency.features import phi_difference

    n = int(x.lengths()[0])
    ha = np.full(n, -1, np.int64)
    ha[m - 1] = h
    la = np.full(n, -1, np.int64)
    la[m - 1] = lab
    none = np.full(n, -1, np.int64)
    mask, n_arc, lmask, L, bins = task.structure_._kernel_args()
    idx, val = phi_difference(x.word, x.prefix, x.pos, x.offsets[0], n + 1, ha, la, none, none,
                              mask, n_arc, lmask, L, bins)
    return float(np.dot(w[idx], val))


def test_kbest_lists_are_best_first_and_scored_by_the_model():
    task, data, rng = _tiny_task(seed=4)
    X = task.featurize(data)
    w = rng.normal(size=task.n_features)
    i = int(np.argmax(X.lengths()))
    x = X[i]
    lists = task.structure_.kbest(x, w, 6)
    best = task.structure_.argmax(x, w)
    assert np.array_equal(lists[0][0], best.structure[0])
    assert lists[0][2] == pytest.approx(best.score)
    scores = [s for _, _, s in lists]
    assert scores == sorted(scores, reverse=True) and len(lists) == 6
    S = task.structure_.arc_scores(x, w)
    n = S.shape[0] - 1
    folded = sorted((sum(S[h[m - 1], m] for m in range(1, n + 1))
                     for h in projective_trees(n, single_root=True)), reverse=True)
    assert np.allclose(scores, folded[:6])
    for heads, deprels, score in lists:
        y = np.array([heads, [task.labels_.index(d) for d in deprels]])
        assert task.structure_.joint_feature(x, y).dot(w) == pytest.approx(score)
    with pytest.raises(ConfigError):
        task.structure_.kbest(x, w, 0)


# --- evaluation, writing, persistence -----------------------------------------------------
def test_evaluate_by_hand_leaves_punctuation_out():
    task, _, _ = _tiny_task()
    gold = [np.array([[2, 0, 2, 2], [0, 2, 1, 1], [1, 1, 1, 0]]),
            np.array([[0], [2], [1]])]
    pred = [np.array([[2, 0, 1, 3], [1, 2, 1, 0], [1, 1, 1, 0]]),
            np.array([[0], [2], [1]])]
    m = task.evaluate(gold, pred)
    # scored words: 3 + 1; heads right: words 1, 2 of sentence 1 and the word of sentence 2
    assert m["uas"] == pytest.approx(3 / 4) and m["las"] == pytest.approx(2 / 4)
    assert (m["n_tokens_scored"], m["n_sentences"], m["pos"]) == (4, 2, "gold")
    dp, _, _ = _tiny_task("dp")
    assert dp.evaluate(gold, pred)["las"] is None


def test_write_predictions_round_trips(tmp_path):
    rng = np.random.default_rng(6)
    sents = [_sentence(rng, int(rng.integers(1, 6))) for _ in range(5)]
    task = DependencyTask(hash_bits=12, label_hash_bits=6).fit(_dataset(sents))
    data = _dataset(sents)
    pred = task.structure_.argmax_batch(task.featurize(data), rng.normal(size=task.n_features))
    out = tmp_path / "pred.conllu"
    task.write_predictions(out, data, pred)
    back = read_dependencies(out)
    for s, y in zip(back, pred):
        assert s.heads == tuple(y[0]) and s.deprels == tuple(task.labels_[i] for i in y[1])


def test_state_round_trip_gives_identical_predictions(tmp_path):
    from latentstruct.learners.persistence import load_trained, save_trained

    task, data, rng = _tiny_task(seed=7)
    X, Y = task.featurize(data), task.encode_targets(data.targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = StructuredSVM(task, C=1.0, max_iter=5).fit(X, Y)
    params, state = task.get_state()
    again = DependencyTask.from_state(task.get_params(), json.loads(json.dumps(params)), state)
    assert again.n_features == task.n_features
    w = model.coef_
    assert all(np.array_equal(a, b) for a, b in
               zip(again.structure_.argmax_batch(again.featurize(data), w), task.structure_.argmax_batch(X, w)))
    save_trained(tmp_path / "dep.npz", task, model)
    task2, model2, _ = load_trained(tmp_path / "dep.npz")
    assert task2.get_params() == {**task.get_params(), "distance_bins": [1, 2, 3, 4, 5, 10]}
    assert all(np.array_equal(a, b) for a, b in
               zip(model2.predict(task2.featurize(data)), model.predict(X)))


def test_gold_pos_needs_no_tagger_and_predicted_pos_refuses_dp(tmp_path):
    from latentstruct.pipelines import attach_tagger

    gold = DependencyTask()
    assert gold.has_tagger() and not gold.needs_tagger and attach_tagger(gold) is None
    predicted = DependencyTask(pos="predicted")
    assert not predicted.has_tagger() and predicted.needs_tagger
    path = tmp_path / "x.dp"
    path.write_text("A\tDT\t0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="pos='predicted' needs UD data"):
        predicted.read(path)
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match="needs a POS tagger"):
        predicted.fit(_dataset([_sentence(rng, 3)])).featurize(_dataset([_sentence(rng, 3)]))


# --- real data ----------------------------------------------------------------------------------
def _train_and_score(task, train, dev, **kw):
    task.fit(train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = StructuredSVM(task, random_state=0, **kw)
        model.fit(task.featurize(train), task.encode_targets(train.targets))
    X_dev, Y_dev = task.featurize(dev), task.encode_targets(dev.targets)
    metrics = task.evaluate(Y_dev, model.predict(X_dev))
    assert model.score(X_dev, Y_dev) == metrics["uas"]
    return model, metrics


@pytest.mark.slow
def test_ssvm_learns_to_parse_an_ewt_sample(require_data):
    train_path = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    dev_path = require_data("ud_english_ewt", "en_ewt-ud-dev.conllu")
    task = DependencyTask(hash_bits=20, label_hash_bits=14)
    full, dev = task.read(train_path), task.read(dev_path, split="test")
    train = Dataset(full.records[:300], full.targets[:300])
    dev = Dataset(dev.records[:200], dev.targets[:200])
    _, metrics = _train_and_score(task, train, dev, C=0.1, max_iter=8)
    assert metrics["uas"] > 0.60 and metrics["las"] > 0.45
    assert metrics["n_sentences"] == 200
    assert metrics["n_tokens_scored"] < sum(len(r) for r in dev.records)


@pytest.mark.slow
def test_ssvm_learns_to_parse_the_ptb_sample(require_data):
    directory = require_data("ptb_wsj_sample", "dependency")
    task = DependencyTask(hash_bits=20, ptb_split="auto")
    full, held = task.read(directory), task.read(directory, split="test")
    held_docs = {r.path.rsplit("_", 1)[1] for r in held.records}
    assert held_docs <= {f"{k:04d}.dp" for k in range(120, 143)}
    train = Dataset(full.records[:300], full.targets[:300])
    dev = Dataset(held.records[:200], held.targets[:200])
    _, metrics = _train_and_score(task, train, dev, C=0.1, max_iter=8)
    assert not task.is_labelled() and metrics["las"] is None
    assert metrics["uas"] > 0.60


@pytest.mark.slow
def test_predicted_pos_comes_from_the_attached_tagger(require_data, tmp_path):
    from latentstruct.pipelines import train_pos_tagger

    train_path = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    pos_task, coef, _ = train_pos_tagger(200, max_iter=2, train_path=train_path)
    task = DependencyTask(pos="predicted", hash_bits=16, label_hash_bits=10)
    task.set_tagger(pos_task, coef)
    assert task.has_tagger() and not task.needs_tagger
    full = task.read(train_path)
    data = Dataset(full.records[:30], full.targets[:30])
    task.fit(data)
    tags = task.tag([r.words for r in data.records])
    assert [len(t) for t in tags] == [len(r) for r in data.records]
    X = task.featurize(data)
    # the POS codes are those of the tagger's tags, not of the gold UPOS
    assert np.array_equal(X.pos, np.concatenate([token_codes(r.words, t)[2]
                                                 for r, t in zip(data.records, tags)]))
    assert any(t != r.upos for t, r in zip(tags, data.records))
    state, arrays = task.get_state()
    again = DependencyTask.from_state(task.get_params(), state, arrays)
    assert np.array_equal(again.featurize(data).pos, X.pos)
    with pytest.raises(ConfigError, match="without its tagger"):
        DependencyTask(pos="predicted").fit(data).get_state()


# --- command line ----------------------------------------------------------------------------
def _conllu_rows(rows):
    return "".join(f"{i}\t{w}\t{w}\t{u}\t_\t_\t{h}\t{d}\t_\t_\n" for i, (w, u, h, d) in
                   enumerate(rows, 1)) + "\n"


TINY_UD = "# sent_id = 1\n" + _conllu_rows([
    ("Dogs", "NOUN", 2, "nsubj"), ("bark", "VERB", 0, "root"), (".", "PUNCT", 2, "punct")]) \
    + _conllu_rows([("Cats", "NOUN", 2, "nsubj"), ("see", "VERB", 0, "root"),
                    ("dogs", "NOUN", 2, "obj"), (".", "PUNCT", 2, "punct")])


def test_the_command_line_trains_evaluates_and_predicts(tmp_path, capsys):
    from latentstruct.cli import main

    data = tmp_path / "tiny.conllu"
    data.write_text(TINY_UD, encoding="utf-8")
    model, out = tmp_path / "dep.npz", tmp_path / "pred.conllu"
    assert main(["train", "dep", "--train", str(data), "--model", str(model), "--quiet",
                 "--option", "C=1", "--option", "hash_bits=12",
                 "--option", "distance_bins=1,2,4"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(data)]) == 0
    metrics = json.loads(capsys.readouterr().out)
    per_relation = metrics.pop("per_type")  # the breakdown evaluate prints with the totals
    assert metrics.pop("counts") == {"tokens": 5, "correct_heads": 5}
    assert metrics == {"uas": 1.0, "las": 1.0, "n_tokens_scored": 5.0, "n_sentences": 2.0}
    assert all(r["uas"] == r["las"] == 1.0 for r in per_relation.values())
    assert main(["predict", "--model", str(model), "--input", str(data),
                 "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == TINY_UD
    bad = tmp_path / "bad.conllu"
    bad.write_text(_conllu_rows([("a", "X", 2, "dep"), ("b", "X", 1, "dep"),
                                 ("c", "X", 0, "root")]), encoding="utf-8")
    assert main(["train", "dep", "--train", str(bad), "--model", str(model), "--quiet"]) == 2
    assert f"{bad}:1: the heads form a cycle" in capsys.readouterr().err
