"""k-best lists to the arrays the reranker's structure scores: :class:`RerankFeaturizer`.

A scikit-learn transformer over the records of a ``rerank`` dataset (``KBestRecords``, the
sentences of a k-best file or of ``make_dataset`` with their header).  ``fit`` learns what
the training lists fix: the parser that wrote them (``parser_id_``), the POS column the
features read (``pos_column_``), the scale of the base parser's scores (``base_scale_``:
the root mean square of s_j - s_1) and the input kind (per-candidate numbers of
``n_candidate_columns_`` columns, or none).  ``transform`` gives one
:class:`~latentstruct.tasks.rerank.data.RerankCorpus`: every candidate's hashed node and
edge templates, its graph D(t) and its words' hidden-value sets (:mod:`.features`; strings
become 64-bit atoms through a relation vocabulary and a per-call cache), the base-score
feature and the stacked per-candidate numbers.

:class:`~latentstruct.tasks.rerank.RerankTask` fits one and delegates to it
(``featurizer_``); its model file holds :meth:`RerankFeaturizer.get_state`, so a loaded
reranker featurises new lists as it did at training time.  The weights' layout (the hash
mask ``2**hash_bits``, the base-score and number weights after it) is the task's.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import TransformerMixin

from ...data.dependency.kbest import KBestHeader
from ...data.wordnet import WordNet
from ...exceptions import InputError, check_is_fitted
from ...limits import MAX_SUPERSENSES, N_HIDDEN
from ...params import BOOL, Options, bounded
from ...featurizers.base import Featurizer
from ..dependency.numbers import INPUT_KINDS, check_count
from .data import RelationVocab, RerankCorpus, chunk_inputs
from .features import N_EDGE_TEMPLATES, N_NODE_TEMPLATES, TAGS, atom, build_storage, \
    featurize_chunk
from .raw import numbers_kind
from .scoring import stack_numbers

__all__ = ["RerankFeaturizer", "DOMAINS", "GRAPHS", "PAPER_N_HIDDEN", "SUPERSENSE_FALLBACK",
           "sub_values", "kbest_header"]

DOMAINS = ("no-hidden", "lexical", "pos", "relation", "supersense")
GRAPHS = ("head", "sibling")
#: the paper's sub-values per class (§4.1); the supersense fallback splits the POS into 5
PAPER_N_HIDDEN = {"no-hidden": 1, "lexical": 3, "pos": 5, "relation": 5, "supersense": 3}
SUPERSENSE_FALLBACK = 5
_CHUNK = 512
_UPOS_WORDNET = {"PROPN": "n", "NOUN": "n", "VERB": "v", "AUX": "v", "ADJ": "a", "ADV": "r"}


def sub_values(domain: str, n_hidden) -> int:
    """Sub-values per value class: ``n_hidden``, or the paper's for ``domain`` when None."""
    return int(n_hidden) if n_hidden is not None else PAPER_N_HIDDEN[domain]


def _ptb_wordnet_pos(tag: str) -> str | None:
    for prefix, letter in (("NN", "n"), ("VB", "v"), ("JJ", "a"), ("RB", "r")):
        if tag.startswith(prefix):
            return letter
    return None


def kbest_header(records, path=None) -> KBestHeader:
    """The header of k-best ``records`` (``KBestRecords``); an InputError without one."""
    header = getattr(records, "header", None)
    if not isinstance(header, KBestHeader):
        raise InputError(
            "the rerank task needs k-best lists with their header (the parser id); read "
            "them with RerankTask.read(path) or build the dataset with kbest_dataset(header, "
            "sentences)", path)
    return header


