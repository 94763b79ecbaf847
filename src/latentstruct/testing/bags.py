"""A toy latent task for checking learners: :class:`BagTask` (multiple-instance binary
classification, the hidden structure picks one vector of a bag) and
:func:`make_bag_problem`; and :func:`require_data`, the data-folder guard of tests."""

from __future__ import annotations

import numpy as np

from latentstruct.data.sparse import SparseVector
from latentstruct.exceptions import check_is_fitted
from latentstruct.inference.result import DecodeResult
from latentstruct.tasks.base import Dataset, LatentBinaryTask

__all__ = ["BagTask", "make_bag_problem", "require_data"]




class BagTask(LatentBinaryTask):
    """Multiple-instance binary classification: the hidden h picks one vector of a bag.

    An example is a dense array of shape (bag_size, n_features); Phi(x, h) = x[h], so
    f(x) = max_h w . x[h].  With bags of one vector the latent space has one element and
    latent learners must reduce to the plain squared-hinge SVM.  Not registered for the CLI.
    """

    name = "bags"
    capabilities = frozenset({"latent-binary", "heuristic"})

    def __init__(self, n_features=5):
        self.n_features_in = n_features

    @property
    def n_features(self) -> int:
        return self.n_features_in

    def fit(self, dataset=None):
        self.fitted_ = True
        return self

    def featurize(self, dataset: Dataset):
        return list(dataset.records)

    def encode_targets(self, targets):
        return np.asarray(targets)

    def subset(self, X, indices):
        return [X[int(i)] for i in indices]

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        scores = np.asarray(x) @ w
        h = int(np.argmax(scores))
        return DecodeResult(h, float(scores[h]))

    def latent_feature(self, x, h) -> SparseVector:
        return SparseVector.from_dense(np.asarray(x)[h])

    def heuristic_weights(self) -> np.ndarray:
        # the first coordinate alone decides which vector a two-stage system keeps
        w = np.zeros(self.n_features)
        w[0] = 1.0
        return w

    def get_state(self):
        check_is_fitted(self)
        return {}, {}

    @classmethod
    def from_state(cls, params, state, arrays):
        return cls(**params).fit()


def make_bag_problem(n_examples=40, bag_size=3, n_features=5, random_state=0):
    """Random bags where positives hide one vector shifted along mu: (task, X, y).

    The last feature is a constant 1 (a bias).  The heuristic of ``BagTask`` (largest first
    coordinate) ignores mu, so a two-stage system usually keeps the wrong vector.
    """
    rng = np.random.default_rng(random_state)
    mu = rng.normal(size=n_features - 1)
    mu *= 3.0 / np.linalg.norm(mu)
    X, y = [], []
    for i in range(n_examples):
        bag = rng.normal(size=(bag_size, n_features))
        bag[:, -1] = 1.0
        label = 1 if i % 2 == 0 else -1
        if label == 1:
            bag[rng.integers(bag_size), :-1] += mu
        X.append(bag)
        y.append(label)
    return BagTask(n_features).fit(), X, np.array(y)


def require_data(name: str, *parts: str):
    """Path of a file under ``LATENTSTRUCT_DATA``; skip the calling test if it is absent.

    Under ``CI=true`` a missing data file fails the test instead: CI must run every test.
    """
    import os

    import pytest

    from latentstruct.data.paths import dataset_path, missing_data_message

    path = dataset_path(name, *parts)
    if not path.exists():
        message = f"{missing_data_message(name)} (needed file: {path})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
