"""Tasks: features, loss and constraints of each application (registered by name)."""

from .base import TASKS, Dataset, StructuredTask, get_task_class, register_task
from .citations import CitationTask
from .grammaticality import GrammaticalityTask
from .graph_pairs import ParaphraseTask, RteTask
from .sequence import ChunkTask, PosTask, SequenceCorpus, SequenceLabellingTask
from .transliteration import TransliterationTask

__all__ = [
    "TASKS",
    "Dataset",
    "StructuredTask",
    "get_task_class",
    "register_task",
    "ChunkTask",
    "PosTask",
    "SequenceCorpus",
    "SequenceLabellingTask",
    "TransliterationTask",
]
