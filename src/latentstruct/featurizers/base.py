"""The base of the package's featurizers: a scikit-learn estimator whose ``fit`` checks its
parameters once (:class:`~latentstruct.params.CheckedParams`).

A featurizer is ``class F(TransformerMixin, Featurizer)``: scikit-learn's transformer
(``fit``, ``transform``, ``fit_transform``, ``get_params``/``set_params``, ``clone``) whose
``fit`` checks ``get_params()`` against ``_parameter_constraints`` on entry, except inside a
task's ``fit`` that checked the values it builds the featurizer from already.  Its output
width, where it has one, is ``n_features_out_`` (scikit-learn's name).
"""

from __future__ import annotations

from sklearn.base import BaseEstimator

from latentstruct.params import CheckedParams

__all__ = ["Featurizer"]


class Featurizer(CheckedParams, BaseEstimator):
    """A scikit-learn estimator whose ``fit`` (and ``partial_fit``) checks its parameters on
    entry, once (``latentstruct.params.fit_context``); the featurizers' base, with
    ``TransformerMixin`` before it."""
