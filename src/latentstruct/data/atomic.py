"""Atomic file writing: a file is either completely written or not touched at all.

``atomic_write`` writes into a temporary file in the destination directory, flushes and
fsyncs it, and then renames it over the destination with ``os.replace`` (atomic on POSIX
and Windows when both are on the same file system).  If the body of the ``with`` block
raises, the temporary file is removed and an existing file at the destination is left
exactly as it was.

Only regular files and new paths are written: ``os.replace`` renames over whatever the
path names, so a symbolic link (even to a regular file), a device such as ``/dev/null``,
a FIFO, a socket or a directory is refused (``check_output_path``, which command-line
front ends call before doing any work).  A write that fails for lack of space, quota or
permission raises ``InputError`` and leaves the previous file in place.

Temporary files are named ``.NAME.<pid>.<random hex>.tmp`` after the writing process; a run
that was killed leaves one behind, and the next write to the same path removes those whose
process no longer exists (and old ones of the previous ``.NAME.<hex>.tmp`` format).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from pathlib import Path

from latentstruct.exceptions import ConfigError, InputError

__all__ = ["atomic_write", "check_output_path"]

_ALLOWED_MODE_CHARS = frozenset("wb+t")
#: temporary files of the old format (no pid) older than this many seconds are stale
LEGACY_TEMP_MAX_AGE = 3600.0
_TEMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{12}\.tmp")

#: What a non-regular file is called in messages, by its stat type: (test, name) pairs.
FILE_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_mode(mode: str) -> bool:
    """Validate ``mode``; return True for binary modes."""
    if (
        not isinstance(mode, str)
        or mode.count("w") != 1
        or not set(mode) <= _ALLOWED_MODE_CHARS
        or any(mode.count(c) > 1 for c in "b+t")
        or ("b" in mode and "t" in mode)
    ):
        raise ConfigError(
            f"atomic_write mode must be a write mode such as 'w', 'wb', 'w+' or 'w+b', "
            f"got {mode!r}"
        )
    return "b" in mode


def _label(path: Path, what: str | None) -> str:
    return f"{what} {path}" if what else str(path)


def _errno_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__


def _check_kind(path: Path, what: str | None) -> None:
    """Refuse anything at ``path`` but a regular file, without following symlinks."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(
            f"cannot write {_label(path, what)}: {exc.strerror} ({_errno_name(exc)}); give a "
            f"path in a directory you can read and write"
        ) from None
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in FILE_KINDS if test(mode)), "not a regular file")
    fix = (f"give a file path such as {path / 'out.txt'}" if stat.S_ISDIR(mode)
           else "give the path of a regular file or of a new file (write to the link's "
                "target directly if that is what you mean)" if stat.S_ISLNK(mode)
           else "give the path of a regular file or of a new file")
    raise InputError(
        f"cannot write {_label(path, what)}: it is {kind}, and only regular files or new "
        f"paths are written (the file is replaced atomically); {fix}"
    )


def check_output_path(path, *, what: str = "output", allow_stdout: bool = False):
    """Check that ``path`` can be written before any work is done; return it as a Path.

    ``"-"`` means standard output: returns None when ``allow_stdout``, else is refused.
    Raises ``InputError`` (one line: what the path is, what is expected, how to fix it)
    when the path is a directory, a symbolic link, a device, a FIFO or a socket, when its
    directory does not exist, or when that directory is not writable (tried by creating
    and removing a temporary file there).  ``what`` names the
    path in messages (e.g. ``"--output"``).  ``atomic_write`` runs the same checks.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"{what} must be a file path, got {type(path).__name__} {path!r}")
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text == "-":
        if allow_stdout:
            return None
        raise InputError(
            f"cannot write {what} '-': standard output is not accepted here; give a file path"
        )
    if not text:
        raise InputError(f"cannot write {what}: the path is empty; give a file path")
    path = _check_destination(Path(text), what)
    _probe_directory(path, what)
    return path


def _probe_directory(path: Path, what: str | None) -> None:
    """Create and remove a temporary file next to ``path``: the only sure test that a
    file can be written there (a read-only mount, /proc or an ACL can refuse a directory
    that ``os.access`` calls writable)."""
    try:
        fd, tmp = _create_temp(path.parent, path.name)
    except OSError as exc:
        raise InputError(
            f"cannot write {_label(path, what)}: a file cannot be created in directory "
            f"{path.parent} ({exc.strerror or exc}, {_errno_name(exc)}); choose a directory "
            f"you can write to"
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _check_destination(path: Path, what: str | None) -> Path:
    _check_kind(path, what)
    directory = path.parent
    if not directory.is_dir():
        raise InputError(
            f"cannot write {_label(path, what)}: directory {directory} does not exist; "
            f"create it first"
        )
    if not os.access(directory, os.W_OK):
        raise InputError(
            f"cannot write {_label(path, what)}: directory {directory} is not writable; "
            f"choose another directory or change its permissions"
        )
    return path


# --------------------------------------------------------------------------------------
# temporary files
# --------------------------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user counts as alive)."""
    if os.name == "nt":
        return True  # os.kill would terminate the process there: never remove by pid
    if pid <= 0:
        return False  # never a writer's pid; os.kill(0, ...) would signal our group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError, OSError):
        return False
    return True


