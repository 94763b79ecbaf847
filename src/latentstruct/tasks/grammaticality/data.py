"""Data of the grammaticality task: trigram-LM negatives and the reading of sentence files.

:class:`LanguageModelData` is a mixin of
:class:`~latentstruct.tasks.grammaticality.GrammaticalityTask`: the held-out share, the
trigram LM fitted on ``lm_corpus``, LM samples as negatives, ``read`` (training and test
splits of a sentence file), ``make_dataset`` and ``decode_predictions``.  The splits are
described in :mod:`latentstruct.tasks.grammaticality` ("Data").
"""

from __future__ import annotations

import os

import numpy as np

from ...data.lm import TrigramLM
from ...data.paths import dataset_path
from ...data.sentences import read_sentences
from ...exceptions import ConfigError, InputError
from ...limits import NEGATIVE_RATIO, NEGATIVE_SETS
from ...params import Interval, Options
from ..base import Dataset
from ..validation import binary_predictions
from .raw import sentence_dataset
from .sentences import Sentence, is_heldout, sentences_digest

__all__ = ["LanguageModelData", "DATA_PARAMETER_CONSTRAINTS", "NEGATIVE_MIN_LENGTH", "NEGATIVE_MAX_LENGTH", "TEST_SENTENCES"]

#: which real sentences ``read(split="test")`` takes (``test_sentences``)
TEST_SENTENCES = ("auto", "heldout", "all")

#: lengths of LM samples used as negatives (the Reuters sentence file keeps 4..60 tokens)
NEGATIVE_MIN_LENGTH, NEGATIVE_MAX_LENGTH = 4, 60


#: what the parameters of the data :class:`LanguageModelData` reads may be (every task built
#: on it adds these to its ``_parameter_constraints``)
DATA_PARAMETER_CONSTRAINTS = {
    "test_sentences": [Options(*TEST_SENTENCES)],
    "heldout_fraction": [Interval(float, 0.0, 1.0, closed="left")],
    "negative_ratio": [Interval(float, 0.0, closed="both", bound=NEGATIVE_RATIO)],
    "n_negative_sets": [Interval(int, 0, closed="both", bound=NEGATIVE_SETS)],
}


class LanguageModelData:
    """Negatives from a trigram LM, and the task's readers (module docstring)."""

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
            self.check_params()
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
        self.check_params()
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
        :func:`~latentstruct.data.sentences.tokenize`, as ``read`` splits each line of a sentence
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
