"""Checkpoint and resume: a run interrupted after k iterations and resumed from its
checkpoint ends with the model of the uninterrupted run (weights and objective curve to
1e-9; in fact bit for bit), for every iterative learner; a checkpoint refuses other data,
other hyperparameters, another learner, and a model file is not a checkpoint."""

import warnings

import numpy as np
import pytest

from latentstruct.cli import main
from latentstruct.data.dependency.kbest import write_kbest
from latentstruct.data.dependency.kbest_synthetic import synthetic_kbest
from latentstruct.exceptions import ConfigError, ModelFormatError
from latentstruct.io import save_model
from latentstruct.learners import (
    AROW,
    CRF,
    DISTRO,
    JLIS,
    LCLR,
    HiddenVariableReranker,
    LatentPA,
    LCLRVariant,
    SGDStructuredSVM,
    StructuredPA,
    StructuredPerceptron,
    StructuredSVM,
    TwoStage,
)
from latentstruct.learners.checkpoint import Checkpoint, read_checkpoint
from latentstruct.tasks import ChunkTask
from latentstruct.tasks.base import Dataset
from latentstruct.tasks.rerank import RerankTask, kbest_dataset
from latentstruct.testing import make_bag_problem
from conftest import random_chunk_file

TINY = "a X B-A\nb Y B-B\n\nb Y B-B\nc Z O\na X I-A\n\nc Z O\na Y B-A\n"
BINARY_POS = "c Z O\nb Y O\n\na X O\nb Y O\nc Z O\n"
BINARY_NEG = "b Y O\nb Y O\na X O\n\nc Z O\nc Z O\n"


class Interrupt(Exception):
    """Raised from the checkpoint hook: training stops right after a checkpoint."""


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# ------------------------------------------------------------------------------ problems
@pytest.fixture(scope="module")
def chunk(tmp_path_factory):
    path = random_chunk_file(tmp_path_factory.mktemp("chunk") / "train.txt", 3)
    task = ChunkTask(window=1, affix_length=1)
    ds = task.read(path)
    task.fit(ds)
    return task, (task.featurize(ds), task.encode_targets(ds.targets))


@pytest.fixture(scope="module")
def jlis_data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jlis")
    paths = {}
    for name, text in (("s", TINY), ("pos", BINARY_POS), ("neg", BINARY_NEG)):
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text(text, encoding="utf-8")
    task = ChunkTask(window=0, affix_length=1)
    s, pos, neg = (task.read(paths[k]) for k in ("s", "pos", "neg"))
    task.fit(Dataset(list(s.records) + list(pos.records), list(s.targets) + list(pos.targets)))
    both = Dataset(list(pos.records) + list(neg.records), [None] * (len(pos) + len(neg)))
    args = (task.featurize(s), task.encode_targets(s.targets), task.featurize(both),
            np.array([1] * len(pos) + [-1] * len(neg)))
    return task, args


@pytest.fixture(scope="module")
def bags():
    task, X, y = make_bag_problem(n_examples=40, bag_size=4, random_state=11)
    return task, (X, y)


@pytest.fixture(scope="module")
def rerank():
    header, sents = synthetic_kbest(40, 4, random_state=5)
    ds = kbest_dataset(header, sents)
    task = RerankTask(domain="pos", n_hidden=2, hash_bits=10).fit(ds)
    return task, (task.featurize(ds), task.encode_targets(ds.targets))


@pytest.fixture(scope="module")
def translit():
    """CLDR English-Hebrew place names shipped with Babel (a small real problem)."""
    from latentstruct.tasks.translit import TransliterationTask

    task = TransliterationTask(lang="he", n_train=30, n_test=30, neg_ratio=0.2, seed=1)
    train = task.read(None, split="train")
    task.fit(train)
    return task, (task.featurize(train), task.encode_targets(train.targets))