class RerankFeaturizer(TransformerMixin, Featurizer):
    """k-best lists to hashed candidate templates, graphs and value sets (a ``RerankCorpus``).

    Parameters
    ----------
    domain : {"no-hidden", "lexical", "pos", "relation", "supersense"}, default "pos"
        Hidden-value domain of each word (Koo & Collins §4.1); "no-hidden" is the plain
        log-linear reranker.
    graph : {"head", "sibling"}, default "head"
        The tree D(t) that pairwise features follow: head-modifier or sibling links (§4.2).
    n_hidden : int or None, default None
        Sub-values per value class (None: the paper's 3 for lexical and supersense, 5 for
        pos, relation and the supersense fallback; :data:`PAPER_N_HIDDEN`).
    max_supersenses : int, default 3
        Supersenses per word kept (WordNet's most frequent first), for domain "supersense".
    base_score : bool, default True
        Use the base parser's score as a feature: (s_j - s_1) / σ for candidate j (else 0).
    pos_column : {"auto", "upos", "xpos"}, default "auto"
        Tag column for POS features; "auto" takes upos unless the training lists have none
        (the PTB .dp lists), then xpos.

    Attributes
    ----------
    parser_id_ : str
        The parser of the training lists; ``transform`` refuses lists of another.
    pos_column_ : {"upos", "xpos"}
        ``pos_column`` resolved.
    base_scale_ : float
        σ, the root mean square of s_j - s_1 over the training lists (1 if all are 0).
    input_kind_ : {"tokens", "numbers"}
        Whether the lists came with per-candidate numbers, of ``n_candidate_columns_``
        columns (0 without); ``transform`` refuses the other kind or width.
    """

    _parameter_constraints = {
        "domain": [Options(*DOMAINS)],
        "graph": [Options(*GRAPHS)],
        "pos_column": [Options("auto", "upos", "xpos")],
        "max_supersenses": [bounded(MAX_SUPERSENSES)],
        "n_hidden": [bounded(N_HIDDEN), None],
        "base_score": [BOOL],
    }

    def __init__(self, domain="pos", graph="head", n_hidden=None, max_supersenses=3,
                 base_score=True, pos_column="auto"):
        self.domain = domain
        self.graph = graph
        self.n_hidden = n_hidden
        self.max_supersenses = max_supersenses
        self.base_score = base_score
        self.pos_column = pos_column

    # --- fit ------------------------------------------------------------------------------
    def fit(self, records, y=None, *, path=None) -> "RerankFeaturizer":
        """Learn the parser, the POS column, the base-score scale σ and the input kind of
        the training lists ``records`` (hashed features need no vocabulary)."""
        header = kbest_header(records, path)
        if len(records) == 0:
            raise InputError("the k-best file holds no sentences", path)
        col = self.pos_column
        if col == "auto":
            col = "upos" if any(t != "_" for s in records for t in s.upos) else "xpos"
        diffs = np.array([c.score - s.candidates[0].score for s in records
                          for c in s.candidates])
        rms = float(np.sqrt(np.mean(diffs ** 2))) if diffs.size else 0.0
        self.parser_id_ = header.parser_id
        self.pos_column_ = col
        self.base_scale_ = rms if rms > 0 else 1.0
        self.input_kind_, self.n_candidate_columns_ = numbers_kind(records, path)
        return self

    # --- checks ---------------------------------------------------------------------------
    _fit_hint = "Call fit(records) on training k-best lists first."

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "parser_id_")

    def check_parser(self, header: KBestHeader, path) -> None:
        """Refuse lists of another parser than the training lists' (at ``path``:1)."""
        if header.parser_id != self.parser_id_:
            raise InputError(
                f"k-best lists of parser {header.parser_id}, but this reranker was trained on "
                f"lists of parser {self.parser_id_}; base scores of different parsers are on "
                f"different scales. Rerank lists written by the parser the reranker was trained "
                f"with (same training file and options), or retrain the reranker on lists of "
                f"this parser", path, 1)

    def check_input(self, records, path) -> None:
        """Refuse lists of the other input kind or width than the model's."""
        kind, d = numbers_kind(records, path)
        if kind == self.input_kind_ and d == self.n_candidate_columns_:
            return
        if self.input_kind_ == "tokens":
            raise InputError(f"this reranker was trained without per-candidate numbers, but "
                             f"the lists come with them ({d} columns); give (words, pos, "
                             f"candidates) examples, or train the reranker on numbered lists",
                             path)
        if kind == "tokens":
            raise InputError(f"this reranker was trained with per-candidate numbers "
                             f"({self.n_candidate_columns_} columns), but the lists have none; "
                             f"give each example as (words, pos, candidates, numbers) with an "
                             f"(n_candidates x {self.n_candidate_columns_}) array", path)
        raise InputError(f"the lists' numbers have {d} columns, but this reranker was trained "
                         f"with {self.n_candidate_columns_}; give the columns it was trained "
                         f"with, in the same order", path)

    # --- hidden-value classes -------------------------------------------------------------
    def _wordnet(self) -> WordNet:
        if getattr(self, "_wn", None) is None:
            self._wn = WordNet()
        return self._wn

    def _word_classes(self, words, tags):
        """(ncls, nsub, classes) of each word for the word-level domains."""
        dom, sub = self.domain, sub_values(self.domain, self.n_hidden)
        if dom == "no-hidden":
            return [(1, 1, (TAGS[0],))] * len(words)
        if dom == "lexical":
            return [(1, sub, (atom("word:" + w),)) for w in words]
        if dom in ("pos", "relation"):
            return [(1, sub, (atom("pos:" + t),)) for t in tags]
        wn, out = self._wordnet(), []
        fallback = sub if self.n_hidden is not None else SUPERSENSE_FALLBACK
        for w, t in zip(words, tags):
            letter = (_ptb_wordnet_pos(t) if self.pos_column_ == "xpos"
                      else _UPOS_WORDNET.get(t))
            ss = wn.supersenses(w, letter)[: self.max_supersenses] if letter else ()
            out.append((len(ss), sub, tuple(atom("ss:" + x) for x in ss)) if ss
                       else (1, fallback, (atom("pos:" + t),)))
        return out

    # --- transform ------------------------------------------------------------------------
    def transform(self, records, *, path=None) -> RerankCorpus:
        """Templates, graphs and value sets of every candidate (see :mod:`.features`), with
        the per-candidate numbers of numbered lists; lists of another parser, kind or
        width are an InputError."""
        check_is_fitted(self)
        self.check_parser(kbest_header(records, path), path)
        self.check_input(records, path)
        maxc = self.max_supersenses if self.domain == "supersense" else 1
        sub = sub_values(self.domain, self.n_hidden)
        kmax = max(maxc * sub, SUPERSENSE_FALLBACK if self.domain == "supersense" else 1)
        vocab, cache = RelationVocab(), {}
        records = list(records)
        graph = GRAPHS.index(self.graph)

        def chunks():  # one chunk at a time: only its deduplicated rows are kept
            for a in range(0, len(records), _CHUNK):
                ch = chunk_inputs(records[a:a + _CHUNK], self.pos_column_, self._word_classes,
                                  vocab, cache, maxc, self.base_score, self.base_scale_)
                N = ch["heads"].shape[0]
                out = {"node_tmpl": np.zeros((N, N_NODE_TEMPLATES), np.uint64),
                       "edge_tmpl": np.zeros((N, N_EDGE_TEMPLATES), np.uint64),
                       "bp_parent": np.zeros(N, np.int64), "node_key": np.zeros(N, np.uint64),
                       "edge_key": np.zeros(N, np.uint64), "vs_key": np.zeros(N, np.uint64),
                       "vs_ncls": np.zeros(N, np.int64), "vs_nsub": np.zeros(N, np.int64),
                       "vs_cls": np.zeros((N, maxc), np.uint64)}
                featurize_chunk(ch["sent_cand_ptr"], ch["sent_word_ptr"], ch["cand_node_ptr"],
                                ch["word_atom"], ch["pos_atom"], ch["pos_cc"], ch["word_ncls"],
                                ch["word_nsub"], ch["word_cls"], ch.pop("heads"),
                                ch.pop("rel_idx"), np.array(vocab.atoms, np.uint64),
                                np.array(vocab.coord, np.bool_), ch["labelled"], graph,
                                self.domain == "relation", sub, TAGS, *out.values())
                ch.update(out)
                yield ch

        storage = build_storage(chunks(), kmax)
        if self.input_kind_ == "numbers":
            storage.numbers, storage.numbers_row = stack_numbers(
                [r.numbers for r in records], self.n_candidate_columns_)
        return RerankCorpus(storage)

    # --- persistence ----------------------------------------------------------------------
    def get_state(self) -> dict:
        """The fitted attributes as the rerank model file stores them (JSON values)."""
        check_is_fitted(self)
        state = {"parser_id": self.parser_id_, "pos_column": self.pos_column_,
                 "base_scale": self.base_scale_}
        if self.input_kind_ == "numbers":  # a model without numbers is saved as before
            state.update(input_kind=self.input_kind_,
                         n_candidate_columns=int(self.n_candidate_columns_))
        return state

    @classmethod
    def from_state(cls, state: dict, **params) -> "RerankFeaturizer":
        """A fitted featurizer from :meth:`get_state`'s ``state`` (a model file's; one saved
        before per-candidate numbers has no input kind: tokens) and its ``params``."""
        featurizer = cls(**params)
        featurizer.parser_id_ = str(state["parser_id"])
        featurizer.pos_column_ = str(state["pos_column"])
        featurizer.base_scale_ = float(state["base_scale"])
        featurizer.input_kind_ = state.get("input_kind", "tokens")
        if featurizer.input_kind_ not in INPUT_KINDS:
            raise InputError(f"the model file's input_kind is {featurizer.input_kind_!r}; "
                             f"expected one of {', '.join(INPUT_KINDS)}. The file is damaged; "
                             f"save the model again")
        featurizer.n_candidate_columns_ = check_count(state.get("n_candidate_columns", 0),
                                                      "n_candidate_columns")
        return featurizer
