"""Multiclass document classification (``doccls``): 20 Newsgroups and any JSON-lines corpus.

Modules: ``task`` (:class:`DocumentClassificationTask`: vocabulary, features, the multiclass
model and its label-factored capability; its docstring describes the model), ``matrix``
(:class:`DocumentMatrix`, featurised documents) and ``raw`` (``make_dataset``'s texts).
"""

from .matrix import DocumentMatrix, concat_document_matrices
from .task import FEATURES, MULTICLASS_ARITY, SPLITS, DocumentClassificationTask

__all__ = [
    "DocumentMatrix",
    "concat_document_matrices",
    "DocumentClassificationTask",
    "MULTICLASS_ARITY",
    "FEATURES",
    "SPLITS",
]
