"""A first-order chain over feature-dict sentences with any labels: the ``sequence`` task.

:class:`SequenceTask` is :class:`~latentstruct.tasks.sequence.SequenceLabellingTask` without
built-in templates and without a tag format: a sentence is a list of per-token feature
dicts (sklearn-crfsuite's ``X``, named and valued as python-crfsuite's ``ItemSequence``,
see :mod:`latentstruct.tasks.sequence.raw`) or of attribute-string lists (python-crfsuite's
other item form), and a label is any non-empty string.  It is the task of the
sklearn-crfsuite-compatible CRF, and trains with every learner of a sequence task::

    latentstruct.Estimator(task="sequence", learner="crf").fit(X, y)

Files (``read``, ``latentstruct train sequence --train data.txt``, ``evaluate``,
``predict``) are CRFsuite's own data format (the input of ``crfsuite learn`` and
``crfsuite tag``): one item per line, the label then the item's attributes, separated by
TABs; a blank line ends a sequence::

    B-NP<TAB>w[0]=He<TAB>pos[0]=PRP<TAB>weight:0.5
    B-VP<TAB>w[0]=reckons<TAB>pos[0]=VBZ

An attribute is a name, or a name, ``:`` and a value (``weight:0.5`` is the attribute
``weight`` with the value 0.5; without one it is 1); a ``:`` or ``\\`` inside a name is
escaped as ``\\:`` and ``\\\\``, in labels as in attributes (CRFsuite reads both fields
the same way).  So a python-crfsuite attribute ``word.lower():he`` is written
``word.lower()\\:he``.  An item with no attributes is ``LABEL<TAB>``.

Every line is checked, and a line that is not in the format is refused with its file and
line (never read as something else): a line without a TAB (a CoNLL file's
``word POS chunk`` line is one: CRFsuite would take the whole line as a label with no
attributes), a label with an unescaped ``:`` (CRFsuite would keep only the part before it),
a CRFsuite declaration line (``@weight:2``: sequence weights are not read), an attribute
value that is no finite number.  A line of spaces only is a blank line.

The label column is always there, as in ``crfsuite tag`` (whose ``-r`` only prints it back):
for ``predict`` the first field is the reference label and is not used.  One extension: an
item whose label field is empty (the line starts with a TAB) is unlabelled, so input to tag
needs no made-up labels (CRFsuite itself would skip the empty field and take the first
attribute as the label); a sequence is either all labelled or all unlabelled.  A file read
for a fitted model (``evaluate``, ``predict``) whose labels are all unknown to it is refused:
its first column is not the model's labels (a file without a label column, or of another
task).  ``write_predictions`` writes the same format with the predicted labels.
"""

from __future__ import annotations

import os

from ...data.atomic import atomic_write
from ...data.readers import read_lines
from ...exceptions import InputError
from ..base import ComposedTask, Dataset, register_task
from .labelling import SentenceReader, SequenceLabellingTask
from .rules import RULES_PARAMETER
from .well_formed import CONSTRAINED_PARAMETER, WellFormedTags
from .raw import CRFSUITE_NAMES, DictSentence, any_tag, check_attribute_value, sequence_dataset

__all__ = ["SequenceTask", "CrfsuiteReader", "read_crfsuite_data", "write_crfsuite_data", "parse_attribute",
           "escape_attribute"]


# --------------------------------------------------------------------------------------
# CRFsuite's data format
# --------------------------------------------------------------------------------------
def _split_field(field: str) -> tuple[str, str | None]:
    """(name, value text or None) of one field, as CRFsuite's reader splits it: the name up
    to the first ``:`` that is not escaped (``\\:``; ``\\\\`` is a backslash; any other
    backslash stays), the value after it."""
    if "\\" not in field:  # the common case, without the character loop
        name, sep, value = field.partition(":")
        return name, (value if sep else None)
    name = []
    k, n = 0, len(field)
    while k < n:
        ch = field[k]
        if ch == "\\" and k + 1 < n and field[k + 1] in ":\\":
            name.append(field[k + 1])
            k += 2
            continue
        if ch == ":":
            return "".join(name), field[k + 1:]
        name.append(ch)
        k += 1
    return "".join(name), None


