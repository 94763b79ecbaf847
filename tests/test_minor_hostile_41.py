"""Issue 41 part 4: five minor hostile inputs, each refused with one clear line.

1. a CoNLL-2000 file whose last line was cut mid-tag (``word POS I-N``, no final newline);
2. a model file with an extra member its metadata does not list, or an array nothing reads;
3. ``explain --source "new york"`` on a transliteration model (a word with white space);
4. ``explain --option lang=ru`` on a Hebrew model (evaluate's script check);
5. ``info`` on a model file whose ``extra.estimator`` ``latentstruct.load`` refuses.
"""

import io
import json

import numpy as np
import pytest

from conftest import rebuild_model_file
from latentstruct.cli import main
from latentstruct.exceptions import ModelFormatError
from latentstruct.io import inspect_model, load_model
from latentstruct.learners.persistence import load_trained


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("latentstruct: error: "), err
    return lines[0]


def npy_bytes(array) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


rebuild = rebuild_model_file


@pytest.fixture(scope="module")
def he_model(tmp_path_factory):
    """A Hebrew transliteration model (LCLR, the CLDR names Babel ships)."""
    model = tmp_path_factory.mktemp("he") / "he.npz"
    code = main(["train", "translit", "--model", str(model), "--option", "lang=he",
                 "--option", "n_train=40", "--option", "C=0.1", "--quiet"])
    assert code == 0
    return model


# ---------------------------------------------- 1. a CoNLL-2000 file cut inside its last tag
HEAD = "He PRP B-NP\nran VBD B-VP\n\nShe PRP B-NP\n"


def test_chunk_file_cut_inside_its_last_tag_is_refused(tmp_path, capsys):
    from latentstruct.data.readers import read_conll2000
    from latentstruct.exceptions import InputError

    cut = tmp_path / "cut.txt"
    cut.write_text(HEAD + "sat VBD I-N", encoding="utf-8")  # cut from "I-NP\n"
    with pytest.raises(InputError, match=r"cut\.txt:5: the last line ends without a newline "
                                         r"and its chunk tag 'I-N' names the chunk type 'N', "
                                         r"which no other line has: the file looks truncated"):
        read_conll2000(cut)
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "chunk", "--train", str(cut), "--model", str(model),
                       "--quiet")
    assert code == 2 and f"{cut}:5: " in one_error_line(err) and not model.exists()


@pytest.mark.parametrize("last", [
    "sat VBD B-VP",      # no final newline, but the type is on another line
    "sat VBD O",         # O names no type
    "sat VBD B-ADJP\n",  # a type seen once, in a line that ends properly
])
def test_chunk_file_whose_last_line_is_whole_still_reads(tmp_path, last):
    from latentstruct.data.readers import read_conll2000

    path = tmp_path / "ok.txt"
    path.write_text(HEAD + last, encoding="utf-8")
    sentences = read_conll2000(path)
    assert [s.tags[-1] for s in sentences] == ["B-VP", last.split()[2]]


# ------------------------------------------------------ 2. unlisted members of a model file
def test_model_member_not_listed_in_metadata_is_refused(chunk_model, tmp_path, capsys):
    bad = rebuild(chunk_model, tmp_path / "extra.npz",
                  add={"evil.npy": npy_bytes(np.zeros(3))})
    needle = "holds the member 'evil.npy', which its metadata does not list"
    for loader in (load_model, inspect_model, load_trained):
        with pytest.raises(ModelFormatError, match=needle) as info:
            loader(bad)
        assert str(bad) in str(info.value) and "re-train" in str(info.value)
    code, _, err = run(capsys, "info", "--model", str(bad))
    assert code == 2 and needle in one_error_line(err)
    # not an array at all: any member but metadata.json and the listed arrays
    text = rebuild(chunk_model, tmp_path / "text.npz", add={"README.txt": b"hello"})
    with pytest.raises(ModelFormatError, match="member 'README.txt'"):
        inspect_model(text)


