"""The defaults a structure written by hand gets, and the loops behind the batch forms.

A learner needs the members of :class:`~latentstruct.tasks.contracts.Structure` and the
batch forms of its capabilities; a structure written by hand need define only
``n_features`` and its capabilities' required methods (``argmax``, ``joint_feature``,
``loss``; or ``latent_argmax`` and ``latent_feature``).  :class:`CompletedStructure` adds
the rest, and the task bases use the same loops, so there is one copy of each.  Import it
through ``tasks.contracts`` (this module uses the contract's names).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import ConfigError

__all__ = ["CompletedStructure", "loop_argmax_results",
           "loop_joint_feature_differences", "loop_loss_batch", "loop_latent_argmax_batch",
           "latent_argmax_decisions"]


def latent_argmax_decisions(task, X, w) -> np.ndarray:
    """f(x) = max_h w . Phi(x, h) for every example: the scores of ``latent_argmax_batch``
    (``LatentBinaryTask.decision_batch``; a learner that sees a structure keep it may reuse
    those latent completions instead of decoding again)."""
    return np.array([r.score for r in task.latent_argmax_batch(X, w)], dtype=np.float64)


def loop_argmax_results(s, X, w, Y=None, *, random_state=None) -> list:
    """``argmax`` of every example (loss-augmented with ``Y``), with its status."""
    if Y is None:
        return [s.argmax(x, w, random_state=random_state) for x in X]
    return [s.argmax(x, w, y, random_state=random_state) for x, y in zip(X, Y)]


def loop_joint_feature_differences(s, X, Y_a, Y_b) -> Any:
    """Phi(x_i, y_a_i) - Phi(x_i, y_b_i) of every example, as the rows of one
    ``SparseRows``, from ``joint_feature_difference`` (or ``joint_feature``)."""
    from ..data.sparse import SparseRows

    diff = getattr(s, "joint_feature_difference", None)
    if diff is None:
        def diff(x, a, b):
            return s.joint_feature(x, a) - s.joint_feature(x, b)
    return SparseRows.from_vectors(diff(x, a, b) for x, a, b in zip(X, Y_a, Y_b))


def loop_loss_batch(s, Y_true, Y_pred) -> np.ndarray:
    """``loss`` of every pair, as float64."""
    return np.array([s.loss(a, b) for a, b in zip(Y_true, Y_pred)], dtype=np.float64)


def loop_latent_argmax_batch(s, X, w, *, random_state=None) -> list:
    """``latent_argmax`` of every example."""
    return [s.latent_argmax(x, w, random_state=random_state) for x in X]


class CompletedStructure:
    """A structure written by hand, completed: what it defines is used as it is; what it
    lacks of :class:`Structure` and of its capabilities' batch forms comes from defaults
    (``identity``, which ``as_structure`` makes from its class name and ``get_params``;
    its capabilities from the methods it has, ``as_batch`` and ``subset`` as plain lists, a
    maximising decoder, ``score`` as minus the mean loss, and the batch forms as loops).
    Immutable; pickles as the object it completes."""

    __slots__ = ("_inner", "identity", "capabilities")

    def __init__(self, inner, capabilities, identity):
        caps = frozenset(capabilities)
        if not caps:
            raise ConfigError(
                f"{type(inner).__name__} is not a structure a learner can train: it offers no "
                f"capability (a labelled structure needs argmax, joint_feature and loss; a "
                f"latent binary one latent_argmax and latent_feature) and is not a task; see "
                f"latentstruct.tasks.contracts")
        if not hasattr(inner, "n_features"):
            raise ConfigError(f"{type(inner).__name__} has no n_features: a structure says "
                              f"how many weights its joint feature has")
        for name, value in (("_inner", inner), ("identity", identity), ("capabilities", caps)):
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_inner"), name)

    def __setattr__(self, name, value):
        raise AttributeError(f"a structure is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (CompletedStructure, (self._inner, self.capabilities, self.identity))

    def __repr__(self) -> str:
        return f"CompletedStructure({self._inner!r})"

    def _own(self, name):
        return getattr(self._inner, name, None)

    @property
    def n_features(self) -> int:
        return int(self._inner.n_features)

    def as_batch(self, X):
        own = self._own("as_batch")
        return own(X) if own is not None else list(X)

    def subset(self, X, indices):
        own = self._own("subset")
        return own(X, indices) if own is not None else [X[int(i)] for i in indices]

    def argmax_is_maximum(self) -> bool:
        own = self._own("argmax_is_maximum")
        return bool(own()) if own is not None else True

    def score(self, Y_true, Y_pred) -> float:
        own = self._own("score")
        if own is not None:
            return float(own(Y_true, Y_pred))
        return -float(np.mean(self.loss_batch(list(Y_true), list(Y_pred))))

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list:
        own = self._own("argmax_results")
        if own is not None:
            return own(X, w, Y, random_state=random_state)
        return loop_argmax_results(self, X, w, Y, random_state=random_state)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        own = self._own("argmax_batch")
        if own is not None:
            return own(X, w, Y, random_state=random_state)
        return [r.structure for r in self.argmax_results(X, w, Y, random_state=random_state)]

    def joint_feature_difference(self, x, y_a, y_b):
        own = self._own("joint_feature_difference")
        if own is not None:
            return own(x, y_a, y_b)
        return self._inner.joint_feature(x, y_a) - self._inner.joint_feature(x, y_b)

    def joint_feature_differences(self, X, Y_a, Y_b):
        own = self._own("joint_feature_differences")
        if own is not None:
            return own(X, Y_a, Y_b)
        return loop_joint_feature_differences(self, X, Y_a, Y_b)

    def loss_batch(self, Y_true, Y_pred) -> np.ndarray:
        own = self._own("loss_batch")
        if own is not None:
            return np.asarray(own(Y_true, Y_pred), dtype=np.float64)
        return loop_loss_batch(self._inner, Y_true, Y_pred)

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list:
        own = self._own("latent_argmax_batch")
        if own is not None:
            return own(X, w, random_state=random_state)
        return loop_latent_argmax_batch(self._inner, X, w, random_state=random_state)

    def decision_batch(self, X, w) -> np.ndarray:
        own = self._own("decision_batch")
        if own is not None:
            return np.asarray(own(X, w), dtype=np.float64)
        return latent_argmax_decisions(self, X, w)
