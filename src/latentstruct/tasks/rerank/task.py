"""Reranking k-best dependency trees with hidden variables (Koo & Collins 2005): task ``rerank``.

Each example is a sentence with the k best trees t_1..t_k of a base parser (a k-best file,
:mod:`latentstruct.data.dependency.kbest`).  Every word w of a candidate gets a hidden value
h_w from a domain H_w(t), and

    p(t_j, h | s) ∝ exp(w · Φ(t_j, h)),    Φ(t, h) = Σ_w φ(t, w, h_w) + Σ_{(u,v) ∈ D(t)} φ(t, u, v, h_u, h_v)

(Eq. 4), where D(t) is a tree over the words (:mod:`.features`: the candidate's own
head-modifier tree, or its sibling tree).  Summing h out gives p(t_j | s) = Z_j / Σ_j' Z_j'
(Eq. 2), computed exactly by tree belief propagation; this task supplies log Z_j, the
expected features F(t_j) = E_{h|t_j}[Φ(t_j, h)] and the max-product h* (capabilities
*candidate-list* and *marginalizable*); the learner (``hidden-reranker``) optimises.

**Hidden-value domains** (``domain``, §4.1; ``n_hidden`` sub-values per class, None = the
paper's sizes): ``"lexical"`` (the lowercased word × 3, refinement), ``"pos"`` (the POS × 5,
clustering), ``"relation"`` (the word's relation to its head in the candidate × 5, our
analogue of the highest nonterminal), ``"supersense"`` (each of the word's first
``max_supersenses`` WordNet supersenses × 3; a word without one falls back to POS × 5), and
``"no-hidden"`` (one value per word: a plain conditional log-linear reranker over the same
templates, the no-hidden-variable ablation).

**Features** are hashed into 2**hash_bits weights; weight index 2**hash_bits (the last) is
the base parser's score, (s_j − s_1) / σ, whose weight is learned like any other
(``base_score=False``: the feature is 0).  Subtracting the best candidate's score leaves the
distribution unchanged; σ, the root mean square of s_j − s_1 over the training lists (fitted,
saved with the model; 1 if all are 0), puts parsers whose scores live on different scales
on one footing for the learning rate.

**Targets** (:meth:`RerankTask.encode_targets`): the *oracle set* of a sentence is every
candidate with the most correct heads on scored tokens.  Ties keep the whole tied set, so the
training loss is −log Σ_{j ∈ oracle} p(t_j | s): the paper defines t_{i,1} as "the" best
candidate without saying how ties are broken, and summing over the tied set neither favours
an arbitrary member nor depends on the base parser's order.  A sentence with no scored token
has every candidate in its oracle set (zero loss).

**Per-candidate numbers** (``make_dataset`` with ``(words, pos, candidates, numbers)``):
row j of an (n_candidates x d) array a holds real-valued global features of candidate j
(another model's score of the tree, say).  They live after the base score, weights
``base_index + 1 ..  base_index + d``, and enter like it: w_num . a_j is added to log Z_j
and to max_h w . Phi(t_j, h), and F(t_j) holds a_j (it does not depend on h), so the
learner sees them through the candidate-list capability unchanged.  The fitted task records
``input_kind_`` ("tokens" or "numbers") and ``n_candidate_columns_`` (d; 0 without) and
refuses lists of the other kind or width; k-best files carry no numbers.

**Featurizer and structure.** What the training lists fix (parser, POS column, σ, input
kind) and the hashed templates of every candidate are the
:class:`~latentstruct.tasks.rerank.featurizer.RerankFeaturizer`'s, which the task fits
and holds (``featurizer_``; its attributes mirrored on the task); the structure it builds
from it and holds (``structure_``, a
:class:`~latentstruct.tasks.rerank.structure.RerankStructure`) is the weight layout, log
Z_j, F(t_j) and max-product over the featurised lists.

**Parser identity.** The fitted task remembers the ``parser_id`` of its training lists; reading
or featurising lists of another parser raises ``InputError`` at ``file:1`` (their base scores
are on another scale).
"""

from __future__ import annotations

from typing import ClassVar

