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
from ...exceptions import InputError, ModelFormatError, warn_user
from ...params import BOOL, Options
from ..base import Dataset, register_task
from .chunk_metrics import ChunkScores, detect_tag_scheme
from ...featurizers.targets import SequenceLabelEncoder
from .encodings import ENCODINGS, convert, well_formed_constraints
from .dict_sentence import CRFSUITE_NAMES
from .labelling import SentenceReader, SequenceLabellingTask
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
        fitted task, test tags are converted to the model's scheme."""
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
            sentences = read_words_pos(path)
            return Dataset(sentences, [None] * len(sentences), str(path))
        sentences = read_conll2000(path)
        if split != "train" and self.converts_input():
            # a sentence with an unknown tag ('_') is not converted: scoring refuses it
            sentences = [s if "_" in s.tags else
                         ChunkSentence(s.words, s.pos, self._to_model_scheme(s.tags), s.line)
                         for s in sentences]
        # '_': a tag that is unknown (partial labels), None in the targets
        return Dataset(sentences, [tuple(None if t == "_" else t for t in s.tags)
                                   for s in sentences], str(path))

    def write(self, path, records, tags) -> None:
        """CoNLL-2000 ``word POS chunk-tag`` lines with the predicted tags."""
        check_writable(records, self.task_name)
        write_conll2000(path, records, tags)

    def __repr__(self) -> str:
        return (f"ChunkReader(input_scheme={self.input_scheme!r}, "
                f"model_scheme={self.model_scheme!r})")


