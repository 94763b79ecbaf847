"""conlleval chunk scoring (CoNLL-2000), for IOB1/IOB2 style tags, and tag-scheme detection.

A chunk starts and ends by conlleval's ``startOfChunk``/``endOfChunk`` rules, so an
``I-X`` after ``O`` or after a chunk of another type opens a chunk, exactly as the
shared task's Perl script counts.  Precision, recall and F1 are over exactly matching
(type, start, end) chunks; :func:`chunk_report` gives them per chunk type with the counts
conlleval prints.  :func:`detect_tag_scheme` tells which encoding (IOB1, IOB2, ...) a
tagged file is written in.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from .encodings import ENCODINGS, is_well_formed, well_formed_constraints
from ..reports import prf

__all__ = ["extract_chunks", "chunk_f1", "chunk_report", "detect_tag_scheme", "ChunkScores"]


def _split(tag: str) -> tuple[str, str]:
    if tag == "O" or len(tag) < 2 or tag[1] != "-":
        return "O", ""
    return tag[0], tag[2:]


def _end_of_chunk(prev_tag, tag, prev_type, cur_type) -> bool:
    if prev_tag in ("B", "I") and tag in ("B", "O"):
        return True
    if prev_tag == "E" or prev_tag == "S":
        return True
    if prev_tag in ("B", "I") and tag in ("S",):
        return True
    if prev_tag != "O" and prev_type != cur_type:
        return True
    return False


def _start_of_chunk(prev_tag, tag, prev_type, cur_type) -> bool:
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", "O") and tag in ("E", "I"):
        return True
    if tag != "O" and prev_type != cur_type:
        return True
    return False


def extract_chunks(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """Set of ``(type, start, end_inclusive)`` chunks, by conlleval's rules."""
    chunks = set()
    prev_tag, prev_type = "O", ""
    start = None
    for i, raw in enumerate(list(tags) + ["O"]):
        tag, cur_type = _split(raw)
        if start is not None and _end_of_chunk(prev_tag, tag, prev_type, cur_type):
            chunks.add((prev_type, start, i - 1))
            start = None
        if _start_of_chunk(prev_tag, tag, prev_type, cur_type) and tag != "O":
            start = i
        prev_tag, prev_type = tag, cur_type
    return chunks


def _chunk_counts(gold, pred) -> tuple[Counter, Counter, Counter, int, int]:
    """Gold, predicted and correct chunks per type, tokens and correct tokens."""
    n_gold: Counter = Counter()
    n_pred: Counter = Counter()
    n_correct: Counter = Counter()
    n_tokens = n_token_correct = 0
    for g, p in zip(gold, pred, strict=True):
        if len(g) != len(p):
            raise ValueError(
                f"gold and predicted sentences differ in length ({len(g)} vs {len(p)})"
            )
        gc, pc = extract_chunks(g), extract_chunks(p)
        n_gold.update(c[0] for c in gc)
        n_pred.update(c[0] for c in pc)
        n_correct.update(c[0] for c in gc & pc)
        n_tokens += len(g)
        n_token_correct += sum(a == b for a, b in zip(g, p))
    return n_gold, n_pred, n_correct, n_tokens, n_token_correct


def chunk_f1(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]]) -> dict:
    """conlleval precision, recall, F1 (fractions) and token accuracy."""
    n_gold, n_pred, n_correct, n_tokens, n_token_correct = _chunk_counts(gold, pred)
    precision, recall, f1 = prf(sum(n_correct.values()), sum(n_pred.values()),
                                sum(n_gold.values()))
    accuracy = n_token_correct / n_tokens if n_tokens else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "accuracy": accuracy}


