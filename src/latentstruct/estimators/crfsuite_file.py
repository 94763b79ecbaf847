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

__all__ = ["estimator_from_crfsuite_file", "is_crfsuite_file", "check_dense_size"]


def is_crfsuite_file(path) -> bool:
    """Whether ``path`` is a regular file starting with CRFsuite's magic bytes (``lCRF``).

    Only a regular file is opened: opening a FIFO would wait for a writer for ever (and a
    device could be read from), so anything else is left to the model loader, which
    refuses it by name."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(os.fspath(path)).st_mode):
            return False
        with open(os.fspath(path), "rb") as fh:
            return fh.read(4) == b"lCRF"
    except OSError:  # a missing or unreadable file: the model loader says so
        return False


def check_dense_size(n_attributes: int, n_labels: int, path) -> None:
    """Refuse a CRFsuite model whose weights, once dense, exceed what a model may take
    (``latentstruct.io.max_model_bytes``): CRFsuite stores only its non-zero weights, and
    the ``sequence`` task holds all A × L emission weights, so a file of a few megabytes
    can ask for terabytes; refused here with the counts, before anything is allocated."""
    from ..exceptions import ModelFormatError
    from ..io import MAX_MODEL_BYTES_ENV, max_model_bytes

    n_weights = n_attributes * n_labels + n_labels * n_labels + 2 * n_labels
    limit = max_model_bytes()
    if 8 * n_weights > limit:
        raise ModelFormatError(
            f"CRFsuite model file {path}: its {n_attributes:,} attributes × {n_labels:,} "
            f"labels make {n_weights:,} weights ({_bytes(8 * n_weights)}) once dense, over "
            f"the {_bytes(limit)} a model may take; if you trust the file, raise "
            f"${MAX_MODEL_BYTES_ENV}")


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,} bytes"


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
    check_dense_size(model.n_attributes, model.n_labels, model.path)
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
    # written in place (the emission block is a view): no second dense copy
    coef[:A * L].reshape(A, L)[model.state_attributes, model.state_labels] = model.state_weights
    coef[A * L:A * L + L * L] = np.asarray(model.transitions, dtype=np.float64).reshape(-1)
    learner = get_learner_class("crf")(structure=task.structure())
    learner._restore({"n_iter_": 0, "objective_curve_": [], "converged_": True}, {"coef_": coef})
    est = Estimator(task="sequence", learner="crf")
    est.task_, est.learner_ = task, learner
    est.classes_ = list(task.labels_)
    return est
