"""Learning from partial labels (unknown tags: None in y, ``_`` in a file, -1 encoded):
the chain's completion against brute-force enumeration, the loss that counts known tags
only, the structural SVM's completion rounds (an objective that does not rise), the online
learners, the CRF, the refusals, and the file formats."""

import warnings

import numpy as np
import pytest

from latentstruct import Chunker, Tagger
from latentstruct.cli import main
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.brute_force import all_sequences
from latentstruct.inference.constraints import ChainConstraints
from latentstruct.tasks.sequence.corpus import SequenceCorpus
from latentstruct.tasks.sequence.structure import ChainStructure, completed


def _instance(seed):
    rng = np.random.default_rng(seed)
    T, L, A = int(rng.integers(1, 5)), int(rng.integers(2, 4)), 4
    constraints = None
    if rng.random() < 0.5:
        trans = rng.random((L, L)) < 0.7
        start, end = rng.random(L) < 0.7, rng.random(L) < 0.7
        trans[0, 0] = start[0] = end[0] = True
        constraints = ChainConstraints(trans, start, end)
    s = ChainStructure(L, A, constraints)
    x = SequenceCorpus(np.arange(0, 2 * T + 1, 2), rng.integers(0, A, size=2 * T), np.array([0, T]))
    w = rng.normal(size=s.n_features)
    y = np.where(rng.random(T) < 0.5, -1, 0).astype(np.int64)  # label 0 is always allowed
    return s, x, w, y


@pytest.mark.parametrize("seed", range(50))
def test_completion_is_the_best_labelling_that_keeps_the_known_tags(seed):
    s, x, w, y = _instance(seed)
    best = max((s.joint_feature(x, np.asarray(h)).dot(w), h)
               for h in all_sequences(len(y), s.n_labels)
               if all(k < 0 or h[t] == k for t, k in enumerate(y))
               and (s.constraints is None or s.constraints.allows(h)))
    code = s.complete_batch(x, w, [y])[0]
    assert np.all(code[y >= 0] == y[y >= 0]) and np.all(code[y < 0] <= -2)
    labels = np.where(code <= -2, -2 - code, code)
    assert s.joint_feature(x, labels).dot(w) == pytest.approx(best[0])
    # a completed code is its label for the joint feature, and costs nothing in the loss
    assert s.joint_feature(x, code).dot(w) == pytest.approx(best[0])
    other = (labels + 1) % s.n_labels
    assert s.loss(code, other) == np.count_nonzero(y >= 0)
    assert s.loss_batch([code], [other]).tolist() == [np.count_nonzero(y >= 0)]
    assert s.unknown_parts([y]) == np.count_nonzero(y < 0)
    # the loss-augmented argmax adds the loss of the known tags only
    aug = s.argmax(x, w, code)
    want = max(s.joint_feature(x, np.asarray(h)).dot(w) + s.loss(code, np.asarray(h))
               for h in all_sequences(len(y), s.n_labels)
               if s.constraints is None or s.constraints.allows(h))
    assert s.joint_feature(x, aug.structure).dot(w) + s.loss(code, aug.structure) == pytest.approx(want)
    np.testing.assert_array_equal(completed(labels, y >= 0), code)


X = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
     [("Rockwell", "NNP"), ("said", "VBD"), ("the", "DT"), ("agreement", "NN")],
     [("In", "IN"), ("Britain", "NNP"), (",", ","), ("it", "PRP"), ("rose", "VBD")],
     [("The", "DT"), ("deficit", "NN"), ("rose", "VBD")]]
Y = [["B-NP", "B-VP", "B-NP", "I-NP"], ["B-NP", "B-VP", "B-NP", "I-NP"],
     ["B-PP", "B-NP", "O", "B-NP", "B-VP"], ["B-NP", "I-NP", "B-VP"]]
PARTIAL = [["B-NP", None, "B-NP", "I-NP"], ["B-NP", "B-VP", None, None],
           ["B-PP", "B-NP", "O", None, "B-VP"], [None, "I-NP", "B-VP"]]


@pytest.mark.parametrize("learner", ["crf", "ssvm", "perceptron", "pa", "arow"])
def test_every_learner_that_takes_partial_labels_learns_the_known_tags(learner):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny data
        chunker = Chunker(learner=learner).fit(X, PARTIAL)
    assert chunker.task_.constrained_ and chunker.task_.tag_scheme_ == "iob2"
    pred = chunker.predict(X)
    known = [(i, t) for i, tags in enumerate(PARTIAL) for t, tag in enumerate(tags) if tag]
    assert sum(pred[i][t] == PARTIAL[i][t] for i, t in known) >= 0.9 * len(known)
    # every prefix of each chunk type seen joins the labels (I-PP, I-VP are never known)
    assert chunker.classes_ == ["B-NP", "B-PP", "B-VP", "I-NP", "I-PP", "I-VP", "O"]


def test_the_structural_svms_completion_rounds_do_not_raise_its_objective():
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # a Theorem 1 warning fails
        warnings.filterwarnings("ignore", message=".*stopped at max_iter.*")
        chunker = Chunker(tol=0.001, max_iter=200).fit(X, PARTIAL)
    curve = chunker.learner_.latent_objective_curve_
    assert 1 <= len(curve) == chunker.learner_.n_completions_
    assert all(b <= a * (1 + 0.001) + 1e-9 for a, b in zip(curve, curve[1:]))
    full = Chunker(tol=0.001, max_iter=200).fit(X, Y)
    assert full.learner_.latent_objective_curve_ == [] and full.learner_.n_completions_ == 0