def chunk_report(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]]) -> dict:
    """conlleval's counts and per-type scores.

    ``counts``: tokens, correct tokens, gold, predicted and correct chunks; ``per_type``:
    for every chunk type in either, its gold, predicted and correct chunks with precision,
    recall and F1 (conlleval's per-type lines).
    """
    n_gold, n_pred, n_correct, n_tokens, n_token_correct = _chunk_counts(gold, pred)
    per = {}
    for t in sorted(set(n_gold) | set(n_pred)):
        p, r, f = prf(n_correct[t], n_pred[t], n_gold[t])
        per[t] = {"gold": n_gold[t], "predicted": n_pred[t], "correct": n_correct[t],
                  "precision": p, "recall": r, "f1": f}
    counts = {"tokens": n_tokens, "correct_tokens": n_token_correct,
              "gold_chunks": sum(n_gold.values()), "predicted_chunks": sum(n_pred.values()),
              "correct_chunks": sum(n_correct.values())}
    return {"counts": counts, "per_type": per}


class ChunkScores:
    """conlleval's scores over chunk-tag lists, with :func:`chunk_report` as their
    breakdown: the metric of the ``chunk`` task (its ``metric``).

    A gold tag the model never saw is a chunk of its own type; a free gold token (``None``)
    is outside every chunk and matches no prediction.
    """

    def score(self, gold, pred) -> dict:
        """conlleval's F1, precision, recall and token accuracy."""
        gold = [["<free>" if t is None else t for t in y] for y in gold]
        scores = chunk_f1(gold, pred)
        return {"f1": scores["f1"], "accuracy": scores["accuracy"],
                "precision": scores["precision"], "recall": scores["recall"]}

    def report(self, gold, pred) -> dict:
        """conlleval's counts and per-chunk-type scores."""
        return chunk_report(gold, pred)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def detect_tag_scheme(tag_sequences: Iterable[Sequence[str]]) -> str | None:
    """The chunk encoding (``"iob1"``, ``"iob2"``, ``"ioe1"``, ``"ioe2"``, ``"oc"``; see
    ``tasks.sequence.encodings``) the sentences are written in, or None when it cannot be told.

    A sentence with at least one chunk is the canonical writing of its chunking in exactly
    one encoding at most (IOB2 starts every chunk with B-, IOB1 only a chunk that follows
    one of the same type, ...), so the scheme is the encoding in which more than half of
    the sentences with chunks are well formed.  None: no chunk at all, tags of no single
    encoding, or no majority (a file of mixed schemes).
    """
    sentences = [list(t) for t in tag_sequences]
    tags = {t for tags in sentences for t in tags if t is not None and t != "O"}
    if not all(isinstance(t, str) and len(t) > 2 and t[1] == "-"
               and not any(c.isspace() for c in t) for t in tags):
        return None  # a tag that is not P-TYPE (NN, sunny, a bare B): no chunk scheme
    prefixes = {t[0] for t in tags}
    chunked = [tags for tags in sentences if any(t is not None and t != "O" for t in tags)]
    if not chunked:
        return None
    best, best_n = None, 0
    for name, enc in ENCODINGS.items():
        if not prefixes <= set(enc.prefixes):
            continue
        n = sum(_well_formed_where_known(tags, name) for tags in chunked)
        # partly unknown sentences may be well formed in two schemes: IOB2, the usual one,
        # wins a tie (a fully known sentence is well formed in one scheme at most)
        if n > best_n or (n == best_n and n and name == "iob2"):
            best, best_n = name, n
    return best if 2 * best_n > len(chunked) else None


def _well_formed_where_known(tags: list, encoding: str) -> bool:
    """``is_well_formed``, for a sentence whose unknown tags (None, partial labels) may be
    anything: no known tag breaks the encoding's rules (``well_formed_constraints``)."""
    if all(t is not None for t in tags):
        return is_well_formed(tags, encoding)
    labels = sorted({t for t in tags if t is not None})
    index = {t: k for k, t in enumerate(labels)}
    constraints = well_formed_constraints(labels, encoding)
    return constraints.first_violation([-1 if t is None else index[t] for t in tags]) is None
