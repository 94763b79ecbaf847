"""The three components and their factories: ``latentstruct_tagger``, ``latentstruct_chunker``
and ``latentstruct_parser`` (registered with spaCy through the ``spacy_factories`` entry
point, and by importing this module)."""

from __future__ import annotations

from typing import Any

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.parts_of_speech import IDS as UPOS_IDS
from spacy.scorer import Scorer
from spacy.tokens import Doc, Span
from spacy.training import Example

from ..estimators import Chunker, DependencyParser, Tagger
from ..exceptions import ConfigError
from ..tasks.sequence.chunk_metrics import extract_chunks
from ..tasks.sequence.encodings import tags_from_spans
from ..tasks.sequence.kinds import ARRAYS, DICTS, TOKENS_ARRAYS
from .base import LatentstructComponent, sentence_bounds, sentence_words, tokens_of

__all__ = ["LatentstructTagger", "LatentstructChunker", "LatentstructParser", "make_tagger",
           "make_chunker", "make_parser", "ENTITY_TYPES", "TAG_ATTRS"]

#: the token attributes the tagger writes (and the chunker and parser read POS from)
TAG_ATTRS = ("pos_", "tag_")
#: chunk types that make a chunker's label set entity-style (CoNLL-2003's and OntoNotes')
ENTITY_TYPES = frozenset({
    "PER", "LOC", "ORG", "MISC", "PERSON", "NORP", "FAC", "GPE", "PRODUCT", "EVENT",
    "WORK_OF_ART", "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY",
    "ORDINAL", "CARDINAL"})
_UPOS = frozenset(t for t in UPOS_IDS if t)


def _check_attr(who: str, setting: str, value) -> str:
    if value not in TAG_ATTRS:
        raise ConfigError(f"{who}: {setting} must be \"pos_\" (universal POS, token.pos_) or "
                          f"\"tag_\" (fine-grained tags, token.tag_), got {value!r}")
    return value


def _sequence_kind(who: str, est) -> str:
    """A sequence model's input as the components feed it."""
    kind = est.task_.attributes_
    if kind == DICTS:
        raise ConfigError(f"{who}: the model was trained on per-token feature dicts, which "
                          f"only its own feature function makes; train it on words (or words "
                          f"and doc.tensor) for a spaCy component")
    return {TOKENS_ARRAYS: "words+tensor", ARRAYS: "tensor"}.get(kind, "words")


class LatentstructTagger(LatentstructComponent):
    """A latentstruct ``Tagger`` as a pipeline component: writes ``token.pos_`` or
    ``token.tag_`` (``attr``).

    Parameters
    ----------
    nlp, name, model, use_tensor, learner, options
        As :class:`~latentstruct.spacy.base.LatentstructComponent`'s; the model file is a
        ``Tagger``'s (``latentstruct train pos``), its input the Doc's words (and
        ``doc.tensor``).
    attr : {``"pos_"``, ``"tag_"``}
        The attribute written, and trained from (the reference Docs' ``pos_`` or ``tag_``).
        ``pos_`` takes only universal POS tags (spaCy's ``NOUN``, ``VERB``, ...).
    """

    estimator_class = Tagger
    factory = "latentstruct_tagger"

    def __init__(self, nlp, name: str, *, model: str = "", attr: str = "pos_",
                 use_tensor: bool | None = None, learner: str = "perceptron",
                 options: dict | None = None):
        self.attr = attr
        super().__init__(nlp, name, model=model, use_tensor=use_tensor, learner=learner,
                         options=options)

    def _check_settings(self) -> None:
        _check_attr(self._who(), "attr", self.attr)

    def _new_estimator(self):
        # token.tag_ holds language-specific tags: the pos task's xpos column
        options = dict(self.options)
        if self.attr == "tag_":
            options.setdefault("tag_column", "xpos")
        return self.estimator_class(learner=self.learner, **options)

    def _check_labels(self, labels) -> None:
        if self.attr == "pos_":
            bad = [t for t in labels if t not in _UPOS]
            if bad:
                raise ConfigError(
                    f"{self._who()}: token.pos_ takes universal POS tags only, and the model's "
                    f"labels include {bad[:8]}; set attr = \"tag_\" to write them as "
                    f"fine-grained tags")

    def _model_tensor_kind(self, est) -> str:
        return _sequence_kind(self._who(), est)

    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        """Write each sentence's tags to ``token.pos_`` or ``token.tag_`` (whitespace
        tokens: spaCy's ``SPACE`` or ``_SP``)."""
        attr = self.attr
        for doc, sentences in zip(docs, predictions):
            for start, end, kept, tags in sentences:
                if isinstance(kept, range):
                    for token, tag in zip(tokens_of(doc, start, end), tags):
                        setattr(token, attr, tag)
                    continue
                space = "SPACE" if attr == "pos_" else "_SP"
                for i in set(range(start, end)).difference(kept):
                    setattr(doc[i], attr, space)
                for i, tag in zip(kept, tags or ()):
                    setattr(doc[i], attr, tag)

    def _gold(self, example: Example, start: int, end: int, same: bool):
        attr = self.attr
        x, kept = self._sentence_input(example.x, start, end, training=True)
        if x is None:
            return None
        if same:
            ref = example.y
            tags = [getattr(ref[i], attr) for i in kept]
            return (x, tags) if all(tags) else None
        aligned = example.get_aligned(attr[:-1].upper(), as_string=True)
        tags = [aligned[i] for i in kept]
        if all(tags):
            return x, tags
        if self._kind == "words" and (start, end) == (0, len(example.x)):
            # tokens the alignment leaves without a tag: the reference Doc whole, its tags
            ref = example.y
            words, kept = sentence_words(ref, 0, len(ref))
            tags = [getattr(ref[i], attr) for i in kept]
            if words and all(tags):
                return words, tags
        return None

    def score(self, examples, **kwargs) -> dict[str, Any]:
        """Token accuracy of the attribute written (``pos_acc`` or ``tag_acc``), by
        ``Scorer.score_token_attr``."""
        return Scorer.score_token_attr(examples, self.attr[:-1], **kwargs)


