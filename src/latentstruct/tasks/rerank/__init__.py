"""Reranking k-best dependency trees with hidden variables (``rerank``, Koo & Collins 2005).

Modules: ``task`` (:class:`RerankTask`: the model, hidden-value domains, log Z, expected
features and max-product per candidate; its docstring describes the model), ``featurizer``
(:class:`RerankFeaturizer`: the parser, POS column, base-score scale and input kind of the
training lists, and the hashed candidate templates; the task's ``fit`` and ``featurize``
delegate to it), ``data`` (k-best datasets, the featurised :class:`RerankCorpus`, oracle
targets, metrics, CoNLL-U output), ``features`` (the hashed node and edge templates,
compiled), ``scoring`` (the compiled belief-propagation kernels per sentence) and ``raw``
(``make_dataset``'s in-memory k-best lists).
"""

from .data import KBestRecords, RerankCorpus, RerankTarget, kbest_dataset
from .featurizer import RerankFeaturizer
from .task import DOMAINS, GRAPHS, CandidateExpectation, RerankMarginals, RerankTask

__all__ = ["RerankTask", "RerankFeaturizer", "RerankCorpus", "KBestRecords", "RerankTarget",
           "RerankMarginals", "CandidateExpectation", "kbest_dataset", "DOMAINS", "GRAPHS"]
