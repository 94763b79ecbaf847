"""A CRFsuite model file (written by python-crfsuite, sklearn-crfsuite or ``crfsuite
learn``) as a fitted latentstruct estimator: ``CRF(model_filename="x.crfsuite")`` and
``latentstruct.load("x.crfsuite")``.

:func:`latentstruct.data.read_crfsuite_model` reads and checks the file; here its arrays
become the task ``sequence`` (CRFsuite's labels in its order, its attribute names, which
are python-crfsuite's feature-dict names, so the same dicts featurise to the same
attributes) and a ``crf`` learner whose weights are CRFsuite's: the (attribute, label)
emission block and the label-to-label transitions, with zero start and end weights (CRFsuite
has none).  The model then tags and gives marginals as CRFsuite's tagger does (tested to
1e-12 against ``pycrfsuite.Tagger``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["estimator_from_crfsuite_file", "is_crfsuite_file"]


def is_crfsuite_file(path) -> bool:
    """Whether the file at ``path`` starts with CRFsuite's magic bytes (``lCRF``)."""
    import os

    try:
        with open(os.fspath(path), "rb") as fh:
            return fh.read(4) == b"lCRF"
    except OSError:  # a missing or unreadable file: the model loader says so
        return False


def estimator_from_crfsuite_file(path):
    """The fitted ``Estimator(task="sequence", learner="crf")`` of the CRFsuite file at
    ``path`` (``ModelFormatError`` for a file that is not one)."""
    from ..data import read_crfsuite_model
    from ..data.features import FeatureIndex
    from .base import Estimator
    from ..learners import get_learner_class
    from ..tasks import get_task_class
    from ..tasks.sequence.raw import CRFSUITE_NAMES, DICTS

    model = read_crfsuite_model(path)
    index = FeatureIndex(min_count=1)
    for name in model.attributes:
        index.add(name)
    index.freeze()
    task_cls = get_task_class("sequence")
    task = task_cls.from_state(task_cls().get_params(),
                               {"labels": list(model.labels), "attributes": DICTS,
                                "attribute_names": CRFSUITE_NAMES},
                               index.to_arrays(prefix="attr_"))
    L, A = model.n_labels, model.n_attributes
    coef = np.zeros(task.n_features)
    emission = np.zeros((A, L))
    emission[model.state_attributes, model.state_labels] = model.state_weights
    coef[:A * L] = emission.reshape(-1)
    coef[A * L:A * L + L * L] = np.asarray(model.transitions, dtype=np.float64).reshape(-1)
    learner = get_learner_class("crf")(task=task)
    learner._restore({"n_iter_": 0, "objective_curve_": [], "converged_": True}, {"coef_": coef})
    est = Estimator(task="sequence", learner="crf")
    est.task_, est.learner_ = task, learner
    est.classes_ = list(task.labels_)
    return est
