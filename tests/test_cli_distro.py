"""DISTRO from the command line: training, evaluation, the label picture, bad options."""

import json

import pytest

from latentstruct.cli import main

DOCS = [
    ("a", "sci.space", "rocket orbit launch moon"), ("b", "sci.space", "orbit moon shuttle"),
    ("c", "sci.space", "launch rocket nasa"), ("d", "rec.autos", "car engine wheel"),
    ("e", "rec.autos", "engine car dealer"), ("f", "rec.autos", "wheel car brake"),
    ("g", "rec.motorcycles", "bike engine helmet"), ("h", "rec.motorcycles", "helmet bike ride"),
    ("i", "rec.motorcycles", "ride bike wheel"),
]


@pytest.fixture
def docs(tmp_path):
    p = tmp_path / "docs.jsonl"
    p.write_text("".join(json.dumps({"id": i, "label": lab, "text": t}) + "\n" for i, lab, t in DOCS),
                 encoding="utf-8")
    return p


def test_train_evaluate_explain(tmp_path, docs, capsys):
    model = tmp_path / "m.npz"
    assert main(["train", "doccls", "--train", str(docs), "--model", str(model), "--learner",
                 "distro", "--option", "n_components=2", "--option", "lambda2=0.004",
                 "--option", "lambda1=0.01", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(docs)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accuracy"] == 1.0 and out["n"] == 9 and isinstance(out["n"], int)
    png = tmp_path / "labels.png"
    assert main(["explain", "--model", str(model), "--out", str(png)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert png.stat().st_size > 1000
    assert info["n_components"] == 2 and info["n_labels"] == 3 and 1 <= info["rank"] <= 2
    assert sorted(info["order"]) == ["rec.autos", "rec.motorcycles", "sci.space"]
    assert len(info["closest_labels"]) == 3
    # the picture path is checked: a directory or a missing folder is one line and exit 2
    assert main(["explain", "--model", str(model), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["explain", "--model", str(model), "--out", str(tmp_path / "no" / "x.png")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("option,match", [
    ("n_components=0", "n_components"),
    ("n_components=-3", "n_components"),
    ("lambda2=-0.1", "lambda2"),
    ("lambda1=-1", "lambda1"),
    ("threshold=fast", "threshold"),
    ("max_weights=10", "max_weights"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, docs, capsys, option, match):
    code = main(["train", "doccls", "--train", str(docs), "--model", str(tmp_path / "m.npz"),
                 "--learner", "distro", "--option", option, "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and match in err
    assert not (tmp_path / "m.npz").exists()


def test_sgd_ssvm_from_the_cli(tmp_path, docs, capsys):
    model = tmp_path / "s.npz"
    assert main(["train", "doccls", "--train", str(docs), "--model", str(model), "--learner",
                 "sgd-ssvm", "--option", "lambda1=0.01", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), "--test", str(docs)]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0
    # explain needs a pair for non-DISTRO models
    assert main(["explain", "--model", str(model), "--out", str(tmp_path / "x.png")]) == 2
