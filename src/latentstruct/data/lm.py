"""A smoothed word trigram language model, for pseudo-negative sentences (Clifton & Sarkar
2013, §4, after Okanohara & Tsujii 2007): sentences sampled from a trigram model are
locally fluent but globally ungrammatical, and serve as the negative class.

Model
-----
Interpolated Kneser–Ney (Chen & Goodman 1999) with one absolute discount ``D`` for every
order.  Each sentence ``w1 .. wm`` is padded to ``<s> <s> w1 .. wm </s>`` and the model
predicts ``w1 .. wm </s>``.  With ``c(.)`` the trigram counts and ``N(.)`` numbers of
distinct n-gram types:

* trigram:  P3(w | u v) = max(c(u v w) - D, 0) / c(u v .)  +  D N(u v .) / c(u v .) * P2(w | v)
* bigram:   P2(w | v)   = max(N(. v w) - D, 0) / N(. v .)  +  D N(v .) / N(. v .)  * P1(w)
  where N(. v w) is the number of distinct words u seen before the bigram ``v w``
  (its continuation count) and N(v .) the number of distinct w with N(. v w) > 0;
* unigram:  P1(w)       = max(N(. w) - D, 0) / N(. .)      +  D N_types / N(. .)   / |V|
  with N(. w) the number of distinct words seen before ``w``, N_types the number of w with
  N(. w) > 0, and |V| the number of predictable words (every word type, ``</s>`` and
  ``<unk>``; ``<s>`` is never predicted).

A context never seen at some order skips that order (P3 = P2 when c(u v .) = 0; P2 = P1
when N(. v .) = 0).  Each level is a proper distribution for 0 < D <= 1, so the next-word
probabilities sum to one in every context.

Unknown words: a word seen fewer than ``min_count`` times in training, and any word not seen
at all, is read as ``<unk>``.  With the default ``min_count=1`` the training data holds no
``<unk>``, which then gets only the uniform share of P1: small but non-zero, so ``logprob``
is finite for every sentence.

Sampling
--------
Interpolated KN is a mixture: at each order the discounted counts and, with the remaining
weight D N(.)/c(.), the next lower order.  ``sample`` draws from it level by level: one
uniform number picks a seen continuation by binary search (``np.searchsorted``) in the
cumulative discounted counts of the context, or falls through to the lower order.  The
cumulative sums are computed once, for all contexts, when the model is fitted or loaded, so
a draw costs three binary searches and no loop over the vocabulary.  ``<unk>`` is never
emitted (it is removed from each next-word distribution, which is renormalised, by
redrawing) and sentences are drawn from the model conditioned on 1 <= length <= max_len
(by redrawing whole sentences), so every sample is a non-empty sentence that ended with
``</s>``.  Draws come only from ``np.random.default_rng(random_state)`` (or the Generator
passed), never from the global numpy or Python RNG: the same seed gives the same sentences.

Saving
------
``to_arrays`` gives plain numpy arrays (no pickle, no object dtype): the vocabulary as one
UTF-8 byte blob with offsets, and the trigram types as int arrays with their counts.  Every
other quantity (continuation counts, totals, cumulative sums) is recomputed by
``from_arrays``, so a restored model gives identical probabilities and identical samples.

Tokenization and corpus files are in :mod:`latentstruct.data.sentences`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from latentstruct.data.readers.lines import excerpt
from latentstruct.exceptions import ConfigError, InputError, ModelFormatError, check_is_fitted
from latentstruct.params import CheckedParams, Interval, skip_parameter_validation, validate_params

__all__ = ["BOS", "EOS", "UNK", "TrigramLM"]

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
_BOS, _EOS, _UNK = 0, 1, 2
_RESERVED = frozenset((BOS, EOS, UNK))
_FORMAT_VERSION = 1
_KIND = "trigram_kn"
_MAX_ATTEMPTS = 1000


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _check_sentence(sentence, what: str) -> None:
    """Raise InputError unless ``sentence`` is a non-empty sequence of ordinary tokens."""
    if isinstance(sentence, str):
        raise InputError(
            f"{what} is a string ({sentence[:40]!r}); expected a list of tokens, e.g. "
            f"tokenize(text)"
        )
    try:
        n = len(sentence)
    except TypeError:
        raise InputError(
            f"{what} is a {type(sentence).__name__}; expected a list of tokens"
        ) from None
    if n == 0:
        raise InputError(f"{what} is empty; a sentence needs at least one token")
    for k, tok in enumerate(sentence):
        if not isinstance(tok, str) or not tok:
            raise InputError(
                f"{what}: token {k} is {excerpt(tok)}; expected a non-empty string"
            )
        if tok in _RESERVED:
            raise InputError(
                f"{what}: token {k} is the reserved symbol {excerpt(tok)}; {BOS}, {EOS} and {UNK} "
                f"are added by the model and cannot occur in its input"
            )


def _make_rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise ConfigError(
        f"random_state must be None, an int seed or a numpy Generator, got {random_state!r}"
    )


def _unique_rows(*cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start indices of runs of equal rows in lexicographically sorted columns, and run
    lengths."""
    n = cols[0].size
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
        for c in cols:
            new[1:] |= c[1:] != c[:-1]
    starts = np.flatnonzero(new)
    return starts, np.diff(np.append(starts, n))


