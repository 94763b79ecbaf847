"""The task interface: features, loss and constraints of one application.

A task turns raw records into model-ready instances and defines, for a weight vector
``w``, the part scores an inference routine maximises.  Learners only ever talk to a
task through this interface (``joint_feature``, ``argmax``, ``loss`` and their batch
forms), so a learner never knows which application it trains.

Tasks are configured like scikit-learn estimators: keyword parameters stored unchanged,
listed by ``get_params``.  A fitted task (its feature index and label set) is saved in
the model file as JSON-able parameters plus numpy arrays (``get_state``/``from_state``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from ..data.sparse import SparseVector
from ..exceptions import ConfigError, NotFittedError
from ..inference.result import DecodeResult

__all__ = [
    "Dataset",
    "StructuredTask",
    "LatentBinaryTask",
    "NormalizedLatentTask",
    "register_task",
    "get_task_class",
    "TASKS",
]


@dataclass(frozen=True)
class Dataset:
    """Records read from a file, with their gold structures (``None`` where unknown).

    ``binary`` optionally holds binary examples for learners with indirect supervision
    (J-LIS): records and +-1 labels.  ``labels`` optionally lists the label inventory when
    ``targets`` alone may not show every label (a small labelled sample).
    """

    records: Sequence[Any]
    targets: Sequence[Any]
    path: str | None = None
    binary: "Dataset | None" = None
    labels: tuple | None = None

    def __len__(self) -> int:
        return len(self.records)


class StructuredTask:
    """Base class of every task.

    Subclasses set ``name`` and implement ``read``, ``fit``, ``featurize``,
    ``joint_feature``, ``argmax``, ``loss``, ``evaluate``, ``write_predictions`` and the
    state round trip.  The batch methods default to loops over the single-instance ones;
    tasks with fast kernels override them.
    """

    name: ClassVar[str] = ""
    #: learner used by ``latentstruct train`` when ``--learner`` is not given
    default_learner: ClassVar[str] = "ssvm"
    #: whether ``read(None)`` loads data shipped with an installed package
    has_default_data: ClassVar[bool] = False

    # --- scikit-learn style parameters -------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params) -> "StructuredTask":
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ConfigError(
                    f"unknown parameter {key!r} for task {self.name!r}; valid: {', '.join(valid)}"
                )
            setattr(self, key, value)
        return self

    # --- to be provided by subclasses ------------------------------------------------
    @property
    def n_features(self) -> int:
        raise NotImplementedError("each task defines n_features")

    def read(self, path, *, split: str = "train") -> Dataset:
        """Read labelled data; ``split`` ("train" or "test") lets tasks that sample their
        examples (negatives, deterministic subsets) draw the right portion."""
        raise NotImplementedError("each task defines read")

    def fit(self, dataset: Dataset) -> "StructuredTask":
        raise NotImplementedError("each task defines fit")

    def featurize(self, dataset: Dataset) -> list:
        raise NotImplementedError("each task defines featurize")

    def joint_feature(self, x, y) -> SparseVector:
        raise NotImplementedError("each task defines joint_feature")

    def argmax(self, x, w: np.ndarray, y_true=None, *, random_state=None) -> DecodeResult:
        """Best structure for ``x`` under ``w``; loss-augmented when ``y_true`` is given."""
        raise NotImplementedError("each task defines argmax")

    def loss(self, y_true, y_pred) -> float:
        raise NotImplementedError("each task defines loss")

    def evaluate(self, targets, predictions) -> dict:
        raise NotImplementedError("each task defines evaluate")

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        raise NotImplementedError("each task defines write_predictions")

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Metrics of a trained model on ``dataset``.

        ``predict(X)`` returns structures (or labels); ``decision_function(X)`` real scores.
        The default scores ``predict`` against the gold targets; ranking tasks override it
        and use ``decision_function``.  Tasks never see the learner itself.
        """
        X = self.featurize(dataset)
        return self.evaluate(self.encode_targets(dataset.targets), predict(X))

    def encode_targets(self, targets) -> list:
        return list(targets)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        raise NotImplementedError("each task defines get_state")

    @classmethod
    def from_state(cls, params: dict, state: dict, arrays: dict[str, np.ndarray]):
        raise NotImplementedError("each task defines from_state")

    # --- generic batch forms -----------------------------------------------------------
    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        if Y is None:
            return [self.argmax(x, w, random_state=random_state).structure for x in X]
        return [self.argmax(x, w, y, random_state=random_state).structure for x, y in zip(X, Y)]

    def subset(self, X, indices):
        """The examples ``X[i] for i in indices``, in the task's batch representation."""
        return [X[int(i)] for i in indices]

    def training_sample(self, dataset: Dataset) -> Dataset:
        """The training examples to use from a training file (all of it by default)."""
        return dataset

    def example_size(self, x) -> int:
        """Size of one example (tokens), the J-LIS normaliser kappa(x)."""
        raise NotImplementedError("each task that supports J-LIS defines example_size")

    def joint_feature_difference(self, x, y_a, y_b) -> SparseVector:
        """Phi(x, y_a) - Phi(x, y_b), coalesced."""
        return self.joint_feature(x, y_a) - self.joint_feature(x, y_b)

    def check_fitted(self) -> None:
        if not getattr(self, "fitted_", False):
            raise NotFittedError(
                f"task {self.name!r} has no feature index yet; call fit(dataset) on training data first"
            )


