"""Paraphrase and entailment as a structure: :class:`GraphPairStructure`.

A small immutable object: the feature index a fitted
:class:`~latentstruct.tasks.pairs.featurizer.PairFeaturizer` learned (the weight layout:
a name per weight), the number of the user's scores per word pair (k, 0 without), which
sides have word-deletion variables (the task class's layout) and the two-stage heuristic's
threshold.  It is the latent-binary model of the graph-pair tasks (the ILP argmax over
featurised :class:`~latentstruct.tasks.pairs.GraphPair` examples, Phi(x, h), the two-stage
heuristic and ``explain``, from :class:`~latentstruct.tasks.pairs.decoding.GraphAlignmentDecoding`);
no parsing, reading or evaluation.  A :class:`~latentstruct.tasks.pairs.GraphPairTask`
builds one in ``fit`` and ``from_state`` (``task.structure_``); learners see it through
``task.structure()``.
"""

from __future__ import annotations

import numpy as np

from ...data.features import FeatureIndex
from ..base import LatentBinaryDefaults
from ..contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY
from .decoding import GraphAlignmentDecoding

__all__ = ["GraphPairStructure"]


class GraphPairStructure(GraphAlignmentDecoding, LatentBinaryDefaults):
    """Latent graph alignments of sentence pairs, scored by the features of the
    feature index (:mod:`latentstruct.tasks.pairs`, "Structures" and "Features").

    Parameters
    ----------
    feature_index : FeatureIndex
        The fitted, frozen index: one name per weight, the fixed ones first.
    n_pair_scores : int, default 0
        k, the user's scores per word pair (0: none); their ``map:score:K`` features are
        in the index.
    delete_nodes1, delete_nodes2 : bool, default True
        Whether the words of each graph have deletion variables (RTE's text has none).
    heuristic_threshold : float, default 0.5
        WNSim above which the two-stage heuristic maps two words.

    Immutable: a refitted task builds a new one.
    """

    # No random-ties: the ILP breaks ties deterministically (random_state is ignored).
    capabilities = frozenset({LATENT_BINARY, HEURISTIC, EXPLAINABLE})

    def __init__(self, feature_index: FeatureIndex, n_pair_scores: int = 0, *,
                 delete_nodes1: bool = True, delete_nodes2: bool = True,
                 heuristic_threshold: float = 0.5):
        if not isinstance(feature_index, FeatureIndex):
            raise ValueError(f"GraphPairStructure: feature_index must be a FeatureIndex, got "
                             f"{type(feature_index).__name__}")
        k = n_pair_scores
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"GraphPairStructure: n_pair_scores must be an int >= 0, got {k!r}")
        for name, value in (("feature_index_", feature_index), ("n_pair_scores_", int(k)),
                            ("delete_nodes1", bool(delete_nodes1)),
                            ("delete_nodes2", bool(delete_nodes2)),
                            ("heuristic_threshold", heuristic_threshold)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"a GraphPairStructure is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (_rebuild, (type(self), self.feature_index_, self.n_pair_scores_,
                           self.delete_nodes1, self.delete_nodes2, self.heuristic_threshold))

    def __repr__(self) -> str:
        return (f"GraphPairStructure(n_features={self.n_features}, "
                f"n_pair_scores={self.n_pair_scores_}, delete_nodes1={self.delete_nodes1}, "
                f"delete_nodes2={self.delete_nodes2}, "
                f"heuristic_threshold={self.heuristic_threshold!r})")

    def __sklearn_is_fitted__(self) -> bool:
        return True  # built from a fitted feature index

    @property
    def n_features(self) -> int:
        return len(self.feature_index_)


def _rebuild(cls, feature_index, k, delete_nodes1, delete_nodes2, heuristic_threshold):
    """Unpickle a :class:`GraphPairStructure` (its keyword-only arguments by name)."""
    return cls(feature_index, k, delete_nodes1=delete_nodes1, delete_nodes2=delete_nodes2,
               heuristic_threshold=heuristic_threshold)
