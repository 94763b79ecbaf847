"""Data side of the ``rerank`` task: k-best datasets, the featurised corpus, targets, metrics,
CoNLL-U output and the per-chunk inputs of the feature kernel.

Kept apart from :mod:`.task` (the task and its capabilities) and :mod:`.features`
(the numba templates) so that each stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...data.atomic import atomic_write
from ...data.dependency.kbest import KBestHeader, KBestSentence
from ...data.readers import excerpt
from ...exceptions import InputError
from ..base import Dataset
from .features import RerankStorage, atom

__all__ = ["KBestRecords", "kbest_dataset", "RerankCorpus", "RerankTarget",
           "encode_kbest_targets", "attachment_scores", "write_chosen_trees", "RelationVocab",
           "chunk_inputs"]

_COORD_RELS = frozenset({"cc", "conj"})
_COORD_TAGS = frozenset({"CC", "CCONJ"})


class KBestRecords(list):
    """The sentences of a k-best file, with its header (``header``)."""

    def __init__(self, sentences, header: KBestHeader):
        super().__init__(sentences)
        self.header = header


def kbest_dataset(header: KBestHeader, sentences, path=None) -> Dataset:
    """A :class:`Dataset` of k-best sentences as :meth:`RerankTask.read` returns it: records
    carry the header, targets are the sentences themselves."""
    return Dataset(KBestRecords(sentences, header), list(sentences),
                   None if path is None else str(path))


class RerankCorpus(Sequence):
    """Featurised k-best lists: a shared :class:`RerankStorage` and the ids of the selected
    sentences.  Indexing returns a one-sentence corpus (what the capability methods take)."""

    def __init__(self, storage: RerankStorage, ids=None):
        self.storage = storage
        self.ids = (np.arange(storage.n_sentences, dtype=np.int64) if ids is None
                    else np.asarray(ids, dtype=np.int64).reshape(-1))

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            n = len(self)
            if not -n <= i < n:
                raise IndexError(f"sentence {i} out of range for a corpus of {n}")
            return RerankCorpus(self.storage, self.ids[int(i):int(i) + 1 or None])
        return RerankCorpus(self.storage, self.ids[i])

    def __repr__(self) -> str:
        return f"RerankCorpus({len(self)} sentences)"

    def n_candidates(self, i: int = 0) -> int:
        """Number of candidates of the i-th selected sentence."""
        s = self.ids[i]
        return int(self.storage.sent_cand_ptr[s + 1] - self.storage.sent_cand_ptr[s])


@dataclass(frozen=True)
class RerankTarget:
    """What a sentence's candidates are worth.

    oracle : int64 (m,), the candidates with the most correct heads (the training target)
    correct_heads : int64 (k,), correct heads of each candidate on scored tokens
    correct_labels : int64 (k,) or None, correct (head, relation) pairs, relations compared
        as whole strings (None when the gold tree or the candidates are unlabelled)
    n_scored : int, scored tokens
    """

    oracle: np.ndarray
    correct_heads: np.ndarray
    correct_labels: np.ndarray | None
    n_scored: int


def encode_kbest_targets(sentences) -> list[RerankTarget]:
    """Oracle sets (every candidate with the most correct heads: ties keep the whole set) and
    per-candidate correct heads and labels on the scored tokens.

    Raises InputError for a sentence without a gold tree.
    """
    out = []
    for sent in sentences:
        if not isinstance(sent, KBestSentence):
            raise InputError(f"rerank targets are the k-best sentences themselves; got "
                             f"{type(sent).__name__}")
        if sent.gold_heads is None:
            raise InputError(
                f"sentence {excerpt(sent.id)} (line {sent.line}) has no gold tree (gold_heads is "
                f"null); training and evaluation need k-best lists written from annotated text")
        scored = np.asarray(sent.scored, dtype=bool)
        gold = np.asarray(sent.gold_heads)
        labelled = (sent.gold_deprels is not None and any(d != "_" for d in sent.gold_deprels)
                    and any(d != "_" for c in sent.candidates for d in c.deprels))
        heads_ok, labels_ok = [], []
        for cand in sent.candidates:
            hit = (np.asarray(cand.heads) == gold) & scored
            heads_ok.append(int(hit.sum()))
            if labelled:
                same = np.array([a == b for a, b in zip(cand.deprels, sent.gold_deprels)])
                labels_ok.append(int((hit & same).sum()))
        ch = np.array(heads_ok, np.int64)
        out.append(RerankTarget(np.flatnonzero(ch == ch.max()), ch,
                                np.array(labels_ok, np.int64) if labelled else None,
                                int(scored.sum())))
    return out


def attachment_scores(targets, predictions) -> dict:
    """{"uas", "las" (None unless every sentence is labelled), "n_tokens_scored",
    "oracle_uas", "base_uas" (candidate 0)} of the chosen candidate indices, as fractions of
    the scored tokens (micro-averaged over the sentences)."""
    targets, predictions = list(targets), list(predictions)
    if len(targets) != len(predictions):
        raise InputError(f"{len(predictions)} predictions for {len(targets)} sentences; "
                         f"expected one chosen candidate per sentence")
    n = uas = las = oracle = base = 0
    labelled = all(t.correct_labels is not None for t in targets)
    for t, p in zip(targets, predictions):
        p = int(p)
        if not 0 <= p < t.correct_heads.shape[0]:
            raise InputError(f"prediction {p} is not a candidate index in "
                             f"0..{t.correct_heads.shape[0] - 1}")
        n += t.n_scored
        uas += int(t.correct_heads[p])
        oracle += int(t.correct_heads.max())
        base += int(t.correct_heads[0])
        if labelled:
            las += int(t.correct_labels[p])
    frac = (lambda v: v / n) if n else (lambda v: 0.0)
    return {"uas": frac(uas), "las": frac(las) if labelled else None,
            "n_tokens_scored": n, "oracle_uas": frac(oracle), "base_uas": frac(base)}


def write_chosen_trees(path, records, predictions) -> None:
    """The chosen candidate of every sentence as CoNLL-U (ID FORM LEMMA UPOS XPOS _ HEAD
    DEPREL _ _, a ``# sent_id`` comment per sentence), written atomically."""
    records, predictions = list(records), list(predictions)
    if len(records) != len(predictions):
        raise InputError(f"{len(predictions)} predictions for {len(records)} sentences")
    with atomic_write(path, "w") as fh:
        for sent, p in zip(records, predictions):
            cand = sent.candidates[int(p)]
            fh.write(f"# sent_id = {sent.id}\n")
            for m, (w, lemma, u, x, h, d) in enumerate(zip(
                    sent.words, sent.lemmas, sent.upos, sent.xpos, cand.heads, cand.deprels), 1):
                fh.write(f"{m}\t{w}\t{lemma}\t{u}\t{x}\t_\t{h}\t{d}\t_\t_\n")
            fh.write("\n")


class RelationVocab(dict):
    """relation string -> small id, with the relations' atoms and coordination flags
    (``cc``/``conj``, subtypes ignored) in parallel lists."""

    def __init__(self):
        super().__init__()
        self.atoms: list = []
        self.coord: list = []

    def __missing__(self, rel: str) -> int:
        self[rel] = i = len(self.atoms)
        self.atoms.append(atom("rel:" + rel))
        self.coord.append(rel.split(":")[0] in _COORD_RELS)
        return i


def chunk_inputs(records, pos_column, word_classes, vocab: RelationVocab, cache: dict,
                 maxc: int, base_score: bool, base_scale: float = 1.0) -> dict:
    """Flat arrays of a chunk of k-best sentences for
    :func:`~latentstruct.tasks.rerank.features.featurize_chunk`.

    ``word_classes(lowercased words, tags)`` gives each word's (n classes, n sub-values,
    class atoms); ``vocab`` and ``cache`` (atoms of words and tags) persist across chunks.
    Heads become 0-based (-1 for the root); the base feature is (s_j - s_1) / base_scale (0
    without ``base_score``).
    """
    wa, pa, pcc, ncls, nsub, cls = [], [], [], [], [], []
    heads, rels, labelled, base = [], [], [], []
    sc, sw, cn = [0], [0], [0]
    for sent in records:
        lower = [w.lower() for w in sent.words]
        tags = sent.upos if pos_column == "upos" else sent.xpos
        for w in lower:
            if w not in cache:
                cache[w] = atom("w:" + w)
        for t in tags:
            if ("\0pos", t) not in cache:
                cache[("\0pos", t)] = atom("p:" + t)
        wa.extend(cache[w] for w in lower)
        pa.extend(cache[("\0pos", t)] for t in tags)
        pcc.extend(t in _COORD_TAGS for t in tags)
        for c, s, cl in word_classes(lower, tags):
            ncls.append(c)
            nsub.append(s)
            cls.append(cl + (np.uint64(0),) * (maxc - len(cl)))
        best = sent.candidates[0].score
        for cand in sent.candidates:
            heads.extend(cand.heads)
            rels.extend(vocab[d] for d in cand.deprels)
            labelled.append(any(d != "_" for d in cand.deprels))
            base.append((cand.score - best) / base_scale if base_score else 0.0)
            cn.append(cn[-1] + len(lower))
        sc.append(len(labelled))
        sw.append(sw[-1] + len(lower))
    return {"sent_cand_ptr": np.array(sc, np.int64), "sent_word_ptr": np.array(sw, np.int64),
            "cand_node_ptr": np.array(cn, np.int64), "word_atom": np.array(wa, np.uint64),
            "pos_atom": np.array(pa, np.uint64), "pos_cc": np.array(pcc, np.bool_),
            "word_ncls": np.array(ncls, np.int64), "word_nsub": np.array(nsub, np.int64),
            "word_cls": np.array(cls, np.uint64).reshape(len(wa), maxc),
            "heads": np.array(heads, np.int64) - 1, "rel_idx": np.array(rels, np.int64),
            "labelled": np.array(labelled, np.bool_), "base_val": np.array(base, np.float64)}
