"""Part features of the graph-alignment tasks (LCLR Table 2) and the parse-derived
resources behind them.

:mod:`latentstruct.tasks.pairs.graphs` builds the sentence graphs and the alignment
problems; this module holds what turns them into features, so each resource can be
switched on and off (:class:`FeatureOptions`) and ablated:

* :func:`lexical` — the word-pair matrices (WNSim, lemma equality, edit similarity,
  coreference match) and the pruning affinity;
* :func:`part_features` — the ``(name, value)`` list of every variable (the feature names
  are listed in the :mod:`latentstruct.tasks.pairs` docstring, "Features");
* :func:`canonical_forms` — a small rule-based pronoun resolver (the Coref resource);
* :func:`predicate_argument_arcs` and :func:`add_edges` — predicate-argument edges
  approximated from the dependency parse.

Everything here reads only the fields a :class:`~latentstruct.data.nlp.ParsedSentence`
already has (tokens, lemmas, universal POS, Penn tags, entity tags, heads, labels), so the
parse cache is unchanged.  Graph arguments are duck-typed (``tokens``, ``lemmas``, ``pos``,
``ner``, ``negated``, ``labels``, ``canonical``: a
:class:`~latentstruct.tasks.pairs.SentenceGraph`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...data.nlp import ParsedSentence
from ...exceptions import InferenceError

__all__ = [
    "PRONOUN_KINDS",
    "FeatureOptions",
    "Lexical",
    "add_edges",
    "canonical_forms",
    "coref_matrix",
    "ed_bucket",
    "edit_similarity",
    "lexical",
    "part_features",
    "predicate_argument_arcs",
    "wn_bucket",
]


# --------------------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FeatureOptions:
    """Which Table-2 resources make features (the task parameters of the same meaning).

    ``symmetric``: POS pairs are sorted (paraphrase) or ordered G1|G2 (RTE).
    ``named_entities``: ``map:ne=...`` and ``del:ne=...``.  ``edit_distance``:
    ``map:ed=...``.  ``negation``: ``map:neg_mismatch``.  ``coref``: ``map:coref=same``
    (and coreferent pairs count as lemma matches in the pruning affinity, see
    :func:`lexical`).  ``dep_labels``: ``emap:dep=...`` / ``emap:dep_same=...`` and
    ``edel:dep=...``.  ``edge_sim``: ``emap:wnsim``.  ``edge_node``: ``emap:hs:...`` and
    ``emap:ds:...`` (the endpoints' word-mapping features scaled by the edge's similarity).
    """

    symmetric: bool = True
    named_entities: bool = True
    edit_distance: bool = True
    negation: bool = True
    coref: bool = False
    dep_labels: bool = True
    edge_sim: bool = True
    edge_node: bool = False


# --------------------------------------------------------------------------------------
# the pronoun resolver (Coref)
# --------------------------------------------------------------------------------------
#: third-person personal pronouns (lower-cased lemma or token) -> the antecedents they take
PRONOUN_KINDS: dict[str, str] = {
    **dict.fromkeys(("he", "him", "his", "himself", "she", "her", "hers", "herself"), "person"),
    **dict.fromkeys(("it", "its", "itself"), "thing"),
    **dict.fromkeys(("they", "them", "their", "theirs", "themselves"), "plural"),
}
_PLURAL_TAGS = frozenset({"NNS", "NNPS"})
_NOUNS = frozenset({"NOUN", "PROPN"})


def _entity_type(tag: str) -> str:
    return tag.split("-", 1)[1] if "-" in tag else ""


def _compatible(kind: str, pos: str, tag: str, etype: str) -> bool:
    """Whether a token (not a pronoun) can be the antecedent of a pronoun of ``kind``."""
    if kind == "person":
        # a PERSON entity, or a singular proper noun spaCy left outside any entity
        return etype == "PERSON" or (pos == "PROPN" and not etype and tag != "NNPS")
    if kind == "thing":
        if etype:
            return etype != "PERSON"
        return pos in _NOUNS and tag not in _PLURAL_TAGS
    return bool(etype) or tag in _PLURAL_TAGS  # plural


def canonical_forms(sent: ParsedSentence) -> tuple[str, ...]:
    """The canonical form of every token of ``sent``: a resolved pronoun's antecedent, else "".

    A rule-based stand-in for the coreference system of LCLR §5.2, applied within one
    parsed text (all its sentences; RTE texts often have several).  A token is a pronoun
    when its universal POS is ``PRON`` and its lower-cased lemma (or token) is in
    :data:`PRONOUN_KINDS`.  It resolves to the *nearest preceding* token, anywhere earlier in
    the text, that is not itself a ``PRON`` and is compatible with it:

    * he / him / his / she / her ... (``person``): a token of a ``PERSON`` entity, or a
      proper noun (``PROPN``) outside any entity whose tag is not ``NNPS``;
    * it / its / itself (``thing``): a token of a non-``PERSON`` entity, or a common or
      proper noun (``NOUN`` / ``PROPN``) outside any entity whose tag is not plural
      (``NNS`` / ``NNPS``);
    * they / them / their ... (``plural``): a token of any entity, or a plural noun (tag
      ``NNS`` / ``NNPS``).

    The canonical form is the antecedent's lower-cased lemma; for a multi-word entity that
    is its last token, the first one met going backwards (its head: "John Smith" ->
    "smith").  Unresolved pronouns and all other tokens get "".  There is no gender or
    number agreement beyond these rules, no distance limit, no cataphora and no detection
    of pleonastic "it" ("it is raining" resolves to any earlier singular noun).
    """
    n = len(sent)
    etypes = [_entity_type(t) for t in sent.ner]
    out = [""] * n
    for i in range(n):
        if sent.pos[i] != "PRON":
            continue
        kind = PRONOUN_KINDS.get(sent.lemmas[i].lower()) or PRONOUN_KINDS.get(sent.tokens[i].lower())
        if kind is None:
            continue
        for k in range(i - 1, -1, -1):
            if sent.pos[k] == "PRON" or not _compatible(kind, sent.pos[k], sent.tags[k], etypes[k]):
                continue
            # scanning backwards meets a multi-word entity at its last token, its head
            out[i] = sent.lemmas[k].lower()
            break
    return tuple(out)


# --------------------------------------------------------------------------------------
# predicate-argument edges
# --------------------------------------------------------------------------------------
def predicate_argument_arcs(sent: ParsedSentence) -> list[tuple[int, int, str]]:
    """``(verb, argument, label)`` arcs (token indices of ``sent``) read off the parse.

    A cheap approximation of semantic-role edges from the dependency tree (ClearNLP labels,
    as spaCy's English pipelines give them).  For every token with universal POS ``VERB``:

    * ``verb -prep-> P -pobj-> X`` gives ``verb -> X`` labelled ``pa:<lower-cased lemma of
      P>`` ("sat on the mat": sat -> mat, ``pa:on``);
    * ``verb -agent-> P -pobj-> X`` (the by-phrase of a passive) gives ``verb -> X``
      labelled ``pa:subj``;
    * ``verb -nsubjpass-> X`` gives ``verb -> X`` labelled ``pa:obj``.

    X is the argument's head (whatever its POS).  The nsubjpass arc duplicates an existing
    dependency edge, so :func:`add_edges` keeps that edge with its original ``nsubjpass``
    label; it is listed here so the arcs describe the full predicate-argument reading.
    Arcs are in token order of (verb, argument), one per pair.
    """
    children: list[list[int]] = [[] for _ in range(len(sent))]
    for i, h in enumerate(sent.heads):
        if h >= 0:
            children[h].append(i)
    arcs: dict[tuple[int, int], str] = {}
    for v in range(len(sent)):
        if sent.pos[v] != "VERB":
            continue
        for c in children[v]:
            rel = sent.deprels[c]
            if rel == "nsubjpass":
                arcs.setdefault((v, c), "pa:obj")
            elif rel in ("prep", "agent"):
                label = "pa:subj" if rel == "agent" else f"pa:{sent.lemmas[c].lower()}"
                for g in children[c]:
                    if sent.deprels[g] == "pobj":
                        arcs.setdefault((v, g), label)
    return [(v, a, lab) for (v, a), lab in sorted(arcs.items())]


def add_edges(edges: list[tuple[int, int]], labels: list[str],
              extra: list[tuple[int, int, str]]) -> tuple[list[tuple[int, int]], list[str]]:
    """``edges`` / ``labels`` followed by the ``extra`` arcs that are new.

    An arc whose ``(head, dependent)`` is already an edge (or was added before it) is
    skipped — the existing edge keeps its label — as are self-loops: the alignment problem
    rejects parallel edges and self-loops.
    """
    seen = set(edges)
    out_e, out_l = list(edges), list(labels)
    for h, d, lab in extra:
        if h == d or (h, d) in seen:
            continue
        seen.add((h, d))
        out_e.append((h, d))
        out_l.append(lab)
    return out_e, out_l


# --------------------------------------------------------------------------------------
# word-pair matrices
# --------------------------------------------------------------------------------------
def edit_similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))`` (1.0 for two empty strings)."""
    if a == b:
        return 1.0
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        return 0.0
    prev = list(range(n + 1))
    for i in range(1, m + 1):
        cur = [i] + [0] * n
        ca = a[i - 1]
        for j in range(1, n + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != b[j - 1]))
        prev = cur
    return 1.0 - prev[n] / max(m, n)