def test_listed_array_nothing_reads_is_refused(chunk_model, tmp_path, capsys):
    # listed in array_names (so the container's check passes) but neither the chunk task
    # nor the ssvm learner reads it
    bad = rebuild(chunk_model, tmp_path / "unused.npz", add={"extra.npy": npy_bytes([1.0])},
                  meta=lambda m: m["array_names"].append("extra"))
    metadata, arrays = load_model(bad)  # the container itself is consistent
    assert "extra" in arrays
    with pytest.raises(ModelFormatError, match=r"holds the array 'extra', which neither its "
                                               r"task \('chunk'\) nor its learner"):
        load_trained(bad)
    code, _, err = run(capsys, "evaluate", "--model", str(bad), "--test", str(bad))
    assert code == 2 and "holds the array 'extra'" in one_error_line(err)


def test_optional_arrays_still_load(tmp_path):
    """Every array a model writes is one it reads back (here the two-stage model's
    heuristic weights; the online learners' online.w / online.u:
    tests/learners/test_partial_fit.py's test_a_saved_model_continues_exactly)."""
    model = tmp_path / "two.npz"
    assert main(["train", "translit", "--learner", "two-stage", "--model", str(model),
                 "--option", "n_train=20", "--quiet"]) == 0
    task, learner, meta = load_trained(model)
    assert "heuristic_coef_" in meta["array_names"]
    assert learner.heuristic_coef_.shape == (task.n_features,)


# ------------------------------------------------------------- 3. explain: white space
@pytest.mark.parametrize("flag, source, target", [
    ("--source", "new york", "ניויורק"),
    ("--target", "york", "ניו יורק"),
])
@pytest.mark.slow
def test_explain_refuses_a_word_with_white_space(he_model, tmp_path, capsys, flag, source,
                                                 target):
    out = tmp_path / "x.png"
    code, _, err = run(capsys, "explain", "--model", str(he_model), "--source", source,
                       "--target", target, "--out", str(out))
    line = one_error_line(err)
    assert code == 2 and f"{flag}: the " in line and "holds white space" in line
    assert "Split a multi-word name into one pair per word" in line
    assert not out.exists()


# ------------------------------------------------------ 4. explain: lang against the model
def test_explain_refuses_lang_in_another_script(he_model, tmp_path, capsys):
    out = tmp_path / "x.png"
    code, _, err = run(capsys, "explain", "--model", str(he_model), "--option", "lang=ru",
                       "--source", "paris", "--target", "פריז", "--out", str(out))
    line = one_error_line(err)
    assert code == 2 and "trained on Hebrew targets" in line and "is Cyrillic" in line
    assert "--option lang=he" in line and "--test" not in line
    assert not out.exists()
    # evaluate refuses the same mismatch with the same check
    code, _, err = run(capsys, "evaluate", "--model", str(he_model), "--option", "lang=ru",
                       "--option", "n_test=20")
    assert code == 2 and "trained on Hebrew targets" in one_error_line(err)
    # the model's own language explains
    code, stdout, _ = run(capsys, "explain", "--model", str(he_model), "--option", "lang=he",
                          "--source", "paris", "--target", "פריז", "--out", str(out))
    assert code == 0 and json.loads(stdout)["picture"] == str(out)


# ------------------------------------------------ 5. info: an estimator name load refuses
def test_info_refuses_an_estimator_name_load_refuses(he_model, tmp_path, capsys):
    from latentstruct import load

    def evil(m):
        m["extra"]["estimator"] = "os.system"

    bad = rebuild(he_model, tmp_path / "evil.npz", meta=evil)
    needle = "names the estimator 'os.system', which this library does not have"
    with pytest.raises(ModelFormatError, match=needle):
        load(bad)
    code, out, err = run(capsys, "info", "--model", str(bad))
    assert code == 2 and out == "" and needle in one_error_line(err)
    # an estimator that does not take the task is refused by both as well
    tagger = rebuild(he_model, tmp_path / "tagger.npz",
                     meta=lambda m: m["extra"].update(estimator="Tagger"))
    with pytest.raises(ModelFormatError, match="estimator 'Tagger' for task 'translit'"):
        load(tagger)
    code, _, err = run(capsys, "info", "--model", str(tagger))
    assert code == 2 and "estimator 'Tagger' for task 'translit'" in one_error_line(err)
    # a good file still prints
    code, out, _ = run(capsys, "info", "--model", str(he_model))
    assert code == 0 and json.loads(out)["task"] == "translit"
