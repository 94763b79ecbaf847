"""latentstruct.datasets (issue 52): corpora fetched over real HTTP from a local server.

No mock: each test starts a threaded HTTP server on 127.0.0.1 that serves fixture bytes
(or, for the mirror test, the real corpora of ``$LATENTSTRUCT_DATA``), and the fetchers
download from it with their own code: checksums, atomic writes, interrupted transfers, files
in the way, archives and their members, the offline message, the terms-to-accept message,
and the command line.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import pickle
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from latentstruct.data.paths import DATA_ENV_VAR, data_root
from latentstruct.datasets import (DATASETS, FetchError, fetch, fetch_msrp, fetch_ud,
                                   list_datasets)
from latentstruct.datasets.builders import (arrays_digest, letters_arrays, manifest_digest,
                                            newsgroups_lines)
from latentstruct.datasets.registry import Corpus, FileSpec, Source
from latentstruct.datasets.reuters import clean_markup, keep, paragraphs


# --------------------------------------------------------------------------------------
# a real HTTP server
# --------------------------------------------------------------------------------------
class Server:
    """Serves ``routes[path] = bytes``; ``cut[path] = n`` sends the full Content-Length but
    only ``n`` bytes, then closes (a broken connection); ``folder`` serves files from disk."""

    def __init__(self, folder: Path | None = None):
        self.routes: dict[str, bytes] = {}
        self.cut: dict[str, int] = {}
        self.requests: list[str] = []
        self.folder = folder
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                server.requests.append(self.path)
                body = server.routes.get(self.path)
                if body is None and server.folder is not None:
                    path = (server.folder / self.path.lstrip("/")).resolve()
                    if path.is_file() and server.folder in path.parents:
                        body = path.read_bytes()
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                n = server.cut.get(self.path)
                self.wfile.write(body if n is None else body[:n])
                if n is not None:
                    self.wfile.flush()
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


TEXT = b"".join(b"line %d of a small corpus\n" % k for k in range(2000))


def corpus(server, *, path="/corpus.txt", body=TEXT, expected=None, name="toy") -> Corpus:
    server.routes[path] = body
    return Corpus(name=name, title="a toy corpus", license="CC0",
                   files=(FileSpec("train.txt", expected or sha(TEXT), len(TEXT),
                                   Source(server.url + path)),),
                   splits={"train": "train.txt"})


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


# --------------------------------------------------------------------------------------
# downloading
# --------------------------------------------------------------------------------------
def test_a_file_is_downloaded_checked_and_not_downloaded_again(tmp_path):
    with Server() as server:
        dataset = corpus(server)
        bunch = fetch(dataset, data_home=tmp_path)
        assert bunch.train == tmp_path / "toy" / "train.txt" and bunch.folder == tmp_path / "toy"
        assert bunch.train.read_bytes() == TEXT
        assert server.requests == ["/corpus.txt"]
        again = fetch(dataset, data_home=tmp_path)
        assert again.train == bunch.train and server.requests == ["/corpus.txt"]
    assert leftovers(tmp_path) == ["toy", "train.txt"]


def test_a_checksum_mismatch_is_refused_and_nothing_is_written(tmp_path):
    with Server() as server:
        dataset = corpus(server, body=TEXT.replace(b"line 7 ", b"line 8 "))
        with pytest.raises(FetchError, match=r"toy/train.txt from http://127.0.0.1:\d+/corpus.txt "
                                             r"has SHA-256 [0-9a-f]{64}, not the expected"):
            fetch(dataset, data_home=tmp_path)
    assert not (tmp_path / "toy" / "train.txt").exists()
    assert [n for n in leftovers(tmp_path) if n not in ("toy",)] == []


def test_an_interrupted_download_leaves_nothing_half_written(tmp_path):
    with Server() as server:
        dataset = corpus(server)
        server.cut["/corpus.txt"] = len(TEXT) // 2
        with pytest.raises(FetchError, match=r"stopped after|could not download"):
            fetch(dataset, data_home=tmp_path)
        assert leftovers(tmp_path) in ([], ["toy"])  # no partial file, no temporary file
        del server.cut["/corpus.txt"]
        assert fetch(dataset, data_home=tmp_path).train.read_bytes() == TEXT


def test_a_file_in_the_way_is_left_alone(tmp_path):
    (tmp_path / "toy").mkdir()
    mine = tmp_path / "toy" / "train.txt"
    mine.write_bytes(b"my own notes\n")
    with Server() as server:
        with pytest.raises(FetchError, match="exists but is not a toy corpus's train.txt .*"
                                             "left as it is"):
            fetch(corpus(server), data_home=tmp_path)
        assert server.requests == []
    assert mine.read_bytes() == b"my own notes\n"


def test_members_of_zip_gzip_and_tar_archives_and_head_lines(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("toy/README", b"not this one")
        zf.writestr("toy/train.txt", TEXT)
    archive = buffer.getvalue()
    whole = TEXT + b"held-out line\n" * 5
    with Server() as server:
        server.routes["/toy.zip"] = archive
        server.routes["/whole.txt.gz"] = gzip.compress(whole)
        dataset = Corpus(name="toy", title="a toy corpus", license="CC0", files=(
            FileSpec("train.txt", sha(TEXT), len(TEXT),
                     Source(server.url + "/toy.zip", member="toy/train.txt", sha256=sha(archive))),
            FileSpec("head.txt", sha(TEXT), len(TEXT),
                     Source(server.url + "/whole.txt.gz", member="whole.txt"), head_lines=2000)))
        fetch(dataset, data_home=tmp_path)
    assert (tmp_path / "toy" / "train.txt").read_bytes() == TEXT
    assert (tmp_path / "toy" / "head.txt").read_bytes() == TEXT


def test_a_damaged_archive_is_refused_by_its_own_digest(tmp_path):
    with Server() as server:
        server.routes["/toy.zip"] = b"PK\x03\x04 not really a zip"
        dataset = Corpus(name="toy", title="a toy corpus", license="CC0", files=(
            FileSpec("train.txt", sha(TEXT), len(TEXT),
                     Source(server.url + "/toy.zip", member="toy/train.txt", sha256="0" * 64)),))
        with pytest.raises(FetchError, match="the archive from .* has SHA-256"):
            fetch(dataset, data_home=tmp_path)
    assert leftovers(tmp_path) in ([], ["toy"])


def test_offline_the_error_says_which_file_to_put_where(tmp_path):
    with Server() as server:
        url = server.url
    dataset = Corpus(name="toy", title="a toy corpus", license="CC0", files=(
        FileSpec("train.txt", sha(TEXT), len(TEXT), Source(url + "/corpus.txt")),))
    with pytest.raises(FetchError) as info:  # the server is gone: connection refused
        fetch(dataset, data_home=tmp_path)
    message = str(info.value)
    assert message.startswith(f"could not download {url}/corpus.txt (URLError")
    assert f"{tmp_path / 'toy' / 'train.txt'} must be {url}/corpus.txt (SHA-256 {sha(TEXT)})" \
        in message
    assert f"set {DATA_ENV_VAR} to its parent" in message


def test_download_if_missing_false_names_what_is_missing(tmp_path):
    with pytest.raises(FetchError, match=r"UD English EWT 2.16 .* is not in .*ud_english_ewt: "
                                         r"offline, put the file there yourself"):
        fetch_ud("en_ewt", data_home=tmp_path, download_if_missing=False)


def test_corpora_under_terms_say_where_to_get_them_and_where_to_put_them(tmp_path):
    with pytest.raises(FetchError) as info:
        fetch_msrp(data_home=tmp_path)
    message = str(info.value)
    assert "Microsoft Research Paraphrase Corpus" in message
    assert "Microsoft Download Center" in message
    assert str(tmp_path / "msrp" / "train.tsv") in message
    with pytest.raises(FetchError, match="no corpus named 'conll'; the corpora are "):
        fetch("conll", data_home=tmp_path)
    with pytest.raises(FetchError, match="no UD treebank 'fr_gsd' here; known: en_ewt, eu_bdt"):
        fetch_ud("fr_gsd", data_home=tmp_path)


# --------------------------------------------------------------------------------------
# the real corpora, through a mirror of the data folder
# --------------------------------------------------------------------------------------
def test_real_corpora_fetched_from_a_local_mirror(tmp_path, require_data):
    root = require_data("translit").parent
    require_data("ptb_wsj_sample")
    require_data("ocr_letters")
    with Server(folder=root) as server:
        for name in ("translit", "ptb_wsj_sample", "ocr_letters", "cora_citations"):
            fetch(name, data_home=tmp_path, mirror=server.url + "/")
        n_requests = len(server.requests)
        rows = {r["name"]: r for r in list_datasets(tmp_path)}
        assert all(rows[n]["present"] is True
                   for n in ("translit", "ptb_wsj_sample", "ocr_letters", "cora_citations"))
        fetch("translit", data_home=tmp_path, mirror=server.url)  # present: no request
        assert len(server.requests) == n_requests
    for spec in DATASETS["translit"].files:
        assert (tmp_path / "translit" / spec.path).read_bytes() == \
               (root / "translit" / spec.path).read_bytes()
    assert sorted(p.name for p in (tmp_path / "ptb_wsj_sample" / "dependency").iterdir()) == \
        [f"wsj_{k:04d}.dp" for k in range(1, 143)]


def test_the_registry_matches_the_shared_copies(require_data):
    """Every digest and size in the registry is the shared data's (the copies the figures
    were measured on)."""
    require_data("conll2000")
    rows = {r["name"]: r for r in list_datasets(data_root())}
    assert {n: r["present"] for n, r in rows.items()} == {n: True for n in DATASETS}
    for dataset in DATASETS.values():
        for spec in dataset.files:
            path = data_root() / dataset.name / spec.path
            size = (sum(p.stat().st_size for p in path.iterdir()) if path.is_dir()
                    else path.stat().st_size)
            assert size == spec.size, (dataset.name, spec.path)


# --------------------------------------------------------------------------------------
# what the builders make
# --------------------------------------------------------------------------------------
def test_20newsgroups_lines_reproduce_the_shared_file(require_data, tmp_path):
    """scikit-learn's arrays (here read by its own load_files from a folder tree, as
    fetch_20newsgroups reads the bydate archive) give the shared train.jsonl byte for byte."""
    from sklearn.datasets import load_files

    path = require_data("20newsgroups", "train.jsonl")
    lines = path.read_bytes().split(b"\n")[:-1]
    rows = [json.loads(line) for line in lines[::500]]  # a spread of 23 posts
    for row in rows:
        folder = tmp_path / row["label"]
        folder.mkdir(exist_ok=True)
        (folder / row["id"]).write_bytes(row["text"].encode("latin-1"))
    bunch = load_files(tmp_path, encoding="latin1", shuffle=False)
    content = newsgroups_lines(bunch.data, bunch.filenames, bunch.target, bunch.target_names)
    assert content == b"\n".join(lines[::500]) + b"\n"


def test_letters_are_read_from_a_pickle_of_arrays_only(tmp_path):
    raw = {"data": [np.ones((2, 128), np.uint8), np.zeros((3, 128), np.uint8)],
           "labels": [np.array([1, 2]), np.array([3, 4, 5])], "word": ["ab", "cde"],
           "folds": np.array([0, 1])}
    arrays = letters_arrays(pickle.dumps(raw, protocol=2))
    assert arrays["pixels"].shape == (5, 128) and arrays["lengths"].tolist() == [2, 3]
    assert arrays["labels"].tolist() == [1, 2, 3, 4, 5] and arrays["words"].tolist() == \
        ["ab", "cde"]
    assert arrays_digest(arrays) == arrays_digest(dict(arrays))

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))
    with pytest.raises(FetchError, match=r"names (__builtin__|builtins).print; only numpy arrays"):
        letters_arrays(pickle.dumps({"data": [Evil()]}, protocol=2))


def test_the_treebank_manifest_is_sha256sums_lines():
    files = {"wsj_0002.dp": b"b", "wsj_0001.dp": b"a"}
    listing = f"{sha(b'a')}  wsj_0001.dp\n{sha(b'b')}  wsj_0002.dp\n"
    assert manifest_digest(files) == sha(listing.encode())


def test_the_reuters_recipe_on_an_article():
    body = ("Showers continued throughout the week in\nthe Bahia zone, said\n<Comissaria "
            "Smith> <CSMI.L>.\n    The dry period means the temporao will be late.\n"
            "    Shr 10 cts vs 12 cts.\n Reuter\n&#3;")
    paras = paragraphs(body)
    assert paras == ["Showers continued throughout the week in the Bahia zone, said "
                     "<Comissaria Smith> <CSMI.L>.",
                     "The dry period means the temporao will be late.",
                     "Shr 10 cts vs 12 cts."]
    assert clean_markup(paras[0]).endswith("said Comissaria Smith.")
    assert [keep(clean_markup(p)) for p in paras] == [True, True, False]
    assert not keep("Too short.") and not keep("IT IS ALL IN CAPITALS HERE.")
    assert not keep("A price of [10] dlrs was paid today.")


# --------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------
def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "latentstruct", *args], capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.mark.slow
def test_data_list_and_fetch_on_the_command_line(tmp_path):
    with Server() as server:
        server.routes["/translit/he/train.tsv"] = b"x\ty\n"
        listed = run_cli("data", "list", "--data-home", str(tmp_path))
        assert listed.returncode == 0
        assert f"data home: {tmp_path}" in listed.stdout
        assert "conll2000" in listed.stdout and "missing" in listed.stdout
        rows = [json.loads(line) for line in run_cli(
            "data", "list", "--data-home", str(tmp_path), "--format", "json").stdout.splitlines()]
        assert {r["name"] for r in rows} == set(DATASETS)
        bad = run_cli("data", "fetch", "translit", "--data-home", str(tmp_path),
                      "--mirror", server.url)
        assert bad.returncode == 1
        assert "translit/he/train.tsv from" in bad.stderr and "nothing was kept" in bad.stderr
        assert "offline, put the file there yourself" in bad.stderr
        assert not (tmp_path / "translit" / "he" / "train.tsv").exists()
        manual = run_cli("data", "fetch", "rte", "--data-home", str(tmp_path))
        assert manual.returncode == 1 and "gluebenchmark.com" in manual.stderr
        usage = run_cli("data", "fetch", "all", "conll2000", "--data-home", str(tmp_path))
        assert usage.returncode == 2 and "give 'all' alone" in usage.stderr


def test_a_missing_corpus_file_names_the_variable_and_the_fetch_command(tmp_path, monkeypatch):
    from latentstruct.data.readers import read_conll2000
    from latentstruct.exceptions import InputError

    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(InputError) as info:
        read_conll2000(tmp_path / "elsewhere" / "conll2000" / "train.txt")
    message = str(info.value)
    assert f"which is at {tmp_path / 'conll2000' / 'train.txt'} in the data home" in message
    assert f"${DATA_ENV_VAR}='{tmp_path}'" in message
    assert "`latentstruct data fetch conll2000`" in message
    with pytest.raises(InputError) as info:  # not a corpus: no hint
        read_conll2000(tmp_path / "mine.txt")
    assert "data fetch" not in str(info.value)


@pytest.mark.slow
def test_data_path_prints_a_file_of_a_present_corpus(require_data):
    root = require_data("conll2000").parent
    out = run_cli("data", "path", "conll2000", "train", "--data-home", str(root))
    assert out.returncode == 0 and out.stdout.strip() == str(root / "conll2000" / "train.txt")
    out = run_cli("data", "path", "en_ewt", "--data-home", str(root))
    assert out.stdout.strip() == str(root / "ud_english_ewt")
    out = run_cli("data", "path", "conll2000", "test", "--data-home", str(root))
    assert out.returncode == 2
    assert "corpus 'conll2000' has no file 'test'; its files: train" in out.stderr
