"""CoNLL-2000 chunking (``chunk``): ``word POS chunk-tag`` files, scored by conlleval F1.

The task is :class:`~latentstruct.tasks.sequence.SequenceLabellingTask` with the POS tags
as input attributes; this module adds the readers of labelled and unlabelled chunking input,
the tag schemes (IOB1 / IOB2) of training and evaluation files, and conlleval's metrics.
"""

from __future__ import annotations

import os

from ...data.readers import (
    ChunkSentence,
    excerpt,
    read_conll2000,
    read_lines,
    write_conll2000,
)
from ...data.readers.docbin import is_docbin_path, read_docbin_chunks
from ...exceptions import InputError
from ...params import Options
from ..base import Dataset, register_task
from .chunk_metrics import ChunkScores, detect_tag_scheme
from .encodings import convert
from .dict_sentence import CRFSUITE_NAMES
from .labelling import SentenceReader, SequenceLabellingTask
from .well_formed import CONSTRAINED_PARAMETER, WellFormedTags
from .raw import check_writable, chunk_record, chunk_tag_problem, sequence_dataset

__all__ = ["ChunkTask", "ChunkReader", "INPUT_SCHEMES", "read_words_pos"]


#: chunk tag schemes a CoNLL-2000 file can be written in (``ChunkTask.input_scheme``)
INPUT_SCHEMES = ("iob1", "iob2")


def _first_fields(path) -> list[str]:
    """The whitespace-separated fields of the first non-blank line of ``path`` ([] if none)."""
    for _, text in read_lines(path):
        if text.strip():
            return text.split()
    return []


def read_words_pos(path) -> list[ChunkSentence]:
    """Unlabelled chunking input: ``word POS`` per line, a blank line after each sentence.
    The records' chunk tags are ``_`` (unknown)."""
    name = os.fspath(path)
    sentences, words, pos, start = [], [], [], 0
    for lineno, text in read_lines(path):
        fields = text.split()
        if not fields:
            if words:
                sentences.append(ChunkSentence(words, pos, ("_",) * len(words), start))
                words, pos = [], []
            continue
        if len(fields) != 2:
            raise InputError(
                f"expected 2 columns 'word POS' like the file's first line (unlabelled input), "
                f"got {len(fields)}: {excerpt(text)}; give every line the same columns",
                name, lineno)
        if not words:
            start = lineno
        words.append(fields[0])
        pos.append(fields[1])
    if words:
        sentences.append(ChunkSentence(words, pos, ("_",) * len(words), start))
    return sentences


