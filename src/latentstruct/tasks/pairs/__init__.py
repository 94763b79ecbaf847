"""Paraphrase identification and textual entailment over latent graph alignments (LCLR §4,
§5.2, §5.3).

An example is a sentence pair; its label is +1 (paraphrase / entailment) or -1.  Each
sentence is a graph whose nodes are its words and whose edges are its dependency arcs
(spaCy, :class:`~latentstruct.data.nlp.Parser`).  The hidden structure aligns the two
graphs with the four variable types of §4 — word mapping, word deletion, edge mapping and
edge deletion — tied by the constraints (6)-(11); the best alignment under ``w`` is found
by :class:`~latentstruct.inference.graph_alignment.GraphAlignmentILP` (see that module for
how the constraints are read).  f(x) = max_h w . Phi(x, h) is positive for a paraphrase /
entailment.

Graphs
------
Nodes are the sentence's tokens except punctuation (universal POS ``PUNCT``; whitespace
tokens are already removed by the parser); a sentence made only of punctuation keeps it.
A token whose head was dropped is attached to its nearest kept ancestor (with its own
dependency label) or becomes a root.  Edges are ``(head, dependent)`` with the dependent's
label.  A word is *negated* when it is a negation marker (``ParsedSentence.is_negation``) or
has a negation marker among its dependents in the full parse.  With ``pa_edges`` the graphs
also get predicate-argument edges, and with ``coref_features`` each word carries its
canonical form (see "Features").

Records may be :class:`~latentstruct.data.pairs.SentencePair` (parsed on the fly; parses
are cached on disk by the parser), ``(str, str)`` or ``(ParsedSentence, ParsedSentence)``
tuples (no parser needed).

Pruning (what has no variable)
------------------------------
All word pairs are scored by a cheap *affinity*, ``max(WNSim, edit similarity) + 0.01 *
[same POS]``, where WNSim is :meth:`~latentstruct.data.wordnet.WordNet.similarity` (1.0 for
equal lower-cased lemmas when ``use_wordnet=False``, else 0.0; with ``coref_features``
also 1.0 for coreferent pairs) and edit similarity is ``1 - levenshtein(a, b) /
max(len(a), len(b))`` on the lower-cased tokens.  Candidate word
mappings are then

* paraphrase: the ``top_k`` best G2 words of every G1 word **united with** the ``top_k``
  best G1 words of every G2 word (ties broken by position, earliest first);
* RTE (G1 = text, G2 = hypothesis): the ``top_k`` best text words of every hypothesis word
  only; text words that are nobody's candidate simply stay unmapped (the text has no
  deletion variables, §5.2).

Every other word pair is pruned: it has no word-mapping variable (fixed to 0).  Candidate
edge mappings are exactly the pairs of edges whose heads and whose dependents are both
candidate word pairs (the problem derives them); word-deletion and edge-deletion
variables are never pruned.  By default (``min_affinity=0``) nothing is pruned by a
threshold, so every word keeps at least ``min(top_k, other sentence length)`` candidates on
the side(s) that choose; ``min_affinity > 0`` also drops chosen pairs whose affinity is
below it.

Features (LCLR Table 2, plus the extras marked +)
-------------------------------------------------
Each part (variable) has a sparse feature vector over a :class:`~latentstruct.data.features.
FeatureIndex` fitted on the training examples; the part score is ``w . phi_part``.  The
features are built by :mod:`latentstruct.tasks.pairs.features`.  Always present:

word mapping ``map:``
    ``const`` (+, the learned value of a mapping by itself); ``wnsim`` (real, the WNSim
    value); WordNet bucket ``wn=same|syn|hi|mid|lo|0`` (equal lower-cased lemmas, WNSim 1,
    >= 0.6, >= 0.3, > 0, 0); POS pair ``pos=A|B`` (paraphrase: sorted, RTE: text|hyp);
    ``sp=P&wn=B`` (+, the shared POS, or ``x`` when they differ, with the WordNet bucket);
    ``antonym`` (+, WordNet antonyms; only with ``use_wordnet``).
word deletion ``del:``
    ``const`` (+), ``pos=P``.  RTE: hypothesis words only.
edge mapping ``emap:`` (NODE-INFO)
    ``const`` (+), ``h:wn=B`` and ``d:wn=B`` (WordNet buckets of the head and dependent
    word mappings).
edge deletion ``edel:`` (paraphrase only; RTE has none)
    ``const`` (+).
``bias``
    One feature every structure has (value 1), so f(x) can be negative.

Each further resource is a boolean task parameter (paraphrase default / RTE default), so
it can be ablated:

``ne_features`` (on / off) — named entities (spaCy's)
    ``map:ne=same|diff|one`` (both words in entities of the same / different types, only
    one in an entity) and ``del:ne=TYPE``.
``edit_features`` (on / off) — edit distance
    ``map:ed=eq|hi|mid|lo|none`` (edit similarity 1, >= 0.8, >= 0.6, >= 0.4, below).  The
    pruning affinity always uses edit similarity, whatever this option.
``negation_features`` (on / on) — negation markers
    ``map:neg_mismatch`` (one word negated, the other not).
``coref_features`` (off / off) — canonical entities of pronouns (Coref)
    A rule-based resolver (:func:`~latentstruct.tasks.pairs.features.canonical_forms`)
    gives each third-person pronoun the lower-cased lemma of its nearest preceding
    compatible antecedent in the same text (he/she: a PERSON entity or a proper noun outside
    any entity; it: a non-PERSON entity or a singular noun; they: any entity or a plural
    noun; a multi-word entity's last token).  A word mapping where one word's canonical form equals the other
    word's lower-cased lemma, or both canonical forms are equal, gets ``map:coref=same``,
    and its pruning affinity counts it as an exact lemma match (so "He" becomes a candidate
    for "John"); ``map:wnsim`` and the WordNet bucket are unchanged.
``dep_label_features`` (on / off) — dependency labels (DEP)
    ``emap:dep=same`` with ``emap:dep_same=LABEL``, or ``emap:dep=diff``; ``edel:dep=LABEL``.
``pa_edges`` (off / off) — predicate-argument edges
    Both graphs get extra edges approximated from the parse
    (:func:`~latentstruct.tasks.pairs.features.predicate_argument_arcs`): for every
    verb, ``verb -prep-> P -pobj-> X`` adds ``verb -> X`` labelled ``pa:<P's lemma>``, the
    passive's by-phrase ``verb -agent-> by -pobj-> X`` adds ``verb -> X`` labelled
    ``pa:subj`` (and ``nsubjpass`` reads ``pa:obj``, but that arc is already a dependency
    edge, which keeps its label).  An arc that is already an edge is not added twice.  The
    new edges have edge-mapping (and, for paraphrase, edge-deletion) variables like any
    other, with the labels above in the DEP features.
``edge_sim_features`` (on / on) — edge features scaled by word similarity
    ``emap:wnsim`` (real, the product of the head and dependent WNSim values: the
    word-mapping evidence scaled by the similarity of both endpoints).
``edge_node_features`` (off / off) — the endpoints' word-mapping features on the edge
    §5.2's edge-mapping features ("the features of the corresponding word mapping
    variables, scaled by the word similarity of the words forming the edge"): every
    ``map:NAME`` feature of the head's word mapping becomes ``emap:hs:NAME`` and every one
    of the dependent's ``emap:ds:NAME``, with its value times the product of the head and
    dependent WNSim values (none when that product is 0).

Table 2's columns are: paraphrase = WordNet, POS, NE, ED (mapping), POS, NE (deletion),
NODE-INFO + DEP (edges); RTE = WordNet, POS, Coref, Neg (mapping), POS (deletion),
NODE-INFO (edge mapping).  The defaults keep the features the task had before the
options existed (paraphrase also has negation; Coref is off for RTE until the experiments
decide).

With ``normalize=True`` every part feature is divided by kappa(x) — the mean length
``(n1 + n2) / 2`` for paraphrase, the hypothesis length for RTE — so that the decision reads
fractions ("a third of the words deleted") rather than counts; the argmax is unchanged and
the bias is not divided.  Names unseen in training are dropped at prediction time.

Structures
----------
A legal alignment is determined by its word mappings (see the inference module), so the
structure ``h`` handed to learners is an int64 array ``a`` of G1's length with ``a[i] = j``
(G1 word i mapped to G2 word j) or ``-1``.  :meth:`GraphPairTask.alignment` rebuilds the
full :class:`~latentstruct.inference.graph_alignment.GraphAlignment`, and
:meth:`GraphPairTask.decode` returns the solver's own result.

Two-stage heuristic
-------------------
:meth:`GraphPairTask.heuristic_weights` scores the same ILP with WNSim (§5.2: "we used
WNSim to score alignments"): weight 1 on ``map:wnsim``, a small deletion cost (-0.1 on
``del:const``) and a mapping constant that makes a word mapping worth it exactly when its
WNSim exceeds ``heuristic_threshold`` (``map:const = -threshold - 0.1 x`` the number of
sides with deletion variables).  Edge variables get no score; they follow the word
mappings through the constraints (10)-(11), so this heuristic is solved exactly by the
matching stage of the ILP solver.  With the user's word-pair scores (below) each
``map:score:K`` gets weight ``1/k``: WNSim plus the mean score decides.

Your own word-pair scores
-------------------------
An in-memory example may be ``(a, b, scores)``: an (n_a x n_b) or (n_a x n_b x k) array of
numbers over :meth:`GraphPairTask.pair_tokens` (the graph nodes above).  Each score is the
real feature ``map:score:K`` of the word mapping a_i <-> b_j and adds its top-k pairs to the
candidates; :meth:`GraphPairTask.with_pair_scores` computes them from a function
``f(tokens_a, tokens_b)``.  See :mod:`latentstruct.tasks.pairs.scores`.

Modules: ``graphs`` (sentence graphs, candidate pruning, featurised pairs), ``features``
(the part features), ``featurizer`` (:class:`~latentstruct.tasks.pairs.featurizer.
PairFeaturizer`, the scikit-learn transformer from pairs to featurised examples: parsing,
graphs, pruning, the feature columns), ``task`` (:class:`GraphPairTask`: parameters,
reading, fitting, evaluation, persistence), ``structure`` (:class:`GraphPairStructure`,
the immutable structure a fitted task holds and learners see: the feature index, the
deletion layout, the heuristic's threshold), ``decoding`` (the structure's ILP decoding
glue, heuristic weights and ``explain``), ``paraphrase`` and ``rte`` (the two registered tasks and their data sets), ``raw``
(``make_dataset``'s in-memory pairs) and ``scores`` (the user's word-pair scores).
"""

