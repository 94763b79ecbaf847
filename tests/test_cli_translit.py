"""CLI for transliteration discovery: train/evaluate/explain on CLDR data, bad TSV input, demo."""

import json
import subprocess
import sys

import pytest

from latentstruct.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def translit_model(tmp_path_factory):
    model = tmp_path_factory.mktemp("m") / "translit.npz"
    code = main(["train", "translit", "--model", str(model), "--option", "n_train=40",
                 "--option", "C=0.1", "--quiet"])
    assert code == 0
    return model


@pytest.mark.slow
def test_train_evaluate_explain(translit_model, tmp_path, capsys):
    code, out, _ = run(capsys, "evaluate", "--model", str(translit_model), "--option", "n_test=50")
    assert code == 0
    metrics = json.loads(out)
    assert set(metrics) == {"mrr", "accuracy"}
    assert 0.0 <= metrics["accuracy"] <= metrics["mrr"] <= 1.0
    assert metrics["mrr"] > 0.3  # far above chance (about 0.09 for 50 candidates)
    pic = tmp_path / "align.png"
    code, out, _ = run(capsys, "explain", "--model", str(translit_model), "--source", "italy",
                       "--target", "איטליה", "--out", str(pic))
    assert code == 0 and pic.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    info = json.loads(out)
    assert len(info["alignment"]) == 5 and isinstance(info["score"], float)


def test_explain_refuses_an_explainable_task_without_encode_pair(translit_model, tmp_path,
                                                                 capsys, monkeypatch):
    """explain's structure member is the structure's; encoding the raw pair is the task's,
    and a task without it is one clear line, not an AttributeError."""
    from latentstruct.tasks.translit import TransliterationTask

    monkeypatch.setattr(TransliterationTask, "encode_pair", None)  # a task without one
    pic = tmp_path / "align.png"
    code, out, err = run(capsys, "explain", "--model", str(translit_model), "--source", "italy",
                         "--target", "איטליה", "--out", str(pic))
    assert code == 2 and out == "" and not pic.exists()
    assert "has no encode_pair" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"", "contains no pairs"),
        (b"italy\t\xd7\x90 \xd7\x99\t3\nrome\t\xd7\xa8\n", ":2:"),  # wrong number of columns
        (b"italy\t\xff\xfe\t3\n", ":1:"),  # not UTF-8
    ],
)
def test_bad_tsv_exits_2_and_writes_nothing(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(content)
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "translit", "--train", str(bad), "--model", str(model),
                       "--quiet")
    assert code == 2 and needle in err
    assert not model.exists() and list(tmp_path.iterdir()) == [bad]


def test_unknown_language(tmp_path, capsys):
    code, _, err = run(capsys, "train", "translit", "--model", str(tmp_path / "m.npz"),
                       "--option", "lang=xx", "--quiet")
    assert code == 2 and "unknown language code 'xx'" in err


@pytest.mark.slow
def test_demo_runs_and_lclr_wins(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "latentstruct.cli", "demo", "--quiet", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {line[:24].strip(): line.split()[-2:] for line in proc.stdout.splitlines()
            if line.startswith(("Alignment + Learning", "LCLR"))}
    two_acc, two_mrr = map(float, rows["Alignment + Learning"])
    lclr_acc, lclr_mrr = map(float, rows["LCLR"])
    assert lclr_mrr >= two_mrr + 5.0  # percentage points
    assert (tmp_path / "demo_alignment_he.png").exists()
