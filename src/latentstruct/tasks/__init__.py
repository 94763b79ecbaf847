"""Tasks: features, loss and constraints of each application (registered by name).

Each task declares the capabilities it offers (``tasks.contracts``); learners declare the
ones they need.
"""

from .base import TASKS, Dataset, LatentBinaryTask, StructuredTask, Task, get_task_class, register_task
from .citations import CitationTask
from .contracts import CAPABILITIES, Capability, missing_methods
from .dependency import DependencyTask
from .doccls import DocumentClassificationTask, DocumentMatrix
from .grammaticality import ChunkingView, GrammaticalityTask
from .graph_pairs import GraphPairTask, ParaphraseTask, RteTask
from .rerank import RerankCorpus, RerankTask
from .sampling import indirect_supervision_sample
from .sequence import ChunkTask, PosTask, SequenceCorpus, SequenceLabellingTask
from .transliteration import TransliterationTask

__all__ = [
    "TASKS",
    "Dataset",
    "Task",
    "StructuredTask",
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
    "SequenceCorpus",
    "SequenceLabellingTask",
    "TransliterationTask",
    "GraphPairTask",
    "ParaphraseTask",
    "RteTask",
    "GrammaticalityTask",
    "ChunkingView",
    "DependencyTask",
    "DocumentClassificationTask",
    "DocumentMatrix",
    "RerankTask",
    "RerankCorpus",
]
