"""Atomic file writing: a file is either completely written or not touched at all.

``atomic_write`` writes into a temporary file in the destination directory, flushes and
fsyncs it, and then renames it over the destination with ``os.replace`` (atomic on POSIX
and Windows when both are on the same file system).  If the body of the ``with`` block
raises, the temporary file is removed and an existing file at the destination is left
exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from latentstruct.exceptions import ConfigError, InputError

__all__ = ["atomic_write"]

_ALLOWED_MODE_CHARS = frozenset("wb+t")


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


def _create_temp(directory: Path, name: str) -> tuple[int, Path]:
    """Create a new, empty temporary file next to the destination; return (fd, path).

    The file is created with permissions 0o666 filtered by the process umask, like a file
    made by ``open(path, "w")`` (``tempfile.mkstemp`` would make it 0o600).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = directory / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise OSError(f"could not create a unique temporary file in {directory}")


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


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", encoding: str | None = "utf-8"):
    """Open ``path`` for writing so that it is replaced atomically when the block ends.

    Parameters
    ----------
    path : str or os.PathLike
        Destination file.  Its directory must exist.
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
    exception propagates.
    """
    binary = _check_mode(mode)
    path = Path(path)
    directory = path.parent
    if not directory.is_dir():
        raise InputError(
            f"cannot write {path}: directory {directory} does not exist; create it first"
        )
    if path.is_dir():
        raise InputError(f"cannot write {path}: it is a directory, expected a file path")

    fd, tmp = _create_temp(directory, path.name)
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
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)
