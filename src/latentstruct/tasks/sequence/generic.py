"""A first-order chain over feature-dict sentences with any labels: the ``sequence`` task.

:class:`SequenceTask` is :class:`~latentstruct.tasks.sequence.SequenceLabellingTask` without
built-in templates and without a tag format: a sentence is a list of per-token feature
dicts (sklearn-crfsuite's ``X``, named and valued as python-crfsuite's ``ItemSequence``,
see :mod:`latentstruct.tasks.sequence.raw`) or of attribute-string lists (python-crfsuite's
other item form), and a label is any non-empty string.  It is the task of the
sklearn-crfsuite-compatible CRF, and trains with every learner of a sequence task::

    latentstruct.Estimator(task="sequence", learner="crf").fit(X, y)

Files (``read``, ``latentstruct train sequence --train data.txt``) are CRFsuite's own data
format (the input of ``crfsuite learn`` and ``crfsuite tag``): one item per line, the
label then the item's attributes, separated by tabs; a blank line ends a sequence::

    B-NP<TAB>w[0]=He<TAB>pos[0]=PRP<TAB>weight:0.5
    B-VP<TAB>w[0]=reckons<TAB>pos[0]=VBZ

An attribute is a name, or a name, ``:`` and a value (``weight:0.5`` is the attribute
``weight`` with the value 0.5; without one it is 1); a ``:`` or ``\\`` inside a name is
escaped as ``\\:`` and ``\\\\``.  So a python-crfsuite attribute ``word.lower():he`` is written
``word.lower()\\:he``.  An item whose label field is empty is unlabelled (input to tag);
a sequence is either all labelled or all unlabelled.  ``write_predictions`` writes the same
format with the predicted labels.
"""

from __future__ import annotations

import os

from ...data.atomic import atomic_write
from ...data.readers import read_lines
from ...exceptions import InputError
from ..base import Dataset, register_task
from .labelling import SequenceLabellingTask
from .params import FEATURE_PARAMETERS
from .raw import CRFSUITE_NAMES, DictSentence, any_tag, check_attribute_value, sequence_dataset

__all__ = ["SequenceTask", "read_crfsuite_data", "write_crfsuite_data", "parse_attribute",
           "escape_attribute"]


# --------------------------------------------------------------------------------------
# CRFsuite's data format
# --------------------------------------------------------------------------------------
def parse_attribute(field: str, where) -> tuple[str, float]:
    """(name, value) of one attribute field of CRFsuite's data format: the name up to the
    first ``:`` that is not escaped (``\\:``; ``\\\\`` is a backslash), the value after it
    (1 without one).  ``where(message)`` builds the located InputError."""
    name = []
    k, n = 0, len(field)
    value_text = None
    while k < n:
        ch = field[k]
        if ch == "\\" and k + 1 < n and field[k + 1] in ":\\":
            name.append(field[k + 1])
            k += 2
            continue
        if ch == ":":
            value_text = field[k + 1:]
            break
        name.append(ch)
        k += 1
    text = "".join(name)
    if not text:
        raise where(f"attribute field {field!r} has an empty name")
    if value_text is None:
        return text, 1.0
    try:
        value = float(value_text)
    except ValueError:
        raise where(f"attribute {text!r} has the value {value_text!r}, which is no number; "
                    f"a ':' inside a name is written '\\:'") from None
    return text, check_attribute_value(value, text, where)  # limits.MAX_ATTRIBUTE_VALUE


def escape_attribute(name: str) -> str:
    """``name`` as CRFsuite's data format writes it (``\\`` and ``:`` escaped)."""
    return name.replace("\\", "\\\\").replace(":", "\\:")


def _sentence(items, path, line) -> tuple[DictSentence, tuple | None]:
    names, values, binary = [], [], True
    labels = [label for label, _, _ in items]
    for _, tok_names, tok_values in items:
        names.append(tuple(tok_names))
        values.append(tuple(tok_values))
        binary = binary and all(v == 1.0 for v in tok_values)
    if all(labels):
        tags = tuple(labels)
    elif not any(labels):
        tags = None
    else:
        raise InputError("the sequence mixes labelled items with items whose label field is "
                         "empty; label every item, or none (input to tag)", path, line)
    return DictSentence.from_tokens(names, None if binary else values, CRFSUITE_NAMES), tags


