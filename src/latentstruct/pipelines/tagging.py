"""Ready-made training recipes that combine a task with a learner (above the learner layer).

Tasks never train, load or save anything that needs a learner or a model file; the steps
that do live here, and ``latentstruct train`` calls them around ``task.fit``:

1. :func:`attach_tagger` before reading the training data: gives a task that tags its
   sentences (``grammaticality``) its POS tagger, loaded from the ``tagger_model`` file or,
   without one, trained by :func:`train_pos_tagger` -- the project's own UPOS tagger
   (``PosTask`` + ``StructuredSVM``), also used by the online multi-view experiment;
2. :func:`attach_chunker` after ``task.fit`` and once the learner is built: when the
   learner needs the task's heuristic weights (or the task asks for them, ``chunker``),
   trains the supervised chunker with :func:`train_chunker` (an averaged
   ``StructuredPerceptron`` on the task's ``chunking_task()``) and attaches its weights.

A task asks for them by name in its class attribute ``pretrained_helpers``
(:data:`POS_TAGGER`, :data:`SUPERVISED_CHUNKER`), and implements the members of
:class:`PosTagged` or :class:`SupervisedChunking`; ``pipelines.training`` checks both and
runs these steps in its one training path.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Protocol

import numpy as np

from ..data.paths import dataset_path, missing_data_message
from ..exceptions import ConfigError, ConvergenceWarning, ModelFormatError
from ..learners import StructuredSVM
from ..learners.online.perceptron import StructuredPerceptron
from ..learners.persistence import load_trained
from ..tasks import PosTask
from ..tasks.base import Dataset
from ..tasks.contracts import HEURISTIC

__all__ = [
    "POS_TAGGER",
    "SUPERVISED_CHUNKER",
    "PosTagged",
    "SupervisedChunking",
    "uses_helper",
    "train_pos_tagger",
    "load_pos_tagger",
    "attach_tagger",
    "train_chunker",
    "learner_needs_heuristic",
    "needs_chunker",
    "attach_chunker",
    "DEFAULT_TAGGER_SENTENCES",
]

#: sentences of UD EWT train used by the default tagger (EWT dev accuracy ~0.92, ~20 s)
DEFAULT_TAGGER_SENTENCES = 3000

#: ``pretrained_helpers`` entry of a task that POS-tags its sentences (``dep`` with
#: ``pos="predicted"``, ``grammaticality``): :func:`attach_tagger` runs before its data is read
POS_TAGGER = "pos-tagger"
#: ``pretrained_helpers`` entry of a task whose heuristic weights are a supervised chunker's
#: (``grammaticality``): :func:`attach_chunker` runs after ``task.fit``
SUPERVISED_CHUNKER = "supervised-chunker"


class PosTagged(Protocol):
    """What a task declaring :data:`POS_TAGGER` implements (``DependencyTask`` and
    ``GrammaticalityTask`` do; parameters ``tagger_model``, ``tagger_sentences``)."""

    tagger_model: object
    tagger_sentences: int
    needs_tagger: bool  # a property: no tagger attached and no tagger_model (checks params)

    def has_tagger(self) -> bool: ...
    def set_tagger(self, pos_task, coef): ...


class SupervisedChunking(Protocol):
    """What a task declaring :data:`SUPERVISED_CHUNKER` implements
    (``tasks.grammaticality.chunker``'s ``SupervisedChunker``; parameters ``chunker``,
    ``chunker_epochs``, ``seed``)."""

    chunker: object
    chunker_epochs: int
    seed: int

    def chunking_task(self): ...
    def chunk_training_data(self): ...
    def set_chunker_weights(self, coef): ...
    def heuristic_ready(self) -> bool: ...


def uses_helper(task, helper: str) -> bool:
    """Whether ``task`` declares ``helper`` in its class's ``pretrained_helpers``."""
    return helper in type(task).pretrained_helpers


