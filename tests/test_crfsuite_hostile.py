"""Issue 51 for the CRFsuite layer: nothing a file or a label can trick.

* A ``sequence`` model on the command line reads CRFsuite's data format for real: a CoNLL
  file (space-separated ``word POS chunk``) is refused at its first line (exit 2), never
  tagged from transition weights alone; so are the other lines the format does not have.
* A CRFsuite model file (python-crfsuite, sklearn-crfsuite) is described by ``info`` and
  used by ``evaluate`` and ``predict``, as ``latentstruct.load`` reads it.
* ``CRF.fit`` checks ``X_dev``/``y_dev`` exactly as ``X``/``y``, before any training.
* The minor ones: non-integral integer parameters, a ``model_filename`` of another format,
  ``--classes`` for online streams, ``--resume`` of an L-BFGS CRF refused before the data.

The command-line runs are real child processes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from latentstruct.crfsuite import CRF
from latentstruct.exceptions import ConfigError, InputError

# a small chunking corpus: CoNLL-2000's form, and the same items in CRFsuite's data format
SENTENCES = [
    [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"),
     ("deficit", "NN", "I-NP"), (".", ".", "O")],
    [("The", "DT", "B-NP"), ("pound", "NN", "I-NP"), ("fell", "VBD", "B-VP"),
     ("in", "IN", "B-PP"), ("London", "NNP", "B-NP"), (".", ".", "O")],
    [("Exports", "NNS", "B-NP"), ("rose", "VBD", "B-VP"), ("in", "IN", "B-PP"),
     ("the", "DT", "B-NP"), ("summer", "NN", "I-NP"), (".", ".", "O")],
] * 3
LABELS = sorted({c for s in SENTENCES for _, _, c in s})


def features(word: str, pos: str) -> dict:
    return {"w": word.lower(), "pos": pos, "bias": 1.0}


def escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace(":", "\\:")


def crfsuite_line(label: str, word: str, pos: str) -> str:
    # python-crfsuite names {"w": "he"} "w:he"; the file escapes the ':'
    return "\t".join([label, escape(f"w:{word.lower()}"), escape(f"pos:{pos}"), "bias"])


X = [[features(w, p) for w, p, _ in s] for s in SENTENCES]
Y = [[c for _, _, c in s] for s in SENTENCES]


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """``latentstruct ARGS`` in a child process."""
    return subprocess.run([sys.executable, "-m", "latentstruct", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=600)


def cli_here(capsys, *args) -> subprocess.CompletedProcess:
    """``latentstruct ARGS`` run by ``latentstruct.cli.main`` in this process (what a child
    process would give: its exit status and output)."""
    from latentstruct.cli import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("latentstruct: error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("crfsuite51")
    conll = root / "conll.txt"
    conll.write_text("\n\n".join("\n".join(" ".join(t) for t in s) for s in SENTENCES) + "\n",
                     encoding="utf-8")
    labelled = root / "data.txt"
    labelled.write_text("\n\n".join("\n".join(crfsuite_line(c, w, p) for w, p, c in s)
                                    for s in SENTENCES) + "\n", encoding="utf-8")
    unlabelled = root / "unlabelled.txt"
    unlabelled.write_text("\n\n".join("\n".join(crfsuite_line("", w, p) for w, p, _ in s)
                                      for s in SENTENCES) + "\n", encoding="utf-8")
    model = root / "crf.npz"
    crf = CRF(model_filename=str(model), max_iterations=50).fit(X, Y)
    return {"root": root, "conll": conll, "data": labelled, "unlabelled": unlabelled,
            "model": model, "crf": crf}


@pytest.fixture(scope="module")
def crfsuite_model(files):
    """A model file python-crfsuite writes (the same data)."""
    pycrfsuite = pytest.importorskip("pycrfsuite")
    path = files["root"] / "model.crfsuite"
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, Y):
        trainer.append(xseq, yseq)
    trainer.set_params({"max_iterations": 50})
    trainer.train(str(path))
    return path


# ----------------------------------------------------------------------------------------
# 1. a sequence model on the command line reads CRFsuite's data format, and only it
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["predict", "evaluate"])
@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_a_conll_file_is_refused_at_its_first_line(files, command):
    out = files["root"] / f"out-{command}.txt"
    args = (["predict", "--input", files["conll"], "--output", out] if command == "predict"
            else ["evaluate", "--test", files["conll"]])
    result = cli(*args, "--model", files["model"])
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert line.startswith(f"latentstruct: error: {files['conll']}:1: line 'He PRP B-NP' has "
                           f"no TAB but spaces: it looks like CoNLL or other space-separated "
                           f"columns, and CRFsuite's data format is one item per line, "
                           f"LABEL<TAB>ATTRIBUTE<TAB>..."), line
    assert result.stdout == "" and not out.exists()


@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_predict_and_evaluate_read_the_format(files):
    out = files["root"] / "pred.txt"
    result = cli("predict", "--model", files["model"], "--input", files["unlabelled"],
                 "--output", out)
    assert result.returncode == 0, result.stderr
    lines = out.read_text(encoding="utf-8").split("\n")
    # the predictions are the Python model's, written in the same format
    predicted = [lab for s in files["crf"].predict(X) for lab in s + [""]]
    assert [ln.split("\t")[0] for ln in lines[:len(predicted)]] == predicted
    assert lines[0].split("\t")[1:] == ["w\\:he", "pos\\:PRP", "bias"]
    result = cli("evaluate", "--model", files["model"], "--test", files["data"])
    assert result.returncode == 0, result.stderr
    import json

    report = json.loads(result.stdout)
    assert report["accuracy"] == pytest.approx(files["crf"].score(X, Y))
    assert report["accuracy"] > 0.9


@pytest.mark.parametrize("text, message", [
    ("B-NP\n", r"data.txt:1: line 'B-NP' has no TAB: CRFsuite's data format is one item per "
               r"line, LABEL<TAB>ATTRIBUTE"),
    ("B-NP\tw\nHe PRP B-NP\n", r"data.txt:2: line 'He PRP B-NP' has no TAB but spaces"),
    ("B:NP\tw\n", r"data.txt:1: label field 'B:NP' has an unescaped ':', so CRFsuite reads "
                  r"the label 'B'; write a ':' inside a label as '\\:'"),
    ("@weight:2\nB-NP\tw\n", r"data.txt:1: '@weight:2' is a CRFsuite declaration"),
    ("@weight:2\tB-NP\tw\n", r"data.txt:1: '@weight:2' is a CRFsuite declaration"),
    (" B-NP\tw\n", r"data.txt:1: label ' B-NP' has white space at its ends"),
    ("B-NP\tw:x\n", r"data.txt:1: attribute 'w' has the value 'x', which is no number"),
])
def test_lines_not_in_the_format_are_refused_with_file_and_line(tmp_path, text, message):
    from latentstruct.tasks.sequence.generic import SequenceTask

    path = tmp_path / "data.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        SequenceTask().read(path)


def test_a_line_of_spaces_is_a_break_and_an_item_may_have_no_attributes(tmp_path):
    from latentstruct.tasks.sequence.generic import SequenceTask, write_crfsuite_data

    path = tmp_path / "data.txt"
    path.write_text("A\tx\n   \nB\t\nA\\:1\ty\\\\z:2\n", encoding="utf-8")
    ds = SequenceTask().read(path)
    assert ds.targets == [("A",), ("B", "A:1")]
    assert ds.records[1].attributes == ((), ("y\\z",))
    # written back: the item without attributes keeps its TAB, the ':' of the label is
    # escaped, so the file reads back the same
    out = tmp_path / "out.txt"
    write_crfsuite_data(out, ds.records, ds.targets)
    assert out.read_text(encoding="utf-8") == "A\tx\n\nB\t\nA\\:1\ty\\\\z:2.0\n\n"
    again = SequenceTask().read(out)
    assert again.targets == ds.targets and again.records == ds.records
    with pytest.raises(InputError, match=r"label '@x' cannot be written in CRFsuite's data "
                                         r"format"):
        write_crfsuite_data(out, ds.records[:1], [["@x"]])


@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_a_file_without_the_label_column_is_refused_for_a_fitted_model(files, tmp_path):
    """Attributes only (no label column): CRFsuite would take the first attribute as the
    label and lose it; none of the file's "labels" is the model's, so it is refused."""
    path = tmp_path / "nolabels.txt"
    path.write_text("\n\n".join("\n".join(crfsuite_line(c, w, p).split("\t", 1)[1]
                                          for w, p, c in s) for s in SENTENCES) + "\n",
                    encoding="utf-8")
    out = tmp_path / "pred.txt"
    result = cli("predict", "--model", files["model"], "--input", path, "--output", out)
    assert result.returncode == 2
    line = one_error_line(result)
    assert (f"{path}:1: no label of the file is a label of the model (the first: 'w:he'; the "
            f"model's: {', '.join(map(repr, LABELS))} ({len(LABELS)})): the first "
            f"TAB-separated field of every line is the item's label") in line, line
    assert "start every line with a TAB (an empty label field)" in line
    assert not out.exists()
    # a file with some unknown labels is evaluated: they count as errors, as in crfsuite tag
    mixed = tmp_path / "mixed.txt"
    mixed.write_text(crfsuite_line("B-NP", "He", "PRP") + "\n"
                     + crfsuite_line("ZZ", "reckons", "VBZ") + "\n", encoding="utf-8")
    result = cli("evaluate", "--model", files["model"], "--test", mixed)
    assert result.returncode == 0, result.stderr
    assert '"accuracy": 0.5' in result.stdout


# ----------------------------------------------------------------------------------------
# 2. a python-crfsuite model file on the command line
# ----------------------------------------------------------------------------------------
@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_info_describes_a_crfsuite_model_file(files, crfsuite_model):
    import json

    from latentstruct.data import read_crfsuite_model

    result = cli("info", "--model", crfsuite_model)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    model = read_crfsuite_model(crfsuite_model)
    assert info["format"] == "crfsuite" and info["task"] == "sequence"
    assert info["description"].startswith("CRFsuite model file (written by python-crfsuite")
    assert info["labels"] == list(model.labels) and sorted(info["labels"]) == LABELS
    assert info["n_labels"] == len(LABELS)
    assert info["n_attributes"] == model.n_attributes > 0
    assert info["n_features"] == model.n_features
    assert info["n_state_features"] + info["n_transition_features"] == model.n_features
    assert info["file_size"] == crfsuite_model.stat().st_size
    result = cli("info", "--model", crfsuite_model, "--as-config")
    assert result.returncode == 2
    assert "is a CRFsuite model file (python-crfsuite, sklearn-crfsuite or crfsuite learn), " \
           "which records no latentstruct run" in one_error_line(result)


@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_evaluate_and_predict_use_a_crfsuite_model_file(files, crfsuite_model):
    import json

    import pycrfsuite

    tagger = pycrfsuite.Tagger()
    tagger.open(str(crfsuite_model))
    expected = [tagger.tag(x) for x in X]
    out = files["root"] / "pred-crfsuite.txt"
    result = cli("predict", "--model", crfsuite_model, "--input", files["unlabelled"],
                 "--output", out)
    assert result.returncode == 0, result.stderr
    written = [ln.split("\t")[0] for ln in out.read_text(encoding="utf-8").split("\n")]
    assert written[:sum(len(s) + 1 for s in expected)] == [
        lab for s in expected for lab in s + [""]]
    result = cli("evaluate", "--model", crfsuite_model, "--test", files["data"])
    assert result.returncode == 0, result.stderr
    correct = sum(a == b for s, t in zip(expected, Y) for a, b in zip(s, t))
    assert json.loads(result.stdout)["accuracy"] == pytest.approx(
        correct / sum(map(len, Y)), abs=1e-6)
    # and the file is still refused where it cannot serve, naming it as what it is
    result = cli("train", "sequence", "--train", files["data"], "--model",
                 files["root"] / "again.npz", "--resume", crfsuite_model)
    assert result.returncode == 2
    assert (f"--resume {crfsuite_model} is a CRFsuite model file (python-crfsuite, "
            f"sklearn-crfsuite or crfsuite learn), which cannot continue training"
            in one_error_line(result))
    result = cli("train", "sequence", "--train", files["data"], "--model",
                 files["root"] / "again.npz", "--config", crfsuite_model)
    assert result.returncode == 2
    assert f"--config {crfsuite_model}: is a CRFsuite model file" in one_error_line(result)
    assert not (files["root"] / "again.npz").exists()


# ----------------------------------------------------------------------------------------
# --resume of an L-BFGS crf: refused before any data is read, in the command line's words
# ----------------------------------------------------------------------------------------
@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_resume_of_an_lbfgs_crf_is_refused_before_the_data(files, tmp_path):
    lbfgs = tmp_path / "lbfgs.npz"
    result = cli("train", "sequence", "--learner", "crf", "--train", files["data"], "--model",
                 lbfgs, "--option", "max_iter=3", "--quiet")
    assert result.returncode == 0, result.stderr
    # the --train file does not exist: the refusal comes before anything reads it
    out = tmp_path / "out.npz"
    result = cli("train", "sequence", "--train", tmp_path / "later.txt", "--model", out,
                 "--resume", lbfgs)
    assert result.returncode == 2
    assert one_error_line(result) == (
        f"latentstruct: error: --resume {lbfgs} is a model of learner 'crf' with "
        f"solver='lbfgs', which cannot continue training (L-BFGS optimises the whole "
        f"training set at once, so it has no passes to continue); online learners: arow, "
        f"crf with --option solver=sgd, latent-pa, pa, perceptron, sgd-ssvm. To finish an "
        f"interrupted run, give --resume the run's --checkpoint file (this is a model file, "
        f"not a checkpoint), or train afresh without --resume")
    assert not out.exists()


# ----------------------------------------------------------------------------------------
# 3. CRF.fit checks X_dev and y_dev as it checks X and y, before any training
# ----------------------------------------------------------------------------------------
@pytest.fixture
def no_training(monkeypatch):
    """Training raises: a refusal seen instead comes before any training."""
    from latentstruct.estimators import Estimator

    def trained(*args, **kwargs):
        raise AssertionError("training ran before the holdout data was checked")

    monkeypatch.setattr(Estimator, "fit", trained)


@pytest.mark.parametrize("X_dev, y_dev, message", [
    # a sequence with another length than its labels: sklearn-crfsuite refuses it too
    ([X[0], X[1]], [Y[1], Y[0]], r"^y_dev\[0\]: has 6 tags but X_dev\[0\] has 5 tokens; "
                                 r"give one tag per token$"),
    # lengths that add up (5 + 6 = 6 + 5): before, a holdout accuracy was computed anyway
    ([X[0], X[1]], [Y[0][:4], Y[1] + ["O"]], r"^y_dev\[0\]: has 4 tags but X_dev\[0\] has 5"),
    ([X[0]], [Y[0], Y[1]], r"^X_dev has 1 examples but y_dev has 2 targets; give one target "
                           r"per example$"),
    ([[{"X": float("nan")}]], [["O"]],
     r"^X_dev\[0\]\[0\]: attribute 'X' has the value nan; an attribute's value scales"),
    ([[]], [[]], r"^X_dev\[0\]: is an empty sentence"),
])
def test_holdout_data_is_checked_before_training(no_training, tmp_path, X_dev, y_dev,
                                                 message):
    model = tmp_path / "m.npz"
    with pytest.raises(InputError, match=message) as info:
        CRF(model_filename=str(model)).fit(X, Y, X_dev=X_dev, y_dev=y_dev)
    assert isinstance(info.value, ValueError)  # as sklearn-crfsuite's ValueError
    assert not model.exists()


def test_aligned_holdout_data_is_scored():
    crf = CRF(max_iterations=50).fit(X[:6], Y[:6], X_dev=X[6:], y_dev=Y[6:])
    assert crf.training_log_.holdout == pytest.approx(crf.score(X[6:], Y[6:]))


# ----------------------------------------------------------------------------------------
# 4. integer parameters, model_filename of another format
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    (dict(max_iterations=2.5), r"^max_iterations=2.5 is not a whole number; CRFsuite's "
                               r"max_iterations is an integer, and python-crfsuite would cut "
                               r"it to 2 \(C's atoi\), which latentstruct does not do "
                               r"silently: give an int$"),
    (dict(max_iterations="2.5"), r"^max_iterations='2.5' is not an integer; CRFsuite's "
                                 r"max_iterations is one \(python-crfsuite would read this "
                                 r"text as 2\): give an int$"),
    (dict(max_iterations=float("inf")), r"^max_iterations=inf is not a whole number; "
                                        r"CRFsuite's max_iterations is an integer: give an int"),
    (dict(max_iterations=True), r"^max_iterations=True: CRFsuite's max_iterations is an "
                                r"integer; give an int$"),
    (dict(num_memories=6.5), r"^num_memories=6.5 is not a whole number"),
    (dict(period=1.5), r"^period=1.5 is not a whole number"),
    (dict(algorithm="pa", pa_type=1.5), r"^pa_type=1.5 is not a whole number"),
    (dict(algorithm="l2sgd", calibration_samples=999.5),
     r"^calibration_samples=999.5 is not a whole number"),
    (dict(c2="abc"), r"^c2='abc' is not a number; CRFsuite's c2 is one \(python-crfsuite "
                     r"would read this text as 0\): give a float$"),
    (dict(all_possible_transitions="False"),
     r"^all_possible_transitions='False': CRFsuite's all_possible_transitions is a flag; "
     r"give True or False \(or 1/0\)$"),
    (dict(algorithm="pa", averaging=0.5), r"^averaging=0.5: CRFsuite's averaging is a flag"),
])
def test_values_crfsuite_would_silently_change_are_refused(no_training, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        CRF(**kwargs).fit(X, Y)


@pytest.mark.parametrize("kwargs, option, value", [
    (dict(max_iterations=7.0), "max_iter", 7),
    (dict(max_iterations="7"), "max_iter", 7),
    (dict(algorithm="ap", max_iterations=np.int64(4)), "max_iter", 4),
    (dict(c2="0.5"), "c2", 0.5),
    (dict(all_possible_transitions=1), "possible_transitions", True),
    (dict(all_possible_transitions="0"), "possible_transitions", False),
])
def test_whole_numbers_and_crfsuite_text_are_taken(kwargs, option, value):
    _, opts, _ = CRF(**kwargs)._learner_and_options()
    assert opts[option] == value and type(opts[option]) is type(value)


def test_fit_never_replaces_a_file_of_another_format(files, crfsuite_model, tmp_path):
    import shutil

    theirs = tmp_path / "model.crfsuite"
    shutil.copyfile(crfsuite_model, theirs)
    before = theirs.read_bytes()
    with pytest.raises(ConfigError, match=r"model_filename='.*model.crfsuite' is a CRFsuite "
                                          r"model file \(python-crfsuite's format\), and fit "
                                          r"writes latentstruct's model format.*not replaced"):
        CRF(model_filename=str(theirs)).fit(X, Y)
    assert theirs.read_bytes() == before
    # the CRFsuite file is still read by an unfitted CRF, as python-crfsuite wrote it
    assert sorted(CRF(model_filename=str(theirs)).classes_) == LABELS
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"is an existing file that is not a latentstruct "
                                          r"model; fit would replace it"):
        CRF(model_filename=str(notes)).fit(X, Y)
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    # a latentstruct model is refitted in place, as sklearn-crfsuite's users expect
    ours = tmp_path / "ours.npz"
    CRF(model_filename=str(ours), max_iterations=5).fit(X, Y)  # CRFsuite's normal stop
    CRF(model_filename=str(ours), max_iterations=50).fit(X, Y)
    assert CRF(model_filename=str(ours)).predict(X) == files["crf"].predict(X)


# ----------------------------------------------------------------------------------------
# CRFsuite model files read as estimators: no hang, no unbounded allocation
# ----------------------------------------------------------------------------------------
def test_a_fifo_is_never_opened_as_a_crfsuite_file(tmp_path):
    import threading

    import latentstruct
    from latentstruct.exceptions import ModelFormatError

    fifo = tmp_path / "model.crfsuite"
    os.mkfifo(fifo)
    outcome = []

    def load():
        try:
            latentstruct.load(fifo)
        except ModelFormatError as exc:
            outcome.append(str(exc))

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # opening the FIFO waits for a writer: release it, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("latentstruct.load opened a FIFO and waited for a writer")
    assert outcome and "is not a regular file (a FIFO, socket or device)" in outcome[0]


def test_dense_weights_over_the_model_limit_are_refused_before_allocation(crfsuite_model,
                                                                         monkeypatch):
    import latentstruct
    from latentstruct.data import read_crfsuite_model
    from latentstruct.exceptions import ModelFormatError

    model = read_crfsuite_model(crfsuite_model)
    A, L = model.n_attributes, model.n_labels
    n = A * L + L * L + 2 * L
    monkeypatch.setenv("LATENTSTRUCT_MAX_MODEL_BYTES", str(8 * n - 1))
    with pytest.raises(ModelFormatError, match=(
            rf"CRFsuite model file .*model.crfsuite: its {A:,} attributes × {L:,} labels "
            rf"make {n:,} weights \({8 * n:,} bytes\) once dense, over the {8 * n - 1:,} bytes "
            rf"a model may take; if you trust the file, raise \$LATENTSTRUCT_MAX_MODEL_BYTES")):
        latentstruct.load(crfsuite_model)
    monkeypatch.setenv("LATENTSTRUCT_MAX_MODEL_BYTES", str(8 * n))
    assert latentstruct.load(crfsuite_model).task_.n_features == n


# ----------------------------------------------------------------------------------------
# --classes: the full label set of an online stream, declared on the command line
# ----------------------------------------------------------------------------------------
@pytest.mark.slow  # command-line runs in subprocesses: seconds each
def test_classes_declare_a_streams_labels_for_later_resume_runs(files, tmp_path):
    import json

    import latentstruct

    first = tmp_path / "first.npz"
    declared = LABELS + ["B-ADJP"]  # a label the first file does not hold
    result = cli("train", "sequence", "--learner", "perceptron", "--train", files["data"],
                 "--model", first, "--classes", ",".join(declared), "--quiet")
    assert result.returncode == 0, result.stderr
    assert latentstruct.load(first).task_.labels_ == sorted(declared)
    later = tmp_path / "later.txt"
    later.write_text(crfsuite_line("B-ADJP", "due", "JJ") + "\n", encoding="utf-8")
    result = cli("train", "sequence", "--train", later, "--model", tmp_path / "second.npz",
                 "--resume", first, "--quiet")
    assert result.returncode == 0, result.stderr
    # without --classes the same stream stops at the new label
    plain = tmp_path / "plain.npz"
    result = cli("train", "sequence", "--learner", "perceptron", "--train", files["data"],
                 "--model", plain, "--quiet")
    assert result.returncode == 0, result.stderr
    result = cli("train", "sequence", "--train", later, "--model", tmp_path / "third.npz",
                 "--resume", plain)
    assert result.returncode == 2 and "'B-ADJP'" in one_error_line(result)
    # the run configuration records them: a replay declares the same labels
    result = cli("info", "--model", first, "--as-config")
    assert json.loads(result.stdout)["classes"] == declared
    replay = tmp_path / "replay.npz"
    result = cli("train", "--config", first, "--train", files["data"], "--model", replay,
                 "--quiet")
    assert result.returncode == 0, result.stderr
    assert latentstruct.load(replay).task_.labels_ == sorted(declared)
    # --resume takes --classes only as the model's own label set
    result = cli("train", "sequence", "--train", later, "--model", tmp_path / "fourth.npz",
                 "--resume", first, "--classes", "B-ADJP,O")
    assert result.returncode == 2
    assert one_error_line(result).startswith(
        f"latentstruct: error: --classes (B-ADJP, O) differs from the label set of the model "
        f"--resume {first} continues (")


@pytest.mark.parametrize("task, learner, classes, message", [
    ("chunk", "perceptron", "B-NP,I-NP,FOO",
     "--classes label 3 ('FOO') is not a label of task 'chunk': chunk tag 'FOO' is not 'O' "
     "or an IOB tag"),
    ("pos", "perceptron", "NOUN,Noun",
     "--classes label 2 ('Noun') is not a label of task 'pos': tag 'Noun' is not UPOS"),
    ("chunk", "perceptron", "B-NP, I-NP", "--classes label ' I-NP' has white space at its "
                                          "ends (no spaces after the commas)"),
    ("chunk", "perceptron", "B-NP,,O", "--classes 'B-NP,,O' holds an empty label"),
    ("chunk", "perceptron", "O,B-NP,O", "--classes lists 'O' twice; give each label once"),
    ("chunk", "perceptron", '["O", 1]', "is not a JSON list of strings"),
    ("sequence", "crf", "A,B",
     "--classes declares the full label set of a stream that later runs continue with "
     "--resume, but this run trains learner 'crf' with solver='lbfgs', which cannot continue "
     "training (L-BFGS optimises the whole training set at once, so it has no passes to "
     "continue); online learners: arow, crf with --option solver=sgd, latent-pa, pa, "
     "perceptron, sgd-ssvm"),
    ("chunk", "ssvm", "B-NP,O", "but this run trains learner 'ssvm', which cannot continue "
                                "training"),
    ("translit", "latent-pa", "A,B", "--classes declares a label set, and task 'translit' "
                                     "takes none from the command line"),
])
def test_classes_are_refused_before_any_data(tmp_path, capsys, task, learner, classes, message):
    # the --train file does not exist: every refusal comes before any data is read (in this
    # process: the other tests here run the command line as a child process)
    model = tmp_path / "m.npz"
    result = cli_here(capsys, "train", task, "--learner", learner, "--train",
                      tmp_path / "absent.txt", "--model", model, "--classes", classes)
    assert result.returncode == 2
    assert message in one_error_line(result)
    assert not model.exists()


def test_a_data_label_missing_from_classes_is_refused_before_training(files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    result = cli_here(capsys, "train", "chunk", "--learner", "perceptron", "--train",
                      files["conll"], "--model", model, "--classes", "B-NP,I-NP,O")
    assert result.returncode == 2
    assert one_error_line(result) == (
        f"latentstruct: error: {files['conll']}:1: sentence 1, token 2: the label 'B-VP' is "
        f"not one of --classes (B-NP, I-NP, O); --classes must list every label of the "
        f"stream")
    assert not model.exists()


def test_resume_names_a_new_label_in_the_command_lines_words(files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    result = cli_here(capsys, "train", "sequence", "--learner", "perceptron", "--train", files["data"],
                 "--model", model, "--quiet")
    assert result.returncode == 0, result.stderr
    later = tmp_path / "later.txt"
    later.write_text(crfsuite_line("O", "so", "RB") + "\n" + crfsuite_line("B-ADJP", "due", "JJ")
                     + "\n", encoding="utf-8")
    result = cli_here(capsys, "train", "sequence", "--train", later, "--model",
                      tmp_path / "out.npz", "--resume", model)
    assert result.returncode == 2
    assert one_error_line(result) == (
        f"latentstruct: error: {later}: sentence 1, token 2: the label 'B-ADJP' is not one of "
        f"the model's labels: {', '.join(LABELS)} ({len(LABELS)}). A model's labels are fixed "
        f"when it is first trained: declare a stream's full label set on its first run "
        f"(latentstruct train ... --classes LABEL,LABEL,...), or correct the label")


def test_a_damaged_crfsuite_model_file_is_named_as_one(crfsuite_model, files, tmp_path, capsys):
    bad = tmp_path / "cut.crfsuite"
    bad.write_bytes(crfsuite_model.read_bytes()[:1000])
    for args in (["info"], ["evaluate", "--test", files["data"]]):
        result = cli_here(capsys, *args, "--model", bad)
        assert result.returncode == 2
        assert one_error_line(result) == (
            f"latentstruct: error: CRFsuite model file {bad}: the file is truncated: expected "
            f"{crfsuite_model.stat().st_size:,} bytes (the size in its header), found 1,000 "
            f"bytes; write the model again (pycrfsuite.Trainer.train, or `crfsuite learn -m`) "
            f"or give the right file")