def read_crfsuite_data(path) -> tuple[list[DictSentence], list[tuple | None]]:
    """The sequences of a file in CRFsuite's data format (module docstring): one
    :class:`DictSentence` each (python-crfsuite's naming: the attribute names exactly as
    written, unescaped), and its labels (None for an unlabelled sequence).  Errors name
    the file and line."""
    name = os.fspath(path)
    records, targets = [], []
    items, first_line = [], 0
    for lineno, text in read_lines(path):
        if not text.strip():
            if items:
                rec, tags = _sentence(items, name, first_line)
                records.append(rec)
                targets.append(tags)
                items = []
            continue
        if not items:
            first_line = lineno
        fields = text.split("\t")
        label = fields[0]
        if label.strip() != label:
            raise InputError(f"label {label!r} has white space at its ends; the label is the "
                             f"first tab-separated field", name, lineno)

        def where(message, lineno=lineno):
            return InputError(message, name, lineno)

        out: dict = {}
        for field in fields[1:]:
            if not field:
                continue  # two tabs in a row: an empty field, no attribute
            attr, value = parse_attribute(field, where)
            out[attr] = out.get(attr, 0.0) + value
        items.append((label, tuple(out), tuple(out.values())))
    if items:
        rec, tags = _sentence(items, name, first_line)
        records.append(rec)
        targets.append(tags)
    if not records:
        raise InputError("contains no sequences; expected one item per line (LABEL<TAB>"
                         "attribute<TAB>...), a blank line after each sequence", name)
    return records, targets


def _value_text(v: float) -> str:
    return repr(float(v))


def write_crfsuite_data(path, records, labels) -> None:
    """Write sentences (:class:`DictSentence`) with ``labels`` (one list per sentence) in
    CRFsuite's data format, atomically."""
    with atomic_write(path) as fh:
        for rec, tags in zip(records, labels, strict=True):
            vals = rec.values
            for t, (names, tag) in enumerate(zip(rec.attributes, tags, strict=True)):
                if any(ch in tag for ch in "\t\n\r"):
                    raise InputError(f"label {tag!r} holds a tab or a line break, which "
                                     f"CRFsuite's data format cannot write")
                fields = [tag]
                for k, a in enumerate(names):
                    v = 1.0 if vals is None else vals[t][k]
                    fields.append(escape_attribute(a) if v == 1.0
                                  else f"{escape_attribute(a)}:{_value_text(v)}")
                fh.write("\t".join(fields) + "\n")
            fh.write("\n")


# --------------------------------------------------------------------------------------
# the task
# --------------------------------------------------------------------------------------
@register_task
class SequenceTask(SequenceLabellingTask):
    """First-order sequence labelling of feature-dict sentences with any label strings.

    No built-in attribute templates and no tag checks: the attributes are the feature
    dicts' (python-crfsuite's names and real values, ``tasks.sequence.raw``), the labels any
    non-empty strings (NER tags, chunk tags, POS tags, ``"_"`` included).  Hamming loss;
    ``evaluate`` reports token accuracy.

    Parameters
    ----------
    min_count : int
        Keep attributes seen at least this often in training.
    feature_index : {"index", "hashing"}
        Exact index of training attributes, or feature hashing.
    hash_bits : int
        Table size 2**hash_bits when hashing.

    Raw form (``make_dataset``): ``X`` holds one sentence per example, a list of per-token
    feature dicts (or of attribute-string lists), ``y`` one list of labels per sentence (or
    None)::

        X = [[{"w": "He", "bias": 1.0}, {"w": "reckons", "len": 7.0}]]
        y = [["B-NP", "B-VP"]]

    Files: CRFsuite's data format (module docstring).
    """

    name = "sequence"
    # the J-LIS sampling options of the base task draw shuffled sentences, which feature
    # dicts cannot follow (their attributes were computed from the original order): off
    window = 0
    affix_length = 1
    n_structured_tokens = None
    n_binary = 0
    negatives_per_positive = 1
    sample_seed = 0

    _parameter_constraints = {name: FEATURE_PARAMETERS[name]
                              for name in ("min_count", "feature_index", "hash_bits")}

    def __init__(self, min_count=1, feature_index="index", hash_bits=20):
        self.min_count = min_count
        self.feature_index = feature_index
        self.hash_bits = hash_bits

    @staticmethod
    def _words_pos(record):
        raise InputError("the 'sequence' task has no built-in attribute templates, and its "
                         "sentences hold no words: give every sentence as per-token feature "
                         "dicts (or attribute-string lists)")

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of per-token
        feature dicts or attribute-string lists; ``y`` a list of label lists (any non-empty
        strings) or None (targets None).  A bad entry is an ``InputError`` naming it
        (``X[3][5]``, ``y[2]``)."""
        self.check_params()
        return sequence_dataset(X, y, token="feature dict", build=None, check_tag=any_tag,
                                naming=self.attribute_naming)

    def read(self, path, *, split: str = "train") -> Dataset:
        """A file in CRFsuite's data format (module docstring).  Training needs every
        sequence labelled; for another split, unlabelled sequences (empty label fields)
        have targets None."""
        self.check_params()
        records, targets = read_crfsuite_data(path)
        if split == "train":
            bad = next((k for k, t in enumerate(targets) if t is None), None)
            if bad is not None:
                raise InputError(f"sequence {bad + 1} has no labels (empty label fields); "
                                 f"training needs every item labelled", os.fspath(path))
        return Dataset(records, targets, str(path))

    def write_predictions(self, path, dataset, predictions) -> None:
        """The sentences in CRFsuite's data format with the predicted labels."""
        write_crfsuite_data(path, dataset.records, self.decode_targets(predictions))

