"""Small real-data runs of the sequence tasks (the full comparison is in benchmarks/)."""

import warnings

import pytest


from latentstruct.exceptions import ConvergenceWarning
from latentstruct.learners import StructuredSVM
from latentstruct.tasks import ChunkTask, PosTask
from latentstruct.tasks.base import Dataset


def _train_eval(task, train, dev, **kw):
    task.fit(train)
    model = StructuredSVM(task, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(task.featurize(train), task.encode_targets(train.targets))
    # raw gold tags: a dev tag the training part never showed (CoNLL-2000's rare B-LST)
    # counts as a miss; encode_targets would refuse it
    scores = task.evaluate_raw(dev.targets, model.predict(task.featurize(dev)))
    # score() is the task's main metric, as scikit-learn's model selection wants it, on the
    # sentences whose tags the model knows
    known = [i for i, t in enumerate(dev.targets) if set(t) <= set(task.labels_)]
    sub = Dataset([dev.records[i] for i in known], [dev.targets[i] for i in known])
    X_sub = task.featurize(sub)
    assert model.score(X_sub, task.encode_targets(sub.targets)) == \
        task.evaluate_raw(sub.targets, model.predict(X_sub))[task.score_metric]
    return model, scores


@pytest.mark.slow
def test_chunking_on_a_conll2000_subset(require_data):
    path = require_data("conll2000", "train.txt")
    task = ChunkTask()
    full = task.read(path)
    train = Dataset(full.records[500:1300], full.targets[500:1300])
    dev = Dataset(full.records[:300], full.targets[:300])
    model, scores = _train_eval(task, train, dev, C=0.1, max_iter=8)
    assert scores["f1"] > 0.85
    # the objective falls steeply from w = 0
    assert model.objective_curve_[-1] < 0.2 * model.objective_curve_[0]


@pytest.mark.slow
def test_pos_on_an_ewt_subset(require_data):
    train_path = require_data("ud_english_ewt", "en_ewt-ud-train.conllu")
    dev_path = require_data("ud_english_ewt", "en_ewt-ud-dev.conllu")
    task = PosTask()
    train = task.read(train_path)
    dev = task.read(dev_path)
    train = Dataset(train.records[:1000], train.targets[:1000])
    dev = Dataset(dev.records[:300], dev.targets[:300])
    _, scores = _train_eval(task, train, dev, C=0.1, max_iter=8)
    assert scores["accuracy"] > 0.85
