"""``latentstruct_crf``: a ``latentstruct.crfsuite`` model and the user's feature function,
as a pipeline component.

sklearn-crfsuite's users train ``CRF().fit(X, y)`` on per-token feature dicts made by their
own function (the tutorial's ``sent2features``).  This component runs such a model inside a
spaCy pipeline: the feature function is registered with spaCy's registry and named in the
config, the model file is given by path::

    @spacy.registry.misc("my_features.v1")
    def make_features():
        def features(doc):          # a Doc, or one sentence of it (a Span)
            return [{"word.lower()": t.lower_, "word[-3:]": t.text[-3:]} for t in doc]
        return features

    crf = CRF(model_filename="ner.npz").fit(X, y)   # X: the same function's dicts
    nlp.add_pipe("latentstruct_crf", config={"model": "ner.npz",
                                             "features": {"@misc": "my_features.v1"}})

The model file is latentstruct's (``CRF(model_filename=...)``'s ``fit`` writes it; any
latentstruct ``sequence`` model over feature dicts) or a CRFsuite model file written by
python-crfsuite or sklearn-crfsuite (read as ``CRF(model_filename=...)`` reads it).
``nlp.to_disk`` stores the model in the component's folder in latentstruct's format (no
pickle); the feature function stays a registry name in the pipeline's ``config.cfg``, so the
code that registers it must be imported (or passed as ``spacy.load``'s ``code``) before the
pipeline is loaded, as for any registered function: no module named in a file is imported.

The component applies a trained model.  ``latentstruct.crfsuite.CRF`` has no online update
(sklearn-crfsuite's has none either: ``fit`` trains on the whole data), so ``update``
refuses: list the component in ``[training] frozen_components`` while spaCy trains the
others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.parts_of_speech import IDS as UPOS_IDS
from spacy.scorer import Scorer
from spacy.tokens import Doc, Span
from spacy.training import Example

from ..exceptions import ConfigError, ModelFormatError
from ..tasks.sequence.chunk_metrics import extract_chunks
from ..tasks.sequence.kinds import DICTS
from .base import LatentstructComponent, sentence_bounds, tokens_of
from .components import ENTITY_TYPES

__all__ = ["LatentstructCRF", "make_crf", "CRF_ATTRS"]

#: what the CRF component writes: ``token.tag_``, ``token.pos_`` or the entities
#: (``doc.ents``: ``token.ent_iob_`` / ``token.ent_type_``)
CRF_ATTRS = ("tag_", "pos_", "ents")
_PREFIXES = ("B", "I", "E", "S", "L", "U")
_UPOS = frozenset(t for t in UPOS_IDS if t)


def _entity_type(label: str) -> str | None:
    """The type of an IOB-style label (``B-PER`` -> ``PER``), None for ``O`` or a tag
    that is not one."""
    prefix, _, typ = label.partition("-")
    return typ if prefix in _PREFIXES and typ else None


def _function_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class LatentstructCRF(LatentstructComponent):
    """A ``latentstruct.crfsuite`` model (sklearn-crfsuite's ``CRF``) with the user's feature
    function, as a pipeline component.

    Parameters
    ----------
    nlp : Language
        The pipeline (its vocab is kept).
    name : str
        The component's name in the pipeline.
    model : str
        Path of the model file: latentstruct's (``CRF(model_filename=PATH).fit(...)``, or
        any latentstruct ``sequence`` model over feature dicts) or a CRFsuite model file
        (python-crfsuite, sklearn-crfsuite).  A missing file is reported when the component
        is first used, unless ``from_disk`` (``spacy.load``) gives it its saved model.
    features : callable
        ``doc -> list of dicts``: one python-crfsuite feature dict per token, as the model
        was trained on.  It is called on the Doc, or, when sentence boundaries are set
        (``doc.sents``), on each sentence (a ``Span``); registered with spaCy's registry
        and named in the config (``features = {"@misc": "my_features.v1"}``).
    attr : {``"tag_"``, ``"pos_"``, ``"ents"``} or None
        What is written: the labels as ``token.tag_`` or ``token.pos_`` (universal POS
        only), or read as IOB entity tags (``B-PER I-PER O``, conlleval's reading) and
        written as ``doc.ents``.  None: ``ents`` when every label is ``O`` or an IOB tag of
        an entity type (:data:`~latentstruct.spacy.components.ENTITY_TYPES`: ``PER``,
        ``ORG``, ``GPE``, ...), else ``tag_``.

    Attributes
    ----------
    estimator_ : Estimator or None
        The latentstruct estimator of the model file, None while there is none.
    features : callable
        The feature function.
    """

    estimator_class = object  # any estimator; _read_model checks its input kind
    factory = "latentstruct_crf"

    def __init__(self, nlp, name: str, *, model: str = "", features: Callable | None = None,
                 attr: str | None = None):
        self.features = features
        self.attr = attr
        self._attr = attr or "tag_"
        super().__init__(nlp, name, model=model)

    # --- settings and the model -------------------------------------------------------------
    def _check_settings(self) -> None:
        if self.features is None or not callable(self.features):
            raise ConfigError(
                f"{self._who()}: features must be the feature function the model was "
                f"trained with (doc -> one feature dict per token), registered with spaCy "
                f"(@spacy.registry.misc(\"my_features.v1\")) and named in the config "
                f"(features = {{\"@misc\": \"my_features.v1\"}}); got {self.features!r}")
        if self.attr is not None and self.attr not in CRF_ATTRS:
            raise ConfigError(f"{self._who()}: attr must be \"tag_\" (token.tag_), \"pos_\" "
                              f"(token.pos_), \"ents\" (doc.ents) or null (ents for entity "
                              f"tags, else tag_), got {self.attr!r}")

    def _check_learner(self) -> None:
        """Nothing to check: the component is not trained by spaCy."""

    def _read_model(self, path: Path, origin: str):
        """The estimator of the model file at ``path``: a sequence model over feature dicts
        (latentstruct's format or CRFsuite's), else a ``ConfigError`` naming the component
        that takes it."""
        from ..crfsuite.mapping import load_model_file

        try:
            est = load_model_file(path)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{self._who()}: {origin} {str(path)!r} is not a usable "
                                   f"model file (latentstruct's or CRFsuite's): {exc}") from None
        if getattr(est.task_, "attributes_", None) != DICTS:
            other = {"Tagger": "latentstruct_tagger", "Chunker": "latentstruct_chunker",
                     "DependencyParser": "latentstruct_parser"}.get(type(est).__name__)
            hint = (f"; add it with nlp.add_pipe({other!r}, config={{'model': ...}})" if other
                    else "")
            raise ConfigError(
                f"{self._who()}: {origin} {str(path)!r} holds a {type(est).__name__} model "
                f"(task {getattr(est.task_, 'name', '?')!r}) that does not read per-token "
                f"feature dicts; {self.factory} takes a latentstruct.crfsuite CRF's model "
                f"(CRF(model_filename=PATH).fit(X, y), X the feature function's dicts) or a "
                f"CRFsuite model file{hint}")
        return est

    def _model_tensor_kind(self, est) -> str:
        return "words"  # the feature function makes the input (doc.tensor, if it wants it)

    def _check_labels(self, labels) -> None:
        labels = [str(t) for t in labels]
        entity_like = bool(labels) and all(
            t == "O" or _entity_type(t) is not None for t in labels)
        attr = self.attr
        if attr is None:
            types = {_entity_type(t) for t in labels} - {None}
            attr = "ents" if entity_like and types and types <= ENTITY_TYPES else "tag_"
        if attr == "ents" and not entity_like:
            bad = [t for t in labels if t != "O" and _entity_type(t) is None]
            raise ConfigError(f"{self._who()}: attr = \"ents\" reads the labels as IOB entity "
                              f"tags (B-PER, I-PER, O), and the model's labels include "
                              f"{bad[:8]}; set attr = \"tag_\"")
        if attr == "pos_":
            bad = [t for t in labels if t not in _UPOS]
            if bad:
                raise ConfigError(
                    f"{self._who()}: token.pos_ takes universal POS tags only, and the model's "
                    f"labels include {bad[:8]}; set attr = \"tag_\"")
        self._attr = attr

    @property
    def writes(self) -> str:
        """What the component writes: ``"tag_"``, ``"pos_"`` or ``"ents"`` (``attr``, or
        what ``attr = null`` chose for the model's labels)."""
        return self._attr

    def set_crf(self, crf) -> LatentstructCRF:
        """Use a fitted ``latentstruct.crfsuite.CRF`` (in memory) as the component's model;
        returns self.  ``nlp.to_disk`` then saves it in the component's folder."""
        from ..crfsuite import CRF

        if not isinstance(crf, CRF):
            raise ConfigError(f"{self._who()}: set_crf takes a fitted latentstruct.crfsuite.CRF, "
                              f"got {type(crf).__name__}")
        est = crf._fitted()
        if getattr(est.task_, "attributes_", None) != DICTS:
            raise ConfigError(f"{self._who()}: the CRF's model does not read feature dicts")
        self._set_estimator(est)
        return self

    def _estimator(self):
        if self._missing is None and self.estimator_ is None:
            raise ConfigError(
                f"{self._who()} has no model: give the path of a model file (nlp.add_pipe("
                f"{self.factory!r}, config={{'model': PATH, 'features': {{'@misc': NAME}}}}); "
                f"CRF(model_filename=PATH).fit(X, y) writes one), or call set_crf(crf)")
        return super()._estimator()

    # --- tagging -----------------------------------------------------------------------------
    def _dicts(self, part: Doc | Span) -> list:
        """The feature function's dicts for one Doc or sentence, checked: one per token."""
        out = self.features(part)
        if isinstance(out, (str, bytes, dict)) or not hasattr(out, "__len__"):
            raise ConfigError(
                f"{self._who()}: the feature function {_function_name(self.features)} "
                f"returned {type(out).__name__}; it must return a list of feature dicts, one "
                f"per token")
        if len(out) != len(part):
            raise ConfigError(
                f"{self._who()}: the feature function {_function_name(self.features)} "
                f"returned {len(out)} feature dicts for {len(part)} tokens "
                f"({part.text[:40]!r}); it must return one per token")
        return list(out)

    def predict(self, docs: list[Doc]) -> list[list]:
        """The model's labels for ``docs``, from one ``estimator_.predict`` call: per Doc,
        one ``(start, end, labels)`` per sentence (:func:`sentence_bounds`)."""
        est = self._estimator()
        X, owners = [], []
        out: list[list] = [[] for _ in docs]
        for k, doc in enumerate(docs):
            bounds = sentence_bounds(doc)
            whole = bounds == [(0, len(doc))] and not doc.has_annotation("SENT_START")
            for start, end in bounds:
                X.append(self._dicts(doc if whole else doc[start:end]))
                record = [start, end, None]
                out[k].append(record)
                owners.append(record)
        if X:
            for record, labels in zip(owners, est.predict(X)):
                record[2] = list(labels)
        return [[tuple(r) for r in doc_out] for doc_out in out]

    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        """Write each sentence's labels to ``token.tag_`` / ``token.pos_``, or their
        entities (conlleval's reading of IOB tags) as ``doc.ents``."""
        attr = self._attr
        for doc, sentences in zip(docs, predictions):
            if attr == "ents":
                doc.ents = [Span(doc, start + s, start + e + 1, label=typ)
                            for start, _, labels in sentences
                            for typ, s, e in sorted(extract_chunks(labels), key=lambda c: c[1])]
                continue
            for start, end, labels in sentences:
                for token, label in zip(tokens_of(doc, start, end), labels):
                    setattr(token, attr, label)

    # --- training: not by spaCy --------------------------------------------------------------
    @property
    def is_trainable(self) -> bool:
        """False: a ``latentstruct.crfsuite.CRF`` has no online update."""
        return False

    def initialize(self, get_examples=None, *, nlp=None, labels=None) -> None:
        """Check that the component has its model (nothing is trained here)."""
        self._estimator()

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: dict[str, float] | None = None) -> dict[str, float]:
        """Refused: the component applies a trained CRF (``ConfigError``)."""
        raise self._not_trainable()

    def _gold(self, example: Example, start: int, end: int, same: bool):
        """Refused as :meth:`update` is: no sentence of this component is trained here."""
        raise self._not_trainable()

    def _not_trainable(self) -> ConfigError:
        return ConfigError(
            f"{self._who()} applies a trained latentstruct.crfsuite CRF and cannot be "
            f"updated (CRF has no online update; its fit trains on the whole data): list "
            f"{self.name!r} in [training] frozen_components while spaCy trains the other "
            f"components (nlp.update(..., exclude=[{self.name!r}]) in your own loop), and "
            f"train the CRF with CRF(model_filename=PATH).fit(X, y) on the feature function's "
            f"dicts")

    def score(self, examples, **kwargs) -> dict[str, Any]:
        """``tag_acc`` / ``pos_acc`` (``Scorer.score_token_attr``) or ``ents_p``, ``ents_r``,
        ``ents_f`` (``Scorer.score_spans``), as the component writes."""
        if self._attr == "ents":
            return Scorer.score_spans(examples, "ents", **kwargs)
        return Scorer.score_token_attr(examples, self._attr[:-1], **kwargs)


@Language.factory(
    "latentstruct_crf",
    default_config={"model": "", "attr": None},
    assigns=["token.tag", "token.pos", "doc.ents", "token.ent_iob", "token.ent_type"],
    default_score_weights={"tag_acc": None, "pos_acc": None, "ents_f": None, "ents_p": None,
                           "ents_r": None},
)
def make_crf(nlp: Language, name: str, model: str, features: Callable[[Any], Any],
             attr: str | None) -> LatentstructCRF:
    """The ``latentstruct_crf`` factory (see :class:`LatentstructCRF`)."""
    return LatentstructCRF(nlp, name, model=model, features=features, attr=attr)
