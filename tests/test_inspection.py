"""Model inspection: strongest features per label, transitions, bias, latent models' largest
weights (``latentstruct.pipelines.inspection``) and ``latentstruct inspect``."""

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import latentstruct
from latentstruct.cli import main
from latentstruct.exceptions import ConfigError
from latentstruct.pipelines.inspection import inspect_model, model_weights
from latentstruct.learners import LCLR, JLIS, StructuredSVM
from latentstruct.learners.persistence import load_trained
from latentstruct.tasks import Dataset, PosTask, TransliterationTask


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def conllu(sentences) -> str:
    return "".join("".join(f"{k}\t{w}\t_\t{t}\t_\t_\t_\t_\t_\t_\n" for k, (w, t) in
                           enumerate(s, 1)) + "\n" for s in sentences)


def zork_sentences(n=30, seed=0):
    """Sentences whose tag X goes with the word zork (in any case) and nothing else: other
    words share its first letter, last letter and shape."""
    rng = np.random.default_rng(seed)
    others = [("zap", "NOUN"), ("zip", "NOUN"), ("fork", "VERB"), ("kick", "VERB"),
              ("Zap", "NOUN"), ("Kick", "VERB"), ("pan", "NOUN"), ("run", "VERB")]
    out = []
    for _ in range(n):
        s = [others[i] for i in rng.integers(0, len(others), size=4)]
        s.insert(int(rng.integers(0, 5)), (str(rng.choice(["zork", "Zork", "ZORK"])), "X"))
        out.append(s)
    return out


@pytest.fixture(scope="module")
def zork_model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zork")
    data = tmp / "zork.conllu"
    data.write_text(conllu(zork_sentences()), encoding="utf-8")
    model = tmp / "pos.npz"
    assert main(["train", "pos", "--train", str(data), "--model", str(model), "--quiet",
                 "--option", "window=0", "--option", "affix_length=1", "--option", "C=1"]) == 0
    return model


def test_the_strongest_feature_of_a_label_is_the_word_it_depends_on(zork_model):
    task, learner, _ = load_trained(zork_model)
    r = inspect_model(task, learner, top=5)
    assert r["kind"] == "labels" and r["hashed_features"] is False
    assert r["labels"] == ["NOUN", "VERB", "X"]
    best = r["features"]["X"]["positive"]
    assert best[0]["feature"] == "l[0]=zork"  # the lowercased word: every X token has it
    assert best[0]["weight"] > best[1]["weight"] > 0
    assert [e["weight"] for e in best] == sorted((e["weight"] for e in best), reverse=True)
    worst = r["features"]["X"]["negative"]
    assert all(e["weight"] < 0 for e in worst)
    # the transition matrix is the model's own first-order weights
    _, trans, start, end = task.structure_.split_weights(learner.coef_)
    assert r["transitions"]["weights"] == trans.tolist()
    assert r["transitions"]["start"] == start.tolist() and r["transitions"]["end"] == end.tolist()
    assert r["bias"] is None
    # the listed weights are the weights of the named features
    emission = task.structure_.split_weights(learner.coef_)[0]
    x = task.labels_.index("X")
    assert best[0]["weight"] == emission[task.attr_index_.lookup("l[0]=zork"), x]


def test_cli_inspect_table_and_json(zork_model, capsys):
    code, out, _ = run(capsys, "inspect", "--model", zork_model, "--top", "2")
    assert code == 0
    lines = out.splitlines()
    assert "feature names from the model's feature index" in lines[0]
    x = lines.index("X")
    assert lines[x + 1].split()[1] == "l[0]=zork"
    assert "label transitions (row: previous label, column: next label):" in lines
    assert any(line.startswith("start ") for line in lines)
    code, out, _ = run(capsys, "inspect", "--model", zork_model, "--format", "json", "--top", "1")
    r = json.loads(out)
    assert code == 0 and len(r["features"]["X"]["positive"]) == 1
    code, _, err = run(capsys, "inspect", "--model", zork_model, "--top", "0")
    assert code == 2 and "--top must be an integer in [1, 10000], got 0" in err


def test_hashed_feature_names_are_shown_by_bucket(tmp_path):
    task = PosTask(feature_index="hashing", hash_bits=8, window=0, affix_length=1)
    path = tmp_path / "z.conllu"
    path.write_text(conllu(zork_sentences(10)), encoding="utf-8")
    dataset = task.read(path)
    task.fit(dataset)
    learner = StructuredSVM(structure=task, C=1.0).fit(task.featurize(dataset),
                                                  task.encode_targets(dataset.targets))
    r = inspect_model(task, learner, top=3)
    assert r["hashed_features"] is True
    name = r["features"]["X"]["positive"][0]["feature"]
    assert name.startswith("#") and int(name[1:]) == task.attr_index_.lookup("l[0]=zork")