def wn_bucket(lemma_same: bool, sim: float) -> str:
    """WordNet bucket: ``same`` (equal lemmas), ``syn`` (1), ``hi`` (>= 0.6), ``mid``
    (>= 0.3), ``lo`` (> 0), ``0``."""
    if lemma_same:
        return "same"
    if sim >= 1.0:
        return "syn"
    if sim >= 0.6:
        return "hi"
    if sim >= 0.3:
        return "mid"
    if sim > 0.0:
        return "lo"
    return "0"


def ed_bucket(es: float) -> str:
    """Edit-similarity bucket: ``eq`` (1), ``hi`` (>= 0.8), ``mid`` (>= 0.6), ``lo``
    (>= 0.4), ``none``."""
    if es >= 1.0:
        return "eq"
    if es >= 0.8:
        return "hi"
    if es >= 0.6:
        return "mid"
    if es >= 0.4:
        return "lo"
    return "none"


class Lexical(NamedTuple):
    """Word-pair matrices of one sentence pair, each (n1, n2)."""

    sim: np.ndarray  #: WNSim (1.0 for equal lemmas)
    same: np.ndarray  #: equal lower-cased lemmas
    ed: np.ndarray  #: edit similarity of the lower-cased tokens
    affinity: np.ndarray  #: the pruning affinity
    coref: np.ndarray  #: coreference match (all False unless the coref option is on)


