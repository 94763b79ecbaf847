"""UD POS tagging (``pos``): CoNLL-U files, scored by token accuracy.

The task is :class:`~latentstruct.tasks.sequence.SequenceLabellingTask` over words alone;
this module adds the tag columns (UPOS, XPOS, UPOS joined with the ``Case`` feature), their
reading and writing back into CoNLL-U, plain-text input for ``predict``, and
:func:`check_tagger`, the check of a POS model that another task tags its input with.
"""

from __future__ import annotations

import os

import numpy as np

from ...data.readers import (
    CONLLU_FIELDS,
    ConlluSentence,
    excerpt,
    one_prediction_per_item,
    read_conllu,
    read_lines,
    write_conllu,
)
from ...data.readers.docbin import is_docbin_path, read_docbin_conllu
from ...exceptions import ConfigError, InputError, check_is_fitted
from ...params import Satisfies
from ..base import Dataset, register_task
from .dict_sentence import CRFSUITE_NAMES
from .labelling import SentenceReader, SequenceLabellingTask
from .raw import (
    CASE_SEPARATOR,
    DICTS,
    TEMPLATES,
    any_tag,
    check_writable,
    pos_record,
    pos_tag_problem,
    sequence_dataset,
)

__all__ = [
    "PosTask",
    "PosReader",
    "TAG_COLUMNS",
    "case_value",
    "upos_case_tags",
    "split_upos_case",
    "with_case",
    "read_plain_sentences",
    "check_tagger",
]


#: the tag columns of ``PosTask`` (``tag_column``)
TAG_COLUMNS = ("upos", "xpos", "upos+case")
_FEATS = CONLLU_FIELDS.index("FEATS")
_COLUMN_NAMES = {"upos": "UPOS (column 4)", "xpos": "XPOS (column 5)",
                 "upos+case": "UPOS (column 4)"}


def case_value(feats: str) -> str | None:
    """The value of the ``Case`` feature in a CoNLL-U FEATS string, as written (``Abs,Erg``
    stays whole), or None without one.  Layered features (``Case[psor]=...``) are not it."""
    if feats == "_":
        return None
    for feat in feats.split("|"):
        if feat.startswith("Case="):
            return feat[5:]
    return None


def upos_case_tags(sentence) -> tuple[str, ...]:
    """Composite tags of a ``ConlluSentence``'s words: UPOS joined with the word's ``Case``
    feature (``NOUN|Case=Erg``), or the bare UPOS for a word without ``Case``."""
    return tuple(u if (c := case_value(f)) is None else f"{u}{CASE_SEPARATOR}{c}"
                 for u, f in zip(sentence.upos, sentence.feats))


def split_upos_case(tag: str) -> tuple[str, str | None]:
    """``"NOUN|Case=Erg"`` -> ``("NOUN", "Erg")``; a bare UPOS -> ``(upos, None)``."""
    upos, sep, case = tag.partition(CASE_SEPARATOR)
    return upos, (case if sep else None)


def with_case(feats: str, case: str | None) -> str:
    """FEATS string ``feats`` with its ``Case`` feature set to ``case`` (removed for None).

    An existing ``Case`` is replaced where it stands and a new one is inserted in UD's
    alphabetical (case-insensitive) order, so the other features are kept exactly; an empty
    result is ``_``."""
    feats_list = [] if feats == "_" else feats.split("|")
    at = next((k for k, f in enumerate(feats_list) if f.startswith("Case=")), None)
    if at is not None:
        del feats_list[at]
    if case is not None:
        if at is None:
            at = next((k for k, f in enumerate(feats_list)
                       if f.split("=", 1)[0].lower() > "case"), len(feats_list))
        feats_list.insert(at, "Case=" + case)
    return "|".join(feats_list) if feats_list else "_"


def _tag_column(value) -> bool:
    """Whether ``value`` is one of :data:`TAG_COLUMNS`; ConfigError, saying what each one
    is, otherwise (``tag_column``'s refusal)."""
    if isinstance(value, str) and value in TAG_COLUMNS:
        return True
    raise ConfigError("upos: universal tags; xpos: the treebank's own tags; upos+case: UPOS "
                      "joined with the Case feature")