# learner name -> (problem fixture, factory of a learner that runs several iterations)
CASES = {
    "lclr": ("bags", lambda t: LCLR(t, C=0.5, max_iter=8, tol=1e-9, random_state=2)),
    "lclr-zeros": ("bags", lambda t: LCLR(t, C=0.5, init="zeros", max_iter=8, tol=1e-9,
                                          random_state=2)),
    "lclr-translit": ("translit", lambda t: LCLR(t, C=0.1, max_iter=4, tol=1e-9,
                                                 random_tie_break=True, random_state=0)),
    "lclr-variant": ("bags", lambda t: LCLRVariant(t, C=0.5, max_iter=6, random_state=2)),
    "latent-pa": ("bags", lambda t: LatentPA(t, max_iter=6, average=True, random_state=1)),
    "latent-pa-heuristic": ("bags", lambda t: LatentPA(t, max_iter=5, init="heuristic",
                                                       variant="pa-ii", random_state=4)),
    "two-stage": ("bags", lambda t: TwoStage(t, C=0.5, tol=1e-6, random_state=3)),
    "ssvm": ("chunk", lambda t: StructuredSVM(t, C=1.0, batch_size=4, tol=1e-4, max_iter=8,
                                              random_state=3)),
    "perceptron": ("chunk", lambda t: StructuredPerceptron(t, max_iter=6, random_state=5)),
    "sgd-ssvm": ("chunk", lambda t: SGDStructuredSVM(t, n_epochs=5, batch_size=3,
                                                     random_state=2)),
    "distro": ("chunk", lambda t: DISTRO(t, n_components=2, n_iter=3, weight_epochs=1,
                                         label_epochs=1, batch_size=3, n_restarts=2,
                                         random_state=1)),
    "jlis": ("jlis_data", lambda t: JLIS(t, C1=0.5, C2=0.5, max_iter=6, tol=1e-9,
                                         random_state=7)),
    "hidden-reranker": ("rerank", lambda t: HiddenVariableReranker(t, n_epochs=5, tol=None,
                                                                   random_state=3)),
    "crf-sgd": ("chunk", lambda t: CRF(t, solver="sgd", max_iter=5, batch_size=3,
                                       random_state=2)),
    "pa": ("chunk", lambda t: StructuredPA(t, max_iter=6, random_state=5)),
    "arow": ("chunk", lambda t: AROW(t, max_iter=6, gamma=2.0, random_state=5)),
}

CURVES = ("objective_curve_", "errors_curve_", "dual_curve_", "cache_size_curve_",
          "inner_gap_curve_", "loss_curve_", "accuracy_curve_", "restart_objectives_", "n_inexact_decodes_")
COUNTERS = ("n_iter_", "converged_", "stop_reason_", "n_cache_hits_", "n_constraints_",
            "n_steps_", "n_updates_", "n_reverted_phases_", "init_scale_", "eta0_")


def assert_same_model(a, b):
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-9)
    for name in CURVES:
        if hasattr(a, name):
            x, y = np.asarray(getattr(a, name), float), np.asarray(getattr(b, name), float)
            assert x.shape == y.shape, name
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-9, err_msg=name)
    for name in COUNTERS:
        if hasattr(a, name):
            assert getattr(b, name) == getattr(a, name), name


def interrupt_after(k, make, args, path):
    """Train with checkpoints and stop (as a crash would) right after the k-th; the path."""
    def stop(it, _):
        if it == k:
            raise Interrupt

    with pytest.raises(Interrupt):
        quiet(lambda: make().fit(*args, checkpoint=Checkpoint(path, on_save=stop)))
    return path


