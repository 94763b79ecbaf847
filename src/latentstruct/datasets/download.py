"""Fetching one file, checked and atomic.

A file is streamed from its URL into a temporary file beside its destination, its SHA-256
computed on the way, and renamed into place only when the digest is the expected one
(``latentstruct.data.atomic.atomic_write``): an interrupted download, a broken connection
or a wrong checksum leaves nothing behind, and a file already in place is never touched.
Archives (zip, tar, gzip) are downloaded into a temporary folder, checked when their digest
is known, and the member is extracted the same way.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import os
import shutil
import socket
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from latentstruct.data.atomic import atomic_write
from latentstruct.data.progress import progress_bar
from latentstruct.exceptions import LatentStructError
from latentstruct.version import __version__

__all__ = ["FetchError", "ChecksumError", "OfflineError", "sha256_of", "download",
           "install_stream", "open_member",
           "TIMEOUT_S", "MAX_DOWNLOAD_BYTES"]

#: seconds a connection may stay silent before the download is given up
TIMEOUT_S = 60.0
#: the largest download accepted (the largest source, EWT's train file, is 14 MB)
MAX_DOWNLOAD_BYTES = 512 * 2**20
_CHUNK = 1 << 16
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, socket.timeout,
                   ConnectionError, TimeoutError)


class FetchError(LatentStructError):
    """A corpus could not be fetched: no network, a wrong checksum, a file in the way, or
    terms to accept first.  The message says what to do (the command line exits 1)."""


def sha256_of(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _request(url: str):
    request = urllib.request.Request(url, headers={
        "User-Agent": f"latentstruct/{__version__} (dataset fetcher)"})
    return urllib.request.urlopen(request, timeout=TIMEOUT_S)  # noqa: S310 - http(s) only


def _check_scheme(url: str) -> None:
    if not url.startswith(("https://", "http://")):
        raise FetchError(f"{url}: only http and https URLs are fetched")


def _copy_checked(response, handle, url: str, desc: str) -> str:
    """Copy ``response`` into ``handle``; return the SHA-256 of what was copied.  A response
    that ends before its declared length (a broken connection) or grows past the limit is a
    FetchError."""
    headers = getattr(response, "headers", None)  # an HTTP response; an archive member has none
    declared = headers.get("Content-Length") if headers is not None else None
    total = int(declared) if declared and declared.isdigit() else None
    if total is not None and total > MAX_DOWNLOAD_BYTES:
        raise FetchError(f"{url} declares {total} bytes, more than the {MAX_DOWNLOAD_BYTES} "
                         f"a corpus file may have; not downloaded")
    digest, n = hashlib.sha256(), 0
    with progress_bar(total or 0, desc, unit="B") as bar:
        while True:
            chunk = response.read(_CHUNK)
            if not chunk:
                break
            n += len(chunk)
            if n > MAX_DOWNLOAD_BYTES:
                raise FetchError(f"{url} sent more than {MAX_DOWNLOAD_BYTES} bytes; stopped, "
                                 f"nothing kept")
            digest.update(chunk)
            handle.write(chunk)
            bar.update(len(chunk))
    if total is not None and n != total:
        raise FetchError(f"the download of {url} stopped after {n} of {total} bytes (the "
                         f"connection broke); nothing was kept: run the fetch again")
    return digest.hexdigest()


class ChecksumError(FetchError):
    """What was downloaded is not what the registry expects; the caller adds where to put
    the right file by hand."""


def _mismatch(what: str, url: str, got: str, expected: str) -> FetchError:
    return ChecksumError(f"{what} from {url} has SHA-256 {got}, not the expected {expected}: "
                         f"the download is damaged or the source changed; nothing was kept. "
                         f"Run the fetch again; if it persists, the source no longer serves "
                         f"this version")


def download(url: str, folder: Path, *, sha256: str | None, desc: str,
             name: str = "download") -> Path:
    """``url`` downloaded into ``folder`` (a temporary folder the caller removes) as
    ``name``, checked against ``sha256`` when given; returns its path."""
    _check_scheme(url)
    target = Path(folder) / name
    try:
        with _request(url) as response, open(target, "wb") as handle:
            got = _copy_checked(response, handle, url, desc)
    except FetchError:
        target.unlink(missing_ok=True)
        raise
    except _NETWORK_ERRORS as exc:
        target.unlink(missing_ok=True)
        raise _offline(url, exc) from None
    if sha256 is not None and got != sha256:
        target.unlink(missing_ok=True)
        raise _mismatch("the archive", url, got, sha256)
    return target


def _offline(url: str, exc) -> FetchError:
    reason = getattr(exc, "reason", None) or exc
    return OfflineError(url, f"{type(exc).__name__}: {reason}")


class OfflineError(FetchError):
    """The network failed; the caller adds where to put the file by hand."""

    def __init__(self, url: str, reason: str):
        self.url, self.reason = url, reason
        super().__init__(f"could not download {url} ({reason})")


def install_stream(stream, destination: Path, *, sha256: str, url: str, desc: str,
                   head_lines: int | None = None, what: str | None = None) -> None:
    """Write ``stream`` (a binary file object) to ``destination`` atomically, keeping only
    its first ``head_lines`` lines when given, and only if what was written has the
    digest ``sha256``."""
    with atomic_write(destination, "wb") as handle:
        if head_lines is None:
            got = _copy_checked(stream, handle, url, desc)
        else:
            digest = hashlib.sha256()
            for k, line in enumerate(stream):
                if k == head_lines:
                    break
                digest.update(line)
                handle.write(line)
            got = digest.hexdigest()
        if got != sha256:  # raising inside atomic_write removes the temporary file
            raise _mismatch(what or destination.name, url, got, sha256)


def fetch_url(url: str, destination: Path, *, sha256: str, desc: str,
              what: str | None = None) -> None:
    """Download ``url`` straight to ``destination`` (atomic, checked)."""
    _check_scheme(url)
    try:
        with _request(url) as response:
            install_stream(response, destination, sha256=sha256, url=url, desc=desc,
                           what=what)
    except _NETWORK_ERRORS as exc:
        raise _offline(url, exc) from None


class _ArchiveMember:
    """A context manager giving a binary stream of one member of a downloaded archive."""

    def __init__(self, archive: Path, member: str, url: str):
        self.archive, self.member, self.url = archive, member, url
        self._stack = []

    def __enter__(self):
        path = self.archive
        if zipfile.is_zipfile(path):
            zf = zipfile.ZipFile(path)
            self._stack.append(zf)
            try:
                stream = zf.open(self.member)
            except KeyError:
                raise FetchError(f"{self.url} has no member {self.member!r}") from None
        elif tarfile.is_tarfile(path):
            tf = tarfile.open(path)
            self._stack.append(tf)
            try:
                stream = tf.extractfile(self.member)
            except KeyError:
                stream = None
            if stream is None:
                raise FetchError(f"{self.url} has no file member {self.member!r}")
        else:
            stream = gzip.open(path, "rb")
        self._stack.append(stream)
        return stream

    def __exit__(self, *exc):
        for item in reversed(self._stack):
            item.close()


def open_member(archive: Path, member: str, url: str) -> _ArchiveMember:
    return _ArchiveMember(archive, member, url)


class TemporaryFolder:
    """A temporary folder for downloads, beside the data so that nothing large lands in
    /tmp, removed on exit whatever happened."""

    def __init__(self, parent: Path):
        self.parent = parent

    def __enter__(self) -> Path:
        self.parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=".latentstruct-fetch-", dir=self.parent))
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def same_file_digest(path: Path) -> str | None:
    """The SHA-256 of the regular file at ``path``, or None when there is none."""
    return sha256_of(path) if path.is_file() else None


def remove_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
