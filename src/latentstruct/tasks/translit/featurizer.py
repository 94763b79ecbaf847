"""Word pairs to encoded characters: :class:`TranslitFeaturizer`.

The featurizer of the transliteration task, in scikit-learn's transformer style: ``fit``
learns the source and target alphabets (the characters of the training words, lowercased
one by one where that keeps one character, sorted; id 0 is the unknown character and the
word boundary) and the number of the user's character-pair score columns; ``transform``
encodes the words of every pair into a :class:`~latentstruct.tasks.translit.corpus.
TranslitCorpus` (each distinct source and target word once), the input of the alignment
decoder.  The character-pair features themselves (unigram and bigram mappings) are indexed
by the ids in the task's weight layout (``feature_blocks``), which the compiled kernels
read, so the alphabets are all the featurizer has to learn.

Records are what a task's ``Dataset`` holds: ``(source, target)`` 2-tuples of strings (a
:class:`~latentstruct.tasks.translit.raw.ScoredWordPair` carries the user's scores).
``fit`` and ``transform`` take a ``Dataset`` (whose ``path`` places errors in a file) or a
list of records.

Why lists and not a ``featurizers.Vocabulary``: an alphabet is sorted, not in first-seen
order, and its ids start at 1; model files store the two lists as they are.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ...data.readers import excerpt
from ...exceptions import InputError, check_is_fitted
from ..base import Dataset
from ..pairs.scores import scores_refusal
from .corpus import TranslitCorpus
from .raw import n_char_scores, record_scores

__all__ = ["TranslitFeaturizer", "check_word_pairs", "lower_char"]


def lower_char(ch: str) -> str:
    """``ch`` lowercased when that keeps one character (else unchanged)."""
    low = ch.lower()
    return low if len(low) == 1 else ch


def check_word_pairs(records, where=None) -> None:
    """InputError unless every record is a ``(source, target)`` pair of strings."""
    for k, rec in enumerate(records):
        if (not isinstance(rec, tuple) or len(rec) != 2
                or not isinstance(rec[0], str) or not isinstance(rec[1], str)):
            raise InputError(f"record {k} must be a (source, target) pair of strings, got "
                             f"{excerpt(rec)}", where)


def _records(X) -> tuple[list, object]:
    if isinstance(X, Dataset):
        return X.records, X.path
    return list(X), None


class TranslitFeaturizer(TransformerMixin, BaseEstimator):
    """Word pairs to a :class:`~latentstruct.tasks.translit.corpus.TranslitCorpus`
    (module docstring).  It has no parameters.

    Attributes
    ----------
    source_alphabet_, target_alphabet_ : list of str
        The training words' characters (lowercased), sorted; character ``c`` has id
        ``alphabet.index(c) + 1``.
    n_pair_scores_ : int
        k, the user's scores per character pair it was fitted with (0: none).
    """

    @classmethod
    def from_alphabets(cls, source, target, n_pair_scores: int = 0) -> "TranslitFeaturizer":
        """A fitted featurizer from saved alphabets (a model file's)."""
        self = cls()
        self._set_alphabets(source, target)
        self.n_pair_scores_ = int(n_pair_scores)
        return self

    def _set_alphabets(self, src, tgt) -> None:
        self.source_alphabet_ = list(src)
        self.target_alphabet_ = list(tgt)
        self._src_id = {c: k + 1 for k, c in enumerate(self.source_alphabet_)}
        self._tgt_id = {c: k + 1 for k, c in enumerate(self.target_alphabet_)}

    def fit(self, X, y=None) -> "TranslitFeaturizer":
        """Learn the alphabets and the number of score columns from the pairs of ``X``."""
        records, where = _records(X)
        check_word_pairs(records, where)
        src = sorted({lower_char(c) for s, _ in records for c in s})
        tgt = sorted({lower_char(c) for _, t in records for c in t})
        self._set_alphabets(src, tgt)
        self.n_pair_scores_ = n_char_scores(records, where)
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "source_alphabet_")

    @property
    def n_source_chars(self) -> int:
        """A: source alphabet size including id 0 (unknown / boundary)."""
        check_is_fitted(self)
        return len(self.source_alphabet_) + 1

    @property
    def n_target_chars(self) -> int:
        """B: target alphabet size including id 0 (unknown / boundary)."""
        check_is_fitted(self)
        return len(self.target_alphabet_) + 1

    def check_n_scores(self, k: int, where=None) -> None:
        """InputError (with the fix) when input with ``k`` scores per cell meets a
        featurizer fitted with another number."""
        fitted = int(getattr(self, "n_pair_scores_", 0))
        if k != fitted:
            raise scores_refusal(fitted, k, where, unit="character")

    @staticmethod
    def _encode(word: str, table: dict) -> np.ndarray:
        return np.fromiter((table.get(lower_char(c), 0) for c in word), np.int64, len(word))

    def make_pairs(self, sources, targets, pairs=None, pair_scores=None) -> TranslitCorpus:
        """Encode word lists once; pair k is (sources[pair_src[k]], targets[pair_tgt[k]]).

        ``pairs=None`` builds all ``len(sources) * len(targets)`` cross pairs, (i, j) at
        position ``i * len(targets) + j``; otherwise ``pairs = (pair_src, pair_tgt)``.
        ``pair_scores``: None or one (m x n x k) array per pair (the user's scores).
        Characters outside the alphabets get id 0.
        """
        check_is_fitted(self)
        sources, targets = list(sources), list(targets)
        for what, words in (("source", sources), ("target", targets)):
            for w in words:
                if not isinstance(w, str):
                    raise InputError(f"{what} words must be strings, got {excerpt(w)}")
        s = [self._encode(x, self._src_id) for x in sources]
        t = [self._encode(x, self._tgt_id) for x in targets]

        def pool(words):
            off = np.zeros(len(words) + 1, np.int64)
            np.cumsum([w.shape[0] for w in words], out=off[1:])
            return (np.concatenate(words) if words else np.zeros(0, np.int64)), off

        sc, so = pool(s)
        tc, to = pool(t)
        if pairs is None:
            ps = np.repeat(np.arange(len(sources), dtype=np.int64), len(targets))
            pt = np.tile(np.arange(len(targets), dtype=np.int64), len(sources))
        else:
            ps, pt = (np.asarray(a, dtype=np.int64) for a in pairs)
        return TranslitCorpus(sc, so, tc, to, ps, pt, sources, targets, pair_scores)

    def transform(self, X) -> TranslitCorpus:
        """The pairs of ``X``, each distinct source and target word encoded once; refuses
        records with another number of character-pair scores than ``fit``'s."""
        check_is_fitted(self)
        records, where = _records(X)
        check_word_pairs(records, where)
        k = n_char_scores(records, where)
        self.check_n_scores(k, where)
        scores = [record_scores(r) for r in records] if k else None
        src_index: dict[str, int] = {}
        tgt_index: dict[str, int] = {}
        ps = np.fromiter((src_index.setdefault(s, len(src_index)) for s, _ in records),
                         np.int64, len(records))
        pt = np.fromiter((tgt_index.setdefault(t, len(tgt_index)) for _, t in records),
                         np.int64, len(records))
        return self.make_pairs(list(src_index), list(tgt_index), (ps, pt), scores)