def parse_attribute(field: str, where) -> tuple[str, float]:
    """(name, value) of one attribute field of CRFsuite's data format: the name up to the
    first ``:`` that is not escaped (``\\:``; ``\\\\`` is a backslash), the value after it
    (1 without one).  ``where(message)`` builds the located InputError."""
    text, value_text = _split_field(field)
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
    """``name`` as CRFsuite's data format writes it (``\\`` and ``:`` escaped); labels are
    escaped the same way."""
    return name.replace("\\", "\\\\").replace(":", "\\:")


#: the format, as the messages state it
_FORMAT = ("CRFsuite's data format is one item per line, LABEL<TAB>ATTRIBUTE<TAB>... "
           "(TAB-separated; an item with no attributes is LABEL<TAB>), and a blank line "
           "after each sequence")


def _no_tab(text: str) -> str:
    """Why a non-blank line without a TAB is refused (CRFsuite would read it whole as a
    label with no attributes, so a CoNLL file would be tagged from transitions alone)."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    if " " in text.strip(" "):
        return (f"line {shown!r} has no TAB but spaces: it looks like CoNLL or other "
                f"space-separated columns, and {_FORMAT}; turn the columns into attributes "
                f"(e.g. B-NP<TAB>w=Confidence<TAB>pos=NN), or use the task of the columns' "
                f"format (chunk: CoNLL-2000 'word POS chunk' lines)")
    return f"line {shown!r} has no TAB: {_FORMAT}"


def _label(field: str, where) -> str:
    """The label of a line's first field (unescaped), refusing what CRFsuite would read as
    something else: a declaration (``@weight:2``) or a label cut at an unescaped ``:``."""
    if field.startswith("@"):
        raise where(f"{field!r} is a CRFsuite declaration ('@weight:W' weighs a sequence "
                    f"in crfsuite learn), which latentstruct does not read: every sequence "
                    f"weighs the same. Remove the line (repeat a sequence to weigh it more); "
                    f"a label starting with '@' cannot be written in this format")
    label, value = _split_field(field)
    if value is not None:
        raise where(f"label field {field!r} has an unescaped ':', so CRFsuite reads the label "
                    f"{label!r}; write a ':' inside a label as '\\:'")
    if label.strip() != label:
        raise where(f"label {label!r} has white space at its ends; the label is the first "
                    f"TAB-separated field")
    return label


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


def read_crfsuite_data(path, *, known_labels=None) -> tuple[list[DictSentence],
                                                             list[tuple | None]]:
    """The sequences of a file in CRFsuite's data format (module docstring): one
    :class:`DictSentence` each (python-crfsuite's naming: the attribute names exactly as
    written, unescaped), and its labels (None for an unlabelled sequence).  Errors name
    the file and line.

    ``known_labels`` (a fitted model's labels): a file with labels none of which is one of
    them is refused, naming its first label's line: its first column is not this model's
    labels (most often a file without a label column, whose first attribute would be taken
    as the label and lost)."""
    name = os.fspath(path)
    records, targets = [], []
    items, first_line = [], 0
    first_labelled = None  # (line, label) of the first labelled item
    known = None if known_labels is None else set(known_labels)
    any_known = False
    for lineno, text in read_lines(path):
        if not text.strip(" "):  # a line of spaces is blank to the eye: a sequence break
            if items:
                rec, tags = _sentence(items, name, first_line)
                records.append(rec)
                targets.append(tags)
                items = []
            continue

        def where(message, lineno=lineno):
            return InputError(message, name, lineno)

        if "\t" not in text and not text.startswith("@"):  # a declaration: _label says so
            raise where(_no_tab(text))
        if not items:
            first_line = lineno
        fields = text.split("\t")
        label = _label(fields[0], where)
        if label:
            if first_labelled is None:
                first_labelled = (lineno, label)
            if known is not None and not any_known:
                any_known = label in known
        out: dict = {}
        for field in fields[1:]:
            if not field:
                continue  # two TABs in a row: an empty field, skipped as CRFsuite skips it
            attr, value = parse_attribute(field, where)
            out[attr] = out.get(attr, 0.0) + value
        items.append((label, tuple(out), tuple(out.values())))
    if items:
        rec, tags = _sentence(items, name, first_line)
        records.append(rec)
        targets.append(tags)
    if not records:
        raise InputError(f"contains no sequences; {_FORMAT}", name)
    if known is not None and first_labelled is not None and not any_known:
        lineno, label = first_labelled
        shown = sorted(known)
        raise InputError(
            f"no label of the file is a label of the model (the first: {label!r}; the "
            f"model's: {', '.join(map(repr, shown[:10]))}{', ...' if len(shown) > 10 else ''}"
            f" ({len(shown)})): the first TAB-separated field of every line is the item's "
            f"label, as crfsuite tag and crfsuite learn read it. For input without labels, "
            f"start every line with a TAB (an empty label field)", name, lineno)
    return records, targets


def _value_text(v: float) -> str:
    return repr(float(v))


def write_crfsuite_data(path, records, labels) -> None:
    """Write sentences (:class:`DictSentence`) with ``labels`` (one list per sentence) in
    CRFsuite's data format, atomically; a label that the format cannot hold (a TAB or a
    line break, a leading ``@``) is refused before anything is written."""
    records, labels = list(records), [list(tags) for tags in labels]
    for tags in labels:
        for tag in tags:
            if any(ch in tag for ch in "\t\n\r") or tag.startswith("@") or not tag:
                raise InputError(f"label {tag!r} cannot be written in CRFsuite's data format "
                                 f"(an empty label, a TAB or line break, or a leading '@', "
                                 f"which CRFsuite reads as a declaration)")
    with atomic_write(path) as fh:
        for rec, tags in zip(records, labels, strict=True):
            vals = rec.values
            for t, (names, tag) in enumerate(zip(rec.attributes, tags, strict=True)):
                fields = [escape_attribute(tag)]
                for k, a in enumerate(names):
                    v = 1.0 if vals is None else vals[t][k]
                    fields.append(escape_attribute(a) if v == 1.0
                                  else f"{escape_attribute(a)}:{_value_text(v)}")
                # an item without attributes keeps its TAB: LABEL<TAB> (a line without
                # one is refused by the reader)
                fh.write("\t".join(fields) + ("\n" if names else "\t\n"))
            fh.write("\n")


class CrfsuiteReader(SentenceReader):
    """How ``sequence`` reads and writes its sentences: CRFsuite's data format (module
    docstring), Python lists of per-token feature dicts or attribute-string lists (no
    words: the task has no templates), and predictions written in CRFsuite's format.

    ``labels``: a fitted model's labels (None before), with which an evaluation file whose
    first column holds none of them is refused (``read_crfsuite_data``).
    """

    task_name = "sequence"

    def __init__(self, labels: list | None = None):
        self.labels = labels

    def words_pos(self, record) -> tuple:
        raise InputError("the 'sequence' task has no built-in attribute templates, and its "
                         "sentences hold no words: give every sentence as per-token feature "
                         "dicts (or attribute-string lists)")

    def make_dataset(self, X, y=None, *, naming: str = CRFSUITE_NAMES) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of per-token
        feature dicts or attribute-string lists; ``y`` a list of label lists (any non-empty
        strings) or None (targets None)."""
        return sequence_dataset(X, y, token="feature dict", build=None, check_tag=any_tag,
                                naming=naming)

    def read(self, path, *, split: str = "train") -> Dataset:
        """A file in CRFsuite's data format (module docstring).  Training needs every
        sequence labelled; for another split, unlabelled sequences (empty label fields)
        have targets None."""
        # a fitted model read for evaluate or predict knows its labels: a file whose first
        # column holds none of them is refused (read_crfsuite_data); training data (a
        # --resume run) has its unseen labels named one by one when they are encoded
        known = None if split == "train" else self.labels
        records, targets = read_crfsuite_data(path, known_labels=known)
        if split == "train":
            bad = next((k for k, t in enumerate(targets) if t is None), None)
            if bad is not None:
                raise InputError(f"sequence {bad + 1} has no labels (empty label fields); "
                                 f"training needs every item labelled", os.fspath(path))
        return Dataset(records, targets, str(path))

    def write(self, path, records, tags) -> None:
        """The sentences in CRFsuite's data format with the predicted labels."""
        write_crfsuite_data(path, records, tags)


