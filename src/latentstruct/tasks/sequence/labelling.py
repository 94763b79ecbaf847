"""First-order sequence labelling: the base task of ``chunk``, ``pos`` and ``citations``.

Parts are (token, label) emissions and (label, label) transitions, plus start and end
transitions.  Each token carries a set of attributes (word, lowercase, affixes, shape,
window words and POS; a feature dict's; an array's columns, ``tasks.sequence.numeric``,
whose ids follow the attribute index), each with a value (1 unless given); an emission
part's feature vector is its attributes' values crossed with its label.  So with
``n_attr`` attributes and ``L`` labels the weight vector is laid out as

    [ emissions (n_attr x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

and the part scores for Viterbi are a gather over this layout.  Loss is Hamming
(mislabelled tokens); the loss-augmented argmax adds 1 to every wrong label's unary score.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ...data.features import feature_index_from_arrays, make_feature_index
from ...data.sparse import SparseRows, SparseVector
from ...exceptions import ConfigError, InputError, ModelFormatError, warn_user
from ...inference.result import DecodeResult
from ...inference.viterbi import viterbi, viterbi_batch
from ...limits import AFFIX_LENGTH, NEGATIVES_PER_POSITIVE, WINDOW, check_bounded
from ..base import Dataset, StructuredTask
from ..contracts import LABEL_FACTORED, MARGINALIZABLE, MAX_DECODABLE, RANDOM_TIES, SIZED
from ..reports import tag_report
from ..sampling import indirect_supervision_sample
from ..validation import check_label_ids, encode_labels
from ...featurizers.templates import token_attributes
from .capabilities import LabelFactoredSequence, MarginalizableSequence
from .corpus import SequenceCorpus, as_corpus
from .kernels import (
    coalesced,
    coalesced_phi_difference,
    coalesced_phi_differences,
    emission_scores,
    first_outside,
    hamming_augmented,
    phi_difference,
)
from .numeric import (
    ARRAYS,
    NUMERIC_KINDS,
    NumericSentence,
    append_numeric_ids,
    check_numeric_columns,
    numeric_columns,
)
from .raw import (
    ATTRIBUTE_KINDS,
    ATTRIBUTE_NAMINGS,
    CRFSUITE_NAMES,
    DICTS,
    LEGACY_NAMES,
    TEMPLATES,
    DictSentence,
    check_dict_sampling,
    check_records_kind,
    check_records_naming,
    records_kind,
    records_naming,
)

__all__ = ["SequenceLabellingTask", "BinaryRecord", "MAX_HASH_BITS", "check_hash_bits"]


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


#: Largest ``hash_bits`` of the sequence tasks.  With feature hashing the emission block
#: holds 2**hash_bits weights per label (float64): 512 MiB per label at 26, so a 23-label
#: chunker needs 11.5 GiB; at 32 a POS tagger would ask for hundreds of GiB.
MAX_HASH_BITS = 26


def _bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}"
        n /= 1024


def check_hash_bits(v) -> None:
    """ConfigError unless ``v`` is an integer in [1, MAX_HASH_BITS]; the message says the
    memory the weights would take."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ConfigError(f"hash_bits must be an integer in [1, {MAX_HASH_BITS}], got {v!r}")
    if not 1 <= v <= MAX_HASH_BITS:
        size = f" ({_bytes(8 << int(v))} per label at hash_bits={v})" if v > MAX_HASH_BITS else ""
        raise ConfigError(
            f"hash_bits must be an integer in [1, {MAX_HASH_BITS}], got {v}: with feature "
            f"hashing the model holds 2**hash_bits weights per label, 8 bytes each{size}; "
            f"{MAX_HASH_BITS} already takes {_bytes(8 << MAX_HASH_BITS)} per label, the default "
            f"20 takes {_bytes(8 << 20)}")