class LatentstructChunker(LatentstructComponent):
    """A latentstruct ``Chunker`` as a pipeline component: writes ``doc.spans[spans_key]``
    and, when the chunk types are entity types, ``doc.ents``.

    Parameters
    ----------
    nlp, name, model, use_tensor, learner, options
        As :class:`~latentstruct.spacy.base.LatentstructComponent`'s; the model file is a
        ``Chunker``'s (``latentstruct train chunk``), its input the ``(word, POS)`` pairs.
    pos_attr : {``"tag_"``, ``"pos_"``}
        The POS each token is read with (a tagger must set it before the chunker; CoNLL-2000
        models take Penn Treebank tags, ``tag_``).
    spans_key : str
        The ``doc.spans`` key the chunks are written to (each a ``Span`` labelled by its
        chunk type, ``NP``); also the gold chunks in training, else the reference ``doc.ents``.
    ents : bool or None
        Also write the chunks as ``doc.ents``; None: when every chunk type is an entity
        type (:data:`ENTITY_TYPES`: ``PER``, ``ORG``, ``GPE``, ...).
    """

    estimator_class = Chunker
    factory = "latentstruct_chunker"
    input_form = "pairs"

    def __init__(self, nlp, name: str, *, model: str = "", pos_attr: str = "tag_",
                 spans_key: str = "chunks", ents: bool | None = None,
                 use_tensor: bool | None = None, learner: str = "perceptron",
                 options: dict | None = None):
        self.pos_attr = pos_attr
        self.spans_key = spans_key
        self.ents = ents
        self._ents = bool(ents)
        super().__init__(nlp, name, model=model, use_tensor=use_tensor, learner=learner,
                         options=options)

    def _check_settings(self) -> None:
        _check_attr(self._who(), "pos_attr", self.pos_attr)
        if not isinstance(self.spans_key, str) or not self.spans_key:
            raise ConfigError(f"{self._who()}: spans_key must be a non-empty string (the "
                              f"doc.spans key), got {self.spans_key!r}")
        if self.ents is not None and not isinstance(self.ents, bool):
            raise ConfigError(f"{self._who()}: ents must be true, false or null (when the "
                              f"chunk types are entity types), got {self.ents!r}")

    def _check_labels(self, labels) -> None:
        types = {t.split("-", 1)[1] for t in labels if "-" in t}
        self._ents = self.ents if self.ents is not None else bool(types) and types <= ENTITY_TYPES

    @property
    def chunk_types(self) -> list[str]:
        """The model's chunk types (``NP``, ``VP``; ``PER``), sorted."""
        return sorted({t.split("-", 1)[1] for t in self._labels if "-" in t})

    def _model_tensor_kind(self, est) -> str:
        return _sequence_kind(self._who(), est)

    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        """Write the chunks of each sentence's tags (conlleval's reading of IOB tags) to
        ``doc.spans[spans_key]``, and to ``doc.ents`` in entity mode."""
        key = self.spans_key
        for doc, sentences in zip(docs, predictions):
            spans = [Span(doc, kept[s], kept[e] + 1, label=typ)
                     for _, _, kept, tags in sentences if tags is not None
                     for typ, s, e in sorted(extract_chunks(tags), key=lambda c: c[1])]
            doc.spans[key] = spans
            if self._ents:
                doc.ents = spans

    def _gold_spans(self, doc: Doc):
        if self.spans_key in doc.spans:
            return list(doc.spans[self.spans_key])
        if self.ents is not False and doc.has_annotation("ENT_IOB"):
            return list(doc.ents)
        return None

    def _gold(self, example: Example, start: int, end: int, same: bool):
        if not same:
            return None  # the chunks of another tokenisation: not aligned here
        spans = self._gold_spans(example.y)
        if spans is None:
            return None
        ref = example.y
        pos_doc = ref if ref.has_annotation(self.pos_attr[:-1].upper()) else example.x
        words, kept = sentence_words(example.x, start, end)
        if not words:
            return None
        where = {i: k for k, i in enumerate(kept)}
        chunks = []
        for span in spans:
            if span.start >= start and span.end <= end:
                inside = [where[i] for i in range(span.start, span.end) if i in where]
                if inside:
                    chunks.append((span.label_, inside[0], inside[-1]))
            elif span.start < end and span.end > start:
                return None  # a chunk across the sentence boundary
        tags = tags_from_spans(chunks, len(kept), "iob2")
        pairs = list(zip(words, self._pos(pos_doc, kept)))
        if self._kind == "words":
            return pairs, tags
        rows = self._tensor_rows(example.x, kept, training=True)
        return (rows if self._kind == "tensor" else (pairs, rows)), tags

    def score(self, examples, **kwargs) -> dict[str, Any]:
        """Chunk precision, recall and F1 by ``Scorer.score_spans`` (``spans_chunks_f``, per
        type), against the reference ``doc.spans[spans_key]`` (else its ``doc.ents``); in
        entity mode also ``ents_f``."""
        key = self.spans_key
        ents = self._ents

        def getter(doc, attr):
            if key in doc.spans:
                return doc.spans[key]
            return doc.ents if self.ents is not False else []

        def has(doc):
            return key in doc.spans or (self.ents is not False and doc.has_annotation("ENT_IOB"))

        examples = list(examples)
        scores = Scorer.score_spans(examples, f"spans_{key}", getter=getter,
                                    has_annotation=has, **kwargs)
        if ents:
            scores.update(Scorer.score_spans(
                examples, "ents", has_annotation=lambda d: d.has_annotation("ENT_IOB")))
        return scores


