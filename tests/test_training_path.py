"""The one training path (``latentstruct.pipelines.training``): the command line and the
estimators run it, in its order, and it checks what it is given and what it returns."""

import ast
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import latentstruct
from latentstruct.cli import main
from latentstruct.estimators import Chunker
from latentstruct.exceptions import ConfigError, is_fitted
from latentstruct.learners import StructuredPerceptron, StructuredSVM
from latentstruct.learners.latent.jlis import JLIS
from latentstruct.learners.persistence import load_trained
from latentstruct.pipelines import training
from latentstruct.tasks import ChunkTask, DependencyTask, GrammaticalityTask, PosTask
from latentstruct.tasks.base import Dataset

PKG = Path(latentstruct.__file__).parent

SENTS = [[("He", "PRP"), ("runs", "VBZ")], [("The", "DT"), ("dog", "NN"), ("barks", "VBZ")]]
TAGS = [["B-NP", "B-VP"], ["B-NP", "I-NP", "B-VP"]]


def _tiny_chunk_file(path):
    lines = []
    for sent, tags in zip(SENTS, TAGS):
        lines += [f"{w} {p} {t}" for (w, p), t in zip(sent, tags)] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_cli_and_the_estimator_train_through_it_and_agree(tmp_path, monkeypatch, capsys):
    """Both call ``check_trained`` once (the path's last step), and give the same weights."""
    seen = []
    original = training.check_trained
    monkeypatch.setattr(training, "check_trained",
                        lambda task, learner: seen.append(type(learner).__name__)
                        or original(task, learner))
    model = tmp_path / "chunk.npz"
    assert main(["train", "chunk", "--train", str(_tiny_chunk_file(tmp_path / "t.txt")),
                 "--model", str(model), "--option", "C=1", "--quiet"]) == 0
    est = Chunker(C=1).fit(SENTS, TAGS)
    assert seen == ["StructuredSVM", "StructuredSVM"]
    _, cli_learner, _ = load_trained(model)
    np.testing.assert_array_equal(cli_learner.coef_, est.learner_.coef_)
    assert est.predict(SENTS) == TAGS


def test_neither_caller_keeps_its_own_copy_of_the_sequence():
    """``task.fit``, ``training_sample`` and the helpers are called only by the path."""
    for rel in ("cli/train.py", "estimators/base.py"):
        tree = ast.parse((PKG / rel).read_text(encoding="utf-8"))
        called = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                  for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert not called & {"training_sample", "attach_tagger", "attach_chunker",
                             "check_compatible", "fit_on_dataset"}, rel
        # the one task.fit left is partial_fit's: none at all in either file
        assert "fit" not in {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)
                             and isinstance(n.func, ast.Attribute)
                             and isinstance(n.func.value, ast.Name) and n.func.value.id == "task"}


def test_plan_checks_before_any_data_and_adds_the_task_defaults():
    plan = training.plan_training(DependencyTask, StructuredSVM, {}, {"tol": 0.5})
    assert plan.learner_opts["C"] == 0.001 and plan.learner_opts["tol"] == 0.5  # dep's C kept
    assert not is_fitted(plan.task)
    with pytest.raises(ConfigError, match="min_count"):
        training.plan_training(ChunkTask, StructuredPerceptron, {"min_count": -1}, {})
    with pytest.raises(ConfigError, match=r"--option n_binary=N"):
        training.plan_training(PosTask, JLIS, {}, {}, cli=True)
    with pytest.raises(ConfigError, match=r"give n_binary=N .* learner='ssvm'"):
        training.plan_training(PosTask, JLIS, {}, {})


def test_declared_helpers_are_checked():
    assert training.check_helpers(ChunkTask) == frozenset()
    assert training.check_helpers(GrammaticalityTask) == {"pos-tagger", "supervised-chunker"}
    assert training.check_helpers(DependencyTask) == {"pos-tagger"}

    class Typo(ChunkTask):
        pretrained_helpers = frozenset({"pos-taggr"})

    with pytest.raises(ConfigError, match=r"pretrained_helpers \['pos-taggr'\].*known: "
                                          r"pos-tagger, supervised-chunker"):
        training.check_helpers(Typo)

    class NoTagger(ChunkTask):
        pretrained_helpers = frozenset({"pos-tagger"})

    with pytest.raises(ConfigError, match=r"lacks tagger_model, tagger_sentences, needs_tagger, "
                                          r"has_tagger, set_tagger \(PosTagged"):
        training.check_helpers(NoTagger)


def test_helpers_run_for_the_tasks_that_declare_them_in_order(monkeypatch):
    """A task's POS tagger is attached before its data is loaded; a method named like a hook
    does not make a task get one (the declaration does)."""
    order = []
    monkeypatch.setattr(training, "attach_tagger",
                        lambda task, verbose=False: order.append(("tagger", type(task).__name__)))
    monkeypatch.setattr(training, "attach_chunker",
                        lambda task, learner, verbose=False: order.append(("chunker", is_fitted(task))))

    class LooksTagged(ChunkTask):
        def set_tagger(self, pos_task, coef):  # pragma: no cover - never called
            raise AssertionError("not declared, never attached")

    def load(task):
        order.append(("load", is_fitted(task)))
        return task.make_dataset(SENTS, TAGS)

    plan = training.plan_training(LooksTagged, StructuredPerceptron, {}, {"max_iter": 2})
    result = training.run_training(plan, load)
    assert order == [("load", False)] and result.learner.n_iter_ == 2

    class Declares(ChunkTask):
        pretrained_helpers = frozenset({"pos-tagger", "supervised-chunker"})
        tagger_model = tagger_sentences = needs_tagger = chunker = chunker_epochs = seed = None

        def has_tagger(self): ...
        def set_tagger(self, pos_task, coef): ...
        def chunking_task(self): ...
        def chunk_training_data(self): ...
        def set_chunker_weights(self, coef): ...
        def heuristic_ready(self): ...

    order.clear()
    plan = training.plan_training(Declares, StructuredPerceptron, {}, {"max_iter": 2})
    training.run_training(plan, load)
    assert order == [("tagger", "Declares"), ("load", False), ("chunker", True)]


class _Learner:
    def __init__(self, coef):
        if coef is not None:
            self.coef_ = coef


def test_the_result_is_checked():
    task = ChunkTask()
    training.check_trained(task, _Learner(np.zeros(3)))
    with pytest.raises(ConfigError, match=r"2 non-finite weights .* index 1\).*diverged"):
        training.check_trained(task, _Learner(np.array([0.0, np.nan, np.inf])))
    with pytest.raises(NotFittedError, match="without weights"):
        training.check_trained(task, _Learner(None))


def test_fit_on_dataset_returns_the_sample_used():
    task = ChunkTask()
    data = task.make_dataset(SENTS, TAGS)
    used, learner = training.fit_on_dataset(task, data, StructuredPerceptron, {"max_iter": 1})
    assert isinstance(used, Dataset) and len(used) == 2 and is_fitted(task)
    assert learner.coef_.shape == (task.n_features,)
