"""In-memory data of the grammaticality task: the body of ``make_dataset``.

``X`` is a list of sentences, each a string (tokenized as the sentence files are,
:func:`latentstruct.data.sentences.tokenize`) or a list of tokens; ``y`` binary labels (+1/-1,
1/0 or True/False; 1 = grammatical) or None; records are
:class:`~latentstruct.tasks.grammaticality.Sentence` without POS tags (the task's tagger tags
them in ``fit``/``featurize``, as it does sentences read from a file).  The checks are those
of the sentence reader (non-blank text, no NUL byte, the line limit), located as ``X[i]`` /
``y[i]`` instead of ``file:line``.  Nothing is sampled or held out: the dataset holds
exactly the given sentences, in order.
"""

from __future__ import annotations

from ...data.lm import BOS, EOS
from ...data.readers import MAX_LINE_CHARS
from ...data.sentences import tokenize
from ..base import Dataset
from ..validation import raw_binary_labels, raw_error, raw_examples, raw_string

__all__ = ["sentence_dataset"]


_RESERVED = (BOS, EOS)


def _tokens(value, i: int) -> tuple[str, ...]:
    """The tokens of sentence ``X[i]`` (a string, tokenized; or a list of tokens)."""
    if isinstance(value, str):
        raw_string(value, i, "the sentence", max_length=MAX_LINE_CHARS)
        return tuple(tokenize(value))  # non-blank text always holds a token
    if not isinstance(value, (list, tuple)):
        raise raw_error(f"expected a sentence: a string or a list of tokens, got "
                        f"{type(value).__name__} {value!r:.60}", i)
    if not value:
        raise raw_error("the sentence has no tokens; a sentence needs at least one", i)
    for k, tok in enumerate(value):
        raw_string(tok, i, f"token {k}", at=f"[{k}]", allow_space=False)
        if tok in _RESERVED:
            raise raw_error(f"token {k} is {tok!r}, the sentence-boundary symbol the n-gram "
                            f"features pad sentences with; it cannot occur inside a sentence",
                            i, at=f"[{k}]")
    size = sum(len(t) for t in value) + len(value) - 1
    if size > MAX_LINE_CHARS:
        raise raw_error(f"the sentence has {size:,} characters with its spaces, more than the "
                        f"sentence files' line limit of {MAX_LINE_CHARS:,} (it is refused, "
                        f"not cut)", i)
    return tuple(value)


def sentence_dataset(X, y, make_record) -> Dataset:
    """``GrammaticalityTask.make_dataset``: one ``make_record(tokens)`` per sentence (the
    task passes its ``Sentence``, without POS tags); targets +-1 int64 (or None each
    without ``y``)."""
    X, y = raw_examples(X, y, example="sentence (a string or a list of tokens)")
    records = [make_record(_tokens(x, i)) for i, x in enumerate(X)]
    return Dataset(records, [None] * len(records) if y is None else raw_binary_labels(y))
