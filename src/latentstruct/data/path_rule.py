"""One rule for the paths a command reads and writes, and streams read exactly once.

**The path rule** (:func:`check_paths`).  Before any work, a command declares the paths it
reads (``{option: path}``) and writes (``{option: path}``).  Each path is resolved
(``os.path.realpath``, and ``os.stat``'s device and inode where the file exists, so a
symbolic link, a hard link and ``./x`` against ``x`` are all seen through), and the command
is refused with one line naming both options when an output is the same file as one of
its inputs (a model written over its training data, ``--output`` over ``--input``) or as
another output (``--checkpoint`` over ``--model``).  Every output then passes
:func:`~latentstruct.data.atomic.check_output_path` (no symbolic link, directory, device,
FIFO or socket; an existing, writable directory, checked with a real probe file), and
every model-like input must be a regular file (a zip archive needs random access; opening
a FIFO would block).  ``-`` is standard input or standard output where a command takes
it, and is never the same file as anything.

**Streams** (:func:`open_input`, the one opening function of every reader).  Standard input
(``-``, ``/dev/stdin``) and already-open descriptors (``/dev/fd/N``, ``/proc/self/fd/N``:
what a shell's process substitution ``<(...)`` passes) can be read only once, yet a reader
may open its input several times (to sniff the format from the first line, then to parse
it; the training-data digest reads it again).  So the first open reads such a stream
whole into memory, at most :func:`max_stream_bytes` (2 GiB, ``$LATENTSTRUCT_MAX_STREAM_BYTES``
to change), and every later open of it in the same process reads that buffer.  Error
messages name the path as given (``/dev/stdin:3: ...``).  Any other FIFO, socket or device
is refused before it is opened: give a regular file, or pipe it to standard input.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from latentstruct.data.atomic import FILE_KINDS, check_output_path
from latentstruct.exceptions import ConfigError, InputError

__all__ = ["check_paths", "open_input", "stream_descriptor", "max_stream_bytes",
           "MAX_STREAM_BYTES_ENV", "DEFAULT_MAX_STREAM_BYTES"]

MAX_STREAM_BYTES_ENV = "LATENTSTRUCT_MAX_STREAM_BYTES"
#: the most bytes read from one stream (standard input, a pipe) into memory
DEFAULT_MAX_STREAM_BYTES = 2 * 1024 ** 3
_CHUNK = 1 << 20

_FD_PATH = re.compile(r"/(?:dev/fd|proc/(?P<pid>self|thread-self|[0-9]+)/fd)/(?P<fd>[0-9]+)")
# what a file that is neither regular nor a directory (nor a link: stat follows it) is
# called in messages: atomic's names, one table for the whole package
_SPECIAL_KINDS = tuple((test, name) for test, name in FILE_KINDS
                       if test not in (stat.S_ISLNK, stat.S_ISDIR))

#: stream contents by (descriptor number, st_dev, st_ino), filled by the first open of the
#: stream (the inode tells a pipe from a later one that reuses the descriptor number)
_STREAMS: dict[tuple[int, int, int], bytes] = {}


def max_stream_bytes() -> int:
    """The most bytes one stream may hold: ``$LATENTSTRUCT_MAX_STREAM_BYTES`` if set, else
    ``DEFAULT_MAX_STREAM_BYTES`` (2 GiB)."""
    return env_byte_limit(MAX_STREAM_BYTES_ENV, DEFAULT_MAX_STREAM_BYTES)


def env_byte_limit(name: str, default: int) -> int:
    """A size limit in bytes from the environment variable ``name`` (``default`` when it
    is unset or blank); anything but a positive integer is a ``ConfigError``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"${name} must be a positive integer number of bytes, got {raw!r}; "
                          f"unset it for the default ({default})")
    return value


def _text(path) -> str:
    text = os.fspath(path)
    return os.fsdecode(text) if isinstance(text, bytes) else text


