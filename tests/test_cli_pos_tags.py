"""``latentstruct train/evaluate/predict pos --option tag_column=...`` end to end."""

import json

import pytest

from latentstruct.cli import main
from latentstruct.data.readers import read_conllu


def totals(metrics: dict) -> dict:
    """The overall metrics of `evaluate`, without its counts and per-type breakdown."""
    return {k: v for k, v in metrics.items() if k not in ("counts", "per_type")}


# UPOS and XPOS disagree in granularity (NNS vs NN, VBP vs VBZ), so a model that read the
# wrong column would be caught.
XPOS_TRAIN = (
    "# text = Dogs bark\n"
    "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_\n"
    "2\tbark\tbark\tVERB\tVBP\tMood=Ind\t0\troot\t_\t_\n\n"
    "# text = The cat sleeps\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tcat\tcat\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_\n"
    "3\tsleeps\tsleep\tVERB\tVBZ\tMood=Ind\t0\troot\t_\t_\n\n"
)

BASQUE_LIKE = (
    "1\tEBk\tEB\tPROPN\t_\tCase=Erg|Number=Sing\t2\tnsubj\t_\t_\n"
    "2\tbaieztatu\tbaieztatu\tVERB\t_\tVerbForm=Part\t0\troot\t_\t_\n"
    "3\tzuen\t*edun\tAUX\t_\tMood=Ind\t2\taux\t_\t_\n\n"
    "1\tMasa\tmasa\tNOUN\t_\tCase=Abs|Number=Sing\t2\tobj\t_\t_\n"
    "2\tjarri\tjarri\tVERB\t_\tVerbForm=Part\t0\troot\t_\t_\n\n"
)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def xpos_model(tmp_path, capsys):
    data = tmp_path / "train.conllu"
    data.write_text(XPOS_TRAIN, encoding="utf-8")
    model = tmp_path / "xpos.npz"
    code, _, err = run(capsys, "train", "pos", "--train", data, "--model", model,
                       "--option", "tag_column=xpos", "--quiet")
    assert code == 0, err
    return data, model


def test_xpos_model_evaluates_and_predicts_xpos(xpos_model, tmp_path, capsys):
    data, model = xpos_model
    code, out, _ = run(capsys, "info", "--model", model)
    assert code == 0 and json.loads(out)["task_params"]["tag_column"] == "xpos"
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", data)
    assert code == 0 and totals(json.loads(out)) == {"accuracy": 1.0}
    # the gold tags come from XPOS (the saved tag_column), not from UPOS: scrambling UPOS
    # does not change the score, scrambling XPOS does
    scrambled_upos = tmp_path / "upos_scrambled.conllu"
    scrambled_upos.write_text(XPOS_TRAIN.replace("\tNOUN\t", "\tX\t").replace("\tVERB\t", "\tX\t"),
                              encoding="utf-8")
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", scrambled_upos)
    assert code == 0 and totals(json.loads(out)) == {"accuracy": 1.0}
    scrambled_xpos = tmp_path / "xpos_scrambled.conllu"
    scrambled_xpos.write_text(XPOS_TRAIN.replace("\tNN\t", "\tNNS\t"), encoding="utf-8")
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", scrambled_xpos)
    assert code == 0 and totals(json.loads(out)) == {"accuracy": 4 / 5}
    # predict writes XPOS: from the scrambled-XPOS file it restores the original XPOS and
    # keeps UPOS and FEATS as they are
    pred = tmp_path / "pred.conllu"
    code, _, err = run(capsys, "predict", "--model", model, "--input", scrambled_xpos,
                       "--output", pred)
    assert code == 0, err
    assert pred.read_text(encoding="utf-8") == XPOS_TRAIN


def test_tag_column_cannot_change_at_evaluation(xpos_model, capsys):
    data, model = xpos_model
    code, out, err = run(capsys, "evaluate", "--model", model, "--test", data,
                         "--option", "tag_column=upos")
    assert code == 2 and out == ""
    assert "option 'tag_column' cannot change at evaluate time" in err
    assert "tag_column='xpos'" in err and err.count("\n") == 1


def test_unknown_tag_column_exits_2_before_reading_data(tmp_path, capsys):
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "pos", "--train", tmp_path / "missing.conllu",
                       "--model", model, "--option", "tag_column=fine")
    assert code == 2 and not model.exists()
    assert err == ("latentstruct: error: The 'tag_column' parameter of the 'pos' task must be "
                   "a str among {'upos', 'xpos', 'upos+case'}. Got 'fine' instead: upos: "
                   "universal tags; xpos: the treebank's own tags; upos+case: UPOS joined with "
                   "the Case feature\n")


def test_xpos_on_a_treebank_without_xpos_exits_2(tmp_path, capsys):
    data = tmp_path / "eu.conllu"
    data.write_text(BASQUE_LIKE, encoding="utf-8")
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "pos", "--train", data, "--model", model,
                       "--option", "tag_column=xpos")
    assert code == 2 and not model.exists()
    assert err.startswith(f"latentstruct: error: {data}: XPOS (column 5) is '_' for every word")
    assert "tag_column=upos" in err and "tag_column=upos+case" in err
    assert err.count("\n") == 1


def test_xpos_missing_on_some_words_exits_2_with_file_and_line(tmp_path, capsys):
    data = tmp_path / "mixed.conllu"
    data.write_text(XPOS_TRAIN.replace("\tNN\t", "\t_\t"), encoding="utf-8")
    code, _, err = run(capsys, "train", "pos", "--train", data, "--model", tmp_path / "m.npz",
                       "--option", "tag_column=xpos")
    assert code == 2
    assert err.startswith(f"latentstruct: error: {data}:7: XPOS (column 5) of word 2 ('cat') "
                          "is '_'")


def test_xpos_model_on_a_file_without_xpos(xpos_model, tmp_path, capsys):
    _, model = xpos_model
    data = tmp_path / "eu.conllu"
    data.write_text(BASQUE_LIKE, encoding="utf-8")
    code, out, err = run(capsys, "evaluate", "--model", model, "--test", data)
    assert code == 2 and out == ""
    assert f"{data}: XPOS (column 5) is '_' for every word, so there are no gold tags" in err
    # unlabelled input can still be tagged
    pred = tmp_path / "pred.conllu"
    assert run(capsys, "predict", "--model", model, "--input", data, "--output", pred)[0] == 0
    assert all(t != "_" for s in read_conllu(pred) for t in s.xpos)


def test_upos_case_train_evaluate_predict(tmp_path, capsys):
    data = tmp_path / "eu.conllu"
    data.write_text(BASQUE_LIKE, encoding="utf-8")
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "pos", "--train", data, "--model", model,
                       "--option", "tag_column=upos+case", "--quiet")
    assert code == 0, err
    code, out, _ = run(capsys, "evaluate", "--model", model, "--test", data)
    assert code == 0 and totals(json.loads(out)) == {"accuracy": 1.0}
    pred = tmp_path / "pred.conllu"
    assert run(capsys, "predict", "--model", model, "--input", data, "--output", pred)[0] == 0
    assert pred.read_text(encoding="utf-8") == BASQUE_LIKE


def test_train_help_lists_tag_column(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "pos", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "tag_column=upos" in out and "The tags to learn and predict" in out