# --------------------------------------------------------------------------------------
# the task
# --------------------------------------------------------------------------------------
@register_task
class SequenceTask(WellFormedTags, SequenceLabellingTask):
    """First-order sequence labelling of feature-dict sentences with any label strings.

    No built-in attribute templates and no tag checks: the attributes are the feature
    dicts' (python-crfsuite's names and real values, ``tasks.sequence.raw``), the labels any
    non-empty strings (NER tags, chunk tags, POS tags, ``"_"`` included).  Hamming loss;
    ``evaluate`` reports token accuracy.

    Parameters
    ----------
    min_count, feature_index, hash_bits
        The featurizer's (:class:`~latentstruct.tasks.sequence.featurizer.ChainFeaturizer`'s,
        which documents them), by name; it has no templates here, so its ``window`` and
        ``affix_length`` are not parameters.
    constrained : {"auto", True, False}, default "auto"
        With chunk tags (``B-PER I-PER O``; IOB1, IOB2, IOE1/2 or BIOES), decode and train
        only the well-formed sequences of their scheme (no ``I-PER`` after ``O``): "auto"
        when every training sentence is one (tags of no chunk scheme, or an ill-formed
        training sentence, with a warning, leave the chain free), True always, False never
        (``tasks.sequence.well_formed``; the decision is ``constrained_``).
    rules : None, str or list of str
        Declarative rules on the labellings, with label names (``forbid O -> I-PER``,
        ``contiguous *``): ``tasks.sequence.rules``, which lists the forms.
    train_global_rules : bool, default False
        Whether training keeps the global rules too (``SequenceLabellingTask``'s).

    Raw form (``make_dataset``): ``X`` holds one sentence per example, a list of per-token
    feature dicts (or of attribute-string lists), ``y`` one list of labels per sentence (or
    None)::

        X = [[{"w": "He", "bias": 1.0}, {"w": "reckons", "len": 7.0}]]
        y = [["B-NP", "B-VP"]]

    Files: CRFsuite's data format (module docstring).
    """

    name = "sequence"
    # feature dicts have no templates to widen
    featurizer_fixed = {"uses_pos": False, "window": 0, "affix_length": 1}
    # the J-LIS sampling options of the base task draw shuffled sentences, which feature
    # dicts cannot follow (their attributes were computed from the original order): off
    n_structured_tokens = None
    n_binary = 0
    negatives_per_positive = 1
    sample_seed = 0

    _parameter_constraints = {**CONSTRAINED_PARAMETER, **RULES_PARAMETER}  # and the featurizer's

    def __init__(self, *, constrained="auto", rules=None, train_global_rules=False,
                 **featurizer_params):
        # the featurizer's parameters, the constraints and the rules: the base task's
        # sampling options are not this task's (above)
        ComposedTask.__init__(self, **featurizer_params)
        self.constrained = constrained
        self.rules = rules
        self.train_global_rules = train_global_rules



    @property
    def reader(self) -> "CrfsuiteReader":
        """CRFsuite's data format and lists of feature dicts (:class:`CrfsuiteReader`); a
        fitted task's labels, for reading evaluation files."""
        encoder = getattr(self, "target_encoder_", None)
        return CrfsuiteReader(None if encoder is None else list(self.labels_))

