"""What the latentstruct spaCy components share: the model, the batches, saving, training.

A component holds one latentstruct estimator (``estimator_``: a ``Tagger``, ``Chunker`` or
``DependencyParser``).  It tags a batch of Docs with one ``estimator_.predict`` call over
all their sentences (a Doc's sentences are ``doc.sents`` when a component set sentence
boundaries, else the whole Doc is one), and writes the predictions back
(``set_annotations``).  Saved with the pipeline (``to_disk``), its folder holds the model
file (``model.npz``: JSON metadata and arrays, never pickle) and ``cfg.json`` (the label set
and whether a model is there).

Training (``initialize``, then ``update`` per batch) goes through the estimator's online
path: ``initialize`` fits the task on all the examples it is given (the label set and the
feature index: ``begin_partial_fit``) and ``update`` makes one ``partial_fit`` pass over
the batch.  The component ignores ``sgd`` and ``drop``: there is no neural model
(``model`` is None, so spaCy's loop asks it for no ``finish_update``).
"""

from __future__ import annotations

import json
import re
import tempfile
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import srsly
from spacy import util
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples

from ..estimators import load as load_estimator
from ..exceptions import ConfigError, InputError, ModelFormatError
from ..learners import get_learner_class
from ..learners.online.online import online_learner_names

__all__ = ["LatentstructComponent", "sentence_bounds", "tokens_of", "sentence_words",
           "same_tokens", "MODEL_FILE", "CFG_FILE", "SERIAL_FORMAT"]

#: the model file in a component's folder (``nlp.to_disk``)
MODEL_FILE = "model.npz"
#: the component's own settings file beside it
CFG_FILE = "cfg.json"
#: version of ``cfg.json``'s layout and of ``to_bytes``' message
SERIAL_FORMAT = 1


def tokens_of(doc: Doc, start: int, end: int):
    """The tokens ``doc[start:end]``: the Doc itself when that is all of it (iterating a Doc
    is cheaper than slicing it into a Span)."""
    return doc if start == 0 and end == len(doc) else doc[start:end]


def sentence_bounds(doc: Doc) -> list[tuple[int, int]]:
    """``(start, end)`` token offsets of the Doc's sentences: ``doc.sents`` when sentence
    boundaries are set, else the whole Doc (an empty Doc has none)."""
    if len(doc) == 0:
        return []
    if doc.has_annotation("SENT_START"):
        return [(s.start, s.end) for s in doc.sents]
    return [(0, len(doc))]


def same_tokens(example: Example) -> bool:
    """Whether the example's predicted and reference Docs have the same tokens."""
    x, y = example.x, example.y
    return len(x) == len(y) and all(a.text == b.text for a, b in zip(x, y))


_BLANK = re.compile(r"\s")


def sentence_words(doc: Doc, start: int, end: int) -> tuple[list[str], range | list[int]]:
    """``(words, kept)``: the token texts of ``doc[start:end]`` as a latentstruct model takes
    them, and the Doc positions they come from.  Whitespace tokens (spaCy makes one of a
    run of spaces or a newline) are left out, and white space inside a token becomes ``_``
    (a model's tokens hold none); ``kept`` is ``range(start, end)`` when nothing is left out."""
    words = [t.text for t in tokens_of(doc, start, end)]
    if not _BLANK.search("".join(words)):
        return words, range(start, end)
    out, kept = [], []
    for i, word in enumerate(words, start):
        if word.strip():
            out.append("_".join(word.split()))
            kept.append(i)
    return out, kept