def stream_descriptor(path) -> int | None:
    """The descriptor number ``path`` names when it is standard input (``-``,
    ``/dev/stdin``) or an already-open descriptor of this process (``/dev/fd/N``,
    ``/proc/self/fd/N``, ``/proc/<this pid>/fd/N``); None for any other path."""
    text = _text(path)
    if text in ("-", "/dev/stdin"):
        return 0
    m = _FD_PATH.fullmatch(os.path.normpath(text)) if text.startswith("/") else None
    if m is None:
        return None
    pid = m["pid"]
    if pid is not None and pid.isdigit() and int(pid) != os.getpid():
        return None  # another process's descriptor: a path like any other
    return int(m["fd"])


def _special_kind(mode: int) -> str | None:
    """What a file of this mode is called when it is neither regular nor a directory."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), "not a regular file")


def _pipe_hint(name: str, option: str | None) -> str:
    flag = option or "the input option"
    return (f"give a regular file, or pipe it to standard input ({flag} - < {name}, or "
            f"cat {name} | latentstruct ... {flag} -)")


def _read_stream(fd: int, name: str) -> bytes:
    """Everything left on descriptor ``fd``, read once (``name`` for messages)."""
    limit = max_stream_bytes()
    buf = io.BytesIO()
    total = 0
    try:
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise InputError(
                    f"more than {limit:,} bytes were read from this stream, the most that is "
                    f"held in memory (a stream is read once, whole); give a regular file "
                    f"instead, or raise ${MAX_STREAM_BYTES_ENV}",
                    name,
                )
            buf.write(chunk)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    return buf.getvalue()


def _open_file(name: str):
    try:
        return open(name, "rb")
    except FileNotFoundError:
        from latentstruct.data.paths import missing_file_hint

        raise InputError(f"no such file: {name} (working directory: {Path.cwd()})"
                         f"{missing_file_hint(name)}") from None
    except IsADirectoryError:
        raise InputError(f"{name} is a directory, expected a file") from None
    except PermissionError:
        raise InputError(f"permission denied: cannot read {name}") from None


def open_input(path):
    """Open the data file ``path`` for reading bytes: the opening function of every reader.

    A regular file is opened as usual.  Standard input (``-``, ``/dev/stdin``) and open
    descriptors (``/dev/fd/N``, ``/proc/self/fd/N``) that are pipes, sockets or terminals
    are read whole on their first open (at most :func:`max_stream_bytes`) and every open
    returns a new reader of that buffer, so sniffing and then parsing see the same bytes.
    Any other FIFO, socket or device is refused without being opened (opening a FIFO with
    no writer blocks forever).  OS errors become ``InputError`` naming ``path``.
    """
    name = _text(path)
    fd = stream_descriptor(name)
    if fd is not None:
        try:
            st = os.fstat(fd)
        except OSError:
            raise InputError(f"no such file: {name} (descriptor {fd} is not open)") from None
        if name != "-" and _special_kind(st.st_mode) is None:
            return _open_file(name)  # a regular file (or directory) behind it: re-openable
        key = (fd, st.st_dev, st.st_ino)
        data = _STREAMS.get(key)
        if data is None:
            data = _STREAMS[key] = _read_stream(fd, name)
        return io.BytesIO(data)
    try:
        mode = os.stat(name).st_mode
    except OSError:
        mode = None  # missing or unreadable: open() says which
    kind = None if mode is None else _special_kind(mode)
    if kind is not None:
        raise InputError(
            f"{name} is {kind}, not a regular file; data is read from regular files or from "
            f"standard input: {_pipe_hint(name, None)}"
        )
    return _open_file(name)


# --------------------------------------------------------------------------------------
# the path rule
# --------------------------------------------------------------------------------------
def _identity(text: str, fd: int | None) -> tuple[str, tuple[int, int] | None]:
    """``(realpath, (st_dev, st_ino) or None)``: what says that two paths are one file."""
    try:
        st = os.fstat(fd) if text == "-" else os.stat(text)
    except (OSError, ValueError):
        st = None
    if text == "-":  # standard input is a file only when redirected from one
        if st is None or not stat.S_ISREG(st.st_mode):
            return "", None
        return "", (st.st_dev, st.st_ino)
    return os.path.realpath(text), None if st is None else (st.st_dev, st.st_ino)


def _same(a, b) -> bool:
    if a[1] is not None and b[1] is not None:
        return a[1] == b[1]
    return bool(a[0]) and a[0] == b[0]


def _check_input(option: str, text: str, *, stdin_ok: bool, regular: bool) -> None:
    if not text:
        raise InputError(f"{option}: the path is empty; give a file path")
    if text == "-":
        if regular or not stdin_ok:
            why = (" (a model file is read with random access)" if regular else "")
            raise InputError(f"{option} -: standard input is not accepted for {option}{why}; "
                             f"give a file path")
        return
    try:
        mode = os.stat(text).st_mode
    except OSError:
        return  # missing or unreadable: the reader reports it with its own message
    kind = _special_kind(mode)
    if kind is None:
        return
    if regular:
        raise InputError(
            f"{option} {text} is {kind}, not a regular file; {option} is read with random "
            f"access (a zip archive), so give the path of the file itself"
        )
    if stream_descriptor(text) is not None:
        return  # standard input or process substitution: read once into memory
    hint = (_pipe_hint(text, option) if stdin_ok else
            f"give a regular file (or pass it as {option} <(cat {text}))")
    raise InputError(f"{option} {text} is {kind}, not a regular file; only regular files, "
                     f"standard input and process substitution are read: {hint}")


def check_paths(inputs: Mapping[str, object] | None = None,
                outputs: Mapping[str, object] | None = None, *,
                stdin: Iterable[str] = (), stdout: Iterable[str] = (),
                regular: Iterable[str] = (),
                same_ok: Iterable[tuple[str, str]] = ()) -> None:
    """Check every path a command reads and writes, before any work; raise ``InputError``.

    Parameters
    ----------
    inputs, outputs : mapping of option name (``"--train"``) to path, or None (not given)
    stdin : input options that take ``-`` for standard input
    stdout : output options that take ``-`` for standard output
    regular : input options that must be regular files (model files, checkpoints: a zip
        archive needs random access, and opening a FIFO blocks)
    same_ok : ``(input option, output option)`` pairs that may name one file (a run that
        resumes from its checkpoint and goes on writing it)

    Refused, each with one line that names the options: an output that is the same file
    as an input or as another output; an input that is a FIFO, socket or device (except
    standard input and process substitution, for data inputs), or ``-`` where not taken;
    an output that ``check_output_path`` refuses (a symbolic link, directory, device, FIFO
    or socket; a missing or unwritable directory, checked by creating and removing a
    temporary file).
    """
    inputs = {k: v for k, v in (inputs or {}).items() if v is not None}
    outputs = {k: v for k, v in (outputs or {}).items() if v is not None}
    stdin, stdout, regular = set(stdin), set(stdout), set(regular)
    same_ok = set(same_ok)
    seen: list[tuple[str, str, tuple]] = []  # (option, path as given, identity)
    for option, path in inputs.items():
        text = _text(path)
        _check_input(option, text, stdin_ok=option in stdin, regular=option in regular)
        seen.append((option, text, _identity(text, 0 if text == "-" else None)))
    written: list[tuple[str, str]] = []
    for option, path in outputs.items():
        text = _text(path)
        if text == "-" and option in stdout:
            continue  # standard output is never the same file as anything
        if text and text != "-":
            ident = _identity(text, None)
            for other, other_text, other_ident in seen:
                if (other, option) in same_ok or not _same(ident, other_ident):
                    continue
                if other in outputs:
                    fix = "one would overwrite the other: give them different paths"
                else:
                    fix = (f"writing {option} would replace the {other} file, which this "
                           f"command reads: give {option} another path")
                shown = "standard input" if other_text == "-" else other_text
                raise InputError(f"{option} {text} is the same file as {other} {shown}; {fix}")
            seen.append((option, text, ident))
        written.append((option, path))
    for option, path in written:
        check_output_path(path, what=option, allow_stdout=option in stdout)
