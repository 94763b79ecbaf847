"""conlleval chunk scoring (CoNLL-2000), for IOB1/IOB2 style tags.

A chunk starts and ends by conlleval's ``startOfChunk``/``endOfChunk`` rules, so an
``I-X`` after ``O`` or after a chunk of another type opens a chunk, exactly as the
shared task's Perl script counts.  Precision, recall and F1 are over exactly matching
(type, start, end) chunks.
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["extract_chunks", "chunk_f1"]


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


def chunk_f1(gold: Iterable[Sequence[str]], pred: Iterable[Sequence[str]]) -> dict:
    """conlleval precision, recall, F1 (fractions) and token accuracy."""
    n_gold = n_pred = n_correct = 0
    n_tokens = n_token_correct = 0
    for g, p in zip(gold, pred, strict=True):
        if len(g) != len(p):
            raise ValueError(
                f"gold and predicted sentences differ in length ({len(g)} vs {len(p)})"
            )
        gc, pc = extract_chunks(g), extract_chunks(p)
        n_gold += len(gc)
        n_pred += len(pc)
        n_correct += len(gc & pc)
        n_tokens += len(g)
        n_token_correct += sum(a == b for a, b in zip(g, p))
    precision = n_correct / n_pred if n_pred else 0.0
    recall = n_correct / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = n_token_correct / n_tokens if n_tokens else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "accuracy": accuracy}
