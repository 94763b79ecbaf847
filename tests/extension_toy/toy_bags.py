"""A contributor's task (the first of the two files): a bag of words is positive when one
of its words is a trigger; which word is the hidden structure.  Copied to
``latentstruct/tasks/toy_bags.py`` in a copy of the package by
tests/test_extension_path.py; nothing else in the package names it."""

import json

import numpy as np

from latentstruct.data.sparse import SparseVector
from latentstruct.inference.toy_best import best_item
from latentstruct.tasks.base import Dataset, LatentBinaryTask, register_task
from latentstruct.tasks.contracts import HEURISTIC, LATENT_BINARY


@register_task
class ToyBagTask(LatentBinaryTask):
    """Lines ``LABEL<TAB>word word ...`` (LABEL +1 or -1); h = the word that decides."""

    name = "toy-bags"
    capabilities = frozenset({LATENT_BINARY, HEURISTIC})

    def __init__(self, min_count=1):
        self.min_count = min_count

    def read(self, path, *, split="train"):
        records, targets = [], []
        with open(path, encoding="utf-8") as f:
            for line in f:
                label, words = line.rstrip("\n").split("\t")
                records.append(words.split())
                targets.append(int(label))
        return Dataset(records, targets)

    def fit(self, dataset):
        words = sorted({w for r in dataset.records for w in r})
        self.vocabulary_ = {w: i for i, w in enumerate(words)}
        return self

    def is_fitted(self):
        return hasattr(self, "vocabulary_")

    @property
    def n_features(self):
        return len(self.vocabulary_) + 1  # the words, then a bias

    def featurize(self, dataset):
        unknown = len(self.vocabulary_)
        return [np.array([self.vocabulary_.get(w, unknown) for w in r]) for r in dataset.records]

    def encode_targets(self, targets):
        return np.asarray(targets, dtype=np.int64)

    def evaluate(self, targets, predictions):
        return {"accuracy": float(np.mean(np.asarray(targets) == np.asarray(predictions)))}

    def latent_argmax(self, x, w, *, random_state=None):
        bias = w[-1]
        result = best_item(np.where(x < len(self.vocabulary_), w[np.minimum(x, len(w) - 2)],
                                    0.0) + bias)
        return result

    def latent_feature(self, x, h):
        word = int(x[int(np.asarray(h)[0])])
        idx = [word, len(self.vocabulary_)] if word < len(self.vocabulary_) else [len(self.vocabulary_)]
        return SparseVector(np.array(idx), np.ones(len(idx)))

    def heuristic_weights(self):
        return np.zeros(self.n_features)

    def get_state(self):
        return {"vocabulary": json.loads(json.dumps(sorted(self.vocabulary_)))}, {}

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.vocabulary_ = {w: i for i, w in enumerate(state["vocabulary"])}
        return task
