"""Sequence labelling tasks: CoNLL-2000 chunking (``chunk``), UD POS tagging (``pos``),
Cora citation field extraction (``citations``) and feature-dict sentences with any labels
(``sequence``), all first-order chains decoded by Viterbi.

Modules:

* ``labelling`` -- :class:`SequenceLabellingTask`, the base task (parameters, ``fit``,
  J-LIS sampling, evaluation, persistence), a featurizer plus a structure:
* ``featurizer`` -- :class:`ChainFeaturizer`, sentences to a :class:`SequenceCorpus` (the
  input kind, the templates, the attribute index or hashing);
* ``structure`` -- :class:`ChainStructure`, the weight layout, joint feature, Hamming loss
  and Viterbi argmax (with the capabilities' marginals and label-factored parts);
* ``params`` -- the sequence tasks' parameter declarations;
* ``chunk``, ``pos``, ``citations`` -- three registered tasks and their file formats;
* ``generic`` -- :class:`SequenceTask` (``sequence``): feature dicts, any labels, CRFsuite's
  data format;
* ``corpus`` -- :class:`SequenceCorpus`, featurised sentences as one CSR of attributes;
* ``kernels`` -- the compiled emission-score, joint-feature and loss-augmentation kernels;
* ``capabilities`` -- the *marginalizable* and *label-factored* mixins of the structure;
* ``raw`` -- ``make_dataset``'s in-memory sentences (token lists, feature dicts or numbers);
* ``numeric`` -- numbers in: a (tokens x d) array per sentence, or ``(tokens, array)`` pairs;
* ``kinds`` -- the kind of a sentence record, and what a fitted task accepts;
* ``encodings``, ``chunk_metrics`` -- chunk encodings (IOB1/IOB2/IOE1/IOE2/O+C) and
  conlleval's chunk scores.
"""

from ...featurizers.templates import token_attributes, word_shape
from .capabilities import (
    PART_ARITY,
    ChainPartScores,
    LabelFactoredSequence,
    MarginalizableSequence,
    SequenceLabelCounts,
    SequenceLabelParts,
)
from .chunk import ChunkReader, ChunkTask
from .chunk_metrics import ChunkScores, chunk_f1, chunk_report, detect_tag_scheme, extract_chunks
from .corpus import SequenceCorpus, as_corpus, concat_corpora
from .encodings import (
    ENCODINGS,
    Encoding,
    Span,
    convert,
    encoding_labels,
    get_encoding,
    is_well_formed,
    majority_vote,
    spans_from_tags,
    tags_from_spans,
)
from .featurizer import ChainFeaturizer
from .generic import CrfsuiteReader, SequenceTask
from .labelling import SentenceReader, SequenceLabellingTask
from .structure import ChainStructure
from .pos import TAG_COLUMNS, PosReader, PosTask, check_tagger, upos_case_tags
from .citations import CitationFeaturizer, CitationReader, CitationTask, citation_attributes

__all__ = [
    "SequenceLabellingTask",
    "ChainFeaturizer",
    "CitationFeaturizer",
    "ChainStructure",
    "ChunkTask",
    "PosTask",
    "CitationTask",
    "SequenceTask",
    "SentenceReader",
    "PosReader",
    "ChunkReader",
    "CitationReader",
    "CrfsuiteReader",
    "ChunkScores",
    "SequenceCorpus",
    "as_corpus",
    "concat_corpora",
    "word_shape",
    "token_attributes",
    "citation_attributes",
    "TAG_COLUMNS",
    "upos_case_tags",
    "check_tagger",
    "MarginalizableSequence",
    "LabelFactoredSequence",
    "ChainPartScores",
    "SequenceLabelParts",
    "SequenceLabelCounts",
    "PART_ARITY",
    "Span",
    "Encoding",
    "ENCODINGS",
    "get_encoding",
    "spans_from_tags",
    "tags_from_spans",
    "convert",
    "is_well_formed",
    "encoding_labels",
    "majority_vote",
    "extract_chunks",
    "chunk_f1",
    "chunk_report",
    "detect_tag_scheme",
]