def _get(arrays, key: str) -> np.ndarray:
    try:
        return np.asarray(arrays[key])
    except KeyError:
        raise ModelFormatError(
            f"language model array {key!r} is missing; the arrays hold "
            f"{sorted(arrays.keys())!r}"
        ) from None


class _Uniforms:
    """Uniform [0, 1) numbers from a Generator, drawn in blocks (deterministic order)."""

    __slots__ = ("rng", "buf", "pos")

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.buf = rng.random(4096).tolist()
        self.pos = 0

    def next(self) -> float:
        if self.pos == len(self.buf):
            self.buf = self.rng.random(4096).tolist()
            self.pos = 0
        x = self.buf[self.pos]
        self.pos += 1
        return x


# --------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------
class TrigramLM(CheckedParams):
    """Interpolated Kneser–Ney word trigram model (see the module docstring).

    Parameters
    ----------
    discount : float in (0, 1], default 0.75
        The absolute discount D of every order.
    min_count : int >= 1, default 1
        Words seen fewer times in training are read as ``<unk>``.

    Attributes (after ``fit``)
    --------------------------
    vocabulary_ : list of str
        ``<s>``, ``</s>``, ``<unk>``, then the words by decreasing count (ties by string).
    n_sentences_, n_tokens_ : int
        Training sentences and tokens (without padding or ``</s>``).
    n_trigram_types_ : int
        Distinct trigrams (including the padded ones).
    """

    def __init__(self, discount: float = 0.75, min_count: int = 1):
        self.discount = discount
        self.min_count = min_count

    # validation ------------------------------------------------------------------------
    #: what each hyperparameter may be (``latentstruct.params``); checked on entering ``fit``
    #: (``params.CheckedParams``: once, and not inside a task's fit that checked already)
    _parameter_constraints = {"discount": [Interval(float, 0.0, 1.0, closed="right")],
                              "min_count": [Interval(int, 1)]}

    def _check_param_values(self) -> None:
        validate_params("TrigramLM", self._parameter_constraints,
                        {"discount": self.discount, "min_count": self.min_count})

    _fit_hint = "Call 'fit' with a list of tokenized sentences before using it."

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "vocabulary_")

    # fitting ---------------------------------------------------------------------------
    def fit(self, sentences_tokens: Iterable[Sequence[str]]) -> "TrigramLM":
        """Count the trigrams of ``sentences_tokens`` (lists of tokens); returns ``self``.

        Raises ``InputError`` for an empty corpus, an empty sentence, a token that is not a
        non-empty string, or a reserved symbol (``<s>``, ``</s>``, ``<unk>``) in the input.
        """
        if isinstance(sentences_tokens, str):
            raise InputError(
                "fit needs a list of tokenized sentences, got a single string; use "
                "[tokenize(line) for line in lines] or read_sentences(path)"
            )
        sentences = list(sentences_tokens)
        if not sentences:
            raise InputError("the training corpus holds no sentences; pass at least one")
        counts: Counter = Counter()
        for k, s in enumerate(sentences):
            _check_sentence(s, f"training sentence {k}")
            counts.update(s)
        min_count = int(self.min_count)
        words = sorted((w for w, c in counts.items() if c >= min_count),
                       key=lambda w: (-counts[w], w))
        vocab = [BOS, EOS, UNK] + words
        ids = {w: i for i, w in enumerate(vocab)}
        get = ids.get
        flat: list[int] = []
        for s in sentences:
            flat.append(_BOS)
            flat.append(_BOS)
            flat.extend([get(w, _UNK) for w in s])
            flat.append(_EOS)
        a = np.asarray(flat, dtype=np.int64)
        pos = np.flatnonzero(a != _BOS)  # every predicted token has two tokens before it
        u, v, w = a[pos - 2], a[pos - 1], a[pos]
        order = np.lexsort((w, v, u))
        u, v, w = u[order], v[order], w[order]
        starts, runs = _unique_rows(u, v, w)
        self._set_counts(vocab, u[starts], v[starts], w[starts], runs)
        self.n_sentences_ = len(sentences)
        self.n_tokens_ = int(sum(counts.values()))
        return self

    def _set_counts(self, vocab, tri_u, tri_v, tri_w, tri_c) -> None:
        """Store the trigram types (sorted by u, v, w) and derive everything else."""
        d = float(self.discount)
        V = len(vocab)
        self.vocabulary_ = list(vocab)
        self._ids = {w: i for i, w in enumerate(vocab)}
        idt = np.int32 if V < 2**31 else np.int64
        self._tri_u = tri_u.astype(idt)
        self._tri_v = tri_v.astype(idt)
        self._tri_w = tri_w.astype(idt)
        self._tri_c = tri_c.astype(np.int64)
        self.n_trigram_types_ = int(tri_c.size)
        # trigram contexts (u, v): contiguous runs of the sorted types
        key = tri_u.astype(np.int64) * V + tri_v.astype(np.int64)
        ctx_starts, ctx_len = _unique_rows(key)
        self._t_keys = key[ctx_starts]
        self._t_off = np.append(ctx_starts, key.size).astype(np.int64)
        cum_c = np.concatenate(([0], np.cumsum(self._tri_c)))
        self._t_total = cum_c[self._t_off[1:]] - cum_c[self._t_off[:-1]]
        self._t_types = ctx_len.astype(np.int64)
        self._t_cum = np.concatenate(([0.0], np.cumsum(np.maximum(self._tri_c - d, 0.0))))
        # bigram level: continuation counts N(. v w) = trigram types ending in (v, w)
        order = np.lexsort((tri_w, tri_v))
        bv, bw = tri_v[order].astype(np.int64), tri_w[order].astype(np.int64)
        b_starts, b_n = _unique_rows(bv, bw)
        self._b_w = bw[b_starts].astype(idt)
        self._b_n = b_n.astype(np.int64)
        b_v = bv[b_starts]
        self._b_off = np.concatenate(([0], np.cumsum(np.bincount(b_v, minlength=V))))
        cum_n = np.concatenate(([0], np.cumsum(self._b_n)))
        self._b_total = cum_n[self._b_off[1:]] - cum_n[self._b_off[:-1]]
        self._b_types = np.diff(self._b_off)
        self._b_cum = np.concatenate(([0.0], np.cumsum(np.maximum(self._b_n - d, 0.0))))
        # unigram level: N(. w) = bigram types ending in w, interpolated with uniform
        u_n = np.bincount(self._b_w, minlength=V).astype(np.int64)
        total = float(u_n.sum())
        n_types = float(np.count_nonzero(u_n))
        p1 = np.maximum(u_n - d, 0.0) / total + d * n_types / total / (V - 1)
        p1[_BOS] = 0.0
        self._p1 = p1
        self._p1_cdf = np.cumsum(p1)
        # the same numbers as Python lists, for fast scalar access while sampling
        self._t_total_l = self._t_total.tolist()
        self._t_off_l = self._t_off.tolist()
        self._b_total_l = self._b_total.tolist()
        self._b_off_l = self._b_off.tolist()
        self._b_types_l = self._b_types.tolist()
        self._t_types_l = self._t_types.tolist()

    # probabilities ---------------------------------------------------------------------
    def _context_ids(self, context) -> tuple[int, int]:
        if isinstance(context, str):
            raise InputError(
                f"context must be a sequence of previous words, got the string {excerpt(context)}; "
                f"use e.g. ('the', 'stock')"
            )
        ctx = [BOS, BOS] + list(context)
        ids = []
        for tok in ctx[-2:]:
            if not isinstance(tok, str):
                raise InputError(f"context word {excerpt(tok)} is not a string")
            if tok == EOS:
                raise InputError(f"{EOS} cannot occur in a context: nothing follows it")
            ids.append(self._ids.get(tok, _UNK))
        return ids[0], ids[1]

    def _find_context(self, u: int, v: int) -> int:
        key = u * len(self.vocabulary_) + v
        i = int(np.searchsorted(self._t_keys, key))
        if i < self._t_keys.size and self._t_keys[i] == key:
            return i
        return -1

    def _prob(self, u: int, v: int, w: int) -> float:
        d = float(self.discount)
        p = float(self._p1[w])
        a, b = self._b_off_l[v], self._b_off_l[v + 1]
        if b > a:
            j = a + int(np.searchsorted(self._b_w[a:b], w))
            n = int(self._b_n[j]) if j < b and self._b_w[j] == w else 0
            p = (max(n - d, 0.0) + d * self._b_types_l[v] * p) / self._b_total_l[v]
        ci = self._find_context(u, v)
        if ci >= 0:
            a, b = self._t_off_l[ci], self._t_off_l[ci + 1]
            j = a + int(np.searchsorted(self._tri_w[a:b], w))
            c = int(self._tri_c[j]) if j < b and self._tri_w[j] == w else 0
            p = (max(c - d, 0.0) + d * self._t_types_l[ci] * p) / self._t_total_l[ci]
        return p

    def prob(self, word: str, context: Sequence[str] = ()) -> float:
        """P(word | the last two words of ``context``); a shorter context is padded with
        ``<s>`` (``()`` is the start of a sentence).  ``word`` may be ``</s>``; unknown
        words get the probability of ``<unk>``."""
        check_is_fitted(self)
        if not isinstance(word, str):
            raise InputError(f"word must be a string, got {excerpt(word)}")
        if word == BOS:
            raise InputError(f"{BOS} is never predicted; ask for a word or {EOS}")
        u, v = self._context_ids(context)
        return self._prob(u, v, self._ids.get(word, _UNK))

    def next_word_probs(self, context: Sequence[str] = ()) -> np.ndarray:
        """P(w | context) for every w in ``vocabulary_`` (0 for ``<s>``); sums to one."""
        check_is_fitted(self)
        u, v = self._context_ids(context)
        d = float(self.discount)
        p = self._p1.copy()
        a, b = self._b_off_l[v], self._b_off_l[v + 1]
        if b > a:
            p *= d * self._b_types_l[v]
            p[self._b_w[a:b]] += np.maximum(self._b_n[a:b] - d, 0.0)
            p /= self._b_total_l[v]
        ci = self._find_context(u, v)
        if ci >= 0:
            a, b = self._t_off_l[ci], self._t_off_l[ci + 1]
            p *= d * self._t_types_l[ci]
            p[self._tri_w[a:b]] += np.maximum(self._tri_c[a:b] - d, 0.0)
            p /= self._t_total_l[ci]
        return p

    def logprob(self, tokens: Sequence[str]) -> float:
        """Natural-log probability of the sentence ``tokens`` followed by ``</s>``.

        Unknown words count as ``<unk>``, so the result is always finite.  Raises
        ``InputError`` for an empty sentence or a reserved symbol.
        """
        check_is_fitted(self)
        _check_sentence(tokens, "the sentence")
        get = self._ids.get
        ids = [_BOS, _BOS] + [get(t, _UNK) for t in tokens] + [_EOS]
        return float(sum(math.log(self._prob(ids[i - 2], ids[i - 1], ids[i]))
                         for i in range(2, len(ids))))

    # sampling --------------------------------------------------------------------------
    def _draw(self, u: int, v: int, unif: _Uniforms) -> int:
        ci = self._find_context(u, v)
        if ci >= 0:
            a, b = self._t_off_l[ci], self._t_off_l[ci + 1]
            base = self._t_cum[a]
            seen = self._t_cum[b] - base
            x = unif.next() * self._t_total_l[ci]
            if x < seen:
                j = int(np.searchsorted(self._t_cum, base + x, side="right")) - 1
                return int(self._tri_w[min(max(j, a), b - 1)])
        a, b = self._b_off_l[v], self._b_off_l[v + 1]
        if b > a:
            base = self._b_cum[a]
            seen = self._b_cum[b] - base
            x = unif.next() * self._b_total_l[v]
            if x < seen:
                j = int(np.searchsorted(self._b_cum, base + x, side="right")) - 1
                return int(self._b_w[min(max(j, a), b - 1)])
        cdf = self._p1_cdf
        j = int(np.searchsorted(cdf, unif.next() * cdf[-1], side="right"))
        return min(max(j, 1), cdf.size - 1)

    def sample(self, n: int, random_state=None, max_len: int = 60) -> list[list[str]]:
        """Draw ``n`` sentences (token lists, without ``<s>``/``</s>``) from the model.

        Sentences are drawn conditioned on 1 <= length <= ``max_len`` and without
        ``<unk>`` (see the module docstring).  ``random_state``: an int seed (the same seed
        gives the same sentences), a numpy Generator (which is advanced), or None for fresh
        OS entropy.  Raises ``ConfigError`` if 1,000 draws in a row are too long.
        """
        check_is_fitted(self)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ConfigError(f"n must be an int >= 0, got {n!r}")
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 1:
            raise ConfigError(f"max_len must be an int >= 1, got {max_len!r}")
        vocab = self.vocabulary_
        if len(vocab) == 3 and n:
            raise ConfigError(
                f"cannot sample: every training word was read as {UNK} (min_count="
                f"{self.min_count}), so the model has no word to emit; lower min_count"
            )
        unif = _Uniforms(_make_rng(random_state))
        out = []
        for _ in range(int(n)):
            for _attempt in range(_MAX_ATTEMPTS):
                u, v = _BOS, _BOS
                words: list[int] = []
                while True:
                    w = self._draw(u, v, unif)
                    if w == _UNK:
                        continue
                    if w == _EOS or len(words) == max_len:
                        break
                    words.append(w)
                    u, v = v, w
                if w == _EOS and words:
                    break
            else:
                raise ConfigError(
                    f"could not draw a sentence of 1..{max_len} words in {_MAX_ATTEMPTS} "
                    f"attempts (every draw was empty or longer than max_len); raise max_len"
                )
            out.append([vocab[i] for i in words])
        return out

    # saving ----------------------------------------------------------------------------
    def to_arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        """Plain numpy arrays (no object dtype, no pickle) that ``from_arrays`` restores."""
        check_is_fitted(self)
        encoded = [w.encode("utf-8", "surrogatepass") for w in self.vocabulary_]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return {
            prefix + "kind": np.array(_KIND, dtype=f"<U{len(_KIND)}"),
            prefix + "format_version": np.array(_FORMAT_VERSION, dtype=np.int64),
            prefix + "discount": np.array(float(self.discount), dtype=np.float64),
            prefix + "min_count": np.array(int(self.min_count), dtype=np.int64),
            prefix + "n_sentences": np.array(self.n_sentences_, dtype=np.int64),
            prefix + "n_tokens": np.array(self.n_tokens_, dtype=np.int64),
            prefix + "vocab_utf8": np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
            prefix + "vocab_offsets": offsets,
            prefix + "tri_u": self._tri_u.copy(),
            prefix + "tri_v": self._tri_v.copy(),
            prefix + "tri_w": self._tri_w.copy(),
            prefix + "tri_count": self._tri_c.copy(),
        }

    @classmethod
    def from_arrays(cls, arrays, prefix: str = "") -> "TrigramLM":
        """Rebuild a fitted model from ``to_arrays`` output; ``ModelFormatError`` when the
        arrays are missing, of another kind or version, or inconsistent."""
        kind = str(_get(arrays, prefix + "kind"))
        if kind != _KIND:
            raise ModelFormatError(f"arrays hold a {kind!r}, expected a {_KIND!r} model")
        version = int(_get(arrays, prefix + "format_version"))
        if version != _FORMAT_VERSION:
            raise ModelFormatError(
                f"trigram model format version {version} is not supported (this version "
                f"reads {_FORMAT_VERSION}); re-fit the language model"
            )
        model = cls(
            discount=float(_get(arrays, prefix + "discount")),
            min_count=int(_get(arrays, prefix + "min_count")),
        )
        try:
            with skip_parameter_validation(False):  # a file's values: always checked
                model.check_params()
        except ConfigError as exc:
            raise ModelFormatError(f"stored hyperparameters are invalid: {exc}") from None
        blob = _get(arrays, prefix + "vocab_utf8")
        offsets = _get(arrays, prefix + "vocab_offsets")
        if (
            blob.dtype != np.uint8 or blob.ndim != 1 or offsets.ndim != 1
            or offsets.dtype.kind not in "iu" or offsets.size < 4 or offsets[0] != 0
            or offsets[-1] != blob.size or np.any(np.diff(offsets) < 0)
        ):
            raise ModelFormatError("language model vocabulary arrays are inconsistent")
        data = blob.tobytes()
        bounds = offsets.tolist()
        try:
            vocab = [data[a:b].decode("utf-8", "surrogatepass")
                     for a, b in zip(bounds[:-1], bounds[1:])]
        except UnicodeDecodeError as exc:
            raise ModelFormatError(f"vocabulary is not valid UTF-8 ({exc})") from None
        if vocab[:3] != [BOS, EOS, UNK] or len(set(vocab)) != len(vocab):
            raise ModelFormatError(
                "language model vocabulary must start with <s>, </s>, <unk> and hold no "
                "duplicates"
            )
        V = len(vocab)
        cols = [_get(arrays, prefix + k) for k in ("tri_u", "tri_v", "tri_w", "tri_count")]
        sizes = {c.size for c in cols}
        if any(c.ndim != 1 or c.dtype.kind not in "iu" for c in cols) or len(sizes) != 1:
            raise ModelFormatError("trigram arrays must be 1-d integer arrays of one length")
        u, v, w, c = (x.astype(np.int64) for x in cols)
        if u.size == 0:
            raise ModelFormatError("trigram arrays are empty")
        if (
            min(u.min(), v.min(), w.min()) < 0 or max(u.max(), v.max(), w.max()) >= V
            or np.any(w == _BOS) or np.any(v == _EOS) or np.any(u == _EOS)
            or c.min() < 1
        ):
            raise ModelFormatError("trigram arrays hold out-of-range ids or counts")
        less = (u[:-1] < u[1:]) | (
            (u[:-1] == u[1:]) & ((v[:-1] < v[1:]) | ((v[:-1] == v[1:]) & (w[:-1] < w[1:])))
        )
        if not np.all(less):
            raise ModelFormatError("trigram types must be unique and sorted by (u, v, w)")
        model._set_counts(vocab, u, v, w, c)
        model.n_sentences_ = int(_get(arrays, prefix + "n_sentences"))
        model.n_tokens_ = int(_get(arrays, prefix + "n_tokens"))
        return model

    def __repr__(self) -> str:
        state = (f", |V|={len(self.vocabulary_)}, trigram types={self.n_trigram_types_}"
                 if hasattr(self, "vocabulary_") else "")
        return f"TrigramLM(discount={self.discount}, min_count={self.min_count}{state})"
