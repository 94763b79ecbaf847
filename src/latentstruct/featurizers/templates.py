"""Token attributes of the chain's built-in templates (CRFsuite's chunking baseline), as a
scikit-learn transformer.

:class:`TokenTemplates` (and the function under it, :func:`token_attributes`) gives every
token its attribute strings (bias, word, lowercase, affixes, shape, window words and word
bigrams, and with POS input the window POS tags, bigrams and trigrams); :func:`word_shape`
collapses a word's character classes.  A :class:`~latentstruct.featurizers.Vocabulary` or
:class:`~latentstruct.featurizers.AttributeHasher` then turns the strings into ids.
"""

from __future__ import annotations

from collections.abc import Sequence

from sklearn.base import TransformerMixin

from ..exceptions import InputError
from ..limits import AFFIX_LENGTH, WINDOW
from ..params import bounded
from latentstruct.featurizers.base import Featurizer

__all__ = ["word_shape", "token_attributes", "TokenTemplates"]


#: word -> shape, for words seen before (bounded: a stream of new words stops filling it)
_SHAPES: dict = {}
_MAX_SHAPES = 1 << 18


def word_shape(word: str) -> str:
    """Collapsed character classes: ``Xx`` for ``Hello``, ``d.d`` for ``3.14``."""
    shape = _SHAPES.get(word)
    if shape is not None:
        return shape
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
    shape = "".join(out)
    if type(word) is str and len(_SHAPES) < _MAX_SHAPES:
        _SHAPES[word] = shape
    return shape


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
    # every template but the affixes, one column of n strings each, built sentence-wide
    # (the same strings, in the same order, as token by token: 'l[-1]=the', ...)
    columns = [["w=" + w for w in words], ["sh=" + word_shape(w) for w in words]]
    tail = [[f"l[{d}]=" + x for x in pad_l[pad + d:pad + d + n]]
            for d in range(-window, window + 1)]
    tail.append(["l[-1]|l[0]=" + a + "|" + b for a, b in zip(pad_l[pad - 1:], lower)])
    tail.append(["l[0]|l[1]=" + a + "|" + b for a, b in zip(lower, pad_l[pad + 1:])])
    if pos is not None:
        pad_p = ["<s>"] * pad + list(pos) + ["</s>"] * pad
        tail += [[f"p[{d}]=" + x for x in pad_p[pad + d:pad + d + n]]
                 for d in range(-window, window + 1)]
        tail += [[f"p[{d}]|p[{d + 1}]=" + a + "|" + b
                  for a, b in zip(pad_p[pad + d:pad + d + n], pad_p[pad + d + 1:])]
                 for d in range(-window, window)]
        tail += [[f"p[{d}..{d + 2}]=" + a + "|" + b + "|" + c
                  for a, b, c in zip(pad_p[pad + d:pad + d + n], pad_p[pad + d + 1:],
                                     pad_p[pad + d + 2:])]
                 for d in range(-window, window - 1)]
    heads = list(zip(*columns))
    tails = list(zip(*tail)) if tail else [()] * n
    affixes = [(f"p{k}=", f"s{k}=", k) for k in range(1, affix_length + 1)]
    out = []
    for t in range(n):
        lw = lower[t]
        attrs = ["b", *heads[t]]
        for p, s, k in affixes:
            if len(lw) < k:
                break
            attrs.append(p + lw[:k])
            attrs.append(s + lw[-k:])
        attrs += tails[t]
        out.append(attrs)
    return out


def _words_and_pos(sentence, k: int):
    """``(words, pos)`` of sentence ``k``: a word list, or a (words, tags) pair."""
    if isinstance(sentence, tuple) and len(sentence) == 2 and not isinstance(sentence[0], str):
        words, pos = sentence
        if pos is not None and len(pos) != len(words):
            raise InputError(f"sentence {k}: {len(words)} words but {len(pos)} POS tags; give "
                             f"one tag per word")
    else:
        words, pos = sentence, None
    if isinstance(words, (str, bytes)):
        raise InputError(f"sentence {k} is a string ({words[:40]!r}), expected a list of "
                         f"words; split it first (e.g. text.split())")
    bad = next((t for t, w in enumerate(words) if not isinstance(w, str)), None)
    if bad is not None:
        raise InputError(f"X[{k}][{bad}] is a {type(words[bad]).__name__}, expected a word "
                         f"(str)")
    return list(words), pos


class TokenTemplates(TransformerMixin, Featurizer):
    """Sentences to the attribute strings of their tokens (the chain's built-in templates).

    Learns nothing: ``fit`` checks the parameters; ``transform`` takes sentences, each a
    list of words or a ``(words, pos_tags)`` pair (the POS templates are used where tags
    are given), and gives per sentence, per token, the list of attribute strings.

    Parameters
    ----------
    window : int, default 2
        Context words (and tags) on each side.
    affix_length : int, default 3
        Longest prefix and suffix.

    Examples
    --------
    >>> TokenTemplates(window=0, affix_length=1).fit_transform([["Hi"]])[0][0]
    ['b', 'w=Hi', 'sh=Xx', 'p1=h', 's1=i', 'l[0]=hi', 'l[-1]|l[0]=<s>|hi', 'l[0]|l[1]=hi|</s>']
    """

    _parameter_constraints = {"window": [bounded(WINDOW)], "affix_length": [bounded(AFFIX_LENGTH)]}

    def __init__(self, window=2, affix_length=3):
        self.window = window
        self.affix_length = affix_length

    def fit(self, X=None, y=None) -> "TokenTemplates":
        return self

    def transform(self, X) -> list[list[list[str]]]:
        if isinstance(X, (str, bytes)):
            raise InputError("TokenTemplates.transform takes a list of sentences (word lists), "
                             "got a single string")
        out = []
        for k, sentence in enumerate(X):
            words, pos = _words_and_pos(sentence, k)
            out.append(token_attributes(words, pos, window=int(self.window),
                                        affix_length=int(self.affix_length)))
        return out