def _remove_stale_temps(directory: Path, name: str) -> None:
    """Remove temporary files for ``name`` left in ``directory`` by killed writers.

    A temp of the current format is stale when its writer's pid no longer exists; one of
    the old format (``.NAME.<12 hex>.tmp``) when it is older than ``LEGACY_TEMP_MAX_AGE``.
    A file that parses as the temp of a live process (for any name) is never removed.
    Failures are ignored: cleaning up is a courtesy, not part of the write.
    """
    prefix = f".{name}."
    legacy = re.compile(re.escape(prefix) + r"[0-9a-f]{12}\.tmp")
    now = time.time()
    try:
        entries = [e for e in os.scandir(directory)
                   if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    except OSError:
        return
    for entry in entries:
        match = _TEMP.fullmatch(entry.name)
        pid_alive = match is not None and _pid_alive(int(match["pid"]))
        if pid_alive:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        ours = match is not None and match["name"] == name
        old_legacy = legacy.fullmatch(entry.name) and now - st.st_mtime > LEGACY_TEMP_MAX_AGE
        if ours or old_legacy:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _create_temp(directory: Path, name: str) -> tuple[int, Path]:
    """Create a new, empty temporary file next to the destination; return (fd, path).

    The file is created with permissions 0o666 filtered by the process umask, like a file
    made by ``open(path, "w")`` (``tempfile.mkstemp`` would make it 0o600).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = directory / f".{name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, f"could not create a unique temporary file in {directory}")


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable (POSIX only; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# Errors a write itself can hit (disk full, quota, read-only file system, too large, I/O):
# raised inside the ``with`` block they are reported as a failed write; any other OSError
# from the block (say, reading an input file) propagates unchanged.
_WRITE_ERRNOS = frozenset(
    getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG", "EIO") if hasattr(errno, n)
)


def _write_failed(path: Path, exc: OSError) -> InputError:
    return InputError(
        f"cannot write {path}: {exc.strerror or exc} ({_errno_name(exc)}); the previous "
        f"file, if any, is unchanged"
    )


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", encoding: str | None = "utf-8"):
    """Open ``path`` for writing so that it is replaced atomically when the block ends.

    Parameters
    ----------
    path : str or os.PathLike
        Destination file: a regular file or a new path, in an existing, writable directory
        (see ``check_output_path``; symbolic links, devices, FIFOs, sockets and
        directories are refused with ``InputError``).
    mode : str
        A write mode: ``"w"`` (text), ``"wb"`` (binary), or with ``"+"`` to allow reading
        back what was written (``"w+b"`` lets ``zipfile`` append to the file).
    encoding : str or None
        Text encoding for text modes (default UTF-8); ignored for binary modes.

    Text modes write ``"\\n"`` unchanged on every platform (no newline translation).

    Yields
    ------
    The open file object.  On normal exit it is flushed, fsynced and renamed over ``path``.
    On any exception the temporary file is deleted, ``path`` is left untouched, and the
    exception propagates; a failed write (no space, quota, permission, read-only file
    system) becomes ``InputError`` saying so.
    """
    binary = _check_mode(mode)
    path = _check_destination(Path(os.fspath(path)), None)
    directory = path.parent
    _remove_stale_temps(directory, path.name)

    try:
        fd, tmp = _create_temp(directory, path.name)
    except OSError as exc:
        raise _write_failed(path, exc) from None
    try:
        if binary:
            fh = os.fdopen(fd, mode)
        else:
            fh = os.fdopen(fd, mode, encoding=encoding or "utf-8", newline="")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

    try:
        try:
            yield fh
        except OSError as exc:
            if exc.errno in _WRITE_ERRNOS:
                raise _write_failed(path, exc) from None
            raise
        try:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            _check_kind(path, None)  # something may have appeared there while we wrote
            os.replace(tmp, path)
        except OSError as exc:
            raise _write_failed(path, exc) from None
    except BaseException:
        # closing flushes what is buffered and may fail again (disk still full); the file
        # descriptor is closed regardless
        with contextlib.suppress(OSError, ValueError):
            fh.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)
