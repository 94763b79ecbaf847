"""Multiclass document classification (``doccls``): 20 Newsgroups and any JSON-lines corpus.

Modules: ``task`` (:class:`DocumentClassificationTask`: the multiclass model and its
label-factored capability; its docstring describes the model), ``featurizer``
(:class:`DocumentFeaturizer`: the vocabulary and idf weights over scikit-learn's
``CountVectorizer``, or a matrix's column count, and the class labels; the task's ``fit``,
``featurize`` and ``encode_targets`` delegate to it), ``matrix``
(:class:`DocumentMatrix`, featurised documents), ``raw`` (``make_dataset``'s texts),
``numeric`` (``make_dataset``'s numeric matrices: numpy or scipy.sparse, whose columns are
the features) and ``marginals`` (softmax over the classes, for the CRF).
"""

from .featurizer import DocumentFeaturizer
from .matrix import DocumentMatrix, concat_document_matrices
from .task import FEATURES, MULTICLASS_ARITY, SPLITS, DocumentClassificationTask

__all__ = [
    "DocumentMatrix",
    "concat_document_matrices",
    "DocumentClassificationTask",
    "DocumentFeaturizer",
    "MULTICLASS_ARITY",
    "FEATURES",
    "SPLITS",
]
