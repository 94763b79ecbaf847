"""Tasks: features, loss and constraints of each application (registered by name).

Each task declares the capabilities it offers (``tasks.contracts``); learners declare the
ones they need.  The shared contract is at this level (``base``, ``contracts``,
``validation``, ``reports``, ``label_factored``, ``sampling``, ``negatives``); each
application family is a subpackage with its own public face: ``sequence`` (chunk, pos,
citations, sequence), ``pairs`` (paraphrase, rte), ``translit``, ``grammaticality``, ``dependency``,
``rerank``, ``doccls``, ``hidden_chain`` (hcrf) and ``graph`` (graph, graph-decision).

Each task is a structure (the contract's members: Φ, loss, argmax, ...) holding a
featurizer, a scikit-learn transformer in its family's ``featurizer`` module
(``ChainFeaturizer``, ``DependencyFeaturizer``, ...) that turns raw records into the corpus
the structure decodes over (``task.featurizer_`` once fitted).
"""

from .base import (TASKS, ComposedBinaryTask, ComposedTask, Dataset, LatentBinaryTask, MaxDecodableDefaults, OwnStructureTask,
                   StructuredTask, Task, get_task_class, register_task)
from .contracts import CAPABILITIES, Capability, missing_methods
from .sampling import indirect_supervision_sample
from .reports import LabelAccuracy, TagAccuracy, evaluate_with_report
from .sequence import (ChainFeaturizer, ChainStructure, ChunkReader, ChunkScores, ChunkTask,
                       CitationFeaturizer, CitationReader, CitationTask, CrfsuiteReader,
                       PosReader, PosTask, SentenceReader, SequenceCorpus,
                       SequenceLabellingTask, SequenceTask)
from .dependency import DependencyFeaturizer, DependencyStructure, DependencyTask
from .doccls import DocumentClassificationTask, DocumentFeaturizer, DocumentMatrix
from .graph import GraphDecisionTask, GraphFeaturizer, GraphTask
from .grammaticality import ChunkingView, GrammaticalityFeaturizer, GrammaticalityTask, ViewsStructure
from .hidden_chain import HiddenChainFeaturizer, HiddenChainStructure, HiddenChainTask
from .pairs import GraphPairTask, PairFeaturizer, ParaphraseTask, RteTask
from .rerank import RerankCorpus, RerankFeaturizer, RerankStructure, RerankTask
from .translit import TranslitFeaturizer, TransliterationTask

__all__ = [
    "TASKS",
    "Dataset",
    "Task",
    "StructuredTask",
    "OwnStructureTask",
    "ComposedTask",
    "ComposedBinaryTask",
    "MaxDecodableDefaults",
    "LatentBinaryTask",
    "get_task_class",
    "register_task",
    "CAPABILITIES",
    "Capability",
    "missing_methods",
    "indirect_supervision_sample",
    "ChunkTask",
    "PosTask",
    "CitationTask",
    "SequenceTask",
    "SequenceCorpus",
    "SequenceLabellingTask",
    "TransliterationTask",
    "GraphPairTask",
    "ParaphraseTask",
    "RteTask",
    "GrammaticalityTask",
    "ChunkingView",
    "HiddenChainTask",
    "DependencyTask",
    "DocumentClassificationTask",
    "DocumentMatrix",
    "RerankTask",
    "RerankCorpus",
    "GraphTask",
    "GraphDecisionTask",
    # the sequence tasks' readers and metrics, and the evaluation report
    "SentenceReader",
    "PosReader",
    "ChunkReader",
    "CitationReader",
    "CrfsuiteReader",
    "TagAccuracy",
    "ChunkScores",
    "LabelAccuracy",
    "evaluate_with_report",
    # each family's featurizer (featurizer.py) and named structure base
    "ChainFeaturizer",
    "CitationFeaturizer",
    "ChainStructure",
    "DependencyFeaturizer",
    "DependencyStructure",
    "DocumentFeaturizer",
    "GrammaticalityFeaturizer",
    "ViewsStructure",
    "HiddenChainFeaturizer",
    "HiddenChainStructure",
    "PairFeaturizer",
    "TranslitFeaturizer",
    "RerankFeaturizer",
    "RerankStructure",
    "GraphFeaturizer",
]