class SequenceLabellingTask(MarginalizableSequence, LabelFactoredSequence, StructuredTask):
    """First-order sequence labelling with Hamming loss (base of ``chunk`` and ``pos``).

    Parameters
    ----------
    min_count : int
        Keep attributes seen at least this often in training.
    feature_index : {"index", "hashing"}
        Exact index of training attributes, or feature hashing.
    hash_bits : int
        Table size 2**hash_bits when hashing.
    window : int
        Context window (words, and POS for chunking) on each side.
    affix_length : int
        Longest prefix/suffix attribute.
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
    """

    uses_pos_input: bool = False
    capabilities = frozenset({MAX_DECODABLE, SIZED, RANDOM_TIES, MARGINALIZABLE, LABEL_FACTORED})
    # The structural SVM stops at a certified 5% duality gap, evaluates the primal exactly
    # only where it may stop, and solves the working set for 10 epochs after each online
    # pass.  At the learner's own 1% / every iteration / 20 epochs, the last 9 of UD EWT's
    # 27 iterations (1,349 sentences, the tutorial's feature dicts) moved UPOS accuracy by
    # 0.0001; on CoNLL-2000 chunking (7,936 sentences) F1 0.9462 -> 0.9466 and 17 -> 13
    # iterations; the README's tagger 0.9632 -> 0.963.  CPU time fell by 45-50% on each.
    # Measurements: docs/performance.md ("Sequence labelling: the structural SVM on small data").
    learner_defaults = {"ssvm": {"tol": 0.05, "evaluate": "near", "inner_max_iter": 10}}

    def __init__(self, min_count=1, feature_index="index", hash_bits=20, window=2, affix_length=3,
                 n_structured_tokens=None, n_binary=0, negatives_per_positive=1, sample_seed=0):
        self.min_count = min_count
        self.feature_index = feature_index
        self.hash_bits = hash_bits
        self.window = window
        self.affix_length = affix_length
        self.n_structured_tokens = n_structured_tokens
        self.n_binary = n_binary
        self.negatives_per_positive = negatives_per_positive
        self.sample_seed = sample_seed

    # --- fitting ------------------------------------------------------------------
    def _validate_params(self) -> None:
        for name in ("min_count", "affix_length"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{name} must be a positive integer, got {v!r}")
        check_hash_bits(self.hash_bits)
        if not isinstance(self.window, (int, np.integer)) or self.window < 0:
            raise ConfigError(f"window must be a non-negative integer, got {self.window!r}")
        # counts that size memory or time: bounded, the message says what a value costs
        defaults = self.param_defaults()
        for name, bound in (("window", WINDOW), ("affix_length", AFFIX_LENGTH),
                            ("negatives_per_positive", NEGATIVES_PER_POSITIVE)):
            check_bounded(name, getattr(self, name), bound, default=defaults[name])

    def attribute_strings(self, record) -> list[list[str]]:
        """Attribute strings of every token of ``record``: a sentence given as feature
        dicts (``DictSentence``) has exactly its dicts' attributes, any other record the
        task's built-in templates (:meth:`template_attributes`); a sentence of numbers those
        of its tokens (none for an array alone: its columns are no named attributes)."""
        if isinstance(record, DictSentence):
            return [list(a) for a in record.attributes]
        if isinstance(record, NumericSentence):
            if record.base is None:
                return [[] for _ in range(len(record))]
            record = record.base
        return self.template_attributes(record)

    def template_attributes(self, record) -> list[list[str]]:
        """The built-in attribute templates of a sentence of words (:func:`token_attributes`)."""
        words, pos = self._words_pos(record)
        return token_attributes(
            words, pos if self.uses_pos_input else None,
            window=self.window, affix_length=self.affix_length,
        )

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
            binary_record=lambda rec: BinaryRecord(*self._words_pos(rec)))

    def draws_binary_examples(self) -> bool:
        """Whether ``training_sample`` draws binary examples B (``n_binary`` > 0)."""
        return bool(self.n_binary)

    def fit(self, dataset: Dataset) -> "SequenceLabellingTask":
        """Build the label set and the attribute index from training data (and B+)."""
        self._validate_params()
        if len(dataset) == 0 and dataset.binary is None:
            raise InputError("training data contains no sentences", dataset.path)
        if any(t is None for t in dataset.targets):
            raise InputError(f"the training data has no gold {self.name} tags (unlabelled "
                             f"input, or make_dataset without y); fit needs one tag per token: "
                             f"pass y", dataset.path)
        records = list(dataset.records)
        if dataset.binary is not None:  # B+ sentences are unlabelled inputs, fair to index
            records += [r for r, y in zip(dataset.binary.records, dataset.binary.targets) if y > 0]
        kind = records_kind(records)
        labels = sorted({tag for tags in dataset.targets for tag in tags} | set(dataset.labels or ()))
        self.labels_ = labels
        self._label_id = {t: i for i, t in enumerate(labels)}
        if len(labels) == 1:
            warn_user(
                f"the training data holds one {self.name} tag only ({labels[0]!r}), so the "
                f"model can only ever predict that tag; a tagger learns to choose between "
                f"tags: give training data with at least two (or declare the full tag set, "
                f"e.g. partial_fit's classes=[...])", UserWarning)
        n_columns = numeric_columns(records)
        params = {"min_count": self.min_count} if self.feature_index == "index" else {"n_bits": self.hash_bits}
        # an array alone names no attribute: a hashing table would be 2**hash_bits empty rows
        index = (make_feature_index("index") if kind == ARRAYS
                 else make_feature_index(self.feature_index, **params))
        if kind == ARRAYS:
            index.freeze()
        elif self.feature_index == "index":
            _fit_by_frequency(index, (attr for rec in records for attr in (
                rec.names if isinstance(rec, DictSentence)
                else (a for tok in self.attribute_strings(rec) for a in tok))))
        self.attr_index_ = index
        self.attributes_ = kind
        self.attribute_names_ = records_naming(records, default=CRFSUITE_NAMES)
        self.n_columns_ = n_columns
        self.fitted_ = True
        return self

    @property
    def attribute_naming(self) -> str:
        """The rule that names feature-dict attributes (``tasks.sequence.raw``): the fitted
        task's ``attribute_names_``, python-crfsuite's (``"crfsuite"``) before fitting.
        ``make_dataset`` builds feature-dict records under it."""
        return getattr(self, "attribute_names_", CRFSUITE_NAMES)

    @property
    def n_labels(self) -> int:
        self.check_fitted()
        return len(self.labels_)

    @property
    def n_attributes(self) -> int:
        """Named attributes (the index) plus numeric columns (``n_columns_``, after them)."""
        self.check_fitted()
        return len(self.attr_index_) + getattr(self, "n_columns_", 0)

    @property
    def n_features(self) -> int:
        L = self.n_labels
        return self.n_attributes * L + L * L + 2 * L

    def featurize(self, dataset: Dataset) -> SequenceCorpus:
        """The sentences' attribute ids (and values, when a feature dict gives any other
        than 1) as one ``SequenceCorpus``; refused (InputError) for sentences of the other
        kind than the task was fitted on (``attributes_``), or feature dicts named under
        another rule (``attribute_names_``), or arrays of another width (``n_columns_``)."""
        self.check_fitted()
        records = dataset.records
        kind = getattr(self, "attributes_", TEMPLATES)
        check_records_kind(records, kind, self.name)
        if kind == DICTS:
            check_records_naming(records, self.attribute_naming, self.name)
        if kind in NUMERIC_KINDS:
            check_numeric_columns(records, self.n_columns_, self.name)
        indptr = [0]
        ids = []
        offsets = [0]
        index = self.attr_index_
        lookup = index.lookup_many
        # an occurrence with the value 0 (a False in sklearn-crfsuite's dicts) scores
        # nothing and has a zero gradient: it stays in the index (CRFsuite's attribute) but
        # not in the corpus, so dicts of booleans keep the binary fast path
        with_values = any(_has_real_values(r) for r in records)
        values = [] if with_values else None
        total = 0
        for rec in records:
            if isinstance(rec, DictSentence):
                total = _dict_sentence_ids(rec, index, with_values, ids, values, indptr, total)
                offsets.append(len(indptr) - 1)
                continue
            if isinstance(rec, NumericSentence):
                tok_ids = None if rec.base is None else [
                    lookup(tok) for tok in self.attribute_strings(rec.base)]
                total = append_numeric_ids(rec, tok_ids, len(index), with_values, ids, values,
                                           indptr, total)
                offsets.append(len(indptr) - 1)
                continue
            for tok in self.attribute_strings(rec):  # the templates: every value 1
                a = lookup(tok)
                if with_values:
                    values.append(np.ones(a.shape[0]))
                ids.append(a)
                total += a.shape[0]
                indptr.append(total)
            offsets.append(len(indptr) - 1)
        attr_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        attr_values = None
        if with_values:
            attr_values = np.concatenate(values) if values else np.zeros(0)
        return SequenceCorpus(np.asarray(indptr), attr_ids, np.asarray(offsets), attr_values)

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Label strings to ids.  A label not in ``labels_`` is refused
        (:class:`~latentstruct.tasks.validation.UnseenLabelError`, naming it as ``y[i][t]``
        and listing the model's labels): a model has no weights for it, so it can be neither
        trained on nor encoded (evaluation scores raw gold tags: :meth:`evaluate_raw`)."""
        self.check_fitted()
        label_id, labels = self._label_id, self.labels_
        out = []
        for i, tags in enumerate(targets):
            out.append(encode_labels(label_id, labels, tags, example=i,
                                     where=lambda t, i=i: f"y[{i}][{t}] (sentence {i}, token {t})"))
        return out

    def decode_targets(self, structures) -> list[list[str]]:
        labels = self.labels_
        return [[labels[i] for i in y] for y in structures]

    # --- evaluation -------------------------------------------------------------------
    def evaluate(self, targets, predictions) -> dict:
        """Metrics of predicted label ids against gold label ids (``encode_targets``; a
        gold ``-1``, a token left free, is never matched): :meth:`evaluate_tags` on them
        as tags."""
        labels = self.labels_
        gold = [[labels[i] if i >= 0 else None for i in np.asarray(y).tolist()]
                for y in targets]
        return self.evaluate_tags(gold, self.decode_targets(predictions))

    def evaluate_raw(self, targets, predictions) -> dict:
        """Metrics of predicted label ids against raw gold tag lists: a gold tag the model
        never saw counts as what it is (a token no prediction matches; for chunking, a
        chunk of its own type, as conlleval counts it)."""
        return self.evaluate_tags([list(t) for t in targets], self.decode_targets(predictions))

    def evaluate_tags(self, gold, pred) -> dict:
        """``{"accuracy"}``: the share of tokens whose predicted tag is the gold one."""
        n = correct = 0
        for y, p in zip(gold, pred, strict=True):
            if len(y) != len(p):
                raise InputError(f"a sentence has {len(y)} gold tags but {len(p)} predicted")
            n += len(y)
            correct += sum(a == b for a, b in zip(y, p))
        return {"accuracy": correct / n if n else 0.0}

    def decode_predictions(self, predictions) -> list[list[str]]:
        """``predict``'s label-id arrays as tag lists, the raw form of ``make_dataset``'s
        ``y``: ``[["B-NP", "I-NP", "O"], ...]``."""
        self.check_fitted()
        return self.decode_targets(predictions)

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Metrics on labelled sentences; unlabelled input (no gold column) is refused."""
        if any(t is None for t in dataset.targets):
            raise InputError(
                f"the data has no gold {self.name} labels (a file read as unlabelled input, "
                f"or make_dataset without y); evaluate needs labelled data, predict takes "
                f"unlabelled input", dataset.path)
        return super().evaluate_model(dataset, predict, decision_function)

    def report(self, dataset: Dataset, predictions) -> dict:
        """Per-label precision, recall, F1 and support, token counts (``tag_report``)."""
        return tag_report(dataset.targets, self.decode_targets(predictions))

    # --- model interface -------------------------------------------------------------
    def split_weights(self, w: np.ndarray):
        """Views (emission (n_attr, L), transition (L, L), start (L,), end (L,)) of w."""
        L, A = self.n_labels, self.n_attributes
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        e = A * L
        return (
            w[:e].reshape(A, L),
            w[e : e + L * L].reshape(L, L),
            w[e + L * L : e + L * L + L],
            w[e + L * L + L :],
        )

    def subset(self, X: SequenceCorpus, indices) -> SequenceCorpus:
        return self.as_batch(X).subset(indices)

    def as_batch(self, X) -> SequenceCorpus:
        return as_corpus(X)

    def example_size(self, x: SequenceCorpus) -> int:
        return x.n_tokens

    def unary_scores(self, X: SequenceCorpus, w: np.ndarray) -> np.ndarray:
        emission, _, _, _ = self.split_weights(w)
        return emission_scores(X.attr_indptr, X.attr_ids, X.attr_values, emission, X.offsets[0],
                               X.offsets[-1])

    def _label_ids(self, x: SequenceCorpus, y, what: str) -> np.ndarray:
        """``y`` checked before a kernel reads it: integer ids in -1..L-1, one per token."""
        n = int(x.offsets[-1] - x.offsets[0])
        # Fast path for what learners pass (a decoder's int64 labels), called per example.
        labels = getattr(self, "labels_", None)
        if (labels is not None and type(y) is np.ndarray and y.dtype == np.int64
                and y.shape == (n,) and first_outside(y, -1, len(labels)) < 0):
            return y
        y = check_label_ids(y, self.n_labels, what=what)
        if y.shape != (n,):
            raise InputError(f"{what} has shape {y.shape}; expected one label id per token, "
                             f"({n},)")
        return y

    def joint_feature(self, x: SequenceCorpus, y) -> SparseVector:
        y = self._label_ids(x, y, "structure")
        none = np.full_like(y, -1)
        idx, val = phi_difference(
            x.attr_indptr, x.attr_ids, x.attr_values, x.offsets[0], x.offsets[-1], y, none,
            self.n_attributes, self.n_labels,
        )
        return SparseVector(*coalesced(idx, val))

    def joint_feature_difference(self, x: SequenceCorpus, y_a, y_b) -> SparseVector:
        y_a = self._label_ids(x, y_a, "structure y_a")
        y_b = self._label_ids(x, y_b, "structure y_b")
        return SparseVector(*coalesced_phi_difference(
            x.attr_indptr, x.attr_ids, x.attr_values, x.offsets[0], x.offsets[-1], y_a, y_b,
            len(self.attr_index_) + getattr(self, "n_columns_", 0), len(self.labels_)))

    def _batch_label_ids(self, X: SequenceCorpus, Y, what: str) -> np.ndarray:
        """The label ids of every sentence of ``Y`` back to back, checked once: one
        sequence per sentence of ``X``, one id in -1..L-1 per token."""
        if len(Y) != len(X):
            raise InputError(f"{what}: {len(Y)} structures for {len(X)} sentences")
        lengths = X.lengths()
        sizes = np.fromiter((len(y) for y in Y), dtype=np.int64, count=len(Y))
        bad = np.flatnonzero(sizes != lengths)
        if bad.size:
            k = int(bad[0])
            raise InputError(f"{what}: sentence {k} has {lengths[k]} tokens but its structure "
                             f"has {sizes[k]} labels; expected one label id per token")
        flat = np.concatenate([np.asarray(y) for y in Y]) if len(Y) else np.zeros(0, np.int64)
        return check_label_ids(flat, self.n_labels, what=what)

    def joint_feature_differences(self, X, Y_a, Y_b) -> SparseRows:
        """Every sentence's coalesced Phi difference in one compiled call (the structural
        SVM's cutting planes of a mini-batch; per sentence, the Python around the kernel
        call cost more than the kernel)."""
        X = as_corpus(X)
        y_a = self._batch_label_ids(X, Y_a, "structures Y_a")
        y_b = self._batch_label_ids(X, Y_b, "structures Y_b")
        return SparseRows(*coalesced_phi_differences(
            X.attr_indptr, X.attr_ids, X.attr_values, X.offsets, y_a, y_b,
            len(self.attr_index_) + getattr(self, "n_columns_", 0), len(self.labels_)))

    def loss_batch(self, Y_true, Y_pred) -> np.ndarray:
        """Hamming loss of every pair, counted over the batch at once."""
        if len(Y_true) != len(Y_pred):
            raise InputError(f"{len(Y_true)} gold structures but {len(Y_pred)} predicted ones")
        if not len(Y_true):
            return np.zeros(0)
        sizes = np.fromiter((len(y) for y in Y_true), dtype=np.int64, count=len(Y_true))
        pred_sizes = np.fromiter((len(y) for y in Y_pred), dtype=np.int64, count=len(Y_pred))
        if np.any(sizes != pred_sizes):
            k = int(np.flatnonzero(sizes != pred_sizes)[0])
            raise InputError(f"structure {k}: {sizes[k]} gold labels but {pred_sizes[k]} "
                             f"predicted ones")
        wrong = np.concatenate([np.asarray(y) for y in Y_true]) != np.concatenate(
            [np.asarray(y) for y in Y_pred])
        row = np.repeat(np.arange(len(sizes)), sizes)
        return np.bincount(row, weights=wrong, minlength=len(sizes)).astype(np.float64)

    def argmax(self, x: SequenceCorpus, w, y_true=None, *, random_state=None) -> DecodeResult:
        _, trans, start, end = self.split_weights(w)
        unary = self.unary_scores(x, w)
        if y_true is not None:
            unary = hamming_augmented(unary, y_true)
        return viterbi(unary, trans, start, end, random_state=random_state)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        X = as_corpus(X)
        if random_state is not None:
            return super().argmax_batch(X, w, Y, random_state=random_state)
        _, trans, start, end = self.split_weights(w)
        unary = self.unary_scores(X, w)
        if Y is not None:
            unary = hamming_augmented(unary, np.concatenate(Y) if len(Y) else np.zeros(0, np.int64))
        labels, _ = viterbi_batch(unary, X.offsets - X.offsets[0], trans, start, end)
        cuts = X.offsets[1:-1] - X.offsets[0]
        return np.split(labels, cuts)

    def loss(self, y_true, y_pred) -> float:
        return float(np.count_nonzero(np.asarray(y_true) != np.asarray(y_pred)))

    # --- persistence --------------------------------------------------------------------
    def get_state(self):
        """``labels``, ``attributes`` (the kind of sentence the task was fitted on:
        "templates", "dicts", "arrays" or "tokens+arrays"), ``attribute_names`` (the rule
        naming feature-dict attributes: "crfsuite"; a state without it was saved under the
        "legacy" rule) and, for the numeric kinds only (so other model files are as before),
        ``n_columns``; the attribute index as arrays."""
        self.check_fitted()
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
        task.attributes_ = kind
        task.attribute_names_ = naming
        task.n_columns_ = n_columns
        task.labels_ = list(state["labels"])
        task._label_id = {t: i for i, t in enumerate(task.labels_)}
        task.attr_index_ = feature_index_from_arrays(arrays, prefix="attr_")
        task.fitted_ = True
        return task


def _has_real_values(record) -> bool:
    """Whether a record gives some attribute a value other than 0 or 1."""
    if isinstance(record, NumericSentence):  # its zeros are gone already
        return record.has_real_values
    if not isinstance(record, DictSentence) or record.flat_values is None:
        return False
    return record.flat_values.dtype != np.bool_  # from_tokens keeps 0/1 values as bool


def _dict_sentence_ids(rec, index, with_values: bool, ids: list, values, indptr: list,
                       total: int) -> int:
    """Append one :class:`DictSentence`'s attribute ids (and values) to ``featurize``'s
    lists, at once for the sentence: unknown names, and occurrences of value 0, are
    dropped; returns the new total."""
    every = index.lookup_all(rec.names)
    keep = every >= 0
    flat = rec.flat_values
    if flat is not None:
        keep &= flat != 0
    token = np.repeat(np.arange(len(rec)), np.diff(np.r_[0, rec.ends]))
    counts = np.bincount(token[keep], minlength=len(rec))
    ids.append(every[keep])
    if with_values:
        values.append(np.ones(int(keep.sum())) if flat is None
                      else flat[keep].astype(np.float64))
    indptr.extend((total + np.cumsum(counts)).tolist())
    return total + int(counts.sum())


def _fit_by_frequency(index, names) -> None:
    """Give the names seen at least ``index.min_count`` times ids by descending count (ties
    in first-seen order), then freeze ``index``.

    Same names as ``index.fit``, other ids: the weight rows of frequent attributes, which
    nearly every constraint and decode reads, then share a small, cache-resident block of
    the weight vector (the DCD epochs over the working set run ~1.5x faster on UD EWT).
    """
    counts = Counter(names)
    for name, count in sorted(counts.items(), key=lambda kv: -kv[1]):  # stable sort
        if count >= index.min_count:
            index.add(name)
    index.freeze()
