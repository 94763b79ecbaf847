"""sklearn-crfsuite's scorers: ``from latentstruct.crfsuite import scorers``.

Scorer objects for scikit-learn's ``cross_val_score``, ``GridSearchCV`` and
``RandomizedSearchCV`` (``scoring=scorers.flat_accuracy``), made as sklearn-crfsuite makes
them, over this package's :mod:`.metrics`.
"""

from sklearn.metrics import make_scorer

from . import metrics

__all__ = ["flat_accuracy", "sequence_accuracy"]

#: the share of tokens labelled right (``metrics.flat_accuracy_score``)
flat_accuracy = make_scorer(metrics.flat_accuracy_score)
#: the share of sequences labelled wholly right (``metrics.sequence_accuracy_score``)
sequence_accuracy = make_scorer(metrics.sequence_accuracy_score)