@register_task
class ChunkTask(SequenceLabellingTask):
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
    featurizer_fixed = {"uses_pos": True}  # the templates read the POS tags
    score_metric = "f1"
    metric = ChunkScores()
    evaluation_params = frozenset({"input_scheme"})
    _parameter_constraints = {**SequenceLabellingTask._parameter_constraints,
                              "constrained": [Options("auto"), BOOL],
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

    def fit(self, dataset: Dataset) -> "ChunkTask":
        """As :meth:`SequenceLabellingTask.fit`; record the training file's tag scheme and
        whether the chain keeps to its well-formed sequences (``constrained_``)."""
        super().fit(dataset)
        gold = [t for t in dataset.targets if t is not None]
        self.tag_scheme_ = detect_tag_scheme(gold)
        if (self.tag_scheme_ is not None and not dataset.labels  # a declared set is kept
                and any(t is None for tags in gold for t in tags)):
            self._complete_label_set()
        self.constrained_ = self._decide_constrained(gold, dataset.path)
        self._build_structure()  # with the constraints of the scheme
        return self

    def _complete_label_set(self) -> None:
        """With partial labels: every prefix of the scheme for each chunk type seen, and
        ``O``, join the label set.  A tag that is always hidden (a rare ``B-LST`` whose
        ``I-LST`` is known) is a label a well-formed completion may need: without it an
        ``I-LST`` could have no well-formed predecessor."""
        labels = set(self.labels_)
        prefixes = ENCODINGS[self.tag_scheme_].prefixes
        types = {t[2:] for t in labels if t != "O"}
        wanted = {f"{p}-{x}" for x in types for p in prefixes} | {"O"}
        if not wanted <= labels:
            self.target_encoder_ = SequenceLabelEncoder(classes=sorted(labels | wanted)).fit([])

    def _decide_constrained(self, gold, path) -> bool:
        """``constrained`` resolved on the training tags: "auto" keeps to the scheme's
        well-formed sequences when every training sentence is one, True insists on it."""
        if self.constrained is False:
            return False
        scheme = self.tag_scheme_
        if scheme is None:
            if self.constrained is True:
                raise InputError("constrained=True needs the training tags' chunk scheme, and "
                                 "it could not be told (no chunk, or tags of no single scheme); "
                                 "pass constrained=False", path)
            return False
        bad = self._first_ill_formed(gold)
        if bad is None:
            return True
        i, what = bad
        if self.constrained is True:
            raise InputError(
                f"training sentence {i} is not a well-formed {scheme.upper()} sequence "
                f"({what}), and constrained=True decodes only well-formed ones; rewrite the "
                f"tags well-formed (tasks.sequence.encodings.convert(tags, {scheme!r}, "
                f"{scheme!r})) or pass constrained=False", path)
        warn_user(f"training sentence {i} is not a well-formed {scheme.upper()} sequence "
                  f"({what}), so the chunker decodes without the scheme's constraints "
                  f"(constrained='auto'); pass constrained=False to silence this, or "
                  f"rewrite the tags well-formed to decode only well-formed sequences",
                  UserWarning)
        return False

    def _first_ill_formed(self, gold) -> tuple[int, str] | None:
        """The first sentence of ``gold`` (tag lists) that is not well-formed in the
        training scheme, as (index, what is wrong and where), or None."""
        constraints = well_formed_constraints(self.labels_, self.tag_scheme_)
        index = {label: k for k, label in enumerate(self.labels_)}
        for i, tags in enumerate(gold):
            # a tag the model lacks is encode_targets' error, said where it is met
            if any(t is not None and t not in index for t in tags):
                continue
            # an unknown tag (None, partial labels) breaks no rule: a decoder completes it
            bad = constraints.first_violation([-1 if t is None else index[t] for t in tags])
            if bad is None:
                continue
            t, kind = bad
            return i, {"start": f"{tags[t]!r} first", "end": f"{tags[t]!r} last"}.get(
                kind, f"{tags[t]!r} after {tags[t - 1]!r}") + f" at token {t}"
        return None

    def training_targets(self, dataset: Dataset) -> list:
        """The encoded gold tags of a batch to train on.  A constrained chunker
        (``constrained_``) refuses an ill-formed sentence in a later batch
        (``partial_fit``, ``train --resume``) as ``fit`` decided on the first: its decoder
        cannot write that sequence, so the CRF's likelihood of it would be unbounded.  The
        task's ``rules`` are checked too (``SequenceLabellingTask.training_targets``)."""
        targets = super().training_targets(dataset)
        if getattr(self, "constrained_", False):
            bad = self._first_ill_formed([t for t in dataset.targets if t is not None])
            if bad is not None:
                i, what = bad
                scheme = self.tag_scheme_.upper()
                raise InputError(
                    f"training sentence {i} of this batch is not a well-formed {scheme} "
                    f"sequence ({what}), and the model decodes only well-formed ones "
                    f"(constrained_ was decided on its first training data); rewrite the tags "
                    f"well-formed (tasks.sequence.encodings.convert) or train a new model with "
                    f"constrained=False", dataset.path)
        return targets

    def own_constraints(self):
        """The well-formed sequences of the training tag scheme when ``constrained_``
        (``encodings.well_formed_constraints``), else None."""
        if not getattr(self, "constrained_", False):
            return None
        return well_formed_constraints(self.labels_, self.tag_scheme_)

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

    def get_state(self):
        state, arrays = super().get_state()
        return {**state, "tag_scheme": getattr(self, "tag_scheme_", None),
                "constrained": bool(getattr(self, "constrained_", False))}, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = super().from_state(params, state, arrays)
        scheme = state.get("tag_scheme")  # absent in models saved before it was recorded
        if scheme is not None and scheme not in INPUT_SCHEMES + ("ioe1", "ioe2", "oc"):
            raise ModelFormatError(f"unknown chunk tag scheme {scheme!r} in the model file")
        # absent in models saved before constraints: they decode freely, as they did
        constrained = state.get("constrained", False)
        if not isinstance(constrained, bool) or (constrained and scheme is None):
            raise ModelFormatError(f"the model file says constrained={constrained!r} with tag "
                                   f"scheme {scheme!r}; expected a bool, and a scheme when "
                                   f"true. The file is damaged or edited: retrain the model")
        task.tag_scheme_, task.constrained_ = scheme, constrained
        task._build_structure()  # with the constraints of the scheme
        return task

