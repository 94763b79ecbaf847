"""First-order sequence labelling: CoNLL-2000 chunking (``chunk``) and UD POS tagging (``pos``).

Parts are (token, label) emissions and (label, label) transitions, plus start and end
transitions.  Each token carries a set of binary attributes (word, lowercase, affixes,
shape, window words and POS); an emission part's feature vector is its attributes
crossed with its label.  So with ``n_attr`` attributes and ``L`` labels the weight
vector is laid out as

    [ emissions (n_attr x L) | transitions (L x L, prev -> next) | start (L) | end (L) ]

and the part scores for Viterbi are a gather over this layout.  Loss is Hamming
(mislabelled tokens); the loss-augmented argmax adds 1 to every wrong label's unary score.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..data.features import feature_index_from_arrays, make_feature_index
from ..data.readers import (
    CONLLU_FIELDS,
    ChunkSentence,
    ConlluSentence,
    excerpt,
    one_prediction_per_item,
    read_conll2000,
    read_conllu,
    read_lines,
    write_conll2000,
    write_conllu,
)
from ..data.sparse import SparseVector
from ..exceptions import ConfigError, InputError, ModelFormatError
from ..inference.result import DecodeResult
from ..inference.viterbi import viterbi, viterbi_batch
from ..limits import AFFIX_LENGTH, NEGATIVES_PER_POSITIVE, WINDOW, check_bounded
from .base import Dataset, StructuredTask, join_corpora, register_task
from .contracts import LABEL_FACTORED, MARGINALIZABLE, MAX_DECODABLE, RANDOM_TIES, SIZED
from .sampling import indirect_supervision_sample
from .validation import check_label_ids
from .sequence_capabilities import LabelFactoredSequence, MarginalizableSequence
from .sequence_raw import (
    ATTRIBUTE_KINDS,
    CASE_SEPARATOR,
    DICTS,
    TEMPLATES,
    DictSentence,
    check_dict_sampling,
    check_records_kind,
    check_writable,
    chunk_record,
    chunk_tag_problem,
    pos_record,
    any_tag,
    pos_tag_problem,
    records_kind,
    sequence_dataset,
)
from .chunk_metrics import chunk_f1, chunk_report, detect_tag_scheme
from .encodings import convert
from .reports import tag_report

__all__ = [
    "SequenceCorpus",
    "as_corpus",
    "concat_corpora",
    "SequenceLabellingTask",
    "ChunkTask",
    "PosTask",
    "TAG_COLUMNS",
    "upos_case_tags",
    "word_shape",
    "token_attributes",
    "check_tagger",
]


def word_shape(word: str) -> str:
    """Collapsed character classes: ``Xx`` for ``Hello``, ``d.d`` for ``3.14``."""
    out = []
    for ch in word:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        else:
            c = ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def token_attributes(
    words: Sequence[str],
    pos: Sequence[str] | None,
    *,
    window: int = 2,
    affix_length: int = 3,
) -> list[list[str]]:
    """Attribute strings of every token.

    Templates: bias; the word and its lowercase; prefixes and suffixes up to
    ``affix_length``; shape; lowercased window words in [-window, window] and the word
    bigrams around the token; and, when ``pos`` is given, window POS tags with POS bigrams
    and trigrams (the CoNLL-2000 baseline templates of CRFsuite's chunking example).
    """
    n = len(words)
    lower = [w.lower() for w in words]
    pad = max(window, 1)  # the word-bigram templates look one token either side
    pad_l = ["<s>"] * pad + lower + ["</s>"] * pad
    if pos is not None:
        pad_p = ["<s>"] * pad + list(pos) + ["</s>"] * pad
    out = []
    for t in range(n):
        w = words[t]
        lw = lower[t]
        c = t + pad  # index into the padded lists
        attrs = ["b", "w=" + w, "sh=" + word_shape(w)]
        for k in range(1, affix_length + 1):
            if len(lw) >= k:
                attrs.append(f"p{k}={lw[:k]}")
                attrs.append(f"s{k}={lw[-k:]}")
        for d in range(-window, window + 1):
            attrs.append(f"l[{d}]={pad_l[c + d]}")
        attrs.append(f"l[-1]|l[0]={pad_l[c - 1]}|{lw}")
        attrs.append(f"l[0]|l[1]={lw}|{pad_l[c + 1]}")
        if pos is not None:
            for d in range(-window, window + 1):
                attrs.append(f"p[{d}]={pad_p[c + d]}")
            for d in range(-window, window):
                attrs.append(f"p[{d}]|p[{d + 1}]={pad_p[c + d]}|{pad_p[c + d + 1]}")
            for d in range(-window, window - 1):
                attrs.append(
                    f"p[{d}..{d + 2}]={pad_p[c + d]}|{pad_p[c + d + 1]}|{pad_p[c + d + 2]}"
                )
        out.append(attrs)
    return out


class SequenceCorpus(Sequence):
    """Featurised sentences as one concatenated CSR of token attributes.

    ``attr_indptr[t]:attr_indptr[t+1]`` are token t's attribute ids in ``attr_ids``;
    ``offsets[i]:offsets[i+1]`` are sentence i's tokens.  Indexing returns a one-sentence
    ``SequenceCorpus`` view, so single-instance and batch code share one representation.
    """

    def __init__(self, attr_indptr: np.ndarray, attr_ids: np.ndarray, offsets: np.ndarray):
        self.attr_indptr = np.ascontiguousarray(attr_indptr, dtype=np.int64)
        self.attr_ids = np.ascontiguousarray(attr_ids, dtype=np.int64)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def n_tokens(self) -> int:
        return int(self.offsets[-1] - self.offsets[0])

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            n = len(self)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"sentence index {i} out of range for {n} sentences")
            t0, t1 = self.offsets[i], self.offsets[i + 1]
            a0, a1 = self.attr_indptr[t0], self.attr_indptr[t1]
            # Learners index single sentences per example per iteration: skip __init__'s
            # conversions, the arrays are int64 and contiguous already.
            out = SequenceCorpus.__new__(SequenceCorpus)
            out.attr_indptr = self.attr_indptr[t0 : t1 + 1] - a0
            out.attr_ids = self.attr_ids[a0:a1]
            out.offsets = np.array([0, t1 - t0], dtype=np.int64)
            return out
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self._contiguous(start, max(start, stop))
            return self.subset(np.arange(start, stop, step))
        if isinstance(i, (list, np.ndarray)):
            return self.subset(np.arange(len(self))[np.asarray(i)] if np.asarray(i).dtype == bool
                               else i)
        raise TypeError(f"sentence index must be an int, a slice, a list or an array, "
                        f"got {type(i).__name__}")

    def _contiguous(self, a: int, b: int) -> "SequenceCorpus":
        """Sentences a..b-1 (0 <= a <= b <= len): views of the arrays, rebased to start at 0."""
        if a == 0 and b == len(self) and self.offsets[0] == 0 and self.attr_indptr[0] == 0:
            return self
        t0, t1 = self.offsets[a], self.offsets[b]
        a0, a1 = self.attr_indptr[t0], self.attr_indptr[t1]
        return SequenceCorpus(self.attr_indptr[t0 : t1 + 1] - a0, self.attr_ids[a0:a1],
                              self.offsets[a : b + 1] - t0)

    def subset(self, indices) -> "SequenceCorpus":
        """The sentences ``indices`` (ints, negatives count from the end), in that order."""
        n = len(self)
        sel = np.asarray(indices if isinstance(indices, (np.ndarray, list, tuple, range))
                         else list(indices))
        if sel.size == 0:
            sel = sel.astype(np.int64)
        if sel.ndim != 1 or sel.dtype.kind not in "iu":
            raise TypeError(f"sentence indices must be a 1-d sequence of ints, got "
                            f"{sel.dtype} values of shape {sel.shape}")
        sel = np.where(sel < 0, sel + n, sel).astype(np.int64, copy=False)
        bad = np.flatnonzero((sel < 0) | (sel >= n))
        if bad.size:
            raise IndexError(f"sentence index {np.asarray(indices)[bad[0]]} out of range for "
                             f"{n} sentences")
        return SequenceCorpus(*_gather_sentences(self.attr_indptr, self.attr_ids, self.offsets,
                                                 sel))


@njit(cache=True)
def _gather_sentences(attr_indptr, attr_ids, offsets, sel):
    """CSR arrays (attr_indptr, attr_ids, offsets) of sentences ``sel`` (in range), copied
    into one corpus that starts at 0."""
    n_tok = 0
    n_attr = 0
    for s in sel:
        n_tok += offsets[s + 1] - offsets[s]
        n_attr += attr_indptr[offsets[s + 1]] - attr_indptr[offsets[s]]
    new_off = np.empty(sel.shape[0] + 1, np.int64)
    new_ptr = np.empty(n_tok + 1, np.int64)
    new_ids = np.empty(n_attr, np.int64)
    new_off[0] = 0
    new_ptr[0] = 0
    t = 0
    a = 0
    for k in range(sel.shape[0]):
        s = sel[k]
        for u in range(offsets[s], offsets[s + 1]):
            for p in range(attr_indptr[u], attr_indptr[u + 1]):
                new_ids[a] = attr_ids[p]
                a += 1
            t += 1
            new_ptr[t] = a
        new_off[k + 1] = t
    return new_ptr, new_ids, new_off


def as_corpus(X) -> SequenceCorpus:
    """``X`` as one ``SequenceCorpus``: a corpus as it is, a list of corpora joined."""
    return join_corpora(X, SequenceCorpus, concat_corpora)


def concat_corpora(parts: Sequence[SequenceCorpus]) -> SequenceCorpus:
    if not parts:
        return SequenceCorpus(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64))
    indptrs, offsets = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)]
    a_base = t_base = 0
    for p in parts:
        indptrs.append(p.attr_indptr[1:] - p.attr_indptr[0] + a_base)
        offsets.append(p.offsets[1:] - p.offsets[0] + t_base)
        a_base += int(p.attr_indptr[-1] - p.attr_indptr[0])
        t_base += p.n_tokens
    return SequenceCorpus(
        np.concatenate(indptrs),
        np.concatenate([p.attr_ids[p.attr_indptr[0] : p.attr_indptr[-1]] for p in parts]),
        np.concatenate(offsets),
    )


@njit(cache=True)
def _emission_scores(attr_indptr, attr_ids, emission, t0, t1):
    """Unary scores of tokens t0..t1-1: sum of their attributes' label-weight rows."""
    n_labels = emission.shape[1]
    out = np.zeros((t1 - t0, n_labels))
    for t in range(t0, t1):
        for p in range(attr_indptr[t], attr_indptr[t + 1]):
            row = attr_ids[p]
            for y in range(n_labels):
                out[t - t0, y] += emission[row, y]
    return out


@njit(cache=True)
def _joint_feature_difference(attr_indptr, attr_ids, t0, t1, y_a, y_b, n_attr, n_labels):
    """Phi(y_a) - Phi(y_b) of one sentence (tokens t0..t1-1), uncoalesced.

    Emissions of tokens where the labels agree cancel and are skipped.
    """
    T = t1 - t0
    n_em = 0
    for t in range(T):
        if y_a[t] != y_b[t]:
            n_em += attr_indptr[t0 + t + 1] - attr_indptr[t0 + t]
    size = 2 * n_em + 2 * (T - 1 if T > 0 else 0) + 4
    idx = np.empty(size, np.int64)
    val = np.empty(size, np.float64)
    k = 0
    trans_base = n_attr * n_labels
    start_base = trans_base + n_labels * n_labels
    end_base = start_base + n_labels
    for t in range(T):
        if y_a[t] != y_b[t]:
            for p in range(attr_indptr[t0 + t], attr_indptr[t0 + t + 1]):
                a = attr_ids[p] * n_labels
                if y_a[t] >= 0:
                    idx[k] = a + y_a[t]
                    val[k] = 1.0
                    k += 1
                if y_b[t] >= 0:
                    idx[k] = a + y_b[t]
                    val[k] = -1.0
                    k += 1
    if T > 0:
        for t in range(1, T):
            if y_a[t - 1] >= 0 and y_a[t] >= 0:
                idx[k] = trans_base + y_a[t - 1] * n_labels + y_a[t]
                val[k] = 1.0
                k += 1
            if y_b[t - 1] >= 0 and y_b[t] >= 0:
                idx[k] = trans_base + y_b[t - 1] * n_labels + y_b[t]
                val[k] = -1.0
                k += 1
        for lab, sign in ((y_a[0], 1.0), (y_b[0], -1.0)):
            if lab >= 0:
                idx[k] = start_base + lab
                val[k] = sign
                k += 1
        for lab, sign in ((y_a[T - 1], 1.0), (y_b[T - 1], -1.0)):
            if lab >= 0:
                idx[k] = end_base + lab
                val[k] = sign
                k += 1
    return idx[:k], val[:k]


@njit(cache=True)
def _coalesced(idx, val):
    """``coalesce_arrays`` in one compiled call: sorted unique indices, the sums of their
    values, zero sums dropped (the per-example numpy version dominated training time)."""
    order = np.argsort(idx, kind="mergesort")
    out_i = np.empty(idx.shape[0], np.int64)
    out_v = np.empty(idx.shape[0], np.float64)
    m = 0
    q = 0
    while q < order.shape[0]:
        j = idx[order[q]]
        v = 0.0
        while q < order.shape[0] and idx[order[q]] == j:
            v += val[order[q]]
            q += 1
        if v != 0.0:
            out_i[m] = j
            out_v[m] = v
            m += 1
    return out_i[:m], out_v[:m]


@njit(cache=True)
def _coalesced_difference(attr_indptr, attr_ids, t0, t1, y_a, y_b, n_attr, n_labels):
    """Coalesced Phi(y_a) - Phi(y_b) of one sentence, in one compiled call."""
    idx, val = _joint_feature_difference(attr_indptr, attr_ids, t0, t1, y_a, y_b, n_attr,
                                         n_labels)
    return _coalesced(idx, val)


@njit(cache=True)
def _first_outside(y, lo, hi):
    """Position of the first entry of ``y`` outside ``lo..hi-1``, or -1."""
    for k in range(y.shape[0]):
        if y[k] < lo or y[k] >= hi:
            return k
    return -1


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
        task's built-in templates (:meth:`template_attributes`)."""
        if isinstance(record, DictSentence):
            return [list(a) for a in record.attributes]
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
        params = {"min_count": self.min_count} if self.feature_index == "index" else {"n_bits": self.hash_bits}
        index = make_feature_index(self.feature_index, **params)
        if self.feature_index == "index":
            _fit_by_frequency(index, (attr for rec in records
                                      for tok in self.attribute_strings(rec) for attr in tok))
        self.attr_index_ = index
        self.attributes_ = kind
        self.fitted_ = True
        return self

    @property
    def n_labels(self) -> int:
        self.check_fitted()
        return len(self.labels_)

    @property
    def n_attributes(self) -> int:
        self.check_fitted()
        return len(self.attr_index_)

    @property
    def n_features(self) -> int:
        L = self.n_labels
        return self.n_attributes * L + L * L + 2 * L

    def featurize(self, dataset: Dataset) -> SequenceCorpus:
        """The sentences' attribute ids as one ``SequenceCorpus``; refused (InputError) for
        sentences of the other kind than the task was fitted on (``attributes_``)."""
        self.check_fitted()
        check_records_kind(dataset.records, getattr(self, "attributes_", TEMPLATES), self.name)
        indptr = [0]
        ids = []
        offsets = [0]
        lookup = self.attr_index_.lookup_many
        total = 0
        for rec in dataset.records:
            for tok in self.attribute_strings(rec):
                a = lookup(tok)
                ids.append(a)
                total += a.shape[0]
                indptr.append(total)
            offsets.append(len(indptr) - 1)
        attr_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        return SequenceCorpus(np.asarray(indptr), attr_ids, np.asarray(offsets))

    def encode_targets(self, targets) -> list[np.ndarray]:
        """Label strings to ids; a label never seen in training becomes -1 (always wrong)."""
        self.check_fitted()
        get = self._label_id.get
        return [np.fromiter((get(t, -1) for t in tags), np.int64, len(tags)) for tags in targets]

    def decode_targets(self, structures) -> list[list[str]]:
        labels = self.labels_
        return [[labels[i] for i in y] for y in structures]

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
        return _emission_scores(X.attr_indptr, X.attr_ids, emission, X.offsets[0], X.offsets[-1])

    def _label_ids(self, x: SequenceCorpus, y, what: str) -> np.ndarray:
        """``y`` checked before a kernel reads it: integer ids in -1..L-1, one per token."""
        n = int(x.offsets[-1] - x.offsets[0])
        # Fast path for what learners pass (a decoder's int64 labels), called per example.
        labels = getattr(self, "labels_", None)
        if (labels is not None and type(y) is np.ndarray and y.dtype == np.int64
                and y.shape == (n,) and _first_outside(y, -1, len(labels)) < 0):
            return y
        y = check_label_ids(y, self.n_labels, what=what)
        if y.shape != (n,):
            raise InputError(f"{what} has shape {y.shape}; expected one label id per token, "
                             f"({n},)")
        return y

    def joint_feature(self, x: SequenceCorpus, y) -> SparseVector:
        y = self._label_ids(x, y, "structure")
        none = np.full_like(y, -1)
        idx, val = _joint_feature_difference(
            x.attr_indptr, x.attr_ids, x.offsets[0], x.offsets[-1], y, none,
            self.n_attributes, self.n_labels,
        )
        return SparseVector(*_coalesced(idx, val))

    def joint_feature_difference(self, x: SequenceCorpus, y_a, y_b) -> SparseVector:
        y_a = self._label_ids(x, y_a, "structure y_a")
        y_b = self._label_ids(x, y_b, "structure y_b")
        return SparseVector(*_coalesced_difference(
            x.attr_indptr, x.attr_ids, x.offsets[0], x.offsets[-1], y_a, y_b,
            len(self.attr_index_), len(self.labels_)))

    def argmax(self, x: SequenceCorpus, w, y_true=None, *, random_state=None) -> DecodeResult:
        _, trans, start, end = self.split_weights(w)
        unary = self.unary_scores(x, w)
        if y_true is not None:
            unary = _hamming_augmented(unary, y_true)
        return viterbi(unary, trans, start, end, random_state=random_state)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        X = as_corpus(X)
        if random_state is not None:
            return super().argmax_batch(X, w, Y, random_state=random_state)
        _, trans, start, end = self.split_weights(w)
        unary = self.unary_scores(X, w)
        if Y is not None:
            unary = _hamming_augmented(unary, np.concatenate(Y) if len(Y) else np.zeros(0, np.int64))
        labels, _ = viterbi_batch(unary, X.offsets - X.offsets[0], trans, start, end)
        cuts = X.offsets[1:-1] - X.offsets[0]
        return np.split(labels, cuts)

    def loss(self, y_true, y_pred) -> float:
        return float(np.count_nonzero(np.asarray(y_true) != np.asarray(y_pred)))

    # --- persistence --------------------------------------------------------------------
    def get_state(self):
        """``labels`` and ``attributes`` (the kind of sentence the task was fitted on:
        "templates" or "dicts"), with the attribute index as arrays."""
        self.check_fitted()
        return ({"labels": list(self.labels_),
                 "attributes": getattr(self, "attributes_", TEMPLATES)},
                self.attr_index_.to_arrays(prefix="attr_"))

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        kind = state.get("attributes", TEMPLATES)  # absent in models saved before dicts
        if kind not in ATTRIBUTE_KINDS:
            raise ModelFormatError(f"unknown attribute kind {kind!r} in the model file; "
                                   f"expected one of {', '.join(ATTRIBUTE_KINDS)}")
        task.attributes_ = kind
        task.labels_ = list(state["labels"])
        task._label_id = {t: i for i, t in enumerate(task.labels_)}
        task.attr_index_ = feature_index_from_arrays(arrays, prefix="attr_")
        task.fitted_ = True
        return task


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


@njit(cache=True)
def _hamming_augmented_kernel(unary, y_true):
    out = unary + 1.0
    for t in range(unary.shape[0]):
        if y_true[t] >= 0:
            out[t, y_true[t]] -= 1.0
    return out


def _hamming_augmented(unary, y_true):
    y_true = check_label_ids(y_true, unary.shape[1], what="gold structure")
    if y_true.shape != (unary.shape[0],):
        raise ValueError(
            f"gold structure has {y_true.shape[0]} tokens but the sentence has {unary.shape[0]}"
        )
    return _hamming_augmented_kernel(unary, y_true)


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
    format, ``tasks.sequence_raw``); ``decode_predictions`` gives tag lists like ``y``.

    Parameters
    ----------
    input_scheme : {None, "iob1", "iob2"}
        Evaluation time only: the chunk tag scheme of the file ``evaluate`` or ``predict``
        reads; its tags are converted to the model's scheme as they are read.  None: the
        file is taken as it is (``evaluate`` checks that its scheme is the model's).
    Other parameters: those of :class:`SequenceLabellingTask`.
    """

    name = "chunk"
    uses_pos_input = True
    score_metric = "f1"
    evaluation_params = frozenset({"input_scheme"})

    def __init__(self, min_count=1, feature_index="index", hash_bits=20, window=2, affix_length=3,
                 n_structured_tokens=None, n_binary=0, negatives_per_positive=1, sample_seed=0,
                 input_scheme=None):
        super().__init__(min_count, feature_index, hash_bits, window, affix_length,
                         n_structured_tokens, n_binary, negatives_per_positive, sample_seed)
        self.input_scheme = input_scheme

    @staticmethod
    def _words_pos(record):
        return record.words, record.pos

    def _check_input_scheme(self) -> None:
        if self.input_scheme is not None and self.input_scheme not in INPUT_SCHEMES:
            raise ConfigError(f"input_scheme must be one of {', '.join(INPUT_SCHEMES)} or None, "
                              f"got {self.input_scheme!r}")

    def _converts_input(self) -> bool:
        """Whether tags of evaluation data are converted (``input_scheme`` set on a fitted
        task whose scheme differs)."""
        model_scheme = getattr(self, "tag_scheme_", None)
        return (self.input_scheme is not None and model_scheme is not None
                and self.input_scheme != model_scheme)

    def _to_model_scheme(self, tags) -> tuple:
        return tuple(convert(tags, self.input_scheme, self.tag_scheme_))

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of
        ``(word, POS)`` pairs (or of per-token feature dicts); ``y`` a list of IOB chunk-tag
        lists, one tag per token, or None (targets None: unlabelled input for ``predict``).

        The records are the ``ChunkSentence`` records ``read`` builds (line 0), checked as
        the reader checks a file; with ``input_scheme`` set on a fitted task, tags are
        converted to the model's scheme as ``read`` converts test files.  A bad entry is an
        ``InputError`` naming it (``X[3][5]``, ``y[2]``).
        """
        self._check_input_scheme()
        data = sequence_dataset(X, y, token="(word, POS) pair", build=chunk_record,
                                check_tag=chunk_tag_problem)
        if y is None or not self._converts_input():
            return data
        targets = [self._to_model_scheme(t) for t in data.targets]
        records = [ChunkSentence(r.words, r.pos, t, r.line) if isinstance(r, ChunkSentence)
                   else r for r, t in zip(data.records, targets)]
        return Dataset(records, targets)

    def read(self, path, *, split: str = "train") -> Dataset:
        """``word POS chunk-tag`` lines (targets: the tags), or for ``split="test"``
        unlabelled ``word POS`` lines (targets None).  With ``input_scheme`` set and a
        fitted task, test tags are converted to the model's scheme."""
        self._check_input_scheme()
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
        if split != "train" and self._converts_input():
            sentences = [ChunkSentence(s.words, s.pos, self._to_model_scheme(s.tags), s.line)
                         for s in sentences]
        return Dataset(sentences, [s.tags for s in sentences], str(path))

    def fit(self, dataset: Dataset) -> "ChunkTask":
        """As :meth:`SequenceLabellingTask.fit`, and record the training file's tag scheme."""
        super().fit(dataset)
        self.tag_scheme_ = detect_tag_scheme(t for t in dataset.targets if t is not None)
        return self

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """conlleval scores; a file whose tag scheme is not the model's is refused."""
        model_scheme = getattr(self, "tag_scheme_", None)
        if model_scheme is not None and all(t is not None for t in dataset.targets):
            scheme = detect_tag_scheme(dataset.targets)
            if scheme is not None and scheme != model_scheme:
                fix = (f"pass --option input_scheme={scheme} to convert its tags to "
                       f"{model_scheme.upper()} as they are read"
                       if scheme in INPUT_SCHEMES and model_scheme in INPUT_SCHEMES else
                       "convert it with latentstruct.tasks.encodings.convert")
                raise InputError(
                    f"the file uses {scheme.upper()} chunk tags but the model was trained on "
                    f"{model_scheme.upper()}, so its token accuracy would be meaningless; {fix}",
                    dataset.path)
        return super().evaluate_model(dataset, predict, decision_function)

    def report(self, dataset: Dataset, predictions) -> dict:
        """conlleval's counts and per-chunk-type scores (``chunk_report``)."""
        return chunk_report(dataset.targets, self.decode_targets(predictions))

    def get_state(self):
        state, arrays = super().get_state()
        return {**state, "tag_scheme": getattr(self, "tag_scheme_", None)}, arrays

    @classmethod
    def from_state(cls, params, state, arrays):
        task = super().from_state(params, state, arrays)
        scheme = state.get("tag_scheme")  # absent in models saved before it was recorded
        if scheme is not None and scheme not in INPUT_SCHEMES + ("ioe1", "ioe2", "oc"):
            raise ModelFormatError(f"unknown chunk tag scheme {scheme!r} in the model file")
        task.tag_scheme_ = scheme
        return task

    def evaluate(self, targets, predictions) -> dict:
        gold = self.decode_targets_safe(targets)
        pred = self.decode_targets(predictions)
        scores = chunk_f1(gold, pred)
        return {"f1": scores["f1"], "accuracy": scores["accuracy"],
                "precision": scores["precision"], "recall": scores["recall"]}

    def decode_targets_safe(self, targets):
        # Gold labels unseen in training are -1; they can only be counted as "O"-less misses.
        labels = self.labels_
        return [[labels[i] if i >= 0 else "<unk>" for i in y] for y in targets]

    def write_predictions(self, path, dataset, predictions) -> None:
        check_writable(dataset.records, self.name)
        write_conll2000(path, dataset.records, self.decode_targets(predictions))


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
    format, ``tasks.sequence_raw``); ``decode_predictions`` gives tag lists like ``y``.
    """

    name = "pos"
    uses_pos_input = False
    # J-LIS from the command line runs until its objective converges.  Its own max_iter=20
    # stopped the guide's job (200 labelled tokens, 1,000 binary sentences, C2=1) with a
    # ConvergenceWarning while Q still fell by 4e-4 a step; it converges at iteration 36
    # (dev accuracy 0.6429 against 0.6423 at 20; docs/performance.md).  The Python class
    # keeps 20, so the J-LIS experiments are unchanged.
    learner_defaults = {"jlis": {"max_iter": 50}}

    def __init__(self, min_count=1, feature_index="index", hash_bits=20, window=2, affix_length=4,
                 n_structured_tokens=None, n_binary=0, negatives_per_positive=1, sample_seed=0,
                 tag_column="upos"):
        super().__init__(min_count, feature_index, hash_bits, window, affix_length,
                         n_structured_tokens, n_binary, negatives_per_positive, sample_seed)
        self.tag_column = tag_column

    def _validate_params(self) -> None:
        super()._validate_params()
        if not isinstance(self.tag_column, str) or self.tag_column not in TAG_COLUMNS:
            raise ConfigError(
                f"tag_column must be one of {', '.join(repr(c) for c in TAG_COLUMNS)}, got "
                f"{self.tag_column!r} (upos: universal tags; xpos: the treebank's own tags; "
                f"upos+case: UPOS joined with the Case feature)")

    @staticmethod
    def _words_pos(record):
        return record.words, None

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from Python lists: ``X`` a list of sentences, each a list of words (or
        of per-token feature dicts); ``y`` a list of tag lists in ``tag_column``'s form
        (UPOS tags are checked as the CoNLL-U reader checks them; with feature dicts any tag
        set is taken: such a model never writes a CoNLL-U column), or None (targets None).

        The records are the ``ConlluSentence`` records ``read`` builds from plain text (ID
        and FORM, every other field ``_``), so ``write_predictions`` writes CoNLL-U.  A bad
        entry is an ``InputError`` naming it (``X[3][5]``, ``y[2]``).
        """
        self._validate_params()
        return sequence_dataset(X, y, token="word", build=pos_record,
                                check_tag=pos_tag_problem(self.tag_column),
                                check_dict_tag=any_tag)

    def read(self, path, *, split: str = "train") -> Dataset:
        """Read a CoNLL-U file with the tags of ``tag_column`` as targets.

        The parameters are checked before the file is opened.  With ``tag_column="xpos"``, a
        file where only some words have an XPOS is an error (at the first word without one);
        a file with no XPOS at all is an error for training, and is read as unlabelled input
        otherwise (``predict`` tags it; ``evaluate`` refuses it).  CoNLL-U whose tags are
        ``_`` is unlabelled input too.

        For ``split="test"`` the file may also be plain text, one sentence per line of
        whitespace-separated words (told apart from CoNLL-U by its first line that is not a
        ``#`` comment: CoNLL-U has 10 tab-separated fields); it is read as CoNLL-U with
        every field but ID and FORM ``_``, so ``predict`` writes CoNLL-U.
        """
        self._validate_params()
        if not _looks_like_conllu(path):
            if split == "train":
                raise InputError(
                    "the file is not CoNLL-U (its first line is not 10 tab-separated fields), "
                    "so it has no tags to learn; training needs a CoNLL-U file",
                    os.fspath(path), 1)
            sentences = read_plain_sentences(path)
            return Dataset(sentences, [s.upos for s in sentences], str(path))
        sentences = read_conllu(path)
        if self.tag_column == "upos":
            tags = [s.upos for s in sentences]
        elif self.tag_column == "xpos":
            _check_xpos(sentences, path, split)
            tags = [s.xpos for s in sentences]
        else:
            tags = [upos_case_tags(s) for s in sentences]
        return Dataset(sentences, tags, str(path))

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

    def evaluate(self, targets, predictions) -> dict:
        n = correct = 0
        for y, p in zip(targets, predictions, strict=True):
            n += len(y)
            correct += int(np.count_nonzero(np.asarray(y) == np.asarray(p)))
        return {"accuracy": correct / n if n else 0.0}

    def write_predictions(self, path, dataset, predictions) -> None:
        """Write ``dataset``'s sentences with the predicted tags in the column they were
        read from (see ``tag_column``); everything else is written as read."""
        check_writable(dataset.records, self.name)
        tags = self.decode_targets(predictions)
        if self.tag_column == "xpos":
            write_conllu(path, dataset.records, tags, column="XPOS")
            return
        if self.tag_column == "upos":
            write_conllu(path, dataset.records, tags)
            return
        records = list(dataset.records)
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

    @classmethod
    def from_state(cls, params, state, arrays):
        task = super().from_state(params, state, arrays)
        task._validate_params()  # a model file written elsewhere may hold any value
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
    pos_task.check_fitted()
    if getattr(pos_task, "attributes_", TEMPLATES) == DICTS:
        raise ConfigError("the tagger was trained on per-token feature dicts (sklearn-crfsuite "
                          "format), which a task cannot compute from words; train the tagger "
                          "on sentences of words")
    if getattr(pos_task, "tag_column", "upos") != "upos":
        raise ConfigError(f"the tagger must predict UPOS; this pos model was trained with "
                          f"tag_column={pos_task.tag_column!r}. Train one with tag_column=upos")
    coef = np.asarray(coef, dtype=np.float64)
    if coef.shape != (pos_task.n_features,):
        raise ConfigError(
            f"tagger weights must have shape ({pos_task.n_features},), got {coef.shape}")
    return coef
