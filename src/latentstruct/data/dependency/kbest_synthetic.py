"""Synthetic k-best dependency lists for tests and benchmarks of the reranker.

Sentences come from a toy grammar, ``NP VERB NP PP* [ADV] PUNCT`` with ``NP = DET ADJ* NOUN``
and ``PP = ADP NP``, and have a gold UD-style tree.  Prepositional attachment is the
ambiguity a reranker must learn: a PP headed by ``of`` modifies the preceding noun (nmod); a
PP headed by ``with`` modifies the verb (obl) when its noun is an *instrument* (a word class
that is not visible in the tags, only in the words) and the preceding noun otherwise; other
prepositions attach to the verb.

Each sentence's candidates are the gold tree (with probability ``p_gold``) and distinct
corruptions of it, each re-attaching 1–3 random words (to a head that keeps a tree, relation
``obl``/``nmod``/``dep`` by the new head's tag).  The base score of a candidate is
``-base_signal * errors + noise`` with Gaussian noise of ``base_noise``; candidates are sorted
best first by it, so the base parser's first candidate is right only sometimes.
"""

from __future__ import annotations

import numpy as np

from .kbest import KBestCandidate, KBestHeader, KBestSentence

__all__ = ["synthetic_kbest", "INSTRUMENTS", "OBJECTS"]

INSTRUMENTS = ("telescope", "spoon", "hammer", "knife", "camera", "brush")
OBJECTS = ("hat", "dog", "window", "garden", "bank", "share", "book", "market")
_VERBS = ("saw", "bought", "opened", "painted", "sold", "took")
_DETS = ("the", "a", "this")
_ADJS = ("big", "old", "red", "new", "small")
_ADVS = ("yesterday", "quickly", "today")
_PREPS = ("with", "of", "in", "on")


def _np(rng, words, tags, heads, rels, head_rel, adj_max=2):
    """Append DET ADJ* NOUN; return the noun's index (its own head and relation set later)."""
    start = len(words)
    words.append(str(rng.choice(_DETS)))
    tags.append("DET")
    for _ in range(int(rng.integers(0, adj_max + 1))):
        words.append(str(rng.choice(_ADJS)))
        tags.append("ADJ")
    noun = len(words)
    words.append(str(rng.choice(INSTRUMENTS + OBJECTS)))
    tags.append("NOUN")
    for i in range(start, noun):
        heads.append(noun)
        rels.append("det" if tags[i] == "DET" else "amod")
    heads.append(-1)
    rels.append(head_rel)
    return noun


def _gold(rng, max_pps):
    words, tags, heads, rels = [], [], [], []
    subj = _np(rng, words, tags, heads, rels, "nsubj")
    verb = len(words)
    words.append(str(rng.choice(_VERBS)))
    tags.append("VERB")
    heads.append(-1)
    rels.append("root")
    heads[subj] = verb
    obj = _np(rng, words, tags, heads, rels, "obj")
    heads[obj] = verb
    last_noun = obj
    for _ in range(int(rng.integers(1, max_pps + 1))):
        prep = len(words)
        words.append(str(rng.choice(_PREPS)))
        tags.append("ADP")
        heads.append(-1)
        rels.append("case")
        noun = _np(rng, words, tags, heads, rels, "obl", adj_max=1)
        heads[prep] = noun
        p = words[prep]
        to_noun = p == "of" or (p == "with" and words[noun] not in INSTRUMENTS)
        heads[noun] = last_noun if to_noun else verb
        rels[noun] = "nmod" if to_noun else "obl"
        last_noun = noun
    if rng.random() < 0.5:
        words.append(str(rng.choice(_ADVS)))
        tags.append("ADV")
        heads.append(verb)
        rels.append("advmod")
    words.append(".")
    tags.append("PUNCT")
    heads.append(verb)
    rels.append("punct")
    return words, tags, [h + 1 for h in heads], rels  # 1-based, root 0


def _reaches_root(heads, m):
    seen, h = set(), m
    while h != 0:
        if h in seen:
            return False
        seen.add(h)
        h = heads[h - 1]
    return True


def _corrupt(rng, heads, rels, tags, n_changes):
    heads, rels = list(heads), list(rels)
    n = len(heads)
    movable = [m for m in range(1, n + 1) if heads[m - 1] != 0]
    for m in rng.choice(movable, size=min(n_changes, len(movable)), replace=False):
        m = int(m)
        for _ in range(20):
            h = int(rng.integers(1, n + 1))
            if h == m or h == heads[m - 1]:
                continue
            old = heads[m - 1]
            heads[m - 1] = h
            if all(_reaches_root(heads, q) for q in range(1, n + 1)):
                tag = tags[h - 1]
                rels[m - 1] = "obl" if tag == "VERB" else "nmod" if tag == "NOUN" else "dep"
                break
            heads[m - 1] = old
    return tuple(heads), tuple(rels)


def synthetic_kbest(n_sentences: int, k: int = 8, *, max_pps: int = 3, p_gold: float = 0.9,
                    base_signal: float = 0.5, base_noise: float = 1.0, parser_id: str = "synthetic",
                    random_state=0) -> tuple[KBestHeader, list[KBestSentence]]:
    """``(header, sentences)`` of synthetic k-best lists (see the module docstring)."""
    rng = np.random.default_rng(random_state)
    sentences = []
    for i in range(n_sentences):
        words, tags, gold, grels = _gold(rng, max_pps)
        n = len(words)
        trees = {}
        if rng.random() < p_gold:
            trees[tuple(gold)] = tuple(grels)
        for _ in range(50 * k):
            if len(trees) >= k:
                break
            h, r = _corrupt(rng, gold, grels, tags, int(rng.integers(1, 4)))
            trees.setdefault(h, r)
        cands = []
        for h, r in trees.items():
            errors = sum(a != b for a, b in zip(h, gold))
            cands.append((-base_signal * errors + base_noise * rng.standard_normal(), h, r))
        cands.sort(key=lambda c: -c[0])
        sentences.append(KBestSentence(
            f"synth-{i}", tuple(words), tuple(words), tuple(tags), ("_",) * n,
            tuple(t != "PUNCT" for t in tags), tuple(gold), tuple(grels),
            tuple(KBestCandidate(h, r, float(s)) for s, h, r in cands), i + 2))
    header = KBestHeader(parser_id, k, True, True, "gold", "synthetic", 1, n_sentences)
    return header, sentences