def test_learners_that_need_every_tag_refuse_partial_labels_before_training():
    for learner in ["frank-wolfe", "sgd-ssvm", "distro"]:
        with pytest.raises(ConfigError, match="4 tags unknown .* takes partial labels: arow, "
                                              "crf, pa, perceptron, ssvm"):
            Chunker(learner=learner).fit(X[:3], PARTIAL[:3])


def test_scoring_refuses_unknown_gold_tags_and_partial_fit_takes_them():
    chunker = Chunker(learner="perceptron")
    chunker.partial_fit(X, PARTIAL, classes=["B-NP", "B-PP", "B-VP", "I-NP", "O"])
    chunker.partial_fit(X[:1], [[None, None, "B-NP", None]])
    with pytest.raises(InputError, match="gold tag 1 of sentence 0 is unknown"):
        chunker.score(X, PARTIAL)
    assert chunker.score(X, Y) > 0.5
    tagger = Tagger(learner="crf").fit([["a", "b"], ["c", "d"]], [["NOUN", None], ["VERB", "DET"]])
    assert tagger.classes_ == ["DET", "NOUN", "VERB"]
    with pytest.raises(InputError, match="'_' marks a missing tag in the file formats; in "
                                         "memory give None"):
        Tagger().fit([["a"]], [["_"]])


def test_an_unknown_tag_is_underscore_in_a_training_file(tmp_path, capsys):
    train = "".join("".join(f"{w} {p} {t or '_'}\n" for (w, p), t in zip(x, y)) + "\n"
                    for x, y in zip(X, PARTIAL))
    (tmp_path / "train.txt").write_text(train, encoding="utf-8")
    gold = "".join("".join(f"{w} {p} {t}\n" for (w, p), t in zip(x, y)) + "\n"
                   for x, y in zip(X, Y))
    (tmp_path / "gold.txt").write_text(gold, encoding="utf-8")
    for learner in ("crf", "ssvm"):
        assert main(["train", "chunk", "--train", str(tmp_path / "train.txt"), "--model",
                     str(tmp_path / f"{learner}.npz"), "--learner", learner, "--quiet"]) == 0
        assert main(["evaluate", "--model", str(tmp_path / f"{learner}.npz"), "--test",
                     str(tmp_path / "gold.txt"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(tmp_path / "crf.npz"), "--test",
                 str(tmp_path / "train.txt"), "--quiet"]) == 2
    assert "gold tag 1 of sentence 0 is unknown" in capsys.readouterr().err
    assert main(["train", "chunk", "--train", str(tmp_path / "train.txt"), "--model",
                 str(tmp_path / "fw.npz"), "--learner", "frank-wolfe", "--quiet"]) == 2
    assert "takes partial labels" in capsys.readouterr().err


def test_a_chunk_type_whose_every_b_tag_is_hidden_still_completes_well_formed():
    # B-PP is never known, I-PP is: the label set gets B-PP, so I-PP has a well-formed start
    X2 = [[("In", "IN"), ("to", "TO"), ("it", "PRP")], [("He", "PRP"), ("ran", "VBD")]]
    Y2 = [[None, "I-PP", "B-NP"], ["B-NP", "B-VP"]]
    for learner in ("crf", "ssvm", "perceptron"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chunker = Chunker(learner=learner).fit(X2, Y2)
        assert chunker.classes_ == ["B-NP", "B-PP", "B-VP", "I-NP", "I-PP", "I-VP", "O"]
        assert chunker.task_.constrained_
    # fully labelled data keeps the labels it has
    assert Chunker(learner="crf").fit(X2, [["B-PP", "I-PP", "B-NP"], ["B-NP", "B-VP"]]).classes_ \
        == ["B-NP", "B-PP", "B-VP", "I-PP"]


def test_the_crf_names_a_partial_labelling_no_allowed_labelling_completes():
    from latentstruct.learners import CRF

    s = ChainStructure(2, 2, ChainConstraints(np.array([[True, False], [True, True]]),
                                              np.ones(2, bool), np.ones(2, bool)))
    x = SequenceCorpus(np.array([0, 1, 2, 3]), np.array([0, 1, 0]), np.array([0, 3]))
    # label 0 may not precede label 1: 0, ?, 1 has no completion (? = 0 -> 1, ? = 1 after 0)
    with pytest.raises(InputError, match="training sentence 0: no labelling keeps its known"):
        CRF(s).fit(x, [np.array([0, -1, 1])])


def test_the_completion_rounds_warn_when_they_stop_at_their_cap(monkeypatch):
    from latentstruct.exceptions import ConvergenceWarning
    from latentstruct.learners.ssvm import ssvm

    monkeypatch.setattr(ssvm, "MAX_COMPLETIONS", 1)  # one round cannot show a settled objective
    with pytest.warns(ConvergenceWarning, match="stopped after 1 completion rounds"):
        chunker = Chunker().fit(X, PARTIAL)
    assert chunker.learner_.n_completions_ == 1 and not chunker.learner_.converged_
