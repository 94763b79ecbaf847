"""Grammaticality: real sentences against trigram-LM samples, over latent chunkings
(Clifton, Whitney & Sarkar 2013, §2-§4).

A sentence is grammatical (+1, a real sentence) or not (-1, a pseudo-negative sampled from a
smoothed trigram LM, after Okanohara & Tsujii 2007).  The decision is
f(x) = max_h w . Phi(x, h) where h is a shallow parse (a chunking) of x read through one
or several *views* -- the chunk encodings iob1, iob2, ioe1, ioe2 and oc (O+C) of
``tasks.encodings``.

Features (§3.4).  Every token carries the 1-, 2- and 3-grams of lowercased words and of POS
tags that contain it (13 attributes, with a bias): ``w=`` the word, ``w-1,0=`` / ``w0,1=``
the bigrams, ``w-2..0=`` / ``w-1..1=`` / ``w0..2=`` the trigrams, the same for POS (``p``).
Each view v has its own tag set (``encoding_labels`` over the chunk types, 23 tags for an
IOB/IOE view and 45 for O+C with the 11 CoNLL-2000 types) and its own first-order
features: every attribute paired with the token's tag, plus tag bigrams and start / end
tags -- the layout of ``SequenceLabellingTask``, one block per view::

    w = [ view_1: emissions (A x L_1) | transitions (L_1 x L_1) | start | end ] ... [ bias ]

The last weight is a bias shared by every structure.  Views never share weights (the "O" of
iob2 and the "O" of oc are different features).

Structures.  h is an int array of shape (n_views, n_tokens): the tag ids of one chunking per
view.  With ``constrained=True`` (default) every view's sequence must be well-formed
(``encodings.is_well_formed``): ill-formed transitions, first and last tags score -inf.

* ``combine="concat"``: Phi(x, h) is the views' feature vectors concatenated; the views are
  independent given w, so the argmax decodes each view by its own Viterbi (exact).
* ``combine="vote"``: each view is decoded by its own Viterbi, the per-token majority vote is
  taken in O+C space and converted back to every view (``encodings.majority_vote``), and h is
  the voted chunking written in each view; the score is w . Phi(x, h_voted).  This is
  decode-then-vote, as in the paper, not an argmax of the score.

POS tags come from the project's own ``pos`` tagger (``PosTask``), attached with
``set_tagger`` before the sentences are read and fitted.  The task never loads or trains a
tagger itself: :func:`latentstruct.pipelines.attach_tagger` (called by ``latentstruct
train``) loads the ``pos`` model file given as ``tagger_model`` (``latentstruct train pos
--learner ssvm``) or, without one, trains the default tagger on ``tagger_sentences``
sentences of UD EWT (:func:`latentstruct.pipelines.train_pos_tagger`).  The tagger's weights
and feature index are stored in this task's model file.  Records that already carry POS
tags (``Sentence.pos``) are used as they are.

Data.  Positives are sentences, one per line (``data.lm.read_sentences``: tokenized, empty
lines are errors).  A deterministic share ``heldout_fraction`` of all sentences is held out
for evaluation: a sentence is held out when a hash of its tokens falls below that fraction,
so the split depends only on the sentence.  The trigram LM (``data.lm.TrigramLM``,
interpolated Kneser-Ney) is fitted on the non-held-out sentences of ``lm_corpus`` the first
time negatives are needed, and stored in the model file.  Training (``read(path, "train")``)
uses the non-held-out sentences of the file (optionally ``n_train`` of them, a seeded
sample) and ``round(negative_ratio * n)`` LM samples (seed ``seed``); it also records a
digest of the file's sentences (BLAKE2b), stored in the model file.  Evaluation
(``read(path, "test")``) takes its positives according to ``test_sentences``:

* ``"auto"`` (default): the held-out sentences when the file's sentences have the training
  file's digest (evaluating on the training file), otherwise every sentence of the file (a
  file of new sentences).  A task that never read a training file (or a model saved before
  the digest was recorded) falls back to the held-out sentences;
* ``"heldout"``: always the held-out sentences of the file;
* ``"all"``: every sentence of the file;

at most ``n_test`` of them (the first ones), and ``n_negative_sets`` sets of as many LM
samples, set k drawn with seed ``test_seed + k``; the reported accuracy is the mean over the
sets of the accuracy on the positives plus that set (§4).  LM samples are drawn conditioned
on 4 <= length <= 60 tokens, the length filter of the Reuters sentence file, so length alone
does not separate the classes.

Initialisation from a supervised chunker (§4).  ``heuristic_weights()`` -- used by
``LatentPA(init="heuristic")`` (which scales them as §4 says), by ``TwoStage`` and by the
two-stage initialisation of ``LCLR`` / ``LCLRVariant`` -- are the weights of a supervised
chunker in this task's feature space, one chunker per view in that view's encoding.  The
task does not train it (``fit`` only indexes features); it offers the supervised problem:
``chunking_task()`` is a max-decodable view of the task (``ChunkingView``: structures are
the chunk tags of every view, Phi is ``latent_feature`` without the bias, argmax is the
per-view constrained Viterbi) and ``chunk_training_data()`` its examples, the first
``chunker_sentences`` sentences of CoNLL-2000 (``chunker_corpus``) tagged by the task's POS
tagger.  :func:`latentstruct.pipelines.train_chunker` fits an averaged structured
perceptron (``learners.StructuredPerceptron``, ``chunker_epochs`` epochs, seed ``seed``) on
them and attaches its weights with ``set_chunker_weights``.  The parameter ``chunker`` says
when ``latentstruct train`` (:func:`latentstruct.pipelines.attach_chunker`) does that:
``"auto"`` (default) only when the learner needs heuristic weights (LCLR / LCLR-variant
with ``init="two-stage"``, TwoStage, LatentPA with ``init="heuristic"``), ``"perceptron"``
always, ``None`` never.  The chunker's weights are not stored in the model file (TwoStage
stores the heuristic weights it used).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data.atomic import atomic_write
from ..data.features import FeatureIndex, feature_index_from_arrays
from ..data.lm import TrigramLM, read_sentences
from ..data.paths import dataset_path
from ..data.progress import track
from ..data.readers import read_conll2000
from ..data.sparse import SparseVector, coalesce_arrays
from ..exceptions import ConfigError, InputError, ModelFormatError, NotFittedError
from ..inference.result import EXACT, INFEASIBLE, DecodeResult
from ..inference.viterbi import viterbi_batch
from ..limits import CHUNKER_EPOCHS, NEGATIVE_RATIO, NEGATIVE_SETS, check_bounded
from .base import Dataset, LatentBinaryTask, StructuredTask, register_task
from .validation import check_binary_labels
from .raw_pairs import binary_predictions
from .raw_texts import sentence_dataset
from .contracts import HEURISTIC, LATENT_BINARY, MAX_DECODABLE, SIZED
from .encodings import (
    ENCODINGS,
    convert,
    encoding_labels,
    get_encoding,
    majority_vote,
)
from .sequence import (
    PosTask,
    check_tagger,
    SequenceCorpus,
    _emission_scores,
    _hamming_augmented,
    _joint_feature_difference,
    as_corpus,
)

__all__ = [
    "GrammaticalityTask",
    "ChunkingView",
    "Sentence",
    "CONLL2000_CHUNK_TYPES",
    "ngram_attributes",
    "view_constraints",
    "is_heldout",
    "sentences_digest",
]

#: the 11 chunk types of CoNLL-2000 (23 tags per IOB/IOE view)
CONLL2000_CHUNK_TYPES = ("ADJP", "ADVP", "CONJP", "INTJ", "LST", "NP", "PP", "PRT", "SBAR",
                         "UCP", "VP")
#: lengths of LM samples used as negatives (the Reuters sentence file keeps 4..60 tokens)
NEGATIVE_MIN_LENGTH, NEGATIVE_MAX_LENGTH = 4, 60
_COMBINE = ("concat", "vote")
_TEST_SENTENCES = ("auto", "heldout", "all")
_CHUNKERS = (None, "perceptron", "auto")
_TAG_BATCH = 2000


@dataclass(frozen=True)
class Sentence:
    """One example: its tokens, optionally POS tags, and (for test negatives) the index of
    the sampled negative set it belongs to (-1 otherwise)."""

    words: tuple
    pos: tuple | None = None
    negative_set: int = -1

    def __post_init__(self):
        if not isinstance(self.words, tuple):
            object.__setattr__(self, "words", tuple(self.words))
        if self.pos is not None and not isinstance(self.pos, tuple):
            object.__setattr__(self, "pos", tuple(self.pos))
        if not self.words:
            raise InputError("a sentence needs at least one token, got an empty sentence")
        if self.pos is not None and len(self.pos) != len(self.words):
            raise InputError(
                f"a sentence has {len(self.words)} words but {len(self.pos)} POS tags"
            )


def is_heldout(tokens: Sequence[str], fraction: float) -> bool:
    """Whether a sentence belongs to the held-out share ``fraction``: a BLAKE2b hash of its
    space-joined tokens, read as a number in [0, 1), falls below ``fraction``."""
    digest = hashlib.blake2b(" ".join(tokens).encode("utf-8", "surrogatepass"),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64 < fraction


def sentences_digest(sentences: Sequence[Sequence[str]]) -> str:
    """BLAKE2b (hex) of tokenized sentences: each sentence's tokens joined by spaces, the
    sentences joined by newlines.  Two files with the same sentences share the digest
    (whatever their line endings or spacing)."""
    h = hashlib.blake2b(digest_size=16)
    for s in sentences:
        h.update(" ".join(s).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest()


def ngram_attributes(words: Sequence[str], pos: Sequence[str]) -> list[list[str]]:
    """Per token: a bias and the 1-, 2-, 3-grams of lowercased words and of POS tags that
    contain the token (13 attribute strings per token)."""
    n = len(words)
    lw = ["<s>", "<s>"] + [w.lower() for w in words] + ["</s>", "</s>"]
    lp = ["<s>", "<s>"] + list(pos) + ["</s>", "</s>"]
    out = []
    for t in range(n):
        c = t + 2
        attrs = ["b"]
        for name, s in (("w", lw), ("p", lp)):
            attrs.append(f"{name}={s[c]}")
            attrs.append(f"{name}-1,0={s[c - 1]}|{s[c]}")
            attrs.append(f"{name}0,1={s[c]}|{s[c + 1]}")
            attrs.append(f"{name}-2..0={s[c - 2]}|{s[c - 1]}|{s[c]}")
            attrs.append(f"{name}-1..1={s[c - 1]}|{s[c]}|{s[c + 1]}")
            attrs.append(f"{name}0..2={s[c]}|{s[c + 1]}|{s[c + 2]}")
        out.append(attrs)
    return out


def view_constraints(labels: Sequence[str], encoding: str):
    """Additive (0 / -inf) masks ``(transition (L, L), start (L,), end (L,))`` under which
    exactly the well-formed tag sequences of ``encoding`` (``encodings.is_well_formed``)
    have a finite score.  Every encoding's well-formedness is first order:

    * iob1: B-X only right after I-X or B-X (so never first);
    * iob2: I-X only right after B-X or I-X (so never first);
    * ioe1: E-X only right before I-X or E-X (so never last);
    * ioe2: I-X only right before I-X or E-X (so never last);
    * oc:   B-X and I-X only right before I-X or E-X; I-X and E-X only right after B-X or
      I-X (so a sequence starts with O, B or S and ends with O, E or S).
    """
    get_encoding(encoding)
    L = len(labels)
    parsed = [("O", None) if t == "O" else (t[0], t[2:]) for t in labels]
    trans = np.zeros((L, L))
    start = np.zeros(L)
    end = np.zeros(L)
    inside = {"B", "I"}  # oc tags that must be continued
    for b, (pb, tb) in enumerate(parsed):
        for a, (pa, ta) in enumerate(parsed):
            same = ta is not None and ta == tb
            ok = True
            if encoding == "iob1" and pb == "B":
                ok = same and pa in ("I", "B")
            elif encoding == "iob2" and pb == "I":
                ok = same and pa in ("B", "I")
            if encoding == "ioe1" and pa == "E":
                ok = ok and same and pb in ("I", "E")
            elif encoding == "ioe2" and pa == "I":
                ok = ok and same and pb in ("I", "E")
            if encoding == "oc":
                if pa in inside:
                    ok = same and pb in ("I", "E")
                if pb in ("I", "E"):
                    ok = ok and same and pa in inside
            if not ok:
                trans[a, b] = -np.inf
        if (encoding in ("iob1", "iob2") and pb == ("B" if encoding == "iob1" else "I")) or (
                encoding == "oc" and pb in ("I", "E")):
            start[b] = -np.inf
        if (encoding in ("ioe1", "ioe2") and pb == ("E" if encoding == "ioe1" else "I")) or (
                encoding == "oc" and pb in inside):
            end[b] = -np.inf
    return trans, start, end


@dataclass(frozen=True)
class _View:
    name: str
    labels: tuple
    offset: int  # first weight of the view's block
    trans_mask: np.ndarray
    start_mask: np.ndarray
    end_mask: np.ndarray

    @property
    def n_labels(self) -> int:
        return len(self.labels)


@register_task
class GrammaticalityTask(LatentBinaryTask):
    """Real sentences (+1) against trigram-LM samples (-1) over latent chunkings.

    See the module docstring for the model, the data and the splits.

    Parameters
    ----------
    views : str, default "iob2"
        One chunk encoding or a comma-separated list of distinct ones
        ("iob1,iob2,ioe1,ioe2,oc").
    combine : {"concat", "vote"}, default "concat"
        Score the views' concatenated features, or decode each view on its own and take the
        per-token majority vote (the paper's decode-then-vote; see the module docstring).
    constrained : bool, default True
        Decode only well-formed tag sequences in every view.
    chunk_types : str, default "conll2000"
        The chunk types of the tag sets: the 11 CoNLL-2000 types, or a comma list ("NP,VP").
    min_count : int, default 2
        Keep attributes seen at least this often in the training sentences.
    tagger_model : str or None
        A ``pos`` model file (``latentstruct train pos --learner ssvm ...``) whose tagger
        gives the POS tags.  The task does not read it:
        :func:`latentstruct.pipelines.attach_tagger` loads it and calls ``set_tagger``
        (``latentstruct train`` does).  Without it, ``attach_tagger`` trains the default
        tagger on UD EWT (:func:`latentstruct.pipelines.train_pos_tagger`).  A tagger is
        needed unless every record has POS tags.  The tagger is copied into this task's
        model file.
    tagger_sentences : int, default 3000
        Size of that default tagger's training sample (the first sentences of UD EWT train).
    lm_corpus : str or None
        Sentences (one per line) whose non-held-out part trains the trigram LM; default
        ``$LATENTSTRUCT_DATA/english_sentences/reuters21578_sentences.txt``.
    heldout_fraction : float in [0, 1), default 0.05
        Share of sentences (by hash) held out from training the LM and the model.
    n_train : int or None
        Use a seeded sample of this many training positives (None: all).
    negative_ratio : float, default 1.0
        Training negatives per training positive.
    test_sentences : {"auto", "heldout", "all"}, default "auto"
        Positives of ``read(path, "test")``: "auto" takes the held-out sentences when the
        file is the training file (same sentence digest) and every sentence otherwise;
        "heldout" and "all" force either choice.
    n_test : int or None, default 3000
        At most this many test positives (the first ones of the file).
    n_negative_sets : int, default 5
        Negative sets sampled for evaluation (each as large as the positive set); 0 reads
        only the positives (``latentstruct predict --option test_sentences=all --option
        n_negative_sets=0 --option n_test=null`` labels every line of a file).
    seed : int, default 0
        Seed of the training sample and the training negatives (and the chunker's order).
    test_seed : int, default 1000
        Negative set k of the evaluation is drawn with seed ``test_seed + k``.
    chunker : {"auto", "perceptron", None}, default "auto"
        When the training pipeline (:func:`latentstruct.pipelines.attach_chunker`, called by
        ``latentstruct train`` after ``fit``) trains the supervised chunker whose weights are
        ``heuristic_weights`` (§4's initialisation): "auto" only when the learner needs
        them (LCLR / LCLR-variant with init="two-stage", TwoStage, LatentPA with
        init="heuristic"), "perceptron" always, None never.  ``fit`` itself never trains
        it; in code, call :func:`latentstruct.pipelines.train_chunker` after ``fit``.
    chunker_corpus : str or None
        CoNLL-2000 file; default ``$LATENTSTRUCT_DATA/conll2000/train.txt``.
    chunker_sentences : int, default 2000
        The chunker trains on the first sentences of ``chunker_corpus``.
    chunker_epochs : int, default 3
        Epochs of the chunker's averaged perceptron.

    Notes
    -----
    Data in memory (:meth:`make_dataset`): ``X`` is a list of sentences, each a string
    (tokenized like the sentence files) or a list of tokens; ``y`` their labels (+1/-1,
    1/0 or True/False; 1 = grammatical) or None; ``decode_predictions`` gives +1/-1 ints::

        task = GrammaticalityTask()
        data = task.make_dataset(["Shares rose 5 pct in early trading .",
                                  ["pct", "the", "rose", "in", "of", "."]], [1, -1])
    """

    name = "grammaticality"
    default_learner = "latent-pa"
    #: heuristic weights are those of the supervised chunker (not offered with chunker=None)
    capabilities = frozenset({LATENT_BINARY, HEURISTIC})
    # The LCLR-variant's held-out accuracy stops rising after 10-20 outer iterations while
    # the objective keeps moving for 30 more, and those late iterations are the slow ones
    # (1,000-2,000 DCD epochs per restricted solve): the number of iterations is chosen by
    # the loss on a validation split of the training data.  docs/performance.md.
    learner_defaults = {"lclr-variant": {"early_stopping": True}}
    #: what evaluate/predict may change: which sentences and negatives are scored
    evaluation_params = frozenset({"test_sentences", "n_test", "n_negative_sets", "test_seed"})
    # file paths read at training time only (tagger and LM are saved in the model file)
    local_params = frozenset({"tagger_model", "lm_corpus", "chunker_corpus"})

    @classmethod
    def offered_capabilities(cls, params: dict | None = None) -> frozenset:
        """With ``chunker=None`` no chunker is ever trained, so there are no heuristic
        weights (a learner that needs them is refused before any data is read)."""
        caps = frozenset(cls.capabilities)
        if params is not None and params.get("chunker", "auto") is None:
            caps -= {HEURISTIC}
        return caps

    def __init__(self, views="iob2", combine="concat", constrained=True, chunk_types="conll2000",
                 min_count=2, tagger_model=None, tagger_sentences=3000, lm_corpus=None,
                 heldout_fraction=0.05, n_train=None, negative_ratio=1.0,
                 test_sentences="auto", n_test=3000, n_negative_sets=5, seed=0, test_seed=1000,
                 chunker="auto", chunker_corpus=None, chunker_sentences=2000, chunker_epochs=3):
        self.views = views
        self.combine = combine
        self.constrained = constrained
        self.chunk_types = chunk_types
        self.min_count = min_count
        self.tagger_model = tagger_model
        self.tagger_sentences = tagger_sentences
        self.lm_corpus = lm_corpus
        self.heldout_fraction = heldout_fraction
        self.n_train = n_train
        self.negative_ratio = negative_ratio
        self.test_sentences = test_sentences
        self.n_test = n_test
        self.n_negative_sets = n_negative_sets
        self.seed = seed
        self.test_seed = test_seed
        self.chunker = chunker
        self.chunker_corpus = chunker_corpus
        self.chunker_sentences = chunker_sentences
        self.chunker_epochs = chunker_epochs

    # ------------------------------------------------------------------------------------
    # parameters
    # ------------------------------------------------------------------------------------
    def view_names(self) -> list[str]:
        """The configured views, validated (``ConfigError`` for an unknown or repeated one)."""
        if isinstance(self.views, str):
            names = [v.strip() for v in self.views.split(",")]
        elif isinstance(self.views, (list, tuple)):
            names = list(self.views)
        else:
            raise ConfigError(
                f"views must be a view name or a comma-separated list such as "
                f"'iob1,iob2,ioe1,ioe2,oc', got {self.views!r}"
            )
        if not names or names == [""]:
            raise ConfigError("views is empty; give at least one of: " + ", ".join(ENCODINGS))
        for v in names:
            get_encoding(v)
        if len(set(names)) != len(names):
            raise ConfigError(f"views must be distinct, got {self.views!r}")
        return names

    def chunk_type_names(self) -> list[str]:
        if self.chunk_types == "conll2000":
            return list(CONLL2000_CHUNK_TYPES)
        if isinstance(self.chunk_types, str):
            types = [t.strip() for t in self.chunk_types.split(",") if t.strip()]
        elif isinstance(self.chunk_types, (list, tuple)):
            types = list(self.chunk_types)
        else:
            types = []
        if not types:
            raise ConfigError(
                f"chunk_types must be 'conll2000' or a comma list such as 'NP,VP', got "
                f"{self.chunk_types!r}"
            )
        return types

    def _validate_params(self) -> None:
        self.view_names()
        self.chunk_type_names()
        if self.combine not in _COMBINE:
            raise ConfigError(
                f"combine must be one of {', '.join(_COMBINE)}, got {self.combine!r}"
            )
        if self.test_sentences not in _TEST_SENTENCES:
            raise ConfigError(
                f"test_sentences must be one of {', '.join(_TEST_SENTENCES)}, got "
                f"{self.test_sentences!r}"
            )
        if self.chunker not in _CHUNKERS:
            raise ConfigError(
                f"chunker must be 'auto', 'perceptron' or None, got {self.chunker!r}"
            )
        f = self.heldout_fraction
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f < 1.0:
            raise ConfigError(f"heldout_fraction must be a float in [0, 1), got {f!r}")
        r = self.negative_ratio
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not r >= 0:
            raise ConfigError(f"negative_ratio must be a float >= 0, got {r!r}")
        if r > NEGATIVE_RATIO.high:
            raise ConfigError(f"negative_ratio must be a float in [0, {NEGATIVE_RATIO.high}], "
                              f"got {r:,}: {NEGATIVE_RATIO.why('negative_ratio', r, 1)}")
        v = self.n_negative_sets
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ConfigError(f"n_negative_sets must be an integer >= 0, got {v!r}")
        check_bounded("n_negative_sets", v, NEGATIVE_SETS, default=5)
        for name, allow_none in (("min_count", False), ("n_train", True), ("n_test", True),
                                 ("chunker_sentences", False), ("chunker_epochs", False),
                                 ("tagger_sentences", False)):
            v = getattr(self, name)
            if v is None and allow_none:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(
                    f"{name} must be an integer >= 1{' or None' if allow_none else ''}, got {v!r}"
                )
        check_bounded("chunker_epochs", self.chunker_epochs, CHUNKER_EPOCHS, default=3)
        for name in ("seed", "test_seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ConfigError(f"{name} must be an integer >= 0, got {v!r}")

    # ------------------------------------------------------------------------------------
    # the language model and the data
    # ------------------------------------------------------------------------------------
    def is_heldout(self, tokens) -> bool:
        return is_heldout(tokens, float(self.heldout_fraction))

    def _lm_path(self):
        if self.lm_corpus is not None:
            return self.lm_corpus
        return dataset_path("english_sentences", "reuters21578_sentences.txt")

    def fit_lm(self) -> TrigramLM:
        """The trigram LM of the negatives, fitted (once) on the non-held-out sentences of
        ``lm_corpus``."""
        lm = getattr(self, "lm_", None)
        if lm is None:
            self._validate_params()
            path = self._lm_path()
            sentences = [s for s in read_sentences(path) if not self.is_heldout(s)]
            if not sentences:
                raise InputError("every sentence is held out; lower heldout_fraction", str(path))
            lm = self.lm_ = TrigramLM().fit(sentences)
        return lm

    def sample_negatives(self, n: int, seed) -> list[list[str]]:
        """``n`` LM samples of 4..60 tokens, drawn with ``np.random.default_rng(seed)``."""
        lm = self.fit_lm()
        rng = np.random.default_rng(seed)
        out: list[list[str]] = []
        while len(out) < n:
            batch = lm.sample(max(n - len(out), 16), random_state=rng,
                              max_len=NEGATIVE_MAX_LENGTH)
            out.extend(s for s in batch if len(s) >= NEGATIVE_MIN_LENGTH)
        return out[:n]

    def read(self, path, *, split: str = "train") -> Dataset:
        """Positives from ``path`` (one sentence per line) and LM-sampled negatives.

        ``split="train"``: the non-held-out sentences (a seeded sample of ``n_train``) and
        ``round(negative_ratio * n)`` negatives; the digest of the file's sentences is
        recorded as ``train_digest_``.  ``split="test"``: the held-out sentences or all of
        them (``test_sentences``; "auto" holds out only when the file has the training
        file's digest), at most ``n_test``, and ``n_negative_sets`` sets of as many
        negatives.  Raises ``InputError`` (file:line) for an empty line or file.
        """
        self._validate_params()
        if split not in ("train", "test"):
            raise ConfigError(f"split must be 'train' or 'test', got {split!r}")
        sentences = read_sentences(path)
        name = os.fspath(path)
        if split == "train":
            self.train_digest_ = sentences_digest(sentences)
            pos = [s for s in sentences if not self.is_heldout(s)]
            if not pos:
                raise InputError(
                    f"all {len(sentences)} sentences are held out for evaluation "
                    f"(heldout_fraction={self.heldout_fraction}); nothing is left to train on",
                    name,
                )
            if self.n_train is not None and self.n_train < len(pos):
                keep = np.sort(np.random.default_rng(self.seed).choice(
                    len(pos), self.n_train, replace=False))
                pos = [pos[int(i)] for i in keep]
            neg = self.sample_negatives(int(round(self.negative_ratio * len(pos))), self.seed)
            records = [Sentence(tuple(s)) for s in pos] + [Sentence(tuple(s)) for s in neg]
        else:
            if self.heldout_test(sentences):
                pos = [s for s in sentences if self.is_heldout(s)]
                if not pos:
                    raise InputError(
                        f"none of the {len(sentences)} sentences is in the held-out share "
                        f"(heldout_fraction={self.heldout_fraction}); to evaluate on every "
                        f"line of a file of new sentences pass test_sentences=all",
                        name,
                    )
            else:
                pos = sentences
            if self.n_test is not None:
                pos = pos[: self.n_test]
            records = [Sentence(tuple(s)) for s in pos]
            neg = []
            for k in range(int(self.n_negative_sets)):
                sample = self.sample_negatives(len(pos), int(self.test_seed) + k)
                records += [Sentence(tuple(s), negative_set=k) for s in sample]
                neg += sample
        targets = np.array([1] * len(pos) + [-1] * len(neg), dtype=np.int64)
        return Dataset(records, targets, name)

    def make_dataset(self, X, y=None) -> Dataset:
        """Sentences from memory: the in-memory twin of :meth:`read`.

        ``X``: a list of sentences, each a string (split into tokens by
        :func:`~latentstruct.data.lm.tokenize`, as ``read`` splits each line of a sentence
        file) or a list of tokens (non-empty strings without white space; ``<s>`` and
        ``</s>`` are reserved for the n-gram padding); ``y``: one binary label per sentence
        (+1/-1, 1/0 or True/False; 1 = grammatical), or None for sentences to predict.
        Records are :class:`Sentence` without POS tags: the task's tagger tags them in
        ``fit``/``featurize`` exactly as it tags file sentences, so attach one first
        (:func:`latentstruct.pipelines.attach_tagger`, or ``set_tagger``).

        Unlike ``read``, nothing is sampled or held out: no LM negatives
        (``negative_ratio``, ``n_negative_sets``), no ``heldout_fraction`` share, no
        ``n_train``/``n_test`` sample and no training digest; the negatives are the
        sentences labelled -1, and ``evaluate_model`` scores them as one negative set.  A
        bad sentence is an ``InputError`` naming ``X[i]`` (``X[i][k]`` for token k) or
        ``y[i]``.
        """
        return sentence_dataset(X, y, Sentence)

    def decode_predictions(self, predictions) -> list:
        """``predict``'s +-1 labels as a list of Python ints +1 / -1."""
        return binary_predictions(predictions)

    def heldout_test(self, sentences) -> bool:
        """Whether ``read(path, "test")`` of these sentences keeps only the held-out share:
        always for ``test_sentences="heldout"``, never for "all", and for "auto" when they
        are the training file's sentences (same digest) or no training digest is known."""
        if self.test_sentences == "heldout":
            return True
        if self.test_sentences == "all":
            return False
        train = getattr(self, "train_digest_", None)
        return train is None or sentences_digest(sentences) == train

    # ------------------------------------------------------------------------------------
    # POS tagger
    # ------------------------------------------------------------------------------------
    def set_tagger(self, pos_task: PosTask, coef: np.ndarray) -> "GrammaticalityTask":
        """Use a fitted ``PosTask`` with weights ``coef`` as the POS tagger."""
        self.tagger_coef_ = check_tagger(pos_task, coef)
        self.tagger_ = pos_task
        self._tag_memo = None
        return self

    def has_tagger(self) -> bool:
        """Whether a POS tagger is attached (``set_tagger``, or loaded with the model)."""
        return getattr(self, "tagger_", None) is not None

    @property
    def needs_tagger(self) -> bool:
        """True when no tagger is attached and ``tagger_model`` is None: the training
        pipeline then trains the default one (:func:`latentstruct.pipelines.attach_tagger`,
        which calls :func:`latentstruct.pipelines.train_pos_tagger` on ``tagger_sentences``).
        Checks the parameters first, so a bad ``tagger_sentences`` fails before any training."""
        self._validate_params()
        return not self.has_tagger() and self.tagger_model is None

    def _ensure_tagger(self) -> None:
        if self.has_tagger():
            return
        if self.tagger_model is None:
            raise ConfigError(
                "the grammaticality task needs a POS tagger: train one with "
                "`latentstruct train pos --train en_ewt-ud-train.conllu --model pos.npz "
                "--learner ssvm` and pass --option tagger_model=pos.npz (or call set_tagger)"
            )
        raise ConfigError(
            f"the grammaticality task needs a POS tagger: tagger_model={self.tagger_model!r} "
            "is given but not loaded; the task does not read model files itself -- call "
            "latentstruct.pipelines.attach_tagger(task) (or set_tagger) before read/fit"
        )

    def tag(self, sentences: Sequence[Sequence[str]]) -> list[tuple]:
        """UPOS tags of tokenized sentences from the tagger (deterministic)."""
        self._ensure_tagger()
        pos_task, coef = self.tagger_, self.tagger_coef_
        out: list[tuple] = []
        batches = range(0, len(sentences), _TAG_BATCH)
        for a in track(batches, "POS tagging", unit=f"×{_TAG_BATCH} sent"):
            chunk = [Sentence(tuple(s)) for s in sentences[a:a + _TAG_BATCH]]
            X = pos_task.featurize(Dataset(chunk, [None] * len(chunk)))
            labels = pos_task.argmax_batch(X, coef)
            out.extend(tuple(t) for t in pos_task.decode_targets(labels))
        return out

    def _pos_of(self, records) -> list[tuple]:
        """POS tags of every record: its own, or the tagger's (memoised for one record list,
        so ``fit`` and ``featurize`` of the same data tag it once)."""
        memo = getattr(self, "_tag_memo", None)
        if memo is not None and memo[0] is records:
            return memo[1]
        missing = [i for i, r in enumerate(records) if r.pos is None]
        tagged = self.tag([records[i].words for i in missing]) if missing else []
        out = [r.pos for r in records]
        for i, p in zip(missing, tagged):
            out[i] = p
        self._tag_memo = (records, out)
        return out

    # ------------------------------------------------------------------------------------
    # fitting and featurising
    # ------------------------------------------------------------------------------------
    def _setup_views(self) -> None:
        types = self.chunk_type_names()
        self.chunk_types_ = tuple(types)
        views, offset = [], 0
        A = len(self.attr_index_)
        for name in self.view_names():
            labels = tuple(encoding_labels(types, name))
            L = len(labels)
            if self.constrained:
                tm, sm, em = view_constraints(labels, name)
            else:
                tm, sm, em = np.zeros((L, L)), np.zeros(L), np.zeros(L)
            views.append(_View(name, labels, offset, tm, sm, em))
            offset += A * L + L * L + 2 * L
        self.views_ = tuple(views)
        self._label_ids = [{t: i for i, t in enumerate(v.labels)} for v in views]
        self._bias_index = offset

    def fit(self, dataset: Dataset) -> "GrammaticalityTask":
        """Index the attributes of the training sentences (tagging them first) and set up
        the views.  Nothing is trained here: the supervised chunker of ``heuristic_weights``
        is trained afterwards by :func:`latentstruct.pipelines.train_chunker` (any weights
        attached before are dropped, as the feature space changes)."""
        self._validate_params()
        if len(dataset) == 0:
            raise InputError("training data contains no sentences", dataset.path)
        pos = self._pos_of(dataset.records)
        index = FeatureIndex(min_count=int(self.min_count))
        index.fit(
            (a for tok in ngram_attributes(r.words, p) for a in tok)
            for r, p in zip(dataset.records, pos)
        )
        self.attr_index_ = index
        self._setup_views()
        self.fitted_ = True
        self.chunker_coef_ = None
        return self

    @property
    def n_attributes(self) -> int:
        self.check_fitted()
        return len(self.attr_index_)

    @property
    def n_features(self) -> int:
        self.check_fitted()
        return self._bias_index + 1

    def featurize(self, dataset: Dataset) -> SequenceCorpus:
        self.check_fitted()
        return self._featurize_records(dataset.records, self._pos_of(dataset.records))

    def _featurize_records(self, records, pos) -> SequenceCorpus:
        lookup = self.attr_index_.lookup_many
        indptr, ids, offsets, total = [0], [], [0], 0
        for r, p in zip(records, pos):
            for tok in ngram_attributes(r.words, p):
                a = lookup(tok)
                ids.append(a)
                total += a.shape[0]
                indptr.append(total)
            offsets.append(len(indptr) - 1)
        attr_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        return SequenceCorpus(np.asarray(indptr), attr_ids, np.asarray(offsets))

    def encode_targets(self, targets) -> np.ndarray:
        """Labels +1 (a real sentence) / -1 (a sampled one) as int64; anything else is an
        InputError."""
        return check_binary_labels(targets)

    def subset(self, X: SequenceCorpus, indices) -> SequenceCorpus:
        return as_corpus(X).subset(indices)

    def example_size(self, x: SequenceCorpus) -> int:
        return x.n_tokens

    # ------------------------------------------------------------------------------------
    # weights, decoding, features
    # ------------------------------------------------------------------------------------
    def _view_weights(self, w: np.ndarray, view: _View):
        A, L = len(self.attr_index_), view.n_labels
        o = view.offset
        e = o + A * L
        return (w[o:e].reshape(A, L), w[e:e + L * L].reshape(L, L),
                w[e + L * L:e + L * L + L], w[e + L * L + L:e + L * L + 2 * L])

    def _check_w(self, w) -> np.ndarray:
        self.check_fitted()
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"weight vector must have shape ({self.n_features},), got {w.shape}")
        return w

    def as_batch(self, X) -> SequenceCorpus:
        return as_corpus(X)

    def _decode_views(self, X: SequenceCorpus, w: np.ndarray, Y=None):
        """Per view: (unary (N, L), masked transition/start/end, labels (N,), scores
        (n_seq,)) of the independent Viterbi decoding of every sentence, and the sentence
        offsets.  With gold structures ``Y`` (one (n_views, T_i) array per sentence) the
        unary scores are Hamming-loss-augmented (+1 on every tag but the gold one)."""
        offsets = X.offsets - X.offsets[0]
        out = []
        for k, view in enumerate(self.views_):
            E, T, S, En = self._view_weights(w, view)
            unary = _emission_scores(X.attr_indptr, X.attr_ids, E, X.offsets[0], X.offsets[-1])
            if Y is not None:
                gold = (np.concatenate([y[k] for y in Y]) if len(Y)
                        else np.zeros(0, np.int64))
                unary = _hamming_augmented(unary, np.ascontiguousarray(gold, dtype=np.int64))
            T, S, En = T + view.trans_mask, S + view.start_mask, En + view.end_mask
            res = viterbi_batch(unary, offsets, T, S, En)
            out.append((unary, T, S, En, res.labels, res.scores))
        return offsets, out

    def _vote(self, h: np.ndarray) -> np.ndarray:
        """The majority vote (in O+C space) of the views' chunkings ``h`` (n_views, T),
        written back in every view."""
        tags = {v.name: [v.labels[i] for i in h[k]] for k, v in enumerate(self.views_)}
        voted = majority_vote(tags)
        return np.array([[self._label_ids[k][t] for t in voted[v.name]]
                         for k, v in enumerate(self.views_)], dtype=np.int64).reshape(h.shape)

    def vote(self, h) -> np.ndarray:
        """Public form of the vote: ``h`` int array (n_views, T) -> voted (n_views, T)."""
        self.check_fitted()
        return self._vote(self._check_structure(h, np.asarray(h).shape[-1]))

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        """Best structure of every sentence (concat: exact per-view Viterbi; vote: the
        vote of the per-view Viterbi chunkings) with its score w . Phi(x, h)."""
        w = self._check_w(w)
        X = as_corpus(X)
        offsets, decoded = self._decode_views(X, w)
        bias = float(w[self._bias_index])
        out = []
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            h = np.stack([d[4][a:b] for d in decoded]) if b > a else np.zeros(
                (len(decoded), 0), np.int64)
            if self.combine == "concat":
                score = float(sum(d[5][s] for d in decoded)) + bias
            else:
                h = self._vote(h)
                score = bias + sum(
                    _chain_score(d[0][a:b], d[1], d[2], d[3], h[k])
                    for k, d in enumerate(decoded))
            out.append(DecodeResult(h, score, EXACT))
        return out

    def argmax_is_maximum(self) -> bool:
        """Decode-then-vote (``combine="vote"``) is the paper's procedure, not a maximum of
        w . Phi(x, h); per-view Viterbi (``"concat"``) is exact."""
        return self.combine != "vote"

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        return self.latent_argmax_batch(x, w)[0]

    def decision_batch(self, X, w) -> np.ndarray:
        if self.combine == "vote":
            return super().decision_batch(X, w)
        w = self._check_w(w)
        _, decoded = self._decode_views(as_corpus(X), w)
        return sum(d[5] for d in decoded) + float(w[self._bias_index])

    def _check_structure(self, h, T: int) -> np.ndarray:
        h = np.asarray(h, dtype=np.int64)
        V = len(self.views_)
        if h.shape != (V, T):
            raise InputError(
                f"a structure must be an int array of shape (n_views, n_tokens) = ({V}, {T}), "
                f"got shape {h.shape}"
            )
        for k, v in enumerate(self.views_):
            if T and (h[k].min() < 0 or h[k].max() >= v.n_labels):
                raise InputError(
                    f"view {v.name} has {v.n_labels} tags; structure row {k} holds an id "
                    f"outside 0..{v.n_labels - 1}"
                )
        return h

    def _views_feature(self, x: SequenceCorpus, h_a, h_b=None, *, bias: float = 0.0
                       ) -> SparseVector:
        """Phi_views(x, h_a) - Phi_views(x, h_b) (h_b None: zero) plus ``bias`` times the
        bias feature: each view's emission, transition, start and end indicators in its
        own block."""
        self.check_fitted()
        T = x.n_tokens
        h_a = self._check_structure(h_a, T)
        h_b = (np.full(h_a.shape, -1, dtype=np.int64) if h_b is None
               else self._check_structure(h_b, T))
        A = len(self.attr_index_)
        idx, val = [], []
        if bias:
            idx.append(np.array([self._bias_index], np.int64))
            val.append(np.array([float(bias)]))
        for k, v in enumerate(self.views_):
            i, vv = _joint_feature_difference(x.attr_indptr, x.attr_ids, x.offsets[0],
                                              x.offsets[-1], h_a[k], h_b[k], A, v.n_labels)
            idx.append(i + v.offset)
            val.append(vv)
        return SparseVector(*coalesce_arrays(np.concatenate(idx), np.concatenate(val)))

    def latent_feature(self, x: SequenceCorpus, h) -> SparseVector:
        """Phi(x, h): each view's emission, transition, start and end indicators in its own
        block, plus the bias."""
        return self._views_feature(x, h, bias=1.0)

    def decode_structure(self, h) -> dict[str, list[str]]:
        """Tag strings of a structure, by view."""
        self.check_fitted()
        h = np.asarray(h)
        return {v.name: [v.labels[i] for i in h[k]] for k, v in enumerate(self.views_)}

    # ------------------------------------------------------------------------------------
    # supervised chunker (initialisation, §4)
    # ------------------------------------------------------------------------------------
    def chunking_task(self) -> "ChunkingView":
        """The supervised chunking problem in this task's feature space (a max-decodable
        ``ChunkingView``), for training the chunker of ``heuristic_weights``."""
        self.check_fitted()
        return ChunkingView(self)

    def chunk_training_data(self) -> tuple[SequenceCorpus, list[np.ndarray]]:
        """``(X, Y)`` of ``chunking_task()``: the first ``chunker_sentences`` sentences of
        ``chunker_corpus`` (CoNLL-2000), tagged by this task's POS tagger and featurised with
        its templates, and their gold chunkings written in every view's encoding (int
        arrays (n_views, T)).  ``InputError`` (file:line) for a chunk type outside
        ``chunk_types``."""
        self.check_fitted()
        self._validate_params()
        path = self.chunker_corpus or dataset_path("conll2000", "train.txt")
        sents = read_conll2000(path)[: int(self.chunker_sentences)]
        known = set(self.chunk_types_)
        records, gold = [], []
        for s in sents:
            types = {t[2:] for t in s.tags if t != "O"}
            if not types <= known:
                raise InputError(
                    f"chunk types {sorted(types - known)} are not among chunk_types "
                    f"{sorted(known)}", str(path), s.line)
            records.append(Sentence(s.words))
            gold.append(np.array([[self._label_ids[k][t] for t in convert(s.tags, "iob2", v.name)]
                                  for k, v in enumerate(self.views_)], dtype=np.int64))
        if not records:
            raise InputError("the chunker corpus contains no sentences", str(path))
        X = self._featurize_records(records, self.tag([r.words for r in records]))
        return X, gold

    def set_chunker_weights(self, coef) -> "GrammaticalityTask":
        """Attach a supervised chunker's weights (shape ``(n_features,)``, in the layout of
        ``chunking_task()``) as ``heuristic_weights``."""
        self.check_fitted()
        coef = np.array(coef, dtype=np.float64)
        if coef.shape != (self.n_features,):
            raise ConfigError(
                f"chunker weights must have shape ({self.n_features},) -- this task's "
                f"n_features -- got {coef.shape}; train them with "
                "latentstruct.pipelines.train_chunker(task) after fit"
            )
        if not np.all(np.isfinite(coef)):
            raise ConfigError("chunker weights must be finite")
        self.chunker_coef_ = coef
        return self

    def heuristic_ready(self) -> bool:
        """Whether ``heuristic_weights()`` is available (chunker weights are attached)."""
        return self.is_fitted() and getattr(self, "chunker_coef_", None) is not None

    def heuristic_weights(self) -> np.ndarray:
        """The supervised chunker's weights (unscaled, bias 0), attached by
        :func:`latentstruct.pipelines.train_chunker` or ``set_chunker_weights``."""
        self.check_fitted()
        if getattr(self, "chunker_coef_", None) is None:
            raise ConfigError(
                "this grammaticality task has no supervised chunker to initialise from (the "
                "learner asks for heuristic_weights: LCLR / lclr-variant with "
                "init=two-stage, two-stage, or latent-pa with init=heuristic). In code, call "
                "latentstruct.pipelines.train_chunker(task) after task.fit; `latentstruct "
                "train` trains it unless chunker=None (leave chunker=auto or set "
                "chunker=perceptron); or initialise the learner from zeros (init=zeros)"
            )
        return self.chunker_coef_.copy()

    # ------------------------------------------------------------------------------------
    # evaluation
    # ------------------------------------------------------------------------------------
    def loss(self, y_true, y_pred) -> float:
        return float(y_true != y_pred)

    def evaluate(self, targets, predictions) -> dict:
        targets, predictions = np.asarray(targets), np.asarray(predictions)
        return {"accuracy": float(np.mean(targets == predictions)) if targets.size else 0.0}

    def evaluate_model(self, dataset: Dataset, predict, decision_function=None) -> dict:
        """Accuracy on the positives plus each negative set, averaged over the sets (§4)."""
        X = self.featurize(dataset)
        y = self.encode_targets(dataset.targets)
        if decision_function is not None:
            pred = np.where(np.asarray(decision_function(X)) >= 0.0, 1, -1)
        else:
            pred = np.asarray(predict(X))
        correct = pred == y
        sets = np.array([r.negative_set for r in dataset.records])
        positive = y > 0
        ids = sorted(set(sets[~positive].tolist())) or [None]
        accs = []
        for k in ids:
            mask = positive if k is None else positive | ((sets == k) & ~positive)
            accs.append(float(np.mean(correct[mask])))
        return {
            "accuracy": float(np.mean(accs)),
            "accuracy_std": float(np.std(accs)),
            "positive_accuracy": float(np.mean(correct[positive])) if positive.any() else 0.0,
            "negative_accuracy": float(np.mean(correct[~positive])) if (~positive).any() else 0.0,
            "n_positives": int(positive.sum()),
            "n_negative_sets": len(ids) if ids != [None] else 0,
        }

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """One line per sentence: the predicted label (+1 / -1), a tab, the tokens."""
        with atomic_write(path, "w") as fh:
            for r, p in zip(dataset.records, predictions, strict=True):
                fh.write(f"{int(p):+d}\t{' '.join(r.words)}\n")

    # ------------------------------------------------------------------------------------
    # persistence
    # ------------------------------------------------------------------------------------
    def get_state(self):
        self.check_fitted()
        self._ensure_tagger_for_state()
        lm = self.fit_lm()
        t_state, t_arrays = self.tagger_.get_state()
        state = {
            "chunk_types": list(self.chunk_types_),
            "views": [v.name for v in self.views_],
            "tagger_params": self.tagger_.get_params(),
            "tagger_state": t_state,
            "train_digest": getattr(self, "train_digest_", None),
        }
        arrays = dict(self.attr_index_.to_arrays(prefix="gattr_"))
        arrays.update({"tagger_" + k: v for k, v in t_arrays.items()})
        arrays["tagger_coef"] = self.tagger_coef_
        arrays.update(lm.to_arrays(prefix="lm_"))
        return state, arrays

    def _ensure_tagger_for_state(self) -> None:
        if getattr(self, "tagger_", None) is None:
            raise NotFittedError(
                "cannot save a grammaticality model without its POS tagger; pass tagger_model "
                "or call set_tagger before fit"
            )

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        try:
            task.attr_index_ = feature_index_from_arrays(arrays, prefix="gattr_")
            if list(state["views"]) != task.view_names():
                raise ModelFormatError(
                    f"the model was trained with views {state['views']}, but the parameters "
                    f"say {task.views!r}"
                )
            tagger_arrays = {k[len("tagger_"):]: v for k, v in arrays.items()
                             if k.startswith("tagger_")}
            pos_task = PosTask.from_state(state["tagger_params"], state["tagger_state"],
                                          tagger_arrays)
            task.set_tagger(pos_task, arrays["tagger_coef"])
            task.lm_ = TrigramLM.from_arrays(arrays, prefix="lm_")
        except KeyError as exc:
            raise ModelFormatError(f"grammaticality model state lacks {exc}") from None
        task._setup_views()
        task.chunker_coef_ = None
        # models saved before the digest was recorded have none: "auto" then holds out
        task.train_digest_ = state.get("train_digest")
        task.fitted_ = True
        return task


class ChunkingView(StructuredTask):
    """The supervised chunking problem of a fitted ``GrammaticalityTask`` (max-decodable).

    Built by ``GrammaticalityTask.chunking_task()`` to train the chunker whose weights are
    the task's ``heuristic_weights`` (Clifton et al. 2013, §4); not registered for the
    command line (it reads no files: its data come from ``chunk_training_data()``).

    * examples ``x``: the task's featurised sentences (``SequenceCorpus``);
    * structures ``y``: int arrays (n_views, T), the chunk tags of the sentence in every
      view's encoding (tag ids of ``task.views_[k].labels``);
    * Phi(x, y): the task's ``latent_feature(x, y)`` without the bias entry -- the same
      weight layout and ``n_features`` as the task, so learned weights are directly the
      task's heuristic weights (with bias weight 0);
    * argmax: every view decoded independently by its (constrained, when the task is)
      Viterbi, exact; with ``y_true`` loss-augmented by the Hamming loss over all views'
      tags.  The ``combine`` of the task plays no part;
    * loss: Hamming loss over all views' tags.
    """

    name = "grammaticality-chunking"
    capabilities = frozenset({MAX_DECODABLE, SIZED})

    def __init__(self, task=None):
        self.task = task

    def _base(self) -> GrammaticalityTask:
        if not isinstance(self.task, GrammaticalityTask):
            raise ConfigError(
                f"ChunkingView needs a fitted GrammaticalityTask as its 'task', got "
                f"{type(self.task).__name__}"
            )
        return self.task

    def is_fitted(self) -> bool:
        return isinstance(self.task, GrammaticalityTask) and self.task.is_fitted()

    def check_fitted(self) -> None:
        self._base().check_fitted()

    @property
    def n_features(self) -> int:
        return self._base().n_features

    def subset(self, X: SequenceCorpus, indices) -> SequenceCorpus:
        return as_corpus(X).subset(indices)

    def as_batch(self, X):
        return as_corpus(X)

    def example_size(self, x: SequenceCorpus) -> int:
        return x.n_tokens

    def joint_feature(self, x: SequenceCorpus, y) -> SparseVector:
        return self._base()._views_feature(x, y)

    def joint_feature_difference(self, x: SequenceCorpus, y_a, y_b) -> SparseVector:
        return self._base()._views_feature(x, y_a, y_b)

    def _decode(self, X, w, Y=None) -> list[DecodeResult]:
        task = self._base()
        w = task._check_w(w)
        X = as_corpus(X)
        if Y is not None:
            if len(Y) != len(X):
                raise InputError(f"{len(X)} sentences but {len(Y)} gold structures")
            lengths = X.lengths()
            Y = [task._check_structure(y, int(lengths[i])) for i, y in enumerate(Y)]
        offsets, decoded = task._decode_views(X, w, Y)
        out = []
        for s in range(len(offsets) - 1):
            a, b = int(offsets[s]), int(offsets[s + 1])
            h = np.stack([d[4][a:b] for d in decoded]).astype(np.int64, copy=False)
            score = float(sum(d[5][s] for d in decoded))
            out.append(DecodeResult(h, score, EXACT if np.isfinite(score) else INFEASIBLE))
        return out

    def argmax(self, x: SequenceCorpus, w, y_true=None, *, random_state=None) -> DecodeResult:
        """Per-view Viterbi (Hamming-loss-augmented over all views with ``y_true``); the
        score is w . Phi(x, y) (plus the loss when augmented)."""
        return self._decode(x, w, None if y_true is None else [y_true])[0]

    def argmax_results(self, X, w, Y=None, *, random_state=None) -> list[DecodeResult]:
        return self._decode(X, w, Y)

    def argmax_batch(self, X, w, Y=None, *, random_state=None) -> list:
        return [r.structure for r in self._decode(X, w, Y)]

    def loss(self, y_true, y_pred) -> float:
        a, b = np.asarray(y_true), np.asarray(y_pred)
        if a.shape != b.shape:
            raise InputError(
                f"structures of shape {a.shape} and {b.shape} cannot be compared; both must be "
                "(n_views, n_tokens)"
            )
        return float(np.count_nonzero(a != b))

    def encode_targets(self, targets) -> list[np.ndarray]:
        return [np.asarray(t, dtype=np.int64) for t in targets]

    def evaluate(self, targets, predictions) -> dict:
        """Tag accuracy over all views' tags, and per view (``accuracy_<view>``)."""
        task = self._base()
        out = {}
        total = correct = 0
        for k, v in enumerate(task.views_):
            n = sum(int(np.asarray(t)[k].size) for t in targets)
            c = sum(int(np.count_nonzero(np.asarray(t)[k] == np.asarray(p)[k]))
                    for t, p in zip(targets, predictions, strict=True))
            out[f"accuracy_{v.name}"] = c / n if n else 0.0
            total, correct = total + n, correct + c
        return {"accuracy": correct / total if total else 0.0, **out}


def _chain_score(unary, trans, start, end, labels) -> float:
    """start[y_0] + sum_t unary[t, y_t] + sum_t trans[y_{t-1}, y_t] + end[y_{T-1}]."""
    T = labels.shape[0]
    if T == 0:
        return 0.0
    s = float(unary[np.arange(T), labels].sum()) + float(start[labels[0]]) + float(end[labels[-1]])
    if T > 1:
        s += float(trans[labels[:-1], labels[1:]].sum())
    return s
