"""The k-best list file: each sentence's k best dependency trees with their base scores.

A k-best file is UTF-8 JSON Lines.  Line 1 is the header, every further line one sentence::

    {"format": "latentstruct-kbest", "version": 1, "parser_id": "3f2a…", "k": 16,
     "single_root": true, "labelled": true, "pos": "gold", "folds": 5,
     "source": "en_ewt-ud-train.conllu", "n_sentences": 12544}
    {"id": "weblog-…-0001", "words": [...], "lemmas": [...], "upos": [...], "xpos": [...],
     "scored": [true, false, ...],
     "gold_heads": [2, 0, ...] | null, "gold_deprels": ["nsubj", "root", ...] | null,
     "candidates": [{"heads": [2, 0, ...], "deprels": [...], "score": 41.37}, ...]}

- ``parser_id`` identifies the base parser *family*: a digest of its training file and
  options.  Jackknifed lists (``folds`` > 1, each sentence parsed by a parser trained on the
  other folds) carry the id of the parser trained on the whole file with the same options,
  so a reranker trained on jackknifed training lists accepts lists that parser writes for new
  text, and refuses lists of any other parser (their base scores are on another scale).
- ``heads`` are 1-based with 0 for the root, as in CoNLL-U; ``deprels`` are ``"_"`` when the
  parser is unlabelled.  Candidates are best first by ``score``, the base model's w·Φ(x, y).
- ``scored`` marks the tokens that count for UAS/LAS (the punctuation convention of
  ``latentstruct.data.dependency.punctuation_mask``), so a reader needs no tag lists.
- ``gold_heads``/``gold_deprels`` are null for unannotated text (a list to rerank, not to
  train on).

Size limits (``MAX_*``) keep a hostile file from exhausting memory; every problem is an
:class:`~latentstruct.exceptions.InputError` with file:line.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass

import numpy as np

from ...exceptions import InputError
from ...limits import KBEST_K
from ..atomic import atomic_write
from ..readers.lines import excerpt, parse_json_line, read_lines

__all__ = [
    "KBEST_FORMAT",
    "KBEST_VERSION",
    "KBestHeader",
    "KBestCandidate",
    "KBestSentence",
    "check_strings",
    "check_tree",
    "check_gold_heads",
    "check_candidate_score",
    "read_kbest",
    "write_kbest",
]

KBEST_FORMAT = "latentstruct-kbest"
KBEST_VERSION = 1
MAX_K = KBEST_K.high  # the bound of `latentstruct kbest -k` (latentstruct.limits)
MAX_WORDS = 1000
MAX_SENTENCES = 10_000_000
#: Longest line (characters) of a k-best file: room for MAX_K candidates of MAX_WORDS words
#: with their relation names (about 40 characters per word and candidate as JSON).  A
#: longer line cannot be a valid sentence line, and is refused before it is parsed.
MAX_LINE_CHARS = 64_000_000


@dataclass(frozen=True)
class KBestHeader:
    """What produced a k-best file (line 1)."""

    parser_id: str
    k: int
    single_root: bool
    labelled: bool
    pos: str
    source: str
    folds: int = 1
    n_sentences: int = 0

    def to_json(self) -> dict:
        return {"format": KBEST_FORMAT, "version": KBEST_VERSION, "parser_id": self.parser_id,
                "k": self.k, "single_root": self.single_root, "labelled": self.labelled,
                "pos": self.pos, "folds": self.folds, "source": self.source,
                "n_sentences": self.n_sentences}


@dataclass(frozen=True)
class KBestCandidate:
    """One candidate tree: 1-based heads (0 = root), relations and the base score."""

    heads: tuple[int, ...]
    deprels: tuple[str, ...]
    score: float


@dataclass(frozen=True)
class KBestSentence:
    """A sentence, its gold tree (if known) and its candidates, best first."""

    id: str
    words: tuple[str, ...]
    lemmas: tuple[str, ...]
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    scored: tuple[bool, ...]
    gold_heads: tuple[int, ...] | None
    gold_deprels: tuple[str, ...] | None
    candidates: tuple[KBestCandidate, ...]
    line: int = 0

    def __len__(self) -> int:
        return len(self.words)

    def to_json(self) -> dict:
        return {
            "id": self.id, "words": list(self.words), "lemmas": list(self.lemmas),
            "upos": list(self.upos), "xpos": list(self.xpos), "scored": list(self.scored),
            "gold_heads": None if self.gold_heads is None else list(self.gold_heads),
            "gold_deprels": None if self.gold_deprels is None else list(self.gold_deprels),
            "candidates": [{"heads": list(c.heads), "deprels": list(c.deprels),
                            "score": c.score} for c in self.candidates],
        }


def write_kbest(path, header: KBestHeader, sentences) -> None:
    """Write a k-best file atomically (see the module docstring for the format)."""
    sentences = list(sentences)
    header = KBestHeader(**{**header.__dict__, "n_sentences": len(sentences)})
    with atomic_write(path, "w") as fh:
        fh.write(json.dumps(header.to_json(), ensure_ascii=False) + "\n")
        for sent in sentences:
            fh.write(json.dumps(sent.to_json(), ensure_ascii=False, allow_nan=False) + "\n")


def _fail(message: str, path, line) -> InputError:
    return InputError(message, path, line)


def _header(obj, path: str) -> KBestHeader:
    hint = ("expected a k-best file written by `latentstruct kbest` (its first line is a JSON "
            f"header with \"format\": \"{KBEST_FORMAT}\")")
    if not isinstance(obj, dict) or obj.get("format") != KBEST_FORMAT:
        raise _fail(f"not a k-best file; {hint}", path, 1)
    if obj.get("version") != KBEST_VERSION:
        raise _fail(f"k-best format version {excerpt(obj.get('version'))} is not supported; this "
                    f"latentstruct reads version {KBEST_VERSION} (re-run `latentstruct kbest`)",
                    path, 1)
    types = {"parser_id": str, "k": int, "single_root": bool, "labelled": bool, "pos": str,
             "source": str, "folds": int, "n_sentences": int}
    for key, typ in types.items():
        value = obj.get(key)
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise _fail(f"header field {key!r} must be a {typ.__name__}, got {excerpt(value)}", path, 1)
    if not 1 <= obj["k"] <= MAX_K:
        raise _fail(f"header k={obj['k']} is outside 1..{MAX_K}", path, 1)
    if obj["pos"] not in ("gold", "predicted"):
        raise _fail(f"header pos must be 'gold' or 'predicted', got {excerpt(obj['pos'])}", path, 1)
    if not 0 <= obj["n_sentences"] <= MAX_SENTENCES:
        raise _fail(f"header n_sentences={obj['n_sentences']} is outside 0..{MAX_SENTENCES}",
                    path, 1)
    return KBestHeader(**{k: obj[k] for k in types})


# Checks of one sentence's fields, shared by the file reader (``path``/``line`` a file and
# its line) and ``RerankTask.make_dataset`` (``path`` an in-memory location such as
# ``X[3][2][1]``, ``line`` None).
def _is_int(h) -> bool:
    return isinstance(h, numbers.Integral) and not isinstance(h, (bool, np.bool_))


def check_strings(value, n: int, what: str, path=None, line=None) -> tuple[str, ...]:
    """``value`` (a list or tuple of ``n`` non-empty strings, one per word) as a tuple;
    ``InputError`` naming ``what`` otherwise."""
    if not isinstance(value, (list, tuple)) or len(value) != n or not all(
            isinstance(v, str) and v for v in value):
        raise _fail(f"{what} must be a list of {n} non-empty strings (one per word)", path, line)
    return tuple(value)


def check_tree(value, n: int, single_root: bool, what: str, path=None, line=None
               ) -> tuple[int, ...]:
    """``value``, one 1-based head per word (0 = root), as a tuple of ints after checking
    it is a tree of the ``n`` words: heads in 0..n, no word its own head, one root word
    (``single_root``) or at least one, and no cycle.  ``InputError`` naming ``what``."""
    if not isinstance(value, (list, tuple)) or len(value) != n or not all(
            _is_int(h) for h in value):
        raise _fail(f"{what} must be a list of {n} integers (one head per word)", path, line)
    value = [int(h) for h in value]
    for m, h in enumerate(value, 1):
        if not 0 <= h <= n or h == m:
            raise _fail(f"{what}: head {h} of word {m} is out of range; expected 0 (root) or a "
                        f"word index 1..{n} other than {m}", path, line)
    roots = sum(1 for h in value if h == 0)
    if roots == 0 or (single_root and roots != 1):
        raise _fail(f"{what} has {roots} words attached to the root; expected "
                    f"{'exactly one' if single_root else 'at least one'}", path, line)
    for m in range(1, n + 1):  # every word must reach the root: no cycles
        seen, h = set(), m
        while h != 0:
            if h in seen:
                raise _fail(f"{what} has a cycle through word {h}; expected a tree", path, line)
            seen.add(h)
            h = value[h - 1]
    return tuple(value)


def check_gold_heads(value, n: int, what: str, path=None, line=None, *, none: str = "null"
                     ) -> tuple[int, ...]:
    """A gold tree's heads: ``n`` integers in 0..n (the file format does not require a
    tree here: gold annotation is taken as given).  ``InputError`` naming ``what``;
    ``none`` is how the message spells a missing tree (JSON ``null``, Python ``None``)."""
    if not isinstance(value, (list, tuple)) or len(value) != n or not all(
            _is_int(h) and 0 <= h <= n for h in value):
        raise _fail(f"{what} must be {none} or {n} integers in 0..{n}", path, line)
    return tuple(int(h) for h in value)


def check_candidate_score(score, previous: float | None, what: str, path=None, line=None
                          ) -> float:
    """A candidate's base score as a float: a finite number, not above the ``previous``
    candidate's (candidates come best first).  ``InputError`` naming ``what``."""
    number = isinstance(score, numbers.Real) and not isinstance(score, (bool, np.bool_))
    try:
        value = float(score) if number else math.nan
    except OverflowError:  # an integer beyond any float (JSON allows any number of digits)
        value = math.nan
    if not math.isfinite(value):
        raise _fail(f"{what}: score must be a finite number, got {excerpt(score)}", path, line)
    score = value
    if previous is not None and score > previous + 1e-6 * max(1.0, abs(score)):
        raise _fail(f"{what}: candidates must be sorted best first by score ({score!r} comes "
                    f"after {previous!r}); sort each sentence's candidates by decreasing base "
                    f"score", path, line)
    return score


