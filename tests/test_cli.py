"""End-to-end CLI: train / evaluate / predict, and the bad-input contract (exit 2, no output)."""

import json

import pytest

from latentstruct.cli import main, parse_option


def totals(metrics: dict) -> dict:
    """The overall metrics of `evaluate`, without its counts and per-type breakdown."""
    return {k: v for k, v in metrics.items() if k not in ("counts", "per_type")}


CONLLU = (
    "# text = Dogs bark\n"
    "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
    "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n"
    "# text = Cats sleep\n"
    "1\tCats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
    "2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_\n\n"
)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_option_types():
    assert parse_option("C=0.5") == ("C", 0.5)
    assert parse_option("max_iter=3") == ("max_iter", 3)
    assert parse_option("shrinking=false") == ("shrinking", False)
    assert parse_option("feature_index=hashing") == ("feature_index", "hashing")


def test_train_evaluate_predict_round_trip(tmp_path, tiny_chunk_file, chunk_model, capsys):
    code, out, _ = run(capsys, "evaluate", "--model", str(chunk_model), "--test", str(tiny_chunk_file))
    assert code == 0
    metrics = json.loads(out)
    assert set(metrics) >= {"f1", "accuracy"}
    assert metrics["f1"] == 1.0 and metrics["accuracy"] == 1.0  # C=1 fits 3 sentences exactly
    pred = tmp_path / "pred.txt"
    code, _, _ = run(capsys, "predict", "--model", str(chunk_model), "--input", str(tiny_chunk_file),
                     "--output", str(pred))
    assert code == 0
    assert pred.read_text().rstrip("\n") == tiny_chunk_file.read_text().rstrip("\n")


def test_pos_train_and_predict_conllu(tmp_path, capsys):
    data = tmp_path / "a.conllu"
    data.write_text(CONLLU, encoding="utf-8")
    model = tmp_path / "pos.npz"
    assert run(capsys, "train", "pos", "--train", str(data), "--model", str(model), "--quiet")[0] == 0
    code, out, _ = run(capsys, "evaluate", "--model", str(model), "--test", str(data))
    assert code == 0 and totals(json.loads(out)) == {"accuracy": 1.0}
    out_file = tmp_path / "out.conllu"
    assert run(capsys, "predict", "--model", str(model), "--input", str(data), "--output", str(out_file))[0] == 0
    assert out_file.read_text() == CONLLU


@pytest.mark.parametrize(
    "content, needle",
    [
        ("He PRP B-NP\nreckons VBZ\n", ":2:"),  # wrong column count, with its line
        ("", "no sentences"),  # empty file
        ("He PRP X-NP\n", ":1:"),  # malformed chunk tag
        (b"He PRP B-NP\n\xff\xfe VBZ B-VP\n", ":2:"),  # not UTF-8
    ],
)
def test_malformed_training_file(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "chunk", "--train", str(bad), "--model", str(model), "--quiet")
    assert code == 2
    assert needle in err and err.count("\n") == 1  # one line
    assert not model.exists()
    assert list(tmp_path.iterdir()) == [bad]  # nothing half-written


def test_malformed_conllu(tmp_path, capsys):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tDogs\tdog\tNOUN\n", encoding="utf-8")
    code, _, err = run(capsys, "train", "pos", "--train", str(bad), "--model", str(tmp_path / "m.npz"))
    assert code == 2 and f"{bad}:1:" in err


def test_model_of_another_task_is_rejected(tmp_path, chunk_model, capsys):
    data = tmp_path / "a.conllu"
    data.write_text(CONLLU, encoding="utf-8")
    # a chunk model cannot read CoNLL-U: the chunk reader names the first bad line
    code, _, err = run(capsys, "evaluate", "--model", str(chunk_model), "--test", str(data))
    assert code == 2 and "a.conllu:1:" in err