def problem(request, name):
    fixture, make = CASES[name]
    task, args = request.getfixturevalue(fixture)
    return task, args, lambda **kw: make(task).set_params(**kw)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_an_interrupted_run_resumes_to_the_uninterrupted_model(request, tmp_path, name):
    _, args, make = problem(request, name)
    plain = quiet(lambda: make().fit(*args))
    # checkpointing does not change the run, and writes one checkpoint per iteration
    written = []
    path = tmp_path / "full.ckpt.npz"
    full = quiet(lambda: make().fit(*args, checkpoint=Checkpoint(
        path, on_save=lambda it, _: written.append(it))))
    assert_same_model(plain, full)
    assert written == list(range(1, len(written) + 1)) and len(written) >= 3, written
    meta, _ = read_checkpoint(path)
    assert meta["kind"] == "checkpoint" and meta["done"] and meta["iteration"] == written[-1]

    for k in (1, len(written) - 1):
        ck = interrupt_after(k, make, args, tmp_path / f"cut{k}.ckpt.npz")
        meta, _ = read_checkpoint(ck)
        assert meta["iteration"] == k and not meta["done"]
        resumed = quiet(lambda ck=ck: make().fit(*args, resume=ck, checkpoint=ck))
        assert_same_model(plain, resumed)
        assert read_checkpoint(ck)[0]["done"]
    # a finished checkpoint resumes to the finished model
    assert_same_model(plain, quiet(lambda: make().fit(*args, resume=path)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lclr", "ssvm", "jlis", "latent-pa"])
def test_n_jobs_may_change_on_resume(request, tmp_path, name):
    _, args, make = problem(request, name)
    plain = quiet(lambda: make().fit(*args))
    ck = interrupt_after(2, make, args, tmp_path / "c.npz")
    assert_same_model(plain, quiet(lambda: make(n_jobs=2).fit(*args, resume=ck)))


def _other_data(name, args):
    if name == "jlis":
        X, Y, XB, yB = args
        return (X, Y, XB, -yB)
    X, Y = args
    if isinstance(Y, np.ndarray) and Y.dtype.kind in "if":  # binary labels
        return X, -Y
    return X[: len(X) - 1], list(Y)[: len(Y) - 1]


@pytest.mark.parametrize("name", ["lclr", "ssvm", "jlis", "distro", "hidden-reranker",
                                  "perceptron", "sgd-ssvm", "latent-pa", "pa", "arow"])
def test_resume_refuses_other_data_params_learner_and_model_files(request, tmp_path, name):
    task, args, make = problem(request, name)
    ck = interrupt_after(1, make, args, tmp_path / "c.npz")
    with pytest.raises(ConfigError, match="other training data"):
        quiet(lambda: make().fit(*_other_data(name, args), resume=ck))
    param = "random_state"
    with pytest.raises(ConfigError, match=rf"other learner hyperparameters: {param}="):
        quiet(lambda: make(random_state=99).fit(*args, resume=ck))
    # a model file is not a checkpoint
    model = tmp_path / "m.npz"
    fitted = quiet(lambda: make().fit(*args))
    save_model(model, {"task": task.name, "learner": fitted.registry_name, "task_params": {},
                       "learner_params": {}}, {"coef_": fitted.coef_})
    with pytest.raises(ConfigError, match="model file, not a checkpoint"):
        make().fit(*args, resume=model)
    # nor is a damaged file
    bad = tmp_path / "bad.npz"
    bad.write_bytes(ck.read_bytes()[:100])
    with pytest.raises(ModelFormatError):
        make().fit(*args, resume=bad)


def test_resume_refuses_another_learners_checkpoint(bags, tmp_path):
    task, (X, y) = bags
    ck = tmp_path / "c.npz"
    quiet(lambda: LCLRVariant(task, max_iter=2).fit(X, y, checkpoint=ck))
    with pytest.raises(ConfigError, match="written by learner 'lclr-variant', not 'lclr'"):
        LCLR(task).fit(X, y, resume=ck)


def test_every_and_the_last_iteration(bags, tmp_path):
    task, (X, y) = bags
    written = []
    m = quiet(lambda: LCLRVariant(task, C=0.5, max_iter=5, random_state=2).fit(
        X, y, checkpoint=Checkpoint(tmp_path / "c.npz", every=2,
                                    on_save=lambda it, _: written.append(it))))
    n = m.n_iter_
    assert n >= 3
    assert written == list(range(2, n + 1, 2)) + ([n] if n % 2 else [])
    with pytest.raises(ConfigError, match="every"):
        Checkpoint(tmp_path / "c.npz", every=0)
    with pytest.raises(ConfigError, match="does not exist"):
        LCLR(task).fit(X, y, checkpoint=tmp_path / "no" / "c.npz")
    with pytest.raises(ConfigError, match="is a folder"):
        LCLR(task).fit(X, y, checkpoint=tmp_path)


def test_lbfgs_refuses_checkpoints_it_cannot_resume(rerank, tmp_path):
    task, (X, Y) = rerank
    with pytest.raises(ConfigError, match="L-BFGS-B keeps its state"):
        HiddenVariableReranker(task, solver="lbfgs").fit(X, Y, checkpoint=tmp_path / "c.npz")


def test_crf_lbfgs_refuses_checkpoints_it_cannot_resume(chunk, tmp_path):
    task, (X, Y) = chunk
    with pytest.raises(ConfigError, match="L-BFGS-B keeps its state"):
        CRF(task).fit(X, Y, checkpoint=tmp_path / "c.npz")
    with pytest.raises(ConfigError, match="solver='sgd'"):
        CRF(task).fit(X, Y, resume=tmp_path / "c.npz")


# ------------------------------------------------------------------------------ the CLI
def _train(args, capsys):
    code = main(args)
    err = capsys.readouterr().err
    return code, err


def test_cli_checkpoint_and_resume(tmp_path, capsys, monkeypatch):
    train = random_chunk_file(tmp_path / "train.txt", 3)
    base = ["train", "chunk", "--train", str(train), "--quiet", "--option", "C=1",
            "--option", "batch_size=4", "--option", "tol=0.0001", "--option", "max_iter=8"]
    full, cut, resumed = (tmp_path / f"{n}.npz" for n in ("full", "cut", "resumed"))
    ck = tmp_path / "run.ckpt.npz"
    assert _train(base + ["--model", str(full)], capsys)[0] == 0

    from latentstruct.learners import checkpoint as module

    original = module.CheckpointSession.save

    def save_then_die(self, iteration, meta, arrays, *, done=False):
        original(self, iteration, meta, arrays, done=done)
        if iteration == 2:
            raise KeyboardInterrupt  # Ctrl-C right after the second checkpoint

    monkeypatch.setattr(module.CheckpointSession, "save", save_then_die)
    assert _train(base + ["--model", str(cut), "--checkpoint", str(ck)], capsys)[0] == 130
    monkeypatch.setattr(module.CheckpointSession, "save", original)
    assert not cut.exists() and read_checkpoint(ck)[0]["iteration"] == 2

    code, err = _train(base + ["--model", str(resumed), "--resume", str(ck)], capsys)
    assert code == 0, err
    a, b = np.load(full), np.load(resumed)
    np.testing.assert_allclose(b["coef_"], a["coef_"], rtol=0, atol=1e-9)

    # the command line must otherwise match, and this is checked before the data is read
    missing = str(tmp_path / "does-not-exist.txt")
    changed = ["train", "chunk", "--train", missing, "--quiet", "--option", "C=0.5",
               "--option", "batch_size=4", "--option", "tol=0.0001", "--option", "max_iter=8",
               "--model", str(tmp_path / "x.npz"), "--resume", str(ck)]
    code, err = _train(changed, capsys)
    assert code == 2 and "C=1 in the checkpoint but C=0.5 now" in err
    assert "does-not-exist" not in err
    code, err = _train(changed[:4] + ["--learner", "perceptron", "--quiet", "--model",
                                      str(tmp_path / "x.npz"), "--resume", str(ck)], capsys)
    assert code == 2 and "written by learner 'ssvm', not 'perceptron'" in err
    # a checkpoint that cannot be written is refused before the data is read too
    code, err = _train(changed[:4] + ["--quiet", "--model", str(tmp_path / "x.npz"),
                                      "--checkpoint", str(tmp_path / "no" / "c.npz")], capsys)
    assert code == 2 and "does not exist" in err and "does-not-exist.txt" not in err
    # a model file is not a checkpoint
    code, err = _train(base + ["--model", str(tmp_path / "y.npz"), "--resume", str(full)], capsys)
    assert code == 2 and "model file, not a checkpoint" in err
    # other data with the same options: refused once the data is featurised
    other = random_chunk_file(tmp_path / "other.txt", 4)
    code, err = _train(["train", "chunk", "--train", str(other)] + base[4:] +
                       ["--model", str(tmp_path / "z.npz"), "--resume", str(ck)], capsys)
    assert code == 2 and ("other training data" in err or "features" in err), err


def test_cli_resume_for_the_reranker(tmp_path, capsys):
    header, sents = synthetic_kbest(40, 4, random_state=7)
    train = tmp_path / "train.kbest"
    write_kbest(train, header, sents)
    base = ["train", "rerank", "--train", str(train), "--quiet", "--option", "domain=pos",
            "--option", "n_hidden=2", "--option", "hash_bits=10", "--option", "n_epochs=4",
            "--option", "tol=null"]
    ck = tmp_path / "c.npz"
    assert main(base + ["--model", str(tmp_path / "a.npz"), "--checkpoint", str(ck)]) == 0
    assert main(base + ["--model", str(tmp_path / "b.npz"), "--resume", str(ck)]) == 0
    capsys.readouterr()
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    np.testing.assert_array_equal(a["coef_"], b["coef_"])


def test_a_checkpoint_from_before_a_new_hyperparameter_resumes_at_its_default(chunk, tmp_path):
    """Checkpoints written before `shuffle` existed lack it; its default (True) is what the
    code that wrote them did, so they resume, and a non-default value is refused."""
    from latentstruct.io import load_model, save_model

    task, args = chunk
    make = CASES["perceptron"][1]
    path = tmp_path / "old.ckpt.npz"
    plain = quiet(lambda: make(task).fit(*args))
    quiet(lambda: make(task).fit(*args, checkpoint=path))
    meta, arrays = load_model(path)
    del meta["learner_params"]["shuffle"]  # as an older release wrote it
    meta["done"] = False
    save_model(path, meta, arrays)
    assert_same_model(plain, quiet(lambda: make(task).fit(*args, resume=path)))
    with pytest.raises(ConfigError, match="shuffle"):
        make(task).set_params(shuffle=False).fit(*args, resume=path)
