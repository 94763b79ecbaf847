"""``latentstruct train/evaluate/predict doccls`` end to end, and its bad-input contract (exit 2,
one line naming file:line, nothing written)."""

import json

import pytest

from latentstruct.cli import main


def totals(metrics: dict) -> dict:
    """The overall metrics of `evaluate`, without its counts and per-type breakdown."""
    return {k: v for k, v in metrics.items() if k not in ("counts", "per_type")}


TOPICS = {
    "sport": ["goal", "match", "team", "score", "league"],
    "space": ["orbit", "rocket", "planet", "launch", "moon"],
    "food": ["bread", "cheese", "recipe", "oven", "sauce"],
}


def tiny_rows():
    rows = []
    for k, (label, words) in enumerate(TOPICS.items()):
        for j in range(4):
            text = f"Subject: post {j}\n\n" + " ".join(words[j:] + words[:j][:2])
            rows.append({"id": str(100 * k + j), "label": label, "text": text})
    return rows


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def tiny(tmp_path):
    return write_rows(tmp_path / "tiny.jsonl", tiny_rows())


def run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's --help
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def model(tmp_path, tiny, capsys):
    path = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", "doccls", "--train", tiny, "--model", path, "--quiet",
                         "--option", "C=1")
    assert code == 0 and path.exists() and err == ""
    return path


def test_train_evaluate_predict(tmp_path, tiny, capsys):
    path = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "doccls", "--train", tiny, "--model", path)  # ssvm default
    assert code == 0 and path.exists()
    assert "trained ssvm on 12 doccls examples" in err
    code, out, _ = run(capsys, "evaluate", "--model", path, "--test", tiny)
    assert code == 0
    assert totals(json.loads(out)) == {"accuracy": 1.0, "n": 12.0}
    pred = tmp_path / "pred.jsonl"
    code, out, _ = run(capsys, "predict", "--model", path, "--input", tiny, "--output", pred)
    assert code == 0 and out == ""
    rows = [json.loads(s) for s in pred.read_text(encoding="utf-8").splitlines()]
    assert [r["predicted"] for r in rows] == [r["label"] for r in tiny_rows()]
    assert [{k: v for k, v in r.items() if k != "predicted"} for r in rows] == tiny_rows()
    code, out, _ = run(capsys, "info", "--model", path)
    assert code == 0 and json.loads(out)["task"] == "doccls"


def test_predict_reads_unlabelled_documents(tmp_path, model, capsys):
    data = write_rows(tmp_path / "new.jsonl", [{"text": "rocket launch to the moon"},
                                               {"id": "x", "text": "cheese sauce in the oven"}])
    pred = tmp_path / "pred.jsonl"
    code, _, err = run(capsys, "predict", "--model", model, "--input", data, "--output", pred)
    assert code == 0, err
    rows = [json.loads(s) for s in pred.read_text(encoding="utf-8").splitlines()]
    assert rows == [{"text": "rocket launch to the moon", "predicted": "space"},
                    {"id": "x", "text": "cheese sauce in the oven", "predicted": "food"}]


def test_split_option_at_training_and_evaluation(tmp_path, tiny, capsys):
    path = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "doccls", "--train", tiny, "--model", path,
                       "--option", "split=train", "--option", "C=1")
    assert code == 0 and "on 9 doccls examples" in err  # 4 - round(0.8) = 3 per label
    code, out, _ = run(capsys, "evaluate", "--model", path, "--test", tiny, "--option", "split=eval")
    assert code == 0 and json.loads(out)["n"] == 3.0 and 0.0 <= json.loads(out)["accuracy"] <= 1.0
    code, out, err = run(capsys, "evaluate", "--model", path, "--test", tiny,
                         "--option", "features=tfidf")
    assert code == 2 and out == "" and "'features' cannot change at evaluate time" in err