def coref_matrix(g1, g2) -> np.ndarray:
    """(n1, n2) bool: one word's canonical form equals the other's lower-cased lemma, or
    both have the same (non-empty) canonical form."""
    l1 = [x.lower() for x in g1.lemmas]
    l2 = [x.lower() for x in g2.lemmas]
    out = np.zeros((len(l1), len(l2)), dtype=bool)
    for i, c1 in enumerate(g1.canonical):
        for j, c2 in enumerate(g2.canonical):
            out[i, j] = bool((c1 and (c1 == l2[j] or c1 == c2)) or (c2 and c2 == l1[i]))
    return out


def lexical(g1, g2, wordnet, edit_sim: Callable[[str, str], float], *, coref: bool) -> Lexical:
    """The word-pair matrices and the pruning affinity of ``g1`` x ``g2``.

    ``affinity = max(WNSim', edit similarity) + 0.01 * [same POS]`` where WNSim' is WNSim
    raised to 1.0 for coreferent pairs when ``coref`` is on (they count as an exact lemma
    match for pruning only; the ``map:wnsim`` feature keeps the WNSim value).  ``wordnet``
    is a :class:`~latentstruct.data.wordnet.WordNet` or None (WNSim = lemma equality).
    """
    n1, n2 = len(g1), len(g2)
    sim = np.zeros((n1, n2))
    same = np.zeros((n1, n2), dtype=bool)
    ed = np.zeros((n1, n2))
    l1 = [x.lower() for x in g1.lemmas]
    l2 = [x.lower() for x in g2.lemmas]
    t1 = [x.lower() for x in g1.tokens]
    t2 = [x.lower() for x in g2.tokens]
    for i in range(n1):
        for j in range(n2):
            same[i, j] = l1[i] == l2[j]
            if wordnet is not None:
                sim[i, j] = wordnet.similarity(g1.tokens[i], g1.pos[i], g2.tokens[j], g2.pos[j])
                if same[i, j]:
                    sim[i, j] = max(sim[i, j], 1.0)
            else:
                sim[i, j] = 1.0 if same[i, j] else 0.0
            ed[i, j] = edit_sim(t1[i], t2[j])
    co = coref_matrix(g1, g2) if coref else np.zeros((n1, n2), dtype=bool)
    samepos = np.array(g1.pos, dtype=object)[:, None] == np.array(g2.pos, dtype=object)[None, :]
    lexsim = np.where(co, np.maximum(sim, 1.0), sim)
    affinity = np.maximum(lexsim, ed) + 0.01 * samepos.astype(np.float64).reshape(n1, n2)
    return Lexical(sim, same, ed, affinity, co)


