"""Hostile model files: size and shape bombs, wrong dtypes, and metadata that tries to act
as configuration (paths to create, modules to import, poisoned parse caches)."""

import io
import json
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

from conftest import rebuild_model_file
from latentstruct.cli import main
from latentstruct.data.features import FeatureIndex
from latentstruct.data.nlp import ALLOWED_PIPELINES, ParsedSentence, Parser
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError
from latentstruct.io import MAX_MODEL_BYTES_ENV, inspect_model, load_model, save_model
from latentstruct.learners.latent.lclr import TwoStage
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.tasks.contracts import params_from_file
from latentstruct.tasks.dependency import DependencyTask
from latentstruct.tasks.grammaticality import GrammaticalityTask
from latentstruct.tasks.pairs import ParaphraseTask, RteTask
from latentstruct.tasks.pairs.task import _FIXED_NAMES

GIB = 2**30


def npy_bytes(array=None, *, header=None):
    """An npy member: a whole array, or only a header dict (claims without data)."""
    buf = io.BytesIO()
    if header is None:
        np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
    else:
        np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


rebuild = rebuild_model_file


def load_in_subprocess(path, loader="load_trained"):
    """Load ``path`` in a fresh interpreter: (outcome message, peak RSS growth in bytes)."""
    code = f"""
import json, resource, sys
from latentstruct.exceptions import ModelFormatError
from latentstruct.learners.persistence import load_trained
from latentstruct.io import load_model
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    {loader}(sys.argv[1])
    outcome = "loaded"
except ModelFormatError as exc:
    outcome = "ModelFormatError: " + str(exc)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"outcome": outcome, "growth": (after - before) * 1024}}))
"""
    done = subprocess.run([sys.executable, "-c", code, str(path)], check=False,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["outcome"], result["growth"]


def coef_of(path):
    with zipfile.ZipFile(path) as zf, zf.open("coef_.npy") as fp:
        return np.lib.format.read_array(fp)


# ---------------------------------------------------------------------- size bombs
@pytest.mark.slow
def test_one_gib_metadata_is_refused_before_it_is_read(chunk_model, tmp_path):
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(chunk_model) as zin, zipfile.ZipFile(
            bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
        for name in zin.namelist():
            if name != "metadata.json":
                zout.writestr(name, zin.read(name))
        with zout.open("metadata.json", "w", force_zip64=True) as fh:  # streamed: 1 GiB real
            fh.write(b'{"pad": "')
            block = b" " * 2**20
            for _ in range(1024):
                fh.write(block)
            fh.write(b'"}')
    assert bomb.stat().st_size < 20 * 2**20
    outcome, growth = load_in_subprocess(bomb)
    assert outcome.startswith("ModelFormatError: ")
    assert "metadata.json would take 1073741835 bytes, above the limit of 16777216" in outcome
    assert growth < 200 * 2**20


def test_metadata_whose_header_claims_a_huge_size(chunk_model, tmp_path):
    # a zip whose central directory claims 1 GiB for a small metadata.json
    data = bytearray(chunk_model.read_bytes())
    with zipfile.ZipFile(chunk_model) as zf:
        info = zf.getinfo("metadata.json")
    name = b"metadata.json"
    pos = data.rfind(b"PK\x01\x02")
    while data[pos + 46:pos + 46 + len(name)] != name:
        pos = data.rfind(b"PK\x01\x02", 0, pos)
    assert int.from_bytes(data[pos + 24:pos + 28], "little") == info.file_size
    data[pos + 24:pos + 28] = GIB.to_bytes(4, "little")  # uncompressed size
    lying = tmp_path / "lying.npz"
    lying.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="above the limit of 16777216 bytes"):
        load_trained(lying)
    with pytest.raises(ModelFormatError, match="metadata.json would take"):
        inspect_model(lying)


@pytest.mark.slow
def test_npy_header_claiming_745_gib_is_refused_before_allocating(chunk_model, tmp_path):
    header = {"descr": "<f8", "fortran_order": False, "shape": (100_000_000_000,)}
    bomb = rebuild(chunk_model, tmp_path / "bomb.npz",
                   members={"coef_.npy": npy_bytes(header=header)})
    outcome, growth = load_in_subprocess(bomb)
    assert "array 'coef_' of shape (100000000000,) and dtype float64 would take " \
           "800000000000 bytes, above the limit" in outcome
    assert MAX_MODEL_BYTES_ENV in outcome
    assert growth < 200 * 2**20


def test_npy_header_disagreeing_with_the_member_size(chunk_model, tmp_path):
    header = {"descr": "<f8", "fortran_order": False, "shape": (1_000_000,)}  # 8 MB claimed
    bad = rebuild(chunk_model, tmp_path / "short.npz",
                  members={"coef_.npy": npy_bytes(header=header) + b"\0" * 16})
    with pytest.raises(ModelFormatError, match=r"declares shape \(1000000,\) .* holds 16 bytes"):
        load_trained(bad)


def test_size_limit_from_the_environment(chunk_model, monkeypatch):
    coef_bytes = coef_of(chunk_model).nbytes
    monkeypatch.setenv(MAX_MODEL_BYTES_ENV, str(coef_bytes - 1))
    with pytest.raises(ModelFormatError, match=f"above the limit of {coef_bytes - 1} bytes"):
        load_trained(chunk_model)
    with zipfile.ZipFile(chunk_model) as zf:
        sizes = [i.file_size for i in zf.infolist() if i.filename != "metadata.json"]
    monkeypatch.setenv(MAX_MODEL_BYTES_ENV, str(max(sizes)))  # each fits, not all together
    with pytest.raises(ModelFormatError, match=f"the arrays together would take {sum(sizes)} "
                                               f"bytes, above the limit of {max(sizes)} bytes"):
        load_trained(chunk_model)
    monkeypatch.setenv(MAX_MODEL_BYTES_ENV, "lots")
    with pytest.raises(ConfigError, match=f"{MAX_MODEL_BYTES_ENV} must be a positive integer"):
        load_trained(chunk_model)
    monkeypatch.setenv(MAX_MODEL_BYTES_ENV, str(10 * coef_bytes))
    _, learner, _ = load_trained(chunk_model)
    np.testing.assert_array_equal(learner.coef_, coef_of(chunk_model))


def test_other_compression_methods_are_refused(chunk_model, tmp_path):
    bz = rebuild(chunk_model, tmp_path / "bz.npz", compression=zipfile.ZIP_BZIP2)
    with pytest.raises(ModelFormatError, match="compression method 12; model files use deflate"):
        load_trained(bz)


def test_an_honest_highly_compressed_array_is_not_taken_for_a_bomb(tmp_path):
    path = tmp_path / "zeros.npz"
    meta = {"task": "pos", "learner": "ssvm", "task_params": {}, "learner_params": {}}
    save_model(path, meta, {"w": np.zeros(4 * 2**20)})  # 32 MiB deflate to ~1000 times less
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("w.npy")
    assert info.file_size > 1000 * info.compress_size
    _, arrays = load_model(path)
    assert arrays["w"].shape == (4 * 2**20,) and not arrays["w"].any()


# ---------------------------------------------------------------------- dtypes and values
@pytest.mark.parametrize("make, fragment", [
    (lambda c: c.astype(np.int64),
     "weight vector 'coef_' has dtype int64; expected float32 or float64"),
    (lambda c: c.astype(str), "array 'coef_' has dtype <U"),
    (lambda c: np.where(np.arange(c.size) == 3, np.nan, c),
     "weight vector 'coef_' has 1 non-finite entries (NaN or infinity; the first at index 3"),
    (lambda c: np.full(c.size, np.inf), "non-finite entries"),
    (lambda c: c.reshape(1, -1), "weight vector 'coef_' has shape (1, "),
    (lambda c: c.astype(np.complex128), "dtype complex128 (kind 'c')"),
    (lambda c: c.view(np.dtype((np.void, 8))), "array 'coef_' has dtype |V8"),
])
def test_bad_weight_vectors_are_refused(chunk_model, tmp_path, make, fragment):
    bad = rebuild(chunk_model, tmp_path / "bad.npz",
                  members={"coef_.npy": npy_bytes(make(coef_of(chunk_model)))})
    with pytest.raises(ModelFormatError) as info:
        load_trained(bad)
    assert fragment in str(info.value) and str(bad) in str(info.value)


def test_object_header_and_text_where_numbers_belong(chunk_model, tmp_path):
    header = {"descr": "|O", "fortran_order": False, "shape": (2,)}
    bad = rebuild(chunk_model, tmp_path / "obj.npz",
                  members={"coef_.npy": npy_bytes(header=header) + b"\0" * 16})
    with pytest.raises(ModelFormatError, match="has dtype object; model arrays are plain"):
        load_trained(bad)
    with zipfile.ZipFile(chunk_model) as zf:
        offsets_name = next(n for n in zf.namelist() if n.endswith("names_offsets.npy"))
        offsets = np.lib.format.read_array(zf.open(offsets_name))
    bad = rebuild(chunk_model, tmp_path / "text.npz",
                  members={offsets_name: npy_bytes(offsets.astype(str))})
    with pytest.raises(ModelFormatError, match=r"has dtype <U\d+ \(kind 'U'\); expected bool, "
                                               r"integer, float;"):
        load_trained(bad)
    # the generic reader still returns text arrays that save_model stored
    _, arrays = load_model(bad)
    assert arrays[offsets_name[:-4]].dtype.kind == "U"


def test_cli_evaluate_with_a_hostile_model_exits_2_with_one_line(chunk_model, tiny_chunk_file,
                                                                 tmp_path, capsys):
    header = {"descr": "<f8", "fortran_order": False, "shape": (100_000_000_000,)}
    bad = rebuild(chunk_model, tmp_path / "bad.npz",
                  members={"coef_.npy": npy_bytes(header=header)})
    code = main(["evaluate", "--model", str(bad), "--test", str(tiny_chunk_file)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("latentstruct: error: model file ") and err.count("\n") == 1
    assert "above the limit" in err
    nan = rebuild(chunk_model, tmp_path / "nan.npz", members={
        "coef_.npy": npy_bytes(np.full(coef_of(chunk_model).size, np.nan))})
    code = main(["evaluate", "--model", str(nan), "--test", str(tiny_chunk_file)])
    _, err = capsys.readouterr()
    assert code == 2 and "non-finite entries" in err and err.count("\n") == 1


# ---------------------------------------------------------------------- metadata is data
def rte_model(path):
    """A small fitted RTE model (feature index of the fixed features) made without parsing."""
    task = RteTask()
    index = FeatureIndex()
    for name in _FIXED_NAMES:
        index.add(name)
    task.feature_index_ = index.freeze()
    task.train_digests_ = np.zeros((0, 20), dtype=np.uint8)
    task.fitted_ = True
    learner = TwoStage(task)
    learner.coef_ = learner.heuristic_coef_ = task.structure_object().heuristic_weights()
    learner.n_iter_, learner.objective_curve_ = 0, []
    save_trained(path, task, learner)
    return path


def test_cache_dir_of_a_model_file_is_never_used(tmp_path):
    evil = tmp_path / "evil"
    path = rebuild(rte_model(tmp_path / "rte.npz"), tmp_path / "hostile.npz",
                   meta=lambda m: m["task_params"].update(cache_dir=str(evil / "parses")))
    task, _, metadata = load_trained(path)
    assert task.cache_dir is None  # the default, not the file's
    assert metadata["task_params"]["cache_dir"] == str(evil / "parses")  # kept as information
    assert not evil.exists()


def test_local_params_take_their_defaults_on_load():
    assert RteTask.local_params == ParaphraseTask.local_params == {"cache_dir"}
    assert params_from_file(DependencyTask, {"tagger_model": "/x/pos.npz", "hash_bits": 10}) == {
        "tagger_model": None, "hash_bits": 10}
    params = params_from_file(GrammaticalityTask,
        {"tagger_model": "/a", "lm_corpus": "/b", "chunker_corpus": "/c", "min_count": 3})
    assert params == {"tagger_model": None, "lm_corpus": None, "chunker_corpus": None,
                      "min_count": 3}


@pytest.mark.parametrize("pipeline", ["os", "json", "iniconfig", "/tmp/some_pipeline_dir"])
def test_pipeline_of_a_model_file_must_be_an_allowed_name(tmp_path, pipeline):
    path = rebuild(rte_model(tmp_path / "rte.npz"), tmp_path / "hostile.npz",
                   meta=lambda m: m["task_params"].update(pipeline=pipeline))
    with pytest.raises(ModelFormatError) as info:
        load_trained(path)
    message = str(info.value)
    assert f"pipeline must be one of the spaCy pipelines {', '.join(ALLOWED_PIPELINES)}" in message
    assert repr(pipeline) in message


def test_pipeline_set_by_the_user_is_checked_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match="en_core_web_sm, en_core_web_md, en_core_web_lg, "
                                          "en_core_web_trf, got 'json'"):
        RteTask(pipeline="json").read(tmp_path / "absent.xml")
    with pytest.raises(ConfigError, match="got 'os'"):
        ParaphraseTask(pipeline="os")._parser()


@pytest.mark.slow
def test_cli_evaluate_never_imports_or_creates_what_the_file_names(tmp_path):
    # in a fresh interpreter, so that sys.modules shows what evaluate imported
    rte = tmp_path / "dev.tsv"
    rte.write_text("index\tsentence1\tsentence2\tlabel\n0\tA cat sat.\tA cat.\tentailment\n",
                   encoding="utf-8")
    evil = tmp_path / "evil"
    path = rebuild(rte_model(tmp_path / "rte.npz"), tmp_path / "hostile.npz",
                   meta=lambda m: m["task_params"].update(pipeline="iniconfig",
                                                          cache_dir=str(evil)))
    code = f"""
import sys
from latentstruct.cli import main
code = main(["evaluate", "--model", {str(path)!r}, "--test", {str(rte)!r}])
print(code, "iniconfig" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert "pipeline must be one of the spaCy pipelines" in done.stderr
    assert done.stderr.count("\n") == 1 and not evil.exists()


@pytest.mark.slow
def test_evaluate_parses_into_the_users_cache_not_the_files(tmp_path, monkeypatch, capsys,
                                                            require_spacy, require_wordnet):
    monkeypatch.setenv("LATENTSTRUCT_CACHE", str(tmp_path / "mine"))
    rte = tmp_path / "dev.tsv"
    rte.write_text("index\tsentence1\tsentence2\tlabel\n0\tA cat sat on the mat.\tA cat sat."
                   "\tentailment\n1\tDogs bark.\tCats fly.\tnot_entailment\n", encoding="utf-8")
    evil = tmp_path / "evil"
    path = rebuild(rte_model(tmp_path / "rte.npz"), tmp_path / "hostile.npz",
                   meta=lambda m: m["task_params"].update(cache_dir=str(evil)))
    assert main(["evaluate", "--model", str(path), "--test", str(rte)]) == 0
    metrics = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert not evil.exists()
    assert list((tmp_path / "mine" / "parses").glob("*.json"))
    # the user's own --option still chooses the folder
    assert main(["evaluate", "--model", str(path), "--test", str(rte),
                 "--option", f"cache_dir={tmp_path / 'chosen'}"]) == 0
    assert list((tmp_path / "chosen").glob("*.json")) and not evil.exists()


# ---------------------------------------------------------------------- poisoned parse cache
def cyclic_entry(text="a  b"):
    """tokens a, SPACE, b, SPACE with the two SPACE tokens heading each other."""
    return {"text": text, "tokens": ["a", " ", "b", " "], "lemmas": ["a", " ", "b", " "],
            "pos": ["NOUN", "SPACE", "NOUN", "SPACE"], "tags": ["NN", "_SP", "NN", "_SP"],
            "ner": ["", "", "", ""], "heads": [1, 3, -1, 1], "deprels": ["dep"] * 4,
            "is_negation": [False] * 4}


def test_cyclic_heads_are_refused_and_without_space_is_bounded():
    with pytest.raises(InputError, match="heads form a cycle through token 1"):
        ParsedSentence.from_dict(cyclic_entry())
    ok = dict(cyclic_entry(), heads=[2, 2, -1, 2])
    sent = ParsedSentence.from_dict(ok)
    assert sent.without_space().heads == (1, -1)
    # even a sentence whose validation was bypassed cannot make without_space loop
    object.__setattr__(sent, "heads", (1, 3, -1, 1))
    with pytest.raises(InputError, match="cycle above token 0"):
        sent.without_space()


def test_poisoned_cache_entry_is_parsed_again_with_a_warning(tmp_path, require_spacy):
    parser = Parser(cache_dir=tmp_path)
    text = "A cat  sat ."
    key = parser.cache_key(text)
    shard = tmp_path / f"{key[:2]}.json"
    shard.write_text(json.dumps({"format": 1, "entries": {key: cyclic_entry(text)}}),
                     encoding="utf-8")
    with pytest.warns(UserWarning, match=f"parse cache entry {key} is damaged .*cycle"):
        (sent,) = parser.parse([text])
    assert parser.stats_.n_parsed == 1 and sent.tokens[:2] == ("A", "cat")
    # the entry was replaced by the real parse: a new parser reads it without warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = Parser(cache_dir=tmp_path)
        assert again.parse([text]) == [sent] and again.stats_.n_disk_hits == 1
