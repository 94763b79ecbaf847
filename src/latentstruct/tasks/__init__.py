"""Tasks: features, loss and constraints of each application (registered by name).

Each task declares the capabilities it offers (``tasks.contracts``); learners declare the
ones they need.  The shared contract is at this level (``base``, ``contracts``,
``validation``, ``reports``, ``label_factored``, ``sampling``, ``negatives``); each
application family is a subpackage with its own public face: ``sequence`` (chunk, pos,
citations, sequence), ``pairs`` (paraphrase, rte), ``translit``, ``grammaticality``, ``dependency``,
``rerank``, ``doccls`` and ``hidden_chain`` (hcrf).
"""

from .base import TASKS, Dataset, LatentBinaryTask, StructuredTask, Task, get_task_class, register_task
from .contracts import CAPABILITIES, Capability, missing_methods
from .sampling import indirect_supervision_sample
from .sequence import (ChunkTask, CitationTask, PosTask, SequenceCorpus, SequenceLabellingTask,
                       SequenceTask)
from .dependency import DependencyTask
from .doccls import DocumentClassificationTask, DocumentMatrix
from .grammaticality import ChunkingView, GrammaticalityTask
from .hidden_chain import HiddenChainTask
from .pairs import GraphPairTask, ParaphraseTask, RteTask
from .rerank import RerankCorpus, RerankTask
from .translit import TransliterationTask

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
]
