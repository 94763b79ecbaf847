"""Transliteration discovery as a structure: :class:`TranslitStructure`.

A small immutable object: the two character alphabets a fitted
:class:`~latentstruct.tasks.translit.featurizer.TranslitFeaturizer` learned, the number of
the user's scores per character pair (k, 0 without) and whether the bigram blocks are on.
It is the latent-binary model of the task (the alignment argmax, Phi(x, a), the decisions,
the two-stage heuristic and ``explain``, from
:class:`~latentstruct.tasks.translit.decoding.CharacterAlignmentDecoding`) and the weight layout
(:meth:`TranslitStructure.feature_blocks`); no reading, sampling or evaluation.  A
:class:`~latentstruct.tasks.translit.task.TransliterationTask` builds one in ``fit`` and
``from_state`` (``task.structure_``); learners see it through ``task.structure()``.
"""

from __future__ import annotations

import math

import numpy as np

from ...data.readers import excerpt
from ...data.translit import check_word_length
from ...exceptions import InputError
from ..base import LatentBinaryDefaults
from ..contracts import EXPLAINABLE, HEURISTIC, LATENT_BINARY, RANDOM_TIES
from ..pairs.scores import scores_refusal
from .corpus import TranslitCorpus
from .decoding import CharacterAlignmentDecoding
from .featurizer import TranslitFeaturizer

__all__ = ["TranslitStructure", "check_word_pair"]


def check_word_pair(source, target) -> None:
    """InputError unless ``source`` and ``target`` are non-empty words within the length
    limit (what one raw pair must be before it is encoded)."""
    for what, word in (("source", source), ("target", target)):
        if not isinstance(word, str) or not word:
            raise InputError(f"{what} word must be a non-empty string, got {excerpt(word)}")
        check_word_length(word, f"the {what} word")


class TranslitStructure(CharacterAlignmentDecoding, LatentBinaryDefaults):
    """The latent monotone character alignments of word pairs, scored by unigram and
    bigram character mappings (the weight layout: :mod:`latentstruct.tasks.translit`).

    Parameters
    ----------
    source_alphabet, target_alphabet : sequence of str
        The fitted featurizer's sorted characters (character ``c`` has id
        ``alphabet.index(c) + 1``; id 0 is unknown or the word boundary).
    n_pair_scores : int, default 0
        k, the user's scores per character pair (0: none); their weights come last.
    bigrams : bool, default True
        Whether the two bigram-mapping blocks are part of the weights.

    Immutable: a refitted task builds a new one.
    """

    capabilities = frozenset({LATENT_BINARY, HEURISTIC, RANDOM_TIES, EXPLAINABLE})

    def __init__(self, source_alphabet, target_alphabet, n_pair_scores: int = 0,
                 bigrams: bool = True):
        k = n_pair_scores
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"TranslitStructure: n_pair_scores must be an int >= 0, got {k!r}")
        # the encoder of raw word pairs (``encode_pair``): the featurizer these alphabets are
        encoder = TranslitFeaturizer.from_alphabets(source_alphabet, target_alphabet, int(k))
        for name, value in (("source_alphabet_", tuple(encoder.source_alphabet_)),
                            ("target_alphabet_", tuple(encoder.target_alphabet_)),
                            ("n_scores", int(k)), ("bigrams", bool(bigrams)),
                            ("_encoder", encoder)):
            object.__setattr__(self, name, value)

    @classmethod
    def from_featurizer(cls, featurizer: TranslitFeaturizer, bigrams: bool = True):
        """The structure of a fitted featurizer's alphabets and score columns."""
        return cls(featurizer.source_alphabet_, featurizer.target_alphabet_,
                   featurizer.n_pair_scores_, bigrams)

    def __setattr__(self, name, value):
        raise AttributeError(f"a TranslitStructure is immutable; cannot set {name!r}")

    def __reduce__(self):
        return (type(self), (self.source_alphabet_, self.target_alphabet_, self.n_scores,
                             self.bigrams))

    def __repr__(self) -> str:
        return (f"TranslitStructure(A={self.n_source_chars}, B={self.n_target_chars}, "
                f"n_pair_scores={self.n_scores}, bigrams={self.bigrams})")

    def __sklearn_is_fitted__(self) -> bool:
        return True  # built from fitted alphabets

    # --- the weight layout ----------------------------------------------------------------
    @property
    def n_source_chars(self) -> int:
        """A: source alphabet size including id 0 (unknown / boundary)."""
        return len(self.source_alphabet_) + 1

    @property
    def n_target_chars(self) -> int:
        """B: target alphabet size including id 0 (unknown / boundary)."""
        return len(self.target_alphabet_) + 1

    @property
    def _n_char_features(self) -> int:
        """The weights before the score block (what the compiled kernels read)."""
        A, B = self.n_source_chars, self.n_target_chars
        return 2 + A * B + (2 * A * A * B * B if self.bigrams else 0)

    @property
    def n_features(self) -> int:
        return self._n_char_features + self.n_scores

    def feature_blocks(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """``{block: (offset into w, shape)}`` for "bias", "cell", "unigram", the bigram
        blocks and, with the user's scores, "scores" (k weights, last)."""
        A, B = self.n_source_chars, self.n_target_chars
        blocks = {"bias": (0, (1,)), "cell": (1, (1,)), "unigram": (2, (A, B))}
        if self.bigrams:
            blocks["bigram_prev"] = (2 + A * B, (A, A, B, B))
            blocks["bigram_next"] = (2 + A * B + A * A * B * B, (A, A, B, B))
        if self.n_scores:
            blocks["scores"] = (self._n_char_features, (self.n_scores,))
        return blocks

    def split_weights(self, w) -> dict[str, np.ndarray]:
        """Views of ``w`` per block (see :meth:`feature_blocks`)."""
        w = self._check_w(w)
        return {name: w[off:off + math.prod(shape)].reshape(shape)
                for name, (off, shape) in self.feature_blocks().items()}

    # --- examples -------------------------------------------------------------------------
    def _check_scores_match(self, k: int, where=None) -> None:
        """InputError (with the fix) when input with ``k`` scores per cell meets a model
        fitted with another number (``scores_refusal``)."""
        if k != self.n_scores:
            raise scores_refusal(self.n_scores, k, where, unit="character")

    def encode_pair(self, source: str, target: str) -> TranslitCorpus:
        """One raw word pair, featurised (characters unseen in training get id 0)."""
        check_word_pair(source, target)
        return self._encoder.make_pairs([source], [target])

    def subset(self, X, indices):
        return self._as_corpus(X).subset(indices)

    def as_batch(self, X) -> TranslitCorpus:
        return self._as_corpus(X)
