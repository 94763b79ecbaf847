"""Where the data sets live (the data home).

The data folder holds one sub-folder per data set (``conll2000``, ``ud_english_ewt``, ...).
It is, in this order:

1. ``$LATENTSTRUCT_DATA`` when set (and not empty);
2. ``../shared/data``, relative to the current working directory, when that folder exists
   (the project's shared data, beside a developer's checkout);
3. ``~/latentstruct_data``, a per-user folder, as scikit-learn's ``get_data_home`` gives
   ``~/scikit_learn_data``; ``latentstruct.datasets``' fetchers download into it.

Data files are never copied into the repository.
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
    "get_data_home",
    "data_home_source",
    "fetch_hint",
    "USER_DATA_HOME",
    "CORPUS_FOLDERS",
    "missing_file_hint",
]

DATA_ENV_VAR = "LATENTSTRUCT_DATA"
DEFAULT_DATA_ROOT = "../shared/data"
#: the per-user data home when neither $LATENTSTRUCT_DATA nor ../shared/data is there
USER_DATA_HOME = "~/latentstruct_data"


#: the corpora's folders in the data home (``latentstruct.datasets`` fetches each)
CORPUS_FOLDERS = ("conll2000", "ud_english_ewt", "ud_basque_bdt", "translit", "cora_citations",
                  "ptb_wsj_sample", "20newsgroups", "ocr_letters", "english_sentences", "msrp",
                  "rte")


def data_root() -> Path:
    """The absolute path of the data folder (it may not exist).

    Read at every call: ``$LATENTSTRUCT_DATA``; else ``../shared/data`` relative to the
    current working directory if it exists; else ``~/latentstruct_data``.
    """
    raw = os.environ.get(DATA_ENV_VAR)
    if raw:
        return Path(raw).expanduser().resolve()
    shared = Path(DEFAULT_DATA_ROOT).resolve()
    if shared.is_dir():
        return shared
    return Path(USER_DATA_HOME).expanduser().resolve()


def get_data_home() -> Path:
    """Where ``latentstruct.datasets`` reads and downloads corpora: :func:`data_root`."""
    return data_root()


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
    PosixPath('../shared/data/conll2000/train.txt')
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
    return (f"data set {name!r} not found at {root / name} ({data_home_source()}); "
            f"{fetch_hint(name)}")


def data_home_source() -> str:
    """Where the data folder was taken from, for messages."""
    if os.environ.get(DATA_ENV_VAR):
        return f"data folder taken from ${DATA_ENV_VAR}={os.environ[DATA_ENV_VAR]!r}"
    if Path(DEFAULT_DATA_ROOT).resolve().is_dir():
        return (f"data folder: {DEFAULT_DATA_ROOT!r} relative to the working directory "
                f"{Path.cwd()}, as ${DATA_ENV_VAR} is unset")
    return (f"data folder: the per-user {USER_DATA_HOME}, as ${DATA_ENV_VAR} is unset and "
            f"there is no {DEFAULT_DATA_ROOT} under {Path.cwd()}")


def fetch_hint(name: str | None = None) -> str:
    """How to get a corpus: the fetch command, or the variable naming a folder that has it."""
    what = name or "NAME"
    return (f"download it with `latentstruct data fetch {what}` (or "
            f"latentstruct.datasets.fetch({what!r}); `latentstruct data list` lists the "
            f"corpora), or set {DATA_ENV_VAR} to the folder that holds it")


def missing_file_hint(name) -> str:
    """For a path that does not exist: when it names a corpus's folder (``.../conll2000/
    train.txt``), where the data home is and how to fetch the corpus; else ''."""
    parts = Path(os.fspath(name)).parts
    corpus = next((p for p in parts if p in CORPUS_FOLDERS), None)
    if corpus is None:
        return ""
    inside = parts[parts.index(corpus):]
    return (f"; it is a file of the corpus {corpus!r}, which is at {data_root().joinpath(*inside)} "
            f"in the data home ({data_home_source()}) if present: {fetch_hint(corpus)}")