# --------------------------------------------------------------------------------------
# part features
# --------------------------------------------------------------------------------------
def _word_mapping(g1, g2, i, j, lex: Lexical, opts: FeatureOptions, wordnet, bucket: str):
    p1, p2 = g1.pos[i], g2.pos[j]
    pp = "|".join(sorted((p1, p2))) if opts.symmetric else f"{p1}|{p2}"
    f = [("map:const", 1.0), ("map:wnsim", float(lex.sim[i, j])), (f"map:wn={bucket}", 1.0),
         (f"map:pos={pp}", 1.0), (f"map:sp={p1 if p1 == p2 else 'x'}&wn={bucket}", 1.0)]
    if opts.negation and g1.negated[i] != g2.negated[j]:
        f.append(("map:neg_mismatch", 1.0))
    if wordnet is not None and not lex.same[i, j] and wordnet.is_antonym(g1.tokens[i], p1, g2.tokens[j], p2):
        f.append(("map:antonym", 1.0))
    if opts.named_entities:
        e1, e2 = g1.ner[i], g2.ner[j]
        if e1 and e2:
            f.append(("map:ne=same" if e1 == e2 else "map:ne=diff", 1.0))
        elif e1 or e2:
            f.append(("map:ne=one", 1.0))
    if opts.edit_distance:
        f.append((f"map:ed={ed_bucket(float(lex.ed[i, j]))}", 1.0))
    if opts.coref and lex.coref[i, j]:
        f.append(("map:coref=same", 1.0))
    return f


def _word_deletion(g, i, opts: FeatureOptions):
    f = [("del:const", 1.0), (f"del:pos={g.pos[i]}", 1.0)]
    if opts.named_entities and g.ner[i]:
        f.append((f"del:ne={g.ner[i]}", 1.0))
    return f


def _edge_mapping(g1, g2, e1, e2, head, dep, lex: Lexical, opts: FeatureOptions, buckets,
                  word_features):
    (hi, hj), (di, dj) = head, dep
    f = [("emap:const", 1.0), (f"emap:h:wn={buckets[head]}", 1.0),
         (f"emap:d:wn={buckets[dep]}", 1.0)]
    scale = float(lex.sim[hi, hj] * lex.sim[di, dj])
    if opts.edge_sim:
        f.append(("emap:wnsim", scale))
    if opts.edge_node and scale > 0.0:
        # §5.2: "we include the features of the corresponding word mapping variables, scaled
        # by the word similarity of the words forming the edge".  Own prefixes (hs/ds), so
        # they never add onto the NODE-INFO buckets ``emap:h:wn=...``.
        for side, pair in (("hs", head), ("ds", dep)):
            f.extend((f"emap:{side}:{name[4:]}", v * scale) for name, v in word_features[pair])
    if opts.dep_labels:
        a, b = g1.labels[e1], g2.labels[e2]
        if a == b:
            f.extend([("emap:dep=same", 1.0), (f"emap:dep_same={a}", 1.0)])
        else:
            f.append(("emap:dep=diff", 1.0))
    return f


def part_features(g1, g2, problem, lex: Lexical, opts: FeatureOptions,
                  wordnet=None) -> list[list[tuple[str, float]]]:
    """Feature ``(name, value)`` lists of every variable of ``problem``, in its
    :meth:`~latentstruct.inference.graph_alignment.GraphAlignmentProblem.variable_layout`
    order: word mappings, word deletions (G1 then G2, where they exist), edge mappings,
    edge deletions (G1 then G2, where they exist).  ``wordnet`` (or None) adds
    ``map:antonym``."""
    parts: list[list[tuple[str, float]]] = []
    buckets, word_features = {}, {}
    for i, j in problem.node_pairs.tolist():
        b = buckets[(i, j)] = wn_bucket(bool(lex.same[i, j]), float(lex.sim[i, j]))
        word_features[(i, j)] = _word_mapping(g1, g2, i, j, lex, opts, wordnet, b)
        parts.append(word_features[(i, j)])
    if problem.delete_nodes1:
        parts.extend(_word_deletion(g1, i, opts) for i in range(len(g1)))
    if problem.delete_nodes2:
        parts.extend(_word_deletion(g2, j, opts) for j in range(len(g2)))
    pairs = problem.node_pairs.tolist()
    for (e1, e2), (ph, pd) in zip(problem.edge_pairs.tolist(), problem.edge_pair_nodes.tolist()):
        parts.append(_edge_mapping(g1, g2, e1, e2, tuple(pairs[ph]), tuple(pairs[pd]), lex, opts,
                                   buckets, word_features))
    if problem.edge_deletion:
        for g in (g1, g2):
            parts.extend([("edel:const", 1.0), (f"edel:dep={lab}", 1.0)] if opts.dep_labels
                         else [("edel:const", 1.0)] for lab in g.labels)
    if len(parts) != problem.n_variables:  # pragma: no cover - internal consistency
        raise InferenceError(f"built {len(parts)} part feature lists for {problem.n_variables} variables")
    return parts
