"""Explanations of sequence models (``explain_prediction``, ``explain_weights``,
``latentstruct explain`` and the sequence form of ``latentstruct kbest``): contributions
that sum to the score exactly, checked against Φ on random tiny chains; the margin and the
runner-up from the exact n-best list; text, HTML and the command line."""

import json
import shlex
import warnings

import numpy as np
import pytest

from latentstruct import Chunker
from latentstruct.cli import main
from latentstruct.exceptions import ConfigError, InputError
from latentstruct.inference.constraints import ChainConstraints
from latentstruct.tasks.sequence.corpus import SequenceCorpus
from latentstruct.tasks.sequence.structure import ChainStructure


@pytest.mark.parametrize("seed", range(40))
def test_contributions_sum_to_the_score_part_by_part(seed):
    rng = np.random.default_rng(seed)
    T, L, A = int(rng.integers(1, 6)), int(rng.integers(1, 4)), 5
    s = ChainStructure(L, A, ChainConstraints.unconstrained(L))
    n = int(rng.integers(0, 4))  # attributes per token, repeats and values included
    ids = rng.integers(0, A, size=n * T)
    x = SequenceCorpus(np.arange(T + 1) * n, ids, np.array([0, T]),
                       attr_values=None if seed % 2 else rng.uniform(-2, 2, size=n * T))
    w = rng.normal(size=s.n_features)
    y = rng.integers(0, L, size=T)
    parts = s.contributions(x, w, y)
    assert abs(sum(v for *_, v in parts) - s.joint_feature(x, y).dot(w)) <= 1e-9
    kinds = [k for _, k, *_ in parts]
    assert kinds.count("start") == kinds.count("end") == 1
    assert kinds.count("transition") == T - 1 and kinds.count("state") == n * T
    emission, trans, start, end = s.split_weights(w)
    for t, kind, a, label, value in parts:
        if kind == "transition":
            assert label == (y[t - 1], y[t]) and value == trans[y[t - 1], y[t]]
        elif kind == "state":
            assert label == y[t] and abs(value) <= abs(emission[a, y[t]]) * 2 + 1e-12
        else:
            assert value == (start if kind == "start" else end)[label]
    assert [p[0] for p in parts] == sorted(p[0] for p in parts)  # tokens in order


X = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
     [("Rockwell", "NNP"), ("said", "VBD"), ("the", "DT"), ("agreement", "NN")],
     [("In", "IN"), ("Britain", "NNP"), (",", ","), ("it", "PRP"), ("rose", "VBD")]]
Y = [["B-NP", "B-VP", "B-NP", "I-NP"], ["B-NP", "B-VP", "B-NP", "I-NP"],
     ["B-PP", "B-NP", "O", "B-NP", "B-VP"]]
CHUNK = "".join("".join(f"{w} {p} {t}\n" for (w, p), t in zip(x, y)) + "\n" for x, y in zip(X, Y))


@pytest.fixture(scope="module", params=["crf", "ssvm"])
def chunker(request):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few iterations on three sentences
        return Chunker(learner=request.param, max_iter=5).fit(X, Y)


def test_an_explanation_is_the_prediction_its_exact_score_and_margin(chunker):
    for i, x in enumerate(X):
        e = chunker.explain_prediction(x)
        best = chunker.predict_nbest([x], k=2)[0]
        assert e.labels == chunker.predict([x])[0] == best[0][0]
        assert e.score == pytest.approx(best[0][1], abs=1e-12)
        assert abs(sum(c.value for c in e.contributions) - e.score) <= 1e-9
        assert e.margin == pytest.approx(best[0][1] - best[1][1], abs=1e-12)
        assert e.runner_up == best[1][0]
        t = e.first_difference
        assert e.runner_up[:t] == e.labels[:t] and e.runner_up[t] != e.labels[t]
        assert e.tokens == [w for w, _ in x]
        assert np.sum(e.token_totals()) == pytest.approx(e.score)
        if chunker.learner == "crf":
            assert e.probability == pytest.approx(best[0][2])
            assert all(sum(m.values()) == pytest.approx(1.0) for m in e.marginals)
        else:
            assert e.probability is None and e.marginals is None
        text, page = str(e), e._repr_html_()
        assert all(label in text and label in page for label in e.labels)
        assert f"margin {e.margin:.4f}" in text


