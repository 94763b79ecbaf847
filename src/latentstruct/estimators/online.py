"""``partial_fit`` on the estimators whose learner learns incrementally: present for the
online learners, absent (``hasattr`` False, an AttributeError naming them) for the others,
as scikit-learn's meta-estimators expect of an optional method."""

from __future__ import annotations

import functools

from ..exceptions import ConfigError

__all__ = ["OnlineOnly"]


def _online_learners() -> str:
    from ..learners.online.online import online_learner_names

    return ", ".join(online_learner_names())


class OnlineOnly:
    """``partial_fit`` on an estimator whose learner learns incrementally; elsewhere absent
    (``hasattr`` False, as scikit-learn's meta-estimators ask), with an AttributeError that
    names the learners that do."""

    def __init__(self, method):
        self.method = method
        functools.update_wrapper(self, method)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.method
        try:
            learner_cls = type(obj.learner_) if getattr(obj, "learner_", None) is not None \
                else obj._classes()[1]
        except ConfigError:  # an unknown task or learner: the call says so
            return self.method.__get__(obj, owner)
        if not hasattr(learner_cls, "partial_fit"):
            raise AttributeError(
                f"{type(obj).__name__} with learner {learner_cls.registry_name!r} has no "
                f"partial_fit: that learner trains on the whole data at once (use fit). The "
                f"online learners learn incrementally: {_online_learners()} (crf with "
                f"solver='sgd'); e.g. {type(obj).__name__}(learner='perceptron')")
        return self.method.__get__(obj, owner)