class LatentstructComponent(Pipe, metaclass=ABCMeta):
    """Base of the latentstruct components: a latentstruct estimator inside a pipeline.

    Parameters
    ----------
    nlp : Language
        The pipeline (its vocab is kept).
    name : str
        The component's name in the pipeline.
    model : str
        Path of a latentstruct model file (``latentstruct train`` or ``est.save``), or ``""``
        for a component to train (``nlp.initialize``, then ``update``).  A file that exists
        is read now; a missing one is reported when the component is first used, unless
        ``from_disk`` (``spacy.load``) gives the component its saved model before.
    use_tensor : bool or None
        Feed ``doc.tensor`` (a ``tok2vec`` component's output) to the model as numeric
        columns beside the words.  None: as the model was trained (an untrained
        component: no).  A value the model was not trained with is a ``ConfigError``.
    learner : str
        The online learner an untrained component trains with (``perceptron``,
        ``sgd-ssvm``, ``pa``, ``arow``, or ``crf`` with ``solver="sgd"``, ``eta0`` and
        ``alpha`` in ``options``).
    options : dict
        Options of the untrained estimator (``{"window": 1}``; ``latentstruct options
        TASK`` lists them).

    Attributes
    ----------
    estimator_ : Estimator or None
        The latentstruct estimator, None while the component has no model.
    """

    #: the estimator class a model file must load as (set by each component)
    estimator_class: ClassVar[type]
    #: the factory name, for messages
    factory: ClassVar[str]
    #: what the estimator's sentences are: "words" (tokens) or "pairs" ((word, POS))
    input_form: ClassVar[str] = "words"

    def __init__(self, nlp, name: str, *, model: str = "", use_tensor: bool | None = None,
                 learner: str = "perceptron", options: dict | None = None):
        self.vocab = nlp.vocab
        self.name = name
        self.model = None  # no neural model: spaCy's loop asks no finish_update of it
        self.learner = learner
        self.options = dict(options or {})
        if use_tensor is not None and not isinstance(use_tensor, bool):
            raise ConfigError(f"{self._who()}: use_tensor must be true, false or null (as the "
                              f"model was trained), got {use_tensor!r}")
        self.use_tensor = use_tensor
        self.model_path = str(model) if model else ""
        self.estimator_ = None
        self._labels: tuple[str, ...] = ()
        self._missing: Path | None = None
        self._kind = "words+tensor" if use_tensor else "words"  # until a model says
        self._check_settings()
        if not self.model_path:
            self._check_learner()
        if self.model_path:
            path = Path(self.model_path).expanduser()
            if path.is_file():
                self._set_estimator(self._read_model(path, origin="model"))
            else:
                self._missing = path  # spacy.load: from_disk gives the saved model instead

    def _check_learner(self) -> None:
        """ConfigError unless ``learner`` names an online learner (one with partial_fit)."""
        try:
            learner_cls = get_learner_class(self.learner)
        except ConfigError as exc:
            raise ConfigError(f"{self._who()}: {exc}") from None
        if not hasattr(learner_cls, "partial_fit"):
            raise ConfigError(
                f"{self._who()}: learner {self.learner!r} trains on the whole data at once, "
                f"and spaCy's update trains batch by batch; use an online learner: "
                f"{', '.join(online_learner_names())} (or train with `latentstruct train` and "
                f"give the model file)")

    # --- what each component defines -----------------------------------------------------
    def _check_settings(self) -> None:
        """ConfigError for a bad setting of the component (before any model is read)."""

    def _check_labels(self, labels) -> None:
        """ConfigError for labels the component cannot write (the tagger's ``pos_``)."""

    @abstractmethod
    def _gold(self, example: Example, start: int, end: int, same: bool):
        """(x, y) of one sentence of an example for training, or None to skip it; ``same``:
        the predicted and the reference Doc have the same tokens."""

    @abstractmethod
    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        """Write the predictions (one list per Doc, one entry per sentence) to the Docs."""

    @abstractmethod
    def score(self, examples: Iterable[Example], **kwargs) -> dict[str, Any]:
        """The component's scores through spaCy's ``Scorer``."""

    # --- messages ------------------------------------------------------------------------
    def _who(self) -> str:
        return f"{self.factory} {getattr(self, 'name', '?')!r}"

    # --- the model -----------------------------------------------------------------------
    def _read_model(self, path: Path, origin: str):
        """The estimator of the model file at ``path``, checked to suit this component."""
        try:
            est = load_estimator(path)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{self._who()}: {origin} {str(path)!r} is not a usable "
                                   f"latentstruct model file: {exc}") from None
        if not isinstance(est, self.estimator_class):
            task = getattr(getattr(est, "task_", None), "name", "?")
            other = {"Tagger": "latentstruct_tagger", "Chunker": "latentstruct_chunker",
                     "DependencyParser": "latentstruct_parser"}.get(type(est).__name__)
            hint = (f"add it with nlp.add_pipe({other!r}, config={{'model': ...}})" if other
                    else "no latentstruct component takes it")
            raise ConfigError(
                f"{self._who()}: {origin} {str(path)!r} holds a {type(est).__name__} model "
                f"(task {task!r}), but {self.factory} takes a "
                f"{self.estimator_class.__name__} model (task "
                f"{' or '.join(map(repr, self.estimator_class._tasks))}); {hint}, or train a "
                f"{self.estimator_class.__name__} for {self.factory}")
        return est

    @abstractmethod
    def _model_tensor_kind(self, est) -> str:
        """How the model's sentences are made: "words", "words+tensor" or "tensor"."""

    def _set_estimator(self, est) -> None:
        kind = self._model_tensor_kind(est)
        uses = kind != "words"
        if self.use_tensor is not None and self.use_tensor != uses:
            trained = {"words": "words only", "words+tensor": "words and numeric columns",
                       "tensor": "numeric columns only"}[kind]
            raise ConfigError(
                f"{self._who()}: use_tensor = {str(self.use_tensor).lower()}, but the model "
                f"was trained on {trained}; set use_tensor = {str(uses).lower()} (or null: "
                f"as the model was trained)")
        self._check_labels(list(est.classes_ or ()))
        self.estimator_ = est
        self._kind = kind
        self._labels = tuple(str(c) for c in (est.classes_ or ()))
        self._missing = None

    def _estimator(self):
        """The estimator, or the one clear error of a component without one."""
        if self._missing is not None:
            raise ConfigError(
                f"{self._who()}: the model file {str(self._missing)!r} does not exist; give "
                f"the path of a model file written by `latentstruct train` or an estimator's "
                f"save() (config={{'model': PATH}}), or model = \"\" and train the component "
                f"(nlp.initialize, then spacy train)")
        if self.estimator_ is None:
            raise ConfigError(
                f"{self._who()} has no model: give one (nlp.add_pipe({self.factory!r}, "
                f"config={{'model': PATH}})) or train it (nlp.initialize(get_examples), then "
                f"nlp.update or `spacy train`)")
        if getattr(self.estimator_.learner_, "coef_", None) is None:
            raise ConfigError(f"{self._who()} is initialized but not trained yet: call "
                              f"nlp.update (or `spacy train`) before using it")
        return self.estimator_

    @property
    def is_trainable(self) -> bool:
        """True: ``update`` trains it (spaCy's loop then logs its loss)."""
        return True

    @property
    def labels(self) -> tuple[str, ...]:
        """The model's labels (tags, chunk tags, relations); empty without a model."""
        return self._labels

    @property
    def label_data(self) -> list[str]:
        """The labels, as ``initialize(labels=...)`` takes them back."""
        return list(self._labels)

    # --- sentences in ----------------------------------------------------------------------
    def _tensor_rows(self, doc: Doc, kept, training: bool = False) -> np.ndarray:
        tensor = doc.tensor
        if tensor is None or getattr(tensor, "ndim", 0) != 2 or tensor.shape[0] != len(doc) \
                or tensor.shape[1] == 0:
            where = (" (in training, list it in [training] annotating_components)"
                     if training else "")
            raise ConfigError(
                f"{self._who()} feeds doc.tensor to its model, but this Doc's tensor is empty "
                f"(shape {getattr(tensor, 'shape', None)}); put a tok2vec component before "
                f"it{where}, or use a model trained without token vectors (use_tensor = false)")
        rows = tensor[kept.start:kept.stop] if isinstance(kept, range) else tensor[list(kept)]
        return np.asarray(rows, dtype=np.float64)

    def _sentence_input(self, doc: Doc, start: int, end: int, training: bool = False):
        """``(x, kept)``: one sentence's raw input for the estimator (its raw form of
        ``X``) and the Doc positions of its tokens (:func:`sentence_words`); x is None
        when the sentence has only whitespace tokens."""
        words, kept = sentence_words(doc, start, end)
        if not words:
            return None, kept
        if self.input_form == "pairs":
            words = list(zip(words, self._pos(doc, kept)))
        kind = self._kind
        if kind == "words":
            return words, kept
        rows = self._tensor_rows(doc, kept, training)
        return (rows if kind == "tensor" else (words, rows)), kept

    def _pos(self, doc: Doc, kept) -> list[str]:
        """The POS of the tokens at ``kept``, from ``token.<pos_attr>`` (the components whose
        ``input_form`` is "pairs", the chunker and the parser, read them)."""
        attr = self.pos_attr
        tags = ([getattr(t, attr) for t in tokens_of(doc, kept.start, kept.stop)]
                if isinstance(kept, range)
                else [getattr(doc[i], attr) for i in kept])
        if not all(tags):
            raise ConfigError(
                f"{self._who()} reads each token's POS from token.{attr}, which is empty here "
                f"(the Doc {doc.text[:40]!r}); put a tagger that sets it before "
                f"{self.factory} (en_core_web_sm's, or latentstruct_tagger with attr = "
                f"\"{attr}\"), or set pos_attr")
        return tags

    # --- tagging -----------------------------------------------------------------------------
    def predict(self, docs: list[Doc]) -> list[list]:
        """The model's predictions for ``docs``, from one ``estimator_.predict`` call: per
        Doc, one ``(start, end, kept, prediction)`` per sentence (see
        :func:`sentence_bounds`; ``kept`` as :func:`sentence_words` gives it, the
        prediction None for a sentence of whitespace only)."""
        est = self._estimator()
        X, owners = [], []
        out: list[list] = [[] for _ in docs]
        for k, doc in enumerate(docs):
            for start, end in sentence_bounds(doc):
                x, kept = self._sentence_input(doc, start, end)
                record = [start, end, kept, None]
                out[k].append(record)
                if x is not None:
                    X.append(x)
                    owners.append(record)
        if X:
            for record, pred in zip(owners, est.predict(X)):
                record[3] = pred
        return [[tuple(r) for r in doc_out] for doc_out in out]

    def __call__(self, doc: Doc) -> Doc:
        """Annotate one Doc (``pipe`` annotates many per estimator call)."""
        try:
            self.set_annotations([doc], self.predict([doc]))
        except Exception as exc:
            self.get_error_handler()(self.name, self, [doc], exc)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Annotate the Docs of ``stream``, ``batch_size`` Docs per estimator call."""
        for batch in util.minibatch(stream, size=batch_size):
            docs = list(batch)
            try:
                self.set_annotations(docs, self.predict(docs))
            except Exception as exc:
                self.get_error_handler()(self.name, self, docs, exc)
            yield from docs

    # --- training ----------------------------------------------------------------------------
    def _training_data(self, examples: Iterable[Example]) -> tuple[list, list]:
        """(X, y) of the usable sentences of ``examples``."""
        X, y = [], []
        for example in examples:
            same = same_tokens(example)
            for start, end in self._training_bounds(example, same):
                pair = self._gold(example, start, end, same)
                if pair is not None:
                    X.append(pair[0])
                    y.append(pair[1])
        return X, y

    def _training_bounds(self, example: Example, same: bool) -> list[tuple[int, int]]:
        """The sentences of an example to train on: the predicted Doc's, as in tagging."""
        return sentence_bounds(example.x)

    def _new_estimator(self):
        return self.estimator_class(learner=self.learner, **self.options)

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp=None,
                   labels: list[str] | None = None) -> None:
        """Fix the label set and the feature index on the examples, for training.

        A component with a model keeps it (its labels and features are those it was
        trained with).  Otherwise a new estimator (``learner`` and ``options``) is fitted on
        every usable sentence of ``get_examples()`` without training
        (``begin_partial_fit``): the labels are those of the examples, or ``labels`` (the
        examples' labels must be among them)."""
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        if self._missing is not None:
            self._estimator()  # the missing model file's error
        if self.model_path and self.estimator_ is not None:
            return  # a given model is not retrained from scratch
        X, y = self._training_data(get_examples())
        if not X:
            raise InputError(f"{self._who()}.initialize: no example has the annotation this "
                             f"component learns (every sentence fully annotated)")
        est = self._new_estimator()
        classes = self._classes(y, labels)
        try:
            est.begin_partial_fit(X, y, classes=classes)
        except AttributeError as exc:  # a learner that trains in batch (OnlineOnly)
            raise ConfigError(f"{self._who()}: {exc}") from None
        self._set_estimator(est)
        self._missing = None

    def _classes(self, y, labels):
        """The label set to declare (None: the task's own, from ``y``)."""
        found = sorted({tag for sent in y for tag in sent})
        if labels is None:
            return found
        declared = list(labels)
        extra = [t for t in found if t not in set(declared)]
        if extra:
            raise InputError(f"{self._who()}.initialize: the examples hold labels "
                             f"{extra[:10]} that labels= does not list; add them")
        return declared

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: dict[str, float] | None = None) -> dict[str, float]:
        """One ``partial_fit`` pass of the online learner over the batch's sentences.

        ``drop`` and ``sgd`` are spaCy's neural settings, not used.  ``losses[name]``
        grows by the pass's objective (the perceptron's: the summed Hamming loss of its
        mistakes).  Returns ``losses``."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        if self._missing is not None or self.estimator_ is None:
            self._estimator()  # the error: no model
        est = self.estimator_
        if not hasattr(type(est.learner_), "partial_fit"):
            raise ConfigError(
                f"{self._who()}: its model's learner {est.learner_.registry_name!r} trains on "
                f"the whole data at once and cannot be updated; to keep the model as it is "
                f"while spaCy trains other components, list {self.name!r} in [training] "
                f"frozen_components; to train it, give a model file trained with --learner "
                f"perceptron, or model = \"\" and an online learner")
        X, y = self._training_data(examples)
        if not X:
            return losses
        est.partial_fit(X, y)
        curve = getattr(est.learner_, "objective_curve_", None)
        if curve:
            losses[self.name] += float(curve[-1])
        return losses

    # --- saving --------------------------------------------------------------------------------
    def _trained(self) -> bool:
        return self.estimator_ is not None and \
            getattr(self.estimator_.learner_, "coef_", None) is not None

    def _cfg(self) -> dict:
        return {"format": SERIAL_FORMAT, "factory": self.factory, "labels": list(self._labels),
                "model": self._trained()}

    def to_disk(self, path, *, exclude: Iterable[str] = ()) -> None:
        """Write the component's folder: ``cfg.json`` and, when it has a trained model, the
        model file ``model.npz`` (no pickle)."""
        if self._missing is not None:
            self._estimator()  # the missing model's error: nothing to save
        path = util.ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / CFG_FILE, self._cfg())
        model = path / MODEL_FILE
        if self._trained():
            self.estimator_.save(model)
        elif model.exists():
            model.unlink()  # a stale model of an earlier save would come back on load

    def _read_cfg(self, cfg, where: str) -> dict:
        if not isinstance(cfg, dict) or cfg.get("format") != SERIAL_FORMAT \
                or cfg.get("factory") != self.factory:
            raise ModelFormatError(
                f"{self._who()}: {where} is not a {self.factory} component's settings "
                f"(format {SERIAL_FORMAT}); save the pipeline again with this version")
        return cfg

    def from_disk(self, path, *, exclude: Iterable[str] = ()) -> LatentstructComponent:
        """Read the folder ``to_disk`` wrote (``spacy.load``); returns self."""
        path = util.ensure_path(path)
        cfg_path = path / CFG_FILE
        if not cfg_path.is_file():
            raise ModelFormatError(f"{self._who()}: {str(cfg_path)!r} is missing; the folder "
                                   f"is not one that {self.factory}'s to_disk wrote")
        cfg = self._read_cfg(srsly.read_json(cfg_path), repr(str(cfg_path)))
        self._restore(cfg, path / MODEL_FILE)
        return self

    def _restore(self, cfg: dict, model: Path) -> None:
        if cfg.get("model"):
            self._set_estimator(self._read_model(model, origin="saved model"))
        else:
            self.estimator_ = None
            self._missing = None
            self._labels = tuple(cfg.get("labels") or ())

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        """The component as bytes (msgpack of ``cfg.json`` and the model file's bytes)."""
        if self._missing is not None:
            self._estimator()
        blob = None
        if self._trained():
            with tempfile.TemporaryDirectory() as tmp:
                file = Path(tmp) / MODEL_FILE
                self.estimator_.save(file)
                blob = file.read_bytes()
        return srsly.msgpack_dumps({"cfg": json.dumps(self._cfg()), "model": blob})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = ()
                   ) -> LatentstructComponent:
        """Read what ``to_bytes`` wrote; returns self."""
        try:
            msg = srsly.msgpack_loads(bytes_data)
            cfg = json.loads(msg["cfg"])
            blob = msg["model"]
        except Exception as exc:  # noqa: BLE001 - any malformed message
            raise ModelFormatError(f"{self._who()}: from_bytes got no {self.factory} "
                                   f"component ({type(exc).__name__}: {exc})") from None
        cfg = self._read_cfg(cfg, "the bytes")
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / MODEL_FILE
            if blob is not None:
                file.write_bytes(blob)
            self._restore(cfg, file)
        return self