def train_pos_tagger(n_sentences: int = DEFAULT_TAGGER_SENTENCES, *, C: float = 0.1,
                     max_iter: int = 5, train_path=None, dev_path=None, random_state: int = 0,
                     verbose: bool = False) -> tuple[PosTask, np.ndarray, float | None]:
    """Train a UPOS tagger on the first ``n_sentences`` sentences of a CoNLL-U file.

    Parameters
    ----------
    n_sentences : int
        How many sentences of ``train_path`` to train on (all when larger than the file).
    C, max_iter : StructuredSVM's regularisation and outer-iteration cap (deterministic
        under ``random_state``).
    train_path, dev_path : CoNLL-U files; default UD English EWT train and dev under
        ``$LATENTSTRUCT_DATA/ud_english_ewt``.  The dev file is only used to report accuracy
        and may be absent.

    Returns
    -------
    (pos_task, coef, dev_accuracy) — the fitted task, its weights, and the UPOS accuracy on
    the dev file (None without one).
    """
    if not isinstance(n_sentences, int) or isinstance(n_sentences, bool) or n_sentences < 1:
        raise ConfigError(f"n_sentences must be a positive integer, got {n_sentences!r}")
    if train_path is None:
        train_path = dataset_path("ud_english_ewt", "en_ewt-ud-train.conllu")
        if not train_path.exists():
            raise ConfigError(
                "a POS tagger is needed and none was given, and the default training data is "
                "missing: " + missing_data_message("ud_english_ewt") + ". Alternatively train "
                "one with `latentstruct train pos --train en_ewt-ud-train.conllu --model pos.npz "
                "--learner ssvm` and pass --option tagger_model=pos.npz")
        if dev_path is None:
            dev_path = dataset_path("ud_english_ewt", "en_ewt-ud-dev.conllu")
    pos = PosTask(min_count=2)
    data = pos.read(train_path)
    sub = Dataset(data.records[:n_sentences], data.targets[:n_sentences])
    if verbose:
        print(f"training the POS tagger on {len(sub)} sentences of {train_path}", file=sys.stderr)
    pos.fit(sub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm = StructuredSVM(pos, C=C, max_iter=max_iter, random_state=random_state)
        svm.fit(pos.featurize(sub), pos.encode_targets(sub.targets))
    acc = None
    if dev_path is not None and dev_path.exists():
        dev = pos.read(dev_path)
        pred = svm.predict(pos.featurize(dev))
        acc = float(pos.evaluate_raw(dev.targets, pred)["accuracy"])
        if verbose:
            print(f"  POS tagger accuracy on {dev_path}: {acc:.4f}", file=sys.stderr)
    return pos, svm.coef_, acc


def load_pos_tagger(path) -> tuple[PosTask, np.ndarray]:
    """``(pos_task, coef)`` of a ``pos`` model file (``latentstruct train pos --learner
    ssvm``).  ``ModelFormatError`` naming the file when it is missing, corrupt, of another
    task, or its weights are not the tagger's features; ``ConfigError`` for a path that is
    not a string."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ConfigError(f"tagger_model must be the path of a pos model file, got {path!r}")
    try:
        pos_task, learner, _ = load_trained(path, expected_task="pos")
    except ModelFormatError as exc:
        raise ModelFormatError(
            f"cannot use tagger_model={os.fspath(path)!r} as the POS tagger: {exc}. Give a "
            "model written by `latentstruct train pos --learner ssvm ...`"
        ) from None
    coef = np.asarray(learner.coef_, dtype=np.float64)
    if coef.shape != (pos_task.n_features,):
        raise ModelFormatError(
            f"{os.fspath(path)}: the tagger's weight vector has shape {coef.shape}, expected "
            f"({pos_task.n_features},); give a pos model trained with ssvm"
        )
    return pos_task, coef


def attach_tagger(task, *, verbose: bool = False) -> tuple[PosTask, np.ndarray] | None:
    """Give ``task`` its POS tagger when it uses one and has none attached yet.

    For a task declaring :data:`POS_TAGGER` (``grammaticality``, ``dep``): when
    ``tagger_model`` is given, the ``pos`` model file is loaded (:func:`load_pos_tagger`);
    otherwise the default tagger is trained on ``task.tagger_sentences`` sentences of UD
    EWT (:func:`train_pos_tagger`).
    Returns the attached ``(pos_task, coef)``, or None when nothing was needed (another
    task, or a tagger already attached).  Call it before ``task.read``/``task.fit``.
    """
    if not uses_helper(task, POS_TAGGER):
        return None
    if task.needs_tagger:  # validates the parameters; no tagger and no tagger_model
        pos_task, coef, _ = train_pos_tagger(task.tagger_sentences, verbose=verbose)
    elif task.has_tagger():
        return None
    else:
        if verbose:
            print(f"loading the POS tagger from {task.tagger_model}", file=sys.stderr)
        pos_task, coef = load_pos_tagger(task.tagger_model)
    task.set_tagger(pos_task, coef)
    return pos_task, coef


def train_chunker(task, *, verbose: bool = False) -> np.ndarray:
    """Train the supervised chunker of a fitted ``grammaticality`` task and attach it.

    Fits ``StructuredPerceptron(task.chunking_task(), max_iter=task.chunker_epochs,
    average=True, random_state=task.seed)`` on ``task.chunk_training_data()`` (the first
    ``chunker_sentences`` sentences of CoNLL-2000, every view at once: the views' weight
    blocks are disjoint, so this is one averaged perceptron per view) and attaches the
    weights with ``task.set_chunker_weights``; they are then ``task.structure_.heuristic_weights()``.
    Returns the weights.
    """
    if not uses_helper(task, SUPERVISED_CHUNKER):
        raise ConfigError(
            f"task {getattr(task, 'name', type(task).__name__)!r} has no supervised chunker "
            "to train (train_chunker is for the grammaticality task)"
        )
    view = task.chunking_task()
    X, Y = task.chunk_training_data()
    if verbose:
        print(f"training the supervised chunker (averaged perceptron, {task.chunker_epochs} "
              f"epochs) on {len(X)} sentences of CoNLL-2000", file=sys.stderr)
    perceptron = StructuredPerceptron(view, max_iter=task.chunker_epochs, average=True,
                                      random_state=task.seed, progress=verbose)
    perceptron.fit(X, Y)
    if verbose:
        print(f"  training mistakes per epoch: "
              f"{', '.join(f'{m:g}' for m in perceptron.objective_curve_)}", file=sys.stderr)
    task.set_chunker_weights(perceptron.coef_)
    return perceptron.coef_


def learner_needs_heuristic(learner) -> bool:
    """Whether fitting ``learner`` calls ``task.heuristic_weights()``, as the learner declares
    it (capability ``heuristic`` in its ``required_capabilities`` for its hyperparameters):
    TwoStage always, LCLR / LCLR-variant with ``init="two-stage"`` and LatentPA with
    ``init="heuristic"``, when no ``coef_init`` replaces the initialisation."""
    required = getattr(type(learner), "required_capabilities", None)
    if required is None:
        return False
    return HEURISTIC in required(learner.get_params(deep=False))


def needs_chunker(task, learner) -> bool:
    """Whether the pipeline trains ``task``'s supervised chunker before fitting
    ``learner``: ``chunker="perceptron"`` always, ``"auto"`` when the learner needs heuristic
    weights (:func:`learner_needs_heuristic`), None never; False for a task that does not
    declare :data:`SUPERVISED_CHUNKER`."""
    if not uses_helper(task, SUPERVISED_CHUNKER):
        return False
    chunker = task.chunker
    if chunker == "perceptron":
        return True
    if chunker == "auto":
        return learner_needs_heuristic(learner)
    return False


def attach_chunker(task, learner, *, verbose: bool = False) -> np.ndarray | None:
    """Train and attach ``task``'s supervised chunker when :func:`needs_chunker` says so
    and none is attached yet.  Call it after ``task.fit`` and before ``learner.fit``.
    Returns the weights trained, or None."""
    if not needs_chunker(task, learner) or task.heuristic_ready():
        return None
    return train_chunker(task, verbose=verbose)