TASKS: dict[str, type[StructuredTask]] = {}


def register_task(cls: type[StructuredTask]) -> type[StructuredTask]:
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty name to be registered")
    TASKS[cls.name] = cls
    return cls


def get_task_class(name: str) -> type[StructuredTask]:
    try:
        return TASKS[name]
    except KeyError:
        raise ConfigError(
            f"unknown task {name!r}; expected one of: {', '.join(sorted(TASKS))}"
        ) from None


class LatentBinaryTask(StructuredTask):
    """A binary decision over a hidden structure: f(x) = max_{h in C(x)} w . Phi(x, h).

    Used by LCLR, its two-stage baseline and the latent online learners.  Examples are
    ``x`` with labels ``y`` in {-1, +1}; the structure ``h`` is never observed.

    Subclasses implement ``latent_argmax`` (the best legal h under w, with its score
    ``w . Phi(x, h)``), ``latent_feature`` (Phi(x, h) as a sparse vector, including any
    bias feature that every structure shares) and ``heuristic_weights`` (the fixed part
    scores of the two-stage baseline).  ``decision_batch`` may be overridden with a fast
    kernel.  ``targets`` of a binary dataset are the labels, as an int array of +-1.
    """

    default_learner: ClassVar[str] = "lclr"

    def latent_argmax(self, x, w: np.ndarray, *, random_state=None) -> DecodeResult:
        raise NotImplementedError("each latent task defines latent_argmax")

    def latent_feature(self, x, h) -> SparseVector:
        raise NotImplementedError("each latent task defines latent_feature")

    def heuristic_weights(self) -> np.ndarray:
        """Weights whose argmax is the two-stage system's fixed structure."""
        raise NotImplementedError("each latent task defines heuristic_weights")

    def draw_explanation(self, x, w, h, score: float, path, *, title: str = "") -> None:
        """Draw structure ``h`` of example ``x`` (scored ``score`` under ``w``) as a PNG."""
        raise ConfigError(f"task {self.name!r} cannot draw its latent structures")

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        return [self.latent_argmax(x, w, random_state=random_state) for x in X]

    def decision_batch(self, X, w) -> np.ndarray:
        """f(x) = max_h w . Phi(x, h) for every example."""
        return np.array([r.score for r in self.latent_argmax_batch(X, w)], dtype=np.float64)


class NormalizedLatentTask(LatentBinaryTask):
    """The binary view of a structured task used by J-LIS (Chang et al. 2010, ICML §2.2).

    Phi_B(x, h) = Phi(x, h) / kappa(x), followed by one dummy (bias) feature added after the
    normalisation, so f_B(x) = max_h w . Phi_B(x, h) asks "has x a good structure?".
    kappa(x) is the number of tokens (``normalization="length"``, the paper's choice for
    POS tagging and citations) or 1 (``"none"``).  The argmax over h is the structured
    task's own (unaugmented) argmax, since kappa(x) > 0 does not change it.

    The weight vector is the structured task's weights followed by the bias weight.
    """

    name = "normalized"

    def __init__(self, base=None, normalization="length"):
        self.base = base
        self.normalization = normalization

    @property
    def n_features(self) -> int:
        return self.base.n_features + 1

    def check_fitted(self) -> None:
        if not isinstance(self.base, StructuredTask):
            raise ConfigError("NormalizedLatentTask needs a StructuredTask as its 'base'")
        if self.normalization not in ("length", "none"):
            raise ConfigError(
                f"normalization must be 'length' or 'none', got {self.normalization!r}"
            )
        self.base.check_fitted()

    def kappa(self, x) -> float:
        if self.normalization == "none":
            return 1.0
        n = self.base.example_size(x)
        if n <= 0:
            raise ConfigError(
                "a binary example has length 0; every sentence needs at least one token"
            )
        return float(n)

    def subset(self, X, indices):
        return self.base.subset(X, indices)

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        res = self.base.argmax(x, w[:-1], random_state=random_state)
        return DecodeResult(res.structure, res.score / self.kappa(x) + float(w[-1]),
                            res.status, res.stats)

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        structures = self.base.argmax_batch(X, w[:-1], random_state=random_state)
        out = []
        for i, h in enumerate(structures):
            x = X[i]
            score = self.base.joint_feature(x, h).dot(w[:-1]) / self.kappa(x) + float(w[-1])
            out.append(DecodeResult(h, score))
        return out

    def latent_feature(self, x, h) -> SparseVector:
        phi = self.base.joint_feature(x, h)
        return SparseVector(
            np.append(phi.indices, self.base.n_features),
            np.append(phi.values / self.kappa(x), 1.0),
        )

    def heuristic_weights(self) -> np.ndarray:
        raise ConfigError("J-LIS has no two-stage heuristic; initialise from S or coef_init")
