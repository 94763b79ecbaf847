"""In-memory data of the dependency task (``dep``): the records of ``make_dataset`` and the
raw form of its predictions.

A sentence is a list of ``(word, POS)`` pairs; its gold tree a list of heads (1-based,
0 = root) or of ``(head, deprel)`` pairs.  The POS tags decide which file format the
sentence stands for, since that fixes where the tags go and which tokens are punctuation:

* **UPOS tags** (the POS column is ``upos``) -- as read from CoNLL-U: UPOS = the tag, XPOS
  ``_``; punctuation is UPOS ``PUNCT``; a single root by default;
* **other tags** (``xpos``; Penn Treebank tags) -- as read from a ``.dp`` file: XPOS = the
  tag, UPOS ``_``; punctuation is the PTB tags ``` `` '' , . : ```; forests allowed unless
  ``single_root=True``.

The column is the fitted task's (``pos_column_``), so test data is read the way training
data was; before fit it is ``pos_column`` when set, else ``upos`` when every tag of ``X``
is a UPOS tag and ``xpos`` otherwise.  Trees are checked by the readers' ``check_tree``.

**Numbers.**  A sentence may also be given as ``(tokens, vectors)``: ``tokens`` the list of
``(word, POS)`` pairs and ``vectors`` an (n_tokens x d) array, dense (numpy, or nested
lists) or ``scipy.sparse``, row t the vector of token t.  Every sentence of ``X`` is given
one way, with the same d; the record is then a :class:`VectorSentence`, whose ``vectors``
is the canonical float64 CSR matrix of :func:`~.numbers.number_rows` (what the arc
features read: :mod:`latentstruct.tasks.dependency.vectors`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

from ...data.dependency import DependencySentence, check_tree
from ...data.readers import MAX_LINE_CHARS, UPOS_FORM, excerpt, is_upos_tag
from ...exceptions import InputError, is_fitted
from ..sequence.raw import raw_sentence, word_pos_pairs
from ..validation import raw_error, raw_examples, raw_string
from .numbers import is_number_array, number_rows, same_columns
from .vectors import N_VECTOR_BLOCKS

__all__ = ["dependency_records", "raw_trees", "VectorSentence", "split_vectors"]


@dataclass(frozen=True)
class VectorSentence(DependencySentence):
    """A ``DependencySentence`` given with per-token vectors: ``vectors`` is an
    (n_words x d) float64 CSR matrix (sorted columns, no explicit zeros)."""

    vectors: Any = field(default=None, compare=False, repr=False)


def _with_vectors(x) -> bool:
    """Whether ``X[i]`` is ``(tokens, vectors)`` rather than a list of (word, POS) pairs: a
    pair whose second element is an array, or whose first element is itself a list of
    pairs (a plain sentence's first element is one (word, POS) pair of strings)."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        return False
    first = x[0]
    return is_number_array(x[1]) or (
        isinstance(first, (tuple, list)) and len(first) > 0
        and isinstance(first[0], (tuple, list)))


def split_vectors(task, X) -> tuple[list, list | None]:
    """``X`` as (sentences, vectors or None): the vectors of ``(tokens, vectors)`` examples
    checked (one row per token, finite, one column count; that of a fitted model) and
    made CSR.  Examples given both ways in one ``X`` are refused."""
    given = [_with_vectors(x) for x in X]
    if not any(given):
        return list(X), None
    if not all(given):
        i, j = given.index(True), given.index(False)
        raise raw_error(f"is a plain sentence but X[{i}] is (tokens, vectors); give every "
                        f"sentence the same way, all with vectors or none", j)
    fitted = is_fitted(task) and getattr(task, "n_columns_", 0) > 0
    expected = task.n_columns_ if fitted else None
    sentences, vectors = [], []
    for i, (tokens, vec) in enumerate(X):
        tokens = raw_sentence(tokens, i, _PAIR, dicts=False)
        csr = number_rows(vec, len(tokens), f"X[{i}][1]", row="token",
                          example=f"sentence {i}", weights_per_column=N_VECTOR_BLOCKS)
        same_columns(csr.shape[1], expected, f"X[{i}][1]", "X[0][1]", fitted=fitted)
        expected = csr.shape[1]
        sentences.append(tokens)
        vectors.append(csr)
    return sentences, vectors

_PAIR = "(word, POS) pair"


def _pos_column(task, pos_lists) -> str:
    if is_fitted(task):
        return task.pos_column_
    if task.pos == "predicted":  # the tagger predicts UPOS; the gold ones mark punctuation
        return "upos"
    if task.pos_column != "auto":
        return task.pos_column
    return "upos" if all(is_upos_tag(p) for pos in pos_lists for p in pos) else "xpos"


def _single_root(task, column: str) -> bool:
    if is_fitted(task):
        return bool(task.single_root_)
    if task.single_root != "auto":
        return bool(task.single_root)
    return column == "upos"  # as read_dependencies: True for CoNLL-U, False for .dp


def _tree(value, i: int, n: int, form: str | None) -> tuple[str, tuple, tuple]:
    """``y[i]`` as (form, heads, deprels): form "heads" or "pairs" (that of ``y[0]`` when
    ``form`` is given), heads ints in 0..n, deprels non-empty strings ('_' for heads)."""
    if isinstance(value, str) or not hasattr(value, "__len__") or isinstance(value, dict):
        raise raw_error(f"is a {type(value).__name__} ({excerpt(value, 60)}); expected a list "
                        f"of heads (1-based, 0 = root) or of (head, deprel) pairs, one per word "
                        f"of X[{i}]", i, what="y")
    entries = list(value)
    if len(entries) != n:
        raise raw_error(f"has {len(entries)} heads but X[{i}] has {n} words; give one head per "
                        f"word", i, what="y")
    mine = "pairs" if isinstance(entries[0], (tuple, list)) else "heads"
    if form is not None and mine != form:
        shown = {"pairs": "(head, deprel) pairs", "heads": "heads only"}
        raise raw_error(f"gives {shown[mine]} but y[0] gives {shown[form]}; give every tree "
                        f"the same way (all labelled or all unlabelled)", i, what="y")
    heads, deprels = [], []
    for k, entry in enumerate(entries):
        at = f"[{k}]"
        if mine == "pairs":
            if not isinstance(entry, (tuple, list)) or len(entry) != 2:
                raise raw_error(f"is {excerpt(entry, 60)}; expected a (head, deprel) pair like "
                                f"y[{i}][0]", i, at=at, what="y")
            head, rel = entry
            raw_string(rel, i, "deprel", at=at, allow_space=False, name="y",
                       max_length=MAX_LINE_CHARS)
            if rel == "_":
                raise raw_error("deprel '_' marks a missing label in CoNLL-U; give every word "
                                "its relation, or heads only for unlabelled trees", i, at=at,
                                what="y")
            deprels.append(str(rel))
        else:
            head = entry
            deprels.append("_")
        if isinstance(head, bool) or not isinstance(head, numbers.Integral):
            raise raw_error(f"head {excerpt(head, 60)} of word {k + 1} is not an integer; "
                            f"expected 0 for the root or the 1-based number of the head word "
                            f"(1..{n})", i, at=at, what="y")
        if not 0 <= int(head) <= n:
            raise raw_error(f"head {int(head)} of word {k + 1} is outside 0..{n}; expected 0 "
                            f"for the root or the 1-based number of the head word", i, at=at,
                            what="y")
        heads.append(int(head))
    return mine, tuple(heads), tuple(deprels)


def dependency_records(task, X, y=None) -> list[DependencySentence]:
    """The ``DependencySentence`` records of ``X`` (lists of ``(word, POS)`` pairs) with the
    gold trees ``y`` (lists of heads or of ``(head, deprel)`` pairs; None: unlabelled, heads
    -1), checked as the readers check a file (``check_tree``).  InputError names the entry
    at fault (``X[3][5]``, ``y[2][4]``)."""
    X, y = raw_examples(X, y, example=f"sentence (a list of {_PAIR}s)")
    if not X:
        raise InputError(f"X holds no sentences; give at least one sentence (a list of "
                         f"{_PAIR}s)")
    X, vectors = split_vectors(task, X)
    columns = [word_pos_pairs(i, raw_sentence(s, i, _PAIR, dicts=False), "parser")
               for i, s in enumerate(X)]
    column = _pos_column(task, [pos for _, pos in columns])
    if column == "upos":
        why = ("its tagger predicts UPOS, and the gold UPOS mark punctuation"
               if task.pos == "predicted" else "it was trained on UPOS tags"
               if is_fitted(task) else "pos_column='upos'")
        for i, (_, pos) in enumerate(columns):
            bad = next((t for t, p in enumerate(pos) if not is_upos_tag(p)), None)
            if bad is not None:
                raise raw_error(
                    f"POS tag {pos[bad]!r} is not a UPOS tag, but this parser reads UPOS "
                    f"({why}); expected {UPOS_FORM}. Give UPOS tags, or Penn Treebank tags "
                    f"to a parser with pos_column='xpos'", i, at=f"[{bad}]")
    single_root = _single_root(task, column)
    fmt = "conllu" if column == "upos" else "dp"
    records, form = [], None
    for i, (words, pos) in enumerate(columns):
        n = len(words)
        if y is None:
            heads, deprels = (-1,) * n, ("_",) * n
        else:
            mine, heads, deprels = _tree(y[i], i, n, form)
            form = form or mine
            check_tree(heads, words, single_root=single_root,
                       error=lambda k, msg, i=i: raw_error(msg, i, at=f"[{k}]", what="y"))
        blank = ("_",) * n
        upos, xpos = (pos, blank) if fmt == "conllu" else (blank, pos)
        if vectors is None:
            records.append(DependencySentence(words, blank, upos, xpos, heads, deprels, 0, "",
                                              None, fmt))
        else:
            records.append(VectorSentence(words, blank, upos, xpos, heads, deprels, 0, "",
                                          None, fmt, vectors[i]))
    return records


def raw_trees(trees, labelled: bool) -> list[list]:
    """Decoded trees (``DepTarget``) in ``make_dataset``'s ``y`` form: head lists, or lists
    of ``(head, deprel)`` pairs when ``labelled``."""
    if labelled:
        return [list(zip(t.heads, t.deprels)) for t in trees]
    return [list(t.heads) for t in trees]
