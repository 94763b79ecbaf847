"""``CRF.tagger_``: python-crfsuite's ``Tagger`` surface over a fitted latentstruct chain.

sklearn-crfsuite users reach into ``crf.tagger_`` for ``labels()``, ``tag(xseq)``,
``set(xseq)`` followed by ``marginal(label, position)`` and ``probability(yseq)``, and
``info()`` (the model's labels, attributes, state and transition weights).  This object
answers them from the fitted estimator: no file is opened and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ChainTagger", "ModelInfo"]


@dataclass
class ModelInfo:
    """What python-crfsuite's ``Tagger.info()`` gives: ``header`` (``size``,
    ``num_attrs``, ``num_labels``), ``labels`` and ``attributes`` ({name: id}),
    ``transitions`` ({(label_from, label_to): weight}) and ``state_features``
    ({(attribute, label): weight}), the non-zero weights only."""

    header: dict
    labels: dict
    attributes: dict
    transitions: dict = field(default_factory=dict)
    state_features: dict = field(default_factory=dict)


class ChainTagger:
    """python-crfsuite's ``Tagger`` methods over a fitted latentstruct sequence estimator."""

    def __init__(self, model, size: int, labels=None):
        self._model = model
        self._size = int(size)
        # the labels in CRFsuite's order (first seen in training); None: the model's
        self._labels = None if labels is None else list(labels)
        self._xseq = None
        self._marginals = None

    def labels(self) -> list[str]:
        """The model's labels, in CRFsuite's order (as they first occur in the training
        data; a model read from a file: the file's order)."""
        return list(self._model.task_.labels_) if self._labels is None else list(self._labels)

    def set(self, xseq) -> None:
        """Fix the sequence that ``marginal`` and ``probability`` then refer to."""
        self._xseq = list(xseq)
        self._marginals = None

    def tag(self, xseq=None) -> list[str]:
        """The best label sequence of ``xseq`` (or of the sequence given to ``set``)."""
        if xseq is None:
            xseq = self._current()
        return list(self._model.predict([list(xseq)])[0])

    def marginal(self, y, pos: int) -> float:
        """p(y_pos = y | x) of the sequence given to ``set``."""
        if self._marginals is None:
            self._marginals = self._model.predict_marginals([self._current()])[0]
        if not 0 <= int(pos) < len(self._marginals):
            raise ValueError(f"position {pos} is outside the sequence of "
                             f"{len(self._marginals)} items")
        if y not in self._marginals[int(pos)]:
            raise ValueError(f"{y!r} is not a label of the model ({', '.join(self.labels())})")
        return float(self._marginals[int(pos)][y])

    def probability(self, yseq) -> float:
        """p(yseq | x) of the sequence given to ``set``."""
        xseq = self._current()
        task, learner = self._model.task_, self._model.learner_
        dataset = task.make_dataset([xseq], [list(yseq)])
        X = task.featurize(dataset)
        y = task.encode_targets(dataset.targets)[0]
        chain = task.structure_
        x = chain.as_batch(X)[0]
        score = float(chain.joint_feature(x, y).dot(learner.coef_))
        return float(np.exp(score - chain.log_partition(x, learner.coef_)))

    def info(self) -> ModelInfo:
        """The model's labels, attributes and non-zero weights, as python-crfsuite's."""
        task, coef = self._model.task_, self._model.learner_.coef_
        labels = list(task.labels_)
        attributes = task.attr_index_.names if hasattr(task.attr_index_, "names") else None
        emission, transition, _, _ = task.structure_.split_weights(coef)
        rows, cols = np.nonzero(emission)
        state = {(attributes[a] if attributes is not None else int(a), labels[k]):
                 float(emission[a, k]) for a, k in zip(rows.tolist(), cols.tolist())}
        trans = {(labels[i], labels[j]): float(transition[i, j])
                 for i, j in zip(*np.nonzero(transition))}
        names = attributes if attributes is not None else []
        header = {"size": self._size, "num_attrs": len(names), "num_labels": len(labels)}
        return ModelInfo(header=header,
                         labels={name: i for i, name in enumerate(self.labels())},
                         attributes={name: i for i, name in enumerate(names)},
                         transitions=trans, state_features=state)

    def _current(self):
        if self._xseq is None:
            raise ValueError("no sequence is set: call tagger.set(xseq) first, or give "
                             "tag(xseq) its sequence")
        return self._xseq