class PosReader(SentenceReader):
    """How ``pos`` reads and writes its sentences: CoNLL-U with the tags of
    ``tag_column`` (plain text, one sentence per line, as unlabelled input), Python lists
    of words, and predictions written back into the column they were read from."""

    task_name = "pos"

    def __init__(self, tag_column: str = "upos"):
        self.tag_column = tag_column

    def words_pos(self, record) -> tuple:
        # a ConlluSentence, or a BinaryRecord (J-LIS binary example) built from one: its
        # UPOS are what the task predicts, never an input
        return record.words, None

    def tag_checks(self) -> tuple:
        """UPOS tags (``tag_column``'s form) for sentences of words; any tag for feature
        dicts and arrays (such a model never writes a CoNLL-U column)."""
        return pos_tag_problem(self.tag_column), any_tag, False

    def make_dataset(self, X, y=None, *, naming: str = CRFSUITE_NAMES) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of words (or
        of per-token feature dicts); ``y`` a list of tag lists in ``tag_column``'s form
        (UPOS tags are checked as the CoNLL-U reader checks them; with feature dicts any tag
        set is taken: such a model never writes a CoNLL-U column), or None (targets None).

        The records are the ``ConlluSentence`` records ``read`` builds from plain text (ID
        and FORM, every other field ``_``), so ``write`` writes CoNLL-U.
        """
        check_tag, check_dict_tag, _ = self.tag_checks()
        return sequence_dataset(X, y, token="word", build=pos_record, check_tag=check_tag,
                                check_dict_tag=check_dict_tag, naming=naming)

    def read(self, path, *, split: str = "train") -> Dataset:
        """Read a CoNLL-U file with the tags of ``tag_column`` as targets.

        With ``tag_column="xpos"``, a file where only some words have an XPOS is an error
        (at the first word without one); a file with no XPOS at all is an error for
        training, and is read as unlabelled input otherwise (``predict`` tags it;
        ``evaluate`` refuses it).  CoNLL-U whose tags are ``_`` is unlabelled input too.
        In a training file, a UPOS ``_`` among other words' tags is a tag that is unknown
        (partial labels: ``crf`` sums over it, ``ssvm`` and the online learners complete it).

        For ``split="test"`` the file may also be plain text, one sentence per line of
        whitespace-separated words (told apart from CoNLL-U by its first line that is not a
        ``#`` comment: CoNLL-U has 10 tab-separated fields); it is read as CoNLL-U with
        every field but ID and FORM ``_``, so ``predict`` writes CoNLL-U.

        A ``.spacy`` file (spaCy's ``DocBin``, as ``python -m spacy convert`` writes from
        CoNLL-U) is read as its CoNLL-U sentences (:func:`~latentstruct.data.readers.docbin.
        read_docbin_conllu`); predictions are written as CoNLL-U.
        """
        if is_docbin_path(path):
            sentences = read_docbin_conllu(path)
        elif not _looks_like_conllu(path):
            if split == "train":
                raise InputError(
                    "the file is not CoNLL-U (its first line is not 10 tab-separated fields), "
                    "so it has no tags to learn; training needs a CoNLL-U file",
                    os.fspath(path), 1)
            sentences = read_plain_sentences(path)
            return Dataset(sentences, [s.upos for s in sentences], str(path))
        else:
            sentences = read_conllu(path)
        if self.tag_column == "upos":
            tags = [s.upos for s in sentences]
            if split == "train":  # '_' among tags: unknown (partial labels), None
                tags = [tuple(None if t == "_" else t for t in s) if "_" in s else s
                        for s in tags]
        elif self.tag_column == "xpos":
            _check_xpos(sentences, path, split)
            tags = [s.xpos for s in sentences]
        else:
            tags = [upos_case_tags(s) for s in sentences]
        return Dataset(sentences, tags, str(path))

    def write(self, path, records, tags) -> None:
        """Write ``records`` with the predicted ``tags`` in the column they were read from
        (see ``PosTask``'s ``tag_column``); everything else is written as read."""
        check_writable(records, self.task_name)
        if self.tag_column == "xpos":
            write_conllu(path, records, tags, column="XPOS")
            return
        if self.tag_column == "upos":
            write_conllu(path, records, tags)
            return
        records = list(records)
        tags = one_prediction_per_item("write_predictions", records, tags, "sentence",
                                       "tag sequence")
        out_records, out_upos = [], []
        for sent, pred in zip(records, tags):
            pairs = [split_upos_case(t) for t in pred]
            if len(pairs) == len(sent):  # else write_conllu reports the length mismatch
                rows = list(sent.rows)
                for idx, (_, case) in zip(sent.word_row_indices, pairs):
                    row = rows[idx]
                    rows[idx] = row[:_FEATS] + (with_case(row[_FEATS], case),) + row[_FEATS + 1:]
                sent = ConlluSentence(tuple(rows), sent.comments, sent.line)
            out_records.append(sent)
            out_upos.append([u for u, _ in pairs])
        write_conllu(path, out_records, out_upos)

    def __repr__(self) -> str:
        return f"PosReader(tag_column={self.tag_column!r})"


@register_task
class PosTask(SequenceLabellingTask):
    """POS tagging on CoNLL-U (UD) files, scored by token accuracy.

    The tags are one column of the file, chosen by ``tag_column``: the universal tags (UPOS,
    the default), the language-specific ones (XPOS: 49 Penn Treebank tags on UD English EWT
    train) or, for treebanks without XPOS, UPOS refined by the word's morphological case.

    Parameters
    ----------
    tag_column : {"upos", "xpos", "upos+case"}
        The tags to learn and predict: UPOS (column 4), XPOS (column 5), or UPOS joined with
        the word's ``Case`` feature from FEATS (``upos+case``).  ``xpos`` needs an XPOS tag
        on every word (UD English EWT has 49 PTB tags; UD Basque v1.4 has none: its XPOS is
        ``_`` throughout).  ``upos+case`` tags a word with ``Case=Erg`` in FEATS as
        ``NOUN|Case=Erg``, a word without ``Case`` by its bare UPOS, and keeps a multi-valued
        case as written (``Case=Abs,Erg``).  On UD Basque BDT v1.4 it gives 124 tags on train
        and 115 on dev (132 in all; 8 dev tokens carry one of the 8 dev tags never seen in
        train), from 16 UPOS and 15 case values.  It stands in for the 64 fine-grained
        CoNLL-2007 Basque tags of the paper, which UD does not carry: like them it is a
        structured refinement of the coarse tags, but a different one, so accuracies are
        not comparable with the paper's.  Predictions are written back where the tags were
        read: into UPOS, into XPOS, or (``upos+case``) the UPOS part into UPOS and the
        predicted case into FEATS's ``Case`` feature, other features untouched, so that
        reading the output with the same ``tag_column`` gives back the predicted tags.

    Raw form (``make_dataset``): ``X`` holds one sentence per example, a list of words, and
    ``y`` one list of tags (in ``tag_column``'s form) per sentence (or None)::

        X = [["The", "dog", "barks", "."], ["Cats", "sleep"]]
        y = [["DET", "NOUN", "VERB", "PUNCT"], ["NOUN", "VERB"]]
        y_upos_case = [["DET", "NOUN|Case=Nom", "VERB", "PUNCT"], ["NOUN", "VERB"]]

    A sentence may instead be a list of per-token feature dicts (sklearn-crfsuite's
    format, ``tasks.sequence.raw``), a 2-D numeric array (tokens x columns) or a
    ``(tokens, array)`` pair (``tasks.sequence.numeric``); ``decode_predictions`` gives tag
    lists like ``y``.
    """

    name = "pos"
    featurizer_defaults = {"affix_length": 4}
    # J-LIS from the command line runs until its objective converges.  Its own max_iter=20
    # stopped the guide's job (200 labelled tokens, 1,000 binary sentences, C2=1) with a
    # ConvergenceWarning while Q still fell by 4e-4 a step; it converges at iteration 36
    # (dev accuracy 0.6429 against 0.6423 at 20; docs/performance.md).  The Python class
    # keeps 20, so the J-LIS experiments are unchanged.
    learner_defaults = {**SequenceLabellingTask.learner_defaults, "jlis": {"max_iter": 50}}
    _parameter_constraints = {
        **SequenceLabellingTask._parameter_constraints,
        "tag_column": [Satisfies(_tag_column, "a str among {" + ", ".join(map(repr, TAG_COLUMNS))
                                 + "}")]}

    def __init__(self, *, n_structured_tokens=None, n_binary=0, negatives_per_positive=1,
                 sample_seed=0, tag_column="upos", rules=None, train_global_rules=False,
                 **featurizer_params):
        super().__init__(n_structured_tokens=n_structured_tokens, n_binary=n_binary,
                         negatives_per_positive=negatives_per_positive, sample_seed=sample_seed,
                         rules=rules, train_global_rules=train_global_rules,
                         **featurizer_params)
        self.tag_column = tag_column

    @property
    def reader(self) -> "PosReader":
        """CoNLL-U files (plain text too, for ``split="test"``) and lists of words, with
        the tags of ``tag_column`` (:class:`PosReader`)."""
        return PosReader(self.tag_column)

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Token accuracy of ``predict`` on ``dataset``; refused (InputError) when the
        file has no gold tags in the model's column (every tag ``_``)."""
        n = sum(len(tags) for tags in dataset.targets if tags is not None)
        if n and all(t == "_" for tags in dataset.targets if tags is not None for t in tags):
            column = _COLUMN_NAMES.get(self.tag_column, self.tag_column)
            raise InputError(
                f"{column} is '_' for every word, so there are no gold tags to score this "
                f"tag_column={self.tag_column!r} model against; evaluate it on a file with "
                f"{column.split()[0]} tags", dataset.path)
        return super().evaluate_model(dataset, predict, decision_function)

    @classmethod
    def from_state(cls, params, state, arrays):
        task = super().from_state(params, state, arrays)
        task.check_params()  # a model file written elsewhere may hold any value
        return task


def _looks_like_conllu(path) -> bool:
    """Whether the first line of ``path`` that is neither blank nor a ``#`` comment has the
    10 tab-separated fields of CoNLL-U (an empty or comment-only file counts as CoNLL-U, so
    the CoNLL-U reader reports it)."""
    for _, text in read_lines(path):
        if text.strip() and not text.startswith("#"):
            return len(text.split("\t")) == len(CONLLU_FIELDS)
    return True


def read_plain_sentences(path) -> list[ConlluSentence]:
    """Plain text, one sentence per line of whitespace-separated words, as CoNLL-U
    sentences whose fields other than ID and FORM are ``_`` (blank lines are skipped)."""
    out = []
    for lineno, text in read_lines(path):
        words = text.split()
        if words:
            out.append(ConlluSentence.from_words(words, lineno))
    if not out:
        raise InputError("contains no sentences; expected one sentence per line",
                         os.fspath(path))
    return out


def _check_xpos(sentences, path, split: str) -> None:
    """InputError unless every word has an XPOS (not ``_``); see ``PosTask.read``."""
    first = None
    tagged = False
    for sent in sentences:
        for k, tag in enumerate(sent.xpos):
            if tag == "_":
                if first is None:
                    first = (sent, k)
            else:
                tagged = True
        if first is not None and tagged:
            break
    if first is None:
        return
    if not tagged:
        if split == "train":
            raise InputError(
                "XPOS (column 5) is '_' for every word, so there are no XPOS tags to learn "
                "(UD Basque v1.4, for one, has none); use --option tag_column=upos, or "
                "tag_column=upos+case for UPOS joined with the Case feature", os.fspath(path))
        return  # unlabelled input: predict tags it, evaluate_model refuses it
    sent, k = first
    raise InputError(
        f"XPOS (column 5) of word {k + 1} ({excerpt(sent.words[k])}) is '_' while other words of the "
        f"file have XPOS tags; with tag_column=xpos every word needs one: fill them in, or use "
        f"--option tag_column=upos", os.fspath(path), sent.word_line(k) or None)


def check_tagger(pos_task, coef) -> np.ndarray:
    """``coef`` as float64 after checking that ``(pos_task, coef)`` is a usable POS tagger: a
    fitted :class:`PosTask` and weights of its size (for tasks that read tags from one)."""
    if not isinstance(pos_task, PosTask):
        raise ConfigError(f"the tagger must be a fitted PosTask, got {type(pos_task).__name__}")
    check_is_fitted(pos_task)
    kind = getattr(pos_task, "attributes_", TEMPLATES)
    if kind == DICTS:
        raise ConfigError("the tagger was trained on per-token feature dicts (sklearn-crfsuite "
                          "format), which a task cannot compute from words; train the tagger "
                          "on sentences of words")
    if kind != TEMPLATES:
        raise ConfigError(f"the tagger was trained on {kind} (numeric token features), which "
                          f"a task cannot compute from words; train the tagger on sentences "
                          f"of words")
    if getattr(pos_task, "tag_column", "upos") != "upos":
        raise ConfigError(f"the tagger must predict UPOS; this pos model was trained with "
                          f"tag_column={pos_task.tag_column!r}. Train one with tag_column=upos")
    coef = np.asarray(coef, dtype=np.float64)
    if coef.shape != (pos_task.n_features,):
        raise ConfigError(
            f"tagger weights must have shape ({pos_task.n_features},), got {coef.shape}")
    return coef