class LatentstructParser(LatentstructComponent):
    """A latentstruct ``DependencyParser`` (first-order, Eisner) as a pipeline component:
    writes ``token.head`` and ``token.dep_``.

    Parameters
    ----------
    nlp, name, model, use_tensor, learner, options
        As :class:`~latentstruct.spacy.base.LatentstructComponent`'s; the model file is a
        ``DependencyParser``'s (``latentstruct train dep``), its input the ``(word, POS)``
        pairs of each sentence.
    pos_attr : {``"pos_"``, ``"tag_"``}
        The POS each token is read with (a tagger must set it before the parser).

    Each sentence (``doc.sents`` when set, else the whole Doc) gets one tree.  A model
    trained without relations writes ``ROOT`` on the root and ``dep`` elsewhere.
    """

    estimator_class = DependencyParser
    factory = "latentstruct_parser"
    input_form = "pairs"

    def __init__(self, nlp, name: str, *, model: str = "", pos_attr: str = "pos_",
                 use_tensor: bool | None = None, learner: str = "perceptron",
                 options: dict | None = None):
        self.pos_attr = pos_attr
        super().__init__(nlp, name, model=model, use_tensor=use_tensor, learner=learner,
                         options=options)

    def _check_settings(self) -> None:
        _check_attr(self._who(), "pos_attr", self.pos_attr)

    def _model_tensor_kind(self, est) -> str:
        return "words+tensor" if est.task_.input_kind_ == "numbers" else "words"

    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        """Write each sentence's tree (``doc.from_array`` of ``HEAD`` and ``DEP``); a
        whitespace token hangs from the token before it (else after it) as ``dep``."""
        strings = self.vocab.strings
        for doc, sentences in zip(docs, predictions):
            if not sentences:
                continue
            heads = np.arange(len(doc), dtype=np.int64)
            deps = np.full(len(doc), strings.add("ROOT"), dtype=np.uint64)
            for start, end, kept, tree in sentences:
                if tree is None:
                    continue
                kept = list(kept)
                for t, arc in enumerate(tree):
                    head, rel = arc if isinstance(arc, tuple) else (arc, None)
                    head = int(head)
                    heads[kept[t]] = kept[head - 1] if head else kept[t]
                    rel = rel if rel is not None else ("ROOT" if head == 0 else "dep")
                    deps[kept[t]] = strings.add(rel)
                if len(kept) < end - start:
                    for i in sorted(set(range(start, end)).difference(kept)):
                        before = [j for j in kept if j < i]
                        heads[i] = before[-1] if before else kept[0]
                        deps[i] = strings.add("dep")
            rel_heads = (heads - np.arange(len(doc), dtype=np.int64)).astype(np.uint64)
            doc.from_array([HEAD, DEP], np.stack([rel_heads, deps], axis=1))

    def _training_bounds(self, example: Example, same: bool) -> list[tuple[int, int]]:
        """The reference Doc's sentences (its trees), when the tokenisation is the same."""
        ref = example.y
        if not same or not ref.has_annotation("DEP"):
            return []
        return sentence_bounds(ref)

    def _gold(self, example: Example, start: int, end: int, same: bool):
        ref = example.y
        words, kept = sentence_words(example.x, start, end)
        if not words or not isinstance(kept, range):
            return None  # whitespace tokens inside a tree: not trained on
        tree = []
        for t in ref[start:end]:
            if not (start <= t.head.i < end) or not t.dep_:
                return None
            tree.append((0 if t.head.i == t.i else t.head.i - start + 1, t.dep_))
        # the reference's POS when it has them (a parser learns from gold POS)
        pos_doc = ref if ref.has_annotation(self.pos_attr[:-1].upper()) else example.x
        pairs = list(zip(words, self._pos(pos_doc, kept)))
        if self._kind == "words":
            return pairs, tree
        return (pairs, self._tensor_rows(example.x, kept, training=True)), tree

    def _classes(self, y, labels):
        """The relations (``labels``, or those of the trees ``y``)."""
        return super()._classes([[rel for _, rel in tree] for tree in y], labels)

    def score(self, examples, **kwargs) -> dict[str, Any]:
        """Unlabelled and labelled attachment (``dep_uas``, ``dep_las``, per relation) by
        ``Scorer.score_deps``, punctuation excluded as spaCy's parser scores it."""
        def dep_getter(token, attr):
            return token.vocab.strings.as_string(getattr(token, attr)).lower()

        return Scorer.score_deps(examples, "dep", getter=dep_getter,
                                 ignore_labels=("p", "punct"), **kwargs)