class ChunkReader(SentenceReader):
    """How ``chunk`` reads and writes its sentences: CoNLL-2000 ``word POS chunk-tag``
    files (``word POS`` lines as unlabelled input), Python lists of ``(word, POS)`` pairs,
    and predictions written as CoNLL-2000.

    ``input_scheme`` (``ChunkTask``'s) and ``model_scheme`` (the tag scheme the task was
    fitted on, None before): evaluation data is converted from the first to the second as
    it is read, when both are set and differ.
    """

    task_name = "chunk"

    def __init__(self, input_scheme: str | None = None, model_scheme: str | None = None):
        self.input_scheme = input_scheme
        self.model_scheme = model_scheme

    def words_pos(self, record) -> tuple:
        # a ChunkSentence, or a BinaryRecord (J-LIS binary example) built from one
        return record.words, record.pos

    def tag_checks(self) -> tuple:
        """IOB chunk tags, whatever the kind of sentence (a chunk model's tags are spans)."""
        return chunk_tag_problem, None, False

    def converts_input(self) -> bool:
        """Whether tags of evaluation data are converted (``input_scheme`` set on a fitted
        task whose scheme differs)."""
        return (self.input_scheme is not None and self.model_scheme is not None
                and self.input_scheme != self.model_scheme)

    def _to_model_scheme(self, tags) -> tuple:
        return tuple(convert(tags, self.input_scheme, self.model_scheme))

    def make_dataset(self, X, y=None, *, naming: str = CRFSUITE_NAMES) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of
        ``(word, POS)`` pairs (or of per-token feature dicts); ``y`` a list of IOB chunk-tag
        lists, one tag per token, or None (targets None: unlabelled input for ``predict``).

        The records are the ``ChunkSentence`` records ``read`` builds (line 0), checked as
        the reader checks a file; with ``input_scheme`` set on a fitted task, tags are
        converted to the model's scheme as ``read`` converts test files.
        """
        data = sequence_dataset(X, y, token="(word, POS) pair", build=chunk_record,
                                check_tag=self.tag_checks()[0], naming=naming)
        if y is None or not self.converts_input():
            return data
        targets = [self._to_model_scheme(t) for t in data.targets]
        records = [ChunkSentence(r.words, r.pos, t, r.line) if isinstance(r, ChunkSentence)
                   else r for r, t in zip(data.records, targets)]
        return Dataset(records, targets)

    def read(self, path, *, split: str = "train") -> Dataset:
        """``word POS chunk-tag`` lines (targets: the tags), or for ``split="test"``
        unlabelled ``word POS`` lines (targets None).  With ``input_scheme`` set and a
        fitted task, test tags are converted to the model's scheme.  A ``.spacy`` file
        (spaCy's ``DocBin``: ``python -m spacy convert FILE DIR -c ner`` from CoNLL-2000
        columns) is read by :func:`~latentstruct.data.readers.docbin.read_docbin_chunks`;
        predictions are written as CoNLL-2000 lines."""
        if is_docbin_path(path):
            sentences = read_docbin_chunks(path, need_tags=split == "train")
            if all(t == "_" for s in sentences for t in s.tags):  # no chunks: unlabelled
                return Dataset(sentences, [None] * len(sentences), str(path))
        else:
            sentences = self._read_text(path, split)
            if sentences is None:
                sentences = read_words_pos(path)
                return Dataset(sentences, [None] * len(sentences), str(path))
        if split != "train" and self.converts_input():
            # a sentence with an unknown tag ('_') is not converted: scoring refuses it
            sentences = [s if "_" in s.tags else
                         ChunkSentence(s.words, s.pos, self._to_model_scheme(s.tags), s.line)
                         for s in sentences]
        # '_': a tag that is unknown (partial labels), None in the targets
        return Dataset(sentences, [tuple(None if t == "_" else t for t in s.tags)
                                   for s in sentences], str(path))

    @staticmethod
    def _read_text(path, split: str) -> list[ChunkSentence] | None:
        """The sentences of a CoNLL-2000 text file, or None for unlabelled ``word POS``
        lines (refused for training)."""
        n_fields = len(_first_fields(path))
        if n_fields == 1:
            raise InputError(
                "the file has one column (words only), but the chunker's features need the POS "
                "tag of every word: give 'word POS' lines (Penn Treebank tags, as in "
                "CoNLL-2000), or 'word POS chunk-tag' lines with gold tags", os.fspath(path))
        if n_fields == 2:
            if split == "train":
                raise InputError(
                    "the file has 2 columns 'word POS' and no chunk tags; training needs "
                    "'word POS chunk-tag' lines (CoNLL-2000 format)", os.fspath(path))
            return None
        return read_conll2000(path)

    def write(self, path, records, tags) -> None:
        """CoNLL-2000 ``word POS chunk-tag`` lines with the predicted tags."""
        check_writable(records, self.task_name)
        write_conll2000(path, records, tags)

    def __repr__(self) -> str:
        return (f"ChunkReader(input_scheme={self.input_scheme!r}, "
                f"model_scheme={self.model_scheme!r})")


@register_task
class ChunkTask(WellFormedTags, SequenceLabellingTask):
    """CoNLL-2000 chunking: ``word POS chunk`` files, scored by conlleval F1.

    ``read`` also takes unlabelled input, ``word POS`` per line (what ``predict`` tags); the
    POS column is needed, since the chunker's features use it.  The chunk tag scheme of the
    training file (IOB2 in CoNLL-2000, IOB1 in some older copies) is recorded; ``evaluate``
    refuses a file in another scheme, whose token accuracy would be meaningless.

    Raw form (``make_dataset``): ``X`` holds one sentence per example, a list of
    ``(word, POS)`` pairs, and ``y`` one list of IOB chunk tags per sentence (or None)::

        X = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")],
             [("Rockwell", "NNP"), ("said", "VBD")]]
        y = [["B-NP", "B-VP", "B-NP", "I-NP"], ["B-NP", "B-VP"]]

    A sentence may instead be a list of per-token feature dicts (sklearn-crfsuite's
    format, ``tasks.sequence.raw``), a 2-D numeric array (tokens x columns) or a
    ``(tokens, array)`` pair (``tasks.sequence.numeric``); ``decode_predictions`` gives tag
    lists like ``y``.

    Parameters
    ----------
    constrained : {"auto", True, False}, default "auto"
        Decode (and train) only well-formed tag sequences of the training tag scheme: no
        ``I-NP`` after ``O`` or after another type in IOB2, and so on
        (``encodings.well_formed_constraints``); every decoder keeps them, the loss-augmented
        argmax and the CRF's likelihood included, so the weights are learned for the decoder
        that predicts.  "auto": when every training sentence is well-formed in that scheme
        (else a warning says so and the chunker decodes freely); True: always (an ill-formed
        training sentence is an error naming it); False: never.  The choice made is
        ``constrained_``, saved with the model (a model file from before it decodes freely).
        With partial labels (an unknown tag: None in ``y``, ``_`` in the file) the label set
        holds every prefix of the scheme for each chunk type seen, so that every sentence
        has a well-formed completion (unless the labels are declared: ``partial_fit``'s
        ``classes``, ``--classes``).
    input_scheme : {None, "iob1", "iob2"}
        Evaluation time only: the chunk tag scheme of the file ``evaluate`` or ``predict``
        reads; its tags are converted to the model's scheme as they are read.  None: the
        file is taken as it is (``evaluate`` checks that its scheme is the model's).
    Other parameters: those of :class:`SequenceLabellingTask`.
    """

    name = "chunk"
    model_noun = "chunker"
    featurizer_fixed = {"uses_pos": True}  # the templates read the POS tags
    score_metric = "f1"
    metric = ChunkScores()
    evaluation_params = frozenset({"input_scheme"})
    _parameter_constraints = {**SequenceLabellingTask._parameter_constraints,
                              **CONSTRAINED_PARAMETER,
                              "input_scheme": [Options(*INPUT_SCHEMES), None]}

    def __init__(self, *, n_structured_tokens=None, n_binary=0, negatives_per_positive=1,
                 sample_seed=0, constrained="auto", input_scheme=None, rules=None,
                 train_global_rules=False, **featurizer_params):
        super().__init__(n_structured_tokens=n_structured_tokens, n_binary=n_binary,
                         negatives_per_positive=negatives_per_positive, sample_seed=sample_seed,
                         rules=rules, train_global_rules=train_global_rules,
                         **featurizer_params)
        self.constrained = constrained
        self.input_scheme = input_scheme

    @property
    def reader(self) -> "ChunkReader":
        """``word POS chunk-tag`` files (``word POS`` as unlabelled input) and lists of
        ``(word, POS)`` pairs (:class:`ChunkReader`); evaluation data in ``input_scheme``
        is converted to the scheme the task was fitted on."""
        return ChunkReader(self.input_scheme, getattr(self, "tag_scheme_", None))


    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """conlleval scores; a file whose tag scheme is not the model's is refused."""
        model_scheme = getattr(self, "tag_scheme_", None)
        if model_scheme is not None and all(t is not None for t in dataset.targets):
            scheme = detect_tag_scheme(dataset.targets)
            if scheme is not None and scheme != model_scheme:
                fix = (f"pass --option input_scheme={scheme} to convert its tags to "
                       f"{model_scheme.upper()} as they are read"
                       if scheme in INPUT_SCHEMES and model_scheme in INPUT_SCHEMES else
                       "convert it with latentstruct.tasks.sequence.encodings.convert")
                raise InputError(
                    f"the file uses {scheme.upper()} chunk tags but the model was trained on "
                    f"{model_scheme.upper()}, so its token accuracy would be meaningless; {fix}",
                    dataset.path)
        return super().evaluate_model(dataset, predict, decision_function)


