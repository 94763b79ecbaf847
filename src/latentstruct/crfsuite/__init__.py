"""sklearn-crfsuite's API on latentstruct: ``from latentstruct.crfsuite import CRF, metrics``.

The one-line switch for sklearn-crfsuite's users: :class:`CRF` takes every constructor
parameter of ``sklearn_crfsuite.CRF`` (same names, defaults and meaning), offers its
methods (``fit(X, y, X_dev=None, y_dev=None)``, ``predict``, ``predict_single``,
``predict_marginals``, ``predict_marginals_single``, ``score``) and fitted attributes
(``classes_``, ``size_``, ``num_attributes_``, ``attributes_``, ``state_features_``,
``transition_features_``, ``training_log_``, ``tagger_``), :mod:`.metrics` its metrics and
:mod:`.scorers` its scorers.
See ``docs/guide/crfsuite.md`` for what differs and why.
"""

from . import metrics, scorers
from .estimator import ALGORITHMS, CRF, TrainingLog

__all__ = ["CRF", "metrics", "scorers", "ALGORITHMS", "TrainingLog"]
