import json
import os
import zipfile

import numpy as np
import pytest

import latentstruct
from latentstruct.data.atomic import atomic_write
from latentstruct.data.features import FeatureIndex, feature_index_from_arrays
from latentstruct.data.paths import data_root, dataset_path, missing_data_message
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError
from latentstruct.io import FORMAT_VERSION, inspect_model, load_model, save_model

META = {"task": "pos", "learner": "StructuredSVM", "task_params": {"window": 2},
        "learner_params": {"C": 0.5, "max_iter": 10}}


def arrays():
    return {"coef": np.linspace(-1, 1, 7), "labels": np.array(["NOUN", "VERB"]),
            "counts": np.arange(6, dtype=np.int32).reshape(2, 3)}


def save(path, meta=META, arr=None):
    save_model(path, meta, arrays() if arr is None else arr)
    return path


def rewrite_metadata(src, dst, change):
    """Copy model file src to dst with its metadata.json passed through ``change``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            data = zin.read(item)
            if item == "metadata.json":
                meta = json.loads(data)
                change(meta)
                data = json.dumps(meta).encode()
            zout.writestr(item, data)
    return dst


def leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ------------------------------------------------------------------------ atomic_write
def test_atomic_write_text_and_binary(tmp_path):
    path = tmp_path / "out.txt"
    with atomic_write(path) as fh:
        fh.write("héllo\nworld\n")
        assert not path.exists()  # nothing visible until the block ends
    assert path.read_bytes() == "héllo\nworld\n".encode()
    with atomic_write(path, "wb") as fh:
        fh.write(b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert leftovers(tmp_path) == []


def test_atomic_write_leaves_existing_file_untouched_on_error(tmp_path):
    path = tmp_path / "keep.txt"
    path.write_text("original\n")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_write(path) as fh:
            fh.write("half-written")
            raise RuntimeError("boom")
    assert path.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
    with pytest.raises(RuntimeError):
        with atomic_write(tmp_path / "new.bin", "wb") as fh:
            fh.write(b"x")
            raise RuntimeError("boom")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_atomic_write_bad_mode_and_missing_directory(tmp_path):
    with pytest.raises(ConfigError, match="write mode"):
        with atomic_write(tmp_path / "x", "r"):
            pass
    with pytest.raises(InputError, match="does not exist"):
        with atomic_write(tmp_path / "no" / "x"):
            pass


def test_atomic_write_permissions_follow_umask(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "p.txt") as fh:
            fh.write("x")
    finally:
        os.umask(old)
    assert (tmp_path / "p.txt").stat().st_mode & 0o777 == 0o644


# ------------------------------------------------------------------------------- paths
def test_data_root_env_and_default(tmp_path, monkeypatch):
    monkeypatch.setenv("LATENTSTRUCT_DATA", str(tmp_path))
    assert data_root() == tmp_path.resolve()
    assert dataset_path("conll2000", "train.txt") == tmp_path.resolve() / "conll2000" / "train.txt"
    assert "LATENTSTRUCT_DATA" in missing_data_message("conll2000")
    monkeypatch.delenv("LATENTSTRUCT_DATA")
    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # no ../shared/data beside the working directory: the per-user folder
    assert data_root() == (tmp_path / "home" / "latentstruct_data").resolve()
    assert "fetch conll2000" in missing_data_message("conll2000")
    # the project's shared data beside a checkout, when it exists
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert data_root() == (tmp_path / "shared" / "data").resolve()
    with pytest.raises(ConfigError, match="relative path"):
        dataset_path("../etc")


# ------------------------------------------------------------------------- model files
def test_save_load_round_trip(tmp_path):
    index = FeatureIndex().fit([["w=the", "tab\tname", "é\x00"]])
    arr = {**arrays(), **index.to_arrays(prefix="features/")}
    meta = {**META, "n_iter": np.int64(3), "objective": np.float64(1.25), "classes": ("a", "b")}
    path = save(tmp_path / "m.npz", meta, arr)
    loaded_meta, loaded = load_model(path, expected_task="pos")
    assert loaded_meta["format_version"] == FORMAT_VERSION == 1
    assert loaded_meta["library_version"] == latentstruct.__version__
    assert loaded_meta["array_names"] == list(arr)
    assert loaded_meta["n_iter"] == 3 and type(loaded_meta["n_iter"]) is int
    assert loaded_meta["objective"] == 1.25 and loaded_meta["classes"] == ["a", "b"]
    assert loaded_meta["task_params"] == {"window": 2}
    assert set(loaded) == set(arr)
    for name, value in arr.items():
        np.testing.assert_array_equal(loaded[name], value)
        assert loaded[name].dtype == value.dtype
    assert feature_index_from_arrays(loaded, "features/").names == index.names
    assert inspect_model(path) == loaded_meta
    # The file is a plain .npz that numpy opens without pickle, plus metadata.json.
    with np.load(path, allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["coef"], arr["coef"])
    assert "metadata.json" in zipfile.ZipFile(path).namelist()
    assert leftovers(tmp_path) == []


def test_save_rejects_objects_and_missing_keys(tmp_path):
    path = tmp_path / "m.npz"
    with pytest.raises(ModelFormatError, match=r"metadata\['learner_params'\]\['f'\].*not JSON"):
        save_model(path, {**META, "learner_params": {"f": object()}}, {})
    with pytest.raises(ModelFormatError, match="dtype object"):
        save_model(path, META, {"a": np.array([{}, None], dtype=object)})
    with pytest.raises(ModelFormatError, match="required key 'learner'"):
        save_model(path, {k: v for k, v in META.items() if k != "learner"}, {})
    with pytest.raises(ModelFormatError, match="keys must be strings"):
        save_model(path, {**META, "task_params": {1: "x"}}, {})
    assert not path.exists()


def test_save_failure_keeps_previous_model(tmp_path):
    path = save(tmp_path / "m.npz")
    before = path.read_bytes()
    with pytest.raises(ModelFormatError):
        save_model(path, {**META, "bad": object()}, arrays())
    assert path.read_bytes() == before


def test_version_mismatch(tmp_path):
    path = rewrite_metadata(save(tmp_path / "m.npz"), tmp_path / "v2.npz",
                            lambda m: m.update(format_version=2))
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    message = str(info.value)
    assert "format version 2" in message and "reads format version 1" in message
    assert str(path) in message


def test_wrong_task(tmp_path):
    path = save(tmp_path / "m.npz")
    with pytest.raises(ModelFormatError) as info:
        load_model(path, expected_task="chunk")
    assert f"model file {path} is a 'pos' model, expected 'chunk'" in str(info.value)
    with pytest.raises(ModelFormatError, match="expected 'chunk'"):
        inspect_model(path, expected_task="chunk")


def test_truncated_file(tmp_path):
    data = save(tmp_path / "m.npz").read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    for reader in (load_model, inspect_model):
        with pytest.raises(ModelFormatError) as info:
            reader(cut)
        assert str(cut) in str(info.value)
        assert "truncated or not a latentstruct model" in str(info.value)


def test_corrupted_array_bytes(tmp_path):
    path = save(tmp_path / "m.npz", arr={"w": np.random.default_rng(0).random(2000)})
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="truncated or not a latentstruct model"):
        load_model(path)


def test_zip_without_metadata(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, coef=np.ones(3))
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    assert "no metadata.json member" in str(info.value) and str(path) in str(info.value)


def test_not_a_zip_and_missing_file(tmp_path):
    path = tmp_path / "text.npz"
    path.write_text("hello")
    with pytest.raises(ModelFormatError, match="not a latentstruct model"):
        load_model(path)
    with pytest.raises(ModelFormatError, match="no such file: .*absent.npz"):
        load_model(tmp_path / "absent.npz")


@pytest.mark.parametrize("key", ["task", "learner", "task_params", "learner_params",
                                 "array_names", "format_version"])
def test_missing_metadata_key(tmp_path, key):
    path = rewrite_metadata(save(tmp_path / "m.npz"), tmp_path / "bad.npz",
                            lambda m: m.pop(key))
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    assert f"lacks the required key {key!r}" in str(info.value)
    assert str(path) in str(info.value)


def test_wrong_metadata_types_and_missing_array(tmp_path):
    src = save(tmp_path / "m.npz")
    bad = rewrite_metadata(src, tmp_path / "t.npz", lambda m: m.update(task_params=[1]))
    with pytest.raises(ModelFormatError, match="'task_params' must be a JSON object, got list"):
        load_model(bad)
    bad = rewrite_metadata(src, tmp_path / "a.npz",
                           lambda m: m["array_names"].append("ghost"))
    with pytest.raises(ModelFormatError, match="missing from the file: 'ghost'"):
        load_model(bad)
    bad = rewrite_metadata(src, tmp_path / "b.npz", lambda m: m.update(format_version="1"))
    with pytest.raises(ModelFormatError, match="'format_version' must be an integer"):
        load_model(bad)
