"""First-order sequence labelling: the base task of ``chunk``, ``pos``, ``citations`` and
``sequence``.

The task is a reader, a featurizer, a label encoder, a structure and a metric, composed.
:class:`~latentstruct.tasks.sequence.featurizer.ChainFeaturizer` (``featurizer_``) turns
sentences into token attribute ids: word, lowercase, affixes, shape, window words and POS
(the templates); a feature dict's attributes; an array's columns
(``tasks.sequence.numeric``), whose ids follow the attribute index; each with a value (1
unless given).  :class:`~latentstruct.featurizers.SequenceLabelEncoder`
(``target_encoder_``) turns tags into label ids.  The structure,
:class:`~latentstruct.tasks.sequence.structure.ChainStructure`, crosses an attribute's
value with its token's label (the emission parts), adds label transitions and scores,
decodes (Viterbi) and sums (sum-product) over the chain; ``fit`` builds it from the
fitted featurizer's width and the label count (``structure_``), and learners see it through
``task.structure()``.  The ``reader`` (a :class:`SentenceReader`, one per task) reads and
writes the task's files and Python lists, and the ``metric``
(:class:`~latentstruct.tasks.reports.TagAccuracy`; chunking's conlleval scores) scores tag
lists.  This module holds what ties them: the parameters, ``fit``, J-LIS's sampling of S
and B, evaluation and persistence.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

import numpy as np

from ...data.features import HashingIndex, feature_index_from_arrays
from ...exceptions import InputError, ModelFormatError, warn_user, check_is_fitted
from ...featurizers.targets import SequenceLabelEncoder
from ..base import ComposedTask, Dataset
from ..contracts import (
    ALLOWED_LABELS,
    KBEST,
    LABEL_FACTORED,
    MARGINALIZABLE,
    MAX_DECODABLE,
    PARTIAL_LABELS,
    RANDOM_TIES,
    SIZED,
)
from ..reports import TagAccuracy
from ..sampling import indirect_supervision_sample
from .corpus import SequenceCorpus
from .featurizer import ChainFeaturizer
from .numeric import ARRAYS, NUMERIC_KINDS, TOKENS_ARRAYS, NumericSentence
from .rules import RULES_PARAMETER, compile_rules, first_broken_rule, rules_capabilities
from .params import MAX_HASH_BITS, SAMPLING_PARAMETERS
from .raw import (
    ATTRIBUTE_KINDS,
    ATTRIBUTE_NAMINGS,
    CRFSUITE_NAMES,
    LEGACY_NAMES,
    TEMPLATES,
    DictSentence,
    any_tag,
    check_declared_tags,
    check_dict_sampling,
    records_kind,
)
from .structure import ChainStructure

__all__ = ["SequenceLabellingTask", "SentenceReader", "BinaryRecord", "MAX_HASH_BITS"]


@dataclass(frozen=True)
class BinaryRecord:
    """An unlabelled sentence (a J-LIS binary example): words and, if any, POS tags."""

    words: tuple
    pos: tuple | None = None

    @property
    def tokens(self) -> tuple:
        return self.words

    def __len__(self) -> int:
        return len(self.words)

    def permuted(self, order) -> "BinaryRecord":
        return BinaryRecord(tuple(self.words[i] for i in order),
                            None if self.pos is None else tuple(self.pos[i] for i in order))


class SentenceReader(ABC):
    """How a sequence task reads and writes its sentences: the reader a task composes
    (its ``reader``, built from its parameters and what it was fitted on).

    ``read`` parses the task's file format, ``make_dataset`` takes Python lists in the raw
    form the task's docstring gives, ``write`` writes predicted tags back in the file
    format; ``tag_checks`` is the tag format those (and ``fit``'s declared labels, and the
    command line's ``--classes``) enforce, and ``words_pos`` the words (and POS tags, for
    a task whose templates read them) of one of the reader's records, the featurizer's
    input.  This abstract base reads nothing: each task's module has its reader
    (``PosReader``, ``ChunkReader``, ``CitationReader``, ``CrfsuiteReader``).
    """

    #: the task's name, in messages
    task_name = "sequence"

    def tag_checks(self) -> tuple:
        """``(check_tag, check_dict_tag, any_label)``: the tag checks ``make_dataset`` gives
        ``sequence_dataset`` (``tasks.sequence.raw``), which ``fit`` applies to a declared
        label set too.  Here: any non-empty string (a task without a tag format)."""
        return any_tag, None, True

    @abstractmethod
    def words_pos(self, record) -> tuple:
        """``(words, pos)`` of one record (``pos`` None unless the task's templates read
        it)."""

    def sentences(self, records) -> list:
        """The featurizer's form of ``records``: a sentence of the task's own records (a
        ``ConlluSentence``, ``ChunkSentence``, ``Citation``, J-LIS's ``BinaryRecord``) as its
        ``(words, pos)`` pair, the tokens of a ``(tokens, array)`` sentence too; feature-dict
        sentences and arrays alone as they are."""
        out = []
        for rec in records:
            if isinstance(rec, DictSentence):
                out.append(rec)
            elif isinstance(rec, NumericSentence):
                out.append(rec if rec.base is None
                           else replace(rec, base=tuple(self.words_pos(rec.base))))
            else:
                out.append(tuple(self.words_pos(rec)))
        return out

    def binary_record(self, record) -> BinaryRecord:
        """J-LIS's unlabelled copy of ``record`` (its words and POS tags)."""
        return BinaryRecord(*self.words_pos(record))

    @abstractmethod
    def read(self, path, *, split: str = "train") -> Dataset:
        """The records and targets of the file at ``path`` (``split`` "test" also takes
        unlabelled input where the format has one)."""

    @abstractmethod
    def make_dataset(self, X, y=None, *, naming: str = CRFSUITE_NAMES) -> Dataset:
        """The records of Python lists in the task's raw form (feature dicts named under
        ``naming``), checked as ``read`` checks a file."""

    @abstractmethod
    def write(self, path, records, tags) -> None:
        """``records`` with the predicted ``tags``, in the file format."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _fitted_part(task, name: str):
    """``task.__dict__[name]`` (the fitted featurizer or encoder), or AttributeError, so
    that ``getattr(task, "labels_", None)`` and ``hasattr`` read an unfitted task."""
    part = task.__dict__.get(name)
    if part is None:
        raise AttributeError(f"{name}: the {task.name!r} task is not fitted")
    return part


class SequenceLabellingTask(ComposedTask):
    """First-order sequence labelling with Hamming loss (base of ``chunk`` and ``pos``).

    A featurizer (``featurizer_``), a label encoder (``target_encoder_``) and the
    :class:`ChainStructure` they define (``structure_``, what ``structure()`` shows a
    learner), composed.

    Parameters
    ----------
    min_count, feature_index, hash_bits, window, affix_length
        The featurizer's (:class:`ChainFeaturizer`'s, which documents them), taken by name
        (keyword-only, as every parameter here) and held as the task's own; a subclass
        may give other defaults (``featurizer_defaults``).
    n_structured_tokens : int or None
        For learning with indirect supervision (J-LIS): use a deterministic sample of
        labelled sentences totalling at least this many tokens as S (None: all sentences
        not used for B).
    n_binary : int
        Number of positive binary examples B+ (sentences whose labels are not used),
        disjoint from S; each gets ``negatives_per_positive`` shuffled copies in B-.
    negatives_per_positive : int
        Shuffled copies in B- of each sentence of B+.
    sample_seed : int
        Seed of the S/B sample and of the shuffles.
    rules : None, str or list of str
        Declarative rules on the labellings, written with label names
        (``tasks.sequence.rules`` lists the forms): ``first author|editor``,
        ``forbid O -> I-NP``, ``contiguous *``, ``count date <= 4``, ``if editor then
        booktitle``.  Local rules (first, last, forbid, require) hold in every decoder,
        training included; global ones (count, at least one, if-then, contiguous) make the
        prediction an ILP argmax (no k-best lists or marginals then), training keeping the
        local ones alone unless ``train_global_rules``.  A rule naming a label the training
        data lacks is an error.
    train_global_rules : bool, default False
        Whether training keeps the global rules too (the loss-augmented argmax an ILP,
        slower; no CRF or partial labels then).  False trains under the local rules and
        predicts under all of them.
    """

    #: the featurizer ``fit`` builds (a subclass may give other templates); its parameters
    #: but ``uses_pos`` (whether the templates read POS tags: ``featurizer_fixed``) are the
    #: task's too
    featurizer_class = ChainFeaturizer
    featurizer_fixed = {"uses_pos": False}
    #: the structure ``fit`` builds from the featurizer and the labels
    structure_class = ChainStructure
    #: how predictions are scored (``score``: ``evaluate``'s totals) and broken down
    #: (``report``), over tag lists: token accuracy here, conlleval's scores for chunking
    metric = TagAccuracy()
    capabilities = frozenset({MAX_DECODABLE, SIZED, RANDOM_TIES, MARGINALIZABLE, LABEL_FACTORED,
                              KBEST, ALLOWED_LABELS, PARTIAL_LABELS})
    _parameter_constraints = {**SAMPLING_PARAMETERS, **RULES_PARAMETER}  # and the featurizer's
    # The structural SVM stops at a certified 5% duality gap, evaluates the primal exactly
    # only where it may stop, and solves the working set for 10 epochs after each online
    # pass.  At the learner's own 1% / every iteration / 20 epochs, the last 9 of UD EWT's
    # 27 iterations (1,349 sentences, the tutorial's feature dicts) moved UPOS accuracy by
    # 0.0001; on CoNLL-2000 chunking (7,936 sentences) F1 0.9462 -> 0.9466 and 17 -> 13
    # iterations; the README's tagger 0.9632 -> 0.963.  CPU time fell by 45-50% on each.
    # Measurements: docs/performance.md ("Sequence labelling: the structural SVM on small data").
    learner_defaults = {"ssvm": {"tol": 0.05, "evaluate": "near", "inner_max_iter": 10}}

    def __init__(self, *, n_structured_tokens=None, n_binary=0, negatives_per_positive=1,
                 sample_seed=0, rules=None, train_global_rules=False, **featurizer_params):
        super().__init__(**featurizer_params)
        self.n_structured_tokens = n_structured_tokens
        self.n_binary = n_binary
        self.negatives_per_positive = negatives_per_positive
        self.sample_seed = sample_seed
        self.rules = rules
        self.train_global_rules = train_global_rules

    @classmethod
    def offered_capabilities(cls, params: dict | None = None) -> frozenset:
        """The class's capabilities; with global ``rules`` (count, at least one, if-then,
        contiguous) not the k-best lists, allowed labels, label-factored argmax or random
        ties (prediction is an ILP argmax), and with ``train_global_rules`` not the CRF's
        likelihood or the completion of partial labels either
        (``tasks.sequence.rules.rules_capabilities``)."""
        return rules_capabilities(cls.capabilities, params)

    @property
    def reader(self) -> "SentenceReader":
        """The reader of this task's files and Python lists (``SentenceReader``), for its
        current parameters (and, once fitted, what it was fitted on)."""
        # what a subclass must give, said as Python says it of an abstract class
        raise TypeError(
            f"{type(self).__name__} has no reader: a sequence task names the reader of its "
            f"files and Python lists with a `reader` property that returns a SentenceReader "
            f"(tasks.sequence.pos.PosReader is an example)")

    def read(self, path, *, split: str = "train") -> Dataset:
        """Read a file of this task's format (``reader.read``; ``split`` "test" also takes
        unlabelled input where the format has one).  The parameters are checked first."""
        self.check_params()
        return self.reader.read(path, split=split)

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from Python lists in the raw form of the class docstring (``X`` one
        sentence per example, ``y`` one tag list per sentence, or None: unlabelled input),
        checked as the file reader checks a file (``reader.make_dataset``); a bad entry is
        an ``InputError`` naming it (``X[3][5]``, ``y[2]``).  The parameters are checked
        first."""
        self.check_params()
        return self.reader.make_dataset(X, y, naming=self.attribute_naming)

    def write_predictions(self, path, dataset, predictions) -> None:
        """Write ``dataset``'s sentences with the predicted tags, in the format they were
        read in (``reader.write``)."""
        self.reader.write(path, dataset.records, self.decode_targets(predictions))

    # --- the featurizer -----------------------------------------------------------------
    def training_sample(self, dataset: Dataset) -> Dataset:
        """S and B for J-LIS: deterministic, disjoint samples of the training sentences.

        Sentences are shuffled with ``sample_seed``; the first ``n_binary`` become B+ (their
        labels unused) and each is shuffled ``negatives_per_positive`` times into B- (word
        salads, with their POS tags moved along); S takes the following sentences until it
        holds ``n_structured_tokens`` tokens.  Without these options the file is used whole.
        """
        if self.n_structured_tokens is None and not self.n_binary:
            return dataset
        check_dict_sampling(dataset.records, self.n_binary)
        return indirect_supervision_sample(
            dataset, n_structured_tokens=self.n_structured_tokens, n_binary=self.n_binary,
            negatives_per_positive=self.negatives_per_positive, seed=self.sample_seed,
            binary_record=self.reader.binary_record)

    def draws_binary_examples(self) -> bool:
        """Whether ``training_sample`` draws binary examples B (``n_binary`` > 0)."""
        return bool(self.n_binary)

    def fit(self, dataset: Dataset) -> "SequenceLabellingTask":
        """Fit the featurizer (``featurizer_``: the attribute index of the training
        sentences and of B+) and the label set (``target_encoder_``)."""
        if len(dataset) == 0 and dataset.binary is None:
            raise InputError("training data contains no sentences", dataset.path)
        if any(t is None for t in dataset.targets):
            raise InputError(f"the training data has no gold {self.name} tags (unlabelled "
                             f"input, or make_dataset without y); fit needs one tag per token: "
                             f"pass y", dataset.path)
        records = list(dataset.records)
        if dataset.binary is not None:  # B+ sentences are unlabelled inputs, fair to index
            records += [r for r, y in zip(dataset.binary.records, dataset.binary.targets) if y > 0]
        kind = records_kind(records)  # a mix of kinds is refused before any template is computed
        if dataset.labels:  # declared tags (partial_fit's classes) get y's checks, by kind
            check, dict_check, any_label = self.reader.tag_checks()
            check_declared_tags(dataset.labels, kind, check, dict_check, any_label=any_label)
        encoder = SequenceLabelEncoder(classes=list(dataset.labels or ())).fit(dataset.targets)
        labels = encoder.classes_
        if len(labels) == 1:
            warn_user(
                f"the training data holds one {self.name} tag only ({labels[0]!r}), so the "
                f"model can only ever predict that tag; a tagger learns to choose between "
                f"tags: give training data with at least two (or declare the full tag set, "
                f"partial_fit's classes=[...] in Python, --classes on the command line)",
                UserWarning)
        self.featurizer_ = self.make_featurizer().fit(self.reader.sentences(records))
        self.target_encoder_ = encoder
        self._build_structure()
        return self

    def _new_structure(self) -> ChainStructure:
        """The chain of the fitted featurizer's width and the label set (``structure_``),
        keeping the task's own constraints (:meth:`own_constraints`) and its ``rules``
        (``tasks.sequence.rules``; a rule naming a label the task lacks is an
        ``InputError``)."""
        labels = list(self.target_encoder_.classes_)
        local, global_ = compile_rules(getattr(self, "rules", None), labels)
        own = self.own_constraints()
        if own is not None:
            local = own if local is None else own & local
        return self.structure_class(len(labels), self.featurizer_.n_features_out_,
                                    local, global_,
                                    bool(getattr(self, "train_global_rules", False)))

    def training_targets(self, dataset: Dataset) -> list:
        """The encoded gold tags of a batch to train on, refused where a sentence breaks a
        rule the decoder keeps in training (the local ``rules``, and the global ones with
        ``train_global_rules``): the decoder could never write it, so the CRF's likelihood
        of it would be unbounded and the structural SVM would read it as its decoder's
        miss (its check that the loss-augmented argmax scores at least the gold)."""
        targets = self.encode_targets(dataset.targets)
        rules = getattr(self, "rules", None)
        if rules is None:
            return targets
        bad = first_broken_rule(rules, list(self.labels_), targets,
                                include_global=bool(getattr(self, "train_global_rules", False)))
        if bad is not None:
            i, rule, where = bad
            line = getattr(dataset.records[i], "line", 0) if i < len(dataset.records) else 0
            raise InputError(
                f"training sentence {i} breaks rule {rule.text!r} ({where}), which the model "
                f"keeps in training, so it could never learn that labelling; fix its tags, "
                f"or drop the rule (a global rule, kept at prediction alone unless "
                f"train_global_rules, may be broken by training data)", dataset.path,
                line or None)
        return targets

    def own_constraints(self):
        """Constraints the task itself puts on its labellings (``ChainConstraints``; a
        chunker's well-formed tag sequences), or None: none here."""
        return None

    # --- what the featurizer and the encoder learned ------------------------------------
    @property
    def attr_index_(self):
        """The attribute names' feature map (``featurizer_.index_``; what model files store)."""
        return _fitted_part(self, "featurizer_").index_

    @property
    def attributes_(self) -> str:
        """The kind of sentence the task was fitted on (``tasks.sequence.kinds``)."""
        return _fitted_part(self, "featurizer_").attributes_

    @property
    def attribute_names_(self) -> str:
        """The rule naming feature-dict attributes the task was fitted with."""
        return _fitted_part(self, "featurizer_").attribute_names_

    @property
    def n_columns_(self) -> int:
        """Numeric columns per token (0 unless fitted on numbers)."""
        return _fitted_part(self, "featurizer_").n_columns_

    @property
    def labels_(self) -> list:
        """The sorted label set; a label's id is its position."""
        return _fitted_part(self, "target_encoder_").classes_

    @property
    def attribute_naming(self) -> str:
        """The rule that names feature-dict attributes (``tasks.sequence.raw``): the fitted
        task's ``attribute_names_``, python-crfsuite's (``"crfsuite"``) before fitting.
        ``make_dataset`` builds feature-dict records under it."""
        return getattr(self, "attribute_names_", CRFSUITE_NAMES)

    # n_labels and n_attributes are read on every decode: the fitted check runs only when
    # what they read is missing
    @property
    def n_labels(self) -> int:
        try:
            return len(self.labels_)
        except AttributeError:
            check_is_fitted(self)
            raise

    @property
    def n_attributes(self) -> int:
        """Named attributes (the index) plus numeric columns (``n_columns_``, after them):
        the featurizer's ``n_features_out_``."""
        try:
            featurizer = self.featurizer_
        except AttributeError:
            check_is_fitted(self)
            raise
        return featurizer.n_features_out_

    def featurize(self, dataset: Dataset) -> SequenceCorpus:
        """The sentences' attribute ids (and values, when a feature dict gives any other
        than 1) as one ``SequenceCorpus`` (``featurizer_.transform``); refused (InputError)
        for sentences of the other kind than the task was fitted on (``attributes_``), or
        feature dicts named under another rule (``attribute_names_``), or arrays of another
        width (``n_columns_``)."""
        check_is_fitted(self)
        featurizer = self.featurizer_
        records = dataset.records
        # the kind is checked on the records as given, before the task's records become
        # (words, pos) pairs: a 'sequence' model refuses words for what they are
        featurizer.check_sentences(records, self.name)
        return featurizer.transform(self.reader.sentences(records), task_name=self.name)

    def featurize_raw(self, X) -> SequenceCorpus | None:
        """``featurize(make_dataset(X))`` of unlabelled feature-dict sentences, the same
        corpus array for array, without the records (``tasks.sequence.dict_fast``: what
        ``predict`` runs); None when ``X`` is anything else or holds something the records'
        path refuses, which the caller then runs to raise its error."""
        from .dict_fast import dict_corpus

        check_is_fitted(self)
        cls = type(self)
        if (cls.make_dataset is not SequenceLabellingTask.make_dataset
                or cls.featurize is not SequenceLabellingTask.featurize
                or type(self.featurizer_).transform is not ChainFeaturizer.transform):
            return None  # a subclass that reads or featurises otherwise: its own path
        self.check_params()
        return dict_corpus(X, self.featurizer_)

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Label strings to ids (``target_encoder_.transform``).  A label not in
        ``labels_`` is refused (:class:`~latentstruct.tasks.validation.UnseenLabelError`,
        naming it as ``y[i][t]`` and listing the model's labels): a model has no weights
        for it, so it can be neither trained on nor encoded (evaluation scores raw gold
        tags: :meth:`evaluate_raw`)."""
        check_is_fitted(self)
        return self.target_encoder_.transform(targets)

    def decode_targets(self, structures) -> list[list[str]]:
        """Label-id sequences to tag lists (``target_encoder_.inverse_transform``)."""
        check_is_fitted(self)
        return self.target_encoder_.inverse_transform(structures)

    # --- evaluation -------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        """Metrics of predicted label ids against gold label ids (``encode_targets``; a
        gold ``-1``, a token left free, is never matched): ``metric.score`` on them as
        tags."""
        labels = self.labels_
        gold = [[labels[i] if i >= 0 else None for i in np.asarray(y).tolist()]
                for y in targets]
        return self.metric.score(gold, self.decode_targets(predictions))

    def evaluate_raw(self, targets, predictions) -> dict:
        """The metric of the predictions against raw gold tags, every one known: an unknown
        tag (None, or ``_`` in a file: partial labels, which train but cannot score) is an
        ``InputError`` naming the sentence and token."""
        for i, tags in enumerate(targets):
            if tags is not None and any(t is None for t in tags):
                t = next(k for k, tag in enumerate(tags) if tag is None)
                raise InputError(f"gold tag {t} of sentence {i} is unknown (None in y, '_' in a "
                                 f"file: partial labels); scoring needs every gold tag: score "
                                 f"on fully labelled sentences")
        return super().evaluate_raw(targets, predictions)

    def decode_predictions(self, predictions) -> list[list[str]]:
        """``predict``'s label-id arrays as tag lists, the raw form of ``make_dataset``'s
        ``y``: ``[["B-NP", "I-NP", "O"], ...]``."""
        return self.decode_targets(predictions)

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Metrics on labelled sentences; unlabelled input (no gold column) is refused."""
        if any(t is None for t in dataset.targets):
            raise InputError(
                f"the data has no gold {self.name} labels (a file read as unlabelled input, "
                f"or make_dataset without y); evaluate needs labelled data, predict takes "
                f"unlabelled input", dataset.path)
        return super().evaluate_model(dataset, predict, decision_function)

    # --- persistence --------------------------------------------------------------------
    def get_state(self):
        """``labels``, ``attributes`` (the kind of sentence the task was fitted on:
        "templates", "dicts", "arrays" or "tokens+arrays"), ``attribute_names`` (the rule
        naming feature-dict attributes: "crfsuite"; a state without it was saved under the
        "legacy" rule) and, for the numeric kinds only (so other model files are as before),
        ``n_columns``; the attribute index as arrays."""
        check_is_fitted(self)
        kind = getattr(self, "attributes_", TEMPLATES)
        state = {"labels": list(self.labels_), "attributes": kind,
                 "attribute_names": self.attribute_naming}
        if kind in NUMERIC_KINDS:
            state["n_columns"] = int(self.n_columns_)
        return state, self.attr_index_.to_arrays(prefix="attr_")

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        kind = state.get("attributes", TEMPLATES)  # absent in models saved before dicts
        if kind not in ATTRIBUTE_KINDS:
            raise ModelFormatError(f"unknown attribute kind {kind!r} in the model file; "
                                   f"expected one of {', '.join(ATTRIBUTE_KINDS)}")
        # absent in models saved before python-crfsuite's names: they keep their own rule
        naming = state.get("attribute_names", LEGACY_NAMES)
        if naming not in ATTRIBUTE_NAMINGS:
            raise ModelFormatError(f"unknown attribute naming {naming!r} in the model file; "
                                   f"expected one of {', '.join(ATTRIBUTE_NAMINGS)}")
        n_columns = state.get("n_columns", 0)  # absent unless the kind is numeric
        if (isinstance(n_columns, bool) or not isinstance(n_columns, int) or n_columns < 0
                or (kind in NUMERIC_KINDS) != ("n_columns" in state)):
            raise ModelFormatError(f"the model file's n_columns ({n_columns!r}) does not fit "
                                   f"its attribute kind {kind!r}; the file is damaged or edited")
        index = feature_index_from_arrays(arrays, prefix="attr_")
        _check_layout(task, kind, n_columns, index)
        task.featurizer_ = task.featurizer_class.from_index(
            index, attributes=kind,
            attribute_names=naming, n_columns=n_columns, **task.make_featurizer().get_params())
        task.target_encoder_ = SequenceLabelEncoder.from_classes(list(state["labels"]))
        task._build_structure()
        return task


def _check_layout(task, kind: str, n_columns: int, index) -> None:
    """A model file's feature layout (its metadata's attribute kind and column count)
    against the attribute index its arrays hold; ModelFormatError on a mismatch.

    The weight matrix alone cannot tell ``arrays`` from ``tokens+arrays``: both have
    ``len(index) + n_columns`` emission rows.  The index can: ``fit`` gives a model of
    arrays alone an empty, exact index (its sentences name no attribute), while a model of
    tokens (``templates``, ``tokens+arrays``) indexes its templates, which give every
    token the bias attribute, so its exact index at ``min_count=1`` (the index's own,
    stored with it in the arrays) is never empty; and the index is a hashing table exactly
    when the task hashes.  Without this check an edited kind goes unnoticed: the model
    would compute templates its weights never saw, or refuse the input it was trained on.
    """
    damaged = "the file is damaged or edited"
    hashing = isinstance(index, HashingIndex)
    if kind == ARRAYS:
        if hashing or len(index):
            held = "a hashing table" if hashing else f"{len(index)} named attributes"
            raise ModelFormatError(
                f"the model file says its task was fitted on numeric arrays alone (attributes "
                f"'arrays'), but its attribute index holds {held}, which only a model of "
                f"tokens has; {damaged}")
        if n_columns < 1:
            raise ModelFormatError(
                f"the model file says its task was fitted on numeric arrays (attributes "
                f"'arrays') of {n_columns} columns; such a model has at least one; {damaged}")
        return
    if hashing != (task.feature_index == "hashing"):
        raise ModelFormatError(
            f"the model file's task has feature_index={task.feature_index!r}, but its "
            f"attribute index is {'a hashing table' if hashing else 'an exact index'}; "
            f"{damaged}")
    if kind in (TEMPLATES, TOKENS_ARRAYS) and not hashing and not len(index) \
            and index.min_count == 1:
        raise ModelFormatError(
            f"the model file says its task was fitted on tokens (attributes {kind!r}), whose "
            f"templates give every token at least the bias attribute, but its attribute "
            f"index at min_count=1 is empty, as a model of numeric arrays alone has; {damaged}")
