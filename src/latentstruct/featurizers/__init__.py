"""Featurizers: raw data to numbers, as scikit-learn transformers.

A featurizer turns raw input (token lists, texts) into arrays the estimators take beside
the raw input, e.g. ``Tagger().fit(list(zip(X, SpacyVectors().transform(X))), y)``.  This
layer sits between ``data/`` (which it may import, with the leaves ``exceptions`` and
``limits``) and ``tasks/``; it never trains or imports a task.

* :class:`SpacyVectors`: a spaCy pipeline's contextual token vectors (``doc.tensor``),
  cached on disk per corpus.
"""

from latentstruct.featurizers.spacy_vectors import SpacyVectors, cosine_similarities

__all__ = ["SpacyVectors", "cosine_similarities"]
