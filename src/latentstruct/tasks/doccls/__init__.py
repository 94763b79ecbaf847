"""Multiclass document classification (``doccls``): 20 Newsgroups and any JSON-lines corpus.

Modules: ``task`` (:class:`DocumentClassificationTask`: parameters, reading, evaluation,
persistence; its docstring describes the model), ``structure``
(:class:`MulticlassStructure`, the immutable structure a fitted task holds and learners see:
Φ, the 0/1 loss, the argmax and the label-factored parts), ``featurizer``
(:class:`DocumentFeaturizer`: the vocabulary and idf weights over scikit-learn's
``CountVectorizer``, or a matrix's column count, and the class labels; the task's ``fit``,
``featurize`` and ``encode_targets`` delegate to it), ``matrix``
(:class:`DocumentMatrix`, featurised documents), ``raw`` (``make_dataset``'s texts),
``numeric`` (``make_dataset``'s numeric matrices: numpy or scipy.sparse, whose columns are
the features) and ``marginals`` (softmax over the classes, for the CRF).
"""

from .featurizer import DocumentFeaturizer
from .matrix import DocumentMatrix, concat_document_matrices
from .structure import MulticlassStructure
from .task import FEATURES, MULTICLASS_ARITY, SPLITS, DocumentClassificationTask

__all__ = [
    "DocumentMatrix",
    "concat_document_matrices",
    "DocumentClassificationTask",
    "DocumentFeaturizer",
    "MULTICLASS_ARITY",
    "MulticlassStructure",
    "FEATURES",
    "SPLITS",
]