def test_truncated_model(tmp_path, tiny_chunk_file, chunk_model, capsys):
    raw = chunk_model.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(raw[: len(raw) // 2])
    code, _, err = run(capsys, "evaluate", "--model", str(cut), "--test", str(tiny_chunk_file))
    assert code == 2 and "truncated" in err


def test_model_task_mismatch_via_library(tmp_path, chunk_model):
    from latentstruct.exceptions import ModelFormatError
    from latentstruct.learners.persistence import load_trained

    with pytest.raises(ModelFormatError, match="'chunk' model, expected 'pos'"):
        load_trained(chunk_model, expected_task="pos")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["train", "nosuchtask"], "unknown task 'nosuchtask'"),
        (["train", "chunk", "--option", "bogus=1"], "unknown option 'bogus'"),
        (["train", "chunk", "--option", "C=-1"], "'C' parameter"),
        (["train", "chunk", "--learner", "nope"], "unknown learner 'nope'"),
        (["train", "chunk", "--option", "noequals"], "KEY=VALUE"),
    ],
)
def test_usage_errors_exit_2(tmp_path, tiny_chunk_file, capsys, args, needle):
    model = tmp_path / "m.npz"
    argv = args[:2] + ["--train", str(tiny_chunk_file), "--model", str(model), "--quiet"] + args[2:]
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err
    assert not model.exists()


def test_argparse_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate"])
    assert exc.value.code == 2


def test_existing_model_survives_failed_training(tmp_path, tiny_chunk_file, chunk_model, capsys):
    before = chunk_model.read_bytes()
    code, _, _ = run(capsys, "train", "chunk", "--train", str(tiny_chunk_file), "--model",
                     str(chunk_model), "--option", "C=-5", "--quiet")
    assert code == 2 and chunk_model.read_bytes() == before


def test_info_prints_metadata(chunk_model, capsys):
    code, out, _ = run(capsys, "info", "--model", str(chunk_model))
    meta = json.loads(out)
    assert code == 0 and meta["task"] == "chunk" and meta["learner"] == "ssvm"
    assert meta["learner_params"]["C"] == 1


def test_jlis_from_the_cli(tmp_path, capsys):
    rows = []
    for k, (a, b) in enumerate([("Dogs", "bark"), ("Cats", "sleep"), ("Birds", "sing"), ("Fish", "swim")]):
        rows.append(f"# text = {a} {b}\n1\t{a}\t_\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
                    f"2\t{b}\t_\tVERB\tVBP\t_\t0\troot\t_\t_\n\n")
    data = tmp_path / "a.conllu"
    data.write_text("".join(rows), encoding="utf-8")
    model = tmp_path / "jlis.npz"
    code, _, err = run(capsys, "train", "pos", "--train", str(data), "--model", str(model),
                       "--learner", "jlis", "--option", "n_structured_tokens=2",
                       "--option", "n_binary=2", "--option", "max_iter=2", "--quiet")
    assert code == 0, err
    meta_code, out, _ = run(capsys, "info", "--model", str(model))
    assert json.loads(out)["learner"] == "jlis"
    code, out, _ = run(capsys, "evaluate", "--model", str(model), "--test", str(data))
    assert code == 0 and 0.0 <= json.loads(out)["accuracy"] <= 1.0
    # B with positives only is refused with a clear message
    code, _, err = run(capsys, "train", "pos", "--train", str(data), "--model", str(model),
                       "--learner", "jlis", "--option", "n_structured_tokens=2",
                       "--option", "n_binary=2", "--option", "negatives_per_positive=0", "--quiet")
    assert code == 2 and "all positive" in err


def test_short_version_flag(capsys):
    from latentstruct import __version__

    with pytest.raises(SystemExit) as exc:
        main(["-V"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"latentstruct {__version__}"


def test_help_read_by_a_reader_that_goes_away_ends_quietly():
    # `latentstruct train citations --help | head -1`: no BrokenPipeError traceback.  The
    # reader is gone before anything is written (its end of the pipe closed), so the first
    # write meets EPIPE whatever the timing.
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "latentstruct", "train", "citations",
                               "--help"], stdout=write_end, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err