def test_translit_names_bias_and_largest_weights():
    task = TransliterationTask(bigrams=False).fit(Dataset([("ab", "xy")], [1]))
    w = np.zeros(task.n_features)
    blocks = task.structure_.feature_blocks()
    off, (A, B) = blocks["unigram"]
    w[0] = -0.5  # bias
    w[off + 1 * B + 2] = 3.0  # U[a -> y]
    w[off + 2 * B + 0] = -1.0  # U[b -> unknown/boundary]
    learner = LCLR(structure=task)
    learner.coef_ = w
    r = inspect_model(task, learner, top=5)
    assert r["kind"] == "weights" and r["bias"] == -0.5
    assert r["largest"] == [{"feature": "U[a\u2192y]", "weight": 3.0},
                            {"feature": "U[b\u2192\u2205]", "weight": -1.0},
                            {"feature": "bias", "weight": -0.5}]


def test_graph_pair_names_come_from_the_feature_index():
    from test_plotting import A, B

    from latentstruct.tasks.pairs import ParaphraseTask

    task = ParaphraseTask(use_wordnet=False).fit(Dataset([(A, B)], [1]))
    w = np.random.default_rng(0).normal(size=task.n_features)
    learner = LCLR(structure=task)
    learner.coef_ = w
    r = inspect_model(task, learner, top=4)
    assert r["bias"] == w[task.feature_index_.lookup("bias")]
    ids = np.argsort(-np.abs(w))[:4]
    assert [e["feature"] for e in r["largest"]] == [task.feature_index_.names[i] for i in ids]


def test_jlis_weights_and_binary_bias(zork_model):
    task, ssvm, _ = load_trained(zork_model)
    jlis = JLIS(structure=task)
    jlis.coef_ = np.append(ssvm.coef_, 0.75)
    w, extra = model_weights(task, jlis)
    assert np.array_equal(w, ssvm.coef_) and extra == {"binary_bias": 0.75}
    assert inspect_model(task, jlis)["binary_bias"] == 0.75
    bad = StructuredSVM(structure=task)
    bad.coef_ = np.zeros(3)
    with pytest.raises(ConfigError, match="3 weights"):
        inspect_model(task, bad)


DOCS = [("a", "sport", "goal team ride blue"), ("b", "sport", "goal red walk"),
        ("c", "sport", "goal blue team"), ("d", "other", "team red ride"),
        ("e", "other", "walk blue red"), ("f", "other", "ride team walk")]


@pytest.mark.parametrize("learner", ["ssvm", "distro"])
def test_doccls_strongest_feature_and_distro_effective_weights(tmp_path, capsys, learner):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": i, "label": lab, "text": t}) + "\n"
                            for i, lab, t in DOCS), encoding="utf-8")
    model = tmp_path / "m.npz"
    opts = ["--option", "n_components=2", "--option", "lambda1=0.01"] if learner == "distro" \
        else ["--option", "C=1"]
    assert run(capsys, "train", "doccls", "--train", docs, "--model", model, "--learner",
               learner, "--quiet", *opts)[0] == 0
    code, out, _ = run(capsys, "inspect", "--model", model, "--format", "json")
    r = json.loads(out)
    assert code == 0 and r["learner"] == learner and "transitions" not in r
    assert r["features"]["sport"]["positive"][0]["feature"] == "goal"
    # the weights shown score documents as the model does
    task, model_obj, _ = load_trained(model)
    E = task.structure_object().split_weights(model_weights(task, model_obj)[0])
    dataset = task.read(docs, split="test")
    predicted = task.decode_targets(model_obj.predict(task.featurize(dataset)))
    for (_, _, text), label in zip(DOCS, predicted):
        rows = task.vocab_.lookup_many(sorted(set(text.split())))
        assert task.labels_[int(np.argmax(E[rows].sum(axis=0)))] == label


def test_inspection_stays_below_the_command_line():
    path = Path(latentstruct.__file__).parent / "pipelines" / "inspection.py"
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            imported.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert not [m for m in imported if m.lstrip(".").split(".")[0] in ("cli", "plotting",
                                                                     "plotting_graph")]
    assert not [m for m in imported if m.startswith("latentstruct.cli") or m == "matplotlib"]


def test_doccls_fitted_on_a_matrix_names_its_columns(capsys, tmp_path):
    """A DocumentClassifier fitted on a numeric matrix is inspected by column (``column j``),
    not by hash bucket: column 2 decides the class, and is the strongest feature of each."""
    import scipy.sparse as sp

    from latentstruct import DocumentClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 0.2, size=(40, 4))
    y = np.array(["a", "b"] * 20)
    X[y == "a", 2] += 1.0  # column 2 marks class a; nothing marks b
    est = DocumentClassifier(C=1).fit(sp.csr_matrix(X), y)
    report = inspect_model(est.task_, est.learner_, top=4)
    assert report["hashed_features"] is False
    names = {e["feature"] for lab in report["features"].values()
             for side in ("positive", "negative") for e in lab[side]}
    assert names <= {f"column {j}" for j in range(4)} and "column 2" in names
    assert report["features"]["a"]["positive"][0]["feature"] == "column 2"
    assert report["features"]["b"]["negative"][0]["feature"] == "column 2"

    model = tmp_path / "m.npz"
    est.save(model)
    code, out, _ = run(capsys, "inspect", "--model", model)
    assert code == 0 and "column 2" in out and "hash bucket" not in out and "#2" not in out
