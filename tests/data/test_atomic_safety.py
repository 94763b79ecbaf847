"""atomic_write and check_output_path: what may be written, failed writes, stale temps."""

import errno
import os
import re
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from latentstruct.data.atomic import atomic_write, check_output_path
from latentstruct.exceptions import InputError

TEMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{12}\.tmp")
# a fixed modification time far older than any age limit (2001): no clock is read
LONG_AGO = 1_000_000_000


def names(directory):
    return sorted(p.name for p in Path(directory).iterdir())


def write(path, text="new\n"):
    with atomic_write(path) as fh:
        fh.write(text)


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs (root only): ``tmpfs(options)`` -> mount point."""
    mounted = []

    def mount(options):
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        point = tmp_path / f"mnt{len(mounted)}"
        point.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
                              check=False, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", str(point)], check=False)


def dead_pid():
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)
    return child.pid


# ---------------------------------------------------------------------- what is refused
def test_symlink_to_a_regular_file_is_refused_and_left_alone(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(InputError) as info:
        write(link)
    message = str(info.value)
    assert f"cannot write {link}: it is a symbolic link" in message
    assert "only regular files or new paths" in message and "\n" not in message
    assert link.is_symlink() and target.read_text() == "keep\n"
    assert names(tmp_path) == ["link.txt", "target.txt"]
    # a dangling link is refused as well (os.replace would replace the link itself)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="symbolic link"):
        check_output_path(dangling)


def test_fifo_socket_and_directory_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"it is a FIFO \(named pipe\)"):
        write(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # AF_UNIX paths are limited to ~108 bytes: bind in a short temporary directory
    with tempfile.TemporaryDirectory(dir="/tmp") as short:
        sock_path = Path(short) / "s"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.bind(str(sock_path))
            with pytest.raises(InputError, match="it is a socket"):
                write(sock_path)
            assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
            assert names(short) == ["s"]
    with pytest.raises(InputError, match="it is a directory") as info:
        check_output_path(tmp_path, what="--output")
    assert str(info.value).startswith(f"cannot write --output {tmp_path}: it is a directory")
    assert names(tmp_path) == ["fifo"]


def test_device_nodes_are_refused(tmp_path):
    # checked without writing: a broken check must not replace /dev/null on this machine
    with pytest.raises(InputError, match="it is a character device"):
        check_output_path("/dev/null")
    if os.path.islink("/dev/stdout"):
        with pytest.raises(InputError, match="it is a symbolic link"):
            check_output_path("/dev/stdout")
    if os.geteuid() != 0:
        pytest.skip("creating a device node for the atomic_write check needs root")
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    with pytest.raises(InputError, match="it is a character device"):
        write(node)
    assert stat.S_ISCHR(os.lstat(node).st_mode) and names(tmp_path) == ["null"]


def test_check_output_path_stdout_missing_and_unwritable_directories(tmp_path, tmpfs):
    assert check_output_path("-", allow_stdout=True) is None
    with pytest.raises(InputError, match="standard output is not accepted here"):
        check_output_path("-", what="--model")
    assert check_output_path(tmp_path / "new.txt") == tmp_path / "new.txt"
    (tmp_path / "old.txt").write_text("x")
    assert check_output_path(str(tmp_path / "old.txt")) == tmp_path / "old.txt"
    with pytest.raises(InputError) as info:
        check_output_path(tmp_path / "no" / "x.txt", what="--output")
    assert str(info.value) == (f"cannot write --output {tmp_path / 'no' / 'x.txt'}: directory "
                               f"{tmp_path / 'no'} does not exist; create it first")
    assert not (tmp_path / "no").exists()
    read_only = tmpfs("size=64k,ro")  # root ignores permission bits, not a read-only mount
    with pytest.raises(InputError, match=f"directory {read_only} is not writable"):
        check_output_path(read_only / "m.npz")
    with pytest.raises(InputError, match="is not writable"):
        write(read_only / "m.npz")


# ---------------------------------------------------------------------- failed writes
def test_simulated_write_failures_keep_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("previous\n")

    def no_space(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as m:
        m.setattr(os, "replace", no_space)
        with pytest.raises(InputError) as info:
            write(path)
    assert str(info.value) == (f"cannot write {path}: No space left on device (ENOSPC); the "
                               f"previous file, if any, is unchanged")
    assert path.read_text() == "previous\n" and names(tmp_path) == ["out.txt"]

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(
            OSError(errno.EIO, os.strerror(errno.EIO))))
        with pytest.raises(InputError, match=r"Input/output error \(EIO\); the previous file"):
            write(path)
    assert path.read_text() == "previous\n" and names(tmp_path) == ["out.txt"]

    # a failing write inside the block (quota exceeded)
    with pytest.raises(InputError, match=r"cannot write .*out.txt: .*\(EDQUOT\)"):
        with atomic_write(path) as fh:
            fh.write("half")
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
    assert path.read_text() == "previous\n" and names(tmp_path) == ["out.txt"]

    # the temporary file cannot be created (permission denied)
    real_open = os.open

    def deny(file, *args, **kwargs):
        if os.fspath(file).endswith(".tmp"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(os, "open", deny)
        with pytest.raises(InputError, match=r"Permission denied \(EACCES\)"):
            write(path)
    assert path.read_text() == "previous\n" and names(tmp_path) == ["out.txt"]


def test_other_os_errors_of_the_block_propagate_unchanged(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(FileNotFoundError):
        with atomic_write(path) as fh:
            fh.write("x")
            open(tmp_path / "missing-input.txt").close()
    assert names(tmp_path) == []


def test_a_real_full_disk(tmpfs):
    disk = tmpfs("size=64k")
    path = disk / "model.bin"
    path.write_bytes(b"old model")
    with pytest.raises(InputError) as info:
        with atomic_write(path, "wb") as fh:
            for _ in range(64):  # 1 MiB into 64 KiB
                fh.write(b"\0" * 16384)
    assert "(ENOSPC); the previous file, if any, is unchanged" in str(info.value)
    assert path.read_bytes() == b"old model" and names(disk) == ["model.bin"]
    write(path, "fits\n")  # the space was given back
    assert path.read_text() == "fits\n"


# ---------------------------------------------------------------------- stale temporaries
def test_temp_names_carry_the_writers_pid(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write(tmp_path / "a.txt")
    (match,) = [TEMP.fullmatch(n) for n in seen]
    assert match and match["name"] == "a.txt" and int(match["pid"]) == os.getpid()


def test_stale_temps_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    dead = dead_pid()
    stale = tmp_path / f".out.txt.{dead}.0123456789ab.tmp"
    live = tmp_path / f".out.txt.{os.getpid()}.0123456789ab.tmp"
    other_path = tmp_path / f".other.txt.{dead}.0123456789ab.tmp"  # another destination
    old_legacy = tmp_path / ".out.txt.aaaaaaaaaaaa.tmp"
    new_legacy = tmp_path / ".out.txt.bbbbbbbbbbbb.tmp"
    not_a_file = tmp_path / f".out.txt.{dead}.cccccccccccc.tmp"
    for p in (stale, live, other_path, old_legacy, new_legacy):
        p.write_text("partial")
    not_a_file.mkdir()
    os.utime(old_legacy, (LONG_AGO, LONG_AGO))
    os.utime(live, (LONG_AGO, LONG_AGO))  # age never matters for a live writer

    write(tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text() == "new\n"
    assert not stale.exists() and not old_legacy.exists()
    assert live.exists() and other_path.exists() and new_legacy.exists() and not_a_file.is_dir()


def test_legacy_pattern_never_removes_a_live_writers_temp(tmp_path):
    # ".a.123.<12 hex>.tmp" is both the old-format temp of "a.<pid>" and the temp of the live
    # process <pid> writing "a": the live writer wins.
    pid = os.getpid()
    temp = tmp_path / f".a.{pid}.0123456789ab.tmp"
    temp.write_text("partial")
    os.utime(temp, (LONG_AGO, LONG_AGO))
    write(tmp_path / f"a.{pid}")
    assert temp.exists()