def test_an_explanation_keeps_allowed_labels_and_names_its_features(chunker):
    e = chunker.explain_prediction(X[0], allowed=[None, "I-NP", None, None])
    assert e.labels[1] == "I-NP" and e.labels[0] == "B-NP"  # well-formed: I-NP after B-NP
    names = set(chunker.featurizer_.get_feature_names_out())
    assert {c.feature for c in e.contributions if c.kind == "state"} <= names
    with pytest.raises(InputError, match="one sequence"):
        chunker.explain_prediction("He reckons")


def test_explain_weights_lists_the_largest_weights_and_the_decoders_transitions(chunker):
    e = chunker.explain_weights(top=3)
    emission, *_ = chunker.task_.structure_.split_weights(chunker.learner_.structure_weights())
    labels = list(chunker.task_.labels_)
    for k, label in enumerate(labels):
        got = [v for _, v in e.positive[label]]
        assert got == sorted(got, reverse=True) and len(got) <= 3
        if got:
            assert got[0] == pytest.approx(emission[:, k].max())
    assert e.transitions["O"]["I-NP"] == -np.inf  # forbidden by IOB2
    assert "transitions" in str(e) and "<table>" in e._repr_html_()
    with pytest.raises(ConfigError, match="top must be"):
        chunker.explain_weights(top=0)


def test_the_command_line_explains_and_lists_the_n_best_of_a_sequence_model(tmp_path, capsys):
    (tmp_path / "train.txt").write_text(CHUNK, encoding="utf-8")
    (tmp_path / "in.txt").write_text("He PRP\nsaid VBD\n\nthe DT\ndeficit NN\n", encoding="utf-8")
    run = lambda argv: main(shlex.split(argv.format(d=tmp_path)))  # noqa: E731
    assert run("train chunk --train {d}/train.txt --model {d}/m.npz --learner crf --quiet") == 0
    capsys.readouterr()
    assert run("explain --model {d}/m.npz --input {d}/in.txt --sentence 1") == 0
    out = capsys.readouterr().out
    assert out.startswith("sentence 1\nscore ") and "'deficit'" in out and "'He'" not in out
    assert run("explain --model {d}/m.npz --input {d}/in.txt --out {d}/e.html") == 0
    page = (tmp_path / "e.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<table>") == 2
    assert run("explain --model {d}/m.npz --weights --top 2 --out {d}/w.txt") == 0
    assert "transitions" in (tmp_path / "w.txt").read_text(encoding="utf-8")
    assert run("kbest --model {d}/m.npz --input {d}/in.txt --output {d}/n.jsonl -k 4 --quiet") == 0
    lines = [json.loads(v) for v in (tmp_path / "n.jsonl").read_text().splitlines()]
    assert [v["sentence"] for v in lines] == [0, 1]
    for v in lines:
        assert len(v["nbest"]) == 4 and len(v["nbest"][0]["tags"]) == 2
        scores = [b["score"] for b in v["nbest"]]
        assert scores == sorted(scores, reverse=True)
        assert 0 < sum(b["probability"] for b in v["nbest"]) <= 1 + 1e-9
    capsys.readouterr()
    for argv, fragment in [
            ("explain --model {d}/m.npz", "explain needs --input FILE"),
            ("explain --model {d}/m.npz --input {d}/in.txt --out {d}/e.png", "text or HTML"),
            ("explain --model {d}/m.npz --input {d}/in.txt --sentence 2", "has 2 sentences"),
            ("explain --model {d}/m.npz --source a --target b", "give --input FILE"),
            ("explain --model {d}/m.npz --weights --input {d}/in.txt", "drop --input"),
            ("explain --model {d}/m.npz --input {d}/in.txt --out {d}/e.pdf", ".html or .txt"),
            ("kbest --model {d}/m.npz --input {d}/in.txt --output {d}/n.jsonl --folds 2",
             "drop --folds")]:
        assert run(argv) == 2, argv
        assert fragment in capsys.readouterr().err, argv