def _str_list(obj, key, n, path, line) -> tuple[str, ...]:
    return check_strings(obj.get(key), n, f"field {key!r}", path, line)


def _heads(value, n, single_root, what, path, line) -> tuple[int, ...]:
    if not isinstance(value, list):  # JSON arrays only (check_tree also takes tuples)
        raise _fail(f"{what} must be a list of {n} integers (one head per word)", path, line)
    return check_tree(value, n, single_root, what, path, line)


def _sentence(obj, header: KBestHeader, path: str, line: int) -> KBestSentence:
    if not isinstance(obj, dict):
        raise _fail("expected a JSON object (one sentence)", path, line)
    words = obj.get("words")
    if not isinstance(words, list) or not 1 <= len(words) <= MAX_WORDS:
        raise _fail(f"field 'words' must be a list of 1..{MAX_WORDS} strings", path, line)
    n = len(words)
    words = _str_list(obj, "words", n, path, line)
    lemmas, upos, xpos = (_str_list(obj, k, n, path, line) for k in ("lemmas", "upos", "xpos"))
    scored = obj.get("scored")
    if not isinstance(scored, list) or len(scored) != n or not all(
            isinstance(s, bool) for s in scored):
        raise _fail(f"field 'scored' must be a list of {n} booleans", path, line)
    gold_heads = obj.get("gold_heads")
    if gold_heads is not None:
        if not isinstance(gold_heads, list):
            raise _fail(f"field 'gold_heads' must be null or {n} integers in 0..{n}", path, line)
        gold_heads = check_gold_heads(gold_heads, n, "field 'gold_heads'", path, line)
    gold_deprels = obj.get("gold_deprels")
    if gold_deprels is not None:
        gold_deprels = _str_list(obj, "gold_deprels", n, path, line)
    cands = obj.get("candidates")
    if not isinstance(cands, list) or not 1 <= len(cands) <= header.k:
        raise _fail(f"field 'candidates' must be a list of 1..{header.k} trees (the header's k)",
                    path, line)
    out = []
    for j, c in enumerate(cands):
        what = f"candidate {j}"
        if not isinstance(c, dict):
            raise _fail(f"{what} must be an object with heads, deprels and score", path, line)
        heads = _heads(c.get("heads"), n, header.single_root, what, path, line)
        deprels = _str_list(c, "deprels", n, path, line)
        score = check_candidate_score(c.get("score"), out[-1].score if out else None, what,
                                      path, line)
        out.append(KBestCandidate(heads, deprels, score))
    sid = obj.get("id", "")
    return KBestSentence(str(sid), words, lemmas, upos, xpos, tuple(scored), gold_heads,
                         gold_deprels, tuple(out), line)


