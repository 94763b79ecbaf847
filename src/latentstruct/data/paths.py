"""Where the shared data sets live.

The data folder holds one sub-folder per data set (``conll2000``, ``ud_english_ewt``, ...),
each with a README.  Point the library at it with the ``LATENTSTRUCT_DATA`` environment
variable; when it is unset (or empty) the default is ``../shared/data``, resolved relative to
the current working directory.  Data files are never copied into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from latentstruct.exceptions import ConfigError

__all__ = [
    "DATA_ENV_VAR",
    "DEFAULT_DATA_ROOT",
    "data_root",
    "dataset_path",
    "dataset_available",
    "missing_data_message",
]

DATA_ENV_VAR = "LATENTSTRUCT_DATA"
DEFAULT_DATA_ROOT = "../shared/data"


def data_root() -> Path:
    """The absolute path of the shared data folder (it may not exist).

    Read from ``$LATENTSTRUCT_DATA`` at every call, default ``../shared/data`` relative to the
    current working directory.
    """
    raw = os.environ.get(DATA_ENV_VAR) or DEFAULT_DATA_ROOT
    return Path(raw).expanduser().resolve()


def _check_relative(part: str, what: str) -> None:
    pure = PurePath(part)
    if pure.is_absolute() or ".." in pure.parts:
        raise ConfigError(
            f"{what} must be a relative path inside the data folder, got {part!r}; "
            f"pass only names such as 'conll2000' and 'train.txt'"
        )


def dataset_path(name: str, *parts: str) -> Path:
    """Path of data set ``name`` (or a file inside it) under ``data_root()``.

    >>> dataset_path("conll2000", "train.txt")  # doctest: +SKIP
    PosixPath('/work/shared/data/conll2000/train.txt')
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"data set name must be a non-empty string, got {name!r}")
    _check_relative(name, "data set name")
    for part in parts:
        _check_relative(os.fspath(part), "path part")
    return data_root().joinpath(name, *parts)


def dataset_available(name: str, *parts: str) -> bool:
    """True when the data set folder (or the given file inside it) exists."""
    return dataset_path(name, *parts).exists()


def missing_data_message(name: str) -> str:
    """A message saying where data set ``name`` was looked for and how to point at it."""
    root = data_root()
    source = (
        f"${DATA_ENV_VAR}={os.environ[DATA_ENV_VAR]!r}"
        if os.environ.get(DATA_ENV_VAR)
        else f"the default {DEFAULT_DATA_ROOT!r} relative to the working directory {Path.cwd()}"
    )
    return (
        f"data set {name!r} not found at {root / name} (data folder taken from {source}); "
        f"set {DATA_ENV_VAR} to the folder that holds the shared data sets"
    )