from ...data.dependency.kbest import read_kbest
from ...exceptions import ConfigError, check_is_fitted, is_fitted
from ...limits import RERANK_HASH_BITS
from ...params import bounded
from ..base import ComposedTask, Dataset, register_task
from ..contracts import CANDIDATE_LIST, MARGINALIZABLE
from .data import (
    RerankCorpus, RerankTarget, attachment_scores, encode_kbest_targets, kbest_dataset,
    write_chosen_trees,
)
from .featurizer import DOMAINS, GRAPHS, RerankFeaturizer, kbest_header, sub_values
from .raw import IN_MEMORY_PARSER_ID, candidate_indices, kbest_raw_dataset
from .structure import CandidateExpectation, RerankMarginals, RerankStructure

__all__ = ["RerankTask", "RerankMarginals", "CandidateExpectation", "DOMAINS", "GRAPHS"]

#: the fitted featurizer's attributes the task mirrors (``make_dataset``, the estimators
#: and tests read them on the task)
_FEATURIZER_ATTRIBUTES = ("parser_id_", "pos_column_", "base_scale_", "input_kind_",
                          "n_candidate_columns_")


@register_task
class RerankTask(ComposedTask):
    """Hidden-variable reranking of k-best dependency trees (Koo & Collins 2005).

    Parameters
    ----------
    domain, graph, n_hidden, max_supersenses, base_score, pos_column
        The featurizer's (:class:`~latentstruct.tasks.rerank.featurizer.RerankFeaturizer`'s,
        which documents them), by name.
    hash_bits : int, default 20
        Features are hashed into 2**hash_bits weights (plus one for the base score).

    Notes
    -----
    Data in memory (:meth:`make_dataset`): ``X`` is a list of k-best lists, one
    ``(words, pos, candidates)`` per sentence with candidates ``(heads, deprels, score)``
    best first (heads 1-based, 0 = root; deprels None when unlabelled); ``y`` the gold
    trees (heads, or (head, deprel) pairs) or None; ``decode_predictions`` gives the
    chosen candidate's index per sentence::

        task = RerankTask()
        data = task.make_dataset(
            [(["She", "runs"], ["PRON", "VERB"],
              [([2, 0], ["nsubj", "root"], -1.5), ([0, 1], ["root", "dep"], -2.0)])],
            [[(2, "nsubj"), (0, "root")]])
    """

    name = "rerank"
    score_metric = "uas"
    default_learner = "hidden-reranker"
    capabilities: ClassVar[frozenset] = frozenset({MARGINALIZABLE, CANDIDATE_LIST})
    structure_class = RerankStructure

    #: the featurizer ``fit`` builds; its parameters are the task's too
    featurizer_class = RerankFeaturizer

    def __init__(self, *, hash_bits=20, **featurizer_params):
        super().__init__(**featurizer_params)
        self.hash_bits = hash_bits

    # --- parameters and data -------------------------------------------------------------
    _parameter_constraints = {"hash_bits": [bounded(RERANK_HASH_BITS)]}  # and the featurizer's

    def _check_param_relations(self) -> None:
        nh = self.n_hidden
        if self.domain == "no-hidden" and nh not in (None, 1):
            raise ConfigError(f"domain 'no-hidden' has one value per word; n_hidden must be None or "
                              f"1, got {nh!r} (choose another domain to split words)")

    def read(self, path, *, split: str = "train") -> Dataset:
        """Read a k-best file; a fitted task refuses lists of another parser (file:1)."""
        header, sentences = read_kbest(path)
        if is_fitted(self):
            self.featurizer_.check_parser(header, str(path))
        return kbest_dataset(header, sentences, path)

    def make_dataset(self, X, y=None, *, parser_id: str = IN_MEMORY_PARSER_ID) -> Dataset:
        """k-best lists from memory: the in-memory twin of :meth:`read`.

        ``X``: one ``(words, pos, candidates)`` per sentence: n words, n POS tags (UD or
        PTB; they fill both tag columns) and 1..``MAX_K`` candidate trees
        ``(heads, deprels, score)``, best first (n 1-based heads, 0 = root, forming a tree;
        n relations or None when unlabelled; the base parser's finite score, decreasing
        along the list).  ``y``: one gold tree per sentence, n heads (ints in 0..n) or n
        ``(head, deprel)`` pairs, None for a sentence without one; or ``y=None`` for lists
        to rerank.  Every field gets the k-best reader's checks, and the records are the
        ``KBestSentence`` it builds (ids ``"0"``, ``"1"``...; lemmas ``"_"``; punctuation,
        UD ``PUNCT`` or a PTB punctuation tag, not scored), so featurising and evaluating
        are unchanged (see :mod:`latentstruct.tasks.rerank.raw`).

        Parser identity: a k-best file names its parser in its header, and a fitted task
        refuses lists of another parser (base scores of different parsers are on different
        scales).  Lists given in memory carry ``parser_id``, by default
        ``"in-memory"``: one family for all in-memory lists.  To rerank in-memory lists
        with a reranker trained on a file's lists (or the other way round), pass that
        file's ``parser_id`` (``read_kbest(path)[0].parser_id``), when they truly come from
        the same parser.  A bad sentence is an ``InputError`` naming ``X[i]`` (``X[i][2][j]``
        for candidate j) or ``y[i]``.

        Numbers: ``X[i]`` may be ``(words, pos, candidates, numbers)``, ``numbers`` an
        (n_candidates x d) array, dense or ``scipy.sparse`` (module docstring); every
        example the same way, with the same d (that of a model fitted with numbers).
        """
        fitted = is_fitted(self) and self.input_kind_ == "numbers"
        return kbest_raw_dataset(X, y, parser_id=parser_id,
                                 n_columns=self.n_candidate_columns_ if fitted else None)

    def decode_predictions(self, predictions) -> list:
        """``predict``'s chosen candidates as a list of Python ints: ``p`` for sentence i is
        the index of its chosen tree, ``X[i][2][p]`` in :meth:`make_dataset`'s form."""
        return candidate_indices(predictions)

    def fit(self, dataset: Dataset) -> "RerankTask":
        """Fit the featurizer (``featurizer_``): the parser, the POS column and the
        base-score scale σ of the training lists, and their input kind (hashed features
        need no vocabulary)."""
        featurizer = self.make_featurizer().fit(dataset.records, path=dataset.path)
        self._use_featurizer(featurizer)
        self._build_structure()
        return self

    def _new_structure(self) -> RerankStructure:
        """The weight layout of ``hash_bits`` and the fitted lists' numbers."""
        return self.structure_class(int(self.hash_bits), self.featurizer_.input_kind_,
                                    int(self.featurizer_.n_candidate_columns_))

    def _use_featurizer(self, featurizer: RerankFeaturizer) -> None:
        """Hold the fitted ``featurizer`` and mirror its learned attributes."""
        self.featurizer_ = featurizer
        for name in _FEATURIZER_ATTRIBUTES:
            setattr(self, name, getattr(featurizer, name))

    def n_sub_values(self) -> int:
        """Sub-values per class (value v of a word's domain is sub-value v % n_sub_values)."""
        return sub_values(self.domain, self.n_hidden)

    def featurize(self, dataset: Dataset) -> RerankCorpus:
        """Templates, graphs and value sets of every candidate (see :mod:`.features`;
        ``featurizer_.transform``)."""
        check_is_fitted(self)
        self.featurizer_.check_parser(kbest_header(dataset.records, dataset.path),
                                      dataset.path)
        self.check_params()
        return self.featurizer_.transform(dataset.records, path=dataset.path)

    # --- targets, metrics, output --------------------------------------------------------
    def encode_targets(self, targets) -> list[RerankTarget]:
        """Oracle sets and per-candidate correct heads/labels (see the module docstring)."""
        return encode_kbest_targets(targets)

    def evaluate(self, targets, predictions) -> dict:
        """UAS/LAS of the chosen candidates (indices), with the oracle and candidate 0.

        Returns {"uas", "las" (None unless every sentence is labelled), "n_tokens_scored",
        "oracle_uas", "base_uas"}; scores are fractions of the scored tokens.
        """
        return attachment_scores(targets, predictions)

    def write_predictions(self, path, dataset: Dataset, predictions) -> None:
        """The chosen trees as CoNLL-U (ID FORM LEMMA UPOS XPOS _ HEAD DEPREL _ _), atomically."""
        write_chosen_trees(path, dataset.records, predictions)

    # --- persistence ---------------------------------------------------------------------
    def get_state(self):
        check_is_fitted(self)
        return self.featurizer_.get_state(), {}

    @classmethod
    def from_state(cls, params, state, arrays):
        task = cls(**params)
        task.check_params()
        task._use_featurizer(RerankFeaturizer.from_state(
            state, **task.make_featurizer().get_params()))
        task._build_structure()
        return task
