"""The kind of a sequence task's sentence records, and what a fitted task accepts.

A record is of one of four kinds (``attributes_`` of a fitted task, saved in its model
file): :data:`TEMPLATES` (words: the task computes its templates), :data:`DICTS` (per-token
feature dicts, a :class:`DictSentence`), :data:`ARRAYS` and :data:`TOKENS_ARRAYS` (numbers,
a :class:`NumericSentence`, ``tasks.sequence.numeric``).  A task learns from one kind and
refuses to featurise another, and feature dicts named under another rule
(``tasks.sequence.raw``'s module docstring).
"""

from __future__ import annotations

from ...exceptions import ConfigError, InputError
from .dict_sentence import CRFSUITE_NAMES, LEGACY_NAMES, DictSentence
from .numeric import ARRAYS, TOKENS_ARRAYS, NumericSentence

__all__ = ["TEMPLATES", "DICTS", "ARRAYS", "TOKENS_ARRAYS", "ATTRIBUTE_KINDS", "DICT_TEXT",
           "KIND_TEXT", "records_naming", "check_records_naming", "record_kind",
           "records_kind", "check_records_kind", "check_dict_sampling", "check_writable"]

#: sentences as the task's files hold them; the task computes its attribute templates
TEMPLATES = "templates"
#: sentences as per-token feature dicts (sklearn-crfsuite's format)
DICTS = "dicts"
#: the values of a fitted sequence task's ``attributes_`` (ARRAYS, TOKENS_ARRAYS: numbers)
ATTRIBUTE_KINDS = (TEMPLATES, DICTS, ARRAYS, TOKENS_ARRAYS)
#: how messages name the feature-dict kind
DICT_TEXT = "per-token feature dicts (sklearn-crfsuite format)"
#: how messages name each kind
KIND_TEXT = {DICTS: DICT_TEXT, TEMPLATES: "words",
             ARRAYS: "numeric arrays alone (one tokens x columns array per sentence)",
             TOKENS_ARRAYS: "(tokens, array) pairs (templates plus numeric columns)"}
_DICT_TEXT, _KIND_TEXT = DICT_TEXT, KIND_TEXT


def records_naming(records, default: str = CRFSUITE_NAMES) -> str:
    """The one naming rule of the :class:`DictSentence` records (``default`` when there are
    none); records of both rules are an InputError."""
    namings = {r.naming for r in records if isinstance(r, DictSentence)}
    if len(namings) > 1:
        raise InputError("the data mixes feature-dict sentences made under python-crfsuite's "
                         "attribute names with sentences made under the legacy names of an "
                         "older model; make every sentence with one task's make_dataset")
    return namings.pop() if namings else default


def check_records_naming(records, naming: str, task_name: str) -> None:
    """InputError unless every :class:`DictSentence` was named under ``naming`` (the rule
    the task was fitted with)."""
    bad = next((k for k, r in enumerate(records)
                if isinstance(r, DictSentence) and r.naming != naming), None)
    if bad is None:
        return
    rule = {CRFSUITE_NAMES: "python-crfsuite's attribute names (key:value, real values)",
            LEGACY_NAMES: "the legacy attribute names of models saved before (key=value, "
                          "binary)"}
    raise InputError(
        f"this {task_name!r} model featurises feature dicts under {rule[naming]}, but "
        f"sentence {bad} was made under {rule[records[bad].naming]}; make the sentences "
        f"with this model's own make_dataset")


# --------------------------------------------------------------------------------------
# the kind of a record, and what a fitted task accepts
# --------------------------------------------------------------------------------------
def record_kind(record) -> str:
    """:data:`DICTS` for a :class:`DictSentence`, :data:`ARRAYS` or :data:`TOKENS_ARRAYS`
    for a :class:`NumericSentence`, else :data:`TEMPLATES`."""
    if isinstance(record, NumericSentence):
        return record.kind
    return DICTS if isinstance(record, DictSentence) else TEMPLATES


