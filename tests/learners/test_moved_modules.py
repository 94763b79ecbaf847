"""The learners' module paths before issue 53 grouped them by concept (``learners.moved``):
model files and checkpoints name a learner by registry name, never by module, and the old
module paths still import (pickles name them), with a DeprecationWarning."""

from __future__ import annotations

import importlib
import json
import pickle
import sys
import warnings

import numpy as np
import pytest

import latentstruct.learners as learners
from latentstruct.learners import LEARNERS, StructuredPerceptron, StructuredSVM
from latentstruct.learners.checkpoint import read_checkpoint
from latentstruct.learners.moved import MOVED_MODULES
from latentstruct.learners.online.online import OnlineState
from latentstruct.learners.persistence import load_trained, save_trained
from latentstruct.io import load_model
from latentstruct.tasks import ChunkTask
from conftest import random_chunk_file


@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    path = random_chunk_file(tmp_path_factory.mktemp("chunk") / "train.txt", 3,
                             n_sent=12, vocab=6)
    task = ChunkTask(window=1, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    return task, task.featurize(ds), list(task.encode_targets(ds.targets))


def test_every_old_path_maps_to_a_module_that_exists():
    for old, new in MOVED_MODULES.items():
        module = importlib.import_module(new)
        assert module.__name__ == new and new.startswith("latentstruct.learners.")
        assert old.count(".") == 2  # all of them sat directly under latentstruct.learners


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_an_old_module_path_imports_with_a_warning(old):
    new = importlib.import_module(MOVED_MODULES[old])
    if old == MOVED_MODULES[old].rsplit(".", 1)[0]:  # now the concept's package itself
        name = new.__all__[0]
        with pytest.warns(DeprecationWarning, match=f"{name} is now {new.__name__}"):
            value = getattr(importlib.import_module(old), name)
        assert value is getattr(new, name)
        return
    sys.modules.pop(old, None)  # imported by an earlier test: import it afresh
    with pytest.warns(DeprecationWarning, match=f"{old} is now {new.__name__}"):
        module = importlib.import_module(old)
    assert module is not new and module.__moved_to__ == new.__name__
    for name in new.__all__:  # the same objects, not copies
        assert getattr(module, name) is getattr(new, name)
    assert set(new.__all__) <= set(dir(module))
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_a_concept_package_does_not_forward_its_own_submodules():
    """The import system asks a package for a submodule (``from latentstruct.learners.ssvm
    import one_slack``) before importing it: the forwarding ``__getattr__`` says it has no
    such attribute, with no warning and without importing the old module's successor."""
    for package in ("latentstruct.learners.ssvm", "latentstruct.learners.online"):
        pkg = importlib.import_module(package)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for sub in ("one_slack", "ssvm") if package.endswith("ssvm") else ("arow", "online"):
                with pytest.raises(AttributeError):
                    pkg.__getattr__(sub)
            with pytest.raises(AttributeError):
                pkg.__getattr__("__wrapped__")  # dunders are never forwarded
    from latentstruct.learners.ssvm import one_slack

    assert one_slack.__name__ == "latentstruct.learners.ssvm.one_slack"


def _with_module(data: bytes, new: str, old: str) -> bytes:
    """A protocol-2 pickle naming ``old`` where it names ``new`` (as an older release
    wrote it): GLOBAL opcodes hold the module as a line of text."""
    assert new.encode() + b"\n" in data
    return data.replace(new.encode() + b"\n", old.encode() + b"\n")


@pytest.mark.parametrize("obj, new, old", [
    (StructuredPerceptron(max_iter=3, average=False), "latentstruct.learners.online.perceptron",
     "latentstruct.learners.perceptron"),
    # the old module ssvm.py is now the package ssvm/, which still gives its names
    (StructuredSVM(C=0.5), "latentstruct.learners.ssvm.ssvm", "latentstruct.learners.ssvm"),
    (OnlineState(np.zeros(2), np.random.default_rng(0), step=3), "latentstruct.learners.online.online",
     "latentstruct.learners.online"),
])
def test_a_pickle_naming_an_old_module_path_loads(obj, new, old):
    data = _with_module(pickle.dumps(obj, protocol=2), new, old)
    if hasattr(sys.modules.get(old), "__moved_to__"):  # imported by an earlier test
        del sys.modules[old]
    with pytest.warns(DeprecationWarning):
        loaded = pickle.loads(data)
    assert type(loaded) is type(obj)
    if hasattr(obj, "get_params"):
        assert loaded.get_params() == obj.get_params()


def test_model_files_and_checkpoints_name_learners_by_registry_name(chunk, tmp_path):
    task, X, Y = chunk
    ck = tmp_path / "run.ckpt.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner = StructuredPerceptron(task, max_iter=2, random_state=0).fit(X, Y, checkpoint=ck)
    save_trained(tmp_path / "m.npz", task, learner)
    for metadata in (load_model(tmp_path / "m.npz")[0], read_checkpoint(ck)[0]):
        assert metadata["learner"] == "perceptron"
        assert "latentstruct.learners" not in json.dumps(metadata)
    _, loaded, _ = load_trained(tmp_path / "m.npz")
    assert type(loaded) is StructuredPerceptron and LEARNERS["perceptron"] is StructuredPerceptron
    np.testing.assert_array_equal(loaded.coef_, learner.coef_)


def test_the_registry_finds_the_learners_in_the_concept_packages():
    from latentstruct.registry import learner_modules

    modules = learner_modules()
    assert modules["lclr"] == "latentstruct.learners.latent.lclr"
    assert modules["crf"] == "latentstruct.learners.probabilistic.crf"
    assert {m.split(".")[2] for m in modules.values()} == {"ssvm", "latent", "online",
                                                          "probabilistic"}
    assert all(hasattr(learners, n) for n in learners.__all__)
