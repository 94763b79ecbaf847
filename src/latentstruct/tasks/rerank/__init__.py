"""Reranking k-best dependency trees with hidden variables (``rerank``, Koo & Collins 2005).

Modules: ``task`` (:class:`RerankTask`: the hidden-value domains, reading, evaluating and
saving; its docstring describes the model), ``structure`` (:class:`RerankStructure`, which
the task holds: the weight layout, log Z, expected features and max-product per
candidate), ``featurizer``
(:class:`RerankFeaturizer`: the parser, POS column, base-score scale and input kind of the
training lists, and the hashed candidate templates; the task's ``fit`` and ``featurize``
delegate to it), ``data`` (k-best datasets, the featurised :class:`RerankCorpus`, oracle
targets, metrics, CoNLL-U output), ``features`` (the hashed node and edge templates,
compiled), ``scoring`` (the compiled belief-propagation kernels per sentence) and ``raw``
(``make_dataset``'s in-memory k-best lists).
"""

from .data import KBestRecords, RerankCorpus, RerankTarget, kbest_dataset
from .featurizer import RerankFeaturizer
from .structure import CandidateExpectation, RerankMarginals, RerankStructure
from .task import DOMAINS, GRAPHS, RerankTask

__all__ = ["RerankTask", "RerankStructure", "RerankFeaturizer", "RerankCorpus",
           "KBestRecords", "RerankTarget",
           "RerankMarginals", "CandidateExpectation", "kbest_dataset", "DOMAINS", "GRAPHS"]