@Language.factory(
    "latentstruct_tagger",
    default_config={"model": "", "attr": "pos_", "use_tensor": None, "learner": "perceptron",
                    "options": {}},
    assigns=["token.pos", "token.tag"],
    default_score_weights={"pos_acc": 1.0, "tag_acc": None},
)
def make_tagger(nlp: Language, name: str, model: str, attr: str, use_tensor: bool | None,
                learner: str, options: dict[str, Any]) -> LatentstructTagger:
    """The ``latentstruct_tagger`` factory (see :class:`LatentstructTagger`)."""
    return LatentstructTagger(nlp, name, model=model, attr=attr, use_tensor=use_tensor,
                              learner=learner, options=options)


@Language.factory(
    "latentstruct_chunker",
    default_config={"model": "", "pos_attr": "tag_", "spans_key": "chunks", "ents": None,
                    "use_tensor": None, "learner": "perceptron", "options": {}},
    assigns=["doc.spans", "doc.ents"],
    requires=["token.tag"],
    default_score_weights={"spans_chunks_f": 1.0, "spans_chunks_p": 0.0,
                           "spans_chunks_r": 0.0},
)
def make_chunker(nlp: Language, name: str, model: str, pos_attr: str, spans_key: str,
                 ents: bool | None, use_tensor: bool | None, learner: str,
                 options: dict[str, Any]) -> LatentstructChunker:
    """The ``latentstruct_chunker`` factory (see :class:`LatentstructChunker`)."""
    return LatentstructChunker(nlp, name, model=model, pos_attr=pos_attr, spans_key=spans_key,
                               ents=ents, use_tensor=use_tensor, learner=learner,
                               options=options)


@Language.factory(
    "latentstruct_parser",
    default_config={"model": "", "pos_attr": "pos_", "use_tensor": None,
                    "learner": "perceptron", "options": {}},
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
    requires=["token.pos"],
    default_score_weights={"dep_uas": 0.5, "dep_las": 0.5, "dep_las_per_type": None},
)
def make_parser(nlp: Language, name: str, model: str, pos_attr: str, use_tensor: bool | None,
                learner: str, options: dict[str, Any]) -> LatentstructParser:
    """The ``latentstruct_parser`` factory (see :class:`LatentstructParser`)."""
    return LatentstructParser(nlp, name, model=model, pos_attr=pos_attr,
                              use_tensor=use_tensor, learner=learner, options=options)