from ...exceptions import ConfigError
from .features import edit_similarity
from .featurizer import PairFeaturizer
from .graphs import GraphPair, SentenceGraph, candidate_pairs, pair_digest
from .scores import ScoredSentencePair
from .structure import GraphPairStructure
from .task import GraphPairTask, binary_metrics
from .paraphrase import ParaphraseTask
from .rte import RteTask

__all__ = [
    "SentenceGraph",
    "GraphPair",
    "GraphPairTask",
    "GraphPairStructure",
    "PairFeaturizer",
    "ParaphraseTask",
    "RteTask",
    "candidate_pairs",
    "edit_similarity",
    "binary_metrics",
    "pair_digest",
    "ScoredSentencePair",
    "with_pair_scores",
]


def with_pair_scores(X, f, task="paraphrase", **params):
    """``[(a, b, f(tokens_a, tokens_b)), ...]`` over the tokens of ``task`` (a task object,
    or ``"paraphrase"`` / ``"rte"`` built with ``params``): :meth:`GraphPairTask.with_pair_scores`."""
    if isinstance(task, str):
        classes = {"paraphrase": ParaphraseTask, "rte": RteTask}
        if task not in classes:
            raise ConfigError(f"task must be 'paraphrase', 'rte' or a GraphPairTask, got {task!r}")
        task = classes[task](**params)
    return task.with_pair_scores(X, f)
