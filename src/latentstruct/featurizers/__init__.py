"""Featurizers: raw data to numbers, as scikit-learn transformers.

Each built-in task is a featurizer (raw records to the numbers its structure decodes over,
in the family's subpackage: ``ChainFeaturizer``, ``DependencyFeaturizer``, ...) plus a
structure.  The family featurizers are built from the general ones here:

* :class:`TokenTemplates`: sentences to their tokens' attribute strings (the chain's
  built-in templates);
* :class:`Vocabulary` and :class:`AttributeHasher`: attribute names to feature ids, learned
  (with ``min_count``) or hashed;
* :class:`SequenceLabelEncoder` and :class:`ClassEncoder`: target encoding, refusing a label
  the model never saw (:class:`UnseenLabelError`);
* :class:`SpacyVectors`: a spaCy pipeline's contextual token vectors (``doc.tensor``),
  cached on disk per corpus, to give the estimators beside the raw input, e.g.
  ``Tagger().fit(list(zip(X, SpacyVectors().transform(X))), y)``.

This layer sits between ``data/`` (which it may import, with the leaves ``exceptions``,
``limits`` and ``params``) and ``tasks/``; it never trains or imports a task.
"""

from latentstruct.featurizers.spacy_vectors import SpacyVectors, cosine_similarities
from latentstruct.featurizers.targets import (
    ClassEncoder,
    SequenceLabelEncoder,
    UnseenLabelError,
    encode_labels,
)
from latentstruct.featurizers.templates import TokenTemplates, token_attributes, word_shape
from latentstruct.featurizers.vocabulary import AttributeHasher, Vocabulary, fit_by_frequency

__all__ = ["SpacyVectors", "cosine_similarities", "TokenTemplates", "token_attributes",
           "word_shape", "Vocabulary", "AttributeHasher", "fit_by_frequency",
           "SequenceLabelEncoder", "ClassEncoder", "UnseenLabelError", "encode_labels"]