def read_kbest(path) -> tuple[KBestHeader, list[KBestSentence]]:
    """Read and check a k-best file; returns (header, sentences).

    Raises InputError (with file:line) for a file that is not a k-best file, another format
    version, a malformed line, a candidate that is not a tree of the sentence, more
    candidates than the header's k, or a number of sentences other than the header's
    ``n_sentences`` (a file cut short, at the line where it ends; or one with extra
    sentences, at the first extra one).
    """
    name = os.fspath(path)
    header = None
    sentences: list[KBestSentence] = []
    last = 0  # the last line of the file
    for lineno, text in read_lines(path, max_chars=MAX_LINE_CHARS):
        last = lineno
        if not text.strip():
            continue
        obj = parse_json_line(text, name, lineno,
                              "each line of a k-best file is one JSON object")
        if header is None:
            if lineno != 1:
                raise _fail("the header must be on line 1", name, lineno)
            header = _header(obj, name)
            continue
        if len(sentences) >= header.n_sentences:
            raise _fail(f"sentence {len(sentences) + 1} is past the header's n_sentences="
                        f"{header.n_sentences} (line 1); the file was concatenated or edited "
                        f"by hand. Re-run `latentstruct kbest`, or fix n_sentences", name, lineno)
        sentences.append(_sentence(obj, header, name, lineno))
    if header is None:
        raise InputError("the file is empty; expected a k-best file written by "
                         "`latentstruct kbest`", name)
    if len(sentences) < header.n_sentences:
        raise _fail(f"the file ends after {len(sentences)} of the {header.n_sentences} sentences "
                    f"its header (line 1) announces; it was cut short (an interrupted copy or "
                    f"download). Re-run `latentstruct kbest` or copy the file again", name, last)
    return header, sentences
