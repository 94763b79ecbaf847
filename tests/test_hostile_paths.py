"""Hostile paths through the command line (issue 27): nothing a user gives is lost or hangs.

One table row per case.  Each row writes its files into a fresh folder, runs its shell
command there (``bash -c``, so pipes and process substitution ``<(...)`` are real; the CLI is
``{ls}``, i.e. ``python -m latentstruct.cli``, and ``{chunk}`` a small trained model that is
never modified) with a 60 s timeout, so a hang fails the row instead of hanging CI, and
checks the contract:

* the exit code;
* a refusal prints exactly one stderr line ``latentstruct: error: ...`` holding every
  expected fragment, and leaves the folder exactly as it was (every input byte-identical,
  no model, no output, no temporary file);
* a run that succeeds leaves every input byte-identical, creates only the files it
  names, and passes its ``check`` (same predictions, weights or metrics as the same
  command on the regular file).

The second half tests ``check_paths`` and ``open_input`` directly.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from latentstruct.cli import main
from latentstruct.data import path_rule
from latentstruct.data.path_rule import check_paths, open_input, stream_descriptor
from latentstruct.exceptions import InputError
from latentstruct.io import load_model

CHUNK = "He PRP B-NP\nreckons VBZ B-VP\n. . O\n\nShe PRP B-NP\nruns VBZ B-VP\n. . O\n\n"
WORDS_POS = "He PRP\nreckons VBZ\n.  .\n\nShe PRP\nruns VBZ\n"
BAD_LINE_2 = "He PRP B-NP\nreckons VBZ\n"
CONLLU = "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n"
LS = f"{shlex.quote(sys.executable)} -m latentstruct.cli"
TIMEOUT = 60


# ---------------------------------------------------------------------- what rows write
def files(*pairs) -> Callable:
    """A ``write`` that puts each ``(name, content)`` into the folder."""
    def write(folder):
        for name, content in pairs:
            (folder / name).write_text(content, encoding="utf-8")
    return write


def chunk(folder):
    (folder / "c.txt").write_text(CHUNK, encoding="utf-8")


def chunk_and(*more: Callable) -> Callable:
    def write(folder):
        chunk(folder)
        for w in more:
            w(folder)
    return write


def symlink(name, target):
    return lambda folder: (folder / name).symlink_to(target)


def hardlink(name, target):
    return lambda folder: os.link(folder / target, folder / name)


def fifo(folder):
    os.mkfifo(folder / "f")


def model_copy(folder):
    """``m.npz``: a copy of the chunk model, so a bug that overwrote it stays in the row."""
    shutil.copyfile(os.environ["LS_TEST_CHUNK_MODEL"], folder / "m.npz")


def nothing(folder):
    """For rows whose bad path is on the command line."""


def wp(folder):
    (folder / "wp.txt").write_text(WORDS_POS, encoding="utf-8")


# ---------------------------------------------------------------------- checks of good runs
def same_stdout_as(key: str) -> Callable:
    def check(folder, out, refs):
        assert out == refs[key]
    return check


def same_model_as_chunk(name: str) -> Callable:
    def check(folder, out, refs):
        meta, arrays = load_model(folder / name)
        ref_meta, ref_arrays = load_model(refs["chunk"])
        assert sorted(arrays) == sorted(ref_arrays)
        for key in ref_arrays:
            np.testing.assert_array_equal(arrays[key], ref_arrays[key], err_msg=key)
        # the digest was read from the stream's buffer: the same bytes as the file
        assert meta["extra"]["train_digest"] == ref_meta["extra"]["train_digest"]
    return check


@dataclass(frozen=True)
class Case:
    name: str
    write: Callable
    cmd: str
    code: int
    fragments: tuple = ()
    creates: tuple = ()        # files a successful run makes
    check: Callable | None = None
    env: tuple = ()


def train(data: str, model: str = "m.npz", extra: str = "") -> str:
    return f"{{ls}} train chunk --train {data} --model {model} --quiet{extra}"


SAME = "is the same file as"
FIFO = "is a FIFO (named pipe), not a regular file"
RANDOM_ACCESS = "is read with random access (a zip archive), so give the path of the file itself"
PIPE_IT = "pipe it to standard input"

CASES = [
    # --- an output over an input, or over another output ------------------------------------
    Case("train-model-is-train", chunk, train("c.txt", "c.txt"), 2,
         (f"--model c.txt {SAME} --train c.txt; writing --model would replace the --train file",)),
    Case("train-model-is-train-symlink", chunk_and(symlink("link.txt", "c.txt")), train("link.txt", "c.txt"), 2,
         (f"--model c.txt {SAME} --train link.txt",)),
    Case("train-model-is-train-hardlink", chunk_and(hardlink("h.txt", "c.txt")), train("c.txt", "h.txt"), 2,
         (f"--model h.txt {SAME} --train c.txt",)),
    Case("train-model-is-train-dot", chunk, train("c.txt", "./c.txt"), 2, (f"--model ./c.txt {SAME} --train c.txt",)),
    Case("train-checkpoint-is-model", chunk, train("c.txt", "m.npz", " --checkpoint ./m.npz"), 2,
         (f"--checkpoint ./m.npz {SAME} --model m.npz; one would overwrite the other",)),
    Case("train-model-is-resume", chunk_and(model_copy), train("c.txt", "m.npz", " --resume m.npz"), 2,
         (f"--model m.npz {SAME} --resume m.npz",)),
    Case("train-model-is-config", chunk_and(files(("cfg.json", '{"task": "chunk"}'))),
         "{ls} train --config cfg.json --train c.txt --model cfg.json --quiet", 2, (f"--model cfg.json {SAME} --config cfg.json",)),
    Case("predict-output-is-input", wp, "{ls} predict --model {chunk} --input wp.txt --output wp.txt", 2,
         (f"--output wp.txt {SAME} --input wp.txt; writing --output would replace the --input file",)),
    Case("predict-output-is-redirected-stdin", wp, "{ls} predict --model {chunk} --input - --output wp.txt < wp.txt", 2,
         (f"--output wp.txt {SAME} --input standard input",)),
    Case("predict-output-is-model", chunk_and(model_copy, wp), "{ls} predict --model m.npz --input wp.txt --output m.npz", 2,
         (f"--output m.npz {SAME} --model m.npz",)),
    Case("kbest-output-is-input", files(("a.conllu", CONLLU)), "{ls} kbest --model {chunk} --input a.conllu --output a.conllu", 2,
         (f"--output a.conllu {SAME} --input a.conllu",)),
    Case("explain-out-is-model", model_copy, "{ls} explain --model m.npz --out m.npz", 2, (f"--out m.npz {SAME} --model m.npz",)),
    # --- FIFOs and devices are refused before they are opened --------------------------------
    Case("train-train-fifo", fifo, train("f"), 2, (f"--train f {FIFO}", f"{PIPE_IT} (--train - < f, or cat f |")),
    Case("evaluate-test-fifo", fifo, "{ls} evaluate --model {chunk} --test f", 2, (f"--test f {FIFO}", PIPE_IT)),
    Case("predict-input-fifo", fifo, "{ls} predict --model {chunk} --input f --output o.txt", 2, (f"--input f {FIFO}",)),
    Case("predict-input-device", nothing, "{ls} predict --model {chunk} --input /dev/zero --output o.txt", 2,
         ("--input /dev/zero is a character device, not a regular file",)),
    Case("info-model-fifo", fifo, "{ls} info --model f", 2, (f"--model f {FIFO}; --model {RANDOM_ACCESS}",)),
    Case("evaluate-model-fifo", chunk_and(fifo), "{ls} evaluate --model f --test c.txt", 2, (f"--model f {FIFO}",)),
    Case("inspect-model-fifo", fifo, "{ls} inspect --model f", 2, (f"--model f {FIFO}",)),
    Case("explain-model-fifo", fifo, "{ls} explain --model f --out x.png", 2, (f"--model f {FIFO}",)),
    Case("kbest-model-fifo", chunk_and(fifo), "{ls} kbest --model f --input c.txt --output o.kbest", 2, (f"--model f {FIFO}",)),
    Case("evaluate-model-stdin", chunk, "cat {chunk} | {ls} evaluate --model - --test c.txt", 2,
         ("--model -: standard input is not accepted for --model",)),
    # --- outputs that cannot be written fail before any work ---------------------------------
    Case("train-model-in-proc", chunk, train("c.txt", "/proc/m.npz"), 2, ("cannot write --model /proc/m.npz",)),
    Case("train-model-missing-dir", chunk, train("c.txt", "no/m.npz"), 2, ("cannot write --model no/m.npz: directory no does not exist",)),
    Case("train-model-stdout", chunk, train("c.txt", "-"), 2, ("cannot write --model '-': standard output is not accepted",)),
    # --- streams: read once, errors name the path given with the right line -----------------
    Case("train-stdin-bad-line", files(("bad.txt", BAD_LINE_2)), "cat bad.txt | " + train("/dev/stdin"), 2,
         ("/dev/stdin:2: expected 3 columns 'word POS chunk-tag'",)),
    Case("train-dash-bad-line", files(("bad.txt", BAD_LINE_2)), "cat bad.txt | " + train("-"), 2, ("error: -:2: expected 3 columns",)),
    Case("train-procsub-bad-line", files(("bad.txt", BAD_LINE_2)), train("<(cat bad.txt)"), 2,
         ("error: /dev/fd/", ":2: expected 3 columns")),
    Case("train-stream-over-cap", chunk, "cat c.txt | " + train("-"), 2,
         ("-: more than 20 bytes were read from this stream", "LATENTSTRUCT_MAX_STREAM_BYTES"),
         env=(("LATENTSTRUCT_MAX_STREAM_BYTES", "20"),)),
    # --- what works: the stream gives what the file gives ------------------------------------
    Case("predict-piped-dev-stdin", wp, "cat wp.txt | {ls} predict --model {chunk} --input /dev/stdin --output -", 0,
         check=same_stdout_as("predictions")),
    Case("predict-piped-dash", wp, "cat wp.txt | {ls} predict --model {chunk} --input - --output -", 0,
         check=same_stdout_as("predictions")),
    Case("train-process-substitution", chunk, train("<(cat c.txt)", "p.npz"), 0, creates=("p.npz",),
         check=same_model_as_chunk("p.npz")),
    Case("train-piped-dash", chunk, "cat c.txt | " + train("-", "p.npz"), 0, creates=("p.npz",),
         check=same_model_as_chunk("p.npz")),
    Case("evaluate-piped-dev-stdin", chunk, "cat c.txt | {ls} evaluate --model {chunk} --test /dev/stdin", 0,
         check=same_stdout_as("metrics")),
]


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    """The chunk model (trained once, never modified) and what the file-based commands
    print: predictions of ``wp.txt`` and metrics on the training file."""
    folder = tmp_path_factory.mktemp("models")
    (folder / "chunk.txt").write_text(CHUNK, encoding="utf-8")
    (folder / "wp.txt").write_text(WORDS_POS, encoding="utf-8")
    model = folder / "chunk.npz"
    assert main(["train", "chunk", "--train", str(folder / "chunk.txt"), "--model", str(model),
                 "--quiet"]) == 0
    assert main(["predict", "--model", str(model), "--input", str(folder / "wp.txt"),
                 "--output", str(folder / "pred.txt"), "--quiet"]) == 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["evaluate", "--model", str(model), "--test", str(folder / "chunk.txt"),
                     "--quiet"]) == 0
    return {"chunk": str(model), "predictions": (folder / "pred.txt").read_text("utf-8"),
            "metrics": out.getvalue(), "folder": folder}


def _snapshot(folder: Path) -> dict:
    """Every entry under ``folder`` (hidden ones too): bytes of regular files, the kind of
    anything else (a FIFO is never opened)."""
    out = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = Path(root) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                out[path.relative_to(folder)] = path.read_bytes()
            elif stat.S_ISLNK(mode):
                out[path.relative_to(folder)] = ("link", os.readlink(path))
            else:
                out[path.relative_to(folder)] = stat.S_IFMT(mode)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_path(case, tmp_path, refs, monkeypatch):
    monkeypatch.setenv("LS_TEST_CHUNK_MODEL", refs["chunk"])
    case.write(tmp_path)
    before, models_before = _snapshot(tmp_path), _snapshot(refs["folder"])
    env = {k: v for k, v in os.environ.items() if k != path_rule.MAX_STREAM_BYTES_ENV}
    env.update(dict(case.env))
    cmd = case.cmd.format(ls=LS, chunk=shlex.quote(refs["chunk"]))
    done = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT)
    err = done.stderr
    assert done.returncode == case.code, err
    after = _snapshot(tmp_path)
    assert _snapshot(refs["folder"]) == models_before
    if case.code != 0:
        assert err.startswith("latentstruct: error: ") and err.count("\n") == 1, err
        for fragment in case.fragments:
            assert fragment in err, err
        assert after == before  # inputs byte-identical, nothing written, no temporary file
    else:
        assert {k: v for k, v in after.items() if k in before} == before
        assert sorted(map(str, set(after) - set(before))) == sorted(case.creates)
        case.check(tmp_path, done.stdout, refs)


def test_every_command_is_covered():
    cmds = " ".join(c.cmd for c in CASES)
    for command in ("train", "evaluate", "predict", "kbest", "explain", "info", "inspect"):
        assert f"{{ls}} {command} " in cmds, command
    assert len({c.name for c in CASES}) == len(CASES)


# ====================================================================== check_paths itself
def refused(**kwargs) -> str:
    with pytest.raises(InputError) as info:
        check_paths(**kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_same_file_through_a_symlink_a_hard_link_and_dot(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("x").write_text("data\n")
    Path("link").symlink_to("x")
    os.link("x", "hard")
    for given in ("link", "hard", "./x", str(tmp_path / "x"), "sub/../x"):
        Path("sub").mkdir(exist_ok=True)
        message = refused(inputs={"--train": given}, outputs={"--model": "x"})
        assert message.startswith(f"--model x is the same file as --train {given}; ")
    assert Path("x").read_text() == "data\n"
    check_paths(inputs={"--train": "x"}, outputs={"--model": "y"})  # another file: fine


def test_outputs_that_do_not_exist_yet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = refused(outputs={"--model": "m.npz", "--checkpoint": "./m.npz"})
    assert message == ("--checkpoint ./m.npz is the same file as --model m.npz; one would "
                       "overwrite the other: give them different paths")
    check_paths(outputs={"--model": "m.npz", "--checkpoint": "c.npz"})
    assert sorted(os.listdir(tmp_path)) == []  # the writability probe leaves nothing


def test_declared_pairs_may_share_a_file_and_stdio_is_never_an_alias(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("ck.npz").write_bytes(b"x")
    check_paths(inputs={"--resume": "ck.npz"}, outputs={"--checkpoint": "ck.npz"},
                same_ok={("--resume", "--checkpoint")})
    assert "--model ck.npz is the same file as --resume ck.npz" in refused(
        inputs={"--resume": "ck.npz"}, outputs={"--model": "ck.npz", "--checkpoint": "ck.npz"},
        same_ok={("--resume", "--checkpoint")})
    check_paths(inputs={"--input": "-"}, outputs={"--output": "-"}, stdin={"--input"},
                stdout={"--output"})
    assert "standard input is not accepted for --model" in refused(inputs={"--model": "-"},
                                                                    regular={"--model"})
    assert "standard output is not accepted" in refused(outputs={"--model": "-"})


def test_fifos_devices_and_unwritable_places(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkfifo("f")
    assert refused(inputs={"--model": "f"}, regular={"--model"}).startswith(
        "--model f is a FIFO (named pipe), not a regular file")
    assert "--train - < f" in refused(inputs={"--train": "f"}, stdin={"--train"})
    assert "is a character device" in refused(inputs={"--input": "/dev/null"})
    assert "cannot write --model /proc/m.npz" in refused(outputs={"--model": "/proc/m.npz"})
    assert "directory nowhere does not exist" in refused(outputs={"--out": "nowhere/x.png"})
    assert sorted(os.listdir(tmp_path)) == ["f"]


def test_stream_descriptors():
    assert stream_descriptor("-") == stream_descriptor("/dev/stdin") == 0
    assert stream_descriptor("/dev/fd/63") == stream_descriptor("/proc/self/fd/63") == 63
    assert stream_descriptor(f"/proc/{os.getpid()}/fd/5") == 5
    assert stream_descriptor("/proc/1/fd/5") is None or os.getpid() == 1
    assert stream_descriptor("fd/3") is None and stream_descriptor("/dev/null") is None


# ====================================================================== open_input
@pytest.fixture
def streams(monkeypatch):
    monkeypatch.setattr(path_rule, "_STREAMS", {})


def test_a_pipe_is_read_once_and_every_open_sees_it(streams, tmp_path):
    r, w = os.pipe()
    try:
        os.write(w, b"a b O\n\nc d O\n")
        os.close(w)
        name = f"/dev/fd/{r}"
        with open_input(name) as fh:
            assert fh.readline() == b"a b O\n"  # a sniff of the first line
        with open_input(name) as fh:
            assert fh.read() == b"a b O\n\nc d O\n"  # then the whole parse
        from latentstruct.data.readers import read_conll2000

        assert [s.line for s in read_conll2000(name)] == [1, 3]
    finally:
        os.close(r)


def test_a_stream_over_the_cap_is_refused(streams, monkeypatch):
    monkeypatch.setenv(path_rule.MAX_STREAM_BYTES_ENV, "4")
    r, w = os.pipe()
    try:
        os.write(w, b"12345")
        os.close(w)
        with pytest.raises(InputError, match=r"^/dev/fd/\d+: more than 4 bytes were read"):
            open_input(f"/dev/fd/{r}")
    finally:
        os.close(r)
    monkeypatch.setenv(path_rule.MAX_STREAM_BYTES_ENV, "lots")
    with pytest.raises(ValueError, match="must be a positive integer"):
        path_rule.max_stream_bytes()


def test_a_fifo_is_refused_without_being_opened(tmp_path):
    fifo_path = tmp_path / "f"
    os.mkfifo(fifo_path)
    # both ends held open, so a broken check that opened it would not block the test
    r = os.open(fifo_path, os.O_RDONLY | os.O_NONBLOCK)
    w = os.open(fifo_path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(InputError, match="is a FIFO \\(named pipe\\), not a regular file"):
            open_input(fifo_path)
    finally:
        os.close(w)
        os.close(r)
    with pytest.raises(InputError, match="no such file: .*missing"):
        open_input(tmp_path / "missing")
    with pytest.raises(InputError, match="descriptor 987 is not open"):
        open_input("/dev/fd/987")


def test_model_loader_refuses_a_fifo(tmp_path):
    from latentstruct.exceptions import ModelFormatError
    from latentstruct.io import inspect_model

    os.mkfifo(tmp_path / "m.npz")
    with pytest.raises(ModelFormatError, match="is not a regular file"):
        inspect_model(tmp_path / "m.npz")

