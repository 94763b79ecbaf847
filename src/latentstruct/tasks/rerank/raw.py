"""In-memory k-best lists of the ``rerank`` task: the body of ``RerankTask.make_dataset``.

Plain form of one sentence ``X[i]``::

    (words, pos, candidates)
    words      : list of n strings
    pos        : list of n POS tags (UD UPOS or PTB tags: both columns get them)
    candidates : list of 1..MAX_K trees, best first, each (heads, deprels, score)
        heads  : n ints, 1-based heads with 0 = root, forming a tree of the n words
        deprels: n relation strings, or None for an unlabelled parser ("_" each)
        score  : the base parser's score of the tree (a finite number); candidates must be
                 sorted by decreasing score, as in a k-best file

or ``(words, pos, candidates, numbers)`` with ``numbers`` an (n_candidates x d) array
(dense, nested lists or ``scipy.sparse``): row j holds real-valued features of candidate j
(another model's scores, say), added to the candidate's score outside the hidden-variable
part (:mod:`latentstruct.tasks.rerank.task`).  Every example of ``X`` is given one way, with
the same d; the record is then a :class:`NumberedKBestSentence`.

and its gold tree ``y[i]``: n heads (ints in 0..n), or n ``(head, deprel)`` pairs, or None
(an unannotated sentence).  Each field goes through the k-best reader's check
(:mod:`latentstruct.data.dependency.kbest`: ``check_strings``, ``check_tree``, ``check_gold_heads``,
``check_candidate_score``) located as ``X[i][2][j]`` instead of ``file:line``, and the
records are the :class:`~latentstruct.data.dependency.kbest.KBestSentence` the reader builds, so
``fit``, ``featurize`` and ``evaluate`` are unchanged.

What a k-best file says and the plain form does not:

* ``id`` is ``str(i)``; lemmas are ``"_"`` (unknown; the features never use them);
* ``scored`` (the tokens UAS/LAS count) follows the punctuation conventions of
  :func:`latentstruct.data.dependency.punctuation_mask` on the given tags: a token is not
  scored when its tag is UD ``PUNCT`` or one of the PTB punctuation tags
  (:data:`~latentstruct.data.dependency.PTB_PUNCTUATION_TAGS`; the two tag sets share none);
* the header: ``parser_id`` is the ``parser_id`` argument (default
  :data:`IN_MEMORY_PARSER_ID`), ``k`` the longest candidate list, ``single_root`` true when
  every candidate has one root word, ``labelled`` when some relation is not ``"_"``, ``pos``
  ``"predicted"`` and ``source`` ``"<in-memory>"`` (the last two are descriptive only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...data.dependency import PTB_PUNCTUATION_TAGS, UD_PUNCTUATION_UPOS
from ...data.dependency.kbest import (
    MAX_K,
    MAX_WORDS,
    KBestCandidate,
    KBestHeader,
    KBestSentence,
    check_candidate_score,
    check_gold_heads,
    check_strings,
    check_tree,
)
from ...exceptions import InputError
from ..base import Dataset
from ..validation import raw_error, raw_examples, raw_string
from ..dependency.numbers import number_rows, same_columns
from .data import kbest_dataset

__all__ = ["IN_MEMORY_PARSER_ID", "kbest_raw_dataset", "candidate_indices",
           "NumberedKBestSentence", "numbers_kind"]


@dataclass(frozen=True)
class NumberedKBestSentence(KBestSentence):
    """A ``KBestSentence`` given with per-candidate numbers: ``numbers`` is an
    (n_candidates x d) float64 CSR matrix (sorted columns, no explicit zeros)."""

    numbers: Any = field(default=None, compare=False, repr=False)

#: the ``parser_id`` of in-memory k-best lists unless ``make_dataset`` is told another: one
#: family for every list given in memory (a reranker trained on them accepts them all)
IN_MEMORY_PARSER_ID = "in-memory"
_NOT_SCORED = frozenset(PTB_PUNCTUATION_TAGS) | {UD_PUNCTUATION_UPOS}


def _seq(value, i: int, at: str, what: str, expected: str, *, name: str = "X") -> list:
    if not isinstance(value, (list, tuple)):
        raise raw_error(f"{what} must be {expected}, got {type(value).__name__} "
                        f"{value!r:.60}", i, at=at, what=name)
    return list(value)


def _sentence(x, i: int, gold) -> tuple[KBestSentence, bool]:
    """``X[i]`` (and its gold tree) as a KBestSentence (a NumberedKBestSentence when it has
    numbers), and whether every candidate has one root word."""
    parts = _seq(x, i, "", "a k-best sentence", "a tuple (words, pos, candidates)")
    if len(parts) not in (3, 4):
        raise raw_error(f"a k-best sentence must be a tuple (words, pos, candidates), got "
                        f"{len(parts)} elements (or, with per-candidate numbers, (words, pos, "
                        f"candidates, numbers))", i)
    words, pos, cands = parts[:3]
    words = _seq(words, i, "[0]", "words", f"a list of 1..{MAX_WORDS} strings")
    if not 1 <= len(words) <= MAX_WORDS:
        raise raw_error(f"words must be a list of 1..{MAX_WORDS} strings, got {len(words)}",
                        i, at="[0]")
    n = len(words)
    for k, w in enumerate(words):
        raw_string(w, i, f"word {k + 1}", at=f"[0][{k}]")
    words = check_strings(words, n, "words", f"X[{i}][0]")
    pos = check_strings(_seq(pos, i, "[1]", "pos", f"a list of {n} tags"), n, "pos",
                        f"X[{i}][1]")
    cands = _seq(cands, i, "[2]", "candidates", f"a list of 1..{MAX_K} (heads, deprels, "
                 f"score) trees")
    if not 1 <= len(cands) <= MAX_K:
        raise raw_error(f"candidates must be a list of 1..{MAX_K} trees, got {len(cands)}",
                        i, at="[2]")
    out, single = [], True
    for j, c in enumerate(cands):
        where, at = f"X[{i}][2][{j}]", f"[2][{j}]"
        c = _seq(c, i, at, f"candidate {j}", "a tuple (heads, deprels, score)")
        if len(c) != 3:
            raise raw_error(f"candidate {j} must be a tuple (heads, deprels, score), got "
                            f"{len(c)} elements", i, at=at)
        heads = check_tree(c[0], n, False, "heads", where)
        single = single and sum(1 for h in heads if h == 0) == 1
        deprels = ("_",) * n if c[1] is None else check_strings(c[1], n, "deprels", where)
        score = check_candidate_score(c[2], out[-1].score if out else None,
                                      f"candidate {j}", f"X[{i}][2]")
        out.append(KBestCandidate(heads, deprels, score))
    gold_heads = gold_deprels = None
    if gold is not None:
        gold_heads, gold_deprels = _gold(gold, n, i)
    fields_ = dict(
        id=str(i), words=words, lemmas=("_",) * n, upos=pos, xpos=pos,
        scored=tuple(t not in _NOT_SCORED for t in pos), gold_heads=gold_heads,
        gold_deprels=gold_deprels, candidates=tuple(out))
    if len(parts) == 4:
        numbers = number_rows(parts[3], len(out), f"X[{i}][3]", row="candidate",
                              example=f"example {i}")
        return NumberedKBestSentence(**fields_, numbers=numbers), single
    return KBestSentence(**fields_), single


def _gold(value, n: int, i: int):
    """(heads, deprels or None) of ``y[i]``: n heads, or n (head, deprel) pairs."""
    value = _seq(value, i, "", "the gold tree", f"a list of {n} heads or {n} (head, deprel) "
                 f"pairs", name="y")
    if any(isinstance(v, (list, tuple)) for v in value):
        bad = next((k for k, v in enumerate(value)
                    if not isinstance(v, (list, tuple)) or len(v) != 2), None)
        if bad is not None:
            raise raw_error(f"the gold tree must be {n} heads or {n} (head, deprel) pairs; "
                            f"entry {bad} is {value[bad]!r:.40}, not a (head, deprel) pair",
                            i, what="y")
        heads = check_gold_heads([v[0] for v in value], n, "the gold heads", f"y[{i}]",
                                 none="None")
        return heads, check_strings([v[1] for v in value], n, "the gold deprels", f"y[{i}]")
    return check_gold_heads(value, n, "the gold heads", f"y[{i}]", none="None"), None


def kbest_raw_dataset(X, y=None, *, parser_id: str = IN_MEMORY_PARSER_ID,
                      n_columns: int | None = None) -> Dataset:
    """``RerankTask.make_dataset``: KBestSentence records with an in-memory header (see the
    module docstring); the targets are the records, as ``read`` gives them.  ``n_columns``:
    the number columns of a model fitted with them (None: any, the same for every
    example)."""
    if not isinstance(parser_id, str) or not parser_id:
        raise InputError(f"parser_id must be a non-empty string (the parser that wrote the "
                         f"lists), got {parser_id!r}")
    X, y = raw_examples(X, y, example="k-best sentence (words, pos, candidates)")
    sentences, single = [], True
    first = expected = None
    for i, x in enumerate(X):
        sent, one_root = _sentence(x, i, None if y is None else y[i])
        numbered = isinstance(sent, NumberedKBestSentence)
        if first is None:
            first = numbered
        elif numbered != first:
            shown = {True: "has numbers (4 elements)", False: "has none (3 elements)"}
            raise raw_error(f"{shown[numbered]} but X[0] {shown[first]}; give every example "
                            f"the same way, all with per-candidate numbers or none", i)
        if numbered:
            d = sent.numbers.shape[1]
            fitted = n_columns is not None and expected is None
            same_columns(d, n_columns if fitted else expected, f"X[{i}][3]", "X[0][3]",
                         fitted=fitted)
            expected = d
        sentences.append(sent)
        single = single and one_root
    k = max((len(s.candidates) for s in sentences), default=1)
    labelled = any(d != "_" for s in sentences for c in s.candidates for d in c.deprels)
    header = KBestHeader(parser_id=parser_id, k=k, single_root=single and bool(sentences),
                         labelled=labelled, pos="predicted", source="<in-memory>",
                         n_sentences=len(sentences))
    return kbest_dataset(header, sentences)


def candidate_indices(predictions) -> list[int]:
    """A reranker's ``predict`` output as a list of Python ints (candidate indices)."""
    if isinstance(predictions, (str, bytes)):
        raise InputError(f"predictions must be a sequence of candidate indices, got a "
                         f"{type(predictions).__name__}")
    out = []
    for i, p in enumerate(predictions):
        if isinstance(p, bool) or not hasattr(p, "__index__") or int(p) < 0:
            raise InputError(f"predictions[{i}] is {p!r}; expected a candidate index, an "
                             f"integer >= 0")
        out.append(int(p))
    return out


def numbers_kind(records, path) -> tuple[str, int]:
    """("numbers", d) when every list carries per-candidate numbers of d columns, ("tokens",
    0) when none does; lists of both kinds, or of several widths, are refused."""
    numbered = [isinstance(r, NumberedKBestSentence) and r.numbers is not None
                for r in records]
    if not any(numbered):
        return "tokens", 0
    if not all(numbered):
        i, j = numbered.index(True), numbered.index(False)
        raise InputError(f"example {i} has per-candidate numbers but example {j} has none; "
                         f"give every example numbers, or none", path)
    d = records[0].numbers.shape[1]
    for i, r in enumerate(records):
        if r.numbers.shape != (len(r.candidates), d):
            raise InputError(f"example {i}'s numbers have shape {r.numbers.shape}; expected "
                             f"({len(r.candidates)}, {d}): one row per candidate, the columns "
                             f"of example 0", path)
    return "numbers", int(d)
