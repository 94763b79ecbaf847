"""Reranking k-best dependency trees with hidden variables (``rerank``, Koo & Collins 2005).

Modules: ``task`` (:class:`RerankTask`: the model, hidden-value domains, log Z, expected
features and max-product per candidate; its docstring describes the model), ``data``
(k-best datasets, the featurised :class:`RerankCorpus`, oracle targets, metrics, CoNLL-U
output), ``features`` (the hashed node and edge templates, compiled), ``scoring`` (the
compiled belief-propagation kernels per sentence) and ``raw`` (``make_dataset``'s in-memory
k-best lists).
"""

from .data import KBestRecords, RerankCorpus, RerankTarget, kbest_dataset
from .task import DOMAINS, GRAPHS, CandidateExpectation, RerankMarginals, RerankTask

__all__ = ["RerankTask", "RerankCorpus", "KBestRecords", "RerankTarget", "RerankMarginals",
           "CandidateExpectation", "kbest_dataset", "DOMAINS", "GRAPHS"]