def records_kind(records) -> str:
    """The one kind of ``records`` (:data:`TEMPLATES` when empty); a mix is an InputError."""
    kinds = {record_kind(r) for r in records}
    if kinds == {DICTS, TEMPLATES}:
        raise InputError(f"the data mixes sentences given as {_DICT_TEXT} with sentences of "
                         f"words; a task learns from one kind only: give every sentence the "
                         f"same way")
    if len(kinds) > 1:
        first = record_kind(records[0])
        k = next(k for k, r in enumerate(records) if record_kind(r) != first)
        raise InputError(f"the data mixes sentences given as {_KIND_TEXT[first]} (sentence 0) "
                         f"with sentences given as {_KIND_TEXT[record_kind(records[k])]} "
                         f"(sentence {k}); a task learns from one kind only: give every "
                         f"sentence the same way")
    return kinds.pop() if kinds else TEMPLATES


def check_records_kind(records, fitted: str, task_name: str) -> None:
    """InputError unless every record is of the kind the task was fitted on (``fitted``):
    a model is never featurised from the wrong source."""
    bad = next((k for k, r in enumerate(records) if record_kind(r) != fitted), None)
    if bad is None:
        return
    if fitted in (ARRAYS, TOKENS_ARRAYS) or record_kind(records[bad]) in (ARRAYS, TOKENS_ARRAYS):
        raise InputError(
            f"this {task_name!r} model was trained on {_KIND_TEXT[fitted]}, but sentence {bad} "
            f"is given as {_KIND_TEXT[record_kind(records[bad])]}; its weights read the "
            f"attributes of its own form only: give the sentences as the model was trained, "
            f"or retrain it on this form")
    if fitted == DICTS:
        raise InputError(
            f"this {task_name!r} model was trained on {_DICT_TEXT}, but sentence {bad} is "
            f"given as words (read from a file or built from words); the command line cannot "
            f"compute them; predict from Python with the same feature function: "
            f"task.make_dataset([[word2features(sent, t) for t in range(len(sent))] ...])")
    raise InputError(
        f"this {task_name!r} model was trained on its built-in attribute templates (sentences "
        f"of words), but sentence {bad} is given as {_DICT_TEXT}; give the sentences as the "
        f"model was trained (words, or (word, POS) pairs for chunk), or retrain it on feature "
        f"dicts")


def check_dict_sampling(records, n_binary) -> None:
    """ConfigError when J-LIS binary examples (``n_binary`` > 0) would be drawn from
    sentences given as feature dicts or numbers: their negatives are shuffled sentences, and
    a token's dict or row, computed from its neighbours in the original order (contextual
    vectors are), cannot be shuffled along."""
    kind = records_kind(records) if n_binary else TEMPLATES
    if kind in (ARRAYS, TOKENS_ARRAYS):
        raise ConfigError(
            f"n_binary={n_binary} draws J-LIS binary examples whose negatives are the "
            f"sentences' tokens shuffled into word salads, but these sentences are given as "
            f"{_KIND_TEXT[kind]}: a token's row may have been computed from its neighbours in "
            f"the original order (contextual vectors are), so its shuffled rows are not the "
            f"features of the shuffled sentence. Use n_binary=0 (n_structured_tokens alone "
            f"is fine), or give the sentences as words")
    if kind == DICTS:
        raise ConfigError(
            f"n_binary={n_binary} draws J-LIS binary examples whose negatives are the "
            f"sentences' tokens shuffled into word salads, but these sentences are given as "
            f"{_DICT_TEXT}: a token's dict was computed from its neighbours in the original "
            f"order, so shuffled dicts are no meaningful negatives. Use n_binary=0, or give "
            f"the sentences as words so the task computes its templates on the shuffles")


def check_writable(records, task_name: str) -> None:
    """InputError when a record holds feature dicts or numbers: a file cannot carry them."""
    if any(isinstance(r, NumericSentence) for r in records):
        raise InputError(
            f"sentences given with numeric arrays hold numbers a {task_name!r} file cannot "
            f"carry; take the predicted tags from task.decode_predictions(predictions) instead")
    if any(isinstance(r, DictSentence) for r in records):
        raise InputError(
            f"sentences given as {_DICT_TEXT} hold no words, so the {task_name!r} task cannot "
            f"write them to a file; take the predicted tags from "
            f"task.decode_predictions(predictions) instead")