@pytest.mark.parametrize("bad_row, needle", [
    ({"id": "9", "text": "no label here"}, "missing 'label'"),
    ({"id": "9", "label": "food"}, "missing 'text'"),
    ({"id": "9", "label": "food", "text": ""}, "'text' is empty"),
])
def test_a_line_without_label_or_text_fails_training_with_its_line(tmp_path, capsys, bad_row, needle):
    rows = tiny_rows()
    rows.insert(4, bad_row)
    data = write_rows(tmp_path / "bad.jsonl", rows)
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", "doccls", "--train", data, "--model", model, "--quiet")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"latentstruct: error: {data}:5: ") and needle in lines[0]
    assert not model.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_evaluate_needs_labels_but_names_the_line(tmp_path, model, capsys):
    rows = tiny_rows()
    rows.insert(2, {"text": "unlabelled"})
    data = write_rows(tmp_path / "test.jsonl", rows)
    code, out, err = run(capsys, "evaluate", "--model", model, "--test", data)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"latentstruct: error: {data}:3: this document has no label; evaluate needs a label on "
        f"every line (latentstruct predict reads unlabelled documents)"]


def test_invalid_json_names_the_line(tmp_path, capsys):
    data = tmp_path / "bad.jsonl"
    data.write_text(json.dumps(tiny_rows()[0]) + "\n{not json}\n", encoding="utf-8")
    code, _, err = run(capsys, "train", "doccls", "--train", data, "--model", tmp_path / "m.npz")
    assert code == 2 and f"{data}:2: not valid JSON" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("option, needle", [
    ("split=bogus", "The 'split' parameter of the 'doccls' task must be a str among "
                    "{'all', 'train', 'eval'}. Got 'bogus' instead."),
    ("features=bogus", "The 'features' parameter of the 'doccls' task must be a str among "
                       "{'tokens', 'tfidf'}. Got 'bogus' instead."),
    ("min_count=0", "The 'min_count' parameter of the 'doccls' task must be an int in the "
                    "range [1, inf). Got 0 instead."),
    ("eval_fraction=2", "The 'eval_fraction' parameter of the 'doccls' task must be a float in "
                        "the range (0.0, 1.0). Got 2 instead."),
])
def test_bad_options_exit_2(tmp_path, tiny, capsys, option, needle):
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", "doccls", "--train", tiny, "--model", model,
                         "--option", option)
    assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1
    assert not model.exists()


def test_bad_split_at_evaluation_exits_2(model, tiny, capsys):
    code, out, err = run(capsys, "evaluate", "--model", model, "--test", tiny,
                         "--option", "split=bogus")
    assert code == 2 and out == "" and "'split' parameter of the 'doccls' task must be" in err


def test_help_lists_the_task_options(capsys):
    code, out, _ = run(capsys, "train", "doccls", "--help")
    assert code == 0
    assert "options of task 'doccls'" in out
    assert "features=tokens" in out and "Input features of a document" in out
    assert "split=all" in out and "eval_fraction=0.2" in out and "strip_headers=False" in out
    assert "evaluate/predict accept only:" in out and "split" in out.split("evaluate/predict")[-1]


def test_predict_unlabelled_with_a_split_model_needs_split_all(tmp_path, tiny, capsys):
    model = tmp_path / "m.npz"
    assert run(capsys, "train", "doccls", "--train", tiny, "--model", model, "--quiet",
               "--option", "split=train")[0] == 0
    data = write_rows(tmp_path / "new.jsonl", [{"text": "rocket to the moon"}])
    pred = tmp_path / "pred.jsonl"
    code, _, err = run(capsys, "predict", "--model", model, "--input", data, "--output", pred)
    assert code == 2 and f"{data}:1: this document has no label, and split='train'" in err
    assert "--option split=all" in err and not pred.exists()
    code, _, _ = run(capsys, "predict", "--model", model, "--input", data, "--output", pred,
                     "--option", "split=all")
    assert code == 0 and json.loads(pred.read_text(encoding="utf-8"))["predicted"] == "space"
